"""Read-before-edit cases (tests/fixtures/read_before_edit/<category>/*.json),
each played through the real entry point: PostToolUse payloads record the reads
and writes, then one PreToolUse payload asks for the edit."""
from __future__ import annotations

import glob
import json
import os
import subprocess

import pytest

from tests.conftest import FIXTURES, hook_state_dir, load_payload, run_hook

CASES = sorted(glob.glob(os.path.join(FIXTURES, "read_before_edit", "*", "*.json")))
SESSION = "86fb54d8-2edf-4dbc-a7af-29d81b8a70a7"


def case_id(path: str) -> str:
    return os.path.relpath(path, os.path.join(FIXTURES, "read_before_edit"))[:-5]


def expand(text: str, root: str) -> str:
    return text.replace("{root}", root)


def build_tree(root: str, case: dict) -> None:
    for name, content in case.get("files", {}).items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    for link, target in case.get("symlinks", {}).items():
        os.symlink(target, os.path.join(root, link))
    for link, target in case.get("hardlinks", {}).items():
        os.link(os.path.join(root, target), os.path.join(root, link))


def read_payload(root: str, read: dict) -> dict:
    payload = load_payload("PostToolUse_Read", root)
    path = expand(read["path"], root)
    payload["session_id"] = read.get("session", SESSION)
    payload["cwd"] = os.path.join(root, read.get("cwd", "."))
    payload["tool_input"] = {"file_path": path, **({k: read[k] for k in ("offset", "limit") if k in read})}
    payload["tool_response"]["file"]["filePath"] = path
    return payload


def write_payload(root: str, write: dict) -> dict:
    tool = write["tool"]
    payload = load_payload(f"PostToolUse_{tool}", root)
    path = expand(write["path"], root)
    with open(path, "w") as f:  # the tool ran: the file is on disk
        f.write(write["content"])
    payload["session_id"] = SESSION
    payload["tool_input"]["file_path"] = path
    payload["tool_response"]["filePath"] = path
    return payload


def edit_payload(root: str, edit: dict) -> dict:
    tool = edit["tool"]
    payload = load_payload("PreToolUse_Edit", root)
    path = expand(edit["path"], root)
    payload["tool_name"] = tool
    payload["cwd"] = os.path.join(root, edit.get("cwd", "."))
    if tool == "NotebookEdit":
        payload["tool_input"] = {"notebook_path": path, "new_source": "x", "cell_id": "c1"}
    elif tool == "MultiEdit":
        payload["tool_input"] = {"file_path": path, "edits": [{"old_string": "x", "new_string": "y"}]}
    elif tool == "Write":
        payload["tool_input"] = {"file_path": path, "content": "new\n"}
    else:
        payload["tool_input"]["file_path"] = path
    return payload


@pytest.mark.parametrize("case_path", CASES, ids=[case_id(p) for p in CASES])
def test_case(case_path: str, repo: str) -> None:
    with open(case_path) as f:
        case = json.load(f)
    build_tree(repo, case)
    env = {"CLAUDE_PROJECT_DIR": repo}
    if "home" in case:
        env["HOME"] = os.path.join(repo, case["home"])
    for read in case.get("reads", []):
        run_hook("post-tool", read_payload(repo, read), os.path.join(repo, read.get("cwd", ".")), env)
    for write in case.get("writes", []):
        run_hook("post-tool", write_payload(repo, write), repo, env)
    for name in case.get("replace_after_reads", []):
        path = os.path.join(repo, name)
        with open(path + ".new", "w") as f:
            f.write("reformatted\n")
        os.replace(path + ".new", path)
    for link, target in case.get("relink_after_reads", {}).items():
        os.unlink(os.path.join(repo, link))
        os.symlink(target, os.path.join(repo, link))
    edit = case["edit"]
    result = run_hook("pre-tool", edit_payload(repo, edit), os.path.join(repo, edit.get("cwd", ".")), env)
    assert ("deny" if result.denied else "allow") == case["expect"], f"{case['why']}: {result.output}"
    if result.denied and case_id(case_path).startswith("git_dir/"):
        assert ".git directory" in result.reason
    elif result.denied:
        assert "Read" in result.reason and edit["tool"] in result.reason


def test_corpus_has_every_category() -> None:
    categories = {case_id(p).split("/")[0] for p in CASES}
    assert {"true_block", "false_block", "allow", "bypass"} <= categories


