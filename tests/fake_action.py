"""A stand-in action type for tests of the action table, plugged in the way
the webhook and spawn types are. `answer` is returned as
RALPH_HOOK_RESPONSE; `verdict = "reject"` aborts; `fail = true` fails."""
from __future__ import annotations

from ralph.config.schema import Key, check_keys
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, ActionResult

KEYS = {"answer": Key("approved", "str"), "verdict": Key("approve", "choice:approve|reject"), "fail": Key(False, "bool")}
EXPORTS = ("RALPH_HOOK_RESPONSE",)
CALLS: list[dict] = []


def validate(table: dict, where: object, exports: dict[str, str]) -> list[str]:
    return check_keys(table, KEYS, where, where.table)  # type: ignore[arg-type, attr-defined]


def run(action: object, ctx: object) -> ActionResult:
    CALLS.append({"point": ctx.point, "iteration": ctx.values.get("iteration")})  # type: ignore[attr-defined]
    if action["fail"]:  # type: ignore[index]
        return ActionResult(FAILED, message="could not reach the approver")
    if action["verdict"] == "reject":  # type: ignore[index]
        return ActionResult(SUCCESS, abort="rejected by a person: not yet", exports={"RALPH_HOOK_RESPONSE": "rejected"})
    return ActionResult(SUCCESS, exports={"RALPH_HOOK_RESPONSE": action["answer"]})  # type: ignore[index]
