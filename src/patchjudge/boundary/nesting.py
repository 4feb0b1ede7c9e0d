"""Nested calls: where `f(g(x))` may be asked of the worker in one round trip (issue 17).

Pure reading of the judge's own bytecode (CPython 3.11). A call of a handle
is *nested* when the judge runs nothing between its return and a call of
another handle with its result as the only argument, so the worker may make
both calls at once (protocol.NEST) and the judge's second call only takes the
answer. Two shapes, and chains of either:

    f(g(x))                          # plain: f is loaded before g is called
    @py_assert1 = g(x)               # pytest's rewrite of `assert f(g(x)) == y`:
    @py_assert3 = f(@py_assert1)     # the temporary is stored, f loaded, it called

Between the two calls there are only loads and a store to one of pytest's
temporaries (a name no source can write). The inner call's arguments are
loads of locals, constants and globals; an operator among them (`g(i * k)`)
only on locals and constants, whose values the stand-in checks are builtin
scalars (nothing of the judge's runs). What the names hold at run time (the
callees are this worker's handles, the inner one the handle called) is
checked by `outers`; this module only says what the code could do.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass
from typing import Any

# How the bytecode loads a name: ("fast" | "deref" | "global", name).
Load = tuple[str, str]

DEPTH = 8  # calls in one chain at most (protocol.NEST_DEPTH)
_REWRITE_TEMPORARY = "@py_assert"  # pytest's assertion rewriting's temporaries
_ARGUMENT_LOADS = {"LOAD_FAST": "fast", "LOAD_DEREF": "deref", "LOAD_GLOBAL": "global"}
# What an operator among the inner call's arguments may be applied to: these, checked.
_SCALARS = frozenset({int, float, complex, bool, str, bytes})
_MISSING = object()


@dataclass(frozen=True)
class Nest:
    """One inner call site and the calls its result goes to, innermost first."""

    inner: Load  # how the inner callee is loaded (checked to be the handle called)
    outers: tuple[Load, ...]  # each outer callee's load
    # The outer callees are loaded after the inner call (pytest's rewrite): a global or a
    # cell could be rebound by the judge's Python run during the inner call (a callback).
    late: bool
    scalars: tuple[str, ...]  # locals an operator in the arguments reads: builtin scalars


def nested_calls(code: types.CodeType) -> dict[int, Nest]:
    """Pure: the offsets of the CALLs in `code` whose result goes straight to another call."""
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    found: dict[int, Nest] = {}
    for n, call in enumerate(ins):
        if call.opname != "CALL":
            continue
        start = _callee_start(ins, n)
        if start is None:
            continue
        inner, first, scalars = start
        outers, late = _chain(ins, n, first)
        if outers:
            found[call.offset] = Nest(inner, outers, late, scalars)
    return found


_cache: dict[types.CodeType, dict[int, Nest]] = {}


def cached(code: types.CodeType) -> dict[int, Nest]:
    found = _cache.get(code)
    if found is None:
        found = _cache[code] = nested_calls(code)
    return found


def _callee_load(ins: list[dis.Instruction], end: int) -> tuple[Load, int] | None:
    """The callee load that ends at `end` (NULL + global, or PUSH_NULL and a local) and the
    index it starts at."""
    if end < 0:
        return None
    last = ins[end]
    if last.opname == "LOAD_GLOBAL" and last.arg is not None and last.arg & 1:
        return ("global", str(last.argval)), end
    if (
        last.opname in ("LOAD_FAST", "LOAD_DEREF")
        and end >= 1
        and ins[end - 1].opname == "PUSH_NULL"
    ):
        return (_ARGUMENT_LOADS[last.opname], str(last.argval)), end - 1
    return None


def _callee_start(ins: list[dis.Instruction], n: int) -> tuple[Load, int, tuple[str, ...]] | None:
    """The CALL at `n`, positional arguments only, made of loads (and operators on locals
    and constants): its callee's load, the index that load starts at, the operator's locals."""
    argc = ins[n].arg or 0
    if n < 1 or ins[n - 1].opname != "PRECALL" or ins[n - 1].arg != argc:
        return None
    need, j, operator = argc, n - 2, False
    loads: list[dis.Instruction] = []
    while need > 0 and j >= 0:
        op = ins[j]
        if op.opname == "LOAD_CONST":
            need -= 1
        elif op.opname in _ARGUMENT_LOADS and not (
            op.opname == "LOAD_GLOBAL" and op.arg and op.arg & 1
        ):
            need -= 1
            loads.append(op)
        elif op.opname == "BINARY_OP":
            need += 1
            operator = True
        else:
            return None
        j -= 1
    if need:
        return None
    if operator and any(op.opname != "LOAD_FAST" for op in loads):
        return None
    callee = _callee_load(ins, j)
    if callee is None:
        return None
    scalars = tuple(sorted({str(op.argval) for op in loads})) if operator else ()
    return callee[0], callee[1], scalars


def _chain(ins: list[dis.Instruction], n: int, first: int) -> tuple[tuple[Load, ...], bool]:
    """The calls the result of the CALL at `n` (callee loaded from `first`) goes to."""
    outers: list[Load] = []
    late = False
    while len(outers) < DEPTH - 1:
        plain = _plain_outer(ins, n, first)
        if plain is not None and not late:
            load, first = plain
            outers.append(load)
            n += 2
            continue
        rewritten = _rewritten_outer(ins, n)
        if rewritten is not None and (late or not outers):
            load, n = rewritten
            outers.append(load)
            late = True
            continue
        break
    return tuple(outers), late


def _plain_outer(ins: list[dis.Instruction], n: int, first: int) -> tuple[Load, int] | None:
    """`f(g(...))`: PRECALL 1 / CALL 1 next, f's load just before g's."""
    if n + 2 >= len(ins) or not _call_of_one(ins, n + 1):
        return None
    return _callee_load(ins, first - 1)


def _rewritten_outer(ins: list[dis.Instruction], n: int) -> tuple[Load, int] | None:
    """`@py_assertN = g(...)`, then f loaded and called with `@py_assertN` alone."""
    store = ins[n + 1] if n + 1 < len(ins) else None
    if store is None or store.opname != "STORE_FAST":
        return None
    temporary = str(store.argval)
    if not temporary.startswith(_REWRITE_TEMPORARY):
        return None
    for width in (1, 2):  # NULL + global, or PUSH_NULL then a local
        end = n + 1 + width
        callee = _callee_load(ins, end) if end + 3 < len(ins) else None
        if callee is None or callee[1] != n + 2:
            continue
        load, argument = callee[0], ins[end + 1]
        if load[1] == temporary or argument.opname != "LOAD_FAST" or argument.argval != temporary:
            return None
        if not _call_of_one(ins, end + 2):
            return None
        return load, end + 3
    return None


def _call_of_one(ins: list[dis.Instruction], at: int) -> bool:
    return (
        at + 1 < len(ins)
        and ins[at].opname == "PRECALL"
        and ins[at].arg == 1
        and ins[at + 1].opname == "CALL"
        and ins[at + 1].arg == 1
    )


def resolve(frame: types.FrameType, values: dict[str, Any], load: Load) -> Any:
    """What `load` reads in `frame` now (`values`: its f_locals)."""
    kind, name = load
    if kind != "global":
        return values.get(name, _MISSING)
    found = frame.f_globals.get(name, _MISSING)
    return frame.f_builtins.get(name, _MISSING) if found is _MISSING else found


def scalars_only(values: dict[str, Any], names: tuple[str, ...]) -> bool:
    """The locals an operator read are builtin scalars: it ran none of the judge's code."""
    return all(type(values.get(name, _MISSING)) in _SCALARS for name in names)
