"""The review's pure half (issue 14): changed lines, folding, mutants and their fates."""

from __future__ import annotations

import ast
import itertools
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import git, review, review_run
from patchjudge.boundary.protocol import VIEW_CLAIM
from patchjudge.paths import Change
from patchjudge.testrun import Outcome, TestRun
from patchjudge.verdict import OPERAND_BLIND
from tests.helpers import commit, init_repo, write

SRC = Path(__file__).resolve().parents[2] / "src" / "patchjudge"
# Real modules to mutate: patchjudge's own, every construct it uses.
CORPUS = sorted(p for p in SRC.glob("*.py") if p.stat().st_size < 40_000)

CODE = '''"""A module."""
import os

LIMIT = 10


def clamp(x, lo=0):
    """Clamp it."""
    if x < lo:
        return lo
    y = (x +
         LIMIT)  # pragma: no cover
    return min(x, y) if x != 3 else "three"


def gen():
    for i in range(3):
        yield i
'''


def changed(text: str, lines: range | set[int], path: str = "src/m.py") -> review.ChangedFile:
    f = review.changed_file(path, text.encode(), lines)
    assert f is not None
    return f


# --- hunks and lines ----------------------------------------------------------


@given(
    st.lists(st.tuples(st.integers(1, 500), st.integers(0, 5), st.integers(0, 5)), max_size=8),
    st.lists(st.sampled_from([b"+@@ -1 +9,3 @@", b"-@@ -2 +7 @@", b" x", b"\\ No newline"])),
)
def test_hunk_lines_are_the_new_side_of_each_header(
    hunks: list[tuple[int, int, int]], noise: list[bytes]
) -> None:
    lines = [b"diff --git a/x b/x", b"--- a/x", b"+++ b/x"]
    expected: set[int] = set()
    for start, old, new in hunks:
        new_side = f"+{start}" if new == 1 else f"+{start},{new}"
        lines.append(f"@@ -{start},{old} {new_side} @@ def f():".encode())
        lines += noise  # content lines start with + - space or backslash: never a header
        expected.update(range(start, start + new))
    assert review.hunk_lines(b"\n".join(lines)) == expected


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [
        ("a\nb\nc\n", "a\nB\nc\n", {2}),
        ("a\nb\nc\n", "a\nb\nx\ny\nc\n", {3, 4}),
        ("a\nb\nc\n", "a\nc\n", set()),  # a deletion adds no line at head
        ("a\nb\n", "a\nb\nc\n", {3}),
        ("a\nb", "a\nb\n", {2}),  # the newline at the end of the file changed line 2
    ],
)
def test_hunks_from_real_git(tmp_path: Path, base: str, head: str, expected: set[int]) -> None:
    repo = init_repo(tmp_path / "r", {"m.py": base})
    old = git.git(repo, "rev-parse", "HEAD:m.py").decode().strip()
    write(repo, {"m.py": head})
    commit(repo)
    new = git.git(repo, "rev-parse", "HEAD:m.py").decode().strip()
    assert review.hunk_lines(git.diff_blobs(repo, old, new)) == expected


def test_the_users_git_config_does_not_move_the_hunks(tmp_path: Path) -> None:
    base, head = (
        "def f():\n    a\n\ndef g():\n    b\n",
        "def f():\n    a\n\ndef h():\n    c\n\ndef g():\n    b\n",
    )
    repo = init_repo(tmp_path / "r", {"m.py": base})
    old = git.git(repo, "rev-parse", "HEAD:m.py").decode().strip()
    write(repo, {"m.py": head})
    commit(repo)
    new = git.git(repo, "rev-parse", "HEAD:m.py").decode().strip()
    plain = git.diff_blobs(repo, old, new)
    git.git(repo, "config", "diff.algorithm", "minimal")
    git.git(repo, "config", "diff.indentHeuristic", "false")
    git.git(repo, "config", "color.ui", "always")
    assert git.diff_blobs(repo, old, new) == plain


@given(st.lists(st.text(st.characters(exclude_characters="\r\n"), max_size=5), min_size=1))
def test_without_a_carriage_return_gits_lines_are_pythons(rows: list[str]) -> None:
    text = "\n".join(rows)
    assert review.python_lines(text, range(1, len(rows) + 1)) == set(range(1, len(rows) + 1))
    assert review.python_lines(text, [len(rows) + 1, 0]) == set()


def test_a_lone_carriage_return_cannot_hide_a_module_behind_line_one() -> None:
    text = "x = 1\ry = 2\rz = 3\n"
    f = changed(text, {1})
    assert f.lines == {1, 2, 3}


def test_statements_are_coverage_pys_without_exclusion_pragmas() -> None:
    f = changed(CODE, range(1, 19))
    # Docstrings are no statements; a multi-line statement counts once, at its first line;
    # `# pragma: no cover` in the patch takes nothing out of the count.
    assert f.lines == {2, 4, 7, 9, 10, 11, 13, 16, 17, 18}
    assert f.statement_of(12) == 11
    assert changed(CODE, {12}).lines == {11}
    assert changed(CODE, {3, 8}).lines == set()  # a blank line and a docstring


def test_a_file_that_does_not_parse_counts_its_changed_non_blank_lines() -> None:
    f = changed("def f(:\n\n    return 1\n", range(1, 4))
    assert f.stmts is None
    assert f.lines == {1, 3}
    assert review.candidates(f) == []


def test_an_encoding_cookie_is_honoured_and_bytes_that_are_not_text_are_skipped() -> None:
    latin = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1")
    f = review.changed_file("src/m.py", latin, {2})
    assert f is not None and f.lines == {2}
    assert review.changed_file("src/m.py", b"x = '\xff'\n", {1}) is None


# --- folding and the summary ----------------------------------------------------


