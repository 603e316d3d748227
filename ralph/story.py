"""One story of a plan, as every plan format reads it (ralph.plan picks the
format), and the error a plan that cannot be read raises."""


class PlanError(ValueError):
    """A plan that cannot be read; the message names the file and line."""


class Story:
    __slots__ = ("id", "title", "state", "criteria", "line", "priority")

    def __init__(self, id: str, title: str, state: str, criteria: list[str], line: int, priority: float = 0) -> None:
        self.id = id
        self.title = title
        self.state = state
        self.criteria = criteria
        self.line = line
        self.priority = priority

    @property
    def done(self) -> bool:
        return self.state == "done"

    def __repr__(self) -> str:
        return f"Story({self.id!r}, {self.title!r}, {self.state!r})"
