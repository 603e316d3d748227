"""Claude Code runs matching hooks in parallel and sessions share a repo:
8 processes recording reads for one session at once lose nothing."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

from tests.conftest import RALPH, load_payload, run_hook, hook_state_dir

WRITERS = 8
READS_EACH = 25


def test_parallel_reads_lose_nothing(repo: str) -> None:
    paths = []
    for i in range(WRITERS * READS_EACH):
        path = os.path.join(repo, f"f{i:03d}.txt")
        with open(path, "w") as f:
            f.write(f"{i}\n")
        paths.append(path)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    script = (
        "import json, subprocess, sys\n"
        "ralph, payload_text, *paths = sys.argv[1:]\n"
        "for p in paths:\n"
        "    payload = json.loads(payload_text)\n"
        "    payload['tool_input']['file_path'] = p\n"
        "    payload['tool_response']['file']['filePath'] = p\n"
        "    out = subprocess.run([ralph, 'post-tool'], input=json.dumps(payload).encode(), capture_output=True)\n"
        "    assert out.returncode == 0 and json.loads(out.stdout) == {}, out\n"
    )
    base = json.dumps(load_payload("PostToolUse_Read", repo))
    workers = [
        subprocess.Popen([sys.executable, "-c", script, RALPH, base, *paths[w::WRITERS]], cwd=repo, env=env)
        for w in range(WRITERS)
    ]
    assert all(p.wait(timeout=300) == 0 for p in workers)
    (reads_log,) = glob.glob(os.path.join(hook_state_dir(repo), "sessions", "*", "reads.log"))
    with open(reads_log) as f:
        lines = f.read().splitlines()
    assert len(lines) == len(paths)
    recorded = {json.loads(line.split(" ", 4)[4]) for line in lines}  # time dev ino ctime path
    assert recorded == set(paths)
    for path in (paths[0], paths[-1], paths[len(paths) // 2]):
        edit = load_payload("PreToolUse_Edit", repo)
        edit["tool_input"]["file_path"] = path
        assert not run_hook("pre-tool", edit, repo).denied
