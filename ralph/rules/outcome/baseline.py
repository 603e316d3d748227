"""Which failing tests were already failing at the iteration's checkpoint. Pure: no I/O.

A project may start an iteration with tests that already fail. Rolling the
agent back (or refusing its stop) for those punishes it for work it never
did, so only NEW failures count toward the rollback policy and the Stop gate.

The baseline of an iteration is what failed while the tree was still exactly
the checkpoint: the judged test runs made before anything changed (the hook
checks `git status` for those, records `at_checkpoint: true`) and, when the
loop is configured to, a verify run at iteration start (a `kind: "baseline"`
record). A run made after any change can never add to the baseline, so an
agent that breaks a test and then runs it is never excused.

A failing run whose failing tests are all in the baseline is `baseline_only`:
it neither counts toward nor resets the rollback count, and does not hold the
stop. A failing run whose tests cannot be named counts in full unless it was
itself made at the checkpoint (nothing to compare; precision of the rollback
does not matter there: it is the other way round, we must not excuse).
"""
from __future__ import annotations


def baseline_failures(history: list[dict]) -> set[str] | None:
    """Tests failing at the checkpoint of the iteration `history` belongs to; None when unknown."""
    found: set[str] | None = None
    for record in history:
        if record.get("kind") == "baseline" or (record.get("kind", "test") == "test" and record.get("at_checkpoint") is True):
            if record.get("verdict") not in ("fail", "pass"):
                continue
            found = found if found is not None else set()
            if record.get("verdict") == "fail":
                found.update(str(t) for t in record.get("failing_tests") or [])
    return found


def still_at_checkpoint(history: list[dict]) -> bool:
    """May the next failing run still be at the checkpoint? Only while every earlier
    failing run of the iteration was: once a check found the tree changed, git is
    not asked again (the answer is git's; this only saves the call). Passing runs
    are never checked: a baseline with no failures excuses nothing."""
    for record in history:
        if record.get("kind", "test") == "test" and record.get("verdict") == "fail" and record.get("at_checkpoint") is not True:
            return False
    return True


def classify_failure(record: dict, baseline: set[str] | None) -> tuple[list[str], list[str]]:
    """(new failing tests, already-failing tests) of a failing run."""
    failing = [str(t) for t in record.get("failing_tests") or []]
    if record.get("at_checkpoint") is True:
        return [], failing
    if not baseline:
        return failing, []
    new = [t for t in failing if t not in baseline]
    old = [t for t in failing if t in baseline]
    return new, old


def mark(record: dict, baseline: set[str] | None) -> None:
    """Add `baseline_only` (and the split) to a failing run's record."""
    if record.get("verdict") != "fail":
        return
    new, old = classify_failure(record, baseline)
    named = bool(record.get("failing_tests"))
    if record.get("at_checkpoint") is True or (named and not new and old):
        record["baseline_only"] = True
    if old:
        record["already_failing"] = old[:20]


def counts_as_failure(record: dict) -> bool:
    """A failing run that counts toward the rollback policy and the Stop gate."""
    return record.get("verdict") == "fail" and not record.get("baseline_only")


def baseline_note(record: dict) -> str:
    """One sentence for the context note, or "" when the baseline changed nothing."""
    old = record.get("already_failing") or []
    failing = record.get("failing_tests") or []
    if record.get("baseline_only"):
        if record.get("at_checkpoint") is True:
            return ("This run was made before anything changed since the checkpoint, so its failures are the baseline: "
                    "they do not count toward a rollback or hold the stop; only new failures will.")
        n = len(failing)
        return (f"{n} failing, all already failing at the checkpoint: ralph does not roll back or hold the stop for them; "
                "only new failures count.")
    if old:
        new = [t for t in failing if t not in old]
        return (f"{len(failing)} failing: {len(new)} new ({', '.join(new[:5])}{'…' if len(new) > 5 else ''}), "
                f"{len(old)} already failing at the checkpoint (those do not count).")
    return ""
