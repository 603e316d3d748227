"""Readers of test output, one module per runner family. Each has the same two
tables: READERS (runner -> summary reader) and MARKERS (runner -> failure-marker
reader, read when no summary is visible), both taking the examined output
(ralph.rules.outcome.reading.Text) and giving a Finding or None. The verdict
finds them through its one table, ralph.rules.outcome.verdict.RUNNER_MODULES."""
