"""`ralph doctor`: is this machine really protected? Checks every settings
file Claude Code reads (and the ones it ignores), ralph's entries in them,
one round trip per event through the exact configured command, then one
real session of the installed client (`claude -p` against a loopback
stand-in of the API, ralph.doctor.client_session) that must run every hook
and deny a `git push`; what the client's release cannot do (its events, by
ralph.claude.protocol's table), ralph.toml against the whole schema and the
state dir. Every problem comes with a concrete fix; exit 1 when something is
wrong, or when no client could prove that the hooks run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import resources

from ralph import __version__
from ralph.doctor.client_session import PUSH, run_session
from ralph.doctor.installed_client import client_version, find_client, missing_for, unknown_events, what_is_missing
from ralph.claude.protocol import (
    EVENT_SINCE,
    GUARD_EVENTS,
    LAST_HOOK_REASON,
    ON_FAILURE_SINCE,
    PERSISTED_OUTPUT_SINCE,
    client_release,
    events_of,
    fails_closed,
    persists_long_output,
    reason_from_last_hook,
    release_text,
    skips_unknown_events,
)
from ralph.commands import install as settings
from ralph.config.reading import load_config
from ralph.config.schema import ConfigError
from ralph.loop.config_check import config_errors
from ralph.mcp import install as mcp_install
from ralph.mcp.launch import INSTALL_HINT as MCP_INSTALL_HINT
from ralph.mcp.launch import TOOL_NAMES, list_tools, sdk_installed, server_command
from ralph.redaction import redact
from ralph.sandbox import probe
from ralph.state.locations import STATE_DIR_NAME, config_path, project_root, state_dir

# event -> the captured payload replayed through its command, and the answer
# that proves the handler ran (PreToolUse: a `git push` must be denied)
ROUND_TRIPS = {
    "PreToolUse": ("PreToolUse_Bash", {"command": "git push origin main"}),
    "PostToolUse": ("PostToolUse_Read", None),
    "PostToolUseFailure": ("PostToolUseFailure_Bash_exit3", None),
    "UserPromptSubmit": ("UserPromptSubmit", None),
    "Stop": ("Stop", None),
    "PreSkillShellCommand": ("PreSkillShellCommand_Bash", {"command": "git push origin main"}),
}
CAPTURED_PROJECT = "/home/dev/app"
ROUND_TRIP_TIMEOUT = 60


class Report:
    def __init__(self) -> None:
        self.checks: list[dict] = []

    def add(self, status: str, check: str, detail: str, fix: str = "") -> None:
        self.checks.append({"status": status, "check": check, "detail": detail, "fix": fix})

    def ok(self, check: str, detail: str) -> None:
        self.add("ok", check, detail)

    def warn(self, check: str, detail: str, fix: str = "") -> None:
        self.add("warn", check, detail, fix)

    def fail(self, check: str, detail: str, fix: str = "") -> None:
        self.add("fail", check, detail, fix)

    @property
    def failed(self) -> bool:
        return any(c["status"] == "fail" for c in self.checks)


# ---- settings files ----------------------------------------------------------------


def check_settings(report: Report, root: str, plugin: str | None, environ: dict,
                   release: tuple[int, int, int] | None = None) -> dict[str, list[tuple[str, object, dict]]]:
    """Every settings file; returns event -> our entries the client will run."""
    active: dict[str, list[tuple[str, object, dict]]] = {}
    sources = [(label, path, read) for label, path, read in settings.settings_files(root, environ)]
    if plugin:
        sources.append((f"plugin {plugin}", os.path.join(plugin, "hooks", "hooks.json"), True))
    for label, path, read in sources:
        try:
            data, text = settings.read_settings(path)
        except settings.SettingsError as e:
            if read:
                report.fail("settings", str(e), f"fix the JSON in {path}; the client cannot use any hook in it")
            else:
                report.warn("settings", f"{e} (Claude Code does not read this file)")
            continue
        entries = settings.our_entries(data)
        where = f"{label}: {path}"
        if text is None:
            report.ok("settings", f"{where} (absent)")
            continue
        report.ok("settings", f"{where}: {len(entries)} ralph entr{'y' if len(entries) == 1 else 'ies'}"
                  + ("" if read else " (Claude Code does NOT read this file)"))
        for problem in settings.findings_for(path, data, read, environ, release):
            fix = problem.rsplit(" Fix: ", 1)[1] if " Fix: " in problem else ""
            report.fail("entries", problem.rsplit(" Fix: ", 1)[0], fix)
        unknown = unknown_events(data, release)
        if read and unknown and not skips_unknown_events(release):
            foreign = [e for e in unknown if e not in {event for event, _, _ in entries}]  # ours were reported above
            if foreign:
                report.fail("settings", f"{path} names hook events Claude Code {release_text(release)} does not know ({', '.join(foreign)}): "
                            "this client then runs NO hook from the file, ralph's included",
                            "remove those entries, or update Claude Code")
            continue  # none of this file's hooks runs
        if read:
            for event, matcher, handler in entries:
                if event in events_of(release):
                    active.setdefault(event, []).append((path, matcher, handler))
    return active


def check_coverage(report: Report, active: dict, release: tuple[int, int, int] | None = None) -> None:
    missing = missing_for(release)
    for event, (matcher, subcommand, timeout, on_failure) in settings.HOOK_ENTRIES.items():
        if event in missing:
            report.warn("client", what_is_missing(event, release),
                        f"update Claude Code (>= {release_text(EVENT_SINCE[event])}), then `ralph install`")
            continue
        entries = active.get(event, [])
        if not entries:
            report.fail("wiring", f"{event}: no ralph hook is wired where Claude Code reads it",
                        "ralph install --user (or --project / --local)")
            continue
        needed = settings.REQUIRED_TOOLS.get(event, ())
        uncovered = [tool for tool in needed if not any(settings.matcher_matches(m, tool) for _, m, _ in entries)]
        if uncovered and event not in settings.NO_MATCHER_EVENTS:
            report.fail("wiring", f"{event}: no ralph entry's matcher covers {', '.join(uncovered)}", "ralph install (sets the full matcher)")
        else:
            report.ok("wiring", f"{event}: {len(entries)} ralph entr{'y' if len(entries) == 1 else 'ies'} ({entries[0][0]})")
        if on_failure and fails_closed(release) and not any(h.get("onFailure") == on_failure for _, _, h in entries):
            report.warn("wiring", f"{event}: no \"onFailure\": \"{on_failure}\": if ralph crashes or times out, the client lets the tool call run",
                        "ralph install (sets it)")
        if len({h.get("command") for _, _, h in entries}) > 1:
            report.warn("wiring", f"{event}: {len(entries)} different ralph commands are wired; each one runs on every call",
                        "ralph uninstall --project / --local for the copies you do not want")


# ---- round trips ----------------------------------------------------------------------


def load_payload(name: str, project: str) -> dict:
    text = resources.files("ralph").joinpath("data", "payloads", f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text.replace(CAPTURED_PROJECT, project))


def round_trip(command: str, payload: dict, project: str, environ: dict) -> tuple[float, int | None, str, str]:
    """(seconds, exit code, stdout, stderr) of one hook call, run as the
    client runs it: through a shell, in the project, payload on stdin."""
    env = dict(environ, CLAUDE_PROJECT_DIR=project)
    env.pop("RALPH_CONFIG", None)
    started = time.perf_counter()
    try:
        proc = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), capture_output=True,
                              cwd=project, env=env, timeout=ROUND_TRIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - started, None, "", f"no answer within {ROUND_TRIP_TIMEOUT}s"
    except OSError as e:
        return time.perf_counter() - started, None, "", str(e)
    return time.perf_counter() - started, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def check_round_trips(report: Report, active: dict, environ: dict) -> dict[str, float]:
    latencies: dict[str, float] = {}
    project = tempfile.mkdtemp(prefix="ralph-doctor-")
    try:
        subprocess.run(["git", "init", "-q", project], capture_output=True)
        for event, (name, tool_input) in ROUND_TRIPS.items():
            entries = active.get(event)
            if not entries:
                continue
            source, _, handler = entries[0]
            command = handler.get("command", "")
            payload = load_payload(name, project)
            if tool_input:
                payload["tool_input"] = dict(payload.get("tool_input") or {}, **tool_input)
            env = environ
            if source.endswith(os.path.join("hooks", "hooks.json")):  # a plugin's: the client sets its root
                env = dict(environ, CLAUDE_PLUGIN_ROOT=os.path.dirname(os.path.dirname(os.path.abspath(source))))
            seconds, code, out, err = round_trip(command, payload, project, env)
            latencies[event] = round(seconds * 1000, 1)
            try:
                answer = json.loads(out)
            except ValueError:
                answer = None
            if code != 0 or not isinstance(answer, dict):
                report.fail("round trip", f"{event}: `{command}` exited {code} and printed {out.strip()[:200]!r} {err.strip()[-300:]!r}: "
                            "the client treats that as allow", "reinstall ralph-hooks, then `ralph install`; `ralph doctor` again")
                continue
            if event in GUARD_EVENTS:
                specific = answer.get("hookSpecificOutput") or {}
                if specific.get("permissionDecision") != "deny" or specific.get("hookEventName") != event:
                    report.fail("round trip", f"{event}: `git push origin main` was not denied (answer {out.strip()[:200]})",
                                "check ralph.toml [guard] allow_commands; `ralph explain \"git push origin main\"` shows why")
                    continue
            report.ok("round trip", f"{event}: {latencies[event]:.0f} ms, answered {out.strip()[:80]}")
    finally:
        shutil.rmtree(project, ignore_errors=True)
    return latencies


# ---- config, state, client -------------------------------------------------------------


def check_config(report: Report, root: str, environ: dict) -> None:
    path = config_path(root, environ)
    if path is None:
        report.ok("ralph.toml", f"none in {root} (defaults apply)")
        return
    try:
        config = load_config(root, environ)
    except ConfigError as e:
        report.fail("ralph.toml", str(e), "fix the line named; hooks use the defaults until then")
        return
    errors = config_errors(config, path)
    for error in errors:
        report.fail("ralph.toml", error, "fix or remove that key")
    if not errors:
        report.ok("ralph.toml", f"{path}: valid")


def check_state_dir(report: Report, root: str) -> None:
    """Where the hooks keep this project's state, and that they can write it."""
    own = os.path.join(root, STATE_DIR_NAME)
    if os.path.isdir(own) and not os.path.lexists(os.path.join(own, ".gitignore")):
        if not os.path.lexists(os.path.join(own, "run.json")):
            report.ok("state dir", f"{own} has no .gitignore, so hook calls outside a loop run keep their state in the git "
                                   "directory (ralph init or ralph install writes the .gitignore)")
        else:
            report.fail("state dir", f"{own} has no .gitignore: `git add -A` would commit prompts and logs",
                        "ralph install (writes it)")
            return
    try:
        state = state_dir(root)
    except OSError as e:
        report.fail("state dir", f"no state directory can be made for {root}: {e.strerror or e}",
                    f"make {root}/.git writable, or set RALPH_STATE_DIR to a writable directory")
        return
    if not os.access(state, os.W_OK | os.X_OK):
        report.fail("state dir", f"{state} is not writable", f"chmod u+rwx {state}")
        return
    where = "inside the work tree, kept out of git by its .gitignore" if state == own else "outside the work tree"
    report.ok("state dir", f"{state}: writable, {where}")