@given(st.sets(st.integers(1, 60)), st.sets(st.integers(1, 60)))
def test_fold_covers_exactly_the_lines_and_splits_only_at_another_statement(
    lines: set[int], statements: set[int]
) -> None:
    runs = review.fold(lines, statements)
    everything = statements | lines
    covered = {n for a, b in runs for n in range(a, b + 1)}
    assert covered & everything == lines
    assert all(a <= b for a, b in runs)
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(runs))
    for (_, b1), (a2, _) in itertools.pairwise(runs):
        assert any(b1 < s < a2 for s in statements - lines), "two runs that could be one"


def test_fold_joins_across_blank_lines_and_renders_ranges() -> None:
    assert review.fold([120, 121, 122, 125], [118, 120, 121, 122, 125, 126]) == [(120, 125)]
    assert review.fold([3, 7], [3, 5, 7]) == [(3, 3), (7, 7)]
    assert review.range_text("mylib/core.py", 120, 122) == "mylib/core.py:120-122"
    assert review.range_text("mylib/core.py", 7, 7) == "mylib/core.py:7"


def test_changed_lines_summary_and_the_threshold_reason() -> None:
    f = changed(CODE, range(1, 19))
    executed = review.executed_lines({"t::a": {"src/m.py": [7, 9, 12]}, "": {"x.py": [1]}}, [f])
    assert executed == {"src/m.py": {7, 9, 11}}
    summary = review.changed_lines([f], executed)
    assert summary == {
        "executed": 3,
        "total": 10,
        "unexecuted": ["src/m.py:2-4", "src/m.py:10", "src/m.py:13-18"],
    }
    assert review.below_threshold(summary, 0.0) is None
    assert review.below_threshold(summary, 0.3) is None
    assert review.below_threshold(summary, 0.31) == (
        "the properties never ran 7 of 10 changed lines: src/m.py:2-4, src/m.py:10, src/m.py:13-18"
    )
    empty = review.changed_lines([], {})
    assert empty == {"executed": 0, "total": 0, "unexecuted": []}
    assert review.below_threshold(empty, 1.0) is None


def test_the_threshold_reason_lists_ten_ranges_and_counts_the_rest() -> None:
    summary = {"executed": 0, "total": 12, "unexecuted": [f"m.py:{i}" for i in range(12)]}
    why = review.below_threshold(summary, 1.0)
    assert why is not None
    assert why.endswith("m.py:9 and 2 more ranges")


# --- mutants ------------------------------------------------------------------------


def test_candidates_on_the_changed_lines_only_with_the_oracles_operators() -> None:
    f = changed(CODE, {9, 13, 18})
    assert [m.describe() for m in review.candidates(f)] == [
        "src/m.py:9: < -> >=",
        "src/m.py:13: dropped: return min(x, y) if x != 3 else 'three'",
        "src/m.py:13: raise instead of: return min(x, y) if x != 3 else 'three'",
        "src/m.py:13: raise where it runs: min(x, y)",
        "src/m.py:13: != -> ==",
        "src/m.py:13: 3 -> 4",
        "src/m.py:13: 'three' -> ''",
        "src/m.py:13: raise where it runs: 'three'",
    ]  # line 18 is a yield: without it gen() is no generator, so it is not dropped


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(CORPUS), st.data())
def test_every_mutant_is_a_real_change_of_a_changed_line(path: Path, data: st.DataObject) -> None:
    text = path.read_text()
    count = text.count("\n") + 1
    lines = data.draw(st.sets(st.integers(1, count), max_size=15))
    f = changed(text, lines, path.name)
    tree = ast.dump(ast.parse(text))
    for m in review.candidates(f):
        assert m.operator in review.OPERATORS
        node_lines = set(range(m.line, m.line + text[m.start : m.end].count("\n") + 1))
        # An arm of a changed statement is tried on any of its lines (red team, session 12).
        assert node_lines & f.changed or (m.operator == "raise_arm" and m.statement in f.lines), m
        after = review.mutated(f, m)
        assert after is not None, m  # an edit of a node keeps the module parseable
        assert ast.dump(ast.parse(after)) != tree, m
        assert "\n" not in m.describe()


# Sources whose statements share lines, carry decorators, end without a newline or in CRLF.
EDITED = (
    CODE,
    "a = 1; b = (2,\n     3)\nc = 4\n",
    "@dec\n@other(1)\ndef f():\n    return 1\n\n\nclass C:\n    x = '''\n'''\n",
    "x = 1\r\nif x:\r\n    y = [x,\r\n         2]\r\nz = 3",
    "def g():\n    s = 'a\\\n    b'\n    return s  # c\n\nq = g()\n",
)
PIECES = ("(", ")", "[", "'''", '"', "\\", "\n", "\r", "\n    ", "pass", "return", ":", "#", "x", " ", ";", "@")  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(EDITED), st.data())
def test_a_mutant_parses_exactly_when_the_whole_mutated_file_does(
    text: str, data: st.DataObject
) -> None:
    """Issue 20: `mutated` parses only the edited statement; its answer is the whole file's."""
    breaks = [i for i, c in enumerate(text) if c in "\r\n"]
    start = data.draw(st.integers(0, len(text)) | st.sampled_from(breaks))
    end = data.draw(st.integers(start, min(len(text), start + 12)))
    replacement = "".join(data.draw(st.lists(st.sampled_from(PIECES), max_size=3)))
    f = changed(text, range(1, text.count("\n") + 2))
    m = review.Mutant(f.path, 1, 1, "replace", "edit", start, end, replacement)
    assert review.mutated(f, m) == _parsed(m.apply(text))


