"""A run's test runs: the project's [tests] config, each judged run recorded
(per loop run, else per session: one JSON line, O_APPEND), and the verify
baseline the loop records at an iteration's start. The hooks write the
history; the loop, the agent's tools and the Stop gate read it."""
from __future__ import annotations

import os

from ralph import fastjson
from ralph.rules.outcome.verdict import judge_test_run
from ralph.rules.rollback_policy import run_record
from ralph.run.clock import utc_now
from ralph.run.tests_config import read_tests_config
from ralph.state.files import append_line, read_lines
from ralph.state.reads import session_dir

HISTORY_FILE = "tests.jsonl"


def _safe_name(value: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in value)[:100].lstrip(".")
    return safe or "unknown"


def history_path(state_dir: str, run: object | None, session_id: str) -> str:
    """Where judged runs are recorded: per loop run, else per session."""
    if run is not None:
        return os.path.join(state_dir, "runs", _safe_name(run.run_id or "unknown-run"), HISTORY_FILE)
    return os.path.join(session_dir(state_dir, session_id), HISTORY_FILE)


def load_history(path: str, iteration: int | None = None) -> list[dict]:
    """The recorded runs (and rollback markers), oldest first; of one iteration when given."""
    found = []
    for line in read_lines(path):
        try:
            record = fastjson.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (iteration is None or record.get("iteration") == iteration):
            found.append(record)
    return found


def record_verify_baseline(root: str, state_dir: str, run_id: str, iteration: int, story_id: str, command: str, exit_code: int | None, output: str) -> dict:
    """For the loop: a verify run made at iteration start, before the agent, is the
    iteration's baseline (`[tests] baseline = "verify"`). Appends a `kind: "baseline"`
    record to the run's history and returns it."""
    config, _problem = read_tests_config(root, os.environ)
    verdict = judge_test_run(command, exit_code, output, config)
    record = run_record(command, verdict.verdict, verdict.runner, verdict.failing_tests)
    record.update(kind="baseline", at=utc_now(), run_id=run_id, iteration=iteration, story=story_id, exit_code=exit_code)
    path = os.path.join(state_dir, "runs", _safe_name(run_id or "unknown-run"), HISTORY_FILE)
    append_line(path, fastjson.dumps(record))
    return record


def baseline_mode(root: str) -> str:
    """`[tests] baseline` of the project ("first_runs" when unset or broken)."""
    return read_tests_config(root, os.environ)[0].baseline
