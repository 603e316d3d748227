"""The spawn action: a real child ralph-loop (tests/fake_agent.py as its agent)
started by the lifecycle engine of a parent project."""
from __future__ import annotations

import json
import os
import sys
import textwrap

from ralph.loop.lifecycle.config import load_hooks, require_valid
from ralph.loop.lifecycle.engine import Engine
from tests.loop_support import AGENT_COMMAND, GIT_ID, Project

PIPELINE_CONFIG = f"""\
[loop]
agent_command = {json.dumps(AGENT_COMMAND)}
max_iterations = 1
no_progress_limit = 0
"""
# The child agent reads its inputs, writes output.json, records its
# environment, and marks its story done (as a review agent would).
REVIEWER = (
    f"{sys.executable} -c \"import json, os; "
    "inputs = json.load(open(os.environ['RALPH_SPAWN_INPUTS'])); "
    "json.dump({'reviewed': inputs['files'], 'parent': inputs['parent'], 'verdict': 'ok'}, open(os.environ['RALPH_SPAWN_OUTPUT_FILE'], 'w')); "
    "json.dump(dict(os.environ), open(os.environ['ENV_DUMP'], 'w'))\""
)


def make_project(tmp_path, hooks: str, agent_steps: list, pipeline_config: str = PIPELINE_CONFIG) -> tuple[Project, Engine]:
    project = Project(tmp_path, "- [ ] US-001: Parent story\n", config=textwrap.dedent(hooks))
    pipeline = os.path.join(project.root, ".ralph", "pipelines", "review")
    os.makedirs(pipeline)
    with open(os.path.join(pipeline, "plan.md"), "w") as f:
        f.write("- [ ] R-1: Review the changed files\n")
    with open(os.path.join(pipeline, "ralph.toml"), "w") as f:
        f.write(pipeline_config)
    project.script(default=agent_steps)
    environ = project.env({"SECRET_TOKEN": "parent-only-s3cret", "ENV_DUMP": str(tmp_path / "child-env.json")})
    environ.pop("RALPH_SPAWN_DEPTH", None)
    environ.pop("RALPH_STATE_DIR", None)
    hooks_set = require_valid(load_hooks(project.root, None, os.path.join(project.root, "ralph.toml"), environ, include_global=False))
    state = os.path.join(project.root, ".ralph")
    engine = Engine(hooks_set, root=project.root, state_dir=state, run_id="parent-run", log_dir=os.path.join(state, "logs", "parent-run"),
                    environ=environ, sleep=lambda s: None)
    return project, engine


SPAWN = """\
    [[hooks.post_iteration]]
    type = "spawn"
    pipeline = "review"
    {extra}
    inputs = {{ files = "${{CHANGED_FILES}}", parent = "{{{{session}}}}", title = "{{{{task_content}}}}" }}
    env = {{ FAKE_AGENT_SCRIPT = "${{FAKE_AGENT_SCRIPT}}", ENV_DUMP = "${{ENV_DUMP}}", REVIEW_LEVEL = "strict", {git} }}

    [[hooks.post_iteration]]
    command = 'printf "%s" "$RALPH_SPAWN_OUTPUT" > {seen}'
    """
GIT_ENV = ", ".join(f'{k} = "{v}"' for k, v in GIT_ID.items())


def test_awaited_child_gets_inputs_and_returns_its_output(tmp_path) -> None:
    seen = tmp_path / "seen.json"
    project, engine = make_project(tmp_path, SPAWN.format(extra="", git=GIT_ENV, seen=seen),
                                   [{"run": REVIEWER}, {"mark": "done"}])
    title = 'Fix "quotes" and $(rm -rf ~)'
    fired = engine.fire("post_iteration", {"iteration": 2, "changed_files": ["src/a.py", "src/b.py"], "session": "parent-run",
                                           "story_id": "US-001", "story_title": title})
    (spec, result), _ = fired.results
    assert result.ok, result.message + result.output
    child = os.path.join(project.root, ".ralph", "children", "post_iteration-2")
    with open(os.path.join(child, "inputs.json")) as f:
        assert json.load(f) == {"files": "src/a.py\nsrc/b.py", "parent": "parent-run", "title": title}
    assert json.loads(seen.read_text()) == {"reviewed": "src/a.py\nsrc/b.py", "parent": "parent-run", "verdict": "ok"}
    # the child kept its own state and marked its own copy of the plan
    with open(os.path.join(child, "run.json")) as f:
        assert json.load(f)["finish"]["type"] == "complete"
    with open(os.path.join(child, "plan.md")) as f:
        assert f.read().startswith("- [x] R-1")
    with open(os.path.join(project.root, ".ralph", "pipelines", "review", "plan.md")) as f:
        assert f.read().startswith("- [ ] R-1")  # the pipeline itself is untouched
    assert "feat(R-1): Review the changed files" in project.log()
    assert not os.path.exists(os.path.join(project.root, ".ralph", "run.json"))  # the parent's state is not the child's


