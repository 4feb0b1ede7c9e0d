"""Pure: what the properties said about a diff: its changed lines, which ran, and their mutants.

SPEC "What the properties said about this diff" (issue 14). The changed
lines come from the diff's hunks at head, counted as coverage.py counts
statements; the mutants are small edits of those lines only, with the
oracle's operators, chosen from the seed. Nothing here runs code under test:
the lane runs it and hands the results back (review_run.py).
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import copy
import dataclasses
import enum
import hashlib
import io
import math
import re
import tokenize
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from patchjudge import oracle, parsed, testrun
from patchjudge.boundary import protocol
from patchjudge.boundary.protocol import ARITHMETIC, VIEW_CLAIM, dunder_name
from patchjudge.verdict import OPERAND_BLIND

OPERATORS = ("flip_comparison", "change_constant", "drop_statement", "raise", "raise_arm")
# Within one line the stronger mutants go first: `raise` dies wherever the line runs.
_TIER = {name: i for i, name in enumerate(OPERATORS)}
RAISE_MESSAGE = "patchjudge review mutant"
# An expression that raises where it is evaluated: an arm's mutant (red team, session 12).
RAISE_EXPRESSION = f"(_ for _ in ()).throw(RuntimeError({RAISE_MESSAGE!r}))"
# What dies exactly when its arm runs: an arm's first mutant, tried whatever the limit.
_ARM_CHECKS = frozenset({"raise", "raise_arm"})
MAX_RANGES_IN_REASON = 10

_HUNK = re.compile(rb"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
# Python's own line ends (the tokenizer's, not str.splitlines's longer list).
_LINE_END = re.compile(r"\r\n|\r|\n")
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
_DROPPABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Delete,
    ast.Assert,
    ast.Raise,
)


# --- the changed lines -------------------------------------------------------


def hunk_lines(diff: bytes) -> frozenset[int]:
    """Line numbers at head that `git diff -U0` says were added or changed (git's lines)."""
    found: set[int] = set()
    for line in diff.split(b"\n"):
        if line.startswith(b"@@ ") and (m := _HUNK.match(line)):
            start, count = int(m[1]), 1 if m[2] is None else int(m[2])
            found.update(range(start, start + count))
    return frozenset(found)


def git_line_count(data: bytes) -> int:
    """How many lines git sees in a blob (an added file: all of them changed)."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass(frozen=True)
class Statements:
    """coverage.py's view of a file: the first lines of its statements."""

    lines: frozenset[int]
    first: Mapping[int, int]  # a line of a multi-line statement -> the statement's first line

    def of(self, line: int) -> int:
        return self.first.get(line, line)


def statements(text: str, changed: Collection[int] | None = None) -> Statements | None:
    """The file's executable statements as coverage.py counts them; None if it does not parse.

    No exclusion pragmas: a `# pragma: no cover` in the patch must not take
    its own lines out of the count. With `changed`, coverage's parser reads
    only the code objects from the first changed line to the last (issue 20):
    what the review counts lies there, and reads the same (a test says so).
    """
    if not text.strip():
        return Statements(frozenset(), {})
    # Here, not at the top (issue 20): the judge's pytest imports this module for the
    # review's plan, already read by the gate, and need not load coverage.py (~20-70 ms).
    from coverage.exceptions import NotPython
    from coverage.parser import PythonParser

    kept: frozenset[int] | None = None
    try:
        with _quiet():
            if changed is not None:
                tree = parsed.parse(text)
                # The parser compiles what it reads: the whole file must compile too.
                compile(tree, "<review>", "exec", dont_inherit=True)
                kept = analysed_lines(tree, changed)
            parser = PythonParser(text=text if kept is None else _blanked(text, kept), exclude=None)
            parser.parse_source()
    except (NotPython, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return Statements(frozenset(parser.statements), dict(parser.multiline_map))


def _is_string(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def analysed_lines(tree: ast.Module, changed: Collection[int]) -> frozenset[int] | None:
    """Pure: the lines coverage's parser must read for `changed`; None: all of them.

    Every top-level statement from the first changed line to the last, whole,
    and what decides how they compile: the module's docstring (the next
    string would become it) and its `__future__` imports.
    """
    body = tree.body
    if not changed or not body:
        return None
    spans = [
        (
            min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", ()))]),
            n.end_lineno or n.lineno,
        )
        for n in body
    ]
    lo, hi = min(changed), max(changed)
    grown = True
    while grown:  # statements sharing a line (`a = 1; b = 2`) come whole
        grown = False
        for first, last in spans:
            if first <= hi and last >= lo and (first < lo or last > hi):
                lo, hi, grown = min(lo, first), max(hi, last), True
    inside = [i for i, (first, last) in enumerate(spans) if first <= hi and last >= lo]
    if not inside or inside[0] == 0:
        return frozenset(range(lo, hi + 1))
    if _is_string(body[inside[0]]) and not _is_string(body[0]):
        return None  # alone it would read as the docstring, which coverage does not count
    lines = set(range(lo, hi + 1))
    for i, node in enumerate(body[: inside[0]]):
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if future or (i == 0 and _is_string(node)):
            lines.update(range(spans[i][0], spans[i][1] + 1))
    return frozenset(lines)


def python_line_texts(text: str) -> list[str]:
    """Pure: the text's lines as Python numbers them (from 1: index n - 1), not str.splitlines."""
    return _LINE_END.split(text)


def _blanked(text: str, kept: frozenset[int]) -> str:
    """Pure: `text` with every line outside `kept` empty, so line numbers stay."""
    lines = _LINE_END.split(text)
    return "\n".join(line if n in kept else "" for n, line in enumerate(lines, 1))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Compiling the patch's source: its SyntaxWarnings are its own, not the gate's output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def decode(data: bytes) -> tuple[str, str] | None:
    """(text, encoding) as Python reads the file (PEP 263); None if it cannot."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def python_lines(text: str, git_lines: Iterable[int]) -> frozenset[int]:
    """Git's line numbers (LF only) as Python's (CR, LF, CRLF).

    A file whose lines end in a lone CR is one line to git and many to
    Python: without this a whole module could hide behind "line 1 changed".
    """
    spans: list[range] = []
    line = 1
    for chunk in text.split("\n"):
        breaks = chunk.count("\r") - (1 if chunk.endswith("\r") else 0)
        spans.append(range(line, line + breaks + 1))
        line += breaks + 1
    return frozenset(n for g in git_lines if 0 < g <= len(spans) for n in spans[g - 1])


@dataclass(frozen=True)
class ChangedFile:
    """One .py file of the diff at head, and the lines the patch added or changed in it."""

    path: str
    text: str
    encoding: str
    changed: frozenset[int]  # Python line numbers the hunks touch
    stmts: Statements | None  # None: the file does not parse

    def statement_of(self, line: int) -> int:
        return line if self.stmts is None else self.stmts.of(line)

    @property
    def lines(self) -> frozenset[int]:
        """The changed lines that count: statements (any changed non-blank line if unparsable)."""
        if self.stmts is None:
            text_lines = _LINE_END.split(self.text)
            return frozenset(
                n for n in self.changed if n <= len(text_lines) and text_lines[n - 1].strip()
            )
        return frozenset(self.stmts.of(n) for n in self.changed) & self.stmts.lines

    @property
    def all_statements(self) -> frozenset[int]:
        return self.lines if self.stmts is None else self.stmts.lines | self.lines


def changed_file(
    path: str,
    data: bytes,
    git_lines: Iterable[int],
    read: Callable[[str, frozenset[int]], Statements | None] = statements,
) -> ChangedFile | None:
    """The file at head and git's changed line numbers -> a ChangedFile (None: not text).

    `read` is `statements` or what gives the same answer (review_run's cache).
    """
    decoded = decode(data)
    if decoded is None:
        return None
    text, encoding = decoded
    changed = python_lines(text, git_lines)
    return ChangedFile(path, text, encoding, changed, read(text, changed))


def statements_to_json(stmts: Statements | None) -> Any:
    """Pure: `stmts` as JSON (None: the file does not parse)."""
    if stmts is None:
        return None
    return {"lines": sorted(stmts.lines), "first": sorted(stmts.first.items())}


def statements_from_json(doc: Any) -> Statements | None:
    """Pure: the inverse of statements_to_json."""
    if doc is None:
        return None
    return Statements(frozenset(doc["lines"]), {int(k): int(v) for k, v in doc["first"]})


def fold(lines: Iterable[int], statements: Iterable[int]) -> list[tuple[int, int]]:
    """Runs of `lines`; two join when no other statement lies between them (blanks do not split)."""
    wanted = sorted(set(lines))
    others = sorted(set(statements) - set(wanted))
    runs: list[tuple[int, int]] = []
    for line in wanted:
        if runs:
            first, last = runs[-1]
            i = bisect.bisect_right(others, last)
            if i == len(others) or others[i] >= line:
                runs[-1] = (first, line)
                continue
        runs.append((line, line))
    return runs


def range_text(path: str, first: int, last: int) -> str:
    return f"{path}:{first}" if first == last else f"{path}:{first}-{last}"


def executed_lines(
    executed: Mapping[str, Mapping[str, Sequence[int]]], files: Sequence[ChangedFile]
) -> dict[str, frozenset[int]]:
    """path -> statement lines any test (or the import before them) executed."""
    by_path = {f.path: f for f in files}
    out: dict[str, set[int]] = {}
    for per_node in executed.values():
        for path, numbers in per_node.items():
            if (f := by_path.get(path)) is not None:
                out.setdefault(path, set()).update(f.statement_of(n) for n in numbers)
    return {path: frozenset(lines) for path, lines in out.items()}


def changed_lines(
    files: Sequence[ChangedFile], executed: Mapping[str, frozenset[int]]
) -> dict[str, Any]:
    """`{executed, total, unexecuted}` (SPEC verdict.json review.properties.changed_lines)."""
    total = ran = 0
    unexecuted: list[str] = []
    for f in sorted(files, key=lambda f: f.path):
        lines = f.lines
        done = lines & executed.get(f.path, frozenset())
        total += len(lines)
        ran += len(done)
        unexecuted += [range_text(f.path, a, b) for a, b in fold(lines - done, f.all_statements)]
    return {"executed": ran, "total": total, "unexecuted": unexecuted}


def unexercised(
    files: Sequence[ChangedFile],
    executed: Mapping[str, frozenset[int]],
    fates: Sequence[tuple[Mutant, Fate]],
) -> list[str]:
    """Ranges of changed statements no property exercised (issue 18).

    Executed is what the tested side reported, and the tested side can forge
    it; a killed mutant is what the judge saw fail. So a changed statement is
    exercised when a property executed it and, where mutants of it were
    chosen, one of them was killed (one that survived or was not tried proves
    nothing about the line).
    """
    tried: dict[tuple[str, int, tuple[int, int]], bool] = {}
    for m, what in fates:
        key = (m.path, m.statement, m.arm)
        tried[key] = tried.get(key, False) or what is Fate.KILLED
    # A statement's arms (code on its lines that need not run when it does: `if c: return 0`,
    # `a if c else b`) each need a kill of their own: coverage counts lines (session 12).
    unkilled = {(path, line) for (path, line, _), killed in tried.items() if not killed}
    found: list[str] = []
    for f in sorted(files, key=lambda f: f.path):
        ran = executed.get(f.path, frozenset())
        missed = {n for n in f.lines if n not in ran or (f.path, n) in unkilled}
        found += [range_text(f.path, a, b) for a, b in fold(missed, f.all_statements)]
    return found


def module_name(path: str, pythonpath: Sequence[str]) -> str | None:
    """Pure: the import name of a tree-relative .py file on the pythonpath (None: not on it)."""
    for root in sorted(pythonpath, key=len, reverse=True):
        prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
        if not path.startswith(prefix) or not path.endswith(".py"):
            continue
        parts = path[len(prefix) : -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts)
    return None


def changed_classes(f: ChangedFile) -> dict[str, int]:
    """Pure: qualname -> line of each class whose body the patch adds to or changes."""
    try:
        tree = parsed.parse(f.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, int] = {}

    def walk(body: Iterable[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                # From its first decorator: `@dataclass(order=True)` is the class's change.
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                span = range(first, (node.end_lineno or node.lineno) + 1)
                if any(n in span for n in f.changed):
                    found[name] = node.lineno
                walk(node.body, name + ".")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(node.body, f"{prefix}{node.name}.<locals>.")

    walk(tree.body, "")
    return found


# Which of the code's dunders may answer an operation the judge sent to a handle: the
# reflected comparison, `!=` falling back to `==`, functools.total_ordering (one ordering
# and `__eq__` give all four), `bool` by `len`, `in` and `iter` by indexing (issue 18).
_ORDERING = frozenset({"__lt__", "__le__", "__gt__", "__ge__", "__eq__"})
DECIDERS: dict[str, frozenset[str]] = {
    "eq": frozenset({"__eq__"}),
    "ne": frozenset({"__ne__", "__eq__"}),
    "lt": _ORDERING,
    "le": _ORDERING,
    "gt": _ORDERING,
    "ge": _ORDERING,
    "bool": frozenset({"__bool__", "__len__"}),
    "len": frozenset({"__len__"}),
    "contains": frozenset({"__contains__", "__iter__", "__getitem__", "__eq__"}),
    "hash": frozenset({"__hash__"}),
    "iter": frozenset({"__iter__", "__getitem__"}),
    # Arithmetic with a judge operand (redteam9): `got - expected` is the code's `__sub__`,
    # `expected - got` its `__rsub__`, `got -= x` its `__isub__` or else `__sub__`.
    **{n: frozenset({dunder_name(n)}) for n in ARITHMETIC},
    **{"r" + n.rstrip("_"): frozenset({dunder_name("r" + n)}) for n in ARITHMETIC},
    **{"i" + n.rstrip("_"): frozenset({dunder_name("i" + n), dunder_name(n)}) for n in ARITHMETIC},
    "divmod": frozenset({"__divmod__"}),
    "rdivmod": frozenset({"__rdivmod__"}),
    # A class of the code's as isinstance's or issubclass's second argument: its metaclass.
    "instancecheck": frozenset({"__instancecheck__"}),
    "subclasscheck": frozenset({"__subclasscheck__"}),
}
_DUNDERS = frozenset().union(*DECIDERS.values())
# Classes whose instances always cross as data (wire.DATA_TYPES and the fixed stdlib
# values): a handle the worker says is one of them is a lie, so it counts as the patch's.
CROSS_AS_DATA = frozenset(
    {f"builtins.{name}" for name in (
        "NoneType", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict", "set",
        "frozenset", "complex", "range", "slice", "bytearray", "ellipsis")}
    | {"decimal.Decimal", "fractions.Fraction", "datetime.date", "datetime.timedelta",
       "datetime.timezone", "pathlib.PurePosixPath", "pathlib.PosixPath",
       "pathlib.PureWindowsPath"}
)  # fmt: skip


def dunder_sources(files: Sequence[ChangedFile], pythonpath: Sequence[str]) -> dict[str, list[str]]:
    """Pure: dunder -> where the patch defines or names it (the judge's side, from the AST).

    A class the patch adds or changes counts with every dunder its body
    defines (`module.Class.__eq__ (file:line)`); a changed line anywhere that
    names a dunder (`Money.__eq__ = ...`, `setattr(c, "__eq__", f)`, a
    `type(...)` namespace) counts as `__eq__ named at file:line`; a changed
    line that builds a class at run time or sets an attribute by a computed
    name (`_builds_class`) counts with every dunder.
    """
    found: dict[str, list[str]] = {}
    for f in files:
        module = module_name(f.path, pythonpath)
        try:
            tree = parsed.parse(f.text)
        except (SyntaxError, ValueError):
            continue
        changed = changed_classes(f)
        covered: set[tuple[int, str]] = set()  # (line, dunder) a changed class already names
        for qualname, cls in _classes(tree):
            if qualname not in changed:
                continue
            for name in sorted(_defined_in(cls) & _DUNDERS):
                where = f"{module or f.path}.{qualname}.{name} ({f.path}:{changed[qualname]})"
                found.setdefault(name, []).append(where)
                span = range(cls.lineno, (cls.end_lineno or cls.lineno) + 1)
                covered |= {(line, name) for line in span}
        for node in ast.walk(tree):
            line = getattr(node, "lineno", None)
            if line not in f.changed:
                continue
            for name in _names_in(node) & _DUNDERS:
                if (line, name) not in covered:
                    found.setdefault(name, []).append(f"{name} named at {f.path}:{line}")
                    covered.add((line, name))
            if _builds_class(node) and (line, "") not in covered:
                # Its dunders have no name to read and its class no source to check a
                # claim against (the worker may name a class the patch left alone): every
                # dunder counts here (issue 18).
                where = f"a class built or given a method at run time at {f.path}:{line}"
                for name in sorted(_DUNDERS):
                    found.setdefault(name, []).append(where)
                covered.add((line, ""))
    return found


def _builds_class(node: ast.AST) -> bool:
    """Pure: a call that makes a class at run time or sets an attribute by a computed name.

    `type(name, bases, namespace)` but for a dict literal of literal keys,
    `types.new_class(...)`, `X.__new__(mcs, name, bases, ns)`, and
    `setattr(obj, <not a literal>, value)`: any of them may write a dunder
    whose name is nowhere in the source. `type(x)` and a literal name are not
    (a literal dunder is `named at` above).
    """
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if name == "type" and len(node.args) >= 3:
        # A literal namespace of literal keys is read like a class body (`named at` above).
        space = node.args[2]
        literal = isinstance(space, ast.Dict) and all(
            isinstance(k, ast.Constant) for k in space.keys
        )
        return not literal
    if name == "new_class":
        return True
    if name == "__new__":  # type.__new__(mcs, name, bases, namespace)
        return len(node.args) >= 4
    if name == "setattr" and len(node.args) >= 2:
        return not isinstance(node.args[1], ast.Constant)
    return False


def _classes(tree: ast.Module) -> Iterator[tuple[str, ast.ClassDef]]:
    """Every class statement with its qualname (nested and local ones too)."""

    def walk(body: Iterable[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.ClassDef]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield prefix + node.name, node
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(node.body, f"{prefix}{node.name}.<locals>.")

    return walk(tree.body, "")


def _defined_in(node: ast.ClassDef) -> set[str]:
    """The names a class body binds itself: its methods and assignments.

    A decorated class or one with a metaclass may be given any dunder
    (`@dataclass(order=True)` writes `__lt__`): it counts with all of them.
    """
    if node.decorator_list or node.keywords:
        return set(_DUNDERS)
    names: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _names_in(node: ast.AST) -> set[str]:
    """The identifiers and string constants one AST node itself holds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return {node.value}
    if isinstance(node, ast.keyword) and node.arg:
        return {node.arg}
    return set()


def defined_classes(source: str) -> frozenset[str]:
    """Pure: the qualnames of every class a module's source defines (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(qualname for qualname, _ in _classes(tree))


# The deciders that are handed the judge's value: a comparison, `in`, arithmetic, a
# metaclass's isinstance/issubclass. One that never reads it cannot have compared anything.
# (`in` by `__getitem__` hands it the worker's own indexes, not the judge's value.)
_OPERAND_DUNDERS = _DUNDERS - {"__bool__", "__len__", "__hash__", "__iter__", "__getitem__"}


def operand_blind(source: str) -> dict[str, frozenset[str]]:
    """Pure: class qualname -> the deciding dunders it answers without reading their operand.

    `def __eq__(self, other): return True`, `__sub__ = lambda self, other: 0`: a
    method that never loads its second parameter (nor `locals()`/`vars()`) answers
    the same whatever the property compares it with, an always-equal matcher in all
    but name (redteam9: the base's own `ANY` handed back by a changed line). A body
    that only returns `NotImplemented` hands the decision back and is not counted. A
    base class of the same file, named plainly, lends its blind dunders to a class
    that does not define them itself.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    own: dict[str, tuple[set[str], set[str], list[str]]] = {}
    for qualname, node in _classes(tree):
        blind: set[str] = set()
        seen: set[str] = set()
        for stmt in node.body:
            for name, fn in _dunder_functions(stmt):
                if name in _OPERAND_DUNDERS:
                    seen.add(name)
                    if _ignores_operand(fn):
                        blind.add(name)
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        own[qualname] = (blind, seen, bases)

    def resolved(qualname: str, depth: int = 0) -> set[str]:
        blind, seen, bases = own[qualname]
        found = set(blind)
        if depth < 8:
            for base in bases:
                if base in own and base != qualname:
                    found |= resolved(base, depth + 1) - seen
        return found

    return {q: frozenset(found) for q in own if (found := resolved(q))}


def _dunder_functions(
    stmt: ast.stmt,
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda]]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        yield stmt.name, stmt
    elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                yield target.id, stmt.value


def _ignores_operand(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    params = [*fn.args.posonlyargs, *fn.args.args]
    if len(params) < 2 or fn.args.vararg is not None:
        return False
    operand = params[1].arg
    body: list[ast.AST] = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    if not isinstance(fn, ast.Lambda) and (
        # An abstract method, one that refuses, or one that hands the decision back.
        any("abstract" in ast.unparse(d) for d in fn.decorator_list)
        or all(_returns_not_implemented(s) or isinstance(s, ast.Raise) for s in fn.body)
    ):
        return False
    for part in body:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and node.id in (operand, "locals", "vars"):
                return False
    return True


def _returns_not_implemented(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Return)
        and isinstance(stmt.value, ast.Name)
        and stmt.value.id == "NotImplemented"
    ) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


def claimed_modules(claim: str) -> list[str]:
    """Pure: the module names a claimed `module.Qual.Name` may split into, longest first."""
    parts = claim.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def patch_dunders(
    dunders: Mapping[str, Sequence[str]],
    files: Sequence[ChangedFile],
    pythonpath: Sequence[str],
    *,
    operations: Mapping[str, Sequence[Sequence[str]]] | None = None,
    tree_classes: Mapping[str, bool] | None = None,
    tree_names: Collection[str] = (),
    blind: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Pure: the code's dunders a property's outcome rested on, of classes the patch changes.

    `operations` is the judge's own record (node id -> (operation, the class
    the worker claims for the handle)): an operation counts against every
    place the patch defines or names a dunder that may answer it
    (`dunder_sources`), whatever the worker claims, so a lying worker hides
    nothing; a claim adds the class it names if the patch changed it, is a
    class that crosses as data (a lie), or is in a module of the tree
    (`tree_names`) that does not define it at head (`tree_classes`: claim ->
    defined). `dunders` is the worker's record (node id -> "module.Class.__eq__"),
    which can only add. A class the patch leaves alone answering `==` is the
    base's behaviour, not the patch's (an always-equal object the patch adds
    must not decide). Nor may a class, changed or not, in the tree or installed,
    whose dunder never reads what it is compared with (`blind`, claim -> such
    dunders, from `operand_blind` over the class's source).
    """
    classes: dict[str, str] = {}
    for f in files:
        module = module_name(f.path, pythonpath)
        if module is None:
            continue
        for qualname, line in changed_classes(f).items():
            classes[f"{module}.{qualname}"] = f"{f.path}:{line}"
    found: dict[str, set[str]] = {}
    for nodeid, names in dunders.items():
        for name in names:
            owner, _, dunder = name.rpartition(".")
            if owner in classes:
                found.setdefault(f"{name} ({classes[owner]})", set()).add(nodeid)
            elif dunder in (blind or {}).get(owner, ()):
                # The class that answered, as the worker saw it then: the judge's claim
                # is asked once a handle, and an object may change its __class__ after.
                found.setdefault(f"{name}, {OPERAND_BLIND}", set()).add(nodeid)
    sources = dunder_sources(files, pythonpath)
    imported = changed_imports(files)
    for nodeid, ops in (operations or {}).items():
        for op, claim in ops:
            for name in sorted(DECIDERS.get(op, ())):
                for where in sources.get(name, ()):
                    found.setdefault(where, set()).add(nodeid)
            if claim == VIEW_CLAIM:
                continue  # its base type answered, in the judge: no class to hold by name
            # A class the patch changed is held below already, with its place.
            deaf = set((blind or {}).get(claim, ())) if claim not in classes else set()
            for name in sorted(DECIDERS.get(op, frozenset()) & deaf):
                found.setdefault(f"{claim}.{name}, {OPERAND_BLIND}", set()).add(nodeid)
            said = _claim_held(
                claim, op, classes, tree_classes or {}, tree_names, imported=imported
            )
            if said is not None:
                found.setdefault(said, set()).add(nodeid)
    return [
        f"{what}: {', '.join(sorted(nodeids)[:3])}" + (" and more" if len(nodeids) > 3 else "")
        for what, nodeids in sorted(found.items())
    ]


def _claim_held(
    claim: str,
    op: str,
    classes: Mapping[str, str],
    tree_classes: Mapping[str, bool],
    tree_names: Collection[str],
    *,
    imported: Mapping[str, str] | None = None,
) -> str | None:
    """Why the class the worker names for a handle holds the verdict, or None (the base's)."""
    dunder = dunder_name(op)
    if claim in classes:
        return f"{claim}.{dunder} ({classes[claim]})"
    if claim in CROSS_AS_DATA:
        return f"{claim}.{dunder} (the worker named a class that crosses as data)"
    parts = claim.split(".")
    if len(parts) < 2 or not all(p.isidentifier() or p == "<locals>" for p in parts):
        return f"{claim[:80]!r}.{dunder} (the worker named no class)"
    if parts[0] in tree_names and not tree_classes.get(claim, False):
        return f"{claim}.{dunder} (a class the head's tree does not define)"
    if parts[0] not in tree_names:
        # A class from outside the tree the patch brings in (`unittest.mock.ANY` equals
        # anything): the base's code never handed it over, so its answer is the patch's.
        for module, where in sorted((imported or {}).items()):
            if claim.startswith(module + "."):
                return f"{claim}.{dunder} (a class of {module}, imported at {where})"
    return None


def changed_imports(files: Sequence[ChangedFile]) -> dict[str, str]:
    """Pure: absolute module names a changed line imports -> where (`file:line`).

    `import a.b`, `from a import b` (a and a.b), and `__import__`/`import_module`
    with a literal name. Relative imports stay inside the tree.
    """
    found: dict[str, str] = {}
    for f in sorted(files, key=lambda f: f.path):
        try:
            tree = parsed.parse(f.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            line = getattr(node, "lineno", None)
            if line is None:
                continue
            span = range(line, (getattr(node, "end_lineno", None) or line) + 1)
            if not any(n in f.changed for n in span):
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Call) and (literal := _literal_import(node)) is not None:
                names = [literal]
            for name in names:
                found.setdefault(name, f"{f.path}:{line}")
    return found


def _literal_import(node: ast.Call) -> str | None:
    """The absolute module an `__import__("m")`/`import_module("m")` call names, if literal."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    first = node.args[0] if node.args else None
    if name not in ("__import__", "import_module") or not isinstance(first, ast.Constant):
        return None
    value = first.value
    return value if type(value) is str and not value.startswith(".") else None


def below_threshold(summary: Mapping[str, Any], minimum: float) -> str | None:
    """The properties lane's reason when fewer changed lines ran than the ledger asks."""
    total, ran = int(summary["total"]), int(summary["executed"])
    if minimum <= 0 or total == 0 or ran >= minimum * total:
        return None
    ranges = list(summary["unexecuted"])
    shown = ", ".join(ranges[:MAX_RANGES_IN_REASON])
    more = len(ranges) - MAX_RANGES_IN_REASON
    return f"the properties never ran {total - ran} of {total} changed lines: {shown}" + (
        f" and {more} more ranges" if more > 0 else ""
    )


# --- the mutants -------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One small edit of a changed line: text[start:end] becomes `replacement`."""

    path: str
    line: int  # where the edit is, at head
    statement: int  # the first line of its statement: what coverage says ran
    operator: str
    what: str  # for the reviewer: "< -> >=", "3 -> 4", "dropped: total += x"
    start: int  # character offsets into the file's text at head
    end: int
    replacement: str
    # The span (offsets) of the innermost arm the edit lies in (`arms`); (-1, -1): none.
    arm: tuple[int, int] = (-1, -1)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.start}:{self.operator}"

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def _short(text: str, limit: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _Offsets:
    """ast positions (line, UTF-8 byte column) -> offsets into the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]

    def __call__(self, lineno: int, col: int) -> int:
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        prefix = self.text[start:end].encode("utf-8")[:col].decode("utf-8", "ignore")
        return start + len(prefix)

    def position(self, offset: int) -> tuple[int, int]:
        """The inverse: an offset's (line, UTF-8 byte column), as ast gives them."""
        line = bisect.bisect_right(self.starts, offset)
        return line, len(self.text[self.starts[line - 1] : offset].encode("utf-8"))


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes no mutant touches: docstrings, f-string parts, annotations."""
    skip: set[int] = set()

    def all_of(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                all_of(body[0])
        if isinstance(node, ast.JoinedStr):
            all_of(node)
        elif isinstance(node, ast.arg):
            all_of(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            all_of(node.returns)
        elif isinstance(node, ast.AnnAssign):
            all_of(node.annotation)
    return skip


def _changed_constant(value: object) -> tuple[object, str] | None:
    if isinstance(value, bool):
        return (not value), f"{value} -> {not value}"
    if isinstance(value, int):
        return value + 1, f"{value} -> {value + 1}"
    if isinstance(value, float) and math.isfinite(value + 1.0):
        return value + 1.0, f"{value!r} -> {value + 1.0!r}"
    if isinstance(value, str):
        text = "" if value else "x"
        return text, f"{_short(repr(value), 24)} -> {text!r}"
    if isinstance(value, bytes):
        data = b"" if value else b"x"
        return data, f"{_short(repr(value), 24)} -> {data!r}"
    return None


def arms(tree: ast.Module) -> list[ast.expr | ast.stmt]:
    """Pure: code that need not run when the line it is on runs (red team, session 12).

    Coverage counts lines, so `if len(xs) > 5000: return 0` on one line, or
    `0 if len(xs) > 5000 else sum(xs)`, ran as soon as its test did. An arm:
    either branch of `a if c else b`, every operand of `and`/`or` after the
    first, a lambda's body, a comprehension's element, a `case` guard, and a
    statement of a compound statement's (or a `case`'s) body on the header's
    own line (`if c: return 0`, `def f(): return 0`, `case []: return 0`).
    """
    found: list[ast.expr | ast.stmt] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):
            found += [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            found += node.values[1:]
        elif isinstance(node, ast.Lambda):
            found.append(node.body)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            found.append(node.elt)
        elif isinstance(node, ast.DictComp):
            found += [node.key, node.value]
        elif isinstance(node, _HEADED):
            found += [s for s in node.body if s.lineno <= _header_end(node)]
        elif isinstance(node, ast.Match):
            for case in node.cases:
                header = case.guard or case.pattern
                found += [case.guard] if case.guard else []
                found += [s for s in case.body if s.lineno <= (header.end_lineno or s.lineno)]
    return found


_HEADED = (
    ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try,
    ast.FunctionDef, ast.AsyncFunctionDef,
)  # fmt: skip


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header (its test, target, items)."""
    parts: list[ast.AST] = []
    if isinstance(node, ast.If | ast.While):
        parts = [node.test]
    elif isinstance(node, ast.For | ast.AsyncFor):
        parts = [node.iter]
    elif isinstance(node, ast.With | ast.AsyncWith):
        parts = [i.optional_vars or i.context_expr for i in node.items]
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        parts = [node.args, *([node.returns] if node.returns else [])]
    return max([node.lineno, *(getattr(p, "end_lineno", None) or node.lineno for p in parts)])


# candidates() of the ChangedFiles this process holds (issue 20): the gate lists them for the
# mutation phase's plan before the run and chooses among them after it, each three walks of
# the whole module. Keyed by identity, the file held so its id is not reused; bounded.
_CANDIDATES_LIMIT = 64
_candidates_of: dict[int, tuple[ChangedFile, tuple[Mutant, ...]]] = {}


def candidates(f: ChangedFile) -> list[Mutant]:
    """Every mutant of f's changed lines, in source order (before any is chosen)."""
    held = _candidates_of.get(id(f))
    if held is not None and held[0] is f:
        return list(held[1])
    found = _candidates(f)
    if len(_candidates_of) >= _CANDIDATES_LIMIT:
        del _candidates_of[next(iter(_candidates_of))]  # the oldest
    _candidates_of[id(f)] = (f, tuple(found))
    return found


def _candidates(f: ChangedFile) -> list[Mutant]:
    if not f.changed:
        return []
    try:
        tree = parsed.parse(f.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    skip = _skipped(tree)
    pos = _Offsets(f.text)
    found: list[Mutant] = []

    def touched(node: ast.expr | ast.stmt) -> bool:
        last = node.end_lineno or node.lineno
        return id(node) not in skip and any(n in f.changed for n in range(node.lineno, last + 1))

    def span(node: ast.expr | ast.stmt) -> tuple[int, int]:
        start = pos(node.lineno, node.col_offset)
        return start, pos(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)

    # An arm of a changed statement, on a changed line or not: a patch that changes only
    # the test line of a three-line `a if test else b` changes when `a` runs.
    armed = [
        a
        for a in arms(tree)
        if id(a) not in skip and (touched(a) or f.statement_of(a.lineno) in f.lines)
    ]
    arm_spans = sorted(span(a) for a in armed)

    def arm_of(start: int, end: int) -> tuple[int, int]:
        # The innermost: arms nest, so the narrowest of those holding the edit.
        holding = [(a, b) for a, b in arm_spans if a <= start and end <= b]
        return min(holding, key=lambda ab: ab[1] - ab[0], default=(-1, -1))

    def add(node: ast.expr | ast.stmt, operator: str, what: str, replacement: str) -> None:
        start, end = span(node)
        statement = f.statement_of(node.lineno)
        found.append(
            Mutant(
                f.path,
                node.lineno,
                statement,
                operator,
                what,
                start,
                end,
                replacement,
                arm_of(start, end),
            )
        )

    raise_text = ast.unparse(oracle.raise_statement(RAISE_MESSAGE))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and touched(node):
            new_op = oracle.flipped(node.ops[0])
            if new_op is None:
                continue
            flipped = ast.Compare(node.left, [new_op, *node.ops[1:]], node.comparators)
            if (text := _unparse(flipped)) is not None:
                what = f"{_SYMBOL[type(node.ops[0])]} -> {_SYMBOL[type(new_op)]}"
                add(node, "flip_comparison", what, text)
        elif isinstance(node, ast.Constant) and touched(node):
            changed = _changed_constant(node.value)
            if changed is not None:
                add(node, "change_constant", changed[1], repr(changed[0]))
        elif isinstance(node, _DROPPABLE) and touched(node) and _droppable(node):
            if (text := _unparse(node)) is None:
                continue
            shown = _short(text)
            add(node, "drop_statement", f"dropped: {shown}", "pass")
            if not isinstance(node, ast.Raise):
                add(node, "raise", f"raise instead of: {shown}", raise_text)
    for arm in armed:
        # Without its yield a generator is a plain function, whether or not the arm runs.
        generator = any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(arm))
        if isinstance(arm, ast.expr) and not generator:
            if (text := _unparse(arm)) is None:
                continue
            add(arm, "raise_arm", f"raise where it runs: {_short(text)}", RAISE_EXPRESSION)
    return sorted(found, key=lambda m: (m.start, m.end, _TIER[m.operator]))


def _unparse(node: ast.AST) -> str | None:
    """ast.unparse, or None for a node nested too deep for it (a 10,000-term sum)."""
    try:
        return ast.unparse(node)
    except RecursionError:
        return None


def _droppable(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return False  # a bare string is a comment
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return False  # a bare annotation does nothing to drop
    # Without its yield a generator is a plain function, whether or not the line runs.
    return not any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(stmt))


def is_arm_check(m: Mutant) -> bool:
    """Whether m dies exactly when its arm runs: the arm's own `raise`."""
    return m.operator in _ARM_CHECKS and (m.start, m.end) == m.arm


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()


def ranked(
    mutants: Iterable[Mutant], seed: int, executed: Callable[[Mutant], bool]
) -> list[Mutant]:
    """Every mutant in the order they are tried: round-robin over changed statements.

    Every mutant of a statement the properties executed comes first (one
    elsewhere survives without telling anything the unexecuted ranges do not
    already say); then the rest, round-robin too. Within a round the order is a
    hash of the seed and the statement, within a statement the stronger
    operator first. A hash, not `random`: a new mutant elsewhere does not
    reshuffle the others, and no Python version changes the order.
    """
    groups: dict[tuple[str, int, tuple[int, int]], list[Mutant]] = {}
    for m in mutants:
        groups.setdefault((m.path, m.statement, m.arm), []).append(m)
    for group in groups.values():
        # In an arm, what dies exactly when the arm runs comes first (`choose` tries it anyway).
        group.sort(key=lambda m: (not is_arm_check(m), _TIER[m.operator], _rank(seed, m.id)))
    out: list[Mutant] = []
    for ran in (True, False):
        keys = [k for k in groups if executed(groups[k][0]) is ran]
        order = sorted(keys, key=lambda k: _rank(seed, f"{k[0]}:{k[1]}:{k[2]}"))
        depth = max((len(groups[k]) for k in keys), default=0)
        for round_ in range(depth):
            out += [groups[k][round_] for k in order if round_ < len(groups[k])]
    return out


def mutated(f: ChangedFile, m: Mutant) -> bytes | None:
    """The file's bytes with the mutant applied; None when the edit would not parse.

    Only the top-level statement holding the edit is parsed again where it
    has whole lines to itself (issue 20: each mutant re-parsed all of a
    5,000-line module): the lines around it are the head's complete
    statements, unchanged, so the file parses when that segment does. A
    segment that does not parse alone is asked of the whole file.
    """
    text = m.apply(f.text)
    try:
        with _quiet():
            segment = _edited_segment(f, m, text)
            if segment is None or not _parses(segment):
                ast.parse(text)
        return text.encode(f.encoding)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeEncodeError):
        return None


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _edited_segment(f: ChangedFile, m: Mutant, text: str) -> str | None:
    """The mutated lines of the top-level statement holding `m`, or None if none holds it alone."""
    try:
        body = parsed.parse(f.text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = [0] + [x.end() for x in _LINE_END.finditer(f.text)]
    first_line = bisect.bisect_right(starts, m.start)
    last_line = bisect.bisect_right(starts, max(m.start, m.end - 1))
    spans = [
        (min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", ()))]), n.end_lineno)
        for n in body
    ]
    for i, (top, bottom) in enumerate(spans):
        if bottom is None or not top <= first_line <= last_line <= bottom:
            continue
        # Its lines its own: no statement before or after it on a line it spans (`a = 1; b`).
        alone = (i == 0 or (spans[i - 1][1] or top) < top) and (
            i + 1 == len(spans) or spans[i + 1][0] > bottom
        )
        if not alone or bottom >= len(starts):
            return None
        end = starts[bottom] + len(m.replacement) - (m.end - m.start)
        if text[end - 1 : end] not in ("\n", "\r"):
            return None  # the edit took the statement's line end
        segment = text[starts[top - 1] : end]
        if segment.rstrip("\r\n").endswith("\\"):
            return None  # a trailing backslash joins the next statement's line to it
        return segment
    return None


def choose(
    files: Sequence[ChangedFile],
    seed: int,
    limit: int,
    executed: Callable[[Mutant], bool],
) -> list[tuple[Mutant, bytes]]:
    """Up to `limit` mutants that parse, in source order: the same diff and seed, the same list."""
    by_path = {f.path: f for f in files}
    chosen: list[tuple[Mutant, bytes]] = []
    every = [m for f in sorted(files, key=lambda f: f.path) for m in candidates(f)]
    order = ranked(every, seed, executed)
    # Each arm of an executed statement is tried whatever the limit: its line counts
    # as exercised only with a kill of its own (unexercised). At most one an arm.
    checked: set[tuple[str, int, tuple[int, int]]] = set()
    for m in order:
        key = (m.path, m.statement, m.arm)
        if limit > 0 and is_arm_check(m) and key not in checked and executed(m):
            data = mutated(by_path[m.path], m)
            if data is not None:
                chosen.append((m, data))
                checked.add(key)
    taken = {m.id for m, _ in chosen}
    extra = 0
    for m in order:
        if extra >= limit:
            break
        if m.id in taken:
            continue
        data = mutated(by_path[m.path], m)
        if data is not None:
            chosen.append((m, data))
            extra += 1
    return sorted(chosen, key=lambda c: (c[0].path, c[0].start, _TIER[c[0].operator]))


def node_index(
    executed: Mapping[str, Mapping[str, Sequence[int]]], files: Sequence[ChangedFile]
) -> dict[tuple[str, int], frozenset[str]]:
    """(path, statement) -> the node ids whose run executed it ("" and the like: no test)."""
    by_path = {f.path: f for f in files}
    index: dict[tuple[str, int], set[str]] = {}
    for nodeid, per_node in executed.items():
        for path, numbers in per_node.items():
            if (f := by_path.get(path)) is not None:
                for n in numbers:
                    index.setdefault((path, f.statement_of(n)), set()).add(nodeid)
    return {k: frozenset(v) for k, v in index.items()}


def runners(
    m: Mutant, index: Mapping[tuple[str, int], frozenset[str]], collected: Iterable[str]
) -> tuple[str, ...]:
    """The property node ids to run against m: those that executed its statement.

    A line executed outside any test (a module's body at import, a default
    argument) affects every property: then all of them.
    """
    every = sorted(set(collected))
    hit = index.get((m.path, m.statement), frozenset())
    if any(n not in every for n in hit):
        return tuple(every)
    return tuple(sorted(hit))


class Fate(enum.Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    NOT_TRIED = "not_tried"


def fate(result: testrun.TestRun, nodeids: Sequence[str], cut_off: bool) -> Fate:
    """A mutant's run -> its fate. Past the review's budget it was not tried, never killed."""
    if result.timed_out:
        return Fate.NOT_TRIED if cut_off else Fate.KILLED
    if not result.finished or result.collect_errors or result.exitstatus != 0:
        return Fate.KILLED
    passed = {o.nodeid for o in result.outcomes if o.when == "call" and o.outcome == "passed"}
    failed = any(o.outcome == "failed" for o in result.outcomes)
    return Fate.KILLED if failed or not set(nodeids) <= passed else Fate.SURVIVED


def mutants_summary(results: Sequence[tuple[Mutant, Fate]]) -> dict[str, Any]:
    """`{killed, total, not_tried, survivors}` (SPEC verdict.json review.properties.mutants)."""
    ordered = sorted(results, key=lambda r: (r[0].path, r[0].start, _TIER[r[0].operator]))
    return {
        "killed": sum(f is Fate.KILLED for _, f in results),
        "total": len(results),
        "not_tried": sum(f is Fate.NOT_TRIED for _, f in results),
        "survivors": [m.describe() for m, f in ordered if f is Fate.SURVIVED],
    }


# --- mutant schemata (issue 20) ------------------------------------------------

NULL = "null"  # a site that changes nothing: its kill voids the phase's kills
_STATEMENT_OPERATORS = frozenset({"drop_statement", "raise"})
_EXPRESSION_NODES: dict[str, type[ast.expr]] = {
    "flip_comparison": ast.Compare,
    "change_constant": ast.Constant,
    "raise_arm": ast.expr,
}
_MIRROR: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.Gt: ast.Lt,
    ast.LtE: ast.GtE,
    ast.GtE: ast.LtE,
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
}


def null_of(m: Mutant, text: str) -> Mutant:
    """A null mutant on m's span: spelled as a site like m's, it changes nothing."""
    return dataclasses.replace(
        m,
        operator=f"{NULL}:{m.operator}",
        what="changes nothing",
        replacement=text[m.start : m.end],
    )


def is_null(m: Mutant) -> bool:
    return m.operator.startswith(f"{NULL}:")


def _kind(m: Mutant) -> str:
    operator = m.operator.removeprefix(f"{NULL}:")
    return "stmt" if operator in _STATEMENT_OPERATORS else "expr"


def respellable(m: Mutant, text: str) -> bool:
    """Whether a null mutant on m's span is spelled differently from the original (`b > a`)."""
    try:
        with _quiet():
            node = ast.parse(f"({text[m.start : m.end]})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _mirrorable(node)


def _mirrorable(node: ast.AST) -> bool:
    simple = (ast.Name, ast.Constant)
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and type(node.ops[0]) in _MIRROR
        and isinstance(node.left, simple)
        and isinstance(node.comparators[0], simple)
    )


def _respelled(node: ast.AST) -> ast.AST | list[ast.stmt]:
    """node as a null mutant runs it: `a < b` as `b > a` where that is the same, else a copy.

    A branch spelled exactly as the original is the cheapest null to spot.
    """
    if isinstance(node, ast.Compare) and _mirrorable(node):
        mirrored = _MIRROR[type(node.ops[0])]()
        return ast.Compare(
            copy.deepcopy(node.comparators[0]), [mirrored], [copy.deepcopy(node.left)]
        )
    copied = copy.deepcopy(node)
    return [copied] if isinstance(copied, ast.stmt) else copied


def site(text: str, m: Mutant, switch: str, token: str) -> protocol.Site | None:
    """m as a site of its file's schema, behind `switch == token` (protocol.schema_tree).

    The worker compiles the schema from the file's text, handed on its start's
    stdin; the file on disk stays the original (red team, session 17). A null
    mutant is respelled where that is the same (`b > a`), else the node's own
    code. None: no single node holds the edit, no conditional can (a constant
    in a `match` pattern), or it does not compile.
    """
    if not switch.isidentifier() or switch in text:
        return None
    pos = _Offsets(text)
    first, col = pos.position(m.start)
    last, end_col = pos.position(m.end)
    kind = _kind(m)
    if is_null(m):
        name, replacement = "", ""
        if respellable(m, text):
            node = ast.parse(f"({text[m.start : m.end]})", mode="eval").body
            replacement = ast.unparse(_respelled(node))  # type: ignore[arg-type]
    else:
        wanted = _EXPRESSION_NODES.get(m.operator, ast.expr)
        name = "" if kind == "stmt" or wanted is ast.expr else wanted.__name__
        replacement = m.replacement
    found: protocol.Site = (kind, name, (first, col, last, end_col), replacement, token)
    try:
        with _quiet():
            # Checked on the top-level statement that holds it (and the future imports): a
            # whole module's compile per mutant costs what the worker's own compile does.
            held = _blanked(text, _top_level_lines(parsed.parse(text), first, last))
            tree = protocol.schema_tree((m.path, held, switch, (found,)))
            compile(tree, m.path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    return found


def schema(path: str, text: str, switch: str, sites: Sequence[protocol.Site]) -> bool:
    """Whether the file's schema of these sites compiles as a whole (each did alone)."""
    try:
        with _quiet():
            compile(protocol.schema_tree((path, text, switch, tuple(sites))), path, "exec")
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return False
    return True


def _top_level_lines(tree: ast.Module, first: int, last: int) -> frozenset[int]:
    """The lines of the module's statement that holds lines first..last, decorators too, and
    of its `from __future__` imports (they change how the rest compiles)."""
    lines: set[int] = set()
    for stmt in tree.body:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        end = stmt.end_lineno or stmt.lineno
        future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if future or (start <= first and last <= end):
            lines.update(range(start, end + 1))
    return frozenset(lines)
