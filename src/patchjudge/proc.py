"""Every subprocess patchjudge starts: own process group, deadline, bounded output."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from patchjudge.errors import CommandError

# What we keep of each stream. A test that prints gigabytes must not take the
# gate's memory with it: the rest is read and dropped.
OUTPUT_CAP = 1 << 20
CHANNEL_CAP = 256 << 20
CHANNEL_ENV = "PATCHJUDGE_RESULT_FD"
# How every interpreter that runs the tested code starts. Not `-I`: it implies
# `-E`, which ignores PYTHONHASHSEED, so set order and set-parametrized node ids
# changed every run (issue 17). `-s -P` keep what `-I` kept out of sys.path (user
# site, the script's directory, the cwd); the PYTHON* variables are the judge's
# own, since every such environment is built from nothing (HASH_SEED among them).
ISOLATED_PYTHON = ("-s", "-P", "-B", "--check-hash-based-pycs", "always")
HASH_SEED = "0"
# A pytest's channel and output come a line at a time: a report, a progress dot. A
# reader waiting on the pipes was woken for nearly each one (boltons' x12: ~25,000
# writes; the CLI's own CPU 1.0 -> 0.77 s, issue 20). After a round that read little,
# the reader sleeps this long instead, and the lines gather in the pipe. A pipe holds
# 64 KiB: a writer that fills one faster is read without a pause, as before.
PACE_S = 0.02
LITTLE = 1 << 12


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    # Bytes the judge's pytest plugin wrote to the private pipe (empty if unused).
    channel: bytes = b""
    dropped: int = 0
    # Processes it left running outside its process group, killed afterwards.
    escaped: int = 0

    def describe(self) -> str:
        tail = self.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return f"{shlex.join(self.argv)} exited {self.returncode}: {' / '.join(tail)}"


class _Sink:
    def __init__(self, cap: int, keep_tail: bool) -> None:
        self.buf = bytearray()
        self.cap = cap
        self.keep_tail = keep_tail
        self.dropped = 0

    def add(self, data: bytes) -> None:
        self.buf += data
        excess = len(self.buf) - self.cap
        if excess > 0:
            self.dropped += excess
            if self.keep_tail:
                del self.buf[:excess]
            else:
                del self.buf[self.cap :]


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _subreaper() -> bool:
    """Make this process the one orphans of its descendants are re-parented to (Linux).

    A child that starts its own session escapes the process-group kill; as a
    subreaper we still see it, as our own child, once its parent is gone.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


# Children this process started and has not reaped yet, whichever thread
# started them: a concurrent run's reaper must not take them for strays
# (the gate builds hypothesis's tables in a child while a lane runs).
_live: set[int] = set()
_live_lock = threading.Lock()


