#!/usr/bin/env python3
"""Speed and memory benchmark for ralph-hooks, as ratios against bare Python.

Everything is measured in one run, interleaved round by round so that machine
noise hits every case alike:

  install       ralph as users install it (`pip install .` into a fresh venv
                in the temp dir, as the README's quick start does); with
                --dev-install, the venv running this script instead (the
                editable install of scripts/test, whose launcher leaves it
                to site to find the checkout)
  baseline      python -I -c pass, with that venv's interpreter
  pre-tool      the hook command as `ralph install` writes it
                (`python -IS ralph pre-tool`) on small Bash payloads (the captured one, which
                needs the full shell guard, a plain `ls -la src`, which takes
                the guard's fast path, and `npm test`, whose package.json the guard
                reads) and on an Edit payload
  reference     the design's reference hook: a bash script that reads stdin
                with cat and calls jq three times
  guard         `ralph pre-tool` on a plain command and a 100-segment compound
  post-tool     `ralph post-tool` with 1 MB and 10 MB of test output, and a
                10 MB single line (adversarial)
  stop          `ralph stop` outside a loop run in a repository with no
                `.ralph/` (an ordinary interactive session ending a turn), and
                inside an active loop run (a real `ralph-loop` whose agent
                sleeps, its story open: the gate reads the plan and blocks)
  event hooks   `ralph pre-tool` / `ralph post-tool` in a project whose ralph.toml
                has no [[hooks.event]] (the feature must cost nothing) and one
                with a single matching hook running `true`
  loop          `ralph-loop --dry-run`, and one loop iteration with a no-op agent
                and with an agent that prints a captured stream-json run (the
                stream reader, the usage record)
  stream        the loop's stream reader (ralph.loop.stream) on a 100 MB stream
                of captured lines (tests/fixtures/stream/): MB/s and peak RSS,
                also with one 60 MB line in it; one loop iteration whose agent
                prints that stream (its log redacted line by line)
  lifecycle     `ralph-loop --dry-run` with lifecycle hooks at every point (it
                validates them all), and `ralph pre-tool` in that project (the
                hot path must not pay for them)
  report        `ralph report` (the html page the loop writes at the end of a run)
                for a run of 1,000 iterations: the recorded night of
                tests/fixtures/report/night/ repeated, its stories renumbered
  binary        the onedir binary (dist/ralph/ralph), when scripts/build_binary.py built it
  rollback      (--rollback-files N, default 50000; --rollback-only for just this)
                a small change (3 files edited, 2 added) in a repository of N
                tracked files and in one of 1000: saving it (capture and
                snapshot), a rollback (save, then reset to HEAD) and restoring
                the snapshot, in seconds, as x bare python, as x `git status`
                in the same repository, and as N files / 1000 files (which
                must not exceed what `git status` grows by)

Targets (from the issues) are checked and printed; the exit code is 0 either
way unless --check is given (then 1 when a target is missed). A case whose
command fails is reported with its exit code and its own stderr, and makes
the exit code 1 whatever the flags. --smoke runs every case once (the
stream and rollback parts on smaller inputs) and checks no target: CI runs
it so that no case breaks unnoticed.

The temp repositories and every measured command get a git identity
(BENCH_GIT_ENV): the bench runs in a fresh HOME with no git config.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PAYLOADS = os.path.join(REPO, "ralph", "data", "payloads")
STREAMS = os.path.join(REPO, "tests", "fixtures", "stream")
NIGHT = os.path.join(REPO, "tests", "fixtures", "report", "night")
REPORT_ITERATIONS = 1000

REFERENCE_HOOK = """#!/usr/bin/env bash
input=$(cat)
tool=$(printf '%s' "$input" | jq -r '.tool_name')
cmd=$(printf '%s' "$input" | jq -r '.tool_input.command // empty')
sid=$(printf '%s' "$input" | jq -r '.session_id')
case "$cmd" in *"git push"*) echo '{"decision":"block"}';; *) echo '{}';; esac
"""


PYTHON = sys.executable  # the measured install's interpreter (user_install() may change it)


def executable(name: str) -> str:
    candidate = os.path.join(os.path.dirname(PYTHON), name)
    return candidate if os.path.exists(candidate) else (shutil.which(name) or name)


def user_install(tmp: str) -> str | None:
    """A fresh venv with `pip install <this checkout>` (not editable): the
    layout users run. Its python, or None (with why) when pip cannot build it."""
    venv = os.path.join(tmp, "venv")
    python = os.path.join(venv, "bin", "python")
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", REPO], check=True, capture_output=True)
    except subprocess.CalledProcessError as e:
        print(f"bench: could not pip install the checkout into a fresh venv ({(e.stderr or b'').decode()[-300:].strip()}); "
              "measuring this venv's install instead", file=sys.stderr)
        return None
    print(f"bench: measuring a fresh `pip install .` ({time.perf_counter() - started:.0f}s to install)", file=sys.stderr)
    return python


# Peak RSS is measured through this small spawner: a child forked from the
# benchmark process itself would report the benchmark's own peak (Linux keeps
# the pre-exec high-water mark across execve).
RSS_SPAWNER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(usage.ru_maxrss)
"""


def peak_rss_kib(argv: list[str], stdin: bytes, cwd: str, env: dict) -> int:
    proc = subprocess.run([PYTHON, "-I", "-c", RSS_SPAWNER, *argv], input=stdin, capture_output=True, cwd=cwd, env=env)
    return int(proc.stdout.strip() or 0)


class CaseFailed(Exception):
    """A measured command (or the setup of its case) failed: why, with its own stderr."""


STDERR_SHOWN = 2000  # characters of a failing command's stderr in the report


