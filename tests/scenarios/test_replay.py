"""The replay flow end to end: the developer's clone, a trusted clone, the real CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchjudge.replay import slice_bytes
from tests.attack_helpers import require_sandbox
from tests.helpers import cli, gate, git, verdict
from tests.replay_helpers import (
    HOST_TESTS,
    SLICE,
    check,
    clone,
    edit_receipt,
    make_slice,
    patch,
    receipt_of,
    replay_repo,
    run_slice,
    sha256_file,
)


@dataclass(frozen=True)
class Hosts:
    dev: Path  # where the patch was made and is judged
    trusted: Path  # a separate clone: the host the patch cannot reach
    slice: Path
    receipt: Path
    head: str
    printed: str = ""  # what `replay slice` printed


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Hosts:
    """One patch, its slice written on the dev host and run on the trusted one."""
    tmp = tmp_path_factory.mktemp("hosts")
    dev = replay_repo(tmp)
    head = patch(dev)
    made = make_slice(dev)
    assert made.code == 0, made
    slice_path = dev / ".patchjudge" / "replay-slice.txt"
    trusted = clone(dev, tmp / "trusted")
    ran = run_slice(trusted, slice_path)
    assert ran.code == 0, ran
    return Hosts(dev, trusted, slice_path, receipt_of(trusted), head, made.out)


def test_slice_is_the_spec_bytes_and_its_hash_is_printed(hosts: Hosts) -> None:
    assert hosts.slice.read_bytes() == SLICE.encode()
    assert hosts.printed == f"{sha256_file(hosts.slice)}  {hosts.slice}\n"


def test_receipt_records_the_run(hosts: Hosts) -> None:
    doc = json.loads(hosts.receipt.read_text())
    assert doc["head"] == hosts.head
    assert doc["slice_sha256"] == sha256_file(hosts.slice)
    assert doc["seed"] == 20260924
    assert doc["passed_nodeids"] == SLICE.splitlines()
    assert doc["failed_nodeids"] == doc["skipped_by_freeze"] == doc["problems"] == []
    assert doc["host_role"] == "trusted-ci"
    assert set(doc["host"]) == {"python", "platform", "pins_sha256"}


def test_valid_receipt_accepts_for_review(hosts: Hosts) -> None:
    result = gate(hosts.dev, "--receipt", str(hosts.receipt))
    assert result.code == 0, result
    doc = verdict(hosts.dev)
    assert doc["verdict"] == "accept_for_review"
    assert doc["lanes"]["replay"]["status"] == "pass"
    assert doc["review"]["replay"] == sha256_file(hosts.receipt)
    assert sha256_file(hosts.receipt) in (hosts.dev / ".patchjudge" / "verdict.md").read_text()


def test_no_receipt_with_replay_required_is_undecided(hosts: Hosts) -> None:
    # The replay lane alone: every other lane passes on this head (the receipt's gate
    # above accepts), and an undecided replay lane is an undecided verdict whose review
    # says so (tests/unit/test_verdict.py).
    result = cli(hosts.dev, "replay", "--base", "main")
    assert result.code == 3, result
    report = result.report(hosts.dev, "replay")
    assert report["status"] == "undecided"
    assert report["reasons"] == [report["reasons"][0]]
    assert "replay required and no receipt" in report["reasons"][0]


def test_tampered_slice_is_rejected(hosts: Hosts, tmp_path: Path) -> None:
    # Something on the way to the trusted host drops a line: the host runs
    # the smaller slice honestly, and its hash gives it away.
    tampered = tmp_path / "replay-slice.txt"
    tampered.write_text(SLICE.splitlines(keepends=True)[1])
    host = clone(hosts.dev, tmp_path / "trusted")
    assert run_slice(host, tampered).code == 0
    result = check(hosts.dev, receipt_of(host))
    assert result.code == 1, result
    assert "is not this run's slice" in result.out
    assert result.report(hosts.dev, "replay")["status"] == "fail"


def test_a_slice_that_is_not_canonical_is_refused_by_the_host(hosts: Hosts, tmp_path: Path) -> None:
    unsorted = tmp_path / "replay-slice.txt"
    unsorted.write_text("".join(reversed(SLICE.splitlines(keepends=True))))
    result = run_slice(hosts.trusted, unsorted)
    assert result.code == 2
    assert f"{unsorted}: line 2: node id out of order" in result.err
    assert "Traceback" not in result.err


def test_a_slice_line_pytest_would_read_as_an_arguments_file_is_refused_by_the_host(
    hosts: Hosts, tmp_path: Path
) -> None:
    # Red team, session 12: pytest 9 reads `@FILE` as more arguments (options too:
    # `--deselect`, `-k`, `-o`), from a file of the head's tree the host runs.
    hostile = tmp_path / "replay-slice.txt"
    hostile.write_text("@tests/args.txt\n" + SLICE)
    result = run_slice(hosts.trusted, hostile, "--reports", str(tmp_path / "out"))
    assert result.code == 2, result
    assert "line 1: '@tests/args.txt': not a node id relative to the repository" in result.err
    assert not (tmp_path / "out" / "receipt.json").exists()


def test_a_slice_naming_a_test_that_is_not_there_is_no_pass(hosts: Hosts, tmp_path: Path) -> None:
    ghost = tmp_path / "replay-slice.txt"
    ghost.write_bytes(slice_bytes([*SLICE.splitlines(), "tests/test_host.py::test_ghost"]))
    ran = run_slice(hosts.trusted, ghost, "--reports", str(tmp_path / "out"))
    assert ran.code == 0, ran
    receipt = json.loads((tmp_path / "out" / "receipt.json").read_text())
    [problem] = receipt["problems"]
    assert problem.startswith("pytest exited 4: ERROR: not found: tests/test_host.py::test_ghost")
    assert receipt["passed_nodeids"] == []


def test_tampered_receipt_that_drops_a_node_id_is_rejected(hosts: Hosts, tmp_path: Path) -> None:
    forged = edit_receipt(
        hosts.receipt, tmp_path / "receipt.json", passed_nodeids=[SLICE.splitlines()[0]]
    )
    result = check(hosts.dev, forged)
    assert result.code == 1, result
    assert "receipt does not account for tests/test_host.py::test_total_on_host" in result.out


@pytest.mark.parametrize(
    ("changes", "key"),
    [({"head": "HEAD"}, "head"), ({"problems": None}, "problems"), ({"extra": 1}, "extra")],
)
def test_malformed_receipt_is_exit_2_naming_the_key(
    hosts: Hosts, tmp_path: Path, changes: dict[str, object], key: str
) -> None:
    forged = edit_receipt(hosts.receipt, tmp_path / "receipt.json", **changes)
    result = gate(hosts.dev, "--receipt", str(forged))
    assert result.code == 2, result
    assert result.err.startswith(f"patchjudge: {forged}: {key}: ")
    assert len(result.err.splitlines()) == 1


def test_skip_of_a_test_the_registry_does_not_freeze_is_rejected(
    hosts: Hosts, tmp_path: Path
) -> None:
    first, second = SLICE.splitlines()
    forged = edit_receipt(
        hosts.receipt, tmp_path / "receipt.json", passed_nodeids=[first], skipped_by_freeze=[second]
    )
    result = check(hosts.dev, forged)
    assert result.code == 1, result
    assert f"receipt skips {second}, which the registry does not freeze" in result.out


def test_receipt_for_an_older_head_is_rejected(hosts: Hosts, tmp_path: Path) -> None:
    dev = clone(hosts.dev, tmp_path / "dev")
    newer = patch(dev, {"docs/notes.md": "# later\n"})
    result = cli(dev, "replay", "check", "--base", "origin/main", "--receipt", str(hosts.receipt))
    assert result.code == 1, result
    assert f"receipt is for head {hosts.head[:12]}, this run judges {newer[:12]}" in result.out


def test_marker_dropped_by_the_patch_still_replays(hosts: Hosts, tmp_path: Path) -> None:
    dev = clone(hosts.dev, tmp_path / "dev")
    source = (dev / "tests" / "test_calc.py").read_text()
    patch(dev, {"tests/test_calc.py": source.replace("@pytest.mark.host_dependent\n", "")})
    result = cli(dev, "replay", "slice", "--base", "origin/main")
    assert result.code == 0, result
    assert (dev / ".patchjudge" / "replay-slice.txt").read_text() == SLICE


def test_oversized_slice_fails_with_the_count(hosts: Hosts, tmp_path: Path) -> None:
    dev = clone(hosts.dev, tmp_path / "dev")
    more = HOST_TESTS + "\n\ndef test_b():\n    pass\n\n\ndef test_c():\n    pass\n"
    patch(dev, {"tests/test_host.py": more})
    result = cli(dev, "replay", "slice", "--base", "origin/main")
    assert result.code == 1, result
    assert result.out == "patchjudge replay slice: slice has 4 node ids, over max_slice 3\n"
    assert not (dev / ".patchjudge" / "replay-slice.txt").exists()


def test_private_node_id_is_refused(hosts: Hosts, tmp_path: Path) -> None:
    dev = clone(hosts.dev, tmp_path / "dev")
    secret = HOST_TESTS + "\n\ndef test_secret_launch_codes():\n    pass\n"
    patch(dev, {"tests/test_host.py": secret})
    lane = cli(dev, "replay", "--base", "origin/main")
    assert lane.code == 1, lane
    assert lane.report(dev, "replay")["reasons"] == [
        "1 node id(s) match [replay] private glob '*::test_secret_*': "
        "a slice never carries what may not be uploaded"
    ]
    # Nothing that is uploaded names it: not the report, not a slice file.
    assert "launch_codes" not in lane.out
    assert "launch_codes" not in (dev / ".patchjudge" / "replay.json").read_text()
    assert not (dev / ".patchjudge" / "replay-slice.txt").exists()
    # Nor does the trusted host run a slice that carries one, however it was made.
    handmade = tmp_path / "replay-slice.txt"
    handmade.write_bytes(
        slice_bytes([*SLICE.splitlines(), "tests/test_host.py::test_secret_launch_codes"])
    )
    refused = run_slice(dev, handmade)
    assert refused.code == 2
    assert "private glob" in refused.err
    assert not receipt_of(dev).exists()


@pytest.fixture(scope="module")
def frozen_hosts(tmp_path_factory: pytest.TempPathFactory) -> Hosts:
    """A registry that freezes a test failing on every host; replay not required."""
    tmp = tmp_path_factory.mktemp("frozen")
    dev = replay_repo(tmp, frozen=True, required=False)
    head = patch(dev, {"src/calc/__init__.py": "def total(xs):\n    return sum(xs) + 1\n"})
    assert make_slice(dev).code == 0
    slice_path = dev / ".patchjudge" / "replay-slice.txt"
    trusted = clone(dev, tmp / "trusted")
    assert run_slice(trusted, slice_path).code == 0
    return Hosts(dev, trusted, slice_path, receipt_of(trusted), head)


def test_failed_test_that_is_not_frozen_is_rejected(frozen_hosts: Hosts) -> None:
    doc = json.loads(frozen_hosts.receipt.read_text())
    # The patch broke total(): every host test fails, the frozen one as always.
    assert doc["failed_nodeids"] == [
        "tests/test_calc.py::test_clock",
        "tests/test_host.py::test_flaky",
        "tests/test_host.py::test_total_on_host",
    ]
    result = check(frozen_hosts.dev, frozen_hosts.receipt)
    assert result.code == 1, result
    reasons = result.report(frozen_hosts.dev, "replay")["reasons"]
    assert reasons == [
        "failed on the trusted host (not frozen): tests/test_calc.py::test_clock",
        "failed on the trusted host (not frozen): tests/test_host.py::test_total_on_host",
    ]


def test_no_receipt_and_replay_not_required_is_not_applicable(frozen_hosts: Hosts) -> None:
    result = cli(frozen_hosts.dev, "replay", "--base", "main")
    assert result.code == 0, result
    report = result.report(frozen_hosts.dev, "replay")
    assert report["status"] == "not_applicable"
    assert report["reasons"] == [
        "replay not required (3 node id(s) in the slice were not run on a trusted host)"
    ]
    assert report["details"]["frozen_in_slice"] == ["tests/test_host.py::test_flaky"]


def test_nothing_forced_and_an_empty_slice_is_not_applicable(tmp_path: Path) -> None:
    dev = replay_repo(tmp_path)
    patch(dev, {"docs/notes.md": "# notes\n"})
    result = cli(dev, "replay", "--base", "main")
    assert result.code == 0, result
    assert result.report(dev, "replay")["reasons"] == [
        "no changed path forces freeze or replay, and the slice is empty"
    ]
    assert (dev / ".patchjudge" / "replay-slice.txt").read_bytes() == b""


def test_replay_check_needs_a_receipt(hosts: Hosts) -> None:
    result = cli(hosts.dev, "replay", "check", "--base", "main")
    assert result.code == 2
    assert (
        result.err == "patchjudge: --receipt: replay check needs a receipt (pass --receipt FILE)\n"
    )


def test_git_history_of_the_trusted_clone_is_its_own(hosts: Hosts) -> None:
    # The two hosts share no working tree: the receipt lives only in the clone.
    assert git(hosts.trusted, "rev-parse", "HEAD").strip() == hosts.head
    assert not receipt_of(hosts.dev).exists()


@pytest.mark.parametrize("isolation", ["process", "sandbox"])
def test_receipt_rewritten_by_code_under_test_changes_nothing(
    tmp_path: Path, isolation: str
) -> None:
    # The patched code overwrites the receipt whenever it is imported: during
    # the gate that is long before the replay lane runs. In the sandbox it
    # cannot even see the receipt.
    if isolation == "sandbox":
        require_sandbox()
    target = tmp_path / "receipt.json"
    # No property can tell whether the rewrite ran (issue 18 would hold it as
    # unexercised): this test is about the receipt, so the rule only reports.
    review = '\n[review]\nunexercised = "report"\n'
    # No review mutants: they are code under test too, and the mutation phase runs
    # them in a secret random order (review_phase.py). Its `'{}' -> ''` mutant
    # truncates the receipt, so what the file held at the end was a coin flip
    # between that mutant and the null one that writes `{}` (branch replayflake).
    dev = replay_repo(tmp_path, isolation=isolation, extra_ledger=review, review_mutants=0)
    rewriting = (
        "import contextlib, pathlib\n\n"
        "with contextlib.suppress(OSError):\n"
        f"    pathlib.Path({str(target)!r}).write_text('{{}}')\n\n\n"
        "def total(xs):\n    return sum(xs)\n"
    )
    patch(dev, {"src/calc/__init__.py": rewriting})
    trusted = clone(dev, tmp_path / "trusted")
    (tmp_path / "replay-slice.txt").write_text(SLICE)  # what `replay slice` writes here
    assert run_slice(trusted, tmp_path / "replay-slice.txt").code == 0
    target.write_bytes(receipt_of(trusted).read_bytes())
    result = gate(dev, "--receipt", str(target))
    # Under process-level isolation the code under test did rewrite it.
    assert (target.read_text() == "{}") is (isolation == "process"), target.read_bytes()
    assert result.code == 0, result
    assert verdict(dev)["review"]["replay"] == sha256_file(receipt_of(trusted))
