"""The subprocess wrapper: deadlines kill the whole group, output stays bounded."""

from __future__ import annotations

import contextlib
import os
import sys
import time

import pytest

from patchjudge import proc
from patchjudge.errors import CommandError


def test_timeout_kills_the_process_group() -> None:
    # The child starts a grandchild that would outlive it; both must die.
    code = (
        "import subprocess, sys, time;"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        "print(p.pid, flush=True); time.sleep(60)"
    )
    started = time.monotonic()
    result = proc.run([sys.executable, "-c", code], timeout=1.5)
    assert result.timed_out
    assert time.monotonic() - started < 30
    grandchild = int(result.stdout.split()[0])
    # Up to 30 s, not 5: on a loaded box the kill lands late; a pass costs one turn.
    for _ in range(300):
        # Where an earlier test made this process a subreaper, the killed grandchild is
        # ours to reap: until then it is a zombie that kill(0) still finds.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(grandchild, os.WNOHANG)
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("grandchild survived the process-group kill")


def test_output_is_capped_and_the_tail_kept() -> None:
    code = "import sys; sys.stdout.write('x' * (3 << 20)); sys.stdout.write('END')"
    result = proc.run([sys.executable, "-c", code])
    assert result.returncode == 0
    assert len(result.stdout) == proc.OUTPUT_CAP and result.stdout.endswith(b"END")
    assert result.dropped == (3 << 20) + 3 - proc.OUTPUT_CAP


def test_channel_carries_what_the_child_writes_to_its_fd() -> None:
    code = "import os; os.write(int(os.environ['PATCHJUDGE_RESULT_FD']), b'hello')"
    result = proc.run([sys.executable, "-c", code], channel=True, env=dict(os.environ))
    assert result.channel == b"hello"


def test_the_channel_is_handed_on_as_it_is_read() -> None:
    # repeat.Watch counts a long run's progress from these chunks (issue 20).
    code = "import os; fd = int(os.environ['PATCHJUDGE_RESULT_FD']); os.write(fd, b'a' * 70000)"
    chunks: list[bytes] = []
    result = proc.run(
        [sys.executable, "-c", code], channel=True, env=dict(os.environ), on_channel=chunks.append
    )
    assert b"".join(chunks) == result.channel == b"a" * 70000


def test_a_pytest_channel_is_read_at_a_pace_after_a_round_that_read_little() -> None:
    # Issue 20: a reader woken for each report line (and each progress dot) costs the
    # CLI and the writer; after a small read it sleeps and the lines gather in the pipe.
    assert proc.pause_after(300, paced=True) == proc.PACE_S > 0
    assert proc.pause_after(0, paced=True) == proc.PACE_S


def test_no_pause_without_a_channel_at_an_end_or_when_a_pipe_fills_fast() -> None:
    assert proc.pause_after(300, paced=False) == 0  # git's short answers end at once
    assert proc.pause_after(-1, paced=True) == 0  # ends of file only: nothing to gather
    assert proc.pause_after(proc.LITTLE, paced=True) == 0  # a pipe filling fast: read on


def test_a_trickle_of_lines_reaches_the_channel_whole_and_in_order() -> None:
    code = (
        "import os, sys, time\n"
        "fd = int(os.environ['PATCHJUDGE_RESULT_FD'])\n"
        "for i in range(300):\n"
        "    os.write(fd, b'line %d\\n' % i)\n"
        "    print('.', end='', flush=True)\n"
        "    time.sleep(0.0005) if i % 50 == 0 else None\n"
    )
    chunks: list[bytes] = []
    result = proc.run(
        [sys.executable, "-c", code], channel=True, env=dict(os.environ), on_channel=chunks.append
    )
    expected = b"".join(b"line %d\n" % i for i in range(300))
    assert b"".join(chunks) == result.channel == expected
    assert result.stdout == b"." * 300 and result.returncode == 0


def test_check_names_command_exit_and_stderr() -> None:
    with pytest.raises(CommandError) as info:
        proc.run([sys.executable, "-c", "import sys; sys.exit('boom')"], check=True)
    assert "exited 1" in str(info.value) and "boom" in str(info.value)


def test_a_missing_program_is_a_user_error() -> None:
    with pytest.raises(CommandError, match="cannot run 'no-such-program-xyz'"):
        proc.run(["no-such-program-xyz"])


# Wait for a file, for at most a minute: the test's two runs synchronise on
# files, never on how long a sleep lasts on a loaded machine.
WAIT_FOR = """
import pathlib, sys, time
for _ in range(6000):
    if pathlib.Path(sys.argv[1]).exists():
        break
    time.sleep(0.01)
else:
    sys.exit(f"{sys.argv[1]} never appeared")
"""


def test_a_concurrent_run_is_not_reaped_as_a_stray(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The gate builds hypothesis's tables in a child while a lane runs: the
    # lane's reaper must not take a child another thread started meanwhile
    # for a daemon the lane's tests left behind.
    import threading

    lane_up, other_up, release = tmp_path / "lane", tmp_path / "other", tmp_path / "release"
    other: list[proc.Completed] = []

    def start_other() -> None:
        # Started once the lane runs (after its reaper took stock of the children),
        # alive until the lane's run has returned (after its reaper ran).
        for _ in range(6000):
            if lane_up.exists():
                break
            time.sleep(0.01)
        script = (
            f"import pathlib; pathlib.Path({str(other_up)!r}).touch()\n{WAIT_FOR}\nprint('done')"
        )
        other.append(proc.run([sys.executable, "-c", script, str(release)]))

    worker = threading.Thread(target=start_other)
    worker.start()
    lane_script = f"import pathlib; pathlib.Path({str(lane_up)!r}).touch()\n{WAIT_FOR}"
    lane = proc.run([sys.executable, "-c", lane_script, str(other_up)], channel=True)
    release.touch()
    worker.join()
    assert lane.returncode == 0, lane.stderr  # the two runs overlapped
    assert lane.escaped == 0
    assert other[0].returncode == 0 and other[0].stdout.strip() == b"done", other[0].stderr
