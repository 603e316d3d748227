"""Prompt redaction cases (tests/fixtures/redact/<category>/*.json): secrets
are gone from the log, ordinary prose is kept."""
from __future__ import annotations

import glob
import json
import os

import pytest

from ralph.redaction import redact
from tests.conftest import FIXTURES, load_payload, run_hook, hook_state_dir

CASES = sorted(glob.glob(os.path.join(FIXTURES, "redact", "*", "*.json")))


@pytest.mark.parametrize("path", CASES, ids=[os.path.relpath(p, os.path.join(FIXTURES, "redact")) for p in CASES])
def test_redaction_case(path: str) -> None:
    with open(path) as f:
        case = json.load(f)
    out = redact(case["text"])
    for secret in case["gone"]:
        assert secret not in out
    for text in case["kept"]:
        assert text in out
    if not case["gone"]:
        assert out == case["text"]


def test_redaction_through_the_prompt_hook(repo: str) -> None:
    payload = load_payload("UserPromptSubmit", repo)
    with open(CASES[0]) as f:
        case = json.load(f)
    payload["prompt"] = case["text"]
    run_hook("prompt", payload, repo)
    with open(os.path.join(hook_state_dir(repo), "logs", "hooks.jsonl")) as f:
        logged = json.loads(f.readlines()[-1])["prompt"]
    assert all(secret not in logged for secret in case["gone"])
