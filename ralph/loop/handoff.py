"""The hand-off: what the loop does with the run branch once the run is over.

`[handoff] mode`:
- "none" (the default): nothing; the commits stay on the run branch.
- "push": push the run branch, and only it, to `remote` (default origin):
  `git push <remote> refs/heads/B:refs/heads/B`, never forced, never the
  remote's default branch (nor main/master).
- "pr": push as above, then open a draft pull request (`gh pr create
  --draft`, GitHub) or merge request (`glab mr create --draft`, GitLab),
  titled from the plan, the report's Markdown summary as its body; when one is
  open for the branch already, its body is updated instead. Never merged,
  auto-merge never turned on.
- "bundle": `.ralph/runs/<run>/handoff.bundle` (a git bundle of the run
  branch) and `patches/` (git format-patch), for a project with no remote.

The loop does this itself, in its own process, with the person's
credentials: it is not a tool call of the agent, so no Claude Code hook sees
it (the push/merge guard judges the agent's commands only). Prompts are off
(no terminal, GIT_TERMINAL_PROMPT=0, gh/glab prompts disabled) and each
command has a timeout: an unattended run must not hang on a password. A
failure loses nothing: the commits stay on the branch, and the error goes
into the result (the report and the exit message show it).

ralph.config.tables.handoff declares [handoff].
"""
from __future__ import annotations

import json
import os
import shutil

from ralph import process
from ralph.redaction import redact
from ralph.run.clock import utc_now
from ralph.state.files import read_lines

MERGE_REQUESTS_FILE = "merge_requests.jsonl"
BUNDLE_FILE = "handoff.bundle"
PATCHES_DIR = "patches"
ALWAYS_PROTECTED = ("main", "master")  # never pushed to, whatever the remote says its default is
MAX_BODY = 60_000  # characters of a pull request's body (GitHub takes 65536)
OUTPUT_BYTES = 64 * 1024
NO_PROMPTS = {"GIT_TERMINAL_PROMPT": "0", "GH_PROMPT_DISABLED": "1", "NO_PROMPT": "1", "GCM_INTERACTIVE": "never"}


class HandoffError(Exception):
    """Why the hand-off could not be made, for the report and the exit message."""


class Command:
    """Runs one command of the hand-off: git, gh or glab, in the project,
    without a terminal, prompts off, within the timeout."""

    def __init__(self, root: str, timeout: float, environ: dict[str, str] | None = None, stop: object = None) -> None:
        self.root = root
        self.timeout = timeout
        self.env = dict(os.environ if environ is None else environ, **NO_PROMPTS)
        self.stop = stop  # a second Ctrl-C: the command is killed

    def run(self, argv: list[str], stdin: bytes = b"") -> tuple[int, str]:
        """(exit code, output); raises HandoffError when it cannot start or times out."""
        result = process.run(argv, cwd=self.root, env=self.env, stdin=stdin, timeout=self.timeout,
                             max_bytes=OUTPUT_BYTES, kill_grace=5.0, drain=2.0, new_session=True, stop=self.stop)  # type: ignore[arg-type]
        output = bytes(result.output.tail).decode("utf-8", "replace").strip()
        if result.error:
            raise HandoffError(f"cannot run {argv[0]}: {result.error}")
        if result.stopped:
            raise HandoffError(f"`{' '.join(argv[:3])}` was stopped (a second Ctrl-C)")
        if result.timed_out:
            raise HandoffError(f"`{' '.join(argv[:3])}` did not finish within {self.timeout:g}s (an auth prompt? no network?)")
        return int(result.exit_code if result.exit_code is not None else 1), output

    def check(self, argv: list[str], stdin: bytes = b"") -> str:
        code, output = self.run(argv, stdin)
        if code != 0:
            raise HandoffError(f"`{' '.join(argv[:3])}` failed (exit {code}): {last_lines(output)}")
        return output


def last_lines(text: str, count: int = 4) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "(no output)"


# ---- what triggers it ----


