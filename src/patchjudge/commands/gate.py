"""`patchjudge gate`, one lane on its own, and `patchjudge verdict`."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from patchjudge import cache, guard, render, store
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import LaneFn, load, registry
from patchjudge.paths import under
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
        with Path(summary_file).open("a", encoding="utf-8", errors="backslashreplace") as fh:
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
        details: dict[str, str] = {"isolation": run.isolation}
        if run.isolation_fallback is not None:
            details["isolation_fallback"] = run.isolation_fallback
        return LaneReport(name, Status.FAIL, (reason,), run.key, details)


def _snapshot(run: Run) -> dict[str, guard.Stamp]:
    whole, listed = guard.interpreter_roots()
    # The code's own venv (--python): its site-packages run in every later lane, so a .pth
    # or sitecustomize one lane's tested code left there is tampering too. Nothing of the
    # judge's writes there during a gate: `[gate] install` runs before it.
    code = [p.resolve() for p in run.code.site if p.is_dir()]
    # Sandboxed, the box hides the checkout's working files (guard.checkout's `boxed`).
    roots = [*whole, *code, run.reports.resolve()]
    boxed = run.isolation == "sandbox"
    return guard.snapshot(roots, listed, [run.repo.resolve()], boxed=boxed)


def _shown(change: str, repo: Path) -> str:
    verb, _, path = change.partition(" ")
    try:
        return f"{verb} {Path(path).relative_to(repo).as_posix()} (in the checkout)"
    except ValueError:
        return change


def _own_outputs(run: Run, report: LaneReport) -> set[str]:
    """Files the lane itself wrote, vouched for by the digest in its report.

    The replay lane leaves `replay-slice.txt` (or removes it): that is no
    tampering as long as the bytes on disk are the slice the lane computed.
    """
    if report.lane != "replay":
        return set()
    from patchjudge import replay  # loaded already: the replay lane's module imports it

    path = (run.reports / replay.SLICE_FILE).resolve()
    if path.exists() and store.file_sha256(path) != report.details.get("slice_sha256"):
        return set()
    # Writing it may have made the reports directory itself.
    return {str(path), str(path.parent)}


def guarded(
    run: Run, name: str, lane_fn: LaneFn, before: guard.Snapshot | None = None
) -> tuple[LaneReport, dict[str, guard.Stamp]]:
    """Run a lane and fail it if anything outside its scratch trees changed meanwhile.

    Tested code runs as the same user as the gate: it can reach the checkout
    (its path is in /proc), the reports and the judge's own interpreter. A
    write there is an attack on a later lane or a later run, whatever the
    lane itself concluded. Returns the snapshot taken after the lane, so the
    next lane starts from it.
    """
    # The gate's own imports must not look like tampering with site-packages.
    sys.dont_write_bytecode = True
    if before is None:
        before = _snapshot(run)
    report = run_lane(run, name, lane_fn)
    after = guard.settled(before, _snapshot(run))
    own = _own_outputs(run, report)
    written = [w for w in guard.changes(before, after) if w.partition(" ")[2] not in own]
    if not written:
        return report, after
    shown = [_shown(w, run.repo.resolve()) for w in written]
    reasons = [f"tested code wrote outside its scratch tree: {w}" for w in shown[:5]]
    if len(shown) > 5:
        reasons.append(f"tested code wrote outside its scratch tree: {len(shown) - 5} more")
    details = {**report.details, "tampering": shown[:200]}
    tampered = LaneReport(
        report.lane, Status.FAIL, (*reasons, *report.reasons), report.key, details
    )
    return tampered, after


def _restamp(snap: dict[str, guard.Stamp], run: Run) -> dict[str, guard.Stamp]:
    """The snapshot with the gate's own report writes (and directories it made) folded in."""
    reports = run.reports.resolve()
    snap.update(guard.walk(reports))
    repo = run.repo.resolve()
    for parent in reports.parents:
        if str(parent) in snap or not parent.is_relative_to(repo):
            break
        if (st := guard.stamp(parent)) is not None:
            snap[str(parent)] = st
    return snap


