"""Counted loops: where a property's `next(it)`, `h[i]` and `h[k] = v` may go in batches (issue 20).

Pure reading of the judge's own bytecode (CPython 3.11). A loop is *counted*
when how many `next(it)` calls it will make is known before it makes them,
and nothing it does between two of them can observe the code under test:

    [next(tree) for _ in range(n)]              # a comprehension over a range
    for i in range(period * 20):                # a range of the frame's ints
        assert next(p) == next(pattern), i

The body may load and store the frame's locals, call the builtin `next`,
compare, append to the comprehension's list and, in a branch of its own, raise
(an assert). It may not call anything else, store anywhere but in a plain
local, break, return, yield or loop again. Whatever the values it reads are
(data, a judge-side iterator, this handle) is checked at run time by the
stand-in (standin.Worker.counted), which also knows the frame; this module
only says what the code could do.

The same loops over a range may read a handle at the loop's index instead
(`assert hd[i] == i`, `v = hd[i]`: CountedRead, fetched as one GETITEMS of the
coming keys), when that is the body's one operation on anything but data; so
may a loop over a worker's list the property read (`for i in hd._keys: assert
hd[i] == f"v{i}"`, CountedRead.over: the keys are the coming items of the
judge's copy, which only the loop's iterator holds). A
loop whose body is one store to a subscript, `hd[i] = i` or `hd[f"k{i}"] = i * 2`
(CountedStore), computed from ints and constants by operations that cannot
raise on them, keeps its stores and sends them as one SEQ (standin.keep_store).
"""

from __future__ import annotations

import dis
import functools
import itertools
import operator
import sys
import types
from dataclasses import dataclass
from typing import Any

from patchjudge.boundary.nesting import resolve

# A name the body steps with next(): how the bytecode loads it, and the name.
Load = tuple[str, str]  # ("fast" | "deref" | "global", name)

