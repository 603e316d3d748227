#!/usr/bin/env python3
"""Capture real test-runner output as fixtures for ralph.rules.test_outcome.

Runs every runner on the tiny projects in scripts/runner_samples/ (passing,
failing, erroring, skipping, zero-test and masked variants, plus non-test
commands built to look like failures), each through `bash -c CMD 2>&1` exactly
as Claude Code's Bash tool runs it (stderr merged into stdout), and writes one
JSON file per capture to tests/fixtures/test_outcome/<category>/<runner>_<variant>.json:

    {"command", "exit_code", "output", "tool", "tool_version", "captured_at",
     "expect", "category", "accept", "note"}

`expect` is what actually happened, taken from the scenario definition below
(each sample was built to pass or fail), never from the classifier. `accept`
lists other verdicts the rules allow for that capture: only `unknown`, for a
failing run whose output was cut before anything showed it (the rule is "use
what's visible, else unknown").

Installs what it needs into a cache dir (default ~/.cache/ralph-runner-capture):
a venv (pytest, tox, nox), an npm prefix (jest, vitest 3 + vite 7, mocha, tape,
tap, deno, bun), and apt packages (golang, bats, ruby + rspec + minitest, php +
phpunit). cargo, cmake/ctest and prove are expected on the machine. A runner
whose tool is missing is skipped and reported.

usage: scripts/capture_runner_outputs.py [--cache DIR] [--only RUNNER,..] [--no-install] [--clean]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "scripts" / "runner_samples"
FIXTURES = REPO / "tests" / "fixtures" / "test_outcome"
MAX_OUTPUT = 20_000  # keep fixtures small: head + tail of longer outputs
TIMEOUT = 300

APT_PACKAGES = {"go": "golang-go", "bats": "bats", "ruby": "ruby", "rspec": "ruby-rspec", "minitest": "ruby-minitest", "php": "php-cli", "phpunit": "phpunit"}
PIP_PACKAGES = ["pytest", "tox", "nox"]
NPM_PACKAGES = ["jest", "vitest@3", "vite@7", "mocha", "tape", "tap", "deno", "bun"]

# runner -> command printing its version (run in the sample's work dir)
VERSION_COMMANDS = {
    "pytest": "pytest --version", "unittest": "python --version", "tox": "tox --version", "nox": "nox --version",
    "jest": "jest --version", "vitest": "vitest --version", "mocha": "mocha --version", "node": "node --version",
    "tape": "node -p \"require('tape/package.json').version\"", "tap": "node -p \"require('tap/package.json').version\"",
    "prove": "prove --version", "bats": "bats --version", "go": "go version", "cargo": "cargo --version",
    "rspec": "rspec --version | head -1", "minitest": "ruby -rminitest -e 'puts Minitest::VERSION'", "phpunit": "phpunit --version",
    "ctest": "ctest --version | head -1", "deno": "deno --version | head -1", "bun": "bun --version",
    "npm": "npm --version", "make": "make --version | head -1", "shell": "bash --version | head -1",
}
# runner -> programs that must be on PATH to capture it
REQUIRES = {
    "pytest": ["pytest"], "unittest": ["python"], "tox": ["tox"], "nox": ["nox"], "jest": ["jest"], "vitest": ["vitest"],
    "mocha": ["mocha"], "node": ["node"], "tape": ["tape"], "tap": ["tap"], "prove": ["prove"], "bats": ["bats"],
    "go": ["go"], "cargo": ["cargo"], "rspec": ["rspec"], "minitest": ["ruby"], "phpunit": ["phpunit"],
    "ctest": ["ctest", "cmake", "cc"], "deno": ["deno"], "bun": ["bun"], "shell": ["bash"],
}


class Scenario:
    __slots__ = ("runner", "variant", "expect", "category", "sample", "command", "accept", "note", "prep")

    def __init__(self, runner: str, variant: str, expect: str, category: str, sample: str, command: str,
                 accept: tuple[str, ...] = (), note: str = "", prep: str = "") -> None:
        self.runner, self.variant, self.expect, self.category = runner, variant, expect, category
        self.sample, self.command, self.accept, self.note, self.prep = sample, command, accept, note, prep


def masked_variants(runner: str, sample: str, base: str, expect: str, prefix: str = "") -> list[Scenario]:
    """The ways an agent's command hides the runner's exit status."""
    cat = "masked_fail" if expect == "fail" else "masked_pass"
    return [
        Scenario(runner, f"{prefix}masked_tail", expect, cat, sample, f"{base} 2>&1 | tail -5"),
        Scenario(runner, f"{prefix}masked_or_true", expect, cat, sample, f"{base} || true"),
        Scenario(runner, f"{prefix}masked_tee", expect, cat, sample, f"{base} | tee test-output.log"),
        Scenario(runner, f"{prefix}masked_echo_done", expect, cat, sample, f"{base}; echo done"),
        Scenario(runner, f"{prefix}masked_ok_or_failed", expect, cat, sample, f"{base} && echo ok || echo failed"),
    ]


# runner, sample, a passing command (masked variants are generated from it)
PASS_COMMANDS = [
    ("pytest", "pytest", "pytest -q tests_pass tests_skip"), ("unittest", "unittest", "python -m unittest test_ok"),
    ("vitest", "vitest", "npx vitest run tests/pass.test.js"), ("mocha", "mocha", "npx mocha test/pass.spec.js"),
    ("node", "node", "node --test test/pass.test.mjs"), ("tape", "tape", "npx tape test/pass.js"),
    ("prove", "prove", "prove t/"), ("bats", "bats", "bats pass.bats"), ("cargo", "cargo_pass", "cargo test"),
    ("rspec", "rspec", "rspec spec/calc_spec.rb"), ("minitest", "minitest", "ruby -Itest test/pass_test.rb"),
    ("phpunit", "phpunit", "phpunit tests/SkipTest.php"), ("ctest", "ctest", "ctest --test-dir build -L good"),
    ("deno", "deno", "deno test pass_test.ts"), ("bun", "bun", "bun test pass.test.ts"),
]


def scenarios() -> list[Scenario]:
    S = Scenario
    out: list[Scenario] = []
    # --- pytest ------------------------------------------------------------
    out += [
        S("pytest", "pass", "pass", "true_pass", "pytest", "pytest tests_pass"),
        S("pytest", "pass_q", "pass", "true_pass", "pytest", "pytest -q tests_pass"),
        S("pytest", "pass_v_python_m", "pass", "true_pass", "pytest", "python -m pytest -v tests_pass"),
        S("pytest", "pass_color", "pass", "true_pass", "pytest", "pytest --color=yes tests_pass"),
        S("pytest", "pass_cd_env", "pass", "true_pass", "pytest", "cd tests_pass && PYTHONDONTWRITEBYTECODE=1 pytest -q ."),
        S("pytest", "pass_logs_failure_text", "pass", "false_fail", "pytest", "pytest -s -rA tests_logs"),
        S("pytest", "pass_skip_xfail_xpass", "pass", "false_fail", "pytest", "pytest -rsxX tests_skip"),
        S("pytest", "pass_names_with_fail_v", "pass", "false_fail", "pytest", "pytest -v tests_pass tests_logs"),
        S("pytest", "fail", "fail", "true_fail", "pytest", "pytest tests_fail"),
        S("pytest", "fail_q", "fail", "true_fail", "pytest", "pytest -q tests_fail"),
        S("pytest", "fail_x", "fail", "true_fail", "pytest", "python -m pytest -x tests_fail"),
        S("pytest", "fail_color", "fail", "true_fail", "pytest", "pytest --color=yes tests_fail"),
        S("pytest", "fail_tb_line", "fail", "true_fail", "pytest", "pytest --tb=line -q tests_fail"),
        S("pytest", "fail_import_error", "fail", "true_fail", "pytest", "pytest tests_err"),
        S("pytest", "fail_syntax_error", "fail", "true_fail", "pytest", "pytest -q tests_syntax"),
        S("pytest", "fail_xpass_strict", "fail", "true_fail", "pytest", "pytest tests_strict"),
        S("pytest", "fail_mixed_dirs", "fail", "true_fail", "pytest", "pytest -q tests_pass tests_fail tests_skip"),
        S("pytest", "zero_empty_dir", "unknown", "zero_tests", "pytest", "pytest tests_empty"),
        S("pytest", "zero_deselected", "unknown", "zero_tests", "pytest", "pytest -q tests_pass -k no_such_test"),
        S("pytest", "fail_head_progress", "fail", "masked_fail", "pytest", "pytest tests_fail | head -n 8",
          note="cut to the first lines; the progress line shows the F"),
        S("pytest", "fail_head_banner_only", "fail", "masked_fail", "pytest", "pytest tests_fail | head -n 3", accept=("unknown",),
          note="cut before any result is visible: unknown is the rule's answer"),
        S("pytest", "pass_tail", "pass", "masked_pass", "pytest", "pytest tests_pass 2>&1 | tail -3"),
        S("pytest", "pass_or_true", "pass", "masked_pass", "pytest", "pytest -q tests_pass || true"),
        S("pytest", "fail_make_test", "fail", "true_fail", "pytest", "make test-fail"),
        S("pytest", "pass_make_test", "pass", "true_pass", "pytest", "make test"),
        S("pytest", "fail_script", "fail", "true_fail", "pytest", "./run_tests.sh tests_fail"),
        S("pytest", "pass_script", "pass", "true_pass", "pytest", "./run_tests.sh tests_pass"),
        S("pytest", "fail_bash_c", "fail", "true_fail", "pytest", "bash -c 'cd tests_fail && python -m pytest -q'"),
        S("pytest", "fail_timeout_env", "fail", "true_fail", "pytest", "timeout 120 env PYTHONHASHSEED=0 pytest -q tests_fail"),
    ]
    out += masked_variants("pytest", "pytest", "pytest -q tests_fail", "fail")
    out += [
        S("tox", "pass", "pass", "true_pass", "pytest", "tox -q"),
        S("tox", "fail", "fail", "true_fail", "pytest", "tox -q -- tests_fail"),
        S("nox", "pass", "pass", "true_pass", "pytest", "nox -s tests"),
        S("nox", "fail", "fail", "true_fail", "pytest", "nox -s tests -- tests_fail"),
    ]
    # --- unittest ----------------------------------------------------------
    out += [
        S("unittest", "pass", "pass", "false_fail", "unittest", "python -m unittest test_ok"),
        S("unittest", "pass_v", "pass", "false_fail", "unittest", "python -m unittest -v test_ok"),
        S("unittest", "pass_script", "pass", "false_fail", "unittest", "python test_ok.py"),
        S("unittest", "fail", "fail", "true_fail", "unittest", "python -m unittest test_bad"),
        S("unittest", "fail_v", "fail", "true_fail", "unittest", "python -m unittest -v test_bad"),
        S("unittest", "fail_import_error", "fail", "true_fail", "unittest", "python -m unittest test_importerr"),
        S("unittest", "fail_discover", "fail", "true_fail", "unittest", "python -m unittest discover -p 'test_*.py'"),
        S("unittest", "zero_discover_empty", "unknown", "zero_tests", "unittest", "python -m unittest discover -s empty"),
    ]
    out += masked_variants("unittest", "unittest", "python -m unittest test_bad", "fail")
    # --- jest --------------------------------------------------------------
    out += [
        S("jest", "pass", "pass", "false_fail", "jest", "npx jest tests/pass.test.js"),
        S("jest", "pass_logs_failure_text", "pass", "false_fail", "jest", "npx jest tests/logs.test.js"),
        S("jest", "pass_npm_run", "pass", "true_pass", "jest", "npm run test:unit"),
        S("jest", "pass_verbose_color", "pass", "false_fail", "jest", "npx jest --verbose --colors tests/pass.test.js"),
        S("jest", "fail", "fail", "true_fail", "jest", "npx jest tests/fail.test.js"),
        S("jest", "fail_npm_test", "fail", "true_fail", "jest", "npm test -- tests/fail.test.js"),
        S("jest", "fail_all", "fail", "true_fail", "jest", "npm test"),
        S("jest", "fail_colors_ci", "fail", "true_fail", "jest", "CI=true npx jest --colors tests/fail.test.js"),
        S("jest", "fail_syntax_error", "fail", "true_fail", "jest", "npx jest tests/syntax.test.js"),
        S("jest", "zero_no_match", "unknown", "zero_tests", "jest", "npx jest no_such_pattern"),
        S("jest", "zero_pass_with_no_tests", "unknown", "zero_tests", "jest", "npx jest --passWithNoTests no_such_pattern"),
    ]
    out += masked_variants("jest", "jest", "npx jest tests/fail.test.js", "fail")
    out += masked_variants("jest", "jest", "npx jest tests/pass.test.js", "pass", prefix="pass_")[:2]
    # --- vitest ------------------------------------------------------------
    out += [
        S("vitest", "pass", "pass", "false_fail", "vitest", "npx vitest run tests/pass.test.js"),
        S("vitest", "pass_logs_failure_text", "pass", "false_fail", "vitest", "npx vitest run tests/logs.test.js"),
        S("vitest", "pass_verbose", "pass", "false_fail", "vitest", "npx vitest run --reporter=verbose tests/pass.test.js"),
        S("vitest", "fail", "fail", "true_fail", "vitest", "npx vitest run tests/fail.test.js"),
        S("vitest", "fail_npm_test", "fail", "true_fail", "vitest", "npm test"),
        S("vitest", "fail_syntax_error", "fail", "true_fail", "vitest", "npx vitest run tests/syntax.test.js"),
        S("vitest", "zero_no_files", "unknown", "zero_tests", "vitest", "npx vitest run no_such_pattern"),
    ]
    out += masked_variants("vitest", "vitest", "npx vitest run tests/fail.test.js", "fail")
    # --- mocha -------------------------------------------------------------
    out += [
        S("mocha", "pass_pending", "pass", "false_fail", "mocha", "npx mocha test/pass.spec.js"),
        S("mocha", "pass_npm_run", "pass", "false_fail", "mocha", "npm run test:pass"),
        S("mocha", "fail_two", "fail", "true_fail", "mocha", "npx mocha test/fail.spec.js"),
        S("mocha", "fail_npm_test", "fail", "true_fail", "mocha", "npm test"),
        S("mocha", "fail_syntax_error", "fail", "true_fail", "mocha", "npx mocha test/syntax.spec.js"),
        S("mocha", "fail_tap_reporter", "fail", "true_fail", "mocha", "npx mocha --reporter tap test/fail.spec.js"),
        S("mocha", "zero_grep", "unknown", "zero_tests", "mocha", "npx mocha --grep no_such_test test/pass.spec.js"),
    ]
    out += masked_variants("mocha", "mocha", "npx mocha test/fail.spec.js", "fail")
    # --- node --test -------------------------------------------------------
    out += [
        S("node", "pass_skip_todo", "pass", "false_fail", "node", "node --test test/pass.test.mjs"),
        S("node", "pass_spec", "pass", "false_fail", "node", "node --test --test-reporter=spec test/pass.test.mjs"),
        S("node", "fail", "fail", "true_fail", "node", "node --test test/fail.test.mjs"),
        S("node", "fail_spec", "fail", "true_fail", "node", "node --test --test-reporter=spec test/fail.test.mjs"),
        S("node", "fail_syntax_error", "fail", "true_fail", "node", "node --test test/syntax.test.mjs"),
        S("node", "zero_name_pattern", "unknown", "zero_tests", "node", "node --test --test-name-pattern=no_such_test test/pass.test.mjs"),
    ]
    out += masked_variants("node", "node", "node --test test/fail.test.mjs", "fail")
    # --- tape --------------------------------------------------------------
    out += [
        S("tape", "pass_skip_todo", "pass", "false_fail", "tape", "node test/pass.js"),
        S("tape", "pass_cli", "pass", "false_fail", "tape", "npx tape test/pass.js"),
        S("tape", "fail", "fail", "true_fail", "tape", "npx tape test/fail.js"),
        S("tape", "fail_node", "fail", "true_fail", "tape", "node test/fail.js"),
        S("tape", "fail_require_error", "fail", "true_fail", "tape", "npx tape test/throws.js"),
    ]
    out += masked_variants("tape", "tape", "npx tape test/fail.js", "fail")
    # --- tap (node-tap) ----------------------------------------------------
    out += [
        S("tap", "pass", "pass", "false_fail", "tap", "npx tap test/pass.js"),
        S("tap", "fail", "fail", "true_fail", "tap", "npx tap test/fail.js"),
        S("tap", "fail_npm_test", "fail", "true_fail", "tap", "npm test"),
        S("tap", "fail_or_true", "fail", "masked_fail", "tap", "npx tap test/fail.js || true"),
    ]
    # --- prove -------------------------------------------------------------
    out += [
        S("prove", "pass_todo_skip", "pass", "false_fail", "prove", "prove t/"),
        S("prove", "pass_verbose", "pass", "false_fail", "prove", "prove -v t/"),
        S("prove", "fail", "fail", "true_fail", "prove", "prove t_fail/"),
        S("prove", "fail_verbose", "fail", "true_fail", "prove", "prove -v t_fail/"),
        S("prove", "fail_missing_module", "fail", "true_fail", "prove", "prove t_die/"),
        S("prove", "zero_no_files", "unknown", "zero_tests", "prove", "prove t_empty/"),
    ]
    out += masked_variants("prove", "prove", "prove t_fail/", "fail")
    # --- bats --------------------------------------------------------------
    out += [
        S("bats", "pass_skip", "pass", "false_fail", "bats", "bats pass.bats"),
        S("bats", "pass_pretty", "pass", "false_fail", "bats", "bats --formatter pretty pass.bats"),
        S("bats", "fail", "fail", "true_fail", "bats", "bats fail.bats"),
        S("bats", "fail_pretty", "fail", "true_fail", "bats", "bats -p fail.bats"),
        S("bats", "fail_syntax_error", "fail", "true_fail", "bats", "bats syntax.bats"),
        S("bats", "zero_no_tests", "unknown", "zero_tests", "bats", "bats empty.bats"),
    ]
    out += masked_variants("bats", "bats", "bats fail.bats", "fail")
    # --- go ----------------------------------------------------------------
    out += [
        S("go", "pass", "pass", "true_pass", "go", "go test ./pass"),
        S("go", "pass_v_log_failure_text", "pass", "false_fail", "go", "go test -v ./pass ./logs"),
        S("go", "pass_json", "pass", "false_fail", "go", "go test -json ./pass"),
        S("go", "pass_with_no_test_files", "pass", "true_pass", "go", "go test ./pass ./notests ./logs"),
        S("go", "fail", "fail", "true_fail", "go", "go test ./fail"),
        S("go", "fail_v", "fail", "true_fail", "go", "go test -v ./fail"),
        S("go", "fail_json", "fail", "true_fail", "go", "go test -json ./fail"),
        S("go", "fail_all_packages", "fail", "true_fail", "go", "go test ./..."),
        S("go", "fail_build_error", "fail", "true_fail", "go", "go test ./builderr"),
        S("go", "fail_build_error_json", "fail", "true_fail", "go", "go test -json ./builderr"),
        S("go", "fail_count1_run", "fail", "true_fail", "go", "go test -count=1 -run 'TestAdd' ./fail"),
        S("go", "zero_no_test_files", "unknown", "zero_tests", "go", "go test ./notests"),
        S("go", "zero_no_tests_to_run", "unknown", "zero_tests", "go", "go test -run NoSuchTest ./pass"),
    ]
    out += masked_variants("go", "go", "go test ./fail", "fail")
    out += masked_variants("go", "go", "go test -v ./pass ./logs", "pass", prefix="pass_")[:3]
    # --- cargo -------------------------------------------------------------
    out += [
        S("cargo", "pass_ignored_should_panic", "pass", "false_fail", "cargo_pass", "cargo test"),
        S("cargo", "pass_q", "pass", "false_fail", "cargo_pass", "cargo test -q"),
        S("cargo", "pass_nocapture", "pass", "false_fail", "cargo_pass", "cargo test -- --nocapture"),
        S("cargo", "fail", "fail", "true_fail", "cargo_fail", "cargo test"),
        S("cargo", "fail_color", "fail", "true_fail", "cargo_fail", "cargo test --color always"),
        S("cargo", "fail_compile_error", "fail", "true_fail", "cargo_compile", "cargo test"),
        S("cargo", "zero_no_tests", "unknown", "zero_tests", "cargo_zero", "cargo test"),
    ]
    out += masked_variants("cargo", "cargo_fail", "cargo test", "fail")
    out += masked_variants("cargo", "cargo_compile", "cargo test", "fail", prefix="compile_")[:2]
    # --- rspec -------------------------------------------------------------
    out += [
        S("rspec", "pass_pending", "pass", "false_fail", "rspec", "rspec spec/calc_spec.rb"),
        S("rspec", "pass_doc_format", "pass", "false_fail", "rspec", "rspec --format documentation spec/calc_spec.rb"),
        S("rspec", "fail", "fail", "true_fail", "rspec", "rspec spec/fail_spec.rb"),
        S("rspec", "fail_all", "fail", "true_fail", "rspec", "rspec"),
        S("rspec", "fail_load_error", "fail", "true_fail", "rspec", "rspec spec_err"),
        S("rspec", "zero_no_examples", "unknown", "zero_tests", "rspec", "rspec spec_empty"),
    ]
    out += masked_variants("rspec", "rspec", "rspec spec/fail_spec.rb", "fail")
    # --- minitest ----------------------------------------------------------
    out += [
        S("minitest", "pass_skip", "pass", "false_fail", "minitest", "ruby -Itest test/pass_test.rb"),
        S("minitest", "pass_rake", "pass", "false_fail", "minitest", "rake test"),
        S("minitest", "fail", "fail", "true_fail", "minitest", "ruby -Itest test/fail_test.rb"),
        S("minitest", "fail_rake", "fail", "true_fail", "minitest", "TESTS=test/fail_test.rb rake test"),
        S("minitest", "fail_syntax_error", "fail", "true_fail", "minitest", "ruby -Itest test/syntax_test.rb"),
        S("minitest", "zero_no_tests", "unknown", "zero_tests", "minitest", "ruby -Itest test/empty_test.rb"),
    ]
    out += masked_variants("minitest", "minitest", "ruby -Itest test/fail_test.rb", "fail")
    # --- phpunit -----------------------------------------------------------
    out += [
        S("phpunit", "pass", "pass", "false_fail", "phpunit", "phpunit tests/PassTest.php"),
        S("phpunit", "pass_skipped", "pass", "false_fail", "phpunit", "phpunit tests/SkipTest.php"),
        S("phpunit", "fail", "fail", "true_fail", "phpunit", "phpunit tests/FailTest.php"),
        S("phpunit", "fail_error", "fail", "true_fail", "phpunit", "phpunit tests/ErrorTest.php"),
        S("phpunit", "fail_syntax_error", "fail", "true_fail", "phpunit", "phpunit tests/SyntaxTest.php"),
        S("phpunit", "zero_no_tests", "unknown", "zero_tests", "phpunit", "phpunit tests_empty"),
    ]
    out += masked_variants("phpunit", "phpunit", "phpunit tests/FailTest.php", "fail")
    # --- ctest -------------------------------------------------------------
    prep = "cmake -S . -B build >/dev/null && cmake --build build >/dev/null"
    out += [
        S("ctest", "pass", "pass", "false_fail", "ctest", "ctest --test-dir build -L good", prep=prep),
        S("ctest", "pass_cd", "pass", "false_fail", "ctest", "cd build && ctest -R adds --output-on-failure", prep=prep),
        S("ctest", "fail", "fail", "true_fail", "ctest", "ctest --test-dir build", prep=prep),
        S("ctest", "fail_output_on_failure", "fail", "true_fail", "ctest", "cd build && ctest --output-on-failure", prep=prep),
        S("ctest", "fail_make_test", "fail", "true_fail", "ctest", "cd build && make test", prep=prep),
        S("ctest", "zero_no_match", "unknown", "zero_tests", "ctest", "ctest --test-dir build -R no_such_test", prep=prep),
    ]
    out += masked_variants("ctest", "ctest", "ctest --test-dir build", "fail")
    # --- deno --------------------------------------------------------------
    out += [
        S("deno", "pass_ignored", "pass", "false_fail", "deno", "deno test pass_test.ts"),
        S("deno", "fail", "fail", "true_fail", "deno", "deno test fail_test.ts"),
        S("deno", "fail_type_error", "fail", "true_fail", "deno", "deno test type_error_test.ts"),
        S("deno", "zero_no_tests", "unknown", "zero_tests", "deno", "deno test empty_test.ts"),
    ]
    out += masked_variants("deno", "deno", "deno test fail_test.ts", "fail")
    # --- bun ---------------------------------------------------------------
    out += [
        S("bun", "pass_skip_todo", "pass", "false_fail", "bun", "bun test pass.test.ts"),
        S("bun", "fail", "fail", "true_fail", "bun", "bun test fail.test.ts"),
        S("bun", "fail_syntax_error", "fail", "true_fail", "bun", "bun test syntax.test.ts"),
        S("bun", "zero_no_match", "unknown", "zero_tests", "bun", "bun test no_such_pattern"),
    ]
    out += masked_variants("bun", "bun", "bun test fail.test.ts", "fail")
    # --- passing runs behind the same masks (the mask must not invent a failure)
    for runner, sample, command in PASS_COMMANDS:
        for sc in masked_variants(runner, sample, command, "pass", prefix="pass_")[:3]:
            sc.prep = prep if runner == "ctest" else ""
            out.append(sc)
    # --- commands that are not test runs but print failure-looking text ------
    log_prep = "python -m pytest -q ../pytest/tests_fail > pytest-output.log 2>&1; npx --no-install jest --rootDir ../jest ../jest/tests/fail.test.js > jest-output.log 2>&1; true"
    git_prep = ("git init -q repo && cd repo && git config user.email dev@example.com && git config user.name dev && "
                "echo a > a.txt && git add a.txt && git commit -qm 'fix failing test in test_math.py' && "
                "echo b >> a.txt && git commit -qam 'FAILED (failures=1): revert broken add()' && "
                "echo c >> a.txt && git commit -qam 'test: 3 failed, 12 passed before this change'")
    out += [
        S("shell", "grep_failed_in_log", "not_test", "not_test", "nontest", "grep -n FAILED pytest-output.log", prep=log_prep),
        S("shell", "grep_count_failed", "not_test", "not_test", "nontest", "grep -c 'failed' pytest-output.log", prep=log_prep),
        S("shell", "grep_no_match_exit1", "not_test", "not_test", "nontest", "grep -n 'AssertionError: nothing like this' pytest-output.log", prep=log_prep),
        S("shell", "cat_pytest_log", "not_test", "not_test", "nontest", "cat pytest-output.log", prep=log_prep),
        S("shell", "tail_jest_log", "not_test", "not_test", "nontest", "tail -20 jest-output.log", prep=log_prep),
        S("shell", "head_pytest_log", "not_test", "not_test", "nontest", "head -30 pytest-output.log", prep=log_prep),
        S("shell", "git_log_failing_messages", "not_test", "not_test", "nontest", "cd repo && git log --oneline", prep=git_prep),
        S("shell", "git_show_stat", "not_test", "not_test", "nontest", "cd repo && git show --stat HEAD~1", prep=git_prep),
        S("shell", "make_build_prints_error", "not_test", "not_test", "nontest", "make build"),
        S("shell", "make_lint_fails", "not_test", "not_test", "nontest", "make lint"),
        S("shell", "diff_tap_lines", "not_test", "not_test", "nontest", "diff expected.txt actual.txt"),
        S("shell", "cat_json_report", "not_test", "not_test", "nontest", "cat report.json"),
        S("shell", "python_c_prints_summary", "not_test", "not_test", "nontest", "python -c \"print('=== 1 failed, 2 passed in 0.12s ===')\""),
        S("shell", "echo_failed", "not_test", "not_test", "nontest", "echo 'Tests: 3 failed, 3 total'"),
        S("shell", "sed_source_with_failed", "not_test", "not_test", "nontest", "sed -n 1,10p src/app.py"),
        S("shell", "ls_tests", "not_test", "not_test", "pytest", "ls tests_fail tests_pass"),
        S("shell", "find_test_files", "not_test", "not_test", "pytest", "find . -name 'test_*.py' | sort"),
        S("shell", "grep_r_fail_in_tests", "not_test", "not_test", "pytest", "grep -rn 'fail' tests_pass tests_logs"),
        S("shell", "pip_install_no_index_error", "not_test", "not_test", "nontest", "pip install --no-index definitely-not-a-real-package-xyz"),
        S("shell", "pip_show_pytest", "not_test", "not_test", "nontest", "pip show pytest"),
        S("shell", "pytest_collect_only", "not_test", "not_test", "pytest", "pytest --collect-only -q tests_fail"),
        S("shell", "pytest_version", "not_test", "not_test", "pytest", "pytest --version"),
        S("shell", "jest_list_tests", "not_test", "not_test", "jest", "npx jest --listTests"),
        S("shell", "npm_ls", "not_test", "not_test", "jest", "npm ls --depth=0 || true"),
        S("shell", "go_build_error", "not_test", "not_test", "go", "go build ./builderr"),
        S("shell", "go_vet", "not_test", "not_test", "go", "go vet ./..."),
        S("shell", "cargo_build_error", "not_test", "not_test", "cargo_compile", "cargo build"),
        S("shell", "cargo_test_no_run", "not_test", "not_test", "cargo_fail", "cargo test --no-run"),
        S("shell", "cat_failing_test_source", "not_test", "not_test", "cargo_fail", "cat src/lib.rs"),
        S("shell", "ruby_syntax_check", "not_test", "not_test", "minitest", "ruby -c test/syntax_test.rb"),
        S("shell", "php_lint_error", "not_test", "not_test", "phpunit", "php -l tests/SyntaxTest.php"),
        S("shell", "tsc_type_errors", "not_test", "not_test", "deno", "npx tsc --noEmit --strict type_error_test.ts"),
        S("shell", "cmake_build", "not_test", "not_test", "ctest", "cmake -S . -B build && cmake --build build"),
        S("shell", "wc_test_files", "not_test", "not_test", "pytest", "wc -l tests_fail/test_math.py tests_pass/test_math.py"),
        S("shell", "grep_not_ok_tap_log", "not_test", "not_test", "tape", "grep -n 'not ok' tap.log", prep="npx tape test/fail.js > tap.log 2>&1; true"),
        S("shell", "cat_go_test_log", "not_test", "not_test", "go", "cat go-test.log", prep="go test -v ./fail > go-test.log 2>&1; true"),
        S("shell", "git_diff_test_change", "not_test", "not_test", "nontest", "cd repo && git diff HEAD~1 -- a.txt", prep=git_prep),
        S("shell", "git_status", "not_test", "not_test", "nontest", "cd repo && echo 'FAILED' > failed.txt && git status --short", prep=git_prep),
        S("shell", "rg_failures_in_specs", "not_test", "not_test", "rspec", "grep -rn 'eq(3)\\|failure' spec"),
        S("shell", "cat_cargo_fail_output", "not_test", "not_test", "cargo_fail", "cat out.txt", prep="cargo test > out.txt 2>&1; true"),
        S("shell", "head_junit_like_report", "not_test", "not_test", "nontest", "python -c \"print('<testsuite tests=\\'3\\' failures=\\'1\\' errors=\\'0\\'>')\" > junit.xml && head -5 junit.xml"),
        S("shell", "npm_install_warnings", "not_test", "not_test", "jest", "npm install --no-audit --no-fund --offline 2>&1 | tail -5"),
    ]
    return out


def sh(cmd: str, cwd: Path | None = None, env: dict | None = None, timeout: int = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, timeout=timeout, text=True, errors="replace")


def install(cache: Path) -> list[str]:
    """Install the runners; returns notes on what could not be installed."""
    notes: list[str] = []
    missing_apt = [pkg for tool, pkg in APT_PACKAGES.items() if not _have_apt_tool(tool)]
    if missing_apt:
        print("apt-get install", " ".join(missing_apt), flush=True)
        r = sh("apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends " + " ".join(missing_apt))
        if r.returncode:
            notes.append(f"apt-get install {' '.join(missing_apt)} failed: {r.stdout[-500:]}")
    venv = cache / "venv"
    if not (venv / "bin" / "pytest").exists():
        print("creating venv", venv, flush=True)
        r = sh(f"{sys.executable} -m venv {venv} && {venv}/bin/pip install -q " + " ".join(PIP_PACKAGES))
        if r.returncode:
            notes.append(f"pip install failed: {r.stdout[-500:]}")
    npm = cache / "npm"
    if not (npm / "node_modules" / ".bin" / "jest").exists():
        print("npm install into", npm, flush=True)
        npm.mkdir(parents=True, exist_ok=True)
        r = sh("npm init -y >/dev/null && npm install --no-audit --no-fund " + " ".join(NPM_PACKAGES), cwd=npm)
        if r.returncode:
            notes.append(f"npm install failed: {r.stdout[-500:]}")
    return notes


def _have_apt_tool(tool: str) -> bool:
    if tool == "rspec":
        return shutil.which("rspec") is not None
    if tool == "minitest":
        return shutil.which("ruby") is not None and sh("ruby -rminitest -e 1").returncode == 0
    return shutil.which(tool) is not None


def environment(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    for key in [k for k in env if k.startswith(("CLAUDE", "PYTEST_", "VIRTUAL_ENV", "NODE_OPTIONS", "FORCE_COLOR", "NO_COLOR"))]:
        env.pop(key)
    paths = [str(cache / "venv" / "bin"), str(cache / "npm" / "node_modules" / ".bin"), "/root/.cargo/bin", "/usr/lib/go/bin", env.get("PATH", "")]
    env.update({
        "PATH": ":".join(paths),
        "VIRTUAL_ENV": str(cache / "venv"),
        "CARGO_TARGET_DIR": str(cache / "cargo-target"),
        "GOCACHE": str(cache / "go-build"), "GOPATH": str(cache / "gopath"), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local",
        "DENO_DIR": str(cache / "deno"), "DENO_NO_UPDATE_CHECK": "1", "BUN_INSTALL_CACHE_DIR": str(cache / "bun"),
        "npm_config_update_notifier": "false", "TOX_WORK_DIR": str(cache / "tox"), "NOX_DEFAULT_VENV_BACKEND": "venv",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    })
    env.pop("CI", None)
    return env


def work_copy(cache: Path, sample: str, prep: str, env: dict, prepared: set[str]) -> Path:
    """A scratch copy of the sample (so captures leave the repo clean)."""
    work = cache / "work"
    dest = work / sample
    key = f"{sample}\0{prep}"
    if key in prepared:
        return dest
    if dest.exists() and sample not in {k.split("\0")[0] for k in prepared}:
        shutil.rmtree(dest)
    if not dest.exists():
        shutil.copytree(SAMPLES / sample, dest)
        if (SAMPLES / sample / "package.json").exists() or sample in ("tape", "tap", "node", "nontest", "deno"):
            link = dest / "node_modules"
            if not link.exists():
                link.symlink_to(cache / "npm" / "node_modules")
    if prep:
        r = sh(prep, cwd=dest, env=env)
        if r.returncode:
            print(f"  prep failed for {sample}: {prep}\n{r.stdout[-800:]}", flush=True)
    prepared.add(key)
    return dest


def trim(output: str) -> tuple[str, str]:
    if len(output) <= MAX_OUTPUT:
        return output, ""
    head, tail = output[:6000], output[-(MAX_OUTPUT - 6000):]
    cut = len(output) - len(head) - len(tail)
    return head + f"\n[... {cut} characters cut by the capture script ...]\n" + tail, f"output trimmed from {len(output)} chars (head 6000 + tail {len(tail)} kept)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "ralph-runner-capture"))
    ap.add_argument("--only", default="", help="comma-separated runners")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--clean", action="store_true", help="remove existing fixtures first")
    args = ap.parse_args(argv)
    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    notes = [] if args.no_install else install(cache)
    env = environment(cache)
    only = {x for x in args.only.split(",") if x}
    if args.clean and not only and FIXTURES.exists():
        shutil.rmtree(FIXTURES)
    versions: dict[str, str] = {}
    skipped: dict[str, str] = {}
    prepared: set[str] = set()
    counts: dict[str, int] = {}
    for sc in scenarios():
        if only and sc.runner not in only:
            continue
        if sc.runner in skipped:
            continue
        missing = [p for p in REQUIRES.get(sc.runner, []) if shutil.which(p, path=env["PATH"]) is None]
        if missing:
            skipped[sc.runner] = f"not installed: {', '.join(missing)}"
            continue
        cwd = work_copy(cache, sc.sample, sc.prep, env, prepared)
        if sc.runner not in versions:
            v = sh(VERSION_COMMANDS.get(sc.runner, "true"), cwd=cwd, env=env, timeout=60)
            versions[sc.runner] = v.stdout.strip().splitlines()[0] if v.stdout.strip() else "unknown"
        # exactly what the Bash tool does: bash -c, stderr merged into stdout
        r = sh(sc.command, cwd=cwd, env=env)
        output, trim_note = trim(r.stdout)
        fixture = {
            "command": sc.command,
            "exit_code": r.returncode,
            "output": output,
            "tool": sc.runner,
            "tool_version": versions[sc.runner],
            "captured_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
            "expect": sc.expect,
            "category": sc.category,
            "accept": list(sc.accept),
            "note": "; ".join(x for x in (sc.note, trim_note) if x),
        }
        path = FIXTURES / sc.category / f"{sc.runner}_{sc.variant}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        tmp.replace(path)
        counts[sc.category] = counts.get(sc.category, 0) + 1
        print(f"{sc.category:12} {sc.runner:9} {sc.variant:32} exit={r.returncode:<4} {len(r.stdout):>7} chars", flush=True)
    print("\ncaptured:", sum(counts.values()), counts)
    for runner, why in skipped.items():
        print(f"skipped {runner}: {why}")
    for note in notes:
        print("install problem:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
