"""Waiting out what a later try gets past, so that a night is not lost to it.

After an iteration that ended on a usage limit, a transient API error or a
hung agent (ralph.loop.agent_outcome), `retry_for` says whether the same
story runs again without the iteration counting (not an attempt of the
story, not "no progress", not story time, not against --max-iterations) and
after how long; `wait` waits that long:

- usage_limit: until the reset the client reported plus RESET_MARGIN_SECONDS,
  else `retry_backoff_seconds` doubling; all the waits in a row together at
  most `max_wait_minutes`, past that the run finishes `rate_limited`.
- transient: `retry_backoff_seconds` doubling, up to `max_transient_retries`
  in a row; past that the iteration is an ordinary failure.
- hung: once, at once; a second hang in a row is an ordinary failure.

Every wait is a `wait` event in events.jsonl (times in UTC) and a line on the
terminal (local times with their zone, display.clock_time, the client's own
reset time too);
run.json says `waiting` meanwhile (`ralph status` shows it); a usage-limit
wait fires the `usage_limit` hook point. Ctrl-C (or `.ralph/abort`) during a
wait ends the run at once, cleanly. The wall clock and the sleeping are the
run's Clock, which tests replace.
"""
from __future__ import annotations

import time

from ralph.loop import hook_calls
from ralph.loop.agent_outcome import HUNG, TRANSIENT, USAGE_LIMIT, Outcome
from ralph.loop.display import clock_time
from ralph.loop.run import Finish, Iteration, Run
from ralph.run import records
from ralph.run.clock import format_duration

RESET_MARGIN_SECONDS = 10.0  # after the reported reset: clocks differ, the reset is rounded
STEP_SECONDS = 1.0  # how often a wait checks for Ctrl-C and redraws its countdown
HUNG_RETRIES = 1

# outcome kind -> the iteration's result, and the wait event's reason
RESULTS = {USAGE_LIMIT: "usage_limit", TRANSIENT: "transient_error", HUNG: "hung"}
REASONS = {USAGE_LIMIT: "usage_limit", TRANSIENT: "transient", HUNG: "hung"}
LABELS = {USAGE_LIMIT: "the usage limit", TRANSIENT: "the API", HUNG: "a hung agent"}


class Clock:
    """Wall time (epoch seconds) and sleeping."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class Retry:
    """The same story again, uncounted: after `seconds` (0: at once). With
    `give_up` set there is no retry: the run finishes rate_limited."""

    __slots__ = ("kind", "seconds", "attempt", "detail", "reset_at", "give_up")

    def __init__(self, kind: str, seconds: float, attempt: int, detail: str, reset_at: float | None = None,
                 give_up: str = "") -> None:
        self.kind = kind
        self.seconds = seconds
        self.attempt = attempt
        self.detail = detail
        self.reset_at = reset_at
        self.give_up = give_up

    @property
    def reason(self) -> str:
        return REASONS[self.kind]

    @property
    def result(self) -> str:
        """The retried iteration's result."""
        return RESULTS[self.kind]


def iso(epoch: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)) if epoch is not None else None


def client_detail(detail: str, reset_at: float | None, now: float) -> str:
    """The client's words for the screen, its own reset time ("resets 5:17pm
    (UTC)") put in the screen's format (the records keep its words as given)."""
    if reset_at is None:
        return detail
    cut = detail.lower().find("resets")
    kept = detail[:cut].rstrip(" ·-,;(") if cut >= 0 else detail.rstrip(". ")
    return (kept + " · " if kept else "") + f"resets {clock_time(reset_at, now)}"


def retry_for(run: Run, result: str, outcome: Outcome) -> Retry | None:
    """Whether (and after how long) the iteration that ended with `result` is
    retried uncounted; None: it counts as it is. Keeps the run's streaks."""
    kind = outcome.kind
    if RESULTS.get(kind) != result:
        run.retry_streak.clear()
        run.limit_waited = 0.0
        return None
    for other in [k for k in run.retry_streak if k != kind]:
        del run.retry_streak[other]
    attempt = run.retry_streak.get(kind, 0) + 1
    settings = run.settings
    backoff = float(settings["retry_backoff_seconds"]) * 2 ** (attempt - 1)
    if kind == HUNG:
        retry = Retry(kind, 0.0, attempt, outcome.detail) if attempt <= HUNG_RETRIES else None
    elif kind == TRANSIENT:
        retry = Retry(kind, backoff, attempt, outcome.detail) if attempt <= int(settings["max_transient_retries"]) else None
    else:
        retry = usage_limit_retry(run, outcome, attempt, backoff)
    if retry is None:
        run.retry_streak.clear()
    else:
        run.retry_streak[kind] = attempt
    return retry