def sandbox_enabled(root: str, environ: dict) -> list[str]:
    """The settings files the client reads that turn its Bash sandbox on."""
    found = []
    for _, path, read in settings.settings_files(root, environ):
        if not read:
            continue
        try:
            data, _ = settings.read_settings(path)
        except settings.SettingsError:
            continue
        sandbox = data.get("sandbox")
        if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
            found.append(path)
    return found


def check_sandbox(report: Report, root: str, environ: dict) -> None:
    """One sandboxed probe (ralph.sandbox.probe). A failure is a problem when
    a settings file turns the client's sandbox on; else ralph-loop (whose
    [sandbox] is on by default) is what would refuse to start."""
    works, found = probe(path=environ.get("PATH"))
    enabled_in = sandbox_enabled(root, environ)
    if works:
        where = f"enabled in {', '.join(enabled_in)}" if enabled_in else "not enabled in any settings file (ralph-loop turns it on for its agent)"
        report.ok("sandbox", f"Bash sandbox works here ({found}); {where}")
    elif enabled_in:
        report.fail("sandbox", f"{', '.join(enabled_in)} turn(s) on Claude Code's Bash sandbox, which cannot run here: {found}",
                    "install bubblewrap and socat (Debian: apt-get install bubblewrap socat)")
    else:
        report.warn("sandbox", f"Claude Code's Bash sandbox cannot run here: {found}; ralph-loop refuses to start with [sandbox] enabled (the default)",
                    "apt-get install bubblewrap socat, then `ralph install --project --sandbox`")


