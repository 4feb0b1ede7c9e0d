"""The judge's side of the oracle's boundary: stand-in modules and handles for the code under test.

Loaded into the judge's pytest (`-p patchjudge.boundary.standin`) when the gate sets
$PATCHJUDGE_ORACLE. Importing a name the tested tree provides gives a
stand-in module whose attributes live in a worker process (worker.py, one
for the run's property modules); everything the worker sends is decoded by
wire.py and checked here: a reply must answer the call in flight, a judge object it
asks for must be one the judge gave it and the operation one of JUDGE_OPS,
with data only; a handle is an id into its table and nothing more. A
worker that crashes, stalls past the per-call deadline, sends what wire.py
refuses or breaks the protocol is killed, and the property that was running
fails with the reason, whatever the property did with the error.

Imported by the plugin named before it (preload.py, review_phase.py), never
assertion-rewritten by pytest from source (PYTEST_DONT_REWRITE: its asserts are
type checks no report reads).
"""

from __future__ import annotations

import abc
import atexit
import builtins
import collections
import contextlib
import copy
import datetime
import dis
import functools
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import io
import itertools
import marshal
import operator
import os
import pickle
import secrets
import select
import subprocess
import sys
import threading
import types
import warnings
import weakref
import zoneinfo
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest
from _pytest.compat import ascii_escaped

from patchjudge import failure, pytest_plugin
from patchjudge.boundary import evaluate, launcher, loops, nesting, protocol, sandbox, wire
from patchjudge.boundary.protocol import ARGUMENT, BUILTIN, HANDLE, JUDGE_FN, JUDGE_OBJ, Cause

ENV = protocol.ORACLE_ENV
wire.ZONES_BY_KEY = True  # this is the judge: its zones cross by key (wire._zone_args)
wire.PLAIN_SUBCLASSES = True  # and its plain subclasses of a stdlib value as values (wire._plain)
# Per call, counted while the worker has the turn (not while a judge function runs).
DEFAULT_CALL_TIMEOUT_S = protocol.DEFAULT_CALL_TIMEOUT_S
# What the judge keeps of one worker's stderr (its prints): the rest is counted, not kept,
# so a worker that writes a GiB there cannot fill the judge's capture file (issue 18).
STDERR_KEPT = 1 << 20
# The operations on a handle whose answer the code's own dunders may give (issue 18): the
# judge records each it sends, per test, in its own process (the worker's record is a claim).
DUNDER_OPS = protocol.DUNDER_OPS
# Never catchable in the property: from the code under test they fail it (issue 18).
_INTERRUPTS = (KeyboardInterrupt, GeneratorExit, SystemExit)
# The judge's test tools stay the judge's even where the tree provides them:
# property files import them to judge with, not as code under test.
JUDGE_TOOLS = frozenset(
    {"pytest", "_pytest", "hypothesis", "_hypothesis_pytestplugin", "_hypothesis_globals",
     "_hypothesis_ftz_detector", "coverage"}
)  # fmt: skip


class WorkerFailure(Exception):
    """The worker could not answer: the property that was running fails with this reason.

    `incident` is the reason as data: the lane reads it from the "worker_failure"
    event, never from this exception's text (None: not a worker's failure).
    """

    def __init__(self, reason: protocol.Incident | str) -> None:
        self.incident = reason if isinstance(reason, protocol.Incident) else None
        text = reason if isinstance(reason, str) else failure.worker_text(*reason)
        super().__init__(text)


# How to start a worker: the declared record, encoded and decoded in protocol.py only.
Spec = protocol.WorkerSpec


@dataclass
class _Frame:
    """One call in flight: the judge's exceptions its callbacks raised, which it may name."""

    ident: int
    raised: dict[int, BaseException] = field(default_factory=dict)
    call: tuple[Any, ...] | None = None  # (target, args, kwargs) of a call
    # What the judge's functions raised that is the judge's verdict (an assert, pytest.fail,
    # assume, the property's own exception), by token, until it comes back to the judge.
    verdicts: dict[int, str] = field(default_factory=dict)
    items: list[Any] | None = None  # a batch's items as they arrive (ITEMS messages)
    limit: int = 0  # how many the batch asked for
    plain: bool = False  # a counted loop's batch: it ends after an item that is not data
    kept: list[Any] | None = None  # a kept CALL_METHOD's attribute, once it has come back
    size: int = 0  # their bytes
    nest: int = 0  # a NEST's calls: its OK is their results and a later call's error
    drain: bool = False  # a call asked to drain its result (protocol.DRAIN)
    # Its result once its OK said it was drained: the batch's items and end follow.
    drained: Any = None


# A nested call's later call, answered: (its callee, its argument, its result, its error).
_Step = tuple[Any, Any, Any, BaseException | None]
_Ahead = tuple[
    types.FrameType,
    "loops.CountedRead",
    int,
    collections.deque[tuple[int, Any]],
    tuple[int, BaseException] | None,
]