def run_once(argv: list[str], stdin: bytes, cwd: str, env: dict, expect_exit: int = 0) -> float:
    """Wall seconds of one run, the way a hook runner sees it. Its stderr
    goes to a temp file (as cheap as /dev/null) so a failure can say why:
    CaseFailed with the exit code and the command's own message."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors, cwd=cwd, env=env)
        except OSError as e:
            raise CaseFailed(failure_text(argv, cwd, "cannot start", str(e).encode())) from None
        try:
            proc.stdin.write(stdin)
        except BrokenPipeError:
            pass
        proc.stdin.close()
        _, status, _ = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != expect_exit:
            errors.seek(0)
            raise CaseFailed(failure_text(argv, cwd, f"exit {proc.returncode} (expected {expect_exit})", errors.read()))
    return elapsed


def failure_text(argv: list[str], cwd: str, what: str, stderr: bytes) -> str:
    shown = stderr.decode("utf-8", "replace").strip()
    if len(shown) > STDERR_SHOWN:
        shown = "..." + shown[-STDERR_SHOWN:]
    command = " ".join(argv[:6]) + (" ..." if len(argv) > 6 else "")
    return f"{what}: {command} (in {cwd})" + (f"\n      stderr: " + shown.replace("\n", "\n      ") if shown else "; it wrote nothing on stderr")


def setup_run(argv: list[str], cwd: str | None = None, env: dict | None = None, stdin: bytes = b"") -> str:
    """Run a setup command (git init, commit, ...); CaseFailed with its stderr when it fails."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=env if env is not None else bench_env(), input=stdin, capture_output=True)
    except OSError as e:
        raise CaseFailed(failure_text(argv, cwd or os.getcwd(), "setup cannot start", str(e).encode())) from None
    if done.returncode != 0:
        raise CaseFailed(failure_text(argv, cwd or os.getcwd(), f"setup failed (exit {done.returncode})", done.stderr + done.stdout))
    return done.stdout.decode("utf-8", "replace")


