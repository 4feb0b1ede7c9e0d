"""The judge's side of the oracle's boundary: stand-in modules and handles for the code under test.

Loaded into the judge's pytest (`-p patchjudge.standin`) when the gate sets
$PATCHJUDGE_ORACLE. Importing a name the tested tree provides gives a
stand-in module whose attributes live in a worker process (worker.py, one a
property module); everything the worker sends is decoded by wire.py and
checked here: a reply must answer the call in flight, a judge function it
asks for must be one the judge gave it, a handle is an id into its table and
nothing more. A worker that crashes, stalls past the per-call deadline, sends
what wire.py refuses or breaks the protocol is killed, and the property that
was running fails with the reason, whatever the property did with the error.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import secrets
import select
import subprocess
import sys
import types
import weakref
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from patchjudge import proc, pytest_plugin, sandbox, wire

ENV = "PATCHJUDGE_ORACLE"
HANDLE, JUDGE_FN = 1, 2  # wire.Ref kinds, as worker.py numbers them
# Per call, counted while the worker has the turn (not while a judge function runs).
DEFAULT_CALL_TIMEOUT_S = 10.0
_WORKER_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "TERM", "USER", "LOGNAME")
_INTERRUPTS = (KeyboardInterrupt, GeneratorExit)
# The judge's test tools stay the judge's even where the tree provides them:
# property files import them to judge with, not as code under test.
JUDGE_TOOLS = frozenset(
    {"pytest", "_pytest", "hypothesis", "_hypothesis_pytestplugin", "_hypothesis_globals",
     "_hypothesis_ftz_detector", "coverage"}
)  # fmt: skip


class WorkerFailure(Exception):
    """The worker could not answer: the property that was running fails with this reason."""


@dataclass(frozen=True)
class Spec:
    """How to start a worker, as the gate wrote it into $PATCHJUDGE_ORACLE."""

    python: str
    tree: str
    home: str
    names: tuple[str, ...]  # top-level modules the tested tree provides: these are stand-ins
    pythonpath: tuple[str, ...] = ()
    coverage: tuple[str, ...] = ()
    box: dict[str, Any] | None = None  # sandbox.Box fields from Run.box, or None
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S

    @classmethod
    def from_json(cls, text: str) -> Spec:
        doc = json.loads(text)
        return cls(
            python=doc["python"],
            tree=doc["tree"],
            home=doc["home"],
            names=tuple(doc["names"]),
            pythonpath=tuple(doc.get("pythonpath", ())),
            coverage=tuple(doc.get("coverage", ())),
            box=doc.get("box"),
            call_timeout_s=float(doc.get("call_timeout_s", DEFAULT_CALL_TIMEOUT_S)),
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "python": self.python,
                "tree": self.tree,
                "home": self.home,
                "names": list(self.names),
                "pythonpath": list(self.pythonpath),
                "coverage": list(self.coverage),
                "box": self.box,
                "call_timeout_s": self.call_timeout_s,
            }
        )


@dataclass
class _Frame:
    """One call in flight: the judge's exceptions its callbacks raised, which it may name."""

    ident: int
    raised: dict[int, BaseException] = field(default_factory=dict)


