"""Plans: the stories a loop works through.

plan.md: one story per top-level checkbox line, acceptance criteria as the
indented lines under it:

    - [ ] US-001: Add a login page
      - shows a form
      - rejects a wrong password
    - [x] US-002: Done already
    - [!] US-003: Blocked (budget exhausted; skipped by the loop)

prd.json: {"userStories": [{"id", "title", "priority", "passes", "acceptanceCriteria"?}]}.
Stories run in priority order (lower first; file order breaks ties).
"""
import os

# The plan.md grammar, one line at a time. These regular expressions define
# it; the functions below match exactly what they match (tests/test_plan_grammar.py
# proves it against them), by hand, because importing `re` costs
# `ralph-loop --dry-run` more than all the rest of its work.
STORY_LINE = r"^(?P<indent>[ \t]*)[-*+] \[(?P<box>[^\]]?)\][ \t]+(?P<rest>.*?)[ \t]*$"
STORY_ID = r"^(?P<id>[A-Za-z][A-Za-z0-9_.-]*)[ \t]*:[ \t]*(?P<title>.*)$"
CRITERION_BULLET = r"^[ \t]+(?:[-*+](?:[ \t]+\[[^\]]?\])?[ \t]+)?(?P<text>\S.*?)[ \t]*$"
BOX_STATES = {" ": "todo", "": "todo", "x": "done", "X": "done", "!": "blocked"}
BOX_OFFSET = 3  # where a story line's box starts: `- [` is three characters

_BLANK = " \t"
_BULLETS = "-*+"
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ID_CHARS = _ASCII_LETTERS | frozenset("0123456789_.-")


def _skip_blanks(line: str, index: int) -> int:
    while index < len(line) and line[index] in _BLANK:
        index += 1
    return index


def _box_end(line: str, index: int) -> int:
    """Index of the `]` closing a checkbox whose `[` is just before
    `index` (`\\[[^\\]]?\\]`: zero or one character inside), -1 when none."""
    if index < len(line) and line[index] == "]":
        return index
    if index + 1 < len(line) and line[index + 1] == "]":
        return index + 1
    return -1


def story_line(line: str) -> tuple[str, str] | None:
    """(box, rest) of a line STORY_LINE matches with an empty indent (a
    story; an indented one is a criterion), None for any other line. The box
    starts at BOX_OFFSET. The line holds no line break (str.splitlines)."""
    if len(line) < 4 or line[0] not in _BULLETS or line[1] != " " or line[2] != "[":
        return None
    close = _box_end(line, BOX_OFFSET)
    if close < 0 or close + 1 >= len(line) or line[close + 1] not in _BLANK:
        return None
    return line[BOX_OFFSET:close], line[close + 1:].strip(_BLANK)


def story_id(rest: str) -> tuple[str, str] | None:
    """(id, title) of a story line's rest, as STORY_ID matches it; None when it has no id."""
    if not rest or rest[0] not in _ASCII_LETTERS:
        return None
    end = 1
    while end < len(rest) and rest[end] in _ID_CHARS:
        end += 1
    colon = _skip_blanks(rest, end)
    if colon >= len(rest) or rest[colon] != ":":
        return None
    return rest[:end], rest[colon + 1:].lstrip(_BLANK)


def criterion_text(line: str) -> str | None:
    """The text of an indented line, as CRITERION_BULLET matches it (a
    bullet and a checkbox in front are dropped); None when it does not match."""
    start = _skip_blanks(line, 0)
    if start == 0 or start == len(line) or line[start].isspace():  # `\S` is `not str.isspace()`
        return None
    if line[start] in _BULLETS:
        after_bullet = _skip_blanks(line, start + 1)
        if after_bullet > start + 1 and after_bullet < len(line):
            if line[after_bullet] == "[":  # `- [ ] text`: the checkbox goes too, when text follows it
                close = _box_end(line, after_bullet + 1)
                text = _skip_blanks(line, close + 1) if close >= 0 else -1
                if close >= 0 and text > close + 1 and text < len(line) and not line[text].isspace():
                    return line[text:].rstrip(_BLANK)
            if not line[after_bullet].isspace():
                return line[after_bullet:].rstrip(_BLANK)
    return line[start:].rstrip(_BLANK)


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


