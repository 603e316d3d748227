"""Drive the real Claude Code CLI against a scripted Messages API.

    from .harness import make_repo, run_scenario, bash, read, edit, write, text

    repo = make_repo(tmp_path, files={"app.py": "x = 1\\n"})
    result = run_scenario(repo, [read(f"{repo}/app.py"), text("done")], prompt="Look at app.py")
    assert result.tool_result(...)

Each run: an isolated HOME / CLAUDE_CONFIG_DIR, a settings file with the hooks
of settings.example.json verbatim (the command lines a user installs), the
directory holding `ralph` first on PATH, and -- when `unshare -n` works -- a
fresh network namespace holding both the scripted server and the client, so
nothing can leave the machine. See tests/e2e/README.md for the full API.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from ..conftest import hold_loop_lock, hook_state_dir
from .api_server import (EXHAUSTED_TEXT, SIDE_TEXT, ScriptedServer, bash, disconnect, edit, overloaded, rate_limited, read, text,
                         tool_use, unified_headers, write)

__all__ = [
    "EXHAUSTED_TEXT",
    "SIDE_TEXT",
    "RESULTS",
    "RunResult",
    "ScenarioResult",
    "OLD_RELEASES",
    "SECOND_VERSION",
    "ScriptedServer",
    "assert_hooks_answered_cleanly",
    "bash",
    "claude_binary",
    "disconnect",
    "claude_command",
    "client_env",
    "client_flags",
    "client_version",
    "edit",
    "git",
    "hook_settings",
    "make_bare_remote",
    "make_repo",
    "overloaded",
    "rate_limited",
    "read",
    "reports_hook_events",
    "require_claude",
    "run_scenario",
    "run_with_server",
    "sandbox_mode",
    "text",
    "tool_use",
    "unified_headers",
    "write",
    "write_active_run",
]

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]
SETTINGS_EXAMPLE = REPO_ROOT / "settings.example.json"
INSTALL_SCRIPT = REPO_ROOT / "scripts" / "install_claude.py"
SANDBOX_RUN = E2E_DIR / "sandbox_run.py"

DUMMY_API_KEY = "sk-ant-e2e-dummy-key-not-a-secret"
DUMMY_OAUTH_TOKEN = "sk-ant-oat01-e2e-dummy-token-not-a-secret"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "E2E Tester",
    "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
    "GIT_COMMITTER_NAME": "E2E Tester",
    "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
}
# Inherited variables that would change what the client, git or a nested
# pytest does (a real API key, a parent Claude session, a user's git config).
STRIPPED_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE", "RALPH_", "GIT_", "OTEL_", "PYTEST_", "XDG_", "AWS_", "GOOGLE_", "VERTEX_")
CLIENT_FLAGS = ("--output-format", "stream-json", "--verbose", "--include-hook-events", "--dangerously-skip-permissions")
OUTER_GRACE_SECONDS = 25.0

# Every run in this process, so a test can check a property across scenarios.
RESULTS: list[RunResult] = []


# ---------------------------------------------------------------- the client


@functools.lru_cache(maxsize=1)
def _installer():
    spec = importlib.util.spec_from_file_location("ralph_install_claude", INSTALL_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the old releases the old_clients tests pin (the last 1.0, the last 2.0 before
# PostToolUseFailure), installed by scripts/install_claude.py --old
OLD_RELEASES: tuple[str, ...] = _installer().OLD_RELEASES
# the last 2.0, which scripts/test drives beside the suite's client (--second)
SECOND_VERSION: str = _installer().SECOND_VERSION


def client_version() -> str:
    """The release the suite drives: --claude-version / $RALPH_CLAUDE_VERSION, else the installer's VERSION."""
    return _installer().wanted_version()


def install_status(version: str | None = None) -> dict | None:
    """What scripts/install_claude.py last reported, or None if it never ran."""
    path = Path(_installer().install_dir(version)) / _installer().STATUS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=None)
def _status_before_probing(version: str | None) -> dict | None:
    """install_status() as scripts/install_claude.py left it, before a pinned
    release's first use here (which installs it and writes its own status)."""
    return install_status(version)


