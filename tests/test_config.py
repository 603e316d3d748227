"""A broken config names the file and line, and hooks survive it."""
from __future__ import annotations

import json
import os

import pytest

from ralph.config.reading import load_config
from ralph.config.schema import ConfigError


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


def loop_project(tmp_path) -> str:
    """A project ralph-loop has set up: its state dir is .ralph/."""
    (tmp_path / ".ralph").mkdir()
    (tmp_path / ".ralph" / ".gitignore").write_text("*\n")
    return str(tmp_path)


def test_parsed_config_is_remembered_only_for_the_same_text(tmp_path) -> None:
    """The hot path skips tomllib when ralph.toml is unchanged: the cached
    parse (in the state dir's protected/) is used only for the same path and
    the same digest of the text, so an edit of the same size in the same
    instant, or a forged entry, never wins."""
    from ralph.config.reading import CACHE_FILE, cache_entry, text_digest

    root = loop_project(tmp_path)
    config = tmp_path / "ralph.toml"
    config.write_text("[guard]\nforge_merges = false\n")
    assert load_config(root, {}) == {"guard": {"forge_merges": False}}
    cache = tmp_path / ".ralph" / CACHE_FILE
    header = json.loads(cache.read_bytes().split(b"\n", 1)[0])
    assert header["path"] == str(config) and header["blake2b"] == text_digest(config.read_text())
    assert sorted(header) == ["blake2b", "nonce", "path"] and b"forge_merges" not in cache.read_bytes()
    config.write_text("[guard]\nforge_merges = true \n")  # same size, other text
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # an entry whose digest is not the file's is ignored, whatever it claims
    forged = cache_entry(str(config), "[guard]\n", {"guard": {"forge_merges": False}})
    cache.write_bytes(forged)
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # ... as is one that claims this text's digest but was sealed for another text
    forged_header, sealed = forged.split(b"\n", 1)
    claimed = json.loads(forged_header) | {"blake2b": text_digest(config.read_text())}
    cache.write_bytes(json.dumps(claimed).encode() + b"\n" + sealed)
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # ... and one for the same text at another path
    cache.write_bytes(cache_entry(str(tmp_path / "other.toml"), config.read_text(), {}))
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # ... and an older ralph's, the parse in clear
    cache.write_text(json.dumps({"path": str(config), "blake2b": text_digest(config.read_text()), "config": {"guard": {"from": "cache"}}}))
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # an entry for this very text is what the hooks read: no TOML parsed
    cache.write_bytes(cache_entry(str(config), config.read_text(), {"guard": {"from": "cache"}}))
    assert load_config(root, {}) == {"guard": {"from": "cache"}}
    cache.write_text("{torn")
    assert load_config(root, {}) == {"guard": {"forge_merges": True}}
    # TOML dates are not JSON: parsed every time, and no entry is left for the older text
    config.write_text("[loop]\nstarted = 1979-05-27\n")
    assert str(load_config(root, {})["loop"]["started"]) == "1979-05-27"
    assert not cache.exists()


def test_the_cache_holds_no_copy_of_the_file_and_only_its_owner_reads_it(tmp_path) -> None:
    """ralph.toml may hold secrets (webhook headers); the cache keeps the
    parse, never the text (its comments, its layout), readable by its owner only."""
    from ralph.config.reading import CACHE_FILE

    root = loop_project(tmp_path)
    cache = tmp_path / ".ralph" / CACHE_FILE
    cache.parent.mkdir()
    text = "# deploy token: not-for-copies-42\n[guard]\nforge_merges = false\n"
    (tmp_path / "ralph.toml").write_text(text)
    # what an older ralph kept: a verbatim copy, readable by everyone
    cache.write_text(json.dumps({"path": str(tmp_path / "ralph.toml"), "text": text, "config": {"guard": {}}}))
    os.chmod(cache, 0o644)
    assert load_config(root, {}) == {"guard": {"forge_merges": False}}
    raw = cache.read_bytes()
    assert b"not-for-copies-42" not in raw and b"text" not in raw
    assert os.stat(cache).st_mode & 0o777 == 0o600
    assert [name for name in os.listdir(cache.parent) if name.endswith(".tmp")] == []


