"""The spawn action (`type = "spawn"`): run a child ralph-loop on a pipeline.

A pipeline is a folder `.ralph/pipelines/<name>/` holding

    plan.md (or prd.json)   the child's stories (required); copied, never edited
    PROMPT.md               its prompt template (optional; default: the packaged one)
    ralph.toml              its config: [loop], [guard], its own hooks (optional)

Each spawn gets a fresh directory `.ralph/children/<point>-<iteration>/`
(`.2`, `.3`... when that name is taken, e.g. by a retry) holding
`inputs.json` (the `inputs` table, variables substituted), the copies of the
plan and config, the child's own run.json, events, progress and logs
(RALPH_STATE_DIR points there), `spawn.json` (what was started, for `ralph
status`), and `output.json`: whatever the child agent or one of its hooks
writes to the path in $RALPH_SPAWN_OUTPUT_FILE. An awaited child's
output.json is exported to the parent's later actions as RALPH_SPAWN_OUTPUT.

The child works on the same repository (its stories commit like any loop's)
but sees only the environment it is given: a short list of basics (PATH,
HOME, locale, terminal, git identity), its spawn context (RALPH_SPAWN_*) and
the action's `env` table, where the user passes what the child may know
(`ANTHROPIC_API_KEY = "${ANTHROPIC_API_KEY}"`). Children nest up to
`max_depth` (RALPH_SPAWN_DEPTH counts).
"""
from __future__ import annotations

import os
import sys
import time

from ralph.loop.lifecycle import template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext
from ralph.loop.lifecycle.config import check_keys, exported_names
from ralph.loop.lifecycle.webhook import expand_env, strings_in
from ralph.state.files import atomic_write, read_json_object
from ralph.state.locations import STATE_DIR_NAME

PIPELINES_DIR = "pipelines"
CHILDREN_DIR = "children"
PLAN_FILES = ("plan.md", "prd.json")
OUTPUT_FILE = "output.json"
INPUTS_FILE = "inputs.json"
SPAWN_FILE = "spawn.json"
OUTPUT_CAP = 64 * 1024  # bytes of output.json exported (an env value must stay well under 128 KiB)
DEPTH_VAR = "RALPH_SPAWN_DEPTH"
# what a child inherits without being told: nothing secret
BASE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
            "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
            "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")

KEYS: dict[str, tuple[object, str, float | None]] = {
    "pipeline": (None, "str", None),
    "inputs": ({}, "table", None),
    "env": ({}, "table", None),
    "await": (True, "bool", None),
    "timeout": (3600, "number", 0.001),
    "max_depth": (3, "int", 1),
}
EXPORTS: tuple[str, ...] = ("RALPH_SPAWN_OUTPUT",)


def validate(table: dict, where: object) -> list[str]:
    name = "hooks"
    pipeline = table.get("pipeline")
    if pipeline is None:
        return [f"{where}: [{name}] a spawn hook needs pipeline = \"<name>\" (a folder in .ralph/pipelines/)"]
    errors = check_keys({k: v for k, v in table.items() if k in ("pipeline", "max_depth")}, KEYS, where, name)  # type: ignore[arg-type]
    if isinstance(pipeline, str) and not valid_name(pipeline):
        errors.append(f"{where.key('pipeline')}: [{name}] pipeline: {pipeline!r} must be a folder name in .ralph/pipelines/ "  # type: ignore[attr-defined]
                      "(letters, digits, '-', '_', '.'; no '/')")
    exports = exported_names()
    for key in ("inputs", "env"):
        value = table.get(key, {})
        if not isinstance(value, dict):
            errors.append(f"{where.key(key)}: [{name}] {key} must be a table, got {value!r}")  # type: ignore[attr-defined]
            continue
        for text in strings_in(value):
            errors += [f"{where.key(key)}: [{name}] {key}: {p}" for p in template.check(text, exports)]  # type: ignore[attr-defined]
        if key == "env":
            bad = [k for k, v in value.items() if not isinstance(v, str) or not k or "=" in k]
            if bad:
                errors.append(f"{where.key('env')}: [{name}] env: {', '.join(map(repr, bad))} must be NAME = \"value\" strings")  # type: ignore[attr-defined]
    return errors


def valid_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and all(c.isalnum() or c in "-_." for c in name)