# ---- the client ------------------------------------------------------------------------


class Client:
    """The Claude Code doctor found: its path and release (None when unknown)."""

    def __init__(self, binary: str | None, text: str = "", release: tuple[int, int, int] | None = None, problem: str = "") -> None:
        self.binary, self.text, self.release, self.problem = binary, text, release, problem

    @property
    def runs(self) -> bool:
        return self.binary is not None and not self.problem


def check_client(report: Report, explicit: str | None, environ: dict) -> Client:
    binary = find_client(explicit, environ)
    if binary is None:
        report.warn("claude", "no Claude Code found (`claude` is not on PATH): no session can show that a client runs ralph's hooks",
                    "install it (npm install -g @anthropic-ai/claude-code), or name it: ralph doctor --client PATH")
        return Client(None)
    text, why = client_version(binary, environ)
    if not text:
        report.fail("claude", f"Claude Code at {binary} does not run: {why}", "reinstall it, or name a working one with --client PATH")
        return Client(binary, problem=why)
    client = Client(binary, text, client_release(text))
    report.ok("claude", f"Claude Code {release_text(client.release) if client.release else text} ({binary})")
    if client.release is None:
        report.warn("claude", f"cannot tell which release {text!r} is: checked as the newest")
        return client
    release, name = client.release, release_text(client.release)
    if not fails_closed(release):
        report.warn("client", f"Claude Code {name} ignores \"onFailure\": when ralph cannot answer (a crash, a timeout, ralph gone), "
                    "it lets the tool call run", f"update Claude Code (>= {release_text(ON_FAILURE_SINCE)})")
    if not persists_long_output(release):
        report.warn("client", f"Claude Code {name} cuts a long Bash output and hands hooks no path to the rest: ralph judges the part "
                    "it gets, and its feedback says the output was cut and the verdict is incomplete",
                    f"update Claude Code (>= {release_text(PERSISTED_OUTPUT_SINCE)})")
    return client


