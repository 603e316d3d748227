-- a project's own Lua test script: no framework, its own summary
package.path = "./?.lua;" .. package.path
local calc = require("calc")
local failed, passed = 0, 0
local function check(name, ok)
  if ok then passed = passed + 1; print("PASS " .. name) else failed = failed + 1; print("FAIL " .. name) end
end
check("adds", calc.add(2, 3) == 5)
check("adds negatives", calc.add(-1, -1) == -2)
check("broken expectation", calc.add(2, 2) == (tonumber(arg[1]) or 4))
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
