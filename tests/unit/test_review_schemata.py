"""Mutant sites (issue 20; red team, session 17): the judge's edit as its worker compiles
it, the null mutants and the void rule, pure; and through a real worker, the file on
disk is the original and nothing the code reaches holds the mutant."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import review, review_run, testrun
from patchjudge.boundary import protocol, standin

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


SWITCH = "_qzxwvutsr"


def compiled(text: str, *mutants: review.Mutant) -> Any:
    """The schema of these mutants (tokens t0, t1, ...), as every mutant's worker compiles it."""
    sites = [review.site(text, m, SWITCH, f"t{i}") for i, m in enumerate(mutants)]
    assert None not in sites, mutants
    return compile(
        protocol.schema_tree(("m.py", text, SWITCH, tuple(sites))),  # type: ignore[arg-type]
        "m.py",
        "exec",
        dont_inherit=True,
    )


def behaviour(code: Any, inputs: list[tuple[int, int]], switch: str | None = None) -> list[Any]:
    """What the module's `f` does on each input, the switch set: its value or its exception's.

    A dropped assignment still makes its name local in the schema (the
    original is in the other branch): UnboundLocalError where the mutant
    raises NameError, its base class. Both kill; they read as one here.
    """
    if switch is not None:
        setattr(builtins, SWITCH, switch)
    try:
        scope: dict[str, Any] = {}
        try:
            exec(code, scope)
        except Exception as exc:
            return [f"import: {type(exc).__name__}"]
    finally:
        if hasattr(builtins, SWITCH):
            delattr(builtins, SWITCH)
    out: list[Any] = []
    for a, b in inputs:
        try:
            out.append(scope["f"](a, b))
        except Exception as exc:
            out.append("NameError" if isinstance(exc, NameError) else type(exc).__name__)
    return out


def plain(text: str) -> Any:
    return compile(text, "m.py", "exec", dont_inherit=True)


INPUTS = [(a, b) for a in range(-2, 5) for b in range(-2, 5)]


def test_switch_off_is_the_original_and_switch_k_is_mutant_k() -> None:
    f = changed(CODE)
    mutants = review.candidates(f)
    assert len(mutants) > 10
    code = compiled(CODE, *mutants)
    assert behaviour(code, INPUTS) == behaviour(plain(CODE), INPUTS)
    for i, m in enumerate(mutants):
        assert behaviour(code, INPUTS, f"t{i}") == behaviour(plain(m.apply(CODE)), INPUTS), m


def test_a_null_mutant_changes_nothing() -> None:
    for m in review.candidates(changed(CODE)):
        code = compiled(CODE, m, review.null_of(m, CODE))
        assert behaviour(code, INPUTS, "t1") == behaviour(plain(CODE), INPUTS), m


def _lines(code: Any) -> set[tuple[str, int, int]]:
    """Every code object's name and first line, and the lines its instructions name."""
    found = {(code.co_name, code.co_firstlineno, -1)}
    found |= {(code.co_name, p[0], -2) for p in code.co_positions() if p[0] is not None}
    for const in code.co_consts:
        if hasattr(const, "co_positions"):
            found |= _lines(const)
    return found


def test_a_sites_code_names_the_originals_lines() -> None:
    # Red team, session 17: the disk and the running code agree on where each statement is
    # (a traceback's line, inspect.getsource's); the edit takes the edited node's place.
    f = changed(CODE)
    for m in review.candidates(f):
        mutant, original = compiled(CODE, m), plain(CODE)
        # The switch's read is at the first statement after the docstring and future imports.
        # A module-level `raise` leaves the code after it uncompiled: fewer, never other; the
        # edit's own code (an arm's raising generator) is on the edited line.
        assert {x for x in _lines(mutant) if x[1] != m.line} <= _lines(original), m


@pytest.mark.parametrize(
    ("why", "text", "mutant"),
    [
        (
            "does not parse",
            "x = (\n",
            review.Mutant("m.py", 1, 1, "drop_statement", "x", 0, 5, "pass"),
        ),
        (
            "no node there",
            "x = 2\n",
            review.Mutant("m.py", 1, 1, "drop_statement", "x", 0, 3, "pass"),
        ),
    ],
)
def test_a_site_that_cannot_be_compiled_is_none(why: str, text: str, mutant: review.Mutant) -> None:
    assert review.site(text, mutant, SWITCH, "t") is None, why


def test_a_mutant_that_parses_but_does_not_compile_is_no_site() -> None:
    # Its fate is "legacy": the gate runs it the per-mutant way, which fails it as it would.
    text = "def g(x):\n    match x:\n        case {'': 1, 'a': 2}:\n            return 1\n"
    (key,) = [m for m in review.candidates(changed(text)) if m.what == "'a' -> ''"]
    assert review.mutated(changed(text), key) is not None  # it parses ...
    assert review.site(text, key, SWITCH, "t") is None  # ... a pattern takes no conditional


MATCH = """
def g(x):
    match x:
        case 1:
            return 10
    return 2
"""


