"""The report as Markdown: `summary()` is the short form (a pull request's
body, a chat message), `render()` the whole report for a terminal. Both are
link-free: no link or image is written, and text from the records (titles,
reasons, questions, which the agent may have written) is escaped so it
cannot become one, nor a table cell, heading or HTML.

    summary(model) -> str; render(model) -> str   (model: ralph.report.model.build)
"""
from __future__ import annotations

from ralph.report import formats
from ralph.report.model import CATEGORIES

SPECIAL = "\\`*_[]<>|#!~"
BRIEF_LIMIT = 1800


def md(value: object) -> str:
    """Record text made inert: one line, Markdown's special characters escaped."""
    text = " ".join(("" if value is None else str(value)).split())
    return "".join("\\" + c if c in SPECIAL else c for c in text)


def code(value: object) -> str:
    text = " ".join(("" if value is None else str(value)).split()).replace("`", "'")
    return f"`{text}`"


def story_line(story: dict, rows: list[dict]) -> str:
    marks = "".join(CATEGORIES[r["category"]][1] for r in rows)
    line = f"- {marks or '–'} **{md(story['id'])}**" + (f": {md(story['title'])}" if story["title"] else "") + f" ({story['state']}"
    if rows:
        line += f", {len(rows)} iteration(s), {formats.duration(story['seconds'])}"
    if story["cost_usd"] is not None:
        line += f", {formats.cost(story['cost_usd'])}"
    line += ")"
    block = story["blocked"]
    if block:
        line += f": blocked{' by ' + md(block['by']) if block.get('by') else ''}: {md(block['reason'])}"
        if block.get("question"):
            line += f". The agent asks: “{md(block['question'])}”"
    if story["commit"]:
        line += f"; commit {code(story['commit'][:12])} {formats.diffstat_line(story['diffstat'])}"
    return line


def act_lines(model: dict) -> list[str]:
    """"Act on first" by group: a heading each, one entry per story; a
    blocked story's question is quoted as the agent wrote it, a failed
    story's output is a code block."""
    lines: list[str] = []
    for group, entries in formats.act_groups(model["act_on"]):
        heading, symbol = formats.ACT_GROUPS[group]
        lines += ["", f"#### {heading} ({len(entries)})", ""]
        for item in entries:
            lines += act_entry(item, symbol)
    return lines[1:]


def act_entry(item: dict, symbol: str) -> list[str]:
    """One entry: a list item whose parts are paragraphs of it (blank lines between, indented)."""
    kind = item["kind"]
    if kind not in ("blocked", "failed", "budget"):
        line = f"- {md(item['text'])}"
        if item.get("command"):
            line += f". Restore it: {code(item['command'])}"
        return [line]
    name = f"**{md(item['story'])}**" + (f" ({md(item['title'])})" if item.get("title") else "")
    parts: list[list[str]] = []
    if kind == "blocked":
        who = "blocked by the agent" if item.get("by") == "agent" else "marked blocked (`[!]`) in the plan"
        parts.append([f"{symbol} {name} is {who}" + (f": {md(item['reason'])}" if item.get("reason") else "")])
        if item.get("question"):
            parts.append(["> The agent asks:", ">"] + [f"> {md(line)}" if line.strip() else ">" for line in str(item["question"]).splitlines()])
        parts.append([f"How to answer: {full_stop(md(item['answer']))}"])
        if item.get("command"):
            parts.append([f"Its work so far is saved: {code(item['command'])}"])
    elif kind == "failed":
        parts.append([f"{symbol} {name} failed: {full_stop(md(item['what']))}"])
        if item.get("excerpt"):
            parts.append(fenced(item["excerpt"]))
        if item.get("command"):
            parts.append([f"Restore its work: {code(item['command'])}"])
        parts.append([f"Then: {full_stop(md(item['fix']))}"])
    else:
        parts.append([f"{symbol} {name} was stopped by its budget: it {full_stop(md(item['reason']))}"])
        if item.get("what"):
            parts.append([f"Its last iteration failed: {full_stop(md(item['what']))}"])
        if item.get("excerpt"):
            parts.append(fenced(item["excerpt"]))
        parts.append([f"What to raise: {md(item['raise'])}; then {full_stop(md(item['then']))}"])
        if item.get("command"):
            parts.append([f"Its work so far is saved: {code(item['command'])}"])
    lines = ["- " + parts[0][0], *("  " + line for line in parts[0][1:])]
    for part in parts[1:]:
        lines += ["", *(("  " + line).rstrip() for line in part)]
    return lines


