"""Delivering the run's work, at the run's two ends.

- start(): before the first iteration, the run branch (ralph.loop.branch):
  a dirty tree is refused, the branch created or resumed; and `[handoff]` is
  read now, before any agent runs (an agent that edits ralph.toml must not
  choose where the loop pushes).
- finish(): once the finish is recorded, the hand-off (ralph.loop.handoff)
  when the run committed something or the agent asked for a merge, then the
  report (ralph.report) in `.ralph/runs/<run>/report.html`. It never raises:
  a failed hand-off or report is said in the exit message and the report.

A tree the previous run left dirty (an unfinished story's work stays in the
tree for the next iteration; a killed run's too) is the agent's work, not the
person's: `.ralph/left_in_tree.json` records a digest of the changed files at
the finish of every run that got to its branch, and the next start accepts a
tree that still holds exactly that. A run killed mid-iteration (run.json
still says running) left its work in the tree too: any tree is accepted then.
"""
from __future__ import annotations

import json
import os
import shlex

from ralph.config.reading import load_section
from ralph.config.schema import ConfigError
from ralph.loop import branch, handoff, set_aside
from ralph.loop.lifecycle.spawn_config import DEPTH_VAR
from ralph.loop.run import Finish, Run
from ralph.plan import PlanError
from ralph.report import files as report_files
from ralph.report import markdown
from ralph.run import records
from ralph.run.state import CRASHED
from ralph.state.files import atomic_write, read_json_object
from ralph.state.locations import STATE_DIR_NAME

LEFT_FILE = "left_in_tree.json"


class Delivery:
    """What start() settled and finish() uses."""

    __slots__ = ("branch", "settings", "report_path", "summary", "handoff")

    def __init__(self, chosen: branch.RunBranch, settings: dict) -> None:
        self.branch = chosen
        self.settings = settings  # [handoff], as it was when the run started
        self.report_path = ""
        self.summary = ""  # the report in a few lines (session_end hooks get it: chat notifications)
        self.handoff: dict | None = None


def start(run: Run) -> dict:
    """Refuse a dirty tree (with --allow-dirty: set the person's changes
    aside, ralph.loop.set_aside), check out the run branch, read [handoff]; the
    run_start event's branch fields. Raises Finish. A child loop (a spawn
    hook's) works on its parent's branch and tree as they are, and leaves
    the hand-off to its parent."""
    child = bool(os.environ.get(DEPTH_VAR))
    try:
        settings = load_section(run.root, "handoff") if not child else {"mode": "none"}
    except ConfigError as e:
        raise Finish("error", str(e)) from None
    previous = records.read_run_state(run.state_dir) or {}
    accepted = agent_leftovers(run, previous)
    if run.settings.allow_dirty and not child:
        run.set_aside = set_aside.set_aside(run)  # the person's changes under their own ref, back at the end
    try:
        chosen = branch.prepare(run.root, branch.CURRENT if child else str(run.settings["branch"]), run.plan_path,
                                run.settings.allow_dirty or child, state_rel=STATE_DIR_NAME, accepted=accepted)
    except branch.BranchError as e:
        raise Finish("error", str(e)) from None
    run.branch = chosen.name
    run.delivery = Delivery(chosen, settings)
    run.display.message(f"branch: working {chosen.describe()}")
    return chosen.event_fields()


def agent_leftovers(run: Run, previous: dict) -> dict | None:
    """What the previous run left in the tree (branch.fingerprint()): a tree
    holding exactly that is accepted. None: any tree is (the previous run was
    killed mid-iteration and its work is in the tree; recovery said so)."""
    finish = previous.get("finish") if isinstance(previous.get("finish"), dict) else {}
    if previous.get("status") == "running" or finish.get("type") == CRASHED:
        return None
    left = read_json_object(os.path.join(run.state_dir, LEFT_FILE))
    return left if left is not None else branch.NOTHING_LEFT


def finish(run: Run, finish: Finish) -> str:
    """The hand-off and the report; what the exit message adds ("" or
    "; hand-off failed: ..."). Never raises."""
    delivery = run.delivery
    if not isinstance(delivery, Delivery):
        return ""  # the run never got to its branch: nothing to hand off, nothing to report
    problem = ""
    try:
        delivery.handoff = hand_off(run, delivery)
    except Exception as e:  # noqa: BLE001 - the run is over: say it, lose nothing
        delivery.handoff = {"mode": delivery.settings.get("mode"), "ok": False, "branch": run.branch, "error": f"{type(e).__name__}: {e}"}
    if delivery.handoff is not None:
        record = {"event": "handoff", "run_id": run.run_id, **delivery.handoff}
        append(run, record)
        if delivery.handoff.get("ok"):
            run.display.message(f"hand-off: {describe(delivery.handoff)}")
        else:
            problem = f"; hand-off failed: {delivery.handoff.get('error')} (the commits are on {run.branch or 'the current branch'})"
    remember(run, delivery)
    try:
        model = report_files.load(run.state_dir, run.run_id)
        delivery.report_path = report_files.write_html(run.state_dir, model)
        delivery.summary = markdown.brief(model)
    except Exception as e:  # noqa: BLE001 - a report that cannot be written must not end the run badly
        problem += f"; the report could not be written: {type(e).__name__}: {e}"
    return problem


