"""Running the spawn action (declared in ralph.loop.lifecycle.spawn_config): a child
ralph-loop on a pipeline, in a directory of its own, and what `ralph status`
shows of the children."""
import json
import os
import shutil
import sys
import time

from ralph.loop.lifecycle import process, template
from ralph.loop.lifecycle.actions import FAILED, SUCCESS, TIMEOUT, ActionResult, RunContext
from ralph.loop.lifecycle.spawn_config import BASE_ENV, CHILDREN_DIR, DEPTH_VAR, INPUTS_FILE, OUTPUT_CAP, OUTPUT_FILE, PLAN_FILES, SPAWN_FILE, pipeline_dir
from ralph.loop.lifecycle.webhook_config import expand_env
from ralph.process import pid_alive
from ralph.state.files import atomic_write, read_json_object


def substituted(value: object, values: dict[str, str], env: dict[str, str], exports: dict[str, str]) -> object:
    """Strings with their variables filled in (plain: the result is JSON-encoded or an env value)."""
    if isinstance(value, str):
        return expand_env(template.json_value(value, values, exports), env)
    if isinstance(value, dict):
        return {str(k): substituted(v, values, env, exports) for k, v in value.items()}
    if isinstance(value, list):
        return [substituted(v, values, env, exports) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()  # type: ignore[attr-defined]
    return value


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
                            "(see docs/webhooks-and-spawn.md)", command=shown)
    try:
        child = child_dir_for(ctx.state_dir, ctx.point, ctx.values.get("iteration", ""))
        inputs = substituted(spec.get("inputs") or {}, ctx.values, ctx.env, ctx.exports)  # type: ignore[attr-defined]
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
    extra = {str(k): str(v) for k, v in substituted(spec.get("env") or {}, ctx.values, ctx.env, ctx.exports).items()}  # type: ignore[attr-defined, union-attr]
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
    try:
        atomic_write(os.path.join(child, SPAWN_FILE), json.dumps(record, indent=1) + "\n", fsync=False)
    except OSError:
        pass


def _child_finish(child: str) -> dict:
    return (read_json_object(os.path.join(child, "run.json")) or {}).get("finish") or {}


def list_children(state_dir: str) -> list[dict]:
    """Every child of this project (for `ralph status`): what was spawned, and
    its state from its own run.json."""
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
        child_run = read_json_object(os.path.join(path, "run.json")) or {}
        finish = child_run.get("finish")
        pid = record.get("pid") if not record.get("await") else None
        if finish:
            record["state"] = f"finished {finish.get('type')}"
        elif child_run.get("status") == "running":
            record["state"] = "running" if pid_alive(child_run.get("pid")) else "stopped (no finish recorded)"
        elif pid is not None and pid_alive(pid):
            record["state"] = "starting"
        else:
            record["state"] = "never ran" if "exit_code" not in record else f"ended (exit {record.get('exit_code')})"
        record["output"] = os.path.exists(os.path.join(path, OUTPUT_FILE))
        children.append(record)
    return children
