"""Reading a run's records and writing its report: `.ralph/runs/<run>/`
holds report.html (and the hand-off's bundle and patches)."""
from __future__ import annotations

import os

from ralph.report import model as report_model
from ralph.report import page
from ralph.run.records import read_events, read_run_state
from ralph.state.files import atomic_write

RUNS_DIR = "runs"
REPORT_FILE = "report.html"


class NoRun(Exception):
    """The records hold no such run (or none at all)."""


def run_dir(state_dir: str, run_id: str) -> str:
    """`.ralph/runs/<run_id>`; a run id that is not one (a path, a dot
    name: events.jsonl is a file the agent can write) raises NoRun."""
    if not run_id or run_id.startswith(".") or any(not (c.isascii() and (c.isalnum() or c in "._-")) for c in run_id):
        raise NoRun(f"{run_id!r} is not a run id")
    return os.path.join(state_dir, RUNS_DIR, run_id)


def load(state_dir: str, run_id: str | None = None) -> dict:
    """The report model of a run (default: the last one). Raises NoRun."""
    events = read_events(state_dir)
    state = read_run_state(state_dir)
    known = report_model.run_ids(events)
    if run_id is None:
        run_id = known[-1] if known else (state or {}).get("run_id")
        if not isinstance(run_id, str):
            raise NoRun(f"no run recorded in {state_dir} yet (no run_start in events.jsonl)")
    elif run_id not in known and (state or {}).get("run_id") != run_id:
        matches = [r for r in known if r.startswith(run_id)]
        if len(matches) != 1:
            shown = ", ".join(known[-5:]) or "none"
            raise NoRun(f"no run {run_id!r} in {state_dir}/events.jsonl" + (f" ({len(matches)} match)" if matches else "")
                        + f"; the last runs: {shown}")
        run_id = matches[0]
    return report_model.build(events, state, run_id)


def write_html(state_dir: str, model: dict) -> str:
    """Write report.html for the model's run; its path."""
    path = os.path.join(run_dir(state_dir, model["run_id"]), REPORT_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, page.render(model))
    return path
