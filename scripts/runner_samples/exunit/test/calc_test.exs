defmodule CalcTest do
  use ExUnit.Case

  test "adds" do
    assert Calc.add(2, 3) == 5
  end

  test "adds negatives" do
    assert Calc.add(-1, -1) == -2
  end

  @tag :skip
  test "multiplies" do
    assert false
  end
end
