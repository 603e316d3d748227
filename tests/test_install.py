"""`ralph install` / `uninstall` / `doctor` and the plugin, through the
installed entry point, with an isolated HOME (the client's own locations)."""
from __future__ import annotations

import glob
import json
import os
import subprocess

import pytest

from tests.conftest import RALPH, git, load_payload, run_hook

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBCOMMANDS = {"PreToolUse": "pre-tool", "PostToolUse": "post-tool", "PostToolUseFailure": "post-tool-failure",
               "UserPromptSubmit": "prompt", "Stop": "stop", "PreSkillShellCommand": "skill-shell"}
OTHER_TOOL = {"matcher": "Bash", "hooks": [{"type": "command", "command": "other-tool check", "timeout": 5}]}


def ralph(args: list[str], home: str, cwd: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`ralph` with no Claude Code in reach (the client's side: tests/e2e)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RALPH_"))}
    env["HOME"] = home
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if not os.path.exists(os.path.join(d, "claude")))
    return subprocess.run([RALPH, *args], capture_output=True, text=True, cwd=cwd, env=env, input=stdin, timeout=120)


@pytest.fixture
def home(tmp_path) -> str:
    path = tmp_path / "home"
    (path / ".claude").mkdir(parents=True)
    return str(path)


def unproven_but_clean(done: subprocess.CompletedProcess) -> bool:
    """Doctor found no problem but ran no client (none on PATH here): it must
    not claim a pass (exit 1, NOT PROVEN, no FAIL line)."""
    return done.returncode == 1 and "NOT PROVEN" in done.stdout and "[FAIL]" not in done.stdout and "all checks passed" not in done.stdout


def user_settings(home: str) -> str:
    return os.path.join(home, ".claude", "settings.json")


def read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write(path: str, data: object) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(data if isinstance(data, str) else json.dumps(data))


def test_install_merges_keeps_everything_else_and_is_idempotent(home: str, repo: str) -> None:
    original = {"model": "opus", "permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PreToolUse": [OTHER_TOOL]}}
    write(user_settings(home), original)
    first = ralph(["install", "--user"], home, repo)
    assert first.returncode == 0, first.stderr
    assert "+++ " + user_settings(home) in first.stdout  # the diff
    data = read(user_settings(home))
    assert data["model"] == "opus" and data["permissions"] == original["permissions"]
    assert data["hooks"]["PreToolUse"][0] == OTHER_TOOL
    ours = data["hooks"]["PreToolUse"][1]["hooks"][0]
    assert ours["onFailure"] == "block" and ours["timeout"] == 30
    words = ours["command"].split()
    assert words[-1] == "pre-tool" and all(os.path.isabs(w) for w in words if not w.startswith("-") and w != "pre-tool")
    for event, sub in SUBCOMMANDS.items():
        assert data["hooks"][event][-1]["hooks"][0]["command"].endswith(" " + sub)
    backups = glob.glob(user_settings(home) + ".ralph-backup-*")
    assert len(backups) == 1 and read(backups[0]) == original
    before = open(user_settings(home)).read()
    second = ralph(["install", "--user"], home, repo)
    assert second.returncode == 0 and "nothing changed" in second.stdout
    assert open(user_settings(home)).read() == before
    assert len(glob.glob(user_settings(home) + ".ralph-backup-*")) == 1


def test_uninstall_removes_exactly_ours(home: str, repo: str) -> None:
    original = {"model": "opus", "hooks": {"PreToolUse": [OTHER_TOOL]}}
    write(user_settings(home), original)
    assert ralph(["install"], home, repo).returncode == 0
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0, done.stderr
    assert read(user_settings(home)) == original
    assert "nothing changed" in ralph(["uninstall"], home, repo).stdout


def test_dry_run_writes_nothing(home: str, repo: str) -> None:
    done = ralph(["install", "--project", "--dry-run"], home, repo)
    assert done.returncode == 0 and "pre-tool" in done.stdout and "dry run" in done.stdout
    assert not os.path.exists(os.path.join(repo, ".claude"))


def test_invalid_json_names_file_and_line_and_writes_nothing(home: str, repo: str) -> None:
    text = '{\n  "model": "opus",\n  "hooks": {,\n}\n'
    write(user_settings(home), text)
    done = ralph(["install"], home, repo)
    assert done.returncode == 1
    assert f"{user_settings(home)}:3:" in done.stderr and "nothing was written" in done.stderr
    assert open(user_settings(home)).read() == text
    assert not glob.glob(user_settings(home) + ".ralph-backup-*")


