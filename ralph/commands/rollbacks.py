"""`ralph rollbacks`: list the work saved before rollbacks, or bring it back.

    ralph rollbacks [list] [--json]        every snapshot under refs/ralph/rollbacks/
    ralph rollbacks restore ID [--force]   put its files, exec bits and index back exactly
    ralph rollbacks save [MESSAGE]         snapshot the current work by hand (nothing is reset)

`restore` never loses work: uncommitted changes are saved as a new snapshot
first (and their id printed). When HEAD moved on since the snapshot (not just
back to the checkpoint), it refuses unless --force, which restores the files
and index on top of the current HEAD.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ralph.rollback.git import RollbackError
from ralph.rollback.restore import restore_snapshot
from ralph.rollback.snapshots import list_snapshots, save_snapshot
from ralph.state.locations import project_root


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ralph rollbacks", description="List or restore work saved before a rollback.")
    parser.add_argument("-C", dest="directory", default=None, help="run as if started in this directory")
    sub = parser.add_subparsers(dest="action")
    listing = sub.add_parser("list", help="list saved snapshots (the default)")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    restore = sub.add_parser("restore", help="restore a snapshot's work tree and index")
    restore.add_argument("id", help="snapshot id (a unique prefix, the short sha, or the full ref)")
    restore.add_argument("--force", action="store_true", help="restore on top of a HEAD that moved elsewhere; overwrite ignored files in the way")
    save = sub.add_parser("save", help="snapshot the current work without resetting anything")
    save.add_argument("message", nargs="?", default="saved by hand with `ralph rollbacks save`")
    return parser


def _root(directory: str | None) -> str:
    return project_root(os.path.abspath(directory or os.getcwd()))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(rows: list[dict]) -> str:
    headers = ("id", "time", "story", "iter", "kind", "files", "trigger", "ref")
    cells = [
        (r["id"], r["time"], r["story"] or "-", str(r["iteration"] or "-"), r["kind"] or "-", str(r["files_changed"]),
         _short(r["trigger"] or r["subject"] or "-"), r["ref"])
        for r in rows
    ]
    table = [headers, *cells]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    root = _root(args.directory)
    action = args.action or "list"
    try:
        if action == "list":
            rows = [s.to_dict() for s in list_snapshots(root)]
            if getattr(args, "json", False):
                for row in rows:
                    print(json.dumps(row, ensure_ascii=False))
            elif not rows:
                print("no saved work: no rollback has happened in this repository (refs/ralph/rollbacks/ is empty)")
            else:
                print(_table(rows))
                print("\nrestore one with: ralph rollbacks restore ID   (inspect first: git show --stat REF)")
            return 0
        if action == "restore":
            result = restore_snapshot(root, args.id, force=args.force)
            print(result.message)
            return 0
        snap_id, ref, sha = save_snapshot(root, args.message, kind="manual")
        print(f"saved as {snap_id} ({ref}); nothing was reset")
        return 0
    except RollbackError as e:
        print(f"ralph rollbacks: {e}", file=sys.stderr)
        return 1