# a git identity for the temp repositories and every measured command: a
# fresh HOME has none, and the loop's commits and snapshots need one
BENCH_GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                 "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def bench_env() -> dict:
    """The environment of every measured command: this one with a git
    identity, without what would point ralph elsewhere. PYTHONDONTWRITEBYTECODE
    (set on some CI machines) would make every run of an editable install
    recompile ralph from source; a pip-installed package always has its
    bytecode, so measure with bytecode."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "PYTHONDONTWRITEBYTECODE")}
    env.update(BENCH_GIT_ENV)
    return env


def payload(name: str, project: str, **tool_input: object) -> dict:
    with open(os.path.join(PAYLOADS, f"{name}.json")) as f:
        data = json.loads(f.read().replace("/home/dev/app", project))
    if tool_input:
        data["tool_input"].update(tool_input)
    return data


def test_output(size: int) -> str:
    line = "tests/test_mod.py::test_case_{:06d} PASSED                                   [ 50%]\n"
    out = []
    total = 0
    i = 0
    while total < size:
        text = line.format(i)
        out.append(text)
        total += len(text)
        i += 1
    out.append("=========================== 1 failed, {} passed in 3.21s ===========================\n".format(i))
    return "".join(out)


class Case:
    def __init__(self, name: str, argv: list[str], stdin: bytes = b"", cwd: str = REPO, env: dict | None = None, setup=None, expect_exit: int = 0) -> None:
        self.expect_exit = expect_exit
        self.name = name
        self.argv = argv
        self.stdin = stdin
        self.cwd = cwd
        self.env = env or os.environ.copy()
        self.setup = setup
        self.times: list[float] = []
        self.rss = 0
        self.failure = ""  # why the case failed ("" while it works): it is then left out of every later round

    def run(self) -> None:
        if self.failure:
            return
        try:
            if self.setup:
                self.setup()
            self.times.append(run_once(self.argv, self.stdin, self.cwd, self.env, self.expect_exit))
        except CaseFailed as e:
            self.failure = str(e)

    def measure_rss(self) -> None:
        if self.failure:
            return
        if self.setup:
            self.setup()
        self.rss = peak_rss_kib(self.argv, self.stdin, self.cwd, self.env)

    def p(self, q: float) -> float:
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.times)


def make_project(root: str, state_dir: bool = True) -> None:
    """A git repository with one commit: a package.json, and (state_dir) a
    `.ralph/plan.md` of two stories."""
    setup_run(["git", "init", "-q", root])
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("hello\n")
    if state_dir:
        os.makedirs(os.path.join(root, ".ralph"), exist_ok=True)
        with open(os.path.join(root, ".ralph", "plan.md"), "w") as f:
            f.write("- [ ] US-001: First story\n  - it works\n- [ ] US-002: Second story\n")
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write(".ralph/logs/\n.ralph/sessions/\n")
    with open(os.path.join(root, "package.json"), "w") as f:
        f.write('{"name": "bench", "scripts": {"pretest": "node build.js", "test": "node --test", "deploy": "git push origin main"}}\n')
    commit_all(root, "initial")


def hook_argv(ralph: str) -> list[str]:
    """The hook command as `ralph install` writes it (`<python> -IS <ralph>`)."""
    import shlex

    sys.path.insert(0, REPO)
    from ralph.commands.install import command_prefix

    return shlex.split(command_prefix(ralph))


BINARY = os.path.join(REPO, "dist", "ralph", "ralph")


def build_cases(project: str, loop_project: str, quick: bool) -> list[Case]:
    ralph_script = executable("ralph")
    hook = hook_argv(ralph_script)
    ralph_loop = executable("ralph-loop")
    env = bench_env()
    ref_script = os.path.join(project, "..", "reference-hook.sh")
    with open(ref_script, "w") as f:
        f.write(REFERENCE_HOOK)
    os.chmod(ref_script, 0o755)
    # Edit of a file the session read: the common, allowed path.
    read = payload("PostToolUse_Read", project)
    setup_run([*hook, "post-tool"], project, env, stdin=json.dumps(read).encode())
    # The captured payload's own command needs the full guard (&&, >&2, git);
    # `ls -la src` takes the fast path for plain commands; `npm test` runs what
    # package.json says, which the guard reads (the project has one).
    bash_small = json.dumps(payload("PreToolUse_Bash", project)).encode()
    bash_plain = json.dumps(payload("PreToolUse_Bash", project, command="ls -la src")).encode()
    bash_runner = json.dumps(payload("PreToolUse_Bash", project, command="npm test")).encode()
    edit = json.dumps(payload("PreToolUse_Edit", project)).encode()
    bash_ran = json.dumps(payload("PostToolUse_Bash", project, command="ls -la src")).encode()
    compound = " && ".join(f"echo step{i} > out{i}.txt" if i % 3 else f'git add out{i - 1}.txt; git commit -qm "step {i}"' for i in range(100))
    bash_compound = json.dumps(payload("PreToolUse_Bash", project, command=compound)).encode()

    bash_adversarial = json.dumps(payload("PreToolUse_Bash", project, command="eval " * 3000 + "git push")).encode()

    def post(size: int, single_line: bool = False) -> bytes:
        data = payload("PostToolUse_Bash", project, command="python -m pytest -q | tail -n 100000")
        text = ("x" * size) if single_line else test_output(size)
        data["tool_response"]["stdout"] = text
        return json.dumps(data).encode()

    cases = [
        Case("baseline: python -I -c pass", [PYTHON, "-I", "-c", "pass"], env=env),
        Case("pre-tool Bash (small)", [*hook, "pre-tool"], bash_small, project, env),
        Case("pre-tool Bash (plain: fast path)", [*hook, "pre-tool"], bash_plain, project, env),
        Case("pre-tool Bash (npm test: package.json read)", [*hook, "pre-tool"], bash_runner, project, env),
        Case("pre-tool Edit (read file)", [*hook, "pre-tool"], edit, project, env),
        Case("post-tool Bash (no tests)", [*hook, "post-tool"], bash_ran, project, env),
        *stop_cases(hook, ralph_loop, os.path.dirname(project), env),
        Case("pre-tool Bash via #! (site)", [ralph_script, "pre-tool"], bash_small, project, env),
        Case("reference: cat + 3x jq", [ref_script], bash_small, project, env),
        Case("guard: 100-segment compound", [*hook, "pre-tool"], bash_compound, project, env),
        # moved here from tests/test_guard.py (a 1.5 s wall-clock assert): input
        # built to blow up a parser, answered within the guard's 0.25 s deadline
        Case("guard: adversarial input", [*hook, "pre-tool"], bash_adversarial, project, env),
        Case("post-tool 1 MB output", [*hook, "post-tool"], post(1 << 20), project, env),
        Case("post-tool 10 MB output", [*hook, "post-tool"], post(10 << 20), project, env),
        Case("post-tool 10 MB single line", [*hook, "post-tool"], post(10 << 20, True), project, env),
    ]
    # User event hooks ([[hooks.event]], ralph/claude/event_command_select.py): a ralph.toml
    # without any (the dispatcher must not pay for the feature), and one
    # matching hook that does nothing (the price of running one).
    for name, config in (("0 event hooks", "[guard]\n"), ("1 event hook", ONE_EVENT_HOOK)):
        event_project = os.path.join(project, "..", f"events-{name.replace(' ', '-')}")
        if not os.path.exists(event_project):
            make_project(event_project)
            with open(os.path.join(event_project, "ralph.toml"), "w") as f:
                f.write(config)
        plain = json.dumps(payload("PreToolUse_Bash", event_project, command="npm test")).encode()
        read_payload = json.dumps(payload("PostToolUse_Read", event_project)).encode()
        cases.append(Case(f"pre-tool Bash +toml, {name}", [*hook, "pre-tool"], plain, event_project, env))
        cases.append(Case(f"post-tool Read +toml, {name}", [*hook, "post-tool"], read_payload, event_project, env))
    if os.path.exists(BINARY):  # scripts/build_binary.py
        cases.append(Case("onedir binary pre-tool Bash (small)", [BINARY, "pre-tool"], bash_small, project, env))
        cases.append(Case("onedir binary pre-tool (fast path)", [BINARY, "pre-tool"], bash_plain, project, env))
    import importlib.util

    report_project = os.path.join(os.path.dirname(loop_project), "report-project")
    if not os.path.exists(report_project):
        make_project(report_project)
        write_long_run(report_project, REPORT_ITERATIONS)
    cases.append(Case(f"ralph report, {REPORT_ITERATIONS} iterations", [ralph_script, "report"], b"", report_project, env))
    if os.path.exists(ralph_loop) and importlib.util.find_spec("ralph.commands.loop") is not None:
        with open(os.path.join(loop_project, "ralph.toml"), "w") as f:
            f.write(NOOP_LOOP_CONFIG)
        commit_all(loop_project)
        cases.append(Case("ralph-loop --dry-run", [ralph_loop, "--dry-run"], b"", loop_project, env))
        # The loop's own cost per iteration, agent excluded: a no-op agent
        # that never finishes its story, so every iteration is a full one.
        # (t(1 + N) - t(1)) / N removes start-up; exit 3 = max_iterations.
        for count in (1, 1 + LOOP_EXTRA_ITERATIONS):
            cases.append(Case(f"ralph-loop {count} no-op iteration(s)", [ralph_loop, "-q", "--max-iterations", str(count)], b"", loop_project, env, expect_exit=3))
        # the same with an agent that prints a real stream-json run (13 KB):
        # the stream reader, the live view (quiet) and the usage record
        stream_project = os.path.join(os.path.dirname(loop_project), "stream-project")
        if not os.path.exists(stream_project):
            make_project(stream_project)
            with open(os.path.join(stream_project, "ralph.toml"), "w") as f:
                f.write(NOOP_LOOP_CONFIG.replace('["true"]', json.dumps(["cat", os.path.join(STREAMS, "tools_success.jsonl")])))
            commit_all(stream_project)
        for count in (1, 1 + LOOP_EXTRA_ITERATIONS):
            cases.append(Case(f"ralph-loop {count} stream iteration(s)", [ralph_loop, "-q", "--max-iterations", str(count)], b"", stream_project, env, expect_exit=3))
        hooks_project = os.path.join(os.path.dirname(loop_project), "hooks-project")
        if not os.path.exists(hooks_project):
            make_project(hooks_project)
        write_lifecycle_hooks(hooks_project)
        cases.append(Case("ralph-loop --dry-run (hooks configured)", [ralph_loop, "--dry-run"], b"", hooks_project, env))
        # the same call in a project whose ralph.toml has no hooks: the hot
        # path parses ralph.toml either way, and must pay nothing for [hooks]
        plain_loop = json.dumps(payload("PreToolUse_Bash", loop_project, command="npm test")).encode()
        cases.append(Case("pre-tool Bash (ralph.toml, no hooks)", [*hook, "pre-tool"], plain_loop, loop_project, env))
        plain_here = json.dumps(payload("PreToolUse_Bash", hooks_project, command="npm test")).encode()
        cases.append(Case("pre-tool Bash (lifecycle hooks configured)", [*hook, "pre-tool"], plain_here, hooks_project, env))
    return cases


STOP_OUTSIDE = "stop (no loop run, no .ralph/)"
STOP_INSIDE = "stop (inside a loop run, story open)"
# the loop of the Stop case: an agent that sleeps through the bench, never
# ended for silence or time
SLEEPING_LOOP_CONFIG = """[loop]
agent_command = ["sleep", "3600"]
idle_timeout_seconds = 0
timeout_seconds = 7200
agent_tools = false
"""
LOOP_START_SECONDS = 60.0  # a bound for the live loop to write its run.json (a hang guard, not a speed check)
BACKGROUND: list[subprocess.Popen] = []  # the live loops, ended by end_background()


def stop_cases(hook: list[str], ralph_loop: str, tmp: str, env: dict) -> list[Case]:
    """`ralph stop` in an ordinary session of a repository with no `.ralph/`,
    and inside the active run of a real ralph-loop (its agent asleep, the
    story open: the gate reads the plan and blocks)."""
    outside = os.path.join(tmp, "plain-project")
    make_project(outside, state_dir=False)
    cases = [Case(STOP_OUTSIDE, [*hook, "stop"], json.dumps(payload("Stop", outside)).encode(), outside, env)]
    inside = os.path.join(tmp, "live-loop-project")
    make_project(inside)
    with open(os.path.join(inside, "ralph.toml"), "w") as f:
        f.write(SLEEPING_LOOP_CONFIG)
    commit_all(inside)
    case = Case(STOP_INSIDE, [*hook, "stop"], json.dumps(payload("Stop", inside)).encode(), inside, env)
    try:
        start_live_loop(ralph_loop, inside, env)
    except CaseFailed as e:
        case.failure = str(e)
    cases.append(case)
    return cases


def start_live_loop(ralph_loop: str, root: str, env: dict) -> None:
    """Start ralph-loop in `root` in the background and wait until its
    run.json describes an active run (a story, a checkpoint, "running")."""
    argv = [ralph_loop, "-q", "--max-iterations", "1"]
    errors = tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                            start_new_session=True)
    BACKGROUND.append(proc)
    deadline = time.monotonic() + LOOP_START_SECONDS
    while time.monotonic() < deadline:
        if run_is_active(os.path.join(root, ".ralph", "run.json")):
            errors.close()
            return
        if proc.poll() is not None:
            errors.seek(0)
            raise CaseFailed(failure_text(argv, root, f"the live loop ended (exit {proc.returncode}) before its run was active",
                                          errors.read()))
        time.sleep(0.05)
    errors.seek(0)
    raise CaseFailed(failure_text(argv, root, f"no active run in .ralph/run.json after {LOOP_START_SECONDS:g}s", errors.read()))


def run_is_active(path: str) -> bool:
    """run.json as ralph.run.state reads it: running, with a story and a checkpoint."""
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, ValueError):
        return False
    story = state.get("story") if isinstance(state, dict) else None
    return state.get("status") == "running" and isinstance(story, dict) and bool(story.get("id")) and bool(state.get("checkpoint"))


def live_loops_held(cases: list[Case]) -> None:
    """A live loop that ended during the rounds leaves its Stop figures
    measuring no loop run at all: the case fails, saying so."""
    ended = [proc for proc in BACKGROUND if proc.poll() is not None]
    for case in cases:
        if case.name == STOP_INSIDE and ended and not case.failure:
            case.failure = (f"the live loop ended (exit {ended[0].returncode}) during the rounds: its figures are not "
                            "of a call inside a loop run")


def end_background() -> None:
    """End the live loops (SIGTERM to each loop's group: the loop ends its agent), then any that lingers."""
    import signal

    for proc in BACKGROUND:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass
    BACKGROUND.clear()


def write_long_run(root: str, iterations: int) -> None:
    """`.ralph/events.jsonl` and run.json of one run with `iterations`
    iterations: the recorded night's events repeated in order, each round's
    stories renamed (US-001 -> S0001-US-001) and its times shifted, as if
    the night had gone on."""
    with open(os.path.join(NIGHT, "events.jsonl"), encoding="utf-8") as f:
        night = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(NIGHT, "run.json"), encoding="utf-8") as f:
        state = json.load(f)
    middle = [e for e in night if e["event"] not in ("run_start", "finish", "handoff", "stage_complete", "sandbox")]
    per_round = sum(1 for e in middle if e["event"] == "iteration")
    finish = next(e for e in night if e["event"] == "finish")
    span = finish["elapsed_s"]
    out = [next(e for e in night if e["event"] == "run_start")]
    stories = []
    rounds = -(-iterations // per_round)
    for number in range(rounds):
        shift = number * span

        def moved(stamp: object) -> object:
            if not isinstance(stamp, str) or not stamp.endswith("Z"):
                return stamp
            moment = time.mktime(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) + shift
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.localtime(moment))

        for event in middle:
            event = dict(event, at=moved(event.get("at")), started=moved(event.get("started")), ended=moved(event.get("ended")))
            event = {k: v for k, v in event.items() if v is not None}
            if event.get("story"):
                event["story"] = f"S{number:04d}-{event['story']}"
            if isinstance(event.get("iteration"), int):
                event["iteration"] += number * per_round
            if event["event"] == "iteration" and event["iteration"] > iterations:
                continue
            out.append(event)
        stories += [dict(s, id=f"S{number:04d}-{s['id']}") for s in finish["stories"]]
    out.append(dict(finish, elapsed_s=span * rounds, iterations=iterations, stories=stories))
    out += [e for e in night if e["event"] == "handoff"]
    with open(os.path.join(root, ".ralph", "events.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(e) + "\n" for e in out)
    with open(os.path.join(root, ".ralph", "run.json"), "w", encoding="utf-8") as f:
        json.dump(state, f)


ONE_EVENT_HOOK = """[[hooks.event]]
match = "PreToolUse:Bash, PostToolUse:Read"
command = "true"
"""


def write_lifecycle_hooks(root: str) -> None:
    """Two declarative hooks at every point (conditions, templates) and the
    three hooks-directory executables."""
    points = ("session_start", "pre_iteration", "post_iteration", "on_task_complete", "stage_complete", "on_error", "session_end")
    config = NOOP_LOOP_CONFIG + "\n[hooks]\ndir_timeout = 10\n"
    for point in points:
        config += (f'\n[[hooks.{point}]]\nname = "{point}-check"\ncommand = "echo {{{{task_id}}}} {{{{iteration}}}} ${{STAGE}}"\n'
                   'when = "${ITERATION} % 2 == 0 && ${STAGE} == \'build\'"\npipe_output = true\n'
                   f'\n[[hooks.{point}]]\ncommand = ["true"]\non_failure = "retry"\nretries = 2\nretry_delay = 0\n')
    with open(os.path.join(root, "ralph.toml"), "w") as f:
        f.write(config)
    for name in ("started", "next_iteration", "finished"):
        path = os.path.join(root, ".ralph", "hooks", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o755)


LOOP_EXTRA_ITERATIONS = 10
NOOP_LOOP_CONFIG = """[loop]
agent_command = ["true"]
no_progress_limit = 0
max_iterations_per_story = 0
max_iterations = 1000
"""

TARGETS = [
    # (case, reference case, max ratio, description)
    # the hook command `ralph install` writes (python -IS), plain code on the hot path
    # the budgets of issue 31: about 0.3 ms a module, and a module per idea is worth that
    ("pre-tool Bash (small)", "baseline: python -I -c pass", 1.3, "p50 <= 1.3x bare python (full guard)"),
    ("pre-tool Bash (plain: fast path)", "baseline: python -I -c pass", 1.2, "p50 <= 1.2x bare python (fast path)"),
    ("pre-tool Bash (npm test: package.json read)", "baseline: python -I -c pass", 1.3, "p50 <= 1.3x bare python (a task runner's file read and judged)"),
    ("pre-tool Edit (read file)", "baseline: python -I -c pass", 1.1, "p50 <= 1.1x bare python"),
    ("post-tool Bash (no tests)", "baseline: python -I -c pass", 1.5, "p50 <= 1.5x bare python: a command that runs no tests loads no verdict code"),
    (STOP_OUTSIDE, "baseline: python -I -c pass", 1.5, "p50 <= 1.5x bare python: no loop run, nothing to gate"),
    (STOP_INSIDE, "baseline: python -I -c pass", 2.0, "p50 <= 2x bare python: the gate reads the run, the plan and the test history"),
    ("pre-tool Bash (small)", "reference: cat + 3x jq", 0.25, "p50 <= 0.25x the cat+jq reference hook"),
    ("pre-tool Bash (plain: fast path)", "reference: cat + 3x jq", 0.25, "p50 <= 0.25x the cat+jq reference hook"),
    ("pre-tool Edit (read file)", "reference: cat + 3x jq", 0.25, "p50 <= 0.25x the cat+jq reference hook"),
    ("post-tool 10 MB output", "post-tool 1 MB output", 12.0, "10 MB / 1 MB <= 12x (linear)"),
    ("post-tool Read +toml, 0 event hooks", "baseline: python -I -c pass", 1.5, "p50 <= 1.5x bare python: no event hooks, no cost"),
    ("pre-tool Bash (lifecycle hooks configured)", "pre-tool Bash (ralph.toml, no hooks)", 1.1, "p50 <= 1.1x the same call without hooks"),
    ("onedir binary pre-tool Bash (small)", "baseline: python -I -c pass", 2.5, "p50 <= 2.5x bare python"),
    ("onedir binary pre-tool (fast path)", "baseline: python -I -c pass", 2.5, "p50 <= 2.5x bare python"),
    ("ralph-loop --dry-run", "baseline: python -I -c pass", 2.0, "p50 <= 2x bare python"),
    (f"ralph report, {REPORT_ITERATIONS} iterations", "baseline: python -I -c pass", 40.0,
     "p50 <= 40x bare python (with the 1 s limit below: the report of a long night is there at once)"),
    # moved here from tests/test_test_outcome.py (150 ms wall-clock asserts)
    ("post-tool 10 MB single line", "baseline: python -I -c pass", 10.0, "p50 <= 10x bare python (adversarial)"),
]
ABSOLUTE_TARGETS = [
    (f"ralph report, {REPORT_ITERATIONS} iterations", 1.0, "p50 < 1 s for a run of 1,000 iterations"),
    ("post-tool 10 MB output", 0.150, "p50 <= 150 ms at 10 MB"),
    ("ralph-loop --dry-run", 0.100, "p50 <= 100 ms"),
    ("ralph-loop --dry-run (hooks configured)", 0.100, "p50 <= 100 ms"),
    ("ralph-loop per-iteration overhead", 0.150, "p50 <= 150 ms"),
    ("ralph-loop per-iteration overhead (stream agent)", 0.150, "p50 <= 150 ms"),
    ("guard: adversarial input", 0.400, "p50 <= 400 ms: the 0.25 s deadline holds"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10 rounds")
    parser.add_argument("--smoke", action="store_true",
                        help="run every case once (stream and rollback parts on small inputs), check no target: "
                             "exit 1 only when a case fails (CI)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--dev-install", action="store_true", help="measure the venv running this script, not a fresh `pip install .`")
    parser.add_argument("--rollback-files", type=int, default=None,
                        help=f"tracked files in the rollback benchmark's repository (default {ROLLBACK_FILES}, "
                             f"{SMOKE_ROLLBACK_FILES} with --smoke; 0: skip it)")
    parser.add_argument("--rollback-rounds", type=int, default=None, help="default 3 (1 with --smoke)")
    parser.add_argument("--rollback-only", action="store_true", help="only the rollback benchmark")
    args = parser.parse_args()
    if args.rollback_files is None:
        args.rollback_files = SMOKE_ROLLBACK_FILES if args.smoke else ROLLBACK_FILES
    if args.rollback_rounds is None:
        args.rollback_rounds = 1 if args.smoke else 3
    if args.smoke:
        args.check = False
    rounds = 1 if args.smoke else 10 if args.quick else args.rounds
    if args.rollback_only:
        return section("rollback", rollback_figures, args)
    tmp = tempfile.mkdtemp(prefix="ralph-bench-")
    try:
        if not args.dev_install:
            global PYTHON
            PYTHON = user_install(tmp) or PYTHON
        project = os.path.join(tmp, "project")
        loop_project = os.path.join(tmp, "loop-project")
        try:
            make_project(project)
            make_project(loop_project)
            cases = build_cases(project, loop_project, args.quick)
        except CaseFailed as e:
            print(f"bench: cannot set the cases up: {e}", file=sys.stderr)
            return 1
        if not args.smoke:
            for case in cases:  # warm caches (.pyc, page cache) before timing
                case.run()
                case.times.clear()
                case.measure_rss()
        for _ in range(rounds):
            for case in cases:
                case.run()
        live_loops_held(cases)
        end_background()
        status = report(cases, rounds, args)
        status |= section("guard per call", guard_per_call, args)
        status |= section("stream reader", lambda args: stream_reader(tmp, args), args)
        orjson_tradeoff(rounds)
        if args.rollback_files:
            status |= section("rollback", rollback_figures, args)
        return status
    finally:
        end_background()
        shutil.rmtree(tmp, ignore_errors=True)


ROLLBACK_FILES = 50000
SMOKE_ROLLBACK_FILES = 1500


def section(name: str, measure: object, args: argparse.Namespace) -> int:
    """One part of the bench after the table; a failure says why and makes the exit code 1."""
    try:
        return measure(args)  # type: ignore[operator]
    except (CaseFailed, SystemExit) as e:
        print(f"\nbench: FAILED {name}: {e}", file=sys.stderr)
        return 1


def verdict(ok: bool, args: argparse.Namespace) -> str:
    """How a target reads: ok or MISSED, or not checked in a smoke run."""
    return "smoke: not checked" if args.smoke else "ok" if ok else "MISSED"


def commit_all(project: str, message: str = "config") -> None:
    """The loop refuses a tree with uncommitted changes outside .ralph/: commit its config."""
    setup_run(["git", "-C", project, "add", "-A"])
    setup_run(["git", "-C", project, "commit", "-q", "-m", message])


class Derived:
    """A per-iteration figure computed round by round from two timed cases."""

    def __init__(self, name: str, longer: Case, shorter: Case, count: int) -> None:
        self.name = name
        self.times = [(a - b) / count for a, b in zip(longer.times, shorter.times)]
        self.rss = longer.rss
        self.failure = longer.failure or shorter.failure

    p = Case.p
    p50 = Case.p50


def guard_per_call(args: argparse.Namespace) -> int:
    """The guard's own time per call on plain git commands, in one process
    (moved here from tests/test_guard.py, a 1 ms wall-clock assert)."""
    from ralph.rules.guard.judge import judge_command

    missed = 0
    print()
    for command in ("git status --porcelain", "cat README.md && git diff --stat"):
        judge_command(command)
        started = time.perf_counter()
        for _ in range(200):
            judge_command(command)
        per_call = (time.perf_counter() - started) / 200
        ok = per_call < 0.001
        missed += not ok
        print(f"  [{verdict(ok, args)}] guard per call, {command!r}: {per_call * 1e6:.0f} us (< 1 ms)")
    return 1 if (missed and args.check) else 0


STREAM_MB = 100
GIANT_LINE_MB = 60
SMOKE_STREAM_MB = 8  # --smoke: the same code on a stream that takes a moment
SMOKE_GIANT_LINE_MB = 4
STREAM_READER_MIN_MBPS = 40.0  # the stream is read as fast as an agent could ever write it
STREAM_READER_MAX_EXTRA_MIB = 32  # over python with the reader imported, at rest: bounded whatever the size
# One process: import the reader, then (unless told "rest") read the file in
# the chunks ralph.process.run hands on; prints seconds and lines. Its peak
# RSS comes from RSS_SPAWNER_OUT (see RSS_SPAWNER: not a child of this process).
STREAM_READER_CODE = """
import sys, time
from ralph.loop.stream import AgentStream
stream = AgentStream(None, "/home/dev/app/repo")
started = time.perf_counter()
if sys.argv[2] != "rest":
    with open(sys.argv[1], "rb") as f:
        while True:
            chunk = f.read(65536)
            if not chunk:
                break
            stream.feed(chunk)
    stream.close()
    assert stream.result is not None, "the stream's result line was not read"
print(time.perf_counter() - started, stream.lines)
"""
RSS_SPAWNER_OUT = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
out = proc.stdout.read().decode()
_, status, usage = os.wait4(proc.pid, 0)
print(out.strip(), os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def spawned(argv: list[str], env: dict) -> list[str]:
    """What `argv` printed, its exit code and its peak RSS (KiB), measured by RSS_SPAWNER_OUT."""
    done = subprocess.run([PYTHON, "-I", "-c", RSS_SPAWNER_OUT, *argv], capture_output=True, text=True, env=env)
    words = done.stdout.split()
    if done.returncode or len(words) < 2 or words[-2] != "0":
        raise SystemExit(f"bench: {' '.join(argv[:4])} failed: {done.stdout[-300:]} {done.stderr[-500:]}")
    return words


def captured_stream(path: str, megabytes: int, giant_line_mb: int = 0) -> int:
    """A stream of `megabytes` made of real lines (a run with five tool calls,
    one long tool result) repeated, between a real init line and a real result
    line; with `giant_line_mb`, one tool result line that long in the middle.
    Its size."""
    with open(os.path.join(STREAMS, "tools_success.jsonl"), "rb") as f:
        run = f.read().splitlines(keepends=True)
    with open(os.path.join(STREAMS, "big_tool_output.jsonl"), "rb") as f:
        big = f.read().splitlines(keepends=True)
    body = b"".join(run[1:-1] + big[1:-1])
    copies = max(1, ((megabytes - giant_line_mb) << 20) // len(body))
    with open(path, "wb") as f:
        f.write(run[0])
        for number in range(copies):
            f.write(body)
            if giant_line_mb and number == copies // 2:
                f.write(b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"')
                for _ in range(giant_line_mb):
                    f.write(b"x" * (1 << 20))
                f.write(b'"}]}}\n')
        f.write(run[-1])
    return os.path.getsize(path)


def stream_reader(tmp: str, args: argparse.Namespace) -> int:
    """MB/s and peak memory of the stream reader on 100 MB of captured
    stream-json, and of one loop iteration whose agent prints it."""
    env = bench_env()
    missed = 0
    megabytes, giant_mb = (SMOKE_STREAM_MB, SMOKE_GIANT_LINE_MB) if args.smoke else (STREAM_MB, GIANT_LINE_MB)
    print(f"\nstream reader (ralph.loop.stream), {megabytes} MB of captured stream-json, read in 64 KiB chunks:")
    rest_kib = int(spawned([PYTHON, "-I", "-c", STREAM_READER_CODE, os.devnull, "rest"], env)[-1])
    for label, giant in (("lines of up to 40 KB", 0), (f"with one {giant_mb} MB line", giant_mb)):
        path = os.path.join(tmp, f"stream-{giant}.jsonl")
        size = captured_stream(path, megabytes, giant)
        runs = []
        for _ in range(1 if args.smoke else 3):
            seconds, lines, _exit, kib = spawned([PYTHON, "-I", "-c", STREAM_READER_CODE, path, "read"], env)
            runs.append((float(seconds), int(lines), int(kib)))
        seconds = statistics.median(r[0] for r in runs)
        peak = max(r[2] for r in runs)
        mbps = size / seconds / 1e6
        extra = (peak - rest_kib) / 1024
        ok = mbps >= STREAM_READER_MIN_MBPS and extra <= STREAM_READER_MAX_EXTRA_MIB
        missed += not ok
        print(f"  [{verdict(ok, args)}] {label}: {size / 1e6:.0f} MB, {runs[0][1]} lines, {mbps:.0f} MB/s "
              f"(>= {STREAM_READER_MIN_MBPS:g}), peak RSS {peak / 1024:.1f} MiB = {extra:+.1f} MiB over the reader at rest "
              f"({rest_kib / 1024:.1f} MiB; <= +{STREAM_READER_MAX_EXTRA_MIB})")
    ralph_loop = executable("ralph-loop")
    if os.path.exists(ralph_loop):
        project = os.path.join(tmp, "stream-100mb-project")
        make_project(project)
        with open(os.path.join(project, "ralph.toml"), "w") as f:
            f.write(NOOP_LOOP_CONFIG.replace('["true"]', json.dumps(["cat", os.path.join(tmp, "stream-0.jsonl")])))
        commit_all(project)
        argv = [ralph_loop, "-q", "--max-iterations", "1"]
        seconds = run_once(argv, b"", project, env, expect_exit=3)
        kib = peak_rss_kib(argv, b"", project, env)
        print(f"  one ralph-loop iteration whose agent prints it: {seconds:.1f} s ({megabytes * 1.048576 / seconds:.1f} MB/s; "
              f"the iteration log redacts every line), peak RSS of the loop {kib / 1024:.1f} MiB")
    return 1 if (missed and args.check) else 0


def orjson_tradeoff(rounds: int) -> None:
    """Does orjson pay for hook payloads? Its import (measured as a process,
    like a hook pays it) against what it saves parsing payloads of each size
    versus the C scanner the hook uses (ralph.fastjson)."""
    try:
        import orjson
    except ImportError:
        print("\norjson: not installed, trade-off not measured")
        return
    from ralph import fastjson

    bare = [run_once([sys.executable, "-I", "-c", "pass"], b"", REPO, os.environ.copy()) for _ in range(rounds)]
    with_import = [run_once([sys.executable, "-I", "-c", "import orjson"], b"", REPO, os.environ.copy()) for _ in range(rounds)]
    import_ms = (statistics.median(with_import) - statistics.median(bare)) * 1000
    from ralph.claude.dispatch import ORJSON_MIN_BYTES

    print(f"\norjson: import costs {import_ms:.1f} ms per process; parse time saved vs the C scanner"
          f" (the hook uses orjson from {ORJSON_MIN_BYTES >> 20} MiB):")
    for megabytes in (1, 10, 60):
        data = json.dumps({"tool_response": {"stdout": test_output(megabytes << 20)}}).encode()
        saved = []
        for _ in range(5):
            started = time.perf_counter()
            fastjson.loads(data)
            middle = time.perf_counter()
            orjson.loads(data)
            saved.append((middle - started) - (time.perf_counter() - middle))
        gain = statistics.median(saved) * 1000
        print(f"  {megabytes:>3} MB payload: saves {gain:5.1f} ms -> {'pays' if gain > import_ms else 'does not pay'}")


ROLLBACK_OPERATIONS = ("capture", "rollback", "restore")
ROLLBACK_WAIT_SECONDS = 60.0  # what a PostToolUseFailure hook waits for its rollback (half its 120 s timeout)


def make_big_repository(root: str, files: int) -> None:
    """`files` tracked files of ~150 bytes, 50 to a directory, one commit."""
    setup_run(["git", "init", "-q", root])
    for number in range(files):
        directory = os.path.join(root, f"pkg{number // 500:04d}", f"mod{(number // 50) % 10}")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"f{number:06d}.py"), "w") as f:
            f.write(f"# file {number}\nVALUE = {number}\n" + "x = 1\n" * 20)
    commit_all(root, "initial")


def small_change(root: str) -> None:
    for number in (0, 7, 49):
        with open(os.path.join(root, "pkg0000", "mod0", f"f{number:06d}.py"), "a") as f:
            f.write("y = 2\n")
    for name in ("new_module.py", os.path.join("pkg0000", "new_test.py")):
        with open(os.path.join(root, name), "w") as f:
            f.write("def test_new():\n    assert False\n")


def rollback_figures(args: argparse.Namespace) -> int:
    """Save, roll back and restore a small change in a big repository and in
    a small one (in this process: the hook's own start-up is measured above)."""
    sys.path.insert(0, REPO)
    from ralph.rollback.restore import restore_snapshot, save_and_restore
    from ralph.rollback.snapshots import save_snapshot

    files = args.rollback_files
    tmp = tempfile.mkdtemp(prefix="ralph-bench-rollback-")
    try:
        bare = statistics.median(run_once([PYTHON, "-I", "-c", "pass"], b"", REPO, os.environ.copy()) for _ in range(10))
        figures: dict[str, dict[str, float]] = {}
        for size in (1000, files):
            root = os.path.join(tmp, f"repo-{size}")
            started = time.perf_counter()
            make_big_repository(root, size)
            print(f"\nrollback: {size} tracked files ({time.perf_counter() - started:.0f}s to build)", file=sys.stderr)
            checkpoint = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
            small_change(root)
            times: dict[str, list[float]] = {"capture": [], "rollback": [], "restore": [], "git status": []}
            for _ in range(args.rollback_rounds):
                started = time.perf_counter()
                subprocess.run(["git", "-C", root, "status", "--porcelain"], check=True, capture_output=True)
                times["git status"].append(time.perf_counter() - started)
                started = time.perf_counter()
                save_snapshot(root, "bench: the small change")
                times["capture"].append(time.perf_counter() - started)
                started = time.perf_counter()
                result = save_and_restore(root, checkpoint, story="BENCH", iteration=1, trigger="bench")
                times["rollback"].append(time.perf_counter() - started)
                if not result.restored:
                    raise SystemExit(f"bench: the rollback failed: {result.message}")
                started = time.perf_counter()
                restore_snapshot(root, result.id)
                times["restore"].append(time.perf_counter() - started)
            figures[str(size)] = {name: statistics.median(values) for name, values in times.items()}
        print(f"\nrollback of a small change (3 files edited, 2 added), median of {args.rollback_rounds}:")
        print(f"{'operation':<10} {'1000 files s':>13} {f'{files} files s':>15} {'x python':>9} {'x git status':>13} {'big/small':>10}")
        missed = 0
        small, big = figures["1000"], figures[str(files)]
        for name in ("git status", "capture", "rollback", "restore"):
            print(f"{name:<10} {small[name]:13.3f} {big[name]:15.3f} {big[name] / bare:9.1f} {big[name] / big['git status']:13.1f}"
                  f" {big[name] / small[name]:10.2f}")
        # the cost of a small change may grow with the repository only as fast
        # as git's own change detection (a stat of every file) does
        git_growth = big["git status"] / small["git status"]
        for name in ROLLBACK_OPERATIONS:
            ratio = big[name] / small[name]
            ok = ratio <= git_growth
            missed += not ok
            print(f"  [{verdict(ok, args)}] {name}: {files} files / 1000 files = {ratio:.2f}x"
                  f" (<= {git_growth:.2f}x, what `git status` grows by: the cost follows the change and git's own stat)")
        ok = big["rollback"] <= ROLLBACK_WAIT_SECONDS
        missed += not ok
        print(f"  [{verdict(ok, args)}] rollback in {files} files: {big['rollback']:.1f} s"
              f" (<= {ROLLBACK_WAIT_SECONDS:g} s: a hook gets its answer without handing it to the background)")
        if args.json:
            with open(args.json + ".rollback.json" if not args.rollback_only else args.json, "w") as f:
                json.dump({"bare_python_s": bare, "seconds": figures}, f, indent=2)
        return 1 if (missed and args.check) else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(cases: list[Case], rounds: int, args: argparse.Namespace) -> int:
    by_name = {c.name: c for c in cases}
    if "ralph-loop 1 no-op iteration(s)" in by_name:
        for kind, name in (("no-op", "ralph-loop per-iteration overhead"), ("stream", "ralph-loop per-iteration overhead (stream agent)")):
            longer = by_name[f"ralph-loop {1 + LOOP_EXTRA_ITERATIONS} {kind} iteration(s)"]
            derived = Derived(name, longer, by_name[f"ralph-loop 1 {kind} iteration(s)"], LOOP_EXTRA_ITERATIONS)
            cases = [*cases, derived]
            by_name[derived.name] = derived
    base = by_name["baseline: python -I -c pass"]
    failed = [c for c in cases if c.failure]
    kind = "smoke run: one round, targets not checked" if args.smoke else f"{rounds} rounds"
    print(f"ralph-hooks benchmark: {kind}, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print(f"{'case':<36} {'p50 ms':>8} {'p95 ms':>8} {'x python':>9} {'peak RSS MiB':>13}")
    for case in cases:
        if case.failure or base.failure:
            print(f"{case.name:<36} {'FAILED' if case.failure else '-':>8}")
            continue
        print(f"{case.name:<36} {case.p50 * 1000:8.1f} {case.p(0.95) * 1000:8.1f} {case.p50 / base.p50:9.2f} {case.rss / 1024:13.1f}")
    if failed:
        print(f"\n{len(failed)} case(s) FAILED:")
        for case in failed:
            print(f"  {case.name}: {case.failure}")
    usable = {name: case for name, case in by_name.items() if not case.failure and not base.failure}
    results = {c.name: {"p50_ms": c.p50 * 1000, "p95_ms": c.p(0.95) * 1000, "ratio_python": c.p50 / base.p50, "peak_rss_kib": c.rss}
               for c in cases if c.name in usable}
    results.update({c.name: {"failed": c.failure} for c in failed})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    if args.smoke:
        return 1 if failed else 0
    print("\ntargets:")
    missed = 0
    for name, ref, limit, text in TARGETS:
        if name in by_name and ref in by_name:
            if name not in usable or ref not in usable:
                missed += 1
                print(f"  [FAILED] {name}: no figure, a case failed (see above) ({text})")
                continue
            ratio = usable[name].p50 / usable[ref].p50
            ok = ratio <= limit
            missed += not ok
            print(f"  [{'ok' if ok else 'MISSED'}] {name}: {ratio:.2f}x {ref} ({text})")
    for name, limit, text in ABSOLUTE_TARGETS:
        if name in by_name:
            if name not in usable:
                missed += 1
                print(f"  [FAILED] {name}: no figure, the case failed (see above) ({text})")
                continue
            value = usable[name].p50
            ok = value <= limit
            missed += not ok
            print(f"  [{'ok' if ok else 'MISSED'}] {name}: {value * 1000:.1f} ms = {value / base.p50:.2f}x python ({text})")
    return 1 if failed or (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