class Worker:
    """One worker process and the judge's side of its protocol."""

    def __init__(self, spec: Spec, label: str, incidents: list[protocol.Incident]) -> None:
        self.spec, self.label, self.incidents = spec, label, incidents
        self.proc: subprocess.Popen[bytes] | launcher.Launched | None = None
        self.fd_in = self.fd_out = -1
        self.status_fd = -1  # bwrap's status pipe, read end (-1: unboxed)
        self.buffer = bytearray()
        self.failure: protocol.Incident | None = None
        self.frames: list[_Frame] = []
        self.next_id = 1
        self.proxies: weakref.WeakValueDictionary[int, HandleBase] = weakref.WeakValueDictionary()
        self.counts: dict[int, int] = {}
        self.released: list[tuple[int, int]] = []
        self.exception_classes: dict[tuple[str, str], type] = {}
        self.id_texts: dict[int, str] = {}  # handle id -> its parametrize id (enum members)
        # Handle id -> the metaclass a class of the code's claims (protocol.METACLASSES).
        self.metaclasses: dict[int, type] = {}
        self.shapes: dict[int, type[HandleBase]] = {}  # a sequence's or mapping's handle class
        # Handle id -> the one view of an enum member with a data value (an IntEnum's):
        # a member is a singleton, `event.code is Codes.CLOSED` (issue 17).
        self.enum_views: dict[int, Any] = {}
        self.packages: dict[int, bool] = {}
        self.modules: dict[str, Handle] = {}  # module name -> its handle, for stand-in modules
        # The worker's builtins.eval, exec and compile, as handles (evaluate.py), once each.
        self.evaluators: dict[str, Handle] = {}
        # Judge functions given to this worker, by the id it may ask for: kept for the
        # worker's life, since a lazy iterator calls its predicate after the call returned.
        self.functions: dict[int, Callable[..., Any]] = {}
        self.function_ids: dict[int, int] = {}
        # One of them may run the judge's Python when the worker asks it for something (not
        # a sentinel `object()` or a builtin class): then not between a counted loop's steps.
        self.judge_code = False
        # The same, but a stdlib BytesIO or StringIO too (its methods are C): the judge's
        # Python may then run in a call and rebind a name the property loads after it.
        self.judge_python = False
        # A nested call's later calls, answered already (call_nested), by thread: the next
        # handle call the thread makes from that frame takes the next one.
        self.nests: dict[int, tuple[types.FrameType, collections.deque[_Step]]] = {}
        # The node id running now: a worker started lazily mid-test measures it from its start.
        self.context: str | None = None
        # Round trips by kind (a request's op, "callback" for the worker's): a figure (issue 20).
        self.requests: dict[str, int] = {}
        # Handle id -> its stdlib iterator type's name: `iter` and `len` answered here.
        self.iterators: dict[int, str] = {}
        # Handle id -> the hash the worker sent with it as a key or member (wire `k`): the
        # judge's dict is built from the worker's data without a round trip (issue 17).
        self.hashes: dict[int, int] = {}
        # Fetched ahead for an iterator being drained: its items, then how it ended.
        self.fetched: dict[int, collections.deque[Any]] = {}
        self.ends: dict[int, BaseException] = {}
        self.drain: int | None = None  # the iterator whose consumer takes every item
        # A counted loop's reads fetched ahead (read_item): its frame, the read's site,
        # the handle's id, (key, item) not yet read, then how it ended (key, error) or None.
        self.ahead: _Ahead | None = None
        self.ahead_thread = 0  # the thread whose loop that is
        # A held list's iterator just made by a GET_ITER (_held_iter): the frame, the
        # GET_ITER's offset, the iterator and the thread. A counted read of a loop over
        # that list takes its keys from it; any request but the loop's reads lets it go.
        self.held_iter: tuple[types.FrameType, int, Any, int] | None = None
        # (handle id, its iterator's id) when `iter(handle)` just gave a stdlib iterator:
        # list(obj) asks obj, not the iterator, for the hint that says it drains.
        self.last_iter: tuple[int, int] | None = None
        self.received = 0  # the last payload's bytes
        # Handle id -> the class the worker says it is (asked once; a claim, issue 18).
        self.claimed: dict[int, str] = {}
        # Handle id -> its tzinfo stand-in, one each, so `dt.tzinfo is tz` holds (issue 17).
        self.tzinfos: weakref.WeakValueDictionary[int, TzinfoView] = weakref.WeakValueDictionary()
        # A stored method's stand-in (id of it) -> its receiver and name until it is called,
        # then -> what the worker read (StoredMethod below), kept while the stand-in lives.
        self.stored: dict[int, tuple[Handle, str]] = {}
        self.kept: dict[int, Any] = {}
        # Link id -> [the judge's container the code kept a copy of, its snapshot] (protocol.py,
        # "links"): before each request the ones that changed go to the worker (issue 17).
        self.links: dict[int, list[Any]] = {}
        self.unlinks: list[int] = []  # links the judge refused or let go: said in the next SYNC
        # Calls whose results the test's frame discards, not sent yet (protocol.SEQ): each a
        # CALL's or CALL_METHOD's fields after its kind; the frame; a SEQ's deadline factor.
        self.pending: list[tuple[Any, ...]] = []
        self.pending_frame: types.FrameType | None = None
        self.pending_thread = 0  # the thread whose frame that is
        self.hook: Callable[[types.FrameType, str, Any], None] | None = None
        self.scale = 1
        # One round trip at a time: the property's own threads (a ThreadPoolExecutor calling
        # the library) share this worker and its pipe; a callback the worker asks for in a
        # round trip is served by the thread that asked, which may ask again (re-entrant).
        self.lock = threading.RLock()
        # Module name -> the registry the judge's "default" and "module" filters keep for
        # the code's warnings (_issue_warning): shown once a place, as in process.
        self.warned: dict[str, dict[str | tuple[str, type[Warning], int], int]] = {}
        self.seeds: tuple[tuple[int, int], ...] = ()  # the seedings last sent (protocol.SEEDS)
        # A worker of the first harness while the second runs in this process (issue 20):
        # a handle of it that a judge module kept from import refuses, and says so (STALE).
        self.retired = False
        self.environ: Changes = ()  # the property's changes to os.environ last sent (ENVIRON)
        # The review's schemata this worker compiles in their files' place (review_phase).
        self.schemata: tuple[protocol.Schema, ...] | None = None

    # --- lifetime ---
    def start(self) -> None:
        here = Path(__file__).resolve().parent
        client = _launcher()
        if client is not None:
            # The judge is boxed: the lane starts the worker's box, on pipes it made.
            try:
                ends, keep = client.pipes()
            except launcher.LaunchError as exc:
                raise self.fail(Cause.SANDBOX, str(exc)) from None
            to_worker_w, from_worker_r, boot_w = (
                ends["to_worker"],
                ends["from_worker"],
                ends["boot"],
            )
            self.status_fd = ends["status"]
        else:
            to_worker_r, to_worker_w = os.pipe()
            from_worker_r, from_worker_w = os.pipe()
            boot_r, boot_w = os.pipe()
            keep = (to_worker_r, from_worker_w)
        # No file, path or name of the judge's on the worker's command line (issue 18): it
        # reads its program from stdin (code compiled once here, or sources for another
        # interpreter) and renames it there under this run's names.
        flags = worker_flags(_pyvenv_cfg(self.spec.python))
        argv = [self.spec.python, *flags, "-c", BOOT]
        loader, program = worker_program(
            here,
            [str(keep[0]), str(keep[1]), self.spec.tree, os.pathsep.join(self.spec.pythonpath),
             os.pathsep.join(self.spec.coverage), "base" if self.spec.base else ""],
            secrets.token_bytes(16),
            compiled=same_interpreter(self.spec.python),
            schemata=self.schemata,
        )  # fmt: skip
        home = Path(self.spec.home)
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        if self.spec.shape == "script":
            # The second harness shares no start-up with the first: a script by path.
            script = home / f"{secrets.token_hex(4)}.py"
            script.write_bytes(loader + SCRIPT_START.encode())
            argv = [self.spec.python, *flags, str(script)]
        else:
            loader += STDIN_START.encode()
            program = b"%08d" % len(loader) + loader + program
        # From the environment before any test ran: what a test changed crosses as a change
        # (ENVIRON), which the worker can undo when the test restores it.
        env = {k: _ENVIRON_BASE[k] for k in protocol.WORKER_PASSED_ENV if k in _ENVIRON_BASE}
        env.update(
            HOME=str(home),
            TMPDIR=str(home / "tmp"),
            PYTHONHASHSEED=self.spec.hash_seed,
        )
        if client is not None:
            try:
                self.proc = client.start(argv, env, self.spec.tree)
            except launcher.LaunchError as exc:
                for fd in (to_worker_w, from_worker_r, boot_w, ends["stderr"]):
                    os.close(fd)
                raise self.fail(Cause.SANDBOX, str(exc)) from None
            stderr, owned = ends["stderr"], True
        else:
            stderr, owned = self._popen(argv, env, keep, boot_r), False
            os.close(boot_r)
            os.close(keep[0])
            os.close(keep[1])
        threading.Thread(target=_drain, args=(stderr, STDERR_KEPT, owned), daemon=True).start()
        _started.append(self)
        # Larger than a pipe holds: written while the worker reads (it reads nothing else first).
        threading.Thread(target=_write_all, args=(boot_w, program), daemon=True).start()
        if self.status_fd >= 0:
            os.set_blocking(self.status_fd, False)
        self.fd_out, self.fd_in = to_worker_w, from_worker_r
        os.set_blocking(self.fd_in, False)  # _receive waits in select, with the call's deadline

    def _popen(
        self, argv: list[str], env: dict[str, str], keep: tuple[int, int], boot_r: int
    ) -> int:
        """The worker started here, boxed when the spec says so: its stderr's descriptor."""
        box = None
        status_w = -1
        if self.spec.box is not None:
            self.status_fd, status_w = os.pipe()
            box = sandbox.Box(
                tree=Path(self.spec.box.tree),
                home=Path(self.spec.box.home),
                readonly=tuple(Path(p) for p in self.spec.box.readonly),
                data=tuple(
                    (Path(a), Path(b))
                    for a, b in zip(self.spec.box.data_from, self.spec.box.data_at, strict=True)
                ),
                keep_fds=(*keep, status_w),
                status_fd=status_w,
                # Its sources come down stdin: patchjudge's own package is not its to see.
                judge_package=False,
            )
        # Same process group as the judge: a lane timeout kills both, nothing escapes it.
        with sandbox.wrapped(box, argv) as (boxed, fds):
            proc = self.proc = subprocess.Popen(
                boxed,
                pass_fds=(*keep, *fds),
                stdin=boot_r,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.spec.tree,
            )
        if status_w >= 0:
            os.close(status_w)
        assert proc.stderr is not None
        return proc.stderr.fileno()

    def close(self) -> None:
        if self.proc is None:
            return
        if self.failure is None:
            with contextlib.suppress(WorkerFailure):
                self._send(wire.encode((protocol.BYE,)))
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.fd_in, self.fd_out, *((self.status_fd,) if self.status_fd >= 0 else ())):
            os.close(fd)
        self.status_fd = -1
        self.proc = None

    def fail(self, cause: Cause, detail: str) -> WorkerFailure:
        """Kill the worker; every later call on it fails with the same reason."""
        if self.failure is None:
            self.failure = protocol.Incident(cause, self.label, detail)
            self.incidents.append(self.failure)
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return WorkerFailure(self.failure)

    # --- calls ---
    def request(
        self, op: str, *args: Any, into: list[Any] | None = None, kept: list[Any] | None = None
    ) -> Any:
        with self.lock:
            return self._request(op, *args, into=into, kept=kept)

    def _request(
        self, op: str, *args: Any, into: list[Any] | None = None, kept: list[Any] | None = None
    ) -> Any:
        if self.retired:
            STALE[0] += 1
            raise WorkerFailure(protocol.Incident(Cause.GONE, self.label, "closed"))
        if _state is not None and not _state.nodeid and op not in _OWN_REQUESTS:
            _state.asked_from(sys._getframe(1))
        if self.failure is not None:
            self.incidents.append(self.failure)
            raise WorkerFailure(self.failure)
        # The judge's own slip, never sent: the worker would refuse it (protocol.py).
        if op not in protocol.REQUESTS or (op == protocol.OP and args[0] not in protocol.OPERATORS):
            raise protocol.ProtocolError(f"no request {op!r} {args[:1]!r} in the protocol")
        if self.pending and op != protocol.SEQ and threading.get_ident() == self.pending_thread:
            # What was discarded runs first, and what it raises is raised here: in the
            # thread that kept it, not in another thread of the test's.
            self.flush()
        if self.proc is None:
            self.start()
            if self.context is not None and op != protocol.CONTEXT:
                self.request(protocol.CONTEXT, self.context)
        unclaimed: list[Handle] = []
        if op == protocol.OP and args[0] in DUNDER_OPS and _state is not None:
            unclaimed = self._note_operation(str(args[0]), (args[1], *args[2]))
        drain = op in (protocol.CALL, protocol.CALL_METHOD) and args[-1] is protocol.DRAIN
        call = (
            args[:3]
            if op == protocol.CALL
            else (args[0], *args[2:4])  # a kept call's KEEP is no argument
            if op == protocol.CALL_METHOD
            else (args[0], (args[2],), {})  # the value the code may keep (a link)
            if op == protocol.SETATTR
            else (args[1], tuple(args[2]), {})
            if op == protocol.OP and type(args[2]) is tuple
            else None
        )
        frame = _Frame(self.next_id, call=call, items=into, kept=kept)
        if op == protocol.BATCH:
            frame.limit, frame.plain = args[1], args[2]
        elif op == protocol.GETITEMS:
            frame.limit, frame.plain = len(args[1]), True
        elif op == protocol.NEST:
            frame.nest = len(args[0])
        frame.drain = drain
        self.next_id += 1
        self.frames.append(frame)
        kind = str(args[0]) if op == protocol.OP else op
        self.requests[kind] = self.requests.get(kind, 0) + 1
        if op != protocol.BATCH:
            self.drain = None  # anything else the worker is asked ends a drain (issue 20)
        if op != protocol.GETITEMS:
            self.held_iter = None  # no loop over a held list reads between its reads
        if op != protocol.GETITEMS and self.ahead_thread == threading.get_ident():
            # Reads fetched ahead: the loop was left. Another thread's request leaves them:
            # they were read before it, an order bare can take too (reading them again
            # would run the code's `__getitem__` twice, which bare never does).
            self.ahead = None
        if self.last_iter is not None and not (
            op == "op" and args[0] in ("len", "typename") and _ident(args[1]) == self.last_iter[0]
        ):
            self.last_iter = None  # only the consumer's own `len` may come between
        try:
            try:
                payload = wire.encode((protocol.QUERY, frame.ident, op, *args), self._to_ref)
            except wire.WireError as exc:
                raise TypeError(f"cannot cross to the code under test: {exc}") from None
            synced = self._sync() if self.links or self.unlinks else None
            seeded = self._seeded() if _PRNG.seeds != self.seeds else None
            environ = self._environ() if _environ_changes() != self.environ else None
            if not (unclaimed or self.released or synced or seeded or environ):
                self._send(payload)  # the common request: one frame, nothing to ask first
                return self._await(frame, call)
            frames = [payload] if seeded is None else [seeded, payload]
            claims = self._ask_claims(unclaimed, frames)
            if environ:
                frames.insert(0, environ)
            if synced:
                frames.insert(0, synced)  # the worker's copies as the judge's are, first
            if self.released:
                released, self.released = self.released, []
                frames.insert(0, wire.encode((protocol.RELEASE, tuple(released))))
            self._send(*frames)
            self._take_claims(claims, str(args[0]) if op == protocol.OP else op)
            return self._await(frame, call)
        except (StopIteration, StopAsyncIteration) as exc:
            if (
                op in (protocol.BATCH, protocol.GETITEMS)
                or (op == protocol.OP and args[0] == "next")
                or (op == protocol.CALL_METHOD and args[1] in _STEP_METHODS)
            ):
                raise  # the end of an iteration the judge is stepping
            # Anywhere else it would silently end the judge's iteration around the call
            # (`all(map(f, xs))` is then True): as PEP 479 does for a generator body.
            kind = _kind(args[0][0][0], args[0][0][1:]) if op == protocol.SEQ else _kind(op, args)
            raise RuntimeError(
                f"the code under test raised {type(exc).__name__} out of a {kind}"
            ) from exc
        finally:
            self.frames.pop()
            # Issue 18: the library may not swallow the judge's verdict on its behalf.
            for verdict in frame.verdicts.values():
                self.incidents.append(protocol.Incident(Cause.VERDICT, self.label, verdict))

    def _note_operation(self, op: str, operands: tuple[Any, ...]) -> list[Handle]:
        """Record, judge side, that the code answers `op` on its objects in the test running now.

        The operation and the test are the judge's own knowledge; the class is
        the worker's word (`typename`), asked once a handle, kept as a claim.
        Returns the handles whose claim is still to be asked (_ask_claims).
        """
        assert _state is not None
        unclaimed: list[Handle] = []
        for operand in operands:
            if (
                type(operand) not in HANDLE_TYPES
                or object.__getattribute__(operand, "_pj_worker") is not self
            ):
                continue
            claim = self.claimed.get(object.__getattribute__(operand, "_pj_id"))
            if claim is None:
                unclaimed.append(operand)
            else:
                _state.operations.setdefault(_state.nodeid, set()).add((op, claim))
        return unclaimed

    def _ask_claims(self, unclaimed: list[Handle], frames: list[bytes]) -> list[tuple[int, int]]:
        """`typename` queries for `unclaimed`, put before the operation's in `frames`.

        They go in the operation's write (issue 17: dateutil asked 5,610 of them, each a
        round trip of its own): the worker answers in order, so each claim is read back
        before the operation runs, as when it was asked alone. -> (handle id, query id).
        """
        asked: list[tuple[int, int]] = []
        for operand in unclaimed:
            ident = object.__getattribute__(operand, "_pj_id")
            if ident in self.claimed or any(ident == seen for seen, _ in asked):
                continue
            query = self.next_id
            self.next_id += 1
            self.requests["typename"] = self.requests.get("typename", 0) + 1
            message = (protocol.QUERY, query, protocol.OP, "typename", operand, ())
            frames.insert(-1, wire.encode(message, self._to_ref))
            asked.append((ident, query))
        return asked

    def _take_claims(self, asked: list[tuple[int, int]], op: str) -> None:
        assert _state is not None or not asked
        for ident, query in asked:
            frame = _Frame(query)
            self.frames.append(frame)
            try:
                said = self._await(frame, None)
            except WorkerFailure:
                raise
            except Exception:
                said = None
            finally:
                self.frames.pop()
            claim = self.claimed[ident] = said[:300] if type(said) is str else "?"
            if _state is not None:
                _state.operations.setdefault(_state.nodeid, set()).add((op, claim))

    def _await(self, frame: _Frame, call: tuple[Any, ...] | None) -> Any:
        while True:
            # A batch's worker holds its items up to BATCH_FLUSH_S past its last write: waited
            # too, so a step that takes less than the deadline is not taken for a stall.
            message = self._receive(protocol.BATCH_FLUSH_S if frame.items is not None else 0.0)
            try:
                kind = protocol.check(message, protocol.JUDGE)
            except protocol.ProtocolError as exc:
                raise self.fail(Cause.PROTOCOL, f"{exc}") from None
            ident = message[1]
            if kind in (protocol.OK, protocol.ERR) and ident != frame.ident:
                raise self.fail(Cause.PROTOCOL, f"forged a reply to call {ident}, not asked")
            done, result = _ANSWERS[kind](self, frame, call, *message[1:])
            if done:
                return result

    def _on_ok(self, frame: _Frame, call: Any, ident: int, result: Any, changed: Any) -> Any:
        if frame.drain:
            return self._on_drain_ok(frame, call, result, changed)
        if frame.kept is not None:
            # (attribute, KEPT_OK, result) or (attribute, KEPT_ERR, error): protocol.KEEP.
            if not (type(result) is tuple and len(result) == 3):
                raise self.fail(Cause.PROTOCOL, "a kept method call's answer is not a triple")
            attribute, status, result = result
            frame.kept.append(attribute)
            if status == protocol.KEPT_ERR:
                raise self._exception(result)
            if status != protocol.KEPT_OK:
                raise self.fail(Cause.PROTOCOL, "a kept method call's answer has no outcome")
        if changed != ():
            self._changed(call, changed)
        if frame.nest:
            if not protocol.nest_answered(frame.nest, result):
                raise self.fail(Cause.PROTOCOL, "a nested call's answer is not one")
            results, error = result
            return True, (results, None if error is None else self._exception(error))
        return True, result

    def _on_drain_ok(self, frame: _Frame, call: Any, result: Any, changed: Any) -> Any:
        """A DRAIN call's OK (result, drained), then, when drained, its batch's end."""
        if frame.drained is not None:  # the batch's end: its items stand as a BATCH's would
            if changed != ():
                self._changed(None, changed)
            return True, self._drained(frame, None)
        if not (type(result) is tuple and len(result) == 2 and type(result[1]) is bool):
            raise self.fail(Cause.PROTOCOL, "a drained call's answer is not (result, drained)")
        result, drained = result
        if changed != ():
            self._changed(call, changed)  # before any step runs, as bare's call returned first
        if not drained:
            return True, result
        ident = _ident(result)
        if (
            ident is None
            or ident not in self.iterators
            or self.counts.get(ident) != 1
            or ident in self.fetched
            or ident in self.ends
        ):
            raise self.fail(Cause.PROTOCOL, "drained a result that is no new iterator")
        frame.drained, frame.items, frame.limit = result, [], BATCH_ITEMS
        return False, None

    def _drained(self, frame: _Frame, end: BaseException | None) -> Any:
        """The drained iterator's items fetched, and its end if it came: next_item's to take."""
        ident = _ident(frame.drained)
        assert ident is not None and frame.items is not None
        if not frame.items and end is None:
            raise self.fail(Cause.PROTOCOL, "a batch with no item and no end")
        self.fetched[ident] = collections.deque(frame.items)
        if end is not None:
            self.ends[ident] = end  # raised at the `next` that would have raised it
        return frame.drained

    # --- links (protocol.py): the judge's containers the code kept ---
    def _changed(self, call: Any, changed: Any) -> None:
        """An OK's `changed`: the call's arguments as the code left them, and the linked
        copies the code changed since (or let go)."""
        if type(changed) is not tuple:
            raise self.fail(Cause.PROTOCOL, "changed arguments are not a tuple")
        links = [e for e in changed if type(e) is tuple and len(e) == 3 and e[0] is None]
        arguments = tuple(e for e in changed if not (type(e) is tuple and e[:1] == (None,)))
        if arguments:
            if call is None:
                raise self.fail(Cause.PROTOCOL, "changed arguments of a request with none")
            self._copy_back(call, arguments)
        for _, link, data in links:
            self._link_changed(link, data)

    def _link(self, link: Any, original: Any) -> None:
        """The worker keeps its copy of `original`: linked, if it is the judge's own plain
        container and the caps allow; else the worker is told to let the link go."""
        if type(link) is not int or link in self.links or link in self.unlinks:
            raise self.fail(Cause.PROTOCOL, f"linked a container as {link!r} twice")
        snapshot = self._snapshot(original) if _linkable(original) else None
        if snapshot is None or len(self.links) >= protocol.LINKS:
            self.unlinks.append(link)
            if _linkable(original) and _state is not None:
                _state.unlinked.append(type(original).__name__)
            return
        self.links[link] = [original, snapshot]

    def _snapshot(self, value: Any) -> bytes | None:
        if type(value) is tuple:
            return b""  # linked for its parts' identity alone, never changed
        try:
            data = wire.encode(value, self._to_ref)
        except (wire.WireError, RecursionError):
            return None
        return data if len(data) <= protocol.LINK_BYTES else None

    def _link_changed(self, link: Any, data: Any) -> None:
        """The worker's copy changed (merged into the judge's container) or was let go."""
        entry = self.links.get(link) if type(link) is int else None
        if entry is None:
            if link in self.unlinks:
                return  # refused here; the worker has not read the SYNC saying so yet
            raise self.fail(Cause.PROTOCOL, f"changed link {link!r}, never made")
        if data is None:
            del self.links[link]
            return
        original = entry[0]
        if type(data) is not type(original) or type(original) is tuple:
            raise self.fail(Cause.PROTOCOL, f"changed link {link} to another type")
        if _state is not None and _state.drawn.get(id(original)) is original:
            # Issue 18: the code never overwrites what hypothesis drew; it is reported.
            if not _same(original, data):
                _state.mutations.append("a kept argument")
            return
        self._keeps_functions(original, data, "a kept container")
        wire.merge(original, data)
        entry[1] = self._snapshot(original) or b""

    def _keeps_functions(self, original: Any, data: Any, what: str) -> None:
        """The `setattr` rule for a container's items: the code changes the judge's data,
        never its functions or objects. A change that replaces or drops one is refused."""
        where = functions_replaced(original, data)
        if where is not None:
            raise self.fail(
                Cause.PROTOCOL,
                f"{what}: replaced a function or object of the judge's at {where}; the code"
                " may change the data in a container the property passed, not its functions",
            )

    def _sync(self) -> bytes | None:
        """The SYNC for the next request: each linked container that changed since it was
        last sent, and each link let go (the judge alone holds the container, or refused)."""
        out: list[Any] = [(link, None) for link in self.unlinks]
        self.unlinks = []
        for link in list(self.links):
            entry = self.links[link]
            if sys.getrefcount(entry[0]) <= 2:  # the link's and the argument's: no one else
                del self.links[link]
                out.append((link, None))
                continue
            if type(entry[0]) is tuple:
                continue
            snapshot = self._snapshot(entry[0])
            if snapshot is None:  # grown past the cap: the worker's copy stays as it was
                del self.links[link]
                out.append((link, None))
                if _state is not None:
                    _state.unlinked.append(type(entry[0]).__name__)
            elif snapshot != entry[1]:
                entry[1] = snapshot
                out.append((link, entry[0]))
        if not out:
            return None
        return wire.encode((protocol.SYNC, tuple(out)), self._to_ref)

    def _seeded(self) -> bytes:
        """The SEEDS for the next request: the seedings hypothesis has in force now."""
        self.seeds = _PRNG.seeds
        return wire.encode((protocol.SEEDS, self.seeds))

    def _environ(self) -> bytes:
        """The ENVIRON for the next request: the property's changes to os.environ now."""
        self.environ = _environ_changes()
        return wire.encode((protocol.ENVIRON, self.environ))

    def _on_err(self, frame: _Frame, call: Any, ident: int, error: Any) -> Any:
        if frame.drained is not None:  # a drained call's batch ended by what a step raised
            return True, self._drained(frame, self._exception(error))
        raise self._exception(error)

    def _on_items(self, frame: _Frame, call: Any, ident: int, *items: Any) -> Any:
        if frame.items is None:
            raise self.fail(Cause.PROTOCOL, "items for a call that is not a batch")
        if ident != frame.ident:
            raise self.fail(Cause.PROTOCOL, f"items for call {ident}, not asked")
        frame.size += self.received
        if len(frame.items) + len(items) > frame.limit or frame.size > BATCH_BYTES:
            raise self.fail(Cause.PROTOCOL, "a batch larger than asked")
        # A counted batch ends at its first item that is not data: none may follow it.
        if frame.plain and not all(map(protocol.plain, (*frame.items[-1:], *items[:-1]))):
            raise self.fail(Cause.PROTOCOL, "a counted batch went on past an item that is not data")
        frame.items += items
        return False, None

    def _on_callback(self, frame: _Frame, call: Any, *fields: Any) -> Any:
        self.requests["callback"] = self.requests.get("callback", 0) + 1
        self._callback(*fields)
        return False, None

    def _on_judge_op(self, frame: _Frame, call: Any, *fields: Any) -> Any:
        self.requests["callback"] = self.requests.get("callback", 0) + 1
        self._judge_op(*fields)
        return False, None

    def _on_judge_method(self, frame: _Frame, call: Any, *fields: Any) -> Any:
        self.requests["callback"] = self.requests.get("callback", 0) + 1
        self._judge_method(*fields)
        return False, None

    def _on_warn(self, frame: _Frame, call: Any, ident: int, *fields: Any) -> Any:
        """A warning the code issued, issued here under the judge's filters (issue 17)."""
        self.requests["warning"] = self.requests.get("warning", 0) + 1
        category, text, module, filename, lineno = fields
        builtin = getattr(builtins, getattr(category, "__name__", ""), None) is category
        if not (
            isinstance(category, type)
            and issubclass(category, Warning)
            and (builtin or category.__dict__.get("_pj_worker") is self)
            and type(text) is str
            and len(text) <= protocol.WARN_TEXT
            and all(type(n) is str and len(n) <= 300 for n in (module, filename))
            and type(lineno) is int
        ):
            raise self.fail(Cause.PROTOCOL, "sent a warning that is not one")
        own = (module, filename, lineno) == ("", "", protocol.AT_CALLER)
        if own:
            module, filename, lineno = _caller_location()
        issue = functools.partial(_issue_warning, category, self.warned, own=own)
        what = f"warning {category.__name__}"
        where = {"module": module, "filename": filename, "lineno": lineno}
        self._serve_judge(ident, what, issue, (text,), where)
        return False, None

    def _callback(self, ident: int, fn_id: Any, args: Any, kwargs: Any) -> None:
        fn = self.functions.get(fn_id) if type(fn_id) is int else None
        if fn is None:
            raise self.fail(Cause.PROTOCOL, f"asked to call judge function {fn_id!r}, not given")
        if type(args) is not tuple or type(kwargs) is not dict:
            raise self.fail(Cause.PROTOCOL, "a callback's arguments are not a tuple and a dict")
        self._serve_judge(ident, f"function {_name_of(fn)}", fn, args, kwargs, named=True)

    def _judge_op(self, ident: int, obj_id: Any, op: Any, args: Any) -> None:
        obj = self.functions.get(obj_id) if type(obj_id) is int else None
        if obj is None:
            raise self.fail(Cause.PROTOCOL, f"asked for judge object {obj_id!r}, not given")
        operation = JUDGE_OPS.get(op) if type(op) is str else None
        if operation is None or type(args) is not tuple:
            raise self.fail(Cause.PROTOCOL, f"asked a judge object for {op!r}")
        self._serve_judge(ident, f"{op} of {_name_of(obj)}", operation, (obj, *args), {})

    def _judge_method(self, ident: int, obj_id: Any, name: Any, args: Any, kwargs: Any) -> None:
        """protocol.JUDGE_METHOD: what a JUDGE_OP getattr and a CALLBACK of its result did."""
        obj = self.functions.get(obj_id) if type(obj_id) is int else None
        if obj is None:
            raise self.fail(Cause.PROTOCOL, f"asked for judge object {obj_id!r}, not given")
        if type(name) is not str or type(args) is not tuple or type(kwargs) is not dict:
            raise self.fail(
                Cause.PROTOCOL,
                "a judge method call that is not a name, a tuple and a dict",
            )
        self._serve_judge(ident, "", obj, args, kwargs, named=True, method=name)

    def _serve_judge(
        self,
        ident: int,
        what: str,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: Any,
        *,
        named: bool = False,
        method: str | None = None,
    ) -> None:
        """Run one of the judge's functions for the worker; what it raises goes back by token.

        `named`: an argument the function hands back crosses as "argument N", so the
        code gets its own object back (`key=lambda y: ("", y)`). `method`: `fn` is a
        judge object whose attribute of that name, read as a JUDGE_OP getattr reads
        it, is the function (protocol.JUDGE_METHOD); a failure is named as that
        request's or the call's, whichever failed.
        """
        try:
            if method is not None:
                what = f"getattr of {_name_of(fn)}"
                fn = _judge_getattr(fn, method)
                what = f"function {_name_of(fn)}"
            if _holds_worker_object((args, kwargs)):
                # SPEC: callbacks get data only; a handle is an object the code could make lie.
                incident = protocol.Incident(Cause.HANDLE_TO_JUDGE, self.label, what)
                self.incidents.append(incident)
                raise TypeError(failure.WORKER_TEXT[incident.cause].format(what).lstrip())
            result = fn(*args, **kwargs)
            if named:
                result = wire.returned_arguments(result, args, kwargs, _argument_ref)
        except BaseException as exc:
            token = self.next_id
            self.next_id += 1
            self.frames[-1].raised[token] = exc
            if _is_verdict(exc):
                self.frames[-1].verdicts[token] = (
                    f"{what} raised: {type(exc).__name__}: {_text(exc)}"
                )
            if type(exc).__module__ == "builtins" and isinstance(exc, Exception):
                args_ = exc.args if wire.is_data(exc.args) else (str(exc),)
                desc: tuple[Any, ...] = (protocol.ERROR_BUILTIN, token, type(exc).__name__, args_)
            else:
                desc = (protocol.ERROR_JUDGE, token, type(exc).__name__)
            self._reply(wire.encode((protocol.ERR, ident, desc)))
            return
        # As the worker does for a call: the list, dict and set arguments go back as the
        # function left them (`def f(o, p, acc): acc[0] += 1`), and the code's change.
        changed = _containers(args, kwargs) if named else ()
        try:
            payload = wire.encode((protocol.OK, ident, result, changed), self._to_ref)
        except wire.WireError as exc:
            token = self.next_id
            self.next_id += 1
            self.frames[-1].raised[token] = TypeError(str(exc))
            error = (protocol.ERROR_BUILTIN, token, "TypeError", (str(exc),))
            payload = wire.encode((protocol.ERR, ident, error))
        self._reply(payload)

    def _reply(self, payload: bytes) -> None:
        """A callback's reply, after the changes it made to os.environ (protocol.ENVIRON):
        the code it returns to goes on under them, as in process."""
        if _environ_changes() != self.environ:
            self._send(self._environ(), payload)
        else:
            self._send(payload)

    def _copy_back(self, call: tuple[Any, ...], mutated: Any) -> None:
        """The list, dict and set arguments the code changed in place, changed here too."""
        _, args, kwargs = call
        if type(mutated) is not tuple:
            raise self.fail(Cause.PROTOCOL, "changed arguments are not a tuple")
        for pair in mutated:
            if not (type(pair) is tuple and len(pair) in (2, 3)):
                raise self.fail(Cause.PROTOCOL, "a changed argument is not a pair")
            key, value = pair[:2]
            if type(key) is int and 0 <= key < len(args):
                original = args[key]
            elif type(key) is str and key in kwargs:
                original = kwargs[key]
            else:
                raise self.fail(Cause.PROTOCOL, f"changed argument {key!r} was not passed")
            if len(pair) == 3:
                self._link(pair[2], original)  # before the drawn rule: the judge's changes go
            if isinstance(original, _HELD_VIEWS) and type(value) is _data_type(original):
                _refill(original, value)  # the object's own container, as the code left it
                continue
            if (
                isinstance(original, _OWN_VIEWS)
                and isinstance(value, _OWN_VIEWS)
                and _data_type(value) is _data_type(original)
                and _owner(original) == _owner(value)
            ):
                _refill(original, value)  # a subclass of the code's, changed there (issue 17)
                continue
            if type(original) is not type(value) or type(original) not in wire.MERGEABLE:
                continue
            if _state is not None and _state.drawn.get(id(original)) is original:
                # Issue 18: a callee never overwrites what hypothesis drew; it is reported.
                if not _same(original, value):
                    _state.mutations.append(f"argument {key!r}")
                continue
            self._keeps_functions(original, value, f"argument {key!r}")
            # In place, keeping the judge's nested objects where they stand (wire.merge).
            wire.merge(original, value)

    def _exception(self, desc: Any, depth: int = 1) -> BaseException:
        if type(desc) is not tuple or not desc or type(desc[0]) is not str:
            return self.fail(Cause.PROTOCOL, "an error that is not described")
        kind = desc[0]
        if kind == protocol.ERROR_BUILTIN and len(desc) in (3, 4) and type(desc[1]) is str:
            if issubclass(getattr(builtins, desc[1], Exception), _INTERRUPTS):
                return self._interrupted(desc[1])
            return self._caused(_builtin_exception(desc[1], desc[2]), desc[3:], depth)
        if kind == protocol.ERROR_FOREIGN and len(desc) in (4, 5) and isinstance(desc[1], type):
            cls, instance, message = desc[1], desc[2], desc[3]
            if not issubclass(cls, BaseException) or not hasattr(cls, "_pj_worker"):
                return self.fail(Cause.PROTOCOL, "raised something that is not its exception")
            if not issubclass(cls, Exception):
                return self._interrupted(f"{cls.__module__}.{cls.__qualname__}")
            try:
                exc = cls(str(message))
            except TypeError:
                # A stdlib base whose __init__ wants its fields (json.JSONDecodeError's msg,
                # doc, pos): made without it; the fields are read from the worker's instance.
                exc = cls.__new__(cls, str(message))
                BaseException.__init__(exc, str(message))
            exc._pj_handle = instance  # type: ignore[attr-defined]
            return self._caused(exc, desc[4:], depth)
        if kind == protocol.ERROR_JUDGE and len(desc) == 2:
            raised = next((f.raised[desc[1]] for f in self.frames if desc[1] in f.raised), None)
            if raised is None:
                return self.fail(Cause.PROTOCOL, f"named judge exception {desc[1]!r}")
            for f in self.frames:
                f.verdicts.pop(desc[1], None)  # back to the judge: the property sees it
            return raised
        if kind == protocol.ERROR_UNCROSSABLE and len(desc) == 2:
            incident = protocol.Incident(Cause.UNCROSSABLE, self.label, str(desc[1])[:200])
            self.incidents.append(incident)
            return WorkerFailure(incident)
        return self.fail(Cause.PROTOCOL, f"an error of kind {kind!r}")

    def _caused(self, exc: BaseException, rest: tuple[Any, ...], depth: int) -> BaseException:
        """`raise exc from cause` in the worker: the cause's own stand-in as `__cause__`.

        Only a builtin or foreign error, to protocol.MAX_CAUSES in all: a judge
        function's exception never comes back as a cause (its verdict stays pending).
        """
        if not rest or isinstance(exc, WorkerFailure):
            return exc
        cause = rest[0]
        if depth >= protocol.MAX_CAUSES:
            return self.fail(Cause.PROTOCOL, "a chain of causes longer than the protocol's")
        if type(cause) is not tuple or not cause or cause[0] not in _CAUSES:
            return self.fail(Cause.PROTOCOL, "a cause that is not a builtin or foreign error")
        found = self._exception(cause, depth + 1)
        if isinstance(found, WorkerFailure) or not isinstance(found, Exception):
            return found
        exc.__cause__ = found
        return exc

    def _interrupted(self, name: str) -> WorkerFailure:
        """An interrupt from the code: the property fails even if it catches what is raised."""
        self.incidents.append(protocol.Incident(Cause.INTERRUPT, self.label, name))
        return WorkerFailure(self.incidents[-1])

    # --- references ---
    def _to_ref(self, obj: Any) -> wire.Ref | None:
        if type(obj) is wire.Ref:
            return obj  # an argument a callback handed back (_serve_judge)
        owner = _owner(obj)
        if owner is not None:
            worker, ident = owner
            if worker is not self:
                raise wire.WireError("a handle from an earlier worker (it failed and was replaced)")
            return wire.Ref(HANDLE, ident)
        if wire.data_base(type(obj)) is not None:
            return None  # the judge's own list (or other data) subclass: crosses as its data
        if isinstance(obj, types.ModuleType):
            raise wire.WireError(f"module {obj.__name__} (a judge-side module) cannot cross")
        name = protocol.builtin_name(obj)
        if name is not None:
            return wire.Ref(BUILTIN, 0, name)  # the worker's own `int`: `except ValueError` works
        # A judge object the worker may only ask for protocol operations (issue 17):
        # kept for the worker's life, like a function, since a lazy iterator uses it later.
        known = self.function_ids.get(id(obj))
        if known is None or self.functions.get(known) is not obj:
            known = self.next_id
            self.next_id += 1
            self.functions[known] = obj
            self.function_ids[id(obj)] = known
            self.judge_code = self.judge_code or not _runs_no_judge_code(obj)
            self.judge_python = self.judge_python or not (
                _runs_no_judge_code(obj) or type(obj) in (io.BytesIO, io.StringIO)
            )
        if _is_function(obj):
            return wire.Ref(JUDGE_FN, known)
        return wire.Ref(JUDGE_OBJ, known, judge_capabilities(obj))

    def _from_ref(self, ref: wire.Ref) -> Any:
        if ref.kind in (JUDGE_FN, JUDGE_OBJ):
            if ref.id in self.functions:
                return self.functions[ref.id]
            raise wire.WireError(f"judge object {ref.id} was never given to this worker")
        if ref.kind == ARGUMENT:
            return self._argument(ref.meta)
        if ref.kind == protocol.PART:
            return self._part(ref.meta, ref.data)
        if ref.kind == BUILTIN:
            found = getattr(builtins, ref.meta, None) if type(ref.meta) is str else None
            if found is None or protocol.builtin_name(found) != ref.meta:
                raise wire.WireError(f"no builtin {ref.meta!r}")
            return found
        if ref.kind != HANDLE:
            raise wire.WireError(f"reference of kind {ref.kind}")
        if ref.hash is not wire.NO_DATA:
            if type(ref.hash) is not int:
                raise wire.WireError("a key of the worker's without its hash")
            self.hashes[ref.id] = ref.hash
        meta, names = ref.meta, ()
        if _is_own_meta(meta):
            names, meta = meta[1], meta[2]
        if meta is not None:
            if _is_exception_meta(meta):
                return self._exception_class(ref.id, meta[1])
            if _is_iterator_meta(meta):
                self.iterators[ref.id] = meta[1]
            elif _is_enum_meta(meta):
                self.id_texts[ref.id] = meta[1]
                if ref.data is not wire.NO_DATA:
                    return self._enum_view(ref.id, ref.data, meta[2])
            elif _is_class_meta(meta):
                self.metaclasses[ref.id] = wire.CLASSES[meta[1]]
            elif meta == (protocol.META_HELD,) and type(ref.data) in _HELD_OF:
                view = _HELD_OF[type(ref.data)](ref.data)
                view.__dict__["_pj_handle"] = self._handle(ref.id)
                return view
            elif _is_pattern_meta(meta):
                self.id_texts[ref.id] = ascii_escaped(meta[1])
            elif _is_module_meta(meta):
                self.packages[ref.id] = meta[2]
            elif _is_shape_meta(meta):
                self.shapes[ref.id] = _SHAPES[meta]
            elif meta == (protocol.META_TZINFO,):
                return self._tzinfo(ref.id)
            else:
                raise wire.WireError("a handle with a description the judge does not know")
        if ref.data is not wire.NO_DATA:
            return _view(self._handle(ref.id), ref.data, names)
        return self._handle(ref.id)

    def _handle(self, ident: int) -> HandleBase:
        proxy = self.proxies.get(ident)
        if proxy is not None:
            self.counts[ident] += 1
            return proxy
        proxy = self.shapes.get(ident, Handle)._pj_make(self, ident)
        self.proxies[ident] = proxy
        self.counts[ident] = 1
        weakref.finalize(proxy, self._forget, ident)
        return proxy

    def _enum_view(self, ident: int, data: Any, cls: str) -> Any:
        """The same view each time: kept for the worker's life, as the member is there."""
        handle = self._handle(ident)
        view = self.enum_views.get(ident)
        if view is None or view.__dict__["_pj_handle"] is not handle:
            view = self.enum_views[ident] = _enum_view_class(type(data), cls)(data)
            view.__dict__["_pj_handle"] = handle
            view.__dict__["_pj_text"] = self.id_texts.get(ident)
        return view

    def _tzinfo(self, ident: int) -> TzinfoView:
        """The stand-in for a library tzinfo: the same one while it lives, as a handle is."""
        handle = self._handle(ident)
        view = self.tzinfos.get(ident)
        if view is None or view.__dict__["_pj_handle"] is not handle:
            view = TzinfoView()
            view.__dict__["_pj_handle"] = handle
            self.tzinfos[ident] = view
        return view

    def _argument(self, key: Any) -> Any:
        """The call in flight's own argument, returned by the code: `f(xs) is xs` holds."""
        call = self.frames[-1].call if self.frames else None
        if call is not None:
            _, args, kwargs = call
            if type(key) is int and 0 <= key < len(args):
                return args[key]
            if type(key) is str and key in kwargs:
                return kwargs[key]
        raise wire.WireError(f"argument {key!r} was not passed to the call in flight")

    def _part(self, meta: Any, data: Any) -> Any:
        """A part of the judge's own data the worker names (protocol.PART): the judge's object
        at that path when it is the same data as the worker sent, else the data itself."""
        if not (type(meta) is tuple and len(meta) == 2 and type(meta[1]) is tuple):
            raise wire.WireError("a part named without its root and path")
        if data is wire.NO_DATA:
            raise wire.WireError("a part named without its data")
        (root, key), path = meta if type(meta[0]) is tuple and len(meta[0]) == 2 else ((0, 0), ())
        node: Any = None
        if root == protocol.PART_LINK and type(key) is int and key in self.links:
            node = self.links[key][0]
        elif root == protocol.PART_ARGUMENT:
            call = self.frames[-1].call if self.frames else None
            args, kwargs = (call[1], call[2]) if call is not None else ((), {})
            if type(key) is int and 0 <= key < len(args):
                node = args[key]
            elif type(key) is str and key in kwargs:
                node = kwargs[key]
        for step in path:
            listed = type(node) in (list, tuple) and type(step) is int
            listed = listed and -len(node) <= step < len(node)
            if not (listed or (type(node) is dict and type(step) in _PATH_KEYS and step in node)):
                return data
            node = node[step]
        return node if node is not None and _same(node, data) else data

    def _forget(self, ident: int) -> None:
        self.iterators.pop(ident, None)
        self.shapes.pop(ident, None)
        self.hashes.pop(ident, None)
        self.fetched.pop(ident, None)
        self.ends.pop(ident, None)
        if self.proc is not None and self.failure is None:
            self.released.append((ident, self.counts.pop(ident, 1)))

    def _exception_class(self, ident: int, graph: tuple[Any, ...]) -> type[BaseException]:
        """Stand-ins for the class and its ancestors, with the worker's bases graph (issue 18)."""
        built: list[type] = [object] * len(graph)
        for i in reversed(range(len(graph))):
            module, qualname, bases = graph[i]
            resolved = tuple(
                getattr(builtins, ref) if kind == "b" else built[ref] for kind, ref in bases
            )
            stdlib = _stdlib_exception(module, qualname)
            if stdlib is not None:
                # The judge's own class as the stand-in's base (its MRO is the judge's):
                # `pytest.raises(dataclasses.FrozenInstanceError)` catches it, as in process.
                resolved = (stdlib,)
            known = self.exception_classes.get((module, qualname))
            if known is None or known.__bases__ != resolved:
                body = {
                    "__module__": module,
                    "__qualname__": qualname,
                    "__getattr__": _exception_getattr,
                    "_pj_worker": self,
                    "_pj_id": None,
                }
                try:
                    known = types.new_class(
                        qualname.rsplit(".", 1)[-1], resolved, exec_body=_filler(body)
                    )
                except TypeError as exc:
                    raise wire.WireError(f"an exception class it cannot have: {exc}") from None
                self.exception_classes[(module, qualname)] = known
            built[i] = known
        cls = built[0]
        if not issubclass(cls, BaseException):
            raise wire.WireError("an exception class that is not an exception")
        type.__setattr__(cls, "_pj_id", ident)
        return cls

    # --- methods pytest's rewritten asserts store, then call (issue 17) ---
    def stored_method(self, receiver: Handle, name: str) -> Handle:
        """A stand-in for `receiver.name` about to be stored and called: nothing read yet."""
        proxy = Handle._pj_make(self, STORED)
        key = id(proxy)
        self.stored[key] = (receiver, name)
        weakref.finalize(proxy, self._unstore, key)
        return proxy

    def _unstore(self, key: int) -> None:
        self.stored.pop(key, None)
        self.kept.pop(key, None)

    def call_stored(self, proxy: Handle, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The stored method's call: the read and the call in one round trip, the read kept.

        From then on the stand-in is the handle of what the worker read (its id,
        that handle held while it lives), so a later repr or call is the
        attribute's own, as the temporary holds it bare.
        """
        key = id(proxy)
        if key in self.kept:  # read already, and not a handle: the judge's own value
            return self.kept[key](*args, **kwargs)
        receiver, name = self.stored.pop(key)
        kept: list[Any] = []
        try:
            return self.request(
                protocol.CALL_METHOD, receiver, name, args, kwargs, protocol.KEEP, kept=kept
            )
        finally:
            if kept:
                self.kept[key] = kept[0]
                owner = _owner(kept[0]) if type(kept[0]) in HANDLE_TYPES else None
                if owner is not None and owner[0] is self:
                    object.__setattr__(proxy, "_pj_id", owner[1])

    # --- calls whose results nobody reads (issues 17 and 20) ---
    def defer(self, frame: types.FrameType, op: str, call: tuple[Any, ...]) -> bool:
        """Keep `op` (CALL or CALL_METHOD, its fields `call`) to send with the next request.

        Only a call the test function's own frame makes as a statement (its result
        popped, `p.insert(x)`), outside any `with` block, from code with no `try`
        and no stores but to its own locals, with data and this worker's handles as
        arguments, to a worker that holds no judge function it could call back and no
        container linked (a change the frame made to one after the call would reach
        the worker, in the next request's sync, before the call ran there). The
        profile hook (_deferral_hook) sends them before the frame runs anything else
        (a call of any other code, its return), so what one raised is raised in that
        frame before anything the frame could observe has run; and the test's end
        (_settled) raises it if it is not what the test raised. -> whether it was kept.
        """
        state = _state
        if (
            state is None
            or frame.f_code is not state.test_code
            or self.proc is None
            or self.failure is not None
            or self.functions
            or self.links
            or (self.pending and (self.pending_frame is not frame or self.pending[0][0] != op))
            or (state.deferring is not None and state.deferring is not self)
            or (state.deferring is None and sys.getprofile() is not None)
            or frame.f_lasti not in _discarded(frame.f_code)
            or not all(map(self._inert, call))
        ):
            return False
        self.pending.append((op, *call))
        self.drain = None  # as a request would: anything else asked ends a drain
        self.last_iter = None
        if state.deferring is None:
            state.deferring, self.pending_frame = self, frame
            self.pending_thread = threading.get_ident()
            self.hook = _deferral_hook(self, frame)
            sys.setprofile(self.hook)
        if len(self.pending) >= protocol.BATCH_ITEMS:
            self.flush()
        return True

    def _inert(self, value: Any, depth: int = 0) -> bool:
        """Data nothing can change in place, or this worker's own handle."""
        kind = type(value)
        if kind in _INERT:
            return True
        if kind is tuple:
            return depth < 4 and all(self._inert(v, depth + 1) for v in value)
        if kind is dict:  # a call's kwargs
            return depth == 0 and all(self._inert(v, 1) for v in value.values())
        if kind in HANDLE_TYPES:
            owner = _owner(value)
            return owner is not None and owner[0] is self and owner[1] != STORED
        return False

    def flush(self) -> None:
        """Send the kept calls as one SEQ; what the first that raised raised, raised here."""
        calls, self.pending, self.pending_frame = tuple(self.pending), [], None
        if _state is not None and _state.deferring is self:
            _state.deferring = None
            if self.hook is not None and sys.getprofile() is self.hook:
                sys.setprofile(None)
            self.hook = None
        if calls:
            self.scale = len(calls)  # each call has the deadline it had alone
            try:
                self.request(protocol.SEQ, calls)
            finally:
                self.scale = 1

    # --- nested calls: f(g(x)) in one round trip (issue 17) ---
    def nested(
        self, frame: types.FrameType, handle: Handle, args: Any, kwargs: Any
    ) -> tuple[Any, ...]:
        """The handles the result of `handle(*args, **kwargs)`, called from `frame`, goes to
        at once (nesting.py), each with that result alone; () when not so.

        The arguments are data and this worker's handles (nothing to copy back); the
        callees are this worker's handles, read where the frame reads them, and the
        inner one is `handle` itself; a callee loaded after the inner call from a
        global or a cell only while nothing the worker holds runs the judge's Python.
        """
        site = nesting.cached(frame.f_code).get(frame.f_lasti)
        if site is None or self.failure is not None or self.proc is None:
            return ()
        if site.late and self.judge_python and any(kind != "fast" for kind, _ in site.outers):
            return ()
        if not all(map(self._inert, (args, kwargs))):
            return ()
        # The frame's locals only when a load reads them (f_locals copies them all).
        reads = site.scalars or any(kind != "global" for kind, _ in (site.inner, *site.outers))
        values = frame.f_locals if reads else {}
        if nesting.resolve(frame, values, site.inner) is not handle:
            return ()
        if site.scalars and not nesting.scalars_only(values, site.scalars):
            return ()
        outers = tuple(nesting.resolve(frame, values, load) for load in site.outers)
        for outer in outers:
            if type(outer) not in _CALLABLE_HANDLES or not self._inert(outer):
                return ()
        return outers

    def call_nested(
        self,
        frame: types.FrameType,
        handle: Handle,
        args: Any,
        kwargs: Any,
        outers: tuple[Any, ...],
    ) -> Any:
        """`handle(*args, **kwargs)` and the calls of `outers` on its result, one round trip.

        Returns the first result (the frame keeps it: pytest's rewrite shows it
        when the assert fails); the later calls take theirs (nested_step)."""
        self.scale = len(outers) + 1  # each call has the deadline it had alone
        try:
            calls = ((handle, args, kwargs), *((outer,) for outer in outers))
            results, error = self.request(protocol.NEST, calls)
        finally:
            self.scale = 1
        steps: collections.deque[_Step] = collections.deque()
        for n, outer in enumerate(outers):
            if n + 1 < len(results):
                steps.append((outer, results[n], results[n + 1], None))
            elif error is not None:
                steps.append((outer, results[n], None, error))
                break
            # else the worker stopped at NEST_BYTES: the later calls are made alone
        if steps:
            self.nests[threading.get_ident()] = (frame, steps)
        return results[0]

    def nested_step(
        self, caller: types.FrameType, handle: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[bool, Any]:
        """A later call of a nest: what the worker's call gave (or raised), taken here.
        -> (whether this call was one, its result)."""
        thread = threading.get_ident()
        frame, steps = self.nests.pop(thread)
        if frame is not caller:
            return False, None  # the frame was left between the calls (a signal's error)
        callee, argument, result, error = steps.popleft()
        if callee is not handle or len(args) != 1 or args[0] is not argument or kwargs:
            # nesting.py's reading of the frame says this cannot happen: the judge's slip.
            raise AssertionError("patchjudge: a nested call was not the one the frame makes")
        if steps:
            self.nests[thread] = (frame, steps)
        if isinstance(error, StopIteration | StopAsyncIteration):
            # As _request says it of a call made alone (PEP 479's rule).
            name = type(error).__name__
            raise RuntimeError(f"the code under test raised {name} out of a call") from error
        if error is not None:
            raise error
        return True, result

    # --- iteration (issue 20) ---
    def next_item(self, handle: Handle, ident: int, caller: types.FrameType | None = None) -> Any:
        """`next(handle)`: from what a batch fetched, else one round trip (or a batch).

        A batch for a drain (list(it): every item, nothing in between), or for a
        counted loop (loops.py: `caller` will make exactly that many `next(handle)`
        calls with nothing between them that can observe the code).
        """
        fetched = self.fetched.get(ident)
        if fetched:
            return fetched.popleft()
        end = self.ends.pop(ident, None)
        if end is not None:
            self.drain = None
            raise end
        limit, plain = BATCH_ITEMS, False
        if self.drain != ident:
            limit, plain = self.counted(handle, caller), True
            if limit < 2:
                return self.request(protocol.OP, "next", handle, ())
        items: list[Any] = []
        try:
            self.request(protocol.BATCH, handle, min(limit, BATCH_ITEMS), plain, into=items)
        except Exception as exc:
            if self.failure is not None:
                raise  # the worker is gone: nothing it sent before stands in for it
            # Raised at the `next` that would have raised it, after the items before it.
            self.ends[ident] = exc
        if not items and ident not in self.ends:
            raise self.fail(Cause.PROTOCOL, "a batch with no item and no end")
        self.fetched[ident] = collections.deque(items)
        return self.next_item(handle, ident)

    def counted(self, handle: Handle, caller: types.FrameType | None) -> int:
        """How many `next(handle)` calls `caller` makes from this one on without anything
        between them that could observe the code (loops.py); 1 when that is not known.

        Never while the worker holds a judge function or object other than a sentinel
        `object()` or a builtin class (a step could call back into the judge's Python,
        which could change what the loop reads between its steps) or a linked
        container (the judge's change would reach the worker in the next request's
        sync, after steps that ran before it).
        A loop whose body can raise (an assert) only in the test function's own frame,
        where no handler covers it and the test is not xfail: the error ends the test,
        which fails as bare fails it, at the same item (docs/properties.md, "Iteration").
        A list comprehension that steps the handle to its end comparing data
        (loops.Drained) takes a batch of BATCH_ITEMS steps, the end included; with a
        judge function, when what it compares is data nothing can change in place.
        """
        if caller is None or self.failure is not None:
            return 1
        site = loops.cached(caller.f_code).get(caller.f_lasti)
        if type(site) is loops.Drained:
            # Steps to the end with nothing between them but comparisons of data: while the
            # worker holds a judge function, of data nothing can change in place, and no
            # linked container (a step that calls the function back could change one).
            if self.links and self.judge_code:
                return 1
            return BATCH_ITEMS if loops.drained(site, caller, handle, self.judge_code) else 1
        if self.judge_code or self.links or type(site) is not loops.CountedNext:
            return 1
        if site.fails and (
            _state is None or caller.f_code is not _state.test_code or site.guarded or _state.xfail
        ):
            return 1
        return loops.steps(site, caller, handle)

    # --- counted reads and stores: `h[i]`, `h[k] = v` in a loop over a range (issues 17, 20) ---
    def read_item(self, handle: HandleBase, key: Any, caller: types.FrameType) -> Any:
        """`handle[key]`: from what a counted loop's reads fetched, else one round trip (or
        a GETITEMS of the loop's coming keys, loops.CountedRead).

        An item fetched ahead is taken only by the same read of the same frame at
        the key it was read at; any other request drops the rest (_request).
        """
        ident = object.__getattribute__(handle, "_pj_id")
        ahead = self.ahead
        site = loops.cached(caller.f_code).get(caller.f_lasti)
        if ahead is not None:
            frame, read, owner, taken, end = ahead
            if frame is caller and read is site and owner == ident:
                if taken and _same_key(taken[0][0], key):
                    item = taken.popleft()[1]
                    if not taken and end is None:
                        self.ahead = None
                    return item
                if not taken and end is not None and _same_key(end[0], key):
                    self.ahead = None
                    exc = end[1]
                    if isinstance(exc, StopIteration | StopAsyncIteration):
                        # As _request says it of a read made alone (PEP 479's rule).
                        name = type(exc).__name__
                        raise RuntimeError(
                            f"the code under test raised {name} out of a getitem operation"
                        ) from exc
                    raise exc
            self.ahead = None
        keys = self.counted_keys(site, handle, key, caller)
        if len(keys) < 2 or type(site) is not loops.CountedRead:
            held = self.held_iter
            found = self.request(protocol.OP, "getitem", handle, (key,))
            if held is not None and held[0] is caller and type(site) is loops.CountedRead:
                self.held_iter = held  # the loop's own read, alone: its next may batch again
            return found
        items: list[Any] = []
        ended: tuple[int, BaseException] | None = None
        try:
            self.request(protocol.GETITEMS, handle, keys, into=items)
        except Exception as exc:
            if self.failure is not None:
                raise  # the worker is gone: nothing it sent before stands in for it
            ended = (keys[len(items)], exc)  # raised at the read that raised it
        if not items and ended is None:
            raise self.fail(Cause.PROTOCOL, "a batch with no item and no end")
        fetched = collections.deque(zip(keys, items, strict=False))  # the items up to the end
        self.ahead, self.ahead_thread = (caller, site, ident, fetched, ended), threading.get_ident()
        return self.read_item(handle, key, caller)

    def counted_keys(
        self, site: loops.Site | None, handle: HandleBase, key: Any, caller: types.FrameType
    ) -> range | tuple[Any, ...]:
        """The keys `caller`'s loop reads `handle` at from this read on (loops.read_keys,
        `site` the read's), on the terms `counted` sets for a counted loop's `next`; empty
        when not known. While the worker holds a judge function or object (a read could
        call it back), only a sealed loop (loops.CountedRead) whose other reads are data
        nothing can change in place, and no linked container: the function can then
        change nothing the loop reads between two reads, as nothing in the loop can run
        between them. Without one, a linked container cannot change between two reads.
        A loop over a list (site.over) takes its keys from the held list its GET_ITER
        just iterated (_held_iter, loops.held_keys): a tuple of them."""
        # A linked container changes only when the judge's Python runs: never between two
        # reads of the loop unless a judge function the worker holds is called back.
        if (self.links and self.judge_code) or self.failure is not None:
            return range(0)
        if type(site) is not loops.CountedRead or (self.judge_code and not site.sealed):
            return range(0)
        if site.fails and (
            _state is None or caller.f_code is not _state.test_code or site.guarded or _state.xfail
        ):
            return range(0)
        if site.over >= 0:
            held = self.held_iter
            if held is None or held[0] is not caller or held[1] != site.over:
                return range(0)
            if held[3] != threading.get_ident():
                return range(0)
            return loops.held_keys(
                site, caller, handle, key, held[2], BATCH_ITEMS, frozen=self.judge_code
            )
        if type(key) is not int:
            return range(0)
        keys = loops.read_keys(site, caller, handle, BATCH_ITEMS, frozen=self.judge_code)
        return keys if keys and keys[0] == key else range(0)

    def keep_store(self, frame: types.FrameType, handle: HandleBase, key: Any, value: Any) -> bool:
        """Keep `handle[key] = value` to send in a SEQ with the loop's next stores.

        Only a counted store (loops.CountedStore: the loop's body computes its key
        and value from ints and constants, nothing in it can raise or ask the
        worker) in the test function's own frame, outside any `try` or `with`,
        with data as key and value; while the worker holds a judge function or
        object, no linked container (its change would reach the worker after
        stores that ran before it, as `counted` says) and (a store
        could call it back: later than bare, between the same stores) only in a
        sealed loop (loops.CountedStore: nothing it reads can be rebound from
        outside the frame, so the stores are those bare makes). The store of the loop's last
        time round sends them, so none outlives the loop; so does the 256th
        kept, and any other request of this thread first (_request), and the
        test's end (_settled). The worker stops at the first store that raises,
        as bare stops there: what it raised is raised at the store that sent
        them, on the same line. -> whether it was kept.
        """
        state = _state
        if (
            state is None
            or frame.f_code is not state.test_code
            or self.proc is None
            or self.failure is not None
            or (self.links and self.judge_code)  # a callback could change one between stores
            or (self.pending and self.pending_frame is not frame)
            or (state.deferring is not None and state.deferring is not self)
        ):
            return False
        site = loops.cached(frame.f_code).get(frame.f_lasti)
        if type(site) is not loops.CountedStore or site.guarded:
            return False
        if self.judge_code and not site.sealed:
            return False  # a judge function a store calls back could rebind what it reads
        left = loops.stores_left(site, frame)
        if left < 0 or (left == 0 and not self.pending):
            return False
        if not (self._inert(handle) and self._inert(key) and self._inert(value)):
            return False
        self.pending.append((protocol.OP, "setitem", handle, (key, value)))
        self.drain = None  # as a request would: anything else asked ends a drain
        self.last_iter = None
        self.ahead = None
        if state.deferring is None:
            state.deferring, self.pending_frame = self, frame
            self.pending_thread = threading.get_ident()
        if left == 0 or len(self.pending) >= protocol.BATCH_ITEMS:
            self.flush()
        return True

    def _program_ran(self) -> bool:
        """Unboxed, or bwrap said the program it started exited (its status "exit-code")."""
        if self.status_fd < 0:
            return True
        said = b""
        with contextlib.suppress(OSError):  # BlockingIOError: nothing more was written
            while chunk := os.read(self.status_fd, 1 << 16):
                said += chunk
        return b'"exit-code"' in said

    # --- frames ---
    def _send(self, *payloads: bytes) -> None:
        # One write for all of them: each write wakes the worker, which reads and answers
        # what it got before the judge writes again, so a release sent on its own cost a
        # wake-up and a context switch each way of its own (issue 17).
        one = len(payloads) == 1
        data = wire.frame(payloads[0]) if one else b"".join(map(wire.frame, payloads))
        try:
            while data:
                data = data[os.write(self.fd_out, data) :]
        except OSError as exc:
            if self.status_fd >= 0 and self.proc is not None:
                # The box may have failed before the worker read a byte: bwrap says which.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=5)
                if self.proc.returncode is not None and not self._program_ran():
                    raise self.fail(Cause.SANDBOX, f"bwrap exited {self.proc.returncode}") from None
            raise self.fail(Cause.GONE, str(exc.strerror)) from None

    def _receive(self, slack: float = 0.0) -> Any:
        timeout = self.spec.call_timeout_s * self.scale
        while True:
            try:
                payload = wire.take_frame(self.buffer)
                if payload is not None:
                    self.received = len(payload)
                    return wire.decode(payload, self._from_ref)
            except (wire.WireError, RecursionError) as exc:
                raise self.fail(Cause.MALFORMED, str(exc)) from None
            try:
                # Read before waiting: judge and worker share one CPU (_share_one_cpu), so the
                # write that woke the worker usually returns with its answer there already,
                # and a select per message was a system call for nothing.
                chunk = os.read(self.fd_in, 1 << 20)
            except BlockingIOError:
                ready, _, _ = select.select([self.fd_in], [], [], timeout + slack)
                if not ready:
                    raise self.fail(Cause.TIMEOUT, f"{timeout:g}") from None
                chunk = os.read(self.fd_in, 1 << 20)
            if not chunk:
                assert self.proc is not None
                code = self.proc.wait()
                if not self._program_ran():
                    raise self.fail(Cause.SANDBOX, f"bwrap exited {code}")
                raise self.fail(Cause.CRASHED, f"exit {code}")
            self.buffer += chunk


# What the judge does with each message the worker may send it (protocol.received_by(JUDGE)):
# -> (the call in flight is answered, its result).
_ANSWERS: dict[str, Callable[..., tuple[bool, Any]]] = {
    protocol.OK: Worker._on_ok,
    protocol.ERR: Worker._on_err,
    protocol.ITEMS: Worker._on_items,
    protocol.CALLBACK: Worker._on_callback,
    protocol.JUDGE_OP: Worker._on_judge_op,
    protocol.JUDGE_METHOD: Worker._on_judge_method,
    protocol.WARN: Worker._on_warn,
}


# The worker's whole command line after the interpreter's flags: read the loader's length
# and the loader from stdin, run it in a namespace of its own.
BOOT = "import sys;r=sys.stdin.buffer.read;exec(r(int(r(8))),{})"
# Loads the program the judge sends under this run's names and starts the worker. Its
# frame stays under the worker's, so it holds no name of the judge's either.
LOADER = """\
import sys
# What -P -B --check-hash-based-pycs=always did, done from inside, so sys.flags shows a plain
# run (issue 18): the start-up's path entry (the cwd, or the script's folder) goes before
# anything is imported from it; no bytecode is written; a hash-based .pyc is checked.
if not sys.flags.safe_path:
    del sys.path[0]
sys.dont_write_bytecode = True
import _imp
_imp.check_hash_based_pycs = "always"
import hashlib, marshal, os, types
conf = marshal.loads(sys.stdin.buffer.read())
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
salt = conf["salt"]
def fresh(name):
    return "_" + hashlib.blake2b(name.encode(), key=salt, digest_size=6).hexdigest()
def renamed(code, filename):
    consts = tuple(renamed(c, filename) if type(c) is types.CodeType else c for c in code.co_consts)
    if code.co_name == "<module>":
        return code.replace(co_filename=filename, co_consts=consts)
    name = fresh(code.co_qualname)
    return code.replace(co_filename=filename, co_name=name, co_qualname=name, co_consts=consts)
# The judge's interpreter compiled the three modules once for its process (issue 20): their
# code is loaded only for this interpreter's bytecode magic, else the worker stops before
# running any of it. From another interpreter's judge they come as source, compiled here.
if "code" in conf:
    import importlib.util
    if conf["magic"] != importlib.util.MAGIC_NUMBER:
        raise SystemExit("patchjudge worker: the judge's compiled program is for another Python")
    program = dict(zip(("wire", "protocol", "worker"), marshal.loads(conf["code"])))
else:
    program = {part: conf[part] for part in ("wire", "protocol", "worker")}
def load(part, key, classes):
    module = types.ModuleType(fresh(key))
    filename = fresh(key + ".py") + ".py"
    code = program[part]
    if type(code) is str:
        code = compile(code, filename, "exec", optimize=2)
    exec(renamed(code, filename), module.__dict__)
    for value in list(module.__dict__.values()) if classes else ():
        if isinstance(value, type) and value.__module__ == module.__name__:
            value.__name__ = value.__qualname__ = fresh(key + "." + value.__qualname__)
    return module
for word in conf["forget"]:
    for name in [n for n in sys.modules if word in n]:
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if word not in type(f).__module__]
    sys.path_hooks[:] = [h for h in sys.path_hooks if word not in getattr(h, "__module__", "")]
    sys.path[:] = [p for p in sys.path if not (p.startswith("__editable__") and word in p)]
    sys.path_importer_cache.clear()
# The wire's classes keep their names: a WireError's name is in the reasons the judge shows.
wire = load("wire", "w", False)
protocol = load("protocol", "p", True)
worker = load("worker", "k", True)
# The review's schemata, if this worker runs a mutant: main() takes them out of the list.
argv, token, handed = conf["argv"], fresh("token"), [conf.get("schemata")]
del conf, salt, word, program
globals().pop("name", None)
globals().pop("importlib", None)
"""
# The -c start-up shows argv as `python -m pytest` would; /proc/self/cmdline still has the
# -c (the script shape has neither: docs/threat-model.md, "cheating the oracle").
STDIN_START = """\
import importlib.util
found = importlib.util.find_spec("pytest")
sys.argv = [os.path.join(os.path.dirname(found.origin), "__main__.py") if found else "-m"]
sys.orig_argv = [sys.orig_argv[0], "-m", "pytest"]
del found
raise SystemExit(worker.main(argv, wire, token, protocol, handed))
"""
# The script shape serves from a thread of its own: another stack, another thread.
SCRIPT_START = """\
import threading
done = []
thread = threading.Thread(
    target=lambda: done.append(worker.main(argv, wire, token, protocol, handed))
)
thread.start()
thread.join()
raise SystemExit(done[0] if done else 1)
"""


def worker_flags(pyvenv_cfg: str | None) -> tuple[str, ...]:
    """Pure: the worker's interpreter flags, given its venv's pyvenv.cfg (None: no venv).

    Only `-s`, and only where a user site could load: a venv without the
    system's site-packages never loads one, and there a `-s` in sys.flags
    would be a tell and nothing more (issue 18). A user site under the home
    the code may write would run before the worker, with the loader's salt
    still on stdin; the rest of proc.ISOLATED_PYTHON is done from inside.
    """
    if pyvenv_cfg is None:
        return ("-s",)
    for line in pyvenv_cfg.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "include-system-site-packages":
            return ("-s",) if value.strip().lower() == "true" else ()
    return ("-s",)  # site.py's default for a venv that does not say: the system's included


def _pyvenv_cfg(python: str) -> str | None:
    """The pyvenv.cfg the interpreter itself would find: beside it or one folder up."""
    here = Path(python).parent  # not resolved: a venv's python is a symlink out of it
    for folder in (here, here.parent):
        with contextlib.suppress(OSError):
            return (folder / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    return None


# The worker's modules, in the order the loader takes their code (LOADER's `program`).
PROGRAM = ("wire", "protocol", "worker")


@functools.cache
def compiled_program(here: Path) -> bytes:
    """The worker's modules compiled as the loader compiles them, once per judge process.

    A run's review starts a worker per mutant, each of which compiled the
    same 2,800 lines at boot (issue 20). The names and file names are still
    each worker's own: the loader renames the code objects under its salt.
    `dont_inherit`: this module's `from __future__` must not change them.
    """
    codes = tuple(
        compile((here / f"{part}.py").read_text(), "", "exec", optimize=2, dont_inherit=True)
        for part in PROGRAM
    )
    return marshal.dumps(codes)


def same_interpreter(python: str) -> bool:
    """Whether the worker's `python` is the judge's own binary, whose bytecode it can load."""
    with contextlib.suppress(OSError):
        return Path(python).resolve().samefile(Path(sys.executable).resolve())
    return False


def worker_program(
    here: Path,
    argv: list[str],
    salt: bytes,
    compiled: bool = False,
    schemata: tuple[protocol.Schema, ...] | None = None,
) -> tuple[bytes, bytes]:
    """The loader, and what it reads from stdin: the program and arguments (marshal).

    `compiled`: the worker runs the judge's interpreter, so it gets the
    modules' code compiled once here (compiled_program), else their sources.
    `schemata`: the review's mutant schemata, compiled there in their files'
    place (worker._schema_code); None in every worker but a mutant's.
    """
    conf: dict[str, Any] = {
        "salt": salt,
        "argv": ["", "", *argv],
        "schemata": schemata,
        # Names the judge's own install leaves in every interpreter of its venv (an editable
        # install's finder): gone before the code runs, so it cannot ask for them.
        "forget": [__name__.partition(".")[0]],
    }
    if compiled:
        conf.update(code=compiled_program(here), magic=importlib.util.MAGIC_NUMBER)
    else:
        conf.update({part: (here / f"{part}.py").read_text() for part in PROGRAM})
    return LOADER.encode(), marshal.dumps(conf)


def _write_all(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass  # the worker died before reading: its failure is reported on the wire
    finally:
        os.close(fd)


def _drain(fd: int, kept: int, owned: bool = False) -> None:
    """Copy the first `kept` bytes of a worker's stderr to the judge's; count the rest.

    `owned`: `fd` is this thread's to close at the end (a launched worker's).
    """
    dropped = 0
    try:
        while chunk := os.read(fd, 1 << 16):
            part = chunk[:kept]
            kept -= len(part)
            dropped += len(chunk) - len(part)
            if part:
                os.write(2, part)
        if dropped:
            note = f"\n[patchjudge: {dropped} more bytes of the worker's stderr dropped]\n"
            os.write(2, note.encode())
    except OSError:
        pass  # the judge's stderr is gone: nothing to copy to
    finally:
        if owned:
            os.close(fd)


def _ident(obj: Any) -> int | None:
    """A handle's id, or None for anything else."""
    return object.__getattribute__(obj, "_pj_id") if type(obj) in HANDLE_TYPES else None


def _owner(obj: Any) -> tuple[Worker, int] | None:
    """The worker and id behind a handle, a stand-in module, exception class or instance."""
    if isinstance(obj, HandleBase):
        return object.__getattribute__(obj, "_pj_worker"), object.__getattribute__(obj, "_pj_id")
    if isinstance(obj, StandinModule):
        return _owner(_module_handle(obj))
    if isinstance(obj, type) and isinstance(obj.__dict__.get("_pj_id"), int):
        return obj.__dict__["_pj_worker"], obj.__dict__["_pj_id"]
    if isinstance(obj, (BaseException, TzinfoView, *_VIEWS)) and "_pj_handle" in getattr(
        obj, "__dict__", {}
    ):
        return _owner(obj.__dict__["_pj_handle"])
    return None


# --- judge objects ----------------------------------------------------------------

# What a judge object's type may define for the worker to ask (protocol.JUDGE_CAPABILITIES).
_CAPABILITIES = tuple(c for c in protocol.JUDGE_CAPABILITIES if c != "call")


def judge_capabilities(obj: Any) -> tuple[str, ...]:
    """Pure: the operations `obj`'s type defines itself (object's defaults are identity),
    and for a stdlib stream the io ABC its worker proxy is registered with (JUDGE_STREAMS)."""
    cls = type(obj)
    found = ["call"] if callable(obj) else []
    for cap in _CAPABILITIES:
        own = getattr(cls, f"__{cap}__", None)
        if own is not None and own is not getattr(object, f"__{cap}__", None):
            found.append(cap)
    stream = stream_kind(cls)
    if stream is not None:
        found.append(stream)
    if isinstance(obj, zoneinfo.ZoneInfo):
        found.append(protocol.JUDGE_ZONEINFO)
    elif isinstance(obj, datetime.tzinfo):
        found.append(protocol.JUDGE_TZINFO)
    return tuple(sorted(found))


def _is_function(obj: Any) -> bool:
    """A plain function or method (the judge functions of v2): it is only ever called."""
    return callable(obj) and not isinstance(obj, type) and type(obj).__module__ == "builtins"


# A stream the test hands the code (`json.dump(data, buffer)`, `loader(open(path))`, issue 17):
# the stdlib's own stream types, exactly, and their reading and writing methods only, what the
# test asked the code to do with it. Never `buffer`, `raw`, `fileno`, `name` nor `detach`: the
# code may use the stream, not reach the judge's file descriptors, paths or other objects.
# `close` too: a wrapper checks the stream has it (base64io's Base64IO) and a reader may close
# what it was handed, as in process; it closes that stream and nothing else (held-out round 8).
# Each with the io ABC the worker's proxy for it is registered with, or for BytesIO and StringIO
# the class its proxy subclasses (protocol.JUDGE_STREAMS).
_STREAM_TYPES: dict[type, str] = {
    io.StringIO: "StringIO", io.TextIOWrapper: "TextIOBase", io.BytesIO: "BytesIO",
    io.BufferedReader: "BufferedIOBase", io.BufferedWriter: "BufferedIOBase",
    io.BufferedRandom: "BufferedIOBase",
}  # fmt: skip
STREAM_METHODS = frozenset(protocol.STREAM_METHODS)
TZINFO_METHODS = frozenset(protocol.TZINFO_METHODS)
ZONEINFO_ATTRIBUTES = frozenset(protocol.ZONEINFO_ATTRIBUTES)


def stream_kind(cls: type) -> str | None:
    """Pure: the JUDGE_STREAMS name of `cls`, a stdlib stream type or a subclass of one (a
    property's `class Recording(BytesIO)` counting the reads the code makes: btclib, held-out
    round 9): its stream methods are the stdlib type's or its own override, judge code."""
    return next((_STREAM_TYPES[t] for t in cls.__mro__ if t in _STREAM_TYPES), None)


def judge_attribute(obj: Any, name: Any, judge_class: Callable[[type], bool]) -> bool:
    """Pure: may the worker read or set `name` on `obj`? A public attribute it has itself.

    That is one in the object's own `__dict__` (for an instance of a class the
    judge's files define, a function, a SimpleNamespace) or in the `__dict__`
    of a class the judge's files define on its MRO: never a builtin type's
    (a generator's `gi_frame`) nor a library's (a Path's `write_text`). Or a
    stream method (STREAM_METHODS) of one of the stdlib's stream types, or
    a tzinfo method (TZINFO_METHODS) of a tzinfo, a ZoneInfo's key. A
    `_name_` hook (protocol.sunder) is such an attribute too; _judge_setattr
    never sets one.
    """
    if type(name) is not str or not name.isidentifier():
        return False
    if name.startswith("_") and not protocol.sunder(name):
        return False
    if name in STREAM_METHODS and stream_kind(type(obj)) is not None:
        return True
    if name in TZINFO_METHODS and isinstance(obj, datetime.tzinfo):
        return True  # its own or the stdlib's default: the worker's C datetime asks them
    if name in ZONEINFO_ATTRIBUTES and isinstance(obj, zoneinfo.ZoneInfo):
        return True  # read only: ZoneInfo's own member refuses a write
    mock = sys.modules.get("unittest.mock")  # loaded only if a property uses it
    if mock is not None and isinstance(obj, mock.NonCallableMock) and not isinstance(obj, type):
        # A test double the property hands the code (base64io's MagicMock stream): it answers
        # every public name, as in process. Not one that wraps a real object: its
        # attributes would reach that object's (held-out round 8). Nor the double's own
        # API (configure_mock, assert_called_with, call_count, return_value...): with it
        # the code set `write.assert_called_once_with = len` and `call_count = 1`, and the
        # property's own check of the calls passed with none made (red team, session 12,
        # third round): its data and behaviour are the property's, as a judge class's.
        api = any(name in cls.__dict__ for cls in type(obj).__mro__)
        return obj.__dict__.get("_mock_wraps") is None and not api
    if isinstance(obj, types.ModuleType):
        return False
    if isinstance(obj, type):
        mro: tuple[type, ...] = obj.__mro__
    else:
        mro = type(obj).__mro__
        own = getattr(obj, "__dict__", None)
        plain = judge_class(type(obj)) or isinstance(
            obj, types.FunctionType | types.SimpleNamespace
        )
        if plain and type(own) is dict and name in own:
            return True
    return any(judge_class(cls) and name in cls.__dict__ for cls in mro)


def _judge_getattr(obj: Any, name: Any) -> Any:
    if not judge_attribute(obj, name, _judge_class):
        raise AttributeError(f"{name!r}: not a public attribute of the judge's object")
    value = getattr(obj, name)
    if isinstance(value, types.ModuleType):
        raise AttributeError(f"{name!r}: a module of the judge's")
    return value


def _judge_setattr(obj: Any, name: Any, value: Any) -> None:
    if protocol.sunder(name) or not judge_attribute(obj, name, _judge_class):
        raise AttributeError(f"{name!r}: not a public attribute of the judge's object")
    # Its data, never its behaviour: `item.value = int` made a property's own model
    # method answer 0 for every item (a builtin type crosses as the judge's own).
    current = inspect.getattr_static(obj, name, None)
    if callable(value) or callable(current) or isinstance(current, classmethod):
        raise AttributeError(f"{name!r}: the code may set the judge's data, not its functions")
    setattr(obj, name, value)


def _judge_class(cls: type) -> bool:
    """Whether a file of the judge's tree (a property file, its helpers) defines `cls`."""
    root = _state.judge_root if _state is not None else None
    module = sys.modules.get(getattr(cls, "__module__", "") or "")
    if root is None or module is None or isinstance(module, StandinModule):
        return False
    path = module.__dict__.get("__file__")
    return type(path) is str and _under(path, root)


@functools.lru_cache(maxsize=256)
def _under(path: str, root: str) -> bool:
    return str(Path(path).resolve()).startswith(root + os.sep)


# A drain's batch (issue 20): bounded, so a drained endless iterator costs one batch at a time.
BATCH_ITEMS = protocol.BATCH_ITEMS
# The worker's bound and the item that passed it: past that, a lie.
BATCH_BYTES = protocol.BATCH_BYTES + wire.MAX_FRAME

JUDGE_OPS: dict[str, Callable[..., Any]] = {
    "iter": iter, "next": next, "len": len, "getitem": operator.getitem,
    "contains": operator.contains, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge, "hash": hash, "bool": bool,
    "str": str, "repr": repr, "getattr": _judge_getattr, "setattr": _judge_setattr,
    "index": operator.index,
}  # fmt: skip


def _caller_location() -> tuple[str, str, int]:
    """The module, file and line of the judge's frame that made the request in flight:
    the first frame out of the boundary's own modules (the property's line, pytest's)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_HERE):
        frame = frame.f_back
    module = frame.f_globals.get("__name__")
    return (module if type(module) is str else ""), frame.f_code.co_filename, frame.f_lineno


# The boundary package's own files, as its code objects name them (a pyc may be elsewhere).
_HERE = _caller_location.__code__.co_filename.rpartition(os.sep)[0] + os.sep


def _issue_warning(
    category: type[Warning],
    registries: dict[str, dict[str | tuple[str, type[Warning], int], int]],
    text: str,
    *,
    module: str,
    filename: str,
    lineno: int,
    own: bool = False,
) -> None:
    """The code's warning under the judge's filters; what they raise goes back to the code.

    The file's name is shown in angle brackets: linecache never opens a path the
    code names (a judge file's line in the report, a FIFO that never answers).
    `own`: the place is the judge's own frame (_caller_location), shown as it is.
    """
    registry = registries.setdefault(module, {})
    shown = filename if own else f"<{filename}>"
    if module:
        warnings.warn_explicit(text, category, shown, lineno, module=module, registry=registry)
    else:  # module=None is not C's default: such a warning would never be shown
        warnings.warn_explicit(text, category, shown, lineno, registry=registry)


def _holds_worker_object(value: Any, depth: int = 0) -> bool:
    """Whether a decoded value holds a handle or stand-in: something the code built."""
    if isinstance(value, Handle | StandinModule):
        return True
    if isinstance(value, type):
        return "_pj_worker" in value.__dict__
    if isinstance(value, BaseException):
        return "_pj_handle" in getattr(value, "__dict__", {})
    if type(value) in (list, tuple) and depth < wire.MAX_DEPTH:
        return any(_holds_worker_object(v, depth + 1) for v in value)
    if type(value) is dict and depth < wire.MAX_DEPTH:
        return any(_holds_worker_object(v, depth + 1) for v in value.values())
    return False


def _is_verdict(exc: BaseException) -> bool:
    """An exception that is the judge's verdict, not a protocol signal a library may catch.

    Builtin exceptions other than AssertionError are how protocols talk
    (StopIteration ends a loop, `map_except(int, xs, ValueError)`); an assert,
    pytest's outcomes, hypothesis's `assume` and the property's own classes are not.
    """
    builtin = type(exc).__module__ == "builtins" and isinstance(exc, Exception)
    return isinstance(exc, AssertionError) or not builtin


def _name_of(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) if not isinstance(obj, HandleBase) else None
    return name if type(name) is str else f"{type(obj).__name__} object"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:200]
    except Exception:
        return "<unprintable>"


def _same_key(fetched: Any, key: Any) -> bool:
    """A key a counted read fetched ahead is the one read now: the loop's own item (a held
    list's), or the same int of a range."""
    return fetched is key or (type(fetched) is int and type(key) is int and fetched == key)


def _same(a: Any, b: Any) -> bool:
    try:
        return wire.same(a, b)
    except Exception:
        return False


def _mutable_parts(value: Any, found: dict[int, Any], depth: int = 0) -> dict[int, Any]:
    """Every list, dict and set in `value`, by id (the objects kept, so ids stay theirs)."""
    if type(value) in (list, dict, set):
        found[id(value)] = value
    if depth < wire.MAX_DEPTH and type(value) in (list, tuple):
        for v in value:
            _mutable_parts(v, found, depth + 1)
    elif depth < wire.MAX_DEPTH and type(value) is dict:
        for v in value.values():
            _mutable_parts(v, found, depth + 1)
    return found


def _test_code(fn: Any) -> types.CodeType | None:
    """The code of a test function (a bound method's too), or None."""
    code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
    return code if type(code) is types.CodeType else None


def _record_drawn(item: pytest.Item) -> None:
    """Note the containers hypothesis draws for each example (its `inner_test` hook)."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    if inner is None or getattr(inner, "_pj_drawn", False):
        return

    # wraps: hypothesis names the falsifying example after the function it calls.
    @functools.wraps(inner)
    def test(*args: Any, **kwargs: Any) -> Any:
        assert _state is not None
        _state.drawn = _mutable_parts((args, kwargs), {})
        _state.mutations = []
        from hypothesis.strategies import DataObject

        for value in (*args, *kwargs.values()):
            if isinstance(value, DataObject):
                _watch_draws(value)
        outer, _state.test_code = _state.test_code, _test_code(inner)
        try:
            result = inner(*args, **kwargs)
        except BaseException as exc:
            first = _settled(exc)
            if first is None:
                raise
        else:
            first = _settled(None)
            if first is None:
                return result
        finally:
            _state.drawn = {}
            _state.test_code = outer
        raise first

    test._pj_drawn = True  # type: ignore[attr-defined]
    handle.inner_test = test  # type: ignore[union-attr]


def _watch_draws(data: Any) -> None:
    """`st.data()`'s draws are drawn values too (issue 18): recorded as each is drawn.

    The judge's own DataObject, for this example only: the draw is
    hypothesis's, then what it returned joins the example's drawn containers.
    """
    draw = data.draw

    def watched(strategy: Any, label: Any = None) -> Any:
        result = draw(strategy, label)
        if _state is not None:
            _mutable_parts(result, _state.drawn)
        return result

    data.draw = watched


def _is_exception_meta(meta: Any) -> bool:
    """("exc", graph): (module, qualname, bases) entries; a base: ("b", name) or ("c", i > own)."""
    if not (type(meta) is tuple and len(meta) == 2 and meta[0] == protocol.META_EXCEPTION):
        return False
    graph = meta[1]
    if type(graph) is not tuple or not graph:
        return False
    for i, entry in enumerate(graph):
        if not (type(entry) is tuple and len(entry) == 3 and type(entry[2]) is tuple):
            return False
        if not all(type(s) is str and s for s in entry[:2]) or not entry[2]:
            return False
        for base in entry[2]:
            if not (type(base) is tuple and len(base) == 2):
                return False
            kind, ref = base
            if kind == "b" and not (
                type(ref) is str and isinstance(getattr(builtins, ref, None), type)
            ):
                return False
            if kind == "c" and not (type(ref) is int and i < ref < len(graph)):
                return False
            if kind not in ("b", "c"):
                return False
    return True


def _is_iterator_meta(meta: Any) -> bool:
    """("iter", type name): one of the stdlib's iterator types (worker.ITERATOR_TYPES)."""
    return (
        type(meta) is tuple
        and len(meta) == 2
        and meta[0] == protocol.META_ITERATOR
        and type(meta[1]) is str
    )


def _containers(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    pairs = [*enumerate(args), *kwargs.items()]
    return tuple((key, value) for key, value in pairs if type(value) in (list, dict, set))


def _argument_ref(key: Any) -> wire.Ref:
    return wire.Ref(ARGUMENT, 0, key)


def _is_pattern_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 2
        and meta[0] == protocol.META_PATTERN
        and type(meta[1]) in (str, bytes)
    )


def _is_class_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 2
        and meta[0] == protocol.META_CLASS
        and meta[1] in protocol.METACLASSES
    )


def _is_enum_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 3
        and meta[0] == protocol.META_ENUM
        and type(meta[1]) is str
        and type(meta[2]) is str
    )


def _is_own_meta(meta: Any) -> bool:
    """(protocol.META_OWN, names, meta): names a view's class defines (worker.own_names)."""
    return (
        type(meta) is tuple
        and len(meta) == 3
        and meta[0] == protocol.META_OWN
        and type(meta[1]) is tuple
        and 0 < len(meta[1]) <= protocol.MAX_OWN_NAMES
        and all(type(name) is str for name in meta[1])
    )


def _is_shape_meta(meta: Any) -> bool:
    return type(meta) is tuple and all(type(m) is str for m in meta) and meta in _SHAPES


def _is_module_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 3
        and meta[0] == protocol.META_MODULE
        and type(meta[1]) is str
        and type(meta[2]) is bool
    )


# An iterator's own steps: StopIteration out of them is their answer, not a leak.
_STEP_METHODS = frozenset({"__next__", "send", "throw", "__anext__", "asend", "athrow"})


# What a kept call's arguments may be, beside tuples of them and handles (Worker._inert).
_INERT = frozenset({int, float, complex, str, bytes, bool, type(None)})
_discarded_calls: dict[types.CodeType, frozenset[int]] = {}
_NO_KEEP = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def discarded_calls(code: types.CodeType) -> frozenset[int]:
    """Pure: the offsets of the CALLs in `code` whose result is popped, outside any `with`.

    None at all for code that has a `try` (a handler that is not a `with`'s exit),
    a `with` entered without a call first (nothing would send the kept calls
    before its body), a store that is not to a plain local, cells, or that is a
    generator or coroutine: there a call sent late could be caught, or what ran
    before it seen, where it would not have been.
    """
    instructions = [
        ins for ins in dis.get_instructions(code) if ins.opname not in ("CACHE", "EXTENDED_ARG")
    ]
    if code.co_flags & _NO_KEEP or code.co_cellvars:
        return frozenset()
    for before, ins, after in zip(instructions, instructions[1:], instructions[2:], strict=False):
        if ins.opname == "PUSH_EXC_INFO" and after.opname != "WITH_EXCEPT_START":
            return frozenset()
        if ins.opname == "BEFORE_WITH" and before.opname != "CALL":
            return frozenset()
    if instructions and instructions[0].opname == "BEFORE_WITH":
        return frozenset()
    if any(
        (ins.opname.startswith(("STORE_", "DELETE_")) and ins.opname != "STORE_FAST")
        or ins.opname in ("IMPORT_STAR", "BEFORE_ASYNC_WITH")
        for ins in instructions
    ):
        return frozenset()
    entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]
    guarded = [(e.start, e.end) for e in entries]
    return frozenset(
        ins.offset
        for ins, after in itertools.pairwise(instructions)
        if ins.opname == "CALL"
        and after.opname == "POP_TOP"
        and not any(start <= ins.offset < end for start, end in guarded)
    )


def _discarded(code: types.CodeType) -> frozenset[int]:
    found = _discarded_calls.get(code)
    if found is None:
        found = _discarded_calls[code] = discarded_calls(code)
    return found


def _deferral_hook(
    worker: Worker, at: types.FrameType
) -> Callable[[types.FrameType, str, Any], None]:
    """The profile hook while `at`'s calls wait: sent before `at` runs anything but a handle.

    Anything: a call to any other code (a Python function, a builtin), and
    its return. What the first of them raised is then raised in that frame.
    """

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call":
            if frame.f_back is not at or frame.f_code.co_filename == __file__:
                return  # not the frame's own call, or a handle's own machinery
        elif frame is not at or event not in ("c_call", "return"):
            return
        try:
            worker.flush()
        except BaseException as exc:
            if _state is not None:
                _state.late = exc
            raise

    return hook


def _settled(raised: BaseException | None) -> BaseException | None:
    """At the test function's end: the kept calls sent; what one raised, if not `raised`."""
    assert _state is not None
    late, _state.late = _state.late, None
    worker = _state.deferring
    if worker is not None:
        try:
            worker.flush()
        except BaseException as exc:
            if exc.__context__ is raised:
                exc.__context__ = None  # raised before `raised`, which never happened bare
            return exc
    return late if late is not None and raised is not late else None


def _runs_no_judge_code(obj: object) -> bool:
    """A sentinel `object()` or a class of the builtins module (parametrize values a
    property passes on: priority's `maximum_streams`): whatever the worker asks of it
    runs none of the judge's Python. What a builtin class builds from the worker's
    arguments wraps data, the worker's handles or judge objects already given."""
    if type(obj) is object:
        return True
    return type(obj) is type and vars(builtins).get(obj.__name__) is obj


def _kind(op: str, args: tuple[Any, ...]) -> str:
    if op == protocol.OP:
        return f"{args[0]} operation"
    kinds = {protocol.CALL: "call", protocol.NEST: "call", protocol.CALL_METHOD: "method call"}
    return kinds.get(op, f"{op} request")


_CAUSES = (protocol.ERROR_BUILTIN, protocol.ERROR_FOREIGN)


def _builtin_exception(name: str, args: Any) -> BaseException:
    """A builtin exception the code raised, as itself (never an arbitrary builtin)."""
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return WorkerFailure(f"the worker raised an unknown builtin exception {name!r}")
    if issubclass(cls, _INTERRUPTS):
        return WorkerFailure(f"the code under test raised {name}")
    try:
        return cls(*args) if type(args) is tuple else cls(str(args))
    except Exception:
        return RuntimeError(f"{name}{args!r}")


def _stdlib_exception(module: Any, qualname: Any) -> type[BaseException] | None:
    """The judge's own exception class `module.qualname` of the standard library, or None.

    Only a module the judge has already imported (nothing is imported on the worker's
    word), a top-level name of its namespace (no module `__getattr__` runs), whose class
    says it is that name: naming one only decides which `except` catches the stand-in,
    which raising that stdlib class in the worker decides anyway.
    """
    if type(module) is not str or type(qualname) is not str or "." in qualname:
        return None
    if module.partition(".")[0] not in sys.stdlib_module_names:
        return None
    loaded = sys.modules.get(module)
    found = vars(loaded).get(qualname) if type(loaded) is types.ModuleType else None
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        return None
    if found.__module__ != module or found.__qualname__ != qualname:
        return None
    return None if vars(builtins).get(qualname) is found else found


def _filler(body: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda namespace: namespace.update(body)


def _exception_getattr(self: BaseException, name: str) -> Any:
    handle = self.__dict__.get("_pj_handle")
    if handle is None or name.startswith("_pj_"):
        raise AttributeError(name)
    return getattr(handle, name)


# --- handles --------------------------------------------------------------------


def _op(name: str) -> Callable[..., Any]:
    def method(self: Handle, *operands: Any) -> Any:
        return object.__getattribute__(self, "_pj_worker").request("op", name, self, operands)

    method.__name__ = f"__{name}__"
    return method


_LOCAL = frozenset({"__wrapped__", "__signature__", "__annotations__", "__origin__"})
# The handle's own: `isinstance` reads `__class__` of everything (a round trip each
# time would cost every check pytest and hypothesis make); copy and pickle hooks.
_OWN = frozenset({"__class__", "__copy__", "__deepcopy__", "__reduce_ex__", "__reduce__"})
_BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bytes, bool, list, tuple, dict, set)}


