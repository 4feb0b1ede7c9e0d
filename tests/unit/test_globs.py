"""The compiled matcher (issue 12) answers what one pathspec per pattern answers, first match first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import MapEntry
from patchjudge.paths import Globs, first_match, matches

# Pieces that exercise gitignore's corners: anchoring, `**`, classes,
# escapes, trailing slashes, negation, comments, dots.
_PIECE = st.sampled_from(
    ["a", "b", "src", "eval", "*", "**", "?", "[ab]", "[!a]", ".py", "x.md", "\\*", ".hidden", "é"]
)
_PATTERN = st.builds(
    lambda lead, parts, tail: lead + "/".join(parts) + tail,
    st.sampled_from(["", "/", "!", "#", "**/", "\\!"]),
    st.lists(_PIECE, min_size=1, max_size=4),
    st.sampled_from(["", "/", "/**", "/*"]),
)
_NAME = st.sampled_from(
    ["a", "b", "src", "eval", "x.md", "y.py", ".hidden", "[ab]", "*", "é", "ab"]
)
_PATH = st.lists(_NAME, min_size=1, max_size=5).map("/".join)


def _reference(patterns: tuple[str, ...], path: str) -> int | None:
    return next((i for i, p in enumerate(patterns) if matches(p, path)), None)


@given(st.lists(_PATTERN, max_size=12).map(tuple), st.lists(_PATH, min_size=1, max_size=20))
def test_compiled_matcher_agrees_with_one_pattern_at_a_time(
    patterns: tuple[str, ...], paths: list[str]
) -> None:
    compiled = Globs(patterns)
    for path in paths:
        assert compiled.first(path) == _reference(patterns, path), (patterns, path)


@given(st.lists(_PATTERN, min_size=1, max_size=8), _PATH)
def test_first_match_is_the_first_entry_that_matches(patterns: list[str], path: str) -> None:
    entries = [MapEntry(p, frozenset({str(i)})) for i, p in enumerate(patterns)]
    found = first_match(entries, path)
    expected = _reference(tuple(patterns), path)
    assert found == (None if expected is None else entries[expected])


def test_table() -> None:
    g = Globs(("docs/**", "*.md", "!keep.md", "#comment", "", "src/**", "*"))
    assert g.match("docs/a.md") == "docs/**"  # first match wins, not the most specific
    assert g.match("deep/x.md") == "*.md"
    assert g.match("src/a.py") == "src/**"
    assert g.match("anything") == "*"
    assert Globs(("!x",)).match("x") is None  # a lone negation matches nothing
    assert Globs(()).first("a") is None