def _parsed(text: str) -> bytes | None:
    """The whole file's answer; an invalid escape's warning is the patch's (silenced, as there)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return None
    return text.encode()


@pytest.mark.parametrize(
    ("text", "start", "end", "replacement"),
    [
        ("c = 4\nd = 5\n", 5, 6, ""),  # the statement's line end eaten: `c = 4d = 5`
        ("c = 4\r\nd = 5\n", 5, 7, " "),
        # the edit ends in a backslash: alone it parses, joined to `if x:` it is indented
        ("x = 1\r\nif x:\r\n    y = [x,\r\n         2]\r\nz = 3", 0, 5, "\n    \\"),
        ("a = (1,\n     2); b = 3\nc = 4\n", 4, 5, ""),  # a statement shares its last line
        ("def f():\n    return 1\nx = 2\n", 22, 23, ""),
    ],
)
def test_an_edit_at_a_statements_edge_is_judged_on_the_whole_file(
    text: str, start: int, end: int, replacement: str
) -> None:
    f = changed(text, range(1, 4))
    m = review.Mutant(f.path, 1, 1, "replace", "edit", start, end, replacement)
    assert review.mutated(f, m) == _parsed(m.apply(text))


def test_choose_is_deterministic_and_spreads_over_the_statements() -> None:
    f = changed(CODE, range(1, 19))
    first = review.choose([f], 7, 5, lambda m: False)
    assert first == review.choose([f], 7, 5, lambda m: False)
    assert len(first) == 5
    assert len({m.statement for m, _ in first}) == 5  # one a statement before any gets two
    by_seed = {tuple(m.id for m, _ in review.choose([f], s, 5, lambda m: False)) for s in range(8)}
    assert len(by_seed) > 1  # the seed decides which
    assert review.choose([f], 7, 0, lambda m: False) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 30), st.sets(st.integers(1, 18)))
def test_choosing_more_keeps_what_fewer_chose_and_executed_lines_go_first(
    seed: int, limit: int, ran: set[int]
) -> None:
    f = changed(CODE, range(1, 19))

    def executed(m: review.Mutant) -> bool:
        return m.statement in ran

    fewer = review.choose([f], seed, limit, executed)
    more = review.choose([f], seed, limit + 1, executed)
    assert set(fewer) <= set(more)
    # Each arm of an executed statement is tried beyond the limit (red team, session 12).
    checks = [m for m in review.candidates(f) if review.is_arm_check(m) and executed(m)]
    assert {m.id for m in checks} <= {m.id for m, _ in fewer} or limit == 0
    extra = min(limit, len(review.candidates(f)) - len(checks))
    assert len(fewer) == (len(checks) + extra if limit else 0)
    everything = review.ranked(review.candidates(f), seed, executed)
    flags = [executed(m) for m in everything]
    assert flags == sorted(flags, reverse=True)


def test_runners_are_the_properties_that_executed_the_line() -> None:
    f = changed(CODE, range(1, 19))
    index = review.node_index(
        {"t::a": {"src/m.py": [9, 12]}, "t::b": {"src/m.py": [9]}, "": {"src/m.py": [4]}}, [f]
    )
    (flip,) = [m for m in review.candidates(f) if m.operator == "flip_comparison" and m.line == 9]
    (y,) = [m for m in review.candidates(f) if m.line == 11 and m.operator == "drop_statement"]
    (limit,) = [m for m in review.candidates(f) if m.line == 4 and m.operator == "change_constant"]
    (ret,) = [m for m in review.candidates(f) if m.line == 10 and m.operator == "drop_statement"]
    collected = ["t::a", "t::b", "t::c"]
    assert review.runners(flip, index, collected) == ("t::a", "t::b")
    assert review.runners(y, index, collected) == ("t::a",)
    # Run at import, outside any test: it can change what every property sees.
    assert review.runners(limit, index, collected) == ("t::a", "t::b", "t::c")
    assert review.runners(ret, index, collected) == ()


def _run(*outcomes: tuple[str, str], exitstatus: int = 0, **kw: object) -> TestRun:
    return TestRun(
        exitstatus=exitstatus,
        timed_out=bool(kw.get("timed_out", False)),
        started=True,
        finished=bool(kw.get("finished", True)),
        collected={n: "run" for n, _ in outcomes},
        markers={},
        collect_errors={},
        outcomes=tuple(Outcome(n, "call", o, o, False, "", ()) for n, o in outcomes),
        garbled=0,
    )


FATES = [
    (_run(("a", "passed"), ("b", "passed")), False, review.Fate.SURVIVED),
    (_run(("a", "passed"), ("b", "failed"), exitstatus=1), False, review.Fate.KILLED),
    (_run(("a", "passed")), False, review.Fate.KILLED),  # b never ran (-x stopped it)
    (_run(exitstatus=4), False, review.Fate.KILLED),  # the mutant broke collection
    (_run(("a", "passed"), ("b", "passed"), finished=False), False, review.Fate.KILLED),
    (_run(timed_out=True), False, review.Fate.KILLED),  # past the property timeout
    (_run(timed_out=True), True, review.Fate.NOT_TRIED),  # cut off by the review budget
]


@pytest.mark.parametrize(("result", "cut_off", "expected"), FATES)
def test_fate(result: TestRun, cut_off: bool, expected: review.Fate) -> None:
    assert review.fate(result, ["a", "b"], cut_off) is expected


@given(st.lists(st.sampled_from(list(review.Fate)), max_size=12))
def test_the_mutants_summary_adds_up(fates: list[review.Fate]) -> None:
    f = changed(CODE, range(1, 19))
    chosen = [m for m, _ in review.choose([f], 1, len(fates), lambda m: True)]
    summary = review.mutants_summary(list(zip(chosen, fates, strict=False)))
    assert summary["killed"] + summary["not_tried"] + len(summary["survivors"]) == summary["total"]
    assert all(s.startswith("src/m.py:") for s in summary["survivors"])


@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=6)
        | st.sampled_from(["*", "**", "?", "[a]", "]", "[", "\\", "a b"]),
        min_size=1,
        max_size=5,
    )
)
def test_the_coverage_include_glob_matches_the_file_whatever_its_name(parts: list[str]) -> None:
    from coverage.files import GlobMatcher

    from patchjudge.pytest_plugin import coverage_pattern

    path = "/tmp/tree/" + "/".join(parts) + ".py"
    assert GlobMatcher([coverage_pattern(path)]).match(path)


def test_a_sum_too_deep_to_unparse_gives_no_mutant_and_no_crash() -> None:
    text = "def f(x):\n    return x < " + "+".join(["1"] * 3000) + "\n"
    f = changed(text, {2})
    assert f.lines == {2}
    assert review.choose([f], 1, 3, lambda m: True) == []


# --- the judge's plugin measures the listed files, per test ---------------------------

MODULE = "def double(x):\n    y = x * 2\n    return y\n\n\ndef unused():\n    return 0\n"
PROPERTY = (
    "from mod import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
    "def test_nothing():\n    assert True\n"
)


def test_the_plugin_reports_the_lines_each_test_executed(tmp_path: Path) -> None:
    from patchjudge import testrun

    tree = tmp_path / "tree"
    write(tree, {"src/mod.py": MODULE, "props/test_p.py": PROPERTY, "src/other.py": "z = 1\n"})
    plan = testrun.Plan(
        tree=tree,
        args=("props",),
        conftest_roots=("props",),
        pythonpath=("src",),
        coverage=("src/mod.py",),
    )
    run = testrun.run(plan, scratch=tmp_path / "scratch")
    assert run.exitstatus == 0, run.output
    assert run.coverage_error == ""
    assert run.executed["props/test_p.py::test_double"] == {"src/mod.py": (2, 3)}
    assert "props/test_p.py::test_nothing" not in run.executed  # it ran no measured line
    assert run.executed[""] == {"src/mod.py": (1, 6)}  # the module body, at import
    # Without Plan.coverage nothing is measured, and nothing is claimed.
    plain = testrun.run(
        testrun.Plan(tree=tree, args=("props",), conftest_roots=("props",), pythonpath=("src",)),
        scratch=tmp_path / "scratch2",
    )
    assert plain.executed == {} and plain.coverage_error == ""


def test_a_measurement_that_failed_is_a_reason_not_a_silent_zero() -> None:
    from patchjudge import testrun

    start = b'{"event": "start", "shadowed": [], "coverage_error": "coverage.py did not start: X"}'
    parsed = testrun.parse_channel(start + b"\n")
    assert parsed["coverage_error"] == "coverage.py did not start: X"
    finish = b'{"event": "finish", "exitstatus": 0, "coverage_error": "failed while measuring"}'
    assert testrun.parse_channel(b'{"event": "start"}\n' + finish)["coverage_error"] == (
        "failed while measuring"
    )


def test_the_patchs_syntax_warnings_stay_quiet() -> None:
    """The suite turns warnings into errors: an invalid escape in the patch must not raise."""
    f = changed('def f(x):\n    return x == "\\d"\n', {2})
    assert f.lines == {2}
    assert "src/m.py:2: == -> !=" in [m.describe() for m, _ in review.choose([f], 1, 9, bool)]


# --- exercised: executed, and where mutants were tried, one killed (issue 18) ---

SMALL = "def f(x):\n    y = x + 1\n    if y > 3:\n        return 0\n    return y\n"


def _mutant(path: str, line: int) -> review.Mutant:
    return review.Mutant(path, line, line, "change_constant", "1 -> 2", 0, 1, "2")


K, S, N = review.Fate.KILLED, review.Fate.SURVIVED, review.Fate.NOT_TRIED
EXERCISED = [
    # (executed lines, (line, fate) of the mutants tried, unexercised ranges)
    ({1, 2, 3, 4, 5}, [], []),
    ({1, 2, 3, 5}, [], ["src/m.py:4"]),
    ({1, 2, 3, 4, 5}, [(2, K)], []),
    ({1, 2, 3, 4, 5}, [(2, S)], ["src/m.py:2"]),
    ({1, 2, 3, 4, 5}, [(2, N)], ["src/m.py:2"]),  # untried proves nothing either
    ({1, 2, 3, 4, 5}, [(2, S), (2, K)], []),  # one killed is enough
    ({1, 2, 3, 4, 5}, [(2, S), (3, S)], ["src/m.py:2-3"]),
    ({1, 3, 4, 5}, [(2, K)], ["src/m.py:2"]),  # a kill without execution: forged or not, not run
    (set(), [], ["src/m.py:1-5"]),
]


@pytest.mark.parametrize(("ran", "fates", "expected"), EXERCISED)
def test_a_changed_line_is_exercised_when_executed_and_one_of_its_mutants_died(
    ran: set[int], fates: list[tuple[int, review.Fate]], expected: list[str]
) -> None:
    f = changed(SMALL, range(1, 6))
    results = [(_mutant("src/m.py", line), fate) for line, fate in fates]
    assert review.unexercised([f], {"src/m.py": frozenset(ran)}, results) == expected


def test_only_changed_lines_can_be_unexercised() -> None:
    f = changed(SMALL, {4})
    assert review.unexercised([f], {"src/m.py": frozenset({1, 2, 3, 5})}, []) == ["src/m.py:4"]
    assert review.unexercised([f], {"src/m.py": frozenset({1, 2, 3, 4, 5})}, []) == []
    # A mutant elsewhere in the file says nothing about the changed line.
    other = [(_mutant("src/m.py", 2), S), (_mutant("src/other.py", 4), S)]
    assert review.unexercised([f], {"src/m.py": frozenset({4})}, other) == []


def test_import_time_lines_count_as_executed() -> None:
    # "" is coverage's context for what ran outside any test: a module's top level.
    f = changed("X = 1\ndef f():\n    return X\n", range(1, 4))
    executed = review.executed_lines({"": {"src/m.py": [1, 2]}, "t::a": {"src/m.py": [3]}}, [f])
    assert review.unexercised([f], executed, []) == []


# --- arms: code on a line that need not run when the line does (red team, session 12) ---


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = 1\n", []),
        ("a = 1; b = 2\n", []),  # a simple statement after another runs when it does
        ("if c:\n    x = 1\n", []),  # its own line: coverage sees it
        ("if c: return 0\n", ["return 0"]),
        ("if (c and\n    d): return 0\n", ["d", "return 0"]),
        ("while c: n += 1\n", ["n += 1"]),
        ("for x in xs: n += x\n", ["n += x"]),
        ("with m: x = 1\n", ["x = 1"]),
        ("def f(): return 0\n", ["return 0"]),
        ("class C: x = 1\n", []),  # a class body runs with the class statement
        ("y = 0 if c else s\n", ["0", "s"]),
        ("y = a or b and c\n", ["b and c", "c"]),
        ("f = lambda: 0\n", ["0"]),
        ("y = [x * 2 for x in xs if x]\n", ["x * 2"]),
        ("y = {k: v for k, v in d}\n", ["k", "v"]),
        (
            "match xs:\n    case [*_] if len(xs) > 5: return 0\n    case _: return 1\n",
            ["len(xs) > 5", "return 0", "return 1"],
        ),
        ("match xs:\n    case []:\n        return 0\n", []),
    ],
)
def test_arms_are_code_that_need_not_run_when_its_line_does(
    source: str, expected: list[str]
) -> None:
    tree = ast.parse(source if "return" not in source or "def" in source else _in_def(source))
    assert sorted(ast.unparse(a) for a in review.arms(tree)) == sorted(expected)


def _in_def(source: str) -> str:
    return "def g():\n" + "".join(f"    {line}\n" for line in source.splitlines())


ARMED = "def total(xs):\n    return 0 if len(xs) > 5000 else sum(xs)\n"


def test_each_arm_of_an_executed_statement_is_tried_whatever_the_limit() -> None:
    f = changed(ARMED, {2})
    chosen = [m.describe() for m, _ in review.choose([f], 3, 1, lambda m: True)]
    assert "src/m.py:2: raise where it runs: 0" in chosen
    assert "src/m.py:2: raise where it runs: sum(xs)" in chosen
    assert len(chosen) == 3  # the two arms, and the one the limit allows
    assert len(review.choose([f], 3, 1, lambda m: False)) == 1  # unexecuted: none forced...
    assert review.choose([f], 3, 0, lambda m: True) == []  # ...and none when mutants are off


def test_the_arms_of_a_changed_statement_are_tried_though_their_lines_are_not_changed() -> None:
    # The patch changed only the test of a three-line conditional expression.
    source = (
        "def total(xs):\n    return (0\n            if len(xs) > 5000\n            else sum(xs))\n"
    )
    f = changed(source, {3})
    described = [m.describe() for m in review.candidates(f)]
    assert "src/m.py:2: raise where it runs: 0" in described
    assert "src/m.py:4: raise where it runs: sum(xs)" in described
    assert "src/m.py:2: 0 -> 1" not in described  # other mutants: the changed lines only
    # An unchanged statement's arms are not tried.
    assert {m.line for m in review.candidates(changed(source + "y = 1\n", {5}))} == {5}


def test_a_line_whose_arm_never_died_is_unexercised_though_another_mutant_did() -> None:
    f = changed(ARMED, {2})
    by = {m.describe().split(": ", 1)[1]: m for m in review.candidates(f)}
    ran = {"src/m.py": frozenset({1, 2})}
    flip, zero, rest = (
        by["> -> <="],
        by["raise where it runs: 0"],
        by["raise where it runs: sum(xs)"],
    )
    assert review.unexercised([f], ran, [(flip, K), (zero, S), (rest, K)]) == ["src/m.py:2"]
    assert review.unexercised([f], ran, [(flip, K), (zero, N), (rest, K)]) == ["src/m.py:2"]
    assert review.unexercised([f], ran, [(flip, K), (zero, K), (rest, K)]) == []
    # The constant in the arm dying is the arm running, too.
    assert review.unexercised([f], ran, [(flip, S), (by["0 -> 1"], K), (rest, K)]) == ["src/m.py:2"]
    assert review.unexercised([f], ran, [(flip, K), (by["0 -> 1"], K), (rest, K)]) == []


# --- the patch's own dunders (issue 18) -------------------------------------------

DUNDER_SOURCE = """\
class Money:
    def __eq__(self, other):
        return True


