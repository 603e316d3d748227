"""The redaction ralph applies to everything it writes or prints: the rule
(ralph.rules.redact: token patterns, secret assignments) together with the
values of this process's secret-looking environment variables, read once."""
import os

from ralph.rules import redact as rule

_secrets: list[tuple[str, ...]] = []


def env_secrets() -> tuple[str, ...]:
    """This process's secret-looking environment values (rule.secret_values), read once."""
    if not _secrets:
        _secrets.append(rule.secret_values(os.environ))
    return _secrets[0]


def redact(value: object, limit: int | None = None, *, tail: bool = False, items: int | None = rule.MAX_ITEMS) -> object:
    """rule.redact() with this process's environment secrets."""
    return rule.redact(value, limit, tail=tail, secrets=env_secrets(), items=items)
