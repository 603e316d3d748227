"""git's config, as the git model reads it: entries from `-c`, `--config-env`
and the environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS,
GIT_CONFIG_GLOBAL/SYSTEM), config files the command wrote and include.path;
the aliases they define, core.hooksPath, and values git runs as commands;
`git config` itself; and the hooks and config files a command writes, which
arm a later push (the walk asks judge_written_git_file). Loaded by name from
ralph.rules.guard.programs.git when a git call has config or an alias.
"""
from ralph.rules.guard.expand import split_words
from ralph.rules.guard.interp import Analysis
from ralph.rules.guard.programs.git import alias_value, run_git, split_config
from ralph.rules.guard.state import UNKNOWN, Scope, file_key, lookup_file, shell_quote, show
from ralph.rules.guard.syntax.lexer import ShellSyntaxError

# config keys whose value git runs as a program (a key with a name in the middle: section.*.name)
PROGRAM_CONFIG_KEYS = frozenset(("core.sshcommand", "core.editor", "sequence.editor", "core.pager", "core.fsmonitor",
                                 "core.askpass", "core.gitproxy", "uploadpack.packobjectshook", "diff.external",
                                 "gpg.program", "gpg.ssh.program", "gpg.x509.program", "credential.helper", "web.browser",
                                 "sendemail.smtpserver", "merge.tool", "diff.tool", "ssh.variant", "core.hookspath"))
PROGRAM_CONFIG_NAMES = frozenset(("uploadpack", "receivepack", "command", "textconv", "driver", "clean", "smudge", "process",
                                  "cmd", "helper", "proxy", "program", "sshcommand"))


def runs_program(key: str) -> bool:
    """Does git run this config key's value as a program (core.sshCommand,
    uploadpack.packObjectsHook, filter.<x>.smudge, remote.<x>.uploadpack, ...)?"""
    return key in PROGRAM_CONFIG_KEYS or key.rsplit(".", 1)[-1] in PROGRAM_CONFIG_NAMES or key.startswith(("pager.", "alias."))


def env_git_configs(analysis: Analysis, env: dict[str, str], scope: Scope, where: str) -> list[tuple[str, str]]:
    """Config entries from GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS
    and the files GIT_CONFIG_GLOBAL/SYSTEM/GIT_CONFIG name."""
    configs = _env_git_config(env)
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
        if name in env:
            configs.extend(config_file(analysis, env[name], scope, where))
    return configs


def read_git_configs(analysis: Analysis, configs: list[tuple[str, str]], scope: Scope, where: str) -> dict[str, str]:
    """Read the config entries git runs with (extended in place by the
    files include.path names); returns the aliases they define."""
    aliases = dict(scope.git_aliases)
    for key, value in list(configs):
        low = key.lower()
        if low == "include.path" or low.startswith("includeif."):
            configs.extend(config_file(analysis, value, scope, where))
    for key, value in configs:
        low = key.lower()
        if low.startswith("alias."):
            aliases[key[6:].lower()] = value
        elif low == "core.hookspath":
            judge_hooks_dir(analysis, value, scope, where)
        elif analysis.policy.could_push(value) or (runs_program(low) and analysis.runs_something(value, scope)):
            analysis.run_script(value, without_config(scope, key, value), "", f"{where} > git config {key}")
    return aliases


def without_config(scope: Scope, key: str, value: str) -> Scope:
    """A fork of the scope without one config entry: the command a value
    stands for is judged once, not again by every git call inside it."""
    inner = scope.fork()
    inner.git_configs = [entry for entry in inner.git_configs if entry != (key, value)]
    return inner


def resolve_git_alias(analysis: Analysis, sub: str, args: list[str], aliases: dict[str, str], scope: Scope, where: str) -> tuple[str, list[str]] | None:
    """The subcommand and arguments a git alias stands for; None when the
    alias was judged here (a `!` shell alias) or cannot be known."""
    for _ in range(10):
        value = alias_value(aliases, sub)
        if value is None:
            break
        analysis.note(where, f"git alias {sub} = {show(value)}")
        if UNKNOWN in value:
            analysis.not_sure(True, f"git alias `{sub}` has a value only known when the command runs", where, "fail-closed.git-alias")
            return None
        if value.startswith("!"):
            script = value[1:] + " " + " ".join(shell_quote(a) for a in args)
            analysis.run_script(script, scope.fork(), "", f"{where} > git alias {sub}")
            return None
        try:
            words = split_words(value)
        except ShellSyntaxError:
            analysis.not_sure(True, f"git alias `{sub}` cannot be read", where, "fail-closed.git-alias")
            return None
        if not words:
            return None
        sub, args = words[0], words[1:] + args
    return sub, args


def config_file(analysis: Analysis, path: str, scope: Scope, where: str) -> list[tuple[str, str]]:
    """The entries of a git config file this command wrote (include.path,
    GIT_CONFIG_GLOBAL); a file written with content the guard cannot see
    counts as an unknown alias."""
    found, content = lookup_file(scope.files, path)
    if not found:
        return []
    if content is None:
        analysis.not_sure(False, f"git reads config `{show(path)}`, written with content that cannot be seen", where, "fail-closed.written-git-file")
        return [("alias.", UNKNOWN)]
    analysis.note(where, f"git reads config {show(path)}, written earlier in this command")
    return _config_entries(content)


