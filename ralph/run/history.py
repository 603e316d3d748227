"""A run's test runs: the project's [tests] config, each judged run recorded
(per loop run, else per session: one JSON line, O_APPEND). The hooks and the
loop's verify baseline write it; the loop, the agent's tools and the Stop
gate read it. Light on purpose: the Stop gate reads it on every stop of a run."""
from __future__ import annotations

import os

from ralph import fastjson
from ralph.run.tests_config import read_tests_config
from ralph.state.files import read_lines
from ralph.state.reads import session_dir

HISTORY_FILE = "tests.jsonl"


def _safe_name(value: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in value)[:100].lstrip(".")
    return safe or "unknown"


def history_path(state_dir: str, run: object | None, session_id: str) -> str:
    """Where judged runs are recorded: per loop run, else per session."""
    if run is not None:
        return run_history_path(state_dir, run.run_id)
    return os.path.join(session_dir(state_dir, session_id), HISTORY_FILE)


def run_history_path(state_dir: str, run_id: str) -> str:
    """The history of one loop run."""
    return os.path.join(state_dir, "runs", _safe_name(run_id or "unknown-run"), HISTORY_FILE)


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


def baseline_mode(root: str) -> str:
    """`[tests] baseline` of the project ("first_runs" when unset or broken)."""
    return read_tests_config(root, os.environ)[0].baseline
