"""ralph.sandbox: the settings layer built from real git repos, the [sandbox]
config, merging with a user's settings, and the bubblewrap probe."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.sandbox_support import sandbox_available  # noqa: F401 - fixture

from ralph.config.reading import parse_config
from ralph.config.schema import ConfigError
from ralph.sandbox import (CREDENTIAL_PATHS, FORGE_DOMAINS, LOOPBACK_HOSTS, merge_settings, own_names_and_addresses, probe, public_tlds,
                           sandbox_config, settings_layer, url_host)


def git(cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x")
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "first")
    return root


def test_layer_turns_the_sandbox_on_and_refuses_unsandboxed_commands(repo):
    layer = settings_layer(str(repo), {})
    assert list(layer) == ["sandbox", "permissions"]
    sandbox = layer["sandbox"]
    assert sandbox["enabled"] is True
    assert sandbox["failIfUnavailable"] is True
    assert sandbox["allowUnsandboxedCommands"] is False
    git_dir = os.path.realpath(repo / ".git")
    assert sandbox["filesystem"]["denyWrite"] == [f"{git_dir}/hooks", f"{git_dir}/config"]
    assert sandbox["filesystem"]["denyRead"] == list(CREDENTIAL_PATHS)
    for path in ("~/.ssh", "~/.git-credentials", "~/.netrc", "~/.config/gh", "~/.config/glab-cli", "~/.aws"):
        assert path in sandbox["filesystem"]["denyRead"]
    denied = sandbox["network"]["deniedDomains"]
    assert denied == [*FORGE_DOMAINS, *LOOPBACK_HOSTS, *own_names_and_addresses()]
    # every public DNS name is allowed, nothing else: IP literals (any 127.x, 0.0.0.0, [::],
    # this machine's addresses) and single-label names are not on the list
    allowed = sandbox["network"]["allowedDomains"]
    assert sandbox["network"]["strictAllowlist"] is True
    assert allowed == [f"*.{tld}" for tld in public_tlds()] and {"*.com", "*.org", "*.io", "*.dev"} <= set(allowed)
    assert all(a.startswith("*.") and not a[2:].replace(".", "").isdigit() for a in allowed)
    assert "*.localhost" not in allowed and "*.local" not in allowed


def test_public_tlds_come_from_the_public_suffix_list():
    tlds = public_tlds()
    assert len(tlds) > 1000 and tlds == sorted(set(tlds))
    assert all(t.isascii() and t == t.lower() and "." not in t for t in tlds)
    assert {"com", "net", "org", "uk", "de", "xn--p1ai"} <= set(tlds) and "localhost" not in tlds


def test_this_machines_names_and_addresses_are_denied():
    import socket

    found = own_names_and_addresses()
    assert socket.gethostname().lower() in found
    assert not set(found) & {"127.0.0.1", "[::1]", "localhost"}  # those are in LOOPBACK_HOSTS already
    assert all(not (":" in a and not a.startswith("[")) for a in found), found  # IPv6 bracketed, as the client takes it


def test_extra_allowed_hosts_join_the_default_allow_list(repo):
    config = parse_config('[sandbox]\nextra_allowed_domains = ["10.1.2.3", "registry.lan", "0.0.0.0"]\n', "ralph.toml")
    network = settings_layer(str(repo), config)["sandbox"]["network"]
    assert network["allowedDomains"][-3:] == ["10.1.2.3", "registry.lan", "0.0.0.0"]
    assert "*.com" in network["allowedDomains"] and network["strictAllowlist"] is True
    assert "0.0.0.0" not in network["deniedDomains"]  # listed by the user: the deny-list does not undo it


def test_every_remote_denied_local_paths_read_only_and_hosts_unreachable(repo, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    git(repo, "remote", "add", "origin", "../bare.git")  # relative to the work tree
    git(repo, "remote", "add", "mirror", f"file://{other}")
    git(repo, "remote", "add", "gh", "git@github.com:me/app.git")
    git(repo, "remote", "add", "corp", "https://user@git.corp.example:8443/team/app.git")
    git(repo, "remote", "set-url", "--add", "--push", "corp", "ssh://git@push.corp.example:2222/team/app.git")
    git(repo, "config", "url.ssh://rewritten.example/.pushInsteadOf", "https://user@git.corp.example:8443/")
    layer = settings_layer(str(repo), {})["sandbox"]
    deny_write = layer["filesystem"]["denyWrite"]
    assert os.path.realpath(bare) in deny_write
    assert os.path.realpath(other) in deny_write
    denied = layer["network"]["deniedDomains"]
    for host in ("github.com", "git.corp.example", "push.corp.example"):
        assert host in denied
    assert not any(":" in h and not h.startswith("[") for h in denied), denied  # no ports: every port of the host


def test_worktree_and_core_hooks_path_protect_the_directories_git_really_uses(repo, tmp_path):
    hooks = repo / "tools" / "hooks"
    hooks.mkdir(parents=True)
    git(repo, "config", "core.hooksPath", "tools/hooks")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    layer = settings_layer(str(worktree), {})["sandbox"]
    deny_write = layer["filesystem"]["denyWrite"]
    common = os.path.realpath(repo / ".git")
    assert f"{common}/config" in deny_write  # shared by every worktree
    # git resolves a relative core.hooksPath in the work tree it runs in
    assert os.path.realpath(worktree / "tools" / "hooks") in deny_write
    assert f"{common}/hooks" not in deny_write


def test_allow_list_is_strict_and_keeps_the_remotes_hosts_denied(repo):
    git(repo, "remote", "add", "origin", "https://github.com/me/app.git")
    config = parse_config('[sandbox]\nallowed_domains = ["pypi.org", "files.pythonhosted.org", "github.com"]\n', "ralph.toml")
    network = settings_layer(str(repo), config)["sandbox"]["network"]
    assert network["allowedDomains"] == ["pypi.org", "files.pythonhosted.org", "github.com"]
    assert network["strictAllowlist"] is True  # measured: allowedDomains alone restricts nothing
    assert "github.com" in network["deniedDomains"]  # the remote's host: where a push would land
    assert "gitlab.com" in network["deniedDomains"] and "localhost" in network["deniedDomains"]


def test_extra_paths_and_hosts_from_the_config(repo):
    config = parse_config('[sandbox]\ndeny_write = ["secrets", "/opt/shared"]\ndeny_read = ["~/.config/tokens"]\n'
                          'denied_domains = ["registry.corp.example:8080"]\nfail_if_unavailable = false\n', "ralph.toml")
    sandbox = settings_layer(str(repo), config)["sandbox"]
    assert str(repo / "secrets") in sandbox["filesystem"]["denyWrite"]
    assert "/opt/shared" in sandbox["filesystem"]["denyWrite"]
    assert sandbox["filesystem"]["denyRead"][-1] == "~/.config/tokens"
    assert sandbox["network"]["deniedDomains"][-1] == "registry.corp.example:8080"
    assert sandbox["failIfUnavailable"] is False


@pytest.mark.parametrize("text, where, words", [
    ("[sandbox]\nenabld = true\n", ":2:", "[sandbox] enabld: unknown key; known keys:"),
    ("[loop]\nmax_iterations = 2\n\n[sandbox]\nenabled = \"yes\"\n", ":5:", "[sandbox] enabled: must be true or false"),
    ("[sandbox]\n\ndenied_domains = \"github.com\"\n", ":3:", "[sandbox] denied_domains: must be a list of non-empty strings"),
    ("[sandbox]\nallowed_domains = [\"https://pypi.org/simple\"]\n", ":2:", "is not a host; write a name"),
    ("sandbox = 3\n", "ralph.toml", "[sandbox] must be a table"),
])
def test_config_errors_name_file_line_key_and_fix(tmp_path, text, where, words):
    path = tmp_path / "ralph.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        sandbox_config(parse_config(text, str(path)), str(path))
    assert where in str(e.value) and words in str(e.value), str(e.value)


def test_defaults_in_one_table():
    values = sandbox_config({})
    assert values == {"enabled": True, "fail_if_unavailable": True, "verify": True, "allowed_domains": None,
                      "extra_allowed_domains": [], "denied_domains": [], "deny_write": [], "deny_read": []}


@pytest.mark.parametrize("url, host", [
    ("https://github.com/me/app.git", "github.com"),
    ("https://tok@GitHub.com:443/me/app", "github.com"),
    ("ssh://git@host.example:2222/x.git", "host.example"),
    ("git@gitlab.com:me/app.git", "gitlab.com"),
    ("git://127.0.0.1:9418/app.git", "127.0.0.1"),
    ("http://[::1]:8080/app.git", "[::1]"),
    ("/srv/git/app.git", None),
    ("../app.git", None),
    ("file:///srv/git/app.git", None),
    ("./dir:with/colon", None),
])
def test_url_host(url, host):
    assert url_host(url) == host


def test_merge_keeps_the_users_hooks_and_lists_and_the_layer_wins_scalars():
    user = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ralph pre-tool"}]}]},
            "sandbox": {"enabled": False, "filesystem": {"denyWrite": ["/mine"]}, "network": {"allowedDomains": ["a.example"]}},
            "model": "x"}
    layer = {"sandbox": {"enabled": True, "filesystem": {"denyWrite": ["/mine", "/repo/.git/hooks"]}}}
    merged = merge_settings(user, layer)
    assert merged["hooks"] == user["hooks"] and merged["model"] == "x"
    assert merged["sandbox"]["enabled"] is True
    assert merged["sandbox"]["filesystem"]["denyWrite"] == ["/mine", "/repo/.git/hooks"]
    assert merged["sandbox"]["network"] == {"allowedDomains": ["a.example"]}
    assert user["sandbox"]["enabled"] is False  # the input is not modified


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")
def test_probe_without_bubblewrap_says_how_to_install_it(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    ok, message = probe(path=str(empty))
    assert not ok
    assert "bubblewrap (bwrap) and socat not installed" in message and "apt-get install bubblewrap socat" in message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")
def test_probe_with_a_broken_bwrap_fails_with_the_reason(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    ok, message = probe(bwrap=str(fake), socat="/bin/true")
    assert not ok and "No permissions to creating new namespace" in message


def test_probe_on_this_machine(sandbox_available):
    ok, message = probe()
    assert ok, message


def run_ralph(cwd, *args):
    from tests.conftest import RALPH

    return subprocess.run([RALPH, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_sandbox_print_is_the_layer_as_json(repo, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    done = run_ralph(repo, "sandbox", "print")
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout) == settings_layer(str(repo), {})


def test_sandbox_explain_gives_a_reason_for_every_entry(repo, tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "remote", "add", "up", "https://git.corp.example/x.git")
    done = run_ralph(repo, "sandbox", "explain")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"{os.path.realpath(bare)}\n      local-path remote origin: writing into it is a push" in out
    assert "git.corp.example\n      host of remote up: where a push would land" in out
    assert "~/.cargo/credentials.toml\n      credentials a push" in out
    assert "On this machine: the sandbox" in out


def test_sandbox_commands_report_a_broken_config_with_file_and_line(repo):
    (repo / "ralph.toml").write_text("[sandbox]\ndeny_write = \"x\"\n", encoding="utf-8")
    done = run_ralph(repo, "sandbox", "print")
    assert done.returncode == 2
    assert "ralph.toml:2: [sandbox] deny_write: must be a list" in done.stderr
    assert run_ralph(repo, "sandbox", "bogus").returncode == 2
