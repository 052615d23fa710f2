-- The judge client's benchmark (run it through bench/judge/run.sh, which
-- starts the mock servers). Prints ratios against references measured in
-- the same run:
--   1. the mock's own rate: the bare C engine (no Lua per request) against
--      a mock that answers at once, concurrency 64;
--   2. 2,000 chat requests at 50 ms server latency, concurrency 64, through
--      ev.map + judge:chat: wall time over the ideal bound
--      (requests x latency / concurrency), CPU per request, peak RSS;
--   3. 10,000 requests answered from the cache, after a pass that fills it
--      (0 ms server): client CPU per request of the filling pass, where
--      every answer is stored;
--   4. 400 requests at 100 ms, map concurrency 64 over judge concurrency 16:
--      client CPU per request while most items wait for a slot;
--   5. 800 requests at 100 ms, concurrency 16, 30% of attempts answered 429
--      (Retry-After: 1) or 500 by a fault plan per request, over 10 seeds,
--      map concurrency 64 and 16: the worst wall time over the ideal bound,
--      the replay of the same plans by an ideal client, and the attempts
--      sent over those the plans force;
--   6. a quota server (20 requests per 2 s window, i.e. 600 a minute scaled
--      down, sent in x-ratelimit-* headers): share of requests answered 429.
-- usage: evalua run bench/judge/bench.lua URL_50MS URL_0MS CACHE_DIR URL_100MS URL_FAULTY URL_QUOTA [ONLY]
local ev = require "evalua"
local C = require "evalua._client"

local url50, url0, cache, url100, url_faulty, url_quota, only = arg[1], arg[2], arg[3], arg[4], arg[5], arg[6], arg[7]
assert(url50 and url0 and cache, "usage: evalua run bench/judge/bench.lua URL_50MS URL_0MS CACHE_DIR")
local N, LATENCY, CONCURRENCY, CACHED = 2000, 0.050, 64, 10000

local function peak_rss_mb()
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) / 1024 end
  end
end

local function body(i)
  return ('{"model":"m","messages":[{"role":"user","content":"question %d"}]}'):format(i)
end

-- 1. The server's own limit: the engine alone, requests kept 64 deep.
local function mock_rate(n)
  local e = C.engine { base_url = url0, api_key_env = false, concurrency = CONCURRENCY }
  local t0, sent, got = ev.sys.monotonic(), 0, 0
  while sent < CONCURRENCY do sent = sent + 1; e:submit("/chat/completions", body(sent)) end
  while got < n do
    for _ in ipairs(e:poll(100)) do
      got = got + 1
      if sent < n then sent = sent + 1; e:submit("/chat/completions", body(sent)) end
    end
  end
  e:close()
  return n / (ev.sys.monotonic() - t0)
end

-- 2. The judge as a script uses it.
local function judged_run()
  local judge = ev.judge.open { base_url = url50, model = "m", cache = false, api_key_env = false,
                                concurrency = CONCURRENCY }
  local items = {}
  for i = 1, N do items[i] = i end
  local t0, c0, latency = ev.sys.monotonic(), ev.sys.cputime(), 0
  local out = ev.map(items, function(i)
    local r = judge:chat { messages = { { role = "user", content = "question " .. i } } }
    latency = latency + (r.latency_ms or 0)
    return r.ok
  end, { concurrency = CONCURRENCY, quiet = true })
  local wall, cpu = ev.sys.monotonic() - t0, ev.sys.cputime() - c0
  for i = 1, N do assert(out[i] == true, "request " .. i .. " failed") end
  return wall, cpu / N * 1000, latency / N
end

-- 3. Answers from the cache: filled first (server at 0 ms), then read.
local function cached_run()
  local items = {}
  for i = 1, CACHED do items[i] = i end
  local function pass()
    local judge = ev.judge.open { base_url = url0, model = "m", cache = cache, api_key_env = false,
                                  concurrency = CONCURRENCY }
    local t0, c0 = ev.sys.monotonic(), ev.sys.cputime()
    ev.map(items, function(i)
      return judge:chat { messages = { { role = "user", content = "cached question " .. i } } }.ok
    end, { concurrency = CONCURRENCY, quiet = true })
    return ev.sys.monotonic() - t0, (ev.sys.cputime() - c0) / CACHED * 1000, judge:stats()
  end
  local fill, fill_cpu = pass()
  local read, _, s = pass()
  assert(s.cache_hits == CACHED and s.requests == 0, "the second pass was not all cache hits")
  return fill, read, fill_cpu
end

-- n requests through ev.map + judge:chat; wall, CPU ms per request, judge.
local function map_run(url, n, map_conc, judge_opts)
  local o = { base_url = url, model = "m", cache = false, api_key_env = false }
  for k, v in pairs(judge_opts) do o[k] = v end
  local judge = ev.judge.open(o)
  local items = {}
  for i = 1, n do items[i] = i end
  local t0, c0 = ev.sys.monotonic(), ev.sys.cputime()
  local out = ev.map(items, function(i)
    return judge:chat { messages = { { role = "user", content = "run " .. t0 .. " question " .. i } } }.ok
  end, { concurrency = map_conc, quiet = true })
  local wall, cpu = ev.sys.monotonic() - t0, ev.sys.cputime() - c0
  local measured = 0
  for i = 1, n do if out[i] == true then measured = measured + 1 end end
  return wall, cpu / n * 1000, judge:stats(), measured