class Kept:
    def __eq__(self, other):
        return self is other


def factory():
    class Local:
        def __len__(self):
            return 0

    return Local()
"""


@pytest.mark.parametrize(
    ("path", "pythonpath", "name"),
    [
        ("src/calc/__init__.py", ("src",), "calc"),
        ("src/calc/core.py", ("src",), "calc.core"),
        ("calc.py", (".",), "calc"),
        ("lib/x/y.py", ("src", "lib"), "x.y"),
        ("tests/test_x.py", ("src",), None),
        ("src/my-lib/x.py", ("src",), None),
        ("src/calc/data.txt", ("src",), None),
    ],
)
def test_module_name(path: str, pythonpath: tuple[str, ...], name: str | None) -> None:
    assert review.module_name(path, pythonpath) == name


@pytest.mark.parametrize(
    ("changed", "classes"),
    [
        ({3}, {"Money": 1}),
        ({1}, {"Money": 1}),
        ({8}, {"Kept": 6}),
        ({14}, {"factory.<locals>.Local": 12}),
        ({11}, {}),
        (set(), {}),
    ],
)
def test_changed_classes(changed: set[int], classes: dict[str, int]) -> None:
    f = review.changed_file("src/calc/__init__.py", DUNDER_SOURCE.encode(), changed)
    assert f is not None
    assert review.changed_classes(f) == classes


def test_only_the_dunders_of_classes_the_patch_changes_are_named() -> None:
    f = review.changed_file("src/calc/__init__.py", DUNDER_SOURCE.encode(), {3})
    assert f is not None
    dunders = {
        "eval/properties/test_m.py::test_a": ["calc.Money.__eq__", "calc.Kept.__eq__"],
        "eval/properties/test_m.py::test_b": ["calc.Money.__eq__"],
        "eval/properties/test_m.py::test_c": ["other.Money.__eq__"],
    }
    assert review.patch_dunders(dunders, [f], ("src",)) == [
        "calc.Money.__eq__ (src/calc/__init__.py:1): "
        "eval/properties/test_m.py::test_a, eval/properties/test_m.py::test_b"
    ]
    assert review.patch_dunders(dunders, [], ("src",)) == []


# --- the judge's own record of operations on the code's objects (issue 18) -------

NAMES_SOURCE = """\
import dataclasses


