"""How the report's renderers write numbers, times and outcomes for people."""
from __future__ import annotations

from ralph.run.clock import format_duration


# "Act on first": its groups in order -> (heading, the symbol each entry starts with)
ACT_GROUPS = {
    "run": ("The run", ""),
    "blocked": ("Blocked: the agent asks you", "⛔"),
    "failed": ("Failed: see what broke", "✗"),
    "stopped": ("Stopped by a budget or a limit", "⏸"),
}


def act_groups(items: list[dict]) -> list[tuple[str, list[dict]]]:
    """The "Act on first" entries by group, in ACT_GROUPS' order, empty groups left out."""
    return [(group, [i for i in items if i.get("group") == group]) for group in ACT_GROUPS
            if any(i.get("group") == group for i in items)]


def duration(seconds: object) -> str:
    """1h02m, 3m05s, 42s, 0.4s; "-" when unknown."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "-"
    if 0 < seconds < 0.05:
        return "<0.1s"
    if seconds < 10 and seconds != int(seconds):
        return f"{seconds:.1f}s"
    return format_duration(round(seconds))  # as the loop's terminal says it


def cost(value: object) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    return f"${value:,.2f}" if value >= 0.995 or value == 0 else f"${value:.3f}"


def tokens(value: object) -> str:
    if not isinstance(value, int) or isinstance(value, bool):
        return "-"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def usage(glance: dict) -> str:
    """Cost and tokens of the run, "" when the records have none."""
    figures = glance.get("usage")
    if not figures:
        return ""
    parts = []
    if figures.get("cost_usd") is not None:
        parts.append(cost(figures["cost_usd"]))
    if figures.get("tokens") is not None:
        parts.append(f"{tokens(figures['tokens'])} tokens")
    return ", ".join(parts)


def stories_line(glance: dict) -> str:
    return (f"{glance['stories_done']} done, {glance['stories_blocked']} blocked, {glance['stories_left']} left"
            f" (of {glance['stories_total']}; {glance['stories_done_this_run']} done in this run)")


def waits_line(glance: dict) -> str:
    if not glance["waits"]:
        return "none"
    line = f"{glance['usage_limit_waits']} for usage limits ({duration(glance['usage_limit_wait_s'])})"
    others = glance["waits"] - glance["usage_limit_waits"]
    if others:
        line += f", {others} other ({duration(glance['wait_s'] - glance['usage_limit_wait_s'])})"
    return line


def branch_line(glance: dict) -> str:
    branch = glance.get("branch")
    if not branch:
        return "-"
    action = glance.get("branch_action")
    if action == "created":
        return f"{branch} (new, from {glance.get('previous_branch') or 'a detached HEAD'})"
    if action == "resumed":
        return f"{branch} (resumed)"
    return f"{branch} (the checked-out branch)" if action == "current" else branch


def handoff_line(handoff: dict | None) -> str:
    if handoff is None:
        return "none (nothing committed, or the run ended before it)"
    mode = handoff["mode"]
    if mode == "none":
        return "none ([handoff] mode = \"none\")"
    if not handoff["ok"]:
        return f"{mode} FAILED: {handoff['error']}"
    if mode == "bundle":
        return f"bundle written: {handoff['path']}"
    where = f"{handoff['branch']} pushed to {handoff['remote']}"
    if mode == "pr":
        verb = "updated" if handoff.get("action") == "updated" else "opened"
        return f"{where}; draft pull request {verb}: {handoff['url'] or '(no URL printed)'}"
    return where


def verify_text(verify: dict | None) -> str:
    if verify is None:
        return "-"
    if verify.get("error"):
        return f"{verify['result']}: {verify['error']}"
    text = verify.get("result") or "-"
    if verify.get("verdict") and verify["verdict"] not in ("pass", "not_test", text):
        text += f" ({verify['verdict']})"
    if verify.get("failing_tests"):
        text += ": " + ", ".join(verify["failing_tests"][:5])
        if len(verify["failing_tests"]) > 5:
            text += f" and {len(verify['failing_tests']) - 5} more"
    return text


def diffstat_line(diffstat: dict | None) -> str:
    if not diffstat:
        return ""
    return f"{diffstat.get('files', 0)} file(s), +{diffstat.get('insertions', 0)} -{diffstat.get('deletions', 0)}"


def glance_rows(model: dict, no_usage: str = "not recorded") -> list[tuple[str, str]]:
    """The run at a glance, as (name, value) rows: the page's tiles, the Markdown's table."""
    glance = model["glance"]
    return [
        ("Finish", f"{glance['finish_type'] or 'none yet'}: {glance['why']}"),
        ("Stories", stories_line(glance)),
        ("Iterations", f"{glance['iterations']} ({glance['commits']} committed)"),
        ("Wall time", duration(glance["wall_s"])),
        ("Agent time", duration(glance["agent_s"])),
        ("Usage-limit waits", waits_line(glance)),
        ("Cost and tokens", usage(glance) or no_usage),
        ("Branch", branch_line(glance)),
        ("Hand-off", handoff_line(glance["handoff"])),
    ]
