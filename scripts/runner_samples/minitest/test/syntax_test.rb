require "minitest/autorun"

class BrokenTest < Minitest::Test
  def test_x
    assert_equal(1, 1
  end
end