class Money:
    def __eq__(self, other):
        return True


Money.__lt__ = lambda self, other: True


@dataclasses.dataclass(order=True)
class Row:
    x: int


Fake = type("Fake", (), {"__len__": lambda self: 0})
"""


@pytest.mark.parametrize(
    ("changed", "sources"),
    [
        ({5}, {"__eq__": ["calc.Money.__eq__ (src/calc/__init__.py:4)"]}),
        ({9}, {"__lt__": ["__lt__ named at src/calc/__init__.py:9"]}),
        ({17}, {"__len__": ["__len__ named at src/calc/__init__.py:17"]}),
        # A decorated class may be given any dunder: all count.
        ({14}, {n: [f"calc.Row.{n} (src/calc/__init__.py:13)"] for n in sorted(review._DUNDERS)}),
        # The decorator is the class's: a patch that only adds `order=True` changes it.
        ({12}, {n: [f"calc.Row.{n} (src/calc/__init__.py:13)"] for n in sorted(review._DUNDERS)}),
        ({1}, {}),
    ],
)
def test_dunder_sources(changed: set[int], sources: dict[str, list[str]]) -> None:
    f = review.changed_file("src/calc/__init__.py", NAMES_SOURCE.encode(), changed)
    assert f is not None
    assert review.dunder_sources([f], ("src",)) == sources


T = "eval/properties/test_m.py::test_a"


@pytest.mark.parametrize(
    ("changed", "ops", "held"),
    [
        # Whatever the worker claims, an == on its object in a test where the patch
        # changed a class defining __eq__ holds: the lie hides nothing.
        ({3}, [("eq", "builtins.function")], ["calc.Money.__eq__ (src/calc/__init__.py:1)"]),
        ({3}, [("eq", "calc.Kept")], ["calc.Money.__eq__ (src/calc/__init__.py:1)"]),
        # != falls back to __eq__; ordering may be derived from it (total_ordering).
        ({3}, [("ne", "calc.Kept")], ["calc.Money.__eq__ (src/calc/__init__.py:1)"]),
        ({3}, [("lt", "calc.Kept")], ["calc.Money.__eq__ (src/calc/__init__.py:1)"]),
        # An operation no changed dunder answers, on a class the patch left alone: the base's.
        ({3}, [("len", "calc.Kept")], []),
        ({7}, [("eq", "calc.Kept")], ["calc.Kept.__eq__ (src/calc/__init__.py:6)"]),
        ({11}, [("eq", "calc.Kept")], []),
        # Claims the judge can check: a class that crosses as data, one the tree lacks.
        (
            {11},
            [("eq", "builtins.int")],
            ["builtins.int.__eq__ (the worker named a class that crosses as data)"],
        ),
        (
            {11},
            [("bool", "calc.Ghost")],
            ["calc.Ghost.__bool__ (a class the head's tree does not define)"],
        ),
        ({11}, [("hash", "not a name")], ["'not a name'.__hash__ (the worker named no class)"]),
        # A library's class or a function: not the tree's, not checkable, not held by itself.
        ({11}, [("eq", "sortedcontainers.SortedList"), ("bool", "builtins.function")], []),
        # The claimed class is one the patch changes.
        ({14}, [("len", "calc.factory.<locals>.Local")],
         ["calc.factory.<locals>.Local.__len__ (src/calc/__init__.py:12)"]),
    ],
)  # fmt: skip
def test_patch_dunders_from_the_judges_record(
    changed: set[int], ops: list[tuple[str, str]], held: list[str]
) -> None:
    f = review.changed_file("src/calc/__init__.py", DUNDER_SOURCE.encode(), changed)
    assert f is not None
    defined = review.defined_classes(DUNDER_SOURCE)
    tree_classes = {claim: claim.removeprefix("calc.") in defined for _, claim in ops}
    found = review.patch_dunders(
        {}, [f], ("src",), operations={T: ops}, tree_classes=tree_classes, tree_names={"calc"}
    )
    assert found == [f"{h}: {T}" for h in sorted(held)]


def test_claimed_modules() -> None:
    assert review.claimed_modules("calc.core.Money") == ["calc.core", "calc"]
    assert review.claimed_modules("Money") == []


@pytest.mark.parametrize(
    ("changed", "ops", "held"),
    [
        # Arithmetic with the judge's operand decides as == does (redteam9): `got - x`
        # is the code's __sub__, `x - got` its __rsub__, `got -= x` __isub__ or __sub__.
        ({3}, [("sub", "calc.Amount")], ["calc.Amount.__sub__ (src/calc/__init__.py:1)"]),
        ({3}, [("rsub", "calc.Kept")], ["calc.Amount.__rsub__ (src/calc/__init__.py:1)"]),
        ({3}, [("isub", "calc.Kept")], ["calc.Amount.__sub__ (src/calc/__init__.py:1)"]),
        ({3}, [("and_", "calc.Amount")], ["calc.Amount.__and__ (src/calc/__init__.py:1)"]),
        # A metaclass's isinstance answer, on a class of the patch's.
        ({10}, [("instancecheck", "calc.Meta")], ["calc.Meta.__instancecheck__ (src/calc/__init__.py:9)"]),
        # Arithmetic on a class the patch left alone is the base's, as == is.
        ({14}, [("sub", "calc.Amount"), ("rsub", "calc.Amount")], []),
    ],
)  # fmt: skip
def test_arithmetic_and_instancecheck_from_the_judges_record(
    changed: set[int], ops: list[tuple[str, str]], held: list[str]
) -> None:
    source = (
        "class Amount:\n    def __sub__(self, other):\n        return 0\n\n"
        "    def __rsub__(self, other):\n        return 0\n\n\n"
        "class Meta(type):\n    def __instancecheck__(cls, obj):\n        return True\n\n\n"
        "def f():\n    return 1\n"
    )
    f = review.changed_file("src/calc/__init__.py", source.encode(), changed)
    assert f is not None
    found = review.patch_dunders(
        {},
        [f],
        ("src",),
        operations={T: ops},
        tree_classes={"calc.Amount": True, "calc.Kept": True, "calc.Meta": True},
        tree_names={"calc"},
    )
    assert found == [f"{h}: {T}" for h in sorted(held)]


@pytest.mark.parametrize(
    ("changed", "ops", "held"),
    [
        # A view's own answer (redteam10): its base type's `-` on the judge's data, where a
        # user's interpreter calls the code's override; the patch's __sub__ holds the test.
        ({3}, [("sub", VIEW_CLAIM)], ["calc.Amount.__sub__ (src/calc/__init__.py:1)"]),
        # No dunder of that name in the patch: nothing held, and the claim names no class
        # (a handle's claim that names none would hold).
        ({3}, [("eq", VIEW_CLAIM), ("hash", VIEW_CLAIM)], []),
        ({14}, [("sub", VIEW_CLAIM), ("rsub", VIEW_CLAIM)], []),
    ],
)  # fmt: skip
def test_an_operation_a_view_answered_holds_only_the_patchs_dunders(
    changed: set[int], ops: list[tuple[str, str]], held: list[str]
) -> None:
    source = (
        "class Amount:\n    def __sub__(self, other):\n        return 0\n\n"
        "    def __rsub__(self, other):\n        return 0\n\n\n"
        "class Meta(type):\n    def __instancecheck__(cls, obj):\n        return True\n\n\n"
        "def f():\n    return 1\n"
    )
    f = review.changed_file("src/calc/__init__.py", source.encode(), changed)
    assert f is not None
    found = review.patch_dunders(
        {}, [f], ("src",), operations={T: ops}, tree_classes={}, tree_names={"calc"}
    )
    assert found == [f"{h}: {T}" for h in sorted(held)]


BLIND_SOURCE = """\
class Any:
    def __eq__(self, other):
        return True

    __sub__ = lambda self, other: 0

    def __lt__(self, other):
        \"\"\"Never less.\"\"\"
        return NotImplemented