@functools.lru_cache(maxsize=None)
def _probe_claude(version: str | None = None) -> tuple[str | None, str]:
    """The suite's client (version None), or a pinned release -- installed
    from npm on first use when scripts/install_claude.py has not yet."""
    installer = _installer()
    if version is not None and version != installer.wanted_version():
        binary, found, why = installer.ensure_installed(True, version)
        installer.write_status(installer.install_dir(version), binary is not None, binary, found, why)
        return (binary, "") if binary else (None, f"Claude Code {version}: {why}")
    binary = installer.locate_binary()
    if binary is None:
        where = os.environ.get("RALPH_CLAUDE_BIN") or installer.install_dir()
        return None, f"no claude binary at {where}"
    version, why = installer.binary_version(binary)
    if version is None:
        return None, why
    return binary, ""


def claude_binary(version: str | None = None) -> str | None:
    """The Claude Code binary the tests drive ($RALPH_CLAUDE_BIN or the install
    cache), or release `version`'s; None when there is none."""
    return _probe_claude(version)[0]


def require_claude(version: str | None = None) -> str:
    """The binary (of release `version`, default the suite's), or skip the test
    loudly -- or fail it on CI when the installer said it worked."""
    import pytest

    reported = _status_before_probing(version)  # e.g. the last 2.0, which scripts/test installed
    binary, why = _probe_claude(version)
    if binary is not None:
        return binary
    status = reported if reported and reported.get("ok") else install_status(version)
    if os.environ.get("CI", "").lower() == "true" and status and status.get("ok"):
        pytest.fail(
            f"CI: scripts/install_claude.py reported success ({status.get('binary')}) but the Claude Code CLI is unusable: {why}",
            pytrace=False,
        )
    installer_said = f"; installer said: {status.get('reason')}" if status and not status.get("ok") else ""
    message = (
        f"E2E SKIPPED: Claude Code CLI unavailable ({why}{installer_said}). "
        f"Install it with `python3 scripts/install_claude.py{f' --client-version {version}' if version else ''}` or set RALPH_CLAUDE_BIN."
    )
    sys.stderr.write(f"\n*** {message}\n")
    pytest.skip(message)


def ralph_bin_dir() -> str:
    """The directory whose `ralph` the hooks should run: this interpreter's, else the repo venv's, else PATH's."""
    for candidate in (Path(sys.executable).parent, REPO_ROOT / ".venv" / "bin"):
        if (candidate / "ralph").is_file():
            return str(candidate)
    found = shutil.which("ralph")
    if found:
        return str(Path(found).parent)
    raise RuntimeError("no `ralph` executable: run `pip install -e .` into the venv that runs these tests")


@functools.lru_cache(maxsize=1)
def sandbox_mode() -> tuple[tuple[str, ...], str]:
    """(argv prefix, description). A fresh network namespace with only loopback, when possible."""
    if os.environ.get("RALPH_E2E_SANDBOX", "").lower() == "none":
        return (), "no network namespace (RALPH_E2E_SANDBOX=none); server and client on the host loopback"
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return (), f"no network namespace ({'unshare' if unshare is None else 'ip'} not found); server and client on the host loopback"
    lo_up = f'{ip} link set lo up && exec "$@"'
    problems = []
    for flags in (("-n",), ("-r", "-n")):
        prefix = (unshare, *flags, "sh", "-c", lo_up, "sh")
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as e:
            problems.append(f"unshare {' '.join(flags)}: {e}")
            continue
        if done.returncode == 0:
            return prefix, f"unshare {' '.join(flags)} (loopback only)"
        problems.append(f"unshare {' '.join(flags)}: {done.stderr.strip()[:200] or f'exit {done.returncode}'}")
    return (), "no network namespace (" + "; ".join(problems) + "); server and client on the host loopback"


def client_env(home: str | os.PathLike, extra: dict[str, str] | None = None, binary: str | None = None,
               login: str = "api_key") -> dict[str, str]:
    """The environment for the client (or for a process that spawns it, like ralph-loop).

    ANTHROPIC_BASE_URL is not in it: add the server's URL (run_with_server does).
    login "api_key" (ANTHROPIC_API_KEY) or "subscription" (CLAUDE_CODE_OAUTH_TOKEN,
    a claude.ai login: the client then reads the rate-limit headers, see
    api_server.rate_limited).
    """
    home = str(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_ENV_PREFIXES)}
    binary = binary or claude_binary()
    path_parts = [ralph_bin_dir()]
    if binary:
        path_parts.append(str(Path(binary).parent))
    path_parts.append(env.get("PATH", os.defpath))
    env.update(
        {
            "HOME": home,
            "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "PATH": os.pathsep.join(path_parts),
            "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **GIT_IDENTITY,
        }
    )
    if binary:
        env["RALPH_CLAUDE_BIN"] = binary
    if login == "subscription":
        del env["ANTHROPIC_API_KEY"]
        env["CLAUDE_CODE_OAUTH_TOKEN"] = DUMMY_OAUTH_TOKEN
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # else the client refuses --dangerously-skip-permissions as root
    if extra:
        env.update(extra)
    return env


