"""What each Claude Code release supports (ralph.claude.protocol's table) and
the settings text edits install and uninstall make. The table against the
releases' own code and runs: tests/e2e/test_e2e_clients.py."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ralph.claude.protocol import (
    CLIENT_EVENTS,
    EVENT_SINCE,
    HOOK_ENTRIES,
    client_release,
    events_of,
    fails_closed,
    persists_long_output,
    reason_from_last_hook,
    skips_unknown_events,
)
from ralph.claude.settings_text import edited
from ralph.commands.install import is_ours, merged, settings_text, wanted_hooks, without_ours

PROGRAM = "/opt/ralph/bin/ralph"


def test_the_release_is_read_from_what_claude_version_prints() -> None:
    assert client_release("2.0.77 (Claude Code)") == (2, 0, 77)
    assert client_release("1.0.128 (Claude Code)\n") == (1, 0, 128)
    assert client_release("Claude Code") is None and client_release("") is None


def test_each_release_gets_the_events_it_knows() -> None:
    assert "PostToolUseFailure" not in events_of((1, 0, 128)) and "PostToolUseFailure" not in events_of((2, 0, 55))
    assert set(HOOK_ENTRIES) - {"PreSkillShellCommand"} <= events_of((2, 0, 56))
    assert set(HOOK_ENTRIES) <= events_of((2, 1, 332)) and "PreSkillShellCommand" not in events_of((2, 1, 331))
    assert events_of((1, 0, 52)) & set(HOOK_ENTRIES) == {"PreToolUse", "PostToolUse", "Stop"}
    assert events_of((1, 0, 22)) == frozenset()
    assert events_of(None) == frozenset(CLIENT_EVENTS) == frozenset(EVENT_SINCE)
    assert len(events_of((2, 1, 330))) == 33 and "PreSkillShellCommand" in events_of((2, 1, 332))


def test_the_other_differences_by_release() -> None:
    assert not skips_unknown_events((2, 1, 100)) and skips_unknown_events((2, 1, 101))
    assert not fails_closed((2, 1, 294)) and fails_closed((2, 1, 295))
    assert not reason_from_last_hook((2, 0, 29)) and reason_from_last_hook((2, 0, 30)) and reason_from_last_hook((2, 1, 104))
    assert not reason_from_last_hook((2, 1, 105)) and not reason_from_last_hook(None)
    assert not persists_long_output((2, 1, 44)) and persists_long_output((2, 1, 45))


def test_install_for_an_old_release_leaves_out_what_it_does_not_know() -> None:
    hooks = wanted_hooks(PROGRAM, events_of((1, 0, 128)))
    assert set(hooks) == {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"}
    # an entry of ours for an event the release lacks goes too
    data = {"hooks": wanted_hooks(PROGRAM)}
    assert set(merged(data, PROGRAM, events_of((1, 0, 128)))["hooks"]) == set(hooks)


# ---- the text edits ----------------------------------------------------------------

keys = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
scalars = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.text(alphabet="ab ,:{}[]\"\\é", max_size=6))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3), max_leaves=8)
other_handler = st.fixed_dictionaries({"type": st.just("command"), "command": st.sampled_from(["other check", "lint --fast"])})
ours = st.builds(lambda sub: {"type": "command", "command": f"/old/bin/ralph {sub}", "timeout": 30},
                 st.sampled_from(["pre-tool", "post-tool", "stop"]))
groups = st.lists(st.fixed_dictionaries({"hooks": st.lists(st.one_of(other_handler, ours), min_size=1, max_size=3)},
                                        optional={"matcher": st.sampled_from(["Bash", "Edit|Write", ""])}), max_size=3)
settings_objects = st.builds(lambda extra, hooks: {**extra, **({"hooks": hooks} if hooks is not None else {})},
                             st.dictionaries(keys, values, max_size=3),
                             st.one_of(st.none(), st.dictionaries(st.sampled_from(["PreToolUse", "Stop", "Notification"]), groups, max_size=3)))
layouts = st.sampled_from([None, 2, 4, "\t"])


@settings(max_examples=150, deadline=None)
@given(settings_objects, layouts)
def test_text_edits_mean_exactly_what_install_and_uninstall_want(data: dict, indent) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    installed = edited(text, is_ours, wanted_hooks(PROGRAM))
    assert json.loads(installed) == merged(data, PROGRAM)
    removed = edited(installed, is_ours, {})
    assert json.loads(removed) == without_ours(merged(data, PROGRAM))


@settings(max_examples=100, deadline=None)
@given(settings_objects, layouts)
def test_what_is_not_ours_keeps_its_text(data: dict, indent) -> None:
    """A file holding none of ours: install then a removal of ours gives back
    its text, apart from a "hooks" or an event list that held nothing but ours
    (an empty one the file had goes with ours; the install record restores
    such a file byte for byte when nothing else changed it)."""
    data = without_ours(data)
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    installed = settings_text(text, merged(data, PROGRAM), wanted_hooks(PROGRAM))
    back = settings_text(installed, without_ours(merged(data, PROGRAM)), {})
    if data.get("hooks") and all(data["hooks"].values()):
        assert back == text
    else:
        assert json.loads(back) == without_ours(merged(data, PROGRAM))
