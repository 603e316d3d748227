"""prd.json: {"userStories": [...]}, read and rewritten (see ralph.plan).

Rewriting a story's state edits only its "passes" (and "blocked") values in
place, keeping the file's layout; a value that is missing is inserted.
"""
import json
import re

from ralph.story import PlanError, Story

# a story's fields besides "id": (name, is its value right, what it must be)
FIELDS = (
    ("title", lambda value: isinstance(value, str), "must be a string"),
    ("priority", lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
     "must be a number (lower runs first)"),
    ("passes", lambda value: isinstance(value, bool), "must be true or false"),
    ("blocked", lambda value: isinstance(value, bool), "must be true or false"),
    ("acceptanceCriteria", lambda value: isinstance(value, list) and all(isinstance(c, str) for c in value),
     'must be a list of strings, e.g. ["shows a form"]'),
)


def parse(text: str, path: str = "prd.json") -> list[Story]:
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
            where = _field_line(text, index, "id" if isinstance(item, dict) and "id" in item else None)
            raise PlanError(f"{path}{where}: userStories[{index}] needs a string \"id\"")
        for name, right, what in FIELDS:
            if name in item and not right(item[name]):
                got = json.dumps(item[name], ensure_ascii=False)
                raise PlanError(f"{path}{_field_line(text, index, name)}: story {item['id']}: \"{name}\" {what}, got {got[:80]}")
        title = item.get("title", "")
        priority = item.get("priority", index)
        state = "done" if item.get("passes") is True else ("blocked" if item.get("blocked") is True else "todo")
        stories.append(Story(item["id"], title, state, list(item.get("acceptanceCriteria", [])), index + 1, priority))
    return stories


def _field_line(text: str, index: int, name: str | None) -> str:
    """":<line>" of the field `name` of the index-th story (of the story
    itself when name is None or the field is not found), "" when the story
    cannot be found in the text."""
    spans = _story_object_spans(text)
    if index >= len(spans):
        return ""
    start, end = spans[index]
    position = start
    if name is not None:
        obj = text[start:end]
        found = [m.start() for m in re.finditer(r'"%s"\s*:' % re.escape(name), obj) if _depth_at(obj, m.start()) == 1]
        if found:
            position = start + found[-1]  # JSON's last one wins
    return f":{text.count(chr(10), 0, position) + 1}"


def _story_object_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the objects in the top-level "userStories" array, in order."""
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


def rewrite_state(text: str, story_id: str, state: str, path: str = "prd.json") -> str:
    """Pure: prd.json text with one story's "passes" (and "blocked") set for
    `state`, editing only those values in place; a missing key is inserted
    after "passes" (or re-serialised as a last resort) with the file's indent."""
    stories = parse(text, path)
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
