"""The hook protocol: the facts of Claude Code's side (its events, the
subcommands and settings entries ralph answers them with), one validated call
(HookCall), one answer (Outcome) and the output forms the client honours
(allow, deny, context, block). Handlers, the dispatcher and the install
commands all take these from here.

On every hook call: nothing heavier than os.
"""
import os

from ralph.state.locations import project_root, state_dir

MAX_CONTEXT = 9000  # the client swaps anything over 10,000 chars for a 2 KB preview
# Bash commands longer than this are judged on this prefix (PostToolUse) or
# denied unjudged (PreToolUse: what lies past the cut could be a push).
MAX_JUDGED_COMMAND = 256 * 1024

# ---- what each Claude Code release supports ----
# A release is (major, minor, patch), as `claude --version` prints it.
#
# EVENT_SINCE: the first release whose settings accept each hook event. Read
# from the releases' own code: the settings schema keys the `hooks` object by
# an enum of event names (1.0.x `record(enum(E), ...)`, 2.x `partialRecord`),
# and `scripts/client_events.py VERSION` prints that enum from the npm
# tarball's cli.js (native-binary releases: from the platform package's
# binary). Each first release was bisected over every published version.
# The client runs confirm the rows ralph relies on (tests/e2e/test_e2e_clients.py):
# 1.0.128 and 2.0.77 run ralph's hooks from the entries `ralph install` writes
# for them, and a Bash command that exits non-zero reaches no Post* hook at
# all before PostToolUseFailure (1.0.128, 2.0.55).
EVENT_SINCE: dict[str, tuple[int, int, int]] = {
    "PreToolUse": (1, 0, 23), "PostToolUse": (1, 0, 23), "Notification": (1, 0, 23),
    "Stop": (1, 0, 31), "SubagentStop": (1, 0, 41), "PreCompact": (1, 0, 48), "UserPromptSubmit": (1, 0, 53),
    "SessionStart": (1, 0, 62), "SessionEnd": (1, 0, 85),
    "SubagentStart": (2, 0, 44), "PermissionRequest": (2, 0, 45), "PostToolUseFailure": (2, 0, 56),
    "Setup": (2, 1, 10), "TeammateIdle": (2, 1, 33), "TaskCompleted": (2, 1, 33), "ConfigChange": (2, 1, 48),
    "WorktreeCreate": (2, 1, 50), "WorktreeRemove": (2, 1, 50), "Elicitation": (2, 1, 63), "ElicitationResult": (2, 1, 63),
    "InstructionsLoaded": (2, 1, 69), "PostCompact": (2, 1, 76), "StopFailure": (2, 1, 78), "CwdChanged": (2, 1, 83),
    "FileChanged": (2, 1, 83), "TaskCreated": (2, 1, 84), "PermissionDenied": (2, 1, 88), "UserPromptExpansion": (2, 1, 116),
    "PostToolBatch": (2, 1, 118), "MessageDisplay": (2, 1, 152), "DirectoryAdded": (2, 1, 219),
    "PreModelSwitch": (2, 1, 251), "PostModelSwitch": (2, 1, 251), "PreSkillShellCommand": (2, 1, 332),
}
# Every event some release knows (the newest measured: 2.1.332)
CLIENT_EVENTS = tuple(EVENT_SINCE)
# Before this release a settings file naming an event the client does not know
# fails validation as a whole and the client runs NONE of its hooks: with a
# "BogusEvent" key beside ralph's PreToolUse entry, `git push` ran on 1.0.128,
# 2.0.77 and 2.1.100 and was denied from 2.1.101 on (bisected with runs; the
# message "unknown hook event. Valid events: ..." only came in 2.1.198).
UNKNOWN_EVENTS_SKIPPED_SINCE = (2, 1, 101)
# `"onFailure": "block"` on a command hook (fail closed when the hook cannot
# answer): in the command-hook schema from this release (scripts/client_events.py,
# bisected); a run shows 2.1.217 lets a call through past a hook that exits 1,
# 2.1.330 denies it. Older clients drop the key.
ON_FAILURE_SINCE = (2, 1, 295)
# From 2.0.30 until 2.1.105 the client told the model the reason of the
# matching PreToolUse hook that finished LAST: with a second Bash hook, a deny
# of ralph's reaches the model as "Hook PreToolUse:Bash denied this tool" (the
# deny itself holds). Bisected with runs (tests/e2e/test_e2e_clients.py has one).
LAST_HOOK_REASON = ((2, 0, 30), (2, 1, 105))
# From this release a Bash output too long for the model comes with
# `persistedOutputPath` (the whole output on disk); before it, the client cuts
# it ("... [N lines truncated] ...") and hooks never see the rest (bisected with runs).
PERSISTED_OUTPUT_SINCE = (2, 1, 45)


