"""What crosses the oracle's boundary, named once for both ends (issue 17).

The judge (standin.py, in the judge's pytest) and the worker (worker.py, in a
process the code under test owns) talk in messages that wire.py encodes; this
module is the one place that says which. Stdlib only and pure: the worker's
loader sends this file down the worker's stdin too, under a random name.

    judge                                        worker
    QUERY  ("q", id, request, *args)  ------->   answers with OK or ERR,
    RELEASE ("rel", ((handle, times), ...)) -->  ITEMS ("its", id, item, ...) first
    SYNC   ("sync", ((link, data), ...)) ---->     for a BATCH request (after the OK,
                                                   then a second end, for a DRAIN call)
    SEEDS  ("seeds", ((serial, seed), ...)) ->
    ENVIRON ("env", ((name, value), ...)) -->
    BYE    ("bye",)                   ------->
    OK     ("ok", id, result, changed)  <---->   OK   (both ways: a reply to the
    ERR    ("err", id, error)           <---->   ERR   call in flight)
    the judge answers OK or ERR  <-------------  CALLBACK ("cb", id, fn, args, kwargs)
                                 <-------------  JUDGE_OP ("jop", id, obj, operation, args)
                                 <-------------  JUDGE_METHOD ("jm", id, obj, name, args, kwargs)
                                 <-------------  WARN ("warn", id, category, message, module,
                                                       filename, lineno)

- MESSAGES: each kind, the end that receives it and its fields; `check` is
  the decoder's gate both ends pass every message through, so a kind or a
  shape the table does not declare is refused wherever it arrives.
- REQUESTS: what the judge may ask the worker (a QUERY's request); OPERATORS:
  the operators of the OP request (`==`, `len`, `iter`, ...).
- JUDGE_OPERATIONS: what the worker may ask of a judge object (JUDGE_OP), and
  JUDGE_CAPABILITIES, the ones a judge object's proxy class may define.
- Reference kinds (wire.Ref.kind): HANDLE, JUDGE_FN, JUDGE_OBJ, ARGUMENT, BUILTIN;
  a handle's meta kinds; an ERR's error kinds.
- The environment: ORACLE_ENV (the worker spec, for the judge's pytest),
  WORKER_PASSED_ENV (what of the judge's environment a worker keeps),
  LAUNCHER_ENV and LAUNCHER_ASKED (a boxed judge's launcher, launcher.py);
  ENVIRON_REFUSED, what of the property's changes to os.environ never crosses.
- WorkerSpec: how to start a worker, one declared record with its defaults,
  encoded and decoded here only.
- Cause: why a worker could not answer, as data the lane reads (never prose
  matched back); the sandbox's own failure kept apart from the program's.
"""

from __future__ import annotations

import builtins
import enum
import json
from typing import Any, NamedTuple

# --- messages ------------------------------------------------------------------

QUERY, RELEASE, BYE, SYNC = "q", "rel", "bye", "sync"
OK, ERR = "ok", "err"
ITEMS, CALLBACK, JUDGE_OP = "its", "cb", "jop"
# A judge stream's method the code calls (`stream.read(1)` on the proxy of a judge BytesIO):
# the attribute as a JUDGE_OP getattr reads it, then called as a CALLBACK calls a function,
# in one round trip where those were two (issue 17: btclib read its streams a byte at a time).
# What the judge answers, raises or hands back is what the two requests gave.
JUDGE_METHOD = "jm"
# A warning the code issued while it answered a request: the judge issues it under its own
# filters (pytest.warns, `-W error`), and answers OK or ERR as for a callback (issue 17).
WARN = "warn"
WARN_TEXT = 4096  # a warning's message is cut to this many characters; its names to 300
# A WARN's line number that places it at the judge's own caller, the property's line that
# made the request (with an empty module and file): the code's `stacklevel` walked out of
# the code into the worker's call of it, which in process is that line.
AT_CALLER = -1

# hypothesis seeds the judge's global PRNGs at each example's start and restores them at its end
# (`deterministic_PRNG`, `st.random_module()`): a library drawing from the worker's `random`
# must see the same, or the gate says different things on one commit (issue 17). The judge
# sends, before a request's QUERY in the same write and only when it changed, the seeds in
# force now, oldest first, each with a serial of its own (two examples both seeded 0 are two
# seedings); the worker restores what it seeded past the common prefix and seeds the rest.
SEEDS = "seeds"
SEED_DEPTH = 64  # seedings in force at once (hypothesis nests two: the example, random_module)
SEED_LIMIT = 1 << 32  # hypothesis' seeds are 0 <= seed < 2**32


def seeds_ok(seeds: Any) -> bool:
    """Pure: `seeds` is a SEEDS message's field: at most SEED_DEPTH (serial, seed) int pairs."""
    return (
        type(seeds) is tuple
        and len(seeds) <= SEED_DEPTH
        and all(
            type(pair) is tuple
            and len(pair) == 2
            and type(pair[0]) is int
            and type(pair[1]) is int
            and 0 <= pair[1] < SEED_LIMIT
            for pair in seeds
        )
    )


