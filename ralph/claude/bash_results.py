"""Bash results judged as test runs: feedback on failures, rollback in a loop run.

Called by the PostToolUse (exit 0) and PostToolUseFailure (non-zero exit)
handlers for every Bash result. A run that is not a test run costs one pure
judgement and nothing else. Each judged run is appended to the history:
`.ralph/runs/<run_id>/tests.jsonl` during a loop run, else
`.ralph/sessions/<session>/tests.jsonl` (one JSON line, O_APPEND).

A failing run always gets feedback (runner, failing tests, evidence). In a
loop run (`.ralph/run.json` active, build stage) the `[rollback]` policy
(ralph.rules.rollback_policy) decides whether to roll back: everything is saved
to `refs/ralph/rollbacks/<id>`, the tree goes back to the iteration's
checkpoint, earlier reads stop counting, the failure is recorded for the next
prompt, and the agent is told by a `decision: block`. Git is imported and run
only then; nothing here raises.
"""
import os
import re
import stat

from ralph import fastjson
from ralph.claude.protocol import HOOK_ENTRIES, HookCall, Outcome, block, context, still_running
from ralph.config.reading import section_or_defaults
from ralph.plan import story_state
from ralph.redaction import redact
from ralph.rollback.detached import roll_back_within, wait_seconds
from ralph.rollback.kept import KeptFiles
from ralph.rollback.restore import RollbackResult
from ralph.rules.outcome import baseline
from ralph.rules.outcome.verdict import judge_test_run
from ralph.rules.rollback_policy import (
    RollbackPolicy,
    decide,
    last_run,
    run_record,
    should_rollback_at_stop,
)
from ralph.run.clock import utc_now
from ralph.run.failures import record_failure
from ralph.run.history import history_path, load_history
from ralph.run.paths import plan_file, progress_path_for
from ralph.run.state import load_active_run
from ralph.run.tree import tree_at_checkpoint
from ralph.state.files import append_line
from ralph.state.reads import invalidate_all

MAX_FAILING_SHOWN = 10
MAX_EVIDENCE_LINES = 12
MAX_EVIDENCE_CHARS = 240
MAX_EXCERPT = 3000
ROLLBACK_STAGES = ("build",)  # a planning iteration edits the plan, not code: never rolled back


def load_policy(call: HookCall) -> object:
    """The `[rollback]` policy; a broken config is noted and the defaults apply."""
    values, problem = section_or_defaults(call.root, "rollback", call.environ)
    if problem:
        call.problems.append(problem)
    return RollbackPolicy.from_values(values)