def hook_settings() -> dict:
    """settings.example.json's hooks, verbatim: exactly what a user installs."""
    data = json.loads(SETTINGS_EXAMPLE.read_text(encoding="utf-8"))
    return {"hooks": data["hooks"]}


@functools.lru_cache(maxsize=None)
def client_flags(binary: str) -> tuple[str, ...]:
    """CLIENT_FLAGS this client takes: --include-hook-events came in 2.1.x
    (1.0.x and 2.0.x refuse an unknown option); without it the stream has no
    hook events, and a test reads our hooks' log instead."""
    try:
        helptext = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        helptext = ""
    return tuple(flag for flag in CLIENT_FLAGS if not flag.startswith("--include") or flag in helptext)


def reports_hook_events(binary: str | None = None) -> bool:
    """Does this client's stream carry hook_started/hook_response messages?"""
    return "--include-hook-events" in client_flags(binary or require_claude())


def claude_command(prompt: str, settings_file: str | os.PathLike, extra_args: tuple[str, ...] | list[str] = (), binary: str | None = None) -> list[str]:
    binary = binary or require_claude()
    return [binary, "-p", prompt, *client_flags(binary), "--settings", str(settings_file), *extra_args]


# ---------------------------------------------------------------- repos


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull  # a user's commit.gpgsign & co. must not leak in
    return env


def git(repo: str | os.PathLike, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=git_env(), timeout=60)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {repo} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.strip()


def make_repo(tmp_path: str | os.PathLike, files: dict[str, str] | None = None, name: str = "repo", gitignore: str = ".ralph/\n") -> Path:
    """A git repo at tmp_path/name on branch main with README.md ("hello\\n"), .gitignore and `files`, all committed."""
    repo = Path(tmp_path) / name
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    contents = {"README.md": "hello\n", **({".gitignore": gitignore} if gitignore else {}), **(files or {})}
    for rel, body in contents.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def make_bare_remote(repo: str | os.PathLike, name: str = "origin") -> Path:
    """A bare clone beside `repo`, added as remote `name`, with main pushed and tracked."""
    repo = Path(repo)
    remote = repo.parent / f"{repo.name}-{name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(remote)], check=True, env=git_env(), capture_output=True, timeout=60)
    git(repo, "remote", "add", name, str(remote))
    git(repo, "fetch", "-q", name)
    git(repo, "branch", "-q", "--set-upstream-to", f"{name}/main", "main")
    return remote


def write_active_run(
    repo: str | os.PathLike,
    story_id: str = "US-001",
    title: str = "Add a greeting",
    criteria: list[str] | tuple[str, ...] = ("greet() returns 'hello'",),
    *,
    plan: str | None = None,
    iteration: int = 1,
    stage: str = "build",
    run_id: str = "20261122-000000-e2e0",
) -> dict:
    """Make `repo` look like ralph-loop is mid-iteration (ralph/run/state.py format, version 1).

    Writes .ralph/plan.md (default: the story, unchecked, with its criteria)
    and .ralph/run.json with status "running" and checkpoint = HEAD. Returns
    the run.json dict.
    """
    repo = Path(repo)
    state = repo / ".ralph"
    state.mkdir(exist_ok=True)
    if plan is None:
        plan = f"- [ ] {story_id}: {title}\n" + "".join(f"  - {c}\n" for c in criteria)
    run = {
        "version": 1,
        "run_id": run_id,
        "status": "running",
        "iteration": iteration,
        "story": {"id": story_id, "title": title, "criteria": list(criteria), "source": ".ralph/plan.md"},
        "checkpoint": git(repo, "rev-parse", "HEAD"),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pid": os.getpid(),
        "stage": stage,
        "finish": None,
    }
    for name, body in (("plan.md", plan), ("run.json", json.dumps(run, indent=1))):
        tmp = state / f".{name}.tmp"
        tmp.write_text(body, encoding="utf-8")
        os.replace(tmp, state / name)
    hold_loop_lock(str(state))  # its loop is alive until the test ends
    return run


