"""The oracle's boundary: properties out of process against in process, and one call's round trip.

    python -m bench.oracle_boundary [--runs 3] [--work DIR]

`oracle_boundary(work, runs)` is what bench/run.py calls. It builds the
more-itertools and toolz projects the way bench/run.py does (pinned sdists,
the same property files), runs `patchjudge properties` on each with every
property file out of process and with every file listed in
`[properties] in_process`, alternating, and reports the median ratio
(target <= 1.3). The round trip is a stand-in call timed inside a judge
pytest, median of 2,000, with judge and worker on any CPU and pinned to CPU 0
(they take turns, so one core avoids a cross-core wake-up per message;
target <= 60 us).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from bench import run as bench

ROOT = Path(__file__).resolve().parents[1]

TOOLZ_PROPERTIES = {
    "eval/properties/test_unique.py": bench.FLAKES_PROPERTY,
    "eval/properties/test_dicts.py": '''\
"""toolz's dict helpers against their plain-Python meaning."""

from hypothesis import given
from hypothesis import strategies as st

from toolz import assoc, merge, valmap, groupby, frequencies

small = st.dictionaries(st.text(max_size=3), st.integers(), max_size=6)


@given(small, small)
def test_merge_is_update(a, b):
    expected = dict(a)
    expected.update(b)
    assert merge(a, b) == expected


@given(small, st.text(max_size=3), st.integers())
def test_assoc_sets_one_key(d, k, v):
    assert assoc(d, k, v) == {**d, k: v}
    assert valmap(lambda x: x + 1, d) == {k: x + 1 for k, x in d.items()}


@given(st.lists(st.integers(-3, 3)))
def test_groupby_and_frequencies(xs):
    groups = groupby(lambda x: x % 2, xs)
    assert sorted(x for g in groups.values() for x in g) == sorted(xs)
    assert frequencies(xs) == {x: xs.count(x) for x in set(xs)}
''',
}


def ledger(pythonpath: str, package: str, in_process: Sequence[str]) -> str:
    listed = ", ".join(json.dumps(p) for p in in_process)
    return f"""\
[gate]
base = "main"
pythonpath = [{json.dumps(pythonpath)}]

[map]
"{package}/**" = ["properties"]
"*" = []

[properties]
seed = {bench.SEED}
max_examples = {bench.MAX_EXAMPLES}
timeout_s = 900
in_process = [{listed}]
"""


def project(
    work: Path, sdist: bench.Sdist, package: str, files: dict[str, str], inside: bool
) -> Path:
    name = f"{sdist.name}-{'in' if inside else 'out'}"
    if (work / name / ".git").is_dir():  # built by an earlier run in this --work
        return work / name
    repo = bench.unpack(work, sdist, work / name)
    props = {p: textwrap.dedent(s).lstrip("\n") for p, s in files.items()}
    props["eval/gate.toml"] = ledger(".", package, sorted(files) if inside else [])
    bench.write_files(repo, {p: s.encode() for p, s in props.items()})
    bench.commit_all(repo, "adopt patchjudge")
    bench.git(repo, "checkout", "-q", "-b", "patch")
    init = repo / package / "__init__.py"
    init.write_text(init.read_text() + "\n# patched\n")
    bench.commit_all(repo, "a small patch")
    return repo


def time_lane(repo: Path) -> float:
    env = bench.clean_env()
    start = time.perf_counter()
    proc = subprocess.run(
        [*bench.PATCHJUDGE, "properties", "--base", "main", "--reports", str(repo / ".reports")],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: properties failed in {repo}:\n{proc.stdout}\n{proc.stderr}")
    return took


ROUND_TRIP = """
import statistics, time
import mylib


def test_round_trip():
    f = mylib.echo
    f(0)
    samples = []
    for i in range(2000):
        t = time.perf_counter()
        f(i)
        samples.append(time.perf_counter() - t)
    print("ROUND_TRIP_US", statistics.median(samples) * 1e6)
"""


def round_trip_us(work: Path, pin: bool) -> float:
    tree, judge = work / "rt-tree", work / "rt-judge"
    (tree / "mylib").mkdir(parents=True, exist_ok=True)
    (tree / "mylib" / "__init__.py").write_text("def echo(x):\n    return x\n")
    judge.mkdir(exist_ok=True)
    (judge / "test_rt.py").write_text(ROUND_TRIP)
    spec = {"python": sys.executable, "tree": str(tree), "home": str(work / "rt-home"),
            "names": ["mylib"], "pythonpath": ["."]}  # fmt: skip
    env = {**bench.clean_env(), "PATCHJUDGE_ORACLE": json.dumps(spec)}
    env["PYTHONPATH"] = str(ROOT / "src")
    argv = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
            "-p", "patchjudge.boundary.standin", "-c", os.devnull, "--rootdir", str(judge),
            "test_rt.py"]  # fmt: skip
    if pin:
        argv = ["taskset", "-c", "0", *argv]
    out = subprocess.run(argv, cwd=judge, env=env, capture_output=True, text=True, check=True)
    line = next(x for x in out.stdout.splitlines() if "ROUND_TRIP_US" in x)
    return float(line.split()[-1])


def oracle_boundary(work: Path, runs: int = 3) -> list[str]:
    """Figures, one line each, for bench/RESULTS.md."""
    lines = []
    sets = [
        (bench.PROJECT, bench.PACKAGE, dict(bench.PROPERTY_FILES)),
        (bench.FLAKES_PROJECT, "toolz", TOOLZ_PROPERTIES),
    ]
    for sdist, package, files in sets:
        outside = project(work, sdist, package, files, inside=False)
        inside = project(work, sdist, package, files, inside=True)
        times: dict[str, list[float]] = {"out": [], "in": []}
        time_lane(outside)  # warm-up: page cache, charmap tables
        for _ in range(runs):
            times["out"].append(time_lane(outside))
            times["in"].append(time_lane(inside))
        out_s, in_s = statistics.median(times["out"]), statistics.median(times["in"])
        lines.append(
            f"properties lane on {sdist.name}: out of process {out_s:.2f} s, in process "
            f"{in_s:.2f} s, ratio {out_s / in_s:.2f} (target <= 1.3; median of {runs})"
        )
    for pin in (False, True):
        us = round_trip_us(work, pin)
        where = "pinned to one CPU" if pin else "unpinned"
        lines.append(f"stand-in call round trip, {where}: median {us:.1f} us (target <= 60)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="patchjudge-bench-oracle-"))
    for line in oracle_boundary(work, args.runs):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
