"""A run on disk, and what the loop, the agent's tools, the hooks and the
report all need of it: the run's records (run.json, events, progress, the
tools' calls), its settings and paths, the test history and the verify
check, the tree fingerprint, the one git runner and the clock. Everything
above imports this layer for a run's records, never one another."""
