"""The lifecycle hook engine: one entry, `Engine.fire(point, context)`, shaped
like Mercurial's hook.py: the context goes into the environment (RALPH_*) and
onto stdin as JSON, each configured action runs in order through the action
table (ralph.loop.lifecycle.action_types.ACTIONS), and an abort comes back as a reason
the loop turns into finish type `hook_abort`.

The engine owns what every action type shares: `when`, `enabled`,
`on_failure` (continue | abort | retry with retries and retry_delay), `await`
(fire-and-forget jobs are reaped at every fire and killed at close()),
`pipe_output` (the pending buffer), LAST_HOOK_STATUS and exports between
actions, the `.ralph/hooks/` exit-code contract, and the traces.
"""
from __future__ import annotations

import json
import os
import time

from ralph.loop.lifecycle import condition as conditions
from ralph.loop.lifecycle import context as contexts
from ralph.loop.lifecycle import pending, pipe_output
from ralph.loop.lifecycle.action_types import exported_names, run_module
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext
from ralph.loop.lifecycle.config import HookSet, HookSpec, load_hooks, require_valid
from ralph.loop.lifecycle.points import NO_PIPE, canonical
from ralph.loop.lifecycle.process import Job
from ralph.loop.lifecycle.shell_run import result_of
from ralph.redaction import redact
from ralph.run.clock import utc_now
from ralph.run.records import append_event
from ralph.run.state import RUN_FILE
from ralph.state.files import append_line, atomic_write, rotate_if_larger

TRACE_FILE = "lifecycle.jsonl"  # in .ralph/logs/: one line per action run
TRACE_MAX_BYTES = 8 * 1024 * 1024
CONTEXT_FILE = "hook_context.json"  # in the state dir: the context of the point being fired (RALPH_CONTEXT_FILE)
BACKGROUND_GRACE_SECONDS = 2.0  # at close(): how long running fire-and-forget hooks may finish