def test_a_child_sees_only_its_inputs_and_the_allowed_environment(tmp_path) -> None:
    seen = tmp_path / "seen.json"
    _, engine = make_project(tmp_path, SPAWN.format(extra="", git=GIT_ENV, seen=seen), [{"run": REVIEWER}, {"mark": "done"}])
    engine.fire("post_iteration", {"iteration": 1, "changed_files": [], "session": "p"})
    env = json.loads((tmp_path / "child-env.json").read_text())
    assert "SECRET_TOKEN" not in env and "parent-only-s3cret" not in json.dumps(env)
    assert env["REVIEW_LEVEL"] == "strict"
    assert env["RALPH_SPAWN_DEPTH"] == "1" and env["RALPH_SPAWN_PIPELINE"] == "review"
    assert env["RALPH_STATE_DIR"].endswith(os.path.join(".ralph", "children", "post_iteration-1"))
    allowed = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
               "FAKE_AGENT_SCRIPT", "ENV_DUMP", "REVIEW_LEVEL", "CLAUDE_PROJECT_DIR", *GIT_ID}
    unexpected = {k for k in env if k not in allowed and not k.startswith(("RALPH_", "LC_", "GIT_CONFIG"))}
    # what ralph-loop itself adds for its agent, and what Python sets
    assert unexpected <= {"PWD", "SHLVL", "_", "OLDPWD"}, unexpected


def test_a_failing_child_fails_the_action_and_on_failure_retry_runs_it_again(tmp_path) -> None:
    _, engine = make_project(tmp_path, SPAWN.format(extra='on_failure = "retry"\n    retries = 1\n    retry_delay = 0', git=GIT_ENV,
                                                    seen=tmp_path / "seen"), [{"print": "cannot review"}, {"exit": 1}])
    fired = engine.fire("post_iteration", {"iteration": 5, "changed_files": [], "session": "p"})
    result = fired.results[0][1]
    assert result.status == "failed" and result.attempts == 2
    assert "child loop finished max_iterations" in result.message and "the child wrote no output.json" in result.message
    children = sorted(os.listdir(os.path.join(engine.state_dir, "children")))
    assert children == [".gitignore", "post_iteration-5", "post_iteration-5.2"]


def test_on_failure_abort_ends_the_parent(tmp_path) -> None:
    _, engine = make_project(tmp_path, SPAWN.format(extra='on_failure = "abort"', git=GIT_ENV, seen=tmp_path / "seen"),
                             [{"exit": 1}])
    fired = engine.fire("post_iteration", {"iteration": 1, "session": "p"})
    assert fired.abort and "failed" in fired.abort and len(fired.results) == 1


def test_the_depth_limit_stops_a_pipeline_that_spawns_itself(tmp_path) -> None:
    _, engine = make_project(tmp_path, SPAWN.format(extra="max_depth = 2", git=GIT_ENV, seen=tmp_path / "seen"), [{"mark": "done"}])
    engine.environ["RALPH_SPAWN_DEPTH"] = "2"
    fired = engine.fire("post_iteration", {"iteration": 1, "session": "p"})
    result = fired.results[0][1]
    assert result.status == "failed" and "already a child at depth 2 and max_depth is 2" in result.message
    assert not os.path.exists(os.path.join(engine.state_dir, "children"))


