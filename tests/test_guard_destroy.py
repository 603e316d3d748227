"""The guard on commands that destroy work, and on task runners.

The corpus in tests/fixtures/bash/{destroy_git,destroy_files,destroy_outside,
destroy_wrapped,runners}/ is labelled by running each case (scripts/label_guard_corpus.py:
the destructive ones in a bubblewrap world with a fake HOME, the task runners
in the push/merge sandbox): "block" (something outside the project lost, or a
push/merge), "save" (only project work lost: a snapshot holds it), "allow".
A "sandbox" mark says where the guard differs by design ("conservative": it
does more; "gap: why": it does less). Every case goes through the real entry
point, `ralph pre-tool`, in a project laid out as tests/guard_world.py says,
and through the pure judgement.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ralph.claude.git_index import index_has
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import FAMILIES, GuardPolicy

from .conftest import FIXTURES, RALPH, hook_state_dir, load_payload
from .guard_world import GIT_ENV, World, write_case_files

CATEGORIES = ("destroy_git", "destroy_files", "destroy_outside", "destroy_wrapped", "runners")
STRICTNESS = {"allow": 0, "save": 1, "block": 2}


def load_corpus() -> list[tuple[str, dict]]:
    cases = []
    for category in CATEGORIES:
        with open(os.path.join(FIXTURES, "bash", category, "cases.jsonl"), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    case = json.loads(line)
                    case["id"] = f"{category}:{number}"
                    cases.append((category, case))
    return cases


CORPUS = load_corpus()


def state(verdict: object) -> str:
    return "block" if verdict.blocked else "save" if verdict.saves else "allow"


def agrees(case: dict, got: str) -> bool:
    mark = case.get("sandbox", "")
    if mark == "conservative":
        return STRICTNESS[got] > STRICTNESS[case["expect"]]
    if mark.startswith("gap"):
        return STRICTNESS[got] < STRICTNESS[case["expect"]]
    return got == case["expect"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(str(tmp_path_factory.mktemp("world")))


def test_corpus_shape() -> None:
    counts = {c: [case["expect"] for category, case in CORPUS if category == c] for c in CATEGORIES}
    assert all(len(expects) >= 40 for expects in counts.values()), {c: len(e) for c, e in counts.items()}
    for category in ("destroy_git", "destroy_files"):
        assert {"save", "allow"} <= set(counts[category]), category
    assert {"block", "allow"} <= set(counts["destroy_outside"]) and {"block", "allow"} <= set(counts["runners"])
    for category, case in CORPUS:
        assert case["expect"] in STRICTNESS and case["why"] and case["rule_id"], case
        assert set(case) <= {"command", "expect", "why", "sandbox", "rule_id", "files", "id"}, case
        mark = case.get("sandbox", "")
        assert mark in ("", "conservative") or mark.startswith(("gap: ", "skip")), case
        assert case["rule_id"].startswith(("allow.", "save.")) or state_from_rule(case["rule_id"]) == "block", case
    marked = [case for _, case in CORPUS if case.get("sandbox")]
    assert len(marked) <= len(CORPUS) // 8, [c["command"] for c in marked]  # the labels, not the marks, carry the corpus


def state_from_rule(rule_id: str) -> str:
    return "allow" if rule_id.startswith("allow.") else "save" if rule_id.startswith("save.") else "block"


@pytest.mark.parametrize("category,case", CORPUS, ids=[case["id"] for _, case in CORPUS])
def test_corpus_direct(world: World, category: str, case: dict) -> None:
    verdict = world.judge(case["command"], case.get("files"))
    assert agrees(case, state(verdict)), (case, verdict.rule_id, verdict.reason, verdict.trace[-8:])
    assert verdict.rule_id == case["rule_id"], (case, verdict.rule_id, verdict.trace[-8:])
    if verdict.blocked:
        assert verdict.reason and verdict.evidence


def pre_tool(command: str, project: str, environ: dict[str, str]) -> dict:
    payload = load_payload("PreToolUse_Bash", project)
    payload["cwd"] = project
    payload["tool_input"]["command"] = command
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    env.update(environ)
    proc = subprocess.run([RALPH, "pre-tool"], input=json.dumps(payload).encode(), capture_output=True, cwd=project, env=env, timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_corpus_through_pre_tool(world: World, tmp_path) -> None:
    """Each case through `ralph pre-tool` in the world's project (a copy of
    it for cases with files of their own): deny, allow after saving (the
    context says how to get the work back), or plain allow."""

    def one(item: tuple[str, dict]) -> tuple[dict, dict]:
        _, case = item
        if not case.get("files"):
            return case, pre_tool(case["command"], world.project, world.environ)
        base = str(tmp_path / case["id"].replace(":", "-"))
        shutil.copytree(world.base, base, symlinks=True)
        copy = World.__new__(World)
        copy.base, copy.home, copy.tmpdir = base, os.path.join(base, "home", "user"), os.path.join(base, "tmpdir")
        copy.project = os.path.join(copy.home, "work", "proj")
        write_case_files(copy.project, case["files"])
        return case, pre_tool(case["command"], copy.project, copy.environ)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, CORPUS))
    wrong = []
    for case, output in results:
        specific = output.get("hookSpecificOutput") or {}
        if specific.get("permissionDecision") == "deny":
            got = "block"
        elif "additionalContext" in specific:
            got = "save"
            if "to get it back" not in specific["additionalContext"] and "to get them back" not in specific["additionalContext"]:
                wrong.append(f"{case['id']}: context without a way back: {specific}")
        else:
            got = "allow" if output == {} else f"unexpected {output}"
        if got not in STRICTNESS or not agrees(case, got):
            wrong.append(f"{case['id']} expect {case['expect']} {case.get('sandbox', '')}: {case['command']!r} -> {got}")
    assert not wrong, "\n".join(wrong)


# ---- saving, restoring, and what happens when saving cannot be done ----


def run(command: str, cwd: str, environ: dict[str, str]) -> None:
    subprocess.run(["bash", "-c", command], cwd=cwd, env=dict(os.environ, **environ, **GIT_ENV), check=True, capture_output=True)


def test_reset_hard_is_saved_then_restored_byte_for_byte(tmp_path) -> None:
    world = World(str(tmp_path))
    before = {path: open(os.path.join(world.project, path), "rb").read() for path in ("README.md", "staged.txt", "notes.txt", ".env")}
    output = pre_tool("git reset --hard", world.project, world.environ)
    context = output["hookSpecificOutput"]["additionalContext"]
    snapshot = context.split("`ralph rollbacks restore ")[1].split("`")[0]
    run("git reset --hard && git clean -fdx", world.project, world.environ)  # what the agent then ran, and worse
    assert not os.path.exists(os.path.join(world.project, "staged.txt"))
    proc = subprocess.run([RALPH, "rollbacks", "restore", snapshot], cwd=world.project, capture_output=True, text=True,
                          env=dict(os.environ, **world.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path, data in before.items():
        if path == ".env":
            continue  # ignored and untouched by reset --hard: not saved, so clean -fdx lost it (not a reset's loss)
        assert open(os.path.join(world.project, path), "rb").read() == data, path
    # ralph explain names the snapshot the hook saved for this command
    proc = subprocess.run([RALPH, "explain", "git reset --hard"], cwd=world.project, capture_output=True, text=True,
                          env=dict(os.environ, **world.environ))
    assert proc.returncode == 0, proc.stderr
    assert "rule:     save.git-reset-hard" in proc.stdout and f"ralph rollbacks restore {snapshot}" in proc.stdout


def test_deleted_ignored_files_are_saved_but_not_build_artefacts(tmp_path) -> None:
    world = World(str(tmp_path))
    output = pre_tool("git clean -fdx", world.project, world.environ)
    snapshot = output["hookSpecificOutput"]["additionalContext"].split("`ralph rollbacks restore ")[1].split("`")[0]
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", f"refs/ralph/rollbacks/{snapshot}^3"], cwd=world.project,
                            capture_output=True, text=True, check=True).stdout.split()
    assert "ignored/.env" in listed and "ignored/data/app.db" in listed, listed
    assert not any("node_modules" in p or p.startswith("ignored/build") for p in listed), listed


def test_branch_and_stash_are_kept_with_the_command_that_restores_them(tmp_path) -> None:
    world = World(str(tmp_path))
    feature = subprocess.run(["git", "rev-parse", "feature"], cwd=world.project, capture_output=True, text=True).stdout.strip()
    context = pre_tool("git branch -D feature && git stash clear", world.project, world.environ)["hookSpecificOutput"]["additionalContext"]
    assert f"git branch feature {feature}" in context
    stash_restore = context.split("`git stash store")[1].split("`")[0]
    run("git branch -D feature && git stash clear", world.project, world.environ)
    run(f"git branch feature {feature} && git stash store{stash_restore}", world.project, world.environ)
    assert subprocess.run(["git", "stash", "list"], cwd=world.project, capture_output=True, text=True).stdout.strip()
    proc = subprocess.run([RALPH, "explain", "git branch -D feature && git stash clear"], cwd=world.project, capture_output=True,
                          text=True, env=dict(os.environ, **world.environ))
    assert f"git branch feature {feature}" in proc.stdout, proc.stdout


def test_a_save_that_cannot_finish_in_time_denies_and_leaves_no_snapshot(tmp_path, monkeypatch) -> None:
    from ralph.claude import bash_save
    from ralph.claude.protocol import HookCall

    world = World(str(tmp_path))

    def slow_capture(repo: object, protect: object = None) -> None:
        import time

        time.sleep(30)  # a huge repository: interrupted by the time limit

    monkeypatch.setattr(bash_save, "capture", slow_capture)
    payload = load_payload("PreToolUse_Bash", world.project)
    payload.update(cwd=world.project, tool_input={"command": "rm -rf src"})
    call = HookCall("PreToolUse", payload, dict(os.environ, **world.environ))
    verdict = judge_command("rm -rf src", cwd=world.project)
    outcome = bash_save.save_then_allow(call, "rm -rf src", verdict, GuardPolicy(save_seconds=0.2))
    assert outcome.decision == "deny" and "longer than" in outcome.reason and "git commit" in outcome.reason
    refs = subprocess.run(["git", "for-each-ref", "refs/ralph/"], cwd=world.project, capture_output=True, text=True).stdout
    assert refs == ""


def test_without_a_repository_project_work_cannot_be_saved_and_is_denied(tmp_path) -> None:
    project = tmp_path / "plain"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("x = 1\n")
    output = pre_tool("rm -rf src", str(project), {"HOME": str(tmp_path / "home")})
    reason = output["hookSpecificOutput"]["permissionDecisionReason"]
    assert "could not save" in reason and "git" in reason
    assert pre_tool("rm -rf node_modules build", str(project), {"HOME": str(tmp_path / "home")}) == {}


def test_ordinary_commands_run_no_git_and_load_no_saver(world: World) -> None:
    """The common case costs nothing: the pure judgement says what needs
    saving, and only then does the hook load the saver (and git)."""
    code = ("import json, os, sys\n"
            "from ralph.claude import dispatch\n"
            "for command in json.loads(sys.argv[1]):\n"
            "    payload = {'session_id': 's', 'cwd': sys.argv[2], 'hook_event_name': 'PreToolUse', 'tool_name': 'Bash',\n"
            "               'tool_input': {'command': command}}\n"
            "    outcome, call, _, _ = dispatch.dispatch('PreToolUse', json.dumps(payload).encode())\n"
            "    assert outcome.output == {}, (command, outcome.output)\n"
            "print(sorted(m for m in ('ralph.claude.bash_save', 'ralph.rollback.git', 'subprocess') if m in sys.modules))\n")
    commands = ["ls -la", "rm -rf build dist node_modules", "echo hi > new.txt", "cat README.md | wc -l", "git status",
                "find . -name '*.pyc' -delete", "d=$(mktemp -d) && rm -rf \"$d\"", "npm test", "make lint", "pytest -q"]
    env = dict(os.environ, **world.environ)
    env.pop("CLAUDE_PROJECT_DIR", None)
    out = subprocess.run([sys.executable, "-c", code, json.dumps(commands), world.project], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


# ---- the [guard] switches ----


FAMILY_SAMPLES = {
    "destroy_outside": ("rm -rf ~/notes", "allow.config-destroy-outside"),
    "destroy_devices": ("dd if=/dev/zero of=/dev/sda", "allow.config-destroy-devices"),
    "destroy_permissions": ("chmod -R 777 /etc", "allow.config-destroy-permissions"),
    "destroy_databases": ("psql -c 'DROP DATABASE prod'", "allow.config-destroy-databases"),
    "save_before_destroying": ("git reset --hard", "allow.config-save-before-destroying"),
}


@pytest.mark.parametrize("family", sorted(FAMILY_SAMPLES))
def test_each_family_is_on_by_default_and_switchable(world: World, family: str) -> None:
    command, rule = FAMILY_SAMPLES[family]
    assert family in FAMILIES
    assert state(world.judge(command)) != "allow"
    off = GuardPolicy(families={family: False})
    from ralph.claude.bash_guard import surroundings

    verdict = judge_command(command, off, cwd=world.project, around=surroundings(world.project, world.project, world.environ))
    assert state(verdict) == "allow" and verdict.rule_id == rule, verdict
    assert judge_command("git push", off).blocked


def test_task_runners_switch_and_the_config_through_pre_tool(tmp_path) -> None:
    world = World(str(tmp_path))
    write_case_files(world.project, {"Makefile": "test:\n\tgit push origin main\n"})
    assert pre_tool("make test", world.project, world.environ)["hookSpecificOutput"]["permissionDecision"] == "deny"
    with open(os.path.join(world.project, "ralph.toml"), "w") as f:
        f.write("[guard]\ntask_runners = false\nsave_before_destroying = false\n")
    assert pre_tool("make test", world.project, world.environ) == {}
    assert pre_tool("git reset --hard", world.project, world.environ) == {}
    assert pre_tool("rm -rf ~/notes", world.project, world.environ)["hookSpecificOutput"]["permissionDecision"] == "deny"
    with open(os.path.join(hook_state_dir(world.project), "logs", "hooks.jsonl")) as f:
        assert json.loads(f.readlines()[-1])["rule_id"] == "destroy.home"


# ---- task runner files the guard cannot follow ----


def test_an_unreadable_runner_file_fails_closed_only_when_it_mentions_push(world: World) -> None:
    anchored = "version: '3'\nx: &cmds\n  - echo hi\ntasks:\n  default:\n    cmds: *cmds\n"
    quiet = world.judge("task", {"Taskfile.yml": anchored})
    assert not quiet.blocked
    loud = world.judge("task", {"Taskfile.yml": anchored + "  ship:\n    cmds:\n      - git push origin main\n"})
    assert loud.blocked and loud.rule_id == "fail-closed.runner-file"
    assert "plain commands" in loud.reason


def test_project_code_that_only_mentions_push_is_not_blocked(world: World) -> None:
    """Tests on disk full of `git push` strings (a git tool's own test suite)
    are judged by what they hand to a process API, not by their words."""
    files = {"tests/test_cli.py": "import subprocess\n\ndef test_help(tmp_path):\n    out = subprocess.run(['tool', '--help'], capture_output=True)\n"
                                  "    assert 'git push' in 'tool wraps git push and git merge'\n",
             "tests/conftest.py": "import base64, os\nDATA = b'\\x00\\x01'\n"}
    assert state(world.judge("python -m pytest -q tests", files)) == "allow"
    files["tests/test_cli.py"] += "\ndef test_ship():\n    cmd = ['git', 'push', 'origin', 'main']\n    subprocess.run(cmd)\n"
    assert world.judge("python -m pytest -q tests", files).rule_id == "git.push"


# ---- the index reader ----


@pytest.mark.parametrize("version", [2, 3, 4])
def test_index_reader_agrees_with_git_ls_files(tmp_path, version: int) -> None:
    world = World(str(tmp_path))
    subprocess.run(["git", "update-index", "--index-version", str(version)], cwd=world.project, check=True)
    if version == 3:
        subprocess.run(["git", "update-index", "--skip-worktree", "docs/guide.md"], cwd=world.project, check=True)
    index = open(os.path.join(world.project, ".git", "index"), "rb").read()
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=world.project, capture_output=True, check=True).stdout.split(b"\0")
    tracked = [p for p in tracked if p]
    assert tracked and all(index_has(index, path) for path in tracked)
    for other in (b"notes.txt", b".env", b"src", b"lib/util.py", b"README", b"src/app.p", b"node_modules/pkg/index.js"):
        assert not index_has(index, other), other


def test_fixture_files_are_all_used() -> None:
    on_disk = {os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(FIXTURES, "bash", "*", "*.jsonl"))}
    from .test_guard import CATEGORIES as PUSH_CATEGORIES

    assert on_disk == set(PUSH_CATEGORIES) | set(CATEGORIES), on_disk
