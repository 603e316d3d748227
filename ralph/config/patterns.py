"""The kinds that need `re`: regular expressions ([tests] fail_patterns) and
host names ([sandbox] allowed_domains). Imported by name (ralph.config.schema
KINDS) only when a table sets such a key."""
import re

from ralph.config.value import ValueProblem, strings

MAX_REGEX_CHARS = 300
# a host name, wildcard or IP, with an optional port; no scheme, no path
HOST = re.compile(r"^(\*|\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


def regexes(value: object, limits: object, key: str) -> tuple:
    """A list of regular expressions of at most MAX_REGEX_CHARS each."""
    items = strings(value, limits, key)
    for item in items:
        if len(item) > MAX_REGEX_CHARS:
            raise ValueProblem(f"pattern longer than {MAX_REGEX_CHARS} characters: {item[:40]!r}...")
        try:
            re.compile(item)
        except re.error as e:
            raise ValueProblem(f"{item!r} is not a valid regular expression ({e}); fix or remove it") from None
    return items


def hosts(value: object, limits: object, key: str) -> tuple:
    """A list of host names as the client's sandbox takes them, stripped."""
    items = strings(value, limits, key)
    for item in items:
        if not HOST.match(item.strip()):
            raise ValueProblem(f"{item!r} is not a host; write a name as the sandbox takes it, with no scheme or path: "
                               '"pypi.org", "*.example.com", "10.0.0.1" or "registry.local:8080"')
    return tuple(item.strip() for item in items)