_LOADS = {"LOAD_FAST": "fast", "LOAD_DEREF": "deref", "LOAD_GLOBAL": "global"}
# What the body may do between two `next` calls on its way back to the loop's head,
# none of which runs Python code on the data the stand-in lets through (standin: inert).
_QUIET = frozenset(
    {"NOP", "LOAD_CONST", "POP_TOP", "COPY", "SWAP", "LIST_APPEND", "SET_ADD", "UNARY_NOT",
     "IS_OP", "BUILD_TUPLE"}
)  # fmt: skip
# The same, but an operation on data that can raise (1 / 0, "a" < 1, 1 in "a", xs[9]): the
# loop can then end before its count, as a failed assert does.
_RAISING = frozenset(
    {"BINARY_OP", "BINARY_SUBSCR", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_INVERT"}
)
# An f-string's parts: str(), repr() or ascii() of data and joining strs run no Python code
# and cannot raise; a format spec can (`f"{i:q}"`).
_FORMAT_SPEC = 4
_FORWARD_IFS = frozenset(
    {"POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
     "POP_JUMP_FORWARD_IF_NOT_NONE"}
)  # fmt: skip
# What a range's arguments may be computed from: the frame's ints, constants, arithmetic
# and len() (standin evaluates it; each value is checked there).
_BINOPS = frozenset({"+", "-", "*", "//"})
_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>"})


@dataclass(frozen=True)
class CountedNext:
    """One `next(target)` call site inside a counted loop."""

    target: Load
    # Where the count comes from: the comprehension's `.0` (a range iterator), or
    # range(*header) with the loop's target `index` as the position in it.
    comprehension: bool
    header: tuple[tuple[Any, ...], ...]  # ("load", name) | ("const", int) | ("op", "+") | ("len",)
    arguments: int  # how many arguments range() takes in the header
    index: str
    per_iteration: int  # `next(target)` calls each time round the loop
    position: int  # this call's place among them
    others: tuple[Load, ...]  # the other iterators the body steps (judge-side ones only)
    reads: tuple[str, ...]  # locals the body reads before it stores them (checked as data)
    fails: bool  # the body can raise (an assert, an operator) before the count is reached
    guarded: bool  # an exception handler (try, with) covers the loop


@dataclass(frozen=True)
class CountedRead:
    """`target[index]` in a `for index in range(...)` loop: the loop's one read of a handle."""

    target: Load
    header: tuple[tuple[Any, ...], ...]  # as CountedNext's
    arguments: int
    index: str
    reads: tuple[str, ...]  # locals the body reads before it stores them (checked as data)
    others: tuple[Load, ...]  # the other names the body subscripts by the index (data too)
    fails: bool  # the body can raise (an assert, an operator) before the count is reached
    guarded: bool
    # Nothing the loop reads can be rebound from outside the frame: the handle and every
    # name are its fast locals (no cell, no global) and the header takes no len().
    sealed: bool
    # A loop over an iterable, not a range (`for i in hd._keys`): the offset of its
    # GET_ITER, where a held list's `__iter__` says which list it is (standin); else -1.
    over: int = -1


@dataclass(frozen=True)
class CountedStore:
    """`target[key] = value` in a `for index in range(...)` loop whose body does nothing
    else but compute `key` and `value` from ints and constants (nothing in it can raise)."""

    target: Load
    header: tuple[tuple[Any, ...], ...]
    arguments: int
    index: str
    ints: tuple[str, ...]  # locals the body reads before it stores them: ints at run time
    guarded: bool
    sealed: bool  # as CountedRead's


@dataclass(frozen=True)
class Drained:
    """A list comprehension's FOR_ITER over its `.0` whose body can neither raise nor ask
    the worker (`[i for i in h.table if i != -1]`): it steps `.0` to its end, so a batch
    of its coming steps is what bare steps, in the same order (standin.counted). Its body
    reads fast locals only (no cell, no global): nothing outside the frame rebinds them."""

    reads: tuple[str, ...]  # locals the body reads before it stores them (checked as data)


Site = CountedNext | CountedRead | CountedStore | Drained


def counted_sites(code: types.CodeType) -> dict[int, Site]:
    """Pure: the offsets of `code`'s counted `next(x)` calls (each call's PRECALL and CALL),
    its counted reads and its counted stores (their BINARY_SUBSCR or STORE_SUBSCR, and its
    last cache entry: a frame's `f_lasti` is either, once 3.11 specializes a subscript of
    a class with a Python `__getitem__` into BINARY_SUBSCR_GETITEM, which runs it from
    past its caches)."""
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    at = {i.offset: n for n, i in enumerate(ins)}
    entries = [(e.start, e.end) for e in dis.Bytecode(code).exception_entries]  # type: ignore[attr-defined]
    found: dict[int, Site] = {}
    for head, instruction in enumerate(ins):
        if instruction.opname == "FOR_ITER":
            found.update(_loop(code, ins, at, head, entries))
            found.update(_store_loop(code, ins, at, head, entries))
            found.update(_drained(code, ins, at, head))
    return found


def counted_nexts(code: types.CodeType) -> dict[int, CountedNext]:
    """Pure: counted_sites' `next(x)` calls."""
    return {k: s for k, s in counted_sites(code).items() if type(s) is CountedNext}


@functools.lru_cache(maxsize=512)
def cached(code: types.CodeType) -> dict[int, Site]:
    return counted_sites(code)


def _first_at(at: dict[int, int], ins: list[dis.Instruction], offset: int) -> int | None:
    """The index of the first instruction at or after `offset` (a jump's target may be
    an EXTENDED_ARG, which is left out of `ins`)."""
    for probe in (offset, offset + 2, offset + 4, offset + 6):
        if probe in at:
            return at[probe]
    return None


def _head(
    code: types.CodeType, ins: list[dis.Instruction], at: dict[int, int], head: int
) -> tuple[int, str, tuple[bool, tuple[tuple[Any, ...], ...], int]] | None:
    """The loop at `ins[head]` (its FOR_ITER): (the index of the instruction after it, its
    index's name, what it iterates), or None when it is no loop of a plain local over a
    comprehension's `.0`, a range or (no header, no arguments) any other iterable."""
    end = _first_at(at, ins, ins[head].argval)
    if end is None or end <= head + 2:
        return None
    back = ins[end - 1]
    if back.opname != "JUMP_BACKWARD" or _first_at(at, ins, back.argval) != head:
        return None
    if ins[head + 1].opname != "STORE_FAST":
        return None
    source = _source(code, ins, head)
    if source is None:
        return None
    return end, str(ins[head + 1].argval), source


def _subscript(ins: list[dis.Instruction], i: int, stop: int, index: str) -> Load | None:
    """`name[index]` from `ins[i]`: the name's load, or None."""
    x = ins[i]
    kind = _LOADS.get(x.opname)
    if kind is None or (kind == "global" and (x.arg or 0) & 1) or i + 2 >= stop:
        return None
    key, subscript = ins[i + 1], ins[i + 2]
    if (key.opname, key.argval, subscript.opname) != ("LOAD_FAST", index, "BINARY_SUBSCR"):
        return None
    return kind, str(x.argval)


def _loop(
    code: types.CodeType,
    ins: list[dis.Instruction],
    at: dict[int, int],
    head: int,
    entries: list[tuple[int, int]],
) -> dict[int, Site]:
    parts = _head(code, ins, at, head)
    if parts is None:
        return {}
    end, index, (comprehension, header, arguments) = parts
    iterable = not comprehension and not arguments
    header_names = {op[1] for op in header if op[0] == "load"}
    stored = {index}
    reads: list[str] = []
    calls: list[tuple[tuple[int, int], Load]] = []
    # `name[index]`: a read a batch may fetch ahead, when it is the loop's only one of a handle.
    subscripts: list[tuple[tuple[int, int], Load]] = []
    fails = False
    cells = any(x.opname == "LOAD_DEREF" for x in ins[head + 2 : end - 1])
    i = head + 2
    while i < end - 1:
        x = ins[i]
        name = x.opname
        target = _subscript(ins, i, end - 1, index)
        if target is not None and not (target[0] == "fast" and target[1] in stored):
            subscripts.append(((ins[i + 2].offset, ins[i + 3].offset - 2), target))
            i += 3
            continue
        if name in _FORWARD_IFS:
            raises = _raise_block(ins, at, i, end - 1)
            if raises is None:
                return {}
            fails, i = True, raises
            continue
        if name == "LOAD_GLOBAL" and x.argval == "next" and x.arg is not None and x.arg & 1:
            step = _next_call(ins, i, end - 1, stored)
            if step is None:
                return {}
            calls.append(step)
            i += 4
            continue
        if name in ("LOAD_FAST", "LOAD_DEREF"):
            if x.argval not in stored and x.argval not in reads:
                reads.append(x.argval)
        elif name == "STORE_FAST":
            if x.argval == index or x.argval in header_names:
                return {}
            stored.add(x.argval)
        elif name == "COMPARE_OP":
            fails = fails or x.argval not in ("==", "!=")
        elif name == "FORMAT_VALUE":
            fails = fails or bool((x.arg or 0) & _FORMAT_SPEC)
        elif name == "BUILD_STRING":
            pass
        elif name in _RAISING:
            fails = True
        elif name not in _QUIET:
            return {}
        i += 1
    start, stop = ins[head].offset, ins[end].offset
    guarded = any(s < stop and start < e for s, e in entries)
    if not calls:
        if comprehension:
            return {}
        sealed = not cells and ("len",) not in header
        over = ins[head - 1].offset if iterable else -1
        sealing = (sealed, over)
        return _reads(subscripts, stored, header, arguments, index, reads, fails, guarded, sealing)
    if iterable:
        return {}  # a `next` loop is counted by a range's count
    for _, (kind, subscripted) in subscripts:
        # Read as it was before reads were counted: a local checked as data, which can raise.
        if kind == "global":
            return {}
        if subscripted not in reads:
            reads.append(subscripted)
        fails = True
    targets = list(dict.fromkeys(target for _, target in calls))
    found: dict[int, Site] = {}
    for target in targets:
        sites = [offsets for offsets, t in calls if t == target]
        others = tuple(t for t in targets if t != target)
        for position, offsets in enumerate(sites):
            site = CountedNext(
                target=target, comprehension=comprehension, header=header,
                arguments=arguments, index=index, per_iteration=len(sites), position=position,
                others=others, reads=tuple(reads), fails=fails, guarded=guarded,
            )  # fmt: skip
            found.update(dict.fromkeys(offsets, site))
    return found


def _reads(  # noqa: PLR0917  (the loop's reading, handed on)
    subscripts: list[tuple[tuple[int, int], Load]],
    stored: set[str],
    header: tuple[tuple[Any, ...], ...],
    arguments: int,
    index: str,
    reads: list[str],
    fails: bool,
    guarded: bool,
    sealing: tuple[bool, int],
) -> dict[int, Site]:
    """Each `name[index]` of a loop with no `next` call, as a CountedRead: the others it
    makes are checked as data at run time, so at most one of them reads a handle.
    `sealing`: whether the loop is sealed, and its GET_ITER's offset if it is no range's."""
    sealed, over = sealing
    found: dict[int, Site] = {}
    for offsets, target in subscripts:
        if target[0] == "fast" and target[1] in stored:
            continue  # rebound in the body: the next read may not be of this handle
        others = tuple(t for o, t in subscripts if o != offsets)
        site = CountedRead(
            target=target, header=header, arguments=arguments, index=index,
            reads=tuple(reads), others=others, fails=fails, guarded=guarded,
            sealed=sealed and all(kind == "fast" for kind, _ in (target, *others)), over=over,
        )  # fmt: skip
        found.update(dict.fromkeys(offsets, site))
    return found


# A counted store's body: the types its values may have, and the operators that cannot
# raise on them (`+ - *`, `-x`, `~x` of ints, `+` of strs, `not`; no `/`, `//`, `%`, `**`,
# `<<`: those can).
_STORE_CONSTS = {int: "int", bool: "int", str: "str", type(None): "data"}
_INT_OPS = frozenset({"+", "-", "*", "+=", "-=", "*="})
_STR_OPS = frozenset({"+", "+="})


def _store_loop(
    code: types.CodeType,
    ins: list[dis.Instruction],
    at: dict[int, int],
    head: int,
    entries: list[tuple[int, int]],
) -> dict[int, Site]:
    """A `for index in range(...)` loop whose body is one `target[key] = value` and plain
    locals computed from ints and constants (the frame's ints, checked at run time) by
    operations that cannot raise on them: nothing between two stores can observe the code
    or end the loop but a store."""
    parts = _head(code, ins, at, head)
    if parts is None or parts[2][0] or not parts[2][2]:
        return {}  # a comprehension's, or over an iterable that is not a range
    end, index, (_, header, arguments) = parts
    header_names = {op[1] for op in header if op[0] == "load"}
    known: dict[str, str] = {index: "int"}  # a local's type once the body stored it
    ints: list[str] = []
    # The stack as the body builds it: ("load", kind, name) not yet used, or ("value", type).
    stack: list[tuple[str, ...]] = []
    site: tuple[tuple[int, int], Load] | None = None

    def typed(entry: tuple[str, ...]) -> str | None:
        if entry[0] == "value":
            return entry[1]
        _, kind, name = entry
        if kind == "global":
            return None
        if name not in known and name not in ints:
            ints.append(name)  # read before the body stores it: the frame's, an int
        return known.get(name, "int")

    def pop(n: int) -> list[str | None] | None:
        if len(stack) < n:
            return None
        taken = [typed(e) for e in stack[len(stack) - n :]]
        del stack[len(stack) - n :]
        return taken

    for n, x in enumerate(ins[head + 2 : end - 1], head + 2):
        op = x.opname
        kind = _LOADS.get(op)
        if kind is not None and not (kind == "global" and (x.arg or 0) & 1):
            stack.append(("load", kind, str(x.argval)))
            continue
        if op == "LOAD_CONST":
            const = _STORE_CONSTS.get(type(x.argval))
            if const is None and type(x.argval) is tuple and inert(x.argval, [64]):
                const = "data"
            if const is None:
                return {}
            stack.append(("value", const))
            continue
        if op == "STORE_SUBSCR":
            if site is not None or len(stack) < 3 or stack[-2][0] != "load":
                return {}
            box = stack.pop(-2)
            taken = pop(2)
            if taken is None or None in taken:
                return {}
            site = ((x.offset, ins[n + 1].offset - 2), (box[1], box[2]))
            continue
        if op == "BUILD_TUPLE":
            taken = pop(x.arg or 0)
            result = None if taken is None or None in taken else "data"
        elif op == "BUILD_STRING":
            taken = pop(x.arg or 0)
            result = "str" if taken is not None and set(taken) <= {"str"} else None
        elif op == "FORMAT_VALUE":
            taken = pop(1)  # a format spec (flag 4) could raise: `f"{i:q}"`
            fine = taken is not None and taken[0] in ("int", "str") and not (x.arg or 0) & 4
            result = "str" if fine else None
        elif op in ("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT"):
            taken = pop(1)
            if taken is None or None in taken:
                return {}
            result = "int" if taken[0] == "int" or op == "UNARY_NOT" else None
        elif op == "BINARY_OP":
            taken = pop(2)
            result = (
                "int"
                if taken == ["int", "int"] and x.argrepr in _INT_OPS
                else "str"
                if taken == ["str", "str"] and x.argrepr in _STR_OPS
                else None
            )
        elif op == "STORE_FAST":
            name = str(x.argval)
            taken = pop(1)
            if taken is None or None in taken or name == index or name in header_names:
                return {}
            if name in ints and taken[0] != "int":
                return {}  # the next time round it is read as the int it was
            known[name] = str(taken[0])
            continue
        else:
            return {}
        if result is None:
            return {}
        stack.append(("value", result))
    if site is None or stack:
        return {}
    offsets, target = site
    if target[0] != "global" and (target[1] in known or target[1] in ints):
        return {}  # rebound, or read as an int: not the same handle each time round
    start, stop = ins[head].offset, ins[end].offset
    guarded = any(s < stop and start < e for s, e in entries)
    cells = any(x.opname == "LOAD_DEREF" for x in ins[head + 2 : end - 1])
    sealed = target[0] == "fast" and not cells and ("len",) not in header
    store = CountedStore(
        target=target, header=header, arguments=arguments, index=index, ints=tuple(ints),
        guarded=guarded, sealed=sealed,
    )  # fmt: skip
    return dict.fromkeys(offsets, store)


# What a drained comprehension's body may do: nothing that can raise on data or run code.
_DRAIN_QUIET = frozenset(
    {"NOP", "LOAD_CONST", "POP_TOP", "COPY", "SWAP", "LIST_APPEND", "UNARY_NOT", "IS_OP",
     "BUILD_TUPLE"}
)  # fmt: skip
_FILTERS = frozenset(
    {"POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_NONE",
     "POP_JUMP_BACKWARD_IF_NOT_NONE"}
)  # fmt: skip
_SKIPS = _FORWARD_IFS | {"JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "JUMP_FORWARD"}


def _drained(
    code: types.CodeType, ins: list[dis.Instruction], at: dict[int, int], head: int
) -> dict[int, Site]:
    """The FOR_ITER of a list comprehension over its `.0` whose body only compares data
    (==, !=, is), filters (`if`: a jump back to the FOR_ITER, or on within the body),
    stores plain locals and appends: nothing in it can raise or call, so it steps `.0`
    until its end. (No set: adding a list raises.)"""
    if code.co_name not in _COMPREHENSIONS or head == 0:
        return {}
    before = ins[head - 1]
    if (before.opname, before.argval) != ("LOAD_FAST", ".0"):
        return {}
    end = _first_at(at, ins, ins[head].argval)
    if end is None or end <= head + 1:
        return {}
    back = ins[end - 1]
    if back.opname != "JUMP_BACKWARD" or _first_at(at, ins, back.argval) != head:
        return {}
    stored: set[str] = set()
    reads: list[str] = []
    for n, x in enumerate(ins[head + 1 : end - 1], head + 1):
        name = x.opname
        if name in _SKIPS:  # `a or b`, `if a and b`: on within the body
            target = _first_at(at, ins, x.argval)
            if target is None or not n < target <= end - 1:
                return {}
        elif name == "STORE_FAST":
            if x.argval == ".0":
                return {}
            stored.add(str(x.argval))
        elif name == "LOAD_FAST":
            if x.argval == ".0":
                return {}
            if x.argval not in stored and x.argval not in reads:
                reads.append(str(x.argval))
        elif name == "COMPARE_OP":
            if x.argval not in ("==", "!="):
                return {}  # `<` of data can raise
        elif name in _FILTERS:
            if _first_at(at, ins, x.argval) != head:
                return {}
        elif name not in _DRAIN_QUIET:
            return {}
    return {ins[head].offset: Drained(reads=tuple(reads))}


def drained(site: Drained, frame: types.FrameType, handle: object, frozen: bool) -> bool:
    """Whether the comprehension at `frame` steps `handle` (its `.0`) with a body that only
    compares data: every local it reads before storing it is data (with `frozen`, data
    nothing can change in place: a judge function a step calls back cannot change it)."""
    values = frame.f_locals
    if values.get(".0", _MISSING) is not handle:
        return False
    budget = [_BUDGET]
    check = immutable if frozen else inert
    return all(check(values.get(name, _MISSING), budget) for name in site.reads)


def _next_call(
    ins: list[dis.Instruction], i: int, stop: int, stored: set[str]
) -> tuple[tuple[int, int], Load] | None:
    """`next(name)` from `ins[i]` (its LOAD_GLOBAL): ((the PRECALL's and the CALL's
    offsets), the name's load). A frame's `f_lasti` is either: once 3.11 specializes
    the PRECALL of a builtin (PRECALL_NO_KW_BUILTIN_O), the call runs there."""
    if i + 3 >= stop:
        return None
    load, precall, call = ins[i + 1], ins[i + 2], ins[i + 3]
    kind = _LOADS.get(load.opname)
    if (
        kind is None
        or (kind == "global" and load.arg is not None and load.arg & 1)
        or (kind == "fast" and load.argval in stored)  # a temporary: not a loop's iterator
        or (precall.opname, precall.arg, call.opname, call.arg) != ("PRECALL", 1, "CALL", 1)
    ):
        return None
    return (precall.offset, call.offset), (kind, str(load.argval))


def _raise_block(ins: list[dis.Instruction], at: dict[int, int], i: int, stop: int) -> int | None:
    """A forward jump over a block that ends by raising (an assert's failure, pytest's
    explanation of it): the index the jump resumes at, or None."""
    resume = _first_at(at, ins, ins[i].argval)
    if resume is None or resume > stop or resume <= i + 1:
        return None
    block = ins[i + 1 : resume]
    if block[-1].opname != "RAISE_VARARGS":
        return None
    first, last = block[0].offset, ins[resume].offset
    for x in block:
        if x.opname in ("FOR_ITER", "RETURN_VALUE", "YIELD_VALUE", "JUMP_BACKWARD"):
            return None
        jumps = x.opname in _FORWARD_IFS or x.opname == "JUMP_FORWARD"
        if jumps and not first <= x.argval < last:
            return None  # pytest's explanation jumps within the block only
    return resume


def _source(
    code: types.CodeType, ins: list[dis.Instruction], head: int
) -> tuple[bool, tuple[tuple[Any, ...], ...], int] | None:
    """What the loop iterates: a comprehension's `.0`, or `range(...)` of the frame's ints."""
    before = ins[head - 1] if head else None
    if before is None:
        return None
    if code.co_name in _COMPREHENSIONS and before.opname == "LOAD_FAST" and before.argval == ".0":
        return True, (), 0
    if before.opname != "GET_ITER":
        return None
    if head < 4:
        return _ITERABLE
    call, precall = ins[head - 2], ins[head - 3]
    if call.opname != "CALL" or precall.opname != "PRECALL" or call.arg != precall.arg:
        return _ITERABLE
    arguments = call.arg or 0
    if not 1 <= arguments <= 3:
        return _ITERABLE
    j = head - 4
    while j >= 0 and not (
        ins[j].opname == "LOAD_GLOBAL" and ins[j].argval == "range" and (ins[j].arg or 0) & 1
    ):
        j -= 1
    if j < 0:
        return _ITERABLE
    header = _header(ins[j + 1 : head - 3])
    if header is None or _depth(header) != arguments:
        return _ITERABLE
    return False, header, arguments


# What _source says of a loop over an iterable that is not a range: no header to count by.
_ITERABLE: tuple[bool, tuple[tuple[Any, ...], ...], int] = (False, (), 0)


def _header(ins: list[dis.Instruction]) -> tuple[tuple[Any, ...], ...] | None:
    out: list[tuple[Any, ...]] = []
    i = 0
    while i < len(ins):
        x = ins[i]
        if x.opname == "LOAD_FAST":
            out.append(("load", str(x.argval)))
        elif x.opname == "LOAD_CONST" and type(x.argval) is int:
            out.append(("const", x.argval))
        elif x.opname == "BINARY_OP" and x.argrepr in _BINOPS:
            out.append(("op", x.argrepr))
        elif (
            x.opname == "LOAD_GLOBAL"
            and x.argval == "len"
            and (x.arg or 0) & 1
            and i + 3 < len(ins)
            and ins[i + 1].opname == "LOAD_FAST"
            and (ins[i + 2].opname, ins[i + 2].arg, ins[i + 3].opname) == ("PRECALL", 1, "CALL")
        ):
            out += [("load", str(ins[i + 1].argval)), ("len",)]
            i += 4
            continue
        else:
            return None
        i += 1
    return tuple(out)


def _depth(header: tuple[tuple[Any, ...], ...]) -> int:
    depth = 0
    for op in header:
        if op[0] in ("load", "const"):
            depth += 1
        elif op[0] == "op":
            if depth < 2:
                return -1
            depth -= 1
        elif depth < 1:
            return -1
    return depth


# --- at run time: what the frame holds -------------------------------------------------

_MISSING = object()
_RANGE_ITERATOR = type(iter(range(0)))
# Judge-side iterators whose step runs no Python code: over data, checked as data.
_SEQUENCE_ITERATORS: frozenset[type] = frozenset(
    {type(iter([])), type(iter(())), _RANGE_ITERATOR, type(iter("")), type(iter("\u0100")),
     type(iter(b""))}
)  # fmt: skip
_CYCLE: type = itertools.cycle
_SIZED = frozenset({list, tuple, str, bytes, dict, set, frozenset, range})
_DATA = frozenset({type(None), bool, int, float, complex, str, bytes})
# How much judge data a check may walk before it gives up (and the loop is not counted).
_BUDGET = 10_000


def steps(site: CountedNext, frame: types.FrameType, handle: object) -> int:
    """How many `next(handle)` calls the loop at `frame` makes from this one on, when its
    body can only compare and keep data between them; else 1 (one round trip each).

    The frame's values decide: `next` and `range` are the builtins, the name the
    call steps is `handle`, every other iterator it steps is a judge-side one over
    data, and every local it reads before storing it is data (lists and sets of
    data included: nothing in the body can change them). The items a batch brings
    are data too (protocol.plain): the worker ends a counted batch after any other.
    """
    values = frame.f_locals
    if resolve(frame, values, ("global", "next")) is not builtins_next:
        return 1
    if resolve(frame, values, site.target) is not handle:
        return 1
    budget = [_BUDGET]
    for other in site.others:
        if not _judge_iterator(resolve(frame, values, other), budget):
            return 1
    if not all(inert(values.get(name, _MISSING), budget) for name in site.reads):
        return 1
    if site.comprehension:
        source = values.get(".0")
        if type(source) is not _RANGE_ITERATOR:
            return 1
        remaining = operator.length_hint(source)
    else:
        remaining = _remaining(site, frame, values)
        if remaining < 0:
            return 1
    return remaining * site.per_iteration + site.per_iteration - site.position


def _remaining(site: CountedNext, frame: types.FrameType, values: dict[str, Any]) -> int:
    """The loop's iterations after this one: range(*header) at the index's place; -1 if
    any value is not what the header's arithmetic may use."""
    found = _span(site, frame, values)
    return -1 if found is None else len(found[0]) - found[1] - 1


def _span(
    site: CountedNext | CountedRead | CountedStore, frame: types.FrameType, values: dict[str, Any]
) -> tuple[range, int] | None:
    """The loop's range(*header) and the index's place in it; None if any value is not
    what the header's arithmetic may use."""
    if resolve(frame, values, ("global", "range")) is not range:
        return None
    stack: list[int] = []
    for op in site.header:
        if op[0] == "const":
            stack.append(op[1])
        elif op[0] == "load":
            stack.append(values.get(op[1], _MISSING))
        elif op[0] == "len":
            sized = stack.pop()
            if type(sized) not in _SIZED or resolve(frame, values, ("global", "len")) is not len:
                return None
            stack.append(len(sized))
        else:
            right, left = stack.pop(), stack.pop()
            if type(left) is not int or type(right) is not int or (op[1] == "//" and not right):
                return None
            stack.append(_ARITHMETIC[op[1]](left, right))
    if len(stack) != site.arguments or any(type(v) is not int for v in stack):
        return None
    if len(stack) == 3 and stack[2] == 0:
        return None
    span = range(*stack)
    at = values.get(site.index, _MISSING)
    if type(at) is not int or at not in span:
        return None
    return span, span.index(at)


def read_keys(
    site: CountedRead, frame: types.FrameType, handle: object, most: int, frozen: bool = False
) -> range:
    """The keys the loop at `frame` reads `handle` at from this read on, at most `most`,
    when nothing between two of them can observe the code; else an empty range.

    The frame's values decide: `range` is the builtin, the name read is `handle`, and
    every local the body reads before storing it and every other name it subscripts
    by the index is data (nothing in the body can then run the judge's Python or ask
    the worker); with `frozen`, data nothing can change in place (scalars, tuples and
    frozensets of them): a judge function a read calls back cannot change what the
    body compares. The items a batch brings are data too (protocol.plain): the worker
    ends the batch after any other.
    """
    values = frame.f_locals
    if resolve(frame, values, site.target) is not handle:
        return range(0)
    budget = [_BUDGET]
    check = immutable if frozen else inert
    if not all(check(values.get(name, _MISSING), budget) for name in site.reads):
        return range(0)
    if not all(check(resolve(frame, values, other), budget) for other in site.others):
        return range(0)
    found = _span(site, frame, values)
    if found is None:
        return range(0)
    span, at = found
    return span[at : at + most]


def held_keys(  # noqa: PLR0917  (the loop, its read and its iterator)
    site: CountedRead,
    frame: types.FrameType,
    handle: object,
    key: object,
    iterator: object,
    most: int,
    frozen: bool = False,
) -> tuple[Any, ...]:
    """The keys the loop over a list at `frame` (site.over) reads `handle` at from this read
    on: `key`, the item the loop stands at, then the list's coming items, at most `most`,
    when nothing between two reads can observe the code; else ().

    `iterator` is the list iterator the loop's GET_ITER made (standin says which): its
    list is the judge's copy of a worker's list, which nothing else can change between
    two reads (the body calls nothing). With `frozen` (the worker holds a judge function
    a read could call back), the list must be held by that iterator alone, and the
    body's other reads data nothing can change in place, as read_keys says. The keys
    are data nothing can change in place, small enough that the batch crosses whenever
    each of its reads would (_small); the batch stops before the first that is not.
    """
    values = frame.f_locals
    if site.over < 0 or values.get(site.index, _MISSING) is not key:
        return ()
    if resolve(frame, values, site.target) is not handle or type(iterator) is not _LIST_ITERATOR:
        return ()
    budget = [_BUDGET]
    check = immutable if frozen else inert
    if not all(check(values.get(name, _MISSING), budget) for name in site.reads):
        return ()
    if not all(check(resolve(frame, values, other), budget) for other in site.others):
        return ()
    reduced = iterator.__reduce__()  # (iter, (the list,), the next item's index); a copy
    if len(reduced) != 3:
        return ()  # exhausted: the loop is not at one of its items
    items, at = reduced[1][0], reduced[2]
    del reduced
    # Held by the iterator, `items` and getrefcount's argument: by nothing a callback reaches.
    if frozen and sys.getrefcount(items) != 3:
        return ()
    if not (type(at) is int and 0 < at <= len(items)) or items[at - 1] is not key:
        return ()
    keys = list(itertools.takewhile(lambda k: _small(k, budget), items[at - 1 : at - 1 + most]))
    return tuple(keys)


def _small(value: Any, budget: list[int], depth: int = 0) -> bool:
    """Immutable data the wire takes in any batch of BATCH_ITEMS: ints of at most 1,024
    bits, strs and bytes of at most 1,024 items, floats, tuples and frozensets of them."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 16:
        return False
    kind = type(value)
    if kind is int:
        return bool(value.bit_length() <= _SMALL)
    if kind in (str, bytes):
        return len(value) <= _SMALL
    if kind in _DATA:
        return True
    return kind in (tuple, frozenset) and all(_small(v, budget, depth + 1) for v in value)


_SMALL = 1024
_LIST_ITERATOR: type = type(iter([]))


def stores_left(site: CountedStore, frame: types.FrameType) -> int:
    """The stores the loop at `frame` makes after this one; -1 unless the frame's values
    are what the body's reading assumed (the ints it reads are ints, range the builtin)."""
    values = frame.f_locals
    if any(type(values.get(name, _MISSING)) is not int for name in site.ints):
        return -1
    found = _span(site, frame, values)
    return -1 if found is None else len(found[0]) - found[1] - 1


_ARITHMETIC = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
}
builtins_next = next


def inert(value: Any, budget: list[int], depth: int = 0) -> bool:
    """Data whose comparisons, hashes and containment run no Python code: the builtin
    scalars and lists, tuples, sets and dicts of them (at most `budget` items walked)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 16:
        return False
    kind = type(value)
    if kind in _DATA:
        return True
    if kind in (tuple, list, set, frozenset):
        return all(inert(v, budget, depth + 1) for v in value)
    if kind is dict:
        return all(inert(k, budget, depth + 1) and inert(v, budget, depth + 1)
                   for k, v in value.items())  # fmt: skip
    return False


def immutable(value: Any, budget: list[int], depth: int = 0) -> bool:
    """Data nothing can change in place: the builtin scalars, tuples and frozensets of them."""
    budget[0] -= 1
    if budget[0] < 0 or depth > 16:
        return False
    kind = type(value)
    if kind in _DATA:
        return True
    return kind in (tuple, frozenset) and all(immutable(v, budget, depth + 1) for v in value)


def _judge_iterator(value: Any, budget: list[int]) -> bool:
    """A judge-side iterator whose step runs no Python code and yields data."""
    kind = type(value)
    if kind in _SEQUENCE_ITERATORS:
        reduced = value.__reduce__()
        return len(reduced[1]) == 0 or inert(reduced[1][0], budget)  # exhausted: ((),)
    if kind is _CYCLE:
        _, (inner,), (saved, cycling) = value.__reduce__()
        return inert(saved, budget) and (cycling or _judge_iterator(inner, budget))
    return False
