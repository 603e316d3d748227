"""plan.md: the checkbox grammar, read and rewritten by hand (see ralph.plan).

A story is a top-level checkbox line `- [ ] US-001: title`; its acceptance
criteria are the indented lines under it. Only the story's checkbox changes
when its state is rewritten: every other byte stays as it was.
"""
from ralph.story import PlanError, Story

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


PLAN_BOXES = {"todo": " ", "done": "x", "blocked": "!"}


def parse(text: str, path: str = "plan.md") -> list[Story]:
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


def rewrite_state(text: str, story_id: str, state: str, path: str = "plan.md") -> str:
    """Pure: plan.md text with one story's checkbox set to `state`."""
    stories = {story.id: story for story in parse(text, path)}
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
