#!/usr/bin/env bats

@test "addition works" {
  [ "$((2 + 2))" -eq 5 ]
}

@test "echo works" {
  run echo hi
  [ "$output" = "hi" ]
}
