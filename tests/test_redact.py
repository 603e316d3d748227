"""Prompt redaction cases (tests/fixtures/redact/<category>/*.json): secrets
are gone from the log, ordinary prose is kept."""
from __future__ import annotations

import ast
import glob
import json
import os
import subprocess
import sys

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


# ---- the rule itself (ralph.rules.redact: pure), beyond the token formats ----

GITHUB = "ghp_" + "R2d2C3poBb8LuKeSkYwAlKeR0123456789"
NUMBERED = "".join(f"{i:06d} " for i in range(20_000))  # 140 000 characters, every place different


def test_a_long_text_is_cut_to_the_limit_at_its_start_or_its_end() -> None:
    from ralph.rules.redact import TRUNCATED, redact, redact_text

    for limit in (100, 50_000):  # below and above the scan margin
        keep = limit - len(TRUNCATED)
        head, tail = redact(NUMBERED, limit), redact(NUMBERED, limit, tail=True)
        assert head == NUMBERED[:keep] + TRUNCATED and len(head) == limit
        assert tail == TRUNCATED + NUMBERED[-keep:] and len(tail) == limit
        assert redact_text(NUMBERED, limit) == head and redact_text(NUMBERED, limit, True) == tail
    exact = NUMBERED[:100]
    assert redact(exact, 100) == exact and redact(exact, 100, tail=True) == exact  # at the limit: nothing cut
    assert redact(NUMBERED) == NUMBERED  # no limit, no cut


def test_a_secret_straddling_the_cut_leaves_nothing_behind() -> None:
    from ralph.rules.redact import TRUNCATED, redact

    text = "x" * 90 + GITHUB + " and more"
    head = redact(text, 100)
    assert "ghp_" not in head and "R2d2" not in head and head == "x" * 90 + "[RED" + TRUNCATED
    tail = redact(GITHUB + " " + "y" * 90, 100, tail=True)
    assert "R2d2" not in tail and "0123456789" not in tail and tail.endswith("y" * 90)


def test_a_cut_is_marked_even_when_redaction_made_the_rest_short() -> None:
    # a key block longer than the scanned part: what is kept fits the limit,
    # but the text was cut, and the reader must be told
    from ralph.rules.redact import TRUNCATED, redact

    block = "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 64 * 400 + "\n-----END RSA PRIVATE KEY-----\nafter"
    assert redact(block, 100) == "[REDACTED:private_key]" + TRUNCATED


def test_records_keep_their_shape_with_every_string_redacted_and_bounded() -> None:
    from ralph.rules.redact import FIELD_LIMIT, MAX_DEPTH, MAX_ITEMS, TRUNCATED, redact

    record = {"command": f"git push https://x:{GITHUB}@github.com/o/r", f"key {GITHUB}": 3, "ok": True, "none": None,
              "pair": ("a", GITHUB), "long": "z" * (FIELD_LIMIT + 10)}
    out = redact(record)
    assert "R2d2" not in str(out)
    assert out["ok"] is True and out["none"] is None and out["key [REDACTED:github_token]"] == 3
    assert out["pair"] == ["a", "[REDACTED:github_token]"]
    assert out["long"] == "z" * (FIELD_LIMIT - len(TRUNCATED)) + TRUNCATED
    assert redact({"k": "v" * 50}, 20) == {"k": "v" * 14 + TRUNCATED}  # the caller's limit, per string
    assert redact({"k" * 300: 1}) == {"k" * 194 + TRUNCATED: 1}  # keys: 200 characters
    assert redact(7) == 7 and redact(None) is None and redact(b"raw") == b"raw"
    many = redact(list(range(MAX_ITEMS + 7)))
    assert many == list(range(MAX_ITEMS)) + ["… 7 more"]
    assert redact(list(range(MAX_ITEMS))) == list(range(MAX_ITEMS))
    wide = redact({f"k{i}": i for i in range(MAX_ITEMS + 3)})
    assert len(wide) == MAX_ITEMS + 1 and wide["…"] == "3 more key(s)" and wide[f"k{MAX_ITEMS - 1}"] == MAX_ITEMS - 1
    assert "…" not in redact({f"k{i}": i for i in range(MAX_ITEMS)})
    # a record that is read back (events.jsonl, run.json) keeps every entry, secrets still out
    stories = [{"id": f"US-{i:03d}", "title": GITHUB if i == 499 else "t"} for i in range(500)]
    whole = redact({"stories": stories, "keys": {f"k{i}": i for i in range(MAX_ITEMS + 3)}}, items=None)
    assert len(whole["stories"]) == 500 and whole["stories"][-1] == {"id": "US-499", "title": "[REDACTED:github_token]"}
    assert len(whole["keys"]) == MAX_ITEMS + 3 and "…" not in whole["keys"]
    nested: object = "bottom"
    for _ in range(MAX_DEPTH):
        nested = [nested]
    assert str(redact(nested)).count("[") == MAX_DEPTH and "bottom" in str(redact(nested))
    deeper = redact([nested])
    for _ in range(MAX_DEPTH):
        deeper = deeper[0]
    assert deeper == "[nested too deep]"
    deep_dict: object = {"leaf": GITHUB}
    for _ in range(MAX_DEPTH - 1):
        deep_dict = {"d": deep_dict}
    leaf = redact(deep_dict)
    for _ in range(MAX_DEPTH - 1):
        leaf = leaf["d"]
    assert leaf == {"leaf": "[REDACTED:github_token]"}


