#!/usr/bin/env python3
"""Check the push/merge guard corpus against what bash really does.

Every case of tests/fixtures/bash/<category>/*.jsonl is run with `bash -c` in
its own sandbox: a scratch git repository whose `origin` is a local bare
repository, with a branch `feature` to merge and `origin/main` one commit
ahead (so `git pull` has something to merge). HOME points at a scratch
directory, nothing reaches the network. After the run the script looks for
evidence that a push or merge was executed:

- git's own trace (GIT_TRACE2_EVENT): a process named push/send-pack/http-push
  (not `--help`), or merge (not --abort/--quit/-h);
- a pre-push or post-merge hook firing (they survive `env -i`);
- a ref of the bare remote changing;
- a new HEAD reflog entry written by merge or a non-rebase pull;
- a fake `ralph` on PATH called with `stream merge`;
- a merge backend run (`git merge-recursive`, `merge-octopus`, ...: trace);
- the forge CLIs and git front ends absent here (gh, glab, hub, jj, git svn,
  git flow) are scripts/guard_sandbox/fake_forge.py on PATH: what would
  merge, sync, push or write refs on the forge moves a ref of the bare
  remote, so it shows as "remote refs changed".

It prints, per case that disagrees with its label, what bash did; cases marked
"sandbox": "conservative" are expected to differ (the guard blocks by design
what bash does not run here) and cases marked "skip" or needing sudo, ssh,
docker, kubectl or programs absent here are not run. fail_closed cases depend
on values the sandbox cannot supply; they are run and reported, not judged.

--write-rule-ids records in each case the rule id of the guard's verdict
(`rule_id`, like dcg's corpus), for cases where the guard agrees with the
label; a case where it does not is printed and left without one (the test
then fails on it). Nothing is run for that.

Destructive cases (destroy_*/) run in a bubblewrap sandbox instead: a world
of a home directory, the project repository, another repository and system
files (tests/guard_world.py), on scratch copies; after the run the script
looks for bytes that nothing can bring back (a file gone or changed whose
content is nowhere on disk and in no commit its repository can reach, git
objects no ref or reflog reaches, modes or owners changed outside the
project): lost outside the project (or the project's .git) = block, lost
only inside it = save (a snapshot would hold it), nothing lost = allow.
Cases marked "sandbox": "conservative" are those where the guard does more
than bash needs (rm refuses `/`, no disk or database server here); "gap: ..."
marks a loss the guard leaves alone by design.

A case may carry "files": {path: text} written into the project first (files
already on disk: a Makefile, a package.json, a script). RALPH_LABEL_PATH is
put before PATH for the push/merge cases, so the task runners the runners/
cases call can be installed apart (tox, nox, invoke, pre-commit, rust-just,
go-task-bin in a scratch venv).

--write-labels sets each case's "expect" to what bash did (the new
categories are labelled that way); --peers reads dcg's tests/corpus and
cc-safety-net's tests from their git directories and prints how this guard
judges them (recall: their denied cases it denies or saves first; false
blocks: their allowed cases it denies).

Usage: scripts/label_guard_corpus.py [--jobs N] [--verbose] [--write-rule-ids | --write-labels] [category ...]
       scripts/label_guard_corpus.py --peers DCG_GIT_DIR SAFETY_NET_GIT_DIR [--verbose]
Exit status 1 when a labelled case disagrees with bash.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "bash")
NEEDS_ABSENT = ("ssh ", "docker ", "kubectl ", "sudo ", "parallel ", "uv run", "su ", "podman ", "php ")
TIMEOUT = 8.0
FAKE_FORGE = os.path.join(ROOT, "scripts", "guard_sandbox", "fake_forge.py")
sys.path.insert(0, ROOT)
from ralph.rules.guard.places import is_artefact  # noqa: E402 - the repository's own code, found from here
from tests.guard_world import GIT_ENV, World, build_home, build_system, write_case_files  # noqa: E402
FORGE_NAMES = ("gh", "glab", "hub", "jj", "git-svn", "git-flow")
MERGE_BACKENDS = ("merge-recursive", "merge-recursive-ours", "merge-recursive-theirs", "merge-resolve", "merge-octopus",
                  "merge-ours", "merge-subtree", "merge-ort", "merge-index", "merge-one-file")

# markers find the sandbox from their own location, so they still work under `env -i`
HOOK = "#!/bin/sh\necho \"$0\" >> \"$(dirname \"$0\")/../../../marks.txt\"\nexit 0\n"
FAKE_RALPH = "#!/bin/sh\necho \"ralph $*\" >> \"$(dirname \"$0\")/../marks.txt\"\n"
RECEIVE_PACK = "#!/bin/sh\necho receive-pack >> \"$(dirname \"$0\")/../marks.txt\"\nexec git-receive-pack \"$@\"\n"


def git(args: list[str], cwd: str, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def base_env(home: str) -> dict[str, str]:
    return {
        "HOME": home,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    }


def make_template(root: str) -> str:
    """origin.git (main at C2), work (main at C1 tracking origin/main, feature at C3)."""
    template = os.path.join(root, "template")
    home = os.path.join(template, "home")
    os.makedirs(home)
    env = base_env(home)
    seed = os.path.join(template, "seed")
    os.makedirs(seed)
    git(["init", "-q", "-b", "main"], seed, env)
    with open(os.path.join(seed, "README.md"), "w") as f:
        f.write("# demo\nSee docs.\n")
    os.makedirs(os.path.join(seed, "docs"))
    with open(os.path.join(seed, "docs", "guide.md"), "w") as f:
        f.write("Publish with git push origin main, then git merge feature.\n")
    git(["add", "-A"], seed, env)
    git(["commit", "-qm", "C0"], seed, env)
    with open(os.path.join(seed, "README.md"), "a") as f:
        f.write("More.\n")
    git(["commit", "-qam", "C1"], seed, env)
    git(["clone", "-q", "--bare", seed, os.path.join(template, "origin.git")], template, env)
    work = os.path.join(template, "work")
    git(["clone", "-q", os.path.join(template, "origin.git"), work], template, env)
    # origin/main moves ahead to C2 (pushed from the seed), work stays at C1
    with open(os.path.join(seed, "CHANGES.md"), "w") as f:
        f.write("C2\n")
    git(["add", "-A"], seed, env)
    git(["commit", "-qm", "C2"], seed, env)
    git(["push", "-q", os.path.join(template, "origin.git"), "main"], seed, env)
    git(["checkout", "-qb", "feature"], work, env)
    with open(os.path.join(work, "feature.txt"), "w") as f:
        f.write("C3\n")
    git(["add", "-A"], work, env)
    git(["commit", "-qm", "C3"], work, env)
    git(["checkout", "-q", "main"], work, env)
    os.makedirs(os.path.join(work, "notes"))
    for hook in ("pre-push", "post-merge"):
        path = os.path.join(work, ".git", "hooks", hook)
        with open(path, "w") as f:
            f.write(HOOK)
        os.chmod(path, 0o755)
    fake_bin = os.path.join(template, "bin")
    os.makedirs(fake_bin)
    for name, text in (("ralph", FAKE_RALPH), ("logging-receive-pack", RECEIVE_PACK)):
        with open(os.path.join(fake_bin, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(fake_bin, name), 0o755)
    shutil.copy(FAKE_FORGE, os.path.join(fake_bin, "fake_forge.py"))
    os.chmod(os.path.join(fake_bin, "fake_forge.py"), 0o755)
    for name in FORGE_NAMES:
        os.symlink("fake_forge.py", os.path.join(fake_bin, name))
    return template


def pull_rebases(argv: list[str]) -> bool:
    """Is this `git ... pull ...` argv in rebase mode (last word wins)?"""
    mode = False
    for i, arg in enumerate(argv):
        if arg in ("--rebase", "-r") or (arg.startswith("--rebase=") and arg[9:] not in ("false", "no", "off", "0")):
            mode = True
        elif arg == "--no-rebase" or arg.startswith("--rebase="):
            mode = False
        elif arg == "-c" and i + 1 < len(argv) and argv[i + 1].lower().startswith("pull.rebase="):
            mode = argv[i + 1].split("=", 1)[1].lower() not in ("false", "no", "off", "0", "")
    return mode


def refs(git_dir: str, env: dict[str, str]) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "for-each-ref"], env=env, capture_output=True, text=True).stdout


def run_case(template: str, command: str, files: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """('block'|'allow', evidence) for what bash did with `command` (after
    writing the case's `files` into the work tree: files already on disk)."""
    box = tempfile.mkdtemp(prefix="guard-case-")
    try:
        shutil.copytree(template, os.path.join(box, "t"), symlinks=True)
        t = os.path.join(box, "t")
        if files:
            write_case_files(os.path.join(t, "work"), files)
        # the clone's origin URL points at the template; repoint it
        env = base_env(os.path.join(t, "home"))
        work = os.path.join(t, "work")
        git(["remote", "set-url", "origin", os.path.join(t, "origin.git")], work, env)
        # every push to origin starts receive-pack, even one that is then rejected
        git(["config", "remote.origin.receivepack", os.path.join(t, "bin", "logging-receive-pack")], work, env)
        marks = os.path.join(t, "marks.txt")
        trace = os.path.join(t, "trace.json")
        env["SANDBOX_MARKS"] = marks
        env["GIT_TRACE2_EVENT"] = trace
        # the task runners the runners/ cases call (tox, nox, just, task, invoke, pre-commit, pytest), when installed apart
        extra = os.environ.get("RALPH_LABEL_PATH", "")
        env["PATH"] = os.path.join(t, "bin") + ":" + (extra + ":" if extra else "") + env["PATH"]
        before_refs = refs(os.path.join(t, "origin.git"), env)
        before_reflog = len(open(os.path.join(work, ".git", "logs", "HEAD")).read().splitlines())
        try:
            proc = subprocess.Popen(["bash", "-c", command], cwd=work, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        # background jobs (`git push &`) outlive bash: wait for the whole group
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
        evidence = []
        rebase_pull = False  # `git pull --rebase` fast-forwards through `git merge` when behind
        if os.path.exists(trace):
            argv_by_sid: dict[str, list[str]] = {}
            rebase_pulls: set[str] = set()
            for line in open(trace, errors="replace"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                sid = event.get("sid", "")
                if event.get("event") == "start":
                    argv_by_sid[sid] = event.get("argv", [])
                elif event.get("event") == "child_start":
                    # a dashed backend (`git merge-octopus` runs git-merge-octopus)
                    child = (event.get("argv") or [""])
                    if child[0].startswith("git-") and child[0][4:] in MERGE_BACKENDS and not {"-h", "--help"} & set(child):
                        evidence.append(f"trace: {child[0]}")
                elif event.get("event") == "cmd_name":
                    name = event.get("name", "")
                    argv = argv_by_sid.get(sid, [])
                    if name == "pull" and pull_rebases(argv):
                        rebase_pulls.add(sid)
                        rebase_pull = True
                    if name in ("push", "send-pack", "http-push") and not {"--help", "-h"} & set(argv):
                        evidence.append(f"trace: git {name}")
                    if name in MERGE_BACKENDS and not {"-h", "--help"} & set(argv):
                        evidence.append(f"trace: git {name}")
                    if name == "merge" and not {"--abort", "--quit", "-h", "--help"} & set(argv):
                        if sid.rsplit("/", 1)[0] not in rebase_pulls:
                            evidence.append("trace: git merge")
        if os.path.exists(marks):
            for line in open(marks):
                line = line.strip()
                if line.endswith("post-merge") and rebase_pull:
                    continue
                if line.endswith(("pre-push", "post-merge", "receive-pack")) or line.startswith("ralph stream merge"):
                    evidence.append(f"marker: {line.rsplit('/', 1)[-1]}")
        if refs(os.path.join(t, "origin.git"), env) != before_refs:
            evidence.append("remote refs changed")
        reflog_path = os.path.join(work, ".git", "logs", "HEAD")
        if os.path.exists(reflog_path):
            for line in open(reflog_path).read().splitlines()[before_reflog:]:
                message = line.split("\t", 1)[-1]
                if message.startswith("merge ") or (message.startswith("pull") and "rebase" not in message and not rebase_pull):
                    evidence.append(f"reflog: {message}")
        return ("block" if evidence else "allow"), sorted(set(evidence))
    finally:
        shutil.rmtree(box, ignore_errors=True)


# ---- destructive commands: what bash destroys, run in a bubblewrap sandbox ----

DESTROY_CATEGORIES = ("destroy_git", "destroy_files", "destroy_outside", "destroy_wrapped")
SANDBOX_HOME = "/home/user"
SANDBOX_PROJECT = SANDBOX_HOME + "/work/proj"
SANDBOX_OTHER = SANDBOX_HOME + "/work/other"
SANDBOX_TMPDIR = "/tmp/t"
SCRATCH_TOPS = ("etc", "var", "opt", "srv", "home", "root")
ETC_NEEDED = ("passwd", "group", "hosts", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")


def make_world_template(root: str) -> str:
    """The world of tests/guard_world.py as the sandbox's scratch directories:
    <template>/home, etc, var, opt, srv, root (bound over /home, /etc, ...)."""
    template = os.path.join(root, "world")
    for top in SCRATCH_TOPS:
        os.makedirs(os.path.join(template, top), exist_ok=True)
    for name in ETC_NEEDED:
        source = os.path.join("/etc", name)
        if os.path.lexists(source):
            if os.path.isdir(source) and not os.path.islink(source):
                shutil.copytree(source, os.path.join(template, "etc", name), symlinks=True)
            else:
                shutil.copy2(source, os.path.join(template, "etc", name), follow_symlinks=False)
    build_system(template)
    build_home(os.path.join(template, SANDBOX_HOME.lstrip("/")))
    return template


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def inventory(box: str) -> dict[str, tuple[str, int, int, int]]:
    """Every file of the scratch directories (as the sandbox names them):
    (content as a git blob id, permission bits, owner, group). Git
    directories are left to reachable(); the project's build artefacts,
    which the build makes again, are left out."""
    found = {}
    for top in SCRATCH_TOPS:
        base = os.path.join(box, top)
        for directory, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d != ".git"]
            inside = "/" + os.path.relpath(directory, box)
            for name in files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
                full = os.path.join(directory, name)
                path = f"{inside}/{name}"
                if path.startswith(SANDBOX_PROJECT + "/") and any(is_artefact(part) for part in path[len(SANDBOX_PROJECT) + 1:].split("/")):
                    continue
                try:
                    st = os.lstat(full)
                    data = os.readlink(full).encode() if os.path.islink(full) else open(full, "rb").read()
                except OSError:
                    continue
                found[path] = (blob_id(data), st.st_mode & 0o7777, st.st_uid, st.st_gid, data if len(data) <= 1 << 20 else b"")
    return found


def contents(box: str) -> set[str]:
    """The blob ids of every file in the sandbox's /tmp (bytes moved there are not lost)."""
    found = set()
    for directory, _, files in os.walk(os.path.join(box, "tmp")):
        for name in files:
            try:
                with open(os.path.join(directory, name), "rb") as f:
                    found.add(blob_id(f.read()))
            except OSError:
                pass
    return found


def lost_blobs(box: str, repo: str, objects: set[str]) -> set[str]:
    """The blobs among these objects (what a commit held)."""
    git_dir = os.path.join(box, repo.lstrip("/"), ".git")
    proc = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch-check"], input="\n".join(objects) + "\n",
                          capture_output=True, text=True)
    return {line.split()[0] for line in proc.stdout.splitlines() if line.endswith(("blob", "blob\n")) or " blob " in line}


def reachable(box: str, repo: str) -> set[str] | None:
    """Objects reachable from a repository's refs and reflogs (what git can
    still bring back); None when the repository is gone."""
    git_dir = os.path.join(box, repo.lstrip("/"), ".git")
    proc = subprocess.run(["git", "--git-dir", git_dir, "rev-list", "--all", "--reflog", "--objects"], capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return {line.split(" ", 1)[0] for line in proc.stdout.splitlines() if line}


def sandbox_argv(box: str, command: str) -> list[str]:
    argv = ["bwrap", "--die-with-parent", "--unshare-net", "--unshare-pid", "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink("/" + link):
            argv += ["--symlink", os.readlink("/" + link), "/" + link]
    for top in SCRATCH_TOPS:
        argv += ["--bind", os.path.join(box, top), "/" + top]
    os.makedirs(os.path.join(box, "tmp", SANDBOX_TMPDIR[5:]), exist_ok=True)
    argv += ["--bind", os.path.join(box, "tmp"), "/tmp", "--dev", "/dev", "--proc", "/proc", "--chdir", SANDBOX_PROJECT, "--clearenv"]
    env = {"HOME": SANDBOX_HOME, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": SANDBOX_TMPDIR, "USER": "user",
           "PWD": SANDBOX_PROJECT, **{k: v for k, v in GIT_ENV.items()}}
    for name, value in env.items():
        argv += ["--setenv", name, value]
    return argv + ["bash", "-c", command]


def run_destroy_case(template: str, case: dict) -> tuple[str, list[str]]:
    """('block'|'save'|'allow', evidence): run the case in the sandbox and see
    what it destroyed that nothing can bring back. Lost outside the project
    (home, system files, the other repository) or the project's .git itself:
    block; lost only inside the project: save (a snapshot would hold it);
    nothing lost: allow."""
    box = tempfile.mkdtemp(prefix="guard-destroy-")
    try:
        shutil.copytree(template, box, symlinks=True, dirs_exist_ok=True)
        if case.get("files"):
            write_case_files(os.path.join(box, SANDBOX_PROJECT.lstrip("/")), case["files"])
        before = inventory(box)
        repos_before = {repo: reachable(box, repo) for repo in (SANDBOX_PROJECT, SANDBOX_OTHER)}
        try:
            subprocess.run(sandbox_argv(box, case["command"]), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        after = inventory(box)
        repos_after = {repo: reachable(box, repo) for repo in (SANDBOX_PROJECT, SANDBOX_OTHER)}
        present = {entry[0] for entry in after.values()} | contents(box)
        evidence = []
        for path, entry in sorted(before.items()):
            now = after.get(path)
            if now is not None and now[:4] == entry[:4]:
                continue
            inside = path.startswith(SANDBOX_PROJECT + "/")
            if now is not None and now[0] == entry[0]:
                if not inside:
                    evidence.append(f"outside: mode or owner of {path} changed")
                continue
            if entry[0] in present:
                continue  # moved or copied: the bytes are still there
            if now is not None and entry[4] and now[4][:len(entry[4])] == entry[4]:
                continue  # appended to: the bytes that were there still are
            repo = SANDBOX_PROJECT if inside else SANDBOX_OTHER if path.startswith(SANDBOX_OTHER + "/") else None
            if repo and repos_after[repo] is not None and entry[0] in repos_after[repo]:
                continue  # git brings it back
            evidence.append(f"{'project' if inside else 'outside'}: {path}")
        for repo, objects in repos_before.items():
            now = repos_after[repo]
            where = "project" if repo == SANDBOX_PROJECT else "outside"
            if now is None:
                evidence.append(f"outside: the repository {repo} is gone")
            else:
                gone = {blob for blob in lost_blobs(box, repo, objects - now) if blob not in present}
                if gone:
                    evidence.append(f"{where}: {len(gone)} file contents only unreachable git objects of {repo} held")
        label = "block" if any(e.startswith("outside") for e in evidence) else "save" if evidence else "allow"
        return label, evidence
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", box], capture_output=True)
        shutil.rmtree(box, ignore_errors=True)


STRICTNESS = {"allow": 0, "save": 1, "block": 2}


def guard_state(verdict: object) -> str:
    return "block" if verdict.blocked else "save" if verdict.saves else "allow"


def agrees(case: dict, state: str) -> bool:
    """Does the guard's state match the case: the same as bash's label, or,
    where the case is marked, stricter ("conservative") or laxer ("gap: ...")
    by design?"""
    mark = case.get("sandbox", "")
    if mark == "conservative" and case["expect"] in STRICTNESS:
        return STRICTNESS[state] > STRICTNESS[case["expect"]]
    if mark.startswith("gap") and case["expect"] in STRICTNESS:
        return STRICTNESS[state] < STRICTNESS[case["expect"]]
    return state == case["expect"]


def load_cases(categories: list[str]) -> list[tuple[str, dict]]:
    cases = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.jsonl"))):
        category = os.path.basename(os.path.dirname(path))
        if categories and category not in categories:
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    cases.append((category, json.loads(line)))
    return cases


def skip_reason(case: dict) -> str | None:
    mark = case.get("sandbox", "")
    if mark.startswith("skip"):
        return mark
    command = case["command"]
    for needle in NEEDS_ABSENT:
        if command.startswith(needle) or f" {needle}" in command or f"({needle}" in command:
            return f"needs {needle.strip()} (not run in the sandbox)"
    return None


WORLD_CATEGORIES = DESTROY_CATEGORIES + ("runners",)


def write_rule_ids(categories: list[str]) -> int:
    from ralph.rules.guard.judge import judge_command

    disagree = 0
    base = tempfile.mkdtemp(prefix="guard-world-")
    world = World(base)
    try:
        for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.jsonl"))):
            category = os.path.basename(os.path.dirname(path))
            if categories and category not in categories:
                continue
            lines = []
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    case = json.loads(line)
                    if category in WORLD_CATEGORIES:
                        verdict = world.judge(case["command"], case.get("files"))
                    else:
                        verdict = judge_command(case["command"])
                    case.pop("rule_id", None)
                    # (in the push/merge categories "conservative" marks a case bash cannot run here; expect is the guard's)
                    if agrees(case, guard_state(verdict)) if category in WORLD_CATEGORIES else guard_state(verdict) == case["expect"]:
                        case["rule_id"] = verdict.rule_id
                    else:
                        disagree += 1
                        print(f"guard disagrees ({category}): label {case['expect']}, guard {guard_state(verdict)} {verdict.rule_id}: "
                              f"{case['command'][:100]!r}")
                    lines.append(json.dumps(case, ensure_ascii=False) + "\n")
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.writelines(lines)
            os.replace(path + ".tmp", path)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if disagree else 0


def run_all(cases: list[tuple[str, dict]], jobs: int) -> list[tuple[str, list[str]]]:
    """What bash did with each case: push/merge cases in the git sandbox,
    destructive ones in the bubblewrap world."""
    root = tempfile.mkdtemp(prefix="guard-sandbox-")
    try:
        template = make_template(root)
        world = make_world_template(root) if any(c in DESTROY_CATEGORIES for c, _ in cases) else ""

        def one(item: tuple[str, dict]) -> tuple[str, list[str]]:
            category, case = item
            if category in DESTROY_CATEGORIES:
                return run_destroy_case(world, case)
            return run_case(template, case["command"], case.get("files"))

        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(one, cases))
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", root], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def write_labels(categories: list[str], jobs: int) -> int:
    """Label the cases of these categories by running them: `expect` becomes
    what bash did. (A case's "sandbox" mark says how the guard differs by
    design: "conservative", it does more; "gap: why", it does less.)"""
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.jsonl"))):
        category = os.path.basename(os.path.dirname(path))
        if category not in categories:
            continue
        with open(path, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        runnable = [case for case in cases if skip_reason(case) is None]
        results = run_all([(category, case) for case in runnable], jobs)
        for case, (bash_did, evidence) in zip(runnable, results):
            if case.get("expect") != bash_did:
                print(f"{category}: {case.get('expect', '-')} -> {bash_did}: {case['command'][:100]!r} {evidence[:3]}")
            case["expect"] = bash_did
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)
        os.replace(path + ".tmp", path)
    return 0


# ---- the peers' own corpora (read from their git directories, never copied here) ----


def git_files(git_dir: str, prefix: str, suffix: str) -> dict[str, str]:
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD", prefix], capture_output=True,
                             text=True, check=True).stdout.split()
    return {name: subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{name}"], capture_output=True, text=True,
                                 check=True).stdout for name in listing if name.endswith(suffix)}


def dcg_cases(git_dir: str) -> list[tuple[str, str, str]]:
    """(file, command, "deny"|"allow") of dcg's tests/corpus."""
    import tomllib

    cases = []
    for name, text in git_files(git_dir, "tests/corpus", ".toml").items():
        for case in tomllib.loads(text).get("case", []):
            expected = case.get("expected", case.get("expected_decision"))
            if "command" in case and expected in ("deny", "allow"):
                cases.append((name.rsplit("/", 2)[-2] + "/" + name.rsplit("/", 1)[-1], case["command"], expected))
    return cases


def js_string(text: str, i: int) -> tuple[str | None, int]:
    """The JavaScript string literal at text[i] ('..', "..", `..` without ${}), and where it ends."""
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] not in "'\"`":
        return None, i
    quote = text[i]
    out = []
    j = i + 1
    while j < len(text) and text[j] != quote:
        c = text[j]
        if c == "\\" and j + 1 < len(text):
            nxt = text[j + 1]
            out.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(nxt, nxt))
            j += 2
            continue
        if quote == "`" and text.startswith("${", j):
            return None, j
        out.append(c)
        j += 1
    return "".join(out), j + 1


