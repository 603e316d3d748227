"""[rollback]: when a loop iteration's failing tests roll the tree back. The
policies, the groupings and the default row length are the pure rule's
(ralph.rules.rollback_policy)."""
from ralph.config.schema import Key, Table
from ralph.rules.rollback_policy import COUNT_BY, DEFAULT_MAX_FAILURES, POLICIES

MAX_FAILURES_LIMIT = 100

ROLLBACK_KEYS: dict[str, Key] = {
    "policy": Key("consecutive", "choice:" + "|".join(POLICIES), None,
                  "when failing tests roll an iteration back: consecutive, immediate, stop or off"),
    "max_consecutive_failures": Key(DEFAULT_MAX_FAILURES, "int", (1, MAX_FAILURES_LIMIT),
                                    "consecutive: roll back at the Nth failing run in a row"),
    "count_by": Key("command", "choice:" + "|".join(COUNT_BY), None, 'what "in a row" groups: command, runner or any'),
    "at_stop": Key(True, "bool", None, "also roll back when the iteration ends on a failing run"),
}
ROLLBACK_TABLE = Table("rollback", ROLLBACK_KEYS, "when a loop iteration's failing tests roll the tree back")