def test_a_token_alone_in_a_text_reaches_the_patterns() -> None:
    """The fast path lets a text through unscanned unless it holds a marker:
    each token here is the only marker in its text, so a missing marker would
    leave it in the log."""
    from ralph.rules.redact import redact

    cases = {
        "cloned with github_pat_11ABCDEFG0abcdefghij_klmnopqrstuvwx": "cloned with [REDACTED:github_token]",
        "remote ghp_0123456789abcdefghijABCDEFGHIJ": "remote [REDACTED:github_token]",
        "oauth gho_0123456789abcdefghijABCDEFGHIJ": "oauth [REDACTED:github_token]",
        "user-to-server ghu_0123456789abcdefghijABCDEFGHIJ": "user-to-server [REDACTED:github_token]",
        "server ghs_0123456789abcdefghijABCDEFGHIJ": "server [REDACTED:github_token]",
        "refresh ghr_0123456789abcdefghijABCDEFGHIJ": "refresh [REDACTED:github_token]",
        "gitlab glpat-0123456789abcdefghij": "gitlab [REDACTED:gitlab_token]",
        "slack xoxb-0123456789-abcdefghij": "slack [REDACTED:slack_token]",
        "posted to hooks.slack.com/services/T0000/B0000/abcdefghijklmnop": "posted to [REDACTED:slack_token]",
        "stripe rk_live_0123456789abcdefgh": "stripe [REDACTED:stripe_key]",
        "stripe rk_test_0123456789abcdefgh": "stripe [REDACTED:stripe_key]",
        "registry npm_0123456789abcdefghijABCDEFGHIJ012345": "registry [REDACTED:npm_token]",
        "header Bearer abcdefghij0123456789": "header [REDACTED:bearer]",
        "header Basic dXNlcjpodW50ZXIyaHVudGVyMg==": "header [REDACTED:bearer]",
        "fetched https://someone:hunter2hunter2@example.com/x": "fetched https://[REDACTED:url_credentials]@example.com/x",
        "openai sk-0123456789abcdefghijABCDEFGHIJ": "openai [REDACTED:openai_key]",
        "credentials=hunter2hunter2": "credentials=[REDACTED:secret]",
        "PWD: hunter2hunter2": "PWD: [REDACTED:secret]",
        "passphrase=hunter2hunter2": "passphrase=[REDACTED:secret]",
        "client_secret=hunter2hunter2": "client_secret=[REDACTED:secret]",
        "api_key=hunter2hunter2": "api_key=[REDACTED:secret]",
    }
    for text, out in cases.items():
        assert redact(text) == out, text


