#!/usr/bin/env python3
"""Install the Claude Code CLI the end-to-end tests drive, and say where it is.

    python3 scripts/install_claude.py [--soft] [--quiet] [--client-version X.Y.Z] [--second] [--old]

- The release: --client-version, else $RALPH_CLAUDE_VERSION, else VERSION (the
  newest 2.1). --second also installs SECOND_VERSION, the last 2.0, on which
  scripts/test runs the client tests too; --old also OLD_RELEASES, which only
  the tests marked old_clients drive (docs/development.md).
- `npm install --no-audit --no-fund @anthropic-ai/claude-code@<release>` into a
  cache folder of its own: ~/.cache/ralph-hooks/claude-code-<release> (or
  $RALPH_CLAUDE_DIR for the release asked for). Idempotent: when that release
  is already there and runs, nothing is fetched.
- $RALPH_CLAUDE_BIN points straight at a binary and skips npm altogether (for
  the release asked for; the tests' pinned old releases always come from npm).
- The binary: the platform package's native `claude` when present (the wrapper
  needs node >= 22 only for its postinstall), else node_modules/.bin/claude
  (1.0.x and 2.0.x ship cli.js, run by node).

Prints `RALPH_CLAUDE_BIN=<path>` as its last stdout line on success and writes
<dir>/install-status.json ({"ok", "binary", "version", "reason", "at"}), which
tests/e2e reads: with CI=true and ok=true a missing binary fails the e2e tests;
otherwise they are skipped with the reason recorded here.

Exit codes: 0 installed (or already there); 3 unavailable (no npm, npm failed,
binary does not run) -- with --soft this is 0 too, so a CI script can go on
and let the e2e tests skip loudly; 2 bad usage.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import time

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"  # the newest 2.1
SECOND_VERSION = "2.0.77"  # the last 2.0: scripts/test runs the client e2e on it too (--second)
# the last 1.0 and the last 2.0 before PostToolUseFailure (it loads plugins):
# the tests marked old_clients in tests/e2e/test_e2e_clients.py pin them (--old)
OLD_RELEASES = ("1.0.128", "2.0.55")
STATUS_FILE = "install-status.json"
NPM_TIMEOUT_SECONDS = 900
VERSION_TIMEOUT_SECONDS = 60
EXIT_UNAVAILABLE = 3


def wanted_version() -> str:
    """The release the suite drives: $RALPH_CLAUDE_VERSION, else VERSION."""
    return os.environ.get("RALPH_CLAUDE_VERSION", "").strip() or VERSION


def install_dir(version: str | None = None) -> str:
    version = version or wanted_version()
    configured = os.environ.get("RALPH_CLAUDE_DIR")
    if configured and version == wanted_version():
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(os.path.expanduser("~"), ".cache", "ralph-hooks", f"claude-code-{version}")


def platform_keys() -> list[str]:
    """npm platform package suffixes for this machine, most specific first."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)
    keys = [f"{system}-{arch}"]
    if system == "linux":
        keys.append(f"{system}-{arch}-musl")
    return keys


def locate_binary(directory: str | None = None, version: str | None = None) -> str | None:
    """$RALPH_CLAUDE_BIN (for the release asked for), else the native binary
    in `directory`, else .bin/claude."""
    explicit = os.environ.get("RALPH_CLAUDE_BIN")
    if explicit and (version or wanted_version()) == wanted_version() and directory is None:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    modules = os.path.join(directory or install_dir(version), "node_modules")
    exe = "claude.exe" if sys.platform == "win32" else "claude"
    candidates = [os.path.join(modules, "@anthropic-ai", f"claude-code-{key}", exe) for key in platform_keys()]
    candidates += sorted(glob.glob(os.path.join(modules, "@anthropic-ai", "claude-code-*", exe)))
    candidates.append(os.path.join(modules, ".bin", exe))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def binary_version(binary: str) -> tuple[str | None, str]:
    """("2.1.330", "") when `binary --version` works, else (None, why)."""
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{binary} --version failed: {e}"
    if done.returncode != 0:
        return None, f"{binary} --version exited {done.returncode}: {(done.stderr or done.stdout).strip()[:300]}"
    words = done.stdout.strip().split()
    return (words[0] if words else "?"), ""


