"""`ralph status`: stories done / total, the current (or last) run, the last
iterations and the rollbacks, from `.ralph/` and git. Read-only, but for
one write: a run whose loop is gone without writing its finish is finished
as `crashed` in run.json (and events.jsonl), so the hooks stop acting for it."""
from __future__ import annotations

import argparse
import calendar
import json
import os
import sys
import time

from ralph.config.reading import load_config, section
from ralph.config.schema import ConfigError
from ralph.plan import PlanError, load_stories
from ralph.process import pid_alive
from ralph.rollback.git import RollbackError
from ralph.rollback.snapshots import list_snapshots
from ralph.run.state import loop_holds_lock
from ralph.state.denials import read_denials
from ralph.state.files import read_json_object
from ralph.state.locations import STATE_DIR_NAME, project_root

from ralph.loop.display import clock_time
from ralph.loop.lifecycle.spawn_run import list_children
from ralph.loop.lifecycle.webhook_config import WAITING_FILE
from ralph.loop.recovery import finish_dead_run
from ralph.loop.usage import format_cost, format_tokens
from ralph.run import paths, records
from ralph.run.settings import resolve
from ralph.run.tool_calls import merge_requests

RECENT_ITERATIONS = 5
RECENT_ROLLBACKS = 5
WAITING_FOR = {"usage_limit": "the usage limit", "transient": "a retry after a transient API error", "hung": "a retry of a hung agent"}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ralph status", description="Stories done, current run, last iterations, rollbacks.")
    parser.add_argument("--plan", help="plan file (default: as ralph-loop finds it)")
    parser.add_argument("-C", "--directory", metavar="DIR", help="project directory (default: the current one)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("-n", "--iterations", type=int, default=RECENT_ITERATIONS, metavar="N", help="how many recent iterations to show")
    return parser.parse_args(argv)


def collect(root: str, plan_arg: str | None, recent: int) -> dict:
    state_dir = os.path.join(root, STATE_DIR_NAME)
    report: dict = {"root": root, "problems": []}
    plan_path = resolve(root, plan_arg) if plan_arg else None
    if plan_path is None:
        try:
            configured = section(load_config(root), "loop").get("plan")
        except ConfigError as e:
            report["problems"].append(str(e))
            configured = None
        plan_path = resolve(root, configured) if isinstance(configured, str) and configured else paths.discover_plan(state_dir)
    stories_report: dict = {"plan": paths.relative(root, plan_path) if plan_path else None}
    if plan_path and os.path.exists(plan_path):
        try:
            stories = sorted(load_stories(plan_path), key=lambda s: s.priority)
            stories_report.update(
                total=len(stories),
                done=sum(1 for s in stories if s.state == "done"),
                blocked=[s.id for s in stories if s.state == "blocked"],
                next=next(({"id": s.id, "title": s.title} for s in stories if s.state == "todo"), None),
            )
        except (OSError, PlanError) as e:
            report["problems"].append(str(e))
    report["stories"] = stories_report
    run = records.read_run_state(state_dir)
    if run is not None:
        run = live_or_finished(state_dir, run)
    report["run"] = run
    events = records.read_events(state_dir)
    report["iterations"] = [e for e in events if e.get("event") == "iteration"][-recent:] if recent > 0 else []
    report["rollbacks"] = rollbacks(root, report["problems"])
    report["denials"] = denials(state_dir, (run or {}).get("run_id"))
    run_id = (run or {}).get("run_id")
    report["merge_requests"] = merge_requests(state_dir, run_id) if isinstance(run_id, str) else []
    report["waiting"] = waiting_gate(state_dir)
    report["children"] = children(state_dir)
    return report


def live_or_finished(state_dir: str, run: dict) -> dict:
    """A run is live while its loop holds `.ralph/loop.lock`; one that says
    "running" without it is finished here as crashed (ralph.loop.recovery),
    so the hooks and the next loop read the truth."""
    running = run.get("status") == "running"
    run["live"] = running and loop_holds_lock(state_dir)
    if not running or run["live"]:
        return run
    try:
        finished = finish_dead_run(state_dir, "ralph status")
    except OSError as e:
        run["note"] = f"the loop process is gone (killed or crashed) without writing its finish; could not record it: {e}"
        return run
    if finished is None:  # a loop took the lock meanwhile: what it says now
        now = records.read_run_state(state_dir) or run
        now["live"] = now.get("status") == "running" and loop_holds_lock(state_dir)
        return now
    finished["live"] = False
    return finished


def denials(state_dir: str, run_id: object) -> dict:
    """The push/merge guard's denials in the current (or last) run, per story and iteration."""
    if not isinstance(run_id, str):
        return {}
    entries = read_denials(state_dir, run_id)
    by_story: dict[str, dict[str, int]] = {}
    for entry in entries:
        iterations = by_story.setdefault(str(entry.get("story") or "-"), {})
        key = str(entry.get("iteration"))
        iterations[key] = iterations.get(key, 0) + 1
    recent = [{k: e.get(k) for k in ("iteration", "story", "command", "reason")} for e in entries[-3:]]
    return {"run_id": run_id, "total": len(entries), "by_story": by_story, "recent": recent}


def waiting_gate(state_dir: str) -> dict | None:
    """An approval gate the loop is waiting at (ralph.loop.lifecycle.webhook_run), if any."""
    gate = read_json_object(os.path.join(state_dir, WAITING_FILE))
    return gate if gate is not None and pid_alive(gate.get("pid")) else None


def children(state_dir: str) -> list[dict]:
    return list_children(state_dir)


def rollbacks(root: str, problems: list[str]) -> list[dict]:
    try:
        snapshots = list_snapshots(root)
    except RollbackError as e:
        problems.append(str(e))
        return []
    return [s.to_dict() for s in snapshots][-RECENT_ROLLBACKS:]


def render(report: dict) -> str:
    lines = []
    stories = report["stories"]
    if stories.get("plan") is None:
        lines.append("plan: none found (.ralph/plan.md, .ralph/prd.json or .ralph/PRD-N/)")
    elif "total" in stories:
        line = f"stories: {stories['done']}/{stories['total']} done ({stories['plan']})"
        if stories["blocked"]:
            line += f"; blocked: {', '.join(stories['blocked'])}"
        lines.append(line)
        nxt = stories.get("next")
        lines.append(f"next: {nxt['id']}: {nxt['title']}" if nxt else "next: nothing left to do")
    run = report.get("run")
    if run:
        story = run.get("story") or {}
        finish = run.get("finish") or {}
        if run.get("status") == "running":
            state = "running" if run.get("live") else "stale (" + run.get("note", "") + ")"
            lines.append(f"run {run.get('run_id')}: {state}, iteration {run.get('iteration')}, "
                         f"{story.get('id', 'planning')} since {run.get('started')} (stage {run.get('stage_name', run.get('stage'))})")
            waiting = run.get("waiting")
            if run.get("live") and isinstance(waiting, dict):
                lines.append(f"waiting for {WAITING_FOR.get(str(waiting.get('reason')), waiting.get('reason'))} "
                             f"until {local_clock(waiting.get('until'))} (since {local_clock(waiting.get('since'))}); "
                             f"then {story.get('id', 'the same iteration')} again")
        else:
            exit_code = f" (exit {finish['exit_code']})" if "exit_code" in finish else ""
            lines.append(f"last run {run.get('run_id')}: {finish.get('type', run.get('status'))} at {finish.get('at', '?')}: "
                         f"{finish.get('message', '')}{exit_code}")
        lines.extend(usage_lines(run))
    else:
        lines.append("run: none yet")
    if run and run.get("branch"):
        line = f"branch: {run['branch']} (the run's commits are there)"
        handoff = run.get("handoff")
        if isinstance(handoff, dict) and handoff.get("mode") not in (None, "none"):
            line += f"; hand-off {handoff.get('mode')}: " + ("done" + (f", {handoff['url']}" if handoff.get("url") else "")
                                                              if handoff.get("ok") else f"FAILED: {handoff.get('error')}")
        lines.append(line)
    gate = report.get("waiting")
    if gate:
        lines.append(f"waiting for approval at {gate.get('point')} ({gate.get('hook')}) since {gate.get('since')}, until {gate.get('until')}:")
        lines.append(f"  approve: curl '{gate.get('url')}?action=approve'   reject: curl '{gate.get('url')}?action=reject&message=why'")
    if report.get("children"):
        lines.append("child loops (.ralph/children/):")
        for child in report["children"]:
            mode = "awaited" if child.get("await") else f"detached, pid {child.get('pid')}"
            output = ", output.json written" if child.get("output") else ""
            lines.append(f"  {child['dir']}: {child.get('pipeline')} ({mode}), started {child.get('started')}: {child.get('state')}{output}")
    if report["iterations"]:
        lines.append("last iterations:")
        for event in report["iterations"]:
            verify = (event.get("verify") or {}).get("result", "-")
            extra = f" commit {event['commit'][:12]}" if event.get("commit") else ""
            if event.get("rollback", {}).get("ref"):
                extra += f" rollback {event['rollback']['ref']}"
            usage = event.get("usage")
            if isinstance(usage, dict) and isinstance(usage.get("cost_usd"), (int, float)):
                extra += f" {format_cost(usage['cost_usd'])}"
            if event.get("attempt_counted") is False:
                extra += " (not counted)"
            lines.append(f"  #{event.get('iteration')} {event.get('story') or event.get('stage')}: {event.get('result')} "
                         f"(agent exit {event.get('agent_exit')}, verify {verify}, {event.get('duration_s', '?')}s){extra}")
    if report["rollbacks"]:
        lines.append("rollbacks (restore with `ralph rollbacks restore ID`):")
        for snap in report["rollbacks"]:
            lines.append(f"  {snap['id']}  {snap['time']}  {snap.get('story') or '-'} #{snap.get('iteration') or '-'}  {snap.get('trigger') or snap.get('kind')}")
    guard = report.get("denials") or {}
    if guard.get("total"):
        parts = []
        for story, iterations in guard["by_story"].items():
            detail = ", ".join(f"#{n}: {c}" for n, c in iterations.items())
            parts.append(f"{story}: {sum(iterations.values())} ({detail})")
        lines.append(f"guard denials in run {guard['run_id']}: " + "; ".join(parts))
        for entry in guard["recent"]:
            lines.append(f"  #{entry['iteration']} {entry['story'] or '-'}: `{str(entry['command'])[:100]}`: {str(entry['reason'])[:120]}")
    if report.get("merge_requests"):
        lines.append(f"merge requests (request_merge) in run {run.get('run_id') if run else '?'}, for the hand-off:")
        for request in report["merge_requests"]:
            lines.append(f"  #{request.get('iteration')} {request.get('story') or '-'} at {request.get('at')}: {str(request.get('summary'))[:160]}")
    for problem in report["problems"]:
        lines.append(f"problem: {problem}")
    return "\n".join(lines) + "\n"


def local_clock(stamp: object) -> str:
    """2026-11-26T03:12:00Z -> "04:12 CET": the screen's time format (display.clock_time)."""
    if not isinstance(stamp, str):
        return "?"
    try:
        epoch = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return stamp
    return clock_time(epoch, time.time())


def usage_lines(run: dict) -> list[str]:
    """What the run's agents used (run.json `usage`): the run, then each story."""
    usage = run.get("usage")
    if not isinstance(usage, dict) or not usage.get("turns") and not usage.get("cost_usd"):
        return []
    number = lambda value: value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0  # noqa: E731
    lines = [f"usage: {format_cost(number(usage.get('cost_usd')))} (the client's estimate from list prices), "
             f"{format_tokens(number(usage.get('input_tokens')))} input + {format_tokens(number(usage.get('output_tokens')))} output tokens "
             f"(+{format_tokens(number(usage.get('cache_read_input_tokens')))} cache reads), {number(usage.get('turns'))} turn(s)"]
    stories = usage.get("stories")
    if isinstance(stories, dict):
        for story, figures in stories.items():
            if isinstance(figures, dict):
                tokens = number(figures.get("input_tokens")) + number(figures.get("output_tokens"))
                lines.append(f"  {story}: {format_cost(number(figures.get('cost_usd')))}, {format_tokens(tokens)} tokens, "
                             f"{number(figures.get('iterations'))} iteration(s)")
    return lines


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    root = os.path.abspath(args.directory) if args.directory else project_root(os.getcwd())
    report = collect(root, args.plan, args.iterations)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(report))
    return 1 if report["problems"] else 0
