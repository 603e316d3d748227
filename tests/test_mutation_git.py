"""What the git model (ralph/rules/guard/programs/git*.py) says beyond a
verdict, which a mutation run found untested (scripts/mutate.py): the trace
`ralph explain` prints for git commands, and the rules of ralph.toml's
[guard] that reach git (block_git_subcommands, git_frontends,
merge_backends). The verdicts themselves are held by the corpus
(tests/fixtures/bash/, test_guard.py)."""
from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import RALPH, hook_state_dir, run_hook
from tests.test_guard import bash_payload


def explain(command: str, cwd: str) -> dict:
    proc = subprocess.run([RALPH, "explain", "--json", command], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def trace_of(command: str, cwd: str) -> list[str]:
    """The trace lines about `command` itself (each line starts with its place)."""
    return [line.split(": ", 1)[1] for line in explain(command, cwd)["trace"] if line.startswith(f"`{command}`: ")]


def test_explain_says_why_git_commands_are_allowed(tmp_path) -> None:
    cwd = str(tmp_path)
    assert trace_of("git --version push", cwd) == ["git --version prints and exits"]
    assert trace_of("git push --help", cwd) == ["git push --help only prints help"]
    assert trace_of("git merge --abort", cwd) == ["git merge --abort/--quit/--help merges nothing"]
    assert trace_of("git status --short", cwd) == ["git status: allowed"]
    assert trace_of("git -c alias.st=status st", cwd) == ["git alias st = status", "git status: allowed"]
    assert trace_of("git pull --rebase origin main", cwd) == ["git pull --rebase: rebases, merges nothing"]
    assert trace_of("git pull -h", cwd) == ["git pull --help only prints help"]
    written = "printf '[alias]\\n\\tst = status\\n' > inc.cfg; git -c include.path=inc.cfg st"
    lines = explain(written, cwd)["trace"]
    assert any(line.endswith("git reads config inc.cfg, written earlier in this command") for line in lines), lines
    # a printed program a git-<name> script runs is judged as that script
    script = "printf '#!/bin/sh\\ngit status\\n' > git-st2; chmod +x git-st2; PATH=$PWD:$PATH git st2"
    assert not any(line.endswith("git st2: allowed") for line in explain(script, cwd)["trace"])


def test_a_blocked_git_command_is_not_also_called_allowed(tmp_path) -> None:
    cwd = str(tmp_path)
    for command, rule in (("git push origin main", "git.push"), ("git merge feature", "git.merge"),
                          ("git merge-octopus HEAD a b", "git.merge-backend")):
        verdict = explain(command, cwd)
        assert verdict["blocked"] and verdict["rule_id"] == rule, verdict
        assert not any(line.endswith(": allowed") for line in verdict["trace"]), verdict["trace"]


def logged_rule(cwd: str) -> str:
    with open(os.path.join(hook_state_dir(cwd), "logs", "hooks.jsonl")) as f:
        return json.loads(f.readlines()[-1])["rule_id"]


def test_guard_config_reaches_git_subcommands_frontends_and_backends(tmp_path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    cwd = str(project)
    (project / "ralph.toml").write_text('[guard]\nblock_git_subcommands = ["lfs", "push"]\ngit_frontends = false\n')
    blocked = run_hook("pre-tool", bash_payload("git lfs push origin main", cwd), cwd)
    assert blocked.denied and "git lfs is blocked by ralph.toml [guard] block_git_subcommands" in blocked.reason
    assert logged_rule(cwd) == "config.block-git-subcommands"
    pushed = run_hook("pre-tool", bash_payload("git push origin main", cwd), cwd)
    assert pushed.denied and "git push pushes commits to a remote" in pushed.reason and logged_rule(cwd) == "git.push"
    assert not run_hook("pre-tool", bash_payload("git lfs --help", cwd), cwd).denied
    for command in ("git svn dcommit", "git flow feature finish x"):
        assert run_hook("pre-tool", bash_payload(command, cwd), cwd).output == {}, command
        assert explain(command, cwd)["rule_id"] == "allow.config-git-frontends", command
    assert run_hook("pre-tool", bash_payload("git merge-ours HEAD -- HEAD feature", cwd), cwd).denied
    (project / "ralph.toml").write_text("[guard]\nmerge_backends = false\n")
    assert run_hook("pre-tool", bash_payload("git merge-ours HEAD -- HEAD feature", cwd), cwd).output == {}
    assert explain("git merge-ours HEAD -- HEAD feature", cwd)["rule_id"] == "allow.config-merge-backends"
    assert run_hook("pre-tool", bash_payload("git svn dcommit", cwd), cwd).denied
    assert logged_rule(cwd) == "frontend.git-svn-dcommit"


def test_git_config_options_that_take_a_value_do_not_hide_the_alias_set(tmp_path) -> None:
    """`git config --comment note alias.up '!git push'` sets alias.up: the
    value of an option that takes one is not the key."""
    cwd = str(tmp_path)
    for option in ("--comment note", "--type string", "--value x", "--default x", "--blob HEAD:x", "--file .git/config",
                   "-f .git/config"):
        verdict = explain(f"git config {option} alias.up '!git push'", cwd)
        assert verdict["blocked"] and verdict["rule_id"] == "git.alias-arms-push", (option, verdict)


def test_an_alias_in_a_config_file_the_command_wrote_is_followed(tmp_path) -> None:
    """A section header `[alias]` in a written config file: its entries are
    aliases (`git up` runs push), not keys of some other section."""
    cwd = str(tmp_path)
    pushing = explain("printf '[alias]\\n\\tup = push\\n' > inc.cfg; git -c include.path=inc.cfg up origin", cwd)
    assert pushing["blocked"] and pushing["rule_id"] == "git.push", pushing
    written = "printf '[alias]\\n\\tst = status\\n' > inc.cfg; git -c include.path=inc.cfg st"
    lines = [line.split(": ", 1)[1] for line in explain(written, cwd)["trace"]]
    assert lines[-2:] == ["git alias st = status", "git status: allowed"], lines
    # a section header with no name is read as one, not a failure of the guard
    # (which would block, fail closed, a command that mentions push)
    odd = explain("printf '[ ]\\n' > inc.cfg; git -c include.path=inc.cfg log --grep=push", cwd)
    assert not odd["blocked"] and odd["rule_id"] == "allow.nothing-pushes", odd


def test_what_only_the_run_can_tell_blocks_even_when_the_text_never_says_push(tmp_path) -> None:
    """A subcommand, pull option or alias value known only when the command
    runs fails closed on its own: none of these texts spells push, pull or
    merge, so a lenient judgement (block only risky text) would allow them."""
    cwd = str(tmp_path)
    for command, rule in (("git $SUB", "fail-closed.git-subcommand"),
                          ("git pu''ll $OPT", "fail-closed.git-pull-option"),
                          ('git config alias.x "$V"', "fail-closed.git-alias"),
                          ('git -c alias.x="$V" x', "fail-closed.git-alias")):
        verdict = explain(command, cwd)
        assert verdict["blocked"] and verdict["rule_id"] == rule, (command, verdict)