def hand_off(run: Run, delivery: Delivery) -> dict | None:
    """The hand-off, when there is something to hand: commits made in this
    run, or the agent's request_merge. None when there is not."""
    requests = handoff.merge_requests(run.state_dir, run.run_id)
    if not run.done_this_run and not requests:
        return None
    mode = delivery.settings.get("mode", "none")
    if mode != "none":
        run.display.message(f"hand-off: {mode} of {run.branch or 'the current branch'}...")

    def body() -> str:
        return markdown.summary(report_files.load(run.state_dir, run.run_id), handoff=False)

    out_dir = report_files.run_dir(run.state_dir, run.run_id)
    return handoff.hand_off(run.root, delivery.settings, run.branch, since=created_from(run), title=plan_title(run),
                            body=body, out_dir=out_dir, stop=lambda: run.interrupts.forced)


def created_from(run: Run) -> str:
    """The branch the run branch was made from, by the run that created it."""
    for event in records.read_events(run.state_dir):
        if event.get("event") == "run_start" and event.get("branch") == run.branch and event.get("branch_action") == "created":
            previous = event.get("previous_branch")
            return previous if isinstance(previous, str) else ""
    return ""


def plan_title(run: Run) -> str:
    try:
        return branch.plan_title(run.plan_path)
    except (OSError, PlanError):
        return ""


def describe(record: dict) -> str:
    if record.get("mode") == "none":
        return "none ([handoff] mode = \"none\"; the commits are on " + str(record.get("branch") or "the current branch") + ")"
    if record.get("mode") == "bundle":
        return f"bundle written: {record.get('path')}"
    text = f"pushed {record.get('branch')} to {record.get('remote')}"
    if record.get("mode") == "pr":
        text += f"; draft pull request {record.get('action', 'opened')}: {record.get('url') or '(no URL printed)'}"
    return text


def append(run: Run, event: dict) -> None:
    try:
        records.append_event(run.state_dir, event)
    except OSError as e:
        run.display.message(f"could not record the hand-off in events.jsonl: {e}")


def remember(run: Run, delivery: Delivery) -> None:
    """run.json: the branch, the hand-off, and what the run leaves in the tree."""
    state = records.read_run_state(run.state_dir)
    if not isinstance(state, dict) or state.get("run_id") != run.run_id:
        return
    state.pop("version", None)
    state["branch"] = run.branch
    if delivery.handoff is not None:
        state["handoff"] = delivery.handoff
    try:
        records.write_run_state(run.state_dir, state)
    except OSError as e:
        run.display.message(f"could not record the hand-off in run.json: {e}")
    try:
        left = branch.fingerprint(run.root, branch.dirty_files(run.root, STATE_DIR_NAME))
        atomic_write(os.path.join(run.state_dir, LEFT_FILE), json.dumps(dict(left, run_id=run.run_id)) + "\n")
    except (branch.BranchError, OSError) as e:
        run.display.message(f"could not record what the run leaves in the tree: {e}")


def session_end_context(run: Run) -> dict:
    """What session_end hooks get besides the finish: the branch and the report."""
    delivery = run.delivery
    if not isinstance(delivery, Delivery):
        return {"branch": run.branch}
    return {"branch": run.branch, "report_file": delivery.report_path, "report_summary": delivery.summary}


def report_line(run: Run) -> str:
    delivery = run.delivery
    if not isinstance(delivery, Delivery) or not delivery.report_path:
        return ""
    return f"report: {os.path.relpath(delivery.report_path, run.root)}"


def checkout_line(run: Run) -> str:
    """The last line of a run: the branch the checkout is left on, and the
    command that puts back the one the person had ("" when the run never got
    to its branch). The run does not switch back itself: the branch with the
    work is the one to look at, and the tree may hold an unfinished story's work."""
    delivery = run.delivery
    if not isinstance(delivery, Delivery):
        return ""
    chosen = delivery.branch
    now = branch.current_branch(run.root)
    where = f"on {now}" if now else "on a detached HEAD"
    if chosen.action == "current" or (now and now == chosen.previous):
        return f"checkout: {where} (as when the run started)"
    if now != chosen.name:
        where += f" (not the run branch {chosen.name})"
    else:
        where += " (the run branch)"
    back = f"git switch {shlex.quote(chosen.previous)}" if chosen.previous else f"git switch --detach {chosen.base[:12]}"
    return f"checkout: {where}; to go back to where you were: {back}"
