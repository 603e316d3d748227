#!/usr/bin/env bats

@test "broken" {
  if [ 1 -eq 1 ]; then
    echo unterminated
}
