"""Program facts: one table of what programs do with their arguments.

Shared by the push/merge guard (ralph.rules.guard.judge and its program models) and
the test-run classifier (ralph.rules.outcome.verdict): which programs are shells,
which interpreters take code after which option, which wrappers run the rest
of their words as a command and which of their options take a value. One
table, so the two readers cannot drift apart. Data only.
"""
EXEC_APIS = ("system", "exec", "spawn", "popen", "subprocess", "child_process", "shell", "passthru",
             "proc_open", "`", "qx", "%x", "open3", "pty", "__import__", "os.", "check_output", "eval",
             "deno.command", "bun.spawn", "$(", "getattr", "globals(", "builtins", "import(")

COMMAND_ENV = frozenset(("GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF",
                         "GIT_ASKPASS", "EDITOR", "VISUAL", "PAGER", "GIT_SSH", "SSH_ASKPASS", "PROMPT_COMMAND",
                         "BASH_ENV", "ENV", "GIT_PROXY_COMMAND"))

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash", "tcsh", "csh"))
# interpreter -> options whose value is code
INTERPRETERS = {
    "python": ("-c",), "pypy": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
    "lua": ("-e",), "luajit": ("-e",), "rscript": ("-e",), "tclsh": (), "osascript": ("-e",), "pwsh": ("-c", "-command"),
    "powershell": ("-c", "-command"), "expect": ("-c",), "julia": ("-e", "--eval"), "groovy": ("-e",), "jshell": (), "irb": (),
}
# program -> (short options taking a value, long options taking a value, positionals before the command)
WRAPPERS = {
    "sudo": ("ugpChDrtTUR", ("--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type",
                             "--command-timeout", "--other-user", "--chroot"), 0),
    "doas": ("uC", (), 0),
    "nohup": ("", (), 0), "setsid": ("", (), 0), "chronic": ("", (), 0), "unbuffer": ("", (), 0),
    "eatmydata": ("", (), 0), "nocache": ("", (), 0), "torsocks": ("", (), 0), "catchsegv": ("", (), 0),
    "builtin": ("", (), 0), "coproc": ("", (), 0), "then": ("", (), 0), "do": ("", (), 0), "else": ("", (), 0),
    "exec": ("a", (), 0), "time": ("fo", ("--format", "--output"), 0), "caffeinate": ("wt", (), 0),
    "nice": ("n", ("--adjustment",), 0), "ionice": ("cnp", ("--class", "--classdata", "--pid"), 0),
    "chrt": ("", (), 1), "taskset": ("", (), 1), "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0), "chroot": ("", ("--userspec", "--groups"), 1),
    "strace": ("oeEpPsSuXbIa", ("--output",), 0), "ltrace": ("oeEpPsSuXbIan", (), 0), "fakeroot": ("ls", (), 0),
    "proxychains": ("f", (), 0), "proxychains4": ("f", (), 0), "firejail": ("", (), 0), "unshare": ("", (), 0),
    "nsenter": ("tSG", ("--target",), 0), "xvfb-run": ("snefwpl", ("--server-args", "--server-num", "--auth-file", "--error-file", "--xauth-protocol"), 0), "dbus-launch": ("", (), 0),
    "valgrind": ("", (), 0), "env": ("uCS", ("--unset", "--chdir", "--split-string"), 0),
    "command": ("", (), 0), "flock": ("wEoc", ("--timeout", "--conflict-exit-code", "--command"), 1),
    "su": ("cgGsw", ("--command", "--group", "--supp-group", "--shell", "--whitelist-environment"), 0),
    "runuser": ("cgGsuw", ("--command", "--group", "--supp-group", "--shell", "--user"), 0),
    "script": ("cEIOT", ("--command", "--echo", "--log-in", "--log-out", "--log-timing"), 0),
    "systemd-run": ("upEM", ("--unit", "--property", "--setenv", "--machine", "--description", "--slice",
                             "--working-directory", "--uid", "--gid"), 0),
    "gdb": ("", (), 0), "perf": ("", (), 0), "sg": ("", (), 1), "watch": ("ndg", ("--interval", "--differences"), 0),
    "nix-shell": ("pIE", ("--run", "--command", "--packages", "--expr"), 0),
    "cross-env": ("", (), 0), "cross-env-shell": ("", (), 0), "dotenv": ("ecv", (), 0),
}
# wrappers that also take NAME=value words before the command
ASSIGNING_WRAPPERS = frozenset(("env", "sudo", "doas", "cross-env", "cross-env-shell"))
# programs that take a command string after -c / --command (value is a script)
WRAPPER_SCRIPT_OPTS = {
    "flock": ("-c", "--command"), "su": ("-c", "--command", "--session-command"), "runuser": ("-c", "--command"),
    "script": ("-c", "--command"), "nix-shell": ("--run", "--command"),
}
# two-word runners: (program, subcommand) -> the rest is a command, options unknown (scanned)
RUNNER_SUBCOMMANDS = frozenset((("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("bundle", "exec"),
                                ("conda", "run"), ("mamba", "run"), ("pixi", "run"), ("mise", "exec"),
                                ("mise", "x"), ("rbenv", "exec"), ("pyenv", "exec"), ("direnv", "exec"),
                                ("nix", "develop"), ("nix", "run"), ("asdf", "exec"), ("hatch", "run"),
                                ("pdm", "run"), ("rye", "run"), ("devbox", "run"), ("docker", "exec"),
                                ("docker", "run"), ("podman", "exec"), ("podman", "run"), ("kubectl", "exec"),
                                ("nerdctl", "exec"), ("nerdctl", "run"), ("lxc", "exec"), ("vagrant", "ssh"),
                                ("toolbox", "run"), ("distrobox", "enter"), ("flatpak", "run"), ("snap", "run"),
                                ("opam", "exec"), ("stack", "exec"), ("cargo", "run"), ("dotnet", "exec"),
                                ("xcrun", ""), ("doppler", "run"), ("op", "run"), ("aws-vault", "exec")))
SSH_OPTS_WITH_ARG = "BbcDEeFIiJLlmOoPpQRSWw"
# (-e, -i, -l and --eof, --replace, --max-lines take a value only attached: `-i{}`, `--replace=X`)
XARGS_SHORT_WITH_ARG = "adEILnPs"
XARGS_LONG_WITH_ARG = ("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var")
PARALLEL_OPTS_WITH_ARG = frozenset(("-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter",
                                    "-E", "-I", "-n", "--max-args", "-N", "-P", "--delay", "--timeout",
                                    "--joblog", "--results", "--tmpdir", "--workdir", "--wd", "-L",
                                    "--max-lines", "--colsep", "-C", "--tag-string", "--retries"))
# builtins / tools that only print or test: their arguments are data
DATA_PROGRAMS = frozenset("""echo printf cat grep egrep fgrep rg ag ack ls head tail wc sort uniq cut tr less more
jq yq sed awk gawk mawk nawk diff cmp test [ true false pwd cd pushd popd dirs mkdir rmdir rm cp mv ln touch
chmod chown stat file basename dirname realpath readlink date sleep which whereis type hash help man tee
find xxd od hexdump base64 rev tac nl fold fmt column paste join comm expand unexpand split csplit md5sum
sha1sum sha256sum git-lfs gh hub curl wget tar zip unzip gzip gunzip make npm yarn pnpm pip pip3 cargo go
rustc gcc cc clang javac java mvn gradle pytest tox ruff black mypy eslint prettier tsc vi vim nano code""".split())


AWK = frozenset(("awk", "gawk", "mawk", "nawk", "busybox-awk"))


def is_assignment(word: str) -> bool:
    """NAME=value, as a shell or env reads it before the command."""
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def unwrap(words: list[str]) -> list[str]:
    """The command a literal word list runs once leading NAME=value words and
    wrappers (sudo -u x, env -i, timeout 5, nice -n 5, xargs -n1, ...) with
    their options are taken off. Literal words only: the guard's program
    models (ralph.rules.guard.programs.wrappers) handle the dynamic cases."""
    k = 0
    while k < len(words):
        word = words[k]
        if is_assignment(word):
            k += 1
            continue
        name = word.rsplit("/", 1)[-1]
        if name == "xargs":
            short, long, positionals = XARGS_SHORT_WITH_ARG, XARGS_LONG_WITH_ARG, 0
        elif name in WRAPPERS:
            short, long, positionals = WRAPPERS[name]
        else:
            break
        k += 1
        while k < len(words):
            arg = words[k]
            if arg == "--":
                k += 1
                break
            if arg.startswith("--"):
                k += 1 if "=" in arg or arg not in long else 2
            elif len(arg) > 1 and arg[0] == "-":
                takes = next((j for j, ch in enumerate(arg[1:], 1) if ch in short), None)
                k += 2 if takes is not None and takes == len(arg) - 1 else 1
            elif name in ASSIGNING_WRAPPERS and is_assignment(arg):
                k += 1
            else:
                break
        k += positionals
    return words[k:]
