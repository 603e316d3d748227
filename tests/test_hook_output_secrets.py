"""Lifecycle hook output never leaves ralph with a secret in it: not in the
pipe_output buffer (.ralph/hook_output.json), not in the next prompt, not on
the terminal (`ralph-loop | tee log` keeps what is printed). Real ralph-loop
runs with a hook that prints tokens; tests/fake_agent.py as the agent."""
from __future__ import annotations

import json
import os

from tests.loop_support import Project

GITHUB = "ghp_PLANTEDgh0123456789abcdefghijklmnopqrs"
ENV_VALUE = "s3cretPLANTEDdeployvalue42"
PLAN2 = "# Plan\n\n- [ ] US-001: Add greeting\n- [ ] US-002: Add farewell\n"
CONFIG = f"""[[hooks.post_iteration]]
name = "lint with {GITHUB}"
command = "echo 'lint found token {GITHUB}'; echo \\"deploy key: $DEPLOY_TOKEN\\"; echo 'failing check' >&2; exit 3"
pipe_output = true
"""


def test_hook_output_is_redacted_in_the_buffer_the_prompt_and_on_the_terminal(tmp_path) -> None:
    p = Project(tmp_path, PLAN2, config=CONFIG)
    p.script(default=[{"append": "work.txt", "text": "step\n"}, {"mark": "done"}])
    result = p.run_loop("--once", env={"DEPLOY_TOKEN": ENV_VALUE})
    assert result.returncode == 3, result.stdout + result.stderr
    buffer = os.path.join(p.root, ".ralph", "hook_output.json")
    with open(buffer, encoding="utf-8") as f:
        kept = f.read()
    [entry] = json.loads(kept)["entries"]
    assert "lint found token [REDACTED:" in entry["text"] and "deploy key: [REDACTED:env]" in entry["text"]
    assert entry["label"].startswith("lint with [REDACTED:")
    printed = result.stdout + result.stderr
    assert "lint found token [REDACTED:" in printed  # the output is shown, redacted
    for secret in (GITHUB, ENV_VALUE):
        assert secret not in kept and secret not in printed
    # the next iteration's prompt gets the buffer, redacted
    result = p.run_loop("--once", env={"DEPLOY_TOKEN": ENV_VALUE})
    prompt = p.prompt(p.invocations())
    assert "lint found token [REDACTED:" in prompt and GITHUB not in prompt and ENV_VALUE not in prompt
