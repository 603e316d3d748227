local calc = require("no_such_module")
describe("calc", function()
  it("adds", function() assert.are.equal(5, calc.add(2, 3)) end)
end)
