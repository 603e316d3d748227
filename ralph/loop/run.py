"""What one ralph-loop run holds while it runs, and how it ends.

`Finish` ends the run with a finish type and a message; FINISH_EXIT gives
each type its exit code. `Run` is the run's own state, and every step of the
loop takes it: the settings and the files it writes, the stage and iteration
it is in, what the last iteration did, the lifecycle hooks and the sandbox
layer. `Iteration` is one iteration while it runs: its story, the checkpoint
it can roll back to, its log, and the events.jsonl line it fills in.
"""
from __future__ import annotations

import os
import signal
import time

from ralph.loop.display import Display
from ralph.loop.usage import Totals
from ralph.plan import Story, load_stories
from ralph.run import paths
from ralph.run import records
from ralph.run.failures import record_failure
from ralph.run.proc import Interrupts, RedactedLog
from ralph.run.settings import LoopSettings, Stage, resolve
from ralph.state.locations import loop_state_dir as make_state_dir

# finish type -> exit code (manual: 128 + the signal number, so 130 / 143)
FINISH_EXIT = {
    "complete": 0,
    "error": 1,
    "max_iterations": 3,
    "blocked": 4,
    "no_changes": 5,
    "hook_abort": 6,
    "budget": 7,
    "rate_limited": 8,
}
SIGNAL_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class Finish(Exception):
    """Ends the run: a finish type and a message for the person (and run.json)."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(message)
        self.type = type
        self.message = message


def exit_code(finish: Finish, signum: int) -> int:
    if finish.type == "manual":
        return 128 + (signum or signal.SIGINT)
    return FINISH_EXIT.get(finish.type, 1)


class StoryBudget:
    """What one story has used of its per-story budgets in this run."""

    __slots__ = ("iterations", "seconds")

    def __init__(self) -> None:
        self.iterations = 0
        self.seconds = 0.0


class Run:
    """One run of the loop: set up by ralph.loop.runner, read and updated by every step."""

    def __init__(self, settings: LoopSettings, plan_path: str, display: Display, interrupts: Interrupts,
                 clock: object = None) -> None:
        self.settings = settings
        self.root = settings.root
        self.state_dir = make_state_dir(self.root)
        self.plan_path = plan_path
        progress = settings["progress"]
        self.progress_path = resolve(self.root, progress) if progress else paths.progress_path_for(plan_path)
        self.display = display
        self.interrupts = interrupts
        self.run_id = records.new_run_id()
        self.started_at = records.utc_now()
        self.started = time.monotonic()
        self.log_dir = os.path.join(self.state_dir, paths.LOGS_DIR, self.run_id)
        self.iteration = 0  # across the run
        self.stage: Stage | None = None
        self.stage_index = 0
        self.budgets: dict[str, StoryBudget] = {}
        self.no_progress = 0  # iterations in a row without a commit or a story state change
        self.done_this_run: list[str] = []
        self.state: dict | None = None  # run.json as the current iteration wrote it
        self.last_result = ""
        self.last_event: dict = {}
        self.last_error = ""
        self.hooks = None  # the lifecycle hook Engine, when some hook is configured (ralph.loop.hook_calls.load)
        self.sandbox = None  # the SandboxLayer (ralph.loop.sandbox_layer.prepare), before the first iteration
        self.guard_start: dict = {}  # what the guard compares an iteration's end with (ralph.loop.guarding.start)
        self.stuck_iterations: dict[str, int] = {}  # story -> iterations in a row ended by the guard
        self.clock = clock  # wall time and sleeping for waits (ralph.loop.waits.Clock; tests pass a fake)
        # what the agents used, carried over from a run that did not complete (ralph.loop.usage)
        self.usage = Totals.carried_over(records.read_run_state(self.state_dir))
        self.carried = (self.usage.cost_usd, self.usage.tokens)  # of those, what earlier runs spent (cost, tokens)
        self.retry_streak: dict[str, int] = {}  # outcome kind -> uncounted retries in a row (ralph.loop.waits)
        self.limit_waited = 0.0  # seconds waited for usage limits in a row
        self.uncounted = 0  # iterations that did not count (usage limit, transient error, hang)
        self.branch = ""  # the branch the run commits on (ralph.loop.delivery.start)
        self.delivery = None  # the run branch, [handoff] and the report (ralph.loop.delivery.Delivery)
        self.iteration_logs: list[tuple[str, str]] = []  # (stage name, log path) per iteration: the hooks' STAGE_OUTPUTS
        self.set_aside = None  # --allow-dirty: the person's changes set aside for the run (ralph.loop.set_aside)

    @property
    def plan_rel(self) -> str:
        return paths.relative(self.root, self.plan_path)

    def stories(self) -> list[Story]:
        return sorted(load_stories(self.plan_path), key=lambda s: s.priority)

    def budget(self, story: Story) -> StoryBudget:
        return self.budgets.setdefault(story.id, StoryBudget())

    def fail(self, story: str | None, kind: str, summary: str, excerpt: str = "", **extra: object) -> None:
        """One line in failures.jsonl: the next prompt for the story shows it."""
        record = {"run_id": self.run_id, "iteration": self.iteration, "story": story, "kind": kind, "summary": summary}
        self.last_error = summary
        if excerpt:
            record["excerpt"] = excerpt
        record.update(extra)
        record_failure(self.state_dir, record)

    def check_stop_requests(self) -> None:
        """A signal, or `.ralph/abort` written by a hook, ends the run here."""
        if self.interrupts.stopping:
            name = SIGNAL_NAMES.get(self.interrupts.signum, str(self.interrupts.signum))
            raise Finish("manual", f"stopped by {name}")
        abort_path = os.path.join(self.state_dir, paths.ABORT_FILE)
        if os.path.exists(abort_path):
            try:
                with open(abort_path, encoding="utf-8", errors="replace") as f:
                    reason = f.read(2000).strip()
            except OSError:
                reason = ""
            try:
                os.unlink(abort_path)  # reported in run.json; the next run is not blocked by it
            except OSError:
                pass
            raise Finish("hook_abort", f"aborted by a hook: {reason or '(no reason given)'}")


class Iteration:
    """One iteration while it runs. `story` is None in a plan stage."""

    __slots__ = ("story", "stage", "checkpoint", "started_at", "started", "log_path", "log", "event")

    def __init__(self, story: Story | None, stage: Stage, checkpoint: str, started_at: str, started: float,
                 log_path: str, log: RedactedLog, event: dict) -> None:
        self.story = story
        self.stage = stage
        self.checkpoint = checkpoint  # HEAD when it began: what a failed iteration is rolled back to
        self.started_at = started_at
        self.started = started  # time.monotonic()
        self.log_path = log_path
        self.log = log  # the iteration's log file
        self.event = event  # its events.jsonl line, filled in as it goes

    @property
    def story_id(self) -> str:
        """The story's id, or PLAN in a plan stage (how failures name it)."""
        return self.story.id if self.story is not None else "PLAN"
