"""A person's git state is theirs: ralph-loop refuses to start on their
rebase, merge, cherry-pick, revert, bisect or `git am` in progress (and
leaves it as it was), and `--allow-dirty` sets their uncommitted changes
aside under their own ref for the run and puts them back at its end: never
in a rollback ref, never in the agent's commit. Real loops, real git."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.loop_support import GIT_ID, Project, git

PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"


def run_git(root: str, *args: str, ok: tuple[int, ...] = (0,), env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, env=dict(os.environ, **GIT_ID, **(env or {})))
    assert done.returncode in ok, done.stdout + done.stderr
    return done


def history(p: Project) -> None:
    """Two commits on main and a side branch that conflicts with the last one."""
    p.write("a.txt", "one\n")
    p.commit("a one")
    p.write("a.txt", "two\n")
    p.commit("a two")
    run_git(p.root, "branch", "side", "HEAD~1")
    run_git(p.root, "checkout", "-q", "side")
    p.write("a.txt", "side\n")
    p.commit("a side")
    run_git(p.root, "checkout", "-q", "main")


def paused_rebase(p: Project) -> str:
    run_git(p.root, "rebase", "-i", "HEAD~2", env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})
    return "rebase-merge"


def conflicted_merge(p: Project) -> str:
    run_git(p.root, "merge", "side", ok=(1,))
    return "MERGE_HEAD"


def conflicted_cherry_pick(p: Project) -> str:
    run_git(p.root, "cherry-pick", "side", ok=(1,))
    return "CHERRY_PICK_HEAD"


def conflicted_revert(p: Project) -> str:
    run_git(p.root, "revert", "--no-edit", "HEAD~1", ok=(1,))
    return "REVERT_HEAD"


def bisect(p: Project) -> str:
    run_git(p.root, "bisect", "start", "HEAD", "HEAD~2")
    return "BISECT_LOG"


def git_am(p: Project) -> str:
    patch = run_git(p.root, "format-patch", "--stdout", "-1", "side").stdout
    done = subprocess.run(["git", "-C", p.root, "am", "-3"], input=patch, capture_output=True, text=True, env=dict(os.environ, **GIT_ID))
    assert done.returncode != 0, done.stdout + done.stderr
    return "rebase-apply"


@pytest.mark.parametrize("make, finish, abort", [
    (paused_rebase, "git rebase --continue", "git rebase --abort"),
    (conflicted_merge, "git commit", "git merge --abort"),
    (conflicted_cherry_pick, "git cherry-pick --continue", "git cherry-pick --abort"),
    (conflicted_revert, "git revert --continue", "git revert --abort"),
    (bisect, "git bisect good / git bisect bad", "git bisect reset"),
    (git_am, "git am --continue", "git am --abort"),
], ids=["rebase", "merge", "cherry-pick", "revert", "bisect", "am"])
@pytest.mark.parametrize("allow_dirty", [False, True], ids=["", "allow-dirty"])
def test_the_loop_refuses_to_start_on_a_git_operation_in_progress(tmp_path, make, finish, abort, allow_dirty) -> None:
    p = Project(tmp_path, PLAN2)
    history(p)
    left = make(p)
    git_dir = os.path.join(p.root, ".git")
    before = {name: os.path.exists(os.path.join(git_dir, name)) for name in (left, "ORIG_HEAD")}
    head, status = git(p.root, "rev-parse", "HEAD"), git(p.root, "status", "--porcelain", "--", ".", ":!.ralph")
    p.script(default=[{"write": "work.txt", "text": "w\n"}, {"mark": "done"}])
    result = p.run_loop(*(["--allow-dirty"] if allow_dirty else []))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "is in progress in this repository" in result.stdout and f"`{finish}" in result.stdout and f"`{abort}`" in result.stdout
    assert p.invocations() == 0
    assert {name: os.path.exists(os.path.join(git_dir, name)) for name in before} == before
    assert (git(p.root, "rev-parse", "HEAD"), git(p.root, "status", "--porcelain", "--", ".", ":!.ralph")) == (head, status)
    assert not os.path.exists(os.path.join(p.root, "work.txt"))


def test_a_paused_rebase_can_go_on_after_the_refusal(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    history(p)
    paused_rebase(p)
    result = p.run_loop()
    assert result.returncode == 1 and "a rebase is in progress" in result.stdout, result.stdout
    assert os.path.isdir(os.path.join(p.root, ".git", "rebase-merge"))
    run_git(p.root, "rebase", "--continue")
    assert git(p.root, "log", "--format=%s").splitlines()[:2] == ["a two", "a one"]


# ---- --allow-dirty ----


def persons_edits(p: Project) -> dict[str, bytes]:
    p.write("README.md", "hello\nthe person's edit\n")
    p.write("notes/person.txt", "the person's new file\n")
    p.write("staged.txt", "staged by the person\n")
    run_git(p.root, "add", "staged.txt")
    return {"README.md": b"hello\nthe person's edit\n", "notes/person.txt": b"the person's new file\n",
            "staged.txt": b"staged by the person\n"}


def read_bytes(p: Project, rel: str) -> bytes:
    with open(os.path.join(p.root, rel), "rb") as f:
        return f.read()


def refs(root: str, prefix: str) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname)", prefix).split()


def test_allow_dirty_sets_the_persons_changes_aside_and_puts_them_back(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    edits = persons_edits(p)
    status_before = git(p.root, "status", "--porcelain", "--", ".", ":!.ralph")
    # US-001 is committed; US-002 fails its verify command and is rolled back
    p.script(runs=[[{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}],
                   [{"write": "bad.txt", "text": "bad\n"}, {"mark": "done"}]])
    result = p.run_loop("--allow-dirty", "--max-iterations", "2", "--verify", "test ! -f bad.txt")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "set aside in refs/ralph/set-aside/" in result.stdout and "put back your 3 uncommitted change(s)" in result.stdout
    # back as they were, staged as they were
    assert {rel: read_bytes(p, rel) for rel in edits} == edits
    assert git(p.root, "status", "--porcelain", "--", ".", ":!.ralph", ":!greeting.txt") == status_before
    # not in the agent's commit
    [commit] = [line.split()[0] for line in git(p.root, "log", "--format=%H %s").splitlines() if "feat(US-001)" in line]
    assert set(git(p.root, "show", "--name-only", "--format=", commit).split()).isdisjoint(edits)
    assert git(p.root, "show", f"{commit}:README.md") == "hello\n"
    # not in any rollback ref
    [rollback] = refs(p.root, "refs/ralph/rollbacks/")
    files = git(p.root, "ls-tree", "-r", "--name-only", rollback).split()
    assert "bad.txt" in files and "notes/person.txt" not in files and "staged.txt" not in files
    assert git(p.root, "show", f"{rollback}:README.md") == "hello\n"
    # said in the events; the ref is gone once everything is back
    [aside] = p.events("set_aside")
    [back] = p.events("set_aside_restored")
    assert aside["count"] == 3 and sorted(back["restored"]) == sorted(edits) and back["kept"] == []
    assert refs(p.root, "refs/ralph/set-aside/") == []


def test_a_file_the_run_changed_too_keeps_the_runs_version_and_the_persons_stays_in_the_ref(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    edits = persons_edits(p)
    p.script(runs=[[{"write": "README.md", "text": "hello\nthe agent's edit\n"}, {"mark": "done"}]])
    result = p.run_loop("--allow-dirty", "--once")
    assert result.returncode == 3, result.stdout + result.stderr
    assert read_bytes(p, "README.md") == b"hello\nthe agent's edit\n"
    assert read_bytes(p, "notes/person.txt") == edits["notes/person.txt"] and read_bytes(p, "staged.txt") == edits["staged.txt"]
    [ref] = refs(p.root, "refs/ralph/set-aside/")
    assert git(p.root, "show", f"{ref}:README.md") == "hello\nthe person's edit\n"
    assert "1 file(s) the run changed too keep the run's version" in result.stdout and ref in result.stdout
    [back] = p.events("set_aside_restored")
    assert back["kept"] == ["README.md"] and back["ref_kept"] is True
    # the command the message gives brings the person's edit over
    shown = f"git diff {ref}^ {ref} -- <file> | git apply -3"
    assert shown in result.stdout
    subprocess.run(shown.replace("<file>", "README.md"), shell=True, cwd=p.root, capture_output=True, text=True)
    merged = read_bytes(p, "README.md").decode()
    assert "the person's edit" in merged and "the agent's edit" in merged  # both, for the person to settle


def test_changes_set_aside_by_a_killed_run_are_kept_and_named_at_the_next_start(tmp_path) -> None:
    from tests.test_loop_crash import logged_pids, wait_for

    p = Project(tmp_path, PLAN2)
    edits = persons_edits(p)
    pids = os.path.join(p.agent_dir, "pids")
    p.script(default=[{"log_pids": pids}, {"sleep": 300}])
    loop = p.start_loop("--allow-dirty")
    try:
        wait_for(lambda: len(logged_pids(pids)) == 2, "the agent started")
        loop.kill()
    finally:
        loop.wait()
        loop.communicate()
    [ref] = refs(p.root, "refs/ralph/set-aside/")
    for rel, data in edits.items():
        assert git(p.root, "show", f"{ref}:{rel}").encode() == data
    p.script(default=[{"exit": 1}])
    result = p.run_loop("--once", "--allow-dirty")
    assert f"warning: {ref} holds uncommitted changes of yours" in result.stdout, result.stdout
    assert f"git diff {ref}^ {ref} -- . ':!.ralph' | git apply -3" in result.stdout
    subprocess.run(f"git diff {ref}^ {ref} -- . ':!.ralph' | git apply -3", shell=True, cwd=p.root, check=True)
    assert {rel: read_bytes(p, rel) for rel in edits} == edits  # the command given brings them back


def test_the_next_run_does_not_take_the_changes_put_back_for_the_runs_own(tmp_path) -> None:
    # the run records what it leaves in the tree (its unfinished work, accepted by
    # the next run as its own); the person's changes put back are not in that record
    p = Project(tmp_path, PLAN2)
    persons_edits(p)
    p.script(runs=[[{"write": "greeting.txt", "text": "hello\n"}, {"mark": "done"}]])
    first = p.run_loop("--allow-dirty", "--once")
    assert first.returncode == 3, first.stdout + first.stderr
    second = p.run_loop("--once")
    assert second.returncode == 1 and "uncommitted change(s) outside .ralph/" in second.stdout, second.stdout
    assert p.invocations() == 1