class Matcher(Any):
    def __eq__(self, other):
        return self.pattern == other


class Reads:
    def __eq__(self, other):
        return vars(self) == vars(other)

    def __contains__(self, *args):
        return True

    def __hash__(self):
        return 0


class Refuses:
    @abc.abstractmethod
    def __eq__(self, other):
        return False

    def __lt__(self, other):
        raise TypeError("unordered")


def f():
    class Local(Any):
        pass

    return Local()
"""


def test_a_dunder_that_never_reads_its_operand_is_found_by_class() -> None:
    assert review.operand_blind(BLIND_SOURCE) == {
        "Any": frozenset({"__eq__", "__sub__"}),
        # Inherits the blind __sub__; its own __eq__ reads `other`.
        "Matcher": frozenset({"__sub__"}),
        "f.<locals>.Local": frozenset({"__eq__", "__sub__"}),
    }
    assert review.operand_blind("class (:\n") == {}


def test_a_blind_dunder_of_a_class_the_patch_left_alone_holds_the_test() -> None:
    f = review.changed_file("src/calc/__init__.py", b"def total(xs):\n    return 0\n", {2})
    assert f is not None
    blind = {"calc.matching.Any": frozenset({"__eq__"})}
    ops = [("eq", "calc.matching.Any"), ("lt", "calc.matching.Any"), ("eq", "calc.Kept")]
    found = review.patch_dunders(
        {},
        [f],
        ("src",),
        operations={T: ops},
        tree_classes={"calc.matching.Any": True, "calc.Kept": True},
        tree_names={"calc"},
        blind=blind,
    )
    assert found == [f"calc.matching.Any.__eq__, {OPERAND_BLIND}: {T}"]


def test_a_blind_dunder_the_worker_saw_answer_holds_though_the_claim_was_another() -> None:
    # The claim is asked once a handle: an object that sets its __class__ to the base's
    # matcher after the first operation is claimed as the honest class it was.
    f = review.changed_file("src/calc/__init__.py", b"def total(xs):\n    return 0\n", {2})
    assert f is not None
    found = review.patch_dunders(
        {T: ["calc.matching.Any.__eq__", "calc.Kept.__eq__"]},
        [f],
        ("src",),
        operations={T: [("ge", "calc.Kept"), ("eq", "calc.Kept")]},
        tree_classes={"calc.matching.Any": True, "calc.Kept": True},
        tree_names={"calc"},
        blind={"calc.matching.Any": frozenset({"__eq__"})},
    )
    assert found == [f"calc.matching.Any.__eq__, {OPERAND_BLIND}: {T}"]


def test_the_channels_operations_are_read_and_merged() -> None:
    from patchjudge import testrun

    lines = [
        b'{"event": "operations", "nodeid": "t::a", "ops": [["eq", "calc.Money"]]}',
        b'{"event": "operations", "nodeid": "t::a", "ops": [["bool", "calc.Money"]]}',
        b'{"event": "operations", "nodeid": "t::b", "ops": "not pairs"}',
    ]
    parsed = testrun.parse_channel(b"\n".join(lines) + b"\n")
    assert parsed["operations"] == {"t::a": (("bool", "calc.Money"), ("eq", "calc.Money"))}
    assert parsed["garbled"] == 1
    run = testrun.TestRun(
        exitstatus=0, timed_out=False, started=True, finished=True, collected={}, markers={},
        collect_errors={}, outcomes=(), garbled=0, operations={"t::a": (("eq", "x.Y"),)},
        dunders={"t::a": ("x.Y.__eq__",)},
    )  # fmt: skip
    other = testrun.TestRun(**{**run.__dict__, "operations": {}, "dunders": {}})
    whole = testrun.merged([other, run])
    # Both records survive a mix of in- and out-of-process files (they used to be dropped).
    assert whole.operations == run.operations
    assert whole.dunders == run.dunders


DYNAMIC_SOURCE = """\
class Money(tuple):
    pass


