"""Unit tests for the loop's pure parts: story state rewrites (byte for byte),
settings precedence and the TTY status line."""
from __future__ import annotations

import io
import json
import os

import hypothesis
import hypothesis.strategies
import pytest

from ralph.config.schema import ConfigError
from ralph.loop.display import CLEAR_LINE, Display
from ralph.plan import PlanError, load_stories, set_story_state
from ralph.plan_markdown import parse as parse_plan_md
from ralph.plan_markdown import rewrite_state as rewrite_plan_md_state
from ralph.plan_prd import rewrite_state as rewrite_prd_state
from ralph.run.settings import loop_settings


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_plan_md_rewrite_touches_only_the_box(newline: str) -> None:
    lines = ["\ufeff- [ ] US-001: Première ✓", "  - critère 😀", "", "- [x] US-002: done", "- [] US-003: empty box", "text after"]
    text = newline.join(lines) + newline
    done = rewrite_plan_md_state(text, "US-001", "done")
    assert done == text.replace("- [ ] US-001", "- [x] US-001")
    blocked = rewrite_plan_md_state(text, "US-003", "blocked")
    assert blocked == text.replace("- [] US-003", "- [!] US-003")
    reopened = rewrite_plan_md_state(text, "US-002", "todo")
    assert reopened == text.replace("- [x] US-002", "- [ ] US-002")
    assert [s.state for s in parse_plan_md(done)] == ["done", "done", "todo"]


def test_plan_md_rewrite_with_unicode_line_separators_in_titles() -> None:
    # str.splitlines() splits on \u2028 too; the rewrite must agree with the parser's numbering
    text = "- [ ] US-001: a\u2028b\n- [ ] US-002: c\n"
    out = rewrite_plan_md_state(text, "US-002", "done")
    assert out == "- [ ] US-001: a\u2028b\n- [x] US-002: c\n"


def test_plan_md_unknown_story() -> None:
    with pytest.raises(PlanError, match="no story US-009"):
        rewrite_plan_md_state("- [ ] US-001: a\n", "US-009", "done")


def test_set_story_state_is_atomic_and_idempotent(tmp_path) -> None:
    path = tmp_path / "plan.md"
    path.write_bytes("- [ ] US-001: Ünï\r\n".encode())
    assert set_story_state(str(path), "US-001", "done") is True
    assert set_story_state(str(path), "US-001", "done") is False
    assert path.read_bytes() == "- [x] US-001: Ünï\r\n".encode()
    assert os.listdir(tmp_path) == ["plan.md"]  # no temp file left


PRD = """{
  "project": "x",
  "userStories": [
    {
      "id": "US-001",
      "title": "has {braces} and \\"quotes\\"",
      "priority": 1,
      "passes": false,
      "notes": {"passes": true}
    },
    {"id": "US-002", "title": "b", "priority": 2, "passes": false}
  ]
}
"""


def test_prd_rewrite_edits_values_in_place() -> None:
    done = rewrite_prd_state(PRD, "US-001", "done")
    assert done == PRD.replace('"priority": 1,\n      "passes": false', '"priority": 1,\n      "passes": true')
    blocked = rewrite_prd_state(PRD, "US-002", "blocked")
    assert blocked == PRD.replace('"priority": 2, "passes": false}', '"priority": 2, "passes": false, "blocked": true}')
    multi = rewrite_prd_state(PRD, "US-001", "blocked")
    assert '"passes": false,\n      "blocked": true,\n      "notes"' in multi
    assert json.loads(rewrite_prd_state(multi, "US-001", "todo"))["userStories"][0]["blocked"] is False


def prd_story(**literals: str) -> str:
    """A prd.json of one story, one field a line, each value as JSON text."""
    fields = {"title": '"a"', "priority": "1", "passes": "false", "blocked": "false", "acceptanceCriteria": '["works"]'} | literals
    lines = [f'      "{name}": {literal}' for name, literal in {"id": '"US-001"', **fields}.items()]
    return '{\n  "userStories": [\n    {\n' + ",\n".join(lines) + "\n    }\n  ]\n}\n"


@pytest.mark.parametrize("field, value, says", [
    ("title", '["x"]', '.ralph/prd.json:5: story US-001: "title" must be a string, got ["x"]'),
    ("priority", '"high"', '.ralph/prd.json:6: story US-001: "priority" must be a number (lower runs first), got "high"'),
    ("passes", '"no"', '.ralph/prd.json:7: story US-001: "passes" must be true or false, got "no"'),
    ("blocked", "1", '.ralph/prd.json:8: story US-001: "blocked" must be true or false, got 1'),
    ("acceptanceCriteria", '[{"text": "works"}]',
     '.ralph/prd.json:9: story US-001: "acceptanceCriteria" must be a list of strings, e.g. ["shows a form"], got [{"text": "works"}]'),
])
def test_prd_fields_of_the_wrong_type_are_refused_at_their_line(field: str, value: str, says: str) -> None:
    from ralph.plan_prd import parse as parse_prd

    [story] = parse_prd(prd_story(), ".ralph/prd.json")
    assert (story.title, story.priority, story.state, story.criteria) == ("a", 1, "todo", ["works"])
    with pytest.raises(PlanError) as info:
        parse_prd(prd_story(**{field: value}), ".ralph/prd.json")
    assert str(info.value) == says


