"""Running the agent: a fresh process per iteration, the prompt on its stdin,
its output streamed to the iteration's log and the terminal; what came of it
is an AgentRun for the iteration to judge."""
from __future__ import annotations

import os

from ralph.loop import agent_tools, guarding
from ralph.loop.proc import ProcessResult, run_streaming
from ralph.loop.run import Iteration, Run
from ralph.state.denials import ENV_MAX_DENIALS, ENV_STORY


class AgentRun:
    """What the agent's run came to."""

    __slots__ = ("exit_code", "timed_out", "interrupted", "duration", "error", "tail")

    def __init__(self, process: ProcessResult) -> None:
        self.exit_code = process.exit_code
        self.timed_out = process.timed_out
        self.interrupted = process.interrupted  # the run is being stopped (a signal)
        self.duration = process.duration
        self.error = process.error  # could not start: why
        self.tail = process.tail  # the end of its output

    @property
    def output(self) -> str:
        return self.tail.decode("utf-8", "replace")


def run_agent(run: Run, it: Iteration, prompt: str) -> AgentRun:
    """Start the guard's comparison point, then the agent; its exit, time and
    timeout go into the iteration's event."""
    guarding.start(run)
    command = agent_tools.agent_command(run, it, run.sandbox.agent_command(it.stage))
    process = run_streaming(command, cwd=run.root, stdin_data=prompt.encode("utf-8"),
                            timeout=it.stage.timeout_seconds, sinks=[it.log.write, run.display.output],
                            interrupts=run.interrupts, env=agent_env(run, it))
    agent = AgentRun(process)
    it.event.update(agent_exit=agent.exit_code, agent_seconds=round(agent.duration, 3), agent_timed_out=agent.timed_out)
    return agent


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
