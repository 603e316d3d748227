"""The loop: for each stage, pick the next story, run a fresh agent on it,
verify, commit, mark it done; stop with a finish type and an exit code.

Files written (all under `.ralph/`, all by temp file + rename or O_APPEND):
run.json (every iteration start and the finish), events.jsonl (one line per
iteration, stage end and run end), failures.jsonl (via ralph.state.failures),
logs/<run>/<iteration>-<story>.log, the plan's checkboxes and progress.md.
"""
from __future__ import annotations

import hashlib
import os
import signal
import time

from ralph.config import ConfigError
from ralph.state.failures import record_failure, recent_failures
from ralph.plan import PlanError, Story, load_stories, set_story_state, story_state
from ralph.state.files import atomic_write
from ralph.state.locations import loop_state_dir as make_state_dir

from ralph.loop import paths, prompt as prompts, records, recovery
from ralph.loop.display import Display, format_duration
from ralph.loop.guarding import LoopGuard
from ralph.loop.proc import GitError, Interrupts, RedactedLog, Watchdog, git, head_sha, process_identity, run_streaming
from ralph.loop.settings import LoopSettings, Stage, resolve

# finish type -> exit code (manual: 128 + the signal number, so 130 / 143)
FINISH_EXIT = {
    "complete": 0,
    "error": 1,
    "max_iterations": 3,
    "blocked": 4,
    "no_changes": 5,
    "hook_abort": 6,
}
SIGNAL_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
# iteration results that fire the on_error hook point
ERROR_RESULTS = ("agent_not_started", "agent_failed", "timeout", "verify_failed", "commit_failed", "plan_invalid", "no_plan")
STAGE_DONE = "stage_done"


