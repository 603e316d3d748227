"""The push/merge guard.

The corpus in tests/fixtures/bash/<category>/*.jsonl is labelled by what bash
really does (scripts/label_guard_corpus.py runs each case in a sandbox repo
with a local bare remote); every case goes through the real entry point,
`ralph pre-tool`, fed a real-shaped PreToolUse payload.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ralph.rules.guard.judge import GuardVerdict, judge_command
from ralph.rules.guard.policy import GuardPolicy

from .conftest import FIXTURES, RALPH, hook_state_dir, load_payload, run_hook

CORPUS = os.path.join(FIXTURES, "bash")
# the first categories, then those added with the forge and data models (forge
# merges, code that arrives as data, bash expansion corners, git running
# programs / remote writes, and commands that must not be blocked)
CATEGORIES = ("block", "allow", "bypass", "fail_closed", "forge", "data_exec", "expansion", "git_programs", "false_blocks")
NEW_CATEGORIES = CATEGORIES[4:]


def load_corpus() -> list[tuple[str, dict]]:
    cases = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*", "*.jsonl"))):
        category = os.path.basename(os.path.dirname(path))
        if category not in CATEGORIES:
            continue  # the destructive and task-runner categories: tests/test_guard_destroy.py
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    case = json.loads(line)
                    case["id"] = f"{category}:{number}"
                    cases.append((category, case))
    return cases


CORPUS_CASES = load_corpus()


def bash_payload(command: str, cwd: str) -> bytes:
    payload = load_payload("PreToolUse_Bash", cwd)
    payload["cwd"] = cwd
    payload["tool_input"]["command"] = command
    return json.dumps(payload).encode()


def run_pre_tool(command: str, cwd: str, env: dict[str, str]) -> dict:
    proc = subprocess.run([RALPH, "pre-tool"], input=bash_payload(command, cwd), capture_output=True, cwd=cwd, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def corpus_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every corpus case through `ralph pre-tool`, four at a time."""
    cwd = str(tmp_path_factory.mktemp("guard-project"))
    env = dict(os.environ)
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("RALPH_CONFIG", None)
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda item: run_pre_tool(item[1]["command"], cwd, env), CORPUS_CASES))
    return {case["id"]: output for (_, case), output in zip(CORPUS_CASES, outputs)}


def test_corpus_shape() -> None:
    counts = {c: sum(1 for category, _ in CORPUS_CASES if category == c) for c in CATEGORIES}
    assert sum(counts.values()) >= 700, counts
    assert all(counts[c] >= 20 for c in CATEGORIES), counts
    assert sum(counts[c] for c in NEW_CATEGORIES) >= 200, counts
    for category, case in CORPUS_CASES:
        assert category in CATEGORIES, category
        if category in ("allow", "false_blocks"):
            assert case["expect"] == "allow", case
        elif category in ("block", "bypass", "fail_closed"):
            assert case["expect"] == "block", case
        else:  # the new categories hold both: what must be blocked and its harmless neighbours
            assert case["expect"] in ("allow", "block"), case
        assert case["why"], case
        assert case["rule_id"], case  # scripts/label_guard_corpus.py --write-rule-ids
        assert set(case) <= {"command", "expect", "why", "sandbox", "rule_id", "id"}, case


