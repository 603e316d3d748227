require "minitest/autorun"

class CalcTest < Minitest::Test
  def test_add
    assert_equal 5, 2 + 2
  end

  def test_raises
    raise ArgumentError, "boom"
  end

  def test_ok
    assert true
  end
end