def installed_package_version(directory: str) -> str | None:
    try:
        with open(os.path.join(directory, "node_modules", "@anthropic-ai", "claude-code", "package.json"), encoding="utf-8") as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def write_status(directory: str, ok: bool, binary: str | None, version: str | None, reason: str) -> None:
    try:
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, STATUS_FILE)
        record = {"ok": ok, "binary": binary, "version": version, "reason": reason, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        say(f"could not write {STATUS_FILE} in {directory}: {e}")


def say(message: str) -> None:
    sys.stderr.write(f"install_claude: {message}\n")


def npm_install(directory: str, quiet: bool, version: str) -> str:
    """Run npm; '' on success, else why not."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH (install Node.js, or set RALPH_CLAUDE_BIN to a claude binary)"
    os.makedirs(directory, exist_ok=True)
    manifest = os.path.join(directory, "package.json")
    if not os.path.exists(manifest):
        # a private manifest keeps npm from walking up into some parent project
        with open(manifest, "w", encoding="utf-8") as f:
            json.dump({"name": "ralph-hooks-claude-cache", "private": True}, f)
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", directory, f"{PACKAGE}@{version}"]
    say(f"running: {' '.join(command)} (cwd {directory})")
    try:
        done = subprocess.run(
            command,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if quiet else None,
            stderr=subprocess.STDOUT if quiet else None,
            text=True,
            timeout=NPM_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return f"npm install did not finish in {NPM_TIMEOUT_SECONDS}s"
    except OSError as e:
        return f"could not run npm: {e}"
    if done.returncode != 0:
        tail = (done.stdout or "")[-800:] if quiet else "(see npm output above)"
        return f"npm install exited {done.returncode}: {tail}"
    return ""


def ensure_installed(quiet: bool = False, wanted: str | None = None) -> tuple[str | None, str | None, str]:
    """(binary, version, reason-when-unavailable) for release `wanted` (default: wanted_version())."""
    wanted = wanted or wanted_version()
    if os.environ.get("RALPH_CLAUDE_BIN") and wanted == wanted_version():
        binary = locate_binary()
        if binary is None:
            return None, None, f"RALPH_CLAUDE_BIN={os.environ['RALPH_CLAUDE_BIN']} is not an executable file"
        version, why = binary_version(binary)
        return (binary, version, "") if version else (None, None, why)
    directory = install_dir(wanted)
    binary = locate_binary(directory)
    if binary and installed_package_version(directory) in (wanted, None):
        version, why = binary_version(binary)
        if version == wanted:
            return binary, version, ""
        say(f"found {binary} but it reports {version or why}; reinstalling {wanted}")
    failure = npm_install(directory, quiet, wanted)
    if failure:
        return None, None, failure
    binary = locate_binary(directory)
    if binary is None:
        return None, None, f"npm install succeeded but no claude binary under {directory}/node_modules (optional dependencies omitted?)"
    version, why = binary_version(binary)
    return (binary, version, "") if version else (None, None, why)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soft", action="store_true", help="exit 0 even when the CLI is unavailable (tests will skip)")
    parser.add_argument("--quiet", action="store_true", help="capture npm's output unless it fails")
    parser.add_argument("--client-version", metavar="X.Y.Z", help=f"the release to install (default: $RALPH_CLAUDE_VERSION, else {VERSION})")
    parser.add_argument("--second", action="store_true", help=f"also install the last 2.0 ({SECOND_VERSION}), which scripts/test drives too")
    parser.add_argument("--old", action="store_true",
                        help=f"also install the old releases the old_clients tests pin ({', '.join(OLD_RELEASES)}) and the last 2.0")
    args = parser.parse_args(argv)
    started = time.monotonic()
    wanted = args.client_version or wanted_version()
    others = (*(OLD_RELEASES if args.old else ()), *((SECOND_VERSION,) if args.second or args.old else ()))
    for other in others:
        if other != wanted:
            found, other_version, why = ensure_installed(args.quiet, other)
            write_status(install_dir(other), found is not None, found, other_version, why)
            say(f"Claude Code {other}: {found or 'UNAVAILABLE: ' + why}")
    binary, version, reason = ensure_installed(args.quiet, wanted)
    write_status(install_dir(wanted), binary is not None, binary, version, reason)
    if binary is None:
        say(f"Claude Code CLI UNAVAILABLE: {reason}. The e2e tests will be skipped.")
        return 0 if args.soft else EXIT_UNAVAILABLE
    say(f"Claude Code {version} ready in {time.monotonic() - started:.1f}s: {binary}")
    print(f"RALPH_CLAUDE_BIN={binary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