class HandleBase:
    """An object of the code under test: every use is a call into its worker.

    No `__call__` here: `callable(h)` reads the type's slot alone, and pytest takes
    a callable `ids=` for an id function (btclib's mapping of parameters, issue 17),
    so a handle is callable only when the worker's object is (Handle, the shapes').
    """

    __slots__ = ("__weakref__", "_pj_id", "_pj_worker")

    @classmethod
    def _pj_make(cls, worker: Worker, ident: int) -> Self:
        proxy = object.__new__(cls)
        object.__setattr__(proxy, "_pj_worker", worker)
        object.__setattr__(proxy, "_pj_id", ident)
        return proxy

    def _pj_request(self, op: str, *args: Any) -> Any:
        return object.__getattribute__(self, "_pj_worker").request(op, *args)

    def __getattribute__(self, name: str) -> Any:
        # Every name is the object's (`__doc__`, `__slots__`, a method called `_make`,
        # `hasattr(h, "__delitem__")`), but the handle's own `_pj_*` and what Python's
        # machinery asks every object for (issue 17).
        if name == "__class__" and reads_class(sys._getframe(1)):
            return object.__getattribute__(self, "_pj_class")()
        if name.startswith("_pj_") or name in _OWN:
            return object.__getattribute__(self, name)
        if name in _LOCAL:
            return object.__getattribute__(self, "_pj_local")(name)
        kind = method_call(sys._getframe(1), name)
        if kind == STORED_CALL:
            return object.__getattribute__(self, "_pj_worker").stored_method(self, name)
        if kind:
            return _Method(self, name)
        return object.__getattribute__(self, "_pj_request")("getattr", self, name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        # What `isinstance` asks after the real type: a class of the code's claims its
        # metaclass (the worker's meta, one of protocol.METACLASSES), so `inspect.isclass`,
        # pytest and hypothesis take it for a class (issue 17); `type(h)` stays Handle.
        worker = object.__getattribute__(self, "_pj_worker")
        return worker.metaclasses.get(object.__getattribute__(self, "_pj_id"), type(self))  # type: ignore[no-any-return]

    def _pj_class(self) -> Any:
        # `obj.__class__` in the property's source (`obj.__class__.__name__`,
        # `obj.__class__(n)`): the library's class, as in process (rubymarshal, issue 17).
        # A class of the code's answers its metaclass, as for `isinstance`.
        worker = object.__getattribute__(self, "_pj_worker")
        ident = object.__getattribute__(self, "_pj_id")
        if ident in worker.metaclasses or ident == STORED:
            return worker.metaclasses.get(ident, type(self))
        return self._pj_request("getattr", self, "__class__")

    def _pj_local(self, name: str) -> Any:
        if name == "__signature__":
            return self._pj_signature()
        if name == "__annotations__":
            sig = self._pj_signature()
            return {
                p.name: p.annotation
                for p in sig.parameters.values()
                if p.annotation is not inspect.Parameter.empty
            }
        raise AttributeError(name)

    def _pj_signature(self) -> inspect.Signature:
        try:
            params = self._pj_request("op", "signature", self, ())
        except (TypeError, ValueError):
            raise AttributeError("__signature__") from None
        built = []
        for name, kind, has_default, default, annotation in params:
            built.append(
                inspect.Parameter(
                    name,
                    inspect._ParameterKind(kind),
                    default=default if has_default else inspect.Parameter.empty,
                    annotation=_BUILTIN_TYPES.get(annotation, inspect.Parameter.empty),
                )
            )
        return inspect.Signature(built)

    def __setattr__(self, name: str, value: Any) -> None:
        self._pj_request("setattr", self, name, value)

    def __copy__(self) -> Any:
        return self._pj_request("op", "copy", self, ())

    def __deepcopy__(self, memo: Any) -> Any:
        return self._pj_request("op", "deepcopy", self, ())

    def __reduce_ex__(self, version: Any) -> Any:
        # The worker pickles its own object; the judge's pickle holds those bytes and, when
        # loaded, asks the worker to load them: the judge never unpickles the code's classes.
        data = self._pj_request("op", "pickle", self, (version,))
        if type(data) is not bytes:
            raise TypeError("the worker's pickle of its object is not bytes")
        return (_unpickled, (data,))

    def __delattr__(self, name: str) -> None:
        self._pj_request("delattr", self, name)

    def __repr__(self) -> str:
        if object.__getattribute__(self, "_pj_id") == STORED:
            kept = object.__getattribute__(self, "_pj_worker").kept
            return repr(kept[id(self)]) if id(self) in kept else "<method not read>"
        try:
            text = self._pj_request("op", "repr", self, ())
        except Exception:
            return f"<handle {object.__getattribute__(self, '_pj_id')} (no repr)>"
        return text if type(text) is str else "<handle>"

    def __bool__(self) -> bool:
        return bool(self._pj_request("op", "bool", self, ()))

    def __hash__(self) -> int:
        known: int | None = object.__getattribute__(self, "_pj_worker").hashes.get(
            object.__getattribute__(self, "_pj_id")
        )
        if known is not None:
            return known  # the worker's answer, sent with the key (wire `k`)
        value = self._pj_request("op", "hash", self, ())
        if type(value) is not int:
            raise TypeError("hash did not return an int")
        return value

    def __iter__(self) -> Iterator[Any]:
        worker = object.__getattribute__(self, "_pj_worker")
        ident = object.__getattribute__(self, "_pj_id")
        if ident in worker.iterators:
            return self  # a stdlib iterator's `__iter__` returns it and runs nothing (issue 20)
        found = self._pj_request("op", "iter", self, ())
        if _ident(found) in worker.iterators:
            worker.last_iter = (ident, _ident(found))
        return found  # type: ignore[no-any-return]

    def __len__(self) -> int:
        worker = object.__getattribute__(self, "_pj_worker")
        kind = worker.iterators.get(object.__getattribute__(self, "_pj_id"))
        if kind is not None:
            raise TypeError(f"object of type '{kind}' has no len()")
        return self._pj_request("op", "len", self, ())  # type: ignore[no-any-return]

    def __length_hint__(self) -> Any:
        """Asked by list(), tuple(), bytes(), `*args` before they take every item (issue 20).

        For a stdlib iterator that is the consumer's word that it drains the
        handle: its `next`s fetch ahead in batches until anything else is
        asked of the worker. No hint is given (the bare iterator's is a size
        only), so the consumer's behaviour is unchanged.
        """
        worker = object.__getattribute__(self, "_pj_worker")
        ident = object.__getattribute__(self, "_pj_id")
        if ident in worker.iterators:
            worker.drain = ident
        elif worker.last_iter is not None and worker.last_iter[0] == ident:
            # list(obj) took obj's iterator just now, then asks obj for the hint (CPython's
            # list_extend): it drains that iterator as it would drain one it was given.
            worker.drain = worker.last_iter[1]
        return NotImplemented

    def __next__(self) -> Any:
        worker = object.__getattribute__(self, "_pj_worker")
        # The frame that called next(): a counted loop's batch (loops.py, issue 20).
        return worker.next_item(self, object.__getattribute__(self, "_pj_id"), sys._getframe(1))

    def __exit__(self, *exc: object) -> Any:
        suppress = self._pj_request("op", "exit", self, ())
        # The worker's __exit__ sees no exception (None, None, None): its True would
        # swallow the judge's verdict (an assert, pytest's outcomes) unseen, as a library
        # may not for a callback's either (issue 18). Other exceptions it may suppress.
        if len(exc) > 1 and isinstance(exc[1], BaseException) and _is_verdict(exc[1]):
            return False
        return suppress

    def __getitem__(self, key: Any) -> Any:
        # The frame that reads it: a counted loop's reads come in one batch (loops.py).
        worker = object.__getattribute__(self, "_pj_worker")
        return worker.read_item(self, key, sys._getframe(1))

    def __setitem__(self, key: Any, value: Any) -> None:
        # The frame that stores it: a counted loop's stores go in one SEQ (loops.py).
        worker = object.__getattribute__(self, "_pj_worker")
        if not worker.keep_store(sys._getframe(1), self, key, value):
            worker.request(protocol.OP, "setitem", self, (key, value))

    __str__ = _op("str")
    __reversed__ = _op("reversed")
    __delitem__ = _op("delitem")
    __contains__ = _op("contains")
    __eq__ = _op("eq")
    __ne__ = _op("ne")
    __lt__ = _op("lt")
    __le__ = _op("le")
    __gt__ = _op("gt")
    __ge__ = _op("ge")
    __neg__ = _op("neg")
    __pos__ = _op("pos")
    __abs__ = _op("abs")
    __invert__ = _op("invert")
    __int__ = _op("int")
    __float__ = _op("float")
    __index__ = _op("index")
    __bytes__ = _op("bytes")

    def __fspath__(self) -> str | bytes:
        # `os.fspath(h)`, `open(h)`, `Path(h)`: the worker's os.fspath calls the object's
        # `__fspath__` and checks it gave str or bytes, which cross as data (issue 17).
        found = object.__getattribute__(self, "_pj_request")("op", "fspath", self, ())
        if type(found) not in (str, bytes):
            raise TypeError(f"the worker's fspath gave {type(found).__name__}, not str or bytes")
        return found  # type: ignore[no-any-return]

    __round__ = _op("round")
    __format__ = _op("format")
    __dir__ = _op("dir")
    __enter__ = _op("enter")
    __instancecheck__ = _op("instancecheck")
    __subclasscheck__ = _op("subclasscheck")
    __divmod__ = _op("divmod")
    __rdivmod__ = _op("rdivmod")


for _name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "or",
    "xor", "matmul",
):  # fmt: skip
    _fn = _name + "_" if _name in ("and", "or") else _name
    setattr(HandleBase, f"__{_name}__", _op(_fn))
    setattr(HandleBase, f"__r{_name}__", _op("r" + _name))
    setattr(HandleBase, f"__i{_name}__", _op("i" + _name))


