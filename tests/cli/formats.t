The bundled scripts read the peers' data with --data-format (docs/data.md):
a RAGAS file goes through the RAG report as it is, and without the option
the error says which format it looks like. (agent_eval runs its two bots
over each conversation: two items.)

  $ cd "$EVALUA_SRC"
  $ F=tests/data/formats
  $ "$EVALUA" run scripts/rag_report.lua --data $F/ragas_single.jsonl --data-format ragas --out "$CRAMTMP/r" --quiet --format json > /dev/null 2>&1; echo $?
  0
  $ python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); i = d["items"][0]; v = i["details"]["faithfulness"]["verdicts"][0]; print(len(d["items"]), i["scores"]["exact_match_norm"], v["statement"], "/", v["reason"])' "$CRAMTMP/r/rag_report.json"
  2 1 The first Super Bowl was held on January 15, 1967. / the name Super is not in the context
  $ "$EVALUA" run scripts/rag_report.lua --data $F/ragas_single.jsonl --out "$CRAMTMP/r" --quiet
  tests/data/formats/ragas_single.jsonl:1: field 'qid': missing (expected id) (this looks like a RAGAS EvaluationDataset: load it with {format = "ragas"}, or --data-format ragas in the bundled scripts; docs/data.md)
  [3]
  $ "$EVALUA" run scripts/agent_eval.lua --data $F/deepeval_conversations.json --data-format auto --out "$CRAMTMP/a" --quiet --format json > /dev/null 2>&1; echo $?
  0
  $ python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); i = d["items"][0]; print(len(d["items"]), i["slices"]["scenario"])' "$CRAMTMP/a/agent_eval.json"
  2 A customer wants a refund for shoes that do not fit.
  $ "$EVALUA" run scripts/rag_report.lua --data-format rags
  evalua: --data-format must be one of evalua, jsonl, csv, ragas, deepeval, promptfoo, beir, msmarco, auto, got 'rags' (try --help)
  [2]