def _bounded_lines(lines: list[str], limit: int = MAX_EVIDENCE_LINES) -> list[str]:
    shown = [line if len(line) <= MAX_EVIDENCE_CHARS else line[: MAX_EVIDENCE_CHARS - 1] + "…" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {len(lines) - limit} more")
    return shown


def failure_summary(verdict: object, exit_code: int | None) -> str:
    """What failed, in the words the agent needs: runner, failing tests, evidence."""
    runner = verdict.runner or "test"
    code = f" (exit {exit_code})" if exit_code not in (None, 0) else ""
    lines = [f"The {runner} run failed{code}."]
    failing = list(verdict.failing_tests or [])
    if failing:
        shown = ", ".join(failing[:MAX_FAILING_SHOWN])
        more = f" and {len(failing) - MAX_FAILING_SHOWN} more" if len(failing) > MAX_FAILING_SHOWN else ""
        lines.append(f"Failing tests ({len(failing)}): {shown}{more}")
    evidence = [e for e in (verdict.evidence or []) if isinstance(e, str) and e.strip()]
    if evidence:
        lines.append("Evidence:")
        lines.extend("  " + e for e in _bounded_lines(evidence))
    return "\n".join(lines)


def _excerpt(output: str) -> str:
    return redact(output, MAX_EXCERPT, tail=True)  # redact first, then cut


def perform_rollback(call: HookCall, run: object, history_file: str, record: dict, trigger: str, excerpt: str) -> object:
    """Save + reset to the checkpoint, then tell everyone: reads, failures,
    history. In a detached process the hook waits for up to half its timeout
    (ralph.rollback.detached): past that the rollback and its records go on
    in the background and the result says so (pending). -> RollbackResult."""
    try:
        plan = plan_file(call.root, run.source)
        kept = KeptFiles(plan, progress_path_for(plan) if plan else None, run.story_id)  # the loop's and the person's records stay
        # No alarm can cut this reset short: ralph.claude.dispatch arms its deadline on PreToolUse only.
        result, problems = roll_back_within(
            call.root, run.checkpoint, story=run.story_id, iteration=run.iteration, trigger=trigger, run_id=run.run_id,
            wait=wait_seconds(HOOK_ENTRIES[call.event][2] if call.event in HOOK_ENTRIES else 30, call.environ),
            record=lambda result: record_rollback(call, run, history_file, record, trigger, excerpt, result), kept=kept)
    except Exception as e:  # noqa: BLE001 - a rollback problem must reach the agent, not crash the hook
        result = RollbackResult(checkpoint=run.checkpoint, message=f"rollback crashed before resetting anything: {type(e).__name__}: {str(e)[:300]}")
        problems = record_rollback(call, run, history_file, record, trigger, excerpt, result)
    call.problems.extend(problems)
    call.log_extra["rollback"] = {"restored": result.restored, "pending": result.pending, "ref": result.ref, "message": result.message[:300],
                                  "kept": result.kept, "conflicts": result.conflicts}
    return result


def record_rollback(call: HookCall, run: object, history_file: str, record: dict, trigger: str, excerpt: str,
                    result: RollbackResult) -> list[str]:
    """What a rollback's outcome changes: reads stop counting, a marker in the
    history, a failure for the next prompt. Returns the problems met."""
    problems = []
    if result.restored:
        try:
            invalidate_all(call.state_dir)
        except OSError as e:
            problems.append(f"could not invalidate reads after the rollback: {e}")
    marker = {
        "kind": "rollback", "at": utc_now(), "run_id": run.run_id, "iteration": run.iteration, "story": run.story_id,
        "restored": result.restored, "ref": result.ref, "checkpoint": result.checkpoint, "trigger": trigger,
    }
    if result.kept or result.conflicts:
        marker.update(kept=result.kept, conflicts=result.conflicts)
    try:
        append_line(history_file, fastjson.dumps(redact(marker)))
    except OSError as e:
        problems.append(f"could not record the rollback marker: {e}")
    try:
        record_failure(call.state_dir, {
            "run_id": run.run_id, "iteration": run.iteration, "story": run.story_id,
            "kind": "rollback" if result.restored else "rollback_failed",
            "summary": (f"rolled back to {result.checkpoint[:12]} after {trigger}; work saved to {result.ref}{kept_sentence(result)}" if result.restored
                        else f"rollback after {trigger} did not happen: {result.message}"),
            "excerpt": excerpt,
            "command": record.get("command", ""), "runner": record.get("runner", ""),
            "failing_tests": record.get("failing_tests", []),
            "ref": result.ref, "snapshot_id": result.id, "checkpoint": result.checkpoint, "session": call.session_id,
        })
    except OSError as e:
        problems.append(f"could not record the failure: {e}")
    return problems


# Outputs the client cut. PostToolUse: over ~30,000 characters, tool_response.stdout
# holds the start and `persistedOutputPath` the whole output on disk. We read it
# bounded, head and (mostly) tail: a runner's summary is at the end.
# PostToolUseFailure: `error` carries only about the first 10 KB and no path.
PERSISTED_HEAD = 64 * 1024
PERSISTED_TAIL = 2 * 1024 * 1024
FAILURE_CUT_CHARS = 9_900  # an `error` this long was cut by the client (2.1.330 keeps ~10,000 characters of output)
# Where the client cut an output it hands hooks without persistedOutputPath
# (before 2.1.45, ralph.claude.protocol): "\n\n... [38445 lines truncated] ..."
CLIENT_CUT = re.compile(r"\n\.\.\. \[(\d+) (lines|characters) truncated\] \.\.\.")


def read_persisted(path: str) -> str:
    """The persisted output, bounded: all of it up to HEAD+TAIL bytes, else head + tail. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            if st.st_size <= PERSISTED_HEAD + PERSISTED_TAIL:
                data = f.read(PERSISTED_HEAD + PERSISTED_TAIL)
            else:
                head = f.read(PERSISTED_HEAD)
                f.seek(st.st_size - PERSISTED_TAIL)
                data = head + f"\n[... {st.st_size - PERSISTED_HEAD - PERSISTED_TAIL} bytes not read by ralph-hooks ...]\n".encode() + f.read(PERSISTED_TAIL)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def complete_output(call: HookCall, output: str) -> tuple[str, str]:
    """(the output to judge, a note when it is not the whole output)."""
    response = call.payload.get("tool_response")
    persisted = response.get("persistedOutputPath") if isinstance(response, dict) else None
    if isinstance(persisted, str) and persisted:
        try:
            text = read_persisted(persisted)
        except OSError as e:
            call.problems.append(f"could not read persistedOutputPath {persisted}: {e.strerror or e}")
            return output, (f"Claude Code cut this output to its first {len(output)} characters and its full copy "
                            f"({persisted}) could not be read; the verdict comes from the part that was visible.")
        call.log_extra["persisted_output"] = len(text)
        return text, ""
    if call.event == "PostToolUseFailure" and len(output) >= FAILURE_CUT_CHARS:
        return output, (f"Claude Code passed the hook only the first ~{len(output) // 1000} KB of this failing command's output "
                        "(the rest, with the runner's summary, was cut); the verdict comes from that part. "
                        "To see the summary, rerun with the output narrowed (e.g. `2>&1 | tail -60`) or the failing tests only.")
    cut = CLIENT_CUT.search(output)
    if cut:
        return output, (f"Claude Code cut this output ({int(cut.group(1)):,} {cut.group(2)} left out) and gave the hook no path to the "
                        "rest, so this verdict is incomplete: it comes from the part that was passed. To see the runner's summary, "
                        "rerun with the output narrowed (e.g. `2>&1 | tail -60`) or the failing tests only.")
    return output, ""


def story_ticked(root: str, run: object) -> bool:
    """Has the agent marked the iteration's story done? An iteration starts on a
    story that is not done, so a tick is a change since the checkpoint, though
    the plan lives under .ralph/ (which the tree comparison leaves out)."""
    path = plan_file(root, run.source)
    return path is not None and story_state(path, run.story_id) == "done"


def judge(call: HookCall, command: str, exit_code: int | None, output: str, tests_config: object | None,
          shape: object) -> Outcome | None:
    """Judge one Bash result that ran tests (`shape`: command_shape() of the
    command); None when there is nothing to say."""
    output, cut_note = complete_output(call, output)
    if still_running(call.payload.get("tool_response")):
        # 2.1.330: a command over its timeout goes on in the background and arrives
        # on PostToolUse with the output so far. It has no exit status yet: never a pass.
        exit_code = None
        cut_note = ("the command had not finished: Claude Code moved it to the background after its timeout, "
                    "so only the output so far was judged")
    verdict = judge_test_run(command, exit_code, output, tests_config, shape)
    if verdict.verdict == "not_test":
        return None
    call.log_extra["test_verdict"] = verdict.verdict
    call.log_extra["runner"] = verdict.runner
    run = load_active_run(call.state_dir)
    record = run_record(command, verdict.verdict, verdict.runner, verdict.failing_tests)
    record.update(at=utc_now(), session=call.session_id, exit_code=exit_code)
    if cut_note:
        record["output_cut"] = True
    if run is not None:
        record.update(run_id=run.run_id, iteration=run.iteration, story=run.story_id)
    record = redact(record)  # the history never keeps a secret; the policy compares it with what the history holds
    path = history_path(call.state_dir, run, call.session_id)
    in_loop = run is not None and run.stage in ROLLBACK_STAGES
    history = load_history(path, run.iteration) if in_loop and verdict.verdict in ("fail", "pass") else []
    baseline_mode = getattr(tests_config, "baseline", "first_runs")
    if in_loop and verdict.verdict in ("fail", "pass") and baseline_mode != "off":
        if baseline_mode == "first_runs" and verdict.verdict == "fail" and baseline.still_at_checkpoint(history):
            # the story ticked is a change: a failure after the tick is the agent's, never the baseline
            record["at_checkpoint"] = not story_ticked(call.root, run) and tree_at_checkpoint(call.root, run.checkpoint)
        baseline.mark(record, baseline.baseline_failures(history))
    try:
        append_line(path, fastjson.dumps(record))
    except OSError as e:
        call.problems.append(f"could not record the test run in {path}: {e}")
    if verdict.verdict != "fail":
        if verdict.verdict == "unknown" and cut_note:
            return context(call.event, "ralph-hooks: could not tell whether this test run passed. " + cut_note)
        return None

    summary = failure_summary(verdict, exit_code)
    header = "ralph-hooks: " + summary + (f"\nNote: {cut_note}" if cut_note else "")
    baseline_note = baseline.baseline_note(record) if in_loop else ""
    if baseline_note:
        header += "\nBaseline: " + baseline_note
    if not in_loop:
        return context(call.event, header)
    if record.get("baseline_only"):
        call.log_extra["rollback_policy"] = {"rollback": False, "reason": "all failing tests were failing at the checkpoint"}
        return context(call.event, header)
    decision = decide(history, record, load_policy(call))
    call.log_extra["rollback_policy"] = decision.to_dict()
    if not decision.rollback:
        if decision.remaining is not None:
            after = "the next failing run" if decision.remaining == 1 else f"{decision.remaining} more failing runs"
            header += (
                f"\nLoop: {decision.reason} in iteration {run.iteration}; after {after}, ralph saves your work to a ref "
                f"and resets the tree to the iteration's checkpoint {run.checkpoint[:12]}. Fix one thing at a time and rerun."
            )
        return context(call.event, header)

    trigger = f"{decision.reason}"
    result = perform_rollback(call, run, path, record, trigger, _excerpt(output))
    if result.pending:
        return block(call.event, f"ralph-hooks is rolling this iteration back: {trigger}, story {run.story_id}, iteration {run.iteration}; "
                     f"{result.message}. Do not edit any file until it is done (edits and commands that may write are denied "
                     f"meanwhile; retry after a few seconds); then re-read each file before editing it.",
                     "Last failing run before the rollback:\n" + summary)
    if not result.restored:
        return context(call.event, f"{header}\nralph-hooks tried to roll back ({trigger}) but did not: {result.message}")
    reason = (
        f"ralph-hooks rolled this iteration back: {trigger}, story {run.story_id}, iteration {run.iteration}. "
        f"All your uncommitted and committed work since the checkpoint is saved in {result.ref} "
        f"(`git show --stat {result.ref}`, `git diff {result.checkpoint[:12]} {result.ref}`). "
        f"The work tree, index and HEAD are back at checkpoint {result.checkpoint[:12]}, as the iteration began"
        f"{kept_sentence(result)}: files you read or edited may have changed, so re-read each file before editing it. "
        "Take a smaller step: make one failing test pass at a time and run it after each change."
    )
    return block(call.event, reason, "Last failing run before the rollback:\n" + summary)


def rollback_at_stop(call: HookCall, run: object) -> str | None:
    """For the Stop handler: apply the at-stop policy to the current iteration.

    Returns a one-paragraph message when it rolled back (or tried to), else None.
    Call it when the stop is going to be allowed in a loop run (see docs/tests-and-rollback.md).
    """
    if run is None or run.stage not in ROLLBACK_STAGES:
        return None
    path = history_path(call.state_dir, run, call.session_id)
    history = load_history(path, run.iteration)
    decision = should_rollback_at_stop(history, load_policy(call))
    call.log_extra["rollback_at_stop"] = decision.to_dict()
    if not decision.rollback:
        return None
    last = last_run(history) or {}
    result = perform_rollback(call, run, path, last, decision.reason, "")
    if result.pending:
        return f"ralph-hooks is rolling iteration {run.iteration} of {run.story_id} back at stop ({decision.reason}): {result.message}."
    if not result.restored:
        return f"ralph-hooks tried to roll back at stop ({decision.reason}) but did not: {result.message}"
    return (
        f"ralph-hooks rolled iteration {run.iteration} of {run.story_id} back at stop: {decision.reason}. "
        f"The work is saved in {result.ref}; the tree is back at checkpoint {result.checkpoint[:12]}{kept_sentence(result)}."
    )


def kept_sentence(result: RollbackResult) -> str:
    """What the reset did not take back (ralph.rollback.kept), and any conflict met."""
    if not result.kept and not result.conflicts:
        return ""
    text = ""
    if result.kept:
        text = f", except {' and '.join(result.kept)}, which keep the loop's and the person's records (a done mark on your story is undone)"
    if result.conflicts:
        text += "; " + "; ".join(result.conflicts)
    return text
