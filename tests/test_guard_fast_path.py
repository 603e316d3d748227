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


# reserved words the guard's tables list among the wrappers, for the bodies
# of compound commands: a plain command starting with one is a syntax error
RESERVED_WORDS = {"do", "then", "else"}


def test_the_fast_path_leaves_every_program_the_guard_models_to_the_guard() -> None:
    # the fast path's own list, held to the guard's tables: every program the
    # guard models (but the builtins it models only to follow a compound
    # command's state), every shell, interpreter and wrapper
    from ralph.rules.guard import models
    from ralph.rules.guard.programs import facts

    builtins = {program for program, (module, _) in models.PROGRAM_MODELS.items() if module == models.BUILTINS}
    modelled = (set(models.PROGRAM_MODELS) - builtins) | set(facts.SHELLS) | set(facts.INTERPRETERS) | set(facts.WRAPPERS)
    for program in sorted(modelled - RESERVED_WORDS):
        for command in (f"{program} x", f"nice {program} x", f"ls {program}"):
            assert not obviously_harmless(command), command
    assert not [name for name in ("python3.12", "pypy3", "mkfs.ext4", "tclsh8.6", "lua5.4") if obviously_harmless(name + " x")]


# Scripts on disk that push, each run by a program that reads it, and disk
# writers: found by running the guard in a project that holds such files. The
# fast path once let the shells and interpreters missing from its list
# (`tcsh x`, `julia x.jl`) and the disk writers (`cryptsetup`, `mkntfs`) through.
# (the file names hold no word the fast path refuses on sight, such as push)
SCRIPTS_ON_DISK = {"job.sh": "git push origin main\n", "job.jl": "run(`git push origin main`)\n",
                   "job.py": "import os\nos.system('git push origin main')\n", "job.pl": "system('git push origin main');\n"}
RUN_FROM_DISK = ["sh job.sh", "bash job.sh", "ash job.sh", "mksh job.sh", "yash job.sh", "posh job.sh", "rbash job.sh",
                 "tcsh job.sh", "csh job.sh", "fish job.sh", "julia job.jl", "python3 job.py", "perl job.pl",
                 "cryptsetup luksFormat /dev/sda", "badblocks -w /dev/sda", "mkntfs /dev/sdb1", "mkdosfs /dev/sdb1",
                 "pvcreate /dev/sdb", "cfdisk /dev/sda", "wipefs -a /dev/sda"]


def test_fast_path_never_allows_what_the_guard_blocks_in_a_project_with_scripts(tmp_path) -> None:
    from ralph.claude.bash_guard import surroundings
    from ralph.rules.guard.policy import DEFAULT_POLICY

    project = str(tmp_path)
    for name, text in SCRIPTS_ON_DISK.items():
        (tmp_path / name).write_text(text)
    around = surroundings(project, project, {"HOME": str(tmp_path / "home")})
    blocked = [command for command in RUN_FROM_DISK
               if judge_command(command, DEFAULT_POLICY, cwd=project, around=around).blocked]
    assert blocked == RUN_FROM_DISK  # each one needs the guard...
    assert not [command for command in blocked if obviously_harmless(command)]  # ...and never gets the fast path


def test_a_script_run_by_an_interpreter_missing_from_the_old_list_is_denied(repo: str) -> None:
    # through the real entry point: `tcsh job.sh` took the fast path and ran
    with open(os.path.join(repo, "job.sh"), "w") as f:
        f.write("git push origin main\n")
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "tcsh job.sh"
    assert run_hook("pre-tool", payload, repo).denied
