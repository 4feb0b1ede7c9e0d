"""parsed.parse: each distinct source parsed once, keyed by its content (issue 20)."""

from __future__ import annotations

import ast

import pytest

from patchjudge import parsed


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (b"x = 1\n", b"x = 1\n", True),  # one content, two paths: one tree
        (b"x = 1\n", b"x = 2\n", False),
        (b"x = 1\n", "x = 1\n", False),  # bytes honour a coding cookie, str does not
        ("é = 1\n", "é = 1\n", True),
        ("x = '\udcff'\n", "x = '\udcfe'\n", False),  # lone surrogates still key apart
    ],
)
def test_key(a: bytes | str, b: bytes | str, same: bool) -> None:
    assert (parsed.key(a) == parsed.key(b)) is same


def test_a_source_is_parsed_once_and_matches_ast_parse() -> None:
    parsed.clear()
    source = b"def f(x):\n    return x + 1\n"
    first = parsed.parse(source)
    assert parsed.parse(bytes(source)) is first
    assert ast.dump(first) == ast.dump(ast.parse(source))
    assert parsed.parse(source.decode()) is not first


def test_a_syntax_error_raises_every_time_and_is_not_kept() -> None:
    parsed.clear()
    for _ in range(2):
        with pytest.raises(SyntaxError):
            parsed.parse(b"def (:\n")
    assert parsed.parse(b"x = 1\n").body


def test_the_cache_is_bounded() -> None:
    parsed.clear()
    first = parsed.parse(b"n = -1\n")
    for i in range(600):
        parsed.parse(f"n = {i}\n")
    assert parsed.parse(b"n = -1\n") is not first  # evicted, parsed again
    assert ast.dump(parsed.parse(b"n = -1\n")) == ast.dump(first)


def test_the_patchs_syntax_warnings_are_not_the_gates() -> None:
    parsed.clear()
    # filterwarnings = error: a SyntaxWarning escaping would fail this test.
    assert parsed.parse(b"x = 'a' is 'a'\n").body