def test_a_prd_story_id_that_is_not_a_string_is_refused_at_its_line() -> None:
    from ralph.plan_prd import parse as parse_prd

    with pytest.raises(PlanError, match=r'^prd.json:3: userStories\[1\] needs a string "id"$'):
        parse_prd('{"userStories": [\n  {"id": "US-001"},\n  {"id": 2, "title": "b"}\n]}\n')


def test_the_loop_refuses_a_mistyped_prd_before_it_starts(tmp_path) -> None:
    from tests.loop_support import Project

    prd = '{\n  "userStories": [\n    {"id": "US-001", "title": "a", "priority": 1, "passes": false},\n' \
          '    {"id": "US-002", "title": "b",\n     "priority": 2, "passes": "no"}\n  ]\n}\n'
    p = Project(tmp_path, prd, plan_name="prd.json")
    result = p.run_loop()
    assert result.returncode == 2
    assert '.ralph/prd.json:5: story US-002: "passes" must be true or false, got "no"' in result.stderr, result.stderr


def test_prd_rewrite_crlf_and_unicode(tmp_path) -> None:
    text = PRD.replace("\n", "\r\n").replace('"b"', '"日本"')
    path = tmp_path / "prd.json"
    path.write_bytes(text.encode())
    set_story_state(str(path), "US-002", "done")
    assert path.read_bytes() == text.replace('"priority": 2, "passes": false', '"priority": 2, "passes": true').encode()
    assert [s.state for s in load_stories(str(path))] == ["todo", "done"]


def test_settings_precedence(tmp_path) -> None:
    config = {"loop": {"max_iterations": 7, "verify_command": "make test", "agent_command": ["a", "b"],
                       "stages": [{"name": "plan", "mode": "plan", "max_iterations": 2}, {"name": "build"}]}}
    settings = loop_settings(str(tmp_path), config, None, {"max_iterations": None, "mode": None})
    assert [(s.name, s.mode, s.max_iterations, s.verify_command) for s in settings.stages] == [
        ("plan", "plan", 2, None), ("build", "build", 7, "make test")]
    assert settings.stages[1].agent_command == ["a", "b"]
    flagged = loop_settings(str(tmp_path), config, None, {"max_iterations": 3, "mode": "build", "verify_command": "true"})
    assert [(s.name, s.max_iterations, s.verify_command) for s in flagged.stages] == [("build", 3, "true")]
    assert flagged.max_total_iterations == 3


def test_settings_errors_name_the_line(tmp_path) -> None:
    path = tmp_path / "ralph.toml"
    path.write_text('[guard]\nx = 1\n\n[loop]\nagent_command = []\n')
    with pytest.raises(ConfigError, match=r"ralph.toml:5: \[loop\] agent_command: must be a non-empty string"):
        loop_settings(str(tmp_path), {"loop": {"agent_command": []}}, str(path), {})
    path.write_text('[loop]\n[[loop.stages]]\nname = "a"\n[[loop.stages]]\nmode = "plan"\n')
    with pytest.raises(ConfigError, match=r"ralph.toml:4: \[loop.stages\] name: stage #2 has none"):
        loop_settings(str(tmp_path), {"loop": {"stages": [{"name": "a"}, {"mode": "plan"}]}}, str(path), {})


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_tty_status_line_stays_below_output() -> None:
    out = FakeTTY()
    display = Display(out)
    display.status("iteration 1/3 · US-001 · {elapsed}")
    display.output(b"agent says hi\n")
    display.message("iteration 1: US-001: done")
    display.close()
    text = out.getvalue()
    assert "iteration 1/3 · US-001 · 0s" in text
    # the status line is cleared before output and redrawn after it
    assert text.index(CLEAR_LINE + "agent says hi\n") < text.rindex("iteration 1/3")
    assert text.endswith(CLEAR_LINE)


def test_plain_output_has_no_escape_codes() -> None:
    out = io.StringIO()
    display = Display(out)
    display.status("iteration 1/3 · {elapsed}")
    display.output(b"partial line")
    display.message("done")
    assert out.getvalue() == "partial line\nralph-loop: done\n"


def argparse_args(argv: list[str]) -> dict:
    """What argparse makes of argv (parse_args without the flags-only shortcut)."""
    import argparse

    from ralph.commands.loop import OPTIONS
    from ralph.commands.loop_arguments import add_options

    return vars(add_options(argparse.ArgumentParser(prog="ralph-loop"), OPTIONS).parse_args(argv))


