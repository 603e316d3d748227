"""What test scripts print when no known runner is named: a bare
`N passed, N failed` line (`plain`), and the failure lines of the script
wrappers that ran them, make and the npm / yarn / pnpm / bun script runners
(`wrapper`): inner runner summaries decide first."""
from __future__ import annotations

from ralph.rules.outcome.reading import FAIL, PASS, ZERO, Finding, Text, cut

# patterns: (literal that must be in the text, regex), as ralph.rules.outcome.reading.Text reads them
PLAIN_SUMMARY = ("passed", r"^(?:\w{1,30}: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?[ \t]*$")
MAKE_ERROR = ("***", r"^g?make(?:\[\d+\])?: \*\*\* [^\n]{0,200}Error (\d+)")
NPM_ERROR = ("rror", r"^(?:npm (?:ERR!|error) (?:Test failed|code ELIFECYCLE|Lifecycle script [^\n]{0,100} failed|command failed)|error Command failed with exit code \d+|[ \t]*ELIFECYCLE[ \t]+(?:Test|Command) failed|[ \t]*ERR_PNPM_\w+|error: script \"[^\n]{0,60}\" exited with code \d+)")


def read_plain(t: Text) -> Finding | None:
    m = t.last(PLAIN_SUMMARY)
    if m is None:
        return None
    passed, failed = int(m.group(1)), int(m.group(2))
    status = FAIL if failed else (PASS if passed else ZERO)
    return Finding("unknown", status, m.start(), [cut(m.group(0))])


def read_wrapper_error(t: Text) -> Finding | None:
    hits = t.find(MAKE_ERROR) + t.find(NPM_ERROR)
    if not hits:
        return None
    hits.sort(key=lambda m: m.start())
    return Finding("wrapper", FAIL, hits[-1].start(), [cut(hits[-1].group(0))])


# runner -> summary reader, and -> failure-marker reader (read when no summary is visible)
READERS = {"plain": read_plain, "wrapper": read_wrapper_error}
MARKERS = {}
