#!/usr/bin/env python3
"""Capture real `claude -p --output-format stream-json --verbose` streams as
fixtures for the loop's stream reader (ralph.loop.stream) and its
classification of an agent's exit (ralph.loop.agent_outcome).

Each scenario runs the real Claude Code client (scripts/install_claude.py
installs it) exactly as ralph-loop runs its agent (`-p
--dangerously-skip-permissions --output-format stream-json --verbose`, the
prompt on stdin) against the scripted Messages API of tests/e2e/ (its network
namespace, its fresh HOME), and writes to tests/fixtures/stream/:

    <name>.jsonl       the client's stdout, byte for byte except that the
                       temp directory is rewritten to /home/dev/app
                       (<name>.txt for the scenarios without stream-json)
    <name>.meta.json   {"scenario", "turns", "auth", "env", "args", "output",
                        "exit_code", "main_requests", "client_version", "captured_at"}

What the scenarios showed (Claude Code 2.1.330):
- An API key account that gets 429: the client retries by itself
  (`system`/`api_retry`) unless the answer carries rate-limit headers
  (`retry-after`, `anthropic-ratelimit-unified-*`); once it gives up: exit 1,
  a result with `api_error_status: 429`, and no reset time anywhere in the
  stream, whatever the headers said.
- A subscription login (CLAUDE_CODE_OAUTH_TOKEN) that gets 429 with
  `anthropic-ratelimit-unified-status: rejected`, `-reset: <epoch>` and
  `-representative-claim`: a `rate_limit_event` line (`rate_limit_info`:
  status rejected, resetsAt, rateLimitType), an assistant message with
  `api_error: "usage_limit_reached"` and `api_error_params.rate_limit_info`,
  and a result with `api_error: "usage_limit_reached"`; exit 1. The reset
  time reaches the stream only this way.
- 529 and 5xx: the client retries by itself (`system`/`api_retry` lines, up
  to CLAUDE_CODE_MAX_RETRIES, default 10); only when it gives up does the run
  end with `api_error_status` 529 / 5xx.

usage: scripts/capture_streams.py [--only NAME,..] [--list]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "stream"
sys.path.insert(0, str(REPO))

from tests.e2e import harness  # noqa: E402 - the e2e harness, from the checkout
from tests.e2e.api_server import bash, disconnect, edit, overloaded, rate_limited, read, text, unified_headers, write  # noqa: E402

STREAM_FLAGS = ("--output-format", "stream-json", "--verbose")
AGENT_FLAGS = ("-p", "--dangerously-skip-permissions")
PROMPT = "Do the task: add notes.txt and update README.md."
CLIENT_PLACEHOLDER = "/home/dev/app"
HOUR = 3600


def in_seconds(seconds: int) -> float:
    return time.time() + seconds


def work_turns(repo: str) -> list[dict]:
    """A short but complete session: text, Bash, Write, Read, Edit, a final answer."""
    return [
        {"text": "I will look at the project first.", "tool_use": {"name": "Bash", "input": {"command": "ls -la && git status --short", "description": "list files"}}},
        write(f"{repo}/notes.txt", "notes\n"),
        read(f"{repo}/README.md"),
        edit(f"{repo}/README.md", "hello", "hello, world"),
        bash("python3 -c \"print('ok')\"", description="check python"),
        text("Done: README.md updated and notes.txt created."),
    ]


def scenario(description: str, turns, auth: str = "api_key", env: dict | None = None, args: tuple = (),
             output: tuple = STREAM_FLAGS) -> dict:
    """turns(repo) -> the scripted turns; auth: "api_key" or "subscription" (a
    claude.ai login); env: extra variables; args: extra flags; output: the
    output flags (() for the client's plain text)."""
    return {"description": description, "turns": turns, "auth": auth, "env": env or {}, "args": args, "output": output}


def once(*turns: dict):
    return lambda repo: list(turns)


NO_RETRIES = {"CLAUDE_CODE_MAX_RETRIES": "0"}  # the client's own retries off: it gives up at the first error

SCENARIOS: dict[str, dict] = {
    "tools_success": scenario("a successful run with text, Bash, Write, Read and Edit", work_turns),
    "big_tool_output": scenario("a Bash tool printing about 1 MB (long tool_result lines)", once(
        bash("python3 -c \"[print('line %06d ' % i + 'x' * 90) for i in range(10000)]\"", description="print a lot"),
        text("Printed it."))),
    "api_key_429": scenario("an API key account refused with 429 without rate-limit headers, the client's retries off",
                            once(rate_limited(), text("never reached")), env=NO_RETRIES),
    "api_key_429_retried": scenario("an API key account refused with 429 once without headers: the client retries by itself",
                                    once(rate_limited(), text("Done after a retry."))),
    "api_key_429_headers": scenario("an API key account refused with 429 with retry-after and the unified reset headers",
                                    once(rate_limited(in_seconds(HOUR), retry_after=120), text("never reached"))),
    "subscription_429_reset": scenario("a subscription login refused with 429 and the unified reset headers (a usage limit)",
                                       once(rate_limited(in_seconds(HOUR), retry_after=HOUR), text("never reached")),
                                       auth="subscription"),
    "subscription_429_no_reset": scenario("a subscription login refused with 429 without rate-limit headers, the client's retries off",
                                          once(rate_limited(), text("never reached")), auth="subscription", env=NO_RETRIES),
    "subscription_warning": scenario("a subscription login answered normally with an allowed_warning rate-limit status",
                                     once({"text": "All done.", "headers": unified_headers("allowed_warning", in_seconds(2 * HOUR))}), auth="subscription"),
    "overloaded_retried": scenario("529 once, then a normal answer: the client retries by itself", once(overloaded(), text("Done after a retry."))),
    "overloaded_529": scenario("529 with the client's own retries off", once(overloaded(), text("never reached")), env=NO_RETRIES),
    "server_500": scenario("500 with the client's own retries off", once(
        {"error": {"status": 500, "type": "api_error", "message": "Internal server error"}}, text("never reached")), env=NO_RETRIES),
    "connection_reset": scenario("the connection closed without an answer, the client's own retries off",
                                 once(disconnect(), text("never reached")), env=NO_RETRIES),
    "max_budget": scenario("--max-budget-usd smaller than the run's cost: the client stops after a turn", work_turns,
                           args=("--max-budget-usd", "0.0005")),
    "text_429": scenario("plain text output (no --output-format): 429 on an API key", once(rate_limited(), text("never reached")),
                         env=NO_RETRIES, output=()),
    "text_529": scenario("plain text output (no --output-format): 529", once(overloaded(), text("never reached")), env=NO_RETRIES, output=()),
    "text_usage_limit": scenario("plain text output (no --output-format): a subscription's usage limit", once(
        rate_limited(in_seconds(HOUR), retry_after=HOUR), text("never reached")), auth="subscription", output=()),
}


def capture(name: str, binary: str) -> dict:
    spec = SCENARIOS[name]
    turns_for, auth, env_extra, args = spec["turns"], spec["auth"], spec["env"], spec["args"]
    tmp = Path(tempfile.mkdtemp(prefix=f"capture-{name}-"))
    repo = harness.make_repo(tmp)
    turns = turns_for(str(repo))
    run_dir = tmp / "run"
    (run_dir / "home" / ".claude").mkdir(parents=True)
    # a claude.ai login ("subscription"): the client reads the unified rate-limit headers only then
    env = harness.client_env(run_dir / "home", env_extra, binary, login=auth)
    prompt_file = run_dir / "prompt.txt"
    prompt_file.write_text(PROMPT, encoding="utf-8")
    # the prompt on stdin, as ralph-loop gives it
    command = ["/bin/sh", "-c", 'exec "$@" < "$0"', str(prompt_file), binary, *AGENT_FLAGS, *spec["output"], *args]
    result = harness.run_with_server(command, repo, turns, timeout=120, env=env, run_dir=run_dir)
    if result.error or result.timed_out:
        raise SystemExit(f"{name}: the run failed: {result.describe()}")
    stream = (run_dir / "stdout").read_bytes().replace(str(tmp).encode(), CLIENT_PLACEHOLDER.encode())
    if not stream.strip():
        raise SystemExit(f"{name}: the client printed nothing: {result.describe()}")
    FIXTURES.mkdir(parents=True, exist_ok=True)
    (FIXTURES / f"{name}{'.jsonl' if spec['output'] else '.txt'}").write_bytes(stream)
    version = harness.install_status() or {}
    meta = {
        "scenario": spec["description"],
        "turns": json.loads(json.dumps(turns).replace(str(tmp), CLIENT_PLACEHOLDER)),
        "auth": auth,
        "env": env_extra,
        "args": list(args),
        "output": list(spec["output"]),
        "exit_code": result.exit_code,
        "main_requests": len(result.main_requests),
        "client_version": version.get("version"),
        "captured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    (FIXTURES / f"{name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated scenario names")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, spec in SCENARIOS.items():
            print(f"{name}: {spec['description']}")
        return 0
    names = args.only.split(",") if args.only else list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    binary = harness.claude_binary()
    if binary is None:
        print("capture_streams: no Claude Code client; run scripts/install_claude.py first", file=sys.stderr)
        return 3
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    for name in names:
        meta = capture(name, binary)
        print(f"{name}: exit {meta['exit_code']}, {meta['main_requests']} request(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
