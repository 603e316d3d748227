"""ralph.process: the one child-process runner (group kill, PDEATHSIG, bounded
capture, streamed output, stdin fed then closed) and its line helpers."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ralph import process
from ralph.process import Capture, Group, LineLog, Lines
from tests.loop_support import gone


def run(command: str | list[str], **options: object) -> process.Result:
    settings: dict = {"timeout": 60, "max_bytes": 64 * 1024, "kill_grace": 0.5, "drain": 0.2}
    settings.update(options)
    return process.run(process.argv_for(command), **settings)


def test_stdin_is_fed_then_closed_and_output_streamed_and_kept_bounded() -> None:
    data = os.urandom(3_000_000)
    chunks: list[bytes] = []
    result = run(["cat"], stdin=data, max_bytes=4096, head_bytes=1024, on_output=chunks.append)
    assert result.exit_code == 0 and not result.error and not result.timed_out
    assert b"".join(chunks) == data  # every byte, as it came
    assert result.output.total == len(data)
    assert bytes(result.output.head) == data[:1024] and bytes(result.output.tail) == data[-3072:]
    assert result.output.dropped == len(data) - 4096


def test_a_child_that_closes_its_output_before_it_exits_is_not_killed() -> None:
    # GNU cat closes stdout in an exit handler, just before it ends: under load the
    # run once saw its output close and killed the group in that gap (exit -9)
    result = run("cat >/dev/null; exec >&- 2>&-; sleep 0.1", stdin=b"x", drain=5)
    assert result.exit_code == 0 and not result.timed_out


def test_a_child_that_never_reads_its_stdin_is_no_problem() -> None:
    result = run("exec 0<&-; echo ok", stdin=b"x" * 5_000_000)
    assert result.exit_code == 0 and result.output.text() == "ok\n"


def test_the_timeout_kills_the_whole_group(tmp_path) -> None:
    pids = tmp_path / "pids"
    result = run(f"sleep 300 & echo $! > {pids}; sleep 300", timeout=0.5)
    assert result.timed_out and not result.stopped and not result.idle_timed_out
    assert result.exit_code == -15  # the shell died of the SIGTERM
    assert gone(int(pids.read_text()))


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    result = run("trap '' TERM; sleep 300", timeout=0.3, kill_grace=0.3)
    assert result.timed_out and result.exit_code == -9


def test_idle_timeout_ends_a_silent_child() -> None:
    result = run("echo started; sleep 300", idle_timeout=0.5, timeout=300)
    assert result.idle_timed_out and not result.timed_out
    assert result.exit_code == -15 and result.output.text() == "started\n"


def test_output_keeps_a_child_under_its_idle_timeout_alive() -> None:
    # it runs longer than its idle timeout, but never stays silent that long
    result = run("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i; sleep 0.2; done", idle_timeout=1.5)
    assert result.exit_code == 0 and not result.idle_timed_out
    assert result.output.text().split() == [str(i) for i in range(1, 13)]


def test_stop_ends_the_run() -> None:
    seen: list[bytes] = []
    result = run("echo go; sleep 300", on_output=seen.append, stop=lambda: bool(seen))
    assert result.stopped and not result.timed_out and result.exit_code == -15


def test_on_group_is_told_the_group_then_none() -> None:
    told: list[object] = []
    result = run("echo $$", on_group=told.append)
    assert len(told) == 2 and isinstance(told[0], Group) and told[1] is None
    assert told[0].pgid == int(result.output.text())  # the shell leads its own group


def test_what_the_child_leaves_holding_its_output_is_killed_without_stalling(tmp_path) -> None:
    pids = tmp_path / "pids"
    result = run(f"sleep 300 & echo $! > {pids}; echo done", timeout=300)
    assert result.exit_code == 0 and not result.timed_out and result.output.text() == "done\n"
    assert gone(int(pids.read_text()))


def test_stderr_kept_apart_and_not_streamed() -> None:
    chunks: list[bytes] = []
    result = run("echo out; echo err >&2", merge_stderr=False, on_output=chunks.append)
    assert result.output.text() == "out\n" and result.errors is not None and result.errors.text() == "err\n"
    assert b"".join(chunks) == b"out\n"
    merged = run("echo out; echo err >&2")
    assert merged.errors is None and sorted(merged.output.text().split()) == ["err", "out"]


def test_a_command_that_cannot_start_says_why(tmp_path) -> None:
    missing = run(["/nonexistent/tool"])
    assert missing.exit_code is None and "No such file" in missing.error
    nowhere = run(["true"], cwd=str(tmp_path / "gone"))
    assert nowhere.exit_code is None and nowhere.error
    bad_env = run(["true"], env={"A": "x\0y"})
    assert bad_env.exit_code is None and "null" in bad_env.error


def test_a_flood_keeps_its_head_and_tail_and_counts_the_rest() -> None:
    result = run("head -c 10000000 /dev/zero | tr '\\0' a; echo; echo the end", max_bytes=2048, head_bytes=1024)
    assert result.exit_code == 0 and result.output.total == 10_000_000 + 1 + 8
    text = result.output.text()
    assert text.startswith("a" * 1024 + f"\n[... {10_000_009 - 2048} bytes of output cut ...]\n")
    assert text.endswith("a\nthe end\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_child_dies_with_its_parent() -> None:
    parent = textwrap.dedent("""\
        import os, signal, subprocess
        from ralph import process
        child = process.start(["sleep", "300"], cwd=None, env=None, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        print(child.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    assert done.returncode == -9
    assert gone(int(done.stdout))


def test_lines_come_whole_whatever_the_chunks() -> None:
    lines: list[bytes] = []
    reader = Lines(lines.append, max_line=8)
    for chunk in (b'{"a"', b': 1}\n{"b": 2}\n{', b'"c": 3}\nlast'):
        reader(chunk)
    assert lines == [b'{"a": 1}\n', b'{"b": 2}\n', b'{"c": 3}\n']
    reader.flush()
    assert lines[-1] == b"last"
    reader(b"0123456789abcdefghij")  # past max_line: handed on in pieces
    assert lines[-2:] == [b"01234567", b"89abcdef"]
    reader.flush()
    assert lines[-1] == b"ghij"


def test_line_log_writes_what_the_redaction_hook_returns(tmp_path) -> None:
    path = tmp_path / "log"

    def redact(line: str) -> str | None:
        return None if line == "drop" else line.replace("secret", "[redacted]")

    log = LineLog(open(path, "wb"), redact, max_line=1024)
    for chunk in (b"a secret", b" here\r\ndrop\nkept\n", b"no newline secret"):
        log.write(chunk)
    log.close()
    assert path.read_bytes() == b"a [redacted] here\r\nkept\nno newline [redacted]"


def test_capture_keeps_head_and_tail() -> None:
    capture = Capture(head_limit=3, tail_limit=2)
    for chunk in (b"ab", b"cdef", b"g"):
        capture.add(chunk)
    assert (bytes(capture.head), bytes(capture.tail), capture.total, capture.dropped) == (b"abc", b"fg", 7, 2)
    assert capture.text() == "abc\n[... 2 bytes of output cut ...]\nfg"
    whole = Capture(head_limit=3, tail_limit=0)
    whole.add(b"abcdef")
    assert bytes(whole.head) == b"abc" and not whole.tail and whole.dropped == 3


SLOW_TO_END = """import os, signal, sys, time
out = sys.argv[1]
def term(*_):
    time.sleep(0.3)  # work after SIGTERM: a git removing its lock files, a server flushing
    with open(out + ".cleaned", "w") as f:
        f.write("cleaned\\n")
    os._exit(0)
signal.signal(signal.SIGTERM, term)
with open(out + ".pid", "w") as f:
    f.write(str(os.getpid()))
while True:
    time.sleep(1)
"""


def test_what_a_run_leaves_behind_gets_its_grace_and_is_gone_when_run_returns(tmp_path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_TO_END)
    out = tmp_path / "left"
    command = (f"{sys.executable} {script} {out} >/dev/null 2>&1 & "
               f"while [ ! -s {out}.pid ]; do sleep 0.02; done; echo started")
    result = run(command, leftover_grace=30)
    assert result.exit_code == 0 and result.output.text() == "started\n"
    assert (tmp_path / "left.cleaned").read_text() == "cleaned\n"  # SIGTERM first, and time to finish
    assert not live(int((tmp_path / "left.pid").read_text()))  # gone before run() returned: no wait here


def test_a_leftover_that_ignores_sigterm_is_killed_after_the_grace_and_gone_when_run_returns(tmp_path) -> None:
    pid_file = tmp_path / "pid"
    result = run(f"sh -c 'trap \"\" TERM; echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; exec sleep 300' >/dev/null 2>&1 & "
                 f"while [ ! -s {pid_file} ]; do sleep 0.02; done", leftover_grace=0.3)
    assert result.exit_code == 0
    assert not live(int(pid_file.read_text()))


def live(pid: int) -> bool:
    """Running now (a zombie is not: it holds nothing and waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
