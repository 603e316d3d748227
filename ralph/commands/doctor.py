"""`ralph doctor`: is this machine really protected? Checks every settings
file Claude Code reads (and the ones it ignores), ralph's entries in them,
one real round trip per event through the exact configured command,
ralph.toml against the whole schema, the state dir, and the client's version.
Every problem comes with a concrete fix; exit 1 when something is wrong.
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
from ralph.commands import install as settings
from ralph.config.reading import load_config
from ralph.config.schema import ConfigError
from ralph.config.whole_file import config_errors
from ralph.mcp import install as mcp_install
from ralph.mcp.launch import INSTALL_HINT as MCP_INSTALL_HINT
from ralph.mcp.launch import TOOL_NAMES, list_tools, sdk_installed, server_command
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


def check_settings(report: Report, root: str, plugin: str | None, environ: dict) -> dict[str, list[tuple[str, object, dict]]]:
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
        for problem in settings.findings_for(path, data, read, environ):
            fix = problem.rsplit(" Fix: ", 1)[1] if " Fix: " in problem else ""
            report.fail("entries", problem.rsplit(" Fix: ", 1)[0], fix)
        if read:
            for event, matcher, handler in entries:
                if event in settings.CLIENT_EVENTS:
                    active.setdefault(event, []).append((path, matcher, handler))
    return active


def check_coverage(report: Report, active: dict) -> None:
    for event, (matcher, subcommand, timeout, on_failure) in settings.HOOK_ENTRIES.items():
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
        if on_failure and not any(h.get("onFailure") == on_failure for _, _, h in entries):
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
            if event == "PreToolUse":
                decision = (answer.get("hookSpecificOutput") or {}).get("permissionDecision")
                if decision != "deny":
                    report.fail("round trip", f"PreToolUse: `git push origin main` was not denied (answer {out.strip()[:200]})",
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


def claude_version(environ: dict) -> str | None:
    binary = shutil.which("claude", path=environ.get("PATH")) or environ.get("RALPH_CLAUDE_BIN")
    if not binary:
        return None
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20, env=environ)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or done.stderr.strip())[:100] or None


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


def run(root: str, plugin: str | None, environ: dict, round_trips: bool = True) -> tuple[Report, dict]:
    report = Report()
    report.ok("ralph", f"ralph-hooks {__version__} ({settings.entry_point()})")
    version = claude_version(environ)
    if version:
        report.ok("claude", f"Claude Code {version}")
    else:
        report.warn("claude", "Claude Code (`claude`) not found on PATH", "install it: npm install -g @anthropic-ai/claude-code")
    active = check_settings(report, root, plugin, environ)
    check_coverage(report, active)
    latencies = check_round_trips(report, active, environ) if round_trips else {}
    check_config(report, root, environ)
    check_state_dir(report, root)
    check_sandbox(report, root, environ)
    if round_trips:
        check_agent_tools(report, root, environ)
    return report, latencies


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")
    parser.add_argument("--plugin", metavar="DIR", help="also count the hooks of the plugin in DIR (as claude --plugin-dir DIR loads it)")
    parser.add_argument("--no-round-trip", action="store_true", help="check the files only; run no hook")
    args = parser.parse_args(argv)
    root = project_root(os.getcwd())
    report, latencies = run(root, args.plugin, dict(os.environ), not args.no_round_trip)
    if args.json:
        print(json.dumps({"ok": not report.failed, "project": root, "checks": report.checks, "latency_ms": latencies}, indent=2))
        return 1 if report.failed else 0
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}
    for check in report.checks:
        print(f"[{marks[check['status']]}] {check['check']}: {check['detail']}")
        if check["fix"] and check["status"] != "ok":
            print(f"       fix: {check['fix']}")
    problems = sum(c["status"] == "fail" for c in report.checks)
    print(f"\n{problems} problem(s) found" if problems else "\nall checks passed: Claude Code runs ralph's hooks")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