# The property's changes to the judge's os.environ (`monkeypatch.setenv("TZ", ...)`,
# `patch.dict(os.environ, ...)`): in process the library reads them, out of process its
# environment is the worker's own (issue 17: whenever's suite). Before a request's QUERY, in
# the same write and only when they changed, the judge sends every name whose value differs
# from the judge's environment before any test ran, with its value now (None: deleted);
# never a name unchanged since, so no value of the judge's own (PATCHJUDGE_SEED_KEY) crosses.
# The worker sets them over its own environment, and puts back its own value of a name that
# left the list (a restore: monkeypatch's undo, patch.dict's exit).
ENVIRON = "env"
ENVIRON_LIMIT = 1024  # names changed at once
ENVIRON_TEXT = 1 << 17  # characters of a name or a value (Linux: 128 KiB a string)
# Never crosses, whatever the property sets: what the worker and its box are (the interpreter's
# own settings, PYTHON*; the dynamic loader and allocator of the worker and of every process it
# starts, LD_* / GLIBC_TUNABLES / MALLOC_*; its search path, home and temporary directory, set
# for the box), the judge's own (PATCHJUDGE_*: its seed key; PYTEST_*: pytest's state, which
# pytest itself changes every test; HYPOTHESIS_*) and the worker's line measurement
# (COVERAGE_*, COV_CORE_*). A property that needs one for the library runs in process.
ENVIRON_REFUSED = ("PATH", "HOME", "TMPDIR", "GLIBC_TUNABLES")
ENVIRON_REFUSED_PREFIXES = ("PYTHON", "LD_", "MALLOC_", "PATCHJUDGE_", "PYTEST_", "HYPOTHESIS_",
                            "COVERAGE_", "COV_CORE_")  # fmt: skip


def environ_refused(name: str) -> bool:
    """Pure: the property's change to `name` never reaches the worker (ENVIRON_REFUSED)."""
    return name in ENVIRON_REFUSED or name.startswith(ENVIRON_REFUSED_PREFIXES)


def environ_ok(changes: Any) -> bool:
    """Pure: `changes` is an ENVIRON message's field: at most ENVIRON_LIMIT (name, value or
    None) pairs of names os.environ can hold, none refused, each named once."""
    return (
        type(changes) is tuple
        and len(changes) <= ENVIRON_LIMIT
        and all(
            type(pair) is tuple
            and len(pair) == 2
            and type(pair[0]) is str
            and 0 < len(pair[0]) <= ENVIRON_TEXT
            and "=" not in pair[0]
            and "\0" not in pair[0]
            and not environ_refused(pair[0])
            and (
                pair[1] is None
                or (type(pair[1]) is str and len(pair[1]) <= ENVIRON_TEXT and "\0" not in pair[1])
            )
            for pair in changes
        )
        and len({pair[0] for pair in changes}) == len(changes)
    )


# The two ends, as receivers of a message.
JUDGE, WORKER = "judge", "worker"


class Message(NamedTuple):
    """One message kind: who receives it and its fields after the kind."""

    to: frozenset[str]
    fields: tuple[str, ...]
    more: bool = False  # further fields may follow (a query's arguments)


MESSAGES: dict[str, Message] = {
    QUERY: Message(frozenset({WORKER}), ("id", "request"), more=True),
    RELEASE: Message(frozenset({WORKER}), ("released",)),
    BYE: Message(frozenset({WORKER}), ()),
    SYNC: Message(frozenset({WORKER}), ("links",)),
    SEEDS: Message(frozenset({WORKER}), ("seeds",)),
    ENVIRON: Message(frozenset({WORKER}), ("changes",)),
    OK: Message(frozenset({WORKER, JUDGE}), ("id", "result", "changed")),
    ERR: Message(frozenset({WORKER, JUDGE}), ("id", "error")),
    ITEMS: Message(frozenset({JUDGE}), ("id", "item"), more=True),
    CALLBACK: Message(frozenset({JUDGE}), ("id", "function", "args", "kwargs")),
    JUDGE_OP: Message(frozenset({JUDGE}), ("id", "object", "operation", "args")),
    JUDGE_METHOD: Message(frozenset({JUDGE}), ("id", "object", "name", "args", "kwargs")),
    WARN: Message(
        frozenset({JUDGE}), ("id", "category", "message", "module", "filename", "lineno")
    ),
}


class ProtocolError(ValueError):
    """A message the table does not declare: the end that got it stops talking."""


def received_by(end: str) -> frozenset[str]:
    """Pure: the message kinds `end` may be sent."""
    return frozenset(kind for kind, m in MESSAGES.items() if end in m.to)


def check(message: Any, end: str) -> str:
    """Pure: `message`'s kind if `end` may receive it in that shape; else ProtocolError."""
    if not (type(message) is tuple and message and type(message[0]) is str):
        raise ProtocolError(f"sent {type(message).__name__}, not a message")
    kind = message[0]
    declared = MESSAGES.get(kind)
    if declared is None or end not in declared.to:
        raise ProtocolError(f"a {kind[:40]!r} message of {len(message)} fields")
    n = len(message) - 1
    if n < len(declared.fields) or (n > len(declared.fields) and not declared.more):
        raise ProtocolError(f"a {kind!r} message of {len(message)} fields")
    if declared.fields[:1] == ("id",) and type(message[1]) is not int:
        raise ProtocolError(f"sent a {kind!r} message with no call id")
    return kind