def merge_requests(state_dir: str, run_id: str) -> list[dict]:
    """The agent's request_merge calls in this run (`.ralph/merge_requests.jsonl`)."""
    found = []
    for line in read_lines(os.path.join(state_dir, MERGE_REQUESTS_FILE)):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("run_id") == run_id:
            found.append(entry)
    return found


# ---- guarding the push ----


def remote_default_branch(cmd: Command, remote: str) -> str:
    """The branch the remote's HEAD names ("" when it cannot say)."""
    code, out = cmd.run(["git", "symbolic-ref", "-q", "--short", f"refs/remotes/{remote}/HEAD"])
    if code == 0 and out.startswith(remote + "/"):
        return out[len(remote) + 1:].strip()
    code, out = cmd.run(["git", "ls-remote", "--symref", remote, "HEAD"])
    for line in out.splitlines() if code == 0 else []:
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line[len("ref: refs/heads/"):-len("\tHEAD")]
    return ""


def check_pushable(cmd: Command, branch: str, remote: str) -> None:
    if not branch:
        raise HandoffError("the run is on a detached HEAD: there is no branch to push ([loop] branch = \"current\")")
    if cmd.run(["git", "remote", "get-url", remote])[0] != 0:
        raise HandoffError(f"there is no remote {remote!r} (git remote add {remote} URL, or set [handoff] remote)")
    default = remote_default_branch(cmd, remote)
    if branch in ALWAYS_PROTECTED or branch == default:
        raise HandoffError(f"the run branch {branch} is {remote}'s default branch; the hand-off never pushes to it "
                           "(let the run use its own branch: [loop] branch = \"auto\")")


def push(cmd: Command, branch: str, remote: str) -> None:
    """Only that branch, no force: a remote branch that moved meanwhile makes git refuse."""
    check_pushable(cmd, branch, remote)
    cmd.check(["git", "push", "--porcelain", "--no-follow-tags", remote, f"refs/heads/{branch}:refs/heads/{branch}"])


# ---- pull requests ----


def forge_of(cmd: Command, forge: str, remote: str) -> str:
    if forge != "auto":
        return forge
    code, url = cmd.run(["git", "remote", "get-url", remote])
    url = url.lower() if code == 0 else ""
    if "github" in url:
        return "github"
    if "gitlab" in url:
        return "gitlab"
    path = cmd.env.get("PATH")
    if shutil.which("gh", path=path):
        return "github"
    if shutil.which("glab", path=path):
        return "gitlab"
    raise HandoffError("pr: neither gh (GitHub) nor glab (GitLab) is on PATH; install one, or set [handoff] forge")


def remote_has_branch(cmd: Command, remote: str, branch: str) -> bool:
    return bool(branch) and cmd.run(["git", "ls-remote", "--exit-code", "--heads", remote, f"refs/heads/{branch}"])[0] == 0


def url_in(output: str) -> str | None:
    for line in reversed(output.splitlines()):
        word = line.strip().split(" ")[-1] if line.strip() else ""
        if word.startswith(("https://", "http://")):
            return word
    return None


def github_pr(cmd: Command, branch: str, base: str, title: str, body: str) -> tuple[str, str | None]:
    """("opened" | "updated", url)."""
    listed = cmd.check(["gh", "pr", "list", "--head", branch, "--state", "open", "--json", "number,url", "--limit", "1"])
    try:
        open_prs = json.loads(listed or "[]")
    except ValueError:
        raise HandoffError(f"gh pr list printed something that is not JSON: {last_lines(listed)}") from None
    if isinstance(open_prs, list) and open_prs and isinstance(open_prs[0], dict) and open_prs[0].get("number") is not None:
        cmd.check(["gh", "pr", "edit", str(open_prs[0]["number"]), "--body-file", "-"], body.encode())
        return "updated", open_prs[0].get("url")
    argv = ["gh", "pr", "create", "--draft", "--head", branch, "--title", title, "--body-file", "-"]
    if base:
        argv += ["--base", base]
    return "opened", url_in(cmd.check(argv, body.encode()))