class Worker:
    """One worker process and the judge's side of its protocol."""

    def __init__(self, spec: Spec, label: str, incidents: list[str]) -> None:
        self.spec, self.label, self.incidents = spec, label, incidents
        self.proc: subprocess.Popen[bytes] | None = None
        self.fd_in = self.fd_out = -1
        self.buffer = bytearray()
        self.failure: str | None = None
        self.frames: list[_Frame] = []
        self.next_id = 1
        self.proxies: weakref.WeakValueDictionary[int, Handle] = weakref.WeakValueDictionary()
        self.counts: dict[int, int] = {}
        self.released: list[tuple[int, int]] = []
        self.exception_classes: dict[tuple[str, str], type[BaseException]] = {}
        self.packages: dict[int, bool] = {}
        self.modules: dict[str, Handle] = {}  # module name -> its handle, for stand-in modules
        # Judge functions given to this worker, by the id it may ask for: kept for the
        # worker's life, since a lazy iterator calls its predicate after the call returned.
        self.functions: dict[int, Callable[..., Any]] = {}
        self.function_ids: dict[int, int] = {}
        # The node id running now: a worker started lazily mid-test measures it from its start.
        self.context: str | None = None

    # --- lifetime ---
    def start(self) -> None:
        here = Path(__file__).resolve().parent
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        keep = (to_worker_r, from_worker_w)
        argv = [
            self.spec.python, *proc.ISOLATED_PYTHON,
            str(here / "worker.py"), str(here / "wire.py"), str(keep[0]), str(keep[1]),
            self.spec.tree, os.pathsep.join(self.spec.pythonpath),
            os.pathsep.join(self.spec.coverage),
        ]  # fmt: skip
        box = None
        if self.spec.box is not None:
            fields = dict(self.spec.box)
            box = sandbox.Box(
                tree=Path(fields["tree"]),
                home=Path(fields["home"]),
                readonly=(*(Path(p) for p in fields.get("readonly", ())), here),
                keep_fds=keep,
            )
        home = Path(self.spec.home)
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        env = {k: os.environ[k] for k in _WORKER_ENV if k in os.environ}
        env.update(
            HOME=str(home),
            TMPDIR=str(home / "tmp"),
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONHASHSEED=proc.HASH_SEED,
        )
        # Same process group as the judge: a lane timeout kills both, nothing escapes it.
        with sandbox.wrapped(box, argv) as (boxed, fds):
            self.proc = subprocess.Popen(
                boxed,
                pass_fds=(*keep, *fds),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                cwd=self.spec.tree,
            )
        _started.append(self)
        os.close(to_worker_r)
        os.close(from_worker_w)
        self.fd_out, self.fd_in = to_worker_w, from_worker_r

    def close(self) -> None:
        if self.proc is None:
            return
        if self.failure is None:
            with contextlib.suppress(WorkerFailure):
                self._send(wire.encode(("bye",)))
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.fd_in, self.fd_out):
            os.close(fd)
        self.proc = None

    def fail(self, reason: str) -> WorkerFailure:
        """Kill the worker; every later call on it fails with the same reason."""
        if self.failure is None:
            self.failure = f"the worker for {self.label} {reason}"
            self.incidents.append(self.failure)
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return WorkerFailure(self.failure)

    # --- calls ---
    def request(self, op: str, *args: Any) -> Any:
        if self.failure is not None:
            self.incidents.append(self.failure)
            raise WorkerFailure(self.failure)
        if self.proc is None:
            self.start()
            if self.spec.coverage and self.context is not None and op != "context":
                self.request("context", self.context)
        frame = _Frame(self.next_id)
        self.next_id += 1
        self.frames.append(frame)
        try:
            try:
                payload = wire.encode(("q", frame.ident, op, *args), self._to_ref)
            except wire.WireError as exc:
                raise TypeError(f"cannot cross to the code under test: {exc}") from None
            if self.released:
                released, self.released = self.released, []
                self._send(wire.encode(("rel", tuple(released))))
            self._send(payload)
            return self._await(frame, args if op == "call" else None)
        finally:
            self.frames.pop()

    def _await(self, frame: _Frame, call: tuple[Any, ...] | None) -> Any:
        while True:
            message = self._receive()
            if not (type(message) is tuple and len(message) >= 2 and type(message[1]) is int):
                raise self.fail(f"broke the protocol: sent {type(message).__name__}, not a message")
            kind, ident = message[0], message[1]
            if kind in ("ok", "err") and ident != frame.ident:
                raise self.fail(f"broke the protocol: forged a reply to call {ident}, not asked")
            if kind == "ok" and len(message) == 4:
                if call is not None:
                    self._copy_back(call, message[3])
                return message[2]
            if kind == "err" and len(message) == 3:
                raise self._exception(message[2])
            if kind == "cb" and len(message) == 5:
                self._callback(*message[1:])
                continue
            raise self.fail(f"broke the protocol: a {kind!r} message of {len(message)} fields")

    def _callback(self, ident: int, fn_id: Any, args: Any, kwargs: Any) -> None:
        fn = self.functions.get(fn_id) if type(fn_id) is int else None
        if fn is None:
            raise self.fail(
                f"broke the protocol: asked to call judge function {fn_id!r}, not given"
            )
        if type(args) is not tuple or type(kwargs) is not dict:
            raise self.fail("broke the protocol: a callback's arguments are not a tuple and a dict")
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            token = self.next_id
            self.next_id += 1
            self.frames[-1].raised[token] = exc
            if type(exc).__module__ == "builtins" and isinstance(exc, Exception):
                args_ = exc.args if wire.is_data(exc.args) else (str(exc),)
                desc: tuple[Any, ...] = ("builtin", token, type(exc).__name__, args_)
            else:
                desc = ("judge", token, type(exc).__name__)
            self._send(wire.encode(("err", ident, desc)))
            return
        try:
            payload = wire.encode(("ok", ident, result, ()), self._to_ref)
        except wire.WireError as exc:
            payload = wire.encode(("err", ident, ("builtin", 0, "TypeError", (str(exc),))))
        self._send(payload)

    def _copy_back(self, call: tuple[Any, ...], mutated: Any) -> None:
        """The list, dict and set arguments the code changed in place, changed here too."""
        _, args, kwargs = call
        if type(mutated) is not tuple:
            raise self.fail("broke the protocol: changed arguments are not a tuple")
        for pair in mutated:
            if not (type(pair) is tuple and len(pair) == 2):
                raise self.fail("broke the protocol: a changed argument is not a pair")
            key, value = pair
            if type(key) is int and 0 <= key < len(args):
                original = args[key]
            elif type(key) is str and key in kwargs:
                original = kwargs[key]
            else:
                raise self.fail(f"broke the protocol: changed argument {key!r} was not passed")
            if type(original) is not type(value):
                continue
            if type(original) is list:
                original[:] = value
            elif type(original) in (dict, set):
                original.clear()
                original.update(value)

    def _exception(self, desc: Any) -> BaseException:
        if type(desc) is not tuple or not desc or type(desc[0]) is not str:
            return self.fail("broke the protocol: an error that is not described")
        kind = desc[0]
        if kind == "builtin" and len(desc) == 3 and type(desc[1]) is str:
            return _builtin_exception(desc[1], desc[2])
        if kind == "foreign" and len(desc) == 4 and isinstance(desc[1], type):
            cls, instance, message = desc[1], desc[2], desc[3]
            if not issubclass(cls, BaseException) or not hasattr(cls, "_pj_worker"):
                return self.fail("broke the protocol: raised something that is not its exception")
            exc = cls(str(message))
            exc._pj_handle = instance  # type: ignore[attr-defined]
            return exc
        if kind == "judge" and len(desc) == 2:
            raised = next((f.raised[desc[1]] for f in self.frames if desc[1] in f.raised), None)
            if raised is None:
                return self.fail(f"broke the protocol: named judge exception {desc[1]!r}")
            return raised
        if kind == "uncrossable" and len(desc) == 2:
            reason = f"returned a value that cannot cross: {str(desc[1])[:200]}"
            self.incidents.append(f"the worker for {self.label} {reason}")
            return WorkerFailure(self.incidents[-1])
        return self.fail(f"broke the protocol: an error of kind {kind!r}")

    # --- references ---
    def _to_ref(self, obj: Any) -> wire.Ref:
        owner = _owner(obj)
        if owner is not None:
            worker, ident = owner
            if worker is not self:
                raise wire.WireError("a handle from another property module's worker")
            return wire.Ref(HANDLE, ident)
        if callable(obj) and not isinstance(obj, type):
            known = self.function_ids.get(id(obj))
            if known is None:
                known = self.next_id
                self.next_id += 1
                self.functions[known] = obj
                self.function_ids[id(obj)] = known
            return wire.Ref(JUDGE_FN, known)
        raise wire.WireError(f"{type(obj).__name__} (a judge-side object) cannot cross")

    def _from_ref(self, ref: wire.Ref) -> Any:
        if ref.kind == JUDGE_FN:
            if ref.id in self.functions:
                return self.functions[ref.id]
            raise wire.WireError(f"judge function {ref.id} was never given to this worker")
        if ref.kind != HANDLE:
            raise wire.WireError(f"reference of kind {ref.kind}")
        meta = ref.meta
        if meta is not None:
            if _is_exception_meta(meta):
                return self._exception_class(ref.id, meta[1], meta[2])
            if not _is_module_meta(meta):
                raise wire.WireError("a handle with a description the judge does not know")
            self.packages[ref.id] = meta[2]
        proxy = self.proxies.get(ref.id)
        if proxy is not None:
            self.counts[ref.id] += 1
            return proxy
        proxy = Handle._make(self, ref.id)
        self.proxies[ref.id] = proxy
        self.counts[ref.id] = 1
        weakref.finalize(proxy, self._forget, ref.id)
        return proxy

    def _forget(self, ident: int) -> None:
        if self.proc is not None and self.failure is None:
            self.released.append((ident, self.counts.pop(ident, 1)))

    def _exception_class(
        self, ident: int, chain: tuple[tuple[str, str], ...], builtin: str
    ) -> type[BaseException]:
        base = getattr(builtins, builtin, None)
        if not (isinstance(base, type) and issubclass(base, Exception)):
            base = Exception
        cls: type[BaseException] = base
        for module, qualname in reversed(chain):
            known = self.exception_classes.get((module, qualname))
            if known is None or known.__bases__ != (cls,):
                body = {
                    "__module__": module,
                    "__qualname__": qualname,
                    "__getattr__": _exception_getattr,
                    "_pj_worker": self,
                    "_pj_id": None,
                }
                known = types.new_class(
                    qualname.rsplit(".", 1)[-1], (cls,), exec_body=_filler(body)
                )
                self.exception_classes[(module, qualname)] = known
            cls = known
        type.__setattr__(cls, "_pj_id", ident)
        return cls

    # --- frames ---
    def _send(self, payload: bytes) -> None:
        data = wire.frame(payload)
        try:
            while data:
                data = data[os.write(self.fd_out, data) :]
        except OSError as exc:
            raise self.fail(f"is gone ({exc.strerror})") from None

    def _receive(self) -> Any:
        timeout = self.spec.call_timeout_s
        while True:
            try:
                payload = wire.take_frame(self.buffer)
                if payload is not None:
                    return wire.decode(payload, self._from_ref)
            except (wire.WireError, RecursionError) as exc:
                raise self.fail(f"sent malformed data: {exc}") from None
            ready, _, _ = select.select([self.fd_in], [], [], timeout)
            if not ready:
                raise self.fail(f"did not answer within the {timeout:g} s call deadline")
            chunk = os.read(self.fd_in, 1 << 20)
            if not chunk:
                assert self.proc is not None
                code = self.proc.wait()
                raise self.fail(f"crashed (exit {code})")
            self.buffer += chunk


