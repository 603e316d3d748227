package.path = "./?.lua;" .. package.path
local calc = require("calc")
describe("broken calc", function()
  it("adds", function() assert.are.equal(5, calc.add(2, 3)) end)
  it("adds wrongly", function() assert.are.equal(5, calc.add(2, 2)) end)
end)
