"""The local remotes of a project's git repository: those whose URL is a
path, where a git write is a push (the guard asks for them only when a
command writes somewhere with git)."""
import os


def local_remotes(root: str) -> tuple[str, ...]:
    """Absolute paths of the repository's remotes that are local paths (a git
    write into one is a push), read from its git config; () when unreadable."""
    git_dir = os.path.join(root, ".git")
    try:
        if os.path.isfile(git_dir):  # a worktree or submodule: `gitdir: <path>`
            with open(git_dir, encoding="utf-8", errors="replace") as f:
                git_dir = os.path.join(root, f.read().split("gitdir:", 1)[-1].strip())
            common = os.path.join(git_dir, "commondir")
            if os.path.isfile(common):
                with open(common, encoding="utf-8", errors="replace") as f:
                    git_dir = os.path.join(git_dir, f.read().strip())
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as f:
            lines = f.read(200_000).splitlines()
    except OSError:
        return ()
    remotes = []
    in_remote = False
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            in_remote = line.lower().startswith("[remote ")
        elif in_remote and line.lower().replace(" ", "").startswith(("url=", "pushurl=")):
            url = line.split("=", 1)[1].strip().strip('"')
            if url.startswith("file://"):
                url = url[7:]
            if url.startswith("~"):
                url = os.path.expanduser(url)
            if url.startswith(("/", "./", "../")) or (url and ":" not in url):
                remotes.append(os.path.normpath(os.path.join(root, url)))
    return tuple(remotes)