end

local function waiting_run()
  local wall, cpu, s = map_run(url100, 400, 64, { concurrency = 16 })
  print(("400 requests, 100 ms, map concurrency 64 over judge concurrency 16: wall %.3f s = %.3f x ideal 2.5 s; "
    .. "client CPU %.3f ms/request (goal < 0.2); %d engine wake-ups"):format(wall, wall / 2.5, cpu, s.engine_waits))
end

-- The faulty server's root (its /v1 removed) and a POST to one of its
-- control endpoints, decoded.
local function mock_control(url, path, body)
  local e = C.engine { base_url = (url:gsub("/v1$", "")), api_key_env = false }
  local id = e:submit(path, body or "{}")
  local r
  repeat
    for _, d in ipairs(e:poll(1000)) do if d.id == id then r = d end end
  until r
  e:close()
  assert(not r.error, path .. ": " .. tostring(r.error))
  return require("cjson").decode(r.body)
end

-- The replay: the same faults served to an ideal client, one that retries
-- a 500 at once, waits out each Retry-After (1 s) exactly and never leaves
-- a place idle while a request is ready: a place that comes free takes the
-- request ready first (input order among equals); every attempt takes
-- `latency` seconds. fault(i, k) is the fault (or nil) of request i's k-th
-- attempt, the n-th to start. Its end, in seconds.
local function replay(n, fault, slots, latency)
  local ready, step, left, started = {}, {}, n, 0
  for i = 1, n do ready[i], step[i] = 0, 1 end
  local free, finish = {}, 0
  for k = 1, slots do free[k] = 0 end
  while left > 0 do
    local s = 1
    for k = 2, slots do if free[k] < free[s] then s = k end end
    local best
    for i = 1, n do
      if step[i] and (not best or ready[i] < ready[best]) then best = i end
    end
    local t = math.max(free[s], ready[best])
    started = started + 1
    local f = fault(best, step[best], started)
    free[s] = t + latency
    if f then
      ready[best], step[best] = t + latency + (f == "429" and 1 or 0), step[best] + 1
    else
      step[best], left, finish = nil, left - 1, math.max(finish, t + latency)
    end
  end
  return finish
end

