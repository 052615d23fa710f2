#!/bin/bash
# Submits an evalua run as N shards (a job array) and their merge.
#   deploy/slurm/submit.sh N OUT SCRIPT [ARG...]
# Run it from the folder the script's relative paths start from; OUT must be
# on a file system every node shares (the parts go to OUT/parts, the
# reports to OUT, the logs to OUT/logs). Prints the merge job's id.
# $EVALUA names the binary (default: evalua on PATH); extra sbatch options
# (partition, account, time) go in ${SBATCH_OPTS:-}.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 N OUT SCRIPT [ARG...]" >&2
  exit 2
fi
n=$1 out=$(realpath -m "$2")
shift 2
here=$(dirname "$(realpath "$0")")
mkdir -p "$out/parts" "$out/logs"
export EVALUA_PARTS=$out/parts EVALUA_OUT=$out
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_OPTS:-} --array=1-"$n" --output="$out/logs/shard-%a.log" \
  "$here/shard.sbatch" "$@")
# shellcheck disable=SC2086
sbatch --parsable ${SBATCH_OPTS:-} --dependency=afterok:"${array%%;*}" --kill-on-invalid-dep=yes \
  --output="$out/logs/merge.log" "$here/merge.sbatch"
