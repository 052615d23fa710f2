#!/bin/sh
# Installs the Debian packages evalua builds, tests and reports with. Safe to
# run again: it installs only what is missing. Without root it prints the
# exact apt-get command to run instead.
set -eu

PACKAGES="build-essential cmake pkg-config hyperfine lua5.4 bash-completion
liblua5.4-dev lua-cjson-dev libcurl4-openssl-dev libssl-dev libutf8proc-dev libpcre2-dev libsqlite3-dev libyaml-dev
libxml2-dev wordnet-base
libmicrohttpd-dev chromium-driver
lua-unit python3 python3-cram chromium fonts-noto-cjk
clang libclang-rt-dev
slurm-wlm munge"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "evalua needs these Debian packages:$missing" >&2
  echo "install them with: sudo apt-get install -y$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
echo "installing:$missing" >&2
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -f "$log"