PLAN_RESULTS = ("plan_changed", "plan_unchanged", "plan_invalid", "no_plan")


def planning_retry(run: Run, it: Iteration, outcome: Outcome, result: str) -> Retry | None:
    """retry_for, for a planning iteration (its results say what became of the
    plan): the iteration is marked not counted when it is retried."""
    retry = retry_for(run, RESULTS.get(outcome.kind, result) if result in PLAN_RESULTS else result, outcome)
    if retry is not None:
        it.event["attempt_counted"] = False
        run.uncounted += 1
    return retry


def usage_limit_retry(run: Run, outcome: Outcome, attempt: int, backoff: float) -> Retry:
    now = run.clock.now()
    allowed = float(run.settings["max_wait_minutes"]) * 60
    left = allowed - run.limit_waited
    minutes = f"{run.settings['max_wait_minutes']:g}"
    if outcome.reset_at is not None:
        seconds = max(0.0, outcome.reset_at - now) + RESET_MARGIN_SECONDS
        if seconds > left:
            return Retry(USAGE_LIMIT, 0.0, attempt, outcome.detail, outcome.reset_at, give_up=(
                f"usage limit: it resets at {clock_time(outcome.reset_at, now)} ({format_duration(outcome.reset_at - now)} from now), "
                f"past max_wait_minutes = {minutes}; run ralph-loop again after the reset"))
        return Retry(USAGE_LIMIT, seconds, attempt, outcome.detail, outcome.reset_at)
    if left <= 0:
        return Retry(USAGE_LIMIT, 0.0, attempt, outcome.detail, give_up=(
            f"usage limit: still refused after waiting {format_duration(run.limit_waited)} in all "
            f"(max_wait_minutes = {minutes}); run ralph-loop again later"))
    return Retry(USAGE_LIMIT, min(backoff, left), attempt, outcome.detail)


def wait(run: Run, it: Iteration, retry: Retry) -> None:
    """Wait before the same story runs again (or finish rate_limited)."""
    if retry.give_up:
        detail = client_detail(retry.detail, retry.reset_at, run.clock.now())
        raise Finish("rate_limited", f"{retry.give_up} ({detail})" if detail else retry.give_up)
    clock = run.clock
    started = clock.now()
    end = started + retry.seconds
    until = end if retry.seconds > 0 else None
    records.append_event(run.state_dir, {
        "event": "wait", "run_id": run.run_id, "iteration": run.iteration, "story": it.story_id,
        "reason": retry.reason, "started": iso(started), "until": iso(until), "seconds": round(retry.seconds, 3),
        "attempt": retry.attempt, "detail": retry.detail,
    })
    run.display.message(announcement(run, it, retry, started))
    if retry.kind == USAGE_LIMIT:
        run.limit_waited += retry.seconds
    if retry.seconds <= 0:
        return
    set_waiting(run, {"reason": retry.reason, "until": iso(until), "since": iso(started)})
    previous = run.display.status_text
    try:
        if retry.kind == USAGE_LIMIT:
            hook_calls.usage_limit(run, reset_at=iso(retry.reset_at) or "", wait_seconds=round(retry.seconds, 3),
                                   reason=retry.detail)
        while True:
            run.check_stop_requests()
            left = end - clock.now()
            if left <= 0:
                break
            run.display.status(f"ralph-loop · waiting for {LABELS[retry.kind]} until {clock_time(end, started)} · "
                               f"{format_duration(left)} left · then {it.story_id} again · Ctrl-C stops")
            clock.sleep(min(STEP_SECONDS, left))
    finally:
        set_waiting(run, None)
        run.display.status(previous)


def announcement(run: Run, it: Iteration, retry: Retry, now: float) -> str:
    story = it.story_id
    shown = client_detail(retry.detail, retry.reset_at, now)
    detail = f": {shown.rstrip('.')}" if shown else ""
    if retry.kind == HUNG:
        return (f"the agent printed nothing for {run.settings['idle_timeout_seconds']:g}s: its process group was ended; "
                f"{story} again at once (not counted)")
    label = "usage limit" if retry.kind == USAGE_LIMIT else f"transient API error, retry {retry.attempt}/{run.settings['max_transient_retries']}"
    return (f"{label}{detail}; waiting {format_duration(retry.seconds)} until {clock_time(now + retry.seconds, now)}, "
            f"then {story} again (not counted)")


def set_waiting(run: Run, waiting: dict | None) -> None:
    """run.json says what the run waits for, while it waits."""
    if run.state is None:
        return
    run.state["waiting"] = waiting
    try:
        records.write_run_state(run.state_dir, run.state)
    except OSError as e:
        run.display.message(f"could not record the wait in run.json: {e}")
