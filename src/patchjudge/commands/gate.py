"""`patchjudge gate`, one lane on its own, and `patchjudge verdict`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from patchjudge import render, store
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import LaneFn, registry
from patchjudge.report import LaneReport, Status, Verdict
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
    # Annotations are stdout lines GitHub Actions turns into errors on the run page.
    if environ.get("GITHUB_ACTIONS") == "true":
        for line in render.github_annotations(verdict):
            print(line, file=out)
    print(render.summary(verdict), file=out)
    print(f"reports: {run.reports}", file=out)
    return verdict.decision.exit_code


def run_lane(run: Run, name: str, lane: LaneFn) -> LaneReport:
    """A lane that crashes fails: whatever the patch did to it, it is no pass.

    A bad judge file is still the user's error (exit 2), not a verdict.
    """
    try:
        return lane(run)
    except PatchjudgeError:
        raise
    except Exception as exc:
        reason = f"lane crashed: {type(exc).__name__}: {exc}"
        return LaneReport(name, Status.FAIL, (reason,), run.key, {})


def gate(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    """Every lane, then the verdict, decided from the reports this process made.

    Nothing is read back from disk: a report file the tested code rewrote
    while a later lane ran changes no decision.
    """
    run = open_run(options, environ)
    reports: dict[str, LaneReport | Unreadable | None] = {}
    for name, lane in registry().items():
        print(f"patchjudge: {name} ...", file=out, flush=True)
        report = run_lane(run, name, lane)
        store.write_report(run.reports, report)
        reports[name] = report
    return _write_verdict(run, decide(reports, run.key, run.ledger.properties), out, environ)


def lane(name: str, options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    run = open_run(options, environ)
    report = run_lane(run, name, registry()[name])
    path = store.write_report(run.reports, report)
    # Reasons hold patch-chosen paths: a newline in one must not start a line (in
    # Actions, a line starting with `::` is a command, e.g. `::stop-commands::`).
    first = f" — {render.printable(report.reasons[0])}" if report.reasons else ""
    print(f"patchjudge {name}: {report.status.value}{first}", file=out)
    for reason in report.reasons[1:]:
        print(f"  {render.printable(reason)}", file=out)
    # The last line: the noxfile keeps this digest in its own memory and hands
    # it to `verdict --expect`, so a report rewritten afterwards is caught.
    print(f"report: {path} sha256={store.file_sha256(path)}", file=out)
    return report.exit_code


def verdict(
    options: Options,
    out: TextIO,
    expect: Mapping[str, str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> int:
    """The verdict over report files already on disk (the nox flow).

    With `expect` (lane -> sha256 the lane printed when it wrote its report),
    a lane not listed counts as missing and a file that changed since as
    unreadable: what the tested code may have written in between is ignored.
    """
    run = open_run(options, environ)
    reports: dict[str, LaneReport | Unreadable | None] = {}
    for name in ALL_LANES:
        if expect is not None and name not in expect:
            reports[name] = None
            continue
        reports[name] = store.read_report(run.reports, name, expect.get(name) if expect else None)
    return _write_verdict(run, decide(reports, run.key, run.ledger.properties), out, environ)
