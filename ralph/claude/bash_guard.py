"""The push/merge guard on one Bash command, with the project's [guard] table;
a denial during a ralph-loop run is recorded where the loop reads it."""
from ralph.claude.local_remotes import local_remotes
from ralph.claude.protocol import HookCall, Outcome, allow, deny
from ralph.config.reading import section_or_defaults
from ralph.redaction import redact
from ralph.rules.guard.judge import judge_command
from ralph.rules.guard.policy import GuardPolicy
from ralph.state import denials


def load_guard_policy(call: HookCall) -> object:
    """The [guard] table of ralph.toml. A broken config is logged and the
    defaults apply: they block every push and merge."""
    values, problem = section_or_defaults(call.root, "guard", call.environ)
    if problem:
        call.problems.append(problem)
    return GuardPolicy.from_values(values)


def judge(call: HookCall, command: str, config_path: str | None) -> Outcome:
    """Deny `command` when running it would push or merge. `config_path`: the
    project's ralph.toml (its [guard] table applies), None when there is none."""
    verdict = judge_command(command, load_guard_policy(call) if config_path else None, cwd=call.cwd,
                            remotes=lambda: local_remotes(call.root))
    if verdict.blocked:
        call.log_extra["evidence"] = verdict.evidence[:10]
        call.log_extra["rule_id"] = verdict.rule_id
        outcome = deny(f"{verdict.reason} {denials.REQUEST_MERGE_HINT}" if denials.tools_active(call.environ) else verdict.reason)
        if call.environ.get(denials.ENV_RUN_ID):
            record_denial(call, command, verdict.reason, outcome)
        return outcome
    return allow()


def record_denial(call: HookCall, command: str, reason: str, outcome: Outcome) -> None:
    """During a ralph-loop run: log the denial where the loop reads it, and
    end the session at the loop's limit of denials per iteration (the deny
    still stands: the command never runs)."""
    environ = call.environ
    try:
        iteration = int(environ.get(denials.ENV_ITERATION, "0"))
        limit = int(environ.get(denials.ENV_MAX_DENIALS, "0"))
    except ValueError:
        iteration, limit = 0, 0
    try:
        count = denials.append_denial(call.state_dir, environ.get(denials.ENV_RUN_ID, ""), iteration, environ.get(denials.ENV_STORY),
                                      call.session_id, redact(command), redact(reason))
    except OSError as e:
        call.problems.append(f"could not record the denial: {e}")
        return
    call.log_extra["denials_this_iteration"] = count
    if limit and count >= limit:
        outcome.output["continue"] = False
        outcome.output["stopReason"] = (
            f"ralph-loop: {count} commands denied by the push/merge guard in this iteration (limit {limit}); "
            "the loop ends the iteration and tells the next one why"
        )
