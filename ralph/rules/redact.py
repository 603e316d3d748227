"""The one redaction every string goes through before ralph writes it to disk
(hook log, test-run history, failures, events, run state, rollback metadata,
iteration logs). Pure: the literal secrets to redact besides the patterns
(the values of secret-looking environment variables, secret_values()) are an
argument; ralph.redaction supplies this process's.

`redact(value, limit=None, secrets=())`:
- a string comes back with secrets replaced by `[REDACTED:<kind>]`, lone
  surrogates replaced by U+FFFD (every file ralph writes is valid UTF-8), and,
  when `limit` is given, cut to `limit` characters *after* redacting, so a
  token straddling the cut never leaves half of itself behind. Only a bounded
  prefix of a huge string is scanned (`limit` + SCAN_MARGIN), so redaction is
  linear in what is kept, not in what was fed.
- a dict, list or tuple comes back with the same shape, every string in it
  (keys too) redacted and cut to `limit` (FIELD_LIMIT when not given), lists
  cut to MAX_ITEMS (`items`; None keeps them all) and nesting to MAX_DEPTH:
  a record for a log line.

Redaction never changes a document's structure: a line of the text that is a
JSON object or array (an iteration log's stream-json, an excerpt of one) is
parsed, its strings redacted and the values of its secret-named keys
replaced, and dumped again, so it stays JSON with the secret replaced inside
its string. Counts are not secrets: a JSON number, boolean or null after a
secret-looking key (`"maxOutputTokens":128000`) and names of counts
(`*tokens*`) are left alone.

What the agent is told may keep a command it wrote; what is logged may not.
"""
FIELD_LIMIT = 2000  # characters per string in a logged record, when the caller gives no limit
MAX_ITEMS = 50  # list entries kept per list in a logged record
MAX_DEPTH = 6
SCAN_MARGIN = 8192  # scanned past a cut, so a secret straddling it is still recognised whole
TRUNCATED = "…[cut]"

# Secret-looking names in `NAME=value`, `name: value`, `"name": "value"`, `--name value`.
# The match starts at the telling word (AWS_SECRET_ACCESS_KEY matches from
# SECRET): only the value is replaced, and no pattern scans back over a name.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|"
    r"auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|token(?!s)|credentials?|session[_\-]?key)"
    r"[A-Za-z0-9_]{0,20}"
)

