"""The report as one self-contained HTML page: no script, no external font,
style sheet or image; charts are inline SVG styled by the page's own CSS, so
the page reads the same with JavaScript off, follows the browser's light or
dark scheme (prefers-color-scheme) and prints (print styles).

    render(model) -> str   (model: ralph.report.model.build)

Every value comes from the model, whose text is already redacted; here it is
only escaped.
"""
from __future__ import annotations

from html import escape

from ralph.report import formats
from ralph.report.model import CATEGORIES

WIDTH = 960  # the charts' drawing width (they scale to the page)
LABEL_W = 120  # the story labels left of the timeline
LANE_H = 26
STATE_CATEGORY = {"done": "done", "blocked": "blocked"}  # a story's state -> its colour in "time per story"
BAR_H = 16
AXIS_H = 22

STYLE = """
:root{--bg:#ffffff;--fg:#1c1f24;--muted:#5f6b7a;--line:#e3e6ea;--card:#f6f7f9;--accent:#b42318;--code:#eef0f3;
--done:#2f9e5a;--verify_failed:#d99a00;--rolled_back:#d9480f;--timeout:#7048e8;--blocked:#c2255c;--waited:#3b82c4;--failed:#8a94a1;}
@media (prefers-color-scheme:dark){:root{--bg:#121417;--fg:#e4e7eb;--muted:#9aa5b4;--line:#2b3038;--card:#1a1e23;
--accent:#ff8a7a;--code:#23282f;--done:#4cc47e;--verify_failed:#f0b429;--rolled_back:#ff7847;--timeout:#9b87f5;
--blocked:#f06595;--waited:#63a4e8;--failed:#a3adba;}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1000px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:1.5rem;margin:0 0 4px}h2{font-size:1.15rem;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:0 0 6px}
.sub{color:var(--muted);margin:0}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:1px 5px;border-radius:4px;word-break:break-all}
.finish{display:inline-block;padding:2px 10px;border-radius:999px;font-weight:600;font-size:.9rem;color:#fff;background:var(--failed)}
.finish.complete{background:var(--done)}.finish.error,.finish.hook_abort{background:var(--rolled_back)}
.finish.blocked{background:var(--blocked)}.finish.max_iterations,.finish.budget,.finish.rate_limited,.finish.no_changes{background:var(--verify_failed)}
.act{border:1px solid var(--line);border-left:4px solid var(--accent);background:var(--card);border-radius:6px;padding:10px 16px;margin:0}
.act li{margin:6px 0}.act blockquote{margin:4px 0 4px 0;padding:2px 10px;border-left:3px solid var(--line);color:var(--fg)}
.calm{color:var(--muted)}
.act-item{border:1px solid var(--line);border-radius:6px;padding:8px 14px;margin:8px 0;background:var(--card)}
.act-item h4{margin:0 0 4px;font-size:1rem}.act-item p{margin:4px 0}.muted{color:var(--muted);font-weight:400}
.act-item.blocked{border-left:4px solid var(--blocked)}.act-item.failed{border-left:4px double var(--verify_failed)}
.act-item.stopped{border-left:4px dotted var(--failed)}
.tag{font-size:.75rem;text-transform:uppercase;letter-spacing:.05em;border:1px solid currentColor;border-radius:4px;padding:0 5px;
margin-right:6px;vertical-align:2px}.blocked .tag{color:var(--blocked)}.failed .tag{color:var(--rolled_back)}.stopped .tag{color:var(--muted)}
.question{margin:6px 0;padding:4px 12px;border-left:3px solid var(--blocked);font-size:1.05rem}.question p{white-space:pre-wrap}
.asks{color:var(--muted);font-size:.85rem}
pre.excerpt{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:6px 8px;border-radius:4px;
white-space:pre-wrap;word-break:break-word;max-height:20em;overflow:auto;margin:4px 0}
.glance{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:10px;margin:0}
.glance div{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 12px}
.glance dt{color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}.glance dd{margin:2px 0 0;word-break:break-word}
svg{display:block;width:100%;height:auto;overflow:visible}
svg text{fill:var(--fg);font:12px system-ui,sans-serif}svg .muted{fill:var(--muted)}
svg .grid{stroke:var(--line);stroke-width:1}svg .lane{fill:var(--card)}
.c-done{fill:var(--done)}.c-verify_failed{fill:var(--verify_failed)}.c-rolled_back{fill:var(--rolled_back)}
.c-timeout{fill:var(--timeout)}.c-blocked{fill:var(--blocked)}.c-waited{fill:var(--waited)}.c-failed{fill:var(--failed)}
.curve{fill:none;stroke:var(--waited);stroke-width:2}.area{fill:var(--waited);opacity:.15}
.legend{list-style:none;padding:0;margin:6px 0 0;display:flex;flex-wrap:wrap;gap:14px;color:var(--muted);font-size:.85rem}
.legend svg{display:inline-block;width:12px;height:12px;vertical-align:-1px;margin-right:4px}
table{border-collapse:collapse;width:100%;font-size:.9rem;margin:6px 0 10px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid var(--line)}th{color:var(--muted);font-weight:600}
td.num{text-align:right;white-space:nowrap}table.diffstat{width:auto;min-width:50%}
.story{border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:12px 0;break-inside:avoid}
.state{font-size:.8rem;padding:1px 8px;border-radius:999px;color:#fff;vertical-align:1px;margin-left:6px}
.state.done{background:var(--done)}.state.blocked{background:var(--blocked)}.state.todo{background:var(--failed)}
.result{white-space:nowrap}.result::before{content:"";display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px;background:var(--failed)}
.result.c-done::before{background:var(--done)}.result.c-verify_failed::before{background:var(--verify_failed)}
.result.c-rolled_back::before{background:var(--rolled_back)}.result.c-timeout::before{background:var(--timeout)}
.result.c-blocked::before{background:var(--blocked)}.result.c-waited::before{background:var(--waited)}
ul.notes{margin:4px 0;padding-left:18px}
footer{margin-top:40px;color:var(--muted);font-size:.8rem}
@media print{:root{--bg:#fff;--fg:#000;--card:#fff;--code:#f2f2f2}main{max-width:none;padding:0}
h2{break-after:avoid}.story,figure,section.chart{break-inside:avoid}}
"""