# ---------------------------------------------------------------- results


def flatten_text(value: object) -> str:
    """Every string inside a message/content structure, joined by newlines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(flatten_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(flatten_text(v) for k, v in value.items() if k in ("text", "content", "system", "messages"))
    return ""


class RunResult:
    """One command run against the scripted server (see run_with_server)."""

    def __init__(self, repo: Path, run_dir: Path, command: list[str], outcome: dict, sandbox: str) -> None:
        self.repo = repo
        self.run_dir = run_dir
        self.command = command
        self.sandbox = sandbox
        self.exit_code: int | None = outcome.get("exit_code")
        self.timed_out: bool = bool(outcome.get("timed_out"))
        self.duration: float = float(outcome.get("duration") or 0.0)
        self.error: str | None = outcome.get("error")
        self.url: str | None = outcome.get("url")
        self.stdout = _read(run_dir / "stdout")
        self.stderr = _read(run_dir / "stderr")
        record = _load_json(run_dir / "requests.json") or {}
        self.requests: list[dict] = record.get("requests", [])
        self.unknown_paths: list[str] = record.get("unknown_paths", [])
        self.server_timed_out: bool = bool(record.get("timed_out"))
        # True when the hooks were settings.example.json's (our handlers), not a test's own
        self.uses_project_hooks = False

    # -- the API side

    @property
    def main_requests(self) -> list[dict]:
        """The agent conversation's requests, in order (turn i answered request i)."""
        return [r for r in self.requests if r["kind"] == "main"]

    @property
    def side_requests(self) -> list[dict]:
        return [r for r in self.requests if r["kind"] != "main"]

    @property
    def exhausted(self) -> bool:
        """True when the client asked for more turns than the script had."""
        return any(r.get("exhausted") for r in self.requests)

    def tool_results(self) -> dict[str, dict]:
        """tool_use_id -> {"content": text, "is_error": bool, "request": index in main_requests} (first sighting)."""
        found: dict[str, dict] = {}
        for number, request in enumerate(self.main_requests):
            for message in (request.get("body") or {}).get("messages", []):
                content = message.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") not in found:
                        found[block["tool_use_id"]] = {
                            "content": flatten_text(block.get("content")),
                            "is_error": bool(block.get("is_error")),
                            "request": number,
                        }
        return found

    def tool_result(self, tool_use_id: str) -> dict:
        results = self.tool_results()
        assert tool_use_id in results, f"the model never got a tool_result for {tool_use_id}\n{self.describe()}"
        return results[tool_use_id]

    def new_messages(self, number: int) -> list[dict]:
        """Messages in main request `number` that the previous main request of the same session did not have.

        Compared by role and text: the client re-renders older messages
        (cache_control moves, a system message's content turns from blocks
        into a string), so raw JSON equality would call them new.
        """
        mains = self.main_requests
        messages = (mains[number].get("body") or {}).get("messages", [])
        session = mains[number].get("session")
        previous = [r for r in mains[:number] if r.get("session") == session]
        if not previous:
            return list(messages)
        seen = Counter(_message_key(m) for m in (previous[-1].get("body") or {}).get("messages", []))
        fresh = []
        for message in messages:
            key = _message_key(message)
            if seen[key] > 0:
                seen[key] -= 1
            else:
                fresh.append(message)
        return fresh

    def new_text(self, number: int) -> str:
        """Text the model saw first in main request `number` (tool results, hook context, feedback)."""
        return flatten_text(self.new_messages(number))

    def request_text(self, number: int) -> str:
        """All text of main request `number`: system prompt and every message."""
        body = self.main_requests[number].get("body") or {}
        return flatten_text(body.get("system")) + "\n" + flatten_text(body.get("messages"))

    # -- the repo side

    def read(self, rel: str) -> str | None:
        try:
            return (self.repo / rel).read_text(encoding="utf-8")
        except OSError:
            return None

    def git(self, *args: str) -> str:
        return git(self.repo, *args)

    def hooks_log(self) -> list[dict]:
        """Our handlers' own log: logs/hooks.jsonl in the repo's state dir, one dict per call."""
        entries = []
        for line in _read(Path(hook_state_dir(str(self.repo))) / "logs" / "hooks.jsonl").splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                entries.append({"unparsable": line})
        return entries

    def describe(self) -> str:
        """A summary for assertion messages."""
        lines = [
            f"command: {' '.join(self.command[:3])} ...  exit={self.exit_code} timed_out={self.timed_out} "
            f"duration={self.duration:.1f}s sandbox={self.sandbox}",
            f"requests: {len(self.main_requests)} main, {len(self.side_requests)} other"
            + (f" (unscripted: {self.unknown_paths})" if self.unknown_paths else "")
            + (" SCRIPT EXHAUSTED" if self.exhausted else ""),
        ]
        if self.error:
            lines.append(f"error: {self.error}")
        for tid, res in self.tool_results().items():
            lines.append(f"tool_result {tid} is_error={res['is_error']}: {res['content'][:300]!r}")
        for entry in self.hooks_log()[-20:]:
            lines.append(f"hooks.jsonl: {json.dumps(entry)[:300]}")
        if self.stderr.strip():
            lines.append("stderr (tail): " + self.stderr[-1500:])
        return "\n".join(lines)


