"""Test-run verdicts: did a Bash command run tests, and did they fail? Pure."""