class Handle(HandleBase):
    """A handle whose object may be called: every object but a sequence or mapping the
    worker says is not callable (protocol.META_CALLABLE)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        worker = object.__getattribute__(self, "_pj_worker")
        caller = sys._getframe(1)
        if worker.nests and threading.get_ident() in worker.nests:
            taken, result = worker.nested_step(caller, self, args, kwargs)
            if taken:
                return result  # answered with the call it was nested in
        if object.__getattribute__(self, "_pj_id") == STORED:
            return worker.call_stored(self, args, kwargs)
        if worker.defer(caller, protocol.CALL, (self, args, kwargs)):
            return None  # the caller pops it
        outers = worker.nested(caller, self, args, kwargs)
        if outers:
            return worker.call_nested(caller, self, args, kwargs, outers)
        if drains(caller) and _none_released(caller, self, args, kwargs):
            return worker.request(protocol.CALL, self, args, kwargs, protocol.DRAIN)
        return worker.request(protocol.CALL, self, args, kwargs)


class SequenceHandle(HandleBase, metaclass=abc.ABCMeta):
    """A handle for a sequence of the code's: `match h: case [x, *rest]` reads the type's
    Py_TPFLAGS_SEQUENCE alone (set here by ABCMeta's `__abc_tpflags__`), then len and items,
    as it would of the worker's object (issue 17). Registered with no ABC: `isinstance`
    against collections.abc is still the worker's answer (_abc_instancecheck). Not
    callable, as the worker's object is not (CallableSequenceHandle when it is)."""

    __slots__ = ()
    __abc_tpflags__ = 1 << 5


class MappingHandle(HandleBase, metaclass=abc.ABCMeta):
    """A handle for a mapping of the code's: `case {"k": v}` reads Py_TPFLAGS_MAPPING.
    Not callable, as the worker's object is not: pytest iterates it as `ids=`."""

    __slots__ = ()
    __abc_tpflags__ = 1 << 6


class CallableSequenceHandle(SequenceHandle):
    __slots__ = ()
    __call__ = Handle.__call__


class CallableMappingHandle(MappingHandle):
    __slots__ = ()
    __call__ = Handle.__call__


HANDLE_TYPES = frozenset(
    {Handle, SequenceHandle, MappingHandle, CallableSequenceHandle, CallableMappingHandle}
)
_CALLABLE_HANDLES = frozenset({Handle, CallableSequenceHandle, CallableMappingHandle})
_SHAPES: dict[Any, type[HandleBase]] = {
    (protocol.META_SEQUENCE,): SequenceHandle,
    (protocol.META_MAPPING,): MappingHandle,
    (protocol.META_SEQUENCE, protocol.META_CALLABLE): CallableSequenceHandle,
    (protocol.META_MAPPING, protocol.META_CALLABLE): CallableMappingHandle,
}


# --- method calls in one round trip (issue 20) ----------------------------------

# What may stand between `obj.name` and its call without running any code: the reads of
# locals and constants that make the arguments.
_PLAIN_LOADS = frozenset({"LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE", "KW_NAMES",
                          "CACHE", "EXTENDED_ARG", "NOP"})  # fmt: skip
_method_calls: dict[types.CodeType, dict[int, str]] = {}
_stored_calls: dict[types.CodeType, dict[int, str]] = {}
# pytest's assertion rewriting names its temporaries so; no source can (issue 17).
_REWRITE_TEMPORARY = "@py_assert"
STORED_CALL = "stored"  # method_call's answer for a read into such a temporary, then called
STORED = 0  # the id of a stored method's stand-in until it is called (worker ids start at 1)


def method_calls(code: types.CodeType) -> dict[int, str]:
    """Pure: offset -> name of each `obj.name(...)` in `code` called before any code runs.

    A LOAD_METHOD whose value only plain loads follow up to its PRECALL/CALL:
    nothing can see the attribute apart from the call, nor run between the
    two, so reading it in the worker as part of the call is the same program.
    So is the LOAD_ATTR CPython compiles `obj.name(...)` to when `obj` is a
    name an import bound (`import lib; lib.f(x)`, `from lib import cls;
    cls.f(x)`): `_attribute_called` (issue 20).
    """
    found: dict[int, str] = {}
    instructions = [i for i in dis.get_instructions(code) if i.opname not in _NO_STACK]
    for i, ins in enumerate(instructions):
        if ins.opname == "LOAD_ATTR" and _attribute_called(instructions, i):
            found[ins.offset] = str(ins.argval)
            continue
        if ins.opname != "LOAD_METHOD":
            continue
        for later in instructions[i + 1 :]:
            if later.opname in ("PRECALL", "CALL"):
                found[ins.offset] = str(ins.argval)
                break
            if later.opname not in _PLAIN_LOADS:
                break
    return found


# What neither pushes nor pops; of the plain loads, those that push one value each.
_NO_STACK = frozenset({"CACHE", "EXTENDED_ARG", "NOP"})
_PUSHES_ONE = frozenset({"LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE"})
# One value each, no code run: what a NULL then `obj` may be loaded by.
_RECEIVERS = frozenset({"LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CLASSDEREF"})


def _attribute_called(instructions: list[dis.Instruction], i: int) -> bool:
    """Whether the LOAD_ATTR at `i` reads the callee of the call right after it.

    CPython 3.11 compiles `lib.f(x)` with LOAD_ATTR when an import bound `lib`
    (compile.c's is_import_originated): a NULL, `lib` (LOAD_GLOBAL's NULL bit,
    or PUSH_NULL and one load), `.f`, then only plain loads up to a PRECALL or
    CALL whose argument count is those loads: the attribute sits just under
    the arguments, so it is what is called (`g(lib.f, x)` loads `lib` without
    a NULL: not matched), and nothing runs between the read and the call.
    """
    receiver = instructions[i - 1] if i >= 1 else None
    if receiver is None or receiver.opname not in _RECEIVERS:
        return False
    null_bit = receiver.opname == "LOAD_GLOBAL" and bool((receiver.arg or 0) & 1)
    if not null_bit and not (i >= 2 and instructions[i - 2].opname == "PUSH_NULL"):
        return False
    pushed = 0
    for later in instructions[i + 1 :]:
        if later.opname in ("PRECALL", "CALL"):
            return later.arg == pushed
        if later.opname not in _PLAIN_LOADS:
            return False
        pushed += later.opname in _PUSHES_ONE
    return False


def stored_method_calls(code: types.CodeType) -> dict[int, str]:
    """Pure: offset -> name of each `tmp = obj.name; tmp(...)` of pytest's assertion rewriting.

    A LOAD_ATTR stored into one of pytest's temporaries (a name no source
    can write), then that temporary called at once, its arguments plain loads
    that do not read it: nothing runs between the read and the call, and the
    temporary is read again only for a failed assert's explanation, so the
    judge may read and call in one round trip, keeping what was read.
    """
    found: dict[int, str] = {}
    instructions = [
        ins for ins in dis.get_instructions(code) if ins.opname not in ("CACHE", "EXTENDED_ARG")
    ]
    for i, ins in enumerate(instructions):
        if ins.opname != "LOAD_ATTR" or i + 3 >= len(instructions):
            continue
        store, null, load = instructions[i + 1 : i + 4]
        temporary = store.argval
        if not (
            store.opname == "STORE_FAST"
            and type(temporary) is str
            and temporary.startswith(_REWRITE_TEMPORARY)
            and null.opname == "PUSH_NULL"
            and load.opname == "LOAD_FAST"
            and load.argval == temporary
        ):
            continue
        for later in instructions[i + 4 :]:
            if later.opname in ("PRECALL", "CALL"):
                found[ins.offset] = str(ins.argval)
                break
            if later.opname not in _PLAIN_LOADS or later.argval == temporary:
                break
    return found


_class_reads: dict[types.CodeType, frozenset[int]] = {}


def class_reads(code: types.CodeType) -> frozenset[int]:
    """Pure: the offsets of each `x.__class__` written in `code` (read or called)."""
    return frozenset(
        ins.offset
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "__class__"
    )


def reads_class(frame: types.FrameType) -> bool:
    """Whether `frame` is at an `x.__class__` of its source: not `isinstance`'s own read
    of `__class__` (from C, its caller at the call), which keeps the local answer."""
    code = frame.f_code
    found = _class_reads.get(code)
    if found is None:
        found = _class_reads[code] = class_reads(code)
    return frame.f_lasti in found


def method_call(frame: types.FrameType, name: str) -> str:
    """How `frame` reads `name`: to call it at once ("call", its LOAD_METHOD, above), into a
    rewritten assert's temporary to call it at once (STORED_CALL), or not ("")."""
    code = frame.f_code
    calls = _method_calls.get(code)
    if calls is None:
        calls = _method_calls[code] = method_calls(code)
        _stored_calls[code] = stored_method_calls(code)
    if calls.get(frame.f_lasti) == name:
        return "call"
    return STORED_CALL if _stored_calls[code].get(frame.f_lasti) == name else ""


class _Method:
    """`handle.name` about to be called: the call asks the worker for both at once."""

    __slots__ = ("handle", "name")

    def __init__(self, handle: HandleBase, name: str) -> None:
        self.handle, self.name = handle, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        worker = object.__getattribute__(self.handle, "_pj_worker")
        call = (self.handle, self.name, args, kwargs)
        if self.name in _STEP_METHODS:
            return worker.request(protocol.CALL_METHOD, *call)
        caller = sys._getframe(1)
        if worker.defer(caller, protocol.CALL_METHOD, call):
            return None  # the caller pops it
        if drains(caller) and _none_released(caller, self.handle, args, kwargs):
            return worker.request(protocol.CALL_METHOD, *call, protocol.DRAIN)
        return worker.request(protocol.CALL_METHOD, *call)


# --- a call's result drained on its reply (issue 20) ----------------------------

# The builtins that step one iterable to its end before any other code runs: list and tuple
# append each item; sorted lists them first and only then compares (its keywords are not
# taken: the shape below is one positional argument). Not set, dict, min, max, sum...: they
# hash, compare or add each item before the next step, code of the code's that could see
# its iterator (a step fetched ahead would run before it).
_DRAINERS: dict[str, Any] = {"list": list, "tuple": tuple, "sorted": sorted}
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_drained_calls: dict[types.CodeType, dict[int, str]] = {}


def drained_calls(code: types.CodeType) -> dict[int, str]:
    """Pure: offset of each CALL whose result goes straight into `list(...)`, `tuple(...)` or
    `sorted(...)` as its one argument -> that builtin's name.

    The name is a global's (LOAD_GLOBAL and its NULL), then straight-line code
    (no jump) makes one value, a CALL's, and `PRECALL 1; CALL 1` calls the
    name with it: nothing runs between the call's return and the drain but
    that call. Or pytest's assertion rewriting's `@py_assertN = f(x)` then
    `list(@py_assertN)` (the temporary is read again only to explain a failed
    assert, after the drain, as in bare). Whether the name is the builtin is
    for the caller to ask at run time (`drains`).
    """
    found: dict[int, str] = {}
    ins = [i for i in dis.get_instructions(code) if i.opname not in _NO_STACK]
    for k, load in enumerate(ins):
        if not (
            load.opname == "LOAD_GLOBAL"
            and (load.arg or 0) & 1
            and load.argval in _DRAINERS
            and k + 1 < len(ins)
        ):
            continue
        depth = 0  # values above the NULL and the name
        for m in range(k + 1, len(ins)):
            later = ins[m]
            if later.opcode in _JUMPS or depth < 0:
                break
            if depth == 1 and later.opname == "PRECALL":  # its callee is the name
                if later.arg == 1 and m + 1 < len(ins) and ins[m + 1].opname == "CALL":
                    made = ins[m - 1]
                    if made.opname == "CALL":
                        found[made.offset] = str(load.argval)
                    elif m == k + 2 and _rewrite_temporary_call(ins, k, made):
                        found[ins[k - 2].offset] = str(load.argval)
                break
            depth += dis.stack_effect(later.opcode, later.arg)
    return found


def _rewrite_temporary_call(ins: list[dis.Instruction], k: int, made: dis.Instruction) -> bool:
    """Whether `NAME(@py_assertN)` loaded at `k` follows `@py_assertN = <a call>` at once."""
    temporary = made.argval
    return (
        made.opname == "LOAD_FAST"
        and type(temporary) is str
        and temporary.startswith(_REWRITE_TEMPORARY)
        and k >= 2
        and ins[k - 1].opname == "STORE_FAST"
        and ins[k - 1].argval == temporary
        and ins[k - 2].opname == "CALL"
    )


_SCALARS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_SCAN_BUDGET = 10_000  # values of the arguments looked at; past it, not drained


def _none_released(
    caller: types.FrameType, callee: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether the call's return releases none of the code's objects: a handle the call
    alone holds (`list(f(lib.Temp()))`) is released once it returns, and the worker runs the
    code's finalizer at the next request; bare runs it before list()'s first step, so such a
    call is drained as before. The callee is a module, a class, or a name of the caller's;
    its arguments hold nothing of the code's (data and the judge's functions)."""
    worker = object.__getattribute__(callee, "_pj_worker")
    ident = object.__getattribute__(callee, "_pj_id")
    if not (
        ident in worker.packages
        or ident in worker.metaclasses
        or any(v is callee for v in caller.f_globals.values())
        or any(v is callee for v in caller.f_locals.values())
    ):
        return False
    budget = [_SCAN_BUDGET]
    return _holds_nothing_of_the_codes(args, budget, 0) and _holds_nothing_of_the_codes(
        tuple(kwargs.values()), budget, 0
    )


def _holds_nothing_of_the_codes(values: Any, budget: list[int], depth: int) -> bool:
    for value in values:
        cls = type(value)
        if cls in _SCALARS:
            continue
        budget[0] -= 1
        if budget[0] < 0 or depth >= wire.MAX_DEPTH or _owner(value) is not None:
            return False
        if cls in (list, tuple, set, frozenset):
            inner: Any = value
        elif cls is dict:
            inner = (*value, *value.values())
        else:
            continue  # the judge's own object or function: nothing of the code's to release
        if not _holds_nothing_of_the_codes(inner, budget, depth + 1):
            return False
    return True


def drains(frame: types.FrameType) -> bool:
    """Whether the call `frame` is making now hands its result straight to the builtin
    `list`, `tuple` or `sorted` (drained_calls), as the name resolves in that frame now."""
    code = frame.f_code
    found = _drained_calls.get(code)
    if found is None:
        found = _drained_calls[code] = drained_calls(code)
    name = found.get(frame.f_lasti)
    if name is None:
        return False
    scope = frame.f_globals
    return (scope[name] if name in scope else frame.f_builtins.get(name)) is _DRAINERS[name]


def _unpickled(data: bytes) -> Any:
    """A worker object pickled by its worker (Handle.__reduce_ex__), loaded by the run's worker."""
    if _state is None or type(data) is not bytes:
        raise TypeError("a handle's pickle loads only in the judge's pytest")
    return _state.current().request(protocol.OP, "unpickle", data, ())


# --- views ----------------------------------------------------------------------


def _view_getattr(self: Any, name: str) -> Any:
    handle = self.__dict__.get("_pj_handle")
    if handle is None or name.startswith("_pj_"):
        raise AttributeError(name)
    return getattr(handle, name)


def _view_class(base: type) -> type:
    """A `base` whose value is the judge's data and whose other attributes are the worker's.

    Comparison, hashing, iteration, length and indexing are `base`'s own on
    the data read through `base` in the worker, so the code's `__eq__` never
    decides a property (issue 18); what `base` lacks (a namedtuple's fields,
    the subclass's methods) is read from the worker's object.
    """
    doc = f"A {base.__name__} of the code under test: its data here, its other attributes there."
    body = {"__getattr__": _view_getattr, "__module__": __name__, "__doc__": doc}
    body["_pj_plain"] = False  # a held view's class says True
    body["_pj_base"] = base
    # Its repr and its copies are the worker's object's, as in process: a library subclass's
    # own `__repr__` (HexBytes('0x0f1a'), a namedtuple's fields), and `h.__reduce__()` or a
    # copy or pickle giving the subclass, not a view without its handle (held-out round 6).
    body["__repr__"] = _on_view_handle(Handle.__repr__, base.__repr__, "__repr__")
    # str() stays the data's: for an int or float (no `__str__` of its own, object's would call
    # the repr above) pytest's parametrize id is str(value), as in process.
    body["__str__"] = base.__dict__.get("__str__", base.__repr__)
    body["__copy__"] = _on_view_handle(Handle.__copy__, None, "__copy__")
    body["__deepcopy__"] = _on_view_handle(Handle.__deepcopy__, None, "__deepcopy__")
    body["__reduce_ex__"] = _on_view_handle(Handle.__reduce_ex__, None, "__reduce_ex__")
    body["__reduce__"] = _on_view_handle(
        lambda handle: Handle.__reduce_ex__(handle, 2), None, "__reduce__"
    )
    if base is int:
        # What int lacks, an int subclass may have: an IntFlag's `flag in flags` (btclib's
        # service bits, held-out round 9). The worker's answer, as for any handle; an int
        # without it raises there as here. Not `__iter__`: every IntEnum view would then be
        # an Iterable to the judge's checks.
        body["__contains__"] = _on_view_handle(operator.contains, None, "__contains__")
    if base is dict:
        body["__getitem__"] = _view_getitem
    for op in sorted(DUNDER_OPS):
        name = protocol.dunder_name(op)
        local = base.__dict__.get(name) if name not in body else None
        if local is not None:
            body[name] = _noted_view_operation(op, local)
    return type(f"{base.__name__}_view", (base,), body)


def _noted_view_operation(op: str, local: Callable[..., Any]) -> Callable[..., Any]:
    """`local` (the base type's own method), recorded as an operation on the code's object.

    The view answers with its base type's method (issue 18: the code's `__eq__` never
    decides); the code's override of it is what a user's interpreter would call instead
    (`class Total(int)` whose `__add__` drops a plain int: `total(xs) + y` is right here,
    wrong there). The judge's record holds the test wherever the patch defines a dunder
    that may answer `op` (review.patch_dunders), whatever the worker says of its class.
    """

    def method(self: Any, *args: Any) -> Any:
        if _state is not None and "_pj_handle" in self.__dict__ and not self._pj_plain:
            _state.operations.setdefault(_state.nodeid, set()).add((op, protocol.VIEW_CLAIM))
        return local(self, *args)

    method.__name__ = local.__name__
    return method


def _view_getitem(self: Any, key: Any) -> Any:
    """A dict view's item; a key its data lacks is asked of the code's object (redteam10).

    A dict subclass may answer it (`__missing__`: a `Counter` counts 0, a `defaultdict`
    makes the default): in process `counts(xs)[y]` is 0 for a y not in xs; the judge's
    data alone raised KeyError and rejected an honest `Counter`.
    """
    try:
        return dict.__getitem__(self, key)
    except KeyError:
        handle = self.__dict__.get("_pj_handle")
        if handle is None or self._pj_plain:
            raise
    return handle[key]


def _on_view_handle(
    fn: Callable[..., Any], alone: Callable[..., Any] | None, name: str
) -> Callable[..., Any]:
    """`fn` applied to a view's handle; `alone` (or a TypeError) for a view without one."""

    def method(self: Any, *args: Any) -> Any:
        handle = self.__dict__.get("_pj_handle")
        if handle is None:
            if alone is None:
                raise TypeError(f"{name}: a view of the code's object without its handle")
            return alone(self, *args)
        return fn(handle, *args)

    method.__name__ = name
    return method


_VIEW_OF = {
    base: _view_class(base) for base in (list, tuple, dict, set, frozenset, str, bytes, int, float)
}
_VIEWS = tuple(_VIEW_OF.values())


# A list, dict or set an attribute read gave (protocol.META_HELD): what changes it in place
# changes the worker's object too, as `frame.flags.add(...)` does bare (issue 17).
_MUTATORS: dict[type, tuple[str, ...]] = {
    list: ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
           "__setitem__", "__delitem__", "__iadd__", "__imul__"),
    dict: ("__setitem__", "__delitem__", "pop", "popitem", "clear", "update", "setdefault",
           "__ior__"),
    set: ("add", "discard", "remove", "pop", "clear", "update", "difference_update",
          "intersection_update", "symmetric_difference_update", "__ior__", "__iand__",
          "__isub__", "__ixor__"),
}  # fmt: skip


