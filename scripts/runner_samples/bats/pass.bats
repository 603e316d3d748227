#!/usr/bin/env bats

@test "addition works" {
  result="$((2 + 2))"
  [ "$result" -eq 4 ]
}

@test "prints failure text" {
  run echo "not ok 1 failing thing"
  [ "$status" -eq 0 ]
}

@test "skipped on this platform" {
  skip "not supported"
  false
}