# (name, pattern); each match is replaced by [REDACTED:name]. Ordered: the
# most specific first, so a key inside an assignment is named by its kind.
# Distinctive token prefixes are matched even when glued to a word
# (`keyAKIA...`); bounded quantifiers keep every pattern linear.
SECRET_PATTERNS = (
    ("private_key", r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{10,}"),
    ("openai_key", r"(?:sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|(?<![A-Za-z0-9_\-])sk-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{32,})"),
    ("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("gitlab_token", r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"(?:xox[abposre]-[A-Za-z0-9\-]{10,}|hooks\.slack\.com/services/[A-Za-z0-9/]{20,})"),
    ("aws_access_key", r"(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16,17}(?![0-9A-Z])"),  # key ids 20 characters, user/role ids 21
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("stripe_key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", r"(?i)\b(?:bearer|basic|token)\s+[A-Za-z0-9_\-.=+/~]{16,}"),
    ("url_credentials", r"(?<=://)[^/\s:@'\"]{1,200}:[^/\s@'\"]{1,500}(?=@)|(?<=://)[A-Za-z0-9_\-.~%]{20,200}(?=@)"),
    (
        "assignment",
        r"(?i)" + _SECRET_NAME + r"['\"]?(?:\s{0,5}[:=]\s{0,5}|[ \t]{1,5}(?=['\"]))"
        r"(?:\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|(?!\[REDACTED)[^\s'\",;&|)]{4,500})",
    ),
    ("cli_secret", r"(?i)(?<=-)" + _SECRET_NAME + r"(?:=|[ \t]{1,5})(?!-)(?:\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'|(?!\[REDACTED)[^\s'\"]{1,500})"),
)

# Every pattern above needs one of these (case-sensitive, then lowercase)
# substrings: a text with none of them is left alone without importing `re`,
# which the hot path otherwise never loads. A secret-looking name counts only
# with a `=`, `:` or quote in the text (`password "x"`), or as a `-name` option
# (paths such as src/keyboard.py stay on the fast path).
MARKERS = ("PRIVATE KEY", "AKIA", "ASIA", "AROA", "AIDA", "AIza", "eyJ")
LOWER_MARKERS = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "hooks.slack", "_live_", "_test_",
    "npm_", "bearer", "basic", "token", "://",
)
NAME_MARKERS = ("pass", "pwd", "secret", "key", "credential", "token")

_compiled: list = []


def _patterns() -> list:
    if not _compiled:
        # only for a text that might hold a secret (MARKERS): `re` (and enum) would cost every hook call
        import re

        _compiled.extend((name, re.compile(pattern)) for name, pattern in SECRET_PATTERNS)
    return _compiled


ENV_SECRET_NAME = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL")
ENV_SECRET_MIN = 8  # shorter values would redact ordinary words


def secret_values(environ: dict[str, str]) -> tuple[str, ...]:
    """Values of the environment's variables with secret-looking names
    (ANTHROPIC_API_KEY, DEPLOY_PASSWORD, ...), longest first: redacted wherever
    they appear, even printed bare by a test with no name or format to tell
    them by."""
    # one search per word over all the names at once: most environments have
    # no such name, and this runs on every hook call
    names = "\n".join(environ).upper()
    found = {value for word in ENV_SECRET_NAME if word in names
             for name, value in environ.items() if word in name.upper() and len(value) >= ENV_SECRET_MIN}
    return tuple(sorted(found, key=len, reverse=True))


def might_hold_secret(text: str) -> bool:
    if any(marker in text for marker in MARKERS):
        return True
    lowered = text.lower()
    if any(marker in lowered for marker in LOWER_MARKERS):
        return True
    named = [marker for marker in NAME_MARKERS if marker in lowered]
    if not named:
        return False
    return ("=" in text or ":" in text or '"' in text or "'" in text or "--" in text or " -" in text
            or any("-" + marker in lowered for marker in named))


def redact(value: object, limit: int | None = None, *, tail: bool = False, secrets: tuple[str, ...] = (),
           items: int | None = MAX_ITEMS) -> object:
    """Secrets out, then cut; see the module docstring. Other values pass
    through. `tail=True` keeps the end of a long string instead of its start
    (output excerpts); `secrets`: literal values to redact besides the
    patterns (secret_values()); `items=None` keeps every entry of every list
    and dict (a record that is read back, where a cut would change counts)."""
    if isinstance(value, str):
        return redact_text(value, limit, tail, secrets)
    if isinstance(value, (dict, list, tuple)):
        return _redact_data(value, FIELD_LIMIT if limit is None else limit, 0, secrets, items)
    return value


def redact_text(text: str, limit: int | None = None, tail: bool = False, secrets: tuple[str, ...] = ()) -> str:
    cut = limit is not None and len(text) > limit
    if limit is not None and len(text) > limit + SCAN_MARGIN:
        text = text[-(limit + SCAN_MARGIN):] if tail else text[: limit + SCAN_MARGIN]
    text = valid_unicode(text)
    if ("{" in text or "[" in text) and (might_hold_secret(text) or _holds_any(text, secrets)):
        text = _redact_json_lines(text, secrets)
    else:
        text = _redact_plain(text, secrets)
    if limit is not None and (cut or len(text) > limit):
        keep = max(0, limit - len(TRUNCATED))
        text = TRUNCATED + text[len(text) - keep:] if tail else text[:keep] + TRUNCATED
    return text


def _redact_plain(text: str, secrets: tuple[str, ...]) -> str:
    """The environment's secret values, then the patterns, over text as text."""
    for value in secrets:
        if value and value in text:
            text = text.replace(value, "[REDACTED:env]")
    if might_hold_secret(text):
        for name, pattern in _patterns():
            if name in ("assignment", "cli_secret"):
                text = pattern.sub(_redact_assignment_value, text)
            else:
                text = pattern.sub(f"[REDACTED:{name}]", text)
    return text


def _holds_any(text: str, secrets: tuple[str, ...]) -> bool:
    """One of the secret values is in the text, as it is or escaped in a JSON string."""
    return any(value and (value in text or _json_escaped(value) in text) for value in secrets)


def _json_escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _redact_json_lines(text: str, secrets: tuple[str, ...]) -> str:
    """Each line that is a JSON object or array redacted as a document
    (_redact_json_line); each run of other lines as text, together, so a
    private-key block spanning lines is still seen whole."""
    out: list[str] = []
    plain: list[str] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        kept = _redact_json_line(body, secrets) if body.lstrip()[:1] in ("{", "[") else None
        if kept is None:
            plain.append(line)
            continue
        if plain:
            out.append(_redact_plain("".join(plain), secrets))
            plain = []
        out.append(kept + line[len(body):])
    if plain:
        out.append(_redact_plain("".join(plain), secrets))
    return "".join(out)


def _redact_json_line(line: str, secrets: tuple[str, ...]) -> str | None:
    """A JSON document's line with its strings redacted, dumped again (as it
    was when nothing changed), or None when it is not JSON."""
    import json  # only for a text that might hold a secret, like `re`

    try:
        document = json.loads(line)  # an object or an array: the line starts with `{` or `[`
    except ValueError:
        return None
    redacted = _redact_json_value(document, secrets, False)
    if redacted == document:
        return line
    separator = line.find('":') + 1 or line.find(",")  # after the first key, or in an array of no object the first comma
    spaced = line[separator + 1:separator + 2] == " "  # Python's default separators, else JSON.stringify's
    return json.dumps(redacted, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))


