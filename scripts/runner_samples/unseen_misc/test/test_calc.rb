# Ruby test-unit sample: CALC_BROKEN=1 makes one test fail.
require "test/unit"
def add(a, b) = ENV["CALC_BROKEN"] ? a - b : a + b
class CalcTest < Test::Unit::TestCase
  def test_adds = assert_equal(5, add(2, 3))
  def test_adds_zero = assert_equal(0, add(0, 0))
end