def gate(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    """Every lane, then the verdict, decided from the reports this process made.

    Nothing is read back from disk: a report file the tested code rewrote
    while a later lane ran changes no decision. The lanes share what one
    computed and a later one would compute alike (workspace.Shared).
    """
    run = open_run(options, environ, shared=True)
    # The gate's own imports must not look like tampering with site-packages
    # (guarded sets it too; here, since boxed lanes run unguarded before the last).
    sys.dont_write_bytecode = True
    import_before_code(run)
    _prefetch_charmap(run)
    reports: dict[str, LaneReport | Unreadable | None] = {}
    snap: dict[str, guard.Stamp] | None = None
    lanes = registry()
    last = list(lanes)[-1]
    for name, lane in lanes.items():
        print(f"patchjudge: {name} ...", file=out, flush=True)
        if run.isolation == "sandbox" and name != last:
            # Boxed, the tested code sees neither the checkout, nor the reports,
            # nor a writable interpreter: a walk around every lane guards what
            # it cannot reach. One walk before the first lane and one after the
            # last remain, the check that the box held (issue 20).
            if snap is None:
                snap = _snapshot(run)
            report = run_lane(run, name, lane)
        else:
            report, snap = guarded(run, name, lane, snap)
        store.write_report(run.reports, report)
        snap = _restamp(snap, run)
        reports[name] = report
    return _write_verdict(
        run, decide(reports, run.key, run.ledger.properties, run.ledger.review), out, environ
    )


def import_before_code(run: Run) -> None:
    """Unboxed, what this process would import only after a lane ran the code, now.

    The code runs as this user there and can rewrite the judge's venv; a module
    first imported after it ran could be one it rewrote, running in the judge's
    own process (the guard would see the change only after). Boxed, the venv is
    read-only to every box, and the lazy imports stay lazy (issue 20).
    """
    if run.isolation == "sandbox":
        return
    import coverage.exceptions  # review.statements'
    import coverage.parser

    from patchjudge import sharefile, versionfile  # the lane's share-out; generated files

    del coverage, sharefile, versionfile


def _prefetch_charmap(run: Run) -> None:
    """hypothesis's Unicode tables, when a base property may draw text (issue 20).

    Built (or read from the cache) while pathfilter's pytest runs, used by
    the properties run (issue 7). The base's files decide: the head's cannot
    make the judge skip or build them.
    """
    if not run.forces("properties"):
        return
    props = run.ledger.properties.paths
    sources = (
        run.read_base(e.path) or b""
        for e in run.base_entries
        if e.kind == "blob" and e.path.endswith(".py") and under(e.path, props)
    )
    # Here (issue 20): `verdict` and the lanes but properties never load it. Before
    # any lane runs: nothing of the patch's has run in this process's reach yet.
    from patchjudge import charmap

    if charmap.may_draw_text(sources):
        charmap.prefetch(cache.placement(run.environ, run.repo, run.isolation))


def lane(
    name: str,
    options: Options,
    out: TextIO,
    environ: Mapping[str, str] = os.environ,
    then: tuple[str, ...] = (),
) -> int:
    """One lane, then the lanes `then` names in this same process (boxed runs only).

    Exit code: the first lane's that failed or is undecided, else 0.
    """
    run = open_run(options, environ)
    _may_follow(run, name, then)
    import_before_code(run)
    if "properties" in (name, *then):
        _prefetch_charmap(run)
    made: list[tuple[LaneReport, Path, str]] = []
    snap: dict[str, guard.Stamp] | None = None
    for each in (name, *then):
        report, snap = guarded(run, each, load(each), snap)
        path = store.write_report(run.reports, report)
        # The bytes this process wrote, hashed before a later lane's code runs.
        made.append((report, path, store.file_sha256(path)))
        snap = _restamp(snap, run)
        _say(report, out)
    if run.shared is not None and options.share_out is not None:
        # What a later lane of this nox run may take instead of computing it (sharefile).
        from patchjudge import sharefile

        digest = sharefile.write(options.share_out, run.key, run.shared.made())
        if digest is not None:
            print(f"shared: {options.share_out} sha256={digest}", file=out)
    # The last lines, one a lane in the order run: the noxfile keeps these digests in
    # its own memory and hands them to `verdict --expect`, so a report rewritten
    # afterwards is caught.
    for _, path, digest in made:
        print(f"report: {path} sha256={digest}", file=out)
    return next((r.exit_code for r, _, _ in made if r.exit_code), 0)


def _may_follow(run: Run, name: str, then: tuple[str, ...]) -> None:
    """`LANE --then-lane X`: X runs after LANE in its process only where the box holds the code.

    Boxed, no process of the patch's code can write what this process imports or
    holds (the interpreter is read-only in the box, the judge's memory out of its
    reach), so a second lane here is what `patchjudge gate` does; unboxed, each
    lane keeps a process of its own (issue 19: nox's gate spares one, ~0.2 CPU-s).
    """
    if not then:
        return
    from patchjudge.cli import THEN_LANES

    allowed = THEN_LANES.get(name, ())
    for each in then:
        if each not in allowed:
            raise PatchjudgeError(
                f"--then-lane {each}: not a lane `{name}` may run after itself",
                fix=f"give {' or '.join(allowed) or 'no --then-lane'}",
            )
    if run.isolation != "sandbox":
        raise PatchjudgeError(
            f"--then-lane {then[0]}: two lanes share a process only when the code runs"
            f" boxed, and this run's isolation is {run.isolation}",
            file=f"eval/gate.toml (at merge base {run.merge_base[:12]})",
            key="[gate] isolation",
            fix=f"run the {then[0]} lane in a process of its own, or --isolation sandbox",
        )


def _say(report: LaneReport, out: TextIO) -> None:
    # Reasons hold patch-chosen paths: a newline in one must not start a line (in
    # Actions, a line starting with `::` is a command, e.g. `::stop-commands::`).
    first = f" — {render.printable(report.reasons[0])}" if report.reasons else ""
    print(f"patchjudge {report.lane}: {report.status.value}{first}", file=out)
    for reason in report.reasons[1:]:
        print(f"  {render.printable(reason)}", file=out)


def _runs_no_code(run: Run, name: str) -> None:
    """`verdict --with-lane` takes only a lane that runs none of the patch's code here."""
    settings = run.ledger.replay
    if name == "replay" and (settings.nodeids or settings.marker):
        raise PatchjudgeError(
            "--with-lane replay: its slice collects the visible suite, which runs the code",
            file=f"eval/gate.toml (at merge base {run.merge_base[:12]})",
            key="[replay] nodeids/marker",
            fix="run the replay lane in a session of its own, with --python",
        )
    if name not in ("fixtures", "replay"):
        raise PatchjudgeError(
            f"--with-lane {name}: not a lane the verdict's process may run",
            fix="give fixtures or replay",
        )


def verdict(
    options: Options,
    out: TextIO,
    expect: Mapping[str, str] | None = None,
    environ: Mapping[str, str] = os.environ,
    here: tuple[str, ...] = (),
) -> int:
    """The verdict over report files already on disk (the nox flow).

    With `expect` (lane -> sha256 the lane printed when it wrote its report),
    a lane not listed counts as missing and a file that changed since as
    unreadable: what the tested code may have written in between is ignored.
    The lanes in `here` run in this process first, guarded as a lane process
    runs them, and count as this process made them (issue 19: one process
    fewer each in a nox gate); only lanes that run none of the code.
    """
    run = open_run(options, environ)
    reports: dict[str, LaneReport | Unreadable | None] = {}
    for name in here:
        _runs_no_code(run, name)
    snap: dict[str, guard.Stamp] | None = None
    for name in [n for n in ALL_LANES if n in here]:
        report, snap = guarded(run, name, load(name), snap)
        store.write_report(run.reports, report)
        snap = _restamp(snap, run)
        _say(report, out)
        reports[name] = report
    for name in ALL_LANES:
        if name in reports:
            continue
        if expect is not None and name not in expect:
            reports[name] = None
            continue
        reports[name] = store.read_report(run.reports, name, expect.get(name) if expect else None)
    return _write_verdict(
        run, decide(reports, run.key, run.ledger.properties, run.ledger.review), out, environ
    )
