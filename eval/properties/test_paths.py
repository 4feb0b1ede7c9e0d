"""Path classification is total: every changed path is mapped or a problem."""

from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import MapEntry
from patchjudge.paths import Change, classify

segment = st.sampled_from(["src", "eval", "tests", "docs", "a b", "x.py", "fixtures", "é"])
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)
MAP = (
    MapEntry("src/**", frozenset({"properties"})),
    MapEntry("tests/**", frozenset({"freeze"})),
    MapEntry("docs/**", frozenset()),
)
PROTECTED = ("eval/**",)


@st.composite
def changes(draw):
    status = draw(st.sampled_from("AMDRCT"))
    old = None if status == "A" else draw(paths)
    new = None if status == "D" else draw(paths)
    return Change(status, "100644", "100644", old, new)


@given(st.lists(changes(), max_size=8))
def test_every_path_is_mapped_or_reported(cs):
    result = classify(
        cs,
        protected=PROTECTED,
        map_entries=MAP,
        properties_paths=("eval/properties",),
        symlinks={},
    )
    for change in cs:
        for path in change.sides():
            assert path in result.mapped
            if result.mapped[path] is None:
                assert any(
                    path in p and ("unmapped" in p or "protected" in p) for p in result.problems
                )
            if path.startswith("eval/"):
                assert any(path in p and "protected" in p for p in result.problems)


@given(st.lists(changes(), max_size=8))
def test_forced_lanes_are_the_union_of_first_matches(cs):
    result = classify(cs, protected=PROTECTED, map_entries=MAP, properties_paths=(), symlinks={})
    expected = set()
    for change in cs:
        for path in change.sides():
            entry = next((e for e in MAP if path.startswith(e.pattern[:-2])), None)
            if entry:
                expected |= entry.lanes
    assert result.forced == expected
