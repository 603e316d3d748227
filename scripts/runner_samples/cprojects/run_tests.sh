#!/bin/sh
# a project's own test script: builds and runs each t_*.c, prints its own summary
set -u
total=0; failed=0
for src in ${@:-t_add.c t_neg.c}; do
  bin=./$(basename "$src" .c)
  cc -o "$bin" "$src" || { echo "build failed: $src"; exit 2; }
  total=$((total+1))
  if "$bin"; then echo "ok   $src"; else echo "FAIL $src"; failed=$((failed+1)); fi
done
if [ "$failed" -eq 0 ]; then echo "All $total tests passed"; exit 0; fi
echo "$failed of $total tests failed"
exit 1
