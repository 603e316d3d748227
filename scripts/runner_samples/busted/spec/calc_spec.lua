package.path = "./?.lua;" .. package.path
local calc = require("calc")
describe("calc", function()
  it("adds", function() assert.are.equal(5, calc.add(2, 3)) end)
  it("adds negatives", function() assert.are.equal(-2, calc.add(-1, -1)) end)
  pending("multiplies")
end)
