"""The gate's prebuilt hypothesis Unicode tables reach the properties run, and only there."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from patchjudge import charmap, testrun

CHECK = """
import os
from pathlib import Path

from hypothesis import given, strategies as st
from hypothesis.internal.charmap import charmap_file


def test_tables_are_the_judges_before_any_strategy_runs():
    storage = Path(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"])
    assert storage.is_relative_to(Path(os.environ["HOME"]))
    assert charmap_file().is_relative_to(storage)
    assert charmap_file().read_bytes() == Path(os.environ["HOME"], "expected.bin").read_bytes()


@given(st.text(max_size=3))
def test_text_still_draws(s):
    assert isinstance(s, str)
"""


@pytest.fixture(scope="module")
def built() -> Mapping[str, bytes]:
    """One build for the module's tests (issue 20: ~2 CPU-s each); each test reads a copy."""
    return charmap.build()


def test_build_gives_hypothesis_tables_it_checked(built: Mapping[str, bytes]) -> None:
    files = dict(built)
    assert sorted(Path(p).name for p in files) == ["charmap.json.gz", "codec-v2-utf-8.json.gz"]
    categories = dict(
        json.loads(gzip.decompress(next(v for k, v in files.items() if "charmap" in k)))
    )
    assert categories["Co"][0] == [57344, 63743]  # private use area, as hypothesis documents


def test_tables_land_in_the_judges_storage_not_the_trees(
    tmp_path: Path, built: Mapping[str, bytes]
) -> None:
    files = dict(built)
    tree = tmp_path / "tree"
    (tree / "eval/properties").mkdir(parents=True)
    (tree / "eval/properties/test_check.py").write_text(CHECK)
    # A forged table committed by the patch under .hypothesis/ is never read.
    rel = next(p for p in files if "charmap" in p)
    (tree / ".hypothesis" / rel).parent.mkdir(parents=True)
    (tree / ".hypothesis" / rel).write_bytes(gzip.compress(b'[["Lu", [[65, 65]]]]'))
    scratch = tmp_path / "scratch"
    (scratch / "home").mkdir(parents=True)
    (scratch / "home/expected.bin").write_bytes(files[rel])
    plan = testrun.Plan(
        tree=tree,
        args=("eval/properties",),
        conftest_roots=("eval/properties",),
        seed=1,
        max_examples=10,
        timeout_s=120,
    )
    result = testrun.run(plan, scratch=scratch, hypothesis_tables=files)
    passed = {o.nodeid for o in result.outcomes if o.when == "call" and o.outcome == "passed"}
    assert len(passed) == 2, result.output


def test_prefetch_builds_in_a_child_and_hands_back_checked_bytes(
    built: Mapping[str, bytes],
) -> None:
    charmap.prefetch()
    ours = {k: gzip.decompress(v) for k, v in charmap.prefetched().items()}
    assert ours  # the gzip header names a temp file: compare what it holds
    assert ours == {k: gzip.decompress(v) for k, v in built.items()}


# Issue 20: the tables are built only when a base property may draw text.
_HEAD = "from hypothesis import given, strategies as st\n"
DRAWS = [
    ("@given(st.text())\ndef test_a(s): pass\n", True),
    ("@given(st.characters())\ndef test_a(c): pass\n", True),
    ("@given(st.from_regex(r'a+'))\ndef test_a(s): pass\n", True),
    ("@given(st.from_type(int))\ndef test_a(x): pass\n", True),  # unsure: a type may hold str
    ("@given(st.builds(dict))\ndef test_a(x): pass\n", True),
    ("@given(st.emails())\ndef test_a(x): pass\n", True),
    ("@given(x=...)\ndef test_a(x: int): pass\n", True),  # inferred from annotations
    ("from hypothesis.strategies import text as t\n@given(t())\ndef test_a(s): pass\n", True),
    ("from hypothesis.strategies import *\n@given(integers())\ndef test_a(x): pass\n", True),
    ("from hypothesis.extra.numpy import arrays\n", True),
    ("from hypothesis.extra import pandas\n", True),
    ("@given(st.data())\ndef test_a(d): d.draw(st.text())\n", True),
    ("def test_a(:\n", True),  # does not parse: unsure
    ("@given(st.integers(), st.lists(st.floats()))\ndef test_a(x, y): pass\n", False),
    ("@given(st.binary(), st.sampled_from('abc'))\ndef test_a(b, c): pass\n", False),
    ("@given(st.data())\ndef test_a(data): data.draw(st.integers())\n", False),
    ("def test_plain():\n    assert str(1) == '1'\n", False),  # `str` alone draws nothing
]


def test_may_draw_text() -> None:
    for body, expected in DRAWS:
        assert charmap.may_draw_text([(_HEAD + body).encode()]) is expected, body
    assert charmap.may_draw_text([]) is False
    ints = (_HEAD + DRAWS[-4][0]).encode()
    text = (_HEAD + DRAWS[0][0]).encode()
    assert charmap.may_draw_text([ints, text]) is True  # any file that may is enough


def test_a_cached_entry_is_only_the_two_tables_each_readable() -> None:
    import base64

    wanted = sorted(charmap._wanted())
    good = {name: gzip.compress(b"[]") for name in wanted}

    def entry(tables: dict[str, bytes]) -> bytes:
        return json.dumps({k: base64.b64encode(v).decode() for k, v in tables.items()}).encode()

    assert charmap._from_cache(entry(good)) == good
    assert charmap._from_cache(None) is None
    assert charmap._from_cache(b"not json") is None
    assert charmap._from_cache(entry({wanted[0]: good[wanted[0]]})) is None  # one missing
    assert charmap._from_cache(entry({**good, "../../evil": b"x"})) is None  # an extra path
    assert charmap._from_cache(entry({**good, wanted[0]: b"not gzip"})) is None