def e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def render(model: dict) -> str:
    glance = model["glance"]
    finish = glance["finish_type"] or "unfinished"
    title = f"ralph-loop run {model['run_id']}: {finish}"
    parts = [
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"color-scheme\" content=\"light dark\">\n",
        f"<title>{e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        header(model),
        act_section(model),
        glance_section(model),
        timeline_section(model),
        cumulative_section(model),
        story_time_section(model),
        stories_section(model),
        run_section(model),
        f"<footer>Written from <code>.ralph/events.jsonl</code> and <code>.ralph/run.json</code> (report format {e(model['format'])});"
        f" <code>ralph report {e(model['run_id'])}</code> writes it again.</footer>\n",
        "</main>\n</body>\n</html>\n",
    ]
    return "".join(parts)


def header(model: dict) -> str:
    glance = model["glance"]
    finish = glance["finish_type"] or "unfinished"
    why = glance["why"]
    message = glance["message"]
    started = f"started {model['started']}" if model["started"] else ""
    plan = f" · plan <code>{e(model['plan'])}</code>" if model["plan"] else ""
    return (f"<header>\n<h1>Run {e(model['run_id'])} <span class=\"finish {e(finish)}\">{e(finish)}</span></h1>\n"
            f"<p class=\"sub\">{e(why)}{': ' + e(message) if message else ''}</p>\n"
            f"<p class=\"sub\">{e(started)}{plan}</p>\n</header>\n")


def act_section(model: dict) -> str:
    """One entry per story that needs the person, by group; blocked and
    failed differ in words and shape (a question to answer; what failed, its
    output, a restore command), not in colour alone."""
    items = model["act_on"]
    if not items:
        return "<section id=\"act\">\n<h2>Act on first</h2>\n<p class=\"calm\">Nothing needs you: every story is done, none failed or is blocked, no hand-off failed.</p>\n</section>\n"
    out = ["<section id=\"act\">\n<h2>Act on first</h2>\n"]
    for group, entries in formats.act_groups(items):
        heading, _symbol = formats.ACT_GROUPS[group]
        out.append(f"<div class=\"act-group\" data-group=\"{e(group)}\">\n<h3>{e(heading)} ({len(entries)})</h3>\n")
        if group == "run":
            out.append("<ul class=\"act\">\n")
            for item in entries:
                line = f"<li data-kind=\"{e(item['kind'])}\">{e(item['text'])}"
                if item.get("command"):
                    line += f" Restore it: <code>{e(item['command'])}</code>"
                out.append(line + "</li>\n")
            out.append("</ul>\n")
        else:
            out += [act_entry(item) for item in entries]
        out.append("</div>\n")
    out.append("</section>\n")
    return "".join(out)


