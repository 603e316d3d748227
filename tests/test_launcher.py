"""bin/ralph run as `python -IS` (the command `ralph install` writes) in the
layouts users and developers install it in: it finds a pip-installed package
without site, an editable one with it, and its site-packages never shadows
the standard library."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import hook_state_dir, load_payload

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHADOW = "import pathlib, sys\npathlib.Path(sys.argv[0]).with_name('shadowed').write_text(__name__)\nraise ImportError('shadowed')\n"


def make_venv(root: str, editable: bool) -> tuple[str, str]:
    """A venv laid out as `python -m venv` + pip would: bin/python (a link to
    this interpreter), pyvenv.cfg, bin/ralph, and ralph in site-packages
    (copied), or a compat-mode editable .pth naming the checkout."""
    bin_dir = os.path.join(root, "bin")
    site_packages = os.path.join(root, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages")
    os.makedirs(bin_dir)
    os.makedirs(site_packages)
    real = os.path.realpath(sys.executable)
    with open(os.path.join(root, "pyvenv.cfg"), "w") as f:
        f.write(f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\n")
    os.symlink(real, os.path.join(bin_dir, "python"))
    shutil.copy(os.path.join(REPO, "bin", "ralph"), os.path.join(bin_dir, "ralph"))
    if editable:
        with open(os.path.join(site_packages, "__editable__.ralph_hooks-0.1.0.pth"), "w") as f:
            f.write(REPO + "\n")
        with open(os.path.join(site_packages, "distutils-precedence.pth"), "w") as f:
            f.write("import _signal\n")  # site runs the import lines of .pth files
    else:
        shutil.copytree(os.path.join(REPO, "ralph"), os.path.join(site_packages, "ralph"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    # a module named like the standard library's: what the hooks import must
    # still be the standard library's (it is, with site: site-packages comes last)
    with open(os.path.join(site_packages, "subprocess.py"), "w") as f:
        f.write(SHADOW)
    return os.path.join(bin_dir, "python"), os.path.join(bin_dir, "ralph")


@pytest.mark.parametrize("editable", [False, True], ids=["pip install", "pip install -e (compat)"])
def test_hooks_run_without_shadowing(tmp_path, repo: str, editable: bool) -> None:
    python, ralph = make_venv(str(tmp_path / "venv"), editable)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG")}
    push = load_payload("PreToolUse_Bash", repo) | {"tool_input": {"command": "cd src && git push"}}
    done = subprocess.run([python, "-IS", "-X", "importtime", ralph, "pre-tool"], input=json.dumps(push), capture_output=True,
                          text=True, cwd=repo, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "ralph.rules.guard.judge" in imported, sorted(imported)
    assert ("site" in imported) == editable, sorted(imported)  # site only where the package is not in site-packages
    # post-tool on a test run imports subprocess (the rollback's git): the standard library's
    ran = load_payload("PostToolUse_Bash", repo) | {"tool_input": {"command": "python -m pytest -q"}}
    ran["tool_response"]["stdout"] = "1 failed, 2 passed in 0.10s"
    done = subprocess.run([python, "-IS", "-X", "importtime", ralph, "post-tool"], input=json.dumps(ran), capture_output=True,
                          text=True, cwd=repo, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "subprocess" in imported, sorted(imported)  # it was imported...
    assert not os.path.exists(os.path.join(os.path.dirname(ralph), "shadowed"))  # ...from the standard library
    # the command line, through the same launcher
    version = subprocess.run([python, "-IS", ralph, "version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("ralph-hooks "), version.stderr


def test_bash_pre_tool_loads_no_re_or_enum(tmp_path, repo: str) -> None:
    # `re` and `enum` (what `json`, `signal` and `subprocess` bring) cost
    # milliseconds: a Bash PreToolUse call, on the fast path or through the
    # whole guard, must not load them, nor site (the launcher runs -IS).
    python, ralph = make_venv(str(tmp_path / "venv"), editable=False)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}
    captured = load_payload("PreToolUse_Bash", repo)
    commands = {"ls -la src": "plain command", captured["tool_input"]["command"]: None, "git push origin main": None}
    for command, guard_note in commands.items():
        payload = captured | {"tool_input": {"command": command}}
        done = subprocess.run([python, "-IS", "-X", "importtime", ralph, "pre-tool"], input=json.dumps(payload), capture_output=True,
                              text=True, cwd=repo, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny") == (command == "git push origin main")
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
        assert ("ralph.rules.guard.judge" in imported) == (guard_note is None), (command, sorted(imported))
        assert not imported & {"re", "enum", "json", "subprocess", "signal", "site", "tomllib", "argparse"}, (command, sorted(imported))
        # no rollback lock file: asking whether a rollback runs is one stat (no flock probe, no fcntl)
        assert "fcntl" not in imported, (command, sorted(imported))
        # without a ralph.toml the guard takes its defaults: no config schema, no
        # config cache (and its _blake2, a shared library); the denial record and
        # the local remotes only for a command that needs them
        assert not imported & {"ralph.config.reading", "ralph.config.schema", "_blake2"}, (command, sorted(imported))
        if command != "git push origin main":
            assert not imported & {"ralph.state.denials", "ralph.claude.local_remotes"}, (command, sorted(imported))
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl"), encoding="utf-8") as f:
        logged = [json.loads(line) for line in f]
    assert [entry.get("guard") for entry in logged] == list(commands.values())


def test_bash_post_tool_of_a_plain_command_parses_nothing(tmp_path, repo: str) -> None:
    # PostToolUse follows every Bash call: `git status` runs no tests, and
    # learning that loads neither the shell parser nor `re`
    python, ralph = make_venv(str(tmp_path / "venv"), editable=False)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}
    ran = load_payload("PostToolUse_Bash", repo) | {"tool_input": {"command": "git status"}}
    done = subprocess.run([python, "-IS", "-X", "importtime", ralph, "post-tool"], input=json.dumps(ran), capture_output=True,
                          text=True, cwd=repo, env=env, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout) == {}, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not imported & {"re", "enum", "ralph.rules.guard.syntax.parser", "ralph.rules.outcome.command_shape", "ralph.config.reading"}, sorted(imported)


def test_bash_pre_tool_with_a_cached_config_loads_no_re_or_enum(tmp_path, repo: str) -> None:
    # With a ralph.toml every Bash command goes through the guard, which reads
    # the [guard] table. The first call parses the file (tomllib, and the re it
    # brings) and caches the parse; every later call reads the cache: no TOML,
    # no re or enum, no json, and no __future__ from the config package.
    python, ralph = make_venv(str(tmp_path / "venv"), editable=False)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}
    with open(os.path.join(repo, "ralph.toml"), "w", encoding="utf-8") as f:
        f.write('[guard]\nblock_programs = ["npm publish"]\nforge_merges = false\n')
    captured = load_payload("PreToolUse_Bash", repo)

    def call(command: str) -> tuple[bool, set[str]]:
        payload = captured | {"tool_input": {"command": command}}
        done = subprocess.run([python, "-IS", "-X", "importtime", ralph, "pre-tool"], input=json.dumps(payload), capture_output=True,
                              text=True, cwd=repo, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        denied = json.loads(done.stdout).get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
        return denied, {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}

    denied, first = call("npm test")
    assert not denied and "tomllib" in first, sorted(first)
    for command, blocked in (("npm publish --tag next", True), ("gh pr merge 7", False), (captured["tool_input"]["command"], False),
                             ("git push origin main", True)):
        denied, imported = call(command)
        assert denied == blocked, command  # the [guard] table applies, read from the cache
        assert {"ralph.rules.guard.judge", "ralph.config.reading"} <= imported, (command, sorted(imported))
        assert not imported & {"re", "enum", "json", "tomllib", "__future__", "subprocess", "signal", "site", "argparse"}, (
            command, sorted(imported))
