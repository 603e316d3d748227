"""The Stop gate of a loop run: refuse to stop while the current story is not done.

"Not done" means the story is not marked done in its plan file, or the last
test run of this iteration failed. Blocks once per stop attempt: when the
client retries with stop_hook_active (it already showed our reason), the stop
is allowed, the rollback policy's at-stop rule applies (see
ralph/rules/rollback_policy.py), and the story is recorded as incomplete for
the loop, so a stuck agent cannot spin until the client's block cap.

A story completed with the complete_story tool is marked done and its verify
run is the last test run, so the gate lets it stop; a story handed to a
person with report_blocked (marked blocked, the call recorded) stops at once.
"""
import os

from ralph.claude.protocol import HookCall, Outcome, allow, block
from ralph.plan import story_state
from ralph.plugins import load
from ralph.rules.outcome.baseline import counts_as_failure
from ralph.rules.rollback_policy import last_run
from ralph.run.failures import record_failure
from ralph.run.history import history_path, load_history
from ralph.run.paths import DEFAULT_PLAN_FILES, plan_file
from ralph.run.tool_calls import BLOCKED, last_call
from ralph.state.denials import tools_active

# the rollback at stop (git, the snapshot code), loaded only when a stop is let through unfinished
ROLLBACK_AT_STOP = "ralph.claude.bash_results:rollback_at_stop"


def missing_for(call: HookCall, run: object) -> list[str]:
    """What stands between the story and done, in words the agent can act on."""
    path = plan_file(call.root, run.source)
    shown = os.path.relpath(path, call.root) if path else (run.source or DEFAULT_PLAN_FILES[0])
    state = story_state(path, run.story_id) if path else None
    if state == "blocked" and last_call(call.state_dir, run.run_id, run.iteration, run.story_id, BLOCKED) is not None:
        return []  # handed to a person with report_blocked: the loop moves on
    missing = []
    if state is None:
        missing.append(f"{run.story_id} is not found in {shown}")
    elif state != "done":
        missing.append(f"{run.story_id} is not marked done in {shown}")
    last = last_run(load_history(history_path(call.state_dir, run, call.session_id), run.iteration))
    if last is not None and counts_as_failure(last):  # failures already there at the checkpoint do not hold the stop
        failing = ", ".join(last.get("failing_tests") or [])
        missing.append(f"the last test run failed (`{last.get('command', '')}`{': ' + failing if failing else ''})")
    return missing


def gate(call: HookCall, run: object) -> Outcome:
    """The answer to a stop during the loop run `run` (an ActiveRun)."""
    missing = missing_for(call, run)
    if not missing:
        return allow()
    call.log_extra["story"] = run.story_id
    if call.payload.get("stop_hook_active") is True:
        rolled_back = load(ROLLBACK_AT_STOP)(call, run)
        if rolled_back:
            missing.append(rolled_back)
        record_failure(
            call.state_dir,
            {
                "run_id": run.run_id,
                "iteration": run.iteration,
                "story": run.story_id,
                "kind": "stop_incomplete",
                "summary": "the agent stopped with the story unfinished: " + "; ".join(missing),
                "session": call.session_id,
            },
        )
        return Outcome({}, "allow", "stop_hook_active: story recorded as incomplete")
    title = f" ({run.story_title})" if run.story_title else ""
    reason = (
        f"Story {run.story_id}{title} is not finished: {'; '.join(missing)}. "
        "Finish its acceptance criteria, run the tests until they succeed, then mark the story done "
        # worded without secret-like names (pass, key, ...) next to a colon: the log line's
        # redaction then reads it without loading `re`
        "(`- [x] ...` in plan.md; in prd.json, the story's done field set to true) before you stop. "
        "If something blocks you, say what it is and stop again."
    )
    if tools_active(call.environ):
        reason += (" With the ralph tools: mcp__ralph__complete_story finishes the story (it runs the verify command "
                   "and marks it done), mcp__ralph__report_blocked hands it to a person when only they can unblock it.")
    return block("Stop", reason)