def parse_plan_md(text: str, path: str = "plan.md") -> list[Story]:
    stories: list[Story] = []
    seen: dict[str, int] = {}
    current: Story | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip("\ufeff") if number == 1 else raw
        story = story_line(line)
        if story is not None:
            box, rest = story
            if box not in BOX_STATES:
                raise PlanError(f"{path}:{number}: unknown checkbox [{box}]; use [ ] (to do), [x] (done) or [!] (blocked)")
            found = story_id(rest)
            if found is None:
                raise PlanError(
                    f"{path}:{number}: story line has no id; write it as `- [ ] US-001: title` (got {line.strip()!r})"
                )
            id_, title = found
            if id_ in seen:
                raise PlanError(f"{path}:{number}: story {id_} already defined on line {seen[id_]}")
            seen[id_] = number
            current = Story(id_, title, BOX_STATES[box], [], number, len(stories))
            stories.append(current)
            continue
        if current is not None and line.strip():
            text = criterion_text(line)
            if text is not None:
                current.criteria.append(text)
                continue
            current = None  # an unindented line ends the story's criteria
    return stories


def parse_prd_json(text: str, path: str = "prd.json") -> list[Story]:
    import json  # json is imported by the functions that read prd.json: a plan.md never needs it

    try:
        data = json.loads(text)
    except ValueError as e:
        line = getattr(e, "lineno", "?")
        raise PlanError(f"{path}:{line}: not valid JSON: {e}") from None
    stories_raw = data.get("userStories") if isinstance(data, dict) else None
    if not isinstance(stories_raw, list):
        raise PlanError(f"{path}: expected an object with a \"userStories\" list")
    stories: list[Story] = []
    for index, item in enumerate(stories_raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise PlanError(f"{path}: userStories[{index}] needs a string \"id\"")
        title = item.get("title")
        criteria = item.get("acceptanceCriteria")
        priority = item.get("priority")
        state = "done" if item.get("passes") is True else ("blocked" if item.get("blocked") is True else "todo")
        stories.append(
            Story(
                item["id"],
                title if isinstance(title, str) else "",
                state,
                [c for c in criteria if isinstance(c, str)] if isinstance(criteria, list) else [],
                index + 1,
                priority if isinstance(priority, (int, float)) and not isinstance(priority, bool) else index,
            )
        )
    return stories


def parse_stories(text: str, path: str) -> list[Story]:
    """The stories of a plan's text, read as its file name says (prd.json or plan.md)."""
    if path.endswith(".json"):
        return parse_prd_json(text, path)
    return parse_plan_md(text, path)


def load_stories(path: str) -> list[Story]:
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return parse_stories(f.read(), path)


def story_state(path: str, story_id: str) -> str | None:
    """'todo' / 'done' / 'blocked' for the story in that plan file, None when
    the file or story cannot be read."""
    if not path or not os.path.exists(path):
        return None
    try:
        for story in load_stories(path):
            if story.id == story_id:
                return story.state
    except (OSError, PlanError):
        return None
    return None


# --- Rewriting a story's state (ralph-loop marks stories done / blocked) ---

PLAN_BOXES = {"todo": " ", "done": "x", "blocked": "!"}


def set_story_state(path: str, story_id: str, state: str) -> bool:
    """Mark one story todo / done / blocked in its plan file, in place.

    Only that story's checkbox (plan.md) or its passes/blocked fields
    (prd.json) change; every other byte, line endings included, stays as it
    was. The file is replaced atomically. Returns False when the story already
    had that state. Raises PlanError when the story is not in the file.
    """
    if state not in PLAN_BOXES:
        raise ValueError(f"unknown story state {state!r}; use one of {sorted(PLAN_BOXES)}")
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "surrogateescape")
    if path.endswith(".json"):
        new_text = rewrite_prd_state(text, story_id, state, path)
    else:
        new_text = rewrite_plan_md_state(text, story_id, state, path)
    if new_text == text:
        return False
    from ralph.state.files import atomic_write

    atomic_write(path, new_text.encode("utf-8", "surrogateescape"))
    return True