def _held_mutator(base: type, name: str) -> Callable[..., Any]:
    local = getattr(base, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        # An iterator is read once, here: both copies get the same items.
        args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)
        handle = self.__dict__["_pj_handle"]
        worker = object.__getattribute__(handle, "_pj_worker")
        result = worker.request(protocol.CALL_METHOD, handle, name, args, kwargs)
        with contextlib.suppress(Exception):  # the worker's answer stands; this is a copy
            if name == "pop" and base is set:
                set.discard(self, result)
            elif name == "popitem":
                dict.pop(self, result[0], None)
            else:
                local(self, *args, **kwargs)
        return self if name.startswith("__i") else result

    method.__name__ = name
    return method


def _held_iter(self: list[Any]) -> Any:
    """`iter()` of a held list, the stdlib's list iterator: said to the worker with the frame
    and offset that asked (a counted read of a loop over it takes its keys from it)."""
    found = list.__iter__(self)
    handle = self.__dict__.get("_pj_handle")
    if handle is not None:
        caller = sys._getframe(1)
        worker = object.__getattribute__(handle, "_pj_worker")
        worker.held_iter = (caller, caller.f_lasti, found, threading.get_ident())
    return found


def _held_class(base: type) -> type:
    body: dict[str, Any] = {name: _held_mutator(base, name) for name in _MUTATORS[base]}
    if base is list:
        body["__iter__"] = _held_iter
    # A copy is the judge's own data, not a second view of the worker's container.
    body["__copy__"] = base
    body["__deepcopy__"] = lambda self, memo: copy.deepcopy(base(self), memo)
    body["__reduce_ex__"] = lambda self, proto: (base, (base(self),))
    body["__reduce__"] = lambda self: (base, (base(self),))
    body["__repr__"] = base.__repr__  # a plain container's: the data's, no round trip
    body["__module__"] = __name__
    body["_pj_plain"] = True  # the worker's exact list, dict or set: it overrides nothing
    return type(f"{base.__name__}_held", (_VIEW_OF[base],), body)  # type: ignore[index]


