ExUnit.start(timeout: :infinity, trace: true)

defmodule ScriptHangTest do
  use ExUnit.Case
  test "quick", do: assert(true)
  test "waits forever", do: Process.sleep(:infinity)
end
