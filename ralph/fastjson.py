"""JSON for the hot path, without `json` (which imports `re`, enum,
functools...: milliseconds on every hook call).

Small documents (a PreToolUse payload, every answer and log line) are read
and written right here in Python: for them that is cheaper than loading the C
accelerator `_json`, a shared library whose load alone costs a hook about a
fortieth of a Python start. Larger ones, or ones with many tokens or escapes,
go through `_json`: the same C scanner and encoder the json module uses,
without its Python wrappers. Either way the result is exactly that of
json.loads / json.dumps(ensure_ascii=False, separators=(",", ":"))
(tests/test_fastjson.py checks both paths against json, as hypothesis
generates documents and mangles them).
"""

_WHITESPACE = " \t\n\r"

# Python reads a document cheaply when it is short and has few tokens and
# escapes; the C scanner's cost is mostly its one-off load.
PYTHON_MAX_CHARS = 16 * 1024
PYTHON_MAX_STEPS = 400  # escapes, commas and colons: each costs a loop turn here
PYTHON_MAX_STRING = 4096  # longer strings are escaped by the C encoder


# json's JSONDecodeError is a ValueError, and callers catch ValueError: a class
# of our own would cost every hook call its creation
JSONDecodeError = ValueError


def loads(data: bytes | str) -> object:
    if isinstance(data, (bytes, bytearray)):
        text = bytes(data).decode("utf-8-sig" if data[:3] == b"\xef\xbb\xbf" else "utf-8")
    else:
        text = data
    if len(text) <= PYTHON_MAX_CHARS and text.count("\\") + text.count(",") + text.count(":") <= PYTHON_MAX_STEPS:
        try:
            return loads_python(text)
        except RecursionError:
            pass  # deeper than Python's frames allow: the C scanner nests further
    return loads_c(text)


