The bundled scripts on the bundled data, with the offline judge.

  $ cd "$EVALUA_SRC"
  $ export OUT="$CRAMTMP/out"

rag_report prints a table per variant and slice and writes every format
(at full width: without COLUMNS, into a file, nothing is cut; cram sets
COLUMNS=80):

  $ COLUMNS= "$EVALUA" run scripts/rag_report.lua --out "$OUT" --quiet > "$CRAMTMP/table.txt" 2> "$CRAMTMP/err.txt"
  $ cat "$CRAMTMP/err.txt"
  wrote */out/rag_report.md, */out/rag_report.json, */out/rag_report.csv, */out/rag_report.html, */out/rag_report.junit.xml (glob)
  $ grep -E '^(system|hybrid_rerank +all|baseline +query_class=comparison) ' "$CRAMTMP/table.txt" | cut -c1-59
  system         slice                    n  recall@5     mrr
  baseline       query_class=comparison  15    0.415!   0.844
  hybrid_rerank  all                     60     0.695   0.947

The output the README's first screen shows is the output, line for line:

  $ awk '/^```text$/ { f = 1; next } /^```$/ { if (f) exit } f' README.md > "$CRAMTMP/readme_table.txt"
  $ wc -l < "$CRAMTMP/readme_table.txt"
  7
  $ grep -vxFf "$CRAMTMP/table.txt" "$CRAMTMP/readme_table.txt"
  [1]

