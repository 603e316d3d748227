"""The Stop gate and the baseline: the agent ticking its story is a change.

The plan lives under .ralph/, which the tree comparison of the baseline leaves
out; an agent that ticks its story and then runs a failing test must not have
that failure taken for one that was there at the checkpoint. Through the real
entry points (`ralph post-tool-failure`, `ralph stop`) with a real pytest run.
"""
from __future__ import annotations

import json

from tests.conftest import load_payload, run_hook
from tests.test_test_runs_hook import PYTEST, bash_hook, git, history, project, run_tests, write, write_run  # noqa: F401 - fixture

LEGACY_FAILURE = "def test_legacy_bug():\n    assert 1 == 2\n"


def checkpoint_with_a_failing_test(project: str) -> None:
    write(project, "tests/test_legacy.py", LEGACY_FAILURE)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "checkpoint with a failing test")
    write_run(project)


def tick(project: str) -> None:
    write(project, ".ralph/plan.md", "- [x] US-042: Subtraction\n")


def test_tick_then_a_failing_run_holds_the_stop(project: str) -> None:
    checkpoint_with_a_failing_test(project)
    tick(project)  # the tick is the only change: the tree outside .ralph/ is the checkpoint's
    result = bash_hook(project, PYTEST, *run_tests(project))
    assert "Baseline:" not in result.context, result.context
    record = [r for r in history(project, "runs", "run-7", "tests.jsonl") if r["kind"] == "test"][-1]
    assert record["verdict"] == "fail" and record["at_checkpoint"] is False and not record.get("baseline_only"), record
    stop = run_hook("stop", load_payload("Stop", project), project)
    assert stop.output.get("decision") == "block", stop.output
    assert "the last test run failed" in stop.output["reason"] and "test_legacy_bug" in stop.output["reason"]


def test_a_failing_run_before_the_tick_is_still_the_baseline(project: str) -> None:
    """The other order: the failure was there before the agent did anything."""
    checkpoint_with_a_failing_test(project)
    first = bash_hook(project, PYTEST, *run_tests(project))
    assert "before anything changed" in first.context
    tick(project)
    stop = run_hook("stop", load_payload("Stop", project), project)
    assert "last test run failed" not in json.dumps(stop.output), stop.output