def substituted(value: object, values: dict[str, str], env: dict[str, str]) -> object:
    """Strings with their variables filled in (plain: the result is JSON-encoded or an env value)."""
    if isinstance(value, str):
        return expand_env(template.json_value(value, values, exported_names()), env)
    if isinstance(value, dict):
        return {str(k): substituted(v, values, env) for k, v in value.items()}
    if isinstance(value, list):
        return [substituted(v, values, env) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()  # type: ignore[attr-defined]
    return value


def pipeline_dir(root: str, name: str) -> str:
    """Always the project's `.ralph/pipelines/<name>/` (a child's own state dir holds none)."""
    return os.path.join(root, STATE_DIR_NAME, PIPELINES_DIR, name)


def child_dir_for(state_dir: str, point: str, iteration: str) -> str:
    base = os.path.join(state_dir, CHILDREN_DIR)
    os.makedirs(base, exist_ok=True)
    ignore = os.path.join(base, ".gitignore")
    if not os.path.exists(ignore):
        atomic_write(ignore, "# children of ralph-loop's spawn hooks: run state, never committed\n*\n", fsync=False)
    stem = f"{point}-{iteration or 0}"
    for n in range(1, 10000):
        path = os.path.join(base, stem if n == 1 else f"{stem}.{n}")
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise OSError(f"no free child directory name under {base}")


def loop_argv() -> list[str]:
    """How to start ralph-loop with this very installation."""
    if getattr(sys, "frozen", False):  # the PyInstaller binary is `ralph`
        return [sys.executable, "loop"]
    return [sys.executable, "-m", "ralph", "loop"]


def child_env(parent: dict[str, str], extra: dict[str, str], context: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in parent.items() if k in BASE_ENV or k.startswith("LC_")}
    env.update(extra)
    env.update(context)  # the spawn context wins over `env`
    return env


def run(action: object, ctx: RunContext) -> ActionResult:
    # json, shutil and the process runner (subprocess) here, not at the top:
    # `ralph-loop --dry-run` validates spawn hooks (importing this module)
    # without running them
    import json
    import shutil

    from ralph.loop.lifecycle import process

    started = time.monotonic()
    spec = action
    name = str(spec["pipeline"])  # type: ignore[index]
    shown = f"spawn {name}"
    depth = _int(ctx.env.get(DEPTH_VAR, "0"))
    limit = int(spec["max_depth"])  # type: ignore[index, call-overload]
    if depth + 1 > limit:
        return ActionResult(FAILED, message=f"not started: this loop is already a child at depth {depth} and max_depth is {limit} "
                            f"({DEPTH_VAR}); a pipeline that spawns itself stops here", command=shown)
    source = pipeline_dir(ctx.root, name)
    plan_name = next((p for p in PLAN_FILES if os.path.isfile(os.path.join(source, p))), None)
    if plan_name is None:
        return ActionResult(FAILED, message=f"pipeline {name!r}: no plan.md or prd.json in {source} "
                            "(see README, 'Spawn: child loops')", command=shown)
    try:
        child = child_dir_for(ctx.state_dir, ctx.point, ctx.values.get("iteration", ""))
        inputs = substituted(spec.get("inputs") or {}, ctx.values, ctx.env)  # type: ignore[attr-defined]
        atomic_write(os.path.join(child, INPUTS_FILE), json.dumps(inputs, indent=2, ensure_ascii=False) + "\n")
        shutil.copyfile(os.path.join(source, plan_name), os.path.join(child, plan_name))
        config = os.path.join(child, "ralph.toml")
        if os.path.isfile(os.path.join(source, "ralph.toml")):
            shutil.copyfile(os.path.join(source, "ralph.toml"), config)
        else:
            atomic_write(config, "# the pipeline has no ralph.toml: defaults\n", fsync=False)
    except OSError as e:
        return ActionResult(FAILED, message=f"cannot prepare the child directory: {e}", command=shown)
    output_path = os.path.join(child, OUTPUT_FILE)
    context = {
        "RALPH_STATE_DIR": child,
        "RALPH_CONFIG": config,
        DEPTH_VAR: str(depth + 1),
        "RALPH_SPAWN_INPUTS": os.path.join(child, INPUTS_FILE),
        "RALPH_SPAWN_OUTPUT_FILE": output_path,
        "RALPH_SPAWN_PIPELINE": name,
        "RALPH_SPAWN_DIR": child,
        "RALPH_PARENT_SESSION": ctx.values.get("session", ""),
        "CLAUDE_PROJECT_DIR": ctx.root,
    }
    extra = {str(k): str(v) for k, v in substituted(spec.get("env") or {}, ctx.values, ctx.env).items()}  # type: ignore[attr-defined, union-attr]
    env = child_env(ctx.env, extra, context)
    argv = [*loop_argv(), "-C", ctx.root, "--plan", os.path.join(child, plan_name), "-q"]
    prompt = os.path.join(source, "PROMPT.md")
    if os.path.isfile(prompt):
        argv += ["--prompt", prompt]
    timeout = float(spec["timeout"])  # type: ignore[index]
    record = {"pipeline": name, "point": ctx.point, "iteration": ctx.values.get("iteration", ""),
              "parent_session": ctx.values.get("session", ""), "depth": depth + 1, "await": bool(spec["await"]),  # type: ignore[index]
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "timeout": timeout}
    shown = f"spawn {name} -> {os.path.relpath(child, ctx.root)}"
    if not spec["await"]:  # type: ignore[index]
        try:
            job = ctx.background.start(spec, argv, cwd=ctx.root, env=env, stdin_data=b"", timeout=timeout)  # type: ignore[attr-defined]
        except OSError as e:
            return ActionResult(FAILED, message=f"cannot start the child loop: {e.strerror or e}", command=shown)
        record["pid"] = job.pid
        _write_record(child, record)
        return ActionResult(SUCCESS, message=f"child loop started in the background (pid {job.pid}) in {child}", command=shown)
    _write_record(child, record)
    outcome = process.run(argv, cwd=ctx.root, env=env, stdin_data=b"", timeout=timeout, stopping=ctx.stopping)
    record.update(ended=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), exit_code=outcome.exit_code)
    _write_record(child, record)
    exports = {}
    note = ""
    try:
        with open(output_path, "rb") as f:
            data = f.read(OUTPUT_CAP + 1)
        text = data[:OUTPUT_CAP].decode("utf-8", "replace")
        try:
            json.loads(text)
        except ValueError:
            note = f"; {OUTPUT_FILE} is not valid JSON" + (f" (cut at {OUTPUT_CAP} bytes)" if len(data) > OUTPUT_CAP else "")
        exports["RALPH_SPAWN_OUTPUT"] = text
    except OSError:
        note = f"; the child wrote no {OUTPUT_FILE}"
        exports["RALPH_SPAWN_OUTPUT"] = ""
    finish = _child_finish(child)
    duration = time.monotonic() - started
    if outcome.error:
        return ActionResult(FAILED, duration=duration, message=f"cannot start the child loop: {outcome.error}", command=shown)
    if outcome.timed_out:
        return ActionResult(TIMEOUT, exit=124, duration=duration, output=outcome.output, output_bytes=outcome.output_bytes,
                            message=f"child loop timed out after {timeout:g}s: its process group was killed{note}",
                            exports=exports, command=shown)
    if outcome.exit_code != 0:
        what = f"finished {finish.get('type')}: {finish.get('message')}" if finish else "ended"
        return ActionResult(FAILED, exit=outcome.exit_code, duration=duration, output=outcome.output,
                            output_bytes=outcome.output_bytes, message=f"child loop {what} (exit {outcome.exit_code}){note}",
                            exports=exports, command=shown)
    return ActionResult(SUCCESS, exit=0, duration=duration, output=outcome.output, output_bytes=outcome.output_bytes,
                        message=note.lstrip("; "), exports=exports, command=shown)


