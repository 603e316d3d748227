"""`ralph loop` / `ralph-loop`: run the plan's stories unattended, one fresh
agent process per iteration, verified and committed one by one.

Exit codes: 0 complete, 1 error, 2 bad usage / config / plan, 3 max_iterations,
4 blocked, 5 no_changes, 6 hook_abort, 7 budget, 8 rate_limited, 130 SIGINT,
143 SIGTERM.

`--dry-run` stays cheap (no subprocess, no git): it reads the config and the
plan and prints the next story with its full prompt. What it does not need
comes from STEPS, imported at one site: the run itself (subprocess, json,
git, the hook engine) and argparse (a command line of on/off flags only is
read here, by hand).
"""
from __future__ import annotations

import os
import sys

from ralph.config.schema import ConfigError
from ralph.plan import PlanError, load_stories
from ralph.plugins import load
from ralph.state.locations import STATE_DIR_NAME, config_path, global_hooks_path, project_root

from ralph.loop import prompt
from ralph.loop.config_check import check_config
from ralph.loop.display import Display
from ralph.quoting import format_command
from ralph.run import paths
from ralph.run.settings import LoopSettings, loop_settings, resolve

EXIT_USAGE = 2

# what a command line needs beyond the dry run -> the module that does it (step())
STEPS = {
    "parse": "ralph.commands.loop_arguments",  # argparse: values, abbreviations, --help, mistakes
    "run": "ralph.loop.runner",
}


def step(name: str) -> object:
    return load(STEPS[name])


# The options, defined once: (flags, argparse.add_argument keywords), with each
# value's type named ("positive_int", "float", "int", "amount": ralph.commands.loop_arguments.TYPES).
OPTIONS: tuple[tuple[tuple[str, ...], dict], ...] = (
    (("--plan",), {"help": "plan file (plan.md or prd.json); default: .ralph/plan.md, .ralph/prd.json, or the newest .ralph/PRD-N/"}),
    (("--prompt",), {"help": "prompt template for build iterations (default: the packaged PROMPT.md)"}),
    (("--mode",), {"choices": ("build", "plan"), "help": "run one stage of this mode instead of the configured pipeline"}),
    (("--max-iterations",), {"type": "positive_int", "metavar": "N", "help": "stop after N iterations in all"}),
    (("--once",), {"action": "store_true", "help": "run one iteration, then stop"}),
    (("--dry-run",), {"action": "store_true", "help": "print the next story and its full prompt, run nothing"}),
    (("--agent",), {"metavar": "CMD", "help": "agent command (run by /bin/sh; the prompt arrives on stdin)"}),
    (("--verify",), {"metavar": "CMD", "help": "verify command that must pass before a story counts as done"}),
    (("--timeout",), {"type": "float", "metavar": "SECONDS", "help": "agent timeout per iteration"}),
    (("--no-progress-limit",), {"type": "int", "metavar": "N", "help": "stop after N iterations without progress (0: never)"}),
    (("--max-cost-usd",), {"type": "amount", "metavar": "USD", "help": "stop (finish budget, exit 7) once the agents cost this much (the client's estimate)"}),
    (("--max-tokens",), {"type": "positive_int", "metavar": "N", "help": "stop (finish budget, exit 7) once the agents used N input + output tokens"}),
    (("-C", "--directory"), {"metavar": "DIR", "help": "project directory (default: the current one)"}),
    (("-q", "--quiet"), {"action": "store_true", "help": "do not stream the agent's output to the terminal"}),
    (("--allow-dirty",), {"action": "store_true", "help": "start even with uncommitted changes outside .ralph/ (they may end up in the agent's commits)"}),
)



def parse_args(argv: list[str]) -> object:
    args = plain_flags(argv)
    if args is not None:
        return args
    return step("parse").parse(argv, OPTIONS)  # type: ignore[attr-defined]


class Flags:
    """An argparse.Namespace without argparse: the options as attributes."""

    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)


def _dest(flags: tuple[str, ...]) -> str:
    """argparse's attribute name for an option: its first long flag."""
    long = next(flag for flag in flags if flag.startswith("--"))
    return long[2:].replace("-", "_")