def client_release(text: str) -> tuple[int, int, int] | None:
    """`2.0.77 (Claude Code)` -> (2, 0, 77); None when it names no release."""
    for word in text.split():
        parts = word.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            return int(parts[0]), int(parts[1]), int(parts[2])
    return None


def release_text(release: tuple[int, int, int]) -> str:
    return ".".join(map(str, release))


def events_of(release: tuple[int, int, int] | None) -> frozenset[str]:
    """The hook events this release accepts (None: unknown, the newest's)."""
    return frozenset(e for e, since in EVENT_SINCE.items() if release is None or release >= since)


def skips_unknown_events(release: tuple[int, int, int] | None) -> bool:
    return release is None or release >= UNKNOWN_EVENTS_SKIPPED_SINCE


def fails_closed(release: tuple[int, int, int] | None) -> bool:
    return release is None or release >= ON_FAILURE_SINCE


def reason_from_last_hook(release: tuple[int, int, int] | None) -> bool:
    return release is not None and LAST_HOOK_REASON[0] <= release < LAST_HOOK_REASON[1]


def persists_long_output(release: tuple[int, int, int] | None) -> bool:
    return release is None or release >= PERSISTED_OUTPUT_SINCE


# subcommand -> the Claude Code event it answers; the event names are aliases,
# and `ralph hook` trusts the payload's hook_event_name alone.
SUBCOMMANDS = {
    "pre-tool": "PreToolUse",
    "post-tool": "PostToolUse",
    "post-tool-failure": "PostToolUseFailure",
    "prompt": "UserPromptSubmit",
    "stop": "Stop",
    "skill-shell": "PreSkillShellCommand",
    "hook": "",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "PostToolUseFailure": "PostToolUseFailure",
    "UserPromptSubmit": "UserPromptSubmit",
    "Stop": "Stop",
    "PreSkillShellCommand": "PreSkillShellCommand",
}

# What `ralph install` writes into a settings file, per event: (matcher or
# None, subcommand, timeout in seconds, onFailure). Matchers are exact-name
# lists (the client does not treat them as regexes).
HOOK_ENTRIES: dict[str, tuple[str | None, str, int, str | None]] = {
    "PreToolUse": ("Bash|Edit|MultiEdit|Write|NotebookEdit", "pre-tool", 30, "block"),
    "PostToolUse": ("Read|Edit|MultiEdit|Write|NotebookEdit|Bash", "post-tool", 120, None),
    "PostToolUseFailure": ("Bash", "post-tool-failure", 120, None),
    "UserPromptSubmit": (None, "prompt", 10, None),
    "Stop": (None, "stop", 30, None),
    # a skill's or slash command's inline shell line (!`cmd`), which PreToolUse never sees
    "PreSkillShellCommand": ("Bash|PowerShell", "skill-shell", 30, "block"),
}
# events whose answer decides whether something runs: ralph fails closed on them
GUARD_EVENTS = ("PreToolUse", "PreSkillShellCommand")

# events on which the client ignores the matcher (every hook runs)
NO_MATCHER_EVENTS = frozenset((
    "UserPromptSubmit", "Stop", "PostToolBatch", "TeammateIdle", "TaskCreated", "TaskCompleted",
    "WorktreeCreate", "WorktreeRemove", "CwdChanged", "MessageDisplay",
))


