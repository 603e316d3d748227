#!/usr/bin/env python3
"""Read which hook events a Claude Code release accepts in its settings,
from the release's own bundled code (how ralph.claude.protocol's
CLIENT_EVENT_SUPPORT table was derived).

    python3 scripts/client_events.py 1.0.128 2.0.0 2.0.77        # fetched with `npm pack`
    python3 scripts/client_events.py --bundle PATH [--bundle PATH]  # a cli.js or a native binary
    python3 scripts/client_events.py --first     # each event's first release, bisected over npm

The settings schema validates the `hooks` object as a record keyed by an
enum of event names (1.0.x `record(enum(E), array(group))`, 2.x
`partialRecord(enum(E), ...)`). This finds that enum's array literal in the
bundle and prints it, with whether the handler schema knows `onFailure`.
A key outside the enum fails validation of the whole hooks object: 1.0.x
then runs no hook at all (tests/e2e/test_e2e_clients.py shows it).

npm tarballs up to 2.1.110 ship the JS bundle as package/cli.js; later ones
ship a native binary in the platform package (linux-x64 is fetched, read, and
only its facts kept). Facts are cached in ~/.cache/ralph-hooks/bundles/.
"""
from __future__ import annotations

import argparse
import glob
import json
import mmap
import os
import re
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "@anthropic-ai/claude-code"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "ralph-hooks", "bundles")

FACTS = {"events", "onFailure", "notes_unknown_events"}
LIST_START = b'=["PreToolUse","PostToolUse"'
NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
# `X(Y(NAME),Z(` around an enum's use: `_.record(_.enum(E),_.array(`, minified `n$e(F(E),A(`
KEYED = re.compile(rb"[\w$.]+\([\w$.]+\($")


def _occurrences(data: bytes | mmap.mmap, needle: bytes):
    at = data.find(needle)
    while at >= 0:
        yield at
        at = data.find(needle, at + 1)


def schema_events(data: bytes | mmap.mmap) -> list[str] | None:
    """The event names of the settings' hooks record, or None when not found.
    Literal searches first (a native binary is hundreds of MB), regexes only
    on the few bytes around a hit."""
    for at in _occurrences(data, LIST_START):
        start = at
        while start > 0 and data[start - 1] in NAME_CHARS:
            start -= 1
        name = bytes(data[start:at])
        close = data.find(b"]", at)
        if not name or close < 0:
            continue
        literal = bytes(data[at + 1: close + 1])
        for use in _occurrences(data, b"(" + name + b"),"):
            before = bytes(data[max(0, use - 40): use + 1])
            after = bytes(data[use + len(name) + 3: use + len(name) + 43])
            if KEYED.search(before) and re.match(rb"[\w$.]+\(", after):
                return json.loads(literal)
    return None


def knows_on_failure(data: bytes | mmap.mmap) -> bool:
    """Does the command-hook schema have the `onFailure` field (fail closed)?"""
    return data.find(b'"Timeout in seconds for this specific command"),onFailure:') >= 0


def read_bundle(path: str) -> dict:
    """What the bundle says: the events, `onFailure`, and whether it names an
    unknown event key in a note (`unknown hook event. Valid events:`, from
    2.1.198; runs show such a key is skipped silently from 2.1.101 on, and
    before that fails the whole hooks object)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return {"events": schema_events(data), "onFailure": knows_on_failure(data),
                "notes_unknown_events": data.find(b"unknown hook event. Valid events") >= 0}


def npm_pack(spec: str, work: str) -> str:
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", work, spec], check=True, stdout=subprocess.DEVNULL, timeout=900)
    (tarball,) = glob.glob(os.path.join(work, "*.tgz"))
    return tarball


def fetched_facts(version: str) -> dict:
    """read_bundle() of a release, from `npm pack` (cached per version: cli.js
    kept, a native binary read once and only its facts kept)."""
    facts_file = os.path.join(CACHE, f"{version}.json")
    try:
        with open(facts_file, encoding="utf-8") as f:
            cached = json.load(f)
        if isinstance(cached, dict) and set(cached) == FACTS:
            return cached
    except (OSError, ValueError):
        pass
    os.makedirs(CACHE, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        with tarfile.open(npm_pack(f"{PACKAGE}@{version}", work)) as archive:
            names = archive.getnames()
            if "package/cli.js" in names:
                archive.extract("package/cli.js", work, filter="data")
                facts = read_bundle(os.path.join(work, "package", "cli.js"))
            else:  # a native-binary release: the platform package holds the bundle
                native = os.path.join(work, "native")
                os.mkdir(native)
                with tarfile.open(npm_pack(f"{PACKAGE}-linux-x64@{version}", native)) as binary_archive:
                    binary_archive.extract("package/claude", native, filter="data")
                facts = read_bundle(os.path.join(native, "package", "claude"))
    with open(facts_file + ".tmp", "w", encoding="utf-8") as f:
        json.dump(facts, f)
    os.replace(facts_file + ".tmp", facts_file)
    return facts


def published() -> list[str]:
    """Every release from the first with hooks (1.0.22 has none), oldest first."""
    done = subprocess.run(["npm", "view", PACKAGE, "versions", "--json"], check=True, capture_output=True, text=True, timeout=300)
    versions = [v for v in json.loads(done.stdout) if "-" not in v and not v.startswith("0.")]
    return versions[versions.index("1.0.22"):]


def first_releases() -> dict[str, str]:
    """Each fact's first release (events of the newest, onFailure, the note),
    by bisection: a fact, once in, stays (true of every one checked)."""
    versions = published()
    newest = fetched_facts(versions[-1])
    found = {}
    for fact in [*newest["events"], "onFailure", "notes_unknown_events"]:
        def has(version: str) -> bool:
            facts = fetched_facts(version)
            return bool(facts[fact]) if fact in FACTS else fact in (facts["events"] or [])
        low, high = 0, len(versions) - 1
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if has(versions[middle]) else (middle, high)
        found[fact] = versions[high]
        print(f"{fact}: first in {versions[high]} (not in {versions[low]})", flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", help="npm versions of @anthropic-ai/claude-code")
    parser.add_argument("--bundle", action="append", default=[], help="a cli.js or native claude binary")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--first", action="store_true", help="bisect each event's first release (fetches ~60 releases once)")
    args = parser.parse_args(argv)
    if args.first:
        first_releases()
        return 0
    rows = {}
    for version in args.versions:
        rows[version] = fetched_facts(version)
    for path in args.bundle:
        rows[path] = read_bundle(path)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for what, row in rows.items():
        events = row["events"]
        notes = [n for n, on in (("onFailure", row["onFailure"]), ("notes unknown events", row["notes_unknown_events"])) if on]
        print(f"{what}: {len(events) if events else '?'} events{f' ({chr(44).join(notes)})' if notes else ''}: {','.join(events or ['NOT FOUND'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
