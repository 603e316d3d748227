"""The guard's fast path (ralph.rules.guard.programs.fast_path) never allows a command
the full guard would block: checked over the whole bash corpus and on random
commands built from plain characters and shell-ish words."""
from __future__ import annotations

import glob
import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.programs.fast_path import PLAIN_CHARS, obviously_harmless
from tests.conftest import FIXTURES, hook_state_dir, load_payload, run_hook


def corpus() -> list[dict]:
    cases = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "bash", "*", "*.jsonl"))):
        with open(path) as f:
            cases.extend(json.loads(line) for line in f if line.strip())
    return cases


def test_fast_path_agrees_with_the_corpus() -> None:
    cases = corpus()
    fast = [c for c in cases if obviously_harmless(c["command"])]
    assert fast, "the corpus should hold some plain commands"
    assert all(c["expect"] == "allow" for c in fast), [c["command"] for c in fast if c["expect"] != "allow"]
    assert all(not judge_command(c["command"]).blocked for c in fast)


def test_fast_path_refuses_anything_shell_or_risky() -> None:
    for command in ["git status", "GIT PUSH", "g'i't push", "ls; git push", "echo $(git push)", "ls\ngit push",
                    "RALPH stream merge", "hub pull-request", "ls ~", "a && b", "cat <f", "ls *", "", "  ",
                    "npm test", "make", "pytest -q", "python3.11 tool.py", "rm -rf src", "./deploy.sh", "timeout 5 rm -r x",
                    "mkfs.ext4 /dev/sda", "chmod -R 777 /", "tox -e py", "just ship", "task", "pre-commit run"]:
        assert not obviously_harmless(command), command


words = st.sampled_from(["ls", "-la", "npm", "test", "pytest", "-q", "sh", "bash", "env", "sudo", "xargs", "eval", "exec",
                         "python", "-c", "node", "-e", "FOO=bar", "timeout", "10", "ssh", "host", "watch", "make", "deploy",
                         "g", "it", "p", "ush", "pu", "sh", "mer", "ge", "-C", "..", "./run.sh", "alias", "p=pu"])


@settings(max_examples=400, deadline=None)
@given(st.lists(words | st.text(alphabet=sorted(PLAIN_CHARS), max_size=8), min_size=1, max_size=8))
def test_fast_path_never_allows_what_the_guard_blocks(parts: list[str]) -> None:
    command = " ".join(parts)
    if obviously_harmless(command):
        assert not judge_command(command).blocked, command


def test_fast_path_through_the_entry_point(repo: str) -> None:
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "cargo build --release"
    assert run_hook("pre-tool", payload, repo).output == {}
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        assert json.loads(f.readlines()[-1])["guard"] == "plain command"
    # with a ralph.toml the full guard runs (its [guard] table may block more programs)
    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write('[guard]\nblock_programs = ["cargo build"]\n')
    assert run_hook("pre-tool", payload, repo).denied