The JSON report has every row, with its scores, and run metadata:

  $ "$EVALUA" run /dev/stdin "$OUT/rag_report.json" <<'LUA'
  > local doc = require("evalua.core.json").decode(io.open(arg[1]):read("a"))
  > print(#doc.items, math.tointeger(doc.meta.dataset.rows), doc.meta.judge.model, #doc.systems, doc.dims[2], doc.dims[3])
  > local a = doc.aggregates.hybrid_rerank.all.all
  > print(("%.4f %.4f %.4f"):format(a["recall@5"].mean, a.mrr.mean, a["ndcg@5"].mean))
  > LUA
  180\t180\toffline\t3\tquery_class\tlanguage (esc)
  0.6949 0.9472 0.7503

The same retrieval numbers as evalua trec on the same rows (docs/data.md):
the graded relevance written as qrels, each variant's rankings (with their
scores) as a run; every row's recall@5, MRR and nDCG@5 in the CSV report
equals trec's recall_5, recip_rank and ndcg_cut_5 to the 4 decimals trec
prints, and so do the means:

  $ mkdir "$CRAMTMP/trec" && "$EVALUA" run /dev/stdin scripts/data/rag_eval.jsonl "$CRAMTMP/trec" <<'LUA'
  > local json = require "evalua.core.json"
  > local dir, qrels, runs, seen = arg[2], {}, {}, {}
  > for line in io.lines(arg[1]) do
  >   local r = json.decode(line)
  >   if not seen[r.qid] then
  >     seen[r.qid] = true
  >     local grades, ids = r.graded_relevance or {}, {}
  >     for _, id in ipairs(r.gold_doc_ids) do grades[id] = grades[id] or 1 end
  >     for id in pairs(grades) do ids[#ids + 1] = id end
  >     table.sort(ids)
  >     for _, id in ipairs(ids) do qrels[#qrels + 1] = ("%s 0 %s %d\n"):format(r.qid, id, grades[id]) end
  >   end
  >   runs[r.variant] = runs[r.variant] or {}
  >   for i, d in ipairs(r.retrieved) do
  >     table.insert(runs[r.variant], ("%s Q0 %s %d %.17g %s\n"):format(r.qid, d.id, i, d.score, r.variant))
  >   end
  > end
  > io.open(dir .. "/qrels", "w"):write(table.concat(qrels)):close()
  > for v, lines in pairs(runs) do io.open(dir .. "/run." .. v, "w"):write(table.concat(lines)):close() end
  > LUA
  $ for v in baseline hybrid hybrid_rerank; do
  >   "$EVALUA" trec -q -m recall.5 -m recip_rank -m ndcg_cut.5 "$CRAMTMP/trec/qrels" "$CRAMTMP/trec/run.$v" | sed "s/^/$v /"
  > done > "$CRAMTMP/trec/out"
  $ "$EVALUA" run /dev/stdin "$OUT/rag_report.csv" "$CRAMTMP/trec/out" <<'LUA'
  > local trec, name = {}, { recall_5 = "recall@5", recip_rank = "mrr", ndcg_cut_5 = "ndcg@5" }
  > for line in io.lines(arg[2]) do
  >   local v, m, q, x = line:match("^(%S+) (%S+)%s+(%S+)%s+(%S+)$")
  >   trec[v .. " " .. q .. " " .. name[m]] = x
  > end
  > local rows, same, differ, sum = 0, 0, {}, {}
  > for line in io.lines(arg[1]) do
  >   local q, v, r5, mrr, ndcg = line:match("^([^,]*),([^,]*),[^,]*,[^,]*,[^,]*,([^,]*),([^,]*),([^,]*),")
  >   if q ~= "id" then
  >     rows = rows + 1
  >     for m, x in pairs({ ["recall@5"] = r5, mrr = mrr, ["ndcg@5"] = ndcg }) do
  >       local key = v .. " " .. q .. " " .. m
  >       if ("%.4f"):format(tonumber(x)) == trec[key] then same = same + 1 else differ[#differ + 1] = key end
  >       sum[v .. " all " .. m] = (sum[v .. " all " .. m] or 0) + tonumber(x) / 60
  >     end
  >   end
  > end
  > for key, mean in pairs(sum) do
  >   if ("%.4f"):format(mean) == trec[key] then same = same + 1 else differ[#differ + 1] = key end
  > end
  > print(rows .. " rows; " .. same .. " values equal, " .. #differ .. " differ " .. table.concat(differ, ", "))
  > LUA
  180 rows; 549 values equal, 0 differ 

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
  $ COLUMNS= "$EVALUA" run "$CRAMTMP/example.lua" | grep -E '^(system|hybrid +all) ' | tr -s ' '
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

Calibration of the offline judge against the bundled simulated labels: the
figures docs/judged_metrics.md quotes, exactly, a warning because the judge
orders items unlike the labels, and a note that the labels are simulated:

  $ "$EVALUA" run scripts/calibrate.lua --quiet --out "$OUT/calibrate" > "$CRAMTMP/calibration.txt" 2>/dev/null
  $ cat "$CRAMTMP/calibration.txt"
  calibration of judge metric 'faithfulness' against labels 'faithfulness' (1..5): 50 labelled items, 10 without a judge score
    Spearman rho               0.420  [0.148, 0.632]
    Kendall tau-b              0.384  [0.211, 0.534]
    Pearson r                  0.575
    Cohen's kappa              0.144  [0.009, 0.294]
    Cohen's kappa (quadratic)  0.549  [0.205, 0.774]
  
    confusion (rows: labels, columns: judge)
            1    2    3    4    5
       1    3    0    0    0    1
       2    2    0    1    0    0
       3    0    0    0    0    5
       4    1    0    0    0   14
       5    1    0    1    0   21
  
  warning: Spearman rho 0.420 is under 0.7: the judge does not order items the way the labels do
  
  judge disagrees with 50 labels: Spearman 0.42 [0.15, 0.63], fails >= 0.7
  
  note: these labels are simulated, drawn at random per kind of answer by the data generator;
  they test this script, not how well a judge agrees with people (docs/data.md)
  $ rho=$(awk '/^  Spearman rho/ { print $3 }' "$CRAMTMP/calibration.txt")
  $ kappa=$(awk '/^  Cohen.s kappa \(quadratic\)/ { print $4 }' "$CRAMTMP/calibration.txt")
  $ tr '\n' ' ' < docs/judged_metrics.md | grep -o "Spearman's rho $rho and a quadratic-weighted kappa of $kappa"
  Spearman's rho 0.420 and a quadratic-weighted kappa of 0.549

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
  history.db
  index.html
  $ "$EVALUA" run "$EVALUA_SRC/scripts/nightly.lua" --quiet --history-jsonl --out "$OUT/nightly2" > /dev/null 2>&1; ls "$OUT/nightly2/history"
  history.db
  history.jsonl
  index.html
  runs
  $ cd "$EVALUA_SRC"

--help lists the choices of an enumerated option:

  $ "$EVALUA" run scripts/nightly.lua --help | grep -- '--tier'
    --tier TIER              data set tier: smoke (20 queries), regression (200), deep (2000), all (one of: smoke, regression, deep, all) (default: smoke)
  $ "$EVALUA" run scripts/rag_report.lua --help | grep -- '--judge'
    --judge JUDGE            offline, or openai for any OpenAI-compatible server (one of: offline, openai) (default: offline)
