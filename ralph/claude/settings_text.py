"""Edits of a settings file's JSON text that leave every other byte alone:
take hook handlers out (and the groups, event lists and `hooks` object that
held nothing else), append matcher groups to an event's list. What a user
(or another tool) wrote keeps its order, spacing and indentation; new text
is indented like its neighbours.

The caller compares json.loads of the result with the object it meant to
write and falls back to a fresh rendering when they differ (a file with
duplicate keys, say), so a text edit can never write the wrong settings.
"""
from __future__ import annotations

import json
from collections.abc import Callable

WHITESPACE = " \t\n\r"
_scalar = json.JSONDecoder()


class Node:
    """A JSON value's span [start, end) in the text; containers list their
    members as (key or None, member start, value node)."""

    __slots__ = ("start", "end", "kind", "members")

    def __init__(self, start: int, end: int, kind: str, members: list | None = None) -> None:
        self.start, self.end, self.kind, self.members = start, end, kind, members or []

    def get(self, key: str) -> Node | None:
        found = [node for name, _, node in self.members if name == key]
        return found[-1] if found else None  # json.loads keeps the last of duplicate keys


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in WHITESPACE:
        i += 1
    return i


def parse(text: str) -> Node:
    """The span tree of valid JSON text (ValueError otherwise)."""
    node, end = _value(text, _skip(text, 0))
    if _skip(text, end) != len(text):
        raise ValueError("extra data after the JSON value")
    return node


def _value(text: str, i: int) -> tuple[Node, int]:
    if i >= len(text):
        raise ValueError("unexpected end of text")
    opener = text[i]
    if opener not in "{[":
        _, end = _scalar.raw_decode(text, i)
        return Node(i, end, "value"), end
    closer = "}" if opener == "{" else "]"
    members = []
    j = _skip(text, i + 1)
    if j < len(text) and text[j] == closer:
        return Node(i, j + 1, "object" if opener == "{" else "array"), j + 1
    while True:
        start = j
        key = None
        if opener == "{":
            key, j = json.decoder.scanstring(text, j + 1)
            j = _skip(text, j)
            if text[j] != ":":
                raise ValueError(f"expected ':' at {j}")
            j = _skip(text, j + 1)
        value, j = _value(text, j)
        members.append((key, start, value))
        j = _skip(text, j)
        if j < len(text) and text[j] == ",":
            j = _skip(text, j + 1)
            continue
        if j < len(text) and text[j] == closer:
            return Node(i, j + 1, "object" if opener == "{" else "array", members), j + 1
        raise ValueError(f"expected ',' or {closer!r} at {j}")


# ---- layout -------------------------------------------------------------------


def indent_unit(text: str) -> str | None:
    """The file's indentation step ("  ", "\\t", ...); None for one-line JSON."""
    widths = []
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            widths.append(line[: len(line) - len(stripped)])
    if "\n" not in text.strip():
        return None
    if not widths:
        return "  "
    return min(widths, key=len)


def line_indent(text: str, position: int) -> str:
    """The whitespace that starts the line holding `position`."""
    line_start = text.rfind("\n", 0, position) + 1
    end = line_start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[line_start:end]


def render_value(value: object, unit: str | None, indent: str) -> str:
    """`value` as JSON laid out like the file: its indentation step, and
    every line after the first starting at `indent`."""
    if unit is None:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    rendered = json.dumps(value, ensure_ascii=False, indent=unit)
    return rendered.replace("\n", "\n" + indent)


# ---- rebuilding a container ------------------------------------------------------------


def rebuilt(text: str, node: Node, replaced: list[str | None], added: list[str], unit: str | None) -> str:
    """The text of container `node` with member i's text replaced by
    replaced[i] (None: removed) and the `added` member texts appended.
    Separators and whitespace come from the original where it has them."""
    open_at, close_at = node.start, node.end - 1
    spans = [(start, value.end) for _, start, value in node.members]
    kept = [(i, t) for i, t in enumerate(replaced) if t is not None]
    if not kept and not added:
        return text[open_at] + text[close_at]
    if spans:
        leading = text[open_at + 1: spans[0][0]]
        trailing = text[spans[-1][1]: close_at]
    else:
        outer = line_indent(text, open_at)
        leading = "" if unit is None else "\n" + outer + unit
        trailing = "" if unit is None else "\n" + outer
    separators = [text[spans[i][1]: spans[i + 1][0]] for i in range(len(spans) - 1)]
    # the separator for appended members: the file's own between members, else from the leading space
    new_separator = separators[-1] if separators else ("," + leading if "\n" in leading else ", ")
    pieces = []
    for position, (i, piece) in enumerate(kept):
        pieces.append(piece)
        if position < len(kept) - 1:
            pieces.append(separators[i] if i < len(separators) else new_separator)
    for piece in added:
        if pieces:
            pieces.append(new_separator)
        pieces.append(piece)
    return text[open_at] + leading + "".join(pieces) + trailing + text[close_at]