def fenced(text: str) -> list[str]:
    """A code block that no backtick run in the text can close early."""
    fence = "`" * max(3, longest_backtick_run(text) + 1)
    return [f"{fence}text", *text.splitlines(), fence]


def full_stop(text: str) -> str:
    return text if text.endswith((".", "?", "\\!", "!", "…")) else text + "."


def longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def tests_line(model: dict) -> str:
    verified = [r for r in model["iterations"] if r["verify"] and r["verify"]["result"] in ("pass", "fail")]
    if not verified:
        return "No verify command ran."
    passed = sum(1 for r in verified if r["verify"]["result"] == "pass")
    failing: list[str] = []
    for row in verified:
        for name in row["verify"]["failing_tests"]:
            if name not in failing:
                failing.append(name)
    line = f"The verify command ran {len(verified)} time(s): {passed} passed, {len(verified) - passed} failed"
    if failing:
        line += "; failing tests seen: " + ", ".join(code(n) for n in failing[:10])
    return line


def summary(model: dict, handoff: bool = True) -> str:
    """The short form: at a glance, what to act on, the stories, the tests.
    `handoff=False` leaves out the hand-off row (a pull request's own body)."""
    glance = model["glance"]
    lines = [f"## ralph-loop run {md(model['run_id'])}: {glance['finish_type'] or 'unfinished'}", ""]
    why = glance["why"] + (f": {glance['message']}" if glance["message"] else "")
    lines += [md(why), "", "| | |", "|---|---|"]
    for name, value in formats.glance_rows(model):
        if name == "Hand-off" and not handoff:
            continue
        lines.append(f"| {name} | {md(value)} |")
    acts = act_lines(model)
    if acts:
        lines += ["", "### Act on first", "", *acts]
    by_number = {r["iteration"]: r for r in model["iterations"]}
    if model["stories"]:
        lines += ["", "### Stories", ""]
        for story in model["stories"]:
            lines.append(story_line(story, [by_number[n] for n in story["iterations"] if n in by_number]))
    lines += ["", "### Tests", "", tests_line(model)]
    return "\n".join(lines) + "\n"


def brief(model: dict, limit: int = BRIEF_LIMIT) -> str:
    """A few lines for a chat message (Slack, Discord, ntfy): no table, no
    markup beyond bullets, at most `limit` characters (Discord takes 2000)."""
    glance = model["glance"]
    why = glance["why"] + (f": {glance['message']}" if glance["message"] else "")
    lines = [f"ralph-loop run {model['run_id']}: {glance['finish_type'] or 'unfinished'} ({why})",
             f"• Stories: {formats.stories_line(glance)}",
             f"• Time: {formats.duration(glance['wall_s'])} in all, {formats.duration(glance['agent_s'])} agent; "
             f"usage-limit waits: {formats.waits_line(glance)}"]
    if formats.usage(glance):
        lines.append(f"• Cost: {formats.usage(glance)}")
    lines.append(f"• Branch: {formats.branch_line(glance)}; hand-off: {formats.handoff_line(glance['handoff'])}")
    if model["act_on"]:
        lines.append("Act on first:")
        for item in model["act_on"]:
            line = " ".join(("•", formats.ACT_GROUPS[item["group"]][1], item["text"])).replace("  ", " ")
            if item.get("question"):
                line += f". The agent asks: “{item['question']}”"
            if item.get("command"):
                line += f". Restore it: {item['command']}"
            lines.append(line)
    text = ""
    for line in lines:
        line = " ".join(line.split())
        if len(text) + len(line) + 1 > limit - 1:
            return text + "…"
        text += line + "\n"
    return text.rstrip("\n")