def dumps(value: object) -> str:
    """Compact JSON, non-ASCII kept as is (ensure_ascii=False)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)


# ---- the C accelerator, loaded on first use ----

_c_parts: list = []


def _c() -> tuple:
    """(scan_once, encode, encode_string) from _json, or from json where the
    accelerator is missing (another Python implementation)."""
    if not _c_parts:
        try:
            import _json

            scan_once = _json.make_scanner(_scan_context())
            encode = _json.make_encoder(None, None, _json.encode_basestring, None, ":", ",", False, False, True)
            _c_parts.extend((scan_once, lambda value: "".join(encode(value, 0)), _json.encode_basestring))
        except ImportError:  # pragma: no cover - CPython always has it
            import json

            decoder = json.JSONDecoder()
            _c_parts.extend((decoder.scan_once, lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")),
                             json.encoder.py_encode_basestring))
    return tuple(_c_parts)


def _constant(name: str) -> float:
    # NaN / Infinity / -Infinity, as json.loads accepts them
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_memo: dict = {}


def _scan_context() -> object:
    """What _json.make_scanner reads off a JSONDecoder (a class made here, on
    first use of the C scanner: creating a class costs every hook call)."""

    class ScanContext:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = staticmethod(_constant)
        memo = _memo

    return ScanContext()


def loads_c(text: str) -> object:
    scan_once = _c()[0]
    length = len(text)
    start = _skip(text, 0)
    try:
        value, end = scan_once(text, start)
    except StopIteration as e:
        raise JSONDecodeError(f"Expecting value at char {e.value}") from None
    finally:
        _memo.clear()
    end = _skip(text, end)
    if end != length:
        raise JSONDecodeError(f"Extra data at char {end}")
    return value


# ---- the Python reader: the grammar of _json's scanner, step for step ----


def loads_python(text: str) -> object:
    value, end = _value(text, _skip(text, 0))
    end = _skip(text, end)
    if end != len(text):
        raise JSONDecodeError(f"Extra data at char {end}")
    return value


def _skip(text: str, i: int) -> int:
    length = len(text)
    while i < length and text[i] in _WHITESPACE:
        i += 1
    return i


_NAMED = (("null", None), ("true", True), ("false", False), ("NaN", float("nan")), ("Infinity", float("inf")),
          ("-Infinity", float("-inf")))


def _value(text: str, i: int) -> tuple[object, int]:
    c = text[i:i + 1]
    if c == '"':
        return _string(text, i + 1)
    if c == "{":
        return _object(text, i + 1)
    if c == "[":
        return _array(text, i + 1)
    for name, value in _NAMED:
        if c == name[0] and text.startswith(name, i):
            return value, i + len(name)
    return _number(text, i)


_DIGITS = "0123456789"


def _number(text: str, i: int) -> tuple[object, int]:
    start = i
    length = len(text)
    if i < length and text[i] == "-":
        i += 1
    if i < length and text[i] == "0":
        i += 1
    elif i < length and "1" <= text[i] <= "9":
        i += 1
        while i < length and text[i] in _DIGITS:
            i += 1
    else:
        raise JSONDecodeError(f"Expecting value at char {start}")
    is_float = False
    if i + 1 < length and text[i] == "." and text[i + 1] in _DIGITS:
        is_float = True
        i += 2
        while i < length and text[i] in _DIGITS:
            i += 1
    if i < length and text[i] in "eE":
        e = i + 1
        if e < length and text[e] in "+-":
            e += 1
        digits = e
        while e < length and text[e] in _DIGITS:
            e += 1
        if e > digits:  # an exponent without digits is not part of the number
            is_float = True
            i = e
    number = text[start:i]
    return (float(number) if is_float else int(number)), i


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")


def _hex4(text: str, i: int) -> int:
    digits = text[i:i + 4]
    if len(digits) != 4 or not _HEX.issuperset(digits):
        raise JSONDecodeError(f"Invalid \\uXXXX escape at char {i - 1}")
    return int(digits, 16)


def _string(text: str, i: int) -> tuple[str, int]:
    """The string whose opening quote is just before i."""
    chunks = []
    start = i - 1
    quote = -1
    while True:
        if quote < i:  # the next quote; an escaped one is skipped past below
            quote = text.find('"', i)
            if quote < 0:
                raise JSONDecodeError(f"Unterminated string starting at char {start}")
        backslash = text.find("\\", i, quote)
        end = quote if backslash < 0 else backslash
        chunk = text[i:end]
        if chunk and min(chunk) < " ":
            raise JSONDecodeError(f"Invalid control character at char {i + chunk.index(min(chunk))}")
        chunks.append(chunk)
        if backslash < 0:
            return "".join(chunks), quote + 1
        escape = text[backslash + 1:backslash + 2]
        if escape == "u":
            code = _hex4(text, backslash + 2)
            i = backslash + 6
            if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", i):
                low = _hex4(text, i + 2)
                if 0xDC00 <= low <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            chunks.append(chr(code))
        elif escape in _ESCAPES:
            chunks.append(_ESCAPES[escape])
            i = backslash + 2
        else:
            raise JSONDecodeError(f"Invalid \\escape at char {backslash}")


def _object(text: str, i: int) -> tuple[dict, int]:
    result: dict = {}
    i = _skip(text, i)
    if text[i:i + 1] == "}":
        return result, i + 1
    while True:
        if text[i:i + 1] != '"':
            raise JSONDecodeError(f"Expecting property name enclosed in double quotes at char {i}")
        key, i = _string(text, i + 1)
        i = _skip(text, i)
        if text[i:i + 1] != ":":
            raise JSONDecodeError(f"Expecting ':' delimiter at char {i}")
        value, i = _value(text, _skip(text, i + 1))
        result[key] = value
        done, i = _after_member(text, i, "}")
        if done:
            return result, i


def _after_member(text: str, i: int, closing: str) -> tuple[bool, int]:
    """After a member: (True, past `closing`) where the container ends,
    else (False, where the next member starts)."""
    i = _skip(text, i)
    c = text[i:i + 1]
    if c == closing:
        return True, i + 1
    if c != ",":
        raise JSONDecodeError(f"Expecting ',' delimiter at char {i}")
    return False, _skip(text, i + 1)


def _array(text: str, i: int) -> tuple[list, int]:
    result: list = []
    i = _skip(text, i)
    if text[i:i + 1] == "]":
        return result, i + 1
    while True:
        value, i = _value(text, i)
        result.append(value)
        done, i = _after_member(text, i, "]")
        if done:
            return result, i


# ---- the Python writer: what _json's encoder writes ----

_STRING_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f", ord("\n"): "\\n",
                   ord("\r"): "\\r", ord("\t"): "\\t"}
_STRING_ESCAPES.update({c: f"\\u{c:04x}" for c in range(0x20) if c not in _STRING_ESCAPES})


def _quote(text: str) -> str:
    if len(text) > PYTHON_MAX_STRING:
        return _c()[2](text)
    return '"' + text.translate(_STRING_ESCAPES) + '"'


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True or key is False or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _encode(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_quote(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        out.append("{")
        for key, item in value.items():
            out += (_quote(_key(key)), ":")
            _encode(item, out)
            out.append(",")
        _close(out, "}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for item in value:
            _encode(item, out)
            out.append(",")
        _close(out, "]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _close(out: list[str], bracket: str) -> None:
    """End a container: its last item's comma becomes the bracket."""
    if out[-1] == ",":
        out[-1] = bracket
    else:
        out.append(bracket)
