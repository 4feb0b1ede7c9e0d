"""A btclib-shaped codec through the boundary: many small calls, a judge `BytesIO` read in place.

    python -m bench.streams [--runs 2] [--examples 100] [--work DIR]

Issue 17/20 (session 13, branch roundtrip3): btclib's held-out suite cost the
properties lane 13.6x bare, ~160 us of CPU a round trip, and each read the
library makes of the judge's `BytesIO` was two round trips (the method, then
its call). This reproduces that shape with a library of the bench's own
(`isinstance(stream, BytesIO)`, `stream.read(1)` then `stream.read(n)`, a
var_int / var_bytes codec, small calls in a loop) and reports, for the
properties lane against bare pytest, alternated: CPU (whole process tree),
wall and the lane's round trips by kind (`details.requests`). Nothing here
asserts a timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from bench.compat import STATEFUL, SuiteFigures, own_figures  # noqa: E402
from bench.run import median  # noqa: E402

CODEC = """
from io import BytesIO


def _stream(data):
    return data if isinstance(data, BytesIO) else BytesIO(data)


def var_int_serialize(i):
    if i < 0:
        raise ValueError(f"negative: {i}")
    if i < 0xFD:
        return i.to_bytes(1, "little")
    if i <= 0xFFFF:
        return b"\\xfd" + i.to_bytes(2, "little")
    if i <= 0xFFFFFFFF:
        return b"\\xfe" + i.to_bytes(4, "little")
    return b"\\xff" + i.to_bytes(8, "little")


def var_int_parse(data):
    stream = _stream(data)
    first = stream.read(1)
    if not first:
        raise ValueError("no var_int")
    size = {0xFD: 2, 0xFE: 4, 0xFF: 8}.get(first[0], 0)
    if not size:
        return first[0]
    rest = stream.read(size)
    if len(rest) != size:
        raise ValueError("short var_int")
    return int.from_bytes(rest, "little")


def var_bytes_serialize(b):
    return var_int_serialize(len(b)) + b


def var_bytes_parse(data):
    stream = _stream(data)
    n = var_int_parse(stream)
    b = stream.read(n)
    if len(b) != n:
        raise ValueError("short var_bytes")
    return b


def checksum(b):
    total = 0
    for x in b:
        total = (total * 31 + x) % 65521
    return total
"""

CODEC_PROPERTIES = """
from io import BytesIO

from hypothesis import given, strategies as st

from codec import checksum, var_bytes_parse, var_bytes_serialize, var_int_parse, var_int_serialize


@given(st.lists(st.binary(max_size=12), max_size=30))
def test_var_bytes_read_in_place(items):
    stream = BytesIO(b"".join(var_bytes_serialize(x) for x in items))
    for x in items:
        assert var_bytes_parse(stream) == x
    assert stream.read() == b""


@given(st.lists(st.integers(0, 2**64 - 1), max_size=30))
def test_var_int_round_trip(xs):
    for i in xs:
        assert var_int_parse(var_int_serialize(i)) == i
        assert var_int_parse(BytesIO(var_int_serialize(i))) == i


@given(st.lists(st.binary(max_size=8), max_size=30))
def test_checksums_of_pieces(items):
    sums = [checksum(x) for x in items]
    assert all(0 <= s < 65521 for s in sums)
"""

CODEC_SUITE = dataclasses.replace(
    STATEFUL, name="codec", idioms="a var_int codec read from judge streams (the bench's own)"
)


def codec_figures(work: Path, runs: int, examples: int) -> SuiteFigures:
    """The codec's properties bare and out of process, alternately."""
    label = "codec (bench's own, btclib-shaped)"
    files = {"src/codec.py": CODEC, "eval/properties/test_codec.py": CODEC_PROPERTIES}
    return own_figures(label, CODEC_SUITE, files, work, runs, examples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pj-streams-") as tmp:
        work = args.work or Path(tmp)
        f = codec_figures(work / "codec", args.runs, args.examples)
    pair = f.pair
    print(f"{f.name}: passed bare {f.bare_passed}, both {f.both_passed}")
    print(f"lane CPU-s {list(map(round2, pair.ours.cpu))} wall {list(map(round2, pair.ours.wall))}")
    print(f"bare CPU-s {list(map(round2, pair.bare.cpu))} wall {list(map(round2, pair.bare.wall))}")
    print(f"lane/bare CPU median {pair.cpu_ratio:.2f}x, wall {pair.ratio:.2f}x")
    total = sum(f.requests.values())
    print(f"round trips {total}: {dict(sorted(f.requests.items(), key=lambda kv: -kv[1]))}")
    print(f"lane CPU median {median(list(pair.ours.cpu)):.2f} s")
    return 0


def round2(x: float) -> float:
    return round(x, 2)


if __name__ == "__main__":
    raise SystemExit(main())
