"""Workers' boxes started outside the judge's box, at the judge's request (issue 17).

Out of process with isolation "sandbox", the judge's pytest runs in a box of
its own (sandbox.judge_box): a property that evaluates or opens what the code
returns runs the patch's text there. A box cannot start a worker's box inside
it as root (the kernel refuses a second /proc under bwrap's covered one), so
the lane starts them: `serving` runs a `Launcher` beside the judge's pytest and
hands its pytest one end of a socket (protocol.LAUNCHER_ENV); `Client` is the
judge's side.

The judge's process is the patch's guest now, so a request names nothing the
worker's box is made of: the box is the lane's, fixed before pytest started
(one for the main pass's workers, and one over another tree and home for the
differential's second harness, named by its tree, issue 20); a request
brings only the command to run inside it and the three variables
protocol.LAUNCHER_ASKED names; the rest of the worker's environment is the
lane's own (protocol.WORKER_PASSED_ENV). The pipes are the launcher's,
their ends handed over, so no descriptor of the judge's reaches a worker.

    judge                               launcher
    {"op": "pipes"}             ---->   five pipes; the judge's ends, and the
                                <----   numbers the worker will read them by
    {"op": "start", argv, env, tree}  ->  the worker's box on the last pipes
    {"op": "poll" | "wait" | "kill", "id", "timeout"}  ->  {"returncode"}
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from patchjudge.boundary import protocol, sandbox

_MAX_MESSAGE = 1 << 20  # a request's JSON: an argv and an environment
_MAX_WORKERS = 256  # one run's workers: the run's, one per mutant, the differential's
# The pipes of one worker, by name: the judge writes to_worker and boot, reads the rest.
PIPES = ("to_worker", "from_worker", "boot", "status", "stderr")


class LaunchError(RuntimeError):
    """The launcher refused a request, or is gone."""


@dataclasses.dataclass
class _Pending:
    worker_ends: dict[str, int]  # name -> the launcher's end, passed to the worker


class Launcher:
    """The lane's side: starts workers in `box` for one judge's pytest, kills them at the end.

    `second`: the differential's box (another tree and home, that no worker in
    `box` ever wrote: a file left there would tell a worker it is the second).
    """

    def __init__(
        self, box: sandbox.Box, environ: Mapping[str, str], second: sandbox.Box | None = None
    ) -> None:
        self.box, self.environ, self.second = box, environ, second
        self.judge_end, self.own_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.pending: _Pending | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)

    # --- lifetime ---
    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        """After the judge's pytest: no worker outlives it."""
        self.judge_end.close()
        with contextlib.suppress(OSError):
            self.own_end.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        self.own_end.close()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._drop_pending()

    def _serve(self) -> None:
        while True:
            try:
                data = self.own_end.recv(_MAX_MESSAGE)
            except OSError:
                return
            if not data:
                return
            try:
                reply, fds = self._answer(json.loads(data))
            except Exception as exc:  # a judge-side attacker's input: never a dead thread
                reply, fds = {"error": f"{type(exc).__name__}: {exc}"}, []
            try:
                socket.send_fds(self.own_end, [json.dumps(reply).encode()], fds)
            except OSError:
                return
            finally:
                for fd in fds:
                    os.close(fd)

    # --- requests ---
    def _answer(self, request: Any) -> tuple[dict[str, Any], list[int]]:
        if type(request) is not dict:
            raise LaunchError("a request is a JSON object")
        op = request.get("op")
        if op == "pipes":
            return self._pipes()
        if op == "start":
            box = self._box(request.get("tree"))
            return {"id": self._start(box, request.get("argv"), request.get("env"))}, []
        proc = self.procs.get(request.get("id"))  # type: ignore[arg-type]
        if proc is None:
            raise LaunchError(f"no worker {request.get('id')!r}")
        if op == "kill":
            if proc.poll() is None:
                proc.kill()
            return {"returncode": proc.wait()}, []
        if op == "poll":
            return {"returncode": proc.poll()}, []
        if op == "wait":
            timeout = request.get("timeout")
            if timeout is not None and type(timeout) not in (int, float):
                raise LaunchError("a wait's timeout is a number of seconds")
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=timeout)
            return {"returncode": proc.returncode}, []
        raise LaunchError(f"no operation {op!r}")

    def _pipes(self) -> tuple[dict[str, Any], list[int]]:
        if len(self.procs) >= _MAX_WORKERS:
            raise LaunchError(f"more than {_MAX_WORKERS} workers for one run")
        self._drop_pending()
        judge_ends, worker_ends = [], {}
        for name in PIPES:
            read, write = os.pipe()
            # The judge writes to the worker's stdin and the boot pipe; reads the rest.
            mine, theirs = (read, write) if name in ("to_worker", "boot") else (write, read)
            worker_ends[name] = mine
            judge_ends.append(theirs)
        self.pending = _Pending(worker_ends)
        numbers = [worker_ends["to_worker"], worker_ends["from_worker"]]
        return {"pipes": list(PIPES), "worker_fds": numbers}, judge_ends

    def _box(self, tree: Any) -> sandbox.Box:
        """One of the lane's boxes, by its tree (None: the main one); never one the judge made."""
        if tree is None:
            return self.box
        for box in (self.box, self.second):
            if box is not None and type(tree) is str and tree == str(box.tree):
                return box
        raise LaunchError(f"no box over {tree!r}")

    def _start(self, chosen: sandbox.Box, argv: Any, env: Any) -> int:
        if self.pending is None:
            raise LaunchError("start before pipes")
        if type(argv) is not list or not argv or not all(type(a) is str for a in argv):
            raise LaunchError("argv is a list of strings")
        if type(env) is not dict or not all(type(v) is str for v in env.values()):
            raise LaunchError("env maps names to strings")
        ends = self.pending.worker_ends
        keep = (ends["to_worker"], ends["from_worker"], ends["status"])
        box = dataclasses.replace(
            chosen, keep_fds=keep, status_fd=ends["status"], judge_package=False
        )
        try:
            with sandbox.wrapped(box, argv) as (boxed, fds):
                proc = subprocess.Popen(
                    boxed,
                    pass_fds=fds,
                    stdin=ends["boot"],
                    stdout=subprocess.DEVNULL,
                    stderr=ends["stderr"],
                    env=worker_env(env, self.environ),
                    cwd=box.tree,
                )
        finally:
            self._drop_pending()
        ident = len(self.procs) + 1
        self.procs[ident] = proc
        return ident

    def _drop_pending(self) -> None:
        if self.pending is not None:
            for fd in self.pending.worker_ends.values():
                os.close(fd)
            self.pending = None


