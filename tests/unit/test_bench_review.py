"""bench/review.py's pure parts and its small project; no timing is asserted (issue 14)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from patchjudge import review_run
from patchjudge.workspace import Options, open_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_review", ROOT / "bench" / "review.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_review"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_small_project_changes_four_lines_of_total(bench: ModuleType, tmp_path: Path) -> None:
    repo = bench.build_calc(tmp_path)
    run = open_run(Options(repo=repo, base="main"))
    (changed,) = review_run.changed_files(run)
    assert changed.path == "src/calc/__init__.py"
    assert changed.lines == {2, 3, 4, 5, 6}


def test_the_more_itertools_patch_is_a_refactor_of_the_same_lines(bench: ModuleType) -> None:
    before = bench.CHUNKED_BEFORE.splitlines()
    after = bench.CHUNKED_AFTER.splitlines()
    assert sorted(line.strip() for line in before if "raise" in line) == sorted(
        line.strip() for line in after if "raise" in line
    )


def test_render_shows_each_figure(bench: ModuleType) -> None:
    figures = bench.Figures(
        "calc",
        {"executed": 4, "total": 4, "unexecuted": []},
        [2.0, 2.2],
        [3.0, 3.4],
        [9.0],
        {"killed": 6, "total": 9, "not_tried": 0, "survivors": ["a:1: x", "a:2: y", "a:3: z"]},
        [2.5],
        [4.0, 4.2],
        1,
        [4.0, 4.4],
        {"killed": 6, "total": 9, "not_tried": 0, "survivors": ["a:1: x", "a:2: y", "a:3: z"]},
        {"per_mutant": (124, 40.0), "schemata": (30, 20.5)},
    )
    text = bench.render([figures], 2)
    assert (
        "| calc | 2.10 s | 3.20 s | 9.00 s | 2.50 s (n=1) | 4.10 s (n=2) "
        "| 6 killed of 9, 0 not tried, 3 survived (1 never run) "
        "| 4.20 s | 1.00 s | 6 killed of 9, 0 not tried, 3 survived (1 never run) |"
    ) in text
    assert (
        "tasks started and CPU, run and mutants (calc): "
        "per_mutant 124 tasks 40.0 s, schemata 30 tasks 20.5 s"
    ) in text
