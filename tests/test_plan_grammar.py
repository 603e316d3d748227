"""plan.md is parsed by hand (no `re` on `ralph-loop --dry-run`); the regular
expressions in ralph.plan_markdown define the grammar. Here the hand parser is held to
them: line by line and whole plans, on every text in the repository (tests,
README, docs, packaged templates) and on generated lines built from the characters
the grammar cares about."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralph import plan_markdown as plan
from ralph.plan import PlanError, Story
from ralph.plan_markdown import BOX_STATES, criterion_text, story_id, story_line
from ralph.plan_markdown import parse as parse_plan_md
from ralph.plan_markdown import rewrite_state as rewrite_plan_md_state

STORY_LINE = re.compile(plan.STORY_LINE)
STORY_ID = re.compile(plan.STORY_ID)
CRITERION_BULLET = re.compile(plan.CRITERION_BULLET)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reference_story_line(line: str) -> tuple[str, str] | None:
    match = STORY_LINE.match(line)
    if match is None or match.group("indent"):
        return None
    assert match.start("box") == plan.BOX_OFFSET
    return match.group("box"), match.group("rest")


def reference_story_id(rest: str) -> tuple[str, str] | None:
    match = STORY_ID.match(rest)
    return (match.group("id"), match.group("title")) if match else None


def reference_criterion(line: str) -> str | None:
    match = CRITERION_BULLET.match(line)
    return match.group("text") if match else None


def reference_parse(text: str, path: str = "plan.md") -> list[Story]:
    """parse_plan_md as it was written with the regular expressions."""
    stories: list[Story] = []
    seen: dict[str, int] = {}
    current: Story | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip("\ufeff") if number == 1 else raw
        match = STORY_LINE.match(line)
        if match and not match.group("indent"):
            box = match.group("box")
            if box not in BOX_STATES:
                raise PlanError(f"{path}:{number}: unknown checkbox [{box}]; use [ ] (to do), [x] (done) or [!] (blocked)")
            id_match = STORY_ID.match(match.group("rest"))
            if not id_match:
                raise PlanError(f"{path}:{number}: story line has no id; write it as `- [ ] US-001: title` (got {line.strip()!r})")
            sid = id_match.group("id")
            if sid in seen:
                raise PlanError(f"{path}:{number}: story {sid} already defined on line {seen[sid]}")
            seen[sid] = number
            current = Story(sid, id_match.group("title"), BOX_STATES[box], [], number, len(stories))
            stories.append(current)
            continue
        if current is not None and line.strip():
            crit = CRITERION_BULLET.match(line)
            if crit:
                current.criteria.append(crit.group("text"))
                continue
            current = None
    return stories


def outcome(parse, text: str) -> object:
    try:
        return [(s.id, s.title, s.state, s.criteria, s.line, s.priority) for s in parse(text)]
    except PlanError as e:
        return ("PlanError", str(e))


def assert_line_agrees(line: str) -> None:
    found = story_line(line)
    assert found == reference_story_line(line), line
    if found is not None:
        assert story_id(found[1]) == reference_story_id(found[1]), line
    assert story_id(line) == reference_story_id(line), line
    assert criterion_text(line) == reference_criterion(line), line


def corpus() -> list[str]:
    texts = []
    for top in ("tests", "ralph/data", "docs"):
        for directory, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            texts += [os.path.join(directory, f) for f in sorted(files)]
    texts.append(os.path.join(REPO, "README.md"))
    out = []
    for path in texts:
        try:
            with open(path, encoding="utf-8") as f:
                out.append(f.read())
        except (UnicodeDecodeError, OSError):
            continue
    return out


def test_corpus_parses_as_the_regular_expressions_do() -> None:
    texts = corpus()
    plans = 0
    for text in texts:
        for line in text.splitlines():
            assert_line_agrees(line)
            assert_line_agrees(line.strip())
            assert_line_agrees("  " + line.strip())
        assert outcome(parse_plan_md, text) == outcome(reference_parse, text)
        # the plans embedded in test sources and docs, one candidate per `- [` block
        for block in text.split('"""'):
            if "- [" in block:
                plans += 1
                assert outcome(parse_plan_md, block) == outcome(reference_parse, block)
    assert plans > 20  # the corpus really holds plans


@pytest.mark.parametrize("line", [
    "- [ ] US-001: title", "- [x] US-1:title  ", "* [X]\tA.b_c-d :  t ", "+ [!] a: ", "- [] US-003: empty box",
    "- [ ]US-001: no blank", "- [  ] US-001: two", "- []]", "- [] ", "- []", "- [", "-  [ ] x: y", " - [ ] x: y",
    "- [ ] 1US: digit first", "- [ ] US 001: space", "- [ ] ü: t", "- [[] a: b", "- []] a: b",
    "  - it works", "  * [ ] sub", "  - [x]done", "  - [ab] x", "\t+\t[]\tt", "  -", "  -  ", "   \u00a0x", "  \u00a0",
    "  -\u00a0x", "  - [ ]\u00a0x", "  - [ ] \u00a0x", "  - \u00a0x", "  - [ ] ", "  text  \t", "no indent", "", " ", "\t",
    "- [ ] a: b\u00a0", "- [ ] \u00a0a: b", "- [ ] a:\u00a0b", "- [ ] a\u00a0: b",
])
def test_lines_agree(line: str) -> None:
    assert_line_agrees(line)


# pieces that move the grammar (and whitespace that must not: \u00a0 is
# `\\s` but not `[ \\t]`), so that generated lines often come close to a match
PIECES = st.sampled_from([" ", "\t", "-", "*", "+", "[", "]", "[ ]", "[x]", "[]", "[!]", "[ab]", ":", "US-1", "a", ".", "1",
                          "\u00a0", "\u3000", "é", "\ufeff", "X", "- [ ] ", "  - ", "- ", "  - [ ] "])


@settings(max_examples=4000, deadline=None)
@given(st.lists(PIECES, max_size=9).map("".join))
def test_generated_lines_agree(line: str) -> None:
    assert_line_agrees(line)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["- [ ] US-1: a", "- [x] B: b", "- [!] C:", "  - crit", "  * [ ] sub", "text", "",
                                 "- [?] D: d", "- [ ] no id", "\u00a0", "\ufeff- [ ] E: e", " - [ ] F: f"]),
                max_size=8),
       st.sampled_from(["\n", "\r\n", "\r", "\u2028"]))
def test_generated_plans_agree(lines: list[str], newline: str) -> None:
    text = newline.join(lines)
    assert outcome(parse_plan_md, text) == outcome(reference_parse, text)


def test_rewrite_sets_the_box_the_parser_found() -> None:
    text = "\ufeff* []\tUS-1: a\n+ [x] B.2 : b \n"
    assert rewrite_plan_md_state(text, "US-1", "blocked") == "\ufeff* [!]\tUS-1: a\n+ [x] B.2 : b \n"
    assert rewrite_plan_md_state(text, "B.2", "todo") == "\ufeff* []\tUS-1: a\n+ [ ] B.2 : b \n"
