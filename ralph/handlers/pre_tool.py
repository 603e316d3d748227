"""PreToolUse: the push/merge guard on Bash, read-before-edit on edit tools."""
from __future__ import annotations

from ralph.hook import HookCall, Outcome, allow, deny
from ralph.project import config_path


def handle(call: HookCall) -> Outcome:
    check = TOOL_CHECKS.get(call.tool_name)
    return check(call) if check is not None else allow()


def load_guard_policy(call: HookCall, path: str) -> object | None:
    """The [guard] table of ralph.toml, or None (defaults). A broken config is
    logged and the defaults apply: they block every push and merge."""
    from ralph.config import ConfigError, load_config, section
    from ralph.rules.guard import GuardPolicy

    try:
        return GuardPolicy.from_config(section(load_config(call.root, call.environ), "guard", path), path)
    except ConfigError as e:
        call.problems.append(f"config ignored: {e}")
        return None


def check_bash(call: HookCall) -> Outcome:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        # The client rejects such input before running anything.
        return allow()
    path = config_path(call.root, call.environ)
    if path is None:
        # A ralph.toml [guard] table may block more programs: no fast path then.
        from ralph.rules.plain_command import obviously_harmless

        if obviously_harmless(command):
            call.log_extra["guard"] = "plain command"
            return allow()
    from ralph.rules.guard import judge_command

    verdict = judge_command(command, load_guard_policy(call, path) if path else None, cwd=call.cwd,
                            remotes=local_remotes(call.root))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        call.log_extra["rule_id"] = verdict.rule_id
        return deny(verdict.reason)
    return allow()


def local_remotes(root: str) -> tuple[str, ...]:
    """Absolute paths of the repository's remotes that are local paths (a git
    write into one is a push), read from its git config; () when unreadable."""
    import os

    git_dir = os.path.join(root, ".git")
    try:
        if os.path.isfile(git_dir):  # a worktree or submodule: `gitdir: <path>`
            with open(git_dir, encoding="utf-8", errors="replace") as f:
                git_dir = os.path.join(root, f.read().split("gitdir:", 1)[-1].strip())
            common = os.path.join(git_dir, "commondir")
            if os.path.isfile(common):
                with open(common, encoding="utf-8", errors="replace") as f:
                    git_dir = os.path.join(git_dir, f.read().strip())
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as f:
            lines = f.read(200_000).splitlines()
    except OSError:
        return ()
    remotes = []
    in_remote = False
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            in_remote = line.lower().startswith("[remote ")
        elif in_remote and line.lower().replace(" ", "").startswith(("url=", "pushurl=")):
            url = line.split("=", 1)[1].strip().strip('"')
            if url.startswith("file://"):
                url = url[7:]
            if url.startswith(("/", "./", "../", "~")) or (url and ":" not in url):
                remotes.append(os.path.normpath(os.path.join(root, os.path.expanduser(url))))
    return tuple(remotes)


def check_edit(call: HookCall) -> Outcome:
    from ralph import reads
    from ralph.rules.read_before_edit import edit_target, judge_edit

    target_path = edit_target(call.tool_name, call.tool_input)
    if target_path is None:
        return allow()  # the client rejects an edit without a path
    target = reads.identify(target_path, call.cwd)
    known = reads.known_files(call.state_dir, call.session_id, call.problems) if target.exists else []
    decision = judge_edit(call.tool_name, target_path, target, known)
    if not decision.allowed and target.exists and reads.case_insensitive_dir(call.root):
        # Only a file replaced by rename lands here on a case-folding filesystem.
        target.case_insensitive = True
        decision = judge_edit(call.tool_name, target_path, target, known)
    return allow() if decision.allowed else deny(decision.reason)


# tool -> check; the edit tools are ralph.rules.read_before_edit.EDIT_TOOLS
# (a test keeps the two in step; importing that module here would cost every
# Bash call)
TOOL_CHECKS = {
    "Bash": check_bash,
    "Edit": check_edit,
    "MultiEdit": check_edit,
    "Write": check_edit,
    "NotebookEdit": check_edit,
}