def test_corpus_through_pre_tool(corpus_outputs: dict[str, dict]) -> None:
    wrong = []
    for category, case in CORPUS_CASES:
        output = corpus_outputs[case["id"]]
        specific = output.get("hookSpecificOutput") or {}
        if case["expect"] == "block":
            ok = specific.get("permissionDecision") == "deny" and specific.get("hookEventName") == "PreToolUse"
            ok = ok and "commit" in specific.get("permissionDecisionReason", "")
        else:
            ok = output == {}
        if not ok:
            wrong.append(f"{case['id']} expect {case['expect']}: {case['command']!r} -> {output}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("category,case", CORPUS_CASES, ids=[case["id"] for _, case in CORPUS_CASES])
def test_corpus_direct(category: str, case: dict) -> None:
    verdict = judge_command(case["command"])
    assert verdict.blocked == (case["expect"] == "block"), (case, verdict.reason, verdict.trace)
    assert verdict.rule_id == case["rule_id"], (case, verdict.rule_id, verdict.trace)
    assert verdict.rule_id.startswith("allow.") != verdict.blocked
    if verdict.blocked:
        assert verdict.evidence and verdict.reason


# ---- reasons and explain ----


def test_block_reason_is_actionable() -> None:
    verdict = judge_command("git status && bash -c 'git push origin main'")
    assert verdict.blocked
    assert "git push origin main" in verdict.reason
    assert "bash -c" in verdict.reason  # where it was nested
    assert "commit" in verdict.reason and "left to the person or the loop" in verdict.reason
    assert any("git push" in e for e in verdict.evidence)


def test_fail_closed_reason_asks_for_a_plain_rewrite() -> None:
    verdict = judge_command("git $SUBCMD origin main")
    assert verdict.blocked
    assert "literally" in verdict.reason and "only known when the command runs" in verdict.reason


def test_pull_reason_suggests_fetch() -> None:
    assert "git fetch" in judge_command("git pull").reason


def test_explain_prints_decision_and_trace() -> None:
    proc = subprocess.run([RALPH, "explain", "cmd=push; git status && git $cmd"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "decision: BLOCK" in proc.stdout
    assert "rule:     git.push" in proc.stdout
    assert "`git $cmd`" in proc.stdout and "BLOCK" in proc.stdout
    assert "git status: allowed" in proc.stdout
    proc = subprocess.run([RALPH, "explain", "--json", "git log --merges"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["blocked"] is False
    assert json.loads(proc.stdout)["rule_id"] == "allow.nothing-pushes"


# ---- configuration ----


def _policy(table: dict, path: str = "ralph.toml") -> GuardPolicy:
    """[guard] as the hook reads it: checked by the one schema (ralph.config)."""
    from ralph.config.reading import section_values

    return GuardPolicy.from_values(section_values({"guard": table}, "guard", path))


def test_policy_from_config_validates() -> None:
    from ralph.config.schema import ConfigError

    policy = _policy({"block_git_subcommands": ["lfs"], "block_programs": ["gh pr merge"], "allow_commands": ["git push --dry-run"]})
    assert judge_command("git lfs push origin main", policy).blocked
    assert judge_command("gh pr merge 12 --squash", policy).blocked
    assert judge_command("gh -R me/repo pr merge 12", policy).blocked
    assert not judge_command("gh pr view 12", policy).blocked
    assert not judge_command("git push --dry-run", policy).blocked
    assert judge_command("git push --dry-run origin", policy).blocked  # exact strings only
    for bad in ({"block_programs": "gh pr merge"}, {"block_git_subcommands": ["lfs push"]}, {"allow_commands": [1]}, {"unknown": []}):
        with pytest.raises(ConfigError) as raised:
            _policy(bad, "x/ralph.toml")
        assert "x/ralph.toml" in str(raised.value)


def test_forge_families_default_on_and_switchable(tmp_path) -> None:
    from ralph.config.schema import ConfigError
    from ralph.rules.guard.policy import FAMILIES

    samples = {"forge_merges": "gh pr merge 12 --squash", "forge_api_writes": "gh api -X PUT repos/o/r/pulls/1/merge",
               "forge_sync": "gh repo sync", "git_frontends": "jj git push", "merge_backends": "git merge-octopus HEAD a b"}
    # (the destructive families and task_runners: tests/test_guard_destroy.py)
    assert set(samples) == set(FAMILIES) - {"task_runners", "save_before_destroying", "destroy_outside", "destroy_devices",
                                            "destroy_permissions", "destroy_databases"}
    for family, command in samples.items():
        assert judge_command(command).blocked, command
        off = _policy({family: False})
        assert not judge_command(command, off).blocked, command
        assert judge_command(command, off).rule_id == "allow.config-" + family.replace("_", "-")
        others = [c for f, c in samples.items() if f != family]
        assert all(judge_command(c, off).blocked for c in others)
        assert judge_command("git push", off).blocked
    config = tmp_path / "ralph.toml"
    config.write_text('[loop]\nmax_iterations = 3\n\n[guard]\nforge_merges = "no"\n')
    with pytest.raises(ConfigError) as raised:
        _policy({"forge_merges": "no"}, str(config))
    assert str(raised.value).startswith(f"{config}:5: [guard] forge_merges: must be true or false"), raised.value


def test_the_guard_table_declares_the_policys_keys_and_defaults() -> None:
    # the policy holds [guard]'s keys and defaults (the guard reads them without
    # the config schema); ralph.config.tables.guard declares them for ralph.toml, the same ones
    from ralph.config.tables.guard import GUARD_KEYS, GUARD_TABLE
    from ralph.rules.guard.policy import FAMILIES, LISTS, SAVE_SECONDS

    assert list(GUARD_TABLE.keys) == [*LISTS, *FAMILIES, "save_seconds"]
    assert all(GUARD_KEYS[key].default == [] for key in LISTS)
    assert all(GUARD_KEYS[key].kind == "bool" and GUARD_KEYS[key].default is True for key in FAMILIES)
    assert [key for key, declared in GUARD_KEYS.items() if declared.kind == "bool"] == list(FAMILIES)
    assert GUARD_KEYS["save_seconds"].default == SAVE_SECONDS == GuardPolicy().save_seconds
    assert GuardPolicy.from_values({}).families == GuardPolicy().families == dict.fromkeys(FAMILIES, True)


def test_configured_local_remote_is_guarded_through_pre_tool(tmp_path) -> None:
    """A write into a configured local-path remote is a push, whatever the
    remote's directory is called (it need not end in .git)."""
    project, upstream = tmp_path / "project", tmp_path / "upstream"
    for repo in (project, upstream):
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "../upstream"], check=True)
    cwd = str(project)
    for command in ("git -C ../upstream update-ref refs/heads/main HEAD", f"git --git-dir={upstream}/.git branch -f x",
                    "cd ../upstream && git reset --hard", "echo 0 > ../upstream/.git/refs/heads/main"):
        assert run_hook("pre-tool", bash_payload(command, cwd), cwd).denied, command
        with open(os.path.join(hook_state_dir(cwd), "logs", "hooks.jsonl")) as f:
            assert json.loads(f.readlines()[-1])["rule_id"] == "git.remote-write"
    for command in ("git -C ../upstream log --oneline", "git -C ../elsewhere update-ref refs/heads/x HEAD"):
        assert run_hook("pre-tool", bash_payload(command, cwd), cwd).output == {}, command


def test_config_through_pre_tool(tmp_path) -> None:
    (tmp_path / "ralph.toml").write_text('[guard]\nblock_programs = ["gh pr merge"]\nallow_commands = ["git push origin docs"]\n')
    assert run_hook("pre-tool", bash_payload("gh pr merge 7", str(tmp_path)), str(tmp_path)).denied
    assert run_hook("pre-tool", bash_payload("git push origin docs", str(tmp_path)), str(tmp_path)).output == {}
    assert run_hook("pre-tool", bash_payload("git push origin main", str(tmp_path)), str(tmp_path)).denied


# ---- robustness and speed ----


ADVERSARIAL = [
    ("$(" * 10000 + "git push" + ")" * 10000, True),
    ("$(" * 10000 + "ls" + ")" * 10000, False),
    ("echo " + "a" * 1_000_000, False),
    ("echo " + "a " * 500_000 + "; git push", True),
    ("true; " * 100_000 + "git push", True),
    ("{" * 5000 + "a,b" + "}" * 5000, False),
    ("x=push; " + "x=$x$x; " * 40 + "git $x", True),
    ("if true; then " * 3000 + "git push" + "; fi" * 3000, True),
    ("eval " * 3000 + "git push", True),
    ("f0(){ git status; }; " + " ".join(f"f{i}(){{ f{i - 1}; f{i - 1}; }};" for i in range(1, 40)) + " f39", False),
    ("${x:-" * 5000 + "push" + "}" * 5000, True),
    ("`" * 4001, False),
]


@pytest.mark.parametrize("command,blocked", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_input_is_judged(command: str, blocked: bool) -> None:
    """The right verdict on inputs built to blow up a parser; how fast it
    comes is measured by scripts/bench.py ("guard: adversarial input")."""
    verdict = judge_command(command)
    assert isinstance(verdict, GuardVerdict)
    assert verdict.blocked == blocked, verdict.reason


def test_deadline_fails_closed_only_when_it_could_push() -> None:
    slow = "true; " * 100_000
    assert judge_command(slow + "git push", deadline=0.01).blocked
    verdict = judge_command(slow + "ls", deadline=0.01)
    assert not verdict.blocked
    assert "too long" in verdict.trace[-1] and verdict.rule_id == "allow.deadline-no-risky-text", verdict.trace[-1]


def test_never_raises_on_random_text() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list("gitpushmerge $(){}[]'\"`\\;&|<>\n\t#=!*?~-_.,:/x0") + ["<<", "$'", "${", "$((", "<<'E'\nE\n"])

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(alphabet, max_size=60).map("".join))
    def check(text: str) -> None:
        verdict = judge_command(text)
        assert isinstance(verdict.blocked, bool)
        if verdict.blocked:
            assert verdict.reason

    check()


def test_hot_path_imports() -> None:
    # modules the guard itself brings in (site may have loaded re/pathlib already)
    code = ("import sys, ralph.claude.dispatch; before = set(sys.modules); import ralph.rules.guard.judge; "
            "print(sorted(m for m in set(sys.modules) - before if not m.startswith('ralph')))")
    out = subprocess.run([os.path.join(os.path.dirname(RALPH), "python"), "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


GIT_MODEL = "ralph.rules.guard.programs.git"
GIT_CONFIG = "ralph.rules.guard.programs.git_config"
GIT_SUBCOMMANDS = "ralph.rules.guard.programs.git_subcommands"
FORGE_MODELS = "ralph.rules.guard.programs.forges"
SHELL_MODELS = "ralph.rules.guard.programs.shells"
WRAPPER_MODELS = "ralph.rules.guard.programs.wrappers"
DATA_EXEC_MODELS = "ralph.rules.guard.programs.data_exec"
BUILTIN_MODELS = "ralph.rules.guard.programs.shell_builtins"
NAME_GLOBS = "ralph.rules.guard.programs.name_globs"
DESTROY_MODELS = "ralph.rules.guard.programs.destroy"
GIT_DESTROY = "ralph.rules.guard.programs.git_destroy"
RUNNER_MODELS = "ralph.rules.guard.programs.runners"
MAKEFILES = "ralph.rules.guard.programs.makefiles"
DISK_SCRIPTS = "ralph.rules.guard.programs.disk_scripts"
TASK_FILES = "ralph.rules.guard.programs.task_files"
MODEL_MODULES = (GIT_MODEL, GIT_CONFIG, GIT_SUBCOMMANDS, FORGE_MODELS,
                 SHELL_MODELS, WRAPPER_MODELS, DATA_EXEC_MODELS, BUILTIN_MODELS, NAME_GLOBS, DESTROY_MODELS,
                 GIT_DESTROY, RUNNER_MODELS, MAKEFILES, DISK_SCRIPTS, TASK_FILES)


def test_program_models_load_only_when_a_command_reaches_one() -> None:
    code = ("import sys\n"
            "from ralph.rules.guard.models import MODEL_MODULES\n"
            "from ralph.rules.guard.judge import judge_command\n"
            "plain = judge_command('cat README.md notes.txt && echo to-stderr >&2 | wc -l')\n"
            "early = sorted(m for m in MODEL_MODULES if m in sys.modules)\n"
            "wrapped = judge_command(\"bash -c 'git push'\")\n"
            "forge = judge_command('gh pr merge 1')\n"
            "late = sorted(m for m in MODEL_MODULES if m in sys.modules)\n"
            "print(plain.blocked, early, wrapped.blocked, forge.blocked, late)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"False [] True True {sorted([FORGE_MODELS, GIT_MODEL, SHELL_MODELS])}", out


def test_the_program_table_names_functions_of_the_model_modules() -> None:
    # the model modules are loaded by name, which a bundler cannot see:
    # build.spec ships models.MODEL_MODULES, so it must list them all
    from ralph.plugins import load
    from ralph.rules.guard import models
    from ralph.rules.guard.programs import facts

    assert set(models.MODEL_MODULES) == set(MODEL_MODULES)
    package = os.path.dirname(facts.__file__)
    modules = {f"ralph.rules.guard.programs.{name[:-3]}" for name in os.listdir(package) if name.endswith(".py")}
    assert modules - set(MODEL_MODULES) == {"ralph.rules.guard.programs.__init__", "ralph.rules.guard.programs.facts",
                                            "ralph.rules.guard.programs.fast_path"}
    for program, (module, function) in models.PROGRAM_MODELS.items():
        assert module in MODEL_MODULES and callable(getattr(load(module), function, None)), program
    assert models.program_model("git-push") == (GIT_MODEL, "run_dashed_git")
    assert models.program_model("pythonw") == (SHELL_MODELS, "run_interpreter")
    assert models.program_model("npm") == (RUNNER_MODELS, "run_package_scripts")
    assert models.program_model("mkfs.ext4") == (DESTROY_MODELS, "run_disk_writer")
    assert models.program_model("cargo") is None


# Commands agents typically run (the shapes seen in Claude Code sessions, the
# benchmark's command among them), each with the program models judging it
# loads: the models of the programs it runs (git; cd, cp, export: the shell
# builtins; python: interpreters; find: wrappers; sed: data-executing
# programs, which judge the code they find as interpreter code; make, npm,
# pytest: the task runners, which read their files; rm: the destructive
# programs) and no other.
TYPICAL_COMMANDS = {
    "ls -la": [],
    "cd src && pytest -q 2>&1 | tail -20": [BUILTIN_MODELS, RUNNER_MODELS],
    "cat README.md notes.txt && echo to-stderr >&2 && git status --porcelain": [GIT_MODEL],
    "git status": [GIT_MODEL],
    "git diff --stat HEAD~1": [GIT_MODEL],
    "git diff -- 'src/my file.py'": [GIT_MODEL],
    'git add -A && git commit -m "msg"': [GIT_MODEL],
    "git add src/a.py tests/test_a.py && git commit -m 'fix: handle empty input' && git log --oneline -3": [GIT_MODEL],
    "git commit -m \"$(cat <<'EOF'\nAdd the parser\n\nIt reads bash.\nEOF\n)\"": [GIT_MODEL],
    "git log --oneline -5": [GIT_MODEL],
    "git show HEAD --stat": [GIT_MODEL],
    "git checkout -b feature/x": [GIT_MODEL],
    "git switch main": [GIT_MODEL],
    "git branch -a": [GIT_MODEL],
    "git rev-parse --abbrev-ref HEAD": [GIT_MODEL],
    "git stash && git stash pop": [GIT_MODEL],
    "git fetch origin": [GIT_MODEL],
    "git restore --staged src/a.py": [GIT_MODEL],
    "npm run build 2>&1 | head -50": [RUNNER_MODELS],
    "npm test": [RUNNER_MODELS],
    "grep -rn foo src/ | wc -l": [],
    "python -m pytest tests/test_x.py -x -q": [SHELL_MODELS, RUNNER_MODELS],
    "mkdir -p build && cp a.txt build/": [BUILTIN_MODELS],
    "export FOO=bar && make test": [BUILTIN_MODELS, MAKEFILES],
    'ls "my dir" | grep foo': [],
    "find . -name '*.py' | head -20": [WRAPPER_MODELS],
    "echo $HOME && pwd": [],
    "cargo build --release 2>&1 | tail -5": [],
    "rm -rf dist/ && npm ci": [DESTROY_MODELS, RUNNER_MODELS],
    "cat package.json | head -30": [],
    "wc -l src/*.py": [],
    "pip install -e . 2>&1 | tail -3": [],
    "sed -n '1,40p' src/app.py": [DATA_EXEC_MODELS, SHELL_MODELS],
}
# each model module, with commands that need it (and must be blocked)
MODEL_COMMANDS = {
    GIT_MODEL: ("git push origin main", "git -C /srv/app.git commit -m x", "git merge feature"),
    GIT_CONFIG: ("git -c alias.x=push x origin", "git config alias.sync push && git sync",
                 "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p", "echo 'git push' > .git/hooks/pre-commit",
                 "git -c core.sshCommand='git push' fetch"),
    GIT_SUBCOMMANDS: ("git pull origin main", "git rebase -x 'git push' main", "git merge-recursive HEAD a b",
                      "git fetch --upload-pack='git push' origin", "git submodule foreach git push"),
    FORGE_MODELS: ("gh pr merge 1", "glab mr merge 2", "hub merge feature", "jj git push", "ralph stream merge s1"),
    SHELL_MODELS: ("bash -c 'git push'", "python -c 'import os; os.system(\"git push\")'", "eval git push",
                   "source <(echo git push)", "trap 'git push' EXIT"),
    WRAPPER_MODELS: ("timeout 60 git push", "echo 'git push' | xargs -I{} sh -c {}", "sudo -u me git push", "ssh host git push",
                     "find . -exec git push \\;", "busybox sh -c 'git push'"),
    DATA_EXEC_MODELS: ("sed 's/x/git push/e' f", "awk 'BEGIN { system(\"git push\") }'", "vim -c '!git push' f"),
    MAKEFILES: ("printf 'x:\\n\\tgit push\\n' | make -f -", "make --eval 'x:; git push' x"),
    DESTROY_MODELS: ("rm -rf ~/notes", "dd if=/dev/zero of=/dev/sda", "chmod -R 777 /", "psql -c 'DROP DATABASE x'"),
    GIT_DESTROY: ("git -C ../other reset --hard", "cd /srv/repo && git clean -fdx"),
    RUNNER_MODELS: ("echo '{\"scripts\":{\"test\":\"git push\"}}' > package.json && npm test",
                    "printf 'import os\\nos.system(\"git push\")\\n' > test_x.py && pytest test_x.py"),
    TASK_FILES: ("printf 'x:\\n    git push\\n' > justfile && just x", "printf '[testenv]\\ncommands = git push\\n' > tox.ini && tox"),
    BUILTIN_MODELS: ("alias p='git push'; p", "cd /srv/app.git && git commit -m x", "export GIT_EDITOR='git push'; git commit",
                     "printf -v s push; git $s"),
    NAME_GLOBS: ("gi? push", "/usr/bin/git-p*sh origin main"),
}


def _judged_in_fresh_process(command: str) -> tuple[list[str], bool]:
    """The program-model modules a new interpreter loads judging this command, and the verdict."""
    code = ("import json, sys\n"
            "from ralph.rules.guard.judge import judge_command\n"
            f"blocked = judge_command({command!r}).blocked\n"
            f"print(json.dumps([sorted(m for m in {list(MODEL_MODULES)!r} if m in sys.modules), blocked]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, blocked = json.loads(out)
    return loaded, blocked


def test_typical_commands_load_only_the_models_of_their_programs() -> None:
    with ThreadPoolExecutor(4) as pool:
        judged = dict(zip(TYPICAL_COMMANDS, pool.map(_judged_in_fresh_process, TYPICAL_COMMANDS)))
    wrong = {command: loaded for command, (loaded, _) in judged.items() if loaded != sorted(TYPICAL_COMMANDS[command])}
    assert not wrong, wrong
    assert not any(blocked for _, blocked in judged.values()), [c for c, (_, blocked) in judged.items() if blocked]


@pytest.mark.parametrize("module", sorted(MODEL_COMMANDS))
def test_each_model_module_loads_when_a_command_needs_it(module: str) -> None:
    # (the model of scripts on disk needs a project to read: tests/test_guard_destroy.py)
    assert set(MODEL_COMMANDS) == set(MODEL_MODULES) - {DISK_SCRIPTS}
    for command in MODEL_COMMANDS[module]:
        loaded, blocked = _judged_in_fresh_process(command)
        assert module in loaded, (command, loaded)
        assert blocked, command


# ---- one table of program facts ----


def test_guard_and_test_outcome_share_program_facts() -> None:
    from ralph.rules.guard.programs import facts as programs, wrappers as program_models
    from ralph.rules.outcome import command_shape as test_outcome

    assert test_outcome.SHELLS is programs.SHELLS
    assert program_models.WRAPPERS is programs.WRAPPERS
    cases = {
        ("sudo", "-u", "bob", "-R", "/srv", "pytest", "-q"): ["pytest", "-q"],
        ("env", "-i", "CI=1", "timeout", "-s", "KILL", "60", "npm", "test"): ["npm", "test"],
        ("nice", "-n", "5", "xargs", "-n1", "pytest"): ["pytest"],
        ("FOO=1", "cross-env", "NODE_ENV=test", "jest"): ["jest"],
        ("time", "-f", "%e", "go", "test", "./..."): ["go", "test", "./..."],
    }
    for words, expected in cases.items():
        assert programs.unwrap(list(words)) == expected, words
        assert test_outcome.classify_stage(list(words)).kind == test_outcome.classify_stage(expected).kind, words


def test_test_outcome_reads_commands_with_the_guard_parser() -> None:
    from ralph.rules.outcome.command_shape import shell_stages

    stages = shell_stages("cd app && pytest -q 'tests/a b.py' | tee log; echo done")
    assert [(s.words, s.op) for s in stages] == [(["cd", "app"], "&&"), (["pytest", "-q", "tests/a b.py"], "|"),
                                                 (["tee", "log"], ";"), (["echo", "done"], "")]
    nested = shell_stages("bash -c 'npm test || true'")
    assert [(s.words, s.op) for s in nested] == [(["npm", "test"], "||"), (["true"], "")]


def test_local_remotes_are_read_only_when_a_command_needs_them() -> None:
    # The PreToolUse handler passes a function that reads .git/config: most
    # commands never touch another directory, and never pay for reading it.
    from ralph.rules.guard.judge import judge_command

    reads: list[str] = []

    def read_remotes() -> tuple[str, ...]:
        reads.append("read")
        return ("/srv/mirror/", "relative/ignored")

    cases = {
        "cat README.md notes.txt && echo to-stderr >&2 && git status --porcelain": (0, False),
        "git add -A && git commit -qm wip": (0, False),
        "cd /srv/mirror && git commit -qm x": (1, True),
        "git -C /srv/mirror/sub commit -qm x": (1, True),
        "git -C /srv/elsewhere commit -qm x": (1, False),
    }
    for command, (expected_reads, blocked) in cases.items():
        reads.clear()
        lazy = judge_command(command, cwd="/work/app", remotes=read_remotes)
        eager = judge_command(command, cwd="/work/app", remotes=("/srv/mirror/", "relative/ignored"))
        assert (len(reads), lazy.blocked) == (expected_reads, blocked), command
        assert (lazy.blocked, lazy.rule_id, lazy.reason) == (eager.blocked, eager.rule_id, eager.reason), command
