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

Usage: scripts/label_guard_corpus.py [--jobs N] [--verbose] [--write-rule-ids] [category ...]
Exit status 1 when a labelled case disagrees with bash.
"""
from __future__ import annotations

import argparse
import glob
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


def run_case(template: str, command: str) -> tuple[str, list[str]]:
    """('block'|'allow', evidence) for what bash did with `command`."""
    box = tempfile.mkdtemp(prefix="guard-case-")
    try:
        shutil.copytree(template, os.path.join(box, "t"), symlinks=True)
        t = os.path.join(box, "t")
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
        env["PATH"] = os.path.join(t, "bin") + ":" + env["PATH"]
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


def write_rule_ids(categories: list[str]) -> int:
    sys.path.insert(0, ROOT)
    from ralph.rules.guard.judge import judge_command

    disagree = 0
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
                verdict = judge_command(case["command"])
                case.pop("rule_id", None)
                if verdict.blocked == (case["expect"] == "block"):
                    case["rule_id"] = verdict.rule_id
                else:
                    disagree += 1
                    print(f"guard disagrees ({category}): label {case['expect']}, guard {verdict.rule_id}: {case['command'][:100]!r}")
                lines.append(json.dumps(case, ensure_ascii=False) + "\n")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.writelines(lines)
        os.replace(path + ".tmp", path)
    return 1 if disagree else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("categories", nargs="*")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--write-rule-ids", action="store_true", help="record the guard's rule id in each case (runs nothing)")
    args = parser.parse_args(argv)
    if args.write_rule_ids:
        return write_rule_ids(args.categories)
    cases = load_cases(args.categories)
    root = tempfile.mkdtemp(prefix="guard-sandbox-")
    try:
        template = make_template(root)
        runnable = [(c, case) for c, case in cases if skip_reason(case) is None]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda item: run_case(template, item[1]["command"]), runnable))
    finally:
        shutil.rmtree(root, ignore_errors=True)
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
