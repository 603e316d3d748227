"""The loop's part of the push/merge defence .

- The sandbox layer (ralph.sandbox) goes to every agent with `--settings`,
  merged into the user's own `--settings` file when the agent command has
  one (the client reads only the last `--settings` flag).
- `.ralph/protected/` holds that settings file and the guard's denial log;
  the layer makes it read-only to the agent's Bash (hooks, which write the
  log, run outside the sandbox).
- Git hooks and config are fingerprinted when an iteration starts and
  checked before the loop runs git with them; a change is undone.
- History: an iteration whose commits include a merge, or commits that came
  from another branch or a remote, is failed.
- Denials: the PreToolUse guard appends one line per denial during a loop
  run (ralph.state.denials); the loop reads them.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess

from ralph.state.denials import ENV_MAX_DENIALS, ENV_STORY, denial_summary, protected_dir, read_denials
from ralph.state.files import atomic_write

SETTINGS_FILE = "agent-settings.json"
ENV_SETTINGS = "RALPH_SANDBOX_SETTINGS"
MAX_GIT_FILE = 1024 * 1024  # hooks and config kept byte for byte up to this size

CLAUDE_WORD = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))((?:[^\s;&|()]*/)?claude)(?=\s|$|[;&|)])")
SETTINGS_FLAG = re.compile(r"(?:(?<=^)|(?<=\s))--settings(?:=|\s+)('[^']*'|\"[^\"]*\"|[^\s;&|]+)")


class SandboxSetupError(Exception):
    """The agent command's own --settings could not be read."""


# ---- the agent command ----


def runs_claude(command: list[str] | str) -> bool:
    """True when the command starts Claude Code itself (so it takes --settings)."""
    if isinstance(command, list):
        return any(os.path.basename(word) == "claude" for word in command)
    return CLAUDE_WORD.search(command) is not None


def user_settings_value(command: list[str] | str) -> str | None:
    """The value of the command's own `--settings` (a file or inline JSON), if any."""
    if isinstance(command, list):
        for number, word in enumerate(command):
            if word == "--settings" and number + 1 < len(command):
                return command[number + 1]
            if word.startswith("--settings="):
                return word.split("=", 1)[1]
        return None
    m = SETTINGS_FLAG.search(command)
    if not m:
        return None
    try:
        words = shlex.split(m.group(1))
    except ValueError:
        return m.group(1)
    return words[0] if words else ""


