require "minitest/autorun"

class CalcTest < Minitest::Test
  def test_add
    assert_equal 4, 2 + 2
  end

  def test_failure_message_is_reported
    assert_includes "1 failures", "failures"
  end

  def test_skipped
    skip "later"
  end
end