def _redact_json_value(value: object, secrets: tuple[str, ...], secret_key: bool) -> object:
    """Strings redacted as text; a string under a secret-named key replaced
    whole; numbers, booleans and null kept (a count is not a secret)."""
    if isinstance(value, str):
        if secret_key and value and not value.startswith("[REDACTED"):
            return "[REDACTED:secret]"
        return _redact_plain(valid_unicode(value), secrets)
    if isinstance(value, dict):
        return {_redact_plain(valid_unicode(key), secrets): _redact_json_value(item, secrets, is_secret_key(key))
                for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_json_value(item, secrets, secret_key) for item in value]
    return value


_secret_key: list = []


def is_secret_key(key: str) -> bool:
    """A JSON key whose string value is a secret: a secret-looking name
    (`api_key`, `token`, `x-api-key`, `password`), or a header that carries
    one (`Authorization`, `Cookie`); not a count (`output_tokens`)."""
    if not _secret_key:
        import re

        _secret_key.append(re.compile(r"(?i)" + _SECRET_NAME + r"|authorization|cookie"))
    return _secret_key[0].search(key) is not None


def valid_unicode(text: str) -> str:
    """Lone surrogates (from undecodable bytes or a JSON `\\ud800`) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _redact_data(value: object, limit: int, depth: int, secrets: tuple[str, ...], items: int | None = MAX_ITEMS) -> object:
    if isinstance(value, str):
        return redact_text(value, limit, False, secrets)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        return "[nested too deep]"
    if isinstance(value, dict):
        out = {}
        for index, (key, item) in enumerate(value.items()):
            if items is not None and index >= items:
                out["…"] = f"{len(value) - items} more key(s)"
                break
            out[redact_text(str(key), 200, False, secrets)] = _redact_data(item, limit, depth + 1, secrets, items)
        return out
    if isinstance(value, (list, tuple)):
        kept = [_redact_data(item, limit, depth + 1, secrets, items) for item in (value if items is None else value[:items])]
        if items is not None and len(value) > items:
            kept.append(f"… {len(value) - items} more")
        return kept
    return value


_JSON_KEY_END = ('":', "':", '" :', "' :")


def _redact_assignment_value(match: object) -> str:
    """Keep the name and the `=` / `:`, replace only the value. After a
    quoted key (`"maxOutputTokens":128000`), a number, boolean, null, object
    or array is JSON's, not a secret: kept."""
    whole = match.group(0)
    for quote in ('"', "'"):
        if whole.endswith(quote) and whole.count(quote) >= 2:
            start = whole.rfind(quote, 0, len(whole) - 1)
            return whole[: start + 1] + "[REDACTED:secret]" + quote
    index = len(whole)
    while index > 0 and not whole[index - 1].isspace() and whole[index - 1] not in ":=":
        index -= 1
    value = whole[index:]
    if value.startswith("[REDACTED") or (_is_json_literal(value) and whole[:index].rstrip().endswith(_JSON_KEY_END)):
        return whole
    return whole[:index] + "[REDACTED:secret]"


def _is_json_literal(value: str) -> bool:
    """A JSON value that is not a string: a number, true/false/null (the
    closing brackets the pattern took along stripped), an object or array."""
    if value[:1] in ("{", "["):
        return True
    value = value.rstrip("}]")
    if value in ("true", "false", "null"):
        return True
    import re  # loaded already: this runs inside a pattern's substitution

    return re.fullmatch(r"-?[0-9]{1,40}(?:\.[0-9]{1,40})?(?:[eE][+-]?[0-9]{1,5})?", value) is not None