# "Act on first" group -> the word each entry of it starts with (no emoji: a page must not need a font for it)
ACT_TAGS = {"blocked": "needs your answer", "failed": "failed", "stopped": "stopped"}


def sentence(text: object) -> str:
    """Escaped, ending with one full stop (a question keeps its mark)."""
    words = str(text or "").rstrip()
    return e(words if words.endswith((".", "?", "!", "…")) else words + ".")


def act_entry(item: dict) -> str:
    kind = item["kind"]
    tag = f"<span class=\"tag\">{e(ACT_TAGS[item['group']])}</span> "
    if item["story"]:
        title = f" <span class=\"muted\">{e(item['title'])}</span>" if item.get("title") else ""
        head = f"<h4>{tag}{e(item['story'])}{title}</h4>\n"
    else:
        head = f"<h4>{tag}{e(len(item['stories']))} stories not done</h4>\n"
    parts = [f"<article class=\"act-item {e(item['group'])}\" data-kind=\"{e(kind)}\" data-story=\"{e(item['story'] or '')}\">\n", head]
    if kind == "blocked":
        who = "Blocked by the agent" if item.get("by") == "agent" else "Marked blocked ([!]) in the plan"
        parts.append(f"<p>{sentence(who + (': ' + item['reason'] if item.get('reason') else ''))}</p>\n")
        if item.get("question"):
            parts.append(f"<blockquote class=\"question\"><p class=\"asks\">The agent asks:</p>\n<p>{e(item['question'])}</p></blockquote>\n")
        else:
            parts.append("<p>The agent left no question: its reason is all there is.</p>\n")
        parts.append(f"<p><strong>How to answer:</strong> {sentence(item['answer'])}</p>\n")
        if item.get("command"):
            parts.append(f"<p>Its work so far is saved: <code>{e(item['command'])}</code></p>\n")
    elif kind == "failed":
        parts.append(f"<p><strong>What failed:</strong> {sentence(item['what'])}</p>\n")
        if item.get("excerpt"):
            parts.append(f"<pre class=\"excerpt\">{e(item['excerpt'])}</pre>\n")
        if item.get("command"):
            parts.append(f"<p><strong>Restore its work:</strong> <code>{e(item['command'])}</code></p>\n")
        parts.append(f"<p>Then: {sentence(item['fix'])}</p>\n")
    elif kind == "budget":
        parts.append(f"<p>Stopped by its budget: it {sentence(item['reason'])}</p>\n")
        if item.get("what"):
            parts.append(f"<p>Its last iteration failed: {sentence(item['what'])}</p>\n")
        if item.get("excerpt"):
            parts.append(f"<pre class=\"excerpt\">{e(item['excerpt'])}</pre>\n")
        parts.append(f"<p><strong>What to raise:</strong> {e(item['raise'])}; then {sentence(item['then'])}</p>\n")
        if item.get("command"):
            parts.append(f"<p>Its work so far is saved: <code>{e(item['command'])}</code></p>\n")
    else:
        parts.append(f"<p>{sentence(item['text'])}</p>\n")
    parts.append("</article>\n")
    return "".join(parts)


def glance_section(model: dict) -> str:
    glance = model["glance"]
    tiles = formats.glance_rows(model, "not recorded (the agent's stream gave none)")
    kept = glance.get("usage_kept")
    if kept and kept.get("cost_usd") is not None and glance.get("usage") and kept["cost_usd"] != glance["usage"].get("cost_usd"):
        tiles.append(("Cost across resumed runs", formats.cost(kept["cost_usd"])))
    body = "".join(f"<div><dt>{e(name)}</dt><dd>{e(value)}</dd></div>\n" for name, value in tiles)
    return f"<section id=\"glance\">\n<h2>At a glance</h2>\n<dl class=\"glance\">\n{body}</dl>\n</section>\n"


def ticks(end_s: float, count: int = 6) -> list[float]:
    if end_s <= 0:
        return [0.0]
    return [end_s * i / (count - 1) for i in range(count)]


def axis_label(seconds: float, end_s: float) -> str:
    """A time on an axis: whole seconds once the axis spans ten or more."""
    return formats.duration(round(seconds) if end_s >= 10 else seconds)


