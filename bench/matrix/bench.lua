-- The prompt matrix benchmark (run it through bench/matrix/run.sh, which
-- starts the mock at 100 ms). 2 prompts x 2 providers (two models on the
-- mock) x the 180 bundled rows = 720 requests, each provider 32 in flight
-- (64 at most: the server's own count of requests in flight is printed),
-- ev.generate's workers at their default. Prints, measured in this run:
--   1. wall time of ev.generate over the ideal bound
--      (requests x latency / requests in flight), over the bound of whole
--      waves (each provider's requests in rounds of 32, 100 ms a round),
--      and over the bare C engine sending the same distinct request bodies
--      64 deep (the reference timed alike: what the client costs over the
--      server and the network);
--   2. a rerun with one prompt changed: requests sent (only that prompt's
--      360 should go) and its wall time over the ideal bound for 360.
--   3. the same matrix again, every answer from the cache: wall time.
-- The ideal bounds count distinct requests (identical ones are sent once).
-- usage: evalua run bench/matrix/bench.lua MOCK_URL CACHE_DIR
local ev = require "evalua"
local C = require "evalua._client"

local url, cache = arg[1], arg[2]
if os.getenv("BENCH_NO_CACHE") then cache = false end -- to see what the cache costs
assert(url and cache ~= nil, "usage: evalua run bench/matrix/bench.lua MOCK_URL CACHE_DIR")
local LATENCY, IN_FLIGHT = 0.100, 64

local function mock(path)
  local e = C.engine { base_url = url:gsub("/v1$", ""), api_key_env = false, max_retries = 0 }
  local id = e:submit(path, "{}")
  while true do
    for _, d in ipairs(e:poll(1000)) do
      if d.id == id then e:close() return require("cjson").decode(d.body) end
    end
  end
end
local function mock_requests() return mock("/_mock/stats").requests end

local ds = ev.dataset.load("scripts/data/rag_eval.jsonl")
ds:attach_contexts(ev.dataset.corpus("scripts/data/corpus.jsonl"), 3)

local PROMPT = "Answer from the passages.\n{{#contexts}}[{{@index}}] {{.}}\n{{/contexts}}\nQuestion: {{query}}"
local function providers(dir)
  local out = {}
  for _, model in ipairs { "model-a", "model-b" } do
    out[#out + 1] = ev.provider.openai { base_url = url, model = model, api_key_env = false, concurrency = 32,
                                         cache = dir }
  end
  return out
end

local function generate(prompts, dir)
  mock("/_mock/reset") -- the server's peak in flight is then this matrix's
  local before, t0 = mock_requests(), ev.sys.monotonic()
  local out = ev.generate(ds, { prompts = prompts, providers = providers(dir), quiet = true })
  local wall = ev.sys.monotonic() - t0
  local failed = 0
  for i = 1, out.n do if out.rows[i].output_error then failed = failed + 1 end end
  local s = mock("/_mock/stats")
  return wall, s.requests - before, out.n, failed, s.peak_in_flight
end

-- The distinct request bodies the matrix sends: each rendered prompt once
-- per model (identical requests are sent once).
local function bodies_of(prompts)
  local out = {}
  for _, text in ipairs(prompts) do
    local t = ev.template(text)
    for _, model in ipairs { "model-a", "model-b" } do
      local seen = {}
      for i = 1, ds.n do
        local s = t:render(ds.rows[i])
        if not seen[s] then
          seen[s] = true
          out[#out + 1] = require("cjson").encode { model = model, temperature = 0,
                                                    messages = { { role = "user", content = s } } }
        end
      end
    end
  end
  return out
end

-- The reference: the same bodies through the bare engine, 64 deep.
local function engine_only(bodies)
  local e = C.engine { base_url = url, api_key_env = false, concurrency = IN_FLIGHT }
  local t0, got = ev.sys.monotonic(), 0
  for _, b in ipairs(bodies) do e:submit("/chat/completions", b) end
  while got < #bodies do got = got + #e:poll(100) end
  e:close()
  return ev.sys.monotonic() - t0
end

-- Rows with the same question and passages give the same request, which
-- is sent once: the expected counts are of distinct requests.
local function distinct(text) return #bodies_of { text } end

local prompts = { a = PROMPT, b = "Be brief. " .. PROMPT }
local n = 2 * 2 * ds.n
local ref = engine_only(bodies_of { prompts.a, prompts.b })
local c0 = ev.sys.cputime()
local wall, sent, rows, failed, peak = generate(prompts, cache)
local cpu = ev.sys.cputime() - c0
local want = distinct(prompts.a) + distinct(prompts.b)
local ideal = want * LATENCY / IN_FLIGHT
print(("matrix: %d prompts x %d providers x %d rows = %d requests at %d ms, %d in flight"):format(
  2, 2, ds.n, n, LATENCY * 1000, IN_FLIGHT))
print(("  ev.generate        %.3f s  sent %d (distinct: %d), outputs %d, failed %d, client CPU %.3f s"):format(
  wall, sent, want, rows, failed, cpu))
print(("  ideal bound        %.3f s  ratio %.3f (the server saw at most %d in flight)"):format(
  ideal, wall / ideal, peak))
local waves = math.ceil(want / 2 / 32) * LATENCY
print(("  bound of waves     %.3f s  ratio %.3f"):format(waves, wall / waves))
print(("  bare C engine      %.3f s  ratio %.3f (the same %d bodies)"):format(ref, wall / ref, want))

prompts.b = "Be very brief. " .. PROMPT
local wall2, sent2 = generate(prompts, cache)
local ideal2 = distinct(prompts.b) * LATENCY / IN_FLIGHT
print(("rerun with prompt b changed: sent %d of %d (prompt b's distinct requests: %d), %.3f s, ratio to its ideal bound %.3f"):format(
  sent2, n, distinct(prompts.b), wall2, wall2 / ideal2))
local wall3, sent3 = generate(prompts, cache)
print(("all from the cache: sent %d, %.3f s"):format(sent3, wall3))
