"""The pure parts of bench/run.py: ratio math, rotation, report, and a generated eval/ tree
that patchjudge's own parsers and fixtures lane accept. No timing is asserted (issue 7)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from patchjudge.config import check_paths_exist, parse_ledger
from patchjudge.freezefile import parse_registry
from patchjudge.lanes.properties import is_test_file, thin_reason
from tests.helpers import cli, commit, init_repo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_median_of_per_run_ratios_not_ratio_of_medians(bench: ModuleType) -> None:
    ours = bench.Timing((2.0, 9.0, 3.0), (1.0, 1.0, 1.0))
    bare = bench.Timing((1.0, 10.0, 1.0), (2.0, 2.0, 2.0))
    pair = bench.Pair("p", ours, bare)
    assert bench.ratios(ours.wall, bare.wall) == [2.0, 0.9, 3.0]
    assert pair.ratio == 2.0  # the ratio of medians would be 3.0 / 1.0
    assert pair.cpu_ratio == 0.5
    assert pair.overhead_s == 1.0
    with pytest.raises(ValueError, match="same number"):
        bench.ratios([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="no runs"):
        bench.median([])


@pytest.mark.parametrize(
    ("figure", "limit", "at_most", "met"),
    [
        (1.1, 1.15, True, True),
        (1.2, 1.15, True, False),
        (2.6, 2.5, False, True),
        (2.4, 2.5, False, False),
    ],
)
def test_target_met_or_missed(
    bench: ModuleType, figure: float, limit: float, at_most: bool, met: bool
) -> None:
    target = bench.Target("t", figure, limit, "x", at_most)
    assert target.met is met
    assert target.line().endswith("| met |" if met else "| MISSED |")


def test_every_side_leads_in_turn_and_warmups_are_dropped(bench: ModuleType) -> None:
    assert [bench.rotation(i, 3) for i in range(3)] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    calls: list[str] = []
    timings = bench.alternate_many([lambda: calls.append("a"), lambda: calls.append("b")], 3, 1)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [len(t.wall) for t in timings] == [3, 3]
    assert all(len(t.cpu) == 3 for t in timings)


def test_render_keeps_the_hand_written_notes(bench: ModuleType) -> None:
    results = bench.Results(machine={"nproc": "2"}, command="nox -s bench")
    t = bench.Timing((1.0,), (1.0,))
    results.pairs.append(bench.Pair("gate", t, t))
    results.targets.append(bench.Target("gate / bare", 1.0, 1.15, "x", True))
    first = bench.render(results, "\nwhy a target is missed\n")
    assert "| gate / bare | 1 x | <= 1.15 | met |" in first
    assert bench.kept_notes(first).strip() == "why a target is missed"
    again = bench.render(results, bench.kept_notes(first))
    assert again == first


def test_junit_stand_in_reads_every_case(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    bench.write_junit(path, 500)
    outcomes = bench.iterparse_outcomes(path)
    assert len(outcomes) == 500
    assert set(outcomes.values()) <= {"passed", "failed", "skipped"}
    assert "passed" in outcomes.values() and "failed" in outcomes.values()


def test_generated_eval_tree_is_a_judge_patchjudge_accepts(
    bench: ModuleType, tmp_path: Path
) -> None:
    files = bench.eval_tree(["/nowhere/patchjudge.whl"], dt.date(2026, 12, 1), fixtures=30)
    ledger = parse_ledger(files["eval/gate.toml"])
    assert ledger.properties.max_examples == bench.MAX_EXAMPLES
    rows = parse_registry(files["eval/flakes.freeze.toml"], "eval/flakes.freeze.toml")
    assert [r.expires - r.created for r in rows] == [dt.timedelta(days=10)]
    props = {p: d for p, d in files.items() if p.startswith("eval/properties/")}
    assert props and all(is_test_file(p) and thin_reason(p, d) is None for p, d in props.items())
    assert sum(p.startswith("tests/fixtures/") for p in files) == 30
    check_paths_exist(ledger, lambda p: any(f == p or f.startswith(p + "/") for f in files))
    # The lock it wrote is the lock patchjudge's own fixtures lane checks.
    package = {"more_itertools/__init__.py": "def chunked(xs, n):\n    return xs\n"}
    repo = init_repo(tmp_path / "repo", {**package, "README.md": "x\n"})
    bench.write_files(repo, files)
    commit(repo, "adopt")
    (repo / "README.md").write_text("patched\n")
    commit(repo, "patch")
    result = cli(repo, "fixtures", "--base", "HEAD~1", "--today", "2026-12-01")
    assert result.code == 0, result.out + result.err
    assert result.report(repo, "fixtures")["details"]["found"] == 30


def test_sha256_manifest_is_what_sha256sum_checks(bench: ModuleType) -> None:
    manifest = bench.sha256_manifest({"b.txt": b"b", "a.txt": b""})
    assert manifest.splitlines() == [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.txt",
        "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.txt",
    ]


def test_the_wheel_is_built_with_the_uv_beside_the_interpreter(
    bench: ModuleType, tmp_path: Path
) -> None:
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.touch()
    assert bench.uv_beside(str(python)) == "uv"  # none beside it: PATH's
    uv = python.parent / "uv"
    uv.touch(mode=0o755)
    assert bench.uv_beside(str(python)) == str(uv)
