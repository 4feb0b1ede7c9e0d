"""Mutant schemata (issue 20): the source transform, the null mutants and the void rule, pure."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import review, review_run, testrun

SWITCH = "_qzxwvutsr"
SRC = Path(__file__).resolve().parents[2] / "src" / "patchjudge"

CODE = '''"""A module."""
from __future__ import annotations

LIMIT = 3


def f(a, b):
    if a < b:
        return a + LIMIT
    c = a * 2; d = c - b
    if a == 0: return d
    return [x for x in range(d) if x > 1]
'''


def changed(text: str) -> review.ChangedFile:
    f = review.changed_file("m.py", text.encode(), range(1, text.count("\n") + 2))
    assert f is not None
    return f


@contextlib.contextmanager
def switched(value: str | None) -> Iterator[None]:
    if value is not None:
        setattr(builtins, SWITCH, value)
    try:
        yield
    finally:
        if hasattr(builtins, SWITCH):
            delattr(builtins, SWITCH)


def behaviour(source: str, switch: str | None, inputs: list[tuple[int, int]]) -> list[Any]:
    """What the module's `f` does on each input: its value or its exception's type.

    A dropped assignment still makes its name local in the schema (the
    original is in the other branch): UnboundLocalError where the mutant
    raises NameError, its base class. Both kill; they read as one here.
    """
    with switched(switch):
        scope: dict[str, Any] = {}
        try:
            exec(compile(source, "m.py", "exec"), scope)
        except Exception as exc:
            return [f"import: {type(exc).__name__}"]
    out: list[Any] = []
    for a, b in inputs:
        try:
            out.append(scope["f"](a, b))
        except Exception as exc:
            out.append("NameError" if isinstance(exc, NameError) else type(exc).__name__)
    return out


INPUTS = [(a, b) for a in range(-2, 5) for b in range(-2, 5)]


def tokens(n: int) -> list[str]:
    return [f"t{i:04d}" for i in range(n)]


def test_switch_off_is_the_original_and_switch_k_is_mutant_k() -> None:
    f = changed(CODE)
    mutants = review.candidates(f)
    assert len(mutants) > 10
    source = review.schema(CODE, mutants, SWITCH, tokens(len(mutants)))
    assert source is not None
    assert behaviour(source, None, INPUTS) == behaviour(CODE, None, INPUTS)
    for m, token in zip(mutants, tokens(len(mutants)), strict=True):
        assert behaviour(source, token, INPUTS) == behaviour(m.apply(CODE), None, INPUTS), m


def test_the_switch_is_read_after_the_docstring_and_future_imports() -> None:
    f = changed(CODE)
    source = review.schema(CODE, review.candidates(f)[:1], SWITCH, ["t"])
    assert source is not None
    lines = source.splitlines()
    assert lines[:3] == [
        '"""A module."""',
        "from __future__ import annotations",
        f"{SWITCH} = getattr(__import__('builtins'), {SWITCH!r}, None)",
    ]


@pytest.mark.parametrize(
    ("why", "text", "switch", "count"),
    [
        ("the switch name is in the file", f"{SWITCH} = 1\nx = 2\n", SWITCH, 1),
        ("not an identifier", "x = 2\n", "not-a-name", 1),
        ("one token short", "x = 2\n", SWITCH, 0),
        ("does not parse", "x = (\n", SWITCH, 1),
    ],
)
def test_a_schema_that_cannot_be_built_is_none(
    why: str, text: str, switch: str, count: int
) -> None:
    f = review.ChangedFile("m.py", text, "utf-8", frozenset({1, 2}), review.statements(text))
    sites = review.candidates(f)[:1] or [
        review.Mutant("m.py", 1, 1, "drop_statement", "x", 0, 5, "pass")
    ]
    assert review.schema(text, sites, switch, tokens(count)) is None, why


MATCH = """
def g(x):
    match x:
        case 1:
            return 10
    return 2
