"""Read-before-edit: an existing file may be edited only after this session
read it (or wrote it). Pure: the caller resolves paths and reads the records.

"Same file" is decided on the file's identity on disk, (device, inode,
generation), which folds relative/absolute paths, `..`, symlinks, hard links
and case on case-insensitive filesystems; the canonical path is the second
key, so a file replaced by rename (new inode, same name) still counts as read.

The generation tells a reused inode from the file that had it: filesystems
give a deleted file's inode number to the next new file at once (ext4 does),
and that file was never read. Where the filesystem keeps a birth time
(statx), a file born well before the read was recorded is the one read, even
if edited since; one born later, or too close to the read to tell
(BIRTH_MARGIN_NS: file timestamps come from the kernel's coarse clock, which
lags the read's clock by up to a tick), is judged as if there were no birth
time; elsewhere
the inode's ctime recorded at the read must not have moved since (a change
after the read, or a new file on the old inode, both move it). Only an inode
match under another path needs the generation, so the caller looks the birth
time up only then (it costs an import on the hot path).
"""
# A birth time this close to the read (or later) is another file's: see above.
# Too strict only costs a re-read; too loose would allow an unread edit.
BIRTH_MARGIN_NS = 50_000_000

# tool name -> the tool_input field naming the file it changes
EDIT_TOOLS = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}


class FileIdentity:
    """A file as it is now (`birth`, when looked up), or as a read recorded it (`read_at`)."""

    __slots__ = ("path", "dev", "ino", "exists", "case_insensitive", "birth", "ctime", "read_at")

    def __init__(self, path: str, dev: int = 0, ino: int = 0, exists: bool = False, case_insensitive: bool = False,
                 birth: int = 0, ctime: int = 0, read_at: int = 0) -> None:
        self.path = path
        self.dev = dev
        self.ino = ino
        self.exists = exists
        self.case_insensitive = case_insensitive
        self.birth = birth  # birth time in ns; 0: not looked up, or the filesystem keeps none
        self.ctime = ctime  # inode change time in ns; 0 unknown (a record from before generations)
        self.read_at = read_at  # when a read was recorded, ns; 0 for a file as it is now

    def same_generation(self, other: "FileIdentity") -> bool:
        """The same inode number is the same file only if it was not freed and
        given to another file in between. Unknown: not the same."""
        for now, read in ((self, other), (other, self)):
            if now.birth and read.read_at and now.birth < read.read_at - BIRTH_MARGIN_NS:
                return True  # born before the read: the file that was read
        return bool(self.ctime and other.ctime) and self.ctime == other.ctime

    def needs_birth(self, known: "list[FileIdentity]") -> bool:
        """Does judging this file against the reads need its birth time?"""
        return bool(self.exists and self.ino) and any(
            (r.dev, r.ino) == (self.dev, self.ino) and r.path != self.path for r in known)

    def same_file(self, other: "FileIdentity") -> bool:
        if (self.exists and other.exists and self.ino and (self.dev, self.ino) == (other.dev, other.ino)
                and self.same_generation(other)):
            return True
        if self.case_insensitive or other.case_insensitive:
            return self.path.casefold() == other.path.casefold()
        return self.path == other.path


class EditDecision:
    __slots__ = ("allowed", "reason")

    def __init__(self, allowed: bool, reason: str) -> None:
        self.allowed = allowed
        self.reason = reason


def edit_target(tool_name: str, tool_input: dict) -> str | None:
    """The path an edit tool would change, or None when this is not an edit."""
    field = EDIT_TOOLS.get(tool_name)
    if field is None:
        return None
    value = tool_input.get(field)
    if not isinstance(value, str) or not value:
        # Older clients and odd inputs: try the other field name.
        value = tool_input.get("file_path") or tool_input.get("notebook_path")
    return value if isinstance(value, str) and value else None


def inside_git_dir(canonical_path: str) -> bool:
    """A path inside a `.git` directory (hooks, config, refs...)."""
    return ".git" in canonical_path.split("/")[:-1] or canonical_path.endswith("/.git")


def judge_edit(tool_name: str, display_path: str, target: FileIdentity, known: list[FileIdentity]) -> EditDecision:
    if inside_git_dir(target.path):
        # A hook or config written now runs a push or merge later, where the
        # shell guard cannot see it; the agent never needs to edit these.
        return EditDecision(
            False,
            f"{display_path} is inside a .git directory: ralph-hooks does not let the agent write git's "
            "hooks, config or refs (they can run pushes and merges later). Use git commands for git state, "
            "and leave hooks and remotes to the person.",
        )
    if not target.exists:
        # Nothing on disk to clobber: creating a file needs no read.
        return EditDecision(True, "new file")
    for record in known:
        if target.same_file(record):
            return EditDecision(True, "read earlier in this session")
    verb = "overwrite" if tool_name == "Write" else "edit"
    return EditDecision(
        False,
        f"Read {display_path} before you {verb} it: it exists and has not been read in this session "
        f"(or it changed under you since). Use the Read tool on it first, then retry the same {tool_name}.",
    )
