"""One headless session of the real Claude Code client, for `ralph doctor`:
the proof that this client, configured as it is here, runs ralph's hooks.

In a temp git project with a temp bare remote, `claude -p` plays a fixed
script against a loopback stand-in of the Messages API
(ralph.doctor.api_standin): `git push origin main` (ralph's PreToolUse must
deny it, and the remote shows whether it landed), a Read (PostToolUse), a
failing `false` (PostToolUseFailure, on clients that have it), on clients
with PreSkillShellCommand a Skill call of a scratch project skill whose
inline shell line is that push (ralph's PreSkillShellCommand must deny it),
and a closing answer (Stop). Every call of ralph's dispatcher logs itself in the state
directory, which RALPH_STATE_DIR points into the temp dir: that log says
which of ralph's handlers the client really ran.

The client runs in a scratch HOME and reads copies of the settings it would
read in the project: the user's settings.json in the scratch config dir and
the project's .claude/settings.json and settings.local.json in the temp
project; managed settings it reads itself. Nothing of the user's is written.
Whatever could send the session anywhere but the stand-in is left out of the
copies (apiKeyHelper and its kin, API endpoints and keys in `env`); only the
three scripted tool calls are allowed, and permissions are not bypassed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time

from ralph.doctor.api_standin import StandIn, text_turn, tool_turn
from ralph.process import run
from ralph.run.git import git_env
from ralph.run.git import run as run_git

PUSH_ID = "toolu_ralph_doctor_push"
READ_ID = "toolu_ralph_doctor_read"
FAIL_ID = "toolu_ralph_doctor_fail"
SKILL_ID = "toolu_ralph_doctor_skill"
SKILL = "ralph-doctor-publish"
# a project skill whose inline shell line (!`...`) pushes: the client runs it
# itself when the skill loads, asking PreSkillShellCommand first
SKILL_TEXT = f"---\nname: {SKILL}\ndescription: ralph doctor's check of skills' shell lines\n---\nPublished: !`{{push}}`\n"
PUSH = "git push origin main"
FAILING = "false"
PROMPT = "ralph doctor: a scripted check of the hooks (no model is involved)."
SESSION_TIMEOUT = 180.0
DUMMY_KEY = "sk-ant-ralph-doctor-loopback-not-a-key"

# settings keys that fetch credentials or name endpoints: never in the copies
CREDENTIAL_KEYS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh", "otelHeadersHelper")
# environment (ours, and settings' `env`) that would route the session elsewhere
ROUTING_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_USE_", "AWS_", "VERTEX_", "CLOUD_ML_", "GOOGLE_")
ROUTING_ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def script(readme: str, skill_line: bool = False) -> list[dict]:
    return [
        tool_turn(PUSH_ID, "Bash", {"command": PUSH, "description": "Push the work"}),
        tool_turn(READ_ID, "Read", {"file_path": readme}),
        tool_turn(FAIL_ID, "Bash", {"command": FAILING, "description": "A command that fails"}),
        *([tool_turn(SKILL_ID, "Skill", {"skill": SKILL})] if skill_line else []),
        text_turn("Done."),
    ]


class Session:
    """What one session showed."""

    def __init__(self) -> None:
        self.exit_code: int | None = None
        self.timed_out = False
        self.error = ""  # the client could not be started, or the session could not be set up
        self.output = ""  # the client's output, for a report
        self.requests = 0  # requests that reached the stand-in
        self.calls: list[dict] = []  # ralph's hook log: one entry per call the client made
        self.push_result: dict | None = None  # {"is_error", "text"}: what the model was told
        self.push_landed = False
        self.duration = 0.0

    def events(self) -> set[str]:
        return {c.get("event") for c in self.calls if isinstance(c.get("event"), str)}

    def decisions(self, event: str, tool: str = "") -> list[str]:
        return [c.get("decision", "") for c in self.calls if c.get("event") == event and (not tool or c.get("tool") == tool)]


def safe_copy(data: dict) -> dict:
    """A settings object without what could route the session elsewhere."""
    copy = {k: v for k, v in data.items() if k not in CREDENTIAL_KEYS}
    env = copy.get("env")
    if isinstance(env, dict):
        copy["env"] = {k: v for k, v in env.items() if not routing_variable(k)}
    return copy


def routing_variable(name: str) -> bool:
    return name.startswith(ROUTING_ENV_PREFIXES) or name in ROUTING_ENV_NAMES


def client_env(environ: dict[str, str], home: str, state: str, url: str) -> dict[str, str]:
    """The user's environment, in a scratch HOME: the client's Bash tool then
    runs no shell profile of the user's, and nothing in the user's home is
    written or left behind. ralph's own global config stays visible."""
    env = {k: v for k, v in environ.items()
           if not routing_variable(k) and not k.startswith(("CLAUDE", "RALPH_", "GIT_"))}
    real_home = environ.get("HOME") or os.path.expanduser("~")
    env.update({
        "HOME": home,
        "XDG_CONFIG_HOME": environ.get("XDG_CONFIG_HOME") or os.path.join(real_home, ".config"),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "RALPH_STATE_DIR": state,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    return env


def git(args: list[str], cwd: str) -> str:
    """stdout of `git ARGS` in a scratch repository, as a scratch identity with
    no global or system config; OSError when git fails."""
    env = git_env({k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="ralph doctor",
               GIT_AUTHOR_EMAIL="doctor@ralph.invalid", GIT_COMMITTER_NAME="ralph doctor", GIT_COMMITTER_EMAIL="doctor@ralph.invalid")
    done = run_git(cwd, args, env=env, timeout=60)
    if not done.ok:
        raise OSError(f"git {' '.join(args)}: {done.err.decode('utf-8', 'replace').strip()[-300:]}")
    return done.out.decode("utf-8", "replace")


def make_project(base: str, skill_line: bool = False) -> tuple[str, str]:
    """(project, bare remote): one commit on main, `origin` the remote; with
    `skill_line`, the skill whose shell line pushes (untracked)."""
    project = os.path.join(base, "project")
    remote = os.path.join(base, "remote.git")
    os.makedirs(project)
    git(["init", "-q", "-b", "main", project], base)
    with open(os.path.join(project, "README.md"), "w", encoding="utf-8") as f:
        f.write("A scratch project of `ralph doctor`.\n")
    git(["add", "README.md"], project)
    git(["commit", "-q", "-m", "doctor"], project)
    git(["clone", "-q", "--bare", project, remote], base)
    git(["remote", "add", "origin", remote], project)
    with open(os.path.join(project, "README.md"), "a", encoding="utf-8") as f:
        f.write("A change a push would publish.\n")
    git(["commit", "-q", "-am", "unpublished"], project)
    if skill_line:
        skill_dir = os.path.join(project, ".claude", "skills", SKILL)
        os.makedirs(skill_dir)
        with open(os.path.join(skill_dir, "SKILL.md"), "w", encoding="utf-8") as f:
            f.write(SKILL_TEXT.format(push=PUSH))
    return project, remote


def copy_settings(sources: list[tuple[str, str]], config_dir: str, project: str) -> None:
    """sources: (scope, path) of the files the client would read; copied safe."""
    targets = {"user": os.path.join(config_dir, "settings.json"),
               "project": os.path.join(project, ".claude", "settings.json"),
               "local": os.path.join(project, ".claude", "settings.local.json")}
    for scope, path in sources:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError:
            data = None
        target = targets[scope]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            # an unparsable file goes as it is: the client will not use it either
            f.write(json.dumps(safe_copy(data), indent=2) if isinstance(data, dict) else text)


def read_calls(state: str) -> list[dict]:
    calls = []
    try:
        with open(os.path.join(state, "logs", "hooks.jsonl"), encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    calls.append(entry)
    except OSError:
        pass
    return calls


def command(binary: str, plugin: str | None, skill_line: bool = False) -> list[str]:
    argv = [binary, "-p", PROMPT]
    if plugin:
        argv += ["--plugin-dir", plugin]
    # one argument per rule: "Bash(git push origin main)" holds spaces
    return argv + ["--allowedTools", "Read", f"Bash({PUSH})", f"Bash({FAILING})", *([f"Skill({SKILL})"] if skill_line else [])]


def run_session(binary: str, sources: list[tuple[str, str]], environ: dict[str, str], plugin: str | None = None,
                timeout: float = SESSION_TIMEOUT, skill_line: bool = False) -> Session:
    """Run the scripted session; never raises for a client that misbehaves.
    `skill_line`: also load the skill whose shell line pushes (clients with PreSkillShellCommand)."""
    session = Session()
    base = tempfile.mkdtemp(prefix="ralph-doctor-")
    stand_in = None
    try:
        try:
            project, remote = make_project(base, skill_line)
        except (OSError, subprocess.SubprocessError) as e:
            session.error = f"could not make the scratch project: {e}"
            return session
        home = os.path.join(base, "home")
        state = os.path.join(base, "state")
        os.makedirs(os.path.join(home, ".claude"))
        copy_settings(sources, os.path.join(home, ".claude"), project)
        refs_before = git(["for-each-ref"], remote)
        stand_in = StandIn(script(os.path.join(project, "README.md"), skill_line), PROMPT).start()
        env = client_env(environ, home, state, stand_in.url)
        started = time.monotonic()
        result = run(command(binary, plugin, skill_line), cwd=project, env=env, timeout=timeout, max_bytes=64 * 1024,
                     head_bytes=16 * 1024, kill_grace=3.0, drain=2.0, new_session=True)
        session.duration = time.monotonic() - started
        session.exit_code = result.exit_code
        session.timed_out = result.timed_out
        session.error = result.error
        session.output = result.output.text()
        session.requests = stand_in.requests
        session.calls = read_calls(state)
        session.push_result = stand_in.tool_results().get(PUSH_ID)
        session.push_landed = git(["for-each-ref"], remote) != refs_before
        return session
    finally:
        if stand_in is not None:
            stand_in.stop()
        shutil.rmtree(base, ignore_errors=True)