# --- requests: what the judge asks the worker ------------------------------------

IMPORT, GETATTR, SETATTR, DELATTR = "import", "getattr", "setattr", "delattr"
CALL, OP, BATCH = "call", "op", "batch"
# `obj.name(*args, **kwargs)` in one round trip, where getattr + call were two (issue 20):
# (target, name, args, kwargs); the worker reads the attribute, then calls what it read.
# With a fifth field True (KEEP), the judge keeps what was read (pytest's assertion rewriting
# stores `a.f` in a temporary before calling it, issue 17): the OK's result is then
# (attribute, KEPT_OK, result) or (attribute, KEPT_ERR, error), the error an ERR's.
CALL_METHOD = "callmethod"
KEEP = True
# A CALL's or an unkept CALL_METHOD's last field DRAIN (issue 20): the judge read in its
# caller's bytecode that the result goes straight into the builtin `list`, `tuple` or
# `sorted`, which step it to its end before any other code runs. The OK's result is then
# (result, drained): drained True when the result is one of the worker's iterator types the
# judge never had, and then a BATCH's answer for it follows under the same call id, the
# items (ITEMS) then the end, at most BATCH_ITEMS items or BATCH_BYTES, as if the judge had
# asked one. Items for a call that did not ask, or before its OK, are a protocol error.
DRAIN = "drain"
KEPT_OK, KEPT_ERR = "ok", "err"
CONTEXT, EXECUTED, DUNDERS = "context", "executed", "dunders"
# Calls whose results the property discards, sent together (issues 17 and 20): (calls,), each
# call a CALL's or a CALL_METHOD's fields after a kind, (CALL, target, args, kwargs) or
# (CALL_METHOD, target, name, args, kwargs), or a counted loop's store (OP, "setitem",
# target, (key, value)) (standin.Worker.keep_store). The worker runs them in order and stops
# at the first that raises: the reply is that call's ERR, or an OK with None once every call
# returned.
SEQ = "seq"
# A counted loop's reads of one handle (`assert hd[i] == i`, loops.CountedRead): (target,
# keys), keys a range of at most BATCH_ITEMS ints or a tuple of at most BATCH_ITEMS keys (a
# loop over a held list: its coming items, loops.held_keys). Answered as a counted BATCH
# is, the items `target[key]` in order: ITEMS, then the end, the ERR of the first read that
# raised, and "ok" after the first item that is not `plain` data.
GETITEMS = "getitems"
# Nested calls, `f(g(x))`, in one round trip where they were two (issue 17): (calls,), the
# first call a CALL's fields (target, args, kwargs), each later one (target,), called with
# the previous call's result alone (the worker's own object, as in process). A first call
# that raised is an ERR, as a CALL's; else an OK whose result is (results, error): the
# results up to a later call that raised and what it raised (an ERR's error), or None: then
# every call's result, or those up to NEST_BYTES of them (the judge makes the later calls
# alone). The judge raises the error at that call, which it then makes.
NEST = "nest"
NEST_DEPTH = 8
NEST_BYTES = 4 << 20
REQUESTS = frozenset(
    {IMPORT, GETATTR, SETATTR, DELATTR, CALL, CALL_METHOD, OP, BATCH, SEQ, NEST, CONTEXT,
     EXECUTED, DUNDERS, GETITEMS}
)  # fmt: skip


def nest_ok(calls: Any) -> bool:
    """Pure: `calls` is a NEST request's field: 2 to NEST_DEPTH calls, the first with a tuple
    of arguments and a dict of keywords, each later one a target alone."""
    return (
        type(calls) is tuple
        and 2 <= len(calls) <= NEST_DEPTH
        and type(calls[0]) is tuple
        and len(calls[0]) == 3
        and type(calls[0][1]) is tuple
        and type(calls[0][2]) is dict
        and all(type(c) is tuple and len(c) == 1 for c in calls[1:])
    )


def nest_answered(calls: int, answer: Any) -> bool:
    """Pure: `answer` is a NEST of `calls` calls' OK result: (results, error), at least the
    first result, and None or an error for the call after the last."""
    if not (type(answer) is tuple and len(answer) == 2 and type(answer[0]) is tuple):
        return False
    results, error = answer
    if error is None:
        return 1 <= len(results) <= calls
    return type(error) is tuple and 1 <= len(results) < calls


_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
               "and_", "or_", "xor", "matmul")  # fmt: skip