def plain_flags(argv: list[str]) -> Flags | None:
    """What argparse returns for a command line of on/off flags only, each
    written out in full (`--dry-run`, `-q --once`, none at all); None for
    anything else (values, abbreviations, --help, mistakes): argparse reads
    those. Its import and help formatter cost `ralph-loop --dry-run` about
    as much as all the rest of its work."""
    switches = {flag: _dest(flags) for flags, options in OPTIONS if options.get("action") == "store_true" for flag in flags}
    if not all(arg in switches for arg in argv):
        return None
    values = {_dest(flags): False if options.get("action") == "store_true" else options.get("default") for flags, options in OPTIONS}
    for arg in argv:
        values[switches[arg]] = True
    return Flags(values)


def load_settings(args: object) -> LoopSettings:
    """LoopSettings from ralph.toml and the flags; raises ConfigError."""
    start = os.path.abspath(args.directory) if args.directory else os.getcwd()  # type: ignore[attr-defined]
    root = project_root(start) if not args.directory else start  # type: ignore[attr-defined]
    config = check_config(root)  # every section, so a bad [rollback] or [guard] stops the run before it starts
    flags = {
        "plan": args.plan,  # type: ignore[attr-defined]
        "prompt": args.prompt,  # type: ignore[attr-defined]
        "mode": args.mode,  # type: ignore[attr-defined]
        "max_iterations": args.max_iterations,  # type: ignore[attr-defined]
        "agent_command": args.agent,  # type: ignore[attr-defined]
        "verify_command": args.verify,  # type: ignore[attr-defined]
        "timeout_seconds": args.timeout,  # type: ignore[attr-defined]
        "no_progress_limit": args.no_progress_limit,  # type: ignore[attr-defined]
        "max_cost_usd": args.max_cost_usd,  # type: ignore[attr-defined]
        "max_tokens": args.max_tokens,  # type: ignore[attr-defined]
    }
    settings = loop_settings(root, config, config_path(root), flags)
    settings.once = args.once  # type: ignore[attr-defined]
    settings.dry_run = args.dry_run  # type: ignore[attr-defined]
    settings.quiet = args.quiet  # type: ignore[attr-defined]
    settings.allow_dirty = args.allow_dirty  # type: ignore[attr-defined]
    return settings


def find_plan(settings: LoopSettings) -> str:
    """The plan file to use; PlanError-free: a missing plan is reported by the caller."""
    root = settings.root
    configured = settings["plan"]
    if configured:
        return resolve(root, configured)
    found = paths.discover_plan(os.path.join(root, STATE_DIR_NAME))
    return found or os.path.join(root, STATE_DIR_NAME, "plan.md")


def dry_run(settings: LoopSettings, plan_path: str) -> int:
    root = settings.root
    stage = settings.stages[0]
    state_dir = os.path.join(root, STATE_DIR_NAME)
    progress = settings["progress"]
    progress_path = resolve(root, progress) if progress else paths.progress_path_for(plan_path)
    template = resolve(root, stage.prompt) if stage.prompt else None
    out = sys.stdout
    if stage.mode == "plan":
        text = prompt.plan_prompt(root=root, state_dir=state_dir, plan_path=plan_path, progress_path=progress_path,
                                  template_path=template, verify_command=settings["verify_command"],
                                  iteration=1, run_id="(dry-run)", stage=stage.name,
                                  hook_output=prompt.pending_hook_output(state_dir))
        out.write(f"stage: {stage.name} (plan mode) -> {paths.relative(root, plan_path)}\n")
        out.write(f"agent: {format_command(stage.agent_command)}\n\n--- prompt ---\n{text}")
        return 0
    stories = sorted(load_stories(plan_path), key=lambda s: s.priority)
    todo = [s for s in stories if s.state == "todo"]
    done = sum(1 for s in stories if s.state == "done")
    out.write(f"plan: {paths.relative(root, plan_path)} ({done}/{len(stories)} done")
    blocked = sum(1 for s in stories if s.state == "blocked")
    out.write(f", {blocked} blocked)\n" if blocked else ")\n")
    if not todo:
        out.write("nothing to do: every story is done or blocked\n")
        return 0
    story = todo[0]
    text = prompt.story_prompt(root=root, state_dir=state_dir, plan_path=plan_path, progress_path=progress_path,
                               template_path=template, verify_command=stage.verify_command, story=story,
                               iteration=1, story_iteration=1, run_id="(dry-run)", stage=stage.name,
                               hook_output=prompt.pending_hook_output(state_dir))
    out.write(f"next story: {story.id}: {story.title}\n")
    out.write(f"stage: {stage.name} · agent: {format_command(stage.agent_command)} · verify: {format_command(stage.verify_command)}\n")
    out.write(f"\n--- prompt ---\n{text}")
    if not text.endswith("\n"):
        out.write("\n")
    return 0


