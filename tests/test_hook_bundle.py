"""ralph.hook_bundle: hook calls of a pip-installed ralph load its modules
from one bundle file, which follows every change of a source file, and
whose absence, damage or unwritability only means the usual imports."""
import json
import os
import subprocess
import sys

from .conftest import load_payload
from .test_launcher import make_venv

TAG = sys.implementation.cache_tag
# ralph.hook_bundle loaded as bin/ralph loads it, then: which loader served
# the package and the guard, whether the guard's code names its own file, the
# guard's line for judge_command, whether that function lacks its docstring
# and annotations (bundled code has none), and a mark a test may append to guard.py
PROBE = """import sys
spec = sys.modules["_frozen_importlib_external"].spec_from_file_location("ralph.hook_bundle", sys.argv[1] + "/ralph/hook_bundle.py")
bundle = sys.modules["_frozen_importlib"].module_from_spec(spec)
spec.loader.exec_module(bundle)
sys.modules["ralph.hook_bundle"] = bundle
sys.path.append(sys.argv[1])
bundle.serve("pre-tool")
import ralph.rules.guard as g
code = g.judge_command.__code__
print(type(sys.modules["ralph"].__loader__).__name__, type(g.__loader__).__name__, g.__file__ == code.co_filename,
      code.co_firstlineno, g.judge_command.__doc__ is None and not g.judge_command.__annotations__, getattr(g, "PROBE_MARK", "-"))
"""