def test_reused_inode_never_counts_as_read(repo: str) -> None:
    """ext4 hands a deleted file's inode to the next new file at once: that
    new file was never read, so editing it is denied; its neighbour that was
    read, then replaced by rename, still counts. Played for real on this
    filesystem until a reuse happens (attempts, not time)."""
    reused = 0
    for attempt in range(40):
        old = os.path.join(repo, f"old-{attempt}.txt")
        with open(old, "w") as f:
            f.write("read me\n")
        run_hook("post-tool", read_payload(repo, {"path": old}), repo)
        inode = os.stat(old).st_ino
        os.unlink(old)
        new = os.path.join(repo, f"new-{attempt}.txt")
        with open(new, "w") as f:
            f.write("never read\n")
        if os.stat(new).st_ino != inode:
            continue
        reused += 1
        result = run_hook("pre-tool", edit_payload(repo, {"tool": "Edit", "path": new}), repo)
        assert result.denied, f"attempt {attempt}: the new file on the read file's inode counted as read"
        if reused >= 3:
            break
    if not reused:
        pytest.skip("this filesystem never reused an inode in 40 attempts")
    # a read file replaced by rename (new inode, same name) still counts
    kept = os.path.join(repo, "kept.txt")
    with open(kept, "w") as f:
        f.write("v1\n")
    run_hook("post-tool", read_payload(repo, {"path": kept}), repo)
    with open(kept + ".new", "w") as f:
        f.write("v2\n")
    os.replace(kept + ".new", kept)
    assert not run_hook("pre-tool", edit_payload(repo, {"tool": "Edit", "path": kept}), repo).denied


def test_generation_rules() -> None:
    from ralph.rules.read_before_edit import FileIdentity

    ms = 1_000_000
    read = FileIdentity("/p/a", 1, 7, True, ctime=100, read_at=1000 * ms)
    # no birth time: the ctime recorded at the read must not have moved
    assert FileIdentity("/p/hard-link", 1, 7, True, ctime=100).same_file(read)
    assert not FileIdentity("/p/b", 1, 7, True, ctime=250).same_file(read)  # changed, or reused, since the read
    assert FileIdentity("/p/a", 1, 9, True, ctime=250).same_file(read)  # same path: replaced by rename
    # birth time: born before the read is the file that was read, even edited since
    assert FileIdentity("/p/link", 1, 7, True, birth=900 * ms, ctime=300).same_file(read)
    assert not FileIdentity("/p/c", 1, 7, True, birth=1001 * ms, ctime=1001 * ms).same_file(read)
    # born within a clock tick of the read (coarse file timestamps): the ctime decides
    assert not FileIdentity("/p/c", 1, 7, True, birth=999 * ms, ctime=999 * ms).same_file(read)
    assert FileIdentity("/p/link", 1, 7, True, birth=999 * ms, ctime=100).same_file(read)
    assert not FileIdentity("/p/c", 1, 7, True).same_file(FileIdentity("/p/a", 1, 7, True))  # unknown: not the same
    assert FileIdentity("/p/c", 1, 7, True).needs_birth([read]) and not FileIdentity("/p/a", 1, 7, True).needs_birth([read])


def test_records_from_before_generations_count_for_their_path_only(repo: str) -> None:
    from ralph.state import reads

    state = hook_state_dir(repo)
    readme = os.path.join(repo, "README.md")
    st = os.stat(readme)
    path = os.path.join(reads.session_dir(state, SESSION), "reads.log")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write(f"{__import__('time').time() + 5:.6f} {st.st_dev} {st.st_ino} {json.dumps(readme)}\n")
    [known] = reads.known_files(state, SESSION)
    assert known.path == readme and known.birth == 0 and known.ctime == 0
    assert not run_hook("pre-tool", edit_payload(repo, {"tool": "Edit", "path": readme}), repo).denied
    os.link(readme, os.path.join(repo, "alias.md"))
    assert run_hook("pre-tool", edit_payload(repo, {"tool": "Edit", "path": os.path.join(repo, "alias.md")}), repo).denied


def test_birth_time_is_read_where_the_filesystem_keeps_one(tmp_path) -> None:
    from ralph.state.reads import birth_time_ns

    path = tmp_path / "f"
    path.write_text("x")
    probe = subprocess.run(["stat", "-c", "%W", str(path)], capture_output=True, text=True)
    if probe.returncode != 0 or probe.stdout.strip() in ("", "0", "-"):
        pytest.skip("no birth time on this filesystem (stat -c %W)")
    assert birth_time_ns(str(path), os.stat(path)) // 1_000_000_000 == int(probe.stdout)


