"""replay: did a trusted host run what the local lanes left undecided? And the host's run."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchjudge import replay, store, testrun
from patchjudge.freezefile import FreezeRow, parse_registry
from patchjudge.lanes import report
from patchjudge.lanes.pathfilter import collect_suite
from patchjudge.report import LaneReport, Status
from patchjudge.workspace import Run

NAME = "replay"


@dataclass(frozen=True)
class Slice:
    """What this run hands to a trusted host, and why it may not (problems)."""

    nodeids: tuple[str, ...]
    frozen: tuple[str, ...]
    host_dependent: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def data(self) -> bytes:
        return replay.slice_bytes(self.nodeids)

    @property
    def sha256(self) -> str:
        return replay.sha256(self.data)


def frozen_rows(run: Run) -> tuple[FreezeRow, ...]:
    registry = run.ledger.freeze.registry
    data = run.read_base(registry)
    if data is None:
        return ()
    return parse_registry(data, f"{registry} (at merge base {run.merge_base[:12]})")


def _collect(run: Run, which: str) -> testrun.TestRun:
    with run.scratch() as scratch:
        return collect_suite(run, which, scratch)[0]


def compute_slice(run: Run) -> Slice:
    """Frozen node ids when the map forces freeze; host-dependent ones when it forces replay."""
    settings = run.ledger.replay
    frozen = {row.nodeid for row in frozen_rows(run)} if run.forces("freeze") else set()
    problems: list[str] = []
    hosted: set[str] = set()
    if run.forces(NAME) and (settings.nodeids or settings.marker):
        timeout = run.ledger.suite.timeout_s
        head = _collect(run, "head")
        problems += [f"visible suite at head: {p}" for p in testrun.run_problems(head, timeout)]
        base_markers: Mapping[str, tuple[str, ...]] = {}
        if settings.marker:
            base = _collect(run, "base")
            # The base's own collection errors are the base's; its markers still count.
            problems += [
                f"visible suite at base: {p}"
                for p in testrun.run_problems(base, timeout)
                if not p.startswith("collection error")
            ]
            base_markers = base.markers
        hosted = replay.host_dependent(
            head.collected, settings.nodeids, settings.marker, head.markers, base_markers
        )
    unfit = sorted(n for n in frozen | hosted if replay.nodeid_problem(n))
    problems += [f"not fit for a slice: {replay.nodeid_problem(n)}" for n in unfit]
    nodeids = tuple(sorted((frozen | hosted) - set(unfit)))
    problems += replay.slice_problems(nodeids, settings.private, settings.max_slice)
    return Slice(
        nodeids=nodeids,
        frozen=tuple(sorted(frozen - set(unfit))),
        host_dependent=tuple(sorted(hosted - set(unfit))),
        problems=tuple(problems),
    )


def write_slice(run: Run, sl: Slice) -> Path:
    """`<reports>/replay-slice.txt`; a slice with problems leaves no file behind."""
    path = run.reports / replay.SLICE_FILE
    if sl.problems:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        store.write_text(path, sl.data.decode("utf-8"))
    return path


def run(run: Run) -> LaneReport:
    # open_run read the receipt before anything of the patch ran: the file on
    # disk now may not be the one the user passed.
    receipt_data = run.receipt
    receipt = None
    if receipt_data is not None:
        receipt = replay.parse_receipt(receipt_data, str(run.options.receipt))
    settings = run.ledger.replay
    rows = frozen_rows(run)
    sl = compute_slice(run)
    write_slice(run, sl)
    # Reports are uploaded too: a private node id is counted, never named.
    public = [n for n in sl.nodeids if not replay.is_private(n, settings.private)]
    details: dict[str, Any] = {
        "required": settings.required,
        "slice_sha256": sl.sha256,
        "slice": public,
        "frozen_in_slice": [n for n in sl.frozen if n in public],
        "host_dependent": [n for n in sl.host_dependent if n in public],
    }
    reasons = list(sl.problems)
    if receipt is not None and receipt_data is not None:
        reasons += replay.check(
            receipt,
            sl.sha256,
            run.head,
            {row.nodeid for row in rows},
            slice_nodeids=sl.nodeids,
            seed=run.ledger.properties.seed,
        )
        details.update(
            receipt_sha256=replay.sha256(receipt_data),
            host_role=receipt.host_role,
            host=dict(receipt.host),
            failed_nodeids=list(receipt.failed_nodeids),
            skipped_by_freeze=list(receipt.skipped_by_freeze),
        )
        return report(run, NAME, Status.FAIL if reasons else Status.PASS, reasons, details)
    if reasons:
        return report(run, NAME, Status.FAIL, reasons, details)
    forced = run.forces(NAME) or run.forces("freeze")
    if not sl.nodeids and not forced:
        why = "no changed path forces freeze or replay, and the slice is empty"
        return report(run, NAME, Status.NOT_APPLICABLE, [why], details)
    if settings.required:
        why = (
            f"replay required and no receipt: run the slice ({len(sl.nodeids)} node ids, "
            f"sha256 {sl.sha256[:12]}) on a trusted host and pass --receipt"
        )
        return report(run, NAME, Status.UNDECIDED, [why], details)
    why = "replay not required"
    if sl.nodeids:
        why += f" ({len(sl.nodeids)} node id(s) in the slice were not run on a trusted host)"
    return report(run, NAME, Status.NOT_APPLICABLE, [why], details)


def run_on_host(
    run: Run, nodeids: tuple[str, ...], slice_sha256: str, host_role: str, host: Mapping[str, str]
) -> tuple[replay.Receipt, testrun.TestRun | None]:
    """The trusted host's half: exactly these node ids, once each, at head, seeded."""
    seed = run.ledger.properties.seed
    frozen = {row.nodeid for row in frozen_rows(run)}
    result = None
    outcomes: tuple[testrun.Outcome, ...] = ()
    problems: list[str] = []
    # An empty slice runs nothing: pytest given no node id would run everything.
    if nodeids:
        with run.scratch() as scratch:
            plan = testrun.Plan(
                tree=run.materialize(scratch / "tree"),
                args=nodeids,
                conftest_roots=run.ledger.suite.paths,
                pythonpath=run.ledger.gate.pythonpath,
                plugins=run.ledger.suite.plugins,
                seed=seed,
                timeout_s=run.ledger.suite.timeout_s,
                python=run.code.python,
            )
            result = testrun.run(plan, scratch=scratch, environ=run.environ, box=run.box)
        outcomes = result.outcomes
        problems = testrun.run_problems(result, run.ledger.suite.timeout_s)
        # 0 and 1 are pytest's verdicts on tests; anything else (a node id not
        # found, an interrupted or empty session) means the slice did not run.
        if result.exitstatus not in (0, 1) and not problems:
            output = result.output.replace(f"{plan.tree}/", "")
            tail = " / ".join(output.strip().splitlines()[-2:])
            problems.append(f"pytest exited {result.exitstatus}: {tail}")
    passed, failed, skipped = replay.sort_outcomes(nodeids, outcomes, frozen)
    receipt = replay.Receipt(
        seed=seed,
        head=run.head,
        slice_sha256=slice_sha256,
        failed_nodeids=tuple(failed),
        skipped_by_freeze=tuple(skipped),
        passed_nodeids=tuple(passed),
        host_role=host_role,
        host=dict(host),
        problems=tuple(problems),
    )
    return receipt, result
