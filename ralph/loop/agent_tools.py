"""The agent's tools in a ralph-loop run (`ralph mcp`, ralph.mcp): set up for
each build iteration whose agent is Claude Code, and what the loop makes of
them once the agent has exited.

Before the agent: the iteration's context for the tools (story, attempt and
budget, the verify command with its timeout and sandbox prefix, paths) and
the `--mcp-config` file naming the server go to `.ralph/protected/`, which the
agent cannot change; the flag is added to the agent command, and the agent's
environment says the tools are there ($RALPH_AGENT_TOOLS: the guard's
denials then name request_merge). Off with `[loop] agent_tools = false`, and
when the optional MCP SDK is not installed (said once per run).

After the agent: a story complete_story verified is not verified again while
the tree is the one it passed on; a story the agent reported blocked (or
marked [!] itself) has its work saved to a ref and the tree reset, and the
`story_blocked` hook point fires with the reason and question.
"""
from __future__ import annotations

import json
import os
import time

from ralph.loop import hook_calls
from ralph.loop.agent_command import runs_claude, with_flags
from ralph.loop.commit import roll_back
from ralph.loop.run import Iteration, Run
from ralph.mcp.launch import INSTALL_HINT, SERVER_NAME, sdk_installed, server_command
from ralph.plan import set_story_state
from ralph.run import tool_calls as records
from ralph.run.tree import fingerprint
from ralph.run.tree import tree_at_checkpoint
from ralph.state.denials import ENV_AGENT_TOOLS, protected_dir
from ralph.state.files import atomic_write

TIMEOUT_MARGIN_SECONDS = 120  # the client's per-call limit: the verify timeout plus this
SERVER_START_MS = 120_000  # how long the client waits for the server to start (MCP_TIMEOUT)
_told_missing: set[str] = set()  # runs already told the SDK is missing


def active(run: Run, it: Iteration) -> bool:
    """Does this iteration's agent get the tools? A build iteration of a
    Claude Code agent, `[loop] agent_tools` on, the SDK installed."""
    if it.story is None or it.stage.mode != "build" or not run.settings["agent_tools"] or not runs_claude(it.stage.agent_command):
        return False
    if sdk_installed():
        return True
    if run.run_id not in _told_missing:
        _told_missing.add(run.run_id)
        run.display.message(f"agent tools: off, the MCP SDK is not installed ({INSTALL_HINT}); "
                            "the agent finishes stories by ticking the plan")
    return False


def agent_command(run: Run, it: Iteration, command: list[str] | str) -> list[str] | str:
    """The agent command with `--mcp-config=<file>` when the tools are on
    (their context for this iteration written first); else unchanged."""
    if not active(run, it):
        return command
    write_context(run, it)
    return with_mcp_config(command, write_config(run, it))


def environment(run: Run, it: Iteration, env: dict[str, str]) -> dict[str, str]:
    """The agent's environment: the tools are on, and the client waits for
    the server before its first request, up to two minutes (the SDK takes
    seconds to import on a loaded machine; the client's default wait is 30 s,
    and a server not up by then leaves the agent without its tools)."""
    if active(run, it):
        env[ENV_AGENT_TOOLS] = "1"
        env.setdefault("MCP_CONNECTION_NONBLOCKING", "0")
        env.setdefault("MCP_TIMEOUT", str(SERVER_START_MS))
    return env


def with_mcp_config(command: list[str] | str, config_file: str) -> list[str] | str:
    """`--mcp-config=<file>` right after the `claude` word. The `=` form: the
    flag takes several values, and a bare one would swallow the words after it."""
    return with_flags(command, f"--mcp-config={config_file}")


