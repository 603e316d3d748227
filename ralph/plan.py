"""Plans: the stories a loop works through, in one of two formats.

plan.md (ralph.plan_markdown): one story per top-level checkbox line,
acceptance criteria as the indented lines under it:

    - [ ] US-001: Add a login page
      - shows a form
      - rejects a wrong password
    - [x] US-002: Done already
    - [!] US-003: Blocked (budget exhausted; skipped by the loop)

prd.json (ralph.plan_prd): {"userStories": [{"id", "title", "priority",
"passes", "acceptanceCriteria"?}]}. Stories run in priority order (lower
first; file order breaks ties).

The format module is chosen by the file's name from FORMATS and imported only
then: reading a plan.md loads no JSON and no regular expressions.
"""
import os

from ralph.plugins import load
from ralph.state.files import atomic_write
from ralph.story import PlanError, Story

STATES = ("todo", "done", "blocked")
# file name ending -> the module that reads and rewrites that format; each has
# parse(text, path) -> list[Story] and rewrite_state(text, story_id, state, path) -> str
FORMATS = {".json": "ralph.plan_prd", "": "ralph.plan_markdown"}


def plan_format(path: str) -> object:
    """The format module for a plan file, imported now."""
    return load(FORMATS[".json"] if path.endswith(".json") else FORMATS[""])


def parse_stories(text: str, path: str) -> list[Story]:
    """The stories of a plan's text, read as its file name says (prd.json or plan.md)."""
    return plan_format(path).parse(text, path)


def load_stories(path: str) -> list[Story]:
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return parse_stories(f.read(), path)


def story_state(path: str, story_id: str) -> str | None:
    """'todo' / 'done' / 'blocked' for the story in that plan file, None when
    the file or story cannot be read."""
    if not path or not os.path.exists(path):
        return None
    try:
        for story in load_stories(path):
            if story.id == story_id:
                return story.state
    except (OSError, PlanError):
        return None
    return None


# --- Rewriting a story's state (ralph-loop marks stories done / blocked) ---


def set_story_state(path: str, story_id: str, state: str) -> bool:
    """Mark one story todo / done / blocked in its plan file, in place.

    Only that story's checkbox (plan.md) or its passes/blocked fields
    (prd.json) change; every other byte, line endings included, stays as it
    was. The file is replaced atomically. Returns False when the story already
    had that state. Raises PlanError when the story is not in the file.
    """
    if state not in STATES:
        raise ValueError(f"unknown story state {state!r}; use one of {sorted(STATES)}")
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "surrogateescape")
    new_text = plan_format(path).rewrite_state(text, story_id, state, path)
    if new_text == text:
        return False
    atomic_write(path, new_text.encode("utf-8", "surrogateescape"))
    return True
