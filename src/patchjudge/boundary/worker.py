"""The inside of the oracle's boundary: runs the code under test and answers the judge (issue 11).

Never imported as part of patchjudge (the tree under test may be patchjudge
itself), and not run from its file either: the judge sends this source and
wire.py's down the worker's stdin (standin.start_argv, standin.LOADER), and
the loader compiles them under per-run random names, file names and function
names before calling `main(argv, wire, token, protocol)` (issue 18: no fixed
name, frame or argv of the judge's in the code's process). What may cross,
and in which messages, is protocol.py's: this module names none of it itself. argv[1:7] are as the
script took them: WIRE (unused when `wire` is given), FD_IN/FD_OUT the pipe
ends the judge gave it, TREE the scratch tree, PATH and COVER os.pathsep
separated: the tree's pythonpath and the tree-relative files whose executed
lines coverage.py measures; argv[7], "base" in a run of the merge base's
tree. Everything it sends is data or the id of an object in its own table;
what it is sent is decoded by the same pure code. A judge-side object
reaches it as an id it may only ask the judge to call or to answer one of a
fixed set of protocol operations (JudgeObject).
"""

# os.path, not pathlib: the worker imports as little as it can before the tested code.
# ruff: noqa: PTH100, PTH105, PTH108, PTH110, PTH118, PTH120, PTH123, PTH208

from __future__ import annotations

import _thread
import ast
import builtins
import collections
import contextlib
import datetime
import enum
import importlib
import importlib.machinery
import importlib.util
import inspect
import io
import itertools
import operator
import os
import resource
import stat
import sys
import time
import zoneinfo
from collections.abc import Callable
from typing import Any

wire: Any = None  # the wire module, loaded by file path in main()
protocol: Any = None  # the protocol module (message kinds, requests, reference kinds): main()
# The attribute a judge exception carries its token in: per run, from the judge (issue 18).
TOKEN = "_token"
_CAUSE = BaseException.__dict__["__cause__"]
# The worker's own clock, taken before the code runs: a library that freezes `time`
# (freezegun patches time.monotonic) cannot stop a batch's items from being sent.
_CLOCK = time.monotonic
# An ITEMS message's values besides its items: the tuple, its kind and its call id.
_ITEMS_HEAD_VALUES = 3


class JudgeFunctionError(Exception):
    """A judge-side function raised something that is not a builtin exception."""


_BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bytes, bool, list, tuple, dict, set)}


class _Reads:
    """`target[key]` for each key in turn, as an iterator (protocol.GETITEMS): a StopIteration
    the code raises is its error, which answer_batch sends as any other."""

    def __init__(self, target: Any, keys: range | tuple[Any, ...]) -> None:
        self.target, self.keys = target, iter(keys)

    def __next__(self) -> Any:
        return OPS["getitem"](self.target, next(self.keys))


def _signature(obj: Any) -> list[tuple[Any, ...]]:
    """A callable's parameters as data: name, kind, default (if data), builtin annotation."""
    params = []
    for p in inspect.signature(obj).parameters.values():
        has_default = p.default is not inspect.Parameter.empty
        default = p.default if has_default and wire.is_data(p.default) else None
        ann = p.annotation
        known = isinstance(ann, type) and _BUILTIN_TYPES.get(ann.__name__) is ann
        params.append((p.name, int(p.kind), has_default, default, ann.__name__ if known else None))
    return params