def worker_env(asked: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """Pure: a worker's environment: the lane's passed names, and of the judge's request
    only protocol.LAUNCHER_ASKED, a hash seed only in digits.

    bwrap runs unboxed with it: LD_PRELOAD, a locale path or any other name the
    loader or libc reads would run or read judge-chosen files outside every box.
    """
    env = {k: environ[k] for k in protocol.WORKER_PASSED_ENV if k in environ}
    env.update((k, v) for k, v in asked.items() if k in protocol.LAUNCHER_ASKED)
    if not env.get("PYTHONHASHSEED", "0").isdigit():
        raise LaunchError("PYTHONHASHSEED is not a number")
    return env


@contextlib.contextmanager
def serving(
    box: sandbox.Box | None, environ: Mapping[str, str], second: sandbox.Box | None = None
) -> Iterator[Launcher | None]:
    """A launcher for one judge's pytest when its workers are boxed; None when they are not."""
    if box is None:
        yield None
        return
    launcher = Launcher(box, environ, second)
    launcher.start()
    try:
        yield launcher
    finally:
        launcher.close()


# --- the judge's side ----------------------------------------------------------------


class Client:
    """The judge's end of the launcher's socket (protocol.LAUNCHER_ENV names its number)."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.lock = threading.Lock()

    def _ask(self, request: Mapping[str, Any], nfds: int = 0) -> tuple[dict[str, Any], list[int]]:
        with self.lock:
            try:
                self.sock.send(json.dumps(request).encode())
                data, fds, _, _ = socket.recv_fds(self.sock, _MAX_MESSAGE, max(nfds, 1))
            except OSError as exc:
                raise LaunchError(f"the launcher is gone: {exc}") from None
        if not data:
            raise LaunchError("the launcher is gone")
        reply = json.loads(data)
        if "error" in reply:
            for fd in fds:
                os.close(fd)
            raise LaunchError(str(reply["error"]))
        return reply, fds

    def pipes(self) -> tuple[dict[str, int], tuple[int, int]]:
        """The judge's ends of a new worker's pipes by name, and the worker's two numbers."""
        reply, fds = self._ask({"op": "pipes"}, len(PIPES))
        if len(fds) != len(PIPES):
            for fd in fds:
                os.close(fd)
            raise LaunchError("the launcher sent the wrong pipes")
        numbers = reply["worker_fds"]
        return dict(zip(PIPES, fds, strict=True)), (int(numbers[0]), int(numbers[1]))

    def start(
        self, argv: Sequence[str], env: Mapping[str, str], tree: str | None = None
    ) -> Launched:
        """The worker on the last pipes(); its stderr is the pipe named "stderr" there.

        `tree`: the box over that tree (the differential's), else the main one.
        """
        reply, _ = self._ask({"op": "start", "argv": list(argv), "env": dict(env), "tree": tree})
        return Launched(self, int(reply["id"]))


class Launched:
    """A worker the launcher started, as much of subprocess.Popen as the judge uses."""

    def __init__(self, client: Client, ident: int) -> None:
        self.client, self.ident = client, ident
        self.returncode: int | None = None

    def _op(self, op: str, **more: Any) -> int | None:
        if self.returncode is not None:
            return self.returncode
        reply, _ = self.client._ask({"op": op, "id": self.ident, **more})
        code = reply.get("returncode")
        self.returncode = None if code is None else int(code)
        return self.returncode

    def poll(self) -> int | None:
        return self._op("poll")

    def wait(self, timeout: float | None = None) -> int:
        code = self._op("wait", timeout=timeout)
        if code is None:
            raise subprocess.TimeoutExpired("worker", timeout or 0)
        return code

    def kill(self) -> None:
        self._op("kill")
