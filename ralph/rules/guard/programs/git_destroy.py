"""The git subcommands that throw work away, read as git reads them.

Saved first (Analysis.save: ralph.claude.bash_guard writes a snapshot or
keeps the refs before it allows the command):
- `git reset --hard` (not `--soft`, `--mixed`, `--merge`, `--keep`),
- `git checkout` of paths (`-- <paths>`, `<tree-ish> <paths>`, `.`, a path
  that exists) or with `-f`, `git switch -f`/`--discard-changes`,
- `git restore` of the work tree (not `--staged` alone),
- `git clean` with `-f` (not `-n`/`--dry-run`): with `-x`/`-X` the ignored
  files it would remove are saved too, build artefacts excepted,
- `git rm -f`, `git stash drop`/`clear` (the stash entries are kept under
  refs/ralph/), `git branch -D`/`-d -f`/`-M`/`-f`, `git tag -d`,
  `git update-ref -d` (the refs are kept).
Run in another repository (`git -C ../other reset --hard`, `cd ~/repo && ...`)
the same commands are denied: no snapshot of this project holds that work.
A temporary directory is scratch: allowed.
"""
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.places import classify
from ralph.rules.guard.programs.destroy import DENIED_PLACES
from ralph.rules.guard.state import UNKNOWN, Scope

# options that take the next word as their value, per subcommand
VALUE_OPTIONS = {
    "checkout": frozenset(("-b", "-B", "--orphan", "--conflict", "-U", "--unified", "--inter-hunk-context",
                           "--pathspec-from-file")),
    "restore": frozenset(("-s", "--source", "--conflict", "-U", "--unified", "--inter-hunk-context", "--pathspec-from-file")),
    "switch": frozenset(("-c", "-C", "--create", "--force-create", "--orphan", "--conflict")),
    "clean": frozenset(("-e", "--exclude")),
    "branch": frozenset(("-u", "--set-upstream-to", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                         "--sort", "--format", "--color")),
    "rm": frozenset(("--pathspec-from-file",)),
    "stash": frozenset(("-m", "--message")),
    "tag": frozenset(("-m", "--message", "-F", "--file", "-u", "--local-user", "--contains", "--no-contains", "--merged",
                      "--no-merged", "--points-at", "--sort", "--format", "--color", "--cleanup")),
    "update-ref": frozenset(("-m",)),
}
# single-letter options that may be bundled (`-qf`): those taking a value
SHORT_VALUE = {"checkout": "bBU", "restore": "sU", "switch": "cC", "clean": "e", "branch": "u", "tag": "mFu", "stash": "m"}


def judge(analysis: Analysis, sub: str, args: list[str], argv: list[str], scope: Scope, where: str, places: list[str]) -> None:
    if any(a in ("-h", "--help") for a in args[:1]) or (sub == "stash" and args[:1] in (["list"], ["show"])):
        return
    options, words, after_dashdash = _split(sub, args)
    saves = _what_it_destroys(analysis, sub, options, words, after_dashdash, argv, scope)
    if not saves:
        return
    for place_text in places + ["."]:
        place = classify(analysis.around, analysis.cwd, scope, place_text)
        if place.kind in ("temp", "null"):
            analysis.note(where, f"git {sub} in {place.shown}: a scratch repository in a temporary directory")
            return
        if place.kind in ("project", "artefact", "git-dir") or (place.kind == "project-root" and place.path in ("", analysis.around.root)):
            continue  # this project: its work is saved below
        if place.kind == "unknown":
            analysis.block(argv, f"git {sub} throws work away in `{place.shown}`, a repository only known when the command runs", where,
                           "destroy.unknown-path")
            return
        family, _, what = DENIED_PLACES.get(place.kind, DENIED_PLACES["outside"])
        analysis.family_block(family, argv, f"git {sub} throws work away in `{place.shown}`, {what}, which no snapshot of this "
                              "project can bring back", where, "destroy.other-repository")
        return
    for kind, target, rule, why in saves:
        analysis.save(kind, target, argv, why, where, rule)


