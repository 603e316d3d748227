"""The lifecycle hooks' small parsers run without `re` (`ralph-loop --dry-run`
validates every hook): `when` tokens, template placeholders, and the
Locator's header and key lines. Each is held to the regular expression that
defines it, on every text in the repository's tests and docs and on
generated input built from the characters that matter."""
from __future__ import annotations

import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ralph.config import locate
from ralph.loop.lifecycle import condition, template
from ralph.loop.lifecycle import config as hook_config

TOKEN = re.compile(condition.TOKEN, re.VERBOSE)
PLACEHOLDER = re.compile(template.PLACEHOLDER)
HEADER = re.compile(locate.HEADER)
KEY = re.compile(locate.KEY)
# a dotted key (`loop . "max_iterations" = 3`) and its parts, which dotted_key() joins with dots
KEY_PART = r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)"
DOTTED_KEY = re.compile(r"^\s*((?:%s)(?:\s*\.\s*(?:%s))+)\s*=" % (KEY_PART, KEY_PART))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus_lines() -> list[str]:
    lines: list[str] = []
    paths = [os.path.join(REPO, "README.md")]
    for top in ("tests", "ralph/data", "docs"):
        for directory, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            paths += [os.path.join(directory, f) for f in sorted(files)]
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for line in text.splitlines():
            lines += [line, line.strip()]
            # TOML and conditions as they sit inside Python strings
            lines += [part for part in re.split(r"\\n|'''|\"\"\"", line) if part]
    return sorted(set(lines))


CORPUS = corpus_lines()


def assert_token_agrees(source: str, position: int) -> None:
    m = TOKEN.match(source, position)
    assert condition.token_at(source, position) == ((m.lastgroup, m.end()) if m else None), (source, position)


def assert_tokens_agree(source: str) -> None:
    for position in range(len(source)):
        assert_token_agrees(source, position)


def assert_placeholders_agree(text: str) -> None:
    for index in range(len(text) + 1):
        m = PLACEHOLDER.match(text, index)
        expected = (m.end(), m.group(1) or m.group(2), m.group(1) is not None) if m else None
        assert template.placeholder_at(text, index) == expected, (text, index)


def assert_lines_agree(line: str) -> None:
    header = HEADER.match(line)
    assert locate.header_name(line) == (header.group(2) if header else None), line
    key = KEY.match(line)
    assert locate.key_name(line) == (key.group(1) if key else None), line
    assert locate.dotted_name(line) == re.sub(r"\s*\.\s*", ".", line), line
    dotted = DOTTED_KEY.match(line)
    parts = [a or b or c for a, b, c in re.findall(KEY_PART, dotted.group(1))] if dotted else []
    assert locate.dotted_key(line) == (".".join(parts) if dotted else None), line
    assert hook_config.flag_name(line) == "RALPH_HOOK_" + re.sub(r"[^A-Za-z0-9]", "_", line).upper() + "_ENABLED", line


def test_corpus_agrees() -> None:
    conditions = 0
    for line in CORPUS:
        assert_lines_agree(line)
        if "{" in line:
            assert_placeholders_agree(line)
        if "$" in line or "when" in line:
            assert_tokens_agree(line)
        conditions += "${" in line and ("==" in line or "&&" in line)
    assert conditions > 10 and any(HEADER.match(line) for line in CORPUS)  # the corpus really holds hooks


def test_classes_are_str_methods() -> None:
    # the hand parsers read `\s` as str.isspace() and `\d` as str.isdecimal()
    import sys

    space, digit = re.compile(r"\s"), re.compile(r"\d")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (space.match(char) is not None) == char.isspace(), hex(code)
        assert (digit.match(char) is not None) == char.isdecimal(), hex(code)


CONDITION_PIECES = st.sampled_from([" ", "\t", "\n", "\u00a0", "1", "12", "٣", "²", ".", "$", "{", "}", "${A}", "$b_1", "'", '"',
                                    "\\", "\\'", "&", "&&", "|", "||", "=", "==", "!", "!=", "<", "<=", ">", ">=", "%", "(", ")",
                                    "true", "x", "_", "é", "#", "-"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(CONDITION_PIECES, max_size=10).map("".join))
def test_generated_tokens_agree(source: str) -> None:
    assert_tokens_agree(source)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["\\", "n", "\n", "'", "a", "\\\\", "é"]), max_size=8).map("".join))
def test_unescape_agrees(text: str) -> None:
    assert condition.unescape(text) == re.sub(r"\\(.)", r"\1", text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["-", "1", "٣", "²", ".", " ", "x", "0"]), max_size=6).map("".join))
def test_number_agrees(text: str) -> None:
    stripped = text.strip()
    expected = int(stripped) if re.fullmatch(r"-?\d+", stripped) else float(stripped) if re.fullmatch(r"-?\d+\.\d+", stripped) else None
    assert condition.number(text) == expected


PLACEHOLDER_PIECES = st.sampled_from(["{{", "}}", "{", "}", "${", "$", " ", "\t", "\u00a0", "a", "B_1", "1", "é", "x", "'", '"'])


@settings(max_examples=3000, deadline=None)
@given(st.lists(PLACEHOLDER_PIECES, max_size=10).map("".join))
def test_generated_placeholders_agree(text: str) -> None:
    assert_placeholders_agree(text)


LINE_PIECES = st.sampled_from(["[", "]", "[[", "]]", " ", "\t", "\u00a0", "hooks", ".", "pre_iteration", '"', "'", "#", "x",
                               "=", "key", "-", "1", "é", "a b", "a.b", " . "])


@settings(max_examples=4000, deadline=None)
@given(st.lists(LINE_PIECES, max_size=9).map("".join))
def test_generated_lines_agree(line: str) -> None:
    assert_lines_agree(line)


def test_edge_lines_agree() -> None:
    for line in ["[hooks]", " [[hooks.pre_iteration]] # c", "[[]]", "[ ]", "[  ]  ", "[[a]x", "[[a]]]", "[a] ]", "[\u00a0]",
                 "[[ hooks . x ]]", "[a.b. c]", '"key" = 1', "'k-1'=2", "key", "= 1", 'k"=1', '"k" "= 1', "\u00a0key\u00a0= 1",
                 "[a]#", "[[a]] b", "[[ ]]", "[[\t]]"]:
        assert_lines_agree(line)
    for source in ["${ITERATION} % 2 == 0 && ${STAGE} == 'build'", "'a\\'b'", "'a\\\nb'", "'a\\", "$1", "${1}", "${a", "& |",
                   "1.5.2", "1.", "٣.٣", "!(x)"]:
        assert_tokens_agree(source)