_HELD_OF = {base: _held_class(base) for base in _MUTATORS}
_HELD_VIEWS = tuple(_HELD_OF.values())


def _data_type(view: Any) -> type:
    return next(base for base in _MUTATORS if isinstance(view, base))


def _refill(view: Any, value: Any) -> None:
    base: Any = _data_type(view)
    base.clear(view)
    if base is list:
        list.extend(view, value)
    else:
        base.update(view, value)


def _view(handle: HandleBase, data: Any, names: tuple[str, ...] = ()) -> Any:
    cls = _OWN_VIEW_OF.get(type(data), _VIEW_OF[type(data)])
    view = (_routed_view_class(cls, names) if names else cls)(data)
    view.__dict__["_pj_handle"] = handle
    return view


class _Routed:
    """A method of the base type that the code's class overrides (protocol.META_OWN): read
    from the code's object, as a user's interpreter would, not from the judge's copy."""

    __slots__ = ("local", "name")

    def __init__(self, name: str, local: Any) -> None:
        self.name, self.local = name, local

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        handle = None if obj is None else obj.__dict__.get("_pj_handle")
        if handle is None:
            get = getattr(type(self.local), "__get__", None)
            return self.local if get is None else get(self.local, obj, owner)
        return getattr(handle, self.name)


def _routed_mutator(name: str) -> Callable[..., Any]:
    """An own view's mutator that the code's class overrides (a Counter's `update` adds where
    dict's replaces): the code's method changes the code's object, and the copy is refilled
    from it, as a changed argument's is, never guessed by the base type's method."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        handle = self.__dict__["_pj_handle"]
        worker = object.__getattribute__(handle, "_pj_worker")
        result = worker.request(protocol.CALL_METHOD, handle, name, args, kwargs)
        # `id` runs no code of the object's; the call's changed arguments bring its data back.
        worker.request(protocol.CALL, id, (self,), {})
        return result

    method.__name__ = name
    return method


_routed_classes: dict[tuple[type, tuple[str, ...]], type] = {}
_ROUTED_CLASSES = 1024  # distinct (view class, names) kept; past it each view builds its own


def _routed_view_class(view: type, names: tuple[str, ...]) -> type:
    """`view` whose attributes in `names` the code's object answers (viewmethods).

    The judge's own rule decides, whatever the worker names: a public attribute of the
    base type (the code's `strip`, `update`), or a dunder of protocol.VIEW_ROUTED_DUNDERS
    (str(), format(), repr, arithmetic). Comparisons, hash, len, iteration and indexing
    stay the data's.
    """
    key = (view, names)
    cls = _routed_classes.get(key)
    if cls is not None:
        return cls
    base: Any = view._pj_base  # type: ignore[attr-defined]
    own = view in _OWN_VIEWS
    body: dict[str, Any] = {"__module__": __name__, "__qualname__": view.__qualname__}
    for name in names:
        if name in protocol.VIEW_ROUTED_DUNDERS:
            body[name] = _on_view_handle(getattr(Handle, name), getattr(base, name, None), name)
        elif name.startswith("_") or not hasattr(base, name):
            continue  # what the base lacks is read from the code's object already
        elif own and name in _MUTATORS[base]:
            body[name] = _routed_mutator(name)
        else:
            body[name] = _Routed(name, inspect.getattr_static(base, name))
    cls = type(view.__name__, (view,), body) if len(body) > 2 else view
    if len(_routed_classes) < _ROUTED_CLASSES:
        _routed_classes[key] = cls
    return cls


def _tz_op(name: str) -> Callable[..., Any]:
    def method(self: TzinfoView, dt: Any) -> Any:
        handle = self.__dict__["_pj_handle"]
        return object.__getattribute__(handle, "_pj_worker").request("op", name, handle, (dt,))

    method.__name__ = name
    return method


def _on_handle(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn` (an operator, `hash`, `repr`) applied to the handle: the worker's own semantics."""

    def method(self: TzinfoView, *args: Any) -> Any:
        return fn(self.__dict__["_pj_handle"], *args)

    method.__name__ = name
    return method


def _own_view_class(base: type) -> type:
    """A list, dict or set subclass of the code's (icalendar's Contentlines): a view whose
    changes in place are the worker's object's too, as a held container's are (issue 17).

    `cl.append(line); cl.to_ical()` read the line back bare; with a view of the
    judge's data alone, `to_ical` ran on the worker's object as it was made. A
    copy, deepcopy or pickle is the worker's of its object: the subclass, not a
    second view of the same object.
    """
    body: dict[str, Any] = {name: _held_mutator(base, name) for name in _MUTATORS[base]}
    body["__copy__"] = _on_handle(Handle.__copy__, "__copy__")
    body["__deepcopy__"] = _on_handle(Handle.__deepcopy__, "__deepcopy__")
    body["__reduce_ex__"] = _on_handle(Handle.__reduce_ex__, "__reduce_ex__")
    body["__module__"] = __name__
    return type(f"{base.__name__}_own_view", (_VIEW_OF[base],), body)  # type: ignore[index]


_OWN_VIEW_OF = {base: _own_view_class(base) for base in _MUTATORS}


def _enum_str(self: Any) -> str:
    # The member's own str(), read in the worker with its meta: a library IntEnum's
    # `__str__` (hdate's Months, a Hebrew name) is its parametrize id and what the property
    # prints in process, not the int's (issue 17). A text cut at the meta's length is asked.
    text = self.__dict__.get("_pj_text")
    if type(text) is str and len(text) < protocol.MAX_ENUM_TEXT:
        return text
    return str(self.__dict__["_pj_handle"])


_enum_view_classes: dict[tuple[type, str], type] = {}


def _enum_view_class(base: type, name: str) -> type:
    """The view class of the members of one library enum (`name`, its module and qualname):
    `type(a) is type(b)` holds for two members of it and not across two enums, as in
    process; named as the enum is, a subclass of `base`'s member view."""
    cls = _enum_view_classes.get((base, name))
    if cls is None:
        shown = name.rpartition(".")[2] or f"{base.__name__}_member_view"
        body = {"__module__": __name__, "__qualname__": shown}
        view = _ENUM_VIEW_OF[base]  # type: ignore[index]
        cls = _enum_view_classes[base, name] = type(shown, (view,), body)
    return cls


_ENUM_VIEW_OF = {
    base: type(
        f"{base.__name__}_member_view", (view,), {"__str__": _enum_str, "__module__": __name__}
    )
    for base, view in _VIEW_OF.items()
}
_OWN_VIEWS = tuple(_OWN_VIEW_OF.values())
# A path's steps into the judge's data (protocol.PART): data keys only, hashed in the judge.
_PATH_KEYS = (int, str, bytes, float, type(None), bool)


def functions_replaced(old: Any, new: Any, depth: int = 0) -> str | None:
    """Where merging `new` into the judge's container `old` would replace or drop one of
    the judge's functions or objects (anything that crosses by reference, not as data:
    a function, a class, a bound method, an instance of a property's own class), as a
    path (`['ok']`, `[0]['f']`); else None.

    Such an item crosses to the worker as a reference and comes back as the very
    object: one the code left alone is `is` the judge's. One it put there is a
    function or object of its own (run in the box, answering what the code wants)
    or a builtin that crosses as the judge's own (`slice`: truthy for any two
    arguments): either made the property's own check pass for wrong code. Data
    items change freely, and items the code adds beside the judge's, functions
    too, are its own.
    """
    if type(old) is not type(new) or depth >= wire.MAX_DEPTH:
        return None
    if type(old) is set:
        gone = [v for v in old if _by_reference(v) and not any(v is w for w in new)]
        return f"{{{gone[0]!r:.60}}}" if gone else None
    if type(old) is dict:
        pairs = [(k, v, new.get(k, _GONE)) for k, v in old.items()]
        moved: set[int] | None = None  # a key is a name: its item may not move
    elif type(old) is list:
        pairs = [(i, v, new[i] if i < len(new) else _GONE) for i, v in enumerate(old)]
        # A list's order is the code's to change (an in-place sort of the property's own
        # objects): a slot may take data or another of the judge's items, none may go.
        moved = {id(v) for v in old if _by_reference(v)}
        if missing := moved - {id(v) for v in new}:
            return f"[{next(i for i, v in enumerate(old) if id(v) in missing)!r}]"
    else:
        return None
    for key, was, now in pairs:
        if _by_reference(was) and now is not was and not (moved and _reordered(now, moved)):
            return f"[{key!r:.60}]"
        inner = functions_replaced(was, now, depth + 1)
        if inner is not None:
            return f"[{key!r:.60}]{inner}"
    return None


_GONE = object()  # a key or index the code's container no longer has


def _reordered(now: Any, moved: set[int]) -> bool:
    """Whether `now`, in a list slot that held one of the judge's items, is another of the
    judge's items of that list (`moved`) or plain data: the list was reordered."""
    return id(now) in moved or type(now) in wire.DATA_TYPES


def _by_reference(value: Any) -> bool:
    """Whether `value`, an item of the judge's container, is one of the judge's functions
    or objects: callable (a function, a class, a bound method, a builtin), or an
    instance of a class the judge's tree defines (a property's own oracle). Data (a
    judge-side container subclass too), the stdlib's values (a datetime, which may
    come back anew) and the code's own objects are not."""
    try:
        own = _holds_worker_object(value) or "_pj_handle" in vars(value)
    except TypeError:  # no __dict__
        own = False
    if own or type(value) in wire.DATA_TYPES or wire.data_base(type(value)) is not None:
        return False  # a judge-side subclass of a container crosses as data
    return callable(value) or _judge_class(type(value))


def _linkable(value: Any) -> bool:
    """The judge's own plain container, linkable: a mutable one, or a non-empty tuple."""
    return type(value) in wire.MERGEABLE or (type(value) is tuple and len(value) > 0)


class TzinfoView(datetime.tzinfo):
    """A tzinfo of the code under test, as C APIs take one: a real subclass of the stdlib's.

    `datetime(..., tzinfo=tz)`, `dt.astimezone(tz)` and `dt.replace(tzinfo=tz)`
    check the type in C, so a handle is refused there (issue 17). The worker
    says which objects are tzinfos (their type's MRO against the stdlib class
    it captured first); the four methods C calls are requests answered with
    data (timedelta, str, datetime), everything else is the handle's.
    """

    utcoffset = _tz_op("utcoffset")
    dst = _tz_op("dst")
    tzname = _tz_op("tzname")
    fromutc = _tz_op("fromutc")
    __getattr__ = _view_getattr
    # Through the handle's operators, not its attributes: `tz == None` is the worker's
    # `operator.eq`, never a bound `__eq__` whose NotImplemented would cross as a handle.
    __eq__ = _on_handle(operator.eq, "__eq__")
    __ne__ = _on_handle(operator.ne, "__ne__")
    __hash__ = _on_handle(hash, "__hash__")
    __repr__ = _on_handle(repr, "__repr__")
    __str__ = _on_handle(str, "__str__")
    __copy__ = _on_handle(Handle.__copy__, "__copy__")
    __deepcopy__ = _on_handle(Handle.__deepcopy__, "__deepcopy__")
    __reduce_ex__ = _on_handle(Handle.__reduce_ex__, "__reduce_ex__")


# --- modules --------------------------------------------------------------------


class StandinModule(types.ModuleType):
    """A module of the tested tree, judge side: its attributes are read in the worker.

    In the worker running now (the run's one, or the fresh one that replaced a
    failed worker), not in the one that was running when the file imported it.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_pj_") or "_pj_name" not in self.__dict__:
            raise AttributeError(name)
        handle = _module_handle(self)
        if name in _OWN or name in _LOCAL:
            return getattr(handle, name)
        # `lib.f(x)` in the caller, or in a rewritten assert: the read and the call in one
        # round trip, as for a handle's method (HandleBase.__getattribute__).
        kind = method_call(sys._getframe(1), name)
        if kind == STORED_CALL:
            return object.__getattribute__(handle, "_pj_worker").stored_method(handle, name)
        if kind:
            return _Method(handle, name)
        return getattr(handle, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_pj_") or (name.startswith("__") and name.endswith("__")):
            super().__setattr__(name, value)
            return
        setattr(_module_handle(self), name, value)

    def __dir__(self) -> list[str]:
        return list(dir(_module_handle(self)))


def _module_handle(module: StandinModule) -> Handle:
    if _state is None:
        raise WorkerFailure("a stand-in module outside the judge's pytest")
    return _imported(_state.current(), module.__dict__["_pj_name"], ImportError)


def _imported(worker: Worker, name: str, error: type[Exception]) -> Handle:
    """The worker's module `name`, imported there once per worker."""
    handle = worker.modules.get(name)
    if handle is None:
        found = worker.request("import", name)
        if not isinstance(found, Handle):
            raise error(f"the worker's {name} is not a module")
        handle = worker.modules[name] = found
    return handle


class _Loader(importlib.abc.Loader):
    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StandinModule(spec.name)
        module.__dict__["_pj_name"] = spec.name
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _JudgeFiles(importlib.abc.MetaPathFinder):
    """The modules of the judge's tree (property files, conftests, helpers) load with the
    judge files' builtins (evaluate.py): what they eval, exec or compile of the code's text
    runs in the worker. The spec is the other finders' (pytest's rewriting hook's)."""

    def __init__(self, state: _State, evaluator: evaluate.Evaluator) -> None:
        self.state, self.evaluator, self.busy = state, evaluator, False

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if self.busy or self.state.ours(fullname):
            return None
        self.busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is not self and hasattr(finder, "find_spec"):
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        break
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        if not (isinstance(spec.origin, str) and _under(spec.origin, self.evaluator.root)):
            return None
        spec.loader = _JudgeFileLoader(spec.loader, self.evaluator.builtins)  # type: ignore[assignment]
        return spec


class _JudgeFileLoader:
    """Another finder's loader, the module given the judge files' builtins before it runs."""

    def __init__(self, inner: Any, own: dict[str, Any]) -> None:
        self._pj_inner, self._pj_builtins = inner, own

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        create = getattr(self._pj_inner, "create_module", None)
        return None if create is None else create(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = self._pj_builtins
        self._pj_inner.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pj_inner, name)


def _worker_builtin(name: str) -> Callable[..., Any]:
    """The running worker's builtins.NAME (`eval`, `exec`, `compile`): a handle, called there."""
    if _state is None:
        raise WorkerFailure("eval out of process outside the judge's pytest")
    worker = _state.current()
    found = worker.evaluators.get(name)
    if found is None:
        found = worker.evaluators[name] = getattr(_worker_module(builtins), name)
    return found


def _worker_module(module: types.ModuleType) -> Any:
    """A module as the worker's own: a stand-in's, or a standard-library one by name."""
    if _state is None:
        raise WorkerFailure("eval out of process outside the judge's pytest")
    if isinstance(module, StandinModule):
        return _module_handle(module)
    name = module.__name__
    if name.partition(".")[0] not in sys.stdlib_module_names or _state.ours(name):
        raise TypeError("only the code's modules and the standard library's cross by name")
    return _imported(_state.current(), name, TypeError)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, state: _State) -> None:
        self.state = state

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in self.state.names:
            return None
        worker = self.state.current()
        handle = worker.request("import", fullname)
        if not isinstance(handle, Handle):
            raise ImportError(f"the worker's {fullname} is not a module")
        worker.modules[fullname] = handle
        package = worker.packages.get(object.__getattribute__(handle, "_pj_id"), False)
        return importlib.machinery.ModuleSpec(fullname, _Loader(handle), is_package=package)


