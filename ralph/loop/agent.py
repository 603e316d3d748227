"""Running the agent: a fresh process per iteration, the prompt on its stdin,
its output to the iteration's log (raw, redacted) and to the terminal (the
live view when it speaks stream-json); what came of it is an AgentRun for
the iteration to judge: its exit, what its stream said (ralph.loop.stream),
what that means (ralph.loop.agent_outcome) and what it used (ralph.loop.usage).

The command line is built by agent_argv: the stage's command with the
sandbox layer's --settings, then each feature's flags, each added by a small
function of that feature only when the command starts Claude Code and only
when absent (ralph.loop.agent_command).
"""
from __future__ import annotations

import os

from ralph.loop import agent_tools, budgets, guarding
from ralph.loop.agent_command import flag_value, has_flag, runs_claude, with_flags
from ralph.loop.agent_outcome import Outcome, classify
from ralph.loop.run import Iteration, Run
from ralph.loop.stream import AgentStream
from ralph.loop.usage import format_cost, format_tokens, iteration_usage
from ralph.run import records
from ralph.run.proc import ProcessResult, run_streaming
from ralph.state.denials import ENV_MAX_DENIALS, ENV_STORY


class AgentRun:
    """What the agent's run came to."""

    __slots__ = ("exit_code", "timed_out", "idle_timed_out", "interrupted", "duration", "error", "tail", "stream", "outcome")

    def __init__(self, process: ProcessResult, stream: AgentStream) -> None:
        self.exit_code = process.exit_code
        self.timed_out = process.timed_out
        self.idle_timed_out = process.idle_timed_out  # printed nothing for idle_timeout_seconds
        self.interrupted = process.interrupted  # the run is being stopped (a signal)
        self.duration = process.duration
        self.error = process.error  # could not start: why
        self.tail = process.tail  # the end of its output
        self.stream = stream  # what its stream-json said (empty for an agent that prints text)
        self.outcome: Outcome = classify(process.exit_code, timed_out=process.timed_out,
                                         idle_timed_out=process.idle_timed_out, stream=stream, output=self.output)

    @property
    def output(self) -> str:
        return self.tail.decode("utf-8", "replace")


def run_agent(run: Run, it: Iteration, prompt: str) -> AgentRun:
    """Start the guard's comparison point, then the agent; its exit, time,
    timeout and usage go into the iteration's event."""
    guarding.start(run)
    command = agent_argv(run, it)
    stream = AgentStream(run.display.agent_item, run.root)
    run.display.live = lambda: live_status(run, stream)
    try:
        process = run_streaming(command, cwd=run.root, stdin_data=prompt.encode("utf-8"),
                                timeout=it.stage.timeout_seconds, sinks=[it.log.write, stream.feed],
                                interrupts=run.interrupts, env=agent_env(run, it),
                                idle_timeout=float(run.settings["idle_timeout_seconds"]) or None,
                                on_tick=run.display.tick)
    finally:
        run.display.live = None
    stream.close()
    agent = AgentRun(process, stream)
    it.event.update(agent_exit=agent.exit_code, agent_seconds=round(agent.duration, 3), agent_timed_out=agent.timed_out)
    if agent.idle_timed_out:
        it.event["agent_idle_timed_out"] = True
    if runs_claude(command) or stream.result is not None:
        record_usage(run, it, stream)
    return agent


def agent_argv(run: Run, it: Iteration) -> list[str] | str:
    """The stage's agent command with the sandbox layer, then each feature's flags."""
    command = run.sandbox.agent_command(it.stage)
    command = agent_tools.agent_command(run, it, command)
    command = stream_flags(command)
    command = budgets.budget_flags(command, run, it.story)
    return command


def stream_flags(command: list[str] | str) -> list[str] | str:
    """Claude Code speaks stream-json (`--verbose` is required with it in
    `-p`), unless the person chose another --output-format."""
    words: list[str] = []
    output_format = flag_value(command, "--output-format")
    if output_format is None:
        words += ["--output-format", "stream-json"]
        output_format = "stream-json"
    if output_format == "stream-json" and not has_flag(command, "--verbose"):
        words.append("--verbose")
    return with_flags(command, *words)


def record_usage(run: Run, it: Iteration, stream: AgentStream) -> None:
    """The iteration's usage in its event; the run's totals in run.json at once
    (a run killed later still has them)."""
    figures = iteration_usage(stream)
    it.event["usage"] = figures
    run.usage.add(it.story.id if it.story is not None else None, figures)
    if run.state is None:
        return
    run.state["usage"] = run.usage.to_json()
    try:
        records.write_run_state(run.state_dir, run.state)
    except OSError as e:
        run.display.message(f"could not record the usage in run.json: {e}")


def live_status(run: Run, stream: AgentStream) -> str:
    """What the status line adds while the agent runs: turns, tokens, the run's cost so far."""
    if not stream.spoke_json:
        return ""
    parts = [f"{stream.turns} turn(s)", f"{format_tokens(stream.tokens)} tokens"]
    cost = stream.cost_usd
    parts.append(f"run {format_cost(run.usage.cost_usd + (cost or 0.0))}")
    return " · ".join(parts)


def agent_env(run: Run, it: Iteration) -> dict[str, str]:
    """The loop's environment plus what the agent's hooks read: the run and
    iteration, the project, the guard's denial limit and story, the sandbox
    settings file."""
    env = dict(os.environ)
    env.setdefault("CLAUDE_PROJECT_DIR", run.root)
    env["RALPH_RUN_ID"] = run.run_id
    env["RALPH_ITERATION"] = str(run.iteration)
    env[ENV_MAX_DENIALS] = str(run.settings["max_guard_denials"])
    env[ENV_STORY] = it.story.id if it.story is not None else ""
    agent_tools.environment(run, it, env)
    return run.sandbox.environment(env)
