"""`ralph classify`: judge the test run in one Claude Code hook payload.

Reads a PostToolUse or PostToolUseFailure payload for the Bash tool on stdin
and prints the verdict as JSON, using the same extraction the hooks use
(PostToolUse: exit 0, output = tool_response stdout + stderr; PostToolUseFailure:
exit code and output parsed from `error: "Exit code N\\n<output>"`) and the same
pure rule, ralph.rules.outcome.verdict.judge_test_run, with the `[tests]` section of
ralph.toml in the current directory (declared test commands and patterns; shown
in the output as `tests_config`).

Exit 0 for any valid payload (whatever the verdict); 2 with a message on
stderr when stdin is not such a payload.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ralph.claude.protocol import bash_output, exit_code_from_failure, still_running
from ralph.config.reading import section_or_defaults
from ralph.rules.outcome.tests_config import TestsConfig
from ralph.rules.outcome.verdict import judge_test_run

EVENTS = ("PostToolUse", "PostToolUseFailure")


class PayloadError(Exception):
    """stdin is not a Bash PostToolUse/PostToolUseFailure payload; says what to send."""


def bash_result(payload: object) -> tuple[str, int | None, str]:
    """(command, exit code, output) of a Bash result payload, as the hooks see it."""
    if not isinstance(payload, dict):
        raise PayloadError(f"expected a JSON object, got a JSON {type(payload).__name__}")
    event = payload.get("hook_event_name")
    if event not in EVENTS:
        raise PayloadError(f"hook_event_name is {event!r}; send a PostToolUse or PostToolUseFailure payload")
    if payload.get("tool_name") != "Bash":
        raise PayloadError(f"tool_name is {payload.get('tool_name')!r}; only Bash results are test runs")
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        raise PayloadError("tool_input.command is missing or not a string")
    if event == "PostToolUse":
        response = payload.get("tool_response")
        # past its timeout the command went on in the background: no exit status yet (as the hooks judge it)
        return command, None if still_running(response) else 0, bash_output(response)
    error = payload.get("error")
    if not isinstance(error, str):
        raise PayloadError('PostToolUseFailure payload has no string "error" ("Exit code N\\n<output>")')
    exit_code, output = exit_code_from_failure(error)
    return command, exit_code, output


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ralph classify",
        description="Judge the test run in one PostToolUse/PostToolUseFailure Bash payload read on stdin; print the verdict as JSON.",
    )
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")
    args = parser.parse_args(argv)
    raw = sys.stdin.buffer.read()
    try:
        if not raw.strip():
            raise PayloadError("stdin is empty; pipe one hook payload, e.g. `ralph classify < payload.json`")
        try:
            payload = json.loads(raw)
        except ValueError as e:
            raise PayloadError(f"stdin is not JSON ({e})") from None
        command, exit_code, output = bash_result(payload)
    except PayloadError as e:
        sys.stderr.write(f"ralph classify: {e}\n")
        return 2
    # the project's [tests] section (ralph.toml in the current directory), as the hooks read it
    values, problem = section_or_defaults(os.getcwd(), "tests", os.environ)
    tests_config = TestsConfig.from_values(values)
    if problem:
        sys.stderr.write(f"ralph classify: {problem}\n")
    verdict = judge_test_run(command, exit_code, output, tests_config)
    result = verdict.to_dict()
    result["exit_code"] = exit_code
    if tests_config.commands or tests_config.fail_patterns or tests_config.pass_patterns:
        result["tests_config"] = tests_config.to_dict()
    sys.stdout.write(json.dumps(result, indent=2 if args.pretty else None, ensure_ascii=False) + "\n")
    return 0
