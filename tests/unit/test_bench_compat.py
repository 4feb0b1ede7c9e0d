"""bench/compat.py's pure parts: the figures' line and issue 17's targets; no timing asserted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compat", ROOT / "bench" / "compat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_compat"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def figures(bench: ModuleType, name: str, bare: int, both: int, lane_s: float) -> object:
    from bench.run import Pair, Timing

    pair = Pair(f"compat {name}", Timing((lane_s,), (lane_s,)), Timing((1.0,), (2.0,)))
    idioms = {"pickle of a handle": bare - both} if bare > both else {}
    return bench.SuiteFigures(name, bare, both, idioms, pair)


def test_a_suite_that_passes_whole_is_timed(bench: ModuleType) -> None:
    line = bench.figures_line(figures(bench, "a", 10, 10, 1.2))
    assert line == (
        "compat a: 10 pass bare, 10 of them out of process (100.0%); "
        "properties lane / bare pytest 1.20x wall, 0.60x CPU; differences: none"
    )


def test_a_suite_with_differences_names_them_and_is_not_timed(bench: ModuleType) -> None:
    line = bench.figures_line(figures(bench, "b", 4, 1, 0.2))
    assert line == (
        "compat b: 4 pass bare, 1 of them out of process (25.0%); time not comparable "
        "(the lane did not run all that bare ran); differences: 3 x pickle of a handle"
    )


def test_targets_share_over_all_suites_and_worst_comparable_ratio(bench: ModuleType) -> None:
    found = [
        figures(bench, "a", 10, 10, 1.2),
        figures(bench, "b", 40, 39, 9.0),
        figures(bench, "c", 50, 50, 1.4),
    ]
    share, ratio = bench.targets(found)
    assert (share.figure, share.limit, share.met) == (99.0, 98, True)
    assert ratio.name == "compat: properties lane / bare (worst of 2: c)"
    assert (ratio.figure, ratio.met) == (1.4, False)


def test_no_comparable_suite_gives_no_time_target(bench: ModuleType) -> None:
    (share,) = bench.targets([figures(bench, "b", 4, 1, 0.2)])
    assert (share.figure, share.met) == (25.0, False)


def test_one_file_keeps_the_helpers_and_their_adjustments(bench: ModuleType) -> None:
    from tests.compat_helpers import SUITES

    by_name = {s.name: s for s in SUITES}
    bidict, dateutil = by_name["bidict"], by_name["python-dateutil"]
    alone = bench.one_file(dateutil, "test_rrule_prop.py")
    assert list(alone.files.values()) == ["test_rrule_prop.py"]
    assert alone.name == dateutil.name and alone.sha256 == dateutil.sha256
    kept = bench.one_file(bidict, "test_properties.py")
    assert kept.files == bidict.files and kept.adjustments == bidict.adjustments


def test_a_file_that_passes_whole_is_timed_when_its_suite_is_not(bench: ModuleType) -> None:
    suite = figures(bench, "d", 19, 2, 0.3)
    alone = figures(bench, "d test_p.py alone", 2, 2, 1.1)
    share, ratio = bench.targets([suite], [alone])
    assert share.figure == 100 * 2 / 19
    assert ratio.name == "compat: properties lane / bare (worst of 1: d test_p.py alone)"
    assert (ratio.figure, ratio.met) == (1.1, True)
