"""Pure oracle strength: which functions a property file exercises, and AST mutants of them."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# The mutant set (docs/oracle.md): small, deterministic, one change a mutant.
OPERATORS = ("return_constant", "return_input", "drop_last", "flip_comparison", "raise")
MAX_COMPARISONS = 3  # flipped comparisons per function: the first few are enough to tell

# Shared with review.py (issue 14): the flipped comparison and the raise.
FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def flipped(op: ast.cmpop) -> ast.cmpop | None:
    """The comparison operator a flip_comparison mutant puts in op's place (None: none)."""
    kind = FLIP.get(type(op))
    return None if kind is None else kind()


def raise_statement(message: str) -> ast.Raise:
    """`raise RuntimeError(message)`: what the raise mutant puts in a statement's place."""
    return ast.Raise(ast.Call(ast.Name("RuntimeError", ast.Load()), [ast.Constant(message)], []))


@dataclass(frozen=True)
class Target:
    """A module file of the code under test and the names in it a property file uses."""

    path: str
    names: tuple[str, ...] | None  # None: the whole module was imported


@dataclass(frozen=True)
class Mutant:
    path: str
    function: str  # "name" or "Class.name"
    operator: str
    lineno: int
    source: str  # the whole module, mutated
    nth: int = 0  # which comparison of the function, for flip_comparison (1-based)

    @property
    def id(self) -> str:
        which = f"#{self.nth}" if self.nth else ""
        return f"{self.path}::{self.function}:{self.operator}{which}@{self.lineno}"


def imports(source: bytes) -> list[tuple[str, tuple[str, ...] | None]]:
    """(module, names) for each absolute import; names None for `import module`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, tuple[str, ...] | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, tuple(a.name for a in node.names if a.name != "*") or None))
    return found


def module_file(dotted: str, pythonpath: Sequence[str], files: Iterable[str]) -> str | None:
    """The file `import dotted` would load from the tree (first pythonpath entry wins)."""
    present = set(files)
    rel = dotted.replace(".", "/")
    for root in pythonpath:
        prefix = f"{root.rstrip('/')}/" if root not in ("", ".") else ""
        for candidate in (f"{prefix}{rel}.py", f"{prefix}{rel}/__init__.py"):
            if candidate in present:
                return candidate
    return None


def targets(source: bytes, resolve: Callable[[str], str | None]) -> list[Target]:
    """The code a property file exercises: what it imports from the tested pythonpath.

    `from m import f, g` targets f and g in m (a class: its methods);
    `import m`, or `from pkg import m` where m is a module, targets every
    function of m. Imports that resolve to nothing in the tree (hypothesis,
    the standard library) are not code under test.
    """
    found: dict[str, set[str] | None] = {}

    def add(path: str, names: Iterable[str] | None) -> None:
        if names is None or found.get(path, set()) is None:
            found[path] = None
        else:
            current = found.setdefault(path, set())
            assert current is not None
            current.update(names)

    for module, names in imports(source):
        if names is None:
            if (path := resolve(module)) is not None:
                add(path, None)
            continue
        plain = []
        for name in names:
            if (sub := resolve(f"{module}.{name}")) is not None:
                add(sub, None)
            else:
                plain.append(name)
        if plain and (path := resolve(module)) is not None:
            add(path, plain)
    return [
        Target(path, None if names is None else tuple(sorted(names)))
        for path, names in sorted(found.items())
    ]


def _functions(tree: ast.Module, names: tuple[str, ...] | None) -> list[tuple[str, _Function]]:
    chosen = []
    for node in tree.body:
        if isinstance(node, _Function) and (names is None or node.name in names):
            chosen.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and (names is None or node.name in names):
            chosen += [
                (f"{node.name}.{item.name}", item)
                for item in node.body
                if isinstance(item, _Function)
            ]
    return chosen


def _find(tree: ast.Module, qualname: str) -> _Function:
    for name, node in _functions(tree, None):
        if name == qualname:
            return node
    raise AssertionError(f"unreachable: {qualname}")


def _first_input(fn: _Function) -> str | None:
    params = [*fn.args.posonlyargs, *fn.args.args]
    decorators = {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}
    skip = 0 if "staticmethod" in decorators else 1 if params and params[0].arg in (
        "self", "cls"
    ) else 0  # fmt: skip
    rest = params[skip:]
    return rest[0].arg if rest else None


_Edit = tuple[str, int, int, Callable[[_Function], None]]


def _edits(fn: _Function) -> list[_Edit]:
    """(operator, line, nth comparison, how to apply it to a fresh copy of fn)."""
    edits: list[_Edit] = []
    line = fn.lineno

    def body(stmt: ast.stmt) -> Callable[[_Function], None]:
        def apply(target: _Function) -> None:
            target.body = [stmt]

        return apply

    edits.append(("return_constant", line, 0, body(ast.Return(ast.Constant(None)))))
    if (arg := _first_input(fn)) is not None:
        edits.append(("return_input", line, 0, body(ast.Return(ast.Name(arg, ast.Load())))))
    if any(isinstance(n, ast.Return) and n.value is not None for n in _own_nodes(fn)):

        def drop_last(target: _Function) -> None:
            for node in _own_nodes(target):
                if isinstance(node, ast.Return) and node.value is not None:
                    node.value = ast.Subscript(
                        node.value, ast.Slice(upper=ast.Constant(-1)), ast.Load()
                    )

        edits.append(("drop_last", line, 0, drop_last))
    compares = [n for n in _own_nodes(fn) if isinstance(n, ast.Compare)]
    for index, node in enumerate(compares[:MAX_COMPARISONS]):
        if type(node.ops[0]) not in FLIP:
            continue

        def flip(target: _Function, index: int = index) -> None:
            found = [n for n in _own_nodes(target) if isinstance(n, ast.Compare)][index]
            found.ops[0] = FLIP[type(found.ops[0])]()

        edits.append(("flip_comparison", node.lineno, index + 1, flip))
    edits.append(("raise", line, 0, body(raise_statement("patchjudge oracle mutant"))))
    return edits


def _own_nodes(fn: _Function) -> list[ast.AST]:
    """Nodes of fn's body, not of functions or classes nested in it."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop(0)
        out.append(node)
        if isinstance(node, _Function | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def mutants(path: str, source: bytes, names: tuple[str, ...] | None = None) -> list[Mutant]:
    """Every mutant of the chosen functions of one module, in source order."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for qualname, fn in _functions(tree, names):
        for operator, lineno, nth, apply in _edits(fn):
            copy_ = copy.deepcopy(tree)
            apply(_find(copy_, qualname))
            ast.fix_missing_locations(copy_)
            source_ = ast.unparse(copy_) + "\n"
            out.append(Mutant(path, qualname, operator, lineno, source_, nth))
    return out


@dataclass(frozen=True)
class Audit:
    """Kill counts per property node id; a property that kills nothing fails."""

    kills: dict[str, int]
    offered: dict[str, int]  # mutants each property was run against

    def weak(self) -> list[str]:
        return sorted(n for n, k in self.kills.items() if k == 0)


def audit(results: Iterable[tuple[Mutant, Iterable[str], Iterable[str]]]) -> Audit:
    """Pure: (mutant, node ids run against it, node ids that failed) -> kill counts."""
    kills: dict[str, int] = {}
    offered: dict[str, int] = {}
    for _mutant, ran, failed in results:
        dead = set(failed)
        for nodeid in ran:
            offered[nodeid] = offered.get(nodeid, 0) + 1
            kills[nodeid] = kills.get(nodeid, 0) + (nodeid in dead)
    return Audit(kills, offered)