# --- the pytest side -------------------------------------------------------------


class _State:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.names = frozenset(spec.names) - JUDGE_TOOLS
        # One worker for the run (issue 20; RUN), and a number for each one started.
        self.workers: dict[str, Worker] = {}
        self.started = 0
        self.modules: dict[str, dict[str, types.ModuleType]] = {}
        self.key = "<session>"
        self.incidents: list[protocol.Incident] = []
        self.judge_root: str | None = None  # the judge's tree: classes it defines are its own
        self.judge_paths: tuple[str, ...] = ()  # that tree as pytest names it (unresolved)
        self.evaluator: evaluate.Evaluator | None = None  # the judge files' eval (evaluate.py)
        self.drawn: dict[int, Any] = {}  # what hypothesis drew for the example running now
        self.mutations: list[str] = []  # drawn arguments the code changed in place
        # Containers the code kept that the judge did not link (past protocol.LINKS or
        # LINK_BYTES), in the test running now: a failure says so (issue 17).
        self.unlinked: list[str] = []
        # Opaque per-run names for the tests the worker measures: a node id sent in
        # clear told the patch which property was watching (issue 18).
        self.tokens: dict[str, str] = {}
        # node id -> path -> lines, as the channel got them: the review's mutation phase
        # chooses its mutants from them inside this process (review_phase.py, issue 20).
        self.executed: dict[str, dict[str, set[int]]] = {}
        # Node id -> (operation, claimed class) the judge sent to the code's objects (issue 18):
        # "" outside any test (collection, module fixtures).
        self.nodeid = ""
        self.operations: dict[str, set[tuple[str, str]]] = {}
        # The test function's code while it runs (the one frame whose discarded calls may
        # wait, Worker.defer); the worker keeping them; what a late send raised (_settled).
        self.test_code: types.CodeType | None = None
        self.xfail = False  # the test running now is marked xfail: its failure ends nothing
        self.deferring: Worker | None = None
        self.late: BaseException | None = None
        # The judge files whose code asked a worker for something outside any test (at
        # import, at collection): what a conftest or helper computed then is the first
        # harness's, kept for the run ("": no judge file on the stack; review_phase.py).
        self.askers: set[str] = set()

    def asked_from(self, frame: types.FrameType | None) -> None:
        """Note the innermost judge file on the stack of a request made outside any test
        (the module being collected when none is: `_module_key` is its path)."""
        root = self.evaluator.root if self.evaluator is not None else None
        while frame is not None and root is not None:
            name = frame.f_code.co_filename
            if name.startswith("/") and _under(name, root):  # not "<frozen runpy>"
                self.askers.add(os.path.realpath(name))
                return
            frame = frame.f_back
        # pytest's own look at a module's names while it collects one (`__test__`, marks):
        # that module's, imported again with it; anywhere else, no judge file to name.
        self.askers.add(os.path.realpath(self.key) if self.key.startswith("/") else "")

    def token(self, nodeid: str) -> str:
        found = next((t for t, n in self.tokens.items() if n == nodeid), None)
        if found is None:
            found = secrets.token_hex(8)
            self.tokens[found] = nodeid
        return found

    def current(self) -> Worker:
        """The run's worker: every property module's, as bare pytest is one process (issue 20).

        A key given a worker of its own (`dedicate`: a mutant's) gets that one.
        """
        worker = self.workers.get(self.key) or self.workers.get(RUN)
        if worker is None:
            # A per-run name: the home is in the worker's environment and its paths.
            home = Path(self.spec.home) / secrets.token_hex(4)
            self.started += 1
            worker = self.workers[RUN] = Worker(self.spec, self.label(), self.incidents)
            worker.spec = _with_home(self.spec, home)
        return worker

    def dedicate(self, key: str) -> Worker:
        """A fresh worker for `key` alone, never the run's (the review's mutants, issue 20)."""
        worker = self.workers[key] = Worker(self.spec, self.label(), self.incidents)
        return worker

    def label(self) -> str:
        """The module running now, as failures name the worker's: `the worker for FILE`."""
        return os.path.relpath(self.key) if self.key.startswith("/") else self.key

    def ours(self, name: str) -> bool:
        return name.partition(".")[0] in self.names

    def switch(self, key: str) -> None:
        """Point imports at `key`'s worker and its stand-in modules."""
        if key == self.key:
            return
        self.modules[self.key] = {n: m for n, m in sys.modules.items() if self.ours(n)}
        for name in [n for n in sys.modules if self.ours(n)]:
            del sys.modules[name]
        sys.modules.update(self.modules.get(key, {}))
        self.key = key
        worker = self.workers.get(RUN)
        if worker is not None and worker.failure is not None and key != "<session>":
            # A failed worker sinks its own module's tests, not the next module's: a fresh one.
            self.close(RUN)
        elif worker is not None:
            worker.label = self.label()

    def close(self, key: str) -> None:
        worker = self.workers.pop(key, None)
        if worker is None:
            return
        if self.spec.coverage and worker.proc is not None and worker.failure is None:
            try:
                executed = worker.request("executed")
            except Exception:
                executed = {}
            for token, lines in _executed_lines(executed).items():
                # "": outside any test (import time). Any other context the judge never named
                # is the worker's invention.
                nodeid = "" if token == "" else self.tokens.get(token)
                if nodeid is not None:
                    pytest_plugin.emit("executed", nodeid=nodeid, lines=lines)
                    _remember(self.executed, nodeid, lines)
        if worker.proc is not None and worker.failure is None:
            try:
                used = worker.request("dunders")
            except Exception:
                used = {}
            for token, names in _dunder_names(used).items():
                if token in self.tokens:
                    pytest_plugin.emit("dunders", nodeid=self.tokens[token], names=names)
        if worker.requests:
            pytest_plugin.emit("requests", counts=dict(sorted(worker.requests.items())))
        worker.close()


