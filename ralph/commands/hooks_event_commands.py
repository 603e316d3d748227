"""The `[[hooks.event]]` half of `ralph hooks`: users' commands on Claude Code
events listed (global hooks.toml, then the project's ralph.toml, as the
dispatcher runs them) and fired with a real captured payload of the event
(ralph/data/payloads) through the same selection and chain as a real call."""
from __future__ import annotations

import json
import os
import sys
from importlib import resources

from ralph.claude import event_command_run
from ralph.claude import event_command_select
from ralph.claude.dispatch import event_commands_source
from ralph.claude.event_command_select import ALIASES, EVENTS, EventHook, globals_disabled, parse_event_hooks
from ralph.claude.protocol import HookCall, allow
from ralph.config.schema import ConfigError
from ralph.loop.lifecycle.config import read_toml
from ralph.state.locations import global_hooks_path

CAPTURED_PROJECT = "/home/dev/app"  # the project the shipped payloads were captured in
TEST_SESSION = "ralph-hooks-test"


def listed(config_path: str | None, environ: dict | os._Environ = os.environ) -> list[tuple[str, EventHook]]:
    """(source, hook) of every valid [[hooks.event]] table, in run order
    (errors are reported with the lifecycle hooks' by load_hooks)."""
    project: dict = {}
    text = ""
    if config_path and os.path.isfile(config_path):
        try:
            project, text = read_toml(config_path)
        except ConfigError:
            project = {}
    found: list[tuple[str, EventHook]] = []
    global_path = global_hooks_path(environ)
    if os.path.isfile(global_path) and not globals_disabled(project):
        try:
            data, global_text = read_toml(global_path)
            found += [("global", hook) for hook in parse_event_hooks(data, global_path, global_text)[0]]
        except ConfigError:
            pass
    if config_path and project:
        found += [("project", hook) for hook in parse_event_hooks(project, config_path, text)[0]]
    return found


def describe(hook: EventHook) -> str:
    command = hook.command if isinstance(hook.command, str) else json.dumps(hook.command)
    keys = [f"match {hook.match!r}", f"command {command!r}", f"timeout {hook.timeout:g}s"]
    if hook.pipe_output:
        keys.append("pipe_output")
    if hook.working_dir:
        keys.append(f"working_dir {hook.working_dir!r}")
    return " · ".join(keys)


def write_list(out: object, config_path: str | None) -> None:
    hooks = listed(config_path)
    out.write("\nClaude Code events ([[hooks.event]], after ralph's own rules; in every session):\n")  # type: ignore[attr-defined]
    if not hooks:
        out.write("  (no hooks)\n")  # type: ignore[attr-defined]
    for source, hook in hooks:
        state = "on " if hook.enabled else "off"
        out.write(f"  [{state}] {hook.name}  ({source}: {hook.line})\n        {describe(hook)}"  # type: ignore[attr-defined]
                  + ("" if hook.enabled else " · disabled: enabled = false") + "\n")


def event_of(name: str) -> tuple[str, str] | None:
    """(event, tool) that `ralph hooks test NAME` means: `PreToolUse`,
    `PreToolUse:Bash`, `tool:pre_execute:bash`; None when NAME is no event."""
    lowered = name.lower()
    for alias, event in sorted(ALIASES.items(), key=lambda item: -len(item[0])):
        if lowered == alias or lowered.startswith(alias + ":"):
            return event, name[len(alias) + 1:]
    head, _, tool = name.partition(":")
    event = next((e for e in EVENTS if e.lower() == head.lower()), None)
    return (event, tool) if event else None


def sample_payload(event: str, tool: str, root: str, tool_input: dict | None) -> dict:
    """A payload the real client sent for this event (and tool, when one was
    captured; else its Bash call with the tool's name), in this project."""
    names = [f"{event}_{tool}", event, f"{event}_Bash"] if tool else [event, f"{event}_Bash"]
    payloads = resources.files("ralph").joinpath("data", "payloads")
    for name in names:
        entry = payloads.joinpath(f"{name}.json")
        if entry.is_file():
            text = entry.read_text(encoding="utf-8")
            break
    else:
        text = json.dumps({"session_id": "", "cwd": CAPTURED_PROJECT, "hook_event_name": event})
    payload = json.loads(text.replace(CAPTURED_PROJECT, root))
    payload.update(session_id=TEST_SESSION, hook_event_name=event, cwd=root)
    if tool:
        payload["tool_name"] = tool
    if tool_input is not None:
        payload["tool_input"] = tool_input
    return payload


def fire(name: str, root: str, input_json: str | None) -> int:
    """`ralph hooks test EVENT[:TOOL]`: the matching event hooks run on a
    sample payload, as in a session; what the client would get is shown."""
    event, tool = event_of(name) or ("", "")
    out = sys.stdout
    tool_input = None
    if input_json is not None:
        try:
            tool_input = json.loads(input_json)
        except ValueError as e:
            sys.stderr.write(f"ralph hooks test: --input is not JSON: {e}\n")
            return 2
        if not isinstance(tool_input, dict):
            sys.stderr.write("ralph hooks test: --input must be a JSON object (the tool's input)\n")
            return 2
    if tool and event not in event_command_select.TOOL_EVENTS:
        sys.stderr.write(f"ralph hooks test: {event} has no tool ({tool!r}); tools go with {', '.join(event_command_select.TOOL_EVENTS)}\n")
        return 2
    payload = sample_payload(event, tool, root, tool_input)
    raw = json.dumps(payload).encode("utf-8")
    environ = dict(os.environ, CLAUDE_PROJECT_DIR=root)
    call = HookCall(event, payload, environ)
    sources = event_commands_source(call.root, environ)
    chosen, outcome = event_command_select.select(call, allow(), sources or [])
    subject = f"{event}:{call.tool_name}" if call.tool_name else event
    out.write(f"{subject}: {len(chosen)} matching event hook(s) · a captured {event} payload"
              + (f", tool_input {json.dumps(call.tool_input)[:200]}" if event in event_command_select.TOOL_EVENTS else "")
              + " · ralph's own rules are not run here\n")
    if outcome.output.get("systemMessage"):
        out.write(f"  warning: {outcome.output['systemMessage']}\n")
    if chosen:
        outcome = event_command_run.run(call, outcome, raw, chosen)
    for hook, record in zip(chosen, call.log_extra.get("event_hooks", [])):
        out.write(f"\n  [{record.get('result')}] {hook.label}\n    exit {record.get('exit')} · {record.get('ms', 0)} ms · "
                  f"{record.get('bytes', 0)} bytes of output"
                  + (f" · {record['decision']}" if record.get("decision") else "")
                  + (f" · {record['error']}" if record.get("error") else "") + "\n")
    specific = outcome.output.get("hookSpecificOutput") or {}
    if outcome.decision == "deny":
        out.write(f"\nthe tool call would be denied; the model reads: {specific.get('permissionDecisionReason') or outcome.reason}\n")
    elif specific.get("additionalContext"):
        out.write(f"\nthe model would get as context:\n{specific['additionalContext']}\n")
    else:
        out.write("\nthe call would go on unchanged\n")
    return 0


def known(name: str) -> bool:
    return event_of(name) is not None
