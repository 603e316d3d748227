"""Test-run verdicts: did a Bash command run tests, and did they fail? Pure.

command_shape (is the command a test run, which runner, does its status reach
the exit code), verdict (how findings and exit codes make the verdict; the table
of output readers), reading (what the readers share), runners/ (one reader
module per runner family), generic (the reader for runners with none of their
own), tests_config (a project's `[tests]` section), baseline (failures already
there at the checkpoint).
"""
