"""`ralph hooks list` and `ralph hooks test POINT|EVENT`: the lifecycle hooks
of ralph-loop as the loop will see them (global hooks.toml, ralph.toml,
.ralph/hooks/) and the `[[hooks.event]]` hooks on Claude Code events
(ralph.commands.hooks_event_commands); one point fired with sample context, or one
event with a captured payload."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from ralph.config.reading import load_config
from ralph.config.schema import ConfigError
from ralph.plan import PlanError, load_stories
from ralph.state.locations import config_path, project_root

from ralph.loop.lifecycle import pending
from ralph.loop.lifecycle.config import HookSpec, global_hooks_path, load_hooks
from ralph.loop.lifecycle.engine import Engine
from ralph.loop.lifecycle.points import ALIASES, POINTS, canonical
from ralph.run import paths
from ralph.run.clock import utc_now
from ralph.run.settings import loop_settings

from ralph.commands import hooks_event_commands

USAGE = """\
usage: ralph hooks list [-C DIR]
       ralph hooks test POINT [--iteration N] [--story ID] [--finish-type TYPE] [-C DIR]
       ralph hooks test EVENT[:TOOL] [--input JSON] [-C DIR]   (e.g. PreToolUse:Bash, tool:pre_execute:bash)
"""


def project(directory: str | None) -> tuple[str, str | None]:
    root = os.path.abspath(directory) if directory else project_root(os.getcwd())
    return root, config_path(root)


def describe(spec: HookSpec) -> str:
    keys = []
    if spec.get("when"):
        keys.append(f"when {spec['when']!r}")
    if spec.kind != "dir":
        if not spec["await"]:
            keys.append("await = false")
        if spec["on_failure"] != "continue":
            extra = f" ({spec['retries']}x, {spec['retry_delay']}s apart)" if spec["on_failure"] == "retry" else ""
            keys.append(f"on_failure = {spec['on_failure']}{extra}")
        if spec["pipe_output"]:
            keys.append("pipe_output")
    keys.append(f"timeout {float(spec['timeout']):g}s")  # type: ignore[arg-type]
    return ", ".join(keys)


def list_hooks(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph hooks list")
    parser.add_argument("-C", "--directory", metavar="DIR")
    args = parser.parse_args(argv)
    root, config = project(args.directory)
    hooks = load_hooks(root, None, config)
    out = sys.stdout
    out.write(f"sources: global {global_hooks_path()}{'' if os.path.isfile(global_hooks_path()) else ' (none)'}"
              f" · project {config or '(no ralph.toml)'} · directory {hooks.hooks_dir}\n")
    for point, when in POINTS.items():
        specs = hooks.by_point[point]
        out.write(f"\n{point}: {when}\n")
        if not specs:
            out.write("  (no hooks)\n")
        for spec in specs:
            state = "on " if not spec.disabled else "off"
            out.write(f"  [{state}] {spec.label}  ({spec.source}: {spec.where}"
                      + (f", as {spec.config_name}" if spec.config_name not in (point, spec.get('name')) else "") + ")\n")
            out.write(f"        {describe(spec)}" + (f" · disabled: {spec.disabled}" if spec.disabled else "") + "\n")
    hooks_event_commands.write_list(out, config)
    for warning in hooks.warnings:
        out.write(f"\nwarning: {warning}")
    if hooks.warnings:
        out.write("\n")
    if hooks.errors:
        sys.stderr.write(f"\n{len(hooks.errors)} error(s):\n  " + "\n  ".join(hooks.errors) + "\n")
        return 2
    return 0


class Printer:
    """The engine's display for `ralph hooks test`: messages only (outputs are shown per action)."""

    def message(self, text: str) -> None:
        sys.stdout.write(f"  {text}\n")

    def output(self, chunk: bytes) -> None:
        pass


def sample_context(root: str, config: str | None, point: str, iteration: int, story_id: str | None, finish_type: str) -> dict:
    stage_name, mode, max_iterations, plan = "build", "build", 10, None
    try:
        settings = loop_settings(root, load_config(root), config, {})
        stage_name, mode = settings.stages[0].name, settings.stages[0].mode
        max_iterations = settings.stages[0].max_iterations
        plan = settings["plan"]
    except ConfigError:
        pass
    state_dir = os.path.join(root, ".ralph")
    plan_path = os.path.join(root, plan) if plan else (paths.discover_plan(state_dir) or os.path.join(state_dir, "plan.md"))
    story_title = ""
    try:
        stories = load_stories(plan_path)
        chosen = [s for s in stories if s.id == story_id] if story_id else [s for s in stories if s.state == "todo"][:1]
        if chosen:
            story_id, story_title = chosen[0].id, chosen[0].title
    except (OSError, PlanError):
        pass
    context = {
        "session": "hooks-test", "stage": stage_name, "next_stage": "", "mode": mode, "iteration": iteration,
        "max_iterations": max_iterations, "project_dir": root, "log_dir": os.path.join(state_dir, "logs", "hooks-test"),
        "plan_file": plan_path, "progress_file": paths.progress_path_for(plan_path), "started_at": utc_now(),
        "story_id": story_id or "US-001", "story_title": story_title or "Sample story", "last_exit_code": 0,
        "last_duration": 12.5, "last_result": "incomplete", "commits_made": 0, "changed_files": [],
        "status_file": os.path.join(state_dir, "run.json"),
    }
    if point == "on_error":
        context["error"] = "sample error: verify exited with code 1"
    if point == "story_blocked":
        context.update(reason="sample reason: the plan does not say which rounding rule applies",
                       question="sample question: round half up or half to even?")
    if point == "session_end":
        context.update(finish_type=finish_type, finish_message="(ralph hooks test)", total_iterations=iteration,
                       total_commits=0, duration=60)
    return context


