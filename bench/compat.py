"""Third-party hypothesis suites, bare against out of process (issue 17): shares and times.

    python -m bench.compat [--runs 3] [--examples 100] [--work DIR]

`compat_section(work, runs, results)` is what bench/run.py calls (`--only
compat`). For each suite of tests/compat_helpers.py SUITES (pinned sdists,
adopted under eval/properties/ as a user would) it runs bare pytest and
`patchjudge properties` alternately, `runs` times after a warm-up, and
reports: tests passing bare, those of them passing out of process, the
share, the differences by idiom, and the lane's time over bare pytest's
(median of the per-run ratios, wall and CPU) where the lane ran all that
bare ran: for a suite that does not pass whole, each of its test files
alone (with its helpers) that does; and a stateful machine of the bench's
own (VecMachine), the boundary's worst case, while no third-party machine
passes whole. The example count is larger
than the test's (10) so the properties' own work, not start-up, is timed.
Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from bench.run import Pair, Results, Target, alternate_many  # noqa: E402
from tests import compat_helpers as compat  # noqa: E402

EXAMPLES = 100


@dataclass(frozen=True)
class SuiteFigures:
    name: str
    bare_passed: int
    both_passed: int
    by_idiom: dict[str, int]
    pair: Pair
    # The lane's round trips to its workers by kind (details.requests, issue 20), and how
    # many examples each test was given: requests per example is a count, not a timing.
    requests: dict[str, int] = dataclasses.field(default_factory=dict)
    examples: int = 0

    @property
    def per_example(self) -> float:
        runs = self.both_passed * self.examples
        return sum(self.requests.values()) / runs if runs else 0.0

    @property
    def comparable(self) -> bool:
        return self.bare_passed > 0 and self.both_passed == self.bare_passed

    @property
    def share(self) -> float:
        return 100 * self.both_passed / self.bare_passed if self.bare_passed else 0.0


def figures_line(f: SuiteFigures) -> str:
    """Pure: one suite's figures, as a line of notes."""
    why = "; ".join(f"{n} x {name}" for name, n in f.by_idiom.items()) or "none"
    # A lane that ran fewer tests than bare did is not timed against it.
    times = (
        f"properties lane / bare pytest {f.pair.ratio:.2f}x wall, {f.pair.cpu_ratio:.2f}x CPU"
        if f.comparable
        else "time not comparable (the lane did not run all that bare ran)"
    )
    line = (
        f"compat {f.name}: {f.bare_passed} pass bare, {f.both_passed} of them out of process "
        f"({f.share:.1f}%); {times}; differences: {why}"
    )
    if f.requests:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(f.requests.items(), key=lambda kv: -kv[1]))
        line += (
            f"; {sum(f.requests.values())} round trips, {f.per_example:.1f} per test and example "
            f"({kinds})"
        )
    return line


def targets(found: Sequence[SuiteFigures], files: Sequence[SuiteFigures] = ()) -> list[Target]:
    """Pure: issue 17's goals: >= 98% pass over the suites; lane / bare <= 1.3 where comparable.

    The time is the worst of the whole suites and single files (`files`) that
    pass whole out of process; the share counts the whole suites only.
    """
    bare = sum(f.bare_passed for f in found)
    both = sum(f.both_passed for f in found)
    share = 100 * both / bare if bare else 0.0
    name = "compat: passing bare that pass out of process (all suites)"
    out = [Target(name, share, 98, "%", False)]
    timed = [f for f in [*found, *files] if f.comparable]
    if timed:
        worst = max(timed, key=lambda f: f.pair.ratio)
        name = f"compat: properties lane / bare (worst of {len(timed)}: {worst.name})"
        out.append(Target(name, worst.pair.ratio, 1.3, "x", True))
    return out


def one_file(suite: compat.Suite, target: str) -> compat.Suite:
    """Pure: the suite with one of its test files (and every helper file) only."""
    keep = {src: t for src, t in suite.files.items() if t == target or not is_test_file(t)}
    kept = tuple(a for a in suite.adjustments if a[0] in keep.values())
    return dataclasses.replace(suite, files=keep, adjustments=kept)


def is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py")


def figures_for(
    label: str, suite: compat.Suite, work: Path, runs: int, examples: int
) -> SuiteFigures:
    """A first run of each side (the warm-up) says whether timing them is comparable."""
    work.mkdir(parents=True, exist_ok=True)
    archive = compat.fetch(suite, work.parent / "sdists")
    repo = compat.adopt(suite, archive, work / "repo", examples)
    seen: dict[str, compat.Outcomes] = {}

    def bare() -> None:
        seen["bare"] = compat.run_bare(suite, repo, work, examples)[0]

    requests: dict[str, int] = {}

    def oop() -> None:
        seen["oop"], _, report = compat.run_oop(repo)
        requests.update(_requests(report))

    ours, theirs = alternate_many([oop, bare], 1, warmup=0)
    passed = seen["bare"].passed()
    found = compat.differences(seen["bare"], seen["oop"])
    if passed and not found:
        ours, theirs = alternate_many([oop, bare], runs, warmup=0)
    pair = Pair(f"compat {label}", ours, theirs, "properties lane", "bare pytest")
    both = len(passed) - len(found)
    return SuiteFigures(label, len(passed), both, compat.by_idiom(found), pair, requests, examples)


