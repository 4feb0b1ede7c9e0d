"""A failed property's reason: the assertion's first line, then the example, no hypothesis comments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import failure

# Tails of real `longreprtext`s (pytest 9, hypothesis 6.170), as the plugin sends them.
REPLACE_ME = """\
    @given(st.integers())
    def test_replace_me(x):
        assert x == x
>       raise AssertionError("write a real property in eval/properties/test_public_api.py")
E       AssertionError: write a real property in eval/properties/test_public_api.py
E       Failing test case: test_replace_me(
E           x=0,  # or any other generated value
E       )

test_x.py:6: AssertionError"""
TWO_ARGS = """\
x = 5, s = ''

    @given(st.integers(), st.text())
    def test_cmp(x, s):
>       assert x < 5, f"too big: {x}\\nsecond line"
E       AssertionError: too big: 5
E         second line
E       assert 5 < 5
E       Failing test case: test_cmp(
E           x=5,
E           s='# not a comment',  # or any other generated value
E       )

test_x.py:10: AssertionError"""
PLAIN = """\
def test_plain():
        gone = ["six.a"]
>       assert not gone, f"public names gone: {', '.join(gone)}"
E       AssertionError: public names gone: six.a
E       assert not ['six.a']

test_x.py:14: AssertionError"""
BARE = """\
def test_bare():
>       assert 1 + 1 == 3
E       assert (1 + 1) == 3

test_x.py:17: AssertionError"""
RAISED = """\
def helper():
>       {}["k"]
E       ValueError: wrapped

During handling of the above exception, another exception occurred:

def test_exc():
>       {}["k"]
E       KeyError: 'k'

test_x.py:20: KeyError"""
IMPORT = """\
>       imported = importlib.import_module(module)
E       ImportError: cannot import name 'checkRecursive' from 'pyflakes.api' (/tmp/patchjudge-ri7kayf6/tree/pyflakes/api.py)

eval/properties/test_public_api.py:38: ImportError"""
# The scratch paths the lanes make now: tempfile's own names, the worker's tree two hex dirs.
IMPORT_WORKER = IMPORT.replace(
    "/tmp/patchjudge-ri7kayf6/tree/", "/tmp/tmp5rs80ox1/74682a65/da57c90e/"
)
IMPORT_LANE = IMPORT.replace("/tmp/patchjudge-ri7kayf6/tree/", "/var/tmp/tmpk_3n9zq0/tree/")
OLD_STYLE = """\
E       assert -1 >= 0
E       Falsifying example: test_total_never_negative(xs=[0, 0, 0])"""

# (longrepr, when, falsifying the plugin folded or None to fold it here, the reason)
TABLE = [
    (REPLACE_ME, "call", None,
     "property failed: p::t: write a real property in eval/properties/test_public_api.py; "
     "Failing test case: test_replace_me(x=0)"),
    (TWO_ARGS, "call", None,
     "property failed: p::t: too big: 5; Failing test case: test_cmp(x=5, s='# not a comment')"),
    (PLAIN, "call", None, "property failed: p::t: public names gone: six.a"),
    (BARE, "call", None, "property failed: p::t: assert (1 + 1) == 3"),
    (RAISED, "call", None, "property failed: p::t: KeyError: 'k'"),
    (OLD_STYLE, "call", None,
     "property failed: p::t: assert -1 >= 0; Falsifying example: test_total_never_negative(xs=[0, 0, 0])"),
    (BARE, "setup", None, "property failed in setup: p::t: assert (1 + 1) == 3"),
    (IMPORT, "call", None,
     "property failed: p::t: ImportError: cannot import name 'checkRecursive' from 'pyflakes.api'"
     " (pyflakes/api.py)"),
    (IMPORT_WORKER, "call", None,
     "property failed: p::t: ImportError: cannot import name 'checkRecursive' from 'pyflakes.api'"
     " (pyflakes/api.py)"),
    (IMPORT_LANE, "call", None,
     "property failed: p::t: ImportError: cannot import name 'checkRecursive' from 'pyflakes.api'"
     " (pyflakes/api.py)"),
    ("", "call", [], "property failed: p::t"),
    ("", "call", ["Falsifying example: f(x=1)"], "property failed: p::t: Falsifying example: f(x=1)"),
]  # fmt: skip


@pytest.mark.parametrize(("longrepr", "when", "folded", "expected"), TABLE)
def test_reason(longrepr, when, folded, expected):
    falsifying = failure.examples(longrepr) if folded is None else folded
    assert failure.reason("p::t", when, longrepr, falsifying) == expected


def test_the_plugin_folds_with_the_same_function():
    from patchjudge import pytest_plugin

    assert pytest_plugin._falsifying(TWO_ARGS) == failure.examples(TWO_ARGS)
    assert failure.examples(TWO_ARGS) == ["Failing test case: test_cmp(x=5, s='# not a comment')"]


def test_a_long_message_is_cut_to_one_cell():
    text = "E       AssertionError: " + "x" * 1000
    said = failure.assertion(text)
    assert len(said) == failure.ASSERTION_CAP
    assert said.endswith("…")


@given(st.text(max_size=300))
def test_any_text_gives_one_line_that_starts_with_the_node_id(text):
    said = failure.reason("p::t", "call", text, failure.examples(text))
    assert said.startswith("property failed: p::t")
    assert len(said.splitlines()) == 1