# the lifecycle hooks' reading and checks, loaded only when a hook may be declared
HOOKS = "ralph.loop.lifecycle.config"
HOOKS_DIR = os.path.join(".ralph", "hooks")  # the default [hooks] dir; another one is named in ralph.toml


def check_hooks(settings: LoopSettings) -> object | None:
    """The lifecycle hooks (a HookSet; None when none can be declared); every
    hook error at once as one ConfigError, before anything runs."""
    if not may_declare_hooks(settings):
        return None
    lifecycle = load(HOOKS)
    return lifecycle.require_valid(lifecycle.load_hooks(settings.root, None, settings.config_path))  # type: ignore[attr-defined]


def may_declare_hooks(settings: LoopSettings) -> bool:
    """Could a lifecycle hook come from anywhere: RALPH_HOOK* variables, the
    global hooks.toml, the hooks dir, a ralph.toml that mentions hooks?"""
    if any(name.startswith("RALPH_HOOK") for name in os.environ):
        return True
    if os.path.isfile(global_hooks_path()) or os.path.isdir(os.path.join(settings.root, HOOKS_DIR)):
        return True
    path = settings.config_path
    if not path or not os.path.isfile(path):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "hooks" in f.read()
    except OSError:
        return True  # the full reading says what is wrong


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        settings = load_settings(args)
        plan_path = find_plan(settings)
        first_mode = settings.stages[0].mode
        if first_mode == "build" and not os.path.isfile(plan_path):
            sys.stderr.write(
                f"ralph-loop: no plan at {paths.relative(settings.root, plan_path)}: write one (`- [ ] US-001: title` lines), "
                "pass --plan PATH, set plan in [loop] of ralph.toml, or run `ralph-loop --mode plan` to have the agent write it\n"
            )
            return EXIT_USAGE
        hooks = check_hooks(settings)
        if args.dry_run and hooks is not None:  # type: ignore[attr-defined]
            summary = [f"{point} {len(hooks.active(point))}" for point in hooks.by_point if hooks.active(point)]  # type: ignore[attr-defined]
            if summary:
                sys.stdout.write(f"hooks: {', '.join(summary)} (details: ralph hooks list)\n")
            for warning in hooks.warnings:  # type: ignore[attr-defined]
                sys.stdout.write(f"hooks: warning: {warning}\n")
        if args.dry_run:  # type: ignore[attr-defined]
            return dry_run(settings, plan_path)
        for stage in settings.stages:
            prompt.check_template(stage.mode, resolve(settings.root, stage.prompt) if stage.prompt else None)
        if first_mode == "build":
            load_stories(plan_path)  # a malformed plan is a usage error, before anything runs
    except (ConfigError, PlanError) as e:
        sys.stderr.write(f"ralph-loop: {e}\n")
        return EXIT_USAGE
    display = Display(quiet=settings.quiet)
    try:
        return step("run").run_loop(settings, plan_path, display)  # type: ignore[attr-defined]
    except ConfigError as e:  # e.g. a prompt template with an unknown placeholder
        sys.stderr.write(f"ralph-loop: {e}\n")
        return EXIT_USAGE