def test_an_interactive_project_caches_the_parse_inside_the_git_dir(tmp_path) -> None:
    """No .ralph/ (no loop ran here): the parse is cached where the hooks keep
    their state, inside .git/, and nothing is written into the work tree."""
    import subprocess

    from ralph.config.reading import CACHE_FILE

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "ralph.toml").write_text("[guard]\n")
    assert load_config(str(tmp_path), {}) == {"guard": {}}
    cache = tmp_path / ".git" / "ralph" / CACHE_FILE
    assert json.loads(cache.read_bytes().split(b"\n", 1)[0])["path"] == str(tmp_path / "ralph.toml")
    assert os.stat(cache).st_mode & 0o777 == 0o600
    assert not (tmp_path / ".ralph").exists()
    status = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain"], capture_output=True, text=True, check=True)
    assert status.stdout == "?? ralph.toml\n"


def test_outside_git_nothing_is_written_into_the_work_tree(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "ralph.toml").write_text("[guard]\n")
    assert load_config(str(project), {}) == {"guard": {}}
    assert os.listdir(project) == ["ralph.toml"]


# ---- tables nobody declares ----


def test_an_unknown_table_is_refused_with_its_line_and_the_known_tables(tmp_path) -> None:
    from ralph.loop.config_check import check_config

    (tmp_path / "ralph.toml").write_text('[loop]\nmax_iterations = 3\n\n[bogus]\nx = 1\n')
    with pytest.raises(ConfigError) as info:
        check_config(str(tmp_path), {})
    assert str(info.value) == (f"{tmp_path / 'ralph.toml'}:4: [bogus]: unknown table; "
                               "known tables: guard, handoff, hooks, loop, rollback, sandbox, tests")


def test_a_near_miss_gets_did_you_mean(tmp_path) -> None:
    from ralph.config.reading import parse_config
    from ralph.loop.config_check import config_errors

    path = str(tmp_path / "ralph.toml")
    text = 'sandbx = 1\n\n[gaurd]\nallow_commands = ["git push --dry-run"]\n'
    with open(path, "w") as f:
        f.write(text)
    known = "known tables: guard, handoff, hooks, loop, rollback, sandbox, tests"
    assert config_errors(parse_config(text, path), path) == [
        f"{path}:1: [sandbx]: unknown table; did you mean [sandbox]? {known}",
        f"{path}:3: [gaurd]: unknown table; did you mean [guard]? {known}",
    ]


def test_a_top_level_key_is_refused_at_its_line(tmp_path) -> None:
    from ralph.loop.config_check import check_config

    (tmp_path / "ralph.toml").write_text('# settings\nmax_iterations = 3\n\n[loop]\nmode = "build"\n')
    with pytest.raises(ConfigError, match=r"ralph.toml:2: \[max_iterations\]: unknown table; known tables: "):
        check_config(str(tmp_path), {})


def test_the_loop_refuses_an_unknown_table_before_it_starts(tmp_path) -> None:
    from tests.loop_support import Project

    p = Project(tmp_path, "- [ ] US-001: x\n", config='[loop]\nmax_iterations = 2\n\n[sandbx]\nenabled = false\n')
    result = p.run_loop("--dry-run")
    assert result.returncode == 2
    assert "ralph.toml:4: [sandbx]: unknown table; did you mean [sandbox]?" in result.stderr, result.stderr


def test_doctor_names_an_unknown_table(repo: str) -> None:
    import subprocess

    from tests.conftest import RALPH

    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write('[rollbak]\npolicy = "off"\n')
    done = subprocess.run([RALPH, "doctor", "--no-round-trip"], capture_output=True, text=True, cwd=repo, timeout=120)
    assert done.returncode == 1
    assert "ralph.toml:1: [rollbak]: unknown table; did you mean [rollback]?" in done.stdout, done.stdout


def test_a_hook_logs_an_unknown_table_and_keeps_the_defaults(repo: str) -> None:
    from tests.conftest import hook_state_dir, load_payload, run_hook

    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write('[gaurd]\nallow_commands = ["git push origin main"]\n')
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "git push origin main"
    assert run_hook("pre-tool", payload, repo).denied  # the misspelt table allows nothing
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        entry = json.loads(f.readlines()[-1])
    assert any("ralph.toml:1: [gaurd]: unknown table; did you mean [guard]?" in note for note in entry.get("notes", [])), entry


