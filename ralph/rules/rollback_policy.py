"""When a loop iteration's failing tests roll the tree back. Pure: no I/O.

Input: the iteration's test-run history (records from `.ralph/runs/<run>/tests.jsonl`,
oldest first), the run just judged, and the `[rollback]` config. Output: a
RollbackDecision (rollback yes/no, why, how many failures are left).

    [rollback]
    policy = "consecutive"        # "consecutive" (default) | "immediate" | "stop" | "off"
    max_consecutive_failures = 3  # consecutive: roll back at the Nth failing run in a row
    count_by = "command"          # what "in a row" groups: "command" | "runner" | "any"
    at_stop = true                # also roll back when the iteration ends on a failing run

Why this default. Test-driven work fails on purpose: write the test, run it,
see it fail (red), then make it pass (green). Rolling back on the first failure
(the design's "immediate" policy) would throw away every red test before it
can go green, so TDD could never happen. One failure is information; the same
test command failing three times in a row, with edits in between, is an agent
thrashing; that is when a fresh start from the checkpoint is cheaper than more
patching. A pass of that command resets the count, so red-green-red-green never
rolls back. Runs of *other* commands (a lint, a single test) neither count
nor reset, and an `unknown` verdict (a runner we could not read) is ignored.
"Same command" ignores what an agent varies without changing the run: extra
spaces, a leading `cd DIR &&` or `VAR=value`, `2>&1`, and output filters such
as `| tail -20`. With `at_stop`, an iteration that ends while its last test run
fails is rolled back too, so the next iteration never starts on broken work.
Every rollback first saves all work to a ref (see ralph.rollback), so the
policy only ever costs time, never work.

History records (dicts) have "kind": "test" (with "verdict", "key", "runner",
"command") or "rollback" (a marker: counting starts afresh after it). A failing
run marked `baseline_only` (all its failing tests were already failing at the
iteration's checkpoint; see ralph.rules.outcome.baseline) is not a failure here:
it neither counts nor resets the row, and does not trigger the at-stop rule.
"""
from __future__ import annotations

# the policies and what "in a row" groups ([rollback] policy and count_by;
# ralph.config.tables.rollback declares the table)
POLICIES = ("consecutive", "immediate", "stop", "off")
COUNT_BY = ("command", "runner", "any")
DEFAULT_MAX_FAILURES = 3

# output filters an agent appends without changing which tests run
OUTPUT_FILTERS = ("tail", "head", "tee", "grep", "cat", "less", "more", "sed", "awk", "cut", "sort", "uniq", "wc", "tr")
# shell noise that does not change the run
NOISE_TOKENS = ("2>&1", "1>&2", "2>/dev/null", "&>/dev/null", ">/dev/null")
NOISE_SUFFIXES = ("|| true", "|| :", "; true", "; echo $?", "&& echo ok")


class RollbackPolicy:
    __slots__ = ("policy", "max_failures", "count_by", "at_stop")

    def __init__(self, policy: str = "consecutive", max_failures: int = DEFAULT_MAX_FAILURES, count_by: str = "command", at_stop: bool = True) -> None:
        self.policy = policy
        self.max_failures = max_failures
        self.count_by = count_by
        self.at_stop = at_stop

    @classmethod
    def from_values(cls, values: dict) -> RollbackPolicy:
        """From the checked [rollback] values: ralph.config validates the
        table against ralph.config.tables.rollback (its defaults live there)."""
        return cls(values["policy"], values["max_consecutive_failures"], values["count_by"], values["at_stop"])

    def to_dict(self) -> dict:
        return {"policy": self.policy, "max_consecutive_failures": self.max_failures, "count_by": self.count_by, "at_stop": self.at_stop}


class RollbackDecision:
    __slots__ = ("rollback", "reason", "failures", "remaining", "policy")

    def __init__(self, rollback: bool, reason: str, failures: int = 0, remaining: int | None = None, policy: str = "") -> None:
        self.rollback = rollback
        self.reason = reason
        self.failures = failures  # consecutive failing runs counted, this one included
        self.remaining = remaining  # failing runs still allowed before a rollback; None: no countdown
        self.policy = policy

    def to_dict(self) -> dict:
        return {"rollback": self.rollback, "reason": self.reason, "failures": self.failures, "remaining": self.remaining, "policy": self.policy}


def _strip_filters(command: str) -> str:
    parts = command.split(" | ")
    while len(parts) > 1:
        program = parts[-1].strip().split(" ", 1)[0]
        if program not in OUTPUT_FILTERS:
            break
        parts.pop()
    return " | ".join(parts)