class ScenarioResult(RunResult):
    """One `claude -p ... --output-format stream-json` run; adds the stream's view."""

    @functools.cached_property
    def stream(self) -> list[dict]:
        messages = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                messages.append(json.loads(line))
            except ValueError:
                messages.append({"type": "unparsable", "line": line})
        return messages

    @property
    def final(self) -> dict | None:
        """The stream's closing {"type": "result", ...} message."""
        results = [m for m in self.stream if m.get("type") == "result"]
        return results[-1] if results else None

    def hook_events(self, subtype: str = "hook_response", event: str | None = None) -> list[dict]:
        """The stream's hook messages: subtype hook_started / hook_response (hook_event, hook_name, exit_code, stdout, stderr, outcome)."""
        return [
            m
            for m in self.stream
            if m.get("type") == "system" and m.get("subtype") == subtype and (event is None or m.get("hook_event") == event)
        ]

    def hook_responses(self, event: str | None = None) -> list[dict]:
        return self.hook_events("hook_response", event)

    def hook_outputs(self, event: str | None = None) -> list[dict]:
        """What our handlers printed, parsed, for hook_response events of `event`."""
        outputs = []
        for response in self.hook_responses(event):
            try:
                outputs.append(json.loads(response.get("stdout") or ""))
            except ValueError:
                outputs.append({"unparsable": response.get("stdout")})
        return outputs

    def describe(self) -> str:
        lines = [super().describe()]
        for response in self.hook_responses():
            lines.append(
                f"hook {response.get('hook_name')} exit={response.get('exit_code')} outcome={response.get('outcome')} "
                f"stdout={(response.get('stdout') or '')[:300]!r} stderr={(response.get('stderr') or '')[:200]!r}"
            )
        if self.final:
            lines.append(f"result: {json.dumps({k: self.final.get(k) for k in ('subtype', 'is_error', 'result', 'num_turns', 'terminal_reason')})}")
        return "\n".join(lines)


def assert_hooks_answered_cleanly(result: ScenarioResult) -> None:
    """Every hook call exited 0 and printed exactly one JSON object; none was left unanswered."""
    started = result.hook_events("hook_started")
    responses = result.hook_responses()
    assert responses, f"no hook fired at all\n{result.describe()}"
    answered = {r.get("hook_id") for r in responses}
    unanswered = [s.get("hook_name") for s in started if s.get("hook_id") not in answered]
    assert not unanswered, f"hooks started but never answered: {unanswered}\n{result.describe()}"
    for response in responses:
        where = f"{response.get('hook_name')} ({response.get('hook_id')})"
        assert response.get("exit_code") == 0, f"{where} exited {response.get('exit_code')}\n{result.describe()}"
        assert response.get("outcome") == "success", f"{where} outcome {response.get('outcome')}\n{result.describe()}"
        stdout = (response.get("stdout") or "").strip()
        try:
            parsed = json.loads(stdout)
        except ValueError as e:
            raise AssertionError(f"{where} stdout is not exactly one JSON document ({e}): {stdout[:500]!r}") from None
        assert isinstance(parsed, dict), f"{where} stdout is JSON but not an object: {stdout[:500]!r}"