def test_flag_only_command_lines_read_as_argparse_reads_them() -> None:
    import itertools

    from ralph.commands.loop import OPTIONS, parse_args, plain_flags

    switches = [flag for flags, options in OPTIONS if options.get("action") == "store_true" for flag in flags]
    assert {"--dry-run", "--once", "-q", "--quiet"} <= set(switches)
    lines = [[]] + [list(line) for size in (1, 2, 3) for line in itertools.product(switches, repeat=size)]
    for argv in lines:
        quick = plain_flags(argv)
        assert quick is not None and vars(quick) == argparse_args(argv), argv
        assert vars(parse_args(argv)) == argparse_args(argv), argv
    for argv in (["--dry"], ["-qC", "."], ["--dry-run", "--plan", "p.md"], ["--dry-run=1"], ["--"], ["-h"], ["x"],
                 ["--max-iterations", "3"], ["-C", "."], ["--mode", "plan"]):
        assert plain_flags(argv) is None, argv  # argparse reads these, with its own errors and help
    assert vars(parse_args(["--dry", "-C", ".", "--max-iterations", "3"])) == argparse_args(["--dry", "-C", ".", "--max-iterations", "3"])


def test_usage_errors_and_help_are_argparse_s(capsys) -> None:
    from ralph.commands.loop import parse_args

    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--max-iterations", "0"])
    assert exit_info.value.code == 2
    assert "argument --max-iterations: must be at least 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--dry-run", "--bogus"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and out.startswith("usage: ralph-loop") and "--dry-run" in out and "exit codes:" in out


def test_atomic_write_that_fails_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch) -> None:
    import os
    from ralph.state.files import atomic_write

    path = tmp_path / "state.json"
    path.write_text("old\n")

    def full_disk(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError):
        atomic_write(str(path), "new\n")
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


PRD_SAMPLES = ["PRD-1", "PRD-12", "PRD-007", "PRD-", "PRD-1a", "prd-1", "PRD-1\n", "PRD-1\n\n", "PRD-\n", "xPRD-1",
               "PRD-١٢", "PRD-²", "PRD--1", "PRD-+1", "PRD- 1", "PRD-1 ", "PRD-1_000", "PRD-１２", ""]


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(hypothesis.strategies.sampled_from(PRD_SAMPLES) | hypothesis.strategies.text(
    alphabet="PRD-0129١²\n _x", max_size=9).map(lambda tail: "PRD-" + tail if tail[:1] != "P" else tail))
def test_prd_folder_names_read_as_the_expression_reads_them(name: str) -> None:
    """paths.prd_number is PRD_DIR (matched by hand: the dry run finds the plan without `re`)."""
    import re

    from ralph.run import paths

    match = re.match(paths.PRD_DIR, name)
    assert paths.prd_number(name) == (int(match.group(1)) if match else None), repr(name)


def test_a_dry_run_reads_hooks_from_every_source_and_loads_no_hook_code_without_one(tmp_path) -> None:
    """ralph-loop checks the lifecycle hooks only where one can come from (RALPH_HOOK*
    variables, the global hooks.toml, .ralph/hooks/, a ralph.toml that mentions hooks):
    each source still gets its hooks checked, and a project with none loads no hook code."""
    from tests.loop_support import Project

    p = Project(tmp_path, "- [ ] US-001: a story\n")
    home = str(tmp_path / "home")
    clean = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config")}
    clean.update({name: "" for name in os.environ if name.startswith("RALPH_HOOK")})
    plain = p.run_loop("--dry-run", env=dict(clean, PYTHONPROFILEIMPORTTIME="1"))
    assert plain.returncode == 0 and "next story: US-001" in plain.stdout, plain.stderr
    assert "ralph.loop.lifecycle.config" not in plain.stderr and "ralph.commands.loop" in plain.stderr
    # each source of hooks, on its own, is read and checked
    bad_env = p.run_loop("--dry-run", env=dict(clean, RALPH_HOOK_TIMEOUT="soon"))
    assert bad_env.returncode == 2 and "RALPH_HOOK_TIMEOUT" in bad_env.stderr, bad_env.stderr
    global_file = os.path.join(home, ".config", "ralph-hooks", "hooks.toml")
    os.makedirs(os.path.dirname(global_file))
    with open(global_file, "w", encoding="utf-8") as f:
        f.write('[[hooks.pre_iteration]]\ncommand = "true"\nexplode = 1\n')
    bad_global = p.run_loop("--dry-run", env=clean)
    assert bad_global.returncode == 2 and global_file in bad_global.stderr and "explode" in bad_global.stderr, bad_global.stderr
    os.remove(global_file)
    p.write(".ralph/hooks/pre_iteration", "#!/bin/sh\ntrue\n")
    os.chmod(os.path.join(p.root, ".ralph", "hooks", "pre_iteration"), 0o755)
    from_dir = p.run_loop("--dry-run", env=clean)
    # read: what it makes of the file is said (here, that its name is not a hook point's)
    assert from_dir.returncode == 0 and "hooks: warning: " + os.path.join(p.root, ".ralph", "hooks", "pre_iteration") in from_dir.stdout, \
        from_dir.stdout + from_dir.stderr