-- 800 requests at 100 ms, judge concurrency 16, 30% of attempts answered
-- 429 (Retry-After 1) or 500, for each of 10 seeds, with map concurrency 64
-- (the default) and 16 (the judge's). The faults come from the mock's
-- generator seeded with the seed: by default the n-th attempt to arrive
-- meets the n-th draw (fault_by "arrival", the issue's fault sequence);
-- BENCH_FAULTS=request gives each request its own plan instead, the same
-- whatever the client's timing. Printed: wall time over the ideal bound
-- 800 x 100 ms / 16 = 5 s and the replay's over it; attempts over those the
-- faults force (arrival: up to the 800th success of the sequence; request:
-- one per planned fault plus one).
local SEEDS, FAULTY_N, FAULTY_IDEAL = tonumber(os.getenv("BENCH_SEEDS") or "") or 10, 800, 800 * 0.1 / 16
local FAULT_BY = os.getenv("BENCH_FAULTS") or "arrival"
local cjson = require "cjson"

-- The attempts the faults force and the replay's end for them.
local function forced_and_replay(f)
  if FAULT_BY == "request" then
    return f.forced, replay(#f.plans, function(i, k)
      local v = f.plans[i][k]
      return v ~= cjson.null and v or nil
    end, 16, 0.1)
  end
  local seq, successes, forced = f.sequence, 0, nil
  for n, v in ipairs(seq) do
    if v == cjson.null then
      successes = successes + 1
      if successes == FAULTY_N then forced = n break end
    end
  end
  assert(forced, "the mock's sequence holds fewer than 800 successes")
  return forced, replay(FAULTY_N, function(_, _, n)
    local v = seq[n]
    assert(v ~= nil, "the replay needs more draws than were served")
    return v ~= cjson.null and v or nil
  end, 16, 0.1)
end

local function faulty_once(seed, map_conc)
  mock_control(url_faulty, "/_mock/reset")
  mock_control(url_faulty, "/_mock/config",
    ('{"fault_rate": 0.3, "seed": %d, "fault_by": "%s"}'):format(seed, FAULT_BY))
  local judge = ev.judge.open { base_url = url_faulty, model = "m", cache = false, api_key_env = false,
                                concurrency = 16, max_retries = 10, seed = seed }
  local items = {}
  for i = 1, FAULTY_N do items[i] = i end
  local t0, c0 = ev.sys.monotonic(), ev.sys.cputime()
  local out = ev.map(items, function(i)
    return judge:chat { messages = { { role = "user", content = "faulty question " .. i } } }.ok
  end, { concurrency = map_conc, quiet = true })
  local wall, cpu = ev.sys.monotonic() - t0, ev.sys.cputime() - c0
  local measured = 0
  for i = 1, FAULTY_N do if out[i] == true then measured = measured + 1 end end
  local s = judge:stats()
  judge:close()
  local forced, ideal_client = forced_and_replay(mock_control(url_faulty, "/_mock/faults"))
  return { wall = wall, ratio = wall / FAULTY_IDEAL, replay = ideal_client / FAULTY_IDEAL,
           cpu = cpu / FAULTY_N * 1000, attempts = s.attempts, forced = forced, measured = measured }
end

local function faulty_run()
  local maps = {}
  for c in (os.getenv("BENCH_MAPS") or "64 16"):gmatch("%d+") do maps[#maps + 1] = tonumber(c) end
  for _, map_conc in ipairs(maps) do
    local worst, worst_replay, attempts, forced, measured, cpu = nil, 0, 0, 0, 0, 0
    for seed = 1, SEEDS do
      local r = faulty_once(seed, map_conc)
      print(("faulty server (faults by %s), map concurrency %d, seed %2d: wall %.3f s = %.2f x ideal 5 s "
        .. "(replay of the same faults %.2f x); attempts %d, forced %d (%+.1f%%); measured %d of %d; "
        .. "CPU %.3f ms/request"):format(FAULT_BY, map_conc, seed, r.wall, r.ratio, r.replay, r.attempts, r.forced,
          100 * (r.attempts / r.forced - 1), r.measured, FAULTY_N, r.cpu))
      if not worst or r.ratio > worst.ratio then worst = r; worst.seed = seed end
      worst_replay = math.max(worst_replay, r.replay)
      attempts, forced, measured, cpu = attempts + r.attempts, forced + r.forced, measured + r.measured, cpu + r.cpu
    end
    print(("  map concurrency %d over judge 16, %d seeds: worst %.2f x ideal (seed %d; goal <= %s), worst replay "
      .. "%.2f x; %.3f attempts per request, %+.1f%% over the forced %d (goal <= +5%%); measured %d of %d; "
      .. "CPU %.3f ms/request"):format(map_conc, SEEDS, worst.ratio, worst.seed, map_conc == 16 and "2.5" or "2.3",
        worst_replay, attempts / (SEEDS * FAULTY_N), 100 * (attempts / forced - 1), forced, measured,
        SEEDS * FAULTY_N, cpu / SEEDS))
  end
end

local function quota_run()
  local wall, _, s, measured = map_run(url_quota, 100, 64, { concurrency = 16, max_retries = 10 })
  print(("100 requests against a quota of 20 per 2 s window (x-ratelimit headers), concurrency 16: "
    .. "%d of %d attempts answered 429 = %.1f%% (goal < 5%%); wall %.2f s (quota alone: >= 8 s); measured %d")
    :format(s.rate_limited, s.attempts, 100 * s.rate_limited / s.attempts, wall, measured))
end

local function healthy_runs()
  local ideal = N * LATENCY / CONCURRENCY
  local walls = {}
  for run = 1, 3 do
    local wall, cpu_ms, lat = judged_run()
    walls[run] = wall
    print(("%d chat requests, 50 ms latency, concurrency %d, run %d: wall %.3f s = %.3f x ideal %.4f s "
      .. "(goal <= 1.10); client CPU %.3f ms/request (goal < 0.2); mean latency seen %.1f ms")
      :format(N, CONCURRENCY, run, wall, wall / ideal, ideal, cpu_ms, lat))
  end
  table.sort(walls)
  print(("  median %.3f x ideal; whole rounds alone (%d x 50 ms) would be %.3f x ideal"):format(
    walls[2] / ideal, math.ceil(N / CONCURRENCY), math.ceil(N / CONCURRENCY) * LATENCY / ideal))
end

if only then
  ({ healthy = healthy_runs, waiting = waiting_run, faulty = faulty_run, quota = quota_run })[only]()
  return
end

local rate = mock_rate(5000)
print(("mock server, 0 ms latency, bare engine at concurrency %d: %.0f requests/s"):format(CONCURRENCY, rate))
print(("  (the 50 ms run below needs %.0f requests/s: %.0f%% of that)"):format(
  CONCURRENCY / LATENCY, CONCURRENCY / LATENCY / rate * 100))

healthy_runs()
print(("peak RSS after these runs: %.1f MB (goal < 60)"):format(peak_rss_mb()))

local fill, read, fill_cpu = cached_run()
print(("%d requests from the cache: %.3f s (goal < 1 s); filling it took %.3f s, "
  .. "client CPU %.3f ms/request (goal < 0.15, every answer stored)"):format(CACHED, read, fill, fill_cpu))
print(("peak RSS at the end: %.1f MB"):format(peak_rss_mb()))
waiting_run()
faulty_run()
quota_run()