def test_point(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ralph hooks test")
    parser.add_argument("point", help=f"one of {', '.join(POINTS)} (or an alias), or a Claude Code event "
                                      "for the [[hooks.event]] hooks: PreToolUse:Bash, tool:pre_execute:bash, Stop, ...")
    parser.add_argument("--input", metavar="JSON", help="EVENT only: the tool's input (default: the captured call's)")
    parser.add_argument("--iteration", type=int, default=1, metavar="N")
    parser.add_argument("--story", metavar="ID", help="story from the plan (default: the next one to do)")
    parser.add_argument("--finish-type", default="complete", help="RALPH_FINISH_TYPE for session_end (default: complete)")
    parser.add_argument("-C", "--directory", metavar="DIR")
    args = parser.parse_args(argv)
    point = canonical(args.point)
    if point is None and hooks_event_commands.known(args.point):
        return hooks_event_commands.fire(args.point, project(args.directory)[0], args.input)
    if point is None:
        sys.stderr.write(f"ralph hooks test: unknown point {args.point!r}; known: {', '.join(POINTS)} (aliases: {', '.join(ALIASES)}), "
                         "nor a Claude Code event (PreToolUse:Bash, Stop, tool:pre_execute, ...)\n")
        return 2
    root, config = project(args.directory)
    hooks = load_hooks(root, None, config)
    if hooks.errors:
        sys.stderr.write(f"{len(hooks.errors)} hook configuration error(s):\n  " + "\n  ".join(hooks.errors) + "\n")
        return 2
    out = sys.stdout
    context = sample_context(root, config, point, args.iteration, args.story, args.finish_type)
    specs = hooks.by_point[point]
    out.write(f"{point}: {len(hooks.active(point))} active hook(s) · story {context['story_id']} · iteration {args.iteration}\n")
    for spec in specs:
        if spec.disabled:
            out.write(f"  [off] {spec.label}: {spec.disabled}\n")
    # a scratch state dir: the test must not feed the real pending buffer
    scratch = tempfile.mkdtemp(prefix="ralph-hooks-test-")
    try:
        engine = Engine(hooks, root=root, state_dir=scratch, run_id="hooks-test", log_dir=os.path.join(scratch, "logs"),
                        display=Printer())
        fired = engine.fire(point, context)
        engine.close()
        ran = {id(spec) for spec, _ in fired.results}
        for spec in hooks.active(point):
            if id(spec) not in ran and not (fired.abort and point != "session_end"):
                out.write(f"\n  [skip] {spec.label}: when {spec.get('when')!r} is false for this context\n")
        for spec, result in fired.results:
            out.write(f"\n  [{result.status}] {spec.label}  ({spec.source}: {spec.where})\n")
            out.write(f"    command: {result.command}\n")
            out.write(f"    exit {result.exit} · {result.duration:.2f}s · {result.output_bytes} bytes of output"
                      + (f" · {result.attempts} attempts" if result.attempts > 1 else "")
                      + (f" · {result.message}" if result.message else "") + "\n")
            if result.output.strip():
                out.write("    " + result.output.strip().replace("\n", "\n    ") + "\n")
        piped = pending.render(pending.read(scratch))
        if piped:
            out.write("\nthe next agent prompt would include:\n" + piped)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if fired.abort and point != "session_end":
        out.write(f"\nthe loop would stop: finish type hook_abort ({fired.abort}); session_end hooks would still run\n")
        return 0
    if fired.skip:
        out.write("\nthe loop would skip this iteration (no agent run)\n")
    elif point == "session_end":
        out.write("\nthe loop is over at session_end: nothing follows\n")
    else:
        out.write("\nthe loop would continue\n")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    if argv[0] == "list":
        return list_hooks(argv[1:])
    if argv[0] == "test":
        return test_point(argv[1:])
    sys.stderr.write(f"ralph hooks: unknown subcommand {argv[0]!r}\n{USAGE}")
    return 2
