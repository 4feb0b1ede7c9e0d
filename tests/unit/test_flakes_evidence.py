"""flakes' pure parts: sharding, candidates, rows to paste, merging shards."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.config import parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.freezefile import parse_registry
from patchjudge.lanes import flakes
from patchjudge.lanes.flakes import Shard
from patchjudge.repeat import Tally

LEDGER = parse_ledger(b'[map]\n"a" = []\n')


@given(st.lists(st.text(min_size=1), unique=True, max_size=50), st.integers(1, 7))
def test_shards_partition_the_node_ids(nodeids: list[str], total: int) -> None:
    shards = [flakes.shard_of(nodeids, Shard(i, total)) for i in range(1, total + 1)]
    assert sorted(n for s in shards for n in s) == sorted(nodeids)
    assert sum(len(s) for s in shards) == len(nodeids)


@given(st.lists(st.text(min_size=1), unique=True, max_size=30), st.text(min_size=1))
def test_adding_a_test_moves_no_other_test(nodeids: list[str], new: str) -> None:
    shard = Shard(1, 3)
    before = flakes.shard_of(nodeids, shard)
    after = flakes.shard_of([*nodeids, new], shard)
    assert [n for n in after if n != new] == [n for n in before if n != new]


@pytest.mark.parametrize(
    ("text", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), ("4/4", Shard(4, 4))]
)
def test_parse_shard(text: str, shard: Shard) -> None:
    assert flakes.parse_shard(text) == shard


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2", ""])
def test_bad_shards(text: str) -> None:
    with pytest.raises(PatchjudgeError) as exc:
        flakes.parse_shard(text)
    assert exc.value.one_line().startswith("--shard: ")


def test_candidates_are_min_fails_up_to_but_not_every_run() -> None:
    nodes = {f"t{f}": Tally(f, 12) for f in range(13)}
    assert flakes.candidates(nodes, 3) == [f"t{f}" for f in sorted(map(str, range(3, 12)))]
    assert flakes.candidates({"a": Tally(1, 1)}, 1) == []
    assert flakes.candidates({"a": Tally(0, 0)}, 1) == []


def test_rows_to_paste_parse_and_carry_today_and_the_age_limit() -> None:
    nodes = {'tests/t.py::test_q["x"]': Tally(3, 12)}
    text = flakes.freeze_rows(nodes, list(nodes), LEDGER, dt.date(2026, 12, 1), "a" * 40)
    row = tomllib.loads(text)["freeze"][0]
    assert row["nodeid"] == 'tests/t.py::test_q["x"]'
    assert row["owner"] == ""
    assert row["created"] == dt.date(2026, 12, 1)
    assert row["expires"] == dt.date(2026, 12, 15)
    assert (row["fail_count"], row["runs"]) == (3, 12)
    (parsed,) = parse_registry(text.encode(), "pasted")
    assert parsed.required_properties == ()


def _doc(which: str, tallies: dict[str, Tally], **over: object) -> dict[str, object]:
    doc = flakes.evidence_json(
        head="h" * 40,
        count=12,
        shard=flakes.parse_shard(which),
        seed=1,
        host_info={"python": "3.11.7", "platform": "linux-x86_64", "cpus": 2, "pins_sha256": "p"},
        nodes=tallies,
        min_fails=3,
        duration_s=1.5,
    )
    doc.update(over)
    return doc


def test_merge_sums_shards_into_the_whole() -> None:
    a = _doc("1/2", {"x": Tally(3, 12)})
    b = _doc("2/2", {"y": Tally(0, 12)})
    merged = flakes.merge([("a", a), ("b", b)], 3)
    assert merged == _doc("1/1", {"x": Tally(3, 12), "y": Tally(0, 12)}, duration_s=3.0)


def test_merge_of_some_shards_says_which() -> None:
    merged = flakes.merge([("a", _doc("1/3", {"x": Tally(3, 12)}))], 3)
    assert merged["shard"] == "1/3"
    merged = flakes.merge(
        [("a", _doc("1/3", {"x": Tally(3, 12)})), ("c", _doc("3/3", {"z": Tally(1, 12)}))], 3
    )
    assert merged["shard"] == "1+3/3"


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ({"head": "g" * 40}, "b: head:"),
        ({"count": 6}, "b: count: 6 differs from 12"),
        ({"seed": 2}, "b: seed:"),
        ({"seed_source": "key"}, "b: seed_source:"),
        ({"host": {"python": "3.12.1", "pins_sha256": "p"}}, "b: host.python:"),
        ({"host": {"python": "3.11.7", "pins_sha256": "q"}}, "b: host.pins_sha256:"),
        ({"shard": "1/2"}, "shard 1/2 given twice"),
        ({"shard": "2/3"}, "shard 2/3 is not of 2"),
        ({"schema": 2}, "schema 2"),
        ({"nodes": {"x": {"fail": 1, "runs": 12}}}, "node id x is in two shards"),
        ({"nodes": {"y": {"fail": 13, "runs": 12}}}, "fail <= runs"),
    ],
)
def test_merge_refuses(other: dict[str, object], message: str) -> None:
    a = _doc("1/2", {"x": Tally(3, 12)})
    b = _doc("2/2", {"y": Tally(0, 12)}, **other)
    with pytest.raises(PatchjudgeError) as exc:
        flakes.merge([("a", a), ("b", b)], 3)
    assert message in exc.value.one_line()


def test_the_evidence_says_where_its_seed_came_from_and_a_merge_keeps_it() -> None:
    # Like the properties' and the receipt's: "key" (PATCHJUDGE_SEED_KEY) or "pinned".
    assert _doc("1/1", {"x": Tally(0, 12)})["seed_source"] == "pinned"
    a = _doc("1/2", {"x": Tally(3, 12)}, seed_source="key")
    b = _doc("2/2", {"y": Tally(0, 12)}, seed_source="key")
    assert flakes.merge([("a", a), ("b", b)], 3)["seed_source"] == "key"


def test_options_before_merge_survive_it() -> None:
    from pathlib import Path

    from patchjudge.cli import build_parser

    # nox runs `patchjudge flakes --repo X --run-id Y merge FILE...`
    args = build_parser().parse_args(["flakes", "--repo", "/x", "--reports", "r", "merge", "a"])
    assert (args.repo, args.reports, args.files) == (Path("/x"), Path("r"), [Path("a")])
    args = build_parser().parse_args(["flakes", "merge", "--reports", "q", "a", "b"])
    assert (args.repo, args.reports, args.files) == (Path(), Path("q"), [Path("a"), Path("b")])
