"""Every document the real CLI writes validates against the JSON Schema patchjudge ships.

Not examples written by hand: the lane reports, verdicts, flakes.json and the
receipt that real runs wrote, on an accept, an undecided and a reject, with a
frozen test, a replay slice and a trusted host (issue 13).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import cli, commit, gate, write
from tests.replay_helpers import clone, make_slice, patch, receipt_of, replay_repo, run_slice
from tests.schema_helpers import validate_file

LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")
# The JSON each command writes, by file name -> the schema it must meet.
SCHEMA_OF = {
    **{f"{lane}.json": "lane_report" for lane in LANES},
    "verdict.json": "verdict",
    "flakes.json": "flakes",
    "receipt.json": "receipt",
}


def _validate_all(reports: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """Every JSON file in a reports dir, validated; a JSON file with no schema fails too."""
    found = {}
    for path in sorted(reports.glob("*.json")):
        assert path.name in SCHEMA_OF, f"{path.name}: written with no schema to check it against"
        found[path.name] = validate_file(path, SCHEMA_OF[path.name])
    return found


@pytest.mark.long
def test_what_gate_flakes_and_replay_write_validates(tmp_path: Path) -> None:
    dev = replay_repo(tmp_path, frozen=True)
    patch(dev)
    assert make_slice(dev).code == 0
    trusted = clone(dev, tmp_path / "trusted")
    ran = run_slice(trusted, dev / ".patchjudge" / "replay-slice.txt")
    assert ran.code == 0, ran
    receipt = receipt_of(trusted)
    written = _validate_all(receipt.parent)
    assert "tests/test_host.py::test_flaky" in written["receipt.json"]["failed_nodeids"]  # frozen

    # Accepted, with a frozen test and a receipt: every lane report and the verdict.
    assert gate(dev, "--receipt", str(receipt)).code == 0
    written = _validate_all(dev / ".patchjudge")
    assert set(written) >= {*(f"{lane}.json" for lane in LANES), "verdict.json"}
    assert written["verdict.json"]["verdict"] == "accept_for_review"
    assert written["verdict.json"]["review"]["freeze"]

    # Undecided: replay required and no receipt. The replay lane decides it, so only it
    # runs again, then the verdict over the same head's reports (issue 20: not a second gate).
    assert cli(dev, "replay", "--base", "main").code == 3
    assert cli(dev, "verdict", "--base", "main").code == 3
    written = _validate_all(dev / ".patchjudge")
    assert written["replay.json"]["status"] == "undecided"
    assert written["verdict.json"]["verdict"] == "undecided"

    # Evidence: the visible suite twice.
    flakes = cli(dev, "flakes", "--count", "2", "--workers", "0", "--today", "2026-12-01")
    assert flakes.code == 0, flakes.err
    doc = _validate_all(dev / ".patchjudge")["flakes.json"]
    assert doc["nodes"]["tests/test_host.py::test_flaky"] == {"fail": 2, "runs": 2}

    # Rejected: a property fails, with its falsifying example in the report's details.
    write(dev, {"src/calc/__init__.py": "def total(xs):\n    return -1 if xs else 0\n"})
    commit(dev, "the patch breaks the property")
    assert gate(dev, "--receipt", str(receipt)).code == 1
    written = _validate_all(dev / ".patchjudge")
    assert written["verdict.json"]["verdict"] == "reject"
    assert written["properties.json"]["details"]["failed"]
