"""Replay policy: slice bytes, the receipt parser and the check rules; tables and properties."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import replay
from patchjudge.errors import PatchjudgeError
from patchjudge.replay import Receipt
from patchjudge.testrun import Outcome

HEAD = "a" * 40
OTHER_HEAD = "b" * 40
SHA = "c" * 64

_word = st.text(alphabet="abzé_", min_size=1, max_size=5)
nodeids = st.builds(
    "tests/{}/test_{}.py::test_{}{}".format,
    _word,
    _word,
    _word,
    st.sampled_from(["", "[a b]", "[x/y]", "[1-2]", "[a::b]", "[../..]"]),
)
_hex = "0123456789abcdef"
nodeid_lists = st.lists(nodeids, max_size=12)


# --- the slice -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodeid", "ok"),
    [
        ("tests/test_a.py::test_x", True),
        ("tests/test_a.py::TestK::test_x[a b-1]", True),
        ("tests/test_a.py", True),
        ("tests/test_a.py::test_x[../..]", True),  # inside the brackets it is a name
        ("", False),
        (" tests/test_a.py::test_x", False),
        ("tests/test_a.py::test_x ", False),
        ("tests/test_a.py::test\rx", False),
        ("tests/test_a.py::test\0x", False),
        ("-p evil", False),
        ("--co", False),
        # pytest reads `@FILE` as further arguments (`-k`, `-p`, `--deselect`) from the tree.
        ("@tests/args.txt", False),
        ("tests/@args.py::test_x", True),
        ("/etc/passwd::test", False),
        ("../outside/test_a.py::test_x", False),
        ("tests/../../test_a.py::test_x", False),
        ("tests\\test_a.py::test_x", False),
        ("::test_x", False),
    ],
)
def test_nodeid_problem(nodeid: str, ok: bool) -> None:
    assert (replay.nodeid_problem(nodeid) is None) is ok


def test_slice_bytes_is_the_spec_format() -> None:
    data = replay.slice_bytes(["tests/b.py::t", "tests/a.py::t", "tests/b.py::t", "tests/é.py::t"])
    assert data == "tests/a.py::t\ntests/b.py::t\ntests/é.py::t\n".encode()
    assert replay.slice_bytes([]) == b""
    assert replay.sha256(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_slice_bytes_refuses_a_node_id_that_cannot_travel() -> None:
    with pytest.raises(ValueError, match="relative"):
        replay.slice_bytes(["tests/a.py::t", "/abs.py::t"])


@given(nodeid_lists, st.randoms())
def test_slice_bytes_ignore_order_and_duplicates(ids: list[str], rnd: object) -> None:
    shuffled = [*ids, *ids[:3]]
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert replay.slice_bytes(shuffled) == replay.slice_bytes(ids)


@given(nodeid_lists)
def test_parse_slice_round_trips(ids: list[str]) -> None:
    data = replay.slice_bytes(ids)
    assert replay.parse_slice(data, "s") == tuple(sorted(set(ids)))


@given(st.binary(max_size=200) | nodeid_lists.map(lambda ids: "\n".join(ids).encode()))
def test_parse_slice_accepts_only_canonical_bytes(data: bytes) -> None:
    """Whatever parses is exactly the bytes its node ids would be written as."""
    try:
        parsed = replay.parse_slice(data, "s")
    except PatchjudgeError:
        return
    assert replay.slice_bytes(parsed) == data


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [
        (b"tests/a.py::t", None, "no final newline"),
        (b"tests/b.py::t\ntests/a.py::t\n", "line 2", "out of order"),
        (b"tests/a.py::t\ntests/a.py::t\n", "line 2", "repeated"),
        (b"tests/a.py::t\r\n", "line 1", "control character"),
        (b"tests/a.py::t\n\n", "line 2", "empty node id"),
        (b"\xff\n", None, "not UTF-8"),
        (b"-p\n", "line 1", "relative"),
    ],
)
def test_parse_slice_names_the_line(data: bytes, key: str | None, words: str) -> None:
    with pytest.raises(PatchjudgeError) as err:
        replay.parse_slice(data, "replay-slice.txt")
    assert err.value.key == key
    assert err.value.file == "replay-slice.txt"
    assert words in err.value.message


# --- what goes in ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "nodeid", "hit"),
    [
        ("tests/test_net.py", "tests/test_net.py::test_dns", True),
        ("tests/test_net.py::test_dns", "tests/test_net.py::test_dns", True),
        ("tests/net/*", "tests/net/deep/test_x.py::test_y[a/b]", True),
        ("tests/net/", "tests/net/test_x.py::test_y", False),
        ("tests/net/**", "tests/net/test_x.py::test_y", True),
        ("*::test_*_dns", "tests/test_net.py::test_fetch_dns", True),
        ("*::test_*_dns", "tests/test_net.py::test_fetch", False),
        ("tests/test_net.py", "tests/test_net.py.bak::t", False),
        ("tests/test_?et.py", "tests/test_net.py::t", True),
    ],
)
def test_nodeid_matches(glob: str, nodeid: str, hit: bool) -> None:
    assert replay.nodeid_matches(glob, nodeid) is hit


def test_host_dependent_by_glob_and_by_marker_at_head_or_base() -> None:
    head = ["tests/a.py::t_glob", "tests/b.py::t_head", "tests/b.py::t_base", "tests/b.py::plain"]
    found = replay.host_dependent(
        head,
        ["tests/a.py"],
        "host",
        {"tests/b.py::t_head": ("host",), "tests/b.py::t_base": ("slow",)},
        # the patch dropped the marker at head: the base's marking still counts
        {"tests/b.py::t_base": ("host",), "tests/gone.py::t": ("host",)},
    )
    assert found == {"tests/a.py::t_glob", "tests/b.py::t_head", "tests/b.py::t_base"}


def test_host_dependent_without_a_marker_ignores_markers() -> None:
    assert replay.host_dependent(["t.py::a"], [], "", {"t.py::a": ("",)}, {}) == set()


@pytest.mark.parametrize(
    ("ids", "private", "max_slice", "problems"),
    [
        (["t.py::a", "t.py::b"], [], 2, []),
        (["t.py::a", "t.py::b", "t.py::c"], [], 2, ["slice has 3 node ids, over max_slice 2"]),
        (
            ["t.py::a", "t.py::test_secret_k"],
            ["*::test_secret_*"],
            5,
            [
                "1 node id(s) match [replay] private glob '*::test_secret_*': "
                "a slice never carries what may not be uploaded"
            ],
        ),
    ],
)
def test_slice_problems(
    ids: list[str], private: list[str], max_slice: int, problems: list[str]
) -> None:
    assert replay.slice_problems(ids, private, max_slice) == problems


def test_slice_problems_never_name_the_private_node_id() -> None:
    problems = replay.slice_problems(["tests/x.py::test_secret_launch_codes"], ["*secret*"], 9)
    assert problems and "launch_codes" not in " ".join(problems)


# --- the receipt ------------------------------------------------------------------


def receipt(**changes: object) -> Receipt:
    base = Receipt(
        seed=20260924,
        head=HEAD,
        slice_sha256=SHA,
        failed_nodeids=(),
        skipped_by_freeze=(),
        passed_nodeids=("t.py::a",),
        host_role="trusted-ci",
        host={"python": "3.11.7", "platform": "linux-x86_64", "pins_sha256": SHA},
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def receipt_bytes(**changes: object) -> bytes:
    doc = receipt().to_json()
    for key, value in changes.items():
        if value is _DELETE:
            del doc[key]
        else:
            doc[key] = value
    return json.dumps(doc).encode()


_DELETE = object()

receipts = st.builds(
    Receipt,
    seed=st.integers(min_value=0, max_value=2**63),
    head=st.text(_hex, min_size=40, max_size=40) | st.text(_hex, min_size=64, max_size=64),
    slice_sha256=st.text(_hex, min_size=64, max_size=64),
    failed_nodeids=st.lists(nodeids, unique=True, max_size=4).map(tuple),
    skipped_by_freeze=st.lists(nodeids, unique=True, max_size=4).map(tuple),
    passed_nodeids=st.lists(nodeids, unique=True, max_size=4).map(tuple),
    host_role=st.text(min_size=1, max_size=10).filter(str.strip),
    host=st.fixed_dictionaries({k: st.text(max_size=8) for k in replay.HOST_KEYS}),
    problems=st.lists(st.text(max_size=20), unique=True, max_size=3).map(tuple),
)


@given(receipts)
def test_receipt_round_trips(r: Receipt) -> None:
    from patchjudge.report import dumps

    assert replay.parse_receipt(dumps(r.to_json()).encode(), "receipt.json") == r


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=6,
)


@given(
    _json
    | st.dictionaries(
        st.sampled_from(replay.RECEIPT_KEYS), _json, max_size=len(replay.RECEIPT_KEYS)
    )
    | receipts.map(lambda r: r.to_json()).flatmap(
        lambda doc: st.sampled_from(sorted(doc)).map(lambda k: {**doc, k: None})
    )
)
def test_parse_receipt_fails_only_as_a_user_error(doc: object) -> None:
    try:
        replay.parse_receipt(json.dumps(doc).encode(), "r.json")
    except PatchjudgeError as exc:
        assert exc.file == "r.json"


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"schema": 2}, "schema"),
        ({"schema": True}, "schema"),
        ({"schema": 1.0}, "schema"),
        ({"seed": -1}, "seed"),
        ({"seed": "20260924"}, "seed"),
        ({"seed": True}, "seed"),
        ({"head": "HEAD"}, "head"),
        ({"head": "A" * 40}, "head"),
        ({"head": "a" * 39}, "head"),
        ({"slice_sha256": "c" * 63}, "slice_sha256"),
        ({"failed_nodeids": "t.py::a"}, "failed_nodeids"),
        ({"failed_nodeids": [1]}, "failed_nodeids"),
        ({"passed_nodeids": ["t.py::a", "t.py::a"]}, "passed_nodeids"),
        ({"skipped_by_freeze": None}, "skipped_by_freeze"),
        ({"host_role": " "}, "host_role"),
        ({"host": {"python": "3.11"}}, "host"),
        ({"host": {"python": 3, "platform": "x", "pins_sha256": "y"}}, "host"),
        ({"problems": [None]}, "problems"),
        ({"passed_nodeids": _DELETE}, "passed_nodeids"),
        ({"head": _DELETE}, "head"),
        ({"signature": "trust me"}, "signature"),
    ],
)
def test_parse_receipt_names_the_key(changes: dict[str, object], key: str) -> None:
    with pytest.raises(PatchjudgeError) as err:
        replay.parse_receipt(receipt_bytes(**changes), "receipt.json")
    assert err.value.key == key
    assert err.value.file == "receipt.json"
    assert key in err.value.one_line()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"head": "x", "head": "y"}', "appears twice"),
        (b'{"seed": NaN}', "NaN is not JSON"),
        (b"[]", "must be a JSON object"),
        (b"{", "not valid JSON"),
        (b"\xff", "not UTF-8"),
        (b"[" * 100000, "not valid JSON"),
    ],
)
def test_parse_receipt_refuses_what_is_not_one_receipt(data: bytes, words: str) -> None:
    with pytest.raises(PatchjudgeError, match=words):
        replay.parse_receipt(data, "receipt.json")


# --- the check -----------------------------------------------------------------------


def test_an_honest_receipt_passes() -> None:
    assert replay.check(receipt(), SHA, HEAD, set(), slice_nodeids=["t.py::a"], seed=20260924) == []


@pytest.mark.parametrize(
    ("changes", "frozen", "reason"),
    [
        (
            {"head": OTHER_HEAD},
            set(),
            "receipt is for head bbbbbbbbbbbb, this run judges aaaaaaaaaaaa",
        ),
        ({"slice_sha256": "d" * 64}, set(), "is not this run's slice"),
        (
            {"passed_nodeids": (), "skipped_by_freeze": ("t.py::a",)},
            set(),
            "receipt skips t.py::a, which the registry does not freeze",
        ),
        (
            {"passed_nodeids": (), "failed_nodeids": ("t.py::a",)},
            set(),
            "failed on the trusted host (not frozen): t.py::a",
        ),
        ({"problems": ("timed out after 60 s",)}, set(), "trusted host: timed out after 60 s"),
        ({"seed": 1}, set(), "receipt ran with seed 1, the ledger says 20260924"),
        ({"passed_nodeids": ()}, set(), "receipt does not account for t.py::a"),
        (
            {"passed_nodeids": ("t.py::a", "t.py::z")},
            set(),
            "receipt names t.py::z, which is not in",
        ),
        (
            {"failed_nodeids": ("t.py::a",)},
            {"t.py::a"},
            "receipt lists t.py::a in both failed_nodeids and passed_nodeids",
        ),
    ],
)
def test_check_rejects(changes: dict[str, object], frozen: set[str], reason: str) -> None:
    reasons = replay.check(
        receipt(**changes), SHA, HEAD, frozen, slice_nodeids=["t.py::a"], seed=20260924
    )
    assert any(reason in r for r in reasons), reasons


@pytest.mark.parametrize("where", ["failed_nodeids", "skipped_by_freeze"])
def test_a_frozen_test_may_fail_or_be_skipped(where: str) -> None:
    r = receipt(passed_nodeids=(), **{where: ("t.py::a",)})
    assert replay.check(r, SHA, HEAD, {"t.py::a"}, slice_nodeids=["t.py::a"]) == []


def test_another_slice_is_not_also_blamed_for_its_node_ids() -> None:
    reasons = replay.check(receipt(slice_sha256="d" * 64), SHA, HEAD, set(), slice_nodeids=["x"])
    assert len(reasons) == 1


def outcome(nodeid: str, when: str, result: str, *, wasxfail: bool = False) -> Outcome:
    return Outcome(nodeid, when, result, result, wasxfail, "", ())


def run_of(
    nodeid: str, call: str, *, setup: str = "passed", wasxfail: bool = False
) -> list[Outcome]:
    return [
        outcome(nodeid, "setup", setup),
        *([outcome(nodeid, "call", call, wasxfail=wasxfail)] if setup == "passed" else []),
        outcome(nodeid, "teardown", "passed"),
    ]


@pytest.mark.parametrize(
    ("outcomes", "frozen", "where"),
    [
        (run_of("t::a", "passed"), False, "passed"),
        (run_of("t::a", "failed"), False, "failed"),
        (run_of("t::a", "failed"), True, "failed"),
        (run_of("t::a", "skipped"), False, "failed"),
        (run_of("t::a", "skipped"), True, "skipped"),
        (run_of("t::a", "skipped", setup="skipped"), True, "skipped"),
        (run_of("t::a", "skipped", wasxfail=True), False, "failed"),
        (run_of("t::a", "passed", wasxfail=True), False, "failed"),
        (run_of("t::a", "passed", setup="failed"), True, "failed"),
        ([*run_of("t::a", "passed")[:2], outcome("t::a", "teardown", "failed")], False, "failed"),
        ([], False, "failed"),
        ([], True, "skipped"),
    ],
)
def test_sort_outcomes(outcomes: list[Outcome], frozen: bool, where: str) -> None:
    passed, failed, skipped = replay.sort_outcomes(
        ["t::a"], outcomes, {"t::a"} if frozen else set()
    )
    assert {"passed": passed, "failed": failed, "skipped": skipped}[where] == ["t::a"]
    assert len(passed) + len(failed) + len(skipped) == 1


@given(
    st.lists(nodeids, unique=True, max_size=8),
    st.data(),
)
def test_an_honest_host_is_rejected_exactly_for_unfrozen_failures(
    ids: list[str], data: st.DataObject
) -> None:
    frozen = set(data.draw(st.lists(st.sampled_from(ids), unique=True)) if ids else [])
    results = {
        n: data.draw(st.sampled_from(["passed", "failed", "skipped", "missing"])) for n in ids
    }
    outcomes = [o for n, r in results.items() if r != "missing" for o in run_of(n, r)]
    passed, failed, skipped = replay.sort_outcomes(ids, outcomes, frozen)
    r = receipt(
        passed_nodeids=tuple(passed), failed_nodeids=tuple(failed), skipped_by_freeze=tuple(skipped)
    )
    reasons = replay.check(r, SHA, HEAD, frozen, slice_nodeids=ids)
    unfrozen_bad = [n for n in ids if results[n] != "passed" and n not in frozen]
    assert bool(reasons) == bool(unfrozen_bad)
    # And dropping any node id from the receipt is noticed.
    for nodeid in ids:
        dropped = replace(
            r,
            passed_nodeids=tuple(n for n in passed if n != nodeid),
            failed_nodeids=tuple(n for n in failed if n != nodeid),
            skipped_by_freeze=tuple(n for n in skipped if n != nodeid),
        )
        assert f"receipt does not account for {nodeid}" in replay.check(
            dropped, SHA, HEAD, frozen, slice_nodeids=ids
        )


@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=8), st.text(max_size=8)), max_size=8),
    st.randoms(),
)
def test_pins_digest_ignores_order(pins: list[tuple[str, str]], rnd: object) -> None:
    shuffled = list(pins)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert replay.pins_digest(shuffled) == replay.pins_digest(pins)
    assert len(replay.pins_digest(pins)) == 64


# --- the command line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "step", "base"),
    [
        (["replay", "--base", "X"], None, "X"),
        (["replay", "slice", "--base", "X"], "slice", "X"),
        # A step's defaults must not overwrite what came before it.
        (["replay", "--base", "X", "slice"], "slice", "X"),
        (["replay", "--base", "X", "check", "--receipt", "r.json"], "check", "X"),
        (["replay", "run", "--slice", "s.txt"], "run", None),
    ],
)
def test_replay_alone_is_the_lane_and_takes_steps(
    argv: list[str], step: str | None, base: str
) -> None:
    from patchjudge.cli import build_parser

    args = build_parser().parse_args(argv)
    assert args.replay_step == step
    assert args.base == base
    assert args.head == "HEAD"
    if step == "run":
        assert (str(args.slice), args.host_role) == ("s.txt", "trusted-ci")


def test_replay_run_needs_a_slice() -> None:
    from patchjudge.cli import main

    assert main(["replay", "run"]) == 2
