"""The models of programs that delete or overwrite: what a command destroys,
and whether a snapshot can hold it.

Where a path lies (ralph.rules.guard.places) decides: in a temporary
directory, among build artefacts or made by the command itself, nothing is
lost; inside the project the work is saved first (Analysis.save: a snapshot
under refs/ralph/, which ralph.claude.bash_guard makes before allowing the
command); anywhere else (home, system directories, other repositories, the
project's own directory or its .git, a disk) nothing can bring it back, so
the command is denied. A path only known when the command runs is denied
when it is deleted recursively.

Modelled here: rm, unlink, shred, find -delete (and what find -exec runs),
dd, mkfs and the other disk writers, recursive chmod/chown/chgrp, truncate,
mktemp (what it makes), the database clients (psql, mysql, mariadb,
sqlite3, mongosh, redis-cli, dropdb, mysqladmin) and the deletion calls of
interpreter code (shutil.rmtree, fs.rmSync, FileUtils.rm_rf, ...); the walk
asks judge_overwrite about redirections, tee, cp/mv/install targets and sed -i.
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.places import Place, classify
from ralph.rules.guard.state import GLOB, UNKNOWN, Scope, option_values, program_name, read_written, shell_quote

# place -> (the [guard] family that denies it, rule id, what the place is)
DENIED_PLACES = {
    "home": ("destroy_outside", "destroy.home", "in a home directory, outside the project"),
    "system": ("destroy_outside", "destroy.system", "in a system directory"),
    "outside": ("destroy_outside", "destroy.outside-project", "outside the project (another directory or repository)"),
    "project-root": ("destroy_outside", "destroy.project-root", "the project's own directory, with its history"),
    "git-dir": ("destroy_outside", "destroy.git-dir", "in the project's .git directory (its history and ralph's snapshots)"),
    "device": ("destroy_devices", "destroy.device", "a disk"),
}
HARMLESS_PLACES = ("null", "temp", "artefact")
# programs that write a file system or partition table onto a disk
DISK_WRITERS = frozenset(("mke2fs", "mkswap", "wipefs", "blkdiscard", "fdisk", "sfdisk", "sgdisk", "cfdisk", "parted",
                          "mkdosfs", "mkntfs", "cryptsetup", "badblocks", "zpool", "pvcreate", "vgremove", "lvremove"))
LIST_ONLY = frozenset(("-l", "--list", "print", "-p", "--print", "-h", "--help", "--version", "-V", "-n", "--noaction",
                       "--dry-run", "--no-act"))
# interpreter calls that delete files: (name as written, lower case; deletes whole trees)
DELETE_CALLS = (("rmtree", True), ("rm_rf", True), ("rm_r", True), ("remove_tree", True), ("rmsync", True),
                ("fs.rm(", True), ("fs.promises.rm(", True), ("rimraf", True), ("remove_dir_all", True),
                ("removeall", True), ("deltree", True), ("remove-item", True), ("rmdirsync", True), ("os.removedirs", True),
                ("unlinksync", False), ("fs.unlink(", False), ("os.remove(", False), ("os.unlink(", False),
                ("os.rmdir(", False), (".unlink(", False), ("file.delete(", False), ("unlink(", False),
                ("remove_file", False), ("fileutils.rm(", False))
SQL_DROPS = ("DROP DATABASE", "DROP SCHEMA", "DROP TABLE", "DROP OWNED", "DROP COLLECTION", "TRUNCATE ", "DROPDATABASE",
             ".DROP(", "DROPCOLLECTION", "FLUSHALL", "FLUSHDB")
SQL_CLIENTS = {"psql": (("-c", "--command"), ("-f", "--file")), "mysql": (("-e", "--execute"), ()),
               "mariadb": (("-e", "--execute"), ()), "mongosh": (("--eval",), ()), "mongo": (("--eval",), ()),
               "clickhouse-client": (("-q", "--query"), ()), "cockroach": (("-e", "--execute"), ())}


def place_of(analysis: Analysis, path: str, scope: Scope) -> Place:
    return classify(analysis.around, analysis.cwd, scope, path)


def tracked(analysis: Analysis, place: Place) -> bool:
    files = analysis.around.files
    return bool(place.path) and files is not None and files.tracked(place.path)


def exists(analysis: Analysis, place: Place) -> bool:
    files = analysis.around.files
    return bool(place.path) and files is not None and files.exists(place.path)


def deny_place(analysis: Analysis, argv: list[str], place: Place, verb: str, where: str, what: str = "") -> None:
    family, rule, kind = DENIED_PLACES[place.kind]
    analysis.family_block(family, [what] if what else argv, f"{verb} `{place.shown}`, {kind}, which no snapshot can bring back", where,
                          rule)


def judge_deletion(analysis: Analysis, argv: list[str], path: str, scope: Scope, where: str, recursive: bool, rule: str,
                   verb: str = "deletes", what: str = "") -> None:
    """One path a command deletes. recursive: a whole tree (rm -r, find
    -delete), which is saved even when it is not tracked."""
    place = place_of(analysis, path, scope)
    if place.kind in HARMLESS_PLACES:
        analysis.note(where, f"{verb} {place.shown}: {place.kind}, nothing of value is lost")
    elif place.kind == "project":
        if recursive or GLOB in path or UNKNOWN in path or exists(analysis, place):
            target = place.path if place.path and UNKNOWN not in path else ""
            analysis.save("tree", target, argv, f"{verb} `{place.shown}` inside the project", where, rule, what)
        else:
            analysis.note(where, f"{verb} {place.shown}: nothing there (or nothing the guard can see)")
    elif place.kind == "unknown":
        if recursive:
            analysis.block(argv, f"{verb} `{place.shown}`, a path only known when the command runs (it could be anything, "
                           "the home directory included)", where, "destroy.unknown-path")
        else:
            analysis.note(where, f"{verb} {place.shown}: one file, only known when the command runs")
    else:
        deny_place(analysis, argv, place, verb, where, what)


def judge_overwrite(analysis: Analysis, path: str, scope: Scope, where: str, how: str = ">", argv: list[str] | None = None) -> None:
    """A file the command replaces. how: ">" (a redirection), the program
    (tee, cp, dd, ...), or "edit" (sed -i: an edit in place, like the Edit
    tool's: inside the project it is work, not saved)."""
    what = f"{how} {shell_quote(path)}" if how in (">", "edit") else ""
    argv = argv or [how, path]
    place = place_of(analysis, path, scope)
    if place.kind in HARMLESS_PLACES:
        return
    if place.kind == "project":
        if how != "edit" and tracked(analysis, place):
            analysis.save("tree", place.path, argv, f"overwrites `{place.shown}`, a tracked file with possibly uncommitted work", where,
                          "save.overwrite-tracked", what)
        return
    if place.kind == "unknown":
        analysis.note(where, f"writes {place.shown}, only known when the command runs")
        return
    files = analysis.around.files
    if place.kind in ("home", "outside", "system") and place.path and files is not None and not files.exists(place.path):
        analysis.note(where, f"creates {place.shown} (nothing there yet)")
        return
    if place.kind == "git-dir" and not _vital_git_file(place.shown):
        return
    deny_place(analysis, argv, place, "overwrites", where, what)


def _vital_git_file(path: str) -> bool:
    parts = path.split(".git/", 1)[-1].split("/")
    return parts[0] in ("HEAD", "index", "packed-refs", "config", "refs", "objects", "logs", "ORIG_HEAD") or path.endswith(".git")


def run_rm(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """rm, unlink, shred: options anywhere before `--` (GNU getopt)."""
    name = program_name(argv[0]) or "rm"
    recursive = name == "shred"
    targets = []
    options_done = False
    for arg in argv[1:]:
        if options_done or not arg.startswith("-") or arg == "-":
            targets.append(arg)
        elif arg == "--":
            options_done = True
        elif arg in ("--help", "--version"):
            return ""
        elif arg.startswith("--"):
            recursive = recursive or arg == "--recursive"
        else:
            recursive = recursive or "r" in arg or "R" in arg
    rule = "save.shred-project" if name == "shred" else "save.rm-project"
    for target in targets:
        judge_deletion(analysis, argv, target, scope, where, recursive, rule)
    return ""


def run_mktemp(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """What mktemp makes (and prints): deleting it later loses nothing."""
    directory = None
    template = None
    relative = True
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-p", "--tmpdir") and i + 1 < len(argv):
            directory = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--tmpdir="):
            directory = arg[9:]
        elif arg == "-t" or arg.startswith("--tmpdir"):
            relative = False
        elif not arg.startswith("-"):
            template = arg
        i += 1
    if directory is None and (template is None or not relative):
        directory = (scope.vars.get("TMPDIR") or [None])[0] or "/tmp"
    name = (template or "tmp.XXXXXXXXXX").rstrip("X") + UNKNOWN
    made = name if directory is None else directory.rstrip("/") + "/" + name.rsplit("/", 1)[-1]
    scope.made = scope.made + (made,)
    return made + "\n"


def judge_find_delete(analysis: Analysis, argv: list[str], found: list[str], scope: Scope, where: str) -> None:
    """find -delete: each start path's files (as find_targets names them) are deleted."""
    for path in found:
        judge_deletion(analysis, argv, path, scope, where, True, "save.find-delete")


def run_dd(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    for arg in argv[1:]:
        if arg.startswith("of="):
            place = place_of(analysis, arg[3:], scope)
            if place.kind == "device":
                deny_place(analysis, argv, place, "writes over", where)
            else:
                analysis.judge_overwrite(arg[3:], scope, where, "dd", argv)
    return None


def run_disk_writer(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """mkfs.*, wipefs, fdisk, parted, ...: denied when they name a disk (listing excepted)."""
    if any(arg in LIST_ONLY for arg in argv[1:]):
        return None
    for arg in argv[1:]:
        if arg.startswith("/dev/"):
            place = place_of(analysis, arg, scope)
            if place.kind in ("device", "system"):
                analysis.family_block("destroy_devices", argv, f"{program_name(argv[0])} writes onto `{place.shown}`, a disk: "
                                      "everything on it is lost", where, "destroy.device")
                return None
    return None


def run_permissions(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """chmod/chown/chgrp: recursive on a system or home directory (or on `/` or
    a home directory itself) is denied; inside the project it is work."""
    recursive = False
    words = []
    reference = False
    for arg in argv[1:]:
        if arg in ("--help", "--version"):
            return None
        if arg.startswith("--"):
            recursive = recursive or arg == "--recursive"
            reference = reference or arg.startswith("--reference")
        elif arg.startswith("-") and len(arg) > 1 and not arg[1].isdigit() and arg[1] not in "rwxXst=+":
            recursive = recursive or "R" in arg
        else:
            words.append(arg)
    for path in words if reference else words[1:]:
        place = place_of(analysis, path, scope)
        top = place.kind in ("home", "system") and (not recursive) and (place.path in ("/", analysis.around.home) or place.shown in ("~", "/"))
        if (recursive and place.kind in ("home", "system", "outside", "project-root", "git-dir")) or top:
            where_text = {"home": "a home directory", "system": "a system directory", "outside": "a directory outside the project",
                          "project-root": "the directory above the project", "git-dir": "the project's .git"}.get(place.kind, place.kind)
            if place.kind == "project-root" and place.path == analysis.around.root:
                continue  # the project's own files, recursively: work, not destruction
            analysis.family_block("destroy_permissions", argv, f"changes the owner or permissions of everything under `{place.shown}`, "
                                  f"{where_text}", where, "destroy.permissions")
            return None
    return None


def run_truncate(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    skip = False
    for k, arg in enumerate(argv[1:], 1):
        if skip:
            skip = False
            continue
        if arg in ("-s", "--size", "-r", "--reference", "-o"):
            skip = arg != "-o"
            continue
        if not arg.startswith("-"):
            analysis.judge_overwrite(arg, scope, where, "truncate", argv)
    return None


def run_database(analysis: Analysis, argv: list[str], env: dict[str, str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """The database clients: a drop (DROP DATABASE/SCHEMA/TABLE, TRUNCATE,
    dropDatabase(), FLUSHALL) on a server is outside the project: denied;
    sqlite3 on a file inside the project is saved first."""
    name = program_name(argv[0]) or ""
    if any(a in ("--help", "-?", "--version", "-V") for a in argv[1:2]):
        return None
    if name in ("dropdb", "mysqladmin") or (name == "redis-cli"):
        words = [a.upper() for a in argv[1:]]
        if name == "dropdb" or "DROP" in words or "FLUSHALL" in words or "FLUSHDB" in words:
            analysis.family_block("destroy_databases", argv, f"{name} drops a database (or empties it) on its server, outside the project",
                                  where, "destroy.database")
            return None
        if name == "redis-cli" and stdin is not None and _drops(stdin):
            analysis.family_block("destroy_databases", argv, "redis-cli empties a database on its server", where, "destroy.database")
        return None
    if name == "sqlite3":
        return _sqlite(analysis, argv, stdin, scope, where)
    code_options, file_options = SQL_CLIENTS.get(name, ((), ()))
    texts = option_values(argv[1:], code_options) if code_options else []
    for path in option_values(argv[1:], file_options) if file_options else []:
        texts.append(read_written(path, scope) or analysis.read_project_file(path, scope))
    if name in ("mongosh", "mongo"):
        for arg in argv[1:]:
            if arg.endswith(".js") and not arg.startswith("-"):
                texts.append(read_written(arg, scope) or analysis.read_project_file(arg, scope))
    if not texts:
        texts = [stdin]
    for text in texts:
        if text is None:
            if any(word in analysis.text.upper() for word in ("DROP", "TRUNCATE", "FLUSH")):
                analysis.family_block("destroy_databases", argv, f"{name} runs statements the guard cannot see, and the command "
                                      "mentions a drop", where, "destroy.database")
                return None
            analysis.note(where, f"{name} runs statements the guard cannot see")
        elif _drops(text):
            analysis.family_block("destroy_databases", argv, f"{name} drops or empties a database on its server, outside the project",
                                  where, "destroy.database")
            return None
        elif name == "psql":
            for line in text.splitlines():
                if line.strip().startswith("\\!"):
                    analysis.run_script(line.strip()[2:], scope.fork(), "", f"{where} > psql \\!")
    return None


def _sqlite(analysis: Analysis, argv: list[str], stdin: str | None, scope: Scope, where: str) -> str | None:
    words = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-mmap", "-lookaside", "-pagecache", "-heap"):
            if arg == "-cmd" and i + 1 < len(argv):
                words.append(("sql", argv[i + 1]))
            i += 2
            continue
        if not arg.startswith("-"):
            words.append(("file" if not any(kind == "file" for kind, _ in words) else "sql", arg))
        i += 1
    database = next((text for kind, text in words if kind == "file"), "")
    statements = [text for kind, text in words if kind == "sql"] or [stdin]
    if not database or database == ":memory:":
        return None
    drops = any(text is None or _drops(text) for text in statements)
    if not drops:
        return None
    place = place_of(analysis, database, scope)
    if place.kind in HARMLESS_PLACES:
        return None
    if place.kind == "project":
        analysis.save("tree", place.path, argv, f"drops or empties tables of `{place.shown}` inside the project", where,
                      "save.sqlite-project")
    elif place.kind != "unknown":
        analysis.family_block("destroy_databases", argv, f"sqlite3 drops or empties tables of `{place.shown}`, outside the project",
                              where, "destroy.database")
    return None


def _drops(text: str) -> bool:
    """Does this SQL (or mongo/redis script) drop or empty something? DELETE
    without WHERE counts."""
    upper = " ".join(text.upper().split())
    if any(drop in upper for drop in SQL_DROPS):
        return True
    for statement in upper.split(";"):
        if "DELETE FROM" in statement and " WHERE " not in statement + " ":
            return True
    return False


def judge_code_deletions(analysis: Analysis, name: str, code: str, scope: Scope, where: str, from_disk: bool = False) -> None:
    """Interpreter code that deletes files (shutil.rmtree, fs.rmSync,
    FileUtils.rm_rf, ...): each literal path it passes is judged as rm -r of
    it; a call with no literal path fails closed for code on the command
    line (code in the project's own files is judged by its literals only)."""
    low = code.lower()
    spans = analysis.model("shells").literal_spans(code)
    for call, whole_tree in DELETE_CALLS:
        start = low.find(call)
        while start >= 0:
            end = start + len(call)
            literal = next((span for span in spans if span[0] >= end and span[0] - end <= 40
                            and not any(c in code[end:span[0]] for c in ");\n")), None)
            argv = [name, call.strip("(."), literal[2] if literal else "…"]
            if literal is not None:
                judge_deletion(analysis, argv, literal[2], scope, where, whole_tree or not from_disk, "save.interpreter-delete",
                               what=f"{name}: {call.strip('(.')}({literal[2]!r})")
            elif not from_disk and not _in_literal(spans, start):
                analysis.block(argv, f"{name} code deletes with {call.strip('(.')}() a path only known when it runs", where,
                               "destroy.unknown-path")
                return
            start = low.find(call, end)


def _in_literal(spans: list[tuple[int, int, str]], index: int) -> bool:
    return any(start <= index < end for start, end, _ in spans)


def looks_destructive(text: str) -> bool:
    """Could this string (an interpreter's literal) be a shell command that
    deletes or overwrites? Then the walk judges it as one."""
    words = text.replace(";", " ").replace("&&", " ").replace("|", " ").split()
    return any(program_name(word) in DESTRUCTIVE_WORDS or (program_name(word) or "").startswith("mkfs") for word in words[:40]) or " > " in text


DESTRUCTIVE_WORDS = frozenset(("rm", "unlink", "shred", "dd", "wipefs", "truncate", "chmod", "chown", "chgrp", "find", "git",
                               "psql", "mysql", "sqlite3", "mongosh", "dropdb", "redis-cli"))