def other_bash_guards(root: str, plugin: str | None, environ: dict) -> list[str]:
    """Commands of PreToolUse hooks besides ralph's that match Bash, in the files the client reads."""
    sources = [path for _, path, read in settings.settings_files(root, environ) if read]
    if plugin:
        sources.append(os.path.join(plugin, "hooks", "hooks.json"))
    found = []
    for path in sources:
        try:
            data, _ = settings.read_settings(path)
        except settings.SettingsError:
            continue
        for group in (data.get("hooks") or {}).get("PreToolUse") or []:
            if not isinstance(group, dict) or not settings.matcher_matches(group.get("matcher"), "Bash"):
                continue
            for handler in group.get("hooks") or []:
                if isinstance(handler, dict) and not settings.is_ours(handler):
                    found.append(f"{handler.get('command') or handler.get('url') or handler.get('type')} ({path})")
    return found


def check_reason_from_last_hook(report: Report, client: Client, root: str, plugin: str | None, environ: dict) -> None:
    if not reason_from_last_hook(client.release):
        return
    others = other_bash_guards(root, plugin, environ)
    if others:
        report.warn("client", f"Claude Code {release_text(client.release)} tells the model the reason of whichever matching PreToolUse hook "
                    f"finished last; with {'; '.join(others)} also on Bash, a deny of ralph's reaches the model as "
                    "\"Hook PreToolUse:Bash denied this tool\" without ralph's reason (the deny itself holds)",
                    f"update Claude Code (>= {release_text(LAST_HOOK_REASON[1])}), or narrow the other hook's matcher")


