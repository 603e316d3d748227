"""Judgement rules: pure functions from facts to decisions, no I/O."""