def legend(categories: list[str]) -> str:
    items = "".join(f"<li><svg viewBox=\"0 0 12 12\" aria-hidden=\"true\"><rect class=\"c-{c}\" width=\"12\" height=\"12\" rx=\"2\"/></svg>"
                    f"{e(CATEGORIES[c][0])}</li>" for c in categories)
    return f"<ul class=\"legend\">{items}</ul>\n"


def timeline_section(model: dict) -> str:
    timeline = model["timeline"]
    lanes = timeline["lanes"]
    if not lanes:
        return "<section id=\"timeline\" class=\"chart\">\n<h2>Timeline</h2>\n<p class=\"calm\">No iteration ran.</p>\n</section>\n"
    end_s = max(timeline["end_s"], 1.0)
    span = WIDTH - LABEL_W - 10
    height = len(lanes) * LANE_H + AXIS_H

    def x(seconds: float) -> float:
        return LABEL_W + span * min(seconds, end_s) / end_s

    out = [f"<svg id=\"timeline-chart\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timeline: one row per story, one bar per iteration\">\n"]
    for tick in ticks(end_s):
        out.append(f"<line class=\"grid\" x1=\"{x(tick):.1f}\" y1=\"0\" x2=\"{x(tick):.1f}\" y2=\"{height - AXIS_H + 4}\"/>"
                   f"<text class=\"muted\" x=\"{x(tick):.1f}\" y=\"{height - 4}\" text-anchor=\"middle\">{e(axis_label(tick, end_s))}</text>\n")
    used: list[str] = []
    for index, lane in enumerate(lanes):
        top = index * LANE_H
        out.append(f"<g class=\"lane-row\" data-story=\"{e(lane['story'])}\">"
                   f"<text x=\"{LABEL_W - 8}\" y=\"{top + LANE_H / 2 + 4:.1f}\" text-anchor=\"end\">{e(short(lane['story'], 16))}</text>\n")
        for bar in lane["bars"]:
            left = x(bar["start_s"])
            width = max(3.0, x(bar["end_s"]) - left)
            if bar["category"] not in used:
                used.append(bar["category"])
            out.append(f"<rect class=\"bar c-{e(bar['category'])}\" data-category=\"{e(bar['category'])}\" x=\"{left:.1f}\" "
                       f"y=\"{top + (LANE_H - BAR_H) / 2:.1f}\" width=\"{width:.1f}\" height=\"{BAR_H}\" rx=\"2\">"
                       f"<title>{e(bar['label'])}</title></rect>\n")
        out.append("</g>\n")
    out.append("</svg>\n")
    order = [c for c in CATEGORIES if c in used]
    return f"<section id=\"timeline\" class=\"chart\">\n<h2>Timeline</h2>\n{''.join(out)}{legend(order)}</section>\n"


def cumulative_section(model: dict) -> str:
    series = model["cumulative"]
    measure = series["measure"]
    if measure is None or len(series["points"]) < 2:
        return ("<section id=\"cost\" class=\"chart\">\n<h2>Cumulative cost</h2>\n<p class=\"calm\">No cost or token figures in "
                "this run's records (they come from Claude Code's stream when the agent is Claude Code).</p>\n</section>\n")
    points = series["points"]
    end_s = max(max(p[0] for p in points), model["timeline"]["end_s"], 1.0)
    top = max(p[1] for p in points) or 1.0
    height, left, right, bottom = 200, 70, WIDTH - 10, 170
    label = formats.cost if measure == "cost_usd" else formats.tokens

    def xy(point: list[float]) -> tuple[float, float]:
        return left + (right - left) * point[0] / end_s, bottom - (bottom - 10) * point[1] / top

    steps = []
    previous_y = bottom
    for point in points:
        px, py = xy(point)
        steps.append(f"{px:.1f},{previous_y:.1f}")
        steps.append(f"{px:.1f},{py:.1f}")
        previous_y = py
    last_x = xy([end_s, 0])[0]
    steps.append(f"{last_x:.1f},{previous_y:.1f}")
    name = "cost" if measure == "cost_usd" else "tokens"
    out = [f"<svg id=\"cost-chart\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"cumulative {name} over time\">\n"]
    for fraction in (0, 0.5, 1):
        y = bottom - (bottom - 10) * fraction
        out.append(f"<line class=\"grid\" x1=\"{left}\" y1=\"{y:.1f}\" x2=\"{right}\" y2=\"{y:.1f}\"/>"
                   f"<text class=\"muted\" x=\"{left - 6}\" y=\"{y + 4:.1f}\" text-anchor=\"end\">"
                   f"{e(label(top * fraction if measure == 'cost_usd' else int(top * fraction)))}</text>\n")
    for tick in ticks(end_s):
        px = left + (right - left) * tick / end_s
        out.append(f"<text class=\"muted\" x=\"{px:.1f}\" y=\"{height - 8}\" text-anchor=\"middle\">{e(axis_label(tick, end_s))}</text>\n")
    out.append(f"<polygon class=\"area\" points=\"{left},{bottom} {' '.join(steps)} {last_x:.1f},{bottom}\"/>\n")
    out.append(f"<polyline class=\"curve\" points=\"{' '.join(steps)}\"/>\n")
    for point in points[1:]:
        px, py = xy(point)
        out.append(f"<circle class=\"c-waited point\" cx=\"{px:.1f}\" cy=\"{py:.1f}\" r=\"3\"><title>{e(formats.duration(point[0]))}: "
                   f"{e(label(point[1] if measure == 'cost_usd' else int(point[1])))}</title></circle>\n")
    out.append("</svg>\n")
    title = "Cumulative cost" if measure == "cost_usd" else "Cumulative tokens"
    return f"<section id=\"cost\" class=\"chart\">\n<h2>{title}</h2>\n{''.join(out)}</section>\n"