def session_sources(root: str, environ: dict) -> list[tuple[str, str]]:
    """(scope, path) of the settings files the session's client gets copies of."""
    return [(label, path) for label, path, read in settings.settings_files(root, environ) if read and label in settings.SCOPES]


def check_session(report: Report, client: Client, active: dict, root: str, plugin: str | None, environ: dict) -> bool:
    """One real session: every wired hook must run, and the push must be
    denied. True when it showed that (no failure of its own)."""
    skill_line = "PreSkillShellCommand" in events_of(client.release) and bool(active.get("PreSkillShellCommand"))
    session = run_session(client.binary, session_sources(root, environ), environ, plugin, skill_line=skill_line)
    before = len(report.checks)
    name = f"Claude Code {release_text(client.release) if client.release else client.text}"
    tail = session.output.strip()[-600:]
    if session.error or session.timed_out or session.requests == 0:
        why = (session.error or (f"no end within {session.duration:.0f}s" if session.timed_out else
               f"it exited {session.exit_code} without a single request to the stand-in of the API"))
        report.fail("session", f"{name} could not run a session against the loopback stand-in of the API: {why}"
                    + (f"; it said: {tail}" if tail else "") + ". Nothing shows that it runs ralph's hooks",
                    "run `claude -p hello` by hand to see why it does not start")
        return False
    expected = [event for event in settings.HOOK_ENTRIES if event in events_of(client.release) and active.get(event)]
    ran = session.events()
    if not ran & set(settings.HOOK_ENTRIES):
        report.fail("session", f"{name} ran none of ralph's hooks in a real session", "see the problems above; `ralph install`")
    for event in expected:
        if event not in ran:
            report.fail("session", f"{name} did not run ralph's {event} hook in a real session", "see the problems above; `ralph install`")
    if session.push_landed:
        report.fail("session", f"`{PUSH}` ran in the session and landed in the scratch remote: the client did not let ralph deny it",
                    "see the problems above; `ralph install`")
    elif "PreToolUse" in expected and "deny" not in session.decisions("PreToolUse", "Bash"):
        report.fail("session", f"ralph did not deny `{PUSH}` in the session", f"`ralph explain \"{PUSH}\"` shows why")
    elif skill_line and "deny" not in session.decisions("PreSkillShellCommand"):
        report.fail("session", f"ralph did not deny a skill's shell line `{PUSH}` in the session", f"`ralph explain \"{PUSH}\"` shows why")
    told = (session.push_result or {}).get("text", "")
    if "deny" in session.decisions("PreToolUse", "Bash") and told and "ralph-hooks" not in told:
        report.warn("session", f"the push was denied, but the model was told {told[:200]!r} instead of ralph's reason",
                    "another PreToolUse hook on Bash answered last (see above)")
    if any(c["status"] == "fail" for c in report.checks[before:]):
        return False
    report.ok("session", f"{name} ran ralph's {', '.join(e for e in expected if e in ran)} hooks in a real session "
              f"({session.duration:.1f}s) and `{PUSH}` was denied" + (" (as a Bash call and as a skill's shell line)" if skill_line else ""))
    return True


