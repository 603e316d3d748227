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
    from tests.conftest import load_payload, run_hook, hook_state_dir

    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write("[guard\n")
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "git push origin main"
    assert run_hook("pre-tool", payload, repo).denied  # defaults still guard
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        entry = json.loads(f.readlines()[-1])
    assert any("ralph.toml:1" in note for note in entry.get("notes", []))


def test_parsed_config_is_remembered_only_for_the_same_text(tmp_path) -> None:
    """The hot path skips tomllib when ralph.toml is unchanged: the cached
    parse under .ralph/protected/ is used only for the exact same text, so an
    edit of the same size in the same instant, or a forged entry, never wins."""
    from ralph.config import CACHE_FILE

    (tmp_path / ".ralph").mkdir()
    config = tmp_path / "ralph.toml"
    config.write_text("[guard]\nforge_merges = false\n")
    assert load_config(str(tmp_path), {}) == {"guard": {"forge_merges": False}}
    cache = tmp_path / ".ralph" / CACHE_FILE
    entry = json.loads(cache.read_text())
    assert entry["text"] == config.read_text() and entry["config"] == {"guard": {"forge_merges": False}}
    config.write_text("[guard]\nforge_merges = true \n")  # same size, other text
    assert load_config(str(tmp_path), {}) == {"guard": {"forge_merges": True}}
    # an entry whose text is not the file's is ignored, whatever it claims
    cache.write_text(json.dumps({"path": str(config), "text": "[guard]\n", "config": {"guard": {"forge_merges": False}}}))
    assert load_config(str(tmp_path), {}) == {"guard": {"forge_merges": True}}
    cache.write_text("{torn")
    assert load_config(str(tmp_path), {}) == {"guard": {"forge_merges": True}}
    # TOML dates are not JSON: parsed every time, never cached wrongly
    config.write_text("[loop]\nstarted = 1979-05-27\n")
    assert str(load_config(str(tmp_path), {})["loop"]["started"]) == "1979-05-27"
    assert json.loads(cache.read_text())["text"] != config.read_text()


def test_no_state_dir_no_cache(tmp_path) -> None:
    (tmp_path / "ralph.toml").write_text("[guard]\n")
    assert load_config(str(tmp_path), {}) == {"guard": {}}
    assert not (tmp_path / ".ralph").exists()