def story_time_section(model: dict) -> str:
    rows = model["story_time"]
    if not rows:
        return ""
    longest = max((r["seconds"] + r["wait_s"] for r in rows), default=0.0) or 1.0
    span = WIDTH - LABEL_W - 90
    height = len(rows) * LANE_H + 4
    out = [f"<svg id=\"story-time-chart\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"time per story\">\n"]
    for index, row in enumerate(rows):
        top = index * LANE_H + (LANE_H - BAR_H) / 2
        worked = span * row["seconds"] / longest
        waited = span * row["wait_s"] / longest
        out.append(f"<text x=\"{LABEL_W - 8}\" y=\"{top + BAR_H - 3:.1f}\" text-anchor=\"end\">{e(short(row['story'], 16))}</text>"
                   f"<rect class=\"story-bar c-{STATE_CATEGORY.get(row['state'], 'failed')}\" x=\"{LABEL_W}\" y=\"{top:.1f}\" width=\"{max(2.0, worked):.1f}\" height=\"{BAR_H}\" rx=\"2\">"
                   f"<title>{e(row['story'])}: {e(formats.duration(row['seconds']))} in iterations</title></rect>")
        if waited > 0:
            out.append(f"<rect class=\"story-wait c-waited\" x=\"{LABEL_W + worked:.1f}\" y=\"{top:.1f}\" width=\"{waited:.1f}\" height=\"{BAR_H}\" rx=\"2\">"
                       f"<title>{e(row['story'])}: waited {e(formats.duration(row['wait_s']))}</title></rect>")
        text = formats.duration(row["seconds"]) + (f" + {formats.duration(row['wait_s'])} waiting" if row["wait_s"] else "")
        out.append(f"<text class=\"muted\" x=\"{LABEL_W + worked + waited + 6:.1f}\" y=\"{top + BAR_H - 3:.1f}\">{e(text)}</text>\n")
    out.append("</svg>\n")
    return f"<section id=\"story-time\" class=\"chart\">\n<h2>Time per story</h2>\n{''.join(out)}</section>\n"


def stories_section(model: dict) -> str:
    by_number = {r["iteration"]: r for r in model["iterations"]}
    out = ["<section id=\"stories\">\n<h2>Stories</h2>\n"]
    if not model["stories"]:
        out.append("<p class=\"calm\">No story in this run's records.</p>\n")
    for story in model["stories"]:
        out.append(story_article(story, [by_number[n] for n in story["iterations"] if n in by_number], model["waits"]))
    out.append("</section>\n")
    return "".join(out)


