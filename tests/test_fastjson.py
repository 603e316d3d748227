"""ralph.fastjson against the json module: its Python reader and writer (small
documents) and its C path (large ones) must give exactly what json gives, on
valid documents, on mangled ones, and on every payload the client sent."""
import glob
import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralph import fastjson

from .conftest import HOOK_INPUTS

STRICT_DUMPS = {"ensure_ascii": False, "separators": (",", ":")}

scalars = (st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text())
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
                         max_leaves=30)
# what makes the reader branch: quotes, escapes, surrogates, control characters, numbers' parts, whitespace
json_alphabet = st.sampled_from(list('{}[],:"\\/ubfnrt0123456789.eE+-aAfFdDcC \t\n\r\x00\x1f\x7fNIyl;#\'x')
                                + ["\\ud83d", "\\ude00", "\\u00e9", "\ud800", "é", "true", "null", "NaN", "Infinity"])


def same(a: object, b: object) -> bool:
    """Equal as JSON values (NaN equals NaN; 1 and 1.0 and True differ)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def outcome(reader, text: str) -> tuple:
    try:
        return ("ok", reader(text))
    except RecursionError:
        return ("too deep",)
    except ValueError:
        return ("error",)


def agree(text: str) -> None:
    expected = outcome(json.loads, text)
    for reader in (fastjson.loads_python, fastjson.loads_c, fastjson.loads):
        got = outcome(reader, text)
        if expected[0] == "too deep" and reader is fastjson.loads_python:
            continue  # loads() then hands it to the C scanner, checked below
        assert got[0] == expected[0], (reader.__name__, text, got, expected)
        if got[0] == "ok":
            assert same(got[1], expected[1]), (reader.__name__, text, got, expected)


@settings(max_examples=600, deadline=None)
@given(documents, st.booleans(), st.booleans())
def test_reads_what_json_writes(value: object, ascii_only: bool, indent: bool) -> None:
    agree(json.dumps(value, ensure_ascii=ascii_only, indent=1 if indent else None))


@settings(max_examples=1500, deadline=None)
@given(st.lists(json_alphabet, max_size=40).map("".join))
def test_accepts_and_rejects_exactly_what_json_does(text: str) -> None:
    agree(text)


@settings(max_examples=600, deadline=None)
@given(documents, st.data())
def test_mangled_documents(value: object, data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 2))
        text = text[:at] + data.draw(json_alphabet | st.just("")) + text[at + cut:]
    agree(text)


@settings(max_examples=600, deadline=None)
@given(documents)
def test_writes_what_json_writes(value: object) -> None:
    assert fastjson.dumps(value) == json.dumps(value, **STRICT_DUMPS)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40).map(lambda tail: "\n\"x\u2028" * ((fastjson.PYTHON_MAX_STRING - 20) // 4) + tail))
def test_long_strings_are_written_by_either_path_alike(text: str) -> None:
    # either side of the cut-over to the C encoder
    assert fastjson.dumps({"k": text, text: [text]}) == json.dumps({"k": text, text: [text]}, **STRICT_DUMPS)


def test_every_control_character_and_escape() -> None:
    for code in [*range(0x21), 0x7F, 0x2028, 0xD800, 0xDFFF]:
        c = chr(code)
        for text in ('"a' + c + 'b"', '{"k' + c + '": 1}', '["' + c + '"]', "1" + c, c + "[]"):
            agree(text)
        assert fastjson.dumps([c, {c: c}]) == json.dumps([c, {c: c}], **STRICT_DUMPS)
    for escape in "\"\\/bfnrtuxU0 ":
        for tail in ("", "0", "00e9", "d83d", "d83d\\ude00", "d83d\\u0041", "d83d\\ud83d", "D83D\\uDE00", "12g4", "+123"):
            agree('"\\' + escape + tail + '"')


def test_numbers_and_names() -> None:
    for token in ("0", "-0", "01", "-", "1.", "1.e5", ".5", "1e", "1e+", "1E-2", "1.5e3", "-1.5E+03", "1e400", "-1e400",
                  "123456789012345678901234567890", "0.0", "1.0e", "--1", "+1", "0x10", "1_000", "\u0661", "NaN", "-NaN",
                  "Infinity", "-Infinity", "infinity", "nan", "true", "True", "nul", "nulls", "falsey", "1 2", "9" * 5000):
        for text in (token, f"[{token}]", f'{{"a":{token}}}', f"[{token},{token}]", f"[{token};1]", f'{{"a":{token};"b":1}}'):
            agree(text)


def test_keys_json_converts() -> None:
    value = {1: "a", 2.5: "b", True: "c", None: "d", float("nan"): "e", -7: [float("-inf")]}
    assert fastjson.dumps(value) == json.dumps(value, **STRICT_DUMPS)
    for bad in ({(1, 2): 3}, {"a": object()}, {b"x": 1}):
        with pytest.raises(TypeError):
            fastjson.dumps(bad)
        with pytest.raises(TypeError):
            json.dumps(bad, **STRICT_DUMPS)


def test_deep_nesting_goes_to_the_c_scanner() -> None:
    # deeper than the Python reader's frames, shallower than the C scanner's limit
    text = "[" * 600 + "]" * 600
    assert outcome(fastjson.loads_python, text)[0] == "too deep"
    assert fastjson.loads(text) == json.loads(text)
    assert outcome(fastjson.loads, "[" * 100_000)[0] == outcome(json.loads, "[" * 100_000)[0]


def test_the_client_payloads_and_their_answers() -> None:
    paths = sorted(glob.glob(os.path.join(HOOK_INPUTS, "*.json")))
    assert len(paths) > 10
    for path in paths:
        with open(path, "rb") as f:
            raw = f.read()
        assert same(fastjson.loads(raw), json.loads(raw)), path
        assert same(fastjson.loads_python(raw.decode()), json.loads(raw)), path
        assert fastjson.dumps(json.loads(raw)) == json.dumps(json.loads(raw), **STRICT_DUMPS), path


def test_which_path_a_document_takes() -> None:
    small = json.dumps({"tool_input": {"command": "npm test"}})
    many_escapes = json.dumps({"content": "a\n" * (fastjson.PYTHON_MAX_STEPS + 1)})
    large = json.dumps({"content": "x" * (fastjson.PYTHON_MAX_CHARS + 1)})
    calls = []
    original = fastjson.loads_c
    try:
        fastjson.loads_c = lambda text: calls.append(len(text)) or original(text)
        for text in (small, many_escapes, large):
            assert fastjson.loads(text) == json.loads(text)
    finally:
        fastjson.loads_c = original
    assert calls == [len(many_escapes), len(large)]
