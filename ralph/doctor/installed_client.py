"""The Claude Code client installed here: where it is, which release, and
what that release cannot do for ralph (ralph.claude.protocol's table).
`ralph install` writes what the release knows; `ralph doctor` says what is missing."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ralph.claude.protocol import EVENT_SINCE, HOOK_ENTRIES, events_of, release_text


def find_client(explicit: str | None = None, environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """The Claude Code executable: `explicit`, else `claude` on PATH, else $RALPH_CLAUDE_BIN."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    return shutil.which("claude", path=environ.get("PATH")) or environ.get("RALPH_CLAUDE_BIN") or None


def client_version(binary: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[str, str]:
    """(`claude --version`'s text, "") or ("", why it did not run). Run in a
    scratch HOME: 1.0.x writes ~/.claude/statsig/ even for --version."""
    try:
        with tempfile.TemporaryDirectory(prefix="ralph-claude-version-") as home:
            env = dict(environ, HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"), DISABLE_TELEMETRY="1",
                       DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
            done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, env=env,
                                  stdin=subprocess.DEVNULL, cwd=home)
    except (OSError, subprocess.SubprocessError) as e:
        return "", f"{binary} --version: {getattr(e, 'strerror', None) or e}"
    text = (done.stdout.strip() or done.stderr.strip())[:200]
    if done.returncode != 0:
        return "", f"{binary} --version exited {done.returncode}: {text}"
    return text, ""


def missing_for(release: tuple[int, int, int] | None) -> list[str]:
    """Our events this release does not know."""
    known = events_of(release)
    return [event for event in HOOK_ENTRIES if event not in known]


def unknown_events(data: dict, release: tuple[int, int, int] | None) -> list[str]:
    """Event keys in `data` this release does not know."""
    known = events_of(release)
    hooks = data.get("hooks")
    return [event for event in hooks if event not in known] if isinstance(hooks, dict) else []


def what_is_missing(event: str, release: tuple[int, int, int]) -> str:
    """What ralph cannot do on a client without `event`."""
    since = release_text(EVENT_SINCE[event])
    if event == "PostToolUseFailure":
        return (f"Claude Code {release_text(release)} has no PostToolUseFailure (it came in {since}) and runs no hook at all for a Bash "
                "command that exits non-zero: a failing test run gets no feedback from ralph and no rollback")
    if event == "UserPromptSubmit":
        return (f"Claude Code {release_text(release)} has no UserPromptSubmit (it came in {since}): the prompt gets no "
                "story or failure context from ralph")
    if event == "PreSkillShellCommand":
        return (f"Claude Code {release_text(release)} has no PreSkillShellCommand (it came in {since}): a skill's or slash command's "
                "inline shell line (!`cmd`) reaches no hook and runs unguarded; set \"disableSkillShellExecution\": true to turn such lines off")
    if event == "Stop":
        return f"Claude Code {release_text(release)} has no Stop hook (it came in {since}): nothing checks the work before the agent stops"
    return f"Claude Code {release_text(release)} has no {event} (it came in {since}): ralph's {event} handler never runs"