def _int(text: str) -> int:
    try:
        return max(0, int(text))
    except (TypeError, ValueError):
        return 0


def _write_record(child: str, record: dict) -> None:
    import json

    try:
        atomic_write(os.path.join(child, SPAWN_FILE), json.dumps(record, indent=1) + "\n", fsync=False)
    except OSError:
        pass


def _child_finish(child: str) -> dict:
    return (read_json_object(os.path.join(child, "run.json")) or {}).get("finish") or {}


def list_children(state_dir: str) -> list[dict]:
    """Every child of this project (for `ralph status`): what was spawned, and
    its state from its own run.json."""
    from ralph.process import pid_alive  # not at the top: it loads subprocess, which the dry run must not

    base = os.path.join(state_dir, CHILDREN_DIR)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    children = []
    for entry in names:
        path = os.path.join(base, entry)
        record = read_json_object(os.path.join(path, SPAWN_FILE))
        if record is None:
            continue
        record["dir"] = entry
        finish = (read_json_object(os.path.join(path, "run.json")) or {}).get("finish")
        pid = record.get("pid") if not record.get("await") else None
        if finish:
            record["state"] = f"finished {finish.get('type')}"
        elif isinstance(run, dict) and run.get("status") == "running":
            record["state"] = "running" if pid_alive(run.get("pid")) else "stopped (no finish recorded)"
        elif pid is not None and pid_alive(pid):
            record["state"] = "starting"
        else:
            record["state"] = "never ran" if "exit_code" not in record else f"ended (exit {record.get('exit_code')})"
        record["output"] = os.path.exists(os.path.join(path, OUTPUT_FILE))
        children.append(record)
    return children
