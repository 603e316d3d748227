"""A broken config names the file and line, and hooks survive it."""
from __future__ import annotations

import json
import os

import pytest

from ralph.config import ConfigError, load_config


def test_broken_toml_names_file_and_line(tmp_path) -> None:
    path = tmp_path / "ralph.toml"
    path.write_text('[guard]\nblock_programs = ["gh pr merge"\nallow_commands = 3\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path), {})
    assert str(info.value).startswith(f"{path}:3: invalid TOML: Unclosed array")


def test_no_config_is_empty(tmp_path) -> None:
    assert load_config(str(tmp_path), {}) == {}


def test_non_utf8_config(tmp_path) -> None:
    (tmp_path / "ralph.toml").write_bytes(b"x = '\xff'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(str(tmp_path), {})


def test_hook_survives_broken_config(repo: str) -> None:
    from tests.conftest import load_payload, run_hook

    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write("[guard\n")
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "git push origin main"
    assert run_hook("pre-tool", payload, repo).denied  # defaults still guard
    with open(os.path.join(repo, ".ralph", "logs", "hooks.jsonl")) as f:
        entry = json.loads(f.readlines()[-1])
    assert any("ralph.toml:1" in note for note in entry.get("notes", []))
