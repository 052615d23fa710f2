-- JUnit XML for CI: a test suite per system with a test case per slice
-- (its metric means in <system-out>) and a test case per gate. A failed gate
-- is a <failure>; a gate that could not be decided (too much unmeasured) is
-- an <error>, so CI tells "regressed" from "could not measure". A metric
-- the judge failed on (no usable answer beyond ev.gate.max_judge_failures)
-- is a <failure> of test case "judge METRIC": nothing of it can be trusted.
-- Scores of the offline heuristic are marked so in <system-out>, and each
-- suite carries the notices as properties.
local C = require "evalua.report.common"
local health = require "evalua.judge.health"

local function xml(s)
  s = tostring(s or "")
  -- Characters XML 1.0 forbids are dropped; markup characters are escaped.
  s = s:gsub("[%z\1-\8\11\12\14-\31]", "")
  return (s:gsub("[<>&\"']", { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;", ['"'] = "&quot;", ["'"] = "&apos;" }))
end

local function slice_case(res, system, d, v)
  local lines = {}
  local offline = health.offline(res)
  for _, m in ipairs(res.metrics) do
    local a = res:agg(system, m.name, d, v)
    lines[#lines + 1] = ("%s = %s%s%s"):format(m.name, C.num(a.mean),
      C.coverage(a) and (" (" .. C.coverage(a) .. " measured)") or "",
      offline and m.judged and a.mean and " (offline heuristic)" or "")
  end
  return ('    <testcase classname="%s" name="slice %s"><system-out>%s</system-out></testcase>')
    :format(xml("evalua." .. system), xml(C.slice_label(d, v)), xml(table.concat(lines, "\n")))
end

local function judge_case(f)
  return ('    <testcase classname="%s" name="judge %s"><failure type="judge" message="%s"/></testcase>'):format(
    xml("evalua." .. f.system), xml(f.metric), xml(("the judge gave no usable answer for %d of %d items (first: %s)")
      :format(f.failed, f.n, f.reason)))
end

local function gate_case(g)
  local head = ('    <testcase classname="%s" name="gate %s">'):format(xml("evalua." .. (g.system or "run")), xml(g.name))
  if g.status == "fail" then
    return head .. ('<failure message="%s"/></testcase>'):format(xml(g.message))
  elseif g.status == "undecided" then
    return head .. ('<error message="%s"/></testcase>'):format(xml(g.message))
  end
  return head .. "</testcase>"
end

return function(res)
  local out = { '<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>" }
  local gates = res.gates or {}
  local dead = C.judge_failures(res)
  local notices = C.notices(res)
  for _, system in ipairs(res.systems) do
    local cases, failures, errors = {}, 0, 0
    for _, d in ipairs(res.dims) do
      for _, v in ipairs(res:values_of(system, d)) do cases[#cases + 1] = slice_case(res, system, d, v) end
    end
    for _, g in ipairs(gates) do
      if g.system == system and g.kind ~= "judge" then
        cases[#cases + 1] = gate_case(g)
        if g.status == "fail" then failures = failures + 1 elseif g.status == "undecided" then errors = errors + 1 end
      end
    end
    for _, f in ipairs(dead) do
      if f.system == system then cases[#cases + 1], failures = judge_case(f), failures + 1 end
    end
    local sc = res.system_comparison
    if sc and sc.baseline ~= system and #sc.rows > 0 then
      local lines = {}
      for _, r in ipairs(sc.rows) do
        if r.system == system then lines[#lines + 1] = C.system_line(r) end
      end
      cases[#cases + 1] = ('    <testcase classname="%s" name="versus %s"><system-out>%s</system-out></testcase>')
        :format(xml("evalua." .. system), xml(sc.baseline), xml(table.concat(lines, "\n")))
    end
    out[#out + 1] = ('  <testsuite name="%s" tests="%d" failures="%d" errors="%d">')
      :format(xml(system), #cases, failures, errors)
    local warnings = C.warnings(res)
    if #warnings > 0 or #notices > 0 then
      -- what makes the compared runs unlike, and the notices, where CI shows a suite's properties
      out[#out + 1] = "    <properties>"
      for _, w in ipairs(warnings) do out[#out + 1] = ('      <property name="warning" value="%s"/>'):format(xml(w)) end
      for _, n in ipairs(notices) do
        out[#out + 1] = ('      <property name="%s" value="%s"/>'):format(n.kind == "offline" and "judge" or "judge_failed",
          xml(n.title .. ": " .. table.concat(n.lines, "; ")))
      end
      out[#out + 1] = "    </properties>"
    end
    for _, c in ipairs(cases) do out[#out + 1] = c end
    out[#out + 1] = "  </testsuite>"
  end
  out[#out + 1] = "</testsuites>"
  return table.concat(out, "\n") .. "\n"
end