ARITHMETIC = _ARITHMETIC  # operator's names: and_, or_
# The OP request's operators, by the names the worker's table (worker.OPS) knows.
OPERATORS = frozenset(
    {
        *_ARITHMETIC,
        *("i" + n.rstrip("_") for n in _ARITHMETIC),
        *("r" + n.rstrip("_") for n in _ARITHMETIC),
        *("eq", "ne", "lt", "le", "gt", "ge", "getitem", "delitem", "contains", "setitem"),
        *("divmod", "rdivmod", "len", "iter", "next", "reversed", "repr", "str", "hash"),
        *("bool", "neg", "pos", "abs", "invert", "int", "float", "index", "complex", "round"),
        *("format", "dir", "instancecheck", "subclasscheck", "callable", "enter", "exit"),
        *("bytes", "typename", "signature", "copy", "deepcopy", "fspath"),
        # A library tzinfo's methods, asked by its judge-side view (issue 17).
        *("utcoffset", "dst", "tzname", "fromutc"),
        *("pickle", "unpickle"),  # a handle's pickle is the worker's bytes (issue 17)
    }
)
# The operators a property's comparisons use (issue 18): where one of the code's own classes
# defines it, the outcome was decided by the code; both ends record them. Arithmetic with a
# judge operand decides as much as `==` does (redteam9: `abs(got - expected) < tol`, a `__sub__`
# that returns 0), and so does a metaclass's `isinstance`/`issubclass` answer; the unary
# conversions (`int`, `float`, `str`...) are given no judge value to agree with and are not
# recorded.
DUNDER_OPS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "bool", "len", "contains", "hash", "iter",
     *_ARITHMETIC,
     *("i" + n.rstrip("_") for n in _ARITHMETIC),
     *("r" + n.rstrip("_") for n in _ARITHMETIC),
     "divmod", "rdivmod", "instancecheck", "subclasscheck"}
)  # fmt: skip

# The class the judge records for an operation a view answered itself (redteam10): a view
# of a subclass of a data type (`class Total(int)`) meets the property's `+`, `==`, `len`...
# with its base type's method on the judge's data, never the code's override, which is what
# a user's interpreter calls. No class is claimed: every dunder of that name the patch
# defines holds the test, as for a handle's operation.
VIEW_CLAIM = "<view>"


def dunder_name(op: str) -> str:
    """Pure: the method an operator of the protocol asks first (`and_` -> `__and__`)."""
    return f"__{op.rstrip('_')}__"


# A fetch-ahead batch (issue 20): at most this many items, or the item that passes this many
# bytes. A BATCH request is (iterator, limit, plain): at most `limit` items; with `plain`
# True (a counted loop's, standin/loops.py) the worker ends the batch after the first item
# that is not `plain` data, and the judge refuses an item after one.
BATCH_ITEMS = 256
BATCH_BYTES = 4 << 20
# A batch's items cross in ITEMS messages, several items each, in the order `next` gave them
# (issue 20: one message an item was 21,744 of more-itertools' 27,524). The worker sends the
# items it holds before any other message (a callback, a warning, the batch's end) and once
# BATCH_FLUSH_S has passed since it last wrote, so the judge hears from it within its per-call
# deadline whenever each step takes less: the judge waits that deadline and BATCH_FLUSH_S
# for a batch's next message, and a step that hangs is killed as one `next` alone was.
BATCH_FLUSH_S = 0.05
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes})