def test_a_site_no_conditional_can_hold_is_none_the_others_keep_their_schema() -> None:
    f = changed(MATCH)
    mutants = review.candidates(f)
    sites = [review.site(MATCH, m, SWITCH, "t") for m in mutants]
    assert [m.what for m, s in zip(mutants, sites, strict=True) if s is None] == ["1 -> 2"]
    held = [s for s in sites if s is not None]
    assert held and review.schema("m.py", MATCH, SWITCH, held)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("def f(a, b):\n    return a < b\n", "b > a"),
        ("def f(a, b):\n    return a == 3\n", "3 == a"),
        ("def f(a, b):\n    return a in b\n", ""),  # no mirror: the original's own code
        ("def f(a, b):\n    return a.x < b\n", ""),  # an attribute may run code: a copy
    ],
)
def test_a_null_mutant_is_respelled_where_that_is_the_same(text: str, shown: str) -> None:
    f = changed(text)
    flip = next(m for m in review.candidates(f) if m.operator == "flip_comparison")
    null = review.null_of(flip, text)
    assert review.is_null(null) and null.apply(text) == text
    site = review.site(text, null, SWITCH, "t0")
    assert site is not None and site[3] == shown
    if "a.x" not in text and " in " not in text:
        code = compiled(text, null)
        assert behaviour(code, INPUTS[:3], "t0") == behaviour(plain(text), INPUTS[:3])


# What a module can read of itself in the worker that runs a mutant of it: the file by a
# path not spelled `__file__`, linecache, inspect, its loader's source, a traceback, its
# code's first line; and any object it can walk to that holds the text it was handed.
SELF_READING = '''\
import gc
import inspect
import linecache
import os
import sys
import traceback

PATH = os.path.join(os.path.dirname(__spec__.origin), "tricky.py")


def bump(n):
    return n + 1


def fails(n):
    raise ValueError(bump(n))


def where():
    try:
        fails(1)
    except ValueError as exc:
        return [(f.lineno, f.line) for f in traceback.extract_tb(exc.__traceback__)]


def has(value, text, depth=3):
    """`value` is the text, or a list, tuple or dict that holds it (a tuple of str and int
    is not tracked by gc: it is found in what holds it)."""
    if type(value) is str:
        return value == text
    items = value.values() if type(value) is dict else value if type(value) in (list, tuple) else ()
    return depth > 0 and any(has(v, text, depth - 1) for v in list(items))


def holders():
    """Whatever gc or a frame up the stack reaches that holds this file's whole text."""
    with open(PATH, encoding="utf-8") as f:
        text = f.read()
    found = [type(o).__name__ for o in gc.get_objects() if type(o) is not str and has(o, text)]
    frame = sys._getframe(1)
    while frame is not None:
        if has([*frame.f_locals.values(), *frame.f_globals.values()], text):
            found.append(frame.f_code.co_name)
        frame = frame.f_back
    return found


with open(PATH, "rb") as f:
    DIGEST = hash(f.read())
SEEN = (
    DIGEST,
    bump.__code__.co_firstlineno,
    inspect.getsource(bump),
    linecache.getline(PATH, 11),
    len(__loader__.get_source(__name__)),
    where(),
    sys.meta_path[0].__class__.__name__,
    __loader__.__class__.__name__,
)
HELD = holders()
'''


def _reads(tree: Path, home: Path, site: protocol.Site | None) -> tuple[Any, Any, Any]:
    """SEEN, HELD and bump(1) from a worker over `tree` whose schema holds `site`, switched
    on (None: the original)."""
    spec = protocol.WorkerSpec(
        sys.executable, str(tree), str(home), ("tricky",), pythonpath=(".",), call_timeout_s=120
    )
    worker = standin.Worker(spec, "props/test_p.py", [])
    if site is not None:
        worker.schemata = (("tricky.py", SELF_READING, SWITCH, (site,)),)
    try:
        found = worker.request(protocol.IMPORT, "builtins")
        worker.request(protocol.SETATTR, found, SWITCH, "t" if site is not None else "")
        module = worker.request(protocol.IMPORT, "tricky")
        seen, held, bump = (worker.request(protocol.GETATTR, module, n) for n in SELF_NAMES)
        return tuple(seen), list(held), worker.request(protocol.CALL, bump, (1,), {})
    finally:
        assert worker.proc is not None and worker.proc.stderr is not None
        stderr = worker.proc.stderr
        worker.close()
        stderr.close()


SELF_NAMES = ("SEEN", "HELD", "bump")


def test_a_mutants_worker_reads_its_file_as_written_and_holds_no_handed_text(
    tmp_path: Path,
) -> None:
    # Red team, session 17: the mutant's text was written into the worker's tree.
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    home.mkdir()
    (tree / "tricky.py").write_text(SELF_READING)
    f = review.changed_file("tricky.py", SELF_READING.encode(), [12])
    assert f is not None
    (m,) = [m for m in review.candidates(f) if m.what == "1 -> 2"]
    seen, held, bumped = _reads(tree, home, review.site(SELF_READING, m, SWITCH, "t"))
    assert (tree / "tricky.py").read_text() == SELF_READING
    original, _, plain = _reads(tree, home, None)
    assert (bumped, plain) == (3, 2)  # the mutant runs ...
    assert seen[:-2] == original[:-2]  # ... and reads itself as the original does, line for line
    assert seen[-2:] == ("PathFinder", "SourceFileLoader")  # as the main pass's probes look
    assert held == []


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
    mutants = review.candidates(changed(text))
    chosen = data.draw(st.lists(st.sampled_from(mutants), unique=True)) if mutants else []
    code = compiled(text, *chosen)
    inputs = INPUTS[::5]
    assert behaviour(code, inputs) == behaviour(plain(text), inputs)
    for i, m in enumerate(chosen):
        assert behaviour(code, inputs, f"t{i}") == behaviour(plain(m.apply(text)), inputs), m


@pytest.mark.parametrize("path", sorted(p for p in SRC.glob("*.py") if p.stat().st_size < 40_000))
def test_mutants_of_a_real_module_are_sites_that_compile(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    mutants = review.candidates(changed(text))
    # A sample, one in 25: each site is checked on its top-level statement alone.
    missing = [m for m in mutants[::25] if review.site(text, m, SWITCH, "t") is None]
    assert missing == [], path


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
