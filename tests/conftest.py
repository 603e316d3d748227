"""Shared test helpers: run the installed `ralph` entry point as Claude Code
does (a subprocess fed one JSON payload on stdin), on real git repos in tmp."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
# the real payloads ship with the package (demo and doctor replay them): one copy
HOOK_INPUTS = os.path.join(os.path.dirname(HERE), "ralph", "data", "payloads")
CAPTURED_PROJECT = "/home/dev/app"  # the cwd the real payloads were captured in


# ---- failures as they happen ------------------------------------------------
# `pytest -q` prints a dot per test and names failures only in the closing
# summary; a run of several minutes should say which test failed, and why in
# one line, the moment it fails (the summary still follows at the end).

FAILURE_LINE_WIDTH = 160


def one_line_reason(report: pytest.TestReport) -> str:
    """The first line of what went wrong (the assertion, the exception, the fail() message)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if isinstance(report.longrepr, tuple):  # a skip-shaped (path, line, message) repr
        text = str(report.longrepr[-1])
    else:
        text = crash.message if crash is not None else str(report.longrepr or "")
    first = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= FAILURE_LINE_WIDTH else first[: FAILURE_LINE_WIDTH - 3] + "..."


_CONFIG: pytest.Config | None = None  # the run's config: the failure line needs its terminal


def pytest_configure(config: pytest.Config) -> None:
    global _CONFIG
    _CONFIG = config


@pytest.hookimpl(trylast=True)  # after the terminal reporter's own F/E letter
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not report.failed or _CONFIG is None or hasattr(_CONFIG, "workerinput"):  # xdist workers report through the controller
        return
    terminal = _CONFIG.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return
    kind = "FAILED" if report.when == "call" else f"ERROR at {report.when} of"
    if getattr(terminal._tw, "width_of_current_line", 0):  # -q leaves the dots' line open
        terminal.write("\n")
    terminal.write_line(f"{kind} {report.nodeid} - {one_line_reason(report)}", red=True, bold=True)


# ---- the real-client e2e in the closing summary -----------------------------
# Here, not in tests/e2e/conftest.py: an xdist controller loads only the
# conftest files of the paths it is given, and prints the summary.

E2E_RUNS_PROPERTY = "e2e_client_runs"  # [(seconds, network, release), ...] on a test's teardown report


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    runs = [run for reports in terminalreporter.stats.values() for report in reports
            for name, value in getattr(report, "user_properties", ()) if name == E2E_RUNS_PROPERTY for run in value]
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "E2E SKIPPED" in str(getattr(report, "longrepr", ""))
    ]
    if not runs and not skipped:
        return
    terminalreporter.section("ralph-hooks e2e (real Claude Code CLI)")
    if skipped:
        reason = str(skipped[0].longrepr[-1]) if isinstance(skipped[0].longrepr, tuple) else str(skipped[0].longrepr)
        terminalreporter.write_line(f"{len(skipped)} e2e test(s) SKIPPED: {reason}", yellow=True, bold=True)
    if runs:
        total = sum(seconds for seconds, _, _ in runs)
        terminalreporter.write_line(f"{len(runs)} client run(s), {total:.1f}s in the client; Claude Code {runs[0][2]} "
                                    f"(and releases pinned by tests); network: {runs[0][1]}")
        if any("no network namespace" in network for _, network, _ in runs):
            terminalreporter.write_line("WARNING: ran WITHOUT a network namespace", yellow=True, bold=True)


# ---- pytest-xdist (scripts/test runs `-n 2 --dist loadgroup`) ----------------
# A worker takes a whole module (its module-scoped fixtures, such as the
# guard's corpus run, then run once), and all of tests/e2e: those tests share
# one record of the client runs (test_e2e_hooks checks every run of ours).


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        module = item.nodeid.split("::")[0]
        group = "e2e" if module.startswith("tests/e2e/") else module
        item.add_marker(pytest.mark.xdist_group(group))


def ralph_executable() -> str:
    """The installed console script next to this interpreter (what users run)."""
    candidate = os.path.join(os.path.dirname(sys.executable), "ralph")
    if os.path.exists(candidate):
        return candidate
    found = shutil.which("ralph")
    if not found:
        pytest.fail("the `ralph` console script is not installed: run `pip install -e .` first")
    return found


RALPH = ralph_executable()


def hook_state_dir(root: str) -> str:
    """Where the hooks keep a project's state (the product's rule, restated):
    `.ralph/` once ralph-loop or `ralph init` made it (its .gitignore, or a
    run.json), else inside the git directory, so an interactive session never
    writes into the work tree."""
    own = os.path.join(root, ".ralph")
    if os.path.lexists(os.path.join(own, ".gitignore")) or os.path.lexists(os.path.join(own, "run.json")):
        return own
    return os.path.join(root, ".git", "ralph")


def load_payload(name: str, project: str | None = None) -> dict:
    with open(os.path.join(HOOK_INPUTS, f"{name}.json"), encoding="utf-8") as f:
        text = f.read()
    if project is not None:
        text = text.replace(CAPTURED_PROJECT, project)
    return json.loads(text)


class HookResult:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.output = json.loads(proc.stdout)  # exactly one JSON document, or this raises

    @property
    def denied(self) -> bool:
        return (self.output.get("hookSpecificOutput") or {}).get("permissionDecision") == "deny"

    @property
    def reason(self) -> str:
        specific = self.output.get("hookSpecificOutput") or {}
        return specific.get("permissionDecisionReason") or self.output.get("reason") or ""

    @property
    def context(self) -> str:
        return (self.output.get("hookSpecificOutput") or {}).get("additionalContext") or ""


def run_hook(subcommand: str, payload: dict | bytes | str, cwd: str, env: dict | None = None, timeout: float = 30) -> HookResult:
    if isinstance(payload, dict):
        data = json.dumps(payload).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload
    full_env = dict(os.environ)
    full_env.pop("CLAUDE_PROJECT_DIR", None)
    full_env.pop("RALPH_CONFIG", None)
    if env:
        full_env.update(env)
    proc = subprocess.run([RALPH, subcommand], input=data, capture_output=True, cwd=cwd, env=full_env, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr, proc.stderr
    return HookResult(proc)


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path) -> str:
    """A real git repo with one commit (README.md = "hello\\n")."""
    root = str(tmp_path / "repo")
    os.makedirs(root)
    subprocess.run(["git", "init", "-q", "-b", "main", root], check=True)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("hello\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return os.path.realpath(root)


_held_loop_locks: list[int] = []


def hold_loop_lock(state_dir: str) -> None:
    """Stand in for a live ralph-loop beside a run.json a test wrote: hold
    `.ralph/loop.lock` as the loop does (flock, exclusive) until the test
    ends. Hooks act for a "running" run only while its loop holds the lock."""
    import fcntl

    os.makedirs(state_dir, exist_ok=True)
    fd = os.open(os.path.join(state_dir, "loop.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _held_loop_locks.append(fd)


def release_loop_locks() -> None:
    while _held_loop_locks:
        os.close(_held_loop_locks.pop())


@pytest.fixture(autouse=True)
def _loop_locks_released():
    yield
    release_loop_locks()