def test_a_logged_record_keeps_fifty_entries_and_six_levels() -> None:
    """The bounds of a log line, as figures: 50 entries of a list or dict,
    six levels of nesting (dicts as well as lists)."""
    from ralph.rules.redact import redact

    assert redact(list(range(80))) == list(range(50)) + ["… 30 more"]
    assert len(redact({f"k{i}": i for i in range(80)})) == 51
    nested: object = {"leaf": "x"}
    for _ in range(9):
        nested = {"d": nested}
    out = redact(nested)
    for _ in range(6):
        out = out["d"]
    assert out == "[nested too deep]"


def test_literal_secrets_are_replaced_wherever_they_appear() -> None:
    from ralph.rules.redact import redact

    secrets = ("PLANTEDvalue-42", "short1234")
    assert redact("bare PLANTEDvalue-42 and short1234.", secrets=secrets) == "bare [REDACTED:env] and [REDACTED:env]."
    assert redact({"out": "got short1234"}, secrets=secrets) == {"out": "got [REDACTED:env]"}
    assert redact("nothing here", secrets=("",)) == "nothing here"  # an empty value redacts nothing


def test_secret_values_come_from_secret_named_variables_longest_first() -> None:
    from ralph.rules.redact import ENV_SECRET_MIN, secret_values

    environ = {"DEPLOY_PASSWORD": "p" * ENV_SECRET_MIN, "GH_TOKEN": "t" * 30, "my_api_key": "k" * 12, "HOME": "/home/someone",
               "SHORT_SECRET": "s" * (ENV_SECRET_MIN - 1), "AWS_SECRET_ACCESS_KEY": "a" * 40, "PATH": "/usr/bin:/bin"}
    assert secret_values(environ) == ("a" * 40, "t" * 30, "k" * 12, "p" * ENV_SECRET_MIN)
    for name in ("DB_PASSWD", "GPG_PASSPHRASE", "X_APIKEY", "S3_ACCESS_KEY", "SSH_PRIVATE_KEY", "GOOGLE_CREDENTIALS"):
        assert secret_values({name: "value-0123"}) == ("value-0123",), name
    assert secret_values({"HOME": "/home/someone", "EDITOR": "vim-tiny-x"}) == ()


def test_lone_surrogates_become_replacement_characters() -> None:
    from ralph.rules.redact import redact

    for text, out in ((redact("a\ud800b"), None), *redact({"k\udcff": "v\ud800"}).items()):
        for part in (text, out):
            if part is not None:
                assert "\ufffd" in part and part.encode("utf-8").decode("utf-8") == part and part[0] in "akv" and len(part) > 1
    assert redact("plain é ✓") == "plain é ✓"


def test_only_the_value_of_an_assignment_is_replaced() -> None:
    from ralph.rules.redact import redact

    assert redact('{"password": "hunter2hunter2", "user": "bob"}') == '{"password": "[REDACTED:secret]", "user": "bob"}'
    assert redact("PASSWORD='it''s'") == "PASSWORD='[REDACTED:secret]''s'"
    assert redact("secret = hunter2hunter2;") == "secret = [REDACTED:secret];"
    assert redact("token:abcd1234efgh") == "token:[REDACTED:secret]"
    # redacting twice changes nothing more
    once = redact(f"password={GITHUB} --token {GITHUB} api_key: \"{GITHUB}\"")
    assert redact(once) == once and "R2d2" not in once


def test_plain_text_is_judged_without_loading_re() -> None:
    """The fast path: a text that holds no marker of any pattern is left
    alone without importing `re`, which the hook's hot path never loads."""
    plain = ["src/keyboard.py", "reset the password then retry", "a + b", "git log --oneline -5",
             "make build && make test", "Ünïcode text with no secret", "passport photo"]
    risky = ["pwd: hunter2hunter2", "password 'hunter2 hunter2'", "--secret abc", "x=1 token=abcd1234efgh"]
    code = ("import sys\n"
            f"sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})\n"
            "from ralph.rules import redact as rule\n"
            "loaded = 're' in sys.modules\n"
            "seen = []\n"
            f"for text in {plain!r}:\n"
            "    out = rule.redact(text)\n"
            "    seen.append([out == text, 're' in sys.modules])\n"
            f"for text in {risky!r}:\n"
            "    seen.append([rule.redact(text) != text, 're' in sys.modules])\n"
            "print(repr([loaded, seen]))\n")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, seen = ast.literal_eval(out)
    assert not loaded, "re was loaded before redacting anything: this test cannot tell"
    assert seen[:len(plain)] == [[True, False]] * len(plain), list(zip(plain, seen))
    assert all(changed for changed, _ in seen[len(plain):]), list(zip(risky, seen[len(plain):]))


