#!/usr/bin/python3
"""A stand-in for the forge CLIs and git front ends absent from the labelling
sandbox: gh, glab, hub, jj, git-svn, git-flow (one file, dispatched on the
name it is called by; scripts/label_guard_corpus.py links it into the
sandbox's bin/).

It does what the real program would do to the remote, on the sandbox's bare
`origin.git`: a call that merges, syncs, pushes or writes refs or commits on
the forge moves a ref there (`refs/heads/forge-<n>`), which the labeller sees
as "remote refs changed"; a merge in the local repository runs the real
`git merge`. Read-only calls and help forms only print. Every call is
recorded in marks.txt as `forge <name> <args>` (for --verbose).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BOX = os.path.dirname(HERE)
ORIGIN = os.path.join(BOX, "origin.git")
HELP = ("--help", "-h", "help")
API_WRITE_SEGMENTS = {"merge", "merges", "merge-upstream", "update-branch", "contents", "rebase"}
API_WRITE_PATHS = ("/git/refs", "/git/commits", "/git/trees", "/repository/commits", "/repository/files",
                   "/repository/branches", "/repository/merge")
MUTATIONS = ("mergepullrequest", "mergebranch", "createcommitonbranch", "updateref", "createref",
             "enablepullrequestautomerge", "updatepullrequestbranch", "mergerequestaccept", "mergerequestsetautomerge")
API_VALUE_OPTS = {"-X", "--method", "-f", "--raw-field", "-F", "--field", "-H", "--header", "--input", "-q", "--jq",
                  "-t", "--template", "--cache", "--hostname", "-p", "--preview"}


def remote_write(what: str) -> int:
    """The forge changed the remote: move a ref in origin.git."""
    main = subprocess.run(["git", "--git-dir", ORIGIN, "rev-parse", "refs/heads/main"], capture_output=True, text=True).stdout.strip()
    n = len(subprocess.run(["git", "--git-dir", ORIGIN, "for-each-ref"], capture_output=True, text=True).stdout.splitlines())
    subprocess.run(["git", "--git-dir", ORIGIN, "update-ref", f"refs/heads/forge-{n}", main], check=False)
    print(f"{what}: done")
    return 0


def api(cli: str, args: list[str]) -> int:
    method, fields, endpoint, body = None, False, None, []
    i = 0
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-X", "--method"):
            method = value.upper()
        elif arg.startswith("--method="):
            method = arg.split("=", 1)[1].upper()
        elif arg.startswith("-X") and len(arg) > 2:
            method = arg[2:].upper()
        elif arg in ("-f", "--raw-field", "-F", "--field", "--input"):
            fields = True
            body.append(sys.stdin.read() if arg == "--input" and value == "-" else value)
        elif arg.startswith(("--field=", "--raw-field=")):
            fields = True
            body.append(arg.split("=", 1)[1])
        if arg in API_VALUE_OPTS:
            i += 2
            continue
        if not arg.startswith("-") and endpoint is None:
            endpoint = arg
        i += 1
    if endpoint is None:
        return 1
    method = method or ("POST" if fields else "GET")
    path = "/" + endpoint.lower().split("?", 1)[0].strip("/")
    if path == "/graphql":
        text = " ".join(body).lower().replace(" ", "")
        return remote_write(f"{cli} api graphql") if any(m in text for m in MUTATIONS) else print("{}") or 0
    if method in ("GET", "HEAD"):
        print("[]")
        return 0
    if API_WRITE_SEGMENTS & set(path.split("/")) or any(p in path for p in API_WRITE_PATHS):
        return remote_write(f"{cli} api {method} {endpoint}")
    print("{}")
    return 0


def words(args: list[str], value_opts: set) -> list[str]:
    out, i = [], 0
    while i < len(args):
        if args[i] in value_opts:
            i += 2
            continue
        if not args[i].startswith("-"):
            out.append(args[i])
        i += 1
    return out


def main() -> int:
    name = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    with open(os.path.join(BOX, "marks.txt"), "a") as f:
        f.write(f"forge {name} {' '.join(args)}\n")
    if any(a in HELP for a in args):
        print(f"usage: {name} ...")
        return 0
    if name in ("gh", "glab"):
        w = words(args, {"-R", "--repo", "--hostname"} | API_VALUE_OPTS)
        group, verb = (w + ["", ""])[:2]
        if (name, group, verb) in (("gh", "pr", "merge"), ("glab", "mr", "merge"), ("glab", "mr", "accept"), ("gh", "repo", "sync")):
            return remote_write(f"{name} {group} {verb}")
        if group == "api":
            return api(name, args[args.index("api") + 1:])
        print("ok")
        return 0
    if name == "hub":
        w = [a for a in args if not a.startswith("-")]
        verb = w[0] if w else ""
        if verb in ("merge", "sync"):
            return remote_write(f"hub {verb}")
        if verb == "api":
            return api("hub", args[args.index("api") + 1:])
        os.execvp("git", ["git"] + args)
    if name == "jj":
        w = words(args, {"-R", "--repository", "--at-operation", "--at-op", "--config", "--config-toml", "--config-file", "--color"})
        if w[:2] == ["git", "push"]:
            return remote_write("jj git push")
        print("ok")
        return 0
    if name == "git-svn":
        if args and args[0] in ("dcommit", "set-tree"):
            return remote_write(f"git svn {args[0]}")
        return 0
    if name == "git-flow":
        w = [a for a in args if not a.startswith("-")]
        if len(w) >= 2 and w[1] == "finish":
            return subprocess.run(["git", "merge", "--no-edit", "feature"]).returncode  # the sandbox's one branch
        if len(w) >= 2 and w[1] == "publish":
            return remote_write("git flow publish")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
