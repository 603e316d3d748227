#!/bin/sh
# project test script: runs the suite named in $1
python -m pytest -q "${1:-tests_pass}"