def _requests(report: dict[str, object]) -> dict[str, int]:
    details = report.get("details")
    found = details.get("requests", {}) if isinstance(details, dict) else {}
    return {str(k): int(n) for k, n in found.items()} if isinstance(found, dict) else {}


# A pyrsistent-shaped machine over a small library of the bench's own: no
# third-party stateful machine passes whole out of process yet, and the
# stateful idiom (many small calls per example) is the boundary's worst case.
VEC = """
class Vec:
    def __init__(self, items=()):
        self._items = tuple(items)

    def append(self, x):
        return Vec(self._items + (x,))

    def set(self, i, x):
        items = list(self._items)
        items[i] = x
        return Vec(items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def tolist(self):
        return list(self._items)
"""

MACHINE = """
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from vec import Vec


class VecMachine(RuleBasedStateMachine):
    vecs = Bundle("vecs")

    @rule(target=vecs)
    def empty(self):
        return (Vec(), [])

    @rule(target=vecs, pair=vecs, x=st.integers())
    def append(self, pair, x):
        v, model = pair
        return (v.append(x), [*model, x])

    @rule(target=vecs, pair=vecs, data=st.data())
    def set(self, pair, data):
        v, model = pair
        if not model:
            return pair
        i = data.draw(st.integers(0, len(model) - 1))
        x = data.draw(st.integers())
        new = list(model)
        new[i] = x
        return (v.set(i, x), new)

    @rule(pair=vecs)
    def agrees(self, pair):
        v, model = pair
        assert len(v) == len(model) and v.tolist() == model
        if model:
            assert v[-1] == model[-1]


TestVec = VecMachine.TestCase
"""

STATEFUL = compat.Suite(
    name="stateful-machine",
    version="-",
    sha256="-",
    top="-",
    pythonpath="src",
    package="src",
    idioms="a stateful machine over persistent vectors (the bench's own)",
    files={},
)


# More-itertools-shaped generators drained by list() (issue 20's measured workload: a
# `len` and an `iter` round trip per list(), a `next` per item, before fetch-ahead).
ITERS = """
import itertools


def chunked(xs, n):
    it = iter(xs)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


def windowed(xs, n):
    xs = list(xs)
    for i in range(len(xs) - n + 1):
        yield tuple(xs[i : i + n])


def interleave(*iterables):
    for group in itertools.zip_longest(*iterables, fillvalue=object):
        yield from (x for x in group if x is not object)
"""

ITER_PROPERTIES = """
from hypothesis import given, strategies as st

from iters import chunked, interleave, windowed


@given(st.lists(st.integers(), max_size=40), st.integers(1, 5))
def test_chunks_rebuild_the_input(xs, n):
    chunks = list(chunked(xs, n))
    assert [x for c in chunks for x in c] == xs
    assert all(len(c) == n for c in chunks[:-1])


@given(st.lists(st.integers(), max_size=40), st.integers(1, 5))
def test_windows_slide_by_one(xs, n):
    windows = list(windowed(xs, n))
    assert len(windows) == max(0, len(xs) - n + 1)
    assert all(list(w) == xs[i : i + n] for i, w in enumerate(windows))


@given(st.lists(st.integers(), max_size=20), st.lists(st.integers(), max_size=20))
def test_interleave_keeps_every_item(xs, ys):
    assert sorted(interleave(xs, ys)) == sorted(xs + ys)
"""

ITERATORS = dataclasses.replace(
    STATEFUL, name="iterators", idioms="generators drained by list() (the bench's own)"
)


# A dict-like class of the library's filled and read back in loops over a range (issues 17
# and 20: py-hopscotch-dict's `for i in range(55000): hd[i] = i`, then `assert hd[i] == i`,
# were 71% of its suite's round trips): counted stores and reads (boundary/loops.py).
TABLE = """
class Table:
    def __init__(self):
        self._slots = {}

    def __setitem__(self, key, value):
        if not isinstance(key, int):
            raise TypeError(f"keys are ints, not {type(key).__name__}")
        self._slots[key] = value

    def __getitem__(self, key):
        return self._slots[key]

    def __len__(self):
        return len(self._slots)
"""

