"""Redact obvious secrets before a prompt is written to the log. Pure."""
from __future__ import annotations

import re

# (name, pattern); each match is replaced by [REDACTED:name]. Ordered: the
# most specific first, so a key inside an assignment is named by its kind.
SECRET_PATTERNS = (
    ("private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{10,}"),
    ("openai_key", r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", r"(?i)\bbearer\s+[A-Za-z0-9_\-.=+/]{16,}"),
    ("url_credentials", r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
    (
        "assignment",
        r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9_]*(?:password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token))"
        r"\s*[:=]\s*['\"]?(?!\[REDACTED)[^\s'\"]{6,}",
    ),
)

_compiled: list[tuple[str, re.Pattern[str]]] = []


def redact(text: str) -> str:
    if not _compiled:
        _compiled.extend((name, re.compile(pattern)) for name, pattern in SECRET_PATTERNS)
    for name, pattern in _compiled:
        if name == "assignment":
            text = pattern.sub(_redact_assignment_value, text)
        else:
            text = pattern.sub(f"[REDACTED:{name}]", text)
    return text


def _redact_assignment_value(match: re.Match[str]) -> str:
    whole = match.group(0)
    for i, ch in enumerate(whole):
        if ch in ":=":
            head = whole[: i + 1]
            rest = whole[i + 1 :]
            spaces = len(rest) - len(rest.lstrip(" \t'\""))
            return head + rest[:spaces] + "[REDACTED:secret]"
    return "[REDACTED:secret]"
