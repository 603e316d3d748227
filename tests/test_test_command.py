"""scripts/test's reporting (tests/conftest.py): each failure named the
moment it happens, in one process and in pytest-xdist workers."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import HERE

REPO = os.path.dirname(HERE)
PROJECT = {
    "conftest.py": "from tests.conftest import pytest_configure, pytest_runtest_logreport  # noqa: F401\n",
    "test_sample.py": (
        "import pytest\n\n\n"
        "@pytest.mark.parametrize('n', range(6))\n"
        "def test_numbers(n):\n"
        "    assert n != 3, 'three is\\n  not   wanted'\n\n\n"
        "@pytest.fixture\n"
        "def broken():\n"
        "    raise RuntimeError('the fixture broke')\n\n\n"
        "def test_uses_broken(broken):\n"
        "    pass\n"
    ),
}


def run_sample(tmp_path, *args: str) -> str:
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = REPO
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_sample.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_each_failure_is_named_before_the_summary(tmp_path, workers):
    out = run_sample(tmp_path, *workers)
    summary = out.index("= FAILURES =") if "= FAILURES =" in out else out.index("= ERRORS =")
    live = out[:summary].splitlines()
    assert "FAILED test_sample.py::test_numbers[3] - AssertionError: three is" in live, out
    assert "ERROR at setup of test_sample.py::test_uses_broken - RuntimeError: the fixture broke" in live, out
    assert "1 failed, 5 passed, 1 error" in out  # the usual closing summary follows
