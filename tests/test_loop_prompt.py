"""Prompt rendering without `re` or shlex (`ralph-loop --dry-run` renders a
prompt): held to the regular expression that defines a placeholder, to
re.sub's rendering and to shlex.quote."""
from __future__ import annotations

import os
import re
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralph.config.schema import ConfigError
from ralph.loop import prompt
from ralph.loop.prompt import PLACEHOLDERS, placeholders, render
from ralph.quoting import format_command
from ralph.quoting import shell_quote
from ralph.run import failures
from ralph.run.failures import failure_context

PLACEHOLDER = re.compile(prompt.PLACEHOLDER)


def reference_render(template: str, where: str, values: dict[str, str]) -> str:
    """render() as it was written with re."""
    def substitute(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            line = template.count("\n", 0, match.start()) + 1
            raise ConfigError(f"{where}:{line}: unknown placeholder {{{{{name}}}}}; known: {', '.join(PLACEHOLDERS)}")
        return values[name]

    text = PLACEHOLDER.sub(substitute, template)
    hook_output = values.get("hook_output", "")
    if hook_output and not any(m.group(1) == "hook_output" for m in PLACEHOLDER.finditer(template)):
        text = text.rstrip("\n") + "\n\n" + hook_output
    return re.sub(r"\n{3,}\Z", "\n", text)


def outcome(function, *args: object) -> object:
    try:
        return function(*args)
    except ConfigError as e:
        return ("ConfigError", str(e))


def assert_agrees(template: str, values: dict[str, str]) -> None:
    assert placeholders(template) == [(m.start(), m.end(), m.group(1)) for m in PLACEHOLDER.finditer(template)], template
    assert outcome(render, template, "t.md", values) == outcome(reference_render, template, "t.md", values), template


VALUES = {"story_id": "US-1", "plan": "- [ ] US-1: a\n", "hook_output": "", "a": "A"}


@pytest.mark.parametrize("name", sorted(prompt.DEFAULT_TEMPLATES.values()))
def test_packaged_templates_render_as_before(name: str) -> None:
    path = os.path.join(os.path.dirname(prompt.__file__), "..", "data", name)
    with open(path, encoding="utf-8") as f:
        template = f.read()
    values = {key: f"<{key}>" for key in PLACEHOLDERS}
    assert placeholders(template)  # the templates have placeholders
    assert_agrees(template, values)
    assert_agrees(template, {**values, "hook_output": ""})
    assert_agrees(template.replace("{{hook_output}}", ""), values)


@pytest.mark.parametrize("template", [
    "{{a}}", "{{ a }}", "{{\ta\n}}", "{{\u00a0a\u3000}}", "{{{a}}}", "{{{{a}}}}", "{{a}", "{a}}", "{{ }}", "{{1a}}",
    "{{a b}}", "{{_}}", "{{é}}", "{{a}}{{a}}", "{{story_id}}x{{plan}}", "{{zz}}", "x\n\n{{zz}}", "{{a}}\n\n\n",
    "\n\n\n", "a\n\n", "a\n\n\n\n", "{{hook_output}}", "", "{{", "}}",
])
@pytest.mark.parametrize("hook_output", ["", "hooks said\n"])
def test_templates_agree(template: str, hook_output: str) -> None:
    assert_agrees(template, {**VALUES, "hook_output": hook_output})


PIECES = st.sampled_from(["{{", "}}", "{", "}", " ", "\t", "\n", "\u00a0", "a", "b_1", "1", "é", "zz", "hook_output", "x"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join), st.sampled_from(["", "out\n", "\n"]))
def test_generated_templates_agree(template: str, hook_output: str) -> None:
    assert_agrees(template, {**VALUES, "hook_output": hook_output})


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ09_@%+=:,./- '\"\t\n$`\\!*é\u00a0")), max_size=8))
def test_shell_quote_is_shlex_quote(word: str) -> None:
    assert shell_quote(word) == shlex.quote(word)


def test_format_command() -> None:
    assert format_command(["pytest", "-q", "it's here", ""]) == shlex.join(["pytest", "-q", "it's here", ""])
    assert format_command("make test && echo ok") == "make test && echo ok"
    assert format_command(None) == "(none configured)"


def test_failure_context_reads_the_failures_file(tmp_path) -> None:
    assert failure_context(str(tmp_path), "US-1") == "(none)"
    failures.record_failure(str(tmp_path), {"story": "US-1", "iteration": 2, "kind": "verify", "summary": "tests failed",
                                            "excerpt": "E   assert 1 == 2 (ü)"})
    failures.record_failure(str(tmp_path), {"story": "US-2", "iteration": 3, "kind": "verify", "summary": "other story"})
    with open(tmp_path / failures.FAILURES_FILE, "a", encoding="utf-8") as f:
        f.write('not json\n[1]\n\ufeff{"story": "US-1"}\n')  # skipped: not one JSON object per line
    assert failure_context(str(tmp_path), "US-1") == "- iteration 2 (verify): tests failed\n  ```\n  E   assert 1 == 2 (ü)\n  ```"
