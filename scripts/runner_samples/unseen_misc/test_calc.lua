-- LuaUnit sample: CALC_BROKEN=1 makes one test fail.
local lu = require("luaunit")
local function add(a, b) if os.getenv("CALC_BROKEN") then return a - b end return a + b end
function testAdds() lu.assertEquals(add(2, 3), 5) end
function testAddsZero() lu.assertEquals(add(0, 0), 0) end
os.exit(lu.LuaUnit.run())
