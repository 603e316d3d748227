"""The world the destructive-command corpus runs in (tests/fixtures/bash/destroy_*):
a home directory with a project repository and another repository in it, and
a few system files. scripts/label_guard_corpus.py builds it inside a
bubblewrap sandbox (its / is a tmpfs; /etc, /var, /opt, /srv, /home, /root are
scratch copies, /usr is read-only) and runs each case there to see what bash
destroys; tests/test_guard_destroy.py builds the same home and project in a
temporary directory and runs each case through `ralph pre-tool`.

    <home>/.bashrc, .ssh/config, notes/todo.txt, data.db (SQLite)
    <home>/work/proj                the project (the command's cwd):
        README.md, src/lib/util.py  tracked, with an uncommitted change
        src/app.py                  tracked
        docs/guide.md               tracked
        staged.txt                  staged, never committed
        notes.txt, scratch/draft.md untracked
        .env, data/app.db           ignored, not build artefacts
        node_modules/, build/, dist/, src/__pycache__/  ignored build artefacts
        branch `feature` (a commit only it has, in no reflog), branch `merged`,
        annotated tag v0 on the first commit, a stash entry
    <home>/work/other               another repository, with an uncommitted change
    (sandbox only) /etc/hosts, /etc/demo/app.conf, /var/log/app.log,
    /var/lib/app/state, /opt/app/run.sh, /srv/data/file.txt, /root/.profile
"""
from __future__ import annotations

import os
import sqlite3
import subprocess

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
SYSTEM_FILES = {
    "etc/demo/app.conf": "listen = 8080\n", "var/log/app.log": "started\n", "var/lib/app/state": "42\n",
    "opt/app/run.sh": "#!/bin/sh\necho run\n", "srv/data/file.txt": "data\n", "root/.profile": "export X=1\n",
}


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def git(cwd: str, *args: str, home: str) -> None:
    env = dict(os.environ, HOME=home, **GIT_ENV)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def database(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (x TEXT)")
    connection.execute("INSERT INTO t VALUES (?)", (path,))  # each database its own bytes
    connection.commit()
    connection.close()


def build_home(home: str) -> str:
    """The home directory with both repositories; returns the project's path."""
    write(os.path.join(home, ".bashrc"), "alias ll='ls -l'\n")
    write(os.path.join(home, ".ssh", "config"), "Host example\n  User me\n")
    write(os.path.join(home, "notes", "todo.txt"), "buy milk\n")
    database(os.path.join(home, "data.db"))
    project = os.path.join(home, "work", "proj")
    other = os.path.join(home, "work", "other")
    for path, text in {"README.md": "# proj\n", "src/app.py": "print('app')\n", "src/lib/util.py": "X = 1\n",
                       "docs/guide.md": "guide\n", ".gitignore": ".env\ndata/\nnode_modules/\nbuild/\ndist/\n__pycache__/\n"}.items():
        write(os.path.join(project, path), text)
    os.makedirs(project, exist_ok=True)
    git(project, "init", "-q", "-b", "main", home=home)
    git(project, "add", "-A", home=home)
    git(project, "commit", "-qm", "first", home=home)
    git(project, "tag", "-a", "v0", "-m", "first release", home=home)
    git(project, "branch", "merged", home=home)
    git(project, "checkout", "-qb", "feature", home=home)
    write(os.path.join(project, "feature.txt"), "only on feature\n")
    git(project, "add", "feature.txt", home=home)
    git(project, "commit", "-qm", "feature work", home=home)
    git(project, "checkout", "-q", "main", home=home)
    # no reflog remembers feature's commit: deleting the branch loses it
    git(project, "reflog", "expire", "--expire=now", "--all", home=home)
    write(os.path.join(project, "src", "app.py"), "print('stashed change')\n")
    git(project, "stash", "-q", home=home)
    write(os.path.join(project, "README.md"), "# proj\nuncommitted line\n")
    write(os.path.join(project, "src", "lib", "util.py"), "X = 2  # uncommitted\n")
    write(os.path.join(project, "staged.txt"), "staged, never committed\n")
    git(project, "add", "staged.txt", home=home)
    write(os.path.join(project, "notes.txt"), "untracked notes\n")
    write(os.path.join(project, "scratch", "draft.md"), "untracked draft\n")
    write(os.path.join(project, ".env"), "SECRET=1\n")
    database(os.path.join(project, "data", "app.db"))
    for path in ("node_modules/pkg/index.js", "build/out.o", "dist/app.js", "src/__pycache__/app.cpython-311.pyc"):
        write(os.path.join(project, path), "artefact\n")
    write(os.path.join(other, "file.txt"), "other repo\n")
    git(other, "init", "-q", "-b", "main", home=home)
    git(other, "add", "-A", home=home)
    git(other, "commit", "-qm", "other", home=home)
    write(os.path.join(other, "file.txt"), "other repo\nuncommitted\n")
    return project


def build_system(root: str) -> None:
    """The system files a sandbox's scratch /etc, /var, /opt, /srv, /root hold."""
    for path, text in SYSTEM_FILES.items():
        write(os.path.join(root, path), text)


def write_case_files(project: str, files: dict[str, str]) -> None:
    """A case's own files (a Makefile, a package.json, a script), written into
    the project before the command runs: files already on disk."""
    for path, text in files.items():
        full = os.path.join(project, path)
        write(full, text)
        if text.startswith("#!"):
            os.chmod(full, 0o755)


class World:
    """The home and project of build_home in a temporary directory, and the
    guard's judgement of a command run in that project (as the hook judges
    it: its Surroundings, with HOME and TMPDIR pointing into the world)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.home = os.path.join(base, "home", "user")
        self.tmpdir = os.path.join(base, "tmpdir")
        os.makedirs(self.tmpdir, exist_ok=True)
        self.project = build_home(self.home)

    @property
    def environ(self) -> dict[str, str]:
        return {"HOME": self.home, "TMPDIR": self.tmpdir}

    def judge(self, command: str, files: dict[str, str] | None = None) -> object:
        from ralph.claude.bash_guard import surroundings
        from ralph.rules.guard.judge import judge_command

        written = []
        for path in files or {}:
            if not os.path.exists(os.path.join(self.project, path)):
                written.append(os.path.join(self.project, path))
        write_case_files(self.project, files or {})
        try:
            return judge_command(command, cwd=self.project, around=surroundings(self.project, self.project, self.environ))
        finally:
            for path in written:
                os.unlink(path)
