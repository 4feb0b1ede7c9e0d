"""Path policy as a table: gitignore globs, first match wins, protected sides, symlinks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import MapEntry, parse_ledger
from patchjudge.paths import Change, classify, matches, symlink_target, under, within

MAP = (
    MapEntry("src/**", frozenset({"properties", "freeze"})),
    MapEntry("tests/fixtures/**", frozenset({"fixtures"})),
    MapEntry("tests/**", frozenset({"freeze"})),
    MapEntry("docs/**", frozenset()),
    MapEntry("*.md", frozenset()),
)
PROTECTED = parse_ledger(b'[map]\n"x" = []\n').judge_paths()


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("src/**", "src/a/b.py", True),
        ("src/**", "lib/src/a.py", False),
        ("*.md", "docs/deep/x.md", True),  # no slash: any depth, as in .gitignore
        ("/README.md", "docs/README.md", False),
        ("docs/", "docs/a.md", True),
        ("eval/**", "eval", False),
        ("a/**/b.py", "a/x/y/b.py", True),
        ("noxfile.py", "noxfile.py", True),
    ],
)
def test_gitignore_semantics(pattern: str, path: str, hit: bool) -> None:
    assert matches(pattern, path) is hit


def _classify(*changes: Change, symlinks: dict[str, str] | None = None, judge_files=()):  # type: ignore[no-untyped-def]
    return classify(
        changes,
        protected=PROTECTED,
        map_entries=MAP,
        properties_paths=("eval/properties",),
        symlinks=symlinks or {},
        judge_files=judge_files,
    )


def A(path: str, mode: str = "100644") -> Change:
    return Change("A", "000000", mode, None, path)


def M(path: str, old: str = "100644", new: str = "100644") -> Change:
    return Change("M", old, new, path, path)


def R(old: str, new: str) -> Change:
    return Change("R", "100644", "100644", old, new)


def test_first_match_wins_and_lanes_union() -> None:
    result = _classify(M("tests/fixtures/a.json"), M("docs/x.md"))
    assert result.problems == ()
    assert result.mapped == {"tests/fixtures/a.json": "tests/fixtures/**", "docs/x.md": "docs/**"}
    assert result.forced == {"fixtures"}
    assert _classify(M("src/a.py"), M("tests/t.py")).forced == {"properties", "freeze"}


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (M("eval/gate.toml"), "protected path changed: eval/gate.toml (modified)"),
        (
            R("src/a.py", "eval/properties/a.py"),
            "protected path changed: eval/properties/a.py: src/a.py -> eval/properties/a.py (renamed)",
        ),
        (
            R("eval/properties/test_x.py", "src/x.py"),
            "protected path changed: eval/properties/test_x.py -> src/x.py (renamed)",
        ),
        (Change("C", "100644", "100644", "src/a.py", "constraints/x.txt"), "(copied)"),
        (
            Change("D", "100644", "000000", "noxfile.py", None),
            "protected path changed: noxfile.py (deleted)",
        ),
        (
            Change("T", "100644", "120000", "eval/gate.toml", "eval/gate.toml"),
            "eval/gate.toml (file -> symlink)",
        ),
        (M(".github/workflows/ci.yml", "100644", "100755"), "(mode 100644 -> 100755)"),
        (A("Makefile"), "unmapped path: Makefile"),
        (
            A("eval/properties/test_new.py"),
            "new file under the properties path: eval/properties/test_new.py",
        ),
    ],
)
def test_each_problem_names_the_path(change: Change, fragment: str) -> None:
    problems = _classify(change).problems
    assert any(fragment in p for p in problems), problems


def test_both_sides_of_a_rename_must_be_mapped() -> None:
    result = _classify(R("src/a.py", "lib/a.py"))
    assert result.problems == ("unmapped path: lib/a.py (extend [map] in eval/gate.toml)",)
    assert result.forced == {"properties", "freeze"}


@pytest.mark.parametrize(
    ("link", "target", "fragment"),
    [
        ("src/evil", "../eval/gate.toml", "symlink into the judge"),
        ("src/evil", "../eval", "symlink into the judge"),
        ("src/evil", "..", "symlink into the judge"),
        ("src/evil", "/etc/passwd", "symlink out of the repository"),
        ("src/evil", "../../outside", "symlink out of the repository"),
    ],
)
def test_symlinks_into_the_judge_or_out(link: str, target: str, fragment: str) -> None:
    result = _classify(A(link, "120000"), symlinks={link: target}, judge_files=("eval/gate.toml",))
    assert any(fragment in p for p in result.problems), result.problems


def test_a_harmless_symlink_is_fine() -> None:
    assert (
        _classify(A("src/alias.py", "120000"), symlinks={"src/alias.py": "real.py"}).problems == ()
    )


@pytest.mark.parametrize(
    ("link", "target", "resolved"),
    [
        ("a/b", "c", "a/c"),
        ("a/b", "../c", "c"),
        ("a/b", "../../c", None),
        ("b", "/x", None),
        ("a/b", ".", "a"),
    ],
)
def test_symlink_target(link: str, target: str, resolved: str | None) -> None:
    assert symlink_target(link, target) == resolved


_PARTS = st.sampled_from(["", "a", "b", "eval", "eval/", "a/b", "a/b/", "ab", "/", "a//b"])


@given(st.lists(_PARTS, max_size=4), st.lists(_PARTS, min_size=1, max_size=4))
def test_within_answers_as_under_does(roots: list[str], parts: list[str]) -> None:
    # issue 20: the properties lane's pass over a 40,000-file tree uses `within`.
    path = "/".join(parts)
    assert within(roots)(path) is under(path, roots)


@pytest.mark.parametrize(
    ("path", "roots", "expected"),
    [
        ("eval/properties/test_x.py", ["eval/properties"], True),
        ("eval/properties", ["eval/properties/"], True),
        ("eval/propertiesX/test_x.py", ["eval/properties"], False),
        ("data/eval/properties/x.py", ["eval/properties"], False),
        ("x.py", [], False),
    ],
)
def test_within_table(path: str, roots: list[str], expected: bool) -> None:
    assert within(roots)(path) is expected