def member_indent(text: str, node: Node, unit: str | None) -> str:
    """The indentation of a member of `node` (a new one goes there too)."""
    if node.members:
        return line_indent(text, node.members[-1][1])
    return line_indent(text, node.start) + (unit or "")


def key_separator(text: str, node: Node) -> str:
    """What stands between a key and its value in this object (": ")."""
    for _, start, value in node.members:
        _, end = json.decoder.scanstring(text, start + 1)
        return text[end: value.start]
    return ": "


# ---- the edit -------------------------------------------------------------------------------


def edited(text: str, is_ours: Callable[[object], bool], add: dict[str, list[dict]]) -> str:
    """`text` minus every hook handler `is_ours` accepts, and the groups,
    event lists and `hooks` object that held nothing else; plus the groups in
    `add` appended to their events' lists. Raises ValueError on text that is
    not a settings object."""
    root = parse(text)
    if root.kind != "object":
        raise ValueError("not a JSON object")
    unit = indent_unit(text)
    hooks = root.get("hooks")
    if hooks is None:
        if not add:
            return text
        indent = member_indent(text, root, unit)
        member = json.dumps("hooks") + key_separator(text, root) + render_value(add, unit, indent)
        return text[: root.start] + rebuilt(text, root, [text[s: v.end] for _, s, v in root.members], [member], unit) + text[root.end:]
    if hooks.kind != "object":
        raise ValueError('"hooks" is not an object')
    touched = False
    event_texts: list[str | None] = []
    for event, start, groups in hooks.members:
        new_value, removed = _event_list(text, groups, is_ours, add.get(event, []), unit)
        touched = touched or removed
        if removed and new_value is None:
            event_texts.append(None)
        else:
            event_texts.append(text[start: groups.start] + (new_value if new_value is not None else text[groups.start: groups.end]))
    present = {event for event, _, _ in hooks.members}
    indent = member_indent(text, hooks, unit)
    separator = key_separator(text, hooks)
    new_events = [json.dumps(event) + separator + render_value(groups, unit, indent)
                  for event, groups in add.items() if event not in present]
    if touched and not new_events and not any(t is not None for t in event_texts):
        hooks_text = None  # it held only ours: it goes, as without_ours() drops it
    else:
        hooks_text = rebuilt(text, hooks, event_texts, new_events, unit)
    root_texts = []
    for _, start, value in root.members:
        if value is hooks:
            root_texts.append(None if hooks_text is None else text[start: hooks.start] + hooks_text)
        else:
            root_texts.append(text[start: value.end])
    return text[: root.start] + rebuilt(text, root, root_texts, [], unit) + text[root.end:]


def _event_list(text: str, groups: Node, is_ours: Callable[[object], bool], add: list[dict], unit: str | None) -> tuple[str | None, bool]:
    """(new text of one event's list or None when it goes, whether ours were taken out)."""
    if groups.kind != "array":
        return (None, False) if not add else _raise('an event\'s hooks must be a list')
    removed = False
    group_texts: list[str | None] = []
    for _, start, group in groups.members:
        handlers = group.get("hooks") if group.kind == "object" else None
        if handlers is None or handlers.kind != "array":
            group_texts.append(text[start: group.end])
            continue
        kept = []
        for _, h_start, handler in handlers.members:
            ours = is_ours(json.loads(text[handler.start: handler.end]))
            kept.append(None if ours else text[h_start: handler.end])
        if all(k is not None for k in kept):
            group_texts.append(text[start: group.end])
            continue
        removed = True
        if not any(k is not None for k in kept):
            group_texts.append(None)
            continue
        new_handlers = rebuilt(text, handlers, kept, [], unit)
        group_texts.append(text[start: handlers.start] + new_handlers + text[handlers.end: group.end])
    indent = member_indent(text, groups, unit)
    added = [render_value(group, unit, indent) for group in add]
    if removed and not added and not any(t is not None for t in group_texts):
        return None, True
    if not removed and not added:
        return text[groups.start: groups.end], False
    return rebuilt(text, groups, group_texts, added, unit), removed


def _raise(message: str):
    raise ValueError(message)