def gitlab_mr(cmd: Command, branch: str, base: str, title: str, body: str) -> tuple[str, str | None]:
    listed = cmd.check(["glab", "mr", "list", "--source-branch", branch, "--output", "json"])
    try:
        open_mrs = json.loads(listed or "[]")
    except ValueError:
        raise HandoffError(f"glab mr list printed something that is not JSON: {last_lines(listed)}") from None
    if isinstance(open_mrs, list) and open_mrs and isinstance(open_mrs[0], dict) and open_mrs[0].get("iid") is not None:
        cmd.check(["glab", "mr", "update", str(open_mrs[0]["iid"]), "--description", body])
        return "updated", open_mrs[0].get("web_url")
    argv = ["glab", "mr", "create", "--draft", "--source-branch", branch, "--title", title, "--description", body, "--yes"]
    if base:
        argv += ["--target-branch", base]
    return "opened", url_in(cmd.check(argv))


# ---- bundle ----


def bundle(cmd: Command, branch: str, base: str, out_dir: str) -> str:
    """handoff.bundle and patches/ in out_dir; the bundle's path. `base`: the
    commit the branch grew from ("" for its whole history)."""
    if not branch:
        raise HandoffError("the run is on a detached HEAD: there is no branch to bundle")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, BUNDLE_FILE)
    revs = [f"refs/heads/{branch}"] + ([f"^{base}"] if base else [])
    cmd.check(["git", "bundle", "create", "-q", path, *revs])  # git writes it through a lock file: whole or absent
    patches = os.path.join(out_dir, PATCHES_DIR)
    partial = f"{patches}.{os.getpid()}.tmp"
    shutil.rmtree(partial, ignore_errors=True)
    commits = [f"{base}..refs/heads/{branch}"] if base else ["--root", f"refs/heads/{branch}"]
    cmd.check(["git", "format-patch", "-q", "-o", partial, *commits])
    shutil.rmtree(patches, ignore_errors=True)
    os.replace(partial, patches)
    return path


def base_commit(cmd: Command, branch: str, since: str) -> str:
    """Where the branch left `since` (the person's branch it was made from): their merge base, or ""."""
    if not since or not branch:
        return ""
    code, out = cmd.run(["git", "merge-base", f"refs/heads/{since}", f"refs/heads/{branch}"])
    base = out.strip() if code == 0 else ""
    code, tip = cmd.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"])
    return "" if base == tip.strip() else base


# ---- the whole hand-off ----


def hand_off(root: str, settings: dict, branch: str, *, since: str, title: str, body: object,
             out_dir: str, environ: dict[str, str] | None = None, stop: object = None) -> dict:
    """Do the configured hand-off of `branch`; its record (the `handoff`
    event's fields without run_id). `since`: the branch the run branch was
    made from ("" if unknown); `body()`: the pull request's body (called only
    in pr mode). Never raises for a failed hand-off: ok is false and error
    says why."""
    mode = str(settings.get("mode", "none"))
    remote = str(settings.get("remote", "origin"))
    record: dict = {"mode": mode, "ok": True, "branch": branch or None, "remote": remote if mode in ("push", "pr") else None,
                    "url": None, "path": None, "error": None, "at": utc_now()}
    if mode == "none":
        return record
    cmd = Command(root, float(settings.get("timeout", 300)), environ, stop)
    try:
        if mode == "bundle":
            record["path"] = os.path.relpath(bundle(cmd, branch, base_commit(cmd, branch, since), out_dir), root)
        else:
            push(cmd, branch, remote)
            record["pushed"] = True
            if mode == "pr":
                forge = forge_of(cmd, str(settings.get("forge", "auto")), remote)
                base = since if since != branch and remote_has_branch(cmd, remote, since) else ""
                text = str(body() if callable(body) else body)[:MAX_BODY]  # type: ignore[operator]
                open_one = github_pr if forge == "github" else gitlab_mr
                record["action"], record["url"] = open_one(cmd, branch, base, title or branch, text)
                record["forge"] = forge
    except (HandoffError, OSError) as e:
        record["ok"] = False
        record["error"] = str(e)
    return redact(record)  # type: ignore[return-value]