def safety_net_cases(git_dir: str) -> list[tuple[str, str, str]]:
    """(file, command, "deny"|"allow") of cc-safety-net's assertBlocked/assertAllowed calls
    whose command is a literal ("+cwd" in the file name when the call names a directory)."""
    cases = []
    for name, text in git_files(git_dir, "tests", ".test.ts").items():
        for call, expected in (("assertBlocked(", "deny"), ("assertAllowed(", "allow")):
            at = text.find(call)
            while at >= 0:
                command, end = js_string(text, at + len(call))
                if command is not None:
                    rest = text[end:end + 400].lstrip()
                    with_cwd = False
                    if expected == "deny" and rest.startswith(","):
                        _, after = js_string(rest, 1)
                        with_cwd = rest[after:].lstrip().startswith(",")
                    elif expected == "allow":
                        with_cwd = rest.startswith(",")
                    cases.append((name.rsplit("/", 1)[-1] + ("+cwd" if with_cwd else ""), command, expected))
                at = text.find(call, at + 1)
    return cases


def peer_report(dcg_dir: str, safety_net_dir: str, verbose: bool = False) -> int:
    """Recall (their denied cases this guard stops: denies or saves first) and
    false blocks (their allowed cases this guard denies) on each peer's own
    corpus, judged in the world of tests/guard_world.py."""
    base = tempfile.mkdtemp(prefix="guard-peers-")
    try:
        world = World(base)
        report = {}
        for peer, cases in (("dcg", dcg_cases(dcg_dir)), ("cc-safety-net", safety_net_cases(safety_net_dir))):
            counts = {"deny": 0, "deny_stopped": 0, "deny_blocked": 0, "deny_saved": 0, "allow": 0, "allow_blocked": 0,
                      "allow_blocked_push_or_merge": 0, "allow_saved": 0}
            missed, false_blocks = [], []
            for source, command, expected in cases:
                verdict = world.judge(command)
                state = guard_state(verdict)
                # their allowed pushes and merges: this guard's own family, blocked by design
                counts["allow_blocked_push_or_merge"] += expected == "allow" and state == "block" and verdict.rule_id.startswith(
                    ("git.", "forge.", "frontend."))
                counts[expected] += 1
                if expected == "deny":
                    counts["deny_stopped"] += state != "allow"
                    counts["deny_blocked"] += state == "block"
                    counts["deny_saved"] += state == "save"
                    if state == "allow":
                        missed.append(f"{source}: {command!r}")
                else:
                    counts["allow_blocked"] += state == "block"
                    counts["allow_saved"] += state == "save"
                    if state == "block":
                        false_blocks.append(f"{source}: {command!r}")
            counts["recall"] = round(counts["deny_stopped"] / max(counts["deny"], 1), 3)
            counts["false_block_rate"] = round(counts["allow_blocked"] / max(counts["allow"], 1), 3)
            counts["false_block_rate_destructive"] = round((counts["allow_blocked"] - counts["allow_blocked_push_or_merge"])
                                                           / max(counts["allow"], 1), 3)
            report[peer] = counts
            print(f"== {peer}: {json.dumps(counts)}")
            for line in (missed + ["-- false blocks:"] + false_blocks) if verbose else []:
                print(f"   {line[:200]}")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("categories", nargs="*")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--write-rule-ids", action="store_true", help="record the guard's rule id in each case (runs nothing)")
    parser.add_argument("--write-labels", action="store_true", help="set each case's expect to what bash did (new categories)")
    parser.add_argument("--peers", nargs=2, metavar=("DCG_GIT_DIR", "SAFETY_NET_GIT_DIR"),
                        help="judge the peers' own corpora (read from these git directories) and print recall and false blocks")
    args = parser.parse_args(argv)
    if args.peers:
        return peer_report(*args.peers, verbose=args.verbose)
    if args.write_rule_ids:
        return write_rule_ids(args.categories)
    if args.write_labels:
        return write_labels(args.categories, args.jobs)
    cases = load_cases(args.categories)
    runnable = [(c, case) for c, case in cases if skip_reason(case) is None]
    results = run_all(runnable, args.jobs)
    counts = {"agree": 0, "mismatch": 0, "conservative_as_expected": 0, "conservative_but_bash_agrees": 0,
              "fail_closed_bash_pushed": 0, "fail_closed_bash_did_not": 0, "skipped": len(cases) - len(runnable)}
    mismatches = 0
    for (category, case), (bash_did, evidence) in zip(runnable, results):
        command = case["command"].replace("\n", "\\n")
        if category == "fail_closed":
            counts["fail_closed_bash_pushed" if bash_did == "block" else "fail_closed_bash_did_not"] += 1
            if args.verbose:
                print(f"fail_closed  bash={bash_did:5}  {command[:100]}  {evidence}")
            continue
        conservative = case.get("sandbox") == "conservative"
        if bash_did == case["expect"]:
            if conservative:
                counts["conservative_but_bash_agrees"] += 1
                print(f"NOTE {category}: marked conservative but bash did {bash_did}: {command[:100]} {evidence}")
            else:
                counts["agree"] += 1
            if args.verbose:
                print(f"ok  {category:10} {bash_did:5} {command[:100]} {evidence}")
        elif conservative:
            counts["conservative_as_expected"] += 1
            if args.verbose:
                print(f"conservative {category}: label {case['expect']}, bash {bash_did}: {command[:100]}")
        else:
            counts["mismatch"] += 1
            mismatches += 1
            print(f"MISMATCH {category}: label {case['expect']}, bash {bash_did}: {command[:120]} {evidence}")
    print(json.dumps({"cases": len(cases), "run": len(runnable), **counts}))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
