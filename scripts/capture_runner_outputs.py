#!/usr/bin/env python3
"""Capture real test-runner output as fixtures for ralph.rules.outcome.verdict.

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

Round three (`--round-three`): runners given a reader in round three
(libcheck, CUnit, cmocka, Playwright's reporters, Maven, tcltest: group
"reader3"), runners no rule was written for ("unseen": Criterion, CppUnit,
doctest, test-unit, LuaUnit, zope.testrunner, stestr, lab, brittle, a bare
assert() program), and known runners behind wrappers, in several suites, cut
by tail/grep ("generic3").

usage: scripts/capture_runner_outputs.py [--cache DIR] [--only RUNNER,..] [--round-two] [--round-three] [--no-install] [--clean]
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

APT_PACKAGES = {"go": "golang-go", "bats": "bats", "ruby": "ruby", "rspec": "ruby-rspec", "minitest": "ruby-minitest", "php": "php-cli", "phpunit": "phpunit",
                "busted": "lua-busted", "lua5.4": "lua5.4", "elixir": "elixir", "erl": "erlang-nox", "eunit": "erlang-eunit erlang-dev", "ct_run": "erlang-common-test",
                "gtest": "libgtest-dev", "catch2": "catch2", "meson": "meson", "shunit2": "shunit2", "shellcheck": "shellcheck", "rsync": "rsync",
                "checkmk": "check", "pkg-config": "pkg-config", "cunit": "libcunit1-dev", "cmocka": "libcmocka-dev", "criterion": "libcriterion-dev",
                "cppunit": "libcppunit-dev", "doctest": "doctest-dev", "testunit": "ruby-test-unit", "luaunit": "lua-unit", "mvn": "maven", "tclsh": "tcl"}
PIP_PACKAGES = ["pytest", "tox", "nox", "behave", "green", "ward", "nose2", "ruff", "black", "flake8", "mypy", "coverage", "uv",
                "zope.testrunner", "stestr"]
NPM_PACKAGES = ["jest", "vitest@3", "vite@7", "mocha", "tape", "tap", "deno", "bun", "ava", "uvu", "@cucumber/cucumber", "jasmine", "qunit", "prettier", "eslint",
                 "@playwright/test", "pnpm", "@hapi/lab", "@hapi/code", "brittle"]

# runner -> command printing its version (run in the sample's work dir)
VERSION_COMMANDS = {
    "pytest": "pytest --version", "unittest": "python --version", "tox": "tox --version", "nox": "nox --version",
    "jest": "jest --version", "vitest": "vitest --version", "mocha": "mocha --version", "node": "node --version",
    "tape": "node -p \"require('tape/package.json').version\"", "tap": "node -p \"require('tap/package.json').version\"",
    "prove": "prove --version", "bats": "bats --version", "go": "go version", "cargo": "cargo --version",
    "rspec": "rspec --version | head -1", "minitest": "ruby -rminitest -e 'puts Minitest::VERSION'", "phpunit": "phpunit --version",
    "ctest": "ctest --version | head -1", "deno": "deno --version | head -1", "bun": "bun --version",
    "npm": "npm --version", "make": "make --version | head -1", "shell": "bash --version | head -1",
    "behave": "behave --version", "busted": "busted --version", "exunit": "elixir --version | tail -1",
    "eunit": "erl -noshell -eval 'io:format(\"OTP ~s~n\", [erlang:system_info(otp_release)]), halt().'",
    "common_test": "erl -noshell -eval 'io:format(\"OTP ~s~n\", [erlang:system_info(otp_release)]), halt().'",
    "gtest": "dpkg-query -W -f='googletest ${Version}' libgtest-dev", "catch2": "dpkg-query -W -f='catch2 ${Version}' catch2",
    "meson": "meson --version", "makecheck": "make --version | head -1", "ownscript": "bash --version | head -1",
    "shunit2": "dpkg-query -W -f='shunit2 ${Version}' shunit2", "ava": "npx ava --version", "uvu": "node -p \"require('uvu/package.json').version\"",
    "jasmine": "npx jasmine --version | head -1", "qunit": "npx qunit --version", "cucumber": "npx cucumber-js --version",
    "green": "green --version | head -1", "ward": "ward --version", "nose2": "nose2 --version", "doctest": "python --version",
    "libcheck": "dpkg-query -W -f='check ${Version}' check", "cunit": "dpkg-query -W -f='cunit ${Version}' libcunit1-dev",
    "cmocka": "dpkg-query -W -f='cmocka ${Version}' libcmocka-dev", "playwright": "npx playwright --version",
    "maven": "mvn -v | head -1", "tcltest": "echo 'puts [package require tcltest]' | tclsh",
    "criterion": "dpkg-query -W -f='criterion ${Version}' libcriterion-dev", "cppunit": "dpkg-query -W -f='cppunit ${Version}' libcppunit-dev",
    "doctest_cpp": "dpkg-query -W -f='doctest ${Version}' doctest-dev", "testunit": "dpkg-query -W -f='test-unit ${Version}' ruby-test-unit",
    "luaunit": "dpkg-query -W -f='luaunit ${Version}' lua-unit", "zope": "pip show zope.testrunner | grep Version",
    "stestr": "stestr --version", "lab": "node -p \"require('@hapi/lab/package.json').version\"",
    "brittle": "node -p \"require('brittle/package.json').version\"", "plainc": "cc --version | head -1",
    "coverage": "coverage --version | head -1", "uv": "uv --version", "pnpm": "pnpm --version",
}
# runner -> programs that must be on PATH to capture it
REQUIRES = {
    "pytest": ["pytest"], "unittest": ["python"], "tox": ["tox"], "nox": ["nox"], "jest": ["jest"], "vitest": ["vitest"],
    "mocha": ["mocha"], "node": ["node"], "tape": ["tape"], "tap": ["tap"], "prove": ["prove"], "bats": ["bats"],
    "go": ["go"], "cargo": ["cargo"], "rspec": ["rspec"], "minitest": ["ruby"], "phpunit": ["phpunit"],
    "ctest": ["ctest", "cmake", "cc"], "deno": ["deno"], "bun": ["bun"], "shell": ["bash"],
    "behave": ["behave"], "busted": ["busted"], "exunit": ["mix", "elixir"], "eunit": ["erl", "erlc"], "common_test": ["ct_run", "erlc"],
    "gtest": ["g++"], "catch2": ["g++"], "meson": ["meson", "ninja"], "makecheck": ["make", "cc"], "ownscript": ["cc", "lua5.4"],
    "shunit2": ["shunit2"], "ava": ["ava"], "uvu": ["uvu"], "jasmine": ["jasmine"], "qunit": ["qunit"], "cucumber": ["cucumber-js"],
    "green": ["green"], "ward": ["ward"], "nose2": ["nose2"], "doctest": ["python"], "nontest": ["bash"],
    "libcheck": ["cc", "pkg-config"], "cunit": ["cc"], "cmocka": ["cc"], "playwright": ["playwright"], "maven": ["mvn"],
    "tcltest": ["tclsh"], "criterion": ["cc"], "cppunit": ["c++"], "doctest_cpp": ["c++"], "testunit": ["ruby"],
    "luaunit": ["lua5.4"], "zope": ["zope-testrunner"], "stestr": ["stestr"], "lab": ["lab"], "brittle": ["node"],
    "plainc": ["cc"], "coverage": ["coverage"], "uv": ["uv"], "pnpm": ["pnpm"],
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
        Scenario(runner, f"{prefix}masked_tail", expect, cat, sample, f"{base} 2>&1 | tail -5", accept=("unknown",) if expect == "pass" else (),
                 note="cut by tail with the status masked: a passing summary is unknown" if expect == "pass" else ""),
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
        S("pytest", "pass_tail", "pass", "masked_pass", "pytest", "pytest tests_pass 2>&1 | tail -3", accept=("unknown",),
          note="cut by tail with the status masked: a passing summary is unknown"),
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
    return out + round_two()


# --- round two (the generic reader's corpus): runners with no dedicated reader, hung runs, bail
# modes, listing commands, interpreters, cut output, non-test look-alikes.
# `group` says which set a capture belongs to: "tuned" (runners the generic
# grammar was adjusted on), "holdout" (never looked at while adjusting it),
# "known" (runners with a reader), "nontest" (precision set).
TUNED = ("behave", "busted", "exunit", "gtest", "catch2", "meson", "shunit2", "jasmine", "cucumber")
HOLDOUT = ("ava", "uvu", "qunit", "green", "ward", "nose2", "eunit", "common_test", "makecheck", "ownscript", "doctest")


def round_two() -> list[Scenario]:
    S = Scenario
    out: list[Scenario] = []

    def masks(runner: str, sample: str, base: str, expect: str, prep: str = "", head: str = "", grep: str = "") -> list[Scenario]:
        cat = "masked_fail" if expect == "fail" else "masked_pass"
        v = "" if expect == "fail" else "pass_"
        found = [S(runner, f"{v}masked_tail", expect, cat, sample, f"{base} 2>&1 | tail -5", prep=prep,
                   accept=("unknown",) if expect == "pass" else (), note="cut by tail with the status masked: a passing summary is unknown" if expect == "pass" else ""),
                 S(runner, f"{v}masked_or_true", expect, cat, sample, f"{base} || true", prep=prep)]
        if head:
            found.append(S(runner, f"{v}cut_head", expect, cat, sample, f"{base} 2>&1 | head -{head}", accept=("unknown",), prep=prep,
                           note="cut by head: fail only if the kept lines show the runner's failure markers"))
        if grep:
            found.append(S(runner, f"{v}cut_grep", expect, cat, sample, f"{base} 2>&1 | grep -E '{grep}'", accept=("unknown",), prep=prep,
                           note="filtered by grep: fail only if the kept lines show the runner's failure markers"))
        return found

    # behave (Python BDD)
    out += [
        S("behave", "pass", "pass", "true_pass", "behave", "behave"),
        S("behave", "pass_no_color", "pass", "true_pass", "behave", "behave --no-color features"),
        S("behave", "fail", "fail", "true_fail", "behave", "behave fail_features"),
        S("behave", "fail_progress", "fail", "true_fail", "behave", "behave -f progress fail_features"),
        S("behave", "fail_stop_bail", "fail", "true_fail", "behave", "behave --stop fail_features"),
        S("behave", "fail_undefined_steps", "fail", "true_fail", "behave", "behave undef_features", accept=("unknown",),
          note="undefined steps: behave exits 1; no step failed"),
        S("behave", "list_dry_run", "not_test", "not_test", "behave", "behave --dry-run fail_features"),
    ]
    out += masks("behave", "behave", "behave fail_features", "fail", grep="Failing scenarios|failed")
    out += masks("behave", "behave", "behave", "pass")
    # busted (Lua)
    out += [
        S("busted", "pass_pending", "pass", "true_pass", "busted", "busted spec"),
        S("busted", "pass_tap", "pass", "true_pass", "busted", "busted -o TAP spec"),
        S("busted", "fail", "fail", "true_fail", "busted", "busted spec_fail"),
        S("busted", "fail_tap", "fail", "true_fail", "busted", "busted -o TAP spec_fail"),
        S("busted", "fail_plain_terminal", "fail", "true_fail", "busted", "busted -o plainTerminal spec_fail"),
        S("busted", "fail_load_error", "fail", "true_fail", "busted", "busted spec_err"),
        S("busted", "list", "not_test", "not_test", "busted", "busted --list spec_fail"),
    ]
    out += masks("busted", "busted", "busted spec_fail", "fail", head="3")
    out[-3].accept, out[-3].note = ("unknown",), "busted prints its summary before the failure details: tail keeps only the details"
    out += masks("busted", "busted", "busted spec", "pass")
    out += [
        S("ownscript", "lua_script_pass", "pass", "true_pass", "busted", "lua5.4 run_tests.lua"),
        S("ownscript", "lua_script_fail", "fail", "true_fail", "busted", "lua5.4 run_tests.lua 5"),
        S("nontest", "lua_one_liner_summary", "not_test", "not_test", "busted", "lua5.4 -e 'print(\"3 passed, 1 failed\") os.exit(1)'"),
    ]
    # ExUnit (Elixir)
    out += [
        S("exunit", "pass", "pass", "true_pass", "exunit", "mix test test/calc_test.exs"),
        S("exunit", "fail", "fail", "true_fail", "exunit", "mix test"),
        S("exunit", "fail_trace", "fail", "true_fail", "exunit", "mix test --trace"),
        S("exunit", "fail_max_failures_bail", "fail", "true_fail", "exunit", "mix test --max-failures 1 test/broken_test.exs"),
        S("exunit", "script_pass", "pass", "true_pass", "exunit", "elixir scripts/pass_test.exs"),
        S("exunit", "script_fail", "fail", "true_fail", "exunit", "elixir scripts/fail_test.exs"),
        S("exunit", "hang_timeout", "fail", "true_fail", "exunit", "timeout 8 elixir scripts/hang_test.exs"),
        S("nontest", "elixir_one_liner_summary", "not_test", "not_test", "exunit", "elixir -e 'IO.puts(\"3 tests, 1 failure\"); System.halt(1)'"),
    ]
    out += masks("exunit", "exunit", "mix test", "fail")
    out += masks("exunit", "exunit", "mix test test/calc_test.exs", "pass")
    # EUnit / Common Test (Erlang)
    erl_prep = "erlc calc.erl broken.erl"
    run_eunit = "erl -noshell -eval 'case eunit:test({0}{1}) of ok -> halt(0); _ -> halt(1) end.'"
    out += [
        S("eunit", "pass", "pass", "true_pass", "eunit", run_eunit.format("calc", ""), prep=erl_prep),
        S("eunit", "pass_verbose", "pass", "true_pass", "eunit", run_eunit.format("calc", ", [verbose]"), prep=erl_prep),
        S("eunit", "fail", "fail", "true_fail", "eunit", run_eunit.format("broken", ""), prep=erl_prep),
        S("eunit", "fail_verbose", "fail", "true_fail", "eunit", run_eunit.format("broken", ", [verbose]"), prep=erl_prep),
        S("eunit", "fail_both_modules", "fail", "true_fail", "eunit", run_eunit.format("[calc, broken]", ""), prep=erl_prep),
    ]
    out += masks("eunit", "eunit", run_eunit.format("broken", ""), "fail", prep=erl_prep)
    out += [
        S("common_test", "pass", "pass", "true_pass", "ct", "ct_run -noshell -dir . -logdir logs -suite good_SUITE", prep="mkdir -p logs"),
        S("common_test", "fail", "fail", "true_fail", "ct", "ct_run -noshell -dir . -logdir logs -suite calc_SUITE", prep="mkdir -p logs"),
        S("common_test", "fail_all", "fail", "true_fail", "ct", "ct_run -noshell -dir . -logdir logs", prep="mkdir -p logs"),
    ]
    out += masks("common_test", "ct", "ct_run -noshell -dir . -logdir logs -suite calc_SUITE", "fail", prep="mkdir -p logs")
    # googletest
    gt_prep = "g++ -std=c++17 -o calc_test calc_test.cc -lgtest -lgtest_main -pthread"
    out += [
        S("gtest", "pass", "pass", "true_pass", "gtest", "./calc_test", prep=gt_prep),
        S("gtest", "pass_filter", "pass", "true_pass", "gtest", "./calc_test --gtest_filter='Calc.Add*'", prep=gt_prep),
        S("gtest", "fail", "fail", "true_fail", "gtest", "CALC_BROKEN=1 ./calc_test", prep=gt_prep),
        S("gtest", "fail_brief", "fail", "true_fail", "gtest", "CALC_BROKEN=1 ./calc_test --gtest_brief=1", prep=gt_prep),
        S("gtest", "fail_color", "fail", "true_fail", "gtest", "CALC_BROKEN=1 ./calc_test --gtest_color=yes", prep=gt_prep),
        S("gtest", "fail_fast_bail", "fail", "true_fail", "gtest", "CALC_BROKEN=1 ./calc_test --gtest_fail_fast", prep=gt_prep),
        S("gtest", "hang_timeout", "fail", "true_fail", "gtest", "CALC_HANG=1 timeout 3 ./calc_test", prep=gt_prep),
        S("gtest", "zero_filter", "unknown", "zero_tests", "gtest", "./calc_test --gtest_filter='NoSuch*'", prep=gt_prep),
        S("gtest", "list", "not_test", "not_test", "gtest", "./calc_test --gtest_list_tests", prep=gt_prep),
    ]
    out += masks("gtest", "gtest", "CALC_BROKEN=1 ./calc_test", "fail", prep=gt_prep, head="12", grep="FAILED")
    out += masks("gtest", "gtest", "./calc_test", "pass", prep=gt_prep)
    # Catch2 (v2)
    c2_prep = "g++ -std=c++17 -o calc_tests calc_test.cpp"
    out += [
        S("catch2", "pass", "pass", "true_pass", "catch2", "./calc_tests '[calc]'", prep=c2_prep),
        S("catch2", "fail", "fail", "true_fail", "catch2", "./calc_tests", prep=c2_prep),
        S("catch2", "fail_compact", "fail", "true_fail", "catch2", "./calc_tests -r compact", prep=c2_prep),
        S("catch2", "fail_abort_bail", "fail", "true_fail", "catch2", "./calc_tests --abort", prep=c2_prep),
        S("catch2", "zero_no_match", "unknown", "zero_tests", "catch2", "./calc_tests '[nosuch]'", prep=c2_prep),
        S("catch2", "list", "not_test", "not_test", "catch2", "./calc_tests --list-tests", prep=c2_prep),
    ]
    out += masks("catch2", "catch2", "./calc_tests", "fail", prep=c2_prep)
    out += masks("catch2", "catch2", "./calc_tests '[calc]'", "pass", prep=c2_prep)
    # meson test / ninja test
    m_prep = "meson setup build >/dev/null"
    out += [
        S("meson", "pass", "pass", "true_pass", "meson", "meson test -C build --suite good", prep=m_prep),
        S("meson", "fail", "fail", "true_fail", "meson", "meson test -C build", prep=m_prep),
        S("meson", "fail_print_errorlogs", "fail", "true_fail", "meson", "meson test -C build --print-errorlogs", prep=m_prep),
        S("meson", "fail_ninja_test", "fail", "true_fail", "meson", "ninja -C build test", prep=m_prep),
        S("meson", "list", "not_test", "not_test", "meson", "meson test -C build --list", prep=m_prep),
    ]
    out += masks("meson", "meson", "meson test -C build", "fail", prep=m_prep)
    out[-2].accept, out[-2].note = ("unknown",), "tail -5 keeps the summary lines after `Fail:`, not the Fail count"
    # make check with an automake-style summary; a project's own run_tests.sh
    out += [
        S("makecheck", "pass", "pass", "true_pass", "cprojects", "make check"),
        S("makecheck", "fail", "fail", "true_fail", "cprojects", "make check-broken"),
        S("makecheck", "fail_keep_going", "fail", "true_fail", "cprojects", "make -k check-broken"),
        S("makecheck", "dry_run", "not_test", "not_test", "cprojects", "make -n check-broken"),
        S("ownscript", "sh_script_pass", "pass", "true_pass", "cprojects", "./run_tests.sh"),
        S("ownscript", "sh_script_fail", "fail", "true_fail", "cprojects", "./run_tests.sh t_add.c t_bad.c"),
        S("ownscript", "sh_script_fail_bash", "fail", "true_fail", "cprojects", "bash run_tests.sh t_bad.c t_neg.c"),
        S("nontest", "ci_report_script", "not_test", "not_test", "cprojects", "./show_ci_report.sh"),
        S("nontest", "test_report_script", "not_test", "not_test", "cprojects", "./show_test_report.sh"),
        S("nontest", "python_test_summary_script", "not_test", "not_test", "nontest2", "python tests/test_summary.py results.json"),
        S("nontest", "make_lint_summary", "not_test", "not_test", "cprojects", "make lint"),
    ]
    out += masks("makecheck", "cprojects", "make check-broken", "fail")
    out += masks("ownscript", "cprojects", "./run_tests.sh t_add.c t_bad.c", "fail")
    # shunit2
    out += [
        S("shunit2", "pass", "pass", "true_pass", "shunit2", "sh test_calc.sh"),
        S("shunit2", "fail", "fail", "true_fail", "shunit2", "sh test_broken.sh"),
        S("shunit2", "fail_bash", "fail", "true_fail", "shunit2", "bash test_broken.sh"),
    ]
    out += masks("shunit2", "shunit2", "sh test_broken.sh", "fail")
    # JS runners
    out += [
        S("ava", "pass_skip", "pass", "true_pass", "ava", "npx ava test/pass.js"),
        S("ava", "fail", "fail", "true_fail", "ava", "npx ava test/fail.js"),
        S("ava", "fail_tap", "fail", "true_fail", "ava", "npx ava --tap test/fail.js"),
        S("ava", "fail_fast_bail", "fail", "true_fail", "ava", "npx ava --fail-fast --serial test/fail.js"),
        S("uvu", "pass", "pass", "true_pass", "uvu", "npx uvu tests pass"),
        S("uvu", "fail", "fail", "true_fail", "uvu", "npx uvu tests fail"),
        S("uvu", "node_file_pass", "pass", "true_pass", "uvu", "node tests/pass.js"),
        S("uvu", "node_file_fail", "fail", "true_fail", "uvu", "node tests/fail.js"),
        S("jasmine", "pass_pending", "pass", "true_pass", "jasmine", "npx jasmine spec/calc_spec.js"),
        S("jasmine", "fail", "fail", "true_fail", "jasmine", "npx jasmine"),
        S("jasmine", "fail_fast_bail", "fail", "true_fail", "jasmine", "npx jasmine --fail-fast spec/broken_spec.js"),
        S("qunit", "pass", "pass", "true_pass", "qunit", "npx qunit test/pass.js"),
        S("qunit", "fail", "fail", "true_fail", "qunit", "npx qunit test/fail.js"),
        S("cucumber", "pass", "pass", "true_pass", "cucumber", "npx cucumber-js features"),
        S("cucumber", "fail", "fail", "true_fail", "cucumber", "npx cucumber-js fail --require fail/step_definitions/steps.js"),
        S("cucumber", "fail_fast_bail", "fail", "true_fail", "cucumber", "npx cucumber-js --fail-fast fail --require fail/step_definitions/steps.js"),
        S("cucumber", "list_dry_run", "not_test", "not_test", "cucumber", "npx cucumber-js --dry-run fail --require fail/step_definitions/steps.js"),
    ]
    out += masks("ava", "ava", "npx ava test/fail.js", "fail")
    out += masks("uvu", "uvu", "npx uvu tests fail", "fail")
    out += masks("jasmine", "jasmine", "npx jasmine", "fail", head="12")
    out += masks("qunit", "qunit", "npx qunit test/fail.js", "fail", grep="not ok|fail")
    out += masks("cucumber", "cucumber", "npx cucumber-js fail --require fail/step_definitions/steps.js", "fail")
    out += masks("ava", "ava", "npx ava test/pass.js", "pass")
    out += masks("jasmine", "jasmine", "npx jasmine spec/calc_spec.js", "pass")
    # lesser-known Python runners; doctest behind the interpreter; hung runs
    out += [
        S("green", "pass", "pass", "true_pass", "pyrunners", "green pass_pkg"),
        S("green", "fail", "fail", "true_fail", "pyrunners", "green fail_pkg"),
        S("green", "fail_vv", "fail", "true_fail", "pyrunners", "green -vv fail_pkg"),
        S("ward", "pass", "pass", "true_pass", "pyrunners", "ward --path ward_pass"),
        S("ward", "fail", "fail", "true_fail", "pyrunners", "ward --path ward_fail"),
        S("ward", "fail_limit_bail", "fail", "true_fail", "pyrunners", "ward --path ward_fail --fail-limit 1"),
        S("nose2", "pass", "pass", "true_pass", "pyrunners", "nose2 pass_pkg"),
        S("nose2", "fail", "fail", "true_fail", "pyrunners", "nose2 -v fail_pkg"),
        S("nose2", "fail_python_m", "fail", "true_fail", "pyrunners", "python -m nose2 fail_pkg"),
        S("doctest", "pass", "pass", "true_pass", "pyrunners", "python -m doctest calc_doc.py", accept=("unknown",), note="doctest prints nothing when all pass"),
        S("doctest", "pass_v", "pass", "true_pass", "pyrunners", "python -m doctest -v calc_doc.py"),
        S("doctest", "fail", "fail", "true_fail", "pyrunners", "python -m doctest broken_doc.py"),
        S("doctest", "fail_v", "fail", "true_fail", "pyrunners", "python -m doctest -v broken_doc.py"),
        S("doctest", "fail_text_file", "fail", "true_fail", "pyrunners", "python3 -m doctest calc_doc.txt"),
        S("pytest", "hang_timeout_v", "fail", "true_fail", "pyrunners", "timeout 5 pytest -v -p no:cacheprovider hang/test_slow.py"),
        S("pytest", "hang_timeout_q", "fail", "true_fail", "pyrunners", "timeout 5 python -m pytest -q -p no:cacheprovider hang/test_slow.py"),
        S("pytest", "hang_kill_signal", "fail", "true_fail", "pyrunners", "timeout -s KILL 5 pytest -v -p no:cacheprovider hang/test_slow.py"),
        S("unittest", "hang_timeout_v", "fail", "true_fail", "pyrunners", "timeout 5 python -m unittest -v hang/test_unit_slow.py"),
        S("pytest", "maxfail_bail", "fail", "true_fail", "pytest", "pytest --maxfail=1 -q tests_fail"),
        S("pytest", "large_output_masked", "fail", "masked_fail", "pyrunners", "pytest -s -q -p no:cacheprovider noisy; true"),
    ]
    out += masks("green", "pyrunners", "green fail_pkg", "fail")
    out += masks("ward", "pyrunners", "ward --path ward_fail", "fail")
    out += masks("doctest", "pyrunners", "python -m doctest -v broken_doc.py", "fail")
    # known runners: bail modes, listing commands, hung runs
    ct_prep = "cmake -S . -B build >/dev/null && cmake --build build >/dev/null"
    out += [
        S("go", "failfast_bail", "fail", "true_fail", "go", "go test -failfast ./fail"),
        S("go", "hang_timeout", "fail", "true_fail", "go", "timeout 20 go test -v ./hang"),
        S("go", "hang_own_timeout", "fail", "true_fail", "go", "go test -timeout 3s ./hang"),
        S("go", "list", "not_test", "not_test", "go", "go test -list . ./fail ./pass"),
        S("cargo", "list", "not_test", "not_test", "cargo_fail", "cargo test -- --list"),
        S("cargo", "no_fail_fast", "fail", "true_fail", "cargo_fail", "cargo test --no-fail-fast"),
        S("ctest", "list_show_only", "not_test", "not_test", "ctest", "ctest --test-dir build -N", prep=ct_prep),
        S("ctest", "stop_on_failure_bail", "fail", "true_fail", "ctest", "ctest --test-dir build --stop-on-failure", prep=ct_prep),
        S("bats", "count", "not_test", "not_test", "bats", "bats --count fail.bats"),
        S("vitest", "list", "not_test", "not_test", "vitest", "npx vitest list tests/fail.test.js"),
        S("vitest", "bail", "fail", "true_fail", "vitest", "npx vitest run --bail 1 tests/fail.test.js"),
        S("jest", "bail", "fail", "true_fail", "jest", "npx jest --bail tests/fail.test.js"),
        S("bun", "bail", "fail", "true_fail", "bun", "bun test --bail fail.test.ts"),
        S("bun", "bail_all_files", "fail", "true_fail", "bun", "bun test --bail"),
        S("bun", "bail_masked_tail", "fail", "masked_fail", "bun", "bun test --bail 2>&1 | tail -5"),
        S("mocha", "bail", "fail", "true_fail", "mocha", "npx mocha --bail test/fail.spec.js"),
        S("mocha", "dry_run", "not_test", "not_test", "mocha", "npx mocha --dry-run test/fail.spec.js"),
        S("rspec", "fail_fast_bail", "fail", "true_fail", "rspec", "rspec --fail-fast spec/fail_spec.rb"),
        S("rspec", "dry_run", "not_test", "not_test", "rspec", "rspec --dry-run spec/fail_spec.rb"),
        S("minitest", "ruby_e_pass", "pass", "true_pass", "minitest", "ruby -Itest -e 'ARGV.each { |f| require \"./#{f}\" }' test/pass_test.rb"),
        S("minitest", "ruby_e_fail", "fail", "true_fail", "minitest", "ruby -Itest -e 'ARGV.each { |f| require \"./#{f}\" }' test/fail_test.rb"),
        S("minitest", "ruby_e_require", "fail", "true_fail", "minitest", "ruby -Itest -e 'require \"minitest/autorun\"; require \"./test/fail_test\"'"),
    ]
    # non-test programs that print summary-like lines and exit non-zero
    out += [
        S("nontest", "ruff_check", "not_test", "not_test", "nontest2", "ruff check --no-cache src tests"),
        S("nontest", "ruff_format_check", "not_test", "not_test", "nontest2", "ruff format --check --no-cache src tests"),
        S("nontest", "black_check", "not_test", "not_test", "nontest2", "black --check src tests"),
        S("nontest", "black_diff", "not_test", "not_test", "nontest2", "black --check --diff tests"),
        S("nontest", "flake8", "not_test", "not_test", "nontest2", "flake8 --count src tests"),
        S("nontest", "mypy", "not_test", "not_test", "nontest2", "mypy --no-incremental src"),
        S("nontest", "prettier_check", "not_test", "not_test", "nontest2", "npx prettier --check app.js"),
        S("nontest", "eslint", "not_test", "not_test", "nontest2", "npx eslint --no-config-lookup --rule 'no-unused-vars: error' app.js"),
        S("nontest", "shellcheck", "not_test", "not_test", "nontest2", "shellcheck deploy.sh"),
        S("nontest", "summarize_results_script", "not_test", "not_test", "nontest2", "python summarize_results.py results.json"),
        S("nontest", "make_build_summary", "not_test", "not_test", "nontest2", "make build"),
        S("nontest", "ruby_one_liner_minitest_line", "not_test", "not_test", "nontest2", "ruby -e 'puts \"3 runs, 3 assertions, 1 failures, 0 errors, 0 skips\"; exit 1'"),
        S("nontest", "node_one_liner_tap", "not_test", "not_test", "nontest2", "node -e \"console.log('not ok 1 - adds'); console.log('# fail 1'); process.exit(1)\""),
        S("nontest", "bash_syntax_check_test_script", "not_test", "not_test", "cprojects", "bash -n run_tests.sh && echo '0 of 2 tests failed'"),
        S("nontest", "cat_behave_log", "not_test", "not_test", "behave", "cat behave.log; exit 1", prep="behave fail_features > behave.log 2>&1; true"),
        S("nontest", "rsync_dry_run", "not_test", "not_test", "nontest2", "rsync -an --stats src/ /nonexistent-dir/x"),
        S("nontest", "git_clean_dry_run", "not_test", "not_test", "nontest2", "git init -q . && git clean -n"),
        S("nontest", "pip_check", "not_test", "not_test", "nontest2", "pip download --no-index --dry-run -d /tmp nothing-here 2>&1; exit 1"),
    ]
    return out


# --- round three: readers for C, Playwright, Maven and tcltest ("reader3"); runners no rule
# was written for ("unseen", the honest measure of the generic rules); known runners behind
# wrappers, in several suites, cut by tail/grep ("generic3").
READER3 = ("libcheck", "cunit", "cmocka", "playwright", "maven", "tcltest")
# runners no rule was written for: the first ones were looked at while the generic rules were
# written ("unseen_tuned"); the others only after ("unseen_holdout"), the honest figure
UNSEEN_TUNED = ("criterion", "cppunit", "zope", "stestr", "plainc")
UNSEEN_HOLDOUT = ("doctest_cpp", "testunit", "luaunit", "lab", "brittle")
UNSEEN = UNSEEN_TUNED + UNSEEN_HOLDOUT


def round_three() -> list[Scenario]:
    S = Scenario
    out: list[Scenario] = []

    def masks(runner: str, sample: str, base: str, expect: str, prep: str = "") -> list[Scenario]:
        cat = "masked_fail" if expect == "fail" else "masked_pass"
        v = "" if expect == "fail" else "pass_"
        return [S(runner, f"{v}masked_tail", expect, cat, sample, f"{base} 2>&1 | tail -5", accept=("unknown",), prep=prep,
                  note="cut by tail with the status masked: fail only on visible failures, else unknown"),
                S(runner, f"{v}masked_or_true", expect, cat, sample, f"{base} || true", prep=prep)]

    c_prep = "make -s check_calc"
    out += [
        S("libcheck", "pass", "pass", "true_pass", "libcheck", "./check_calc", prep=c_prep),
        S("libcheck", "pass_verbose", "pass", "true_pass", "libcheck", "CK_VERBOSITY=verbose ./check_calc", prep=c_prep),
        S("libcheck", "fail", "fail", "true_fail", "libcheck", "CALC_BROKEN=1 ./check_calc", prep=c_prep),
        S("libcheck", "fail_verbose", "fail", "true_fail", "libcheck", "CALC_BROKEN=1 CK_VERBOSITY=verbose ./check_calc", prep=c_prep),
        S("libcheck", "fail_crash_signal", "fail", "true_fail", "libcheck", "CALC_CRASH=1 ./check_calc", prep=c_prep),
        S("libcheck", "fail_make_check", "fail", "true_fail", "libcheck", "CALC_BROKEN=1 make check", prep=c_prep),
    ]
    out += masks("libcheck", "libcheck", "CALC_BROKEN=1 ./check_calc", "fail", prep=c_prep)
    cu_prep = "cc -o test_calc test_calc.c -lcunit"
    out += [
        S("cunit", "pass", "pass", "true_pass", "cunit", "./test_calc", prep=cu_prep),
        S("cunit", "fail", "fail", "true_fail", "cunit", "CALC_BROKEN=1 ./test_calc", prep=cu_prep),
        S("cunit", "fail_silent", "fail", "true_fail", "cunit", "CALC_BROKEN=1 CU_SILENT=1 ./test_calc", prep=cu_prep),
    ]
    out += masks("cunit", "cunit", "CALC_BROKEN=1 ./test_calc", "fail", prep=cu_prep)
    cm_prep = "cc -o test_calc test_calc.c -lcmocka"
    out += [
        S("cmocka", "pass_skip", "pass", "true_pass", "cmocka", "./test_calc", prep=cm_prep),
        S("cmocka", "fail", "fail", "true_fail", "cmocka", "CALC_BROKEN=1 ./test_calc", prep=cm_prep),
        S("cmocka", "fail_tap", "fail", "true_fail", "cmocka", "CALC_BROKEN=1 CMOCKA_MESSAGE_OUTPUT=TAP ./test_calc", prep=cm_prep),
        S("cmocka", "pass_tap", "pass", "true_pass", "cmocka", "CMOCKA_MESSAGE_OUTPUT=TAP ./test_calc", prep=cm_prep),
    ]
    out += masks("cmocka", "cmocka", "CALC_BROKEN=1 ./test_calc", "fail", prep=cm_prep)
    for reporter in ("dot", "line", "json", "list"):
        out += [
            S("playwright", f"pass_{reporter}", "pass", "true_pass", "playwright", f"npx playwright test --reporter={reporter}"),
            S("playwright", f"fail_{reporter}", "fail", "true_fail", "playwright", f"CALC_BROKEN=1 npx playwright test --reporter={reporter}"),
        ]
    out += masks("playwright", "playwright", "CALC_BROKEN=1 npx playwright test --reporter=dot", "fail")
    out += [S("playwright", "list_tests", "not_test", "not_test", "playwright", "npx playwright test --list")]
    out += [
        S("maven", "pass", "pass", "true_pass", "maven", "mvn -o -B test"),
        S("maven", "pass_quiet", "pass", "true_pass", "maven", "mvn -o -q test", accept=("unknown",), note="-q prints nothing when all pass"),
        S("maven", "fail", "fail", "true_fail", "maven", "CALC_BROKEN=1 mvn -o -B test"),
        S("maven", "fail_quiet", "fail", "true_fail", "maven", "CALC_BROKEN=1 mvn -o -q test"),
        S("maven", "fail_compile_main", "fail", "true_fail", "maven", "cd broken && mvn -o -B test"),
        S("maven", "fail_compile_main_quiet", "fail", "true_fail", "maven", "cd broken && mvn -o -q test"),
        S("maven", "fail_compile_test", "fail", "true_fail", "maven", "cd testbroken && mvn -o -B test"),
        S("maven", "fail_verify", "fail", "true_fail", "maven", "CALC_BROKEN=1 mvn -o -B verify"),
        S("nontest", "mvn_compile_error", "not_test", "not_test", "maven", "cd broken && mvn -o -B compile"),
    ]
    out += masks("maven", "maven", "CALC_BROKEN=1 mvn -o -B test", "fail")
    out += masks("maven", "maven", "cd broken && mvn -o -B test", "fail")[:1]
    out[-1].variant = "compile_masked_tail"
    out += [
        S("tcltest", "pass_skip", "pass", "true_pass", "tcltest", "tclsh all.tcl"),
        S("tcltest", "pass_file", "pass", "true_pass", "tcltest", "tclsh calc.test"),
        S("tcltest", "fail", "fail", "true_fail", "tcltest", "CALC_BROKEN=1 tclsh all.tcl"),
        S("tcltest", "fail_file", "fail", "true_fail", "tcltest", "CALC_BROKEN=1 tclsh calc.test"),
        S("tcltest", "fail_exit", "fail", "true_fail", "tcltest_exit", "CALC_BROKEN=1 tclsh all.tcl"),
        S("tcltest", "pass_exit", "pass", "true_pass", "tcltest_exit", "tclsh all.tcl"),
    ]
    out += masks("tcltest", "tcltest", "CALC_BROKEN=1 tclsh all.tcl", "fail")
    # runners no rule was written for
    u_prep = "make -s all"
    for runner, binary in (("criterion", "test_criterion"), ("cppunit", "test_cppunit"), ("doctest_cpp", "test_doctest")):
        out += [S(runner, "pass", "pass", "true_pass", "unseen_c", f"./{binary}", prep=u_prep),
                S(runner, "fail", "fail", "true_fail", "unseen_c", f"CALC_BROKEN=1 ./{binary}", prep=u_prep)]
        out += masks(runner, "unseen_c", f"CALC_BROKEN=1 ./{binary}", "fail", prep=u_prep)
    out += [
        S("plainc", "pass", "pass", "true_pass", "unseen_c", "./test_plain", prep=u_prep),
        S("plainc", "fail_abort_signal", "fail", "true_fail", "unseen_c", "CALC_BROKEN=1 ./test_plain", prep=u_prep),
        S("plainc", "fail_segv_signal", "fail", "true_fail", "unseen_c", "CALC_CRASH=1 ./test_plain", prep=u_prep),
        S("testunit", "pass", "pass", "true_pass", "unseen_misc", "ruby test/test_calc.rb"),
        S("testunit", "fail", "fail", "true_fail", "unseen_misc", "CALC_BROKEN=1 ruby test/test_calc.rb"),
        S("luaunit", "pass", "pass", "true_pass", "unseen_misc", "lua5.4 test_calc.lua"),
        S("luaunit", "fail", "fail", "true_fail", "unseen_misc", "CALC_BROKEN=1 lua5.4 test_calc.lua"),
        S("luaunit", "fail_tap", "fail", "true_fail", "unseen_misc", "CALC_BROKEN=1 lua5.4 test_calc.lua -o tap"),
        S("zope", "pass", "pass", "true_pass", "unseen_py", "zope-testrunner --path=."),
        S("zope", "fail", "fail", "true_fail", "unseen_py", "CALC_BROKEN=1 zope-testrunner --path=."),
        S("stestr", "pass", "pass", "true_pass", "unseen_py", "rm -rf .stestr && stestr run"),
        S("stestr", "fail", "fail", "true_fail", "unseen_py", "rm -rf .stestr && CALC_BROKEN=1 stestr run"),
        S("lab", "pass", "pass", "true_pass", "unseen_js", "npx lab test/calc.js"),
        S("lab", "fail", "fail", "true_fail", "unseen_js", "CALC_BROKEN=1 npx lab test/calc.js"),
        S("brittle", "pass", "pass", "true_pass", "unseen_js", "node brittle.test.js"),
        S("brittle", "fail", "fail", "true_fail", "unseen_js", "CALC_BROKEN=1 node brittle.test.js"),
    ]
    for runner, sample, base in (("testunit", "unseen_misc", "CALC_BROKEN=1 ruby test/test_calc.rb"), ("luaunit", "unseen_misc", "CALC_BROKEN=1 lua5.4 test_calc.lua"),
                                 ("zope", "unseen_py", "CALC_BROKEN=1 zope-testrunner --path=."), ("lab", "unseen_js", "CALC_BROKEN=1 npx lab test/calc.js"),
                                 ("brittle", "unseen_js", "CALC_BROKEN=1 node brittle.test.js")):
        out += masks(runner, sample, base, "fail")
    # known runners behind wrappers, in two suites, cut
    out += [
        S("coverage", "pytest_fail", "fail", "true_fail", "pytest", "coverage run -m pytest -q -p no:cacheprovider tests_fail"),
        S("coverage", "pytest_pass", "pass", "true_pass", "pytest", "coverage run -m pytest -q -p no:cacheprovider tests_pass"),
        S("uv", "run_pytest_fail", "fail", "true_fail", "pytest", "uv run --no-project pytest -q -p no:cacheprovider tests_fail"),
        S("uv", "run_pytest_pass", "pass", "true_pass", "pytest", "uv run --no-project pytest -q -p no:cacheprovider tests_pass"),
        S("pnpm", "exec_playwright_fail", "fail", "true_fail", "playwright", "CALC_BROKEN=1 pnpm exec playwright test --reporter=line"),
        S("tox", "e_fail", "fail", "true_fail", "pytest", "tox -q -e py -- tests_fail"),
        S("makecheck", "make_C_fail", "fail", "true_fail", "pytest", "make -C sub test-fail"),
        S("makecheck", "make_C_pass", "pass", "true_pass", "pytest", "make -C sub test"),
        S("ownscript", "two_suites_fail_then_pass", "fail", "true_fail", "pytest", "./run_all_tests.sh"),
        S("ownscript", "two_suites_pass", "pass", "true_pass", "pytest", "./run_all_tests.sh tests_pass tests_skip"),
        S("pytest", "two_suites_bash_c", "fail", "true_fail", "pytest",
          "bash -c 'python -m pytest -q -p no:cacheprovider tests_fail; python -m pytest -q -p no:cacheprovider tests_pass'"),
        S("ownscript", "two_suites_tail", "fail", "masked_fail", "pytest", "./run_all_tests.sh | tail -3", accept=("unknown",),
          note="tail keeps only the second suite's passing summary: unknown, never pass"),
        S("ownscript", "two_suites_grep_passed", "fail", "masked_fail", "pytest", "./run_all_tests.sh | grep passed", accept=("unknown",),
          note="grep keeps only the passing summary: unknown, never pass"),
        S("ownscript", "two_suites_pass_tail", "pass", "masked_pass", "pytest", "./run_all_tests.sh tests_pass tests_skip | tail -3",
          accept=("unknown",), note="cut and masked: unknown is the rule's answer"),
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
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "MIX_HOME": str(cache / "mix"), "HEX_OFFLINE": "1",
        "MIX_BUILD_PATH": str(cache / "mix-build"),
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
        if (SAMPLES / sample / "package.json").exists() or sample in ("tape", "tap", "node", "nontest", "deno", "jasmine", "qunit", "cucumber", "nontest2",
                                                                          "playwright", "unseen_js"):
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
    ap.add_argument("--round-two", action="store_true", help="only the round-two captures (runners with no dedicated reader, hung runs, look-alikes)")
    ap.add_argument("--round-three", action="store_true", help="only the round-three captures (new readers, runners never seen, wrappers and cut output)")
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
    for sc in (round_three() if args.round_three else round_two() if args.round_two else scenarios()):
        if only and sc.runner not in only:
            continue
        if sc.runner in skipped:
            continue
        missing = [p for p in REQUIRES.get(sc.runner, []) if shutil.which(p, path=env["PATH"]) is None]
        if missing:
            skipped[sc.runner] = f"not installed: {', '.join(missing)}"
            continue
        cwd = work_copy(cache, sc.sample, sc.prep, env, prepared)
        if sc.runner not in versions or sc.runner == "nontest":
            program = sc.command.split()[0] if sc.command.split()[0] not in ("npx", "python") else " ".join(sc.command.split()[:2])
            v = sh(VERSION_COMMANDS.get(sc.runner, f"{program} --version 2>&1 | head -1"), cwd=cwd, env=env, timeout=60)
            versions[sc.runner] = v.stdout.strip().splitlines()[0] if v.stdout.strip() else "unknown"
        # exactly what the Bash tool does: bash -c, stderr merged into stdout
        r = sh(sc.command, cwd=cwd, env=env)
        output, trim_note = trim(r.stdout)
        exit_code = r.returncode
        if exit_code < 0:
            # bash exec'd the last command and a signal killed it; a shell (Claude Code's Bash tool) reports 128+N
            trim_note = "; ".join(x for x in (trim_note, f"killed by signal {-exit_code}; recorded as the shell's {128 - exit_code}") if x)
            exit_code = 128 - exit_code
        fixture = {
            "command": sc.command,
            "exit_code": exit_code,
            "output": output,
            "tool": sc.runner,
            "tool_version": versions[sc.runner],
            "captured_at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
            "expect": sc.expect,
            "category": sc.category,
            "accept": list(sc.accept),
            "note": "; ".join(x for x in (sc.note, trim_note) if x),
        }
        if args.round_two:
            fixture["group"] = "tuned" if sc.runner in TUNED else "holdout" if sc.runner in HOLDOUT else "nontest" if sc.runner == "nontest" else "known"
        if args.round_three:
            fixture["group"] = ("reader3" if sc.runner in READER3 else "unseen_tuned" if sc.runner in UNSEEN_TUNED
                                else "unseen_holdout" if sc.runner in UNSEEN_HOLDOUT else "nontest" if sc.runner == "nontest" else "generic3")
        path = FIXTURES / sc.category / f"{sc.runner}_{'r3_' if args.round_three else ''}{sc.variant}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        tmp.replace(path)
        counts[sc.category] = counts.get(sc.category, 0) + 1
        print(f"{sc.category:12} {sc.runner:9} {sc.variant:32} exit={exit_code:<4} {len(r.stdout):>7} chars", flush=True)
    print("\ncaptured:", sum(counts.values()), counts)
    for runner, why in skipped.items():
        print(f"skipped {runner}: {why}")
    for note in notes:
        print("install problem:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