def plain(value: Any, depth: int = 0) -> bool:
    """Pure: data that reads the same on both ends and runs no code when compared:
    the builtin scalars and tuples of them (the same test at both ends)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    return kind is tuple and depth < 4 and all(plain(v, depth + 1) for v in value)


# --- links: containers the code keeps (issue 17, session 11) -------------------------

# A call's plain list, dict, set or bytearray argument crosses as data: the worker decodes a
# copy. When the call leaves the copy referenced (the code kept it: an attribute, a closure,
# a generator's frame; the worker sees its reference count grow), the two are *linked*: an
# OK's `changed` then names the argument (key, value, link) instead of (key, value), and
# from then on each side sends the other the container's new state when it changed:
# the judge in a SYNC before its next request's QUERY (the same write), (link, data), or
# (link, None) when it no longer holds the container; the worker in each OK's `changed`,
# (None, link, data), or (None, link, None) when the code let its copy go. Each side merges
# what comes into its own container in place (wire.merge). The judge links its own plain
# containers only, at most LINKS per worker and LINK_BYTES of encoded data each: the
# worker's word that it keeps something can only make the judge send data it could send.
LINKS = 256
LINK_BYTES = 1 << 20

# --- judge objects: what the worker may ask of the judge ---------------------------

# The protocol operations a duck-typed library uses, and only those (issue 17): no
# dunder, private or module attribute, so the worker cannot walk from a judge object
# to `__class__`, `__globals__` or `__subclasses__`. Every result crosses again.
# `index`: an int-like the property hands the library, read with operator.index as
# CPython's argument parser reads it (whenever's `round(increment=Idx())`, held-out round 12).
JUDGE_CAPABILITIES = ("call", "iter", "next", "len", "getitem", "contains", "eq", "ne",
                      "lt", "le", "gt", "ge", "hash", "bool", "index")  # fmt: skip


# What a JUDGE_OP may name ("call" is a CALLBACK): a public attribute it has itself too.
# Or, to read, a protocol hook spelled `_name_` that a class of the judge's files defines
# (mpmath's `mpf(x)` asks `x._mpf_` and calls `x._mpmath_(prec, rounding)`, issue 17):
# never a dunder, never a private `_name`.
def sunder(name: object) -> bool:
    """Pure: `name` is a `_name_` hook: one underscore each side, an identifier."""
    return (
        type(name) is str
        and len(name) > 2
        and name.isidentifier()
        and name[0] == name[-1] == "_"
        and name[1] != "_"
        and name[-2] != "_"
    )


JUDGE_OPERATIONS = frozenset({*JUDGE_CAPABILITIES, "str", "repr", "getattr", "setattr"} - {"call"})
# A judge object that is one of the stdlib's stream types (standin.STREAM_METHODS) says which
# io ABC its proxy is registered with, among its capabilities, so the code's
# `isinstance(src, io.IOBase)` ("a path or a file?": srt's parse, issue 17) holds for it as
# in process. The name only: the proxy still offers the stream methods and nothing else.
# An exact `io.BytesIO` or `io.StringIO` names its class instead: its proxy is a subclass of
# that class, so `isinstance(stream, BytesIO)` ("a stream or octets?": btclib's
# `bytesio_from_binarydata`, held-out round 9) holds too; every public name of the class is
# the judge's stream method or absent, so nothing reads the proxy's own (empty) buffer.
JUDGE_STREAMS = ("TextIOBase", "BufferedIOBase", "BytesIO", "StringIO")
# The stream methods the worker may ask of such a stream (standin.judge_attribute).
STREAM_METHODS = ("read", "read1", "readline", "readlines", "readinto", "write", "writelines",
                  "flush", "readable", "writable", "seekable", "tell", "seek", "getvalue",
                  "closed", "close")  # fmt: skip
# A judge object that is a `datetime.tzinfo` (a property's `class MyTz(tzinfo)`, a ZoneInfo
# read from a file) says so among its capabilities: its proxy subclasses the stdlib tzinfo,
# so the worker's C datetime takes it (`datetime(..., tzinfo=tz)`, whenever's
# `Instant(py_dt)`) and asks the judge its TZINFO_METHODS, nothing else (held-out round 14).
# A datetime holding one crosses as data with the proxy's reference in its tzinfo slot.
# A `zoneinfo.ZoneInfo` (one read from a file, or a property's subclass with methods of its
# own) says "ZoneInfo" instead: its proxy subclasses ZoneInfo (whenever's `isinstance(tz,
# ZoneInfo)`, then `tz.key`), its rules an empty file's, never read: its TZINFO_METHODS and
# ZONEINFO_ATTRIBUTES are the judge's.
JUDGE_TZINFO, JUDGE_ZONEINFO = "tzinfo", "ZoneInfo"
TZINFO_METHODS = ("utcoffset", "dst", "tzname", "fromutc")
ZONEINFO_ATTRIBUTES = ("key",)

# --- references (wire.Ref.kind) ---------------------------------------------------

HANDLE = 1  # an object of the worker's, in its table
JUDGE_FN = 2  # a function of the judge's: the worker may only call it
JUDGE_OBJ = 3  # another object of the judge's: JUDGE_OPERATIONS only
ARGUMENT = 4  # "argument N of the call in flight", returned as itself
BUILTIN = 5  # a builtin by name (`int`, `ValueError`): each side's own
# The builtin functions a BUILTIN reference may name (`key=len`, `map(abs, xs)`): pure ones,
# which only compute on their arguments. Any other (`eval`, `exec`, `compile`, `open`,
# `getattr`, `vars`, `breakpoint`, ...) the judge resolved to its own would run outside the
# box with what the code chose (`load = eval`, then `load(dump(x))` in a property): one of
# the worker's crosses as a handle, called in the worker. Builtin types all cross.
PURE_BUILTINS = frozenset(
    {"abs", "aiter", "all", "anext", "any", "ascii", "bin", "callable", "chr", "divmod",
     "format", "hash", "hex", "id", "isinstance", "issubclass", "iter", "len", "max", "min",
     "next", "oct", "ord", "pow", "repr", "round", "sorted", "sum"}
)  # fmt: skip
# A part of the judge's own data, named where it lies (issue 17, dpath's `api.get(node, k) is
# v`): meta (("a", argument key) or ("l", link), path of list indexes and dict keys), data the
# value itself. The judge puts its own object there when what lies at that path is the same
# data (wire.same), else the data: the worker's word can only choose between equal values.
PART = 6
PART_ARGUMENT, PART_LINK = "a", "l"
REF_KINDS = frozenset({HANDLE, JUDGE_FN, JUDGE_OBJ, ARGUMENT, BUILTIN, PART})


def builtin_name(obj: Any) -> str | None:
    """The name under which `builtins` holds `obj` itself (a type or a pure function), or None.

    The one test both ends apply before a BUILTIN reference is sent or resolved.
    """
    name = getattr(obj, "__name__", None) if isinstance(obj, type | type(len)) else None
    if type(name) is str and not name.startswith("_") and getattr(builtins, name, None) is obj:
        return name if isinstance(obj, type) or name in PURE_BUILTINS else None
    return None


# A handle's meta (what the judge needs to stand in for it): ("exc", bases graph),
# ("module", name, is a package), ("iter", type name), ("enum", str(member)), ("tzinfo",):
# its real type subclasses the stdlib tzinfo, so the judge's C datetime takes its view;
# ("pattern", its pattern): pytest names a compiled pattern's parametrize id by it;
# ("class", metaclass name): a class, whose metaclass is or derives from one of METACLASSES,
# so the judge's `isinstance(h, type)` (inspect.isclass, pytest, hypothesis's
# `sampled_from(AnEnum)`) holds for it as in process.
META_EXCEPTION, META_MODULE, META_ITERATOR, META_ENUM = "exc", "module", "iter", "enum"
# An enum member's meta carries str(member) up to this many characters: its parametrize id
# and, for a member with a data value, its view's str() (longer, the view asks the worker).
MAX_ENUM_TEXT = 200
META_TZINFO, META_PATTERN, META_CLASS = "tzinfo", "pattern", "class"
# ("held",) on a view of a plain list, dict or set an attribute read gave (GETATTR): the
# object's own container, so `frame.flags.add("END_HEADERS")` changes the frame's (issue 17).
META_HELD = "held"
# ("own", names, meta) on a view of a subclass of a data type (viewmethods): the names its
# class defines over its base's that a view sends to the code's object instead of answering
# from its copy (a `class Name(str)` whose `strip` lies, a Counter's `update` and `|`), and
# the handle's meta otherwise (None or a shape). Names only, never their code.
META_OWN = "own"
MAX_OWN_NAMES = 256
# The dunders a view sends to the code's object where its class defines them: what a user's
# interpreter calls for str(), format(), repr() and arithmetic. Not the comparisons, hash,
# bool, len, iteration or indexing: the data answers those, so the code's `__eq__` never
# decides a property (issue 18); redteam10's VIEW_CLAIM records them.
VIEW_ROUTED_DUNDERS = frozenset(
    {"__str__", "__format__", "__repr__", "__neg__", "__pos__", "__abs__", "__invert__",
     *(f"__{p}{n.rstrip('_')}__" for n in _ARITHMETIC for p in ("", "r", "i"))}
)  # fmt: skip
# ("sequence",), ("mapping",): the object's real type has Py_TPFLAGS_SEQUENCE or _MAPPING (a
# collections.abc.Sequence or Mapping by inheritance or registration), which is all a `match`
# statement's sequence or mapping pattern reads of a subject's type: the judge's handle for
# it is of a class with the same flag (issue 17).
META_SEQUENCE, META_MAPPING = "sequence", "mapping"
# ("sequence", "call"), ("mapping", "call"): the same, of an object whose type is callable;
# without it the judge's handle has no `__call__`, so `callable(h)` is False as in process
# (pytest takes a callable `ids=` for an id function: btclib's mapping of parameters).
META_CALLABLE = "call"
# The metaclasses a class handle may claim, most derived first: each side's own by name.
METACLASSES = ("enum.EnumType", "abc.ABCMeta", "builtins.type")

# An ERR's error: ("builtin", name, args), ("foreign", class, instance, text),
# ("judge", token) for what a judge function raised, ("uncrossable", text). A builtin or
# foreign error raised `from` an Exception of the code's ends with that cause, described
# the same way, to MAX_CAUSES errors in all (btclib's `exc_info.value.__cause__`).
ERROR_BUILTIN, ERROR_FOREIGN, ERROR_JUDGE, ERROR_UNCROSSABLE = (
    "builtin", "foreign", "judge", "uncrossable",
)  # fmt: skip
MAX_CAUSES = 8
# An error's text is cut to this many characters: a library may name what it was given in it
# (whenever's TimeZoneNotFoundError for a 9,999-character ID, `match="not found"` reading the
# end); MAX_CAUSES of them stay far under wire.MAX_FRAME.
ERROR_TEXT = 1 << 16

# --- the environment ---------------------------------------------------------------

ORACLE_ENV = "PATCHJUDGE_ORACLE"  # the WorkerSpec, read (and removed) by the judge's pytest
# What of the judge's environment a worker keeps; HOME, TMPDIR, PYTHONDONTWRITEBYTECODE and
# PYTHONHASHSEED are set for it.
WORKER_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "TERM", "USER",
                     "LOGNAME")  # fmt: skip

# The judge's end of the launcher's socket (launcher.py), by number, when the judge's pytest
# runs in a box of its own: the lane starts the workers' boxes, outside the judge's.
LAUNCHER_ENV = "PATCHJUDGE_LAUNCHER"
# What of a worker's environment the judge's request to the launcher may set.
LAUNCHER_ASKED = ("HOME", "TMPDIR", "PYTHONHASHSEED")

# --- the worker spec ---------------------------------------------------------------

DEFAULT_CALL_TIMEOUT_S = 10.0
SHAPES = ("stdin", "script")


class BoxSpec(NamedTuple):
    """The sandbox a worker starts in (sandbox.Box's paths), as data."""

    tree: str
    home: str
    readonly: tuple[str, ...] = ()
    # sandbox.Box.data as two columns: each data_from[i] bound read-only at data_at[i].
    data_from: tuple[str, ...] = ()
    data_at: tuple[str, ...] = ()


class WorkerSpec(NamedTuple):
    """How to start a worker, as the gate writes it into $PATCHJUDGE_ORACLE."""

    python: str
    tree: str
    home: str
    names: tuple[str, ...]  # top-level modules the tested tree provides: these are stand-ins
    pythonpath: tuple[str, ...] = ()
    coverage: tuple[str, ...] = ()
    box: BoxSpec | None = None
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    # How the worker starts (issue 18, the differential run): "stdin", a `-c` boot reading
    # its program from stdin; "script", the loader as a file by path, its loop in a thread.
    shape: str = "stdin"
    # The worker's PYTHONHASHSEED (seed.hash_seed): the lane sets the run's; "0", the
    # judge's own, only where a test starts a worker by hand (issue 18: 0 is a tell).
    hash_seed: str = "0"
    # The tree is the merge base's, in the code's venv: the venv's build of the project is
    # the head's, which the worker must not import (worker.hide_own_build, session 14).
    base: bool = False
    # The judge's files (relative to its tree) the worker's box holds at their path
    # (`[properties] data`, issue 17): a property's environment value naming one crosses.
    data: tuple[str, ...] = ()


class SpecError(ValueError):
    """A worker spec that is not the declared record."""


def encode_spec(spec: WorkerSpec) -> str:
    """Pure: the spec as the JSON text $PATCHJUDGE_ORACLE holds."""
    doc = spec._asdict()
    doc["box"] = None if spec.box is None else spec.box._asdict()
    return json.dumps(doc)


def decode_spec(text: str) -> WorkerSpec:
    """Pure: the spec from its JSON text; an unknown or missing key is a SpecError."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise SpecError(f"{ORACLE_ENV} is not JSON: {exc}") from None
    fields = _record(doc, WorkerSpec, "the worker spec")
    box = fields.get("box")
    if box is not None:
        fields["box"] = BoxSpec(**_record(box, BoxSpec, "the worker spec's box"))
        if len(fields["box"].data_from) != len(fields["box"].data_at):
            raise SpecError("the worker spec's box has data_from and data_at of other lengths")
    timeout = fields.get("call_timeout_s", DEFAULT_CALL_TIMEOUT_S)
    if type(timeout) not in (int, float) or timeout < 0:
        raise SpecError(f"the worker spec's call_timeout_s is {timeout!r}, not a number of seconds")
    fields["call_timeout_s"] = float(timeout)
    if fields.get("shape", "stdin") not in SHAPES:
        raise SpecError(f"the worker spec's shape is {fields['shape']!r}, not one of {SHAPES}")
    return WorkerSpec(**fields)


def _record(doc: Any, record: Any, what: str) -> dict[str, Any]:
    """`doc`'s fields for the NamedTuple `record`: str and lists of str as declared."""
    if type(doc) is not dict:
        raise SpecError(f"{what} is {type(doc).__name__}, not an object")
    known = record._fields
    unknown = sorted(set(doc) - set(known))
    if unknown:
        raise SpecError(f"{what} has unknown keys {unknown}: expected some of {list(known)}")
    missing = [k for k in known if k not in doc and k not in record._field_defaults]
    if missing:
        raise SpecError(f"{what} lacks {missing}")
    fields: dict[str, Any] = {}
    for key, value in doc.items():
        default = record._field_defaults.get(key, "")
        if type(default) is tuple or key == "names":
            if type(value) is not list or not all(type(v) is str for v in value):
                raise SpecError(f"{what}'s {key} is not a list of strings")
            fields[key] = tuple(value)
            continue
        if type(default) is bool and type(value) is not bool:
            raise SpecError(f"{what}'s {key} is {type(value).__name__}, not true or false")
        if type(default) is str and type(value) is not str:
            raise SpecError(f"{what}'s {key} is {type(value).__name__}, not a string")
        fields[key] = value
    return fields


# --- why a worker could not answer ---------------------------------------------------


class Cause(enum.Enum):
    """Why a worker could not answer (isolate's meta: the box's `XX` apart from `TO`/`RE`).

    Carried as data from the judge's pytest to the lane (the "worker_failure"
    event); failure.worker_text renders it.
    """

    SANDBOX = "sandbox"  # the box did not start the worker: the judge's machine, not the code
    CRASHED = "crashed"  # the worker exited (the code's exit, signal or crash)
    TIMEOUT = "timeout"  # no answer within the per-call deadline
    GONE = "gone"  # its pipe was closed under the judge's write
    MALFORMED = "malformed"  # sent what wire.py refuses
    PROTOCOL = "protocol"  # sent a message the protocol does not allow there
    UNCROSSABLE = "uncrossable"  # returned a value that cannot cross
    INTERRUPT = "interrupt"  # the code raised an interrupt (SystemExit, KeyboardInterrupt)
    VERDICT = "verdict"  # swallowed what a judge function raised (its verdict)
    HANDLE_TO_JUDGE = "handle_to_judge"  # passed an object of its own to a judge function


class Incident(NamedTuple):
    """One reason a worker could not answer, as data (the "worker_failure" event's fields)."""

    cause: Cause
    worker: str  # the worker's label: the property module it was running for
    detail: str  # the cause's particulars: an exit status, what the protocol refused


# --- the mutant schema, compiled by its worker (issue 20; red team, session 17) -------------

# One mutant's site as the judge hands it to the worker (the start's stdin, never a file):
# "stmt" or "expr", the edited node's ast class name ("" for any), its (lineno, col_offset,
# end_lineno, end_col_offset), the replacement's source ("" for the node's own code: a null
# mutant that is a copy) and the token that turns it on. Plain tuples: marshal takes no
# NamedTuple.
Site = tuple[str, str, tuple[int, int, int, int], str, str]
# A changed file's schema: its path in the tree, its text at head, the switch's name, its sites.
Schema = tuple[str, str, str, tuple[Site, ...]]


class SiteError(ValueError):
    """A site names no single node of the text, or its replacement does not parse."""


def schema_tree(schema: Schema) -> Any:
    """Pure: the text's ast with each site behind `switch == token`, every other node where it was.

    The module reads the switch from builtins once, after its docstring and
    future imports (the judge sets it in the worker before any import): unset,
    every site runs the original. Every worker of a run compiles the same
    schema, so the code's bytecode tells no mutant apart; the file on disk is
    the original. New nodes take their site's position: a code object's lines,
    a traceback's and what `inspect.getsource` shows name the file's own lines.
    Sites nested in others go first; sites on one node stack.
    """
    import ast  # here: the worker's program imports nothing more at its start
    import copy

    _, text, switch, sites = schema
    tree: Any = compile(text, "<schema>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    groups: dict[tuple[str, tuple[int, ...]], list[Site]] = {}
    for site in sites:
        groups.setdefault((site[0], tuple(site[2])), []).append(site)

    def size(key: tuple[str, tuple[int, ...]]) -> tuple[int, int]:
        at = key[1]
        return at[2] - at[0], at[3] - at[1]

    def located(node: Any, at: tuple[int, ...]) -> Any:
        for part in ast.walk(node):
            if isinstance(part, (ast.stmt, ast.expr)):
                for attribute, value in zip(_POSITION, at, strict=True):
                    setattr(part, attribute, value)
        return node

    for (kind, at), group in sorted(groups.items(), key=lambda kv: size(kv[0])):
        names = {site[1] for site in group}
        parent, field, index, node = _find(tree, kind, names.pop() if len(names) == 1 else "", at)
        new: Any = [node] if kind == "stmt" else node
        for _, _, _, replacement, token in group:
            test = located(
                ast.Compare(ast.Name(switch, ast.Load()), [ast.Eq()], [ast.Constant(token)]), at
            )
            if not replacement:
                branch: Any = copy.deepcopy(node)
            else:
                try:
                    parsed = ast.parse(replacement, mode="exec" if kind == "stmt" else "eval")
                except SyntaxError as exc:
                    raise SiteError(f"the replacement does not parse: {exc}") from None
                branch = located(parsed, at).body
            # Only the new node itself is placed: the original's nodes under it keep theirs.
            new = (
                [ast.If(test, branch if type(branch) is list else [branch], new)]
                if kind == "stmt"
                else ast.IfExp(test, branch, new)
            )
            for attribute, value in zip(_POSITION, at, strict=True):
                setattr(new[0] if kind == "stmt" else new, attribute, value)
        if index < 0:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[index : index + 1] = new if kind == "stmt" else [new]
    body = tree.body
    first = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        first = 1
    while (
        first < len(body)
        and isinstance(body[first], ast.ImportFrom)
        and body[first].module == "__future__"
    ):
        first += 1
    header = ast.parse(f"{switch} = getattr(__import__('builtins'), {switch!r}, None)").body
    line = body[first].lineno if first < len(body) else 1
    body[first:first] = [located(h, (line, 0, line, 0)) for h in header]
    return tree


def _find(tree: Any, kind: str, name: str, at: tuple[int, ...]) -> tuple[Any, str, int, Any]:
    """The one node of `kind` (and class `name`) at `at`: its parent, field, index (-1: not
    in a list) and itself. Only the nodes whose lines hold the site are walked."""
    import ast

    want = ast.stmt if kind == "stmt" else ast.expr
    first, last = at[0], at[2]
    found: list[tuple[Any, str, int, Any]] = []

    def walk(parent: Any) -> None:
        for field, value in ast.iter_fields(parent):
            children = value if type(value) is list else [value]
            for i, child in enumerate(children):
                if not isinstance(child, ast.AST):
                    continue
                where = tuple(getattr(child, a, None) for a in _POSITION)
                # A def's or class's lines begin at its decorators, which it holds.
                lines = [where[0], *(d.lineno for d in getattr(child, "decorator_list", ()))]
                if where[0] is not None and not (
                    min(lines) <= first and (where[2] or where[0]) >= last
                ):
                    continue  # a positioned node that does not hold the site's lines
                if (
                    isinstance(child, want)
                    and where == tuple(at)
                    and (not name or type(child).__name__ == name)
                ):
                    found.append((parent, field, i if type(value) is list else -1, child))
                walk(child)

    walk(tree)
    if len(found) != 1:
        raise SiteError(f"the site names {len(found)} nodes of the text, not one")
    return found[0]


_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