class HookCall:
    """One validated hook payload plus where its project keeps state."""

    __slots__ = ("event", "payload", "cwd", "session_id", "tool_name", "tool_input", "root", "_state_dir", "problems", "environ", "log_extra")

    def __init__(self, event: str, payload: dict, environ: dict[str, str] | None = None) -> None:
        """environ: the hook's environment (default: this process's, os.environ)."""
        self.event = event
        self.payload = payload
        self.environ = environ = os.environ if environ is None else environ
        self.problems: list[str] = []
        self.log_extra: dict = {}  # extra fields a handler wants in this call's log line
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd or not os.path.isdir(cwd):
            self.problems.append(f"cwd {cwd!r} unusable; using the process cwd")
            cwd = os.getcwd()
        self.cwd = cwd
        session_id = payload.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            self.problems.append("no session_id; using 'unknown'")
            session_id = "unknown"
        self.session_id = session_id
        tool_name = payload.get("tool_name")
        self.tool_name = tool_name if isinstance(tool_name, str) else ""
        tool_input = payload.get("tool_input")
        self.tool_input = tool_input if isinstance(tool_input, dict) else {}
        if "tool_input" in payload and not isinstance(tool_input, dict):
            self.problems.append("tool_input is not an object")
        self.root = project_root(cwd, environ)
        self._state_dir: str | None = None

    @property
    def state_dir(self) -> str:
        if self._state_dir is None:
            self._state_dir = state_dir(self.root)
        return self._state_dir

    def field(self, name: str, kind: type, default: object = None) -> object:
        value = self.payload.get(name, default)
        return value if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else default


def judged_command(call: HookCall, command: str) -> str:
    """The Bash command as the rules see it: at most MAX_JUDGED_COMMAND
    characters, so judging stays linear and bounded; a longer one is judged
    on its prefix and the log says so."""
    if len(command) <= MAX_JUDGED_COMMAND:
        return command
    call.log_extra["command_cut"] = f"judged on the first {MAX_JUDGED_COMMAND} of {len(command)} characters"
    return command[:MAX_JUDGED_COMMAND]


class Outcome:
    __slots__ = ("output", "decision", "reason")

    def __init__(self, output: dict, decision: str = "none", reason: str = "") -> None:
        self.output = output
        self.decision = decision
        self.reason = reason


# ---- output forms, as the client honours them (see shared/claude-code/model-view) ----


def _bounded(text: str) -> str:
    if len(text) <= MAX_CONTEXT:
        return text
    return text[: MAX_CONTEXT - 40] + "\n…[truncated by ralph-hooks]"


def allow() -> Outcome:
    # `{}`, not permissionDecision "allow": allowing would skip the user's own prompts.
    return Outcome({}, "allow")


def deny(reason: str, event: str = "PreToolUse") -> Outcome:
    """PreToolUse, PreSkillShellCommand: the call (the shell line) does not run."""
    reason = _bounded(reason)
    return Outcome(
        {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny", "permissionDecisionReason": reason}},
        "deny",
        reason,
    )


def context(event: str, text: str) -> Outcome:
    text = _bounded(text)
    return Outcome({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, "context", text)


def block(event: str, reason: str, extra_context: str = "") -> Outcome:
    """PostToolUse / PostToolUseFailure / Stop: `decision: block` + reason."""
    reason = _bounded(reason)
    output: dict = {"decision": "block", "reason": reason}
    if extra_context and event != "Stop":
        output["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": _bounded(extra_context)}
    return Outcome(output, "block", reason)


def still_running(tool_response: object) -> bool:
    """A Bash call past its timeout that Claude Code moved to the background:
    its output so far, and no exit status yet."""
    return isinstance(tool_response, dict) and bool(tool_response.get("timedOutAfterMs") or tool_response.get("backgroundTaskId"))


def bash_output(tool_response: object) -> str:
    """A Bash tool_response's text (stdout, then stderr; the client merges them)."""
    if isinstance(tool_response, str):
        return tool_response
    if not isinstance(tool_response, dict):
        return ""
    parts = [tool_response.get("stdout"), tool_response.get("stderr")]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def exit_code_from_failure(error: str) -> tuple[int | None, str]:
    """PostToolUseFailure's `error` is "Exit code N\\n<output>"; split it. Anything
    else (an interrupt, a timeout message) gives (None, error)."""
    if not isinstance(error, str):
        return None, ""
    head, sep, rest = error.partition("\n")
    words = head.split()
    if len(words) == 3 and words[0] == "Exit" and words[1] == "code" and words[2].lstrip("-").isdigit():
        return int(words[2]), rest
    return None, error
