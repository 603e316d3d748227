"""[sandbox]: the second line of defence, Claude Code's Bash sandbox as
ralph configures it (ralph.sandbox builds the settings from these values)."""
from ralph.config.schema import Key, Table

SANDBOX_KEYS: dict[str, Key] = {
    "enabled": Key(True, "bool", None, "false: ralph-loop runs the agent without the sandbox layer (not recommended)"),
    "fail_if_unavailable": Key(True, "bool", None,
                               "false: when bubblewrap cannot run, the agent runs unsandboxed instead of refusing"),
    "allowed_domains": Key(None, "hosts?", None,
                           "a list: the agent may reach ONLY these hosts (strict allow-list), e.g. package registries"),
    "extra_allowed_domains": Key([], "hosts", None,
                                 "hosts added to the default allow-list of public DNS names: IP addresses of other "
                                 "machines, single-label or private names (e.g. a LAN registry)"),
    "denied_domains": Key([], "hosts", None, "more hosts the agent may not reach, on top of the forges and the remotes' hosts"),
    "verify": Key(True, "bool", None,
                  "the loop's verify command (it runs the agent's code) runs under bubblewrap too, without network"),
    "deny_write": Key([], "paths", None, "more paths Bash may not write: relative to the project, absolute, or ~/..."),
    "deny_read": Key([], "paths", None, "more paths Bash may not read: relative to the project, absolute, or ~/..."),
}
SANDBOX_TABLE = Table("sandbox", SANDBOX_KEYS, "the second line of defence: Claude Code's Bash sandbox, as ralph configures it")
