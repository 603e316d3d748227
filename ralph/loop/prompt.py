"""Prompts: a template with {{placeholders}} filled from the story, the plan,
progress notes and the failures of earlier iterations."""
from __future__ import annotations

import os

from ralph.config.schema import ConfigError
from ralph.loop.identifiers import name_end
from ralph.loop.lifecycle import pending
from ralph.quoting import format_command
from ralph.run.failures import failure_context
from ralph.run.paths import relative

# A placeholder, as this regular expression defines it; found by hand
# (placeholders() matches exactly what it matches, tests/test_loop_prompt.py
# proves it) because `ralph-loop --dry-run` renders a prompt and importing
# `re` would cost it more than all the rest of its work.
PLACEHOLDER = r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}"
PLACEHOLDERS = (
    "story_id", "story_title", "criteria", "plan_path", "progress_path", "progress",
    "failures", "verify_command", "iteration", "story_iteration", "run_id", "plan", "stage",
    "hook_output",
)
DEFAULT_TEMPLATES = {"build": "PROMPT.md", "plan": "PLAN_PROMPT.md"}
MAX_PROGRESS_CHARS = 4000
MAX_PLAN_CHARS = 20000


def template_text(mode: str, path: str | None) -> tuple[str, str]:
    """(text, where) of the template: the configured file or the packaged default."""
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path}: cannot read the prompt template: {e}. Fix the path in ralph.toml or --prompt.") from None
    name = DEFAULT_TEMPLATES[mode]
    default = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", name)
    with open(default, encoding="utf-8") as f:
        return f.read(), default


def placeholders(template: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each PLACEHOLDER match, left to right without
    overlaps, as re.finditer would find them."""
    found = []
    length = len(template)
    index = template.find("{{")
    while index >= 0:
        position = index + 2
        while position < length and template[position].isspace():  # `\s` is str.isspace()
            position += 1
        name_start = position
        position = name_end(template, position)
        if position > name_start:
            end_of_name = position
            while position < length and template[position].isspace():
                position += 1
            if template.startswith("}}", position):
                found.append((index, position + 2, template[name_start:end_of_name]))
                index = template.find("{{", position + 2)
                continue
        index = template.find("{{", index + 1)
    return found


def render(template: str, where: str, values: dict[str, str]) -> str:
    """Fill {{name}} placeholders; an unknown one is an error naming its line.
    Hook output for a template without {{hook_output}} is appended, never lost."""
    parts = []
    done = 0
    found = placeholders(template)
    for start, end, name in found:
        if name not in values:
            line = template.count("\n", 0, start) + 1
            raise ConfigError(f"{where}:{line}: unknown placeholder {{{{{name}}}}}; known: {', '.join(PLACEHOLDERS)}")
        parts += (template[done:start], values[name])
        done = end
    parts.append(template[done:])
    text = "".join(parts)
    hook_output = values.get("hook_output", "")
    if hook_output and not any(name == "hook_output" for _, _, name in found):
        text = text.rstrip("\n") + "\n\n" + hook_output
    # an empty block at the end leaves no blank tail: three or more final newlines become one
    trimmed = text.rstrip("\n")
    return trimmed + "\n" if len(text) - len(trimmed) >= 3 else text


def pending_hook_output(state_dir: str) -> str:
    """The pipe_output block waiting for the next prompt ("" when none)."""
    if not os.path.exists(pending.path_in(state_dir)):
        return ""
    return pending.render(pending.read(state_dir))


def clear_hook_output(state_dir: str) -> None:
    """The pending hook output reached a prompt: drop it."""
    if os.path.exists(pending.path_in(state_dir)):
        pending.clear(state_dir)


def tail_text(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                f.seek(size - limit)
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if len(data) >= limit and "\n" in text:
        text = "…\n" + text.split("\n", 1)[1]
    return text.strip()






def story_prompt(*, root: str, state_dir: str, plan_path: str, progress_path: str, template_path: str | None,
                 verify_command: list[str] | str | None, story: object, iteration: int, story_iteration: int,
                 run_id: str, stage: str, hook_output: str = "") -> str:
    """The full prompt for one build iteration on `story`."""
    template, where = template_text("build", template_path)
    criteria = "\n".join(f"- {c}" for c in story.criteria) or "- (none listed: the title is the requirement)"  # type: ignore[attr-defined]
    return render(template, where, {
        "story_id": story.id,  # type: ignore[attr-defined]
        "story_title": story.title,  # type: ignore[attr-defined]
        "criteria": criteria,
        "plan_path": relative(root, plan_path),
        "progress_path": relative(root, progress_path),
        "progress": tail_text(progress_path, MAX_PROGRESS_CHARS) or "(none yet)",
        "failures": failure_context(state_dir, story.id),  # type: ignore[attr-defined]
        "verify_command": format_command(verify_command),
        "iteration": str(iteration),
        "story_iteration": str(story_iteration),
        "run_id": run_id,
        "plan": tail_text(plan_path, MAX_PLAN_CHARS) or "(no plan yet)",
        "stage": stage,
        "hook_output": hook_output,
    })


def plan_prompt(*, root: str, state_dir: str, plan_path: str, progress_path: str, template_path: str | None,
                verify_command: list[str] | str | None, iteration: int, run_id: str, stage: str,
                hook_output: str = "") -> str:
    """The full prompt for one planning iteration."""
    template, where = template_text("plan", template_path)
    return render(template, where, {
        "story_id": "", "story_title": "", "criteria": "", "story_iteration": "",
        "failures": failure_context(state_dir, "PLAN"),
        "plan_path": relative(root, plan_path),
        "progress_path": relative(root, progress_path),
        "progress": tail_text(progress_path, MAX_PROGRESS_CHARS) or "(none yet)",
        "verify_command": format_command(verify_command),
        "iteration": str(iteration), "run_id": run_id,
        "plan": tail_text(plan_path, MAX_PLAN_CHARS) or "(no plan yet: write it)",
        "stage": stage,
        "hook_output": hook_output,
    })


def check_template(mode: str, path: str | None) -> None:
    """Raise ConfigError now for a template that would fail at its first iteration."""
    template, where = template_text(mode, path)
    render(template, where, {name: "" for name in PLACEHOLDERS})