def test_project_and_local_scopes(home: str, repo: str) -> None:
    assert ralph(["install", "--project"], home, repo).returncode == 0
    assert ralph(["install", "--local"], home, repo).returncode == 0
    assert "PreToolUse" in read(os.path.join(repo, ".claude", "settings.json"))["hooks"]
    assert "Stop" in read(os.path.join(repo, ".claude", "settings.local.json"))["hooks"]
    assert not os.path.exists(user_settings(home))


def test_entries_in_the_ignored_user_local_file_are_found_and_moved(home: str, repo: str) -> None:
    ignored = os.path.join(home, ".claude", "settings.local.json")
    write(ignored, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ralph pre-tool"}]}], "Stop": [OTHER_TOOL]}})
    doctor = ralph(["doctor", "--no-round-trip"], home, repo)
    assert doctor.returncode == 1
    assert "does not read this file" in doctor.stdout and "ralph install --user --move" in doctor.stdout
    offered = ralph(["install"], home, repo)
    assert offered.returncode == 0 and "never run" in offered.stdout and "--move" in offered.stdout
    assert "ralph pre-tool" in open(ignored).read()  # only offered: nothing moved without --move
    moved = ralph(["install", "--move"], home, repo)
    assert moved.returncode == 0, moved.stderr
    assert read(ignored) == {"hooks": {"Stop": [OTHER_TOOL]}}
    assert unproven_but_clean(ralph(["doctor"], home, repo))


def test_misspelt_event_impossible_matcher_and_missing_command(home: str, repo: str) -> None:
    write(user_settings(home), {"hooks": {
        "PreToolUse": [{"matcher": "bash|edit", "hooks": [{"type": "command", "command": "/nowhere/bin/ralph pre-tool", "timeout": 30000}]}],
        "PostToolUses": [{"hooks": [{"type": "command", "command": "ralph post-tool"}]}],
    }})
    doctor = ralph(["doctor", "--json"], home, repo)
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    failures = "\n".join(c["detail"] for c in report["checks"] if c["status"] == "fail")
    assert "PostToolUses: no such Claude Code event" in failures and "'PostToolUse'" in failures
    assert "never matches Bash, Edit" in failures
    assert "/nowhere/bin/ralph, which does not exist" in failures
    assert "timeout 30000" in failures
    assert all(c["fix"] for c in report["checks"] if c["status"] == "fail")
    fixed = ralph(["install"], home, repo)
    assert fixed.returncode == 0 and "would not have worked" in fixed.stdout
    assert "PostToolUses" not in read(user_settings(home))["hooks"]
    assert unproven_but_clean(ralph(["doctor"], home, repo))


def test_doctor_reports_latency_and_without_a_client_does_not_claim_a_pass(home: str, repo: str) -> None:
    assert ralph(["install"], home, repo).returncode == 0
    done = ralph(["doctor", "--json"], home, repo)
    report = json.loads(done.stdout)
    assert set(report["latency_ms"]) == set(SUBCOMMANDS)
    assert done.returncode == 1 and not report["ok"] and not report["proven"], done.stdout
    assert not [c for c in report["checks"] if c["status"] == "fail"]
    claude = next(c for c in report["checks"] if c["check"] == "claude")
    assert claude["status"] == "warn" and "no Claude Code found" in claude["detail"] and "--client" in claude["fix"]
    plain = ralph(["doctor"], home, repo)
    assert unproven_but_clean(plain), plain.stdout
    assert "no Claude Code session ran" in plain.stdout


def test_doctor_says_plainly_when_the_client_cannot_run(home: str, repo: str, tmp_path) -> None:
    assert ralph(["install"], home, repo).returncode == 0
    broken = tmp_path / "bin" / "claude"
    broken.parent.mkdir()
    broken.write_text("#!/bin/sh\necho 'claude: cannot load its runtime' >&2\nexit 1\n")
    broken.chmod(0o755)
    done = ralph(["doctor", "--client", str(broken)], home, repo)
    assert done.returncode == 1 and "all checks passed" not in done.stdout
    assert f"[FAIL] claude: Claude Code at {broken} does not run" in done.stdout and "cannot load its runtime" in done.stdout


def test_doctor_fails_with_a_missing_binary_and_bad_toml(home: str, repo: str, tmp_path) -> None:
    fake = tmp_path / "bin" / "ralph"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexec " + RALPH + ' "$@"\n')
    fake.chmod(0o755)
    assert ralph(["install", "--binary", str(fake)], home, repo).returncode == 0
    assert unproven_but_clean(ralph(["doctor"], home, repo))
    fake.unlink()
    gone = ralph(["doctor"], home, repo)
    assert gone.returncode == 1 and f"{fake}, which does not exist" in gone.stdout
    assert ralph(["install"], home, repo).returncode == 0
    write(os.path.join(repo, "ralph.toml"), '[rollback]\npolicy = "sometimes"\n\n[guard]\nblock_programs = "gh"\n')
    bad = ralph(["doctor"], home, repo)
    assert bad.returncode == 1
    assert "ralph.toml:2: [rollback] policy: must be one of" in bad.stdout
    assert "ralph.toml:5: [guard] block_programs: must be a list" in bad.stdout


def test_interactive_hook_calls_leave_the_work_tree_clean(repo: str) -> None:
    # outside a loop run, session state goes inside .git/: `git add -A` never sees it
    run_hook("prompt", load_payload("UserPromptSubmit", repo), repo)
    run_hook("post-tool", load_payload("PostToolUse_Read", repo), repo)
    run_hook("pre-tool", load_payload("PreToolUse_Edit", repo), repo)
    assert os.path.exists(os.path.join(repo, ".git", "ralph", "logs", "hooks.jsonl"))
    assert not os.path.exists(os.path.join(repo, ".ralph"))
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""


def test_install_writes_a_missing_state_gitignore(home: str, repo: str) -> None:
    os.makedirs(os.path.join(repo, ".ralph", "logs"))
    done = ralph(["install"], home, repo)
    assert done.returncode == 0 and os.path.exists(os.path.join(repo, ".ralph", ".gitignore"))


def test_a_users_state_gitignore_is_never_overwritten(repo: str) -> None:
    os.makedirs(os.path.join(repo, ".ralph"))
    write(os.path.join(repo, ".ralph", ".gitignore"), "logs/\n")
    run_hook("prompt", load_payload("UserPromptSubmit", repo), repo)
    assert open(os.path.join(repo, ".ralph", ".gitignore")).read() == "logs/\n"


@pytest.mark.parametrize("sub", ["pre-tool", "post-tool", "post-tool-failure", "prompt", "stop", "hook"])
def test_hook_help_writes_nothing(tmp_path, sub: str) -> None:
    done = subprocess.run([RALPH, sub, "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert done.returncode == 0 and "usage: ralph " + sub in done.stdout
    assert os.listdir(tmp_path) == []


def test_demo_into_a_closed_pipe_ends_quietly() -> None:
    done = subprocess.run(f"{RALPH} demo | head -1", shell=True, capture_output=True, text=True, timeout=300)
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_loop_dry_run_into_a_closed_pipe_ends_quietly(repo: str) -> None:
    os.makedirs(os.path.join(repo, ".ralph"), exist_ok=True)
    with open(os.path.join(repo, ".ralph", "plan.md"), "w") as f:
        f.write("- [ ] US-001: First story\n  - it works\n")
    loop = os.path.join(os.path.dirname(RALPH), "ralph-loop")
    for command in (f"{loop} --dry-run", f"{RALPH} loop --dry-run"):
        # `true` leaves before the loop has started: its first write meets a closed pipe
        done = subprocess.run(f"{command} | true; echo status=${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                              capture_output=True, text=True, timeout=300, cwd=repo)
        assert done.stdout in ("status=141\n", "status=0\n"), (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_settings_example_and_plugin_follow_the_entry_table() -> None:
    from ralph.commands.install import LAUNCHER_COMMAND, plugin_hooks, plugin_manifest, render, wanted_hooks

    example = read(os.path.join(REPO, "settings.example.json"))
    assert example == {"hooks": wanted_hooks("ralph")}
    assert open(os.path.join(REPO, "hooks", "hooks.json")).read() == render(plugin_hooks())
    assert read(os.path.join(REPO, ".claude-plugin", "plugin.json")) == plugin_manifest()
    assert LAUNCHER_COMMAND.endswith("/hooks/ralph-hook")
    assert os.path.realpath(os.path.join(REPO, "hooks", "ralph-hook")) == os.path.join(REPO, "ralph", "data", "ralph-hook")


def test_install_plugin_writes_a_plugin_that_fails_closed(home: str, repo: str, tmp_path) -> None:
    plugin = str(tmp_path / "plugin")
    done = ralph(["install", "--plugin", plugin], home, repo)
    assert done.returncode == 0, done.stderr
    assert read(os.path.join(plugin, ".claude-plugin", "plugin.json"))["name"] == "ralph-hooks"
    launcher = os.path.join(plugin, "hooks", "ralph-hook")
    payload = json.dumps(load_payload("PreToolUse_Bash", repo) | {"tool_input": {"command": "git push"}})
    env = {"PATH": "/usr/bin:/bin", "HOME": home}
    answer = json.loads(subprocess.run([launcher, "pre-tool"], input=payload, capture_output=True, text=True, env=env, cwd=repo).stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny" and "git push" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    # the ralph it was written for is gone: deny, do not allow
    env["RALPH"] = "/nowhere/ralph"
    answer = json.loads(subprocess.run([launcher, "pre-tool"], input=payload, capture_output=True, text=True, env=env, cwd=repo).stdout)
    assert "not installed" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert ralph(["doctor", "--plugin", plugin, "--no-round-trip"], home, repo).returncode == 0


def test_the_installed_hook_command_loads_only_what_it_needs(home: str, repo: str) -> None:
    assert ralph(["install"], home, repo).returncode == 0
    command = read(user_settings(home))["hooks"]["PreToolUse"][-1]["hooks"][0]["command"]
    words = command.split()
    assert words[1] == "-IS" and words[-1] == "pre-tool"
    payload = load_payload("PreToolUse_Bash", repo) | {"tool_input": {"command": "ls -la src"}}
    done = subprocess.run([words[0], "-X", "importtime", *words[1:]], input=json.dumps(payload), capture_output=True, text=True, cwd=repo)
    assert json.loads(done.stdout) == {}
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "ralph.claude.handlers.pre_bash" in imported
    # an editable install (scripts/test's) is found through site; that a pip
    # install starts without it is tests/test_launcher.py's to check
    import ralph as package

    editable = "site-packages" not in os.path.realpath(package.__file__)
    unwanted = {"re", "argparse", "ralph.cli", "__future__", "_json"} | (set() if editable else {"site"})
    # the fast path: no guard, no config module
    assert not imported & (unwanted | {"ralph.rules.guard.judge", "ralph.config"}), sorted(imported)
    # the full guard, for a command the fast path leaves to it: still no
    # __future__, and no program model but git's (the one program here with a model)
    payload["tool_input"]["command"] = "cat README.md notes.txt && echo to-stderr >&2 && git status --porcelain"
    done = subprocess.run([words[0], "-X", "importtime", *words[1:]], input=json.dumps(payload), capture_output=True, text=True, cwd=repo)
    assert json.loads(done.stdout) == {}
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "ralph.rules.guard.judge" in imported
    assert "ralph.rules.guard.programs.git" in imported
    lazy = {f"ralph.rules.guard.programs.{name}" for name in ("forges", "shells", "wrappers", "data_exec", "shell_builtins", "name_globs")}
    assert not imported & (unwanted | lazy), sorted(imported)


def test_install_sandbox_merges_the_layer_once(home: str, repo: str) -> None:
    from ralph.sandbox import probe

    assert ralph(["install", "--user", "--sandbox"], home, repo).returncode == 2  # project paths do not belong in user settings
    works, why = probe()
    if not works:
        pytest.skip(f"the Bash sandbox cannot run here: {why}")
    path = os.path.join(repo, ".claude", "settings.json")
    write(path, {"sandbox": {"filesystem": {"denyWrite": ["/mine"]}}, "env": {"A": "1"}})
    assert ralph(["install", "--project", "--sandbox"], home, repo).returncode == 0
    data = read(path)
    assert data["sandbox"]["enabled"] is True and data["env"] == {"A": "1"}
    assert data["sandbox"]["filesystem"]["denyWrite"][0] == "/mine" and len(data["sandbox"]["filesystem"]["denyWrite"]) > 1
    assert "nothing changed" in ralph(["install", "--project", "--sandbox"], home, repo).stdout


def test_doctor_fails_when_settings_enable_a_sandbox_that_cannot_run(home: str, repo: str, tmp_path) -> None:
    write(os.path.join(repo, ".claude", "settings.json"), {"sandbox": {"enabled": True}})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "RALPH_"))}
    env.update(HOME=home, PATH=str(tmp_path))  # no bwrap, no socat
    done = subprocess.run([RALPH, "doctor", "--no-round-trip"], capture_output=True, text=True, cwd=repo, env=env, timeout=120)
    assert done.returncode == 1
    assert "cannot run here" in done.stdout and "apt-get install bubblewrap socat" in done.stdout


# ---- install and uninstall leave no trace -------------------------------------------

HAND_WRITTEN = (
    '{\n'
    '    "model":   "opus",\n'
    '    "permissions": {"allow": ["Bash(ls)"]},\n'
    '    "hooks": {\n'
    '        "PreToolUse": [\n'
    '            {"matcher": "Bash", "hooks": [{"type": "command", "command": "other-tool check", "timeout": 5}]}\n'
    '        ]\n'
    '    }\n'
    '}\n'
)


def files_in(directory: str) -> list[str]:
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def test_install_then_uninstall_on_a_home_without_settings_leaves_nothing(home: str, repo: str) -> None:
    claude = os.path.join(home, ".claude")
    assert ralph(["install", "--user"], home, repo).returncode == 0
    assert "PreToolUse" in read(user_settings(home))["hooks"]
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0, done.stderr
    assert "ralph install had created it" in done.stdout
    assert files_in(claude) == []  # no `{}` left, no record, no backup


def test_a_config_dir_that_install_made_goes_with_the_file(tmp_path, repo: str) -> None:
    home = str(tmp_path / "bare-home")
    os.makedirs(home)
    assert ralph(["install", "--user"], home, repo).returncode == 0
    assert ralph(["uninstall", "--user"], home, repo).returncode == 0
    assert files_in(home) == []


def test_uninstall_puts_back_the_original_bytes(home: str, repo: str) -> None:
    write(user_settings(home), HAND_WRITTEN)
    installed = ralph(["install", "--user"], home, repo)
    assert installed.returncode == 0, installed.stderr
    data = read(user_settings(home))
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "other-tool check" and len(data["hooks"]["PreToolUse"]) == 2
    text = open(user_settings(home)).read()
    assert text.startswith('{\n    "model":   "opus",\n    "permissions": {"allow": ["Bash(ls)"]},\n')  # the file's own text stays
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0 and "restored" in done.stdout, done.stdout
    assert open(user_settings(home)).read() == HAND_WRITTEN
    assert files_in(os.path.join(home, ".claude")) == ["settings.json"]


def test_uninstall_after_another_change_takes_out_only_ours_and_keeps_the_text(home: str, repo: str) -> None:
    write(user_settings(home), HAND_WRITTEN)
    assert ralph(["install", "--user"], home, repo).returncode == 0
    changed = open(user_settings(home)).read().replace('"model":   "opus",\n', '"model":   "opus",\n    "theme": "dark",\n', 1)
    write(user_settings(home), changed)
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0 and "removed ralph hooks" in done.stdout, done.stdout
    assert open(user_settings(home)).read() == HAND_WRITTEN.replace('"model":   "opus",\n', '"model":   "opus",\n    "theme": "dark",\n', 1)
    backups = glob.glob(user_settings(home) + ".ralph-backup-*")
    assert any(open(b).read() == changed for b in backups)  # the changed file is kept before ours go
    assert not os.path.exists(user_settings(home) + ".ralph-install.json")


def test_a_file_ralph_created_and_another_tool_added_to_keeps_their_part(home: str, repo: str) -> None:
    assert ralph(["install", "--user"], home, repo).returncode == 0
    write(user_settings(home), json.dumps(read(user_settings(home)) | {"theme": "dark"}, indent=4) + "\n")
    assert ralph(["uninstall", "--user"], home, repo).returncode == 0
    assert read(user_settings(home)) == {"theme": "dark"}


def test_a_reinstall_keeps_the_original_for_uninstall(home: str, repo: str, tmp_path) -> None:
    write(user_settings(home), HAND_WRITTEN)
    assert ralph(["install", "--user"], home, repo).returncode == 0
    other = tmp_path / "bin" / "ralph"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\nexec " + RALPH + ' "$@"\n')
    other.chmod(0o755)
    again = ralph(["install", "--user", "--binary", str(other)], home, repo)
    assert again.returncode == 0 and str(other) in open(user_settings(home)).read()
    assert len(glob.glob(user_settings(home) + ".ralph-backup-*")) == 1  # ralph's own text needs no backup
    assert ralph(["uninstall", "--user"], home, repo).returncode == 0
    assert open(user_settings(home)).read() == HAND_WRITTEN
    assert files_in(os.path.join(home, ".claude")) == ["settings.json"]


def test_install_and_uninstall_edit_a_one_line_file_in_place(home: str, repo: str) -> None:
    original = '{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool stop"}]}]}}'
    write(user_settings(home), original)
    assert ralph(["install", "--user"], home, repo).returncode == 0
    text = open(user_settings(home)).read()
    assert "\n" not in text.strip() and text.startswith('{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool stop"}]}, ')
    write(user_settings(home), text.replace('"model": "opus"', '"model": "sonnet"'))
    assert ralph(["uninstall", "--user"], home, repo).returncode == 0
    assert open(user_settings(home)).read() == original.replace('"model": "opus"', '"model": "sonnet"')


# ---- any settings file comes back byte for byte ----

def tabs_and_trailing_spaces(text: str) -> str:
    return "".join(line.replace("    ", "\t") + ("  " if line.startswith("    \"model\"") else "") for line in text.splitlines(True))


ODD_FILES = {
    "crlf": HAND_WRITTEN.replace("\n", "\r\n"),
    "bom": "\ufeff" + HAND_WRITTEN,
    "tabs_and_trailing_spaces": tabs_and_trailing_spaces(HAND_WRITTEN).replace(",\n", ",   \n"),
    "all_of_them": "\ufeff" + tabs_and_trailing_spaces(HAND_WRITTEN).replace("\n", " \r\n"),
    "no_final_newline_crlf": HAND_WRITTEN.rstrip("\n").replace("\n", "\r\n"),
}


def write_bytes(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("kind", sorted(ODD_FILES))
def test_uninstall_puts_back_any_settings_file_byte_for_byte(home: str, repo: str, kind: str) -> None:
    original = ODD_FILES[kind].encode("utf-8")
    write_bytes(user_settings(home), original)
    installed = ralph(["install", "--user"], home, repo)
    assert installed.returncode == 0, installed.stderr
    text = read_bytes(user_settings(home)).decode("utf-8")
    assert json.loads(text.lstrip("\ufeff"))["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "other-tool check"
    assert text.startswith("\ufeff") == original.startswith(b"\xef\xbb\xbf")  # the file's own form stays
    if b"\r\n" in original:
        assert text.count("\n") == text.count("\r\n")
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0 and "restored" in done.stdout, (done.stdout, done.stderr)
    assert read_bytes(user_settings(home)) == original
    assert files_in(os.path.join(home, ".claude")) == ["settings.json"]


def test_uninstall_after_another_change_keeps_crlf_lines(home: str, repo: str) -> None:
    original = ODD_FILES["crlf"]
    write_bytes(user_settings(home), original.encode())
    assert ralph(["install", "--user"], home, repo).returncode == 0
    changed = read_bytes(user_settings(home)).replace(b'"model":   "opus",\r\n', b'"model":   "opus",\r\n    "theme": "dark",\r\n', 1)
    write_bytes(user_settings(home), changed)
    done = ralph(["uninstall", "--user"], home, repo)
    assert done.returncode == 0 and "removed ralph hooks" in done.stdout, done.stdout
    assert read_bytes(user_settings(home)) == original.replace('"model":   "opus",\r\n', '"model":   "opus",\r\n    "theme": "dark",\r\n', 1).encode()


def test_uninstall_keeps_the_backup_when_the_file_does_not_read_back_as_it(home: str, repo: str, monkeypatch) -> None:
    from ralph.commands import install, uninstall

    write_bytes(user_settings(home), ODD_FILES["crlf"].encode())
    assert ralph(["install", "--user"], home, repo).returncode == 0
    [backup] = glob.glob(user_settings(home) + ".ralph-backup-*")
    assert read_bytes(backup) == ODD_FILES["crlf"].encode()

    def lf_only(path: str, text: str | bytes, existed: bool) -> None:  # a write that loses the CRs
        install.atomic_write(path, (text if isinstance(text, bytes) else text.encode()).replace(b"\r\n", b"\n"))

    monkeypatch.setattr(uninstall, "write_settings", lf_only)
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(repo)
    for name in [n for n in os.environ if n.startswith(("CLAUDE", "RALPH_"))]:
        monkeypatch.delenv(name)
    assert uninstall.uninstall_main(["--user"]) == 1
    assert read_bytes(backup) == ODD_FILES["crlf"].encode()  # the only copy of the original stays
    assert os.path.exists(install.record_path(user_settings(home)))
