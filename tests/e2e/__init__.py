"""End-to-end tests: the real Claude Code CLI against a scripted Messages API (see README.md)."""
from __future__ import annotations