def write_context(run: Run, it: Iteration) -> None:
    """What the tools need of this iteration (ralph.run.tool_calls)."""
    story, stage = it.story, it.stage
    assert story is not None
    budget = run.budget(story)
    records.write_iteration(run.state_dir, {
        "run_id": run.run_id, "iteration": run.iteration, "story": story.id, "stage": stage.name,
        "attempt": budget.iterations, "max_iterations_per_story": run.settings["max_iterations_per_story"],
        "seconds_used": round(budget.seconds, 1), "max_minutes_per_story": run.settings["max_minutes_per_story"],
        "started_epoch": time.time(), "agent_timeout_seconds": stage.timeout_seconds,
        "verify_command": stage.verify_command, "verify_timeout_seconds": run.settings["verify_timeout_seconds"],
        "verify_prefix": run.sandbox.verify_prefix if run.sandbox is not None else [],
        "plan": os.path.abspath(run.plan_path), "progress": os.path.abspath(run.progress_path),
        "log": os.path.abspath(it.log_path),
    })


def write_config(run: Run, it: Iteration) -> str:
    """The `--mcp-config` file: the server, started with this ralph, allowed
    a verify run's time per call, its tools in the first request."""
    command, args = server_command()
    timeout_ms = int((float(run.settings["verify_timeout_seconds"]) + TIMEOUT_MARGIN_SECONDS) * 1000)
    config = {"mcpServers": {SERVER_NAME: {
        "type": "stdio", "command": command, "args": args,
        "env": {"CLAUDE_PROJECT_DIR": run.root},
        "timeout": timeout_ms, "alwaysLoad": True,
    }}}
    path = os.path.join(protected_dir(run.state_dir), records.MCP_CONFIG_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, json.dumps(config, indent=1) + "\n")
    return path


# ---- after the agent ----


def leave_out(run: Run) -> list[str]:
    """What the tree fingerprint leaves out: what the tool and the loop write after the check."""
    return [run.state_dir, run.plan_path, run.progress_path]


def verified_unchanged(run: Run, it: Iteration) -> bool:
    """Did complete_story pass on exactly the tree there is now? Then its
    verify run is the iteration's (recorded in the event) and the loop does
    not run the command again."""
    story = it.story
    assert story is not None
    call = records.last_call(run.state_dir, run.run_id, run.iteration, story.id, records.COMPLETE)
    if call is None:
        return False
    tree = call.get("tree")
    verified = call.get("verify")
    if not tree or not isinstance(verified, dict) or verified.get("result") != "pass" or it.stage.verify_command is None:
        return False
    if fingerprint(run.root, leave_out(run)) != tree:
        it.event["complete_story"] = "passed, but the tree changed after the call: verified again"
        return False
    it.event["verify"] = dict(verified, by=records.COMPLETE)
    run.display.message("verify: passed in complete_story on this very tree; not run again")
    return True


def story_blocked(run: Run, it: Iteration) -> None:
    """The agent left its story blocked ([!]): through report_blocked (with a
    reason and question) or by marking it. Its work is saved to a ref and the
    tree reset (the next story must not start on it), the failure noted for
    the prompt that picks the story up again, and the story_blocked point fired."""
    story = it.story
    assert story is not None
    call = records.last_call(run.state_dir, run.run_id, run.iteration, story.id, records.BLOCKED) or {}
    reason = str(call.get("reason") or "the agent marked the story blocked ([!]) in the plan without report_blocked")
    question = str(call.get("question") or "")
    saved = ""
    if not tree_at_checkpoint(run.root, it.checkpoint):
        kept = {path: read_bytes(path) for path in (run.plan_path, run.progress_path)}
        roll_back(run, it, "story blocked by the agent")
        for path, data in kept.items():  # a plan or progress.md outside .ralph/ keeps the report
            if data is not None and read_bytes(path) != data:
                atomic_write(path, data)
        saved = str((it.event.get("rollback") or {}).get("ref") or "")
    summary = f"{story.id} blocked by the agent: {reason}" + (f" Question: {question}" if question else "")
    if saved:
        summary += f" (the iteration's work is saved in {saved})"
    run.fail(story.id, "blocked", summary)
    set_story_state(run.plan_path, story.id, "blocked")
    hook_calls.story_blocked(run, story.id, story.title, reason, "agent", question=question, iteration=run.iteration)


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
