"""The oracle's pure half: what a property exercises, and the mutants of it."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import oracle

CODE = b'''
def total(xs):
    """Sum."""
    if len(xs) == 0:
        return 0
    return sum(xs)


def _helper(a, b):
    return a < b


class Box:
    def get(self, key):
        return key in self.__dict__

    @staticmethod
    def make(value):
        return Box()


def untouched():
    pass
'''

FILES = ["src/calc/__init__.py", "src/calc/extra.py", "src/solo.py", "tests/test_x.py"]


def resolve(module: str) -> str | None:
    return oracle.module_file(module, ["src"], FILES)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"from calc import total\n", [oracle.Target("src/calc/__init__.py", ("total",))]),
        (b"import calc\n", [oracle.Target("src/calc/__init__.py", None)]),
        (b"from calc import extra\n", [oracle.Target("src/calc/extra.py", None)]),
        (
            b"from calc import total, extra\nfrom calc import Box\n",
            [
                oracle.Target("src/calc/__init__.py", ("Box", "total")),
                oracle.Target("src/calc/extra.py", None),
            ],
        ),
        (
            b"import solo\nfrom hypothesis import given\nimport json\n",
            [oracle.Target("src/solo.py", None)],
        ),
        (b"from . import calc\n", []),  # relative: not on the tested pythonpath
        (b"def broken(:\n", []),
    ],
)
def test_targets_are_what_the_property_imports_from_the_tree(
    source: bytes, expected: list[oracle.Target]
) -> None:
    assert oracle.targets(source, resolve) == expected


def test_module_file_follows_pythonpath_order() -> None:
    files = ["lib/m.py", "src/m/__init__.py"]
    assert oracle.module_file("m", ["src", "lib"], files) == "src/m/__init__.py"
    assert oracle.module_file("m", ["lib", "src"], files) == "lib/m.py"
    assert oracle.module_file("m", ["."], ["m.py"]) == "m.py"
    assert oracle.module_file("nope", ["src"], files) is None


def _by_id(mutants: list[oracle.Mutant]) -> dict[str, oracle.Mutant]:
    return {m.id.split("::", 1)[1]: m for m in mutants}


def test_every_operator_on_a_function() -> None:
    found = _by_id(oracle.mutants("src/calc/__init__.py", CODE, ("total",)))
    assert sorted(found) == [
        "total:drop_last@2",
        "total:flip_comparison#1@4",
        "total:raise@2",
        "total:return_constant@2",
        "total:return_input@2",
    ]
    ns: dict[str, object] = {}
    exec(found["total:return_constant@2"].source, ns)
    assert ns["total"]([1, 2]) is None  # type: ignore[operator]
    exec(found["total:return_input@2"].source, ns)
    assert ns["total"]([1, 2]) == [1, 2]  # type: ignore[operator]
    exec(found["total:flip_comparison#1@4"].source, ns)
    assert ns["total"]([]) == 0 and ns["total"]([5]) == 0  # type: ignore[operator]
    exec(found["total:raise@2"].source, ns)
    with pytest.raises(RuntimeError, match="oracle mutant"):
        ns["total"]([1])  # type: ignore[operator]
    assert "sum(xs)[:-1]" in found["total:drop_last@2"].source


def test_methods_skip_self_and_whole_modules_take_everything() -> None:
    found = _by_id(oracle.mutants("m.py", CODE, ("Box",)))
    assert "Box.get:return_input@14" in found
    assert "return key" in found["Box.get:return_input@14"].source
    assert "Box.make:return_input@18" in found  # a staticmethod's first argument is input
    everything = {m.function for m in oracle.mutants("m.py", CODE)}
    assert everything == {"total", "_helper", "Box.get", "Box.make", "untouched"}
    # No argument, no return value: only the constant and the raise apply.
    ops = sorted(m.operator for m in oracle.mutants("m.py", CODE, ("untouched",)))
    assert ops == ["raise", "return_constant"]


def test_unparseable_code_has_no_mutants() -> None:
    assert oracle.mutants("m.py", b"def (:\n") == []


_names = st.sampled_from(["a", "b", "xs", "n"])
_exprs = st.sampled_from(["a < b", "a == b", "xs in n", "a is None", "n >= 3", "a != b"])


@settings(max_examples=100, deadline=None)
@given(name=_names, conds=st.lists(_exprs, min_size=0, max_size=5))
def test_each_mutant_parses_and_differs_from_the_original(name: str, conds: list[str]) -> None:
    body = "".join(f"    if {c}:\n        return {name}\n" for c in conds) or "    pass\n"
    source = f"def f(a, b, xs, n):\n{body}    return a\n"
    original = ast.unparse(ast.parse(source))
    found = oracle.mutants("m.py", source.encode())
    assert len(found) == 4 + min(len(conds), oracle.MAX_COMPARISONS)
    assert len({m.source for m in found}) == len(found)
    assert len({m.id for m in found}) == len(found)
    for mutant in found:
        assert mutant.operator in oracle.OPERATORS
        assert ast.unparse(ast.parse(mutant.source)) != original


@pytest.mark.parametrize(
    ("results", "kills", "weak"),
    [
        ([], {}, []),
        ([("m1", ["p", "q"], ["p"])], {"p": 1, "q": 0}, ["q"]),
        ([("m1", ["p"], ["p"]), ("m2", ["p"], ["p"])], {"p": 2}, []),
        ([("m1", ["p"], []), ("m2", ["p"], [])], {"p": 0}, ["p"]),
    ],
)
def test_audit_counts_kills_per_property(
    results: list[tuple[str, list[str], list[str]]], kills: dict[str, int], weak: list[str]
) -> None:
    mutant = oracle.Mutant("m.py", "f", "raise", 1, "")
    audit = oracle.audit((mutant, ran, dead) for _, ran, dead in results)
    assert audit.kills == kills
    assert audit.weak() == weak