name = "__e" + "q__"
Money = type("Money", (Money,), {name: lambda s, o: True})
types.new_class("Other", (), {}, lambda ns: ns.update({name: bool}))
setattr(Money, name, lambda s, o: True)
setattr(Money, "label", "m")
kind = type(Money)
"""


@pytest.mark.parametrize(
    ("line", "held"),
    [
        # A class built at run time, or a method set by a computed name: no dunder to read
        # and no class statement to check the worker's claim against (issue 18).
        (6, True),
        (7, True),
        (8, True),
        # Honest look-alikes: a literal, non-dunder attribute; type() of an object.
        (9, False),
        (10, False),
    ],
)
def test_a_class_built_at_run_time_counts_with_every_dunder(line: int, held: bool) -> None:
    f = review.changed_file("src/calc/__init__.py", DYNAMIC_SOURCE.encode(), {line})
    assert f is not None
    where = f"a class built or given a method at run time at src/calc/__init__.py:{line}"
    sources = review.dunder_sources([f], ("src",))
    assert (sources.get("__eq__") == [where]) is held, sources
    assert all(where in places for places in sources.values()) or not held
    # The worker names a class the head defines and the patch left alone: still held.
    found = review.patch_dunders(
        {},
        [f],
        ("src",),
        operations={T: [["eq", "calc.Money"]]},
        tree_classes={"calc.Money": True},
        tree_names=("calc",),
    )
    assert bool(found) is held, found


IMPORTING = """import json
from unittest.mock import ANY
import importlib
from . import sibling