def _split(sub: str, args: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(options, positional words before `--`, words after `--`)."""
    options: list[str] = []
    words: list[str] = []
    takes = VALUE_OPTIONS.get(sub, frozenset())
    short_takes = SHORT_VALUE.get(sub, "")
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return options, words, args[i + 1:]
        if arg.startswith("--"):
            options.append(arg)
            if "=" not in arg and arg in takes:
                i += 1
        elif arg.startswith("-") and len(arg) > 1:
            options.append(arg)
            for k, ch in enumerate(arg[1:], 1):
                if ch in short_takes:
                    if k == len(arg) - 1:
                        i += 1
                    break
        else:
            words.append(arg)
        i += 1
    return options, words, []


def _flag(options: list[str], short: str, *long: str) -> bool:
    for option in options:
        if option.startswith("--"):
            if option.split("=", 1)[0] in long:
                return True
        elif short and any(ch in option[1:] for ch in short):
            return True
    return False


def _what_it_destroys(analysis: Analysis, sub: str, options: list[str], words: list[str], paths: list[str], argv: list[str],
                      scope: Scope) -> list[tuple[str, str, str, str]]:
    """(kind, target, rule id, why) for each thing the command would throw away."""
    if sub == "reset":
        mode = next((o for o in reversed(options) if o in ("--hard", "--merge", "--keep", "--soft", "--mixed")), "")
        if mode == "--hard":  # (--merge and --keep refuse to overwrite local changes)
            return [("tree", "", "save.git-reset-hard", "throws away uncommitted changes (reset --hard)")]
        return []
    if sub == "checkout":
        if _flag(options, "", "--help"):
            return []
        creates = _flag(options, "bB", "--orphan")
        force = _flag(options, "f", "--force")
        named = paths or (words[1:] if len(words) > 1 and not creates else [])
        if not named and len(words) == 1 and not creates and _is_path(analysis, words[0], scope):
            named = words
        if named or _flag(options, "p", "--patch", "--pathspec-from-file", "--ours", "--theirs"):
            return [("tree", "", "save.git-checkout-paths", f"overwrites uncommitted changes in {_paths(named)} with the committed version")]
        if force:
            return [("tree", "", "save.git-checkout-paths", "throws away uncommitted changes (checkout --force)")]
        return []
    if sub == "switch":
        if _flag(options, "f", "--force", "--discard-changes"):
            return [("tree", "", "save.git-switch-discard", "throws away uncommitted changes (switch --discard-changes)")]
        return []
    if sub == "restore":
        staged = _flag(options, "S", "--staged")
        worktree = _flag(options, "W", "--worktree")
        if staged and not worktree:
            return []
        return [("tree", "", "save.git-restore", f"overwrites uncommitted changes in {_paths(paths or words)} with the committed version")]
    if sub == "clean":
        if _flag(options, "n", "--dry-run") or not _flag(options, "fi", "--force", "--interactive"):
            return []
        ignored = _flag(options, "xX", "")
        why = "deletes untracked files" + (" and ignored files" if ignored else "")
        return [("tree", "\0".join(["clean"] + options + ["--"] + (paths or words)) if ignored else "", "save.git-clean", why)]
    if sub == "rm":
        if _flag(options, "f", "--force") and not _flag(options, "", "--cached", "--dry-run") and not _flag(options, "n", ""):
            return [("tree", "", "save.git-rm-force", f"deletes {_paths(paths or words)} with their uncommitted changes (rm --force)")]
        return []
    if sub == "stash":
        verb = words[0] if words else ""
        if verb == "clear":
            return [("stash", "*", "save.git-stash-drop", "deletes every stash entry")]
        if verb == "drop":
            entry = words[1] if len(words) > 1 else "stash@{0}"
            if entry.isdigit():
                entry = f"stash@{{{entry}}}"
            return [("stash", entry, "save.git-stash-drop", f"deletes the stash entry {entry}")]
        return []
    if sub == "branch":
        delete = _flag(options, "dD", "--delete")
        force = _flag(options, "Df", "--force")
        if delete and force:
            return [("ref", "refs/heads/" + name, "save.git-branch-delete", f"deletes branch {name} (unmerged commits included)")
                    for name in words if UNKNOWN not in name]
        if _flag(options, "MC", "") or (force and _flag(options, "mc", "--move", "--copy")):
            return [("ref", "refs/heads/" + words[-1], "save.git-branch-delete", f"overwrites branch {words[-1]}")] if words else []
        if force and words and not _flag(options, "mcdlr", "--list", "--move", "--copy", "--delete"):
            return [("ref", "refs/heads/" + words[0], "save.git-branch-delete", f"moves branch {words[0]} (its commits may be lost)")]
        return []
    if sub == "tag":
        if _flag(options, "d", "--delete"):
            return [("ref", "refs/tags/" + name, "save.git-tag-delete", f"deletes tag {name}") for name in words if UNKNOWN not in name]
        return []
    if sub == "update-ref":
        if _flag(options, "d", "") and words:
            ref = words[0]
            full = ref if ref.startswith("refs/") or ref == "HEAD" else "refs/heads/" + ref
            return [("ref", full, "save.git-update-ref-delete", f"deletes the ref {ref}")]
        return []
    if sub == "worktree":
        if words[:1] == ["remove"] and _flag(options, "f", "--force"):
            return [("tree", "", "save.git-worktree-remove", "deletes a worktree with its uncommitted changes")]
        return []
    return []


def _is_path(analysis: Analysis, word: str, scope: Scope) -> bool:
    """`git checkout X`: X is a branch or commit unless it names a file git
    would check out (`.`, an existing path, a path with a directory)."""
    if word in (".", "./", ":/", "*") or word.startswith(("./", ":(", ":/")):
        return True
    files = analysis.around.files
    if files is not None and analysis.cwd and UNKNOWN not in word:
        full = analysis.disk_path(word, scope)
        return bool(full) and files.exists(full) and not files.is_ref(word)
    return False


def _paths(words: list[str]) -> str:
    shown = ", ".join(f"`{w}`" for w in words[:3]) if words else "the work tree"
    return shown + (" ..." if len(words) > 3 else "")