class Finish(Exception):
    """Ends the run: a finish type and a message for the person (and run.json)."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(message)
        self.type = type
        self.message = message


def plan_digest(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return ""


class UnjudgedRun:
    """Stands in for a TestVerdict when ralph.rules.outcome.verdict is not installed."""

    __slots__ = ("verdict", "runner", "failing_tests")

    def __init__(self) -> None:
        self.verdict = "unavailable"
        self.runner = None
        self.failing_tests: list[str] = []


def judge_verify_output(command: str, exit_code: int | None, output: str) -> object:
    """The test-outcome verdict on the verify run ('fail' fails verify even with exit 0)."""
    try:
        from ralph.rules.outcome.verdict import judge_test_run
    except ImportError:  # judged by exit code alone; the event says so
        return UnjudgedRun()
    return judge_test_run(command, exit_code, output)


class StoryBudget:
    __slots__ = ("iterations", "seconds")

    def __init__(self) -> None:
        self.iterations = 0
        self.seconds = 0.0


class Runner(LoopGuard):
    def __init__(self, settings: LoopSettings, plan_path: str, display: Display, interrupts: Interrupts) -> None:
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
        self.iteration = 0  # across the run
        self.stage: Stage | None = None
        self.stage_index = 0
        self.budgets: dict[str, StoryBudget] = {}
        self.no_progress = 0
        self.last_result = ""
        self.done_this_run: list[str] = []
        self.log_dir = os.path.join(self.state_dir, paths.LOGS_DIR, self.run_id)
        self.hooks = None  # ralph.loop.lifecycle.engine.Engine, loaded by run() when hooks are configured
        self.last_event: dict = {}
        self.last_error = ""

    # ---- small helpers ----

    @property
    def plan_rel(self) -> str:
        return paths.relative(self.root, self.plan_path)

    def stories(self) -> list[Story]:
        stories = load_stories(self.plan_path)
        return sorted(stories, key=lambda s: s.priority)

    def fail(self, story: str | None, kind: str, summary: str, excerpt: str = "", **extra: object) -> None:
        record = {"run_id": self.run_id, "iteration": self.iteration, "story": story, "kind": kind, "summary": summary}
        self.last_error = summary
        if excerpt:
            record["excerpt"] = excerpt
        record.update(extra)
        record_failure(self.state_dir, record)

    def check_stop_requests(self) -> None:
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

    def write_state(self, story: Story | None, checkpoint: str, started: str, log: str) -> None:
        assert self.stage is not None
        self.state = {
            "run_id": self.run_id,
            "status": "running",
            "iteration": self.iteration,
            "story": None if story is None else {
                "id": story.id, "title": story.title, "criteria": story.criteria, "source": self.plan_rel,
            },
            "checkpoint": checkpoint,
            "started": started,
            "pid": os.getpid(),
            "loop": process_identity(os.getpid()),  # the next run tells a live loop from a killed one
            "stage": self.stage.mode,
            "stage_name": self.stage.name,
            "run_started": self.started_at,
            "log": paths.relative(self.root, log),
            "finish": None,
        }
        records.write_run_state(self.state_dir, self.state)

    def log_file(self, story_id: str) -> tuple[str, object]:
        os.makedirs(self.log_dir, exist_ok=True)
        path = os.path.join(self.log_dir, f"{self.iteration:03d}-{story_id}.log")
        return path, RedactedLog(open(path, "ab"))

    def status_line(self, story: str) -> None:
        assert self.stage is not None
        limit = self.settings.max_total_iterations or self.stage.max_iterations
        self.display.status(
            f"ralph-loop {self.stage.name} · iteration {self.iteration}/{limit} · {story} · {{elapsed}}"
            + (f" · last: {self.last_result}" if self.last_result else "")
        )

    def iteration_limit_reached(self, stage_iterations: int) -> bool:
        assert self.stage is not None
        cap = self.settings.max_total_iterations
        return stage_iterations >= self.stage.max_iterations or (cap is not None and self.iteration >= cap)

    # ---- lifecycle hooks (ralph.loop.lifecycle) ----

    def load_hooks(self) -> None:
        """The hook engine, kept only when some hook is configured; ConfigError lists every hook error."""
        from ralph.loop.lifecycle.engine import load_engine

        engine = load_engine(self.root, self.settings.config_path, state_dir=self.state_dir, run_id=self.run_id,
                             log_dir=self.log_dir, display=self.display, stopping=lambda: self.interrupts.stopping)
        if engine.hooks.all() or engine.hooks.warnings:
            self.hooks = engine

    def fire_hooks(self, point: str, **extra: object) -> object:
        """Fire one hook point with the loop's context; a hook abort ends the run."""
        if self.hooks is None or not self.hooks.has(point) or (self.interrupts.stopping and point != "session_end"):
            return None
        from ralph.loop.lifecycle.context import loop_context

        extra = {k: (v() if callable(v) else v) for k, v in extra.items()}
        fired = self.hooks.fire(point, loop_context(self, **extra))
        if fired.abort and point != "session_end":
            raise Finish("hook_abort", f"aborted by a hook: {fired.abort}")
        return fired

    def skipped_by_hook(self, story: Story | None, event: dict, log: object, t0: float) -> bool:
        """Fire pre_iteration. True when `.ralph/hooks/next_iteration` exited 1:
        the iteration is recorded as skipped and no agent runs."""
        try:
            pre = self.fire_hooks("pre_iteration", story=story)
        except BaseException:
            log.close()  # type: ignore[attr-defined]
            raise
        if pre is None or not pre.skip:  # type: ignore[attr-defined]
            return False
        log.close()  # type: ignore[attr-defined]
        event.update(result="skipped_by_hook", ended=records.utc_now(), duration_s=round(time.monotonic() - t0, 3))
        records.append_event(self.state_dir, event)
        self.last_result, self.last_event = "skipped_by_hook", event
        self.no_progress += 1
        self.display.message(f"iteration {self.iteration}: skipped by .ralph/hooks/next_iteration")
        return True

    def changed_files(self, checkpoint: str) -> list[str]:
        code, out = git(self.root, "diff", "--name-only", checkpoint)
        return out.splitlines() if code == 0 else []

    def after_iteration_hooks(self, result: str, event: dict, story: Story | None = None) -> None:
        changed = lambda: self.changed_files(event["checkpoint"])  # noqa: E731 - computed only when a hook runs
        if result == "done":
            self.fire_hooks("on_task_complete", story=story, changed_files=changed)
        elif result in ERROR_RESULTS or event.get("agent_timed_out"):
            self.fire_hooks("on_error", story=story, changed_files=changed, error=event.get("error") or self.last_error or result)
        self.fire_hooks("post_iteration", story=story, changed_files=changed)

    # ---- the run ----

    def run(self) -> int:
        self.interrupts.install()
        try:
            try:
                head_sha(self.root)
                self.recover_from_crash()
                self.ensure_gitignore()
                self.prepare_sandbox()
                self.load_hooks()
                records.append_event(self.state_dir, {
                    "event": "run_start", "run_id": self.run_id, "at": self.started_at, "plan": self.plan_rel,
                    "stages": [s.name for s in self.settings.stages],
                })
                self.stage_index = self.resume_stage_index()  # session_start sees the stage the run starts in
                self.fire_hooks("session_start")
                for index in range(self.stage_index, len(self.settings.stages)):
                    self.stage_index = index
                    self.stage = self.settings.stages[index]
                    self.no_progress = 0
                    if self.stage.mode == "plan":
                        self.run_plan_stage()
                    else:
                        self.run_build_stage()
                    records.append_event(self.state_dir, {
                        "event": "stage_complete", "run_id": self.run_id, "stage": self.stage.name,
                        "mode": self.stage.mode, "at": records.utc_now(), "iterations": self.iteration,
                    })
                    self.fire_hooks("stage_complete")
                    if self.settings.once:
                        break
                raise self.final_finish()
            except Finish as finish:
                return self.finish(finish)
            except (GitError, PlanError, ConfigError, OSError) as e:
                return self.finish(Finish("error", str(e)))
        finally:
            self.interrupts.restore()
            if self.interrupts.watchdog is not None:
                self.interrupts.watchdog.close()
            self.display.close()

    # ---- crash consistency (ralph.loop.recovery) ----

    def recover_from_crash(self) -> None:
        """Before touching anything: end what a killed run left running, clean
        its temp files, and untick a story done without its commit. Then make
        sure this run's children die with it."""
        previous = records.read_run_state(self.state_dir)
        try:
            done = recovery.recover(self.root, self.state_dir, previous, [self.plan_path, self.progress_path])
        except recovery.AnotherLoopRunning as e:
            raise Finish("error", str(e)) from None
        previous_id = (previous or {}).get("run_id")
        for story_id, sentence in done:
            self.display.message(f"recovered: {sentence}")
            self.fail(story_id, "crash", f"the loop was killed (run {previous_id}); on restart: {sentence}")
        if done:
            records.append_event(self.state_dir, {"event": "crash_recovery", "run_id": self.run_id, "at": records.utc_now(),
                                                  "previous_run": previous_id, "actions": [sentence for _, sentence in done]})
        self.interrupts.watchdog = Watchdog.start()
        self.interrupts.on_group = self.record_child_group

    def record_child_group(self, pgid: int) -> None:
        """run.json names the running child group, for the next run if this one is killed."""
        state = getattr(self, "state", None)
        if state is None:
            return
        state["child_group"] = process_identity(pgid)
        try:
            records.write_run_state(self.state_dir, state)
        except OSError as e:
            self.display.message(f"could not record the child process group in run.json: {e}")

    def final_finish(self) -> Finish:
        """After the last stage: complete, or blocked when stories were skipped."""
        try:
            stories = self.stories()
        except (OSError, PlanError) as e:
            return Finish("error", str(e))
        done = sum(1 for s in stories if s.state == "done")
        blocked = [s.id for s in stories if s.state == "blocked"]
        todo = [s.id for s in stories if s.state == "todo"]
        summary = f"{done}/{len(stories)} stories done"
        if todo:  # --once, or a pipeline that ends with a plan stage
            return Finish("max_iterations" if self.settings.once else "complete", f"{summary}; next: {todo[0]}")
        if blocked:
            return Finish("blocked", f"{summary}; blocked: {', '.join(blocked)}")
        return Finish("complete", summary)

    def finish(self, finish: Finish) -> int:
        if finish.type == "manual":
            code = 128 + (self.interrupts.signum or signal.SIGINT)
        else:
            code = FINISH_EXIT.get(finish.type, 1)
        elapsed = time.monotonic() - self.started
        state = getattr(self, "state", None) or {"run_id": self.run_id, "iteration": self.iteration, "story": None,
                                                  "checkpoint": None, "run_started": self.started_at}
        state = dict(state)
        state.update({
            "status": "finished",
            "pid": os.getpid(),
            "finish": {"type": finish.type, "at": records.utc_now(), "message": finish.message,
                       "exit_code": code, "iterations": self.iteration, "done": self.done_this_run},
        })
        try:
            records.write_run_state(self.state_dir, state)
            records.append_event(self.state_dir, {
                "event": "finish", "run_id": self.run_id, "type": finish.type, "message": finish.message,
                "exit_code": code, "at": records.utc_now(), "iterations": self.iteration,
                "elapsed_s": round(elapsed, 3),
            })
        except OSError as e:
            self.display.message(f"could not record the finish in {self.state_dir}: {e}")
        self.finish_hooks(finish, elapsed)
        self.display.message(
            f"finished: {finish.type} — {finish.message} ({self.iteration} iteration(s), {format_duration(elapsed)}, exit {code})"
        )
        return code

    def finish_hooks(self, finish: Finish, elapsed: float) -> None:
        """session_end always runs (its failures change nothing); then the
        fire-and-forget hooks are stopped and leftover hook output is shown."""
        if self.hooks is None:
            return
        try:
            self.fire_hooks("session_end", finish_type=finish.type, finish_message=finish.message,
                            total_iterations=self.iteration, total_commits=len(self.done_this_run), duration=round(elapsed, 3))
        except Exception as e:  # noqa: BLE001 - the run is over; report, never crash the finish
            self.display.message(f"hooks: session_end failed: {e}")
        finally:
            self.hooks.close()
        left = prompts.pending_hook_output(self.state_dir)
        if left:
            self.display.message(f"hook output not yet seen by the agent (kept in {paths.relative(self.root, self.state_dir)}/hook_output.json for the next run's first prompt):\n{left.rstrip()}")

    def ensure_gitignore(self) -> None:
        """Keep run state out of `git add -A`; plans and progress stay committed."""
        path = os.path.join(self.state_dir, ".gitignore")
        if not os.path.exists(path) and os.path.realpath(self.state_dir) == os.path.realpath(os.path.join(self.root, ".ralph")):
            atomic_write(path, paths.GITIGNORE)

    def resume_stage_index(self) -> int:
        """A pipeline resumes at the stage the previous run stopped in."""
        if len(self.settings.stages) < 2:
            return 0
        previous = records.read_run_state(self.state_dir) or {}
        finish = previous.get("finish") or {}
        name = previous.get("stage_name")
        if finish.get("type") == "complete" or not name:
            return 0
        for index, stage in enumerate(self.settings.stages):
            if stage.name == name:
                return index
        return 0

    # ---- build stage ----

    def run_build_stage(self) -> None:
        assert self.stage is not None
        stage_iterations = 0
        while True:
            self.check_stop_requests()
            stories = self.stories()
            todo = [s for s in stories if s.state == "todo"]
            if not todo:
                return
            if self.iteration_limit_reached(stage_iterations) or (self.settings.once and stage_iterations):
                done = sum(1 for s in stories if s.state == "done")
                raise Finish("max_iterations", f"{done}/{len(stories)} stories done after {self.iteration} iteration(s); next: {todo[0].id}")
            story = todo[0]
            if self.exhausted(story):
                continue
            stage_iterations += 1
            self.build_iteration(story)
            if self.settings["no_progress_limit"] and self.no_progress >= self.settings["no_progress_limit"]:
                raise Finish("no_changes", f"no progress in {self.no_progress} iteration(s) in a row (no commit, no story state change); last story: {story.id}")

    def exhausted(self, story: Story) -> bool:
        """Per-story budgets: mark a story that used them up blocked; skip or stop."""
        budget = self.budgets.setdefault(story.id, StoryBudget())
        max_iterations = self.settings["max_iterations_per_story"]
        max_seconds = float(self.settings["max_minutes_per_story"]) * 60
        why = ""
        if max_iterations and budget.iterations >= max_iterations:
            why = f"used its {max_iterations} iteration(s)"
        elif max_seconds and budget.seconds >= max_seconds:
            why = f"used its {self.settings['max_minutes_per_story']} minute(s) ({format_duration(budget.seconds)})"
        if not why:
            return False
        set_story_state(self.plan_path, story.id, "blocked")
        summary = f"{story.id} {why} without being verified done; marked blocked ([!]) in {self.plan_rel}"
        self.fail(story.id, "budget", summary)
        records.append_event(self.state_dir, {
            "event": "story_blocked", "run_id": self.run_id, "story": story.id, "at": records.utc_now(),
            "iterations": budget.iterations, "seconds": round(budget.seconds, 1), "reason": why,
        })
        self.display.message(summary)
        self.no_progress = 0
        if self.settings["on_story_exhausted"] == "stop":
            raise Finish("blocked", summary)
        return True

    def build_prompt(self, stage: Stage, story: Story, story_iteration: int) -> str:
        text = prompts.story_prompt(
            root=self.root, state_dir=self.state_dir, plan_path=self.plan_path, progress_path=self.progress_path,
            template_path=resolve(self.root, stage.prompt) if stage.prompt else None,
            verify_command=stage.verify_command, story=story, iteration=self.iteration,
            story_iteration=story_iteration, run_id=self.run_id, stage=stage.name,
            hook_output=prompts.pending_hook_output(self.state_dir),
        )
        prompts.clear_hook_output(self.state_dir)  # delivered: the hook output is in this prompt
        return text

    def build_iteration(self, story: Story) -> None:
        stage = self.stage
        assert stage is not None
        budget = self.budgets.setdefault(story.id, StoryBudget())
        budget.iterations += 1
        self.iteration += 1
        checkpoint = head_sha(self.root)
        started_at = records.utc_now()
        t0 = time.monotonic()
        log_path, log = self.log_file(story.id)
        self.write_state(story, checkpoint, started_at, log_path)
        event: dict = {
            "event": "iteration", "run_id": self.run_id, "iteration": self.iteration, "stage": stage.name,
            "story": story.id, "title": story.title, "started": started_at, "checkpoint": checkpoint,
            "log": paths.relative(self.root, log_path),
        }
        if self.skipped_by_hook(story, event, log, t0):
            return
        try:
            self.baseline_verify(stage, story, log, event)  # [tests] baseline = "verify": what fails before the agent starts
            prompt_text = self.build_prompt(stage, story, budget.iterations)
            self.display.message(f"iteration {self.iteration}: {story.id}: {story.title} (attempt {budget.iterations})")
            self.status_line(story.id)
            log.write(f"=== ralph-loop {self.run_id} iteration {self.iteration} {story.id} {started_at}\n".encode())
            self.start_guard()
            agent = run_streaming(self.agent_command(stage), cwd=self.root, stdin_data=prompt_text.encode("utf-8"),
                                  timeout=stage.timeout_seconds, sinks=[log.write, self.display.output],
                                  interrupts=self.interrupts, env=self.agent_env())
            event.update(agent_exit=agent.exit_code, agent_seconds=round(agent.duration, 3), agent_timed_out=agent.timed_out)
            result, committed = self.judge_iteration(story, stage, checkpoint, agent, log, event)
        finally:
            log.close()
            budget.seconds += time.monotonic() - t0
        state_after = story_state(self.plan_path, story.id)
        event.update(result=result, story_state=state_after, ended=records.utc_now(),
                     duration_s=round(time.monotonic() - t0, 3))
        records.append_event(self.state_dir, event)
        self.last_result = result
        self.after_guard_stop(story, result)
        self.last_event = event
        self.after_iteration_hooks(result, event, story)
        progressed = committed or state_after != story.state
        self.no_progress = 0 if progressed else self.no_progress + 1
        self.display.message(f"iteration {self.iteration}: {story.id}: {result}" + (f" ({event['commit'][:12]})" if committed else ""))
        if result == "interrupted":
            self.check_stop_requests()
        if result == "agent_not_started":
            raise Finish("error", event.get("error", "the agent could not be started"))

    def baseline_verify(self, stage: Stage, story: Story, log: object, event: dict) -> None:
        """With `[tests] baseline = "verify"`, run the verify command before the agent:
        the tests failing now are the iteration's baseline (ralph.rules.outcome.baseline)."""
        if stage.verify_command is None or stage.mode != "build":
            return
        from ralph.claude.bash_results import baseline_mode, record_verify_baseline

        if baseline_mode(self.root) != "verify":
            return
        text = stage.verify_command if isinstance(stage.verify_command, str) else prompts.format_command(stage.verify_command)
        log.write(f"\n=== baseline verify: {text}\n".encode())  # type: ignore[attr-defined]
        result = run_streaming(stage.verify_command, cwd=self.root, stdin_data=b"", timeout=float(self.settings["verify_timeout_seconds"]),
                               sinks=[log.write], interrupts=self.interrupts)  # type: ignore[attr-defined]
        if result.error:
            event["baseline"] = {"error": result.error}
            return
        record = record_verify_baseline(self.root, self.state_dir, self.run_id, self.iteration, story.id, text, result.exit_code, result.output)
        event["baseline"] = {"verdict": record["verdict"], "failing_tests": record["failing_tests"]}

    def agent_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("CLAUDE_PROJECT_DIR", self.root)
        env["RALPH_RUN_ID"] = self.run_id
        env["RALPH_ITERATION"] = str(self.iteration)
        return self.guard_env(env)

    def judge_iteration(self, story: Story, stage: Stage, checkpoint: str, agent: object, log: object, event: dict) -> tuple[str, bool]:
        """What the iteration achieved: (result, committed)."""
        state = story_state(self.plan_path, story.id)
        if agent.error:  # type: ignore[attr-defined]
            event["error"] = agent.error  # type: ignore[attr-defined]
            self.fail(story.id, "agent_start", agent.error)  # type: ignore[attr-defined]
            return "agent_not_started", False
        guarded = self.judge_guard(story, checkpoint, event)
        if guarded:
            return guarded, False
        if agent.interrupted:  # type: ignore[attr-defined]
            if state == "done":  # claimed but never verified: not done
                set_story_state(self.plan_path, story.id, "todo")
            return "interrupted", False
        if state != "done":
            tail = agent.output[-3000:]  # type: ignore[attr-defined]
            if agent.timed_out:  # type: ignore[attr-defined]
                self.fail(story.id, "timeout", f"the agent was stopped after {stage.timeout_seconds:g}s without finishing {story.id}", tail)
                return "timeout", False
            if agent.exit_code != 0:  # type: ignore[attr-defined]
                self.fail(story.id, "agent_exit", f"the agent exited with code {agent.exit_code} without finishing {story.id}", tail)  # type: ignore[attr-defined]
                return "agent_failed", False
            if state == "blocked":
                return "blocked_by_agent", False
            if not self.stop_hook_recorded(story.id):
                self.fail(story.id, "incomplete", f"the agent ended without marking {story.id} done in {self.plan_rel}", tail)
            return "incomplete", False
        # the agent says done: the verify command has the last word
        if stage.verify_command is not None:
            passed, summary, output = self.verify(stage, log, event)
            if self.interrupts.stopping:
                set_story_state(self.plan_path, story.id, "todo")
                return "interrupted", False
            if not passed:
                self.fail(story.id, "verify", summary, output[-4000:], command=prompts.format_command(stage.verify_command))
                self.roll_back(story, checkpoint, event)
                set_story_state(self.plan_path, story.id, "todo")  # .ralph/ is never rolled back
                return "verify_failed", False
        else:
            event["verify"] = {"result": "skipped"}
        return self.commit_story(story, event)

    def stop_hook_recorded(self, story_id: str) -> bool:
        for entry in recent_failures(self.state_dir, self.run_id, limit=5):
            if entry.get("kind") == "stop_incomplete" and entry.get("iteration") == self.iteration and entry.get("story") == story_id:
                return True
        return False

    def verify(self, stage: Stage, log: object, event: dict) -> tuple[bool, str, str]:
        """Run the verify command: passes only with exit 0 and no failing test verdict."""
        command = stage.verify_command
        assert command is not None
        self.display.message(f"verify: {prompts.format_command(command)}")
        log.write(f"\n=== verify: {prompts.format_command(command)}\n".encode())  # type: ignore[attr-defined]
        result = run_streaming(self.verify_argv(command), cwd=self.root, stdin_data=b"", timeout=float(self.settings["verify_timeout_seconds"]),
                               sinks=[log.write, self.display.output], interrupts=self.interrupts)  # type: ignore[attr-defined]
        output = result.output
        if result.error:
            event["verify"] = {"result": "fail", "error": result.error}
            return False, f"verify command could not start: {result.error}", ""
        text = command if isinstance(command, str) else prompts.format_command(command)
        verdict = judge_verify_output(text, result.exit_code, output)
        record = {"exit_code": result.exit_code, "verdict": verdict.verdict, "runner": verdict.runner,
                  "seconds": round(result.duration, 3), "timed_out": result.timed_out}
        if result.timed_out:
            passed, summary = False, f"verify timed out after {self.settings['verify_timeout_seconds']}s"
        elif result.exit_code != 0:
            passed, summary = False, f"verify exited with code {result.exit_code}"
        elif verdict.verdict == "fail":
            passed, summary = False, "verify exited 0 but its output shows failing tests"
        else:
            passed, summary = True, "verify passed"
        if not passed and verdict.failing_tests:
            summary += ": " + ", ".join(verdict.failing_tests[:5])
            record["failing_tests"] = verdict.failing_tests[:20]
        record["result"] = "pass" if passed else "fail"
        event["verify"] = record
        self.display.message(summary)
        return passed, summary, output

    def roll_back(self, story: Story, checkpoint: str, event: dict) -> None:
        if not self.settings["rollback_on_verify_fail"]:
            return
        from ralph.state.reads import invalidate_all
        from ralph.rollback.restore import save_and_restore

        result = save_and_restore(self.root, checkpoint, story=story.id, iteration=self.iteration,
                                  trigger="verify failed", run_id=self.run_id)
        event["rollback"] = {"id": result.id, "ref": result.ref, "restored": result.restored, "message": result.message}
        if result.restored:
            invalidate_all(self.state_dir)
        self.display.message(f"rollback: {result.message}")

    def commit_story(self, story: Story, event: dict) -> tuple[str, bool]:
        """Mark done, note progress, commit everything; undo the marks if git refuses."""
        progress_before = None
        try:
            with open(self.progress_path, "rb") as f:
                progress_before = f.read()
        except OSError:
            pass
        recovery.write_intent(self.state_dir, {
            "run_id": self.run_id, "iteration": self.iteration, "story": story.id, "plan": self.plan_rel,
            "progress": paths.relative(self.root, self.progress_path),
            "progress_size": -1 if progress_before is None else len(progress_before), "checkpoint": head_sha(self.root),
            "at": records.utc_now(),
        })
        set_story_state(self.plan_path, story.id, "done")
        records.append_progress(self.progress_path, story.id, story.title, self.iteration, self.run_id)
        message = f"feat({story.id}): {story.title}".rstrip()
        code, out = git(self.root, "add", "-A")
        if code == 0:
            code, out = git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        if code != 0:
            set_story_state(self.plan_path, story.id, "todo")
            if progress_before is None:
                try:
                    os.unlink(self.progress_path)
                except OSError:
                    pass
            else:
                atomic_write(self.progress_path, progress_before)
            recovery.clear_intent(self.state_dir)
            self.fail(story.id, "commit", f"git refused the commit (exit {code}); the story stays open", out[-3000:])
            event["commit_error"] = out[-500:]
            return "commit_failed", False
        recovery.clear_intent(self.state_dir)
        event["commit"] = head_sha(self.root)
        self.done_this_run.append(story.id)
        return "done", True

    # ---- plan stage ----

    def run_plan_stage(self) -> None:
        """Let the agent write or refine the plan; no commits, no stories marked.
        Ends after the stage's iterations, or early once an iteration leaves a
        valid plan unchanged."""
        stage = self.stage
        assert stage is not None
        stage_iterations = 0
        while True:
            self.check_stop_requests()
            if self.iteration_limit_reached(stage_iterations) or (self.settings.once and stage_iterations):
                break
            stage_iterations += 1
            if self.plan_iteration(stage):
                break
        try:
            stories = self.stories()
        except FileNotFoundError:
            raise Finish("error", f"the {stage.name} stage ended without a plan at {self.plan_rel}") from None
        if not stories:
            raise Finish("error", f"the {stage.name} stage ended with no stories in {self.plan_rel}")

    def plan_iteration(self, stage: Stage) -> bool:
        """One planning iteration; True when the plan is valid and unchanged (converged)."""
        self.iteration += 1
        checkpoint = head_sha(self.root)
        started_at = records.utc_now()
        t0 = time.monotonic()
        before = plan_digest(self.plan_path)
        states_before = self.story_states()
        log_path, log = self.log_file("plan")
        self.write_state(None, checkpoint, started_at, log_path)
        event: dict = {"event": "iteration", "run_id": self.run_id, "iteration": self.iteration, "stage": stage.name,
                       "mode": "plan", "story": None, "started": started_at, "checkpoint": checkpoint,
                       "log": paths.relative(self.root, log_path)}
        if self.skipped_by_hook(None, event, log, t0):
            return False
        try:
            text = prompts.plan_prompt(
                root=self.root, state_dir=self.state_dir, plan_path=self.plan_path, progress_path=self.progress_path,
                template_path=resolve(self.root, stage.prompt) if stage.prompt else None,
                verify_command=self.settings["verify_command"], iteration=self.iteration, run_id=self.run_id,
                stage=stage.name, hook_output=prompts.pending_hook_output(self.state_dir),
            )
            prompts.clear_hook_output(self.state_dir)  # delivered: it is in this prompt
            self.display.message(f"iteration {self.iteration}: planning ({stage.name}) -> {self.plan_rel}")
            self.status_line("planning")
            self.start_guard()
            agent = run_streaming(self.agent_command(stage), cwd=self.root, stdin_data=text.encode("utf-8"),
                                  timeout=stage.timeout_seconds, sinks=[log.write, self.display.output],
                                  interrupts=self.interrupts, env=self.agent_env())
        finally:
            log.close()
        event.update(agent_exit=agent.exit_code, agent_seconds=round(agent.duration, 3), agent_timed_out=agent.timed_out)
        if agent.error:
            raise Finish("error", agent.error)
        guarded = self.judge_guard(None, checkpoint, event)
        changed = plan_digest(self.plan_path) != before
        result = "plan_changed" if changed else "plan_unchanged"
        valid = True
        try:
            stories = self.stories()
            event["stories"] = len(stories)
            states_after = {s.id: s.state for s in stories}
            flipped = [sid for sid, st in states_after.items() if st == "done" and states_before.get(sid) not in (None, "done")]
            if flipped:  # planning never completes stories
                for sid in flipped:
                    set_story_state(self.plan_path, sid, states_before[sid])
                self.fail("PLAN", "plan", f"the planning agent marked {', '.join(flipped)} done; reverted (only build iterations complete stories)")
        except FileNotFoundError:
            valid = False
            result = "no_plan"
            self.fail("PLAN", "plan", f"the planning agent did not write {self.plan_rel}")
        except PlanError as e:
            valid = False
            result = "plan_invalid"
            self.fail("PLAN", "plan", str(e))
        if agent.interrupted:
            result = "interrupted"
        elif guarded:
            result = guarded
        elif agent.timed_out:
            self.fail("PLAN", "timeout", f"the planning agent was stopped after {stage.timeout_seconds:g}s")
        event.update(result=result, ended=records.utc_now(), duration_s=round(time.monotonic() - t0, 3))
        records.append_event(self.state_dir, event)
        self.last_result = result
        self.last_event = event
        self.after_iteration_hooks(result, event)
        self.display.message(f"iteration {self.iteration}: {result}")
        if agent.interrupted:
            self.check_stop_requests()
        return valid and not changed and not agent.timed_out and agent.exit_code == 0 and not guarded

    def story_states(self) -> dict[str, str]:
        try:
            return {s.id: s.state for s in load_stories(self.plan_path)}
        except (OSError, PlanError):
            return {}
