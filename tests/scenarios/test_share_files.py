"""issue 19: a nox lane hands the head's suite pass to the freeze lane through a file.

nox runs each lane as a process of its own (init's noxfile): what
`patchjudge gate` shares in memory, pathfilter writes to `--share-out` and
prints the digest of; the freeze lane takes it (`--share-in FILE=SHA256`)
only boxed and only as written, else runs the suite itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.attack_helpers import require_sandbox
from tests.helpers import LEDGER, Result, cli, commit, example_repo, write

DAY = ("--base", "main", "--today", "2026-12-01")
BROKEN = "def total(xs):\n    return sum(xs) + (len(xs) == 2)\n"  # test_two fails


def _pathfilter(repo: Path, out: Path) -> tuple[Result, str]:
    result = cli(repo, "pathfilter", *DAY, f"--share-out={out}")
    assert result.code == 0, result.out + result.err
    lines = result.out.strip().splitlines()
    said = lines[-2] if lines[-2].startswith("shared: ") else ""
    return result, said.rsplit("sha256=", 1)[-1] if said else ""


def test_the_freeze_lane_takes_pathfilters_suite_pass_only_as_pathfilter_wrote_it(
    tmp_path: Path,
) -> None:
    require_sandbox()
    repo = example_repo(tmp_path)
    write(repo, {"src/calc/__init__.py": BROKEN})
    commit(repo)
    out = tmp_path / "shared" / "pathfilter.pickle"
    first, digest = _pathfilter(repo, out)
    assert digest == hashlib.sha256(out.read_bytes()).hexdigest(), first.out
    assert first.report(repo, "pathfilter")["details"]["head_collection"] == "the suite's run"
    # Handed on: no pytest of its own, and the break is still the suite's to see.
    taken = cli(repo, "freeze", *DAY, f"--share-in={out}={digest}")
    report = taken.report(repo, "freeze")
    assert taken.code == 1, taken.out + taken.err
    assert report["details"]["shared"] == {"suite_run": "pathfilter's"}, report
    assert report["reasons"][0].startswith("suite: 1 failed: tests/test_calc.py::test_two"), report
    # The same bytes but one: refused, said, and the lane runs the suite itself.
    data = bytearray(out.read_bytes())
    data[-2] ^= 1
    out.write_bytes(bytes(data))
    refused = cli(repo, "freeze", *DAY, f"--share-in={out}={digest}")
    report = refused.report(repo, "freeze")
    assert "shared results refused, computed here" in refused.err, refused.err
    assert "shared" not in report["details"], report
    assert refused.code == 1 and report["reasons"][0].startswith("suite: 1 failed"), report


def test_pathfilter_then_freeze_in_one_boxed_process_reports_each_lane_as_written(
    tmp_path: Path,
) -> None:
    # issue 19: init's boxed nox gate runs the freeze and properties lanes in
    # pathfilter's process.
    require_sandbox()
    repo = example_repo(tmp_path)
    write(repo, {"src/calc/__init__.py": BROKEN})
    commit(repo)
    out = tmp_path / "shared" / "pathfilter.pickle"
    then = ("--then-lane", "freeze", "--then-lane", "properties")
    both = cli(repo, "pathfilter", *DAY, *then, f"--share-out={out}")
    # pathfilter passes, freeze fails: the first lane that did not pass gives the code.
    assert both.code == 1, both.out + both.err
    lines = both.out.strip().splitlines()
    reports = repo / ".patchjudge"
    for line, lane in zip(lines[-3:], ("pathfilter", "freeze", "properties"), strict=True):
        path = reports / f"{lane}.json"
        assert line == f"report: {path} sha256={hashlib.sha256(path.read_bytes()).hexdigest()}"
    assert lines[-4] == f"shared: {out} sha256={hashlib.sha256(out.read_bytes()).hexdigest()}"
    # The properties lane ran here, on the head's code: the break is its to see too.
    assert both.report(repo, "properties")["status"] == "fail", both.out
    assert both.report(repo, "pathfilter")["status"] == "pass"
    report = both.report(repo, "freeze")
    # pathfilter's pass, taken from memory: no pytest of the freeze lane's own.
    assert report["details"]["shared"] == {"suite_run": "pathfilter's"}, report
    assert report["reasons"][0].startswith("suite: 1 failed: tests/test_calc.py::test_two"), report


def test_unboxed_no_lane_writes_or_takes_a_shared_result(tmp_path: Path) -> None:
    # Unboxed, each lane's guard must watch its own processes run the suite.
    ledger = LEDGER.replace('base = "main"\n', 'base = "main"\nisolation = "process"\n')
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    write(repo, {"src/calc/__init__.py": BROKEN})
    commit(repo)
    out = tmp_path / "shared" / "pathfilter.pickle"
    first, digest = _pathfilter(repo, out)
    assert (digest, out.exists()) == ("", False), first.out
    assert first.report(repo, "pathfilter")["details"]["head_collection"] == "collected"
    # A file with a matching digest changes nothing either.
    out.parent.mkdir()
    out.write_bytes(b"\x80\x05]\x94.")  # an empty list, pickled
    given = hashlib.sha256(out.read_bytes()).hexdigest()
    taken = cli(repo, "freeze", *DAY, f"--share-in={out}={given}", f"--share-out={out}")
    assert "shared: " not in taken.out and "refused" not in taken.err, taken.out + taken.err
    assert "shared" not in taken.report(repo, "freeze")["details"]
    # Nor do two lanes share a process: exit 2, one line, before any lane runs.
    (repo / ".patchjudge" / "freeze.json").unlink()
    before = (repo / ".patchjudge" / "pathfilter.json").read_bytes()
    refused = cli(repo, "pathfilter", *DAY, "--then-lane", "freeze")
    assert refused.code == 2, refused.out + refused.err
    (line,) = refused.err.strip().splitlines()
    assert "--then-lane freeze" in line and "[gate] isolation" in line, line
    assert not (repo / ".patchjudge" / "freeze.json").exists()
    assert (repo / ".patchjudge" / "pathfilter.json").read_bytes() == before