def _owner(obj: Any) -> tuple[Worker, int] | None:
    """The worker and id behind a handle, a stand-in module, exception class or instance."""
    if isinstance(obj, Handle):
        return object.__getattribute__(obj, "_pj_worker"), object.__getattribute__(obj, "_pj_id")
    if isinstance(obj, StandinModule):
        return _owner(_module_handle(obj))
    if isinstance(obj, type) and isinstance(obj.__dict__.get("_pj_id"), int):
        return obj.__dict__["_pj_worker"], obj.__dict__["_pj_id"]
    if isinstance(obj, BaseException) and "_pj_handle" in getattr(obj, "__dict__", {}):
        return _owner(obj.__dict__["_pj_handle"])
    return None


def _is_exception_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 3
        and meta[0] == "exc"
        and type(meta[1]) is tuple
        and all(
            type(p) is tuple and len(p) == 2 and all(type(s) is str and s for s in p)
            for p in meta[1]
        )
        and type(meta[2]) is str
    )


def _is_module_meta(meta: Any) -> bool:
    return (
        type(meta) is tuple
        and len(meta) == 3
        and meta[0] == "module"
        and type(meta[1]) is str
        and type(meta[2]) is bool
    )


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
_BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bytes, bool, list, tuple, dict, set)}


class Handle:
    """An object of the code under test: every use is a call into its worker."""

    __slots__ = ("__weakref__", "_pj_id", "_pj_worker")

    @classmethod
    def _make(cls, worker: Worker, ident: int) -> Handle:
        proxy = object.__new__(cls)
        object.__setattr__(proxy, "_pj_worker", worker)
        object.__setattr__(proxy, "_pj_id", ident)
        return proxy

    def _pj(self, op: str, *args: Any) -> Any:
        return object.__getattribute__(self, "_pj_worker").request(op, *args)

    def __getattr__(self, name: str) -> Any:
        if name in _LOCAL:
            return self._pj_local(name)
        if name.startswith("_pj_"):
            raise AttributeError(name)
        return self._pj("getattr", self, name)

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
            params = self._pj("op", "signature", self, ())
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
        self._pj("setattr", self, name, value)

    def __delattr__(self, name: str) -> None:
        self._pj("delattr", self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._pj("call", self, args, kwargs)

    def __repr__(self) -> str:
        try:
            text = self._pj("op", "repr", self, ())
        except Exception:
            return f"<handle {object.__getattribute__(self, '_pj_id')} (no repr)>"
        return text if type(text) is str else "<handle>"

    def __bool__(self) -> bool:
        return bool(self._pj("op", "bool", self, ()))

    def __hash__(self) -> int:
        value = self._pj("op", "hash", self, ())
        if type(value) is not int:
            raise TypeError("hash did not return an int")
        return value

    def __iter__(self) -> Iterator[Any]:
        return self._pj("op", "iter", self, ())  # type: ignore[no-any-return]

    def __exit__(self, *exc: object) -> Any:
        return self._pj("op", "exit", self, ())

    __str__ = _op("str")
    __len__ = _op("len")
    __next__ = _op("next")
    __reversed__ = _op("reversed")
    __getitem__ = _op("getitem")
    __setitem__ = _op("setitem")
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
    setattr(Handle, f"__{_name}__", _op(_fn))
    setattr(Handle, f"__r{_name}__", _op("r" + _name))
    setattr(Handle, f"__i{_name}__", _op("i" + _name))


# --- modules --------------------------------------------------------------------


class StandinModule(types.ModuleType):
    """A module of the tested tree, judge side: its attributes are read in the worker.

    In the worker of the test that runs now, not of the file that imported it:
    a conftest's `import mylib` serves every module's tests from their own worker.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_pj_") or "_pj_name" not in self.__dict__:
            raise AttributeError(name)
        return getattr(_module_handle(self), name)

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
    name = module.__dict__["_pj_name"]
    worker = _state.current()
    handle = worker.modules.get(name)
    if handle is None:
        found = worker.request("import", name)
        if not isinstance(found, Handle):
            raise ImportError(f"the worker's {name} is not a module")
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
        self.workers: dict[str, Worker] = {}
        self.modules: dict[str, dict[str, types.ModuleType]] = {}
        self.key = "<session>"
        self.incidents: list[str] = []
        # Opaque per-run names for the tests the worker measures: a node id sent in
        # clear told the patch which property was watching (issue 18).
        self.tokens: dict[str, str] = {}

    def token(self, nodeid: str) -> str:
        found = next((t for t, n in self.tokens.items() if n == nodeid), None)
        if found is None:
            found = secrets.token_hex(8)
            self.tokens[found] = nodeid
        return found

    def current(self) -> Worker:
        worker = self.workers.get(self.key)
        if worker is None:
            home = Path(self.spec.home) / f"worker-{len(self.workers)}"
            label = os.path.relpath(self.key) if self.key.startswith("/") else self.key
            worker = self.workers[self.key] = Worker(self.spec, label, self.incidents)
            worker.spec = _with_home(self.spec, home)
        return worker

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
                if token in self.tokens:  # a context the judge never named is the worker's
                    pytest_plugin.emit("executed", nodeid=self.tokens[token], lines=lines)
        worker.close()


def _with_home(spec: Spec, home: Path) -> Spec:
    return Spec(**{**spec.__dict__, "home": str(home)})


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


_state: _State | None = None
_started: list[Worker] = []


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
    sys.meta_path.insert(0, _Finder(state))
    return state


def _own_chain() -> set[str]:
    """This module and its packages: still being imported, pytest looks them up after."""
    parts = __name__.split(".")
    return {".".join(parts[: i + 1]) for i in range(len(parts))}


def _forget_judge_modules(state: _State, keep: set[str]) -> None:
    for name in [n for n in sys.modules if state.ours(n) and n not in keep]:
        del sys.modules[name]


def pytest_configure(config: pytest.Config) -> None:
    # The tree is patchjudge itself: now that this plugin is loaded, its own
    # package goes too (pytest_plugin._prefer_tree does the same in process).
    if _state is not None:
        _forget_judge_modules(_state, keep=set())


# At import (`-p`), before pytest loads the judge tree's initial conftests: a
# conftest.py that imports the tested code gets stand-ins too. Taken out of the
# environment: nothing the judge starts inherits it.
_spec_text = os.environ.pop(ENV, None)


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


if _spec_text is not None:
    _share_one_cpu()
    _state = _install(Spec.from_json(_spec_text))


def _module_key(path: Path) -> str:
    return str(path)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    if _state is None or not isinstance(collector, pytest.Module):
        return (yield)
    previous = _state.key
    _state.switch(_module_key(collector.path))
    try:
        return (yield)
    finally:
        _state.switch(previous)


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
    if _state.spec.coverage and worker.proc is not None:
        with contextlib.suppress(WorkerFailure):
            worker.request("context", worker.context)
    try:
        return (yield)
    finally:
        if nextitem is None or _module_key(nextitem.path) != key:
            _state.switch("<session>")
            _state.close(key)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    if _state is None:
        return (yield)
    seen = len(_state.incidents)
    result = yield
    # The property may have caught the error (pytest.raises(Exception), a bare
    # except): what the worker could not do still fails it.
    if len(_state.incidents) > seen:
        raise WorkerFailure(_state.incidents[seen])
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _state is None:
        return
    for key in list(_state.workers):
        _state.close(key)