RUN = "<run>"  # the key of the run's one worker
# The judge's own requests (a module's import, the test's name, the records at close).
_OWN_REQUESTS = frozenset({protocol.IMPORT, protocol.CONTEXT, protocol.EXECUTED, protocol.DUNDERS})


def _remember(into: dict[str, dict[str, set[int]]], nodeid: str, lines: Any) -> None:
    for path, numbers in lines.items():
        into.setdefault(nodeid, {}).setdefault(path, set()).update(numbers)


def _with_home(spec: Spec, home: Path) -> Spec:
    return spec._replace(home=str(home))


def _executed_lines(found: Any) -> dict[str, dict[str, list[int]]]:
    """The worker's coverage, kept only where it has the shape it must have."""
    if type(found) is not dict:
        return {}
    return {
        nodeid: {p: list(n) for p, n in files.items() if type(p) is str and type(n) is list
                 and all(type(i) is int for i in n)}
        for nodeid, files in found.items()
        if type(nodeid) is str and type(files) is dict
    }  # fmt: skip


def _dunder_names(found: Any) -> dict[str, list[str]]:
    """The worker's record of the code's dunders per node id, kept where it has its shape."""
    if type(found) is not dict:
        return {}
    return {
        nodeid: sorted({n[:300] for n in names if type(n) is str})
        for nodeid, names in found.items()
        if type(nodeid) is str and type(names) is tuple
    }


_state: _State | None = None
_started: list[Worker] = []
# How many times a retired worker was asked for something (Worker.retired): the test that
# asked is not judged in this process (review_phase.py's differential hands it back).
STALE = [0]


class WorkerPrng:
    """The workers' global PRNGs, as the judge's hypothesis manages them (`register_random`).

    hypothesis seeds every registered PRNG at each example's start and restores
    it at the end (`deterministic_PRNG`), and `st.random_module()` seeds again
    with what it drew. Here a seeding is a (serial, seed) pushed on `stack`, a
    state is `stack` itself, and each worker's next request carries the seeds
    the worker follows (`seeds`, protocol.SEEDS), so the code's `random` draws
    the same, run after run (issue 17).

    The worker does not follow the example's own seeding (the outermost):
    every example starting again from one state is what code that draws can
    see, out of process as in process (a state it saw before, though it drew
    since; `random.Random(0)`'s, which is public), and a patch right only then
    was accepted (red team, session 12, third round). It follows one seeding
    of its own instead, once, at its first request (serial 0: the run's seed
    `salt`, the worker's hash seed, mixed; the key's or the commit's, which the
    code cannot know), and its state goes on from example to example as in a
    user's process. A nested seeding (`st.random_module()`'s drawn seed, which
    the property sees) it follows as drawn, and leaves again.
    """

    def __init__(self, salt: str = "0") -> None:
        self.stack: tuple[tuple[int, int], ...] = ()
        self.serials = itertools.count(1)
        self.salt(salt)

    def salt(self, salt: str) -> None:
        """The worker's own seeding: from `salt`, the worker's hash seed."""
        self.own = (0, salted_seed(salt, 0))

    @property
    def seeds(self) -> tuple[tuple[int, int], ...]:
        """What each worker follows: its own seeding, then every nested one in force."""
        return (self.own, *self.stack[1:])

    def seed(self, seed: Any) -> None:
        if not (type(seed) is int and 0 <= seed < protocol.SEED_LIMIT):
            raise ValueError(f"a worker's PRNG is seeded with an int below 2**32, not {seed!r}")
        if len(self.stack) >= protocol.SEED_DEPTH:
            raise ValueError(f"more than {protocol.SEED_DEPTH} seedings of the PRNGs at once")
        self.stack = (*self.stack, (next(self.serials), seed))

    def getstate(self) -> tuple[tuple[int, int], ...]:
        return self.stack

    def setstate(self, state: tuple[tuple[int, int], ...]) -> None:
        self.stack = state


@functools.lru_cache(maxsize=64)
def salted_seed(salt: str, seed: int) -> int:
    """Pure: a worker's own seeding of its PRNGs, below protocol.SEED_LIMIT."""
    digest = hashlib.sha256(f"patchjudge-prng:{salt}:{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % protocol.SEED_LIMIT


_PRNG = WorkerPrng()


@atexit.register
def _reap() -> None:
    """No worker outlives the judge's process: the gate counts one that does as escaped."""
    for worker in _started:
        if worker.proc is not None and worker.proc.poll() is None:
            worker.proc.kill()
            worker.proc.wait()


def _install(spec: Spec) -> _State:
    """Stand-ins for the tree's names; the judge keeps the real modules it imported already.

    A tree may provide a module the judge itself runs on (attrs, packaging,
    pluggy, patchjudge): the judge's modules hold theirs by reference, and
    sys.modules gets stand-ins so that property files import the tested ones.
    """
    state = _State(spec)
    _forget_judge_modules(state, keep=_own_chain())
    from hypothesis import register_random  # the judge's: its pytest loads it anyway

    _PRNG.salt(spec.hash_seed)
    register_random(_PRNG)
    sys.meta_path.insert(0, _Finder(state))
    # Text the code produced never runs as judge code (evaluate.py): the judge's files (its
    # pytest's cwd and rootdir) eval in the worker, and the audit hook refuses other routes.
    box = evaluate.Box(builtin=_worker_builtin, module=_worker_module)
    state.evaluator = evaluate.Evaluator(box, root=str(Path.cwd()), code=(spec.tree, spec.home))
    sys.meta_path.insert(0, _JudgeFiles(state, state.evaluator))
    sys.addaudithook(state.evaluator.audit_hook())
    abc.ABCMeta.__instancecheck__ = _abc_instancecheck  # type: ignore[method-assign]
    abc.ABCMeta.__subclasscheck__ = _abc_subclasscheck  # type: ignore[method-assign]
    return state


_ABC_INSTANCECHECK = abc.ABCMeta.__instancecheck__
_ABC_SUBCLASSCHECK = abc.ABCMeta.__subclasscheck__


# The ABCs of collections.abc answer from the methods a class has: a handle
# has every operator, so judge side it would be Sized, Iterable, Reversible
# whatever it stands for. The worker answers for the classes that cross by name.
def _abc_instancecheck(cls: abc.ABCMeta, instance: Any) -> bool:
    if type(instance) in HANDLE_TYPES and wire.stdlib_code(cls) is not None:
        return _asked(instance, "instancecheck", cls)
    return bool(_ABC_INSTANCECHECK(cls, instance))


def _abc_subclasscheck(cls: abc.ABCMeta, subclass: Any) -> bool:
    if type(subclass) in HANDLE_TYPES and wire.stdlib_code(cls) is not None:
        return _asked(subclass, "subclasscheck", cls)
    return bool(_ABC_SUBCLASSCHECK(cls, subclass))


def _asked(handle: Handle, op: str, cls: type) -> bool:
    worker = object.__getattribute__(handle, "_pj_worker")
    return worker.request("op", op, cls, (handle,)) is True


# The judge's plugin loaded before this one (`-p` order, lanes/properties.py): it is
# mid-import when this module installs the stand-ins and pytest looks it up after.
JUDGE_PLUGINS = frozenset({"patchjudge.review_phase", "patchjudge.boundary.preload"})


def _own_chain() -> set[str]:
    """This module and its packages: still being imported, pytest looks them up after."""
    parts = __name__.split(".")
    return {".".join(parts[: i + 1]) for i in range(len(parts))} | JUDGE_PLUGINS


def _forget_judge_modules(state: _State, keep: set[str]) -> None:
    for name in [n for n in sys.modules if state.ours(n) and n not in keep]:
        del sys.modules[name]


def pytest_configure(config: pytest.Config) -> None:
    # The tree is patchjudge itself: now that this plugin is loaded, its own
    # package goes too (pytest_plugin._prefer_tree does the same in process).
    if _state is not None:
        _forget_judge_modules(_state, keep=set())
        _state.judge_root = str(Path(config.rootpath).resolve())
        _state.judge_paths = (str(config.rootpath),)


# At import (`-p`), before pytest loads the judge tree's initial conftests: a
# conftest.py that imports the tested code gets stand-ins too. Taken out of the
# environment: nothing the judge starts inherits it.
_spec_text = os.environ.pop(ENV, None)
_launcher_text = os.environ.pop(protocol.LAUNCHER_ENV, None)

Changes = tuple[tuple[str, str | None], ...]


def environ_crosses(
    name: str, value: str | None, hidden: tuple[str, ...], data: tuple[str, ...] = ()
) -> bool:
    """Pure: the test's change of `name` to `value` reaches the worker: not a refused name
    (protocol.ENVIRON_REFUSED), nor a value naming a path in the judge's tree (`hidden`)
    other than a declared data file's (`data`: absolute paths, `[properties] data`).
    The worker's tree holds no property file, so it could not open one; crossed, the
    library fails on it at once (whenever's `TZ=<its tzif file>` at a property module's
    import, a collection error for the whole file), where its own value fails those tests
    alone; and the code has no business learning where its judge is. A declared file is
    bound at that path in the worker's box: naming it tells the code nothing the box
    does not show it already."""
    if protocol.environ_refused(name):
        return False
    if value is None:
        return True
    # A path list (or TZ's ':' form) names each file whole: a declared file is one of its
    # items, never a part of a longer one.
    return all(
        item in data or not any(path in item for path in hidden) for item in value.split(":")
    )


def environ_changes(
    base: dict[str, str],
    now: Mapping[str, str],
    hidden: tuple[str, ...] = (),
    data: tuple[str, ...] = (),
) -> Changes:
    """Pure: what the tests changed of the judge's environment, as the worker applies it
    (protocol.ENVIRON): each name whose value is not `base`'s, with its value now (None:
    deleted), of those that cross (environ_crosses); never a name unchanged, so none of the
    judge's own values."""
    changed: list[tuple[str, str | None]] = [(k, v) for k, v in now.items() if base.get(k) != v]
    changed += [(k, None) for k in base if k not in now]
    return tuple(sorted(pair for pair in changed if environ_crosses(*pair, hidden, data)))


# The judge's environment before any test ran (the spec and launcher taken out): a worker
# starts from it, and what differs from it later is the property's (environ_changes).
_ENVIRON_BASE = dict(os.environ)
# os.environ's own store (bytes), compared as is to what was seen at the last request (under
# a microsecond with 35 names): only the names that differ are decoded and looked at again, so
# pytest's PYTEST_CURRENT_TEST, changed every test phase and refused, costs no new changes.
_environ_seen: dict[Any, Any] = {}
_environ_changed: dict[str, str | None] = {}  # name -> its value now (None: deleted)
_environ_sent: list[Changes] = [()]
_environ_lock = threading.Lock()


def _environ_changes() -> Changes:
    data = getattr(os.environ, "_data", None)
    if type(data) is not dict:  # not CPython's os.environ: work it out whole
        return environ_changes(_ENVIRON_BASE, os.environ, *_judge_paths())
    if data == _environ_seen:
        return _environ_sent[0]
    with _environ_lock:  # two workers' requests from two of the test's threads
        return _environ_update(data, *_judge_paths())


def _environ_update(
    data: dict[Any, Any], hidden: tuple[str, ...], declared: tuple[str, ...]
) -> Changes:
    touched = {k for k, v in data.items() if _environ_seen.get(k) != v}
    touched |= _environ_seen.keys() - data.keys()
    _environ_seen.clear()
    _environ_seen.update(data)
    now = {name: os.environ.get(name) for name in map(os.fsdecode, touched)}
    for name, value in now.items():
        if protocol.environ_refused(name):
            continue
        if value == _ENVIRON_BASE.get(name) or not environ_crosses(name, value, hidden, declared):
            _environ_changed.pop(name, None)
        else:
            _environ_changed[name] = value
    changes = tuple(sorted(_environ_changed.items()))
    if changes != _environ_sent[0]:
        _environ_sent[0] = changes
    return _environ_sent[0]


def _judge_paths() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The judge's tree as pytest names it and resolved (environ_crosses' `hidden`), and
    the declared data files under each (its `data`)."""
    if _state is None or _state.judge_root is None:
        return (), ()
    roots = tuple(dict.fromkeys((*_state.judge_paths, _state.judge_root)))
    return roots, tuple(f"{root.rstrip('/')}/{path}" for root in roots for path in _state.spec.data)


_client: list[launcher.Client] = []


def _launcher() -> launcher.Client | None:
    """The lane's launcher, when this pytest runs in a box of its own (launcher.py)."""
    if _launcher_text is None:
        return None
    if not _client:
        _client.append(launcher.Client(int(_launcher_text)))
    return _client[0]


def _share_one_cpu() -> None:
    """Run the judge (and so the workers it starts, which inherit it) on one CPU.

    Judge and worker take turns on every call: on one CPU a round trip skips
    the wake-up across CPUs (bench/oracle_boundary.py: 106 µs on any CPU,
    58 µs on one). The CPU is the one the judge is on now, so parallel
    judges (the review's mutants) stay spread.
    """
    try:
        allowed = os.sched_getaffinity(0)
        stat = Path("/proc/self/stat").read_bytes()
        cpu = int(stat[stat.rfind(b")") + 2 :].split()[36])
        if len(allowed) > 1 and cpu in allowed:
            os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError, ValueError, IndexError):
        pass  # not Linux, or no say over affinity: correct, only slower


# What the judge's pickle may load by name (issue: redteam): bytes a property unpickles may be
# the code's (`pickle.loads(lib.dumps(x))`), and a pickle names any function to call — `eval`
# with the code's text would run in the judge, outside the box. Data and the classes of these
# data modules load; so do the judge's own classes and worker objects (their calls cross).
_PICKLE_DATA_MODULES = frozenset(
    {"builtins", "collections", "datetime", "decimal", "fractions", "ipaddress", "pathlib",
     "uuid", "array", "zoneinfo"}
)  # fmt: skip
# The functions older protocols rebuild by: objects (0 and 1), bytes (0 to 2).
_PICKLE_FUNCTIONS = frozenset({("copyreg", "_reconstructor"), ("_codecs", "encode")})
_BaseUnpickler = pickle.Unpickler


class _JudgeUnpickler(_BaseUnpickler):
    def find_class(self, module: str, name: str) -> Any:
        loaded = sys.modules.get(module)  # never an import: a module's import runs its code
        found = _pickle_global(loaded, name) if loaded is not None else None
        if found is _unpickled or isinstance(found, Handle | StandinModule):
            return found
        if isinstance(found, type) and (
            module in _PICKLE_DATA_MODULES or _judge_class(found) or "_pj_worker" in found.__dict__
        ):
            return found
        if (module, name) in _PICKLE_FUNCTIONS:
            return found
        raise pickle.UnpicklingError(
            f"{module}.{name}: the judge's pickle loads data, the judge's own classes and the "
            "code's objects, never another function or class (it would run outside the box)"
        )


def _pickle_global(module: Any, name: str) -> Any:
    found = module
    for part in name.split("."):
        if part.startswith("_") and found is not module:
            return None
        found = getattr(found, part, None)
    return found


def _judge_loads(data: Any, /, **options: Any) -> Any:
    return _JudgeUnpickler(io.BytesIO(data), **options).load()


def _judge_load(file: Any, **options: Any) -> Any:
    return _JudgeUnpickler(file, **options).load()


if _spec_text is not None:
    _share_one_cpu()
    _state = _install(protocol.decode_spec(_spec_text))
    pickle.Unpickler, pickle.loads, pickle.load = _JudgeUnpickler, _judge_loads, _judge_load  # type: ignore[misc]


def _module_key(path: Path) -> str:
    return str(path)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    if _state is None or not isinstance(collector, pytest.Module):
        return (yield)
    previous = _state.key
    _state.switch(_module_key(collector.path))
    seen = len(_state.incidents)
    try:
        report = yield
    finally:
        _state.switch(previous)
    if report.failed and len(_state.incidents) > seen:
        _emit_failure(report.nodeid, "collect", _state.incidents[seen])
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if _state is not None and report.failed and call.excinfo is not None:
        _emit_failure(item.nodeid, report.when, _first_incident(call.excinfo.value))
    return report


def _emit_failure(nodeid: str, when: str, incident: protocol.Incident | None) -> None:
    """The reason as data on the judge's channel (issue 17): the lane renders it, never parses."""
    if incident is not None:
        cause, worker, detail = incident
        pytest_plugin.emit(
            "worker_failure", nodeid=nodeid, when=when, cause=cause.value, worker=worker,
            detail=detail,
        )  # fmt: skip


def _first_incident(exc: BaseException) -> protocol.Incident | None:
    """The first worker failure pytest shows for `exc`: its chain oldest first, groups within."""
    order: list[BaseException] = []
    seen: set[int] = set()

    def walk(e: BaseException | None, depth: int) -> None:
        if e is None or id(e) in seen or depth > 64:
            return
        seen.add(id(e))
        walk(e.__cause__ or (None if e.__suppress_context__ else e.__context__), depth + 1)
        order.append(e)
        for inner in e.exceptions if isinstance(e, BaseExceptionGroup) else ():
            walk(inner, depth + 1)

    walk(exc, 0)
    return next((e.incident for e in order if isinstance(e, WorkerFailure) and e.incident), None)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, Any, Any]:
    if _state is None:
        return (yield)
    key = _module_key(item.path)
    _state.switch(key)
    worker = _state.current()
    worker.context = _state.token(item.nodeid)
    _state.nodeid = item.nodeid
    # Always, not only for coverage: the worker records the code's dunders per test.
    if worker.proc is not None:
        with contextlib.suppress(WorkerFailure):
            worker.request("context", worker.context)
    try:
        return (yield)
    finally:
        _state.nodeid = ""
        ops = _state.operations.pop(item.nodeid, set())
        if ops:
            pytest_plugin.emit("operations", nodeid=item.nodeid, ops=sorted(ops))
        if nextitem is None or _module_key(nextitem.path) != key:
            _state.switch("<session>")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    if _state is None:
        return (yield)
    seen = len(_state.incidents)
    _record_drawn(item)
    _state.mutations = []
    _state.unlinked = []
    _state.test_code = _test_code(getattr(item, "obj", None))
    _state.xfail = item.get_closest_marker("xfail") is not None
    raised: BaseException | None = None
    try:
        result = yield
    except BaseException as exc:
        raised = exc
    finally:
        # The test's discarded calls sent (Worker.defer): what one raised is the test's error.
        first = _settled(raised)
        raised = raised if first is None else first
        _state.test_code = None
    if raised is not None:
        if _state.unlinked:
            raised.add_note(
                f"note: the code under test kept {len(_state.unlinked)} container(s) the"
                f" property passed it ({', '.join(sorted(set(_state.unlinked)))}) past the"
                f" boundary's cap ({protocol.LINKS} kept, {protocol.LINK_BYTES} bytes each):"
                " a change made to one on either side afterwards is not seen by the other;"
                " keep kept containers small, or list the file in [properties] in_process"
            )
        if _state.mutations:
            raised.add_note(
                "note: the code under test changed "
                + ", ".join(sorted(set(_state.mutations)))
                + " of a call in place, a value hypothesis drew: the property sees the value"
                " it drew; to check an in-place change, pass a copy (ys = list(xs))"
            )
        raise raised
    # The property may have caught the error (pytest.raises(Exception), a bare
    # except): what the worker could not do still fails it.
    if len(_state.incidents) > seen:
        raise WorkerFailure(_state.incidents[seen])
    return result


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """An enum member or a compiled pattern of the code under test gets its in-process id."""
    if _state is None or not isinstance(val, HandleBase):
        return None
    owner = _owner(val)
    return None if owner is None else owner[0].id_texts.get(owner[1])


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _state is None:
        return
    for key in list(_state.workers):
        _state.close(key)