def test_a_child_that_spawns_its_own_child_is_bounded(tmp_path) -> None:
    # the pipeline's own config spawns the same pipeline at each of its iterations
    recursive = PIPELINE_CONFIG + textwrap.dedent(f"""\
        [[hooks.post_iteration]]
        type = "spawn"
        pipeline = "review"
        max_depth = 2
        env = {{ FAKE_AGENT_SCRIPT = "${{FAKE_AGENT_SCRIPT}}", {GIT_ENV} }}
        on_failure = "abort"
        """)
    _, engine = make_project(tmp_path, SPAWN.format(extra="max_depth = 2", git=GIT_ENV, seen=tmp_path / "seen"),
                             [{"mark": "done"}], pipeline_config=recursive)
    fired = engine.fire("post_iteration", {"iteration": 1, "session": "p"})
    result = fired.results[0][1]
    # depth 1 ran, its own spawn (depth 2) ran, the third level was refused: the grandchild aborted
    assert result.status == "failed" and "hook_abort" in result.message
    first = os.path.join(engine.state_dir, "children", "post_iteration-1")
    second = os.path.join(first, "children", "post_iteration-1")
    with open(os.path.join(second, "events.jsonl")) as f:
        hooks_events = [json.loads(line) for line in f if '"hooks"' in line]
    assert any("already a child at depth 2" in json.dumps(e) or e.get("abort") for e in hooks_events)
    assert not os.path.exists(os.path.join(second, "children", "post_iteration-1", "run.json"))


def test_a_missing_pipeline_says_where_it_looked(tmp_path) -> None:
    _, engine = make_project(tmp_path, """\
        [[hooks.session_start]]
        type = "spawn"
        pipeline = "nope"
        """, [])
    result = engine.fire("session_start", {}).results[0][1]
    assert result.status == "failed" and os.path.join(".ralph", "pipelines", "nope") in result.message


def test_pipeline_names_cannot_leave_the_pipelines_folder(tmp_path) -> None:
    import pytest

    from ralph.config.schema import ConfigError

    with pytest.raises(ConfigError) as info:
        make_project(tmp_path, """\
            [[hooks.session_start]]
            type = "spawn"
            pipeline = "../../etc"
            """, [])
    assert "ralph.toml:3: [hooks] pipeline: '../../etc' must be a folder name" in str(info.value)


def test_detached_child_runs_in_the_background_and_ralph_status_lists_it(tmp_path) -> None:
    from ralph.commands.status import collect, render

    project, engine = make_project(tmp_path, SPAWN.format(extra="await = false", git=GIT_ENV, seen=tmp_path / "seen"),
                                   [{"run": REVIEWER}, {"mark": "done"}])
    fired = engine.fire("post_iteration", {"iteration": 3, "changed_files": ["x"], "session": "p"})
    result = fired.results[0][1]
    assert result.ok and "started in the background" in result.message
    assert fired.results[1][1].ok  # the next action did not wait for the child
    child = os.path.join(engine.state_dir, "children", "post_iteration-3")
    with open(os.path.join(child, "spawn.json")) as f:
        record = json.load(f)
    assert record["await"] is False and isinstance(record["pid"], int)
    for _ in range(2400):  # bounded: the child finishes in a few seconds
        engine.background.reap()
        if not engine.background.jobs:
            break
        import time

        time.sleep(0.05)
    assert not engine.background.jobs
    report = collect(project.root, None, 5)
    (listed,) = report["children"]
    assert listed["dir"] == "post_iteration-3" and listed["state"] == "finished complete" and listed["output"]
    assert "post_iteration-3: review (detached, pid" in render(report)


def test_ralph_status_tells_a_running_child_from_one_that_died_without_a_finish(tmp_path) -> None:
    from ralph.loop.lifecycle.spawn_run import list_children

    state = tmp_path / "state"
    for name, pid in (("post_iteration-1", os.getpid()), ("post_iteration-2", 2 ** 22 + 12345)):
        child = state / "children" / name
        child.mkdir(parents=True)
        (child / "spawn.json").write_text(json.dumps({"pipeline": "review", "await": False, "pid": pid}))
        (child / "run.json").write_text(json.dumps({"status": "running", "pid": pid}))
    states = {c["dir"]: c["state"] for c in list_children(str(state))}
    assert states == {"post_iteration-1": "running", "post_iteration-2": "stopped (no finish recorded)"}