# ---- structure: a JSON line stays JSON, counts are not secrets ----

# real stream-json lines: every capture's (tests/fixtures/stream/) and the result
# lines of Claude Code 2.1.332 (a completed run, an API 429), as the client prints them
STREAM_LINES = [line.rstrip("\n") for path in sorted(glob.glob(os.path.join(FIXTURES, "stream", "*.jsonl")))
                + [os.path.join(FIXTURES, "redact", "stream_result_lines.jsonl")]
                for line in open(path, encoding="utf-8") if line.strip()]
RESULT_LINES = [line for line in STREAM_LINES if json.loads(line).get("type") == "result"]
SECRET_FIELDS = {"api_key": "sk-" + "proj-Q1w2E3r4T5y6U7i8O9p0AsDfGhJkL", "token": "c0ffee-not-a-pattern",
                 "headers": {"Authorization": "Basic c2hvcnQ="}}


def same_shape(a: object, b: object) -> bool:
    """The same keys and the same numbers, booleans and nulls: only strings may differ."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same_shape(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b))
    return isinstance(b, str) if isinstance(a, str) else a == b and type(a) is type(b)


def test_every_real_stream_line_stays_json_with_its_counts() -> None:
    from ralph.rules.redact import redact_text

    assert len(RESULT_LINES) >= 10 and any('"maxOutputTokens":128000' in line for line in RESULT_LINES)
    for line in STREAM_LINES:
        out = redact_text(line)
        assert same_shape(json.loads(line), json.loads(out)), out
    for line in RESULT_LINES:  # no secret in a result line: nothing changes, not even the spacing
        assert redact_text(line) == line


def test_secrets_in_a_json_line_are_replaced_inside_their_strings() -> None:
    from ralph.rules.redact import redact_text

    for line in RESULT_LINES[:3] + [RESULT_LINES[-1]]:
        document = json.loads(line)
        document["usage"].update(SECRET_FIELDS)
        document["result"] = "deployed with DEPLOY_TOKEN=w4sS3cr3tV4lue and password: hunter2hunter2"
        out = redact_text(json.dumps(document, separators=(",", ":")))
        back = json.loads(out)
        assert back["usage"]["api_key"] == back["usage"]["token"] == "[REDACTED:secret]"
        assert back["usage"]["headers"] == {"Authorization": "[REDACTED:secret]"}
        assert back["result"] == "deployed with DEPLOY_TOKEN=[REDACTED:secret] and password: [REDACTED:secret]"
        assert back["usage"]["output_tokens"] == document["usage"]["output_tokens"]
        assert back["usage"]["output_tokens_details"] == document["usage"]["output_tokens_details"]
        for model in back["modelUsage"].values():
            assert isinstance(model["maxOutputTokens"], int)
        assert '":' in out and '": ' not in out  # dumped as the client dumps it


def test_json_values_after_secret_names_in_text() -> None:
    from ralph.rules.redact import redact_text

    # a number, boolean, null, object or array after a quoted key is JSON's, not a secret
    for kept in ('"maxOutputTokens":128000}', '"output_tokens_details":null,', '"token": true]', '"password": [1, 2]',
                 '"secret":{"a": 1}', "'token': -12.5e3", "max_tokens: 128000", "MAX_OUTPUT_TOKENS=32000",
                 '"token": [12345678, 1]', 'x = {"a":{"secret":{}}}', '"token" : 12345678,', "'token' : 12345678,",
                 '"secret": false}', '"password": null}'):
        assert redact_text(kept) == kept
    # a value in a shell or an env file, or a JSON string, still is
    assert redact_text("password=12345678") == "password=[REDACTED:secret]"
    assert redact_text('"token": "12345678"') == '"token": "[REDACTED:secret]"'
    assert redact_text('token: nullable1') == "token: [REDACTED:secret]"


def test_mixed_text_keeps_json_lines_and_multi_line_keys() -> None:
    from ralph.rules.redact import redact_text

    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
    text = ('echo TOKEN=abcdef123\n' + key + RESULT_LINES[0] + '\n{"token":"abcdef"}\r\n' + key
            + "{not json} password: x1y2z3w4\n")
    out = redact_text(text)
    lines = out.splitlines()
    assert lines[:3] == ["echo TOKEN=[REDACTED:secret]", "[REDACTED:private_key]", RESULT_LINES[0]]
    assert json.loads(lines[3]) == {"token": "[REDACTED:secret]"} and '{"token":"[REDACTED:secret]"}\r\n' in out
    assert "MIIEow" not in out and lines[4:] == ["[REDACTED:private_key]", "{not json} password: [REDACTED:secret]"]


def test_env_secrets_inside_json_strings() -> None:
    from ralph.rules.redact import redact_text

    secret = 'pa"ss\\word-123'  # escaped in the JSON text: only the parsed string holds it
    line = json.dumps({"result": f"printed {secret}", "n": 5})
    out = redact_text(line, secrets=(secret,))
    assert json.loads(out) == {"result": "printed [REDACTED:env]", "n": 5}
    array = json.dumps(["printed", secret, 5])  # a line that is an array: a document too
    assert redact_text(array, secrets=(secret,)) == '["printed", "[REDACTED:env]", 5]'
    assert redact_text("[1,2]\n" + array, secrets=(secret,)) == '[1,2]\n["printed", "[REDACTED:env]", 5]'
    assert redact_text('{"é":"ü","token":"abc"}') == '{"é":"ü","token":"[REDACTED:secret]"}'  # dumped as UTF-8 text
    assert redact_text('{"token": "abc"}') == '{"token": "[REDACTED:secret]"}'  # Python's spacing kept


def test_redacting_again_changes_nothing() -> None:
    """A record redacted once (a log line, then its excerpt in failures.jsonl) keeps its markers."""
    from ralph.rules.redact import redact_text

    texts = ['{"token":"abc","api_key":"' + GITHUB + '","Authorization":"Basic x"}', "TOKEN=abcdef123 " + GITHUB,
             '"password": "hunter22"', "--token s3cr3tValue99"]
    for text in texts:
        once = redact_text(text)
        assert once != text and redact_text(once) == once
    for marked in ('{"token":"[REDACTED:env]","n":1}', '{"api_key":"[REDACTED:github_token]"}'):
        assert redact_text(marked) == marked


def test_iteration_log_and_failure_excerpt_keep_stream_lines_json(tmp_path: object) -> None:
    from ralph.run.proc import RedactedLog
    from ralph.run.failures import FAILURES_FILE, record_failure

    stream = "\n".join(STREAM_LINES[:40]) + "\n"
    log_path = os.path.join(str(tmp_path), "iteration.log")
    log = RedactedLog(open(log_path, "wb"))
    for start in range(0, len(stream), 777):  # the agent's output arrives in chunks
        log.write(stream[start:start + 777].encode("utf-8"))
    log.close()
    with open(log_path, encoding="utf-8") as f:
        logged = f.read().splitlines()
    assert len(logged) == 40
    for original, kept in zip(STREAM_LINES, logged):
        assert same_shape(json.loads(original), json.loads(kept))
    shortest = sorted(RESULT_LINES, key=len)[:2]  # whole within the excerpt's 4000 characters
    record_failure(str(tmp_path), {"kind": "agent", "summary": "x", "excerpt": "\n".join(shortest)})
    with open(os.path.join(str(tmp_path), FAILURES_FILE), encoding="utf-8") as f:
        excerpt = json.loads(f.read())["excerpt"]
    assert excerpt.splitlines() == shortest