class FireResult:
    """What firing one point did."""

    __slots__ = ("point", "results", "abort", "skip")

    def __init__(self, point: str) -> None:
        self.point = point
        self.results: list[tuple[HookSpec, ActionResult]] = []
        self.abort: str | None = None  # a reason: the loop ends with finish type hook_abort
        self.skip = False  # pre_iteration: a hooks-dir next_iteration asked to skip this iteration

    @property
    def ran(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return f"FireResult({self.point!r}, ran={self.ran}, abort={self.abort!r}, skip={self.skip})"


class Background:
    """Fire-and-forget (await = false) jobs of this session."""

    def __init__(self, engine: "Engine") -> None:
        self.engine = engine
        self.jobs: list[tuple[object, HookSpec, str, dict]] = []
        self.count = 0

    def start(self, action: HookSpec, argv: list[str], *, cwd: str, env: dict[str, str], stdin_data: bytes,
              timeout: float) -> object:
        self.count += 1
        out = os.path.join(self.engine.log_dir, "hooks", f"background-{self.count:03d}-{action.point}.out")
        job = Job(argv, cwd=cwd, env=env, stdin_data=stdin_data, timeout=timeout, out_path=out)
        self.jobs.append((job, action, action.point, dict(self.engine.current)))
        return job

    def reap(self) -> None:
        still = []
        for job, action, point, context in self.jobs:
            if job.poll():  # type: ignore[attr-defined]
                self.finished(job, action, point, context)
            else:
                still.append((job, action, point, context))
        self.jobs = still

    def finished(self, job: object, action: HookSpec, point: str, context: dict) -> None:
        outcome = job.outcome()  # type: ignore[attr-defined]
        result = result_of(outcome, float(action["timeout"]), "")
        if job.killed_at_end:  # type: ignore[attr-defined]
            result.status, result.message = FAILED, "still running at the end of the session: its process group was killed"
        for name in (job.out_path, job.out_path + ".stdin.json"):  # type: ignore[attr-defined]
            try:
                os.unlink(name)
            except OSError:
                pass
        self.engine.record(point, action, result, context, background=True)

    def close(self, grace: float = BACKGROUND_GRACE_SECONDS) -> None:
        deadline = time.monotonic() + grace
        while self.jobs and time.monotonic() < deadline:
            self.reap()
            if self.jobs:
                time.sleep(0.05)
        for job, action, point, context in self.jobs:
            job.kill()  # type: ignore[attr-defined]
            self.finished(job, action, point, context)
        self.jobs = []


class Engine:
    def __init__(self, hooks: HookSet, *, root: str, state_dir: str, run_id: str, log_dir: str,
                 display: object = None, stopping: object = None, environ: dict | None = None,
                 sleep: object = time.sleep) -> None:
        self.hooks = hooks
        self.root = root
        self.state_dir = state_dir
        self.run_id = run_id
        self.log_dir = log_dir
        self.display = display
        self.stopping = stopping or (lambda: False)
        self.environ = dict(os.environ if environ is None else environ)
        self.sleep = sleep
        self.background = Background(self)
        self.exports_known = exported_names()
        self.current: dict = {}
        self.warned = False

    def has(self, point: str) -> bool:
        name = canonical(point)
        return name is not None and self.hooks.has(name)

    def warn_once(self) -> None:
        """Load-time warnings (a non-executable hook, ...): once per session."""
        if self.warned:
            return
        self.warned = True
        for warning in self.hooks.warnings:
            self.say(f"hooks: warning: {warning}")

    def say(self, text: str) -> None:
        """A line on the terminal (hook output and labels in it are redacted: `ralph-loop | tee log` keeps it)."""
        if self.display is not None:
            self.display.message(redact(text))  # type: ignore[attr-defined]

    # ---- the entry ----

    def fire(self, point: str, context: dict) -> FireResult:
        name = canonical(point)
        if name is None:
            raise ValueError(f"unknown hook point {point!r}")
        self.warn_once()
        self.background.reap()
        fired = FireResult(name)
        specs = self.hooks.active(name)
        if not specs:
            return fired
        ctx = contexts.complete(name, context)
        self.add_files(ctx)
        self.current = ctx
        exports: dict[str, str] = {}
        last_status = ""
        started = time.monotonic()
        for spec in specs:
            ctx["last_hook_status"] = last_status
            exported = {contexts.export_key(name): value for name, value in exports.items()}
            values = {**contexts.values(ctx), **exported}
            if spec.condition is not None:
                try:
                    wanted = conditions.evaluate(spec.condition, values, lambda n: contexts.key_for(n, self.exports_known))
                except conditions.ConditionError as e:
                    self.say(f"hooks: {name} {spec.label}: when {spec['when']!r} could not be evaluated ({e}); not run")
                    wanted = False
                if not wanted:
                    continue
            env = dict(self.environ)
            env.update(contexts.environment(ctx))
            env.update(exports)
            run_ctx = RunContext(name, env, values, stdin_json({**ctx, **exported}),
                                 self.root, self.state_dir, self.log_dir, self.background,
                                 stopping=None if name == "session_end" else self.stopping, exports=self.exports_known)
            result = self.run_action(spec, run_ctx)
            last_status = SUCCESS if result.ok else "failed"
            exports.update(result.exports)
            self.apply_policy(spec, result, fired)
            fired.results.append((spec, result))
            self.record(name, spec, result, ctx)
            if fired.abort and name != "session_end":
                break  # session_end always runs every action
        self.summarise(fired, ctx, time.monotonic() - started)
        return fired

    def add_files(self, ctx: dict) -> None:
        """The context's files: run.json (status_file), the plan's directory
        (spec_dir), and this context as a JSON file (context_file), written
        redacted (the whole file; the same object is on stdin, unredacted)."""
        ctx["status_file"] = ctx["status_file"] or os.path.join(self.state_dir, RUN_FILE)
        if ctx["plan_file"] and not ctx["spec_dir"]:
            ctx["spec_dir"] = os.path.dirname(str(ctx["plan_file"]))
        path = os.path.join(self.state_dir, CONTEXT_FILE)
        ctx["context_file"] = path
        try:
            atomic_write(path, redact(stdin_json(ctx).decode("utf-8")), fsync=False, mode=0o600)
        except OSError as e:
            self.say(f"hooks: could not write {path} (RALPH_CONTEXT_FILE): {e}")

    def run_action(self, spec: HookSpec, ctx: RunContext) -> ActionResult:
        module = run_module(spec.type)
        retry = spec["on_failure"] == "retry" and spec.kind != "dir"
        attempts = 1 + (int(spec["retries"]) if retry else 0)  # type: ignore[call-overload]
        result = ActionResult(FAILED, message="not run")
        for attempt in range(1, attempts + 1):
            try:
                result = module.run(spec, ctx)  # type: ignore[attr-defined]
            except Exception as e:  # an action's bug must not kill the loop
                result = ActionResult(FAILED, message=f"{type(e).__name__}: {e}")
            result.attempts = attempt
            if result.ok or result.abort or attempt == attempts or ctx.stopping():  # type: ignore[operator]
                break
            self.say(f"hooks: {ctx.point} {spec.label}: {result.message or result.status}; retry {attempt}/{attempts - 1} in {float(spec['retry_delay']):g}s")  # type: ignore[arg-type]
            self.sleep(float(spec["retry_delay"]))  # type: ignore[arg-type, operator]
        return result

    def apply_policy(self, spec: HookSpec, result: ActionResult, fired: FireResult) -> None:
        """Turn the result into what the loop does next."""
        point = fired.point
        if result.abort:
            fired.abort = result.abort
            return
        if spec.kind == "dir":  # fresher's contract: 0 continue, 1 warn/skip, 2 abort, 124 timeout
            code = result.exit
            fail_closed = self.hooks.settings.get("dir_on_failure") == "abort"
            if result.status == TIMEOUT or code == 124:
                result.message = result.message or "timed out (exit 124)"
                if fail_closed:
                    fired.abort = result.abort = f"{spec.config_name} timed out (dir_on_failure = abort)"
                else:
                    self.say(f"hooks: {spec.config_name}: timed out; the loop continues")
            elif code == 1:
                if point == "pre_iteration":
                    fired.skip = True
                    self.say(f"hooks: {spec.config_name} exited 1: this iteration is skipped")
                else:
                    self.say(f"hooks: {spec.config_name} exited 1 (warning)")
            elif code == 2:
                fired.abort = f"{spec.config_name} exited 2" + (f": {last_line(result.output)}" if result.output.strip() else "")
                result.abort = fired.abort
            elif code not in (0, None) or result.status != SUCCESS:
                if fail_closed:
                    fired.abort = result.abort = f"{spec.config_name} failed: {result.message or f'exit {code}'} (dir_on_failure = abort)"
                else:
                    self.say(f"hooks: {spec.config_name}: {result.message or 'failed'}; the loop continues")
            return
        if result.ok:
            return
        self.say(f"hooks: {point} {spec.label}: {result.message or result.status}"
                 + (f" (after {result.attempts} attempts)" if result.attempts > 1 else ""))
        if spec["on_failure"] == "abort":
            fired.abort = f"{point} hook {spec.label!r} failed: {result.message or result.status}"
            result.abort = fired.abort

    # ---- output: pending buffer, display, traces ----

    def record(self, point: str, spec: HookSpec, result: ActionResult, ctx: dict, background: bool = False) -> None:
        text = result.output.strip()
        if spec["pipe_output"] and text and point not in NO_PIPE:
            try:
                pipe_output.add(self.state_dir, {"point": point, "label": spec.label, "iteration": ctx.get("iteration", ""),
                                                 "status": result.status, "exit": result.exit, "at": utc_now(),
                                                 "text": text})
            except OSError as e:
                self.say(f"hooks: could not keep {spec.label}'s output for the next prompt: {e}")
        if text and self.display is not None:
            self.display.output((redact(text) + "\n").encode("utf-8", "replace"))  # type: ignore[attr-defined]
        line = {
            "at": utc_now(), "run_id": self.run_id, "point": point, "action": redact(spec.label),
            "type": spec.type, "source": spec.source, "where": str(spec.where), "iteration": ctx.get("iteration", ""),
            "status": result.status, "exit": result.exit, "duration_s": round(result.duration, 3),
            "output_bytes": result.output_bytes, "attempts": result.attempts, "await": not background and bool(spec["await"]),
            "command": redact(result.command), "message": redact(result.message),
        }
        if background:
            line["background"] = True
        if result.abort:
            line["abort"] = redact(result.abort)
        self.trace(line, result.output)

    def trace(self, line: dict, output: str) -> None:
        logs = os.path.join(self.state_dir, "logs")
        try:
            path = os.path.join(logs, TRACE_FILE)
            rotate_if_larger(path, TRACE_MAX_BYTES)
            append_line(path, json.dumps(line, ensure_ascii=False))
            os.makedirs(self.log_dir, exist_ok=True)
            head = f"=== {line['at']} {line['point']} · {line['action']} · {line['status']} exit {line['exit']} · {line['duration_s']}s · {line['output_bytes']} bytes\n"
            with open(os.path.join(self.log_dir, "hooks.log"), "a", encoding="utf-8") as f:
                f.write(head + (redact(output).rstrip() + "\n" if output.strip() else ""))
        except OSError as e:
            self.say(f"hooks: could not write the hook trace in {logs}: {e}")

    def summarise(self, fired: FireResult, ctx: dict, seconds: float) -> None:
        if not fired.results:
            return
        event = {
            "event": "hooks", "run_id": self.run_id, "point": fired.point, "iteration": ctx.get("iteration", ""),
            "at": utc_now(), "duration_s": round(seconds, 3),
            "actions": [{"action": redact(spec.label), "source": spec.source, "status": r.status, "exit": r.exit,
                         "attempts": r.attempts, "output_bytes": r.output_bytes} for spec, r in fired.results],
        }
        if fired.abort:
            event["abort"] = redact(fired.abort)
        if fired.skip:
            event["skip"] = True
        try:
            append_event(self.state_dir, event)
        except OSError:
            pass

    # ---- the pending buffer, for the prompt ----

    def pending_block(self) -> str:
        return pending.render(pending.read(self.state_dir))

    def close(self) -> None:
        """End of session: running fire-and-forget hooks are given a moment, then killed."""
        self.background.close()


def stdin_json(context: dict) -> bytes:
    """The context as the one JSON object every action gets on stdin."""
    body = {}
    for key, value in context.items():
        if key in contexts.NUMERIC and value != "":
            body[key] = value
        elif isinstance(value, (list, tuple)):
            body[key] = list(value)
        else:
            body[key] = contexts.text(value)
    return json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n"


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def load_engine(root: str, config_path: str | None, *, state_dir: str, run_id: str, log_dir: str,
                display: object = None, stopping: object = None, environ: dict | None = None) -> Engine:
    """The engine for a loop run; ConfigError lists every hook error at once."""
    env = os.environ if environ is None else environ
    hooks = require_valid(load_hooks(root, None, config_path, env))
    return Engine(hooks, root=root, state_dir=state_dir, run_id=run_id, log_dir=log_dir, display=display,
                  stopping=stopping, environ=dict(env))
