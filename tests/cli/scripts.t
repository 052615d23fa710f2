The bundled scripts on the bundled data, with the offline judge.

  $ cd "$EVALUA_SRC"
  $ export OUT="$CRAMTMP/out"

rag_report prints a table per variant and slice and writes every format:

  $ "$EVALUA" run scripts/rag_report.lua --out "$OUT" --quiet > "$CRAMTMP/table.txt" 2> "$CRAMTMP/err.txt"
  $ cat "$CRAMTMP/err.txt"
  wrote */out/rag_report.md, */out/rag_report.json, */out/rag_report.csv, */out/rag_report.html, */out/rag_report.junit.xml (glob)
  $ grep -E '^(system|hybrid_rerank +all|baseline +query_class=comparison) ' "$CRAMTMP/table.txt" | cut -c1-59
  system         slice                    n  recall@5     mrr
  baseline       query_class=comparison  15    0.415!   0.844
  hybrid_rerank  all                     60     0.695   0.947

The JSON report has every row, with its scores, and run metadata:

  $ "$EVALUA" run /dev/stdin "$OUT/rag_report.json" <<'LUA'
  > local doc = require("evalua.json").decode(io.open(arg[1]):read("a"))
  > print(#doc.items, math.tointeger(doc.meta.dataset.rows), doc.meta.judge.model, #doc.systems, doc.dims[2], doc.dims[3])
  > local a = doc.aggregates.hybrid_rerank.all.all
  > print(("%.4f %.4f %.4f"):format(a["recall@5"].mean, a.mrr.mean, a["ndcg@5"].mean))
  > LUA
  180\t180\toffline\t3\tquery_class\tlanguage (esc)
  0.6949 0.9472 0.7503

The same retrieval numbers as evalua trec on the same rows (docs/data.md):

  $ grep -c '' "$OUT/rag_report.csv"
  181

Custom metrics flow into every format:

  $ "$EVALUA" run scripts/custom_metric.lua --out "$OUT/custom" > /dev/null
  $ for f in md json csv html junit.xml; do grep -c 'within.\?_budget' "$OUT/custom/custom.$f" > /dev/null && echo "$f ok"; done
  md ok
  json ok
  csv ok
  html ok
  junit.xml ok

The README's example script runs as printed:

  $ awk '/^```lua$/ { f = 1; next } /^```$/ { if (f) exit } f' README.md | sed "s|dir = \"out\"|dir = \"$OUT/readme\"|" > "$CRAMTMP/example.lua"
  $ "$EVALUA" run "$CRAMTMP/example.lua" | grep -E '^(system|hybrid +all) ' | tr -s ' '
  system slice n recall@5 mrr token_f1 faithfulness short_answer
  hybrid all 60 0.693 0.888 0.602 0.912 (57/60) 0.917
  $ ls "$OUT/readme"
  mine.html
  mine.json
  mine.md

A report format of one's own:

  $ "$EVALUA" run scripts/custom_report.lua --out "$OUT" 2>/dev/null | head -2
  Evaluation of scripts/data/rag_eval.jsonl, * (glob)
  - baseline: recall@5 0.48 (weakest: comparison 0.42); token_f1 0.48 (weakest: how-to 0.44)

Calibration warns when the judge disagrees with people:

  $ "$EVALUA" run scripts/calibrate.lua --quiet --out "$OUT/calibrate" 2>/dev/null | grep -E '^(calibration|warning)'
  calibration of judge metric 'faithfulness' against human 'faithfulness' (1..5): 50 labelled items, 10 without a judge score
  warning: Spearman rho * is under 0.7: the judge does not order items the way people do (glob)

Bad input stops with the file, line and field, and exit status 3:

  $ printf '{"qid":"q1","retrieved":"d1"}\n' > "$CRAMTMP/bad.jsonl"
  $ "$EVALUA" run scripts/rag_report.lua --data "$CRAMTMP/bad.jsonl" --out "$OUT/bad"
  */bad.jsonl:1: field 'retrieved': expected a list of ids or {id=, score=}, got string (glob)
  [3]
  $ "$EVALUA" run scripts/rag_report.lua --data "$CRAMTMP/bad.jsonl" --lenient --out "$OUT/bad" --quiet 2>/dev/null | tail -1
  1 input rows skipped (lenient mode); see the Markdown or JSON report

Every bundled script runs from any folder (its default data is found beside
it) and writes its output into --out; nightly's older --dir still works:

  $ cd "$CRAMTMP"
  $ "$EVALUA" run "$EVALUA_SRC/scripts/geval_custom.lua" --quiet --out "$OUT/geval" 2>&1 >/dev/null | sed "s|$OUT|OUT|g"
  wrote OUT/geval/geval.md, OUT/geval/geval.json, OUT/geval/geval.csv, OUT/geval/geval.html, OUT/geval/geval.junit.xml
  $ "$EVALUA" run "$EVALUA_SRC/scripts/prompt_experiment.lua" --quiet --resamples 200 --out "$OUT/pe" > "$CRAMTMP/pe.txt" 2>/dev/null
  $ cmp "$CRAMTMP/pe.txt" "$OUT/pe/prompt_experiment.txt" && head -c 40 "$OUT/pe/prompt_experiment.txt"; echo
  metric: faithfulness; varied: the judge'
  $ "$EVALUA" run "$EVALUA_SRC/scripts/calibrate.lua" --quiet --out "$OUT/cal" 2>&1 >/dev/null | sed "s|$OUT|OUT|g"
  wrote OUT/cal/calibrate.txt
  $ "$EVALUA" run "$EVALUA_SRC/scripts/custom_metric.lua" --out "$OUT/custom2" > /dev/null && ls "$OUT/custom2" | head -1
  custom.csv
  $ "$EVALUA" run "$EVALUA_SRC/scripts/nightly.lua" --quiet --dir "$OUT/nightly" 2>&1 >/dev/null | grep -v '^nightly: reports in'
  nightly: warning: --dir is deprecated; use --out
  $ ls "$OUT/nightly"
  history
  nightly.lock
  reports
  $ ls "$OUT/nightly/history"
  history.jsonl
  index.html
  runs
  $ cd "$EVALUA_SRC"

--help lists the choices of an enumerated option:

  $ "$EVALUA" run scripts/nightly.lua --help | grep -- '--tier'
    --tier TIER              data set tier: smoke (20 queries), regression (200), deep (2000), all (one of: smoke, regression, deep, all) (default: smoke)
  $ "$EVALUA" run scripts/rag_report.lua --help | grep -- '--judge'
    --judge JUDGE            offline, or openai for any OpenAI-compatible server (one of: offline, openai) (default: offline)
