"""The binary's deferred ctypes bootstrap (scripts/pyi_ctypes_deferred.py,
appended by build.spec to PyInstaller's pyimod03_ctypes): nothing imports
ctypes at start-up, and the first import gets PyInstaller's hooks all the same.
Run in a fresh interpreter, as the binary's bootstrap would."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import os, sys, types
loader_source, deferred_source, import_first = sys.argv[1:4]
if import_first == "1":
    import ctypes  # as on macOS, where PyInstaller's module imports it itself
sys._MEIPASS = os.getcwd()
module = types.ModuleType("pyimod03_ctypes")
with open(loader_source) as f, open(deferred_source) as g:  # as build.spec joins them
    exec(compile(f.read() + "\n\n" + g.read(), "pyimod03_ctypes.py", "exec"), module.__dict__)
module.install()
print("imported at install:", "ctypes" in sys.modules)
import ctypes.util
print("CDLL:", ctypes.CDLL.__name__, ctypes.PyDLL.__name__)
print("loader:", type(ctypes.__loader__).__name__, ctypes.__spec__.loader is ctypes.__loader__)
print("finder left:", any(getattr(f, "__name__", "") == "_CtypesFinder" for f in sys.meta_path))
print("getpid:", ctypes.CDLL(None).getpid() == os.getpid())
"""


def probe(tmp_path, import_first: bool) -> str:
    PyInstaller = pytest.importorskip("PyInstaller")
    loader_source = os.path.join(os.path.dirname(PyInstaller.__file__), "loader", "pyimod03_ctypes.py")
    deferred_source = os.path.join(REPO, "scripts", "pyi_ctypes_deferred.py")
    done = subprocess.run([sys.executable, "-I", "-c", PROBE, loader_source, deferred_source, "1" if import_first else "0"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ctypes_is_not_imported_until_asked_for_then_hooked(tmp_path) -> None:
    out = probe(tmp_path, import_first=False)
    assert "imported at install: False" in out
    assert "CDLL: PyInstallerCDLL PyInstallerPyDLL" in out
    assert "FileLoader True" in out and "_HooksAfterExec" not in out  # ctypes keeps its own loader
    assert "finder left: False" in out
    assert "getpid: True" in out


def test_ctypes_imported_before_install_is_hooked_at_once(tmp_path) -> None:
    out = probe(tmp_path, import_first=True)
    assert "imported at install: True" in out
    assert "CDLL: PyInstallerCDLL PyInstallerPyDLL" in out
    assert "finder left: False" in out
    assert "getpid: True" in out
