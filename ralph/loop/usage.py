"""What the agent used: one iteration's `usage` (from the stream's result
line) and the run's totals in run.json, per story too.

The figures are the client's own: `total_cost_usd` is Claude Code's estimate
from list prices (on a subscription it is not what the person pays). The
totals carry over from the previous run's run.json unless that run completed,
so a run stopped (Ctrl-C, a limit, a budget) or killed and started again
keeps counting where it was.
"""
from __future__ import annotations

from ralph.loop.stream import AgentStream

# the iteration event's usage fields (None when the client did not say)
FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "cost_usd",
          "turns", "api_ms", "duration_ms", "session_id", "model", "is_error", "terminal_reason",
          "api_error_status", "api_error_type")
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
STORY_FIELDS = ("cost_usd", "input_tokens", "output_tokens", "iterations")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def iteration_usage(stream: AgentStream) -> dict:
    """The iteration event's `usage`: the result line's figures; without one
    (the agent was killed, or crashed), what the stream showed so far."""
    result = stream.result or {}
    tokens = model_tokens(result.get("modelUsage"))
    if tokens is None and isinstance(result.get("usage"), dict):
        tokens = result["usage"]
    usage: dict = {key: None for key in FIELDS}
    if tokens is not None:
        for key in TOKEN_FIELDS:
            usage[key] = _int(tokens.get(key))
    elif stream.message_ids:
        usage["input_tokens"], usage["output_tokens"] = stream.input_tokens, stream.output_tokens
    usage["cost_usd"] = _number(result.get("total_cost_usd"))
    usage["turns"] = _int(result.get("num_turns")) if stream.result is not None else (stream.message_ids or None)
    usage["api_ms"] = _int(result.get("duration_api_ms"))
    usage["duration_ms"] = _int(result.get("duration_ms"))
    usage["session_id"] = _text(result.get("session_id")) or stream.session_id
    usage["model"] = stream.model or main_model(result.get("modelUsage"))
    usage["is_error"] = result.get("is_error") if isinstance(result.get("is_error"), bool) else None
    usage["terminal_reason"] = _text(result.get("terminal_reason"))
    error = stream.api_error or {}
    usage["api_error_status"] = _int(result.get("api_error_status")) or _int(error.get("api_error_status"))
    usage["api_error_type"] = _text(result.get("api_error_type")) or _text(error.get("api_error_type"))
    return usage


# modelUsage's names for the token fields
MODEL_TOKEN_FIELDS = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
                      "cache_read_input_tokens": "cacheReadInputTokens", "cache_creation_input_tokens": "cacheCreationInputTokens"}


def model_tokens(model_usage: object) -> dict | None:
    """The tokens of every model the run used (the result's `modelUsage`, the
    figures its cost comes from; its `usage` can be zero when the client
    stopped at --max-budget-usd). None when it names no model."""
    if not isinstance(model_usage, dict) or not model_usage:
        return None
    totals = dict.fromkeys(MODEL_TOKEN_FIELDS, 0)
    for figures in model_usage.values():
        if isinstance(figures, dict):
            for key, name in MODEL_TOKEN_FIELDS.items():
                totals[key] += _int(figures.get(name)) or 0
    return totals


def main_model(model_usage: object) -> str | None:
    """The model that cost the most (side queries use a smaller one)."""
    if not isinstance(model_usage, dict) or not model_usage:
        return None
    return max(model_usage, key=lambda name: _number((model_usage[name] or {}).get("costUSD")) or 0.0)


class Totals:
    """The run's usage so far (run.json `usage`)."""

    __slots__ = ("cost_usd", "input_tokens", "output_tokens", "cache_read_input_tokens",
                 "cache_creation_input_tokens", "turns", "stories")

    def __init__(self) -> None:
        self.cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_input_tokens = 0
        self.cache_creation_input_tokens = 0
        self.turns = 0
        self.stories: dict[str, dict] = {}

    @classmethod
    def carried_over(cls, previous: dict | None) -> Totals:
        """The previous run's totals, unless it completed (then a new count starts)."""
        totals = cls()
        if not isinstance(previous, dict) or (previous.get("finish") or {}).get("type") == "complete":
            return totals
        recorded = previous.get("usage")
        if not isinstance(recorded, dict):
            return totals
        totals.cost_usd = _number(recorded.get("cost_usd")) or 0.0
        for key in (*TOKEN_FIELDS, "turns"):
            setattr(totals, key, _int(recorded.get(key)) or 0)
        stories = recorded.get("stories")
        if isinstance(stories, dict):
            for story, figures in stories.items():
                if isinstance(figures, dict):
                    totals.stories[str(story)] = {
                        "cost_usd": _number(figures.get("cost_usd")) or 0.0,
                        "input_tokens": _int(figures.get("input_tokens")) or 0,
                        "output_tokens": _int(figures.get("output_tokens")) or 0,
                        "iterations": _int(figures.get("iterations")) or 0,
                    }
        return totals

    def add(self, story: str | None, usage: dict) -> None:
        """One iteration's usage; `story` None for a planning iteration (run totals only)."""
        cost = usage.get("cost_usd") or 0.0
        self.cost_usd += cost
        for key in (*TOKEN_FIELDS, "turns"):
            setattr(self, key, getattr(self, key) + (usage.get(key) or 0))
        if story is not None:
            figures = self.story(story)
            figures["cost_usd"] += cost
            figures["input_tokens"] += usage.get("input_tokens") or 0
            figures["output_tokens"] += usage.get("output_tokens") or 0
            figures["iterations"] += 1

    def story(self, story: str) -> dict:
        return self.stories.setdefault(story, {key: 0.0 if key == "cost_usd" else 0 for key in STORY_FIELDS})

    @property
    def tokens(self) -> int:
        """What max_tokens counts: input + output."""
        return self.input_tokens + self.output_tokens

    def story_cost(self, story: str) -> float:
        return self.stories[story]["cost_usd"] if story in self.stories else 0.0

    def to_json(self) -> dict:
        return {
            "cost_usd": round(self.cost_usd, 6),
            **{key: getattr(self, key) for key in (*TOKEN_FIELDS, "turns")},
            "stories": {story: dict(figures, cost_usd=round(figures["cost_usd"], 6)) for story, figures in self.stories.items()},
        }


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def format_cost(cost: float | None) -> str:
    if cost is None:
        return "$?"
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


def brief(usage: dict | None) -> str:
    """`6 turns · 1.2k tokens · $0.0048` for the iteration's line; "" without usage."""
    if not usage or usage.get("cost_usd") is None and not usage.get("turns"):
        return ""  # the client said nothing (it did not start, or was killed at once)
    tokens = sum(usage.get(key) or 0 for key in TOKEN_FIELDS)
    parts = []
    if usage.get("turns"):
        parts.append(f"{usage['turns']} turn(s)")
    parts.append(f"{format_tokens(tokens)} tokens")
    parts.append(format_cost(usage.get("cost_usd")))
    return " · ".join(parts)
