"""`ralph init` on the newcomer's path: the ralph.toml it writes shows the
defaults the schema declares, and what it creates never makes the first
`ralph-loop` refuse nor ends up in the agent's first commit (init commits
it as a commit of its own, or prints the one command that does)."""
from __future__ import annotations

import os
import re
import subprocess
import tomllib

import pytest

from ralph.commands import init
from ralph.config.registry import table
from tests.conftest import RALPH
from tests.loop_support import Project, git

# what init creates (FILES and .ralph/.gitignore), as git names them
INIT_FILES = {".ralph/.gitignore", *(rel for rel, _, _ in init.FILES)}
# the fake agent's work on init's own example story (README section), then the tick
DO_INIT_STORY = [{"append": "README.md", "text": "\n## Running the tests\n\n    python -m pytest -q\n"}, {"mark": "done"}]


def rendered() -> str:
    return init.config_text().decode("utf-8")


def shown_defaults(text: str) -> list[tuple[str, str, object]]:
    """(table, key, value) of every key the file shows as a default: the
    commented-out `# key = value` and `# key: unset by default` lines of its
    real (uncommented) tables. Lines of the commented [[hooks.*]] examples
    are examples, not defaults."""
    found: list[tuple[str, str, object]] = []
    current = None
    for line in text.splitlines():
        header = re.match(r"^\[([a-z_.]+)\]\s*(#.*)?$", line)
        if header:
            current = header.group(1)
            continue
        if line.startswith("# [") or current is None:
            current = None if line.startswith("# [") else current
            continue
        unset = re.match(r"^# ([a-z_]+): unset by default$", line)
        if unset:
            found.append((current, unset.group(1), None))
            continue
        value = re.match(r"^# ([a-z_]+ = .*)$", line)
        if value:
            [(key, parsed)] = tomllib.loads(value.group(1)).items()
            found.append((current, key, parsed))
    return found


