-- The bundled report on a real Slurm cluster started on this host
-- (tests/slurm/cluster.sh): deploy/slurm/submit.sh submits it as a 4-task
-- job array and a merge job that waits for it; the merged reports equal a
-- one-process run's apart from time stamps.
local lu = require "luaunit"
local h = require "tests.lua.helpers"
local sys = require "evalua._sys"

local SRC = os.getenv("EVALUA_SRC") or os.getenv("PWD")

local function untimed(path)
  local s = assert(h.read(path), path)
  return (s:gsub("%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ", "TIME"))
end

TestSlurm = {}

function TestSlurm:setUp()
  self.dir = h.tmpdir()
  local r = h.run(("%s/tests/slurm/cluster.sh start %s/cluster"):format(SRC, self.dir))
  if r.status == 77 then lu.skip("Slurm is not installed: " .. r.stderr) end
  lu.assertEquals(r.status, 0, r.stderr)
  self.env = ("SLURM_CONF=%s EVALUA=%s"):format(r.stdout:match("%S+"), h.bin)
end

function TestSlurm:tearDown()
  h.run(("%s/tests/slurm/cluster.sh stop %s/cluster"):format(SRC, self.dir))
  h.sh("rm -rf " .. self.dir)
end

-- Waits for a job to leave the queue; returns its final state.
function TestSlurm:wait(job, seconds)
  local deadline = sys.monotonic() + seconds
  while sys.monotonic() < deadline do
    local state = h.run(("%s scontrol show job %s"):format(self.env, job)).stdout:match("JobState=(%S+)")
    if state and state ~= "PENDING" and state ~= "RUNNING" and state ~= "CONFIGURING"
       and state ~= "COMPLETING" then
      return state
    end
    sys.sleep(0.5)
  end
  return "still queued after " .. seconds .. " s"
end

function TestSlurm:test_job_array_and_merge_equal_one_process()
  local run = self.dir .. "/run"
  local r = h.run(("cd %s && %s deploy/slurm/submit.sh 4 %s scripts/rag_report.lua --quiet"):format(
    SRC, self.env, run))
  lu.assertEquals(r.status, 0, r.stderr)
  local merge_job = r.stdout:match("^(%d+)")
  lu.assertNotNil(merge_job, r.stdout)
  lu.assertEquals(self:wait(merge_job, 300), "COMPLETED", h.read(run .. "/logs/merge.log"))
  -- four tasks, each took its own rows and wrote its part
  local rows = 0
  for i = 1, 4 do
    local log = h.read(("%s/logs/shard-%d.log"):format(run, i)) or ""
    local n = log:match(("evalua: shard %d/4: (%%d+) rows evaluated"):format(i))
    lu.assertNotNil(n, log)
    rows = rows + tonumber(n)
  end
  lu.assertEquals(rows, 180)
  local one = h.run(("cd %s && %s run scripts/rag_report.lua --quiet --out %s/one"):format(SRC, h.bin, self.dir))
  lu.assertEquals(one.status, 0, one.stderr)
  for _, ext in ipairs { "json", "csv", "md", "html", "junit.xml" } do
    lu.assertEquals(untimed(run .. "/rag_report." .. ext), untimed(self.dir .. "/one/rag_report." .. ext), ext)
  end
end

os.exit(lu.LuaUnit.run(), true)