def rewrite_plan_md_state(text: str, story_id: str, state: str, path: str = "plan.md") -> str:
    """Pure: plan.md text with one story's checkbox set to `state`."""
    stories = {story.id: story for story in parse_plan_md(text, path)}
    story = stories.get(story_id)
    if story is None:
        raise PlanError(f"{path}: no story {story_id} (stories: {', '.join(stories) or 'none'})")
    # keepends splitting is the parser's own line splitting, so line numbers agree
    lines = text.splitlines(keepends=True)
    raw = lines[story.line - 1]
    body = raw.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    ending = raw[len(body):]
    bom = "\ufeff" if story.line == 1 and body.startswith("\ufeff") else ""
    found = story_line(body[len(bom):])
    if found is None:  # cannot happen: the parser matched this line
        raise PlanError(f"{path}:{story.line}: story line changed while rewriting")
    start = BOX_OFFSET + len(bom)
    end = start + len(found[0])
    lines[story.line - 1] = body[:start] + PLAN_BOXES[state] + body[end:] + ending
    return "".join(lines)


def _story_object_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the objects in the top-level "userStories" array, in order."""
    import json
    import re

    decoder = json.JSONDecoder()
    key = re.compile(r'"userStories"\s*:\s*\[')
    spans: list[tuple[int, int]] = []
    for match in key.finditer(text):
        index = match.end()
        spans = []
        while index < len(text):
            while index < len(text) and text[index] in " \t\r\n,":
                index += 1
            if index >= len(text) or text[index] == "]":
                break
            try:
                _, end = decoder.raw_decode(text, index)
            except ValueError:
                spans = []
                break
            spans.append((index, end))
            index = end
        if spans:
            return spans
    return spans


def rewrite_prd_state(text: str, story_id: str, state: str, path: str = "prd.json") -> str:
    """Pure: prd.json text with one story's "passes" (and "blocked") set for
    `state`, editing only those values in place; a missing key is inserted
    after "passes" (or re-serialised as a last resort) with the file's indent."""
    import json
    import re

    stories = parse_prd_json(text, path)
    index = next((i for i, story in enumerate(stories) if story.id == story_id), None)
    if index is None:
        raise PlanError(f"{path}: no story {story_id} (stories: {', '.join(s.id for s in stories) or 'none'})")
    wanted = {"passes": state == "done", "blocked": state == "blocked"}
    spans = _story_object_spans(text)
    if len(spans) != len(stories):
        return _redump_prd(text, index, wanted)
    start, end = spans[index]
    obj = text[start:end]
    current = json.loads(obj)
    for name, value in wanted.items():
        if current.get(name) is value or (name == "blocked" and not value and name not in current):
            continue
        literal = "true" if value else "false"
        field = re.compile(r'("%s"\s*:\s*)(true|false|null|"[^"]*"|-?\d+(?:\.\d+)?)' % name)
        found = [m for m in field.finditer(obj) if _depth_at(obj, m.start()) == 1]
        if len(found) == 1:
            m = found[0]
            obj = obj[: m.start(2)] + literal + obj[m.end(2):]
            continue
        anchor = [m for m in re.finditer(r'"(?:passes|id)"\s*:\s*(?:true|false|null|"(?:[^"\\]|\\.)*")', obj) if _depth_at(obj, m.start()) == 1]
        if not anchor:
            return _redump_prd(text, index, wanted)
        m = anchor[0] if anchor[0].group(0).startswith('"passes"') or len(anchor) == 1 else anchor[-1]
        line_start = obj.rfind("\n", 0, m.start()) + 1
        indent = obj[line_start:m.start()]
        newline = "\r\n" if "\r\n" in obj else "\n"
        if indent.strip() == "" and line_start > 0:
            insertion = f",{newline}{indent}\"{name}\": {literal}"
        else:
            insertion = f", \"{name}\": {literal}"
        obj = obj[: m.end()] + insertion + obj[m.end():]
    new_text = text[:start] + obj + text[end:]
    json.loads(new_text)  # never write a file we broke
    return new_text


def _depth_at(text: str, position: int) -> int:
    depth = 0
    in_string = False
    index = 0
    while index < position:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        index += 1
    return depth


def _redump_prd(text: str, index: int, wanted: dict) -> str:
    import json
    import re

    data = json.loads(text)
    story = data["userStories"][index]
    story["passes"] = wanted["passes"]
    if wanted["blocked"] or "blocked" in story:
        story["blocked"] = wanted["blocked"]
    indent_match = re.search(r"\n([ \t]+)\S", text)
    indent = indent_match.group(1) if indent_match else 2
    out = json.dumps(data, indent=indent, ensure_ascii=False)
    if "\r\n" in text:
        out = out.replace("\n", "\r\n")
    trailing = text[len(text.rstrip("\r\n")):]
    return out + trailing
