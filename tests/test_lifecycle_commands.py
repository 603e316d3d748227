"""`ralph init`, `ralph hooks list`, `ralph hooks test`, and the hot path
staying free of the hook engine."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.lifecycle_support import HookProject

RALPH = os.path.join(os.path.dirname(sys.executable), "ralph")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ralph(*args: str, cwd: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([RALPH, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def test_init_creates_everything_once_and_never_overwrites(tmp_path) -> None:
    root = str(tmp_path)
    with open(os.path.join(root, "ralph.toml"), "w") as f:
        f.write("# mine\n")
    first = ralph("init", "-C", root, cwd=root)
    assert first.returncode == 0, first.stderr
    created = [line.split()[1] for line in first.stdout.splitlines() if line.startswith("created")]
    assert created == [".ralph/.gitignore", ".ralph/plan.md", ".ralph/PROMPT.md", ".ralph/hooks/started", ".ralph/hooks/next_iteration",
                       ".ralph/hooks/finished", ".ralph/hooks/custom/notify"]
    assert "kept     ralph.toml (exists; not overwritten)" in first.stdout and "set prompt" in first.stdout
    assert open(os.path.join(root, "ralph.toml")).read() == "# mine\n"
    for name in ("started", "next_iteration", "finished", "custom/notify"):
        path = os.path.join(root, ".ralph", "hooks", name)
        assert os.access(path, os.X_OK)
        assert open(path, "rb").read() == open(os.path.join(REPO, "ralph", "data", "hooks", name), "rb").read()  # the packaged templates
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(["git", "-C", root, "add", "-A"], check=True)
    tracked = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True).stdout.split()
    assert ".ralph/hooks/custom/notify" in tracked and ".ralph/plan.md" in tracked  # hooks are committed with the project
    with open(os.path.join(root, ".ralph", "plan.md"), "a") as f:
        f.write("- [ ] US-002: mine\n")
    second = ralph("init", "-C", root, cwd=root)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert "US-002: mine" in open(os.path.join(root, ".ralph", "plan.md")).read()
    assert [n for n in os.listdir(os.path.join(root, ".ralph")) if n.endswith(".tmp")] == []


def test_init_templates_pass_shell_syntax_and_run(tmp_path) -> None:
    for name in ("started", "next_iteration", "finished", "custom/notify"):
        path = os.path.join(REPO, "ralph", "data", "hooks", name)
        assert subprocess.run(["sh", "-n", path]).returncode == 0, name
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "RALPH_NOTIFY_WEBHOOK")}
    env.update(RALPH_FINISH_TYPE="complete", RALPH_TOTAL_ITERATIONS="3", RALPH_TOTAL_COMMITS="2", RALPH_DURATION="9")
    done = subprocess.run([os.path.join(REPO, "ralph", "data", "hooks", "finished")], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "ralph-loop finished: complete after 3 iteration(s), 2 commit(s), 9s\n"
    notify = subprocess.run([os.path.join(REPO, "ralph", "data", "hooks", "custom", "notify"), "$(touch x) done"],
                            env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert notify.returncode == 0 and not os.path.exists(tmp_path / "x")


def test_templates_ship_in_the_package_data() -> None:
    import tomllib

    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["ralph"]
    import fnmatch

    from ralph.commands.init import FILES

    for _, source, _ in FILES:
        assert any(fnmatch.fnmatch("data/" + source, pattern) for pattern in patterns), source


def test_hooks_list_shows_sources_state_and_reasons(tmp_path, monkeypatch) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\nname = "lint"\ncommand = "ruff check ."\npipe_output = true\nwhen = "${ITERATION} > 1"\n\n'
                              '[[hooks.on_iteration_complete]]\ncommand = "echo off"\nenabled = false\n',
                    global_config='[[hooks.session_end]]\ncommand = "notify-send done"\nawait = false\n')
    p.dir_hook("started", "exit 0")
    p.dir_hook("finished", "exit 0", executable=False)
    result = ralph("hooks", "list", "-C", p.root, cwd=p.root, env=p.environ(RALPH_HOOK_STARTED_ENABLED="false"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"[on ] lint  (project: {p.config_path}:1)" in out and "when '${ITERATION} > 1', pipe_output, timeout 30s" in out
    assert f"[off] echo off  (project: {p.config_path}:7, as on_iteration_complete)" in out and "disabled: enabled = false" in out
    assert "[off] started  (hooks dir:" in out and "disabled: RALPH_HOOK_STARTED_ENABLED=false" in out
    assert "[off] finished  (hooks dir:" in out and "not executable (chmod +x" in out
    assert "[on ] notify-send done  (global:" in out and "await = false" in out
    assert out.index("lint") < out.index("echo off")


def test_hooks_list_reports_errors_with_exit_2(tmp_path) -> None:
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "echo {{nope}}"\n')
    result = ralph("hooks", "list", "-C", p.root, cwd=p.root, env=p.environ())
    assert result.returncode == 2 and f"{p.config_path}:2: [hooks.post_iteration] command: unknown template variable" in result.stderr


def test_hooks_test_fires_one_point_with_sample_context(tmp_path) -> None:
    p = HookProject(tmp_path, '[[hooks.on_task_complete]]\ncommand = "echo validating {{task_id}}: {{task_content}}"\npipe_output = true\n\n'
                              '[[hooks.on_task_complete]]\ncommand = "echo never"\nwhen = "${ITERATION} > 5"\n\n'
                              '[[hooks.on_task_complete]]\ncommand = "@RECORD@"\n')
    with open(os.path.join(p.state_dir, "plan.md"), "w") as f:
        f.write("- [x] US-001: Old\n- [ ] US-002: Add $(rm -rf ~) greeting\n- [ ] US-003: Later\n")
    result = ralph("hooks", "test", "on_task_complete", "--iteration", "4", "-C", p.root, cwd=p.root, env=p.environ())
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "on_task_complete: 3 active hook(s) · story US-002 · iteration 4" in out
    assert "command: echo validating US-002: 'Add $(rm -rf ~) greeting'" in out
    assert "validating US-002: Add $(rm -rf ~) greeting" in out and "exit 0" in out
    assert "[skip] echo never: when '${ITERATION} > 5' is false" in out
    assert "the next agent prompt would include:" in out and "the loop would continue" in out
    [seen] = p.records()
    assert seen["env"]["RALPH_ITERATION"] == "4" and seen["env"]["RALPH_STORY_ID"] == "US-002"
    assert not os.path.exists(os.path.join(p.state_dir, "hook_output.json"))  # the real buffer is untouched
    story = ralph("hooks", "test", "task_complete", "-C", p.root, cwd=p.root, env=p.environ())
    assert story.returncode == 2 and "unknown point 'task_complete'" in story.stderr


def test_hooks_test_says_what_the_loop_would_do(tmp_path) -> None:
    p = HookProject(tmp_path)
    p.dir_hook("next_iteration", '[ "$RALPH_ITERATION" = 2 ] && exit 1; [ "$RALPH_ITERATION" = 3 ] && { echo stop; exit 2; }; exit 0')
    outputs = {n: ralph("hooks", "test", "next_iteration", "--iteration", str(n), "-C", p.root, cwd=p.root, env=p.environ()).stdout
               for n in (1, 2, 3)}
    assert "the loop would continue" in outputs[1]
    assert "the loop would skip this iteration" in outputs[2]
    assert "the loop would stop: finish type hook_abort (next_iteration exited 2: stop)" in outputs[3]


def test_hot_path_never_imports_the_engine(tmp_path) -> None:
    """With hooks configured everywhere, a hook call imports no ralph.loop.lifecycle module."""
    p = HookProject(tmp_path, '[[hooks.post_iteration]]\ncommand = "true"\n', global_config='[[hooks.session_end]]\ncommand = "true"\n')
    p.dir_hook("started", "exit 0")
    subprocess.run(["git", "init", "-q", p.root], check=True)
    payload = json.dumps({"session_id": "s", "transcript_path": "/dev/null", "cwd": p.root, "hook_event_name": "PreToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_use_id": "t"})
    for command in ("pre-tool", "post-tool", "prompt", "stop"):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "ralph", command], input=payload, capture_output=True,
                              text=True, cwd=p.root, env=p.environ(CLAUDE_PROJECT_DIR=p.root))
        assert proc.returncode == 0 and proc.stdout.strip().startswith("{"), (command, proc.stdout, proc.stderr[-2000:])
        imported = [line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
        assert "ralph.claude.dispatch" in imported and not [m for m in imported if m.startswith("ralph.loop.lifecycle")], command