def render(model: dict) -> str:
    """The whole report: the summary, then the timeline as text, the cost over
    time, the time per story and each story's iterations."""
    lines = [summary(model).rstrip("\n")]
    legend = ", ".join(f"{symbol} {label}" for label, symbol in CATEGORIES.values())
    lanes = model["timeline"]["lanes"]
    if lanes:
        lines += ["", "### Timeline", "", f"One symbol per iteration, in order ({legend}).", "", "```"]
        width = max(len(lane["story"]) for lane in lanes)
        for lane in lanes:
            bars = sorted(lane["bars"], key=lambda b: b["start_s"])
            lines.append(f"{lane['story']:<{width}}  " + "".join(CATEGORIES[b["category"]][1] for b in bars))
        lines.append("```")
    series = model["cumulative"]
    if series["measure"] and len(series["points"]) > 1:
        label = formats.cost if series["measure"] == "cost_usd" else formats.tokens
        name = "cost" if series["measure"] == "cost_usd" else "tokens"
        steps = ", ".join(f"{formats.duration(t)}: {label(v if name == 'cost' else int(v))}" for t, v in series["points"][1:])
        lines += ["", f"### Cumulative {name}", "", steps]
    if model["story_time"]:
        lines += ["", "### Time per story", "", "| story | in iterations | agent | waiting |", "|---|---|---|---|"]
        for row in model["story_time"]:
            lines.append(f"| {md(row['story'])} | {formats.duration(row['seconds'])} | {formats.duration(row['agent_s'])} | {formats.duration(row['wait_s'])} |")
    by_number = {r["iteration"]: r for r in model["iterations"]}
    for story in model["stories"]:
        rows = [by_number[n] for n in story["iterations"] if n in by_number]
        if not rows:
            continue
        lines += ["", f"### {md(story['id'])}" + (f": {md(story['title'])}" if story["title"] else ""), "",
                  "| # | result | time | cost | verify | what else |", "|---|---|---|---|---|---|"]
        for row in rows:
            cost = formats.cost(row["cost_usd"]) if row["cost_usd"] is not None else (formats.tokens(row["tokens"]) + " tok" if row["tokens"] is not None else "-")
            lines.append(f"| {row['iteration']} | {md(row['result'])} | {formats.duration(row['duration_s'])} | {cost} | "
                         f"{md(formats.verify_text(row['verify']))} | {notes(row)} |")
    run_notes = list(model["notes"]) + [f"{h['point']} hooks: " + ", ".join(f"{a['action']} {a['status']} (exit {a['exit']})" for a in h["actions"])
                                        for h in model["run_hooks"]]
    if run_notes:
        lines += ["", "### The run", "", *(f"- {md(n)}" for n in run_notes)]
    return "\n".join(lines) + "\n"


def notes(row: dict) -> str:
    parts = []
    if row["error"]:
        parts.append(md(row["error"]))
    parts += [md(p) for p in row["problems"]]
    if row["denial_count"]:
        denied = "; ".join(f"{code(d['command'])}: {md(d['reason'])}" for d in row["denials"])
        parts.append(f"{row['denial_count']} guard denial(s)" + (f": {denied}" if denied else ""))
    rollback = row["rollback"]
    if rollback:
        parts.append(f"rolled back, work saved: {code(rollback['command'])}" if rollback["restored"] and rollback["command"]
                     else f"rollback failed: {md(rollback['message'])}" if not rollback["restored"] else "rolled back")
    if row["commit"]:
        parts.append(f"commit {code(row['commit'][:12])}")
    for hook in row["hooks"]:
        parts.append(md(f"{hook['point']} hooks: " + ", ".join(f"{a['action']} {a['status']} (exit {a['exit']})" for a in hook["actions"])))
    return "; ".join(parts) if parts else ""
