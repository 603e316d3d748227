"""The report of one run as data: a pure function of the events the run
wrote (`.ralph/events.jsonl`) and `.ralph/run.json`. Nothing else is read:
no git, no plan file, no clock, so a recorded run always gives the same
report, and the renderers (ralph.report.html, ralph.report.markdown) only
format what is here. Every string taken from the records goes through
ralph.redaction.redact once, here.

    build(events, run_state, run_id) -> dict   (the `--format json` output)
"""
from __future__ import annotations

from datetime import datetime

from ralph.redaction import redact

FORMAT = 1

# an iteration's result -> its category in the timeline (a rollback or a
# wait on the iteration overrides it: see category())
RESULT_CATEGORY = {
    "done": "done",
    "plan_changed": "done",
    "plan_unchanged": "done",
    "verify_failed": "verify_failed",
    "timeout": "timeout",
    "blocked_by_agent": "blocked",
    "merge_detected": "rolled_back",
    "git_config_changed": "rolled_back",
}
# category -> (label, symbol in the text timeline); the order is the legend's
CATEGORIES = {
    "done": ("done", "✓"),
    "verify_failed": ("verify failed", "✗"),
    "rolled_back": ("rolled back", "↺"),
    "timeout": ("timeout", "⏱"),
    "blocked": ("blocked", "⛔"),
    "waited": ("waited", "⏸"),
    "failed": ("other failure", "·"),
}
# finish type -> why a run ends that way, for the person
FINISH_WHY = {
    "complete": "every story is done",
    "error": "the run could not go on",
    "max_iterations": "the iteration limit was reached with stories left",
    "blocked": "only blocked stories are left, or a story used up its budget",
    "no_changes": "several iterations in a row changed nothing",
    "hook_abort": "a hook or a person aborted the run",
    "budget": "a budget of the run ran out",
    "rate_limited": "the agent's usage limit or rate limit stopped the run",
    "manual": "stopped by a signal (Ctrl-C or kill)",
    "crashed": "the loop died without writing its finish (SIGKILL, the OOM killer, a full disk)",
}
USAGE_FIELDS = ("cost_usd", "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
TOKEN_FIELDS = USAGE_FIELDS[1:]
ITERATION_POINTS = ("pre_iteration", "post_iteration", "on_task_complete", "on_error")
PLAN_LANE = "PLAN"  # the timeline's row of a plan stage's iterations (no story)


_redacted: dict[str, str] = {}  # text -> redacted: records repeat their words (results, hook names, stages)


def text(value: object) -> str:
    """A record's value as redacted text ("" for None)."""
    if value is None:
        return ""
    raw = value if isinstance(value, str) else str(value)
    done = _redacted.get(raw)
    if done is None:
        done = redact(raw)  # type: ignore[assignment]
        if len(_redacted) < 100_000:
            _redacted[raw] = done  # type: ignore[assignment]
    return done  # type: ignore[return-value]


def number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def epoch(stamp: object) -> float | None:
    """Seconds since the epoch of an ISO 8601 time, None when it is not one."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def run_ids(events: list[dict]) -> list[str]:
    """The runs in these events, oldest first (by their run_start)."""
    seen: dict[str, None] = {}
    for event in events:
        if event.get("event") == "run_start" and isinstance(event.get("run_id"), str):
            seen[event["run_id"]] = None
    return list(seen)


def category(iteration: dict) -> str:
    if iteration.get("attempt_counted") is False:
        return "waited"
    if isinstance(iteration.get("rollback"), dict):
        return "rolled_back"
    return RESULT_CATEGORY.get(str(iteration.get("result")), "failed")


def restore_command(rollback_id: str) -> str:
    return f"ralph rollbacks restore {rollback_id}"


def build(events: list[dict], run_state: dict | None = None, run_id: str | None = None) -> dict:
    """The report of run `run_id` (default: the last run in the events)."""
    if run_id is None:
        ids = run_ids(events)
        run_id = ids[-1] if ids else (run_state or {}).get("run_id")
    mine = [e for e in events if isinstance(e, dict) and e.get("run_id") == run_id]
    state = run_state if isinstance(run_state, dict) and run_state.get("run_id") == run_id else {}
    by_kind: dict[str, list[dict]] = {}
    for event in mine:
        by_kind.setdefault(str(event.get("event")), []).append(event)
    start = (by_kind.get("run_start") or [{}])[0]
    finish_event = (by_kind.get("finish") or [None])[-1]
    iterations = sorted(by_kind.get("iteration", []), key=lambda e: number(e.get("iteration")) or 0)
    waits = by_kind.get("wait", [])
    handoff_event = (by_kind.get("handoff") or [None])[-1]
    started_at = epoch(start.get("at")) or epoch(state.get("run_started"))
    if started_at is None:
        stamps = [epoch(e.get("at") or e.get("started")) for e in mine]
        started_at = min((s for s in stamps if s is not None), default=0.0)

    def offset(stamp: object) -> float | None:
        at = epoch(stamp)
        return None if at is None else max(0.0, at - started_at)

    hooks_by_iteration: dict[int, list[dict]] = {}
    run_hooks: list[dict] = []
    for event in by_kind.get("hooks", []):
        entry = hook_entry(event)
        if event.get("point") in ITERATION_POINTS and isinstance(event.get("iteration"), int):
            hooks_by_iteration.setdefault(event["iteration"], []).append(entry)
        else:
            run_hooks.append(entry)

    rows = [iteration_row(e, offset, hooks_by_iteration.get(e.get("iteration"), [])) for e in iterations]  # type: ignore[arg-type]
    wait_rows = [wait_row(w, offset) for w in waits]
    end_s = max([r["end_s"] for r in rows] + [w["end_s"] for w in wait_rows] + [0.0])
    finish = finish_of(finish_event, state)
    wall = number((finish_event or {}).get("elapsed_s"))
    if wall is None:
        ends = [offset(e.get("at") or e.get("ended")) for e in mine]
        wall = max([end_s] + [x for x in ends if x is not None])
    end_s = max(end_s, wall)

    listed, final = plan_list(finish_event, by_kind)
    stories = story_table(listed, final, rows, by_kind.get("story_blocked", []), wait_rows)
    usage = usage_totals(rows)
    handoff = handoff_of(handoff_event, state)
    merge_requests = [{"iteration": e.get("iteration"), "story": text(e.get("story")) or None,
                       "summary": text(e.get("summary")), "at": text(e.get("at"))}
                      for e in by_kind.get("merge_requested", [])]
    branch = text(start.get("branch") or state.get("branch")) or None
    report = {
        "format": FORMAT,
        "run_id": text(run_id),
        "plan": text(start.get("plan")),
        "stages": [text(s) for s in start.get("stages") or []],
        "started": text(start.get("at") or state.get("run_started")),
        "finish": finish,
        "glance": {
            "finish_type": finish["type"],
            "why": FINISH_WHY.get(finish["type"], "") if finish["type"] else "the run has no finish record (still running, or killed)",
            "message": finish["message"],
            "stories_total": len(stories),
            "stories_done": sum(1 for s in stories if s["state"] == "done"),
            "stories_blocked": sum(1 for s in stories if s["state"] == "blocked"),
            "stories_left": sum(1 for s in stories if s["state"] == "todo"),
            "stories_done_this_run": sum(1 for s in stories if s["done_this_run"]),
            "iterations": len(rows),
            "wall_s": round(wall, 3),
            "agent_s": round(sum(r["agent_s"] or 0.0 for r in rows), 3),
            "usage_limit_waits": sum(1 for w in wait_rows if w["reason"] == "usage_limit"),
            "usage_limit_wait_s": round(sum(w["seconds"] for w in wait_rows if w["reason"] == "usage_limit"), 3),
            "waits": len(wait_rows),
            "wait_s": round(sum(w["seconds"] for w in wait_rows), 3),
            "usage": usage,
            "usage_kept": kept_usage(state),
            "branch": branch,
            "branch_action": text(start.get("branch_action")) or None,
            "previous_branch": text(start.get("previous_branch")) or None,
            "handoff": handoff,
            "commits": sum(1 for r in rows if r["commit"]),
        },
        "act_on": act_on(stories, rows, handoff, merge_requests, finish, text(start.get("plan"))),
        "stories": stories,
        "iterations": rows,
        "waits": wait_rows,
        "merge_requests": merge_requests,
        "timeline": timeline(stories, rows, wait_rows, end_s),
        "cumulative": cumulative(rows),
        "story_time": [{"story": s["id"], "state": s["state"], "seconds": s["seconds"], "agent_s": s["agent_s"], "wait_s": s["wait_s"]}
                       for s in stories if s["iterations"] or s["wait_s"]],
        "run_hooks": run_hooks,
        "notes": notes(by_kind),
    }
    return report


# ---- pieces ----


def hook_entry(event: dict) -> dict:
    return {
        "point": text(event.get("point")),
        "iteration": event.get("iteration") if isinstance(event.get("iteration"), int) else None,
        "duration_s": number(event.get("duration_s")),
        "abort": text(event.get("abort")) or None,
        "actions": [{"action": text(a.get("action")), "status": text(a.get("status")), "exit": a.get("exit"),
                     "attempts": a.get("attempts")} for a in event.get("actions") or [] if isinstance(a, dict)],
    }


def iteration_row(event: dict, offset: object, hooks: list[dict]) -> dict:
    started = offset(event.get("started"))  # type: ignore[operator]
    duration = number(event.get("duration_s")) or 0.0
    if started is None:
        ended = offset(event.get("ended"))  # type: ignore[operator]
        started = max(0.0, (ended or 0.0) - duration)
    usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
    verify = event.get("verify") if isinstance(event.get("verify"), dict) else None
    rollback = event.get("rollback") if isinstance(event.get("rollback"), dict) else None
    row = {
        "iteration": event.get("iteration"),
        "story": text(event.get("story")) or PLAN_LANE,
        "planning": event.get("mode") == "plan",
        "title": text(event.get("title")),
        "stage": text(event.get("stage")),
        "result": text(event.get("result")) or "unknown",
        "category": category(event),
        "started": text(event.get("started")),
        "start_s": round(started, 3),
        "end_s": round(started + duration, 3),
        "duration_s": round(duration, 3),
        "agent_s": number(event.get("agent_seconds")),
        "agent_exit": event.get("agent_exit"),
        "timed_out": bool(event.get("agent_timed_out")),
        "cost_usd": number(usage.get("cost_usd")),
        "tokens": token_sum(usage),
        "model": text(usage.get("model")) or None,
        "verify": None if verify is None else {
            "result": text(verify.get("result")), "verdict": text(verify.get("verdict")) or None,
            "exit_code": verify.get("exit_code"), "seconds": number(verify.get("seconds")),
            "failing_tests": [text(t) for t in verify.get("failing_tests") or []], "error": text(verify.get("error")) or None,
            "excerpt": text(verify.get("excerpt")) or None,
        },
        "denial_count": int(event.get("guard_denials") or 0) if isinstance(event.get("guard_denials"), int) else 0,
        "denials": [{"command": text(d.get("command")), "reason": text(d.get("reason"))}
                    for d in event.get("denied") or [] if isinstance(d, dict)],
        "rollback": None if rollback is None else {
            "id": text(rollback.get("id")) or None, "ref": text(rollback.get("ref")) or None,
            "restored": bool(rollback.get("restored")), "message": text(rollback.get("message")),
            "command": restore_command(text(rollback["id"])) if rollback.get("id") else None,
        },
        "commit": text(event.get("commit")) or None,
        "diffstat": diffstat_of(event.get("diffstat")),
        "error": text(event.get("error") or event.get("commit_error")) or None,
        "problems": [text(p) for p in (event.get("foreign_history") or []) + (event.get("git_control_changed") or [])],
        "hooks": hooks,
        "waited": event.get("attempt_counted") is False,
    }
    return row


def token_sum(usage: dict) -> int | None:
    values = [usage.get(f) for f in TOKEN_FIELDS if isinstance(usage.get(f), int)]
    return sum(values) if values else None  # type: ignore[arg-type]


def diffstat_of(value: object) -> dict | None:
    if not isinstance(value, dict):
        return None
    return {"files": value.get("files"), "insertions": value.get("insertions"), "deletions": value.get("deletions"),
            "paths": [{"path": text(p.get("path")), "added": p.get("added"), "deleted": p.get("deleted")}
                      for p in value.get("paths") or [] if isinstance(p, dict)]}


def wait_row(event: dict, offset: object) -> dict:
    seconds = number(event.get("seconds")) or 0.0
    start = offset(event.get("started"))  # type: ignore[operator]
    return {
        "story": text(event.get("story")) or None,
        "iteration": event.get("iteration"),
        "reason": text(event.get("reason")),
        "started": text(event.get("started")),
        "until": text(event.get("until")) or None,
        "seconds": round(seconds, 3),
        "start_s": round(start or 0.0, 3),
        "end_s": round((start or 0.0) + seconds, 3),
        "attempt": event.get("attempt"),
        "detail": text(event.get("detail")),
    }


def finish_of(event: dict | None, state: dict) -> dict:
    source = event if event is not None else (state.get("finish") if isinstance(state.get("finish"), dict) else {})
    return {"type": text(source.get("type")) or None, "message": text(source.get("message")),
            "exit_code": source.get("exit_code"), "at": text(source.get("at")) or None}


def handoff_of(event: dict | None, state: dict) -> dict | None:
    source = event if event is not None else (state.get("handoff") if isinstance(state.get("handoff"), dict) else None)
    if source is None:
        return None
    return {"mode": text(source.get("mode")), "ok": bool(source.get("ok")), "branch": text(source.get("branch")) or None,
            "remote": text(source.get("remote")) or None, "url": text(source.get("url")) or None,
            "path": text(source.get("path")) or None, "error": text(source.get("error")) or None,
            "action": text(source.get("action")) or None}


def usage_totals(rows: list[dict]) -> dict | None:
    costs = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    tokens = [r["tokens"] for r in rows if r["tokens"] is not None]
    if not costs and not tokens:
        return None
    return {"cost_usd": round(sum(costs), 6) if costs else None, "tokens": sum(tokens) if tokens else None}


def kept_usage(state: dict) -> dict | None:
    """run.json's totals (kept across a resumed run), when it has them."""
    usage = state.get("usage")
    if not isinstance(usage, dict):
        return None
    tokens = [usage.get(f) for f in TOKEN_FIELDS if isinstance(usage.get(f), int)]
    return {"cost_usd": number(usage.get("cost_usd")), "tokens": sum(tokens) if tokens else None}  # type: ignore[arg-type]


def plan_list(finish_event: dict | None, by_kind: dict[str, list[dict]]) -> tuple[list | None, bool]:
    """The plan's stories as last recorded, and whether that is at the finish.
    Before the finish (a report made mid-run, a killed run) it is the list of
    the last stage end, else of the run's start: the iterations since say
    which of them got done or blocked."""
    if finish_event is not None and isinstance(finish_event.get("stories"), list):
        return finish_event["stories"], True
    for event in reversed(by_kind.get("stage_complete", []) + by_kind.get("run_start", [])[:1]):
        if isinstance(event.get("stories"), list):
            return event["stories"], False
    return None, False


def story_table(listed: list | None, final: bool, rows: list[dict], blocked_events: list[dict], waits: list[dict]) -> list[dict]:
    """One entry per story: those of the plan as last listed (in its order),
    then any other that iterations or waits name. A list from before the
    finish (`final` False) gives way to what the iterations did since."""
    order: dict[str, dict] = {}
    if isinstance(listed, list):
        for item in listed:
            if isinstance(item, dict) and item.get("id"):
                order[text(item["id"])] = {"title": text(item.get("title")), "state": text(item.get("state")) or "todo"}
    for row in rows:
        if row["planning"]:
            continue
        entry = order.setdefault(row["story"], {"title": row["title"], "state": ""})
        entry["title"] = entry["title"] or row["title"]
    for wait in waits:
        if wait["story"]:
            order.setdefault(wait["story"], {"title": "", "state": ""})
    blocks: dict[str, dict] = {}
    for event in blocked_events:
        blocks[text(event.get("story"))] = {"reason": text(event.get("reason")), "question": text(event.get("question")) or None,
                                            # records from before `by` was written: the budget's is the one with seconds
                                            "by": text(event.get("by")) or ("budget" if "seconds" in event else None),
                                            "at": text(event.get("at")),
                                            "budget": text(event.get("budget")) or None}
    by_story: dict[str, list[dict]] = {}
    for row in rows:
        by_story.setdefault(row["story"], []).append(row)
    waited: dict[str, float] = {}
    for wait in waits:
        waited[wait["story"] or ""] = waited.get(wait["story"] or "", 0.0) + wait["seconds"]
    stories = []
    for story_id, entry in order.items():
        mine = by_story.get(story_id, [])
        if story_id not in blocks and mine and mine[-1]["category"] == "blocked":
            blocks[story_id] = {"reason": f"the agent marked it blocked in iteration {mine[-1]['iteration']}", "question": None,
                                "by": "agent", "at": mine[-1]["started"], "budget": None}
        state = entry["state"]
        last = mine[-1] if mine else None
        if state == "todo" and not final and (last is not None or story_id in blocks):  # listed before these iterations ran
            state = ""
        if not state:  # not in the finish record: the last iteration says
            state = "done" if last and last["result"] == "done" else ("blocked" if story_id in blocks or (last and last["category"] == "blocked") else "todo")
        costs = [r["cost_usd"] for r in mine if r["cost_usd"] is not None]
        commits = [r for r in mine if r["commit"]]
        stories.append({
            "id": story_id,
            "title": entry["title"],
            "state": state,
            "done_this_run": bool(commits),
            "iterations": [r["iteration"] for r in mine],
            "seconds": round(sum(r["duration_s"] for r in mine), 3),
            "agent_s": round(sum(r["agent_s"] or 0.0 for r in mine), 3),
            "wait_s": round(waited.get(story_id, 0.0), 3),
            "cost_usd": round(sum(costs), 6) if costs else None,
            "blocked": blocks.get(story_id),
            "commit": commits[-1]["commit"] if commits else None,
            "diffstat": commits[-1]["diffstat"] if commits else None,
        })
    return stories


def act_on(stories: list[dict], rows: list[dict], handoff: dict | None, merge_requests: list[dict], finish: dict,
           plan: str = "") -> list[dict]:
    """What the person must look at first: the run's own problems, then one
    entry per story that needs them, grouped: blocked (the agent's question
    and how to answer it), failed (what failed, the last verify excerpt, one
    restore command), stopped by a budget or a limit (what to raise). Every
    entry has `group`, `kind`, `story` and `text` (its one-line form)."""
    items = []
    if finish["type"] in ("error", "hook_abort", "crashed") or finish["type"] is None:
        items.append({"group": "run", "kind": "finish", "story": None,
                      "text": f"the run ended with {finish['type']}: {finish['message']}" if finish["type"]
                      else "the run has no finish record: it is still running, or it was killed"})
    if handoff is not None and not handoff["ok"]:
        items.append({"group": "run", "kind": "handoff_failed", "story": None,
                      "text": f"the hand-off ({handoff['mode']}) failed: {handoff['error']}; the commits are on {handoff['branch'] or 'the run branch'}"})
    for row in rows:
        rollback = row["rollback"]
        if rollback and not rollback["restored"]:
            items.append({"group": "run", "kind": "rollback_failed", "story": row["story"], "command": rollback["command"],
                          "text": f"iteration {row['iteration']}: the rollback could not reset the tree: {rollback['message']}"})
    if merge_requests and (handoff is None or handoff["mode"] == "none"):
        for request in merge_requests:
            items.append({"group": "run", "kind": "merge_requested", "story": request["story"],
                          "text": f"the agent asked for a merge ({request['summary']}); [handoff] mode is none, so nothing was handed off"})
    by_story: dict[str, list[dict]] = {}
    for row in rows:
        by_story.setdefault(row["story"], []).append(row)
    entries = [story_entry(story, by_story.get(story["id"], []), plan or "the plan") for story in stories]
    for group in GROUPS:
        items += [entry for entry in entries if entry is not None and entry["group"] == group]
    failed = {entry["story"] for entry in entries if entry is not None and entry["group"] == "failed"}
    left = [s["id"] for s in stories if s["state"] == "todo" and s["id"] not in failed]
    if left:  # so "nothing needs you" is never said of a run with stories to do
        items.append({"group": "stopped", "kind": "stories_left", "story": None, "stories": left,
                      "action": LEFT_ACTION.get(str(finish["type"]), "run ralph-loop again to go on"),
                      "text": stories_left_text(left, len(stories), finish, bool(failed))})
    return items


GROUPS = ("blocked", "failed", "stopped")
# results of an iteration that failed the story (a story left with one of these last is "failed");
# the others that leave it to do (incomplete, interrupted, budget_exhausted, skipped_by_hook) stop it
FAILED_WHAT = {
    "verify_failed": "the verify command failed",
    "timeout": "the agent ran out of time (agent_timeout_seconds)",
    "agent_failed": "the agent failed",
    "agent_not_started": "the agent could not start",
    "commit_failed": "the commit failed",
    "merge_detected": "the agent merged or rewrote history, so the iteration was rolled back",
    "git_config_changed": "the agent changed the git configuration, so the iteration was rolled back",
    "guard_stopped": "the guard stopped the agent",
}
# story_blocked's `budget` (the key it used up) -> what to raise; without one, any of them
STORY_BUDGETS = ("max_iterations_per_story", "max_minutes_per_story", "max_cost_usd_per_story")


def story_entry(story: dict, rows: list[dict], plan: str) -> dict | None:
    """The story's entry in "Act on first", None when it needs nothing."""
    counted = [r for r in rows if not r["waited"]]
    last = counted[-1] if counted else None
    saved = [r["rollback"] for r in rows if r["rollback"] and r["rollback"]["restored"] and r["rollback"]["command"]]
    command = saved[-1]["command"] if saved else None
    base = {"story": story["id"], "title": story["title"], "command": command, "iterations": len(counted)}
    block = story["blocked"] or {}
    what, excerpt = last_failure(last, counted)
    if story["state"] == "blocked" and block.get("by") == "budget":
        key = block.get("budget")
        key_text = f"[loop] {key}" if key in STORY_BUDGETS else "its budget in [loop] (" + " or ".join(STORY_BUDGETS) + ")"
        return {**base, "group": "stopped", "kind": "budget", "reason": block.get("reason") or "",
                "raise": f"{key_text} in ralph.toml", "then": f"set its [!] back to [ ] in {plan} and run ralph-loop again",
                "what": what, "excerpt": excerpt,
                "text": f"{story['id']} was stopped by its budget: it {block.get('reason') or 'used its budget'}"}
    if story["state"] == "blocked" and block.get("by") == "guard":
        denials = [d for r in rows for d in r["denials"]]
        return {**base, "group": "failed", "kind": "failed", "result": "guard_denials", "excerpt": None,
                "what": f"the guard denied its commands again and again ({block.get('reason') or 'guard denials'})"
                        + (": " + "; ".join(f"{d['command']} ({d['reason']})" for d in denials[-3:]) if denials else ""),
                "fix": f"read the denials, change the story or the rules, set its [!] back to [ ] in {plan}, then run ralph-loop again",
                "text": f"{story['id']} failed: the guard denied its commands again and again"}
    if story["state"] == "blocked":
        question = block.get("question")
        reason = block.get("reason") or ""
        return {**base, "group": "blocked", "kind": "blocked", "question": question, "reason": reason, "by": block.get("by"),
                "answer": f"write your answer into the story in {plan} (the next prompt shows it), set its [!] back to [ ], "
                          "then run ralph-loop again",
                "text": f"{story['id']} is blocked" + (f": {reason}" if reason else "")}
    if story["state"] == "todo" and last is not None and what:
        return {**base, "group": "failed", "kind": "failed", "result": last["result"], "what": what, "excerpt": excerpt,
                "fix": "read the excerpt and the iteration's log" + (", bring the saved work back if you want it" if command else "")
                       + ", then run ralph-loop again (the next prompt shows the failure)",
                "text": f"{story['id']} failed after {len(counted)} iteration(s): {what}"}
    return None


def last_failure(last: dict | None, counted: list[dict]) -> tuple[str | None, str | None]:
    """What failed in the story's last counted iteration (None when it did not
    fail), and the last verify excerpt of its iterations."""
    if last is None or last["result"] not in FAILED_WHAT:
        return None, None
    what = FAILED_WHAT[last["result"]] + f" in iteration {last['iteration']}"
    verify = last["verify"]
    if last["result"] == "verify_failed" and verify:
        what += f" ({verify_summary(verify)})"
    elif last["error"]:
        what += f": {last['error']}"
    excerpts = [r["verify"]["excerpt"] for r in counted if r["verify"] and r["verify"].get("excerpt")]
    return what, excerpts[-1] if excerpts else None


def verify_summary(verify: dict) -> str:
    if verify.get("error"):
        return verify["error"]
    parts = [f"exit {verify['exit_code']}" if verify.get("exit_code") is not None else verify.get("result") or "failed"]
    failing = verify.get("failing_tests") or []
    if failing:
        parts.append(", ".join(failing[:5]) + (f" and {len(failing) - 5} more" if len(failing) > 5 else ""))
    return ": ".join(parts)


# finish type -> what to do about the stories it left (the others: run ralph-loop again)
LEFT_ACTION = {
    "max_iterations": "raise --max-iterations or the stage's max_iterations, then run ralph-loop again",
    "budget": "raise the spent budget ([loop] max_cost_usd or max_tokens in ralph.toml, or --max-cost-usd), then run ralph-loop again",
    "rate_limited": "run ralph-loop again once the usage limit resets",
    "no_changes": "read the last iterations' logs, then run ralph-loop again (or raise no_progress_limit)",
}


def stories_left_text(left: list[str], total: int, finish: dict, besides_failed: bool = False) -> str:
    how = finish["message"] or finish["type"] or "the run has no finish record"
    shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
    action = LEFT_ACTION.get(str(finish["type"]), "run ralph-loop again to go on")
    more = "more " if besides_failed else ""
    return f"{len(left)} {more}of {total} stories are not done ({how}): {shown}; {action}"


def timeline(stories: list[dict], rows: list[dict], waits: list[dict], end_s: float) -> dict:
    """One row per story (in the stories' order), one bar per iteration, one per wait."""
    lanes = []
    by_story: dict[str, list[dict]] = {}
    for row in rows:
        by_story.setdefault(row["story"], []).append({
            "start_s": row["start_s"], "end_s": row["end_s"], "category": row["category"], "iteration": row["iteration"],
            "label": f"#{row['iteration']} {row['story']}: {row['result']} ({row['duration_s']:.0f}s)"})
    for wait in waits:
        by_story.setdefault(wait["story"] or "", []).append({
            "start_s": wait["start_s"], "end_s": wait["end_s"], "category": "waited", "iteration": wait["iteration"],
            "label": f"waited {wait['seconds']:.0f}s: {wait['reason']}"})
    names = [PLAN_LANE] if any(r["planning"] for r in rows) else []
    for name in names + [story["id"] for story in stories]:
        bars = by_story.get(name, [])
        if bars:
            lanes.append({"story": name, "bars": bars})
    if by_story.get(""):  # waits of no story (between stories)
        lanes.append({"story": "(run)", "bars": by_story[""]})
    return {"end_s": round(end_s, 3), "lanes": lanes, "bars": sum(len(lane["bars"]) for lane in lanes)}


def cumulative(rows: list[dict]) -> dict:
    """Cost over time (tokens when no cost is known): (seconds, running total) at each iteration's end."""
    measure = "cost_usd" if any(r["cost_usd"] is not None for r in rows) else ("tokens" if any(r["tokens"] is not None for r in rows) else None)
    points: list[list[float]] = [[0.0, 0.0]]
    if measure is not None:
        total = 0.0
        for row in sorted(rows, key=lambda r: r["end_s"]):
            total += row[measure] or 0
            points.append([row["end_s"], round(total, 6)])
    return {"measure": measure, "points": points if measure else []}


def notes(by_kind: dict[str, list[dict]]) -> list[str]:
    """What else the run said about itself: crash recovery, the sandbox."""
    found = []
    for event in by_kind.get("crash_recovery", []):
        for action in event.get("actions") or []:
            found.append("recovered after a killed run: " + text(action))
    for event in by_kind.get("sandbox", []):
        found.append(f"sandbox: {text(event.get('status'))}" + (f" ({text(event.get('reason'))})" if event.get("reason") else ""))
    return found
