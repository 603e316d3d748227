"""ralph.fastos against os and os.path: the hook path's own path functions
must give exactly what posixpath gives, its file predicates and makedirs must
behave as os's on real files, and its environment must be os.environ's."""
import os
import posixpath
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralph import fastos

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what path functions branch on: slashes, dots, empty parts, and plain names
path_parts = st.sampled_from(["/", "//", "///", ".", "..", "...", "a", "b.c", "é", " ", "\udcff", "~", "a/", "/b"])
paths = st.lists(path_parts, max_size=8).map("".join)


@given(paths)
def test_path_functions_match_posixpath(path: str) -> None:
    assert fastos.normpath(path) == posixpath.normpath(path)
    assert fastos.dirname(path) == posixpath.dirname(path)
    assert fastos.basename(path) == posixpath.basename(path)
    assert fastos.isabs(path) == posixpath.isabs(path)
    assert fastos.abspath(path) == posixpath.abspath(path)


@given(paths, st.lists(paths, max_size=4))
def test_join_matches_posixpath(first: str, rest: list[str]) -> None:
    assert fastos.join(first, *rest) == posixpath.join(first, *rest)


def test_file_predicates_match_os_path(tmp_path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "to-dir").symlink_to(tmp_path / "dir")
    names = ["dir", "file", "dangling", "to-dir", "nowhere", "file/below", "a\x00b", "x" * 5000]
    for name in names:
        path = str(tmp_path / name)
        for ours, theirs in ((fastos.exists, os.path.exists), (fastos.lexists, os.path.lexists),
                             (fastos.isdir, os.path.isdir), (fastos.isfile, os.path.isfile)):
            assert ours(path) == theirs(path), (ours.__name__, name)


def test_makedirs_behaves_as_os_makedirs(tmp_path) -> None:
    for target in ("a/b/c", "d/./e/", "f//g", "h/../i"):
        for module, root in ((fastos, tmp_path / "ours"), (os, tmp_path / "theirs")):
            module.makedirs(str(root / target), exist_ok=True)
            module.makedirs(str(root / target), exist_ok=True)  # again: nothing to do, no error
    assert sorted(p.relative_to(tmp_path / "ours") for p in (tmp_path / "ours").rglob("*")) == \
        sorted(p.relative_to(tmp_path / "theirs") for p in (tmp_path / "theirs").rglob("*"))
    with pytest.raises(FileExistsError):
        fastos.makedirs(str(tmp_path / "ours" / "a"))
    (tmp_path / "plain-file").write_text("x")
    with pytest.raises(FileExistsError):
        fastos.makedirs(str(tmp_path / "plain-file"), exist_ok=True)
    with pytest.raises(NotADirectoryError):
        fastos.makedirs(str(tmp_path / "plain-file" / "below"), exist_ok=True)


def test_environ_is_os_environ_once_os_is_loaded() -> None:
    assert "os" in sys.modules and fastos.environ() is os.environ


def test_environ_decodes_as_os_does_without_os() -> None:
    # A fresh interpreter without site (as a hook runs): fastos decodes the
    # environment itself, before os is imported; undecodable bytes survive
    # as surrogates, as in os.environ.
    code = ("import sys; from ralph import fastos; ours = dict(fastos.environ()); loaded = 'os' in sys.modules; "
            "import os; print(loaded, ours == dict(os.environ), ours['RALPH_ODD'] == os.environ['RALPH_ODD'])")
    env = {k.encode(): v.encode() for k, v in os.environ.items()} | {b"RALPH_ODD": b"caf\xe9 \xff", b"PYTHONPATH": REPO.encode()}
    done = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