def judge_hooks_dir(analysis: Analysis, directory: str, scope: Scope, where: str) -> None:
    """core.hooksPath at a directory: the hooks written there run on commit, merge, ..."""
    prefix = file_key(directory).rstrip("/") + "/"
    for path, content in list(scope.files.items()):
        if path.startswith(prefix) or (UNKNOWN in prefix and "/" + path.rsplit("/", 1)[-1] in path):
            if content is None:
                analysis.not_sure(False, f"hook `{show(path)}` has content that cannot be seen", where, "fail-closed.written-git-file")
            else:
                inner = scope.fork()  # the hook's own git calls do not re-run the hooks
                inner.git_configs = [c for c in inner.git_configs if c[0].lower() != "core.hookspath"]
                analysis.run_script(content, inner, "", f"{where} > hook {show(path)}")


def judge_git_config(analysis: Analysis, args: list[str], argv: list[str], scope: Scope, where: str) -> None:
    positional = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value"):
            i += 2
            continue
        if arg.startswith("-"):
            if arg in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--unset", "--unset-all",
                       "--remove-section", "--rename-section", "--get-urlmatch", "-e", "--edit"):
                return
            i += 1
            continue
        positional.append(arg)
        i += 1
    if positional and positional[0] in ("set",):
        positional = positional[1:]
    elif positional and positional[0] in ("get", "list", "unset", "edit", "rename-section", "remove-section"):
        return
    if len(positional) < 2:
        return
    key, value = positional[0], positional[1]
    if key.lower().startswith("alias."):
        name = key[6:].lower()
        scope.git_aliases[name] = value
        if UNKNOWN in value:
            analysis.not_sure(True, f"git alias `{name}` is given a value only known when the command runs", where, "fail-closed.git-alias")
            return
        probe = analysis.probe()
        run_git_value(probe, value, scope.fork(), where)
        if probe.pushes():
            analysis.block(argv, f"defines git alias `{name}` that would push or merge when used", where, "git.alias-arms-push")
        return
    scope.git_configs.append((key, value))
    if key.lower() == "core.hookspath":
        judge_hooks_dir(analysis, value, scope, where)
    if key.lower() == "include.path" or key.lower().startswith("includeif."):
        for inner_key, inner_value in config_file(analysis, value, scope, where):
            if inner_key.lower().startswith("alias."):
                scope.git_aliases[inner_key[6:].lower()] = inner_value
    if analysis.policy.could_push(value):
        probe = analysis.probe()
        probe.run_script(value, without_config(scope, key, value), "", where)
        if probe.pushes():
            analysis.block(argv, f"sets git config {key} to a command that would push or merge", where, "git.config-command")


def judge_written_git_file(analysis: Analysis, path: str, content: str | None, is_hook: bool, where: str) -> None:
    """A git hook or config file written with a push in it arms a later push."""
    if content is None:
        analysis.not_sure(False, f"writes `{show(path)}` (git {'hook' if is_hook else 'config'}) with content that cannot be seen", where, "fail-closed.written-git-file")
        return
    if not analysis.policy.could_push(content):
        return
    probe = analysis.probe()
    if is_hook:
        probe.run_script(content, Scope(), "", where)
    else:
        for line in content.splitlines():
            key, eq, value = line.partition("=")
            if eq:
                value = value.strip().strip('"')
                if run_git_value(probe, value, Scope(), where):
                    # a config value may also be a command some other key runs
                    probe.run_script(value, Scope(), "", where)
    if probe.pushes():
        analysis.block(["write", path], f"writes a git {'hook' if is_hook else 'config'} that would push or merge later", where, "git.hook-or-config-write")


def run_git_value(analysis: Analysis, value: str, scope: Scope, where: str) -> bool:
    """Judge a git alias or config value as git runs it: `!cmd` in a
    shell, anything else as git arguments. True when it ran as arguments."""
    if value.startswith("!"):
        analysis.run_script(value[1:], scope, "", where)
        return False
    try:
        words = split_words(value)
    except ShellSyntaxError:
        words = [UNKNOWN]
    if words:
        run_git(analysis, ["git"] + words, {}, scope, where)
    return bool(words)


def _config_entries(text: str) -> list[tuple[str, str]]:
    """key = value entries of a git config file, as section.key (subsections dropped)."""
    entries = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].split()[0].strip('"').lower() if line[1:].split("]", 1)[0].split() else ""
            continue
        key, eq, value = line.partition("=")
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] == '"':
            value = value[1:-1]
        entries.append((f"{section}.{key.strip()}" if section else key.strip(), value if eq else "true"))
    return entries


def _env_git_config(env: dict[str, str]) -> list[tuple[str, str]]:
    """-c pairs passed through GIT_CONFIG_COUNT/KEY_n/VALUE_n and GIT_CONFIG_PARAMETERS."""
    pairs = []
    count = env.get("GIT_CONFIG_COUNT", "")
    if count.isdigit():
        for k in range(min(int(count), 64)):
            key = env.get(f"GIT_CONFIG_KEY_{k}")
            if key is not None:
                pairs.append((key, env.get(f"GIT_CONFIG_VALUE_{k}", "")))
    elif UNKNOWN in count:
        pairs.append(("alias.", UNKNOWN))
    parameters = env.get("GIT_CONFIG_PARAMETERS")
    if parameters:
        try:
            words = split_words(parameters)
        except ShellSyntaxError:
            words = []
        for word in words:
            pairs.append(split_config(word))
    return pairs