def story_article(story: dict, rows: list[dict], waits: list[dict]) -> str:
    out = [f"<article class=\"story\" id=\"story-{e(story['id'])}\">\n<h3>{e(story['id'])}"
           f"{': ' + e(story['title']) if story['title'] else ''}<span class=\"state {e(story['state'])}\">{e(story['state'])}</span></h3>\n"]
    facts = [f"{len(rows)} iteration(s)", formats.duration(story["seconds"])]
    if story["cost_usd"] is not None:
        facts.append(formats.cost(story["cost_usd"]))
    if story["wait_s"]:
        facts.append(f"waited {formats.duration(story['wait_s'])}")
    out.append(f"<p class=\"sub\">{e(' · '.join(facts))}</p>\n")
    block = story["blocked"]
    if block:
        out.append(f"<p>Blocked{' by ' + e(block['by']) if block.get('by') else ''}: {e(block['reason'])}</p>\n")
        if block.get("question"):
            out.append(f"<blockquote>The agent asks: {e(block['question'])}</blockquote>\n")
    if story["commit"]:
        out.append(f"<p>Commit <code>{e(story['commit'][:12])}</code> {e(formats.diffstat_line(story['diffstat']))}</p>\n")
        paths = (story["diffstat"] or {}).get("paths") or []
        if paths:
            cells = "".join(f"<tr><td><code>{e(p['path'])}</code></td><td class=\"num\">"
                            f"{'binary' if p['added'] is None else '+' + e(p['added']) + ' -' + e(p['deleted'])}</td></tr>\n" for p in paths)
            out.append(f"<table class=\"diffstat\"><thead><tr><th>file</th><th>lines</th></tr></thead><tbody>\n{cells}</tbody></table>\n")
    if rows:
        out.append("<table class=\"iterations\"><thead><tr><th>#</th><th>result</th><th>time</th><th>cost</th><th>verify</th><th>what else</th></tr></thead><tbody>\n")
        for row in rows:
            cost = formats.cost(row["cost_usd"]) if row["cost_usd"] is not None else (formats.tokens(row["tokens"]) + " tok" if row["tokens"] is not None else "-")
            out.append(f"<tr><td class=\"num\">{e(row['iteration'])}</td><td><span class=\"result c-{e(row['category'])}\">{e(row['result'])}</span></td>"
                       f"<td class=\"num\">{e(formats.duration(row['duration_s']))}</td><td class=\"num\">{e(cost)}</td>"
                       f"<td>{e(formats.verify_text(row['verify']))}</td><td>{iteration_notes(row)}</td></tr>\n")
        out.append("</tbody></table>\n")
    mine = [w for w in waits if w["story"] == story["id"]]
    if mine:
        items = "".join(f"<li>waited {e(formats.duration(w['seconds']))} ({e(w['reason'])}{', until ' + e(w['until']) if w['until'] else ''})"
                        f"{': ' + e(w['detail']) if w['detail'] else ''}</li>" for w in mine)
        out.append(f"<ul class=\"notes\">{items}</ul>\n")
    out.append("</article>\n")
    return "".join(out)


def iteration_notes(row: dict) -> str:
    notes = []
    if row["error"]:
        notes.append(e(row["error"]))
    for problem in row["problems"]:
        notes.append(e(problem))
    if row["denial_count"]:
        denied = "".join(f"<li><code>{e(d['command'])}</code>: {e(d['reason'])}</li>" for d in row["denials"])
        notes.append(f"{e(row['denial_count'])} guard denial(s)" + (f"<ul class=\"notes\">{denied}</ul>" if denied else ""))
    rollback = row["rollback"]
    if rollback:
        if rollback["restored"]:
            notes.append(f"rolled back; work saved: <code>{e(rollback['command'])}</code>" if rollback["command"] else "rolled back")
        else:
            notes.append(f"rollback failed: {e(rollback['message'])}")
    if row["commit"]:
        notes.append(f"commit <code>{e(row['commit'][:12])}</code>")
    for hook in row["hooks"]:
        actions = ", ".join(f"{a['action']} {a['status']} (exit {a['exit']})" for a in hook["actions"])
        notes.append(f"{e(hook['point'])} hooks: {e(actions)}, {e(formats.duration(hook['duration_s']))}")
    return "<br>".join(notes) if notes else ""


def run_section(model: dict) -> str:
    items = [e(n) for n in model["notes"]]
    for hook in model["run_hooks"]:
        actions = ", ".join(f"{a['action']} {a['status']} (exit {a['exit']})" for a in hook["actions"])
        items.append(f"{e(hook['point'])} hooks: {e(actions)}, {e(formats.duration(hook['duration_s']))}"
                     + (f"; aborted: {e(hook['abort'])}" if hook["abort"] else ""))
    for request in model["merge_requests"]:
        items.append(f"merge requested by the agent in iteration {e(request['iteration'])}: {e(request['summary'])}")
    if not items:
        return ""
    body = "".join(f"<li>{item}</li>\n" for item in items)
    return f"<section id=\"run\">\n<h2>The run</h2>\n<ul class=\"notes\">\n{body}</ul>\n</section>\n"


def short(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
