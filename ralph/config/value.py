"""What is wrong with one value (ValueProblem), and the check of a list of
strings that the schema's kinds and the kinds needing `re`
(ralph.config.patterns) both build on: the base both import."""


class ValueProblem(ValueError):
    """What is wrong with one value, without where it is (checked_value)."""


def bad(what: str, value: object) -> ValueProblem:
    return ValueProblem(f"{what}, got {value!r}")


def bounds(limits: object, low_default: float | None) -> tuple:
    """(low, high) of a Key's limits: a number is its minimum, a tuple both."""
    return limits if isinstance(limits, tuple) else (low_default if limits is None else limits, None)


def strings(value: object, limits: object, key: str) -> tuple:
    """A list of non-empty strings, its length within `limits`, as a tuple."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise bad(f'must be a list of non-empty strings, e.g. {key} = ["..."]', value)
    low, high = bounds(limits, 0)
    if len(value) < low or high is not None and len(value) > high:
        raise ValueProblem(f"{len(value)} entries; " + (f"at most {high:g}" if high is not None else f"at least {low:g}"))
    return tuple(value)
