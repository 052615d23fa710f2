-- Notifications: scripts/nightly.lua --notify URL posts a JSON summary to a
-- webhook (the mock server's /hooks/ path answers "ok" as Slack and
-- Mattermost do) only when a gate fails or a regression is significant;
-- the URL, which carries the webhook's secret, is in no output or file.
local lu = require "luaunit"
local cjson = require "cjson"
local ev = require "evalua"
local h = require "tests.lua.helpers"
local mockmod = require "tests.mock.mock"

local SRC = os.getenv("EVALUA_SRC") or os.getenv("PWD")
local SECRET = "xoxb-s3cr3t-t0ken"

local function nightly(dir, args)
  return h.run(("cd %s && %s run scripts/nightly.lua --out %s --quiet %s"):format(SRC, h.bin, dir, args))
end

local function hook_posts(mock)
  local out = {}
  for _, r in ipairs(mock:requests()) do
    if r.path:find("^/hooks/") then out[#out + 1] = r end
  end
  return out
end

TestNotify = {}
function TestNotify:setUp()
  self.mock = mockmod.start()
  self.dir = h.tmpdir()
  self.url = self.mock.root .. "/hooks/T01/B02/" .. SECRET
end
function TestNotify:tearDown()
  self.mock:stop()
  h.sh("rm -rf " .. self.dir)
end

function TestNotify:test_posts_only_when_a_gate_fails_and_never_shows_the_url()
  -- hybrid_rerank passes every gate: nothing is posted
  local r1 = nightly(self.dir, "--variant hybrid_rerank --label v1 --notify " .. self.url)
  lu.assertEquals(r1.status, 0, r1.stderr)
  lu.assertEquals(#hook_posts(self.mock), 0)
  -- back to the baseline pipeline: the P0 recall gate fails and recall@5
  -- and ndcg@5 fall significantly (0.6917 -> 0.4792, p = 1/1024)
  local r2 = nightly(self.dir, "--variant baseline --label v2 --notify " .. self.url)
  lu.assertEquals(r2.status, 1, r2.stderr)
  lu.assertStrContains(r2.stderr, "nightly: notified: a gate failed and a regression is significant")
  local posts = hook_posts(self.mock)
  lu.assertEquals(#posts, 1)
  lu.assertEquals(posts[1].path, "/hooks/T01/B02/" .. SECRET)
  lu.assertStrContains(posts[1].headers["content-type"], "application/json")
  lu.assertNil(posts[1].headers["authorization"], "no judge key goes to a webhook")
  local body = posts[1].body
  local folder = body.evalua.report:match("reports/[^/]+")
  lu.assertEquals(body.text, table.concat({
    "*evalua: nightly v2 (smoke tier)*: gates FAILED, 2 significant regressions",
    "• FAIL recall@5[query_class=factoid] >= 0.7: recall@5 = 0.5521, misses 0.7",
    "• FAIL significant regressions <= 0",
    "• regression recall@5[all] 0.6917 -> 0.4792 (p=0.0010)",
    "• regression ndcg@5[all] 0.7474 -> 0.5457 (p=0.0005)",
    "report: " .. self.dir .. "/" .. folder .. "/nightly.html" }, "\n"))
  lu.assertEquals(body.evalua.status, "fail")
  lu.assertEquals(body.evalua.baseline.label, "v1")
  lu.assertEquals(#body.evalua.gates, 2)
  lu.assertEquals(body.evalua.gates[1].name, "recall@5[query_class=factoid] >= 0.7")
  lu.assertEquals(body.evalua.gates[1].threshold, 0.7)
  lu.assertEquals(#body.evalua.regressions, 2)
  lu.assertEquals(body.evalua.regressions[1].metric, "recall@5")
  lu.assertAlmostEquals(body.evalua.regressions[1].p, 1 / 1024, 1e-12)
  -- the secret is in no output and no file written
  for _, r in ipairs { r1, r2 } do
    lu.assertNotStrContains(r.stdout .. r.stderr, SECRET)
  end
  lu.assertEquals(h.run(("grep -rl %s %s"):format(SECRET, self.dir)).stdout, "")
end

function TestNotify:test_a_failed_post_is_said_without_the_url_and_keeps_the_gate_status()
  lu.assertEquals(nightly(self.dir, "--variant hybrid_rerank --label v1").status, 0)
  local wrong = self.mock.root .. "/nothooks/" .. SECRET
  local r = nightly(self.dir, "--variant baseline --label v2 --notify " .. wrong)
  lu.assertEquals(r.status, 1)
  lu.assertStrContains(r.stderr, "nightly: warning: the notification was not sent: HTTP 404")
  lu.assertNotStrContains(r.stdout .. r.stderr, SECRET)
  -- a server that is not there: the connection error names no URL either
  local dead = "http://127.0.0.1:9/hooks/" .. SECRET
  local r2 = nightly(self.dir, "--variant baseline --label v3 --notify " .. dead)
  lu.assertEquals(r2.status, 1)
  lu.assertStrContains(r2.stderr, "nightly: warning: the notification was not sent: connection failed")
  lu.assertNotStrContains(r2.stdout .. r2.stderr, SECRET)
end

function test_a_url_that_is_not_http_is_refused_without_repeating_it()
  local ok, err = pcall(ev.notify.send, "ftp://host/" .. SECRET, {})
  lu.assertFalse(ok)
  lu.assertStrContains(err, "ev.notify: the notification URL must start with http:// or https://")
  lu.assertNotStrContains(err, SECRET)
  local ok2, err2 = pcall(ev.notify.send, "http://127.0.0.1:9/x", {}, { allways = true })
  lu.assertFalse(ok2)
  lu.assertStrContains(err2, "ev.notify.send: unknown option 'allways' (did you mean 'always'?)")
end

os.exit(lu.LuaUnit.run(), true)
