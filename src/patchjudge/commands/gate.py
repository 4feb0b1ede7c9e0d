"""`patchjudge gate`, one lane on its own, and `patchjudge verdict`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from patchjudge import charmap, render, store
from patchjudge.lanes import registry
from patchjudge.report import LaneReport, Verdict
from patchjudge.verdict import ALL_LANES, Unreadable, decide
from patchjudge.workspace import Options, Run, open_run


def _write_verdict(run: Run, verdict: Verdict, out: TextIO, environ: Mapping[str, str]) -> int:
    from patchjudge.report import dumps

    store.write_text(run.reports / "verdict.json", dumps(verdict.to_json()))
    md = render.markdown(verdict)
    store.write_text(run.reports / "verdict.md", md)
    summary_file = environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with Path(summary_file).open("a", encoding="utf-8") as fh:
            fh.write(md)
    print(render.summary(verdict), file=out)
    print(f"reports: {run.reports}", file=out)
    return verdict.decision.exit_code


def gate(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    """Every lane, then the verdict, decided from the reports this process made.

    Nothing is read back from disk: a report file the tested code rewrote
    while a later lane ran changes no decision.
    """
    run = open_run(options, environ)
    if run.forces("properties"):
        # Built while pathfilter's pytest runs, used by the properties run (issue 7).
        charmap.prefetch()
    reports: dict[str, LaneReport | Unreadable | None] = {}
    for name, lane in registry().items():
        print(f"patchjudge: {name} ...", file=out, flush=True)
        report = lane(run)
        store.write_report(run.reports, report)
        reports[name] = report
    return _write_verdict(run, decide(reports, run.key, run.ledger.properties), out, environ)


def lane(name: str, options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    run = open_run(options, environ)
    report = registry()[name](run)
    path = store.write_report(run.reports, report)
    first = f" — {report.reasons[0]}" if report.reasons else ""
    print(f"patchjudge {name}: {report.status.value}{first}", file=out)
    for reason in report.reasons[1:]:
        print(f"  {reason}", file=out)
    print(f"report: {path}", file=out)
    return report.exit_code


def verdict(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    """The verdict over report files already on disk (the nox flow)."""
    run = open_run(options, environ)
    reports = {name: store.read_report(run.reports, name) for name in ALL_LANES}
    return _write_verdict(run, decide(reports, run.key, run.ledger.properties), out, environ)
