"""The test-run check's fast path (ralph.rules.outcome.fast_path) never
passes over a test run: every command it calls plain and test-free is one
command_shape finds no test stage in. Held against every command of the
test-outcome corpus (real runs of real runners), of the guard's corpus, and
against generated commands of the programs it trusts."""
from __future__ import annotations

import glob
import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from ralph.rules.outcome.command_shape import command_shape
from ralph.rules.outcome.fast_path import NOT_RUNNERS, runs_no_tests

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def corpus_commands() -> list[str]:
    commands = []
    for path in glob.glob(os.path.join(FIXTURES, "test_outcome", "*", "*.json")):
        with open(path, encoding="utf-8") as f:
            commands.append(json.load(f)["command"])
    for path in glob.glob(os.path.join(FIXTURES, "bash", "**", "*.jsonl"), recursive=True):
        with open(path, encoding="utf-8") as f:
            commands.extend(json.loads(line)["command"] for line in f if line.strip())
    return commands


def test_the_corpora_hold() -> None:
    commands = corpus_commands()
    assert len(commands) > 1000
    plain = [c for c in commands if runs_no_tests(c)]
    assert plain, "the corpora hold plain commands the fast path takes"
    wrong = [c for c in plain if command_shape(c).kind is not None]
    assert not wrong, wrong
    # and it takes none of the corpus's test runs
    runs = [c for c in commands if command_shape(c).kind is not None]
    assert runs and not any(runs_no_tests(c) for c in runs)


def test_what_it_leaves_to_the_full_answer() -> None:
    assert runs_no_tests("ls -la src") and runs_no_tests("git status") and runs_no_tests("cat README.md")
    for command in ("pytest -q", "ls tests", "git bisect run ./check.sh", "cat spec/a.rb", "ls | wc -l", "make",
                    "./ls", "LS_COLORS= ls", "npm test", "echo $(pytest)", "cargo t", ""):
        assert not runs_no_tests(command), command


WORDS = st.sampled_from(["-la", "src", "--porcelain", "status", "diff", "log", "-n", "1", "README.md", "bisect", "run",
                         "make", "cargo", "go", "npm", "tox", "ctest", "jest", "rspec", "prove", "bats", "nox", "build",
                         "all", "./ci.sh", "x.py", "python", "-c", "foreach", "-x", "exec", "t", "unit", "suite"])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(NOT_RUNNERS)), st.lists(WORDS, max_size=5))
def test_generated_commands_of_the_trusted_programs(program: str, args: list[str]) -> None:
    command = " ".join([program, *args])
    if runs_no_tests(command):
        assert command_shape(command).kind is None, command
