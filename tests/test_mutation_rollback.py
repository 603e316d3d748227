"""Rollback and restore cases a mutation run of ralph/rollback/capture.py and
restore.py found untested (scripts/mutate.py): what a restore must notice is
not in place (saved ignored files, intent-to-add entries, permission bits),
what it refuses to overwrite, what a rollback leaves and says. Real
repositories, driven through the rollback entry points the hooks and
`ralph rollbacks` use."""
from __future__ import annotations

import os
import stat

import pytest

from ralph.rollback.git import Repo, RollbackError
from ralph.rollback.restore import restore_snapshot, save_and_restore
from ralph.rollback.snapshots import list_snapshots, read_extras
from tests.test_rollback import full_state, git, head, make_repo, tree_state, write


def rolled_back_with_an_ignored_copy(tmp_path):
    """A rollback whose snapshot holds an ignored file in its extras (the
    agent untracked and ignored src/app.py, then edited it)."""
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    git(repo, "rm", "-q", "--cached", "src/app.py")
    with open(repo / ".gitignore", "a") as f:
        f.write("src/app.py\n")
    git(repo, "commit", "-q", "-am", "agent: stop tracking app.py")
    write(repo, "src/app.py", "def f():\n    return 'only copy of this work'\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    return repo, result, before


def test_a_saved_ignored_file_that_went_missing_is_not_in_place(tmp_path):
    repo, result, before = rolled_back_with_an_ignored_copy(tmp_path)
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before
    os.unlink(repo / "src/app.py")  # the only copy of that work, gone again
    again = restore_snapshot(str(repo), result.id)
    assert "already in place" not in again.message, again.message
    assert full_state(repo) == before
    write(repo, "src/app.py", "def f():\n    return 'edited since'\n")  # ignored, and not what was saved
    third = restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before and third.pre_restore is not None  # saved first, then put back
    restore_snapshot(str(repo), third.pre_restore.id)
    assert (repo / "src/app.py").read_text() == "def f():\n    return 'edited since'\n"


def test_lost_intent_to_add_entries_are_not_in_place(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "planned.py", "x = 1\n")
    git(repo, "add", "-N", "planned.py")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    restore_snapshot(str(repo), result.id)
    git(repo, "reset", "-q")  # drops the intent-to-add entry; the file stays, untracked
    assert full_state(repo) != before
    again = restore_snapshot(str(repo), result.id)
    assert "already in place" not in again.message
    assert full_state(repo) == before


def test_permission_bits_changed_after_a_restore_are_not_in_place(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "key.pem", "private\n", 0o600)
    write(repo, "run.sh", "#!/bin/sh\n", 0o700)
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before
    os.chmod(repo / "key.pem", 0o644)
    again = restore_snapshot(str(repo), result.id)
    assert "already in place" not in again.message
    assert stat.S_IMODE(os.stat(repo / "key.pem").st_mode) == 0o600 and full_state(repo) == before
    assert "already in place" in restore_snapshot(str(repo), result.id).message


def test_a_restore_that_was_in_place_changes_nothing_and_saves_nothing(tmp_path):
    repo, result, before = rolled_back_with_an_ignored_copy(tmp_path)
    restore_snapshot(str(repo), result.id)
    snapshots = len(list_snapshots(str(repo)))
    again = restore_snapshot(str(repo), result.id)
    assert again.message == f"{result.id} is already in place; nothing to do" and again.pre_restore is None
    assert full_state(repo) == before and len(list_snapshots(str(repo))) == snapshots


def test_restore_says_what_it_did(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "src/app.py", "committed by the agent\n")
    git(repo, "commit", "-q", "-am", "agent commit")
    agent_head = head(repo)
    write(repo, "notes.txt", "untracked\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.message == f"saved to {result.ref}; tree reset to checkpoint {checkpoint[:12]}"
    assert result.files_changed == 1 and result.saved  # against the agent's commit: notes.txt
    write(repo, "later.txt", "work after the rollback\n")
    restored = restore_snapshot(str(repo), result.id)
    assert restored.id == result.id and restored.moved_head == agent_head
    parts = restored.message.split("; ")
    assert parts[0] == f"restored {result.id} (1 file(s) changed against its base)"
    assert parts[1] == f"HEAD moved to {agent_head[:12]}"
    assert parts[2].startswith(f"your uncommitted work was saved first as {restored.pre_restore.id}")
    assert len(parts) == 3
    # and on top of a HEAD that went elsewhere (forced): HEAD stays, and says so
    git(repo, "checkout", "-q", "-b", "elsewhere", checkpoint)
    write(repo, "other.txt", "x\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-q", "-m", "elsewhere")
    forced = restore_snapshot(str(repo), result.id, force=True)
    assert f"HEAD stays at {head(repo)[:12]}; `git diff` shows the restored changes against it" in forced.message
    assert forced.moved_head == ""


def test_a_rollback_reports_a_checkpoint_that_is_not_a_commit(tmp_path):
    repo = make_repo(tmp_path)
    write(repo, "work.txt", "x\n")
    before = full_state(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}").decode().strip()
    for checkpoint in ("f" * 40, tree):
        result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
        assert not result.saved and not result.restored
        assert result.message == f"checkpoint {checkpoint[:12]} is not a commit in this repository; nothing was saved or reset"
        # the record the hook logs and the loop keeps: nothing saved, nothing changed
        assert result.to_dict() == {"id": "", "ref": "", "sha": "", "message": result.message, "restored": False,
                                    "checkpoint": checkpoint, "files_changed": 0, "saved": False, "pending": False,
                                    "kept": [], "conflicts": []}
    assert full_state(repo) == before and list_snapshots(str(repo)) == []


def test_a_dirty_submodule_is_named_with_what_is_dirty(tmp_path):
    from tests.test_rollback import _add_submodule

    repo = make_repo(tmp_path)
    sub = _add_submodule(tmp_path, repo)
    checkpoint = head(repo)
    write(repo, "work.txt", "x\n")
    write(sub, "README.md", "changed\n")
    write(sub, "new.txt", "untracked\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert "submodule libs/sub (modified content, untracked files)." in result.message
    git(sub, "commit", "-q", "-am", "sub work")
    os.unlink(sub / "new.txt")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert "submodule libs/sub (new commits)." in result.message


def test_emptied_directories_go_and_others_stay(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "new/deep/er/file.txt", "untracked\n")
    write(repo, "src/extra.py", "untracked beside tracked\n")
    write(repo, "build/cache/keep.o", "ignored\n")
    write(repo, "build/new.txt", "ignored too\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert not (repo / "new").exists()  # its files went, and so did the directories they made
    assert (repo / "src/app.py").exists() and not (repo / "src/extra.py").exists()
    assert (repo / "build/cache/keep.o").exists() and (repo / "build/new.txt").exists()


def test_a_restore_refuses_what_it_would_destroy(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "gen/out/a.txt", "the agent's generated file\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    # an ignored file where the snapshot needs a directory
    write(repo, ".git/info/exclude", "gen\n")
    write(repo, "gen", "an ignored file named gen\n")
    with pytest.raises(RollbackError, match=r"gen \(an ignored file where the snapshot has a directory\)"):
        restore_snapshot(str(repo), result.id)
    assert (repo / "gen").read_text() == "an ignored file named gen\n"
    os.unlink(repo / "gen")
    # a directory (of ignored files) where the snapshot has a file
    write(repo, "gen/out/a.txt/inner.log", "ignored, in no snapshot\n")
    with pytest.raises(RollbackError, match=r"gen/out/a.txt \(a directory holding gen/out/a.txt/inner.log, which is in no snapshot\)"):
        restore_snapshot(str(repo), result.id)
    assert (repo / "gen/out/a.txt/inner.log").exists()


def test_restore_replaces_a_directory_of_files_it_saved_first(tmp_path):
    # where the snapshot has a file, the work tree has a directory of
    # untracked files: they are saved (pre-restore), then the file goes back
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "out.txt", "a file in the snapshot\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    write(repo, "out.txt/part1", "newer work\n")
    write(repo, "out.txt/part2", "more newer work\n")
    newer = full_state(repo)
    restored = restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before and restored.pre_restore is not None
    restore_snapshot(str(repo), restored.pre_restore.id)
    assert full_state(repo) == newer


def test_restore_of_an_unborn_branch_snapshot_after_a_first_commit(tmp_path):
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "a.txt", "first\n")
    from ralph.rollback.snapshots import save_snapshot

    snap_id, _, _ = save_snapshot(str(repo), "before the first commit", kind="manual")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "first")
    with pytest.raises(RollbackError, match="in a repository with no commits yet, but HEAD is now"):
        restore_snapshot(str(repo), snap_id)


def test_a_rollback_keeps_a_file_that_changed_while_it_saved(tmp_path):
    # The reset's checkout runs the repository's smudge filter; this one
    # appends to an untracked file, as a process still writing it would. The
    # file changed after it was saved: it is kept, and the message says so.
    repo = make_repo(tmp_path)
    write(repo, ".gitattributes", "*.txt filter=touch\n")
    git(repo, "config", "filter.touch.smudge", f"sh -c 'echo more >> {repo}/busy.log.tmp; cat'")
    git(repo, "config", "filter.touch.clean", "cat")
    write(repo, "tracked.txt", "v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "filtered file")
    checkpoint = head(repo)
    write(repo, "tracked.txt", "v2\n")
    write(repo, "busy.log.tmp", "being written\n")
    write(repo, "done.dat", "finished\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert result.message.endswith("; left 1 file(s) that changed while saving: busy.log.tmp")
    assert (repo / "busy.log.tmp").read_text().startswith("being written\nmore\n")
    assert not (repo / "done.dat").exists() and (repo / "tracked.txt").read_text() == "v1\n"


def test_modes_come_back_on_files_a_rollback_rewrites_without_losing_their_exec_bit(tmp_path):
    repo = make_repo(tmp_path)
    write(repo, "bin/private.sh", "#!/bin/sh\necho v1\n", 0o700)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "private script")
    os.chmod(repo / "bin/private.sh", 0o700)
    checkpoint = head(repo)
    write(repo, "bin/private.sh", "#!/bin/sh\necho v2\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    mode = stat.S_IMODE(os.stat(repo / "bin/private.sh").st_mode)
    assert mode & 0o700 == 0o700 and mode & 0o066 == 0, oct(mode)  # still private, still runnable
    assert (repo / "bin/private.sh").read_text() == "#!/bin/sh\necho v1\n"


def test_an_ignored_symlink_in_the_way_is_saved_and_comes_back(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    git(repo, "rm", "-q", "--cached", "README.md")
    write(repo, ".git/info/exclude", "README.md\n")
    git(repo, "commit", "-q", "-m", "agent: untrack README")
    os.unlink(repo / "README.md")
    os.symlink("src/app.py", repo / "README.md")  # ignored now, and where the checkpoint has a file
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert not os.path.islink(repo / "README.md") and (repo / "README.md").read_text() == "hello\n"
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before and tree_state(repo)[b"README.md"] == ("link", b"src/app.py")


def test_a_change_too_big_for_one_git_call_is_saved_whole(tmp_path):
    # more paths than one hash-object command line holds
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    names = [f"generated/{'deep-directory-name-' * 3}{i:05d}/{'a-rather-long-file-name-' * 2}{i:05d}.txt" for i in range(900)]
    for i, name in enumerate(names):
        write(repo, name, f"file {i}\n")
    assert sum(len(name) + len(str(repo)) + 2 for name in names) > 96 * 1024
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored and result.files_changed == len(names), result.message
    assert not (repo / "generated").exists()
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before


def test_a_repository_with_no_index_yet(tmp_path):
    from ralph.rollback.snapshots import save_snapshot

    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "notes.txt", "untracked, and git has no index file yet\n")
    assert not (repo / ".git" / "index").exists()
    before = full_state(repo)
    snap_id, _, _ = save_snapshot(str(repo), "before", kind="manual")
    assert full_state(repo) == before and not (repo / ".git" / "index").exists()
    os.unlink(repo / "notes.txt")
    restore_snapshot(str(repo), snap_id)
    assert full_state(repo)[0] == before[0]


def test_without_core_filemode_the_index_decides_the_exec_bit(tmp_path):
    repo = make_repo(tmp_path)
    git(repo, "config", "core.fileMode", "false")
    checkpoint = head(repo)
    os.chmod(repo / "README.md", 0o755)  # git is told to ignore this
    write(repo, "README.md", "changed\n")
    write(repo, "new.sh", "#!/bin/sh\n", 0o755)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    modes = {line.split()[3]: line.split()[0] for line in git(repo, "ls-tree", "-r", result.ref).decode().splitlines()}
    assert modes["README.md"] == "100644" and modes["bin/tool.sh"] == "100755" and modes["new.sh"] == "100644"


def test_a_directory_replaced_by_a_file_comes_back(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    os.unlink(repo / "src/app.py")
    os.rmdir(repo / "src")
    write(repo, "src", "src is a file now\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert (repo / "src/app.py").read_text() == "def f():\n    return 1\n"
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before


def test_empty_tracked_files_are_not_taken_for_intent_to_add(tmp_path):
    repo = make_repo(tmp_path)
    write(repo, "empty.txt", "")
    git(repo, "add", "empty.txt")
    git(repo, "commit", "-q", "-m", "an empty file")
    checkpoint = head(repo)
    write(repo, "planned.py", "x = 1\n")
    git(repo, "add", "-N", "planned.py")
    write(repo, "README.md", "changed\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before
    assert b" .A " not in git(repo, "status", "--porcelain=v2", "--", "empty.txt")


def test_a_file_with_no_permission_bits_keeps_them(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "locked.txt", "nobody may read this\n", 0o000)
    write(repo, "README.md", "changed\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before and stat.S_IMODE(os.lstat(repo / "locked.txt").st_mode) == 0


def test_rollback_and_restore_leave_nothing_in_the_temp_dir(tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    repo, result, before = rolled_back_with_an_ignored_copy(tmp_path)
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before
    assert os.listdir(scratch) == []


def test_an_ignored_directory_in_the_way_is_saved_but_not_a_nested_repository(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    git(repo, "rm", "-q", "-r", "--cached", "src")
    write(repo, ".git/info/exclude", "src/\n")
    git(repo, "commit", "-q", "-m", "agent: untrack src")
    os.unlink(repo / "src/app.py")
    write(repo, "src/app.py/notes.txt", "ignored work where the checkpoint has a file\n")
    nested = repo / "src/app.py/vendored"
    nested.mkdir()
    git(nested, "init", "-q")
    write(nested, "own.txt", "a nested repository's own file\n")
    os.symlink("../../README.md", repo / "src/app.py/link")
    write(repo, "src/elsewhere.txt", "ignored too, but in nobody's way\n")
    before = tree_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    [snap] = list_snapshots(str(repo))
    saved = git(repo, "ls-tree", "-r", "--name-only", snap.extras_commit).decode().split()
    assert sorted(p for p in saved if p.startswith("ignored/")) == ["ignored/src/app.py/link", "ignored/src/app.py/notes.txt"], saved
    assert result.restored, result.message
    restore_snapshot(str(repo), result.id)
    assert tree_state(repo)[b"src/app.py/notes.txt"] == before[b"src/app.py/notes.txt"]
    assert tree_state(repo)[b"src/app.py/link"] == ("link", b"../../README.md")


def snapshot_extras(repo, snapshot_id: str):
    snapshot = next(s for s in list_snapshots(str(repo)) if s.id == snapshot_id)
    return snapshot.extras_commit, read_extras(Repo(str(repo)), snapshot.extras_commit)


def test_gits_own_modes_are_not_recorded_as_extras(tmp_path):
    # 0644 and 0755 are what a checkout gives back by itself: a snapshot of
    # files with only those needs no modes record (and so no extras commit);
    # a 0600 file beside them is the one recorded
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "bin/new.sh", "#!/bin/sh\necho new\n", 0o755)
    write(repo, "src/app.py", "def f():\n    return 2\n", 0o644)
    for dirpath, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full):
                os.chmod(full, 0o755 if name.endswith(".sh") else 0o644)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert snapshot_extras(repo, result.id)[0] == ""
    write(repo, "bin/new.sh", "#!/bin/sh\necho new\n", 0o755)
    write(repo, "secret.cfg", "x\n", 0o600)
    second = save_and_restore(str(repo), checkpoint, story="S", iteration=2, trigger="t")
    assert snapshot_extras(repo, second.id)[1].modes == {b"secret.cfg": 0o600}


def test_the_intent_to_add_record_holds_only_intent_to_add_entries(tmp_path):
    # empty tracked files have the empty blob's id too; they are in the
    # index's tree, an intent-to-add entry is not
    repo = make_repo(tmp_path)
    for name in ("empty.txt", "docs/empty.md"):
        write(repo, name, "")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "empty files")
    checkpoint = head(repo)
    write(repo, "planned.py", "x = 1\n")
    write(repo, "later/planned too.py", "y = 2\n")
    git(repo, "add", "-N", "planned.py", "later/planned too.py")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert sorted(snapshot_extras(repo, result.id)[1].ita) == [b"later/planned too.py", b"planned.py"]


def test_an_unmerged_path_is_saved_with_our_side_of_the_index(tmp_path):
    # the agent left a merge conflict; without core.fileMode the index says
    # which exec bit a file has, and for a conflicted path that is ours
    # (stage 2), not theirs (stage 3)
    repo = make_repo(tmp_path)
    git(repo, "config", "core.fileMode", "false")
    write(repo, "tool.py", "base\n")
    git(repo, "add", "tool.py")
    git(repo, "commit", "-q", "-m", "tool")
    checkpoint = head(repo)
    git(repo, "checkout", "-q", "-b", "theirs")
    write(repo, "tool.py", "theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    write(repo, "tool.py", "ours\n")
    git(repo, "update-index", "--chmod=+x", "tool.py")
    git(repo, "commit", "-q", "-am", "ours, executable")
    git(repo, "merge", "-q", "theirs", check=False)
    stages = git(repo, "ls-files", "-s", "tool.py").decode().split()
    assert stages[0::4] == ["100644", "100755", "100644"], stages  # base, ours, theirs
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    saved = git(repo, "ls-tree", result.ref, "tool.py").decode().split()
    assert saved[0] == "100755", saved


def test_an_ignored_file_on_a_top_level_path_of_the_checkpoint_is_saved(tmp_path):
    # the agent untracked and ignored README.md, then rewrote it: the reset
    # writes the checkpoint's README.md over the only copy of that work
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    git(repo, "rm", "-q", "--cached", "README.md")
    write(repo, ".git/info/exclude", "README.md\n")
    git(repo, "commit", "-q", "-m", "agent: untrack README.md")
    write(repo, "README.md", "the only copy of this work\n")
    before = tree_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert sorted(snapshot_extras(repo, result.id)[1].ignored) == [b"README.md"]
    assert (repo / "README.md").read_text() == "hello\n"
    restore_snapshot(str(repo), result.id)
    assert tree_state(repo) == before


def test_after_a_restore_the_index_is_fresh(tmp_path):
    # the restore reads the snapshot's index tree, which has no stat data:
    # refreshed, only a file whose work tree really differs from its staged
    # content shows as changed to git diff-files (which refreshes nothing)
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "src/app.py", "def f():\n    return 'staged'\n")
    git(repo, "add", "src/app.py")
    write(repo, "src/app.py", "def f():\n    return 'staged, then edited'\n")
    write(repo, "README.md", "changed, unstaged\n")
    before = full_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    restore_snapshot(str(repo), result.id)
    assert full_state(repo) == before
    assert git(repo, "diff-files", "--name-only").decode().split() == ["README.md", "src/app.py"]
    assert git(repo, "diff-files", "--name-only", "--", "bin", "data.bin", "link-to-readme").decode() == ""


def test_a_refused_restore_names_every_conflict(tmp_path):
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    write(repo, "gen/a.txt", "generated\n")
    write(repo, "out/b.txt", "output\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    write(repo, ".git/info/exclude", "gen\nout\n")
    write(repo, "gen", "an ignored file named gen\n")
    write(repo, "out", "an ignored file named out\n")
    with pytest.raises(RollbackError) as refused:
        restore_snapshot(str(repo), result.id)
    assert str(refused.value) == (f"cannot restore {result.id}; nothing was changed: "
                                  "gen (an ignored file where the snapshot has a directory); "
                                  "out (an ignored file where the snapshot has a directory)")


def test_an_untracked_file_the_restored_ignore_rules_ignore_stays(tmp_path):
    # the snapshot's .gitignore ignores *.tmp; a scratch.tmp made after the
    # rollback is in no snapshot, and once the rules are back it is ignored
    # work that was not in the way: it stays. An unignored one goes (it is in
    # the pre-restore snapshot), and so do the directories it made.
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    with open(repo / ".gitignore", "a") as f:
        f.write("*.tmp\n")
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    write(repo, "scratch.tmp", "made after the rollback\n")
    write(repo, "later/deeper/notes.txt", "made after the rollback too\n")
    restored = restore_snapshot(str(repo), result.id)
    assert (repo / "scratch.tmp").read_text() == "made after the rollback\n"
    assert not (repo / "later").exists()
    assert restored.pre_restore is not None
    saved_first = git(repo, "ls-tree", "-r", "--name-only", restored.pre_restore.ref).decode().split()
    assert "later/deeper/notes.txt" in saved_first and "scratch.tmp" in saved_first


def test_a_saved_ignored_file_whose_path_is_a_directory_now_is_left_and_named(tmp_path):
    repo, result, _before = rolled_back_with_an_ignored_copy(tmp_path)
    os.unlink(repo / "src/app.py")  # the checkpoint's, put back by the rollback
    write(repo, "src/app.py/inside.txt", "ignored, made after the rollback\n")
    restored = restore_snapshot(str(repo), result.id)
    assert restored.message.endswith("); src/app.py is a directory now; its saved ignored file was not written back"), restored.message
    assert (repo / "src/app.py/inside.txt").read_text() == "ignored, made after the rollback\n"


def test_an_ignored_directory_in_the_way_keeps_private_modes_and_links_to_directories(tmp_path):
    # found by an independent mutation run: the ignored files saved from a
    # directory in the way came back 0644 had their mode not been recorded, and
    # a symlink to a directory inside it (os.walk lists it among the
    # directories) was lost had it been looked up by its bare name
    repo = make_repo(tmp_path)
    checkpoint = head(repo)
    git(repo, "rm", "-q", "-r", "--cached", "src")
    write(repo, ".git/info/exclude", "src/\n")
    git(repo, "commit", "-q", "-m", "agent: untrack src")
    os.unlink(repo / "src/app.py")
    write(repo, "src/app.py/credentials.txt", "only its owner reads this\n", 0o600)
    write(repo, "src/app.py/cache/entry.txt", "a directory's file\n")
    os.symlink("cache", repo / "src/app.py/current")  # a link to the directory beside it
    os.symlink("../../../bin", repo / "src/app.py/cache/tools")  # one level down, to a directory outside
    before = tree_state(repo)
    result = save_and_restore(str(repo), checkpoint, story="S", iteration=1, trigger="t")
    assert result.restored, result.message
    assert (repo / "src/app.py").read_text() == "def f():\n    return 1\n"
    restore_snapshot(str(repo), result.id)
    after = tree_state(repo)
    assert after[b"src/app.py/current"] == ("link", b"cache")
    assert after[b"src/app.py/cache/tools"] == ("link", b"../../../bin")
    assert after[b"src/app.py/credentials.txt"] == before[b"src/app.py/credentials.txt"]
    assert stat.S_IMODE(os.lstat(repo / "src/app.py/credentials.txt").st_mode) == 0o600