def _reflected(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: op(b, a)


def _compare(name: str) -> Callable[[Any, Any], Any]:
    """A comparison of this worker's object with an operand (issue 17).

    Against one of the judge's objects only the object's own method is asked
    here: its NotImplemented goes back, and the judge's Python asks the judge
    object's reflected method on its side, then falls back to identity, as in
    process (`settings == delegate` is `delegate.__eq__(settings)`'s answer).
    Here the judge object's proxy may not answer a comparison with this
    worker's object (_forward), so the reflection must happen judge side.
    """
    op = getattr(operator, name)
    slot = f"__{name}__"

    def compare(a: Any, b: Any) -> Any:
        if is_judge_object(b) or isinstance(b, JudgeFunction):
            return getattr(type(a), slot)(a, b)
        return op(a, b)

    compare.__name__ = name
    return compare


# protocol.ARITHMETIC: this module's code runs before main() hands it the protocol.
_ARITHMETIC = [
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and_", "or_",
    "xor", "matmul",
]  # fmt: skip
_BINARY = {
    name: getattr(operator, name)
    for name in [
        *_ARITHMETIC,
        *("i" + n.rstrip("_") for n in _ARITHMETIC),
        *["getitem", "delitem", "contains"],
    ]
}
_BINARY.update({name: _compare(name) for name in ("eq", "ne", "lt", "le", "gt", "ge")})
OPS: dict[str, Callable[..., Any]] = {
    **_BINARY,
    **{"r" + name.rstrip("_"): _reflected(_BINARY[name]) for name in _ARITHMETIC},
    "divmod": divmod, "rdivmod": _reflected(divmod),
    "setitem": operator.setitem, "len": len, "iter": iter, "next": next, "reversed": reversed,
    "repr": repr, "str": str, "hash": hash, "bool": bool, "neg": operator.neg,
    "pos": operator.pos, "abs": abs, "invert": operator.invert, "int": int, "float": float,
    "index": operator.index, "complex": complex, "round": round, "format": format,
    "dir": lambda o: sorted(dir(o)), "instancecheck": lambda cls, o: isinstance(o, cls),
    "subclasscheck": lambda cls, c: issubclass(c, cls), "callable": callable,
    "enter": lambda o: o.__enter__(), "exit": lambda o: o.__exit__(None, None, None),
    "bytes": bytes, "typename": lambda o: f"{type(o).__module__}.{type(o).__qualname__}",
    "signature": _signature, "fspath": os.fspath,
    # A library tzinfo's four methods, which the judge's C datetime calls on its view (issue 17).
    "utcoffset": lambda o, dt: o.utcoffset(dt), "dst": lambda o, dt: o.dst(dt),
    "tzname": lambda o, dt: o.tzname(dt), "fromutc": lambda o, dt: o.fromutc(dt),
    # A handle's pickle is the worker's bytes, loaded by a worker again (issue 17).
    "pickle": lambda o, version: __import__("pickle").dumps(o, version),
    "unpickle": lambda data: __import__("pickle").loads(data),
    # Copies are the worker's: the object's own __copy__ or state, never the judge's proxy.
    "copy": lambda o: __import__("copy").copy(o),
    "deepcopy": lambda o: __import__("copy").deepcopy(o),
}  # fmt: skip


def _iterator_types() -> frozenset[type]:
    """The stdlib's iterator types, captured before the code runs (issue 20).

    For each, `iter(x) is x` and `len(x)` is a TypeError without running any
    code: the judge answers both itself for a handle of one (its meta says so).
    Exact types only: a subclass of `map` may define `__iter__` or `__len__`.
    """
    it = itertools
    samples = [
        iter([]), iter(()), iter(""), iter("\xe9"), iter(b""), iter(bytearray()), iter(range(1)),
        iter(range(1 << 70)), iter(set()), iter({}), iter({}.values()), iter({}.items()),
        reversed([]), reversed({}), reversed({}.values()), reversed({}.items()), enumerate(()),
        zip(), map(len, ()), filter(None, ()), iter(int, 0), iter(_Indexed()), (_ for _ in ""),
        it.accumulate(()), it.chain(), it.combinations((), 1),
        it.combinations_with_replacement((), 1), it.compress((), ()), it.count(), it.cycle(()),
        it.dropwhile(bool, ()), it.filterfalse(None, ()), it.groupby(()), it.islice((), 1),
        it.pairwise(()), it.permutations(()), it.product(), it.repeat(None), it.starmap(max, ()),
        it.takewhile(bool, ()), it.tee(())[0], it.zip_longest(()), next(it.groupby((1,)))[1],
    ]  # fmt: skip
    return frozenset(type(x) for x in samples if iter(x) is x and not hasattr(type(x), "__len__"))


class _Indexed:
    def __getitem__(self, i: int) -> int:
        raise IndexError(i)


ITERATOR_TYPES = _iterator_types()


# Limits set before the code under test runs, soft and hard (unprivileged, it cannot raise
# them): a file it writes, and its address space (issue 18).
FSIZE_LIMIT = 256 << 20
AS_LIMIT = 4 << 30


def _limit_resources() -> None:
    for kind, cap in ((resource.RLIMIT_FSIZE, FSIZE_LIMIT), (resource.RLIMIT_AS, AS_LIMIT)):
        hard = resource.getrlimit(kind)[1]
        limit = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        resource.setrlimit(kind, (limit, limit))


def private_writes(tree: str) -> None:
    """From now on, a write to a tracked file of `tree` is this tree's alone, as in a checkout.

    A lane's tracked files are hard links into the run's store (trees.py), read-only
    to the box as root: a library that rewrites its own data file got EACCES
    (issue 17). Before a file of the tree is opened for writing, its link to
    the store is broken: a private copy, writable, renamed over it in its own
    directory, so the store and every other lane's tree keep their bytes. The
    protection stays the kernel's: code that goes round this hook (a C library's
    own open) meets the read-only link, as before. An audit hook, because it
    sees every open of the process (`open`, `os.open`, `io`) and cannot be removed.
    Also used by the judge's plugin in the lanes' pytest (pytest_plugin).
    """
    root = os.path.realpath(tree) + os.sep
    busy: set[int] = set()  # threads making a copy: its own opens pass (per thread)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or len(args) != 3 or type(args[2]) is not int:
            return
        if args[2] & os.O_ACCMODE not in (os.O_WRONLY, os.O_RDWR):
            return
        thread = _thread.get_ident()
        if thread in busy:
            return
        busy.add(thread)
        try:
            _unshare(args[0], root)
        finally:
            busy.discard(thread)

    sys.addaudithook(hook)


# A distribution's lists of its installed files: a base run reads none of the head's.
_BUILD_RECORDS = ("RECORD", "installed-files.txt", "SOURCES.txt")


def _own_builds(entries: list[str]) -> tuple[set[str], list[str], set[str], set[str]]:
    """What the project's own build installed on `entries` (a venv's site directories).

    The project's build is every distribution installed from a local path (its
    direct_url.json names a `file:` URL: `[gate] install`'s wheels, `pip install .`,
    `-e .`); a dependency from an index has none. Returns (every file its RECORD
    names, as written and as the real path; the folders an editable one imports
    from; its dist-info folders; the dist-info folders its RECORD itself installs).
    """
    import csv
    import json

    files: set[str] = set()
    folders: list[str] = []
    own: set[str] = set()
    nested: set[str] = set()
    for entry in dict.fromkeys(os.path.abspath(e) for e in entries if e):
        try:
            names = sorted(n for n in os.listdir(entry) if n.endswith(".dist-info"))
        except OSError:
            continue
        real = os.path.realpath(entry)
        for name in names:
            info = os.path.join(entry, name)
            try:
                with open(os.path.join(info, "direct_url.json"), encoding="utf-8") as f:
                    doc = json.load(f)
                url = doc["url"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if not (isinstance(url, str) and url.startswith("file:")):
                continue
            own |= {os.path.normpath(info), os.path.join(real, name)}
            try:
                with open(os.path.join(info, "RECORD"), encoding="utf-8", newline="") as f:
                    rows = [r[0] for r in csv.reader(f) if r]
            except (OSError, csv.Error, UnicodeError):
                rows = []
            for rel in rows:
                files |= {os.path.normpath(os.path.join(entry, rel)),
                          os.path.normpath(os.path.join(real, rel))}  # fmt: skip
                top = rel.split("/", 1)[0]
                if top.endswith(".dist-info") and top != name:
                    nested |= {os.path.normpath(os.path.join(entry, top)),
                               os.path.join(real, top)}  # fmt: skip
                if "/" not in rel and rel.endswith((".pth", "_finder.py")):
                    folders += _editable_folders(os.path.join(entry, rel))
    return files, folders, own, nested


def _editable_folders(path: str) -> list[str]:
    """The folders an editable install imports from: a `.pth`'s directory lines, or the
    MAPPING of setuptools' editable finder (`__editable___calc_0_1_finder.py`)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeError):
        return []
    if path.endswith(".pth"):
        lines = [line.strip() for line in text.splitlines()]
        found = [line for line in lines if line and not line.startswith(("#", "import"))]
    else:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
        found = [
            value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            if [ast.unparse(t) for t in node.targets] == ["MAPPING"]
            for value in node.value.values
            if isinstance(value, ast.Constant) and isinstance(value.value, str)
        ]
    # A .pth line may be relative to its site directory.
    paths = [os.path.join(os.path.dirname(path), f) for f in found]
    return [os.path.realpath(f) for f in paths if os.path.exists(f)]


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def _provides(roots: tuple[str, ...]) -> set[str]:
    """The top-level module names the tree's pythonpath holds (a file or a folder)."""
    found: set[str] = set()
    for root in roots:
        try:
            listing = os.listdir(root)
        except OSError:
            continue
        for name in listing:
            module = name.split(".", 1)[0]
            if "." not in name or name.endswith((".py", ".pyc", ".so", ".pyd")):
                found.add(module)
    return found


def _tree_entry_points(text: str, provided: set[str]) -> str:
    """entry_points.txt with only the entries whose module the tree provides."""
    kept = []
    for line in text.splitlines():
        _, equals, value = line.partition("=")
        if equals and not line.lstrip().startswith(("[", "#", ";")):
            module = value.split(":", 1)[0].strip().split(".", 1)[0]
            if module not in provided:
                continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def hide_own_build(roots: list[str], keep: tuple[str, ...] = ()) -> None:
    """In a run of the base's tree, the project's build in the code's venv is not there.

    Red team, session 14 (redteam8): the code's venv holds the head's build of
    the project (`[gate] install`), so a base run reached, through any name its
    tree lacks, the head's code: a top-level optional module (`try: import
    _calc_speedups`), a portion of a merging or namespace package, an entry point
    the head's wheel declares. From here on an import that would load a file the
    project's build installed (its RECORD; under an editable one's source folder),
    or a package portion there, finds nothing unless the tree holds it; and
    importlib.metadata shows the project's distribution without the head's
    entry points to modules the tree lacks, and without its file list (RECORD),
    and none of the distributions its RECORD installs. Its METADATA (name,
    version) stays: data, which the base's `version("proj")` still reads.
    Called before the tree joins sys.path; a run of the base's tree only (the
    head's build is the head's own code). Stdlib only: the plugin imports it too,
    and `keep`s its own package (an editable judge in the venv the run reaches).
    """
    from importlib import metadata

    files, folders, own, nested = _own_builds(sys.path)
    tree = tuple({os.path.join(f(r), "") for r in roots for f in (os.path.realpath, _norm)})
    tree += tuple(os.path.join(os.path.realpath(k), "") for k in keep)
    editable = {os.path.join(f, "") for f in folders}
    # Where else the process imports from: a folder of an editable install may hold
    # another entry (a flat checkout's `.venv/.../site-packages`), which is not the build.
    elsewhere = {os.path.join(os.path.realpath(e), "") for e in sys.path if e} - editable
    under = tuple(editable)

    def editable_file(real: str) -> bool:
        """Under an editable install's folder, and no deeper under another entry."""
        if not real.startswith(under):
            return False
        mine = max(len(f) for f in under if real.startswith(f))
        return not any(real.startswith(e) and len(e) > mine for e in elsewhere)

    def built(where: str) -> bool:
        """A file of the project's build, not the tree's."""
        named = _norm(where)
        real = os.path.realpath(named)
        if named.startswith(tree) or real.startswith(tree):
            return False
        return named in files or real in files or editable_file(real)

    holding = {os.path.dirname(f) for f in files}  # folders that hold a file of the build
    for folder in list(holding):
        while folder not in ("", os.sep) and (folder := os.path.dirname(folder)) not in holding:
            holding.add(folder)

    def built_folder(folder: str) -> bool:
        """A package portion that holds files of the project's build and nothing else."""
        if _norm(folder).startswith(tree) or os.path.realpath(folder).startswith(tree):
            return False
        if editable_file(os.path.join(os.path.realpath(folder), "")):
            return True
        if _norm(folder) not in holding and os.path.realpath(folder) not in holding:
            return False  # no file of the build there: a dependency's portion
        listed = (
            os.path.join(top, n)
            for top, _, names in os.walk(folder)
            if "__pycache__" not in top
            for n in names
        )
        return all(map(built, listed))  # stops at the first file that is not the build's

    def found(spec: Any) -> list[str]:
        """Where `spec` reaches the project's build: its file, or portions that are only that."""
        if spec.has_location and spec.origin:
            return [spec.origin] if built(spec.origin) else []
        return [w for w in spec.submodule_search_locations or () if built_folder(w)]

    def without_build(fullname: str, path: Any, target: Any, spec: Any) -> Any:
        """`spec` looked up again without the build's files (None: only the build has it):
        the name as on a machine without that build, or a namespace's other portions."""
        search = list(sys.path if path is None else path)
        bad = found(spec)
        while bad:
            search = [e for e in search if not _norm(bad[0]).startswith(_norm(e) + os.sep)]
            if not spec.has_location and spec.submodule_search_locations is not None:
                kept = [w for w in spec.submodule_search_locations if w not in bad]
                if kept:
                    spec.submodule_search_locations = kept
                    return spec
            spec = importlib.machinery.PathFinder.find_spec(fullname, search, target)
            if spec is None:
                return None
            bad = found(spec)
        return spec

    class PathFinder(importlib.machinery.PathFinder):
        """The path finder, in its place: a module only the build has is not found (None,
        as `importlib.util.find_spec` answers on a machine without it)."""

        @classmethod
        def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> Any:
            spec = super().find_spec(fullname, path, target)
            return None if spec is None else without_build(fullname, path, target, spec)

    class Guard:
        """First: what another finder (an editable install's) finds of the build is refused."""

        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
            finder, spec = _found_by_others(self, fullname, path, target)
            if spec is None:
                return None
            if finder is PathFinder or not found(spec):
                return spec
            kept = without_build(fullname, path, target, spec)
            if kept is None:
                raise ModuleNotFoundError(
                    f"No module named {fullname!r} in the base's tree (patchjudge: the code's"
                    f" venv has it at {spec.origin} from the project's own build, the head's)",
                    name=fullname,
                )
            return kept

    if files or folders:
        sys.meta_path[:] = [
            PathFinder if f is importlib.machinery.PathFinder else f for f in sys.meta_path
        ]
        sys.meta_path.insert(0, Guard())
    if not own:
        return
    provided = _provides(tuple(dict.fromkeys(roots)))

    class BaseView(metadata.PathDistribution):
        def read_text(self, filename: str | os.PathLike[str]) -> str | None:
            if filename in _BUILD_RECORDS:
                return None
            text = super().read_text(filename)
            if filename == "entry_points.txt" and text:
                return _tree_entry_points(text, provided)
            return text

    finder = metadata.MetadataPathFinder
    listed = finder.find_distributions

    def find_distributions(cls: Any, context: Any = None) -> Any:
        for dist in listed(context) if context is not None else listed():
            where = getattr(dist, "_path", None)
            key = {_norm(str(where)), os.path.realpath(str(where))} if where else set()
            if key & nested:
                continue
            yield BaseView(where) if where is not None and key & own else dist

    finder.find_distributions = classmethod(find_distributions)  # type: ignore[method-assign,assignment]


def _unshare(path: Any, root: str) -> None:
    try:
        name = os.path.realpath(os.fsdecode(path))
        st = os.lstat(name)
    except (TypeError, ValueError, OSError):
        return  # an fd, or nothing there yet: nothing shared to break
    if not name.startswith(root) or not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return
    mode = 0o755 if st.st_mode & 0o111 else 0o644
    fresh = f"{name}.{os.getpid()}~"
    try:
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except OSError:
        return  # its directory is not writable either: the open says so itself
    try:
        with open(name, "rb") as src, os.fdopen(fd, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        os.replace(fresh, name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(fresh)


class Table:
    """Handle id -> object; an object sent N times stays until the judge releases it N times."""

    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}
        self.counts: dict[int, int] = {}
        self.by_identity: dict[int, int] = {}
        self.next_id = 1

    def to_ref(self, obj: Any) -> Any:
        ident = self.by_identity.get(id(obj))
        if ident is None or self.objects.get(ident) is not obj:
            ident = self.next_id
            self.next_id += 1
            self.objects[ident] = obj
            self.by_identity[id(obj)] = ident
            self.counts[ident] = 0
        self.counts[ident] += 1
        return wire.Ref(protocol.HANDLE, ident, _meta(obj), local=True)

    def holds(self, obj: Any) -> bool:
        """Whether the judge has (or had, not yet released) a handle for `obj`."""
        ident = self.by_identity.get(id(obj))
        return ident is not None and self.objects.get(ident) is obj

    def get(self, ident: int) -> Any:
        try:
            return self.objects[ident]
        except KeyError:
            raise LookupError(f"no handle {ident} in this worker") from None

    def release(self, ident: int, times: int) -> Any:
        """Forget `ident` once released as often as it was sent: the object, for the caller
        to let go of (a finalizer may call the judge: it runs where the caller decides)."""
        left = self.counts.get(ident, 0) - times
        if left > 0:
            self.counts[ident] = left
            return None
        obj = self.objects.pop(ident, None)
        self.counts.pop(ident, None)
        if obj is not None and self.by_identity.get(id(obj)) == ident:
            del self.by_identity[id(obj)]
        return obj


def _meta(obj: Any) -> Any:
    """What the judge needs to know to stand in for `obj`: exception classes, modules, enums."""
    if isinstance(obj, type) and issubclass(obj, BaseException) and not _is_builtin(obj):
        return (protocol.META_EXCEPTION, _bases_graph(obj))
    if type(obj) is type(sys):
        return (protocol.META_MODULE, str(obj.__name__), hasattr(obj, "__path__"))
    metaclass = _metaclass_name(obj)
    if metaclass is not None:
        return (protocol.META_CLASS, metaclass)
    if type(obj) in ITERATOR_TYPES:
        return (protocol.META_ITERATOR, type(obj).__name__)
    if issubclass(type(obj), wire.CLASSES["datetime.tzinfo"]):
        # The stdlib class wire.py captured before the code ran, against the object's real
        # type (`type` is no ABC: this reads the MRO, as C's tzinfo check does; a `__class__`
        # can lie): the judge's C datetime takes its stand-in for one (issue 17).
        return (protocol.META_TZINFO,)
    if type(obj) is wire.CLASSES["re.Pattern"]:
        # pytest ids a compiled pattern by its pattern (_pytest.python._idval); the type
        # cannot be subclassed, so `.pattern` is re's own attribute, not the code's.
        return (protocol.META_PATTERN, obj.pattern)
    if isinstance(obj, enum.Enum):
        # A parametrize id is str(member) in process (_pytest.python._idval): the same here.
        try:
            text = str(obj)
        except Exception:
            return None
        if type(text) is not str:
            return None
        # Its class by name (the type's own slots, no code of the class runs): the judge's
        # view of a member is of one view class per enum class, so `type(a) is type(b)`
        # tells two enums' members apart (hdate's erange of Parasha and Months).
        cls = type(obj)
        module, qualname = _TYPE_MODULE.__get__(cls), _TYPE_QUALNAME.__get__(cls)
        name = f"{module}.{qualname}" if type(module) is str and type(qualname) is str else ""
        return (protocol.META_ENUM, text[: protocol.MAX_ENUM_TEXT], name[:300])
    flags = _TYPE_FLAGS.__get__(type(obj))  # the real type's, not a metaclass's `__flags__`
    shape = (
        protocol.META_SEQUENCE
        if flags & _SEQUENCE_FLAG
        else protocol.META_MAPPING
        if flags & _MAPPING_FLAG
        else None
    )
    # callable() reads the real type's slot: no code of the object's runs.
    meta = None if shape is None else (shape, protocol.META_CALLABLE) if callable(obj) else (shape,)
    names = own_names(type(obj))
    return (protocol.META_OWN, names, meta) if names else meta


def own_names(cls: type) -> tuple[str, ...]:
    """The names a data subclass's view sends to the code's object (protocol.META_OWN): those
    its base type has, or routed dunders, that a class of the code's defines first in the MRO.

    Read from the real type's MRO and class dicts (type's own slots): no code of the class
    runs. A name first defined by a builtin class (`str`, `dict`, `object`) is the data's.
    """
    base = wire.data_base(cls)
    if base is None or not _BUILTIN_IDS:  # not loaded by main(): no builtin is known, no claim
        return ()
    allowed = _BASE_NAMES.get(base)
    if allowed is None:
        public = (n for n in dir(base) if not n.startswith("_"))
        allowed = _BASE_NAMES[base] = frozenset(public) | protocol.VIEW_ROUTED_DUNDERS
    found: set[str] = set()
    shadows: list[frozenset[str]] = []  # the builtin classes met first in the MRO: theirs win
    for klass in _TYPE_MRO.__get__(cls):
        if id(klass) in _BUILTIN_IDS:
            names = _BUILTIN_NAMES.get(id(klass))
            if names is None:  # a builtin class's dict is fixed: read once
                names = _BUILTIN_NAMES[id(klass)] = frozenset(_TYPE_DICT.__get__(klass))
            shadows.append(names)
            continue
        # Only str keys, before any set operation: no key's own `__hash__` runs.
        own = {n for n in _TYPE_DICT.__get__(klass) if type(n) is str} & allowed
        for shadow in shadows:
            own -= shadow
        found |= own
    return tuple(sorted(found)[: protocol.MAX_OWN_NAMES])


# What a `match` statement reads of a subject's type (CPython's Py_TPFLAGS_SEQUENCE, _MAPPING).
_TYPE_FLAGS = type.__dict__["__flags__"]
_TYPE_MODULE, _TYPE_QUALNAME = type.__dict__["__module__"], type.__dict__["__qualname__"]
_TYPE_MRO, _TYPE_DICT = type.__dict__["__mro__"], type.__dict__["__dict__"]
# The builtin classes by identity, as wire captured them before the code ran (main()).
_BUILTIN_IDS: frozenset[int] = frozenset()
_BASE_NAMES: dict[type, frozenset[str]] = {}  # a data type's public names (builtins: fixed)
_BUILTIN_NAMES: dict[int, frozenset[str]] = {}  # a builtin class's own dict's names, by id
_SEQUENCE_FLAG, _MAPPING_FLAG = 1 << 5, 1 << 6


# The metaclasses a class handle may claim, as this process had them before the code ran:
# wire's, captured when it loaded (main()).
_METACLASSES: tuple[tuple[type, str], ...] = ()


def _metaclass_name(obj: Any) -> str | None:
    """The most derived of protocol.METACLASSES that `obj`'s real type is, for a class."""
    try:
        mro = type(obj).__mro__  # the real type's, not a `__class__` the code defines
    except Exception:
        return None
    return next((name for cls, name in _METACLASSES if cls in mro), None)


def _is_builtin(cls: type) -> bool:
    """The builtin class itself, as the worker had it before the tested code ran (not by name)."""
    return wire.BUILTIN_CLASSES.get(cls.__name__) is cls


def _bases_graph(cls: type) -> tuple[Any, ...]:
    """The class and its non-builtin ancestors in MRO order, each with its direct bases.

    A base is ("b", name) for a builtin class, ("c", i) for entry i: the judge
    rebuilds the same graph, so a class with two bases is caught by both (issue 18).
    """
    order = [c for c in cls.__mro__ if not _is_builtin(c)]
    index = {id(c): i for i, c in enumerate(order)}
    return tuple(
        (
            str(c.__module__),
            str(c.__qualname__),
            tuple(
                ("b", b.__name__) if _is_builtin(b) else ("c", index[id(b)]) for b in c.__bases__
            ),
        )
        for c in order
    )


class JudgeFunction:
    """A function of the judge's: calling it asks the judge to run it, with data and handles."""

    def __init__(self, conn: Connection, ident: int) -> None:
        self._conn, self._id = conn, ident

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._conn.callback(self._id, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {type(self).__name__} at {id(self):#x}>"


class JudgeObject:
    """An object of the judge's: each protocol operation is a request the judge answers.

    The judge says which operations its object has (the capabilities in the
    Ref's meta); the proxy class defines exactly those, so `callable`,
    `hasattr(x, "__len__")` and `isinstance(x, Iterator)` tell what the object
    is. Equality and hashing the object does not define are identity here too.
    """

    __slots__ = ("__weakref__", "_conn", "_id")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and not protocol.sunder(name):
            raise AttributeError(name)
        return _judge_op(self, protocol.GETATTR, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            raise AttributeError(f"{name}: a judge object has no private attributes to set")
        _judge_op(self, protocol.SETATTR, name, value)

    def __repr__(self) -> str:
        return str(_judge_op(self, "repr"))

    def __str__(self) -> str:
        return str(_judge_op(self, "str"))

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("the code under test cannot copy or pickle an object of the judge's")


def _judge_op(proxy: JudgeObject, op: str, *args: Any) -> Any:
    conn = object.__getattribute__(proxy, "_conn")
    return conn.judge_op(object.__getattribute__(proxy, "_id"), op, args)


_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


def _forward(op: str) -> Callable[..., Any]:
    def method(self: JudgeObject, *args: Any) -> Any:
        # The judge takes data and its own objects only: against one of this worker's
        # objects a comparison is not the judge's to answer (== falls back to identity).
        if op in _COMPARISONS and not _judge_only(args[0]):
            return NotImplemented
        return _judge_op(self, op, *args)

    method.__name__ = f"__{op}__"
    return method


def _judge_only(value: Any) -> bool:
    """Whether `value` is data and the judge's own objects, nothing of this worker's."""

    def ref(obj: Any) -> Any:
        if (
            is_judge_object(obj)
            or isinstance(obj, JudgeFunction)
            or protocol.builtin_name(obj) is not None
        ):
            return wire.Ref(protocol.JUDGE_OBJ, 0)
        raise wire.WireError("an object of the worker's")

    try:
        wire.encode(value, ref)
    except (wire.WireError, RecursionError):
        return False
    return True


def _call(self: JudgeObject, *args: Any, **kwargs: Any) -> Any:
    conn = object.__getattribute__(self, "_conn")
    return conn.callback(object.__getattribute__(self, "_id"), args, kwargs)


_proxy_classes: dict[tuple[str, ...], type] = {}


def _base_capabilities() -> frozenset[str]:
    """The capabilities that choose a proxy's stdlib base: one at most."""
    return frozenset({*protocol.JUDGE_STREAMS, protocol.JUDGE_TZINFO, protocol.JUDGE_ZONEINFO})


# The io ABCs a judge stream's proxy is registered with (protocol.JUDGE_STREAMS), as this
# module found them before the code ran.
_STREAM_ABCS: dict[str, Any] = {"TextIOBase": io.TextIOBase, "BufferedIOBase": io.BufferedIOBase}
# The stdlib stream classes a judge stream's proxy subclasses (protocol.JUDGE_STREAMS), and
# the proxy classes made so: judge objects as JudgeObject's are (is_judge_object).
_STREAM_CLASSES: dict[str, Any] = {"BytesIO": io.BytesIO, "StringIO": io.StringIO}
_stream_proxies: set[type] = set()


# The ZoneInfo subclasses a judge ZoneInfo's proxy is (protocol.JUDGE_ZONEINFO), each made
# from an empty zone file (UTC, no transitions) it never reads: its methods are the judge's.
_zone_proxies: set[type] = set()
# TZif version 2, twice (the 32- and 64-bit sections): no transitions, one type (UTC, offset
# 0, "UTC"), then the POSIX footer.
_TZIF_PART = b"TZif2" + bytes(15) + bytes(16) + b"\0\0\0\1\0\0\0\4" + bytes(6) + b"UTC\0"
_EMPTY_TZIF = _TZIF_PART * 2 + b"\nUTC0\n"


def is_judge_object(obj: Any) -> bool:
    return (
        isinstance(obj, JudgeObject) or type(obj) in _stream_proxies or type(obj) in _zone_proxies
    )


def _zone_body(body: dict[str, Any]) -> dict[str, Any]:
    """A subclass of ZoneInfo that is the judge's zone: its tzinfo methods and key asked of
    the judge, its operations as JudgeObject has them, never copied or pickled."""
    for name in protocol.TZINFO_METHODS:
        body[name] = _stream_method(name)
    body["key"] = property(lambda self: _judge_op(self, protocol.GETATTR, "key"))
    for name in ("__getattr__", "__setattr__", "__repr__", "__str__", "__reduce_ex__"):
        body[name] = JudgeObject.__dict__[name]
    body["__reduce__"] = _no_copy
    body["__slots__"] = ("_conn", "_id")
    return body


def _stream_method(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        # The judge's getattr, then its call, in one round trip (protocol.JUDGE_METHOD).
        conn = object.__getattribute__(self, "_conn")
        return conn.judge_method(object.__getattribute__(self, "_id"), name, args, kwargs)

    method.__name__ = name
    return method


def _absent(name: str) -> property:
    def get(self: Any) -> Any:
        raise AttributeError(f"{name}: not an attribute the judge's stream offers")

    return property(get)


def _stream_body(base: type, body: dict[str, Any]) -> dict[str, Any]:
    """A subclass of `base` (io.BytesIO, io.StringIO) that is the judge's stream and nothing of
    its own: every public name of `base` is the judge's stream method (STREAM_METHODS, as the
    judge offers them) or absent; the judge object's operations as JudgeObject has them; the
    proxy's own buffer, pickle state and finalizer never used (`__del__` would close the
    judge's stream when the worker drops its proxy)."""
    for name in dir(base):
        if not name.startswith("_") and name != "closed":
            offered = name in protocol.STREAM_METHODS
            body.setdefault(name, _stream_method(name) if offered else _absent(name))
    body["closed"] = property(lambda self: _judge_op(self, protocol.GETATTR, "closed"))
    for name in ("__setattr__", "__repr__", "__str__", "__reduce_ex__"):
        body[name] = JudgeObject.__dict__[name]
    own = frozenset(dir(base))

    def getattr_(self: Any, name: str) -> Any:
        if name in own:  # an absent name of the class's (its property raised): not the judge's
            raise AttributeError(f"{name}: not an attribute the judge's stream offers")
        return JudgeObject.__getattr__(self, name)

    body["__getattr__"] = getattr_
    body["__reduce__"] = body["__getstate__"] = body["__setstate__"] = _no_copy
    body["__del__"] = lambda self: None
    body["__init__"] = lambda self, *args, **kwargs: None
    body["__slots__"] = ("_conn", "_id")
    return body


def _no_copy(self: Any, *args: Any) -> Any:
    raise TypeError("the code under test cannot copy or pickle an object of the judge's")


def _proxy_class(capabilities: tuple[str, ...]) -> type:
    """The proxy class for one set of capabilities, built once."""
    cls = _proxy_classes.get(capabilities)
    if cls is None:
        body: dict[str, Any] = {"__slots__": ()}
        for cap in capabilities:
            if cap not in _STREAM_ABCS and cap not in _STREAM_CLASSES:
                body[f"__{cap}__"] = _call if cap == "call" else _forward(cap)
        if "hash" not in capabilities:
            # Unhashable unless it has a hash of its own or keeps identity equality.
            body["__hash__"] = None if "eq" in capabilities else object.__hash__
        bases: tuple[type, ...] = (JudgeObject,)
        if protocol.JUDGE_TZINFO in capabilities:
            # A real tzinfo (its layout is object's), so the C datetime takes it; its four
            # methods the judge's, each one round trip (protocol.JUDGE_METHOD).
            bases = (JudgeObject, datetime.tzinfo)
            for name in protocol.TZINFO_METHODS:
                body[name] = _stream_method(name)
        if protocol.JUDGE_ZONEINFO in capabilities:
            bases = (zoneinfo.ZoneInfo,)
            body = _zone_body(body)
        for cap in capabilities:
            if cap in _STREAM_CLASSES:
                bases = (_STREAM_CLASSES[cap],)
                body = _stream_body(bases[0], body)
        # The base's name, which the loader made this run's own (issue 18).
        cls = _proxy_classes[capabilities] = type(JudgeObject.__name__, bases, body)
        if bases[0] is zoneinfo.ZoneInfo:
            _zone_proxies.add(cls)
        elif bases[0] is not JudgeObject:
            _stream_proxies.add(cls)
        for cap in capabilities:
            if cap in _STREAM_ABCS:
                # `isinstance(fp, io.IOBase)` holds, as for the judge's stream in process; its
                # attributes are still the judge's stream methods only (standin.STREAM_METHODS).
                _STREAM_ABCS[cap].register(cls)
    return cls


class Connection:
    def __init__(self, fd_in: int, fd_out: int, coverage: Any) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.table = Table()
        # The judge's objects by id: one proxy each, so `is` holds between their uses.
        self.judge_objects: dict[int, Any] = {}
        self.callbacks: list[tuple[tuple[Any, ...], dict[str, Any]]] = []  # in flight
        self.buffer = bytearray()
        self.next_id = 1
        self.coverage = coverage
        self.coverage_modules: dict[str, Any] = {}  # out of sys.modules while the code runs
        self.probes: Probes | None = None  # the line probes, when they measure (not coverage)
        self.tree = ""
        self.context = ""  # the node id running now, as the judge names it
        self.dunders: dict[str, set[str]] = {}  # node id -> "module.Class.__eq__", ...
        # Link id -> [this worker's copy of a judge container the code kept, its snapshot]
        # (protocol.py, "links"): what changed on either side since is sent to the other.
        self.links: dict[int, list[Any]] = {}
        self.next_link = 1
        # The judge's seedings in force (protocol.SEEDS), oldest first: (serial, how to undo it).
        self.seeded: list[tuple[int, Callable[[], None]]] = []
        self.dropped: list[Any] = []  # objects the judge released, let go of in `answer`
        # A batch's items not yet sent (protocol.BATCH_FLUSH_S): its call id, each item's
        # bytes (wire.encode_member), their values and bytes together; and when this worker
        # last wrote, by a clock the code cannot patch (_CLOCK).
        self.holding: tuple[int, list[bytes]] | None = None
        self.held_values = self.held_bytes = 0
        self.written = _CLOCK()
        # The worker's own environment, before the code runs: what a name the property
        # restores goes back to (protocol.ENVIRON); and the property's changes set over it.
        self.environ_own = dict(os.environ)
        self.environ_set: dict[str, str | None] = {}
        # The judge's messages and requests, by protocol.py's names: a kind or request the
        # protocol declares and this table lacks is refused, as is one it does not declare.
        self.handlers: dict[str, Callable[..., None]] = {
            protocol.QUERY: self.answer, protocol.RELEASE: self.release, protocol.BYE: self.bye,
            protocol.SYNC: self.sync, protocol.SEEDS: self.seed, protocol.ENVIRON: self.environ,
        }  # fmt: skip
        self.requests: dict[str, Callable[..., Any]] = {
            protocol.IMPORT: importlib.import_module,
            protocol.GETATTR: getattr,
            protocol.SETATTR: setattr,
            protocol.DELATTR: delattr,
            protocol.OP: self.operator,
            protocol.CONTEXT: self.set_context,
            protocol.EXECUTED: self.executed,
            protocol.DUNDERS: self.dunder_record,
        }

    # --- frames ---
    def send(self, message: tuple[Any, ...]) -> None:
        data = wire.frame(wire.encode(message, self.to_ref))
        if self.holding is not None:  # a batch's items go first, in the same write
            data = self.held_frame() + data
        self.write(data)

    def write(self, data: bytes) -> None:
        while data:
            data = data[os.write(self.fd_out, data) :]
        self.written = _CLOCK()

    def held_frame(self) -> bytes:
        """The items held for a batch as one ITEMS frame; none are held after."""
        assert self.holding is not None
        ident, members = self.holding
        self.holding, self.held_values, self.held_bytes = None, 0, 0
        frame: bytes = wire.frame(wire.message_of((protocol.ITEMS, ident), members))
        return frame

    def receive(self) -> Any:
        while True:
            payload = wire.take_frame(self.buffer)
            if payload is not None:
                return wire.decode(payload, self.from_ref)
            chunk = os.read(self.fd_in, 1 << 16)
            if not chunk:
                raise SystemExit(0)  # the judge is gone
            self.buffer += chunk

    def to_ref(self, obj: Any) -> Any:
        if isinstance(obj, wire.Ref):
            return obj  # an ARGUMENT reference built by answer()
        # A judge object goes back as itself: the judge gets its own object, not a handle.
        if is_judge_object(obj):
            return wire.Ref(protocol.JUDGE_OBJ, object.__getattribute__(obj, "_id"))
        if isinstance(obj, JudgeFunction):
            return wire.Ref(protocol.JUDGE_FN, obj._id)
        name = protocol.builtin_name(obj)
        if name is not None:
            return wire.Ref(protocol.BUILTIN, 0, name)
        return self.table.to_ref(obj)

    def from_ref(self, ref: Any) -> Any:
        if ref.kind == protocol.HANDLE:
            return self.table.get(ref.id)
        if ref.kind in (protocol.JUDGE_FN, protocol.JUDGE_OBJ):
            known = self.judge_objects.get(ref.id)
            if known is None:
                known = self.judge_objects[ref.id] = self.judge_proxy(ref)
            return known
        if ref.kind == protocol.ARGUMENT and self.callbacks:
            args, kwargs = self.callbacks[-1]
            key = ref.meta
            if type(key) is int and 0 <= key < len(args):
                return args[key]
            if type(key) is str and key in kwargs:
                return kwargs[key]
        if (
            ref.kind == protocol.BUILTIN
            and type(ref.meta) is str
            and protocol.builtin_name(found := getattr(builtins, ref.meta, None))
        ):
            return found
        raise wire.WireError(f"unknown reference kind {ref.kind}")

    def judge_proxy(self, ref: Any) -> Any:
        if ref.kind == protocol.JUDGE_FN:
            return JudgeFunction(self, ref.id)
        caps = ref.meta
        if (
            type(caps) is not tuple
            or not set(caps) <= {*protocol.JUDGE_CAPABILITIES, *_base_capabilities()}
            or len(set(caps) & _base_capabilities()) > 1
        ):
            raise wire.WireError(f"judge object {ref.id} with capabilities {caps!r}")
        cls: Any = _proxy_class(tuple(sorted(caps)))
        if cls in _zone_proxies:
            proxy: Any = cls.from_file(io.BytesIO(_EMPTY_TZIF))
        else:
            proxy = cls.__new__(cls) if cls in _stream_proxies else object.__new__(cls)
        object.__setattr__(proxy, "_conn", self)
        object.__setattr__(proxy, "_id", ref.id)
        return proxy

    # --- serving ---
    def serve(self, until: int | None = None) -> Any:
        """Answer the judge's requests; with `until`, return the judge's reply to that callback."""
        while True:
            message = self.receive()
            try:
                kind = protocol.check(message, protocol.WORKER)
            except protocol.ProtocolError as exc:
                raise SystemExit(f"patchjudge worker: the judge {exc}") from None
            if kind in (protocol.OK, protocol.ERR):
                if until is None or message[1] != until:
                    raise SystemExit(f"patchjudge worker: a reply to {message[1]!r}, not asked")
                if kind == protocol.OK:
                    if message[3]:
                        self.copy_back(message[3])
                    return message[2]
                raise _judge_exception(message[2])
            self.handlers[kind](*message[1:])

    def copy_back(self, changed: Any) -> None:
        """The callback's list, dict and set arguments, as the judge's function left them."""
        if not self.callbacks or type(changed) is not tuple:
            raise SystemExit("patchjudge worker: the judge changed arguments of no callback")
        args, kwargs = self.callbacks[-1]
        original: Any
        value: Any
        for pair in changed:
            key, value = pair if type(pair) is tuple and len(pair) == 2 else (None, None)
            if type(key) is int and 0 <= key < len(args):
                original = args[key]
            elif type(key) is str and key in kwargs:
                original = kwargs[key]
            else:
                raise SystemExit(f"patchjudge worker: the judge changed argument {key!r}")
            if type(original) is not type(value):
                continue
            if type(original) is list:
                original[:] = value
            else:
                original.clear()
                original.update(value)

    def release(self, released: Any) -> None:
        # Let go of at the next request (answer), not here: the judge sends a RELEASE in the
        # same write as that request, and an object's finalizer that calls the judge
        # (base64io's IOBase.__del__ -> close -> wrapped.write) would wait for its reply
        # here while the request behind it was answered from inside the wait: the judge,
        # its request answered, went on, and the two conversations crossed (held-out 8).
        self.dropped += [self.table.release(ident, times) for ident, times in released]

    def bye(self) -> None:
        raise SystemExit(0)

    def callback(self, fn: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.call_judge((protocol.CALLBACK, fn), args, kwargs)

    def judge_method(
        self, obj: int, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """`obj.name(*args, **kwargs)` on a judge object: read and called by the judge at once."""
        return self.call_judge((protocol.JUDGE_METHOD, obj, name), args, kwargs)

    def call_judge(
        self, target: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        ident = self.next_id
        self.next_id += 1
        call = (tuple(args), dict(kwargs))
        self.send((target[0], ident, *target[1:], *call))
        # The judge's function may hand an argument back: it names it (ARGUMENT), and
        # the code gets its own object, as in process.
        self.callbacks.append(call)
        try:
            return self.serve(until=ident)
        finally:
            self.callbacks.pop()

    def warn(self, category: type, text: str, module: str, filename: str, lineno: int) -> None:
        """A warning the code issued, issued by the judge: what its filters raise, raised here."""
        ident = self.next_id
        self.next_id += 1
        names = module[:300], filename[:300]
        self.send((protocol.WARN, ident, category, text[: protocol.WARN_TEXT], *names, lineno))
        self.serve(until=ident)

    def judge_op(self, obj: int, op: str, args: tuple[Any, ...]) -> Any:
        """One protocol operation on a judge object, answered by the judge."""
        ident = self.next_id
        self.next_id += 1
        self.send((protocol.JUDGE_OP, ident, obj, op, tuple(args)))
        return self.serve(until=ident)

    def answer(self, ident: int, op: Any, *args: Any) -> None:
        if self.dropped:
            self.dropped.clear()  # finalizers run here, inside this request's conversation
        if _NUMPY_SEED and "numpy" in sys.modules:
            _seed_numpy()
        mutated: tuple[Any, ...] = ()
        if op == protocol.BATCH:
            self.answer_batch(ident, *args)
            return
        if op == protocol.SEQ:
            self.answer_seq(ident, *args)
            return
        if op == protocol.GETITEMS:
            self.answer_getitems(ident, *args)
            return
        if op == protocol.NEST:
            self.answer_nest(ident, *args)
            return
        drain = False
        try:
            if op in (protocol.CALL, protocol.CALL_METHOD):
                last = args[-1] if len(args) == (4 if op == protocol.CALL else 5) else None
                if type(last) is str and last == protocol.DRAIN:
                    drain, args = True, args[:-1]  # its result into list(): protocol.DRAIN
                if op == protocol.CALL:
                    target, call_args, call_kwargs = args
                else:  # the attribute as getattr reads it, then the call, as the two requests
                    obj, name, call_args, call_kwargs, *keep = args
                    target = getattr(obj, name)
                    if keep == [protocol.KEEP]:
                        self.answer_kept(ident, target, call_args, call_kwargs)
                        return
                watched = _watch(call_args, call_kwargs)
                result = target(*call_args, **call_kwargs)
                kept = _kept(watched, result)
                mutated = self.link(_containers(call_args, call_kwargs, kept), kept)
                result = self.named(
                    _as_argument(result, call_args, call_kwargs), call_args, call_kwargs
                )
            elif op in (protocol.SETATTR, protocol.OP) and len(args) == 3:
                # `f.flags = flags`, `store[k] = d`: the value or operands the code may keep.
                operands = (args[2],) if op == protocol.SETATTR else args[2]
                watched = _watch(operands, {}) if type(operands) is tuple else []
                result = self.operation(op, args)
                kept = _kept(watched, result)
                mutated = self.link(
                    tuple(p for p in _containers(operands, {}) if p[0] in kept), kept
                )
                result = self.named(result, operands if type(operands) is tuple else (), {})
            else:
                result = self.operation(op, args)
                if op == protocol.GETATTR and type(result) in (list, dict, set):
                    result = self.named(result, (), {}, top=False) or self.held(result)
                else:
                    result = self.named(result, (), {})
        except BaseException as exc:
            self.reply_error(ident, exc)
            return
        # Drained here only an iterator the judge never had: it holds no items fetched from
        # it nor an end, and nothing it could do with it comes before list()'s first `next`.
        fresh = drain and type(result) in ITERATOR_TYPES and not self.table.holds(result)
        try:
            self.send(
                (
                    protocol.OK,
                    ident,
                    (result, fresh) if drain else result,
                    mutated + self.link_changes(),
                )
            )
        except (wire.WireError, RecursionError) as exc:
            self.uncrossable(ident, f"{type(exc).__name__}: {exc}")
            return
        if fresh:
            self.answer_batch(ident, result, protocol.BATCH_ITEMS)

    # --- links (protocol.py): judge containers the code kept ---
    def link(self, pairs: tuple[Any, ...], kept: list[Any]) -> tuple[Any, ...]:
        """`pairs` (key, value), a kept plain container as (key, value, link): linked now."""
        if not kept:
            return pairs
        out: list[Any] = []
        for key, value in pairs:
            snapshot = self.snapshot(value) if key in kept and _linkable(value) else None
            if snapshot is None or len(self.links) >= protocol.LINKS:
                out.append((key, value))
                continue
            link = self.next_link
            self.next_link += 1
            self.links[link] = [value, snapshot]
            out.append((key, value, link))
        return tuple(out)

    def named(
        self, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any], top: bool = True
    ) -> Any:
        """`result` with each part of the judge's data it holds as itself named (PART).

        The parts are the nested values of this call's container arguments and every
        value of the linked copies, the linked copy itself included (`store.data is d`);
        with `top` False, only a result that is one of them as a whole, else None.
        """
        if not self.links and not any(_linkable(a) for a in (*args, *kwargs.values())):
            return result if top else None
        if result is None or type(result) is bool or (type(result) is int and -5 <= result <= 256):
            return result if top else None
        index: dict[int, Any] = {}
        budget = [_INDEXED]
        for key, value in (*enumerate(args), *kwargs.items()):
            if _linkable(value):
                _index(value, (protocol.PART_ARGUMENT, key), (), index, budget, own=False)
        for link, entry in self.links.items():
            _index(entry[0], (protocol.PART_LINK, link), (), index, budget, own=True)
        if not top:
            where = index.get(id(result))
            return None if where is None else wire.Ref(protocol.PART, 0, where[0], where[1])
        return _name_parts(result, index, 4, [wire.ARGUMENT_SCAN]) if index else result

    def snapshot(self, value: Any) -> bytes | None:
        """`value`'s state as bytes (its non-data parts by identity), or None past the cap.

        A tuple's is b"": it is linked for its parts' identity alone, never changed."""
        if type(value) is tuple:
            return b""
        try:
            data = wire.encode(value, _by_identity)
        except (wire.WireError, RecursionError):
            return None
        return data if len(data) <= protocol.LINK_BYTES else None

    def link_changes(self) -> tuple[Any, ...]:
        """Each linked copy the code changed since it was last sent, or let go (None)."""
        if not self.links:
            return ()
        out: list[Any] = []
        for link, entry in list(self.links.items()):
            if sys.getrefcount(entry[0]) <= _LINK_ALONE:  # the table's only
                del self.links[link]
                out.append((None, link, None))
                continue
            if type(entry[0]) is tuple:
                continue
            snapshot = self.snapshot(entry[0])
            if snapshot is None:  # grown past the cap: the judge's stays as it was sent
                del self.links[link]
                out.append((None, link, None))
            elif snapshot != entry[1]:
                entry[1] = snapshot
                out.append((None, link, entry[0]))
        return tuple(out)

    def sync(self, links: Any) -> None:
        """The judge's containers that changed since: merged into the linked copies."""
        if type(links) is not tuple:
            raise SystemExit("patchjudge worker: the judge synced links that are not a tuple")
        for pair in links:
            link, data = pair if type(pair) is tuple and len(pair) == 2 else (0, 0)
            if type(link) is int and data is None:
                self.links.pop(link, None)  # let go: the judge refused it or holds it alone
                continue
            entry = self.links.get(link) if type(link) is int else None
            if entry is None:
                raise SystemExit(f"patchjudge worker: the judge synced link {link!r}, not made")
            try:
                wire.merge(entry[0], data)
            except wire.WireError as exc:
                raise SystemExit(
                    f"patchjudge worker: the judge synced link {link}: {exc}"
                ) from None
            entry[1] = self.snapshot(entry[0]) or b""

    def seed(self, seeds: Any) -> None:
        """This process's global PRNGs seeded as hypothesis seeds the judge's (protocol.SEEDS)."""
        if not protocol.seeds_ok(seeds):
            raise SystemExit("patchjudge worker: the judge sent seeds not (serial, seed) pairs")
        kept = 0
        for (serial, _), (now, _) in zip(self.seeded, seeds, strict=False):
            if serial != now:
                break
            kept += 1
        # What restores the state below the first seeding let go of: the state a new seeding
        # saves, since no code runs in between (one example ending, the next starting: one
        # setstate, not a restore, a getstate and a seed).
        below = None
        while len(self.seeded) > kept:
            below = self.seeded.pop()[1]
        for serial, seed in seeds[kept:]:
            self.seeded.append((serial, below or _saved_globals()))
            below = None
            _seed_globals(seed)
        if below is not None:
            below()

    def environ(self, changes: Any) -> None:
        """The property's changes to its environment, over this process's (protocol.ENVIRON)."""
        if not protocol.environ_ok(changes):
            raise SystemExit("patchjudge worker: the judge sent an environment it may not set")
        now: dict[str, str | None] = dict(changes)
        zone = os.environ.get("TZ")
        for name in self.environ_set.keys() - now.keys():  # restored by the property
            now[name] = self.environ_own.get(name)
        for name, value in now.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value  # os.environ putenv's: C code and children see it too
        self.environ_set = dict(changes)
        if os.environ.get("TZ") != zone:
            # In process the property's process is the library's: a property that sets TZ
            # and calls time.tzset() has reset the library's local time too. The judge's
            # tzset reaches only the judge, so the worker resets its own with the change.
            time.tzset()

    def held(self, container: Any) -> Any:
        """An attribute's list, dict or set as a view: the judge changes this one in place."""
        ref = self.table.to_ref(container)
        ref.meta, ref.data = (protocol.META_HELD,), container
        return ref

    def answer_kept(
        self, ident: int, target: Any, call_args: tuple[Any, ...], call_kwargs: dict[str, Any]
    ) -> None:
        """A CALL_METHOD whose attribute the judge keeps: it comes back with the outcome.

        What the call raised travels in the OK too, so the judge has the
        attribute it stored either way, as the property's frame has it bare.
        """
        mutated: tuple[Any, ...] = ()
        try:
            watched = _watch(call_args, call_kwargs)
            result = target(*call_args, **call_kwargs)
            kept = _kept(watched, result)
            mutated = self.link(_containers(call_args, call_kwargs, kept), kept)
            result = _as_argument(result, call_args, call_kwargs)
            outcome: tuple[Any, ...] = (
                target, protocol.KEPT_OK, self.named(result, call_args, call_kwargs)
            )  # fmt: skip
        except BaseException as exc:
            outcome = (target, protocol.KEPT_ERR, self.describe(exc))
        try:
            self.send((protocol.OK, ident, outcome, mutated + self.link_changes()))
        except (wire.WireError, RecursionError) as exc:
            self.uncrossable(ident, f"{type(exc).__name__}: {exc}")

    def answer_seq(self, ident: int, calls: Any) -> None:
        """Discarded calls in order (protocol.SEQ): what the first that raises raised, or None.

        Their results are dropped here, as the property's frame drops them; the
        judge sends only data and handles as their arguments, so nothing is
        copied back.
        """
        for call in calls if type(calls) is tuple else ():
            try:
                if type(call) is tuple and len(call) == 4 and call[0] == protocol.CALL:
                    _, target, call_args, call_kwargs = call
                elif type(call) is tuple and len(call) == 5 and call[0] == protocol.CALL_METHOD:
                    _, obj, name, call_args, call_kwargs = call
                    target = getattr(obj, name)
                elif (
                    type(call) is tuple
                    and len(call) == 4
                    and call[:2] == (protocol.OP, "setitem")
                    and type(call[3]) is tuple
                    and len(call[3]) == 2
                ):
                    # A counted loop's store (standin.keep_store): `target[key] = value`.
                    target, call_args, call_kwargs = OPS["setitem"], (call[2], *call[3]), {}
                else:
                    raise LookupError(f"no call {call!r:.80}")
                target(*call_args, **call_kwargs)
            except BaseException as exc:
                self.reply_error(ident, exc)
                return
        # A kept store may change a container the code keeps of the judge's (a link).
        self.send((protocol.OK, ident, None, self.link_changes()))

    def answer_nest(self, ident: int, calls: Any) -> None:
        """`f(g(x))` (protocol.NEST): each call gets the one before's result, its own object.

        A result that could not cross stops the chain where a round trip a call
        stopped it: checked before the next call (_crossing). The judge sends data
        and handles alone as the first call's arguments, so nothing is copied back;
        the results go in the one OK, with what a later call raised.
        """
        if not protocol.nest_ok(calls):
            raise SystemExit("patchjudge worker: the judge sent a nest that is not one")
        (target, call_args, call_kwargs), *outers = calls
        try:
            result = target(*call_args, **call_kwargs)
        except BaseException as exc:
            self.reply_error(ident, exc)
            return
        values: list[Any] = []
        error: Any = None
        size = 0
        for step in range(len(calls)):
            value = _as_argument(result, call_args, call_kwargs) if step == 0 else result
            value = self.named(value, (), {})
            crossing = _crossing(value)
            if isinstance(crossing, str):
                if step == 0:
                    self.uncrossable(ident, crossing)
                    return
                error = (protocol.ERROR_UNCROSSABLE, crossing)
                break
            values.append(value)
            size += crossing
            if step == len(outers) or size > protocol.NEST_BYTES:
                break  # past NEST_BYTES the judge makes the later calls, one a round trip
            try:
                result = outers[step][0](result)
            except BaseException as exc:
                error = self.describe(exc)
                break
        try:
            self.send((protocol.OK, ident, (tuple(values), error), self.link_changes()))
        except (wire.WireError, RecursionError) as exc:
            self.uncrossable(ident, f"{type(exc).__name__}: {exc}")

    def answer_getitems(self, ident: int, target: Any, keys: Any) -> None:
        """A counted loop's reads (protocol.GETITEMS): `target[key]` for each key, in order,
        answered as a counted batch is (ending after an item that is not plain data). The keys
        are a range, or a tuple of a list's items (a loop over a held list's)."""
        if type(keys) not in (range, tuple) or not 0 < len(keys) <= protocol.BATCH_ITEMS:
            self.reply_error(ident, LookupError(f"no getitems over {keys!r:.80}"))
            return
        self.answer_batch(ident, _Reads(target, keys), len(keys), True)

    def uncrossable(self, ident: int, text: str) -> None:
        self.send((protocol.ERR, ident, (protocol.ERROR_UNCROSSABLE, text)))

    def answer_batch(self, ident: int, iterator: Any, limit: Any, plain: Any = False) -> None:
        """`next` up to `limit` times (issue 20): the items in ITEMS messages, then the end.

        The end is "ok" after the last item asked for, or the error the next
        `next` raised (StopIteration included): the judge raises it at the
        `next` that would have raised it, after the items before it. Items are
        held and sent together: before any other message (a callback a step
        makes finds the judge with every item before it), past a frame's
        values or bytes, and once BATCH_FLUSH_S has passed since the last
        write, so the judge's per-call deadline still times each step.
        With `plain` (a counted loop's), "ok" right after an item that is not
        plain data: the judge may do more with it than compare it.
        """
        sent = 0
        # Values and bytes of one item: what fits in an ITEMS frame with its head alone.
        budget = wire.MAX_ITEMS - _ITEMS_HEAD_VALUES
        for _ in range(min(limit, protocol.BATCH_ITEMS) if type(limit) is int else 0):
            try:
                item = next(iterator)
            except BaseException as exc:
                self.reply_error(ident, exc)
                return
            last = plain is True and not protocol.plain(item)
            try:
                item = self.named(item, (), {})
                member, values = wire.encode_member(item, self.to_ref, budget)
            except (wire.WireError, RecursionError) as exc:
                self.uncrossable(ident, f"{type(exc).__name__}: {exc}")
                return
            if self.holding is not None and (
                self.held_values + values > budget
                or self.held_bytes + len(member) > wire.MAX_FRAME - wire.MEMBER_HEAD
            ):
                self.write(self.held_frame())
            if self.holding is None:
                self.holding = (ident, [])
            self.holding[1].append(member)
            self.held_values += values
            self.held_bytes += len(member)
            sent += len(member) + wire.MEMBER_HEAD  # never less than the judge counts
            if sent >= protocol.BATCH_BYTES or last:
                break
            if _CLOCK() - self.written >= protocol.BATCH_FLUSH_S:
                self.write(self.held_frame())
        self.send((protocol.OK, ident, None, self.link_changes()))

    def operation(self, op: Any, args: tuple[Any, ...]) -> Any:
        answer = self.requests.get(op) if type(op) is str else None
        if answer is None:
            raise LookupError(f"no request {op!r}")
        return answer(*args)

    def operator(self, name: Any, target: Any, operands: Any) -> Any:
        fn = OPS.get(name) if type(name) is str else None
        if fn is None:
            raise LookupError(f"no operation {name!r}")
        if name in protocol.DUNDER_OPS:
            self.note_dunder(name, target)
        return fn(target, *operands)

    def set_context(self, name: Any) -> None:
        if self.probes is not None:
            self.probes.harvest(self.context)
        self.context = str(name)
        if self.coverage is not None:
            self.coverage.switch_context(name)

    def dunder_record(self) -> dict[str, tuple[str, ...]]:
        return {k: tuple(sorted(v)) for k, v in sorted(self.dunders.items()) if k}

    def note_dunder(self, name: str, target: Any) -> None:
        """Record `name` if the class that defines it for `target` is one of the tree's."""
        dunder = protocol.dunder_name(name)
        owner = next((c for c in type(target).__mro__ if dunder in c.__dict__), None)
        if owner is None or _is_builtin(owner):
            return
        module = sys.modules.get(owner.__module__)
        path = getattr(module, "__file__", None)
        if type(path) is str and os.path.abspath(path).startswith(self.tree + os.sep):
            where = f"{owner.__module__}.{owner.__qualname__}.{dunder}"
            self.dunders.setdefault(self.context, set()).add(where)

    def executed(self) -> dict[str, dict[str, list[int]]]:
        if self.probes is not None:
            return self.probes.executed(self.context, self.tree)
        if self.coverage is None:
            return {}
        # Back under their names: coverage imports what stop() and get_data() need by name.
        sys.modules.update(self.coverage_modules)
        self.coverage.stop()
        data = self.coverage.get_data()
        found: dict[str, dict[str, list[int]]] = {}
        for path in data.measured_files():
            rel = os.path.relpath(path, self.tree)
            if rel.startswith(".."):
                continue
            # "" too: the lines run outside any test, at import (issue 18). Dropped,
            # a module's top level never counted as executed, however it was imported.
            for context, lines in _by_context(data, path).items():
                found.setdefault(context, {})[rel] = sorted(lines)
        return found

    def reply_error(self, ident: int, exc: BaseException) -> None:
        try:
            self.send((protocol.ERR, ident, self.describe(exc)))
        except (wire.WireError, RecursionError):
            self.uncrossable(ident, f"{type(exc).__name__} (unprintable)")

    def describe(self, exc: BaseException, depth: int = 1) -> tuple[Any, ...]:
        token = getattr(exc, TOKEN, None)
        if type(token) is int:
            return (protocol.ERROR_JUDGE, token)
        cls = type(exc)
        message = _safe_str(exc)
        cause = self.cause(exc, depth)
        # By identity: a class of the code's named builtins.ValueError is the code's (issue 18).
        if _is_builtin(cls):
            args = exc.args if wire.is_data(exc.args) else (message,)
            return (protocol.ERROR_BUILTIN, cls.__name__, args, *cause)
        return (protocol.ERROR_FOREIGN, cls, exc, message, *cause)

    def cause(self, exc: BaseException, depth: int) -> tuple[Any, ...]:
        """`raise exc from cause`: the cause's description, or nothing.

        Read from BaseException's own slot (no code of the exception's runs). Not a
        judge function's exception (its verdict stays the judge's: issue 18), not an
        interrupt, and no deeper than protocol.MAX_CAUSES.
        """
        cause = _CAUSE.__get__(exc)
        if depth >= protocol.MAX_CAUSES or not issubclass(type(cause), Exception):
            return ()
        if type(getattr(cause, TOKEN, None)) is int:
            return ()
        return (self.describe(cause, depth + 1),)


def _saved_globals() -> Callable[[], None]:
    """What puts `random` (and numpy's global state, once numpy is loaded) back as it is now."""
    import random  # in process hypothesis has it loaded; here, once seeds are asked for

    state = random.getstate()
    numpy_random = sys.modules.get("numpy.random") if "numpy" in sys.modules else None
    numpy_state = numpy_random.get_state() if numpy_random is not None else None

    def restore() -> None:
        random.setstate(state)
        if numpy_random is not None:
            numpy_random.set_state(numpy_state)

    return restore


_SEEDED: dict[int, Any] = {}  # seed -> random's state once seeded so (hypothesis' _seeded_state)


def _seed_globals(seed: int) -> None:
    """`random` seeded with `seed`, and numpy's global state once numpy is loaded, as
    hypothesis' `deterministic_PRNG` seeds them in process."""
    import random

    state = _SEEDED.get(seed)
    if state is None:
        if len(_SEEDED) >= protocol.SEED_DEPTH:
            _SEEDED.clear()
        state = _SEEDED[seed] = random.Random(seed).getstate()
    random.setstate(state)
    _NUMPY_SEED[:] = [seed]
    _seed_numpy()


# numpy's global state, seeded like `random` once numpy is loaded: the worker's own
# seeding comes at its first request, before the code imports numpy (answer() asks).
_NUMPY_SEED: list[int] = []


def _seed_numpy() -> None:
    numpy_random = sys.modules.get("numpy.random") if "numpy" in sys.modules else None
    if numpy_random is not None:
        numpy_random.seed(_NUMPY_SEED.pop())


def _by_context(data: Any, path: str) -> dict[str, set[int]]:
    contexts: dict[str, set[int]] = {}
    for line, names in (data.contexts_by_lineno(path) or {}).items():
        for name in names:
            contexts.setdefault(name, set()).add(line)
    return contexts


_DOC_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


class _Probing(ast.NodeTransformer):
    """A probe before each statement: `MARKER[line]`, MARKER a 1-tuple constant (issue 20).

    After compiling, the tuple is swapped for a defaultdict in each code
    object's constants, so a probe is one subscript in C: no name in the
    module's globals, builtins or dir(), no tracer, no Python frame. The
    index is always out of the 1-tuple's range, so the compiler cannot fold it.
    """

    def __init__(self, marker: tuple[str]) -> None:
        self.marker = marker

    def probe(self, line: int, at: ast.AST) -> ast.expr:
        # Every node made here takes `at`'s location, so the module compiles without
        # ast.fix_missing_locations: a second walk of the whole tree, a fifth of the
        # probing's CPU in each worker (issue 20).
        marker = ast.copy_location(ast.Constant(self.marker), at)  # type: ignore[arg-type]
        key = ast.copy_location(ast.Constant(line), at)
        return ast.copy_location(ast.Subscript(marker, key, ast.Load()), at)

    def mark(self, line: int, at: ast.AST) -> ast.stmt:
        return ast.copy_location(ast.Expr(self.probe(line, at)), at)

    def body(self, owner: ast.AST, stmts: list[ast.stmt], first: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = list(first)
        futures: list[ast.stmt] = []
        for i, s in enumerate(stmts):
            doc = i == 0 and isinstance(owner, _DOC_OWNERS) and _is_docstring(s)
            if doc:  # stays the docstring; coverage does not count it either
                out.append(s)
                continue
            if isinstance(s, ast.ImportFrom) and s.module == "__future__":
                out.append(s)  # must stay first: its probe comes after them
                futures.append(self.mark(s.lineno, s))
                continue
            out += futures
            futures = []
            # Decorators run with their def and coverage counts each one's line.
            decorators = getattr(s, "decorator_list", ())
            out += [*(self.mark(d.lineno, d) for d in decorators), self.mark(s.lineno, s), s]
        return out + futures

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        loop = isinstance(node, ast.For | ast.AsyncFor | ast.While)
        line = getattr(node, "lineno", 0)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                # A loop's header runs again each time round, maybe in a later test.
                again = [self.mark(line, node)] if loop and field == "body" else []
                setattr(node, field, self.body(node, stmts, again))
        # A handler's or case's line runs for every one tried before it: marked in its body.
        tried: list[ast.stmt] = []
        for h in getattr(node, "handlers", None) or ():
            tried.append(self.mark(h.lineno, h))
            h.body = [*tried, *h.body]
        for c in getattr(node, "cases", None) or ():
            tried.append(self.mark(c.pattern.lineno, c.pattern))
            c.body = [*tried, *c.body]
        return node

    def wrapped(self, expr: ast.expr, line: int) -> ast.expr:
        """`MARKER[line] or expr`: the probe is 0, so this is expr, evaluated when it is."""
        return ast.copy_location(ast.BoolOp(ast.Or(), [self.probe(line, expr), expr]), expr)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.generic_visit(node)
        node.body = self.wrapped(node.body, node.lineno)
        return node

    def visit_comprehension_node(self, node: Any) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node, ast.DictComp):
            node.key = self.wrapped(node.key, node.lineno)
        else:
            node.elt = self.wrapped(node.elt, node.lineno)
        return node  # type: ignore[no-any-return]

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_comprehension_node


def _is_docstring(s: ast.stmt) -> bool:
    return (
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and type(s.value.value) is str
    )


def _swapped(code: Any, marker: tuple[str], hits: Any) -> Any:
    consts = tuple(
        hits if type(c) is tuple and c == marker
        else _swapped(c, marker, hits) if type(c) is type(code) else c
        for c in code.co_consts
    )  # fmt: skip
    return code.replace(co_consts=consts)


class Probes:
    """The measured files' executed lines, by line probes compiled into them (issue 20)."""

    def __init__(self, files: list[str]) -> None:
        self.marker = ("".join(f"{b:02x}" for b in os.urandom(16)),)
        # Real paths: a module imported through a symlink is measured as the file it
        # reads, the one the review reads (red team, session 10).
        self.hits: dict[str, collections.defaultdict[int, int]] = {
            os.path.realpath(f): collections.defaultdict(int) for f in files
        }
        self.found: dict[str, dict[str, set[int]]] = {}  # context -> path -> lines
        self.compiled: dict[str, tuple[bytes, Any]] = {}

    def prepare(self, roots: tuple[str, ...] | None = None) -> str:
        """Compile each file with its probes now; why one cannot take them ("" if all can).

        With `roots`, only the files under them (the pythonpath): any other
        listed file (changed off the pythonpath or in the visible suite, code
        only if something imports it) compiles with its probes when imported.
        """
        for path in self.hits:
            if roots is not None and not path.startswith(roots):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue  # not there: nothing of it can run
            why = self.compile(path, data)
            if why:
                return f"{path}: {why}"
        return ""

    def compile(self, path: str, data: bytes) -> str:
        try:
            if self.marker[0].encode() in data:
                raise ValueError("the file spells the probe's marker")
            tree = compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            tree = _Probing(self.marker).visit(tree)
            code = compile(tree, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
            # A file that parses can still fail to compile (`return` at its top level), and
            # one too deep for the AST fails both ways: then the import fails as it would,
            # probed or not. Only a file that compiles plain but not probed cannot take them.
            try:
                compile(data, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return ""
            return f"{type(exc).__name__}: {exc}"
        self.compiled[path] = (data, _swapped(code, self.marker, self.hits[path]))
        return ""

    def code(self, path: str, data: bytes) -> Any:
        path = os.path.realpath(path)
        if path not in self.hits:
            return None
        if self.compiled.get(path, (None,))[0] != data and self.compile(path, data):
            sys.stderr.write(f"patchjudge worker: {path} changed and cannot take probes\n")
        done = self.compiled.get(path)
        return done[1] if done is not None and done[0] == data else None

    def harvest(self, context: str) -> None:
        for path, hits in self.hits.items():
            if hits:
                self.found.setdefault(context, {}).setdefault(path, set()).update(hits)
                hits.clear()

    def executed(self, context: str, tree: str) -> dict[str, dict[str, list[int]]]:
        self.harvest(context)
        out: dict[str, dict[str, list[int]]] = {}
        for name, files in self.found.items():
            for path, lines in files.items():
                rel = os.path.relpath(path, os.path.realpath(tree))
                if not rel.startswith(".."):
                    out.setdefault(name, {})[rel] = sorted(lines)
        return out


def _found_by_others(me: Any, fullname: str, path: Any, target: Any) -> tuple[Any, Any]:
    """(the finder, the spec) the first other finder on sys.meta_path gives; (None, None)."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if finder is me or find is None:
            continue
        spec = find(fullname, path, target)
        if spec is not None:
            return finder, spec
    return None, None


def _install_loader(probes: Probes | None, mutants: dict[str, Any]) -> None:
    """A finder before every other: the probed files and the mutant's compile as given.

    `mutants`: real path -> the code the worker compiled from the judge's text
    (_schema_code); the file's bytes are read as any import reads them, and not
    compiled. Installed in every worker that measures or runs a mutant, so the
    main pass's and a mutant's imports look alike (their loader, meta_path).
    """
    claimed = set(probes.hits if probes is not None else ()) | set(mutants)
    base = importlib.machinery.SourceFileLoader

    class Loader(base):  # type: ignore[misc,valid-type]
        def get_code(self, fullname: str) -> Any:
            path = self.get_filename(fullname)
            data = self.get_data(path)
            code = mutants.get(os.path.realpath(path))
            if code is None and probes is not None:
                code = probes.code(path, data)
            return code if code is not None else super().get_code(fullname)

    # Named as the loader it stands in for; no bytecode cache is read or written.
    Loader.__name__ = Loader.__qualname__ = base.__name__
    Loader.__module__ = base.__module__

    class Finder:
        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
            spec = _found_by_others(self, fullname, path, target)[1]
            if spec is None:
                return None
            origin = spec.origin
            if type(spec.loader) is base and origin and os.path.realpath(origin) in claimed:
                spec.loader = Loader(spec.loader.name, spec.loader.path)
            return spec

    Finder.__name__ = Finder.__qualname__ = "PathFinder"
    Finder.__module__ = base.__module__
    sys.meta_path.insert(0, Finder())


def _schema_code(schemata: Any, tree: str) -> dict[str, Any]:
    """The review's schemata compiled for the files they stand in for: real path -> code.

    The file on disk stays the original, so what the code reads of itself
    (open, linecache, inspect, a hash) is what was written. The texts are
    dropped here: only the code objects are kept. A schema this interpreter
    cannot compile runs as the original (its mutants survive: the safe side).
    """
    compiled: dict[str, Any] = {}
    for schema in schemata:
        path = os.path.realpath(os.path.join(tree, schema[0]))
        try:
            compiled[path] = compile(protocol.schema_tree(schema), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
            sys.stderr.write(
                f"patchjudge worker: the schema of {schema[0]} does not compile: {exc}\n"
            )
    return compiled


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[: protocol.ERROR_TEXT]
    except Exception:
        return f"<{type(exc).__name__}: unprintable>"


def _containers(
    args: tuple[Any, ...], kwargs: dict[str, Any], kept: list[Any] | None = None
) -> tuple[Any, ...]:
    """The list, dict, set and bytearray arguments as they are after the call: the judge
    copies them back. A subclass of one (the code's own, a handle judge side) too: the
    judge refreshes its view's data (issue 17). A tuple the code kept (`kept`) too: linked
    for its parts' identity (PART)."""
    if not kwargs and not kept and not any(isinstance(a, _MUTABLE) for a in args):
        return ()  # the common call, answered without building the pairs
    pairs = [(i, a) for i, a in enumerate(args)] + list(kwargs.items())
    return tuple(
        (key, value)
        for key, value in pairs
        if isinstance(value, _MUTABLE) or (kept and key in kept and _linkable(value))
    )


_MUTABLE = (list, dict, set, bytearray)


def _linkable(value: Any) -> bool:
    """A plain container the code may keep: a mutable one, or a tuple (its parts' identity)."""
    return type(value) in _MUTABLE or (type(value) is tuple and len(value) > 0)


_WATCHED = 256  # containers of one call's arguments whose references are counted
# sys.getrefcount of a linked copy nothing but the link table holds, read in link_changes:
# the table's entry (a list) and getrefcount's own argument.
_LINK_ALONE = 2


_INDEXED = 1024  # parts of the judge's data a reply may name (PART), all containers together


def _index(  # noqa: PLR0917  (recursive; the state rides along)
    value: Any, root: Any, path: tuple[Any, ...], into: dict[int, Any], budget: list[int], own: bool
) -> None:
    """id -> ((root, path), the object) for `value` (if `own`) and the data in it: only
    data, since the code's objects and the judge's cross as references already."""
    if type(value) not in wire.DATA_TYPES:
        return
    if own and not _trivial(value):
        into.setdefault(id(value), ((root, path), value))
    budget[0] -= 1
    if budget[0] <= 0 or len(path) >= 16:
        return
    if type(value) in (list, tuple):
        items: Any = enumerate(value)
    elif type(value) is dict:
        items = ((k, v) for k, v in value.items() if type(k) in _PATH_KEYS)
    else:
        return
    for step, item in items:
        if budget[0] <= 0:
            return
        _index(item, root, (*path, step), into, budget, own=True)


_PATH_KEYS = (int, str, bytes, float, type(None), bool)


def _trivial(value: Any) -> bool:
    """A value no reply needs to name: a singleton, a cached small int."""
    return value is None or type(value) is bool or (type(value) is int and -5 <= value <= 256)


def _name_parts(value: Any, index: dict[int, Any], depth: int, budget: list[int]) -> Any:
    found = index.get(id(value))
    if found is not None and found[1] is value:
        (root, path), _ = found
        return wire.Ref(protocol.PART, 0, (root, path), value)
    kind = type(value)
    if depth == 0 or budget[0] <= 0 or kind not in (tuple, list, dict):
        return value
    items = list(value.values()) if kind is dict else value
    budget[0] -= len(items)
    named = [_name_parts(v, index, depth - 1, budget) for v in items]
    if all(a is b for a, b in zip(named, items, strict=True)):
        return value
    if kind is dict:
        return dict(zip(value, named, strict=True))
    return tuple(named) if kind is tuple else named


def _by_identity(obj: Any) -> Any:
    """A snapshot's reference: a non-data part by identity (nothing is added to the table)."""
    return wire.Ref(protocol.HANDLE, id(obj) & 0xFFFFFFFFFFFFFFFF)


def _watch(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The plain containers of the arguments, each with its reference count before the call.

    [(key, [containers of that argument, its own first], [their counts])]; nested ones
    too (a dict in a list), to _WATCHED in all: the code may keep a part alone. The
    counts are read where _kept reads them again (a list, a name, the argument).
    """
    if not kwargs and not any(_linkable(a) for a in args):
        return []
    budget = [_WATCHED]
    found: list[Any] = []
    for key in (*range(len(args)), *kwargs):
        value = args[key] if type(key) is int else kwargs[key]
        if _linkable(value) and budget[0] > 0:
            found.append((key, _parts(value, [], budget, 0)))
    value = None
    return [(key, parts, [sys.getrefcount(p) for p in parts]) for key, parts in found]


def _parts(value: Any, into: list[Any], budget: list[int], depth: int) -> list[Any]:
    into.append(value)
    budget[0] -= 1
    if type(value) in (list, dict, tuple) and depth < 8:
        for item in value.values() if type(value) is dict else value:
            if _linkable(item) and budget[0] > 0:
                _parts(item, into, budget, depth + 1)
    return into


def _kept(watched: list[Any], result: Any) -> list[Any]:
    """The keys of the arguments the call left referenced beyond it (the code kept them).

    A count that grew, less what the result holds of it: the result as itself (this
    frame's name and the caller's) or as an item of a list, tuple or dict it returned.
    """
    kept: list[Any] = []
    for key, parts, counts in watched:
        for i in range(len(parts)):  # no zip: its reused tuple would hold a part
            part = parts[i]
            held = 2 if result is part else _items_are(result, part)
            if sys.getrefcount(part) - held > counts[i]:
                kept.append(key)
                break
        part = None
    return kept


def _items_are(result: Any, part: Any) -> int:
    if type(result) in (list, tuple):
        return sum(1 for item in result if item is part)
    if type(result) is dict:
        return sum(1 for item in result.values() if item is part)
    return 0


def _as_argument(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """An argument returned as itself, or inside the result, crosses as "argument N": the
    judge's own object comes back."""
    return wire.returned_arguments(result, args, kwargs, _argument_ref)


_CROSSES = frozenset({type(None), bool, float, complex})


def _crossing(value: Any) -> str | int:
    """Why `value` could not cross (wire's limits), or its encoded size; nothing is
    registered (no handle is made)."""
    kind = type(value)
    if kind in _CROSSES or (kind is int and value.bit_length() < 63):
        return 16
    try:
        return len(wire.encode(value, _unregistered))
    except (wire.WireError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _unregistered(obj: Any) -> Any:
    """What stands for a reference when only the crossing is asked (no handle is made)."""
    return wire.Ref(protocol.HANDLE, 0)


def _argument_ref(key: Any) -> Any:
    return wire.Ref(protocol.ARGUMENT, 0, key)


def _forward_warnings(conn: Connection) -> None:
    """The code's warnings go to the judge, whose filters decide (issue 17).

    In process a library's warning meets the judge's filters: `pytest.warns`,
    a `simplefilter("error")`, pytest's summary. Here every warning the
    worker's main thread issues is shown, and showing it is a WARN the judge
    issues again; what the judge's filters raise is raised at the code's
    `warnings.warn`. As pytest does in process, by the module's own hook
    (`_showwarnmsg_impl`, what `catch_warnings(record=True)` replaces), so a
    library's own `catch_warnings` still keeps its warnings to itself.
    A thread of the code's shows its warnings on the worker's stderr.
    """
    import warnings

    main = _thread.get_ident()
    shown = getattr(warnings, "_showwarnmsg_impl")  # noqa: B009  (private, set back below)
    # A stacklevel that walked out of the code lands on this file's call of it: in process
    # that frame is the property's, so the judge puts the warning at its caller's line
    # (whenever's `warns_here`, which checks `w.filename`: held-out round 12).
    own = _forward_warnings.__code__.co_filename
    modules: dict[str, str] = {}

    def module_of(filename: str) -> str:
        if filename not in modules:
            for name, module in list(sys.modules.items()):
                found = getattr(module, "__file__", None)
                if type(found) is str:
                    modules.setdefault(found, name)
            modules.setdefault(filename, "")  # no module's file: asked once
        return modules[filename]

    def forward(msg: Any) -> None:
        if _thread.get_ident() != main or not isinstance(msg.category, type):
            shown(msg)
            return
        filename, lineno = str(msg.filename), msg.lineno if type(msg.lineno) is int else 0
        if filename == own:
            conn.warn(msg.category, _safe_str(msg.message), "", "", protocol.AT_CALLER)
            return
        conn.warn(msg.category, _safe_str(msg.message), module_of(filename), filename, lineno)

    setattr(warnings, "_showwarnmsg_impl", forward)  # noqa: B010
    warnings.simplefilter("always")


def _judge_exception(desc: Any) -> BaseException:
    """What a judge-side function raised, as the worker's code sees it (and the judge gets back)."""
    kind, token = desc[0], desc[1]
    exc: BaseException
    if kind == protocol.ERROR_BUILTIN:
        cls = wire.BUILTIN_CLASSES.get(desc[2]) if type(desc[2]) is str else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            try:
                exc = cls(*desc[3])
            except Exception:
                exc = cls()
        else:
            exc = JudgeFunctionError(desc[2])
    else:
        exc = JudgeFunctionError(str(desc[2]))
    setattr(exc, TOKEN, token)
    return exc


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"patchjudge worker: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and the like look modules up by name
    spec.loader.exec_module(module)
    return module


def main(
    argv: list[str],
    loaded: Any = None,
    token: str = TOKEN,
    proto: Any = None,
    handed: list[Any] | None = None,
) -> int:
    global wire, protocol, TOKEN, _METACLASSES, _BUILTIN_IDS  # noqa: PLW0603  (set once, before any code under test)
    wire_path, fd_in, fd_out, tree, pythonpath, cover = argv[1:7]
    base = argv[7:8] == ["base"]
    wire = loaded if loaded is not None else _load(wire_path, "_patchjudge_wire")
    protocol = proto
    if protocol is None:  # run as a script: the protocol lies beside the wire
        here = os.path.dirname(os.path.abspath(wire_path))
        protocol = _load(os.path.join(here, "protocol.py"), "_patchjudge_protocol")
    TOKEN = token
    _METACLASSES = tuple((wire.CLASSES[name], name) for name in protocol.METACLASSES)
    _BUILTIN_IDS = frozenset(id(cls) for cls in wire.BUILTIN_CLASSES.values())
    _limit_resources()
    private_writes(tree)
    coverage = None
    files = [os.path.join(tree, f) for f in cover.split(os.pathsep) if f]
    probes = Probes(files) if files else None
    roots = tuple(
        os.path.join(os.path.realpath(os.path.join(tree, p)), "")
        for p in pythonpath.split(os.pathsep)
        if p
    )
    why = probes.prepare(roots) if probes is not None else ""
    if why:  # never silently weaker: coverage.py's tracer measures this run instead
        sys.stderr.write(f"patchjudge worker: coverage.py measures this run: {why}\n")
        probes = None
    # The review's schemata, from the start's stdin (`handed`, emptied here): compiled now and
    # their texts dropped, so no object the code can reach holds them (red team, session 17).
    mutants = _schema_code(handed.pop(), tree) if handed and handed[-1] is not None else {}
    if handed:
        handed.clear()
    if probes is not None or mutants:
        _install_loader(probes, mutants)
    elif files:
        # Started before the tree is importable, so its first line is measured too.
        try:
            import coverage as coverage_module
        except ImportError:
            # A `--python` without coverage.py: nothing measures, so no line counts as
            # executed (the review's safe side, `undecided`), never the code's crash.
            sys.stderr.write(
                "patchjudge worker: nothing measures this run: coverage.py is not installed"
                f" in {sys.executable}; install it there to measure these files\n"
            )
        else:
            # config_file=False: the tree's .coveragerc, setup.cfg, tox.ini or pyproject.toml
            # must not omit its own lines from the measurement.
            coverage = coverage_module.Coverage(
                data_file=None, include=files, branch=False, config_file=False
            )
            coverage.start()
    # coverage's modules leave sys.modules while the code runs, so `"coverage" in
    # sys.modules` is no tell (issue 18); the tracer (sys.gettrace()) stays, and
    # the differential run's second worker has none. Only coverage's names are
    # here yet: the tree has not been imported.
    hidden = {n: m for n, m in sys.modules.items() if "coverage" in n}
    for name in hidden:
        del sys.modules[name]
    if "__file__" in globals():  # run as a script: its folder is patchjudge's, not the tree's
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    if base:  # the merge base's tree: the venv's build of the project is the head's
        hide_own_build([os.path.join(tree, p) for p in pythonpath.split(os.pathsep) if p])
    # normpath: a pythonpath of "." must not put "./" into the paths tracebacks show.
    sys.path[:0] = [
        os.path.normpath(os.path.join(tree, p)) for p in pythonpath.split(os.pathsep) if p
    ]
    fds = int(fd_in), int(fd_out)
    for fd in fds:
        os.set_inheritable(fd, False)
    # The code's prints must not land on the judge's wire (fd 1 is the judge's stdout anyway).
    os.dup2(2, 1)
    conn = Connection(*fds, coverage)
    conn.coverage_modules = hidden
    conn.probes = probes
    conn.tree = os.path.abspath(tree)
    _forward_warnings(conn)
    try:
        conn.serve()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
