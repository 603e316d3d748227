ExUnit.start()

defmodule ScriptFailTest do
  use ExUnit.Case
  test "one", do: assert(1 + 1 == 2)
  test "wrong", do: assert(2 * 2 == 5)
end
