#!/bin/sh
# prints the summary of an earlier CI run (not a test run) and exits with its status
cat <<'REPORT'
CI report for build 4711 (yesterday)
  unit:        41 passed, 2 failed
  integration: 12 passed, 0 failed
Tests: 2 failed, 53 passed, 55 total
REPORT
exit 1
