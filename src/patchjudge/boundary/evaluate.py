"""Text the code produced never runs as judge code (issue 17, the judge's side).

Out of process the property files run in the judge's pytest, and a property
may evaluate what the code returned: `assert eval(repr(x)) == x`,
`exec(lib.render(...), ns)`, `compile(lib.source(), ...)`. In the judge's
process that text could forge every outcome the process reports. So the
judge's own files (the modules of its tree: property files, conftests,
helpers) are loaded with builtins of their own (`judge_builtins`) whose
`eval`, `exec` and `compile` (also through `import builtins` and
`from builtins import eval`) evaluate in the worker, the code's own box: the
names the text uses cross as a call's arguments cross (data as data, the
code's objects as themselves, the judge's objects as judge handles, the
stand-in and stdlib modules as the worker's own), the result comes back as a
call's does, and what `exec` binds in a namespace dict is written back into it.

Text the file itself holds as a literal (a string constant of its source) is
the property author's, not the code's: it runs in the judge, as in process.
A real code object runs in the judge only if these builtins compiled it from
such a literal; any other (from `marshal`, `types.CodeType`) is refused.

Pure parts (`names_in`, `literals_in`, `written_back`) are tested as tables;
the worker's side is a `Box` the stand-ins provide (standin.py).
"""

from __future__ import annotations
import __future__

import ast
import builtins
import contextlib
import functools
import os
import re
import sys
import types
import weakref
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, NamedTuple

REAL_EVAL, REAL_EXEC, REAL_COMPILE = builtins.eval, builtins.exec, builtins.compile
REAL_IMPORT = builtins.__import__

# The compiler flags a `from __future__ import` sets, which eval/exec/compile inherit from
# their caller's code (never from this module's).
FUTURE_FLAGS = functools.reduce(
    lambda a, b: a | b,
    (getattr(__future__, n).compiler_flag for n in __future__.all_feature_names),
    0,
)

# Every identifier-like word: a superset of the names a text can use (attribute names,
# words in its strings too). The judge never parses the code's text to find them.
_WORD = re.compile(r"[^\W\d]\w*")

OUT_OF_PROCESS = (
    "out of process {kind} runs in the worker, the code's own box: the names the text uses "
    'cross as a call\'s arguments do (docs/properties.md, "eval and exec out of process")'
)


def names_in(text: Any) -> frozenset[str] | None:
    """Pure: the words of `text` that may name a variable; None when it is not text."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str):
        return None
    return frozenset(_WORD.findall(str(text)))


def literals_in(source: bytes) -> frozenset[str | bytes]:
    """Pure: every str and bytes constant of a Python source; none if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found: set[str | bytes] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            found.add(node.value)
    return frozenset(found)


@functools.lru_cache(maxsize=256)
def literals_of(path: str) -> frozenset[str | bytes]:
    """A judge file's literals (eval/ is the base's: a patch cannot change them)."""
    try:
        return literals_in(Path(path).read_bytes())
    except OSError:
        return frozenset()


_MISSING = object()


def written_back(
    into: MutableMapping[str, Any], sent: frozenset[str], after: Mapping[str, Any]
) -> None:
    """What the worker's `exec` left in the namespace it got, in the judge's dict `into`.

    A list, dict or set that stays one is changed in place (other references see it);
    a name `exec` deleted goes; the worker's own `__builtins__` is never written.
    """
    for key, value in after.items():
        if key == "__builtins__" and key not in sent:
            continue
        old = into.get(key, _MISSING)
        if old is value:
            continue
        if type(old) is type(value) and type(value) is list:
            old[:] = value
        elif type(old) is type(value) and type(value) in (dict, set):
            old.clear()
            old.update(value)
        else:
            into[key] = value
    for key in sent - after.keys():
        into.pop(key, None)


class Box(NamedTuple):
    """The worker's side, as the stand-ins provide it."""

    builtin: Callable[[str], Callable[..., Any]]  # the worker's builtins.NAME, called there
    module: Callable[[types.ModuleType], Any]  # a judge module as the worker's, or TypeError


def _under(path: Any, root: str) -> bool:
    return type(path) is str and path != root and _resolved(path).startswith(root + os.sep)


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> str:
    return str(Path(path).resolve()) if Path(path).is_absolute() else path


# The audit events by which a judge file's own call turns bytes or parts into code, or runs
# code another way than these builtins (`sys.modules["builtins"].eval`, `runpy`).
AUDITED = frozenset({"compile", "exec", "marshal.loads", "marshal.load", "code.__new__"})


def _code_objects(names: Mapping[str, Any]) -> list[types.CodeType]:
    """The code objects an exec's caller holds: runpy's `code`, importlib's `args`."""
    found = []
    for value in names.values():
        for item in value if type(value) is tuple else (value,):
            if isinstance(item, types.CodeType):
                found.append(item)
    return found


