The bundled data set is generated: rerunning the generator reproduces the
committed files byte for byte, so the data and its generator never drift.

  $ cd "$EVALUA_SRC"
  $ mkdir -p "$CRAMTMP/gen" && "$EVALUA" run scripts/data/generate.lua --out "$CRAMTMP/gen" > /dev/null
  $ for f in corpus.jsonl rag_eval.jsonl simulated_labels.jsonl; do cmp "$CRAMTMP/gen/$f" "scripts/data/$f" && echo "$f same"; done
  corpus.jsonl same
  rag_eval.jsonl same
  simulated_labels.jsonl same

Every row passes the data set schema, and the counts are as documented:

  $ "$EVALUA" run /dev/stdin <<'LUA'
  > local ev = require "evalua"
  > local ds = ev.dataset.load("scripts/data/rag_eval.jsonl")
  > local docs = ev.dataset.corpus("scripts/data/corpus.jsonl")
  > local n = 0 for _ in pairs(docs) do n = n + 1 end
  > print(#ds.rows, #ds:values("qid"), table.concat(ds:values("variant"), " "), n)
  > LUA
  180\t60\tbaseline hybrid hybrid_rerank\t152 (esc)