# ---------------------------------------------------------------- running


_run_counter = 0


def _next_run_dir(repo: Path) -> Path:
    global _run_counter
    _run_counter += 1
    run_dir = repo.parent / f"{repo.name}-e2e-run-{_run_counter}-{os.getpid()}"
    run_dir.mkdir(parents=True)
    (run_dir / "home" / ".claude").mkdir(parents=True)
    return run_dir


def run_with_server(
    command: list[str],
    cwd: str | os.PathLike,
    turns: list[dict] | None = None,
    *,
    sessions: list[list[dict]] | None = None,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    run_dir: str | os.PathLike | None = None,
    result_class: type[RunResult] = RunResult,
) -> RunResult:
    """Run any command (e.g. `ralph-loop ...`, which spawns `claude -p`) against the scripted server.

    The server and the command share one network namespace when possible; the
    command sees `env` (default: client_env() with a fresh HOME in the run
    dir) plus ANTHROPIC_BASE_URL. `turns` is one conversation for every client
    session; `sessions` gives the n-th client session its own list of turns.
    """
    cwd = Path(cwd)
    run_dir = Path(run_dir) if run_dir else _next_run_dir(cwd)
    run_dir.mkdir(parents=True, exist_ok=True)
    if env is None:
        env = client_env(run_dir / "home")
    script = {"sessions": sessions} if sessions is not None else {"turns": turns or []}
    spec = {
        "script": script,
        "command": [str(c) for c in command],
        "cwd": str(cwd),
        "env": env,
        "timeout": timeout,
        "record": str(run_dir / "requests.json"),
        "stdout": str(run_dir / "stdout"),
        "stderr": str(run_dir / "stderr"),
        "result": str(run_dir / "result.json"),
    }
    spec_path = run_dir / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    prefix, sandbox = sandbox_mode()
    argv = [*prefix, sys.executable, str(SANDBOX_RUN), str(spec_path)]
    outer = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = outer.communicate(timeout=timeout + OUTER_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(outer.pid)
        out, err = outer.communicate()
        err += b"\n[harness] sandbox runner overran its bound and was killed"
    except BaseException:
        _kill_group(outer.pid)  # an interrupted test leaves no client behind
        raise
    outcome = _load_json(run_dir / "result.json") or {
        "error": f"sandbox runner exited {outer.returncode} without a result: {err.decode('utf-8', 'replace')[-2000:]}"
    }
    if outer.returncode and not outcome.get("error"):
        outcome["error"] = f"sandbox runner exited {outer.returncode}: {err.decode('utf-8', 'replace')[-1000:]}"
    result = result_class(cwd, run_dir, [str(c) for c in command], outcome, sandbox)
    RESULTS.append(result)
    return result


def run_scenario(
    repo: str | os.PathLike,
    turns: list[dict] | None,
    prompt: str = "Do the task.",
    settings: dict | None = None,
    timeout: float = 60,
    *,
    sessions: list[list[dict]] | None = None,
    extra_args: tuple[str, ...] | list[str] = (),
    env_extra: dict[str, str] | None = None,
    binary: str | None = None,
) -> ScenarioResult:
    """`claude -p PROMPT` in `repo` with our hooks (or `settings`), playing
    `turns`; `binary`: a client other than the suite's (claude_binary(version))."""
    binary = binary or require_claude()
    repo = Path(repo)
    run_dir = _next_run_dir(repo)
    settings_file = run_dir / "settings.json"
    settings_file.write_text(json.dumps(settings if settings is not None else hook_settings(), indent=1), encoding="utf-8")
    env = client_env(run_dir / "home", env_extra, binary)
    command = claude_command(prompt, settings_file, extra_args, binary)
    result = run_with_server(command, repo, turns, sessions=sessions, timeout=timeout, env=env, run_dir=run_dir, result_class=ScenarioResult)
    result.uses_project_hooks = settings is None
    return result


# ---------------------------------------------------------------- helpers


def _kill_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.5)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _load_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _message_key(message: dict) -> tuple[str, str, str]:
    content = message.get("content")
    return (str(message.get("role")), flatten_text(content), json.dumps(_tool_ids(content)))


def _tool_ids(content: object) -> list:
    if not isinstance(content, list):
        return []
    return [[b.get("type"), b.get("id") or b.get("tool_use_id"), b.get("is_error")] for b in content if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")]