def read_user_settings(root: str, value: str) -> dict:
    text = value.strip()
    where = "the agent command's --settings JSON"
    if not text.startswith("{"):
        path = os.path.expanduser(text if os.path.isabs(text) else os.path.join(root, text))
        where = path
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise SandboxSetupError(f"cannot read the agent command's --settings file {path}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise SandboxSetupError(f"{where}: not valid JSON ({e}); the sandbox layer cannot be merged into it") from None
    if not isinstance(data, dict):
        raise SandboxSetupError(f"{where}: settings must be a JSON object")
    return data


def with_settings(command: list[str] | str, settings_file: str) -> list[str] | str:
    """`command` running Claude Code with `--settings settings_file`: the
    command's own --settings value replaced, or the flag added right after
    the `claude` word."""
    if isinstance(command, list):
        out = list(command)
        for number, word in enumerate(out):
            if word == "--settings" and number + 1 < len(out):
                out[number + 1] = settings_file
                return out
            if word.startswith("--settings="):
                out[number] = f"--settings={settings_file}"
                return out
        at = next(i for i, word in enumerate(out) if os.path.basename(word) == "claude")
        return [*out[: at + 1], "--settings", settings_file, *out[at + 1:]]
    quoted = shlex.quote(settings_file)
    m = SETTINGS_FLAG.search(command)
    if m:
        return command[: m.start()] + f"--settings {quoted}" + command[m.end():]
    m = CLAUDE_WORD.search(command)
    assert m is not None
    return command[: m.end()] + f" --settings {quoted}" + command[m.end():]


def write_agent_settings(root: str, state_dir: str, command: list[str] | str, layer: dict, name: str) -> str:
    """Write the layer (merged with the command's own --settings) into
    .ralph/protected/; the path of the file."""
    from ralph.sandbox import merge_settings

    value = user_settings_value(command)
    settings = merge_settings(read_user_settings(root, value), layer) if value is not None else layer
    os.makedirs(protected_dir(state_dir), exist_ok=True)
    path = os.path.join(protected_dir(state_dir), name)
    atomic_write(path, json.dumps(settings, indent=1) + "\n")
    return path


# ---- git hooks and config ----


def git_control_files(root: str) -> dict[str, bytes | None]:
    """path -> fingerprint of git's config files and every file in the hooks
    directory (what runs when the loop runs git): the content, plus a marker
    when executable; None when too big to keep. An empty, non-executable file
    counts as absent: it changes nothing, and the client's sandbox leaves such
    files behind as mount points (e.g. `.git/config.worktree`)."""
    from ralph.sandbox import git_dirs

    common, hooks = git_dirs(root)
    found: dict[str, bytes | None] = {}
    paths = [os.path.join(common, "config"), os.path.join(common, "config.worktree")]
    for directory, _dirs, files in os.walk(hooks):
        paths.extend(os.path.join(directory, f) for f in files)
    for path in paths:
        try:
            st = os.lstat(path)
            if os.path.islink(path):
                found[path] = SYMLINK + os.fsencode(os.readlink(path))
            elif st.st_size > MAX_GIT_FILE:
                found[path] = None
            else:
                with open(path, "rb") as f:
                    data = f.read()
                if st.st_mode & 0o111:
                    data += EXECUTABLE
                if data:
                    found[path] = data
        except OSError:
            continue
    return found


SYMLINK = b"\0symlink:"
EXECUTABLE = b"\0executable"
ABSENT = b""


def changed_control_files(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p, ABSENT) != after.get(p, ABSENT))


