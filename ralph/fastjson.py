"""JSON for the hot path, straight from the C accelerator `_json`.

`import json` pulls in json.decoder, which imports `re` (and with it enum,
functools, collections...): a few milliseconds on every hook call, more than
the rest of the call. The C scanner and encoder are the same code json uses;
this module only skips the Python wrappers. Falls back to `json` where the
accelerator is missing (another Python implementation).
"""
try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None

_WHITESPACE = " \t\n\r"


def _constant(name: str) -> float:
    # NaN / Infinity / -Infinity, as json.loads accepts them
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _ScanContext:
    """What _json.make_scanner reads off a JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)
    memo: dict = {}


class JSONDecodeError(ValueError):
    pass


if _json is not None:
    _scan_once = _json.make_scanner(_ScanContext())
    _encode = _json.make_encoder(None, None, _json.encode_basestring, None, ":", ",", False, False, True)
    _encode_ascii_keys = None

    def loads(data: bytes | str) -> object:
        if isinstance(data, (bytes, bytearray)):
            text = bytes(data).decode("utf-8-sig" if data[:3] == b"\xef\xbb\xbf" else "utf-8")
        else:
            text = data
        length = len(text)
        start = 0
        while start < length and text[start] in _WHITESPACE:
            start += 1
        try:
            value, end = _scan_once(text, start)
        except StopIteration as e:
            raise JSONDecodeError(f"Expecting value at char {e.value}") from None
        finally:
            _ScanContext.memo.clear()
        while end < length and text[end] in _WHITESPACE:
            end += 1
        if end != length:
            raise JSONDecodeError(f"Extra data at char {end}")
        return value

    def dumps(value: object) -> str:
        """Compact JSON, non-ASCII kept as is (ensure_ascii=False)."""
        return "".join(_encode(value, 0))

else:  # pragma: no cover
    import json as _stdlib_json

    JSONDecodeError = _stdlib_json.JSONDecodeError  # type: ignore[misc]  # noqa: F811

    def loads(data: bytes | str) -> object:
        return _stdlib_json.loads(data)

    def dumps(value: object) -> str:
        return _stdlib_json.dumps(value, ensure_ascii=False, separators=(",", ":"))