def _popen(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Popen, with the child counted as ours until `_forget` (see `_live`)."""
    with _live_lock:
        child = subprocess.Popen(list(argv), **kwargs)
        _live.add(child.pid)
    return child


def _forget(pid: int) -> None:
    with _live_lock:
        _live.discard(pid)


def _strays(known: set[int]) -> set[int]:
    with _live_lock:
        return _children() - known - _live


def _children() -> set[int]:
    """Every process whose parent is this one, from each /proc/PID/stat.

    Every process's, not /proc/self/task/*/children: the kernel documents
    that list as unreliable while children exit. Raw descriptors relative to
    /proc and one read each, no Path objects: a gate scans /proc about a
    dozen times, and a busy machine has hundreds of processes (issue 20).
    """
    me = os.getpid()
    found = set()
    proc_fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for entry in os.scandir(proc_fd):
            name = entry.name
            if not name.isdigit():
                continue
            try:
                fd = os.open(f"{name}/stat", os.O_RDONLY, dir_fd=proc_fd)
            except OSError:
                continue
            try:
                # One line of 52 numbers and a 16-byte name: far less than a read takes.
                stat = os.read(fd, 1 << 14)
            except OSError:
                continue
            finally:
                os.close(fd)
            # pid (comm) state ppid ...: comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == me:
                found.add(int(name))
    finally:
        os.close(proc_fd)
    return found


def _pid_namespace(pid: int | str) -> str | None:
    try:
        return str(Path(f"/proc/{pid}/ns/pid").readlink())
    except OSError:
        return None


def _reap_escaped(group: int, known: set[int]) -> int:
    """Kill what the tested process left behind outside its group; how many escaped.

    A stray in another pid namespace is a sandbox's init, re-parented to us
    as bwrap exits: killed like the rest, but it escaped nothing, since its
    namespace and everything in it die with it (issue 10).
    """
    killed = 0
    ours = _pid_namespace("self")
    for _ in range(200):
        strays = _strays(known)
        for pid in strays:
            if _pid_namespace(pid) == ours:
                killed += 1
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        if not strays:
            try:
                os.killpg(group, 0)  # members still dying may orphan more
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.005)
    return killed


def pause_after(most: int, paced: bool) -> float:
    """Pure: how long the reader sleeps after a round whose largest read was `most` bytes.

    Only a run with the judge's channel (a pytest's) is paced: git's short
    answers end a command, and a pause would only delay it. A round of ends of
    file (-1) or of a read that found much (a pipe filling fast) goes on at once.
    """
    return PACE_S if paced and 0 <= most < LITTLE else 0.0


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write `data` to a child's stdin and close it; a child gone early is no error."""
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.close()


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdin: bytes | None = None,
    channel: bool = False,
    check: bool = False,
    output_cap: int | None = OUTPUT_CAP,
    pass_fds: Sequence[int] = (),
    on_channel: Callable[[bytes], None] | None = None,
) -> Completed:
    """Run argv in a new session; on timeout kill its whole process group.

    With `channel`, the child inherits the write end of a pipe whose number
    is in $PATCHJUDGE_RESULT_FD: results come back on it, not through a file
    the code under test could rewrite. `output_cap=None` keeps all of
    stdout: for git, whose listings of a large repository are data, not noise.
    """
    reaping = channel and _subreaper()
    known = _children() if reaping else set()
    child_env = dict(os.environ if env is None else env)
    pass_fds = tuple(pass_fds)  # the sandbox's filter, say: the caller closes them
    read_fd = write_fd = -1
    if channel:
        read_fd, write_fd = os.pipe()
        os.set_inheritable(write_fd, True)
        pass_fds = (*pass_fds, write_fd)
        child_env[CHANNEL_ENV] = str(write_fd)
    try:
        proc = _popen(
            argv,
            cwd=cwd,
            env=child_env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        raise CommandError(
            f"cannot run {argv[0]!r}: {exc.strerror}", fix="is it installed?"
        ) from None
    if write_fd >= 0:
        os.close(write_fd)
    if stdin is not None and proc.stdin is not None:
        # Fed beside the reads below, not before them: a child that answers as it
        # reads (`git check-attr --stdin` over a large tree) fills its stdout pipe
        # while the rest of stdin waits, and both ends blocked for ever (redteam14).
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()

    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    # None: keep everything (git's own output about the user's repository,
    # which a truncated read would misparse; never tested code's).
    cap = output_cap if output_cap is not None else 1 << 62
    sinks = {out_fd: _Sink(cap, keep_tail=True), err_fd: _Sink(OUTPUT_CAP, keep_tail=True)}
    if read_fd >= 0:
        sinks[read_fd] = _Sink(CHANNEL_CAP, keep_tail=False)
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    with selectors.DefaultSelector() as sel:
        for fd in sinks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                timed_out = True
                _kill_group(proc.pid)
                # Stragglers outside the group may hold the pipes: stop reading.
                break
            most = -1  # the largest read of this round; -1: nothing but ends of file
            for sk, _ in sel.select(wait):
                data = os.read(sk.fd, 1 << 16)
                if data:
                    most = max(most, len(data))
                    sinks[sk.fd].add(data)
                    if on_channel is not None and sk.fd == read_fd:
                        on_channel(data)  # progress as the results come (issue 20)
                else:
                    sel.unregister(sk.fd)
            pause = pause_after(most, channel)
            if pause and sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                time.sleep(pause if left is None else max(0.0, min(pause, left)))
    returncode = proc.wait()
    _forget(proc.pid)
    # Whatever the tests left running in their group dies with them, and so
    # does anything that left the group (a daemon in a session of its own).
    _kill_group(proc.pid)
    escaped = _reap_escaped(proc.pid, known) if reaping else 0
    proc.stdout.close()
    proc.stderr.close()
    if read_fd >= 0:
        os.close(read_fd)
    out, err = sinks[out_fd], sinks[err_fd]
    chan = sinks.get(read_fd)
    result = Completed(
        argv=tuple(argv),
        returncode=returncode,
        stdout=bytes(out.buf),
        stderr=bytes(err.buf),
        timed_out=timed_out,
        channel=bytes(chan.buf) if chan else b"",
        dropped=out.dropped + err.dropped + (chan.dropped if chan else 0),
        escaped=escaped,
    )
    if check and (returncode != 0 or timed_out):
        raise CommandError(result.describe())
    return result
