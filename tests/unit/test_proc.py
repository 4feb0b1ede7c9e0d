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


def test_check_names_command_exit_and_stderr() -> None:
    with pytest.raises(CommandError) as info:
        proc.run([sys.executable, "-c", "import sys; sys.exit('boom')"], check=True)
    assert "exited 1" in str(info.value) and "boom" in str(info.value)


def test_a_missing_program_is_a_user_error() -> None:
    with pytest.raises(CommandError, match="cannot run 'no-such-program-xyz'"):
        proc.run(["no-such-program-xyz"])


def test_a_concurrent_run_is_not_reaped_as_a_stray() -> None:
    # The gate builds hypothesis's tables in a child while a lane runs: the
    # lane's reaper must not take a child another thread started meanwhile
    # for a daemon the lane's tests left behind.
    import threading

    other: list[proc.Completed] = []

    def start_later() -> None:
        time.sleep(0.3)
        script = "import time; time.sleep(1.5); print('done')"
        other.append(proc.run([sys.executable, "-c", script]))

    worker = threading.Thread(target=start_later)
    worker.start()
    lane = proc.run([sys.executable, "-c", "import time; time.sleep(1)"], channel=True)
    worker.join()
    assert lane.escaped == 0
    assert other[0].returncode == 0 and other[0].stdout.strip() == b"done"