TABLE_PROPERTIES = """
from hypothesis import given, strategies as st

from table import Table


def test_fifty_thousand_stores_then_reads():
    t = Table()
    n = 50_000
    for i in range(n):
        t[i] = i * 2
    for i in range(n):
        assert t[i] == i * 2, i
    assert len(t) == n


@given(st.integers(0, 300))
def test_a_drawn_count_of_stores_then_reads(n):
    t = Table()
    for i in range(n):
        t[i] = -i
    for i in range(n):
        v = t[i]
        assert v == -i
"""

SUBSCRIPTS = dataclasses.replace(
    STATEFUL, name="subscripts", idioms="a dict-like class filled and read in counted loops"
)


def subscripts_figures(work: Path, runs: int, examples: int) -> SuiteFigures:
    """A dict-like class filled and read back in loops over a range, bare and out of process."""
    label = "counted stores and reads (bench's own Table, 50,000 each)"
    files = {"src/table.py": TABLE, "eval/properties/test_table.py": TABLE_PROPERTIES}
    return own_figures(label, SUBSCRIPTS, files, work, runs, examples)


def stateful_figures(work: Path, runs: int, examples: int) -> SuiteFigures:
    """VecMachine bare and out of process, alternately."""
    label = "stateful machine (bench's own VecMachine)"
    files = {"src/vec.py": VEC, "eval/properties/test_vec.py": MACHINE}
    return own_figures(label, STATEFUL, files, work, runs, examples)


def iterator_figures(work: Path, runs: int, examples: int) -> SuiteFigures:
    """Generators drained by list(), bare and out of process, alternately."""
    label = "iterators (bench's own generators, drained by list())"
    files = {"src/iters.py": ITERS, "eval/properties/test_iters.py": ITER_PROPERTIES}
    return own_figures(label, ITERATORS, files, work, runs, examples)


def own_figures(  # noqa: PLR0917  (the cases above, one shape)
    label: str, suite: compat.Suite, files: dict[str, str], work: Path, runs: int, examples: int
) -> SuiteFigures:
    """A library and properties of the bench's own, with a comment-only patch to the library."""
    from tests.helpers import commit, git, init_repo

    work.mkdir(parents=True, exist_ok=True)
    repo = init_repo(work / "repo", {**files, "eval/gate.toml": compat.ledger(suite, examples)})
    git(repo, "checkout", "-q", "-b", "patch")
    library = next(p for p in files if p.startswith("src/"))
    (repo / library).write_text(files[library] + "\n# a comment-only patch\n")
    commit(repo, "a comment-only patch")
    seen: dict[str, compat.Outcomes] = {}
    requests: dict[str, int] = {}

    def bare() -> None:
        seen["bare"] = compat.run_bare(suite, repo, work, examples)[0]

    def oop() -> None:
        seen["oop"], _, report = compat.run_oop(repo)
        requests.update(_requests(report))

    ours, theirs = alternate_many([oop, bare], runs)
    passed = seen["bare"].passed()
    found = compat.differences(seen["bare"], seen["oop"])
    pair = Pair(f"compat {label}", ours, theirs, "properties lane", "bare pytest")
    both = len(passed) - len(found)
    return SuiteFigures(label, len(passed), both, compat.by_idiom(found), pair, requests, examples)


def compat_section(work: Path, runs: int, results: Results, examples: int = EXAMPLES) -> None:
    found, files = [], []
    for suite in compat.SUITES:
        found.append(figures_for(suite.name, suite, work / "compat" / suite.name, runs, examples))
        tests = [t for t in suite.files.values() if is_test_file(t)]
        if found[-1].comparable or len(tests) == 1:
            continue
        # A suite that does not pass whole may still have files that do: time those.
        for target in tests:
            where = work / "compat" / f"{suite.name}-{target.removesuffix('.py')}"
            label = f"{suite.name} {target} alone"
            files.append(figures_for(label, one_file(suite, target), where, runs, examples))
    files.append(stateful_figures(work / "compat" / "stateful", runs, examples))
    files.append(iterator_figures(work / "compat" / "iterators", runs, examples))
    files.append(subscripts_figures(work / "compat" / "subscripts", runs, examples))
    results.notes += [figures_line(f) for f in [*found, *files]]
    results.pairs += [f.pair for f in [*found, *files] if f.comparable]
    results.targets += targets(found, files)
    if not any(f.comparable for f in [*found, *files]):
        results.notes.append("compat: no suite or file passes whole out of process: not timed")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--examples", type=int, default=EXAMPLES)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="patchjudge-bench-compat-"))
    results = Results(machine={})
    compat_section(work, args.runs, results, args.examples)
    for line in results.notes:
        print(line)
    for t in results.targets:
        print(t.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
