"""Read-before-edit cases (tests/fixtures/read_before_edit/<category>/*.json),
each played through the real entry point: PostToolUse payloads record the reads
and writes, then one PreToolUse payload asks for the edit."""
from __future__ import annotations

import glob
import json
import os

import pytest

from tests.conftest import FIXTURES, load_payload, run_hook

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