def command_key(command: str) -> str:
    """The command as a test run: what an agent varies without changing the run is dropped."""
    text = " ".join(command.split())
    changed = True
    while changed:
        changed = False
        for suffix in NOISE_SUFFIXES:
            if text.endswith(suffix):
                text = text[: -len(suffix)].rstrip()
                changed = True
        stripped = _strip_filters(text)
        if stripped != text:
            text, changed = stripped, True
        if text.startswith("cd ") and " && " in text:
            text, changed = text.split(" && ", 1)[1], True
        first = text.split(" ", 1)
        if len(first) == 2 and "=" in first[0] and first[0].split("=", 1)[0].isidentifier():
            text, changed = first[1], True
    tokens = [t for t in text.split(" ") if t not in NOISE_TOKENS]
    return " ".join(tokens)


def run_record(command: str, verdict: str, runner: str | None, failing_tests: list[str] | None = None) -> dict:
    """The history record for one judged run (the caller adds time, iteration, session)."""
    return {
        "kind": "test",
        "verdict": verdict,
        "runner": runner or "",
        "key": command_key(command),
        "command": command if len(command) <= 500 else command[:499] + "…",
        "failing_tests": list(failing_tests or [])[:20],
    }


def _group(record: dict, count_by: str) -> str:
    if count_by == "any":
        return ""
    if count_by == "runner":
        return str(record.get("runner") or "")
    return str(record.get("key") or "")


def consecutive_failures(history: list[dict], new: dict, count_by: str = "command") -> int:
    """Failing runs in a row in `new`'s group, `new` included; a pass or a rollback marker ends the row."""
    if new.get("verdict") != "fail":
        return 0
    group = _group(new, count_by)
    count = 1
    for record in reversed(history):
        kind = record.get("kind", "test")
        if kind == "rollback":
            break
        if kind != "test" or _group(record, count_by) != group or record.get("baseline_only"):
            continue  # a run failing only where the checkpoint already failed neither counts nor resets
        verdict = record.get("verdict")
        if verdict == "pass":
            break
        if verdict == "fail":
            count += 1
    return count


def _shown(record: dict) -> str:
    command = str(record.get("key") or record.get("command") or "the test command")
    return "`" + (command if len(command) <= 120 else command[:119] + "…") + "`"


def decide(history: list[dict], new: dict, policy: RollbackPolicy | None = None) -> RollbackDecision:
    """After a judged run: roll back now? `history` excludes `new`."""
    policy = policy or RollbackPolicy()
    if new.get("verdict") != "fail":
        return RollbackDecision(False, "the run did not fail", 0, None, policy.policy)
    if new.get("baseline_only"):
        return RollbackDecision(False, "every failing test was already failing at the checkpoint", 0, None, policy.policy)
    failures = consecutive_failures(history, new, policy.count_by)
    if policy.policy == "immediate":
        return RollbackDecision(True, f"a failing run of {_shown(new)} (policy immediate)", failures, 0, policy.policy)
    if policy.policy == "consecutive":
        limit = policy.max_failures
        row = {"command": f"of {_shown(new)}", "runner": f"of {new.get('runner') or 'the test runner'}", "any": "of tests"}[policy.count_by]
        if failures >= limit:
            return RollbackDecision(True, f"{failures} consecutive failing runs {row} (limit {limit})", failures, 0, policy.policy)
        return RollbackDecision(False, f"{failures} of {limit} failing runs in a row {row}", failures, limit - failures, policy.policy)
    why = "rollback happens only at stop" if policy.policy == "stop" else "rollback is off"
    return RollbackDecision(False, f"a failing run of {_shown(new)} ({why})", failures, None, policy.policy)


def last_run(history: list[dict]) -> dict | None:
    """The last pass/fail run since the last rollback, if any."""
    for record in reversed(history):
        kind = record.get("kind", "test")
        if kind == "rollback":
            return None
        if kind == "test" and record.get("verdict") in ("pass", "fail"):
            return record
    return None


def should_rollback_at_stop(history: list[dict], policy: RollbackPolicy | None = None) -> RollbackDecision:
    """When an iteration ends: roll back if its last test run (since any rollback) failed."""
    policy = policy or RollbackPolicy()
    if policy.policy == "off" or not policy.at_stop and policy.policy != "stop":
        return RollbackDecision(False, f"no rollback at stop (policy {policy.policy}, at_stop {str(policy.at_stop).lower()})", 0, None, policy.policy)
    last = last_run(history)
    if last is None:
        return RollbackDecision(False, "no test run since the iteration began or since the last rollback", 0, None, policy.policy)
    if last.get("verdict") != "fail":
        return RollbackDecision(False, f"the last test run ({_shown(last)}) passed", 0, None, policy.policy)
    if last.get("baseline_only"):
        return RollbackDecision(False, f"the last test run ({_shown(last)}) failed only where the checkpoint already failed", 0, None, policy.policy)
    return RollbackDecision(True, f"the iteration ended with its last test run failing: {_shown(last)}", 1, 0, policy.policy)
