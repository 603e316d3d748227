"""The second line of defence: Claude Code's own Bash sandbox, configured by ralph.

The push/merge guard reads commands; a program it cannot read (a launcher, a
git library, a release tool) gets past it. Claude Code 2.1.330 runs every
Bash command under bubblewrap when `sandbox.enabled` is set, and there a push
fails whatever program makes it. `settings_layer()` is the settings JSON ralph
wants for an unattended agent; `probe()` asks bubblewrap, once, whether that
sandbox can run on this machine.

What 2.1.330 honours was measured through the real CLI (tests/e2e/
test_sandbox_e2e.py, README "Sandbox"):
- `filesystem.denyWrite` makes a path read-only inside Bash (`.git/hooks`,
  `.git/config`, a local bare remote: "Read-only file system"); writes
  elsewhere in the project, local commits included, still work.
- `filesystem.denyRead` hides a path (`~` is the client's HOME).
- The network is the sandbox's own: the host's loopback (a `git daemon` on
  127.0.0.1) is unreachable, everything else goes through the client's
  proxy. With permissions skipped that proxy lets EVERY host through unless
  it is in `network.deniedDomains`; `allowedDomains` alone restricts
  nothing, only with `network.strictAllowlist: true` is it an allow-list.
- The proxy normalises a host as a URL parser does (`2130706433`,
  `0x7f000001`, `127.1` and `[::ffff:127.0.0.1]` are all `127.0.0.1`) and
  matches deniedDomains exactly or as `*.domain`; a NAME is also refused when
  it resolves to loopback, the unspecified address or this machine's own
  addresses, but an IP LITERAL is checked against the lists only. So
  `0.0.0.0`, `[::]`, any 127.x.y.z other than 127.0.0.1 and the machine's
  own addresses reach its services unless the network is an allow-list: the
  default layer allows every name under a public top-level domain
  (`*.<tld>`, ralph/data/public_tlds.json) with strictAllowlist, which
  leaves out every IP literal and single-label name, and denies the loopback
  names and this machine's own names and addresses besides.
- `failIfUnavailable` with bubblewrap or socat missing: the client refuses to
  start ("sandbox required but unavailable").
- Two `--settings` flags: only the last one counts (the first file's hooks
  never fire), so a caller's own `--settings` file must be merged, not
  followed by a second flag (see `merge_settings`).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys

from ralph.config.reading import section_values
from ralph.run.git import run as run_git

# Where pushes and forge merges land. Exact names: a wildcard entry does not
# cover the bare domain, so both are listed.
FORGE_DOMAINS = (
    "github.com", "*.github.com",
    "gitlab.com", "*.gitlab.com",
    "bitbucket.org", "*.bitbucket.org",
    "codeberg.org", "*.codeberg.org",
    "gitea.com", "*.gitea.com",
    "sr.ht", "*.sr.ht",
    "dev.azure.com", "*.dev.azure.com", "ssh.dev.azure.com", "*.visualstudio.com",
    "gitee.com", "*.gitee.com",
    "launchpad.net", "*.launchpad.net",
    "source.developers.google.com",
)
# The host's own services, reached through the proxy: a local git daemon, a
# forge or registry on the machine. Every spelling the proxy does not fold
# into another (it folds decimal, hex, octal and IPv4-mapped forms into the
# dotted quad). The sandbox's loopback is its own and stays usable (tests
# that start a local server keep working).
LOOPBACK_HOSTS = ("localhost", "*.localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                  "127.0.0.1", "127.0.1.1", "0.0.0.0", "[::1]", "[::]")
PUBLIC_TLDS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "public_tlds.json")

# Credential stores: what a push or a forge merge would authenticate with.
CREDENTIAL_PATHS = (
    "~/.ssh",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.netrc",
    "~/.config/gh",
    "~/.config/glab-cli",
    "~/.config/hub",
    "~/.aws",
    "~/.config/gcloud",
    "~/.azure",
    "~/.docker/config.json",
    "~/.kube",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gem/credentials",
    "~/.cargo/credentials.toml",
)

INSTALL_HINT = (
    "install bubblewrap and socat (Debian/Ubuntu: sudo apt-get install bubblewrap socat; "
    "Fedora: sudo dnf install bubblewrap socat; Arch: sudo pacman -S bubblewrap socat)"
)
# the environment variable naming the loop's sandbox settings file in the agent's session
ENV_SETTINGS = "RALPH_SANDBOX_SETTINGS"
OPT_OUT_HINT = "or run without the sandbox: [sandbox] enabled = false in ralph.toml (not recommended)"


# ---- config ----


def sandbox_config(config: dict, path: str | None = None) -> dict:
    """The [sandbox] table of a parsed ralph.toml with every default filled in
    (lists as lists). Raises ConfigError as `<file>:<line>: [sandbox] key:
    what is wrong; how to fix` (ralph.config.reading checks it, as every table)."""
    values = section_values(config, "sandbox", path)
    return {key: list(value) if isinstance(value, (list, tuple)) else value for key, value in values.items()}


# ---- what the repository tells us ----


def _git(root: str, *args: str) -> str:
    done = run_git(root, list(args), timeout=30)
    return done.out.decode("utf-8", "replace") if done.ok else ""


def remote_urls(root: str) -> list[str]:
    """Every fetch and push URL of every remote, raw and as git rewrites them (insteadOf)."""
    return list(_remotes_by_url(root))


SCHEME_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?(\[[^\]]+\]|[^/:?#]+)")
SCP_URL = re.compile(r"^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:]+):")


def url_host(url: str) -> str | None:
    """The host of a network remote URL (`https://h/x`, `ssh://u@h:22/x`, `u@h:x`), None for a local path."""
    if url.startswith("file://"):
        return None
    m = SCHEME_URL.match(url)
    if m:
        return m.group(1).lower() or None
    if "://" in url or url.startswith(("/", ".", "~")):
        return None
    m = SCP_URL.match(url)  # git's scp-like syntax; a colon after a slash is a path
    if m and not (len(m.group(1)) == 1 and m.group(1).isalpha() and os.name == "nt"):
        return m.group(1).lower()
    return None


def url_path(root: str, url: str) -> str | None:
    """The directory a local-path remote URL names (absolute), None for a network URL."""
    if url.startswith("file://"):
        path = url[len("file://"):]
    elif url_host(url) is None and "://" not in url:
        path = url
    else:
        return None
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(root, path)
    return os.path.realpath(path)


def git_dirs(root: str) -> tuple[str, str]:
    """(common git dir, hooks dir): worktrees share the first; core.hooksPath moves the second."""
    common = _git(root, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    if not common:
        common = os.path.join(root, ".git")
    hooks = _git(root, "rev-parse", "--path-format=absolute", "--git-path", "hooks").strip() or os.path.join(common, "hooks")
    return os.path.realpath(common), os.path.realpath(hooks)


def _absolute(root: str, path: str) -> str:
    if path.startswith("~"):
        return path  # the client expands ~ to its HOME
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))


# ---- the layer ----


def settings_layer(root: str, config: dict, config_path: str | None = None) -> dict:
    """The Claude Code settings ralph wants for an unattended agent in `root`.

    `config` is the parsed ralph.toml (`ralph.config.reading.load_config(root)`; `{}`
    for the defaults); its [sandbox] table adds hosts and paths. The result
    is a settings object (`sandbox`, and `permissions.deny` for the client's
    own file tools) to merge into a settings file or pass with `--settings`. Raises ConfigError for a bad [sandbox].
    """
    return explained_layer(root, config, config_path)[0]


def explained_layer(root: str, config: dict, config_path: str | None = None) -> tuple[dict, list[tuple[str, str, str]]]:
    """settings_layer() and, for each entry, (setting, value, why)."""
    values = sandbox_config(config, config_path)
    root = os.path.realpath(root)
    common, hooks = git_dirs(root)
    why: list[tuple[str, str, str]] = [
        ("enabled", "true", "every Bash command the agent runs goes through bubblewrap: a push from any program "
                            "(a script, a git library, a release tool) meets the limits below, whatever the guard missed"),
        ("failIfUnavailable", str(bool(values["fail_if_unavailable"])).lower(),
         "the client refuses to start when the sandbox cannot run, instead of running commands unsandboxed"
         if values["fail_if_unavailable"] else "[sandbox] fail_if_unavailable = false: without bubblewrap the agent runs UNSANDBOXED"),
        ("allowUnsandboxedCommands", "false", "the model cannot ask for a command outside the sandbox "
                                               "(its dangerouslyDisableSandbox flag is ignored)"),
    ]

    deny_write: list[str] = []
    remotes = _remotes_by_url(root)
    for url, names in remotes.items():
        path = url_path(root, url)
        if path and os.path.exists(path) and path not in deny_write:
            deny_write.append(path)
            why.append(("filesystem.denyWrite", path, f"local-path remote {', '.join(names)}: writing into it is a push"))
    deny_write.append(hooks)
    why.append(("filesystem.denyWrite", hooks, "git hooks: a hook the agent wrote would run outside the sandbox when the loop commits"))
    for name in ("config", "config.worktree"):
        path = os.path.join(common, name)
        if name == "config" or os.path.exists(path):
            deny_write.append(path)
            why.append(("filesystem.denyWrite", path, "git config: core.hooksPath, aliases, remotes and url rewrites "
                                                      "that would run programs or push outside the sandbox"))
    for path in values["deny_write"]:
        deny_write.append(_absolute(root, path))
        why.append(("filesystem.denyWrite", _absolute(root, path), "[sandbox] deny_write in ralph.toml"))

    deny_read = list(CREDENTIAL_PATHS)
    why += [("filesystem.denyRead", p, "credentials a push, a forge merge or a release would authenticate with") for p in CREDENTIAL_PATHS]
    for path in values["deny_read"]:
        deny_read.append(_absolute(root, path))
        why.append(("filesystem.denyRead", _absolute(root, path), "[sandbox] deny_read in ralph.toml"))

    remote_hosts: dict[str, list[str]] = {}
    for url, names in remotes.items():
        host = url_host(url)
        if host:
            remote_hosts.setdefault(host, []).extend(n for n in names if n not in remote_hosts.get(host, []))
    allowed = values["allowed_domains"]
    extra = list(values["extra_allowed_domains"])
    listed = [*(allowed or ()), *extra]
    network: dict = {}
    denied: list[str] = []
    for host in FORGE_DOMAINS:
        if host not in listed:
            denied.append(host)
            why.append(("network.deniedDomains", host, "a forge: pushes, pull-request merges and API calls that update refs"))
    for host in [*LOOPBACK_HOSTS, *own_names_and_addresses()]:
        if host not in listed:
            denied.append(host)
            why.append(("network.deniedDomains", host, "this machine's own services through the proxy (a local git daemon, "
                                                       "forge or registry); the sandbox's own loopback stays usable"))
    for host, names in remote_hosts.items():
        denied.append(host)
        why.append(("network.deniedDomains", host, f"host of remote {', '.join(names)}: where a push would land"))
    for host in values["denied_domains"]:
        denied.append(host)
        why.append(("network.deniedDomains", host, "[sandbox] denied_domains in ralph.toml"))
    if allowed is not None:
        network["allowedDomains"] = _unique([*allowed, *extra])
        why += [("network.allowedDomains", h, "[sandbox] allowed_domains in ralph.toml: the only hosts reachable") for h in allowed]
    else:
        tlds = public_tlds()
        network["allowedDomains"] = _unique([*(f"*.{tld}" for tld in tlds), *extra])
        why.append(("network.allowedDomains", f"*.<tld> for each of {len(tlds)} public top-level domains",
                    "every DNS name stays reachable; IP literals (127.0.0.2, 0.0.0.0, [::], this machine's addresses, "
                    "in any spelling) and single-label names do not, which no deny-list of names can say"))
    why += [("network.allowedDomains", h, "[sandbox] extra_allowed_domains in ralph.toml") for h in extra]
    network["strictAllowlist"] = True
    why.append(("network.strictAllowlist", "true", "makes allowedDomains an allow-list (without it the proxy lets "
                                                    "every host through when permissions are skipped)"))
    network["deniedDomains"] = _unique(denied)

    # The edit and read tools run in the client, not in bubblewrap: measured,
    # a Write into a denyWrite path succeeds, while permission deny rules hold
    # even with permissions skipped. So the same limits again, as rules.
    rules: list[str] = []
    for path in [*_unique(deny_write), *(os.path.join(root, name) for name in CLIENT_SETTINGS_FILES)]:
        rules += permission_rules("Edit", path) + permission_rules("Write", path)
    why.append(("permissions.deny", "Edit(...) and Write(...) of every denyWrite path and of .claude/settings.json, "
                "settings.local.json", "the client's edit tools are not sandboxed; hooks in a project settings file "
                "would run outside the sandbox"))
    for path in deny_read:
        rules += permission_rules("Read", path)
    why.append(("permissions.deny", "Read(...) of every denyRead path", "the client's Read tool is not sandboxed"))

    layer = {
        "sandbox": {
            "enabled": True,
            "failIfUnavailable": bool(values["fail_if_unavailable"]),
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyWrite": _unique(deny_write), "denyRead": _unique(deny_read)},
            "network": network,
        },
        "permissions": {"deny": _unique(rules)},
    }
    return layer, why


def public_tlds() -> list[str]:
    """The public top-level domains (ralph/data/public_tlds.json, made by
    scripts/make_public_tlds.py from the Public Suffix List)."""
    with open(PUBLIC_TLDS_FILE, encoding="utf-8") as f:
        return list(json.load(f)["tlds"])


def own_names_and_addresses() -> list[str]:
    """This machine's host name and the addresses of its interfaces, as
    deniedDomains entries (IPv6 bracketed). Names resolving to them are refused
    by the client itself; literals are not, unless listed."""
    found: list[str] = []
    name = socket.gethostname().lower()  # not getfqdn(): a reverse lookup can hang where DNS is broken
    if name and not name.startswith("localhost"):
        found.append(name)
    for address in _interface_addresses():
        entry = f"[{address}]" if ":" in address else address
        if entry not in found and entry not in LOOPBACK_HOSTS:
            found.append(entry)
    return found


def _interface_addresses() -> list[str]:
    """IPv4 addresses the kernel holds as local (/proc/net/fib_trie `/32 host
    LOCAL`) and IPv6 addresses of the interfaces (/proc/net/if_inet6); the
    addresses the host name resolves to elsewhere."""
    addresses: list[str] = []
    try:
        with open("/proc/net/fib_trie", encoding="ascii", errors="replace") as f:
            last = ""
            for line in f:
                words = line.split()
                if len(words) >= 2 and words[0] in ("|--", "+--"):
                    last = words[1]
                elif "/32 host LOCAL" in line and last and last not in addresses:
                    addresses.append(last)
        with open("/proc/net/if_inet6", encoding="ascii", errors="replace") as f:
            for line in f:
                raw = line.split()[0] if line.split() else ""
                if len(raw) == 32:
                    packed = bytes.fromhex(raw)
                    text = socket.inet_ntop(socket.AF_INET6, packed)
                    if text not in addresses:
                        addresses.append(text)
    except (OSError, ValueError):
        try:
            for info in socket.getaddrinfo(socket.gethostname(), None):
                text = str(info[4][0]).split("%", 1)[0]
                if text not in addresses:
                    addresses.append(text)
        except OSError:
            pass
    return [a for a in addresses if a not in ("127.0.0.1", "::1")]


# Claude Code writes project settings here; hooks in them run outside the sandbox.
CLIENT_SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")


def permission_rules(tool: str, path: str) -> list[str]:
    """Permission rules for `tool` on `path` and everything under it
    (`//abs` is an absolute path in rule syntax, `~/` the home directory)."""
    spelled = path if path.startswith("~") else "/" + path
    return [f"{tool}({spelled})", f"{tool}({spelled}/**)"]


def _remotes_by_url(root: str) -> dict[str, list[str]]:
    """url -> remote names, for every fetch and push URL (raw and as insteadOf rewrites them)."""
    found: dict[str, list[str]] = {}

    def add(url: str, name: str) -> None:
        names = found.setdefault(url, [])
        if name not in names:
            names.append(name)

    for line in _git(root, "config", "--get-regexp", r"^remote\..*\.(url|pushurl)$").splitlines():
        key, _, url = line.partition(" ")
        if url.strip():
            add(url.strip(), key.split(".")[1] if key.count(".") >= 2 else key)
    for name in _git(root, "remote").split():
        for args in (("get-url", "--all", name), ("get-url", "--push", "--all", name)):
            for url in _git(root, "remote", *args).splitlines():
                if url.strip():
                    add(url.strip(), name)
    return found


def _unique(items: list[str] | tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(items))


def merge_settings(base: dict, layer: dict) -> dict:
    """`base` (a user's settings) with `layer` on top: tables merge, lists are
    joined without repeats, the layer's scalars win. Nothing of `base` is lost
    but the scalars the layer sets (so the user's hooks keep working)."""
    merged = dict(base)
    for key, value in layer.items():
        old = merged.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            merged[key] = merge_settings(old, value)
        elif isinstance(value, list) and isinstance(old, list):
            merged[key] = _unique_any([*old, *value])
        else:
            merged[key] = value
    return merged


def _unique_any(items: list) -> list:
    out: list = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


# ---- can it run here? ----


def probe(bwrap: str | None = None, socat: str | None = None, timeout: float = 20.0,
          path: str | None = None) -> tuple[bool, str]:
    """One real sandboxed command: (works, what was found). Checks what Claude
    Code needs on Linux: `bwrap` and `socat` on PATH, and bubblewrap able to
    build a sandbox here (new namespaces, a read-only root, no network).
    `path` replaces $PATH for finding the two programs."""
    if sys.platform == "darwin":
        return True, "macOS: Claude Code uses the system's sandbox-exec (nothing to install)"
    if not sys.platform.startswith("linux"):
        return False, f"Claude Code's Bash sandbox does not run on {sys.platform}"
    bwrap = bwrap or shutil.which("bwrap", path=path)
    socat = socat or shutil.which("socat", path=path)
    missing = [name for name, found in (("bubblewrap (bwrap)", bwrap), ("socat", socat)) if not found]
    if missing:
        return False, f"{' and '.join(missing)} not installed: {INSTALL_HINT}"
    assert bwrap is not None
    # Try a write where the sandbox must refuse it: proves the read-only bind works.
    script = "echo ralph-sandbox-ok; if touch /etc/.ralph-sandbox-probe 2>/dev/null; then echo writable; fi"
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-all", "--die-with-parent", "--new-session", "--", "/bin/sh", "-c", script]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"{bwrap} did not finish a trivial sandboxed command in {timeout:g}s"
    except OSError as e:
        return False, f"cannot run {bwrap}: {e.strerror or e}: {INSTALL_HINT}"
    out = done.stdout.decode("utf-8", "replace")
    err = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0 or "ralph-sandbox-ok" not in out:
        hint = ("user namespaces look disabled (e.g. kernel.unprivileged_userns_clone=0, or a container without "
                "them); allow them or run where they are allowed")
        return False, f"bubblewrap cannot create a sandbox here (exit {done.returncode}: {err[:300] or 'no message'}); {hint}"
    if "writable" in out:
        return False, f"{bwrap} ran, but a read-only path was writable inside it: the sandbox would not hold"
    return True, f"bubblewrap works ({bwrap}; socat {socat})"



def bwrap_prefix(layer: dict, bwrap: str = "bwrap") -> list[str]:
    """argv that runs a command under bubblewrap with the layer's file limits
    and no network: for the loop's verify command, which runs code the agent
    wrote outside the client's sandbox. The project stays writable."""
    sandbox = layer.get("sandbox", {})
    files = sandbox.get("filesystem", {})
    argv = [bwrap, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--die-with-parent"]
    for path in files.get("denyWrite", []):
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for path in files.get("denyRead", []):
        full = os.path.expanduser(path)
        if os.path.isdir(full):
            argv += ["--tmpfs", full]
        elif os.path.exists(full):
            argv += ["--ro-bind", "/dev/null", full]
    return [*argv, "--"]