def check_agent_tools(report: Report, root: str, environ: dict) -> None:
    """`ralph mcp`: where it is registered for interactive sessions, and one
    real start of it that lists its tools (the SDK is an optional extra)."""
    where = [f"{scope} ({path})" for scope, path, _ in mcp_install.registered(root, environ)]
    if not sdk_installed():
        detail = "the MCP SDK is not installed: ralph-loop's agent gets no tools and finishes stories by ticking the plan"
        if where:
            report.fail("agent tools", f"{detail}, yet `ralph mcp` is registered in {', '.join(where)}", MCP_INSTALL_HINT)
        else:
            report.ok("agent tools", f"{detail} (optional: {MCP_INSTALL_HINT})")
        return
    command, args = server_command()
    listing = list_tools(command, args, env=environ, cwd=root)
    missing = [name for name in TOOL_NAMES if name not in listing.tools]
    if not listing.ok or missing:
        why = listing.error or f"it lists {', '.join(listing.tools) or 'no tools'}, not {', '.join(missing)}"
        report.fail("agent tools", f"`{command} {' '.join(args)}` did not answer as it should: {why}",
                    f"reinstall ralph-hooks with its extra: {MCP_INSTALL_HINT}")
        return
    registered = f"registered in {', '.join(where)}" if where else "not registered for interactive sessions (`ralph install --mcp`)"
    report.ok("agent tools", f"`ralph mcp` starts and lists {', '.join(listing.tools)} ({listing.seconds:.1f}s); {registered}")


# ---- the command -----------------------------------------------------------------------


def run(root: str, plugin: str | None, environ: dict, round_trips: bool = True, client_path: str | None = None) -> tuple[Report, dict, bool]:
    """(report, latencies, whether a client session proved the hooks run)."""
    report = Report()
    report.ok("ralph", f"ralph-hooks {__version__} ({settings.entry_point()})")
    client = check_client(report, client_path, environ)
    active = check_settings(report, root, plugin, environ, client.release)
    check_coverage(report, active, client.release)
    check_reason_from_last_hook(report, client, root, plugin, environ)
    latencies = check_round_trips(report, active, environ) if round_trips else {}
    check_config(report, root, environ)
    check_state_dir(report, root)
    check_sandbox(report, root, environ)
    if round_trips:
        check_agent_tools(report, root, environ)
    proven = round_trips and client.runs and check_session(report, client, active, root, plugin, environ)
    return report, latencies, proven


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")
    parser.add_argument("--plugin", metavar="DIR", help="also count the hooks of the plugin in DIR (as claude --plugin-dir DIR loads it)")
    parser.add_argument("--no-round-trip", action="store_true", help="check the files only; run no hook and no client session")
    parser.add_argument("--client", metavar="PATH", help="the Claude Code executable to check and run (default: claude on PATH)")
    args = parser.parse_args(argv)
    root = project_root(os.getcwd())
    report, latencies, proven = run(root, args.plugin, dict(os.environ), not args.no_round_trip, args.client)
    unproven = not args.no_round_trip and not proven and not report.failed
    code = 1 if report.failed or unproven else 0
    checks = redact(report.checks)  # details quote files, commands and the client's output
    if args.json:
        print(json.dumps({"ok": code == 0, "proven": proven, "project": root, "checks": checks, "latency_ms": latencies}, indent=2))
        return code
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    for check in checks:
        print(f"[{marks[check['status']]}] {check['check']}: {check['detail']}")
        if check["fix"] and check["status"] != "ok":
            print(f"       fix: {check['fix']}")
    problems = sum(c["status"] == "fail" for c in report.checks)
    warnings = sum(c["status"] == "warn" for c in report.checks)
    noted = f"; {warnings} warning(s) above" if warnings else ""
    if problems:
        print(f"\n{problems} problem(s) found")
    elif args.no_round_trip:
        print(f"\nthe files check out (--no-round-trip: no hook and no client was run){noted}")
    elif unproven:
        print(f"\nNOT PROVEN: the files and handlers check out, but no Claude Code session ran, so nothing shows that a client runs "
              f"ralph's hooks{noted}")
    else:
        print(f"\nall checks passed: a real Claude Code session ran ralph's hooks{noted}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