# ---- the registry ----


def test_the_registry_lists_every_table_with_its_keys_defaults_and_help() -> None:
    """What the configuration reference is checked against: every table
    ralph.toml may hold, each key with a default, a kind and a line of help."""
    from ralph.config.registry import SECTIONS, tables
    from ralph.config.schema import KINDS

    listed = tables()
    names = [(table.name, table.variant) for table in listed]
    assert len(set(names)) == len(names)
    assert [name for name, _ in names] == [
        "loop", "loop.stages", "guard", "rollback", "tests", "sandbox",
        "hooks", "hooks.<point>", "hooks.<point>", "hooks.<point>", "hooks.<point>", "hooks.event", "handoff"]
    assert [variant for name, variant in names if name == "hooks.<point>"] == ["", 'type = "shell"', 'type = "webhook"', 'type = "spawn"']
    assert {table.name for table in listed if "." not in table.name} == set(SECTIONS)
    for table in listed:
        assert table.help and table.array == ("." in table.name), table
        for key, declared in table.keys.items():
            assert declared.help, (table, key)
            kind = declared.kind.rstrip("?")
            assert kind.startswith("choice:") or kind in KINDS or kind in table.kinds or kind == "tables", (table, key, kind)
    loop = listed[0]
    assert loop.keys["max_iterations"].default == 10 and loop.keys["stages"].kind == "tables"
    event = next(table for table in listed if table.name == "hooks.event")
    assert list(event.keys) == ["match", "command", "working_dir", "timeout", "env", "enabled", "description", "pipe_output"]


def test_each_owner_uses_the_declaration_the_registry_lists() -> None:
    """The declarations live in ralph.config.tables; their owners import
    them: each action type's KEYS is its listed table's, and the event hooks
    check exactly the kinds their table names as their own."""
    from ralph.claude import event_command_select
    from ralph.config.registry import tables
    from ralph.loop.lifecycle.action_types import ACTIONS, action_module

    listed = {(table.name, table.variant): table for table in tables()}
    for type_name in ACTIONS:
        declared = listed[("hooks.<point>", f'type = "{type_name}"')]
        assert action_module(type_name).KEYS is declared.keys, type_name  # type: ignore[attr-defined]
    event = listed[("hooks.event", "")]
    assert event.keys is event_command_select.EVENT_KEYS and set(event.kinds) == set(event_command_select.KINDS)


def test_a_token_in_a_hook_command_reaches_no_file_of_the_state_directory(repo: str) -> None:
    """The parse cache holds ralph.toml's commands sealed: neither a token a
    pattern would redact nor one no pattern knows is kept in clear by hook
    calls that read the file (the guard's table, the event hooks, which run)."""
    from tests.conftest import load_payload, run_hook

    known = "ghp_" + "Zt7QwErTyUiOpAsDfGhJkLzXcVbNm0123456"
    opaque = "Zq8opaqueTok44xKv"
    state = os.path.join(repo, ".ralph")
    os.makedirs(state)
    with open(os.path.join(state, ".gitignore"), "w") as f:
        f.write("*\n")
    with open(os.path.join(repo, "ralph.toml"), "w") as f:
        f.write("[guard]\nforge_merges = false\n\n"
                f'[[hooks.event]]\nmatch = "PreToolUse:Bash"\ncommand = "test -n {known}"\n\n'
                f'[[hooks.post_iteration]]\ncommand = "./notify.sh --auth {opaque}"\n')
    payload = load_payload("PreToolUse_Bash", repo)
    payload["tool_input"]["command"] = "ls"
    for _ in range(2):  # the first call writes the cache, the second reads it
        result = run_hook("pre-tool", payload, repo)
        assert result.returncode == 0, result.stderr
    cache = os.path.join(state, "protected", "config.json")
    assert os.path.exists(cache) and os.path.exists(os.path.join(state, "logs", "hooks.jsonl"))
    for dirpath, _, files in os.walk(state):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                data = f.read()
            for token in (known, opaque, "notify.sh", "test -n"):
                assert token.encode() not in data, (os.path.join(dirpath, name), token)
