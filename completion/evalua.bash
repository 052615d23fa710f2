# bash completion for evalua: commands, run options, bundled script names
# and .lua files, trec options and measure names, merge and diff options.
_evalua() {
  local cur prev words cword
  _init_completion || return
  if [ "$cword" -eq 1 ]; then
    COMPREPLY=($(compgen -W "run trec merge diff view init version --help" -- "$cur"))
    return
  fi
  case "${words[1]}" in
    run)
      case "$prev" in
        --read|--out|--lua-dir) _filedir -d; return ;;
        --cpu-limit|--time-limit|--mem-limit) return ;;
      esac
      local i
      for ((i = 2; i < cword; i++)); do
        case "${words[i]}" in
          --read|--out|--lua-dir|--cpu-limit|--time-limit|--mem-limit) ((i++)) ;;
          -*) ;;
          *) _filedir; return ;; # past SCRIPT: the script's own arguments
        esac
      done
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--sandbox --read --out --cpu-limit --time-limit --mem-limit --lua-dir --help" -- "$cur"))
        return
      fi
      local bin dir names=""
      bin=$(command -v evalua) && dir=$(dirname "$(readlink -f "$bin")")/../share/evalua/scripts
      [ -d "$dir" ] && names=$(cd "$dir" && ls -- *.lua 2>/dev/null | sed 's/\.lua$//')
      _filedir lua
      COMPREPLY+=($(compgen -W "$names" -- "$cur"))
      ;;
    trec)
      case "$prev" in
        -m) COMPREPLY=($(compgen -W "official all_trec map gm_map Rprec bpref recip_rank num_ret num_rel
              num_rel_ret P.5,10 recall.5,10 ndcg ndcg_cut.5,10 map_cut.5,10 success.1,5,10 iprec_at_recall
              prefs all_prefs prefs_simp prefs_pair prefs_avgjg qrels_jg map_avgjg P_avgjg Rprec_mult_avgjg" -- "$cur"))
            return ;;
        -l|-M|-N) return ;;
        -R) COMPREPLY=($(compgen -W "qrels prefs qrels_prefs qrels_jg" -- "$cur")); return ;;
        -T) COMPREPLY=($(compgen -W "trec_results" -- "$cur")); return ;;
        -Z) _filedir; return ;;
      esac
      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "-q -c -n -a -J -l -M -N -R -T -Z -m --help" -- "$cur")); else _filedir; fi
      ;;
    merge)
      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "--out --allow-missing" -- "$cur")); else _filedir; fi
      ;;
    diff)
      case "$prev" in
        --format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
        --alpha|--pass|--resamples|--seed) return ;;
        --history) _filedir -d; return ;;
      esac
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--slices --format --alpha --pass --resamples --seed --history --help" -- "$cur"))
      else _filedir json; fi
      ;;
    view)
      case "$prev" in
        --port|--rater) return ;;
        --scale) COMPREPLY=($(compgen -W "1..5 pass/fail" -- "$cur")); return ;;
        --history|--export) _filedir -d; return ;;
      esac
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--port --rater --scale --history --export --help" -- "$cur"))
      else _filedir; fi
      ;;
    init) _filedir -d ;;
  esac
}
complete -F _evalua evalua
