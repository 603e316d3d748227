ExUnit.start()

defmodule ScriptPassTest do
  use ExUnit.Case
  test "one", do: assert(1 + 1 == 2)
  test "two", do: assert(2 * 2 == 4)
end
