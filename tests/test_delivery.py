"""The run branch, the dirty-tree refusal and the hand-off, through the real
ralph-loop driving tests/fake_agent.py in temp git repositories. The remote
is a local bare repository; `gh` and `glab` are fakes on PATH that record
their arguments (and what came on stdin); nothing reaches a network."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from tests.conftest import RALPH
from tests.loop_support import Project, git

PLAN = "# Todo app\n\n- [ ] US-001: Add a task\n- [ ] US-002: List tasks\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]
NO_SANDBOX = "[sandbox]\nenabled = false\n"


def rev(root: str, name: str) -> str:
    return git(root, "rev-parse", name).strip()


def branches(root: str) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()


def with_remote(p: Project, tmp_path) -> str:
    """A bare repository as `origin`, with main pushed (its HEAD names main)."""
    bare = str(tmp_path / "remote.git")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", bare], check=True)
    git(p.root, "remote", "add", "origin", bare)
    git(p.root, "push", "-q", "origin", "main")
    return bare


def handoff(p: Project) -> dict:
    found = p.events("handoff")
    assert len(found) == 1, found
    return found[0]


# ---- the run branch ----


def test_a_run_commits_on_its_own_branch_and_the_persons_branch_stays(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX)
    start = rev(p.root, "main")
    p.script(default=DO_STORY)
    first = p.run_loop("--once")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "branch: working on a new branch ralph/todo-app, from main (which stays where it is)" in first.stdout
    assert git(p.root, "symbolic-ref", "--short", "HEAD").strip() == "ralph/todo-app"
    assert rev(p.root, "main") == start and git(p.root, "log", "--format=%s", "-1", "ralph/todo-app").strip() == "feat(US-001): Add a task"
    event = p.events("run_start")[0]
    assert (event["branch"], event["branch_action"], event["previous_branch"], event["base"]) == ("ralph/todo-app", "created", "main", start)
    assert p.run_state()["branch"] == "ralph/todo-app"
    status = subprocess.run([RALPH, "status"], cwd=p.root, capture_output=True, text=True)
    assert "branch: ralph/todo-app" in status.stdout
    # the last line says where the checkout is left, and how to go back
    back = "ralph-loop: checkout: on ralph/todo-app (the run branch); to go back to where you were: git switch main"
    assert first.stdout.splitlines()[-1] == back, first.stdout
    # the person goes back with the command as printed, then starts the loop again: it goes on where it was, on its branch
    subprocess.run(shlex.split(back.split(": ")[-1]), cwd=p.root, check=True, capture_output=True)
    assert git(p.root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    second = p.run_loop()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "branch: working on the run branch ralph/todo-app (resumed)" in second.stdout
    assert second.stdout.splitlines()[-1] == back, second.stdout
    assert p.events("run_start")[1]["branch_action"] == "resumed"
    assert rev(p.root, "main") == start
    assert git(p.root, "log", "--format=%s", "main..ralph/todo-app").split("\n")[:2] == ["feat(US-002): List tasks", "feat(US-001): Add a task"]
    assert branches(p.root) == ["main", "ralph/todo-app"]


def test_prd_json_branch_name_is_the_run_branch(tmp_path) -> None:
    prd = {"project": "Todo", "branchName": "ralph/login-page", "userStories": [
        {"id": "US-001", "title": "Login form", "priority": 1, "passes": False}]}
    p = Project(tmp_path, json.dumps(prd, indent=2) + "\n", plan_name="prd.json", config=NO_SANDBOX)
    p.script(default=DO_STORY)
    done = p.run_loop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(p.root, "symbolic-ref", "--short", "HEAD").strip() == "ralph/login-page"
    assert branches(p.root) == ["main", "ralph/login-page"]


def test_branch_current_commits_where_the_person_is(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[loop]\nbranch = "current"\n')
    p.script(default=DO_STORY)
    done = p.run_loop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert branches(p.root) == ["main"] and git(p.root, "log", "--format=%s", "-1", "main").strip() == "feat(US-002): List tasks"
    assert p.events("run_start")[0]["branch_action"] == "current"
    assert done.stdout.splitlines()[-1] == "ralph-loop: checkout: on main (as when the run started)", done.stdout


def test_a_run_from_a_detached_head_says_how_to_go_back_to_it(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX)
    start = rev(p.root, "main")
    git(p.root, "checkout", "-q", "--detach")
    p.script(default=DO_STORY)
    done = p.run_loop("--once")
    assert done.returncode == 3, done.stdout + done.stderr
    back = f"git switch --detach {start[:12]}"
    assert done.stdout.splitlines()[-1] == f"ralph-loop: checkout: on ralph/todo-app (the run branch); to go back to where you were: {back}"
    subprocess.run(shlex.split(back), cwd=p.root, check=True, capture_output=True)
    assert rev(p.root, "HEAD") == start


def test_a_named_branch_that_git_refuses_stops_the_run(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[loop]\nbranch = "bad..name"\n')
    p.script(default=DO_STORY)
    done = p.run_loop()
    assert done.returncode == 1 and "'bad..name' is not a valid branch name" in done.stdout
    assert p.invocations() == 0 and branches(p.root) == ["main"]


# ---- the dirty tree ----


def test_a_dirty_tree_is_refused_with_its_files(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX)
    start = rev(p.root, "HEAD")
    p.write("README.md", "hello, edited by the person\n")
    p.write("notes/todo.txt", "mine\n")
    p.write(".ralph/scratch.txt", "the loop's own directory does not count\n")
    p.script(default=DO_STORY)
    refused = p.run_loop()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "the working tree has 2 uncommitted change(s) outside .ralph/" in refused.stdout
    assert "  README.md\n" in refused.stdout and "  notes/todo.txt\n" in refused.stdout
    assert "scratch" not in refused.stdout and "--allow-dirty" in refused.stdout
    assert p.invocations() == 0 and branches(p.root) == ["main"] and rev(p.root, "HEAD") == start
    assert not os.path.exists(os.path.join(p.root, ".ralph", "runs"))  # a run refused at the door leaves no report
    allowed = p.run_loop("--allow-dirty")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert p.invocations() == 2


def test_what_an_unfinished_story_left_is_the_agents_not_the_persons(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX)
    p.script(runs=[[{"write": "half.txt", "text": "half done\n"}]], default=DO_STORY)
    first = p.run_loop("--once")  # the agent stops without finishing: its work stays in the tree
    assert first.returncode == 3 and p.events("iteration")[0]["result"] == "incomplete", first.stdout
    assert git(p.root, "status", "--porcelain", "--", ".", ":!.ralph").strip() == "?? half.txt"
    p.write("README.md", "the person's edit\n")
    refused = p.run_loop("--once")
    assert refused.returncode == 1 and "the last run left 1 changed file(s)" in refused.stdout, refused.stdout
    assert "  README.md\n" in refused.stdout and p.invocations() == 1
    git(p.root, "checkout", "README.md")  # the person takes their edit back: the tree is as the run left it
    resumed = p.run_loop()
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "half.txt" in git(p.root, "show", "--name-only", "--format=", "HEAD~1")


# ---- the hand-off ----


def test_push_hands_over_the_run_branch_and_nothing_else(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "push"\n')
    bare = with_remote(p, tmp_path)
    remote_main = rev(bare, "main")
    p.script(default=DO_STORY + [{"run": "git push origin HEAD"}], hooks=["bash"])
    done = p.run_loop()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hand-off: pushed ralph/todo-app to origin" in done.stdout
    assert rev(bare, "ralph/todo-app") == rev(p.root, "ralph/todo-app") and rev(bare, "main") == remote_main
    assert branches(bare) == ["main", "ralph/todo-app"]
    record = handoff(p)
    assert (record["mode"], record["ok"], record["branch"], record["remote"], record["error"]) == ("push", True, "ralph/todo-app", "origin", None)
    assert p.run_state()["handoff"]["ok"] is True
    # the agent's own `git push` was denied by the guard; the loop's push is not a tool call and went through
    denials = [json.loads(line) for line in open(os.path.join(p.root, ".ralph", "protected", "denials.jsonl"))]
    assert [d["command"] for d in denials] == ["git push origin HEAD", "git push origin HEAD"]
    assert all(d["iteration"] in (1, 2) for d in denials)
    # someone pushed to the run branch meanwhile: the next push is refused, never forced, and nothing is lost
    other = str(tmp_path / "other")
    subprocess.run(["git", "clone", "-q", "-b", "ralph/todo-app", bare, other], check=True)
    with open(os.path.join(other, "theirs.txt"), "w") as f:
        f.write("theirs\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", "ralph/todo-app")
    theirs = rev(bare, "ralph/todo-app")
    with open(p.plan_path, "a") as f:
        f.write("- [ ] US-003: Delete a task\n")
    again = p.run_loop()
    assert again.returncode == 0 and "hand-off failed" in again.stdout, again.stdout
    assert rev(bare, "ralph/todo-app") == theirs  # not overwritten
    assert git(p.root, "log", "--format=%s", "-1", "ralph/todo-app").strip() == "feat(US-003): Delete a task"
    assert p.events("handoff")[-1]["ok"] is False and "rejected" in p.events("handoff")[-1]["error"]


def test_the_default_branch_is_never_pushed(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[loop]\nbranch = "current"\n\n[handoff]\nmode = "push"\n')
    bare = with_remote(p, tmp_path)
    remote_main = rev(bare, "main")
    p.script(default=DO_STORY)
    done = p.run_loop()
    assert done.returncode == 0, done.stdout + done.stderr  # the stories are done; the hand-off failing does not change that
    assert "hand-off failed: the run branch main is origin's default branch" in done.stdout
    assert rev(bare, "main") == remote_main
    assert git(p.root, "log", "--format=%s", "-1", "main").strip() == "feat(US-002): List tasks"  # the work is there
    report = os.path.join(p.root, ".ralph", "runs", p.events("run_start")[0]["run_id"], "report.html")
    with open(report, encoding="utf-8") as f:
        assert "default branch; the hand-off never pushes to it" in f.read()
    assert f"report: {os.path.relpath(report, p.root)}" in done.stdout


FAKE_FORGE = r'''#!{python}
"""A fake {name}: records its argv and stdin; answers `list` with the open requests it made."""
import json, os, sys
log, state = {log!r}, {state!r}
body = sys.stdin.read() if "-" in sys.argv else ""
with open(log, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "stdin": body}}) + "\n")
opened = json.load(open(state)) if os.path.exists(state) else []
if sys.argv[2] == "list":
    print(json.dumps(opened))
elif sys.argv[2] == "create":
    item = {{"number": 7, "iid": 7, "url": "https://forge.example/o/r/pull/7", "web_url": "https://forge.example/o/r/-/merge_requests/7"}}
    json.dump([item], open(state, "w"))
    print("Creating draft..." if "{name}" == "gh" else "Creating merge request...")
    print(item["url"] if "{name}" == "gh" else item["web_url"])
'''


def fake_forge(tmp_path, name: str) -> tuple[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = str(tmp_path / f"{name}.jsonl")
    path = bin_dir / name
    path.write_text(FAKE_FORGE.format(python=sys.executable, name=name, log=log, state=str(tmp_path / f"{name}-open.json")))
    path.chmod(0o755)
    return str(bin_dir), log


def calls(log: str) -> list[dict]:
    with open(log, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_pr_opens_a_draft_pull_request_then_updates_its_body(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "pr"\n')
    bare = with_remote(p, tmp_path)
    bin_dir, log = fake_forge(tmp_path, "gh")
    env = {"PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    p.script(default=DO_STORY)
    done = p.run_loop(env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "draft pull request opened: https://forge.example/o/r/pull/7" in done.stdout
    first = calls(log)
    assert [c["argv"][:2] for c in first] == [["pr", "list"], ["pr", "create"]]
    assert first[0]["argv"] == ["pr", "list", "--head", "ralph/todo-app", "--state", "open", "--json", "number,url", "--limit", "1"]
    assert first[1]["argv"] == ["pr", "create", "--draft", "--head", "ralph/todo-app", "--title", "Todo app",
                                "--body-file", "-", "--base", "main"]
    body = first[1]["stdin"]
    run_id = p.events("run_start")[0]["run_id"]
    assert body.startswith(f"## ralph-loop run {run_id}: complete") and "US-001" in body and "US-002" in body
    assert "Hand-off" not in body and "](" not in body and "http" not in body  # link-free
    assert rev(bare, "ralph/todo-app") == rev(p.root, "ralph/todo-app")
    assert handoff(p)["url"] == "https://forge.example/o/r/pull/7"
    # the next night: the same pull request gets the new report
    with open(p.plan_path, "a") as f:
        f.write("- [ ] US-003: Delete a task\n")
    again = p.run_loop(env=env)
    assert again.returncode == 0 and "draft pull request updated" in again.stdout, again.stdout
    second = calls(log)[len(first):]
    assert [c["argv"] for c in second] == [first[0]["argv"], ["pr", "edit", "7", "--body-file", "-"]]
    assert "US-003" in second[1]["stdin"]
    every = [word for c in calls(log) for word in c["argv"]]
    assert "merge" not in every and "--auto" not in every and "ready" not in every  # never merged, never auto-merged


def test_pr_on_gitlab_opens_a_draft_merge_request(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "pr"\nforge = "gitlab"\n')
    with_remote(p, tmp_path)
    bin_dir, log = fake_forge(tmp_path, "glab")
    p.script(default=DO_STORY)
    done = p.run_loop(env={"PATH": bin_dir + os.pathsep + os.environ["PATH"]})
    assert done.returncode == 0, done.stdout + done.stderr
    made = calls(log)
    assert made[0]["argv"] == ["mr", "list", "--source-branch", "ralph/todo-app", "--output", "json"]
    create = made[1]["argv"]
    assert create[:5] == ["mr", "create", "--draft", "--source-branch", "ralph/todo-app"]
    assert create[create.index("--title") + 1] == "Todo app" and create[-2:] == ["--target-branch", "main"]
    assert "US-002" in create[create.index("--description") + 1]
    assert handoff(p)["url"] == "https://forge.example/o/r/-/merge_requests/7"


def test_a_failed_pull_request_loses_nothing(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "pr"\n')
    bare = with_remote(p, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "sh", "env"):  # a PATH with git but neither gh nor glab
        for base in ("/usr/bin", "/bin"):
            if os.path.exists(f"{base}/{tool}"):
                os.symlink(f"{base}/{tool}", bin_dir / tool)
                break
    p.script(default=DO_STORY)
    done = p.run_loop(env={"PATH": str(bin_dir)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hand-off failed: pr: neither gh (GitHub) nor glab (GitLab) is on PATH" in done.stdout
    record = handoff(p)
    assert record["ok"] is False and record["pushed"] is True
    assert rev(bare, "ralph/todo-app") == rev(p.root, "ralph/todo-app")


def test_a_forge_that_hangs_is_stopped(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "pr"\nforge = "github"\ntimeout = 1\n')
    with_remote(p, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text("#!/bin/sh\nexec sleep 600\n")  # an auth prompt nobody answers
    (bin_dir / "gh").chmod(0o755)
    p.script(default=DO_STORY)
    done = p.run_loop(env={"PATH": str(bin_dir) + os.pathsep + os.environ["PATH"]})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "`gh pr list` did not finish within 1s" in done.stdout


def test_bundle_writes_the_branch_and_its_patches(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "bundle"\n')
    p.script(default=DO_STORY)
    done = p.run_loop()
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = os.path.join(p.root, ".ralph", "runs", p.events("run_start")[0]["run_id"])
    bundle = os.path.join(run_dir, "handoff.bundle")
    assert handoff(p)["path"] == os.path.relpath(bundle, p.root) and f"bundle written: {handoff(p)['path']}" in done.stdout
    heads = git(p.root, "bundle", "list-heads", bundle)
    assert heads.split() == [rev(p.root, "ralph/todo-app"), "refs/heads/ralph/todo-app"]
    git(p.root, "bundle", "verify", "-q", bundle)
    patches = sorted(os.listdir(os.path.join(run_dir, "patches")))
    assert [name[5:] for name in patches] == ["feat-US-001-Add-a-task.patch", "feat-US-002-List-tasks.patch"]
    # a person with the repository takes the work from the bundle
    clone = str(tmp_path / "elsewhere")
    subprocess.run(["git", "clone", "-q", "-b", "main", p.root, clone], check=True)
    git(clone, "fetch", "-q", bundle, "ralph/todo-app:ralph/todo-app")
    assert rev(clone, "ralph/todo-app") == rev(p.root, "ralph/todo-app")


def test_no_commit_no_hand_off_unless_the_agent_asks(tmp_path) -> None:
    p = Project(tmp_path, PLAN, config=NO_SANDBOX + '\n[handoff]\nmode = "push"\n')
    bare = with_remote(p, tmp_path)
    p.script(default=[{"append": "work.txt", "text": "thinking\n"}])  # never finishes a story
    idle = p.run_loop("--once")
    assert idle.returncode == 3 and p.events("handoff") == [] and branches(bare) == ["main"]
    # committed earlier, nothing new tonight, but the agent asks for the merge (request_merge's record)
    request = ('printf \'{"run_id": "%s", "iteration": %s, "story": "US-001", "summary": "ready for review", "at": "now"}\\n\' '
               '"$RALPH_RUN_ID" "$RALPH_ITERATION" >> .ralph/merge_requests.jsonl')
    p.script(default=[{"run": request}])
    asked = p.run_loop("--once")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert handoff(p)["ok"] is True and "ralph/todo-app" in branches(bare)


def test_the_branch_name_comes_from_the_plan(tmp_path) -> None:
    from ralph.loop.branch import plan_branch, slug

    assert slug("Plan: Todo   App!! (v2.0)") == "plan-todo-app-v2.0" and slug("--- ") == ""
    cases = {
        "plan.md": ("# Login page\n\n- [ ] US-001: Form\n", "ralph/login-page"),
        "prd.json": (json.dumps({"project": "Shop Checkout", "userStories": []}), "ralph/shop-checkout"),
        "named/prd.json": (json.dumps({"branchName": "feature/x", "project": "Shop", "userStories": []}), "feature/x"),
        "PRD-3/plan.md": ("- [ ] US-001: Form\n", "ralph/prd-3"),
        "notes/tonight.md": ("- [ ] US-001: Form\n", "ralph/tonight"),
        "broken/prd.json": ("{not json", "ralph/prd"),
    }
    for rel, (text, expected) in cases.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        assert plan_branch(str(path)) == expected, rel
    assert plan_branch(str(tmp_path / "missing" / "plan.md")) == "ralph/plan"  # a plan stage writes it later
