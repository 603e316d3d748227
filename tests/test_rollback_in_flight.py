"""Nothing edits while a rollback runs (issue 36, problem 3): while a
rollback or restore holds `<git dir>/ralph-rollback.lock`, PreToolUse denies
Write, Edit, MultiEdit, NotebookEdit and every Bash command or skill shell
line that is not plainly read-only, saying what runs and for how long; once
it ends they run again. The trial: a real detached rollback of a repository
with many changed files against a stand-in agent that keeps calling
`ralph pre-tool` and edits only when allowed; no byte is lost. Waits count
polls of an observable event, never measure time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ralph.state.rollback_lock import LOCK_NAME, holder
from ralph.rollback.lock import wait_until_free
from ralph.rollback.snapshots import list_snapshots
from ralph.rules.guard.programs.fast_path import GUARDED_PROGRAMS, READ_ONLY_PROGRAMS, plainly_read_only
from tests.conftest import hold_loop_lock, load_payload, run_hook
from tests.test_rollback import git, head, make_repo, write

POLL = 0.05
MAX_POLLS = 2400  # a cap on waiting for an event, not a speed target

LOCK_HOLDER = """
import sys
from ralph.rollback.git import Repo
from ralph.rollback.lock import RollbackLock
with RollbackLock(Repo(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


class HeldLock:
    """A process holding the rollback lock, as a detached rollback does, until stop()."""

    def __init__(self, repo, what: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(repo), what], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline() == "held\n"

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def tool_call(repo, tool: str, tool_input: dict) -> dict:
    base = "PreToolUse_Edit" if tool in ("Edit", "MultiEdit", "NotebookEdit") else f"PreToolUse_{tool}"
    return load_payload(base, str(repo)) | {"tool_name": tool, "tool_input": tool_input}


def skill_line(repo, command: str) -> dict:
    return load_payload("PreSkillShellCommand_Bash", str(repo)) | {"tool_input": {"command": command}}


def writes(repo) -> dict[str, dict]:
    path = os.path.join(str(repo), "notes.txt")
    return {
        "Write": tool_call(repo, "Write", {"file_path": path, "content": "notes\n"}),
        "Edit": tool_call(repo, "Edit", {"file_path": os.path.join(str(repo), "README.md"), "old_string": "hello", "new_string": "hi"}),
        "MultiEdit": tool_call(repo, "MultiEdit", {"file_path": os.path.join(str(repo), "README.md"),
                                                   "edits": [{"old_string": "hello", "new_string": "hi"}]}),
        "NotebookEdit": tool_call(repo, "NotebookEdit", {"notebook_path": os.path.join(str(repo), "n.ipynb"), "new_source": "x = 1"}),
        "Bash touch": tool_call(repo, "Bash", {"command": "touch notes.txt"}),
        "Bash npm": tool_call(repo, "Bash", {"command": "npm test"}),
        "Bash redirect": tool_call(repo, "Bash", {"command": "echo hi > notes.txt"}),
        "Bash sort -o": tool_call(repo, "Bash", {"command": "sort -o README.md README.md"}),
        "Bash git status": tool_call(repo, "Bash", {"command": "git status"}),
    }


READS = ("ls -la src", "cat README.md", "grep -rn hello src", "sleep 1", "wc -l README.md")


def test_only_plain_commands_of_reading_programs_count_as_read_only():
    for command in READS + ("cat src/app.py", "diff README.md src/app.py", "pwd"):
        assert plainly_read_only(command), command
    for command in ("touch a", "sort -o README.md README.md", "uniq a b", "tree -o out", "git status", "cat a > b",
                    "cat $(rm -rf src)", "ls; rm -rf src", "rm -rf src", "mkdir d", "python -c pass", "ls | tee out",
                    "cargo fmt", "echo hi >> README.md", "CAT README.md", "./ls", "cp a b"):
        assert not plainly_read_only(command), command
    assert not READ_ONLY_PROGRAMS & GUARDED_PROGRAMS


def test_while_a_rollback_holds_the_lock_edits_and_writing_commands_are_denied(tmp_path):
    repo = make_repo(tmp_path)
    held = HeldLock(repo, "a rollback of US-007 (iteration 4), started by a hook")
    try:
        for name, payload in writes(repo).items():
            answer = run_hook("pre-tool", payload, str(repo))
            assert answer.denied, name
            assert "a ralph rollback is under way" in answer.reason and "US-007 (iteration 4)" in answer.reason, answer.reason
            assert f"pid {held.process.pid}" in answer.reason and "s, pid" in answer.reason  # for how long, and who
            assert "Retry in a few seconds" in answer.reason and LOCK_NAME in answer.reason
        for command in ("echo hi > notes.txt", "touch notes.txt"):
            answer = run_hook("skill-shell", skill_line(repo, command), str(repo))
            assert answer.denied and "a ralph rollback is under way" in answer.reason, (command, answer.output)
            assert answer.output["hookSpecificOutput"]["hookEventName"] == "PreSkillShellCommand"
        for command in READS:  # reading is allowed meanwhile
            assert not run_hook("pre-tool", tool_call(repo, "Bash", {"command": command}), str(repo)).denied, command
            assert not run_hook("skill-shell", skill_line(repo, command), str(repo)).denied, command
        assert not (repo / "notes.txt").exists()
    finally:
        held.stop()
    # released: the same calls are judged as usual again (no read-before-edit
    # on a new file, no guard objection to these commands)
    for name in ("Write", "NotebookEdit", "Bash touch", "Bash redirect", "Bash git status"):
        answer = run_hook("pre-tool", writes(repo)[name], str(repo))
        assert not answer.denied, (name, answer.reason)


def test_a_restore_is_named_as_one(tmp_path):
    repo = make_repo(tmp_path)
    held = HeldLock(repo, "a restore of 20261128T101500Z-1a2b3c4")
    try:
        answer = run_hook("pre-tool", writes(repo)["Write"], str(repo))
        assert answer.denied and "a ralph restore is under way" in answer.reason and "20261128T101500Z-1a2b3c4" in answer.reason
    finally:
        held.stop()


def test_in_a_linked_worktree_its_own_rollback_counts(tmp_path):
    # a worktree's rollback locks the worktree's git dir (.git/worktrees/<name>),
    # which the hook finds through the worktree's `.git` file
    repo = make_repo(tmp_path)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    held = HeldLock(linked, "a rollback of US-002 (iteration 1)")
    try:
        answer = run_hook("pre-tool", writes(linked)["Write"], str(linked))
        assert answer.denied and "US-002 (iteration 1)" in answer.reason
        assert not run_hook("pre-tool", writes(repo)["Write"], str(repo)).denied  # the main tree is not being reset
    finally:
        held.stop()


def test_a_lock_file_nobody_holds_allows_everything(tmp_path):
    # the file may outlive its holder (one killed between taking the lock and
    # removing it): the flock probe, not the file, decides
    repo = make_repo(tmp_path)
    write(repo, f".git/{LOCK_NAME}", json.dumps({"pid": 1, "what": "a rollback of US-001 (iteration 1)"}) + "\n")
    assert holder(str(repo / ".git")) is None
    for name in ("Write", "Bash touch"):
        assert not run_hook("pre-tool", writes(repo)[name], str(repo)).denied, name


def test_an_unnamed_holder_is_still_a_rollback(tmp_path):
    # a holder that has not written its name yet (or could not: a full disk)
    repo = make_repo(tmp_path)
    import fcntl

    fd = os.open(str(repo / ".git" / LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        named, seconds = holder(str(repo / ".git"))
        assert named == {} and seconds >= 0
        answer = run_hook("pre-tool", writes(repo)["Write"], str(repo))
        assert answer.denied and "a ralph rollback is under way in this repository (for " in answer.reason
    finally:
        os.close(fd)


# ---- the trial: a real detached rollback against an editing agent ----

FILES = int(os.environ.get("RALPH_TRIAL_FILES", "3000"))
CHANGED = int(os.environ.get("RALPH_TRIAL_CHANGED", "1000"))


def big_repo(tmp_path):
    """FILES tracked files, a run whose loop is alive and rolls back at once,
    and a gate: slow.txt's smudge filter, the first time the reset writes it,
    says so (`reached`) and waits for `release`, so the agent's calls surely
    fall while the detached rollback is resetting the tree."""
    repo = make_repo(tmp_path)
    for i in range(FILES):
        write(repo, f"src/m{i // 500}/f{i:05d}.txt", f"file {i}\n")
    gate = tmp_path / "gate"
    gate.mkdir()
    write(repo, ".gitattributes", "slow.txt filter=gate\n")
    git(repo, "config", "filter.gate.clean", "cat")
    git(repo, "config", "filter.gate.smudge",
        f"sh -c 'if [ ! -e {gate}/reached ]; then touch {gate}/reached; while [ ! -e {gate}/release ]; do sleep 0.05; done; fi; cat'")
    write(repo, "slow.txt", "checkpoint\n")
    write(repo, "ralph.toml", '[rollback]\npolicy = "immediate"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "checkpoint")
    checkpoint = head(repo)
    run = {"version": 1, "run_id": "run-9", "status": "running", "iteration": 2, "stage": "build", "finish": None,
           "story": {"id": "US-009", "title": "t", "criteria": [], "source": ".ralph/plan.md"},
           "checkpoint": checkpoint, "started": "2026-11-28T00:00:00Z", "pid": 1}
    write(repo, ".ralph/run.json", json.dumps(run))
    hold_loop_lock(str(repo / ".ralph"))
    for i in range(0, CHANGED):
        write(repo, f"src/m{i // 500}/f{i:05d}.txt", f"file {i}\nchanged by the iteration\n")
    write(repo, "slow.txt", "changed by the iteration\n")
    return repo, checkpoint, gate


class Agent:
    """Keeps calling `ralph pre-tool` (and `post-tool` for its reads) and
    does what it asked for only when allowed; remembers every byte it wrote."""

    def __init__(self, repo) -> None:
        self.repo = repo
        self.attempt = 0
        self.made: list[tuple[str, str]] = []  # (path, line) of every edit it made
        self.denied: dict[str, int] = {"Edit": 0, "Write": 0, "Bash": 0}

    def edit_once(self) -> bool:
        """The next edit in turn (Edit a tracked file, Write a new one, append
        with Bash); False when the hook denied it (not made: the agent goes on to the next)."""
        n = self.attempt
        self.attempt += 1
        kind = ("Edit", "Write", "Bash")[n % 3]
        root = str(self.repo)
        if kind == "Edit":
            rel = f"src/m0/f{n % FILES:05d}.txt"
            path = os.path.join(root, rel)
            with open(path, encoding="utf-8") as f:
                current = f.read()
            read = load_payload("PostToolUse_Read", root)
            read["tool_input"] = {"file_path": path}
            read["tool_response"]["file"].update(filePath=path, content=current)
            run_hook("post-tool", read, root)
            line = f"agent edit {n}\n"
            payload = tool_call(self.repo, "Edit", {"file_path": path, "old_string": current, "new_string": current + line})
        elif kind == "Write":
            rel = f"agent/new{n:04d}.txt"
            line = f"agent write {n}\n"
            payload = tool_call(self.repo, "Write", {"file_path": os.path.join(root, rel), "content": line})
        else:
            rel = f"src/m1/f{500 + n % max(1, FILES - 500):05d}.txt"
            line = f"agent bash {n}\n"
            payload = tool_call(self.repo, "Bash", {"command": f"printf 'agent bash {n}\\n' >> {rel}"})
        answer = run_hook("pre-tool", payload, root)
        if answer.denied:
            assert kind != "Bash" or "rollback is under way" in answer.reason, answer.reason
            self.denied[kind] += 1
            return False
        if kind == "Bash":
            subprocess.run(["bash", "-c", payload["tool_input"]["command"]], cwd=root, check=True)
        else:
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "a", encoding="utf-8") as f:
                f.write(line)
        self.made.append((rel, line))
        return True


def test_trial_an_agent_that_keeps_editing_during_a_background_rollback_loses_nothing(tmp_path):
    repo, checkpoint, gate = big_repo(tmp_path)
    agent = Agent(repo)
    for _ in range(6):
        assert agent.edit_once()
    before = list(agent.made)
    # the agent's test run fails: its hook rolls back, in the background (waiting 0 s)
    payload = load_payload("PostToolUseFailure_Bash_exit3", str(repo))
    payload["tool_input"]["command"] = "python -m pytest -q"
    payload["error"] = "Exit code 1\nFAILED tests/test_app.py::test_f - assert 2 == 1\n1 failed in 0.01s\n"
    answer = run_hook("post-tool-failure", payload, str(repo), env={"RALPH_ROLLBACK_WAIT_SECONDS": "0"})
    assert "goes on in the background" in answer.reason, answer.reason
    # the agent goes on editing; the reset waits at the gate while the agent
    # tries each kind of edit three times, then goes on while it keeps trying
    during = tries_at_gate = 0
    for _ in range(MAX_POLLS):
        if (gate / "reached").exists() and not (gate / "release").exists():
            if tries_at_gate == 9:
                (gate / "release").touch()
            tries_at_gate += 1
        if agent.edit_once():
            if (gate / "release").exists():
                break
        else:
            during += 1
        time.sleep(POLL)
    else:
        raise AssertionError(f"the agent was never allowed again: {agent.denied}")
    for _ in range(5):  # and a few more once it is over
        assert agent.edit_once()
    assert wait_until_free(str(repo / ".git")) == ""
    assert head(repo) == checkpoint
    # 0 bytes lost: every edit made before the rollback is in its ref, every one after in the tree
    [saved] = list_snapshots(str(repo))
    after = agent.made[len(before):]
    for rel, line in before:
        assert line in git(repo, "show", f"{saved.ref}:{rel}").decode(), (rel, line)
    for rel, line in after:
        with open(os.path.join(str(repo), rel), encoding="utf-8") as f:
            assert line in f.read(), (rel, line)
    print("trial:", FILES, CHANGED, agent.denied, during, len(before), len(after))
    assert all(agent.denied.values()) and during >= 9 and len(after) >= 6, agent.denied