def normal(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def test_every_default_the_file_shows_is_the_schema_default() -> None:
    text = rendered()
    shown = shown_defaults(text)
    tables = {name for name, _, _ in shown}
    assert tables == {"loop", "handoff", "hooks"}
    assert ("loop", "verify_command", None) in shown  # not "python -m pytest -q": there is no default verify command
    assert ("loop", "agent_command", "claude -p --dangerously-skip-permissions") in shown
    for name, key, value in shown:
        assert normal(table(name).keys[key].default) == normal(value), (name, key)
    # every [hooks] setting is shown; no directive is left unrendered
    assert {key for name, key, _ in shown if name == "hooks"} == set(table("hooks").keys)
    assert "#default" not in text
    # the examples say nothing is a default: only the real tables show defaults
    examples = text[text.index("# [[hooks."):]
    assert "default" not in examples


def test_the_file_follows_the_schema_not_a_typed_copy(monkeypatch) -> None:
    declared = table("loop").keys["max_iterations"]
    monkeypatch.setattr(declared, "default", 17)
    assert ("loop", "max_iterations", 17) in shown_defaults(rendered())
    with pytest.raises(KeyError, match="no such key"):
        init.render_config("[loop]\n#default loop.no_such_key\n")


def test_the_written_file_is_valid_and_what_the_loop_reads(tmp_path) -> None:
    """ralph.toml as init writes it passes the loop's whole-file check, and
    `ralph-loop --dry-run` reads it: no verify command, the packaged agent."""
    from ralph.loop.config_check import check_config

    p = Project(tmp_path, None)
    done = subprocess.run([RALPH, "init", "--commit"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert done.returncode == 0, done.stdout + done.stderr
    with open(os.path.join(p.root, "ralph.toml"), encoding="utf-8") as f:
        assert f.read() == rendered()
    check_config(p.root)
    dry = subprocess.run([*p.loop_argv("--dry-run", agent=None)], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "verify: (none configured)" in dry.stdout and "agent: claude -p --dangerously-skip-permissions" in dry.stdout


def first_run_commit(p: Project) -> list[tuple[str, str]]:
    """Run the loop on init's own example story with the fake agent; the
    (status, path) of the agent's commit."""
    p.script(default=DO_INIT_STORY)
    result = p.run_loop("--max-iterations", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.log()[0] == "feat(US-001): Add a README section that says how to run the tests"
    lines = git(p.root, "show", "--name-status", "--format=", "HEAD").splitlines()
    return [tuple(line.split("\t", 1)) for line in lines]  # type: ignore[misc]


def assert_holds_nothing_of_init(changes: list[tuple[str, str]]) -> None:
    """The agent's commit: its work, the plan's tick and the progress notes;
    no file init created is added by it."""
    assert ("M", "README.md") in changes and ("M", ".ralph/plan.md") in changes
    added_by_agent_commit = {path for status, path in changes if status == "A"}
    assert added_by_agent_commit.isdisjoint(INIT_FILES), changes
    assert {path for _, path in changes} <= {"README.md", ".ralph/plan.md", ".ralph/progress.md"}, changes


def test_init_commit_then_the_first_run_starts_and_its_commit_holds_nothing_of_init(tmp_path) -> None:
    p = Project(tmp_path, None)
    done = subprocess.run([RALPH, "init", "--commit"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "committed the 8 file(s)" in done.stdout
    assert p.log() == [init.COMMIT_MESSAGE, "initial"]
    committed = set(git(p.root, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == INIT_FILES
    assert git(p.root, "status", "--porcelain", "--untracked-files=all") == ""
    dry = subprocess.run(p.loop_argv("--dry-run"), cwd=p.root, capture_output=True, text=True, env=p.env())
    assert dry.returncode == 0 and "next story: US-001" in dry.stdout, dry.stdout + dry.stderr
    assert_holds_nothing_of_init(first_run_commit(p))


def test_without_commit_init_prints_the_one_command_that_makes_the_first_run_start(tmp_path) -> None:
    """Not on a terminal and without --commit, nothing is committed: the
    first run refuses the new ralph.toml, as init says; the command init
    printed, run as printed, fixes that and nothing of init reaches the
    agent's commit."""
    p = Project(tmp_path, None)
    done = subprocess.run([RALPH, "init"], cwd=p.root, capture_output=True, text=True, env=p.env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert p.log() == ["initial"]
    lines = done.stdout.splitlines()
    command = lines[lines.index(next(line for line in lines if line.startswith("ralph-loop refuses"))) + 1].strip()
    assert command.startswith("git add -- ") and "&& git commit -m " in command
    p.script(default=DO_INIT_STORY)
    refused = p.run_loop("--max-iterations", "1")
    assert refused.returncode != 0 and "ralph.toml" in refused.stderr + refused.stdout
    subprocess.run(["sh", "-c", command], cwd=p.root, check=True, env=p.env(), capture_output=True)
    assert p.log()[0] == init.COMMIT_MESSAGE
    assert set(git(p.root, "show", "--name-only", "--format=", "HEAD").split()) == INIT_FILES
    assert_holds_nothing_of_init(first_run_commit(p))


def test_init_commit_leaves_the_persons_other_changes_as_they_were(tmp_path) -> None:
    p = Project(tmp_path, None)
    p.write("staged.txt", "mine, staged\n")
    git(p.root, "add", "staged.txt")
    p.write("README.md", "hello\nmine, not staged\n")
    p.write("notes.txt", "mine, untracked\n")
    before = git(p.root, "status", "--porcelain", "--untracked-files=all")
    done = subprocess.run([RALPH, "init", "--commit"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(git(p.root, "show", "--name-only", "--format=", "HEAD").split()) == INIT_FILES
    assert git(p.root, "status", "--porcelain", "--untracked-files=all") == before
    assert p.read("README.md") == "hello\nmine, not staged\n"
    assert git(p.root, "diff", "--cached", "--name-only").split() == ["staged.txt"]


def test_init_does_not_commit_inside_a_merge_and_says_why(tmp_path) -> None:
    p = Project(tmp_path, None)
    git(p.root, "checkout", "-q", "-b", "other")
    p.write("README.md", "other\n")
    p.commit("other")
    git(p.root, "checkout", "-q", "main")
    p.write("README.md", "main\n")
    p.commit("main")
    merge = subprocess.run(["git", "merge", "-q", "other"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert merge.returncode != 0  # a conflict: the merge is in progress
    head = git(p.root, "rev-parse", "HEAD")
    done = subprocess.run([RALPH, "init", "--commit"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert done.returncode == 1
    assert "not committed: a merge is in progress." in done.stdout and "git add -- " in done.stdout
    assert git(p.root, "rev-parse", "HEAD") == head
    assert os.path.exists(os.path.join(p.root, ".git", "MERGE_HEAD"))
    untracked = [line for line in git(p.root, "status", "--porcelain", "--untracked-files=all").splitlines() if line.startswith("??")]
    assert {line[3:] for line in untracked} == INIT_FILES


def test_a_refused_commit_leaves_init_files_untracked_and_shows_gits_message(tmp_path) -> None:
    p = Project(tmp_path, None)
    hook = os.path.join(p.root, ".git", "hooks", "pre-commit")
    with open(hook, "w") as f:
        f.write("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    os.chmod(hook, 0o755)
    done = subprocess.run([RALPH, "init", "--commit"], cwd=p.root, capture_output=True, text=True, env=p.env())
    assert done.returncode == 1
    assert "git could not commit them:" in done.stdout and "lint says no" in done.stdout
    assert p.log() == ["initial"]
    assert git(p.root, "diff", "--cached", "--name-only") == ""  # unstaged again
    assert "git add -- " in done.stdout


def on_a_terminal(p: Project, answer: bytes) -> str:
    """`ralph init` with a terminal for stdin and stdout (a pty), answering
    its question with `answer`; everything it printed."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen([RALPH, "init"], cwd=p.root, env=p.env(), stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen = b""
    answered = False
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"[Y/n]" in seen:
            os.write(master, answer)
            answered = True
    os.close(master)
    assert proc.wait(timeout=60) == 0
    assert answered, seen
    return seen.decode("utf-8", "replace")


@pytest.mark.parametrize("answer, commits", [(b"\n", True), (b"n\n", False)])
def test_on_a_terminal_init_asks_before_it_commits(tmp_path, answer: bytes, commits: bool) -> None:
    p = Project(tmp_path, None)
    said = on_a_terminal(p, answer)
    assert "Commit these 8 file(s) as one commit of their own" in said
    if commits:
        assert p.log() == [init.COMMIT_MESSAGE, "initial"] and "committed the 8 file(s)" in said
    else:
        assert p.log() == ["initial"] and "git add -- " in said