"""


def test_a_site_no_conditional_can_hold_goes_alone_the_others_keep_their_schema() -> None:
    f = changed(MATCH)
    mutants = review.candidates(f)
    pattern = [i for i, m in enumerate(mutants) if m.what == "1 -> 2"]
    assert pattern, [m.what for m in mutants]
    source, bad = review.schemata(MATCH, mutants, SWITCH, tokens(len(mutants)))
    assert bad == pattern
    assert source is not None and "case 1:" in source


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("def f(a, b):\n    return a < b\n", "b > a"),
        ("def f(a, b):\n    return a == 3\n", "3 == a"),
        ("def f(a, b):\n    return a in b\n", "a in b"),  # no mirror: a copy
        ("def f(a, b):\n    return a.x < b\n", "a.x < b"),  # an attribute may run code: a copy
    ],
)
def test_a_null_mutant_is_respelled_where_that_is_the_same(text: str, shown: str) -> None:
    f = changed(text)
    flip = next(m for m in review.candidates(f) if m.operator == "flip_comparison")
    null = review.null_of(flip, text)
    assert review.is_null(null) and null.apply(text) == text
    source = review.schema(text, [null], SWITCH, ["t"])
    assert source is not None and f"{shown} if {SWITCH} == 't' else" in source
    assert behaviour(source, "t", INPUTS[:3]) == behaviour(text, None, INPUTS[:3]) or "a.x" in text


def test_a_null_mutant_of_a_statement_changes_nothing() -> None:
    f = changed(CODE)
    for m in review.candidates(f):
        null = review.null_of(m, CODE)
        source = review.schema(CODE, [m, null], SWITCH, ["real", "null"])
        assert source is not None, m
        assert behaviour(source, "null", INPUTS) == behaviour(CODE, None, INPUTS), m


@pytest.mark.parametrize(
    ("fates", "void"),
    [
        ([], False),
        (["survived"], False),
        (["survived", "survived"], False),
        (["killed"], True),
        (["survived", "killed"], True),
        (["not_tried"], True),
        (["legacy"], True),
    ],
)
def test_the_kills_are_void_unless_every_null_mutant_ran_and_survived(
    fates: list[str], void: bool
) -> None:
    why = review_run.void(fates)
    assert (why is not None) is void
    if why is not None:
        assert why.startswith("not tried: the kills are void: ")


@pytest.mark.parametrize(
    ("fates", "void"),
    [(["not_tried"], False), (["legacy"], False), (["killed"], True), (["survived"], False)],
)
def test_with_no_kill_only_a_killed_null_voids(fates: list[str], void: bool) -> None:
    # A budget that ran out before the null mutant voids nothing when nothing was killed.
    assert (review_run.void(fates, kills=False) is not None) is void


def test_the_phase_events_come_back_from_the_channel() -> None:
    lines = [
        '{"event": "mutant", "id": "m.py:1:0:raise", "fate": "killed"}',
        '{"event": "null_mutant", "fate": "survived"}',
        '{"event": "review_phase", "main_seconds": 1.5, "ran": true}',
    ]
    parsed = testrun.parse_channel("\n".join(lines).encode())
    assert parsed["garbled"] == 0
    assert parsed["mutants"] == {"m.py:1:0:raise": "killed"}
    assert parsed["null_mutants"] == ["survived"]
    assert parsed["review_phase"] == {"main_seconds": 1.5, "ran": True}


# --- the property: switch off is the original, switch k is mutant k ----------

_NAMES = st.sampled_from(["a", "b"])
_CONSTANTS = st.integers(min_value=-3, max_value=3)
_COMPARE = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
_ARITH = st.sampled_from(["+", "-", "*"])


@st.composite
def small_functions(draw: st.DrawFn) -> str:
    """`def f(a, b)` of assignments, guarded returns and a final return, over small ints."""
    lines = ["def f(a, b):"]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        kind = draw(st.sampled_from(["assign", "guard", "augment"]))
        left, right = draw(_NAMES), draw(st.one_of(_NAMES, _CONSTANTS.map(str)))
        if kind == "assign":
            lines.append(f"    {draw(_NAMES)} = {left} {draw(_ARITH)} {right}")
        elif kind == "augment":
            lines.append(f"    {draw(_NAMES)} {draw(_ARITH)}= {draw(_CONSTANTS)}")
        else:
            lines.append(f"    if {left} {draw(_COMPARE)} {right}:")
            lines.append(f"        return {draw(_NAMES)} {draw(_ARITH)} {draw(_CONSTANTS)}")
    lines.append(f"    return a {draw(_COMPARE)} b")
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None)
@given(small_functions(), st.data())
def test_the_schema_behaves_as_the_original_and_as_each_mutant(
    text: str, data: st.DataObject
) -> None:
    f = changed(text)
    mutants = review.candidates(f)
    chosen = (
        data.draw(st.lists(st.sampled_from(mutants), unique=True, min_size=1)) if mutants else []
    )
    source = review.schema(text, chosen, SWITCH, tokens(len(chosen)))
    assert source is not None
    inputs = INPUTS[::5]
    assert behaviour(source, None, inputs) == behaviour(text, None, inputs)
    for m, token in zip(chosen, tokens(len(chosen)), strict=True):
        assert behaviour(source, token, inputs) == behaviour(m.apply(text), None, inputs), m


@pytest.mark.parametrize("path", sorted(p for p in SRC.glob("*.py") if p.stat().st_size < 40_000))
def test_every_mutant_of_a_real_module_has_a_schema_that_compiles(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    f = changed(text)
    mutants = review.candidates(f)
    source, bad = review.schemata(text, mutants, SWITCH, tokens(len(mutants)))
    assert source is not None and bad == [], path


@pytest.mark.parametrize(
    ("text", "respellable"),
    [
        ("def f(a, b):\n    return a < b\n", True),
        ("def f(a, b):\n    return a != 0\n", True),
        ("def f(a, b):\n    return a in b\n", False),
        ("def f(a, b):\n    return a.x < b\n", False),
        ("def f(a, b):\n    return a < b < 3\n", False),
    ],
)
def test_which_spans_a_null_mutant_can_respell(text: str, respellable: bool) -> None:
    flip = next(m for m in review.candidates(changed(text)) if m.operator == "flip_comparison")
    assert review.respellable(flip, text) is respellable


def test_null_mutants_go_only_where_a_site_can_hold_them() -> None:
    from patchjudge import review_phase

    f = changed(MATCH)
    executed = {"t.py::test_g": {"m.py": (1, 2, 3, 4, 5, 6)}}
    index = review.node_index(executed, [f])
    rng = review_phase.secrets.SystemRandom()
    spans = review_phase._null_spans(rng, [f], index, {"t.py::test_g": None}, 10)  # type: ignore[dict-item]
    assert spans and all(m.what != "1 -> 2" for m, _ in spans)
    assert all(runners == ("t.py::test_g",) for _, runners in spans)


@pytest.mark.parametrize(
    "text",
    [
        "def f(x):\n    y = (\n        x + 1\n    )\n    return y\n",
        "def f(x:\n    return x\n",  # does not parse: no statements
    ],
)
def test_the_plan_carries_the_statements_the_gate_read(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 20: the judge's pytest takes them from the plan, not a second parse.
    import json

    from patchjudge import review_phase
    from patchjudge.lanes import properties

    f = review.changed_file("m.py", text.encode(), [2, 3, 4])
    assert f is not None
    plan = json.loads(json.dumps({"files": [properties.plan_file(f)]}))

    def unread(*_: object, **__: object) -> None:
        raise AssertionError("read again in the judge's pytest")

    monkeypatch.setattr(review, "statements", unread)
    assert review_phase.changed_files(plan) == [f]


def _unwalked(*_: object, **__: object) -> None:
    raise AssertionError("the module walked again for its mutants")


@pytest.mark.parametrize(
    "text",
    [
        CODE,
        # A changed header: its compound statement's arm on the same line.
        "def f(a):\n    if a: return 0\n    return 0 if a > 2 else a\n",
        "def f(x:\n    return x\n",  # does not parse: no mutant
        '"""Only a docstring changed."""\n',
    ],
)
def test_the_phase_knows_from_the_plan_whether_a_property_ran_a_mutable_statement(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 20: the gate lists the statements a mutant edits; the judge's pytest answers
    # from that list, as the candidates would, without walking the module (three walks).
    import json

    from patchjudge import review_phase
    from patchjudge.lanes import properties

    f = changed(text)
    plan = json.loads(json.dumps({"files": [properties.plan_file(f)]}))
    mutable = {m.statement for m in review._candidates(f)}
    lines = range(1, text.count("\n") + 2)
    monkeypatch.setattr(review, "candidates", _unwalked)
    monkeypatch.setattr(review, "_candidates", _unwalked)
    assert not review_phase.mutable_ran(plan, [f], {})
    for n in lines:
        index = {("m.py", n): frozenset({"t.py::test_p"})}
        assert review_phase.mutable_ran(plan, [f], index) is (n in mutable), n
        assert not review_phase.mutable_ran(plan, [f], {("other.py", n): index[("m.py", n)]})


def test_a_plan_without_the_list_still_answers_from_the_candidates() -> None:
    from patchjudge import review_phase

    f = changed(CODE)
    plan = {"files": [{"path": "m.py"}]}
    (m, *_) = review.candidates(f)
    assert review_phase.mutable_ran(plan, [f], {("m.py", m.statement): frozenset({"t"})})
    assert not review_phase.mutable_ran(plan, [f], {})


def test_the_gate_walks_a_changed_module_for_its_mutants_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 20: the plan lists the candidates before the run, the choice reads them after it.
    from patchjudge.lanes import properties

    walks: list[str] = []
    skipped = review._skipped
    monkeypatch.setattr(review, "_skipped", lambda tree: walks.append("walk") or skipped(tree))
    f = changed(CODE)
    properties.plan_file(f)
    chosen = review.choose([f], seed=3, limit=4, executed=lambda m: True)
    assert chosen and walks == ["walk"]
    # Another ChangedFile of the same text is its own: the answer is never another file's.
    g = changed(CODE.replace("LIMIT = 3", "LIMIT = 5"))
    assert [m.what for m in review.candidates(g)] != [m.what for m in review.candidates(f)]
    assert walks == ["walk", "walk"]