class _Gate:
    """An attribute for each AUDITED event (a property: the Evaluator decides); getattr of
    any other event name finds nothing, in C."""

    def __init__(self, evaluator: Evaluator) -> None:
        self._pj_evaluator = evaluator


def _gate_property(event: str) -> property:
    def check(self: _Gate) -> None:
        self._pj_evaluator.audited(event, sys._getframe(1))

    return property(check)


for _event in AUDITED:
    setattr(_Gate, _event, _gate_property(_event))


class Evaluator:
    """The judge files' eval, exec and compile, and the builtins that hold them."""

    def __init__(self, box: Box, root: str, code: tuple[str, ...] = ()) -> None:
        self.box, self.root = box, str(Path(root).resolve())
        # Where the code under test writes (the worker's tree and home): never judge code.
        self.code = tuple(str(Path(p).resolve()) for p in code if p)
        # Code objects compiled here from a judge file's literal: they run in the judge.
        self.own: weakref.WeakSet[types.CodeType] = weakref.WeakSet()
        view = types.ModuleType("builtins")
        view.__dict__.update(builtins.__dict__)
        for name, fn in (("eval", self.eval), ("exec", self.exec), ("compile", self.compile),
                         ("__import__", self.import_)):  # fmt: skip
            view.__dict__[name] = fn
        self.view = view
        # What compile sent to the worker, by the id of the code object it got back: the
        # names its text may use, for the eval or exec that runs it.
        self.compiled: dict[int, tuple[weakref.ref[Any], frozenset[str] | None]] = {}
        self.builtins: dict[str, Any] = view.__dict__

    # --- what a judge file calls ---
    def eval(self, source: Any, scope: Any = None, local: Any = None, /) -> Any:
        return self._run("eval", source, scope, local, sys._getframe(1))

    def exec(
        self, source: Any, scope: Any = None, local: Any = None, /, *, closure: Any = None
    ) -> None:
        self._run("exec", source, scope, local, sys._getframe(1), closure=closure)

    def compile(  # noqa: PLR0917 (builtins.compile's own signature)
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **options: Any,
    ) -> Any:
        frame = sys._getframe(1)
        inherited = 0 if dont_inherit else frame.f_code.co_flags & FUTURE_FLAGS
        if flags & ast.PyCF_ONLY_AST and not isinstance(source, ast.AST):
            # A tree is data: nothing of the text runs (compiling that tree is another call).
            return REAL_COMPILE(source, filename, mode, flags | inherited, True, optimize)
        if self._judges(source, frame):
            code = REAL_COMPILE(source, filename, mode, flags | inherited, True, optimize)
            if isinstance(code, types.CodeType):
                self.own.add(code)
            return code
        if isinstance(source, ast.AST):
            source = ast.unparse(source)  # a tree of the code's text: compiled in the worker
        name = (
            os.fsdecode(filename) if isinstance(filename, str | bytes | os.PathLike) else filename
        )
        code = self.box.builtin("compile")(source, name, mode, flags | inherited, True, optimize)
        if len(self.compiled) > 1024:
            self.compiled = {k: v for k, v in self.compiled.items() if v[0]() is not None}
        with contextlib.suppress(TypeError):  # no weak reference: its eval sends what crosses
            self.compiled[id(code)] = (weakref.ref(code), names_in(source))
        return code

    def import_(
        self, name: str, scope: Any = None, local: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if name == "builtins" and level == 0:
            return self.view
        return REAL_IMPORT(name, scope, local, fromlist, level)

    # --- the class, whatever the route (sys.addaudithook) ---
    def audit_hook(self) -> Callable[[str, tuple[Any, ...]], Any]:
        """The hook for sys.addaudithook: `getattr(gate, event, args)`, all C for every event
        but AUDITED's (a hook in Python is a frame per event, each traced by hypothesis's
        explain phase and coverage: a failing property took 8x as long)."""
        return functools.partial(getattr, _Gate(self))

    def audited(self, event: str, caller: types.FrameType) -> None:
        """Refuse, in the judge's process, code from a file the code has or wrote, and a
        judge file's own call that turns text, bytes or parts into code without these
        builtins (`caller` is the frame whose call raised the event)."""
        if event == "exec" and self.code:
            for code in _code_objects(caller.f_locals):
                if any(_under(code.co_filename, p) for p in self.code):
                    raise RuntimeError(
                        f"{code.co_filename} is a file the code under test has or wrote: it "
                        "runs in the worker, never in the judge's process (import the module: "
                        "a stand-in)"
                    )
        where = caller.f_code.co_filename
        if _under(where, self.root):
            raise RuntimeError(
                f"{where} asked for {event} in the judge's process, which would run text or "
                "bytes as judge code: out of process use eval, exec or compile (they run the "
                "code's text in the worker; docs/properties.md)"
            )

    # --- where it runs ---
    def _judges(self, source: Any, frame: types.FrameType) -> bool:
        """Whether `source` may run in the judge: a literal of the calling judge file's."""
        if isinstance(source, types.CodeType):
            return source in self.own
        if type(source) not in (str, bytes):
            return False
        path = frame.f_globals.get("__file__")
        return _under(path, self.root) and source in literals_of(path)

    def _run(
        self,
        kind: str,
        source: Any,
        globals_: Any,
        locals_: Any,
        frame: types.FrameType,
        *,
        closure: Any = None,
    ) -> Any:
        if self._judges(source, frame):
            if globals_ is None:
                globals_ = frame.f_globals
                locals_ = frame.f_locals if locals_ is None else locals_
            elif isinstance(globals_, dict) and "__builtins__" not in globals_:
                globals_["__builtins__"] = self.builtins  # what it evaluates is boxed too
            code = source
            if not isinstance(code, types.CodeType):
                inherited = frame.f_code.co_flags & FUTURE_FLAGS
                code = REAL_COMPILE(source, "<string>", kind, inherited, True)
            if kind == "eval":
                return REAL_EVAL(code, globals_, locals_)
            if closure is not None:
                return REAL_EXEC(code, globals_, locals_, closure=closure)
            return REAL_EXEC(code, globals_, locals_)
        if isinstance(source, types.CodeType):
            raise TypeError(
                f"{kind} of a code object the judge did not compile from its own text: it would "
                "run in the judge's process; compile the text with compile() instead, which "
                "out of process compiles it in the worker"
            )
        if isinstance(source, str | bytes | bytearray) and type(source) not in (str, bytes):
            source = str(source) if isinstance(source, str) else bytes(source)
        names = names_in(source)
        if names is None:
            ref, known = self.compiled.get(id(source), (None, None))
            names = known if ref is not None and ref() is source else None
        if globals_ is None:
            scope = {**frame.f_globals, **frame.f_locals}
            module_level = frame.f_locals is frame.f_globals
            targets: list[MutableMapping[str, Any] | None] = [
                frame.f_globals if module_level else None
            ]
            spaces: list[Mapping[str, Any]] = [scope]
        else:
            if not isinstance(globals_, dict):
                raise TypeError(f"{kind}() globals must be a dict, not {type(globals_).__name__}")
            targets = [globals_]
            spaces = [globals_]
            if locals_ is not None and locals_ is not globals_:
                targets.append(locals_ if isinstance(locals_, MutableMapping) else None)
                spaces.append(locals_)
        sent = [self._namespace(space, names, kind) for space in spaces]
        try:
            result = self.box.builtin(kind)(source, *sent)
        except TypeError as exc:
            if "cannot cross" in str(exc):
                exc.add_note(OUT_OF_PROCESS.format(kind=kind))
            raise
        finally:
            for target, space, crossed in zip(targets, spaces, sent, strict=True):
                if target is not None:
                    keys = frozenset(k for k in space if k in crossed)
                    written_back(target, keys, crossed)
        return result if kind == "eval" else None

    def _namespace(
        self, space: Mapping[str, Any], names: frozenset[str] | None, kind: str
    ) -> dict[str, Any]:
        """The names the text may use, as they cross: never the judge's builtins."""
        wanted = sorted(space) if names is None else sorted(n for n in names if n in space)
        out: dict[str, Any] = {}
        for name in wanted:
            if name == "__builtins__":
                continue
            try:
                out[name] = self._crossing(space[name], name, kind)
            except TypeError:
                if names is not None:
                    raise
                # A code object of the worker's whose text the judge never saw: every name
                # that can cross does.
        own = space.get("__builtins__", _MISSING)
        if (
            own is not _MISSING
            and own is not self.builtins
            and own is not builtins
            and (own is not builtins.__dict__ and own is not self.view)
        ):
            out["__builtins__"] = self._crossing(own, "__builtins__", kind)  # `{}`: restricted
        return out

    def _crossing(self, value: Any, name: str, kind: str) -> Any:
        if isinstance(value, types.ModuleType):
            if value is self.view or value is builtins:
                return self.box.module(builtins)
            try:
                return self.box.module(value)
            except TypeError as exc:
                raise TypeError(
                    f"{kind} out of process: {name!r} is the judge's module {value.__name__}, "
                    f"which the worker cannot import: {exc}; pass what the text needs as data"
                ) from None
        return value