def restore_control_files(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> list[str]:
    """Put hooks and config back as they were; what could not be restored."""
    problems = []
    for path in changed_control_files(before, after):
        old = before.get(path, ABSENT)
        try:
            if old is None:
                problems.append(f"{path} (too large to have been kept)")
                continue
            if os.path.islink(path) or os.path.isfile(path):
                os.unlink(path)
            if old.startswith(SYMLINK):
                os.symlink(os.fsdecode(old[len(SYMLINK):]), path)
            elif old != ABSENT:
                executable = old.endswith(EXECUTABLE)
                atomic_write(path, old[: -len(EXECUTABLE)] if executable else old)
                if executable:
                    os.chmod(path, 0o755)
        except OSError as e:
            problems.append(f"{path} ({e.strerror})")
    return problems


# ---- history ----


def _git(root: str, *args: str) -> tuple[int, str]:
    done = subprocess.run(["git", *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout.decode("utf-8", "replace")


def ref_snapshot(root: str) -> dict[str, str]:
    """refname -> sha of every ref (branches, tags, remote-tracking refs)."""
    code, out = _git(root, "for-each-ref", "--format=%(objectname) %(refname)")
    refs = {}
    for line in out.splitlines():
        sha, _, name = line.partition(" ")
        if name:
            refs[name] = sha
    return refs


def head_ref(root: str) -> str:
    code, out = _git(root, "symbolic-ref", "-q", "HEAD")
    return out.strip() if code == 0 else ""


def foreign_history(root: str, checkpoint: str, refs_before: dict[str, str], started_epoch: float,
                    clock_slack: float = 300.0) -> list[str]:
    """Why the history since `checkpoint` was not all made in this iteration
    (empty: it was): merge commits, HEAD no longer descending from the
    checkpoint, commits reachable from refs that existed before the iteration
    or from remote-tracking refs, commits dated before the iteration began."""
    code, head = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    head = head.strip()
    if code != 0 or head == checkpoint:
        return []
    reasons: list[str] = []
    _, merges = _git(root, "log", "--merges", "--format=%H %s", f"{checkpoint}..HEAD")
    for line in merges.splitlines()[:3]:
        sha, _, subject = line.partition(" ")
        reasons.append(f"merge commit {sha[:12]} ({subject[:80]})")
    if subprocess.run(["git", "merge-base", "--is-ancestor", checkpoint, "HEAD"], cwd=root,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        reasons.append(f"HEAD no longer descends from the checkpoint {checkpoint[:12]}: history was replaced "
                       "(a reset, rebase or checkout of another branch)")
        return reasons
    _, new = _git(root, "rev-list", f"{checkpoint}..HEAD")
    new_commits = new.split()
    refs_now = ref_snapshot(root)
    others = set(refs_before.values())
    others.update(sha for name, sha in refs_now.items() if name.startswith("refs/remotes/"))
    if others:
        _, own = _git(root, "rev-list", "HEAD", "--not", checkpoint, *sorted(others))
        own_commits = set(own.split())
        foreign = [c for c in new_commits if c not in own_commits]
        if foreign:
            current = head_ref(root)
            names = sorted({name for name, sha in {**refs_before, **refs_now}.items()
                            if name != current and _contains(root, sha, foreign[0])})
            source = f" (reachable from {', '.join(names[:3])})" if names else ""
            reasons.append(f"{len(foreign)} commit(s) brought in from another branch or a remote{source}, e.g. {foreign[0][:12]}")
    if new_commits:
        _, dates = _git(root, "log", "--no-walk=unsorted", "--format=%H %ct", *new_commits[:200])
        early = [line.split()[0] for line in dates.splitlines()
                 if len(line.split()) == 2 and int(line.split()[1]) < started_epoch - clock_slack]
        if early:
            reasons.append(f"{len(early)} commit(s) dated before this iteration began (brought in from elsewhere), e.g. {early[0][:12]}")
    return reasons


def _contains(root: str, ref_sha: str, commit: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", commit, ref_sha], cwd=root,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


# ---- the loop's side (mixed into ralph.loop.runner.Runner) ----


class LoopGuard:
    """Runner methods for the sandbox, git hooks/config, history and denials.
    Uses the Runner's root, state_dir, settings, display, run_id, iteration,
    plan_path, fail(), roll_back-like rollback and records."""

    sandbox_files: dict[str, str]
    guard_start: dict
    stuck_iterations: dict[str, int]

    def prepare_sandbox(self) -> None:
        """Before the first iteration: build the sandbox layer and the agent
        settings files, or refuse to start when the sandbox cannot run."""
        from ralph.config import config_path, load_config
        from ralph.loop.runner import Finish
        from ralph.loop import records
        from ralph.sandbox import OPT_OUT_HINT, bwrap_prefix, permission_rules, probe, sandbox_config, settings_layer

        self.sandbox_files = {}
        self.stuck_iterations = {}
        self.verify_prefix: list[str] = []
        root, state_dir = self.root, self.state_dir  # type: ignore[attr-defined]
        display = self.display  # type: ignore[attr-defined]
        config, path = load_config(root), config_path(root)
        values = sandbox_config(config, path)
        stages = self.settings.stages  # type: ignore[attr-defined]
        status = "on"
        if not values["enabled"]:
            display.message("sandbox: OFF ([sandbox] enabled = false): a push the guard misses is not stopped")
            status = "off (config)"
        else:
            claude_stages = [s for s in stages if runs_claude(s.agent_command)]
            ok = False
            for stage in stages:
                if stage not in claude_stages:
                    display.message(
                        f"sandbox: the {stage.name} agent command does not start `claude` itself, so ralph-loop cannot "
                        f"pass it the sandbox layer; pass ${ENV_SETTINGS} with --settings, or set [sandbox] enabled = false")
            if claude_stages:
                ok, message = probe()
                if not ok and values["fail_if_unavailable"]:
                    raise Finish("error", f"the sandbox cannot run here, so ralph-loop will not start the agent: {message}; {OPT_OUT_HINT}")
                if not ok:
                    display.message(f"sandbox: UNAVAILABLE, the agent runs unsandboxed ([sandbox] fail_if_unavailable = false): {message}")
                    status = "unavailable"
            layer = settings_layer(root, config, path)
            protected = os.path.realpath(protected_dir(state_dir))
            os.makedirs(protected, exist_ok=True)
            extra = [protected] + ([os.path.realpath(path)] if path and os.path.exists(path) else [])
            deny_write = layer["sandbox"]["filesystem"]["denyWrite"]
            deny_write.extend(p for p in extra if p not in deny_write)
            rules = layer["permissions"]["deny"]
            for p in extra:
                rules.extend(r for r in permission_rules("Edit", p) + permission_rules("Write", p) if r not in rules)
            if values["verify"] and claude_stages and ok:
                import shutil

                self.verify_prefix = bwrap_prefix(layer, shutil.which("bwrap") or "bwrap")
            try:
                for stage in stages:
                    name = f"agent-settings-{re.sub(r'[^A-Za-z0-9_.-]', '_', stage.name)}.json"
                    file = write_agent_settings(root, state_dir, stage.agent_command if stage in claude_stages else "", layer, name)
                    if stage in claude_stages:
                        self.sandbox_files[stage.name] = file
                    self.sandbox_files.setdefault("", file)
            except SandboxSetupError as e:
                raise Finish("error", str(e)) from None
        records.append_event(state_dir, {"event": "sandbox", "run_id": self.run_id, "status": status,  # type: ignore[attr-defined]
                                         "stages": sorted(k for k in self.sandbox_files if k)})

    def verify_argv(self, command: list[str] | str) -> list[str] | str:
        """The verify command, under bubblewrap (no network, the layer's file
        limits) when the agent is sandboxed: it runs the agent's code."""
        from ralph.loop.proc import argv_for

        prefix = getattr(self, "verify_prefix", None)
        return [*prefix, *argv_for(command)] if prefix else command

    def agent_command(self, stage: object) -> list[str] | str:
        file = self.sandbox_files.get(stage.name)  # type: ignore[attr-defined]
        return with_settings(stage.agent_command, file) if file else stage.agent_command  # type: ignore[attr-defined]

    def guard_env(self, env: dict[str, str]) -> dict[str, str]:
        env[ENV_MAX_DENIALS] = str(self.settings["max_guard_denials"])  # type: ignore[attr-defined]
        story = (getattr(self, "state", None) or {}).get("story") or {}
        env[ENV_STORY] = str(story.get("id") or "")
        if self.sandbox_files.get(""):
            env[ENV_SETTINGS] = self.sandbox_files[""]
        return env

    def start_guard(self) -> None:
        """When an iteration starts: what its end is compared with."""
        import time

        root = self.root  # type: ignore[attr-defined]
        self.guard_start = {"refs": ref_snapshot(root), "control": git_control_files(root),
                            "head_ref": head_ref(root), "epoch": time.time()}

    def judge_guard(self, story: object, checkpoint: str, event: dict) -> str | None:
        """After the agent: a result that fails the iteration, or None. Git
        hooks/config changed: restored. History not made here: rolled back.
        Too many guard denials: the iteration ends as stuck. `story` is None
        in a plan stage (no story to reopen)."""
        from ralph.plan import set_story_state

        root, state_dir = self.root, self.state_dir  # type: ignore[attr-defined]
        story_id = story.id if story is not None else "PLAN"  # type: ignore[attr-defined]

        def reopen() -> None:
            if story is not None:
                set_story_state(self.plan_path, story_id, "todo")  # type: ignore[attr-defined]

        start = getattr(self, "guard_start", None)
        if not start:
            return None
        denials = read_denials(state_dir, self.run_id, self.iteration)  # type: ignore[attr-defined]
        if denials:
            event["guard_denials"] = len(denials)
        after = git_control_files(root)
        changed = changed_control_files(start["control"], after)
        if changed:
            problems = restore_control_files(start["control"], after)
            shown = ", ".join(os.path.relpath(p, root) for p in changed[:5])
            summary = (f"the agent changed git's hooks or config ({shown}); restored before the loop ran git, "
                       "and the iteration's work was rolled back")
            if problems:
                summary += f"; could not restore: {', '.join(problems)}"
            self.fail(story_id, "git_control", summary, command="(sandbox)")  # type: ignore[attr-defined]
            self.display.message(summary)  # type: ignore[attr-defined]
            event["git_control_changed"] = changed[:20]
            self.guard_roll_back(story_id, checkpoint, event, "git hooks/config changed")
            reopen()
            return "git_config_changed"
        reasons = foreign_history(root, checkpoint, start["refs"], start["epoch"])
        if reasons:
            summary = ("the iteration's history is not all its own work: " + "; ".join(reasons)
                       + ". Merges and commits from other branches or remotes are left to the person; the work was saved "
                       "and rolled back to the checkpoint. Make your own commits on the current branch only.")
            self.fail(story_id, "merge", summary)  # type: ignore[attr-defined]
            self.display.message(summary)  # type: ignore[attr-defined]
            event["foreign_history"] = reasons
            if start["head_ref"] and head_ref(root) != start["head_ref"]:
                _git(root, "symbolic-ref", "HEAD", start["head_ref"])  # back on the loop's branch; the reset does the rest
            self.guard_roll_back(story_id, checkpoint, event, "merge or foreign commits")
            reopen()
            return "merge_detected"
        limit = self.settings["max_guard_denials"]  # type: ignore[attr-defined]
        if limit and len(denials) >= limit:
            summary = (f"{len(denials)} commands were denied by the push/merge guard in this iteration (limit {limit}), "
                       "so the loop ended it. Pushing and merging are not part of the task: commit locally and carry on "
                       "with the story; if the story truly needs a push or merge, mark it blocked and say why.")
            self.fail(story_id, "guard_denials", summary, denial_summary(denials))  # type: ignore[attr-defined]
            self.display.message(summary)  # type: ignore[attr-defined]
            reopen()
            return "guard_stopped"
        return None

    def guard_roll_back(self, story_id: str, checkpoint: str, event: dict, trigger: str) -> None:
        from ralph.state.reads import invalidate_all
        from ralph.rollback.restore import save_and_restore

        result = save_and_restore(self.root, checkpoint, story=story_id, iteration=self.iteration,  # type: ignore[attr-defined]
                                  trigger=trigger, run_id=self.run_id)  # type: ignore[attr-defined]
        event["rollback"] = {"id": result.id, "ref": result.ref, "restored": result.restored, "message": result.message}
        if result.restored:
            invalidate_all(self.state_dir)  # type: ignore[attr-defined]
        self.display.message(f"rollback: {result.message}")  # type: ignore[attr-defined]

    def after_guard_stop(self, story: object, result: str) -> None:
        """Stuck iterations in a row for one story (ended by the guard): mark it blocked at the limit."""
        from ralph.loop import records
        from ralph.loop.runner import Finish
        from ralph.plan import set_story_state

        story_id = story.id  # type: ignore[attr-defined]
        if result != "guard_stopped":
            if result == "done":
                self.stuck_iterations.pop(story_id, None)
            return
        count = self.stuck_iterations.get(story_id, 0) + 1
        self.stuck_iterations[story_id] = count
        limit = self.settings["max_stuck_iterations"]  # type: ignore[attr-defined]
        if not limit or count < limit:
            return
        set_story_state(self.plan_path, story_id, "blocked")  # type: ignore[attr-defined]
        denials = read_denials(self.state_dir, self.run_id, story=story_id)  # type: ignore[attr-defined]
        summary = (f"{story_id} was ended by the push/merge guard in {count} iterations ({len(denials)} denied commands); "
                   f"marked blocked ([!]) in {self.plan_rel}: it looks stuck on a push or merge only a person should make")  # type: ignore[attr-defined]
        self.fail(story_id, "guard_blocked", summary, denial_summary(denials))  # type: ignore[attr-defined]
        records.append_event(self.state_dir, {  # type: ignore[attr-defined]
            "event": "story_blocked", "run_id": self.run_id, "story": story_id, "at": records.utc_now(),  # type: ignore[attr-defined]
            "reason": "guard_denials", "iterations": count, "denials": len(denials),
        })
        self.display.message(summary)  # type: ignore[attr-defined]
        if self.settings["on_story_exhausted"] == "stop":  # type: ignore[attr-defined]
            raise Finish("blocked", summary)
