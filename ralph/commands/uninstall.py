"""`ralph uninstall`: take exactly ralph's hook entries out of a settings
file. A file `ralph install` created is deleted, and one that nothing else
changed since the install gets its original bytes back from the install's
backup (the install record beside the file says both); otherwise only
ralph's entries go, every other byte as it was, after a backup. `ralph mcp`
leaves that scope's MCP servers too, with the setting `ralph install --mcp`
wrote.
"""
from __future__ import annotations

import argparse
import os
import sys

from ralph.commands.install import (
    SettingsError,
    add_scope_flags,
    diff,
    digest,
    json_of,
    our_entries,
    read_record,
    read_settings,
    record_path,
    scope_of,
    settings_path,
    settings_text,
    without_ours,
    write_settings,
)
from ralph.mcp import install as mcp_install
from ralph.state.locations import project_root


def main(argv: list[str]) -> int:
    return uninstall_main(argv)


def uninstall_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph uninstall", description="Remove exactly ralph's hook entries from a settings file (and `ralph mcp` "
                                     "from that scope's MCP servers); nothing else. "
                                     "A file ralph created is deleted, and one nothing else changed since `ralph install` gets its original bytes back.")
    add_scope_flags(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    args = parser.parse_args(argv)
    root = project_root(os.getcwd())
    path = settings_path(scope_of(args), root)
    try:
        data, old = read_settings(path)
    except SettingsError as e:
        sys.stderr.write(f"ralph uninstall: {e}\n")
        return 1
    tools = mcp_install.uninstall(scope_of(args), root, os.environ, args.dry_run)  # `ralph mcp`, if registered
    return max(tools, without_hooks(path, data, old, args.dry_run))


def without_hooks(path: str, data: dict, old: str | None, dry_run: bool) -> int:
    """The settings file without ralph's entries (and the agent tools' setting)."""
    record = read_record(path)
    if not our_entries(data) and mcp_install.without_tools_env(data) == data:
        print(f"no ralph hooks in {path}; nothing changed")
        if record is not None and not dry_run:
            remove_quietly(record_path(path))  # it describes a file that is no longer ours to restore
        return 0
    assert old is not None
    untouched = record is not None and record.get("written") == digest(old)
    if untouched and record.get("created"):
        return delete_created(path, record, old, dry_run)
    original = original_bytes(record) if untouched else None
    if original is not None:
        return restore_original(path, record, old, original, dry_run)
    new = settings_text(old, mcp_install.without_tools_env(without_ours(data)), {})
    if record is not None and record.get("created") and json_of(new) == {}:
        return delete_created(path, record, old, dry_run)
    sys.stdout.write(diff(path, old, new))
    if dry_run:
        print(f"(dry run: {path} not written)")
        return 0
    try:
        backup = write_settings(path, new, True)
    except OSError as e:
        sys.stderr.write(f"ralph uninstall: cannot write {path}: {e.strerror or e}; nothing was changed\n")
        return 1
    remove_quietly(record_path(path))
    print(f"removed ralph hooks from {path}; backup: {backup}")
    return 0


def original_bytes(record: dict) -> bytes | None:
    """The bytes the install's backup kept, when they are there and hold no
    ralph entry (a re-install over a changed file backed up ralph's own):
    read as bytes, so CRLF, a byte order mark, tabs and trailing spaces come
    back as they were."""
    backup = record.get("backup")
    if not isinstance(backup, str):
        return None
    try:
        data, text = read_settings(backup)
        if text is None or our_entries(data):
            return None
        with open(backup, "rb") as f:
            return f.read()
    except (SettingsError, OSError):
        return None


def delete_created(path: str, record: dict, old: str, dry_run: bool) -> int:
    sys.stdout.write(diff(path, old, ""))
    if dry_run:
        print(f"(dry run: {path}, which ralph install created, not deleted)")
        return 0
    try:
        os.unlink(path)
    except OSError as e:
        sys.stderr.write(f"ralph uninstall: cannot delete {path}: {e.strerror or e}; nothing was changed\n")
        return 1
    remove_quietly(record_path(path))
    for directory in record.get("made_dirs") or []:
        try:
            os.rmdir(directory)  # only an empty one: what else is there stays
        except OSError:
            break
    print(f"removed {path}: ralph install had created it and nothing else is in it")
    return 0


def restore_original(path: str, record: dict, old: str, original: bytes, dry_run: bool) -> int:
    """The backup's bytes back in place; the backup goes only once the file
    and the backup are read back holding exactly those bytes."""
    sys.stdout.write(diff(path, old, original.decode("utf-8", "replace")))
    if dry_run:
        print(f"(dry run: {path} not written)")
        return 0
    backup = record["backup"]
    try:
        write_settings(path, original, False)
    except OSError as e:
        sys.stderr.write(f"ralph uninstall: cannot write {path}: {e.strerror or e}; nothing was changed\n")
        return 1
    if not (same_bytes(path, original) and same_bytes(backup, original)):
        sys.stderr.write(f"ralph uninstall: {path} does not read back as the bytes before `ralph install`; "
                         f"the original stays in {backup}\n")
        return 1
    remove_quietly(record_path(path))
    remove_quietly(backup)  # the file now holds exactly these bytes: verified above
    print(f"restored {path} to its bytes before `ralph install` (nothing else had changed it)")
    return 0


def same_bytes(path: str, expected: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read() == expected
    except OSError:
        return False


def remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
