"""[hooks]: the lifecycle hooks' settings, the keys every [[hooks.<point>]]
table has, each action type's own keys (shell, webhook, spawn), and
[[hooks.event]], users' commands on Claude Code events.

The owners check what these keys alone cannot say: ralph.loop.lifecycle.config
reads [hooks] (its settings beside the tables of each point) and each action
type's module checks its own table; ralph.claude.event_command_select checks
[[hooks.event]], with the "pattern" kind of `match`. So ralph.config.reading
does not read [hooks] key by key: its owner does.
"""
from ralph.config.schema import Key, Table

ON_FAILURE = ("continue", "abort", "retry")
DIR_ON_FAILURE = ("continue", "abort")

# the keys every action type shares
COMMON_KEYS: dict[str, Key] = {
    # one of the action types (ralph.loop.lifecycle.actions): checked at load time
    "type": Key("shell", "str", None, "the action type: shell (runs command), webhook or spawn"),
    "name": Key(None, "str?", None, "shown in traces and prompts; RALPH_HOOK_<NAME>_ENABLED=false disables the hook"),
    "description": Key(None, "str?", None, "for people (ralph hooks list)"),
    "enabled": Key(True, "bool", None, "false keeps the hook listed but never runs it"),
    "when": Key(None, "str?", None, "a condition: the hook runs only when it is true"),
    "await": Key(True, "bool", None, "false: fire and forget; the loop does not wait"),
    "timeout": Key(30, "number", 0.001, "seconds; at the timeout the hook's process group is killed and it counts as failed"),
    "on_failure": Key("continue", "choice:" + "|".join(ON_FAILURE), None,
                      "continue (log it), abort (end the loop: hook_abort) or retry"),
    "retries": Key(3, "int", 0, 'extra attempts with on_failure = "retry"'),
    "retry_delay": Key(5, "number", 0, "seconds between attempts"),
    "pipe_output": Key(False, "bool", None, "put the hook's output into the next agent prompt"),
}
# [hooks] keys that are settings, not points
SETTINGS_KEYS: dict[str, Key] = {
    "disable_global_hooks": Key(False, "bool", None, "ignore the global hooks.toml for this project"),
    "dir": Key(".ralph/hooks", "path", None, "the hooks directory"),
    "dir_timeout": Key(30, "number", 0.001, "timeout in seconds for each hooks-directory executable ($RALPH_HOOK_TIMEOUT overrides it)"),
    "dir_on_failure": Key("continue", "choice:" + "|".join(DIR_ON_FAILURE), None,
                          "a hooks-directory executable that fails (exit 3 or more, a timeout, cannot run, not executable): "
                          "continue (warn) or abort (end the loop: hook_abort); $RALPH_HOOK_FAIL_BEHAVIOR overrides it"),
}

# a shell hook (`type = "shell"`, the default): ralph.loop.lifecycle.shell_config
SHELL_KEYS: dict[str, Key] = {
    "command": Key(None, "command", None, "required: a string runs with /bin/sh -c, a list runs as is"),
    "working_dir": Key(None, "path?", None, "relative to the project root (default: the project root)"),
    "env": Key({}, "table", None, "extra environment variables (strings; template variables allowed)"),
}

# a webhook hook: ralph.loop.lifecycle.webhook_config
METHODS = ("POST", "PUT", "PATCH", "GET", "DELETE")
ON_TIMEOUT = ("abort", "continue")
WEBHOOK_KEYS: dict[str, Key] = {
    "url": Key(None, "str", None, "required: https:// (plain http only to a host that resolves to loopback addresses only)"),
    "method": Key("POST", "choice:" + "|".join(METHODS), None, "the HTTP method"),
    "headers": Key({}, "table", None, 'Name = "value" strings (logs show the names only)'),
    "body": Key(None, "table?", None, "a table sent as JSON (default: the hook context)"),
    "await": Key(False, "bool", None, "wait for a person's answer through ${CALLBACK_URL} (an approval gate)"),
    "timeout": Key(3600, "number", 0.001, "seconds to wait for the answer"),
    "on_timeout": Key("abort", "choice:" + "|".join(ON_TIMEOUT), None, "abort ends the loop (hook_abort); continue goes on"),
    "callback_port": Key(0, "int", 0, "port on 127.0.0.1 for the callback server; 0 picks a free one"),
    "send_timeout": Key(10, "number", 0.001, "seconds per send attempt"),
    "retries": Key(3, "int", 0, "more send attempts after a connection error, a timeout, 429 or 5xx"),
    "backoff": Key(1.0, "number", 0, "seconds before the first retry; doubles each time"),
}

# a spawn hook: ralph.loop.lifecycle.spawn_config
SPAWN_KEYS: dict[str, Key] = {
    "pipeline": Key(None, "str", None, "required: a folder in .ralph/pipelines/"),
    "inputs": Key({}, "table", None, "written to the child's inputs.json, variables substituted"),
    "env": Key({}, "table", None, 'what the child may know besides the basics: NAME = "value" strings'),
    "await": Key(True, "bool", None, "wait for the child; false: run it in the background"),
    "timeout": Key(3600, "number", 0.001, "seconds; the child's process group is killed then"),
    "max_depth": Key(3, "int", 1, "children of children stop here"),
}

# [[hooks.event]]: ralph.claude.event_command_select
EVENT_KEYS: dict[str, Key] = {
    "match": Key(None, "pattern", None, 'events to run on: "PreToolUse:Bash", an alias, a glob (*) or a comma list'),
    "command": Key(None, "command", None, "required: a string runs with /bin/sh -c, a list runs as is"),
    "working_dir": Key(None, "path?", None, "relative to the project root (default: the project root)"),
    "timeout": Key(10, "number", 0.1, "seconds; its process group is killed then"),
    "env": Key({}, "env", None, 'extra environment variables: NAME = "value"'),
    "enabled": Key(True, "bool", None, "false keeps the hook but never runs it"),
    "description": Key("", "text?", None, "for people: its name in logs and messages"),
    "pipe_output": Key(False, "bool", None, "send its output to the model where the event carries additionalContext"),
}

POINT_TABLE = Table("hooks.<point>", COMMON_KEYS, "one lifecycle hook at a point (session_start, pre_iteration, ...), "
                    "whatever its type; the type's own keys are declared with it", array=True)
SHELL_TABLE = Table("hooks.<point>", SHELL_KEYS, "a shell hook: runs command", array=True, variant='type = "shell"')
WEBHOOK_TABLE = Table("hooks.<point>", WEBHOOK_KEYS, "a webhook hook: one HTTP request, and with await = true an approval gate",
                      array=True, variant='type = "webhook"')
SPAWN_TABLE = Table("hooks.<point>", SPAWN_KEYS, "a spawn hook: runs a child ralph-loop on a pipeline", array=True, variant='type = "spawn"')
EVENT_TABLE = Table("hooks.event", EVENT_KEYS, "your own commands on Claude Code events (ralph's own rule answers first)",
                    array=True, kinds=("pattern",))
HOOKS_TABLE = Table(
    "hooks", SETTINGS_KEYS, "lifecycle hooks: the settings, and the hooks at each point as [[hooks.<point>]] tables",
    parts=(POINT_TABLE, SHELL_TABLE, WEBHOOK_TABLE, SPAWN_TABLE, EVENT_TABLE),
)
