The offline judge needs no network, and ev.map keeps the input order:

  $ cat > offline.lua <<'LUA'
  > local ev = require "evalua"
  > local j = ev.judge.open("offline")
  > local ctx = "Paris is the capital and largest city of France."
  > local out = ev.map({ "Paris is the capital of France.", "Bananas are blue." }, function(claim)
  >   local v = j:ask("verdicts", { statements = { claim }, context = ctx })
  >   return v.value[1].verdict .. " " .. v.value[1].reason
  > end)
  > print(out[1])
  > print(out[2])
  > LUA
  $ $EVALUA run offline.lua
  1 3 of 3 words are in the context (100%; supported from 50%)
  0 0 of 2 words are in the context (0%; supported from 50%)

A mistyped judge option is a script error naming the line (exit status 3):

  $ echo 'require("evalua").judge.open { model = "m", concurency = 4 }' > bad.lua
  $ $EVALUA run bad.lua 2> err
  [3]
  $ head -1 err
  bad.lua:1: ev.judge.open: unknown option 'concurency' (did you mean 'concurrency'?)

EVALUA_DRY_RUN=1 makes every judge count instead of send (the server here
does not even exist):

  $ cat > dry.lua <<'LUA'
  > local ev = require "evalua"
  > local j = ev.judge.open { base_url = "http://127.0.0.1:9/v1", model = "m", cache = false }
  > local r = j:chat { messages = { { role = "user", content = "twelve chars" } }, max_tokens = 5 }
  > local e = j:estimate()
  > print(r.ok, r.error)
  > print(e.requests, e.prompt_tokens, e.completion_tokens)
  > LUA
  $ EVALUA_DRY_RUN=1 $EVALUA run dry.lua
  false\tdry run: request not sent (esc)
  1\t10\t5 (esc)

Without a model there is nothing to ask:

  $ echo 'require("evalua").judge.open { base_url = "http://127.0.0.1:9/v1" }' > nomodel.lua
  $ EVALUA_MODEL= $EVALUA run nomodel.lua 2>&1 | head -1
  nomodel.lua:1: ev.judge.open: no model: pass model = "..." or set $EVALUA_MODEL