class Installed:
    def __init__(self, root: str, repo: str) -> None:
        self.python, self.ralph = make_venv(root, editable=False)
        self.site = os.path.join(root, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages")
        self.bundle = os.path.join(self.site, "ralph", "__pycache__", f"hook-bundle.pre-tool.{TAG}.bin")
        self.repo = repo
        self.env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RALPH_CONFIG", "RALPH_STATE_DIR")}

    def pre_tool(self, command: str, payload_name: str = "PreToolUse_Bash") -> str:
        """The permission decision of one PreToolUse call ('' = allowed)."""
        payload = load_payload(payload_name, self.repo)
        if payload_name == "PreToolUse_Bash":
            payload["tool_input"] = {"command": command}
        done = subprocess.run([self.python, "-IS", self.ralph, "pre-tool"], input=json.dumps(payload), capture_output=True,
                              text=True, cwd=self.repo, env=self.env, timeout=60)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return json.loads(done.stdout).get("hookSpecificOutput", {}).get("permissionDecision", "")

    def probe(self) -> list[str]:
        """[loader of ralph, loader of ralph.rules.guard, its code names its file, its mark]"""
        done = subprocess.run([self.python, "-IS", "-c", PROBE, self.site], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        ralph_loader, guard_loader, names_file, line, stripped, mark = done.stdout.split()
        with open(os.path.join(self.site, "ralph", "rules", "guard.py"), encoding="utf-8") as f:
            assert int(line) == next(n for n, text in enumerate(f, 1) if text.startswith("def judge_command("))  # tracebacks stay true
        # docstrings and signature annotations are left out of the bundle, and only there
        assert stripped == str(guard_loader == "BundleFinder")
        return [ralph_loader, guard_loader, names_file, mark]


def test_calls_write_the_bundle_then_load_from_it(tmp_path, repo: str) -> None:
    ralph = Installed(str(tmp_path / "venv"), repo)
    assert not os.path.exists(ralph.bundle)
    assert ralph.pre_tool("git status && git push origin main") == "deny"
    assert os.path.isfile(ralph.bundle)
    assert ralph.probe() == ["BundleFinder", "BundleFinder", "True", "-"]
    assert ralph.pre_tool("git push origin main") == "deny"
    assert ralph.pre_tool("git status") == ""
    # a call that imported nothing new leaves the bundle as it was
    written = os.stat(ralph.bundle).st_mtime_ns
    assert ralph.pre_tool("git log -1") == "" and os.stat(ralph.bundle).st_mtime_ns == written


def test_a_changed_source_is_imported_as_it_is_now(tmp_path, repo: str) -> None:
    ralph = Installed(str(tmp_path / "venv"), repo)
    assert ralph.pre_tool("git status") == ""
    guard = os.path.join(ralph.site, "ralph", "rules", "guard.py")
    with open(guard, "a", encoding="utf-8") as f:
        f.write("\nPROBE_MARK = 'changed'\n")
    assert ralph.probe() == ["BundleFinder", "SourceFileLoader", "True", "changed"]  # the stale bundled code is not used
    assert ralph.pre_tool("git push") == "deny"  # ...and this call wrote the bundle again
    assert ralph.probe() == ["BundleFinder", "BundleFinder", "True", "changed"]


def test_a_damaged_or_unwritable_bundle_means_the_usual_imports(tmp_path, repo: str) -> None:
    ralph = Installed(str(tmp_path / "venv"), repo)
    assert ralph.pre_tool("git status") == ""
    with open(ralph.bundle, "r+b") as f:
        data = f.read()
        f.seek(0)
        f.write(data[:4] + bytes(len(data) // 2))  # the index's length, then zeros
        f.truncate()
    assert ralph.probe() == ["SourceFileLoader", "SourceFileLoader", "True", "-"]
    assert ralph.pre_tool("git push origin main") == "deny"
    assert ralph.probe() == ["BundleFinder", "BundleFinder", "True", "-"]  # written whole again
    os.unlink(ralph.bundle)
    os.mkdir(ralph.bundle)  # cannot be read or replaced
    assert ralph.pre_tool("git push origin main") == "deny"
    assert ralph.pre_tool("npm test") == ""
    assert ralph.probe() == ["SourceFileLoader", "SourceFileLoader", "True", "-"]
    assert not [name for name in os.listdir(os.path.dirname(ralph.bundle)) if name.endswith(".tmp")]


def test_calls_that_import_different_modules_share_one_bundle(tmp_path, repo: str) -> None:
    # an Edit and a Bash call import different modules; the bundle keeps both
    # (unchanged ones), instead of being rewritten by every other call
    ralph = Installed(str(tmp_path / "venv"), repo)
    assert ralph.pre_tool("git status") == ""
    assert ralph.pre_tool("", "PreToolUse_Edit") == "deny"  # an edit of a file never read
    written = os.stat(ralph.bundle).st_mtime_ns
    for _ in range(2):
        assert ralph.pre_tool("git status") == ""
        assert ralph.pre_tool("", "PreToolUse_Edit") == "deny"
    assert os.stat(ralph.bundle).st_mtime_ns == written


def test_a_bundle_with_nonsense_inside_means_the_usual_imports(tmp_path, repo: str) -> None:
    # well-formed marshal data that is not what ralph writes: entries whose
    # "bytecode" is no code object, offsets and lengths past any file
    import marshal

    ralph = Installed(str(tmp_path / "venv"), repo)
    assert ralph.pre_tool("git status") == ""
    guard = os.path.join(ralph.site, "ralph", "rules", "guard.py")
    hook = os.path.join(ralph.site, "ralph", "hook.py")
    stamp = lambda path: (os.stat(path).st_mtime_ns, os.stat(path).st_size)  # noqa: E731
    blob = marshal.dumps(12345)
    index = {"ralph.rules.guard": (guard, False, stamp(guard), 0, len(blob)), "ralph.hook": (hook, False, stamp(hook), 1 << 40, 1 << 30)}
    head = marshal.dumps((1, index))
    with open(ralph.bundle, "wb") as f:
        f.write(len(head).to_bytes(4, "little") + head)
    assert ralph.pre_tool("git push origin main") == "deny"
    with open(ralph.bundle, "wb") as f:
        f.write((1 << 31).to_bytes(4, "little") + head)  # an index length no file has
    assert ralph.pre_tool("git push origin main") == "deny"
    assert ralph.probe() == ["BundleFinder", "BundleFinder", "True", "-"]  # and a sound one was written


def test_bundled_code_answers_as_the_usual_imports_do(tmp_path, repo: str) -> None:
    # The rest of the suite runs hooks from the editable checkout (no bundle):
    # here each real payload, and variants reaching the guard's rarer layers
    # and the test verdict, go through a pip-style install twice (the first
    # call writes its subcommand's bundle, the second runs from it); both
    # answers and log lines must be the checkout's.
    from .conftest import HOOK_INPUTS, RALPH, git

    ralph = Installed(str(tmp_path / "venv"), repo)
    subcommands = {"PreToolUse": "pre-tool", "PostToolUse": "post-tool", "PostToolUseFailure": "post-tool-failure",
                   "UserPromptSubmit": "prompt", "Stop": "stop"}
    payloads = {name[:-len(".json")]: load_payload(name[:-len(".json")], repo) for name in sorted(os.listdir(HOOK_INPUTS)) if name.endswith(".json")}
    assert len(payloads) >= 20
    bash = payloads["PreToolUse_Bash"]
    for command in ("git push origin main", "g=git; $g -c alias.p=push p", "bash -c 'git merge topic'", "gh pr merge 1"):
        payloads[command] = bash | {"tool_input": {"command": command}}
    outcomes = os.path.join(os.path.dirname(__file__), "fixtures", "test_outcome")
    for category in ("true_fail", "masked_fail", "true_pass"):
        with open(os.path.join(outcomes, category, sorted(os.listdir(os.path.join(outcomes, category)))[0]), encoding="utf-8") as f:
            run = json.load(f)
        if str(run["exit_code"]) == "0":
            payload = payloads["PostToolUse_Bash"] | {"tool_response": payloads["PostToolUse_Bash"]["tool_response"] | {"stdout": run["output"]}}
        else:
            payload = payloads["PostToolUseFailure_Bash_exit3"] | {"error": f"Exit code {run['exit_code']}\n{run['output']}"}
        payloads[category] = payload | {"tool_input": {"command": run["command"]}}
    decisions = set()
    for name, payload in payloads.items():
        subcommand = subcommands.get(payload["hook_event_name"], "hook")
        answers = []
        for command in ([ralph.python, "-IS", ralph.ralph, subcommand], [ralph.python, "-IS", ralph.ralph, subcommand], [RALPH, subcommand]):
            git(repo, "reset", "-q", "--hard")
            git(repo, "clean", "-qfdx")  # each call starts from the same repository, state and logs included
            done = subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True, cwd=repo, env=ralph.env, timeout=60)
            assert done.returncode == 0 and done.stderr == "", (name, done.stderr)
            with open(os.path.join(repo, ".ralph", "logs", "hooks.jsonl"), encoding="utf-8") as f:
                logged = [{key: value for key, value in json.loads(line).items() if key not in ("t", "ms")} for line in f]
            answers.append((json.loads(done.stdout), logged))
        assert answers[0] == answers[1] == answers[2], name
        decisions.update(entry["decision"] for entry in answers[0][1])
    assert {"allow", "deny", "context"} <= decisions, decisions  # the variants reach more than `{}`
    bundles = sorted(name for name in os.listdir(os.path.dirname(ralph.bundle)) if name.startswith("hook-bundle."))
    assert bundles == sorted(f"hook-bundle.{sub}.{TAG}.bin" for sub in {*subcommands.values(), "hook"}), bundles