def edit_call(root: str, tool: str, tool_input: dict) -> dict:
    payload = load_payload("PreToolUse_Edit", root)
    payload["tool_name"] = tool
    payload["tool_input"] = tool_input
    return payload


def test_the_file_is_found_under_either_field_name(repo: str) -> None:
    """Older clients and odd inputs name the file under the other edit tool's
    field (file_path / notebook_path): the file is still judged. NotebookEdit
    changes its notebook_path whatever else the input holds."""
    unread = os.path.join(repo, "README.md")
    new = os.path.join(repo, "new.ipynb")
    for tool, tool_input in (
        ("Edit", {"notebook_path": unread, "old_string": "hello", "new_string": "bye"}),
        ("NotebookEdit", {"file_path": unread, "new_source": "x"}),
        ("Edit", {"file_path": "", "notebook_path": unread, "old_string": "hello", "new_string": "bye"}),
        ("Write", {"file_path": None, "notebook_path": unread, "content": "x"}),
        ("NotebookEdit", {"notebook_path": unread, "file_path": new, "new_source": "x"}),
    ):
        result = run_hook("pre-tool", edit_call(repo, tool, tool_input), repo)
        assert result.denied and f"Read {unread} before" in result.reason, (tool, tool_input, result.output)


def test_an_edit_without_a_usable_path_is_left_to_the_client(repo: str) -> None:
    # the client refuses an edit with no path itself; the hook neither guesses one nor fails
    for tool_input in ({"file_path": ""}, {"file_path": 7}, {"file_path": None, "notebook_path": ""}, {}):
        result = run_hook("pre-tool", edit_call(repo, "Edit", tool_input), repo)
        assert not result.denied and result.output == {}, (tool_input, result.output)


def test_the_reason_names_what_the_tool_would_do(repo: str) -> None:
    readme = os.path.join(repo, "README.md")
    write = run_hook("pre-tool", edit_payload(repo, {"tool": "Write", "path": readme}), repo)
    edit = run_hook("pre-tool", edit_payload(repo, {"tool": "MultiEdit", "path": readme}), repo)
    assert write.denied and f"Read {readme} before you overwrite it" in write.reason and "retry the same Write" in write.reason
    assert edit.denied and f"Read {readme} before you edit it" in edit.reason and "retry the same MultiEdit" in edit.reason


def test_only_the_edit_tools_have_a_target() -> None:
    from ralph.rules.read_before_edit import edit_target

    assert edit_target("Read", {"file_path": "/p/a"}) is None
    assert edit_target("Bash", {"command": "x", "file_path": "/p/a"}) is None
    assert edit_target("NotebookEdit", {"notebook_path": "/p/n.ipynb", "file_path": "/p/a"}) == "/p/n.ipynb"
    assert edit_target("Edit", {"file_path": "/p/a", "notebook_path": "/p/n.ipynb"}) == "/p/a"


def test_same_file_is_symmetric_and_the_birth_margin_is_exclusive() -> None:
    from ralph.rules.read_before_edit import BIRTH_MARGIN_NS, FileIdentity

    ms = 1_000_000
    read = FileIdentity("/p/a", 1, 7, True, ctime=100, read_at=1000 * ms)
    for now in (FileIdentity("/p/link", 1, 7, True, birth=900 * ms, ctime=300),
                FileIdentity("/p/c", 1, 7, True, birth=1001 * ms, ctime=1001 * ms),
                FileIdentity("/p/hard-link", 1, 7, True, ctime=100)):
        assert now.same_file(read) == read.same_file(now), now.path
    # born exactly the margin before the read: too close to tell, so the ctime decides (it moved)
    at_margin = FileIdentity("/p/c", 1, 7, True, birth=1000 * ms - BIRTH_MARGIN_NS, ctime=250)
    assert not at_margin.same_file(read) and not read.same_file(at_margin)
    assert FileIdentity("/p/c", 1, 7, True, birth=1000 * ms - BIRTH_MARGIN_NS - 1, ctime=250).same_file(read)


def test_case_folding_filesystems_compare_names_without_case() -> None:
    from ralph.rules.read_before_edit import FileIdentity

    read = FileIdentity("/p/README.md", 1, 7, True)
    renamed = FileIdentity("/p/readme.md", 1, 9, True)  # replaced by rename: another inode
    assert not renamed.same_file(read)  # case-sensitive: another file
    renamed.case_insensitive = True
    assert renamed.same_file(read) and read.same_file(renamed)
    assert not FileIdentity("/p/other.md", 1, 9, True, case_insensitive=True).same_file(read)