def total(xs):
    lib = importlib.import_module("dirty_equals")
    return ANY if xs else json.dumps(lib)
"""


def test_changed_imports_name_absolute_modules_of_the_changed_lines_only() -> None:
    f = review.changed_file("src/calc/__init__.py", IMPORTING.encode(), {2, 4, 8})
    assert f is not None
    assert review.changed_imports([f]) == {
        "unittest.mock": "src/calc/__init__.py:2",
        "unittest.mock.ANY": "src/calc/__init__.py:2",
        "dirty_equals": "src/calc/__init__.py:8",
    }  # json and importlib: unchanged lines; `from . import`: the tree's own


def test_a_class_from_a_module_the_patch_imports_holds_its_comparisons() -> None:
    f = review.changed_file("src/calc/__init__.py", IMPORTING.encode(), {2})
    assert f is not None
    ops = {T: [("eq", "unittest.mock._ANY"), ("eq", "ipaddress.IPv4Address"), ("eq", "calc.Money")]}
    found = review.patch_dunders(
        {}, [f], ("src",), operations=ops, tree_classes={"calc.Money": True}, tree_names={"calc"}
    )
    # ipaddress: a module the patch does not import (the base's code handed it over);
    # calc.Money: a class of the tree the patch leaves alone.
    assert found == [
        f"unittest.mock._ANY.__eq__ (a class of unittest.mock, imported at "
        f"src/calc/__init__.py:2): {T}"
    ]


@pytest.mark.parametrize(
    ("executed", "kept"),
    [
        ({}, []),
        ({"tests/test_a.py::t": {"src/calc/x.py": [1]}}, []),
        ({"tests/test_a.py::t": {"tools/impl.py": [2]}}, ["tools/impl.py"]),
        (
            {"a::t": {"tools/impl.py": [2]}, "b::t": {"tests/h.py": [1]}},
            ["tests/h.py", "tools/impl.py"],
        ),
        ({"a::t": {"tools/impl.py": []}}, []),
    ],
    ids=["nothing ran", "another file ran", "one ran", "both ran", "listed without a line"],
)
def test_an_unlisted_file_is_reviewed_once_a_property_executed_it(
    executed: dict[str, dict[str, list[int]]], kept: list[str]
) -> None:
    changes = [Change("A", "000000", "100644", None, p) for p in ("tests/h.py", "tools/impl.py")]
    assert [c.new_path for c in review_run.ran_in(changes, executed)] == kept


@pytest.mark.parametrize(
    ("links", "ends"),
    [
        ({}, []),
        ({"src/m.py": "m.txt"}, ["src/m.txt"]),
        ({"src/m.py": "../tools/m.py"}, ["tools/m.py"]),
        ({"src/a.py": "b.py", "src/b.py": "../c.txt"}, ["c.txt"]),
        ({"src/pkg": "../tools/pkg"}, ["tools/pkg"]),
        ({"src/m.py": "/etc/passwd"}, []),
        ({"src/m.py": "../../outside.py"}, []),
        ({"src/a.py": "b.py", "src/b.py": "a.py"}, []),
    ],
    ids=["none", "beside", "off the path", "a chain", "a directory", "absolute", "out", "a loop"],
)
def test_a_symlink_is_reviewed_as_the_file_at_the_end_of_its_chain(
    links: dict[str, str], ends: list[str]
) -> None:
    assert review_run.linked_targets(links) == ends
