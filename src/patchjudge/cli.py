"""Command line: parse, dispatch, return an exit code. Nothing else lives here."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from patchjudge import __version__
from patchjudge.boundary import ISOLATIONS
from patchjudge.errors import PatchjudgeError

# What a command runs is imported where it is dispatched (issue 20): `--help`, a usage
# error, `lock` or `init` load no run, no box and no git plumbing. This is the judge's
# own process: it runs none of the patch's code, and every import happens before it
# starts the first process that does (docs/threat-model.md).
if TYPE_CHECKING:
    from patchjudge.workspace import Options

LANE_COMMANDS = ("pathfilter", "fixtures", "freeze", "properties", "replay")
# Lanes `verdict --with-lane` may run in its own process: they run none of the patch's
# code (replay only while its slice collects nothing), so a venv of their own isolates
# nothing, and a nox gate saves a process each (issue 19).
IN_VERDICT = ("fixtures", "replay")
# Lanes `LANE --then-lane X` runs after itself in its own process, boxed runs only:
# pathfilter's head pass is the freeze lane's, taken from memory, and the properties
# lane follows (issue 19: nox's gate spares each a process, as `gate` runs all in one).
THEN_LANES: dict[str, tuple[str, ...]] = {"pathfilter": ("freeze", "properties")}


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-12-01") from None


def _share(text: str) -> tuple[Path, str]:
    path, sep, digest = text.rpartition("=")
    if not sep or len(digest) != 64:
        raise argparse.ArgumentTypeError(f"{text!r} is not FILE=SHA256")
    return Path(path), digest


def _expectation(text: str) -> tuple[str, str]:
    lane, sep, digest = text.partition("=")
    if not sep or len(digest) != 64:
        raise argparse.ArgumentTypeError(f"{text!r} is not LANE=SHA256")
    return lane, digest


# The common options each command reads. Every lane command still accepts the
# others (nox hands one gate's arguments to every lane session), but its --help
# lists only what it uses (issue 19).
_ALL = frozenset({"repo", "base", "head", "reports", "today", "receipt", "isolation", "python"})
_LANE = frozenset({"repo", "base", "head", "reports", "isolation", "python"})
USES = {
    "gate": _ALL,
    "pathfilter": _LANE,
    "fixtures": _LANE,
    "freeze": _LANE | {"today"},
    "properties": _LANE,
    "replay": _LANE | {"receipt"},
    # The receipt and isolation are the replay and fixtures lanes' when --with-lane runs them.
    "verdict": frozenset({"repo", "base", "head", "reports", "receipt", "isolation"}),
    "flakes": frozenset({"repo", "head", "reports", "today", "isolation", "python"}),
    "audit-judge": frozenset({"repo", "base", "head"}),
}
_BAD = "2  bad usage or a bad judge file (one line naming the file, the key and the fix)"
_VERDICT_CODES = ("0  accept_for_review", "1  reject", "3  undecided", _BAD)
_LANE_CODES = ("0  the lane passed or is not applicable", "1  it failed", "3  undecided", _BAD)
EXIT_CODES: dict[str, tuple[str, ...]] = {
    "gate": _VERDICT_CODES,
    "verdict": _VERDICT_CODES,
    **dict.fromkeys(LANE_COMMANDS, _LANE_CODES),
    "lock": ("0  the lock was rewritten (what changed is printed)", _BAD),
    "init": (
        "0  the judge was written; its starter and the visible suite passed at this commit",
        "1  the visible suite (nothing written) or the starter failed at this commit: a red start",
        "2  bad usage, a file in the way, or a patchjudge spec that does not install here",
    ),
    "demo": ("0  the demo ran", "2  bad usage"),
    "flakes": (
        "0  the evidence was written (flakes never gates)",
        "1  the run cannot be believed",
        _BAD,
    ),
    "audit-judge": (
        "0  nothing to flag (graduations are review: lines)",
        "1  a change to the registry or the lock to flag",
        _BAD,
    ),
    "oracle": ("0  every property killed a mutant", "1  a property killed none", _BAD),
}


def epilog(name: str) -> str | None:
    codes = EXIT_CODES.get(name)
    return "exit codes:\n" + "\n".join(f"  {line}" for line in codes) if codes else None


def _common(uses: frozenset[str] = _ALL) -> argparse.ArgumentParser:
    def shown(name: str, text: str) -> str:
        return text if name in uses else argparse.SUPPRESS

    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--repo", type=Path, default=Path(), help=shown("repo", "the repository (default: .)")
    )
    p.add_argument(
        "--base",
        help=shown("base", "the branch the patch was made from (default: [gate] base)"),
    )
    p.add_argument(
        "--head", default="HEAD", help=shown("head", "the commit judged (default: HEAD)")
    )
    p.add_argument(
        "--reports", type=Path, help=shown("reports", "reports directory (default: .patchjudge/)")
    )
    p.add_argument(
        "--today",
        type=_date,
        help=shown("today", "the date freeze rows are judged on (default: UTC today)"),
    )
    p.add_argument(
        "--receipt", type=Path, help=shown("receipt", "a replay receipt from the trusted host")
    )
    p.add_argument("--run-id", default="", help=argparse.SUPPRESS)
    # nox's lanes hand results on (sharefile): FILE=SHA256 of an earlier lane, and this lane's.
    p.add_argument("--share-in", action="append", type=_share, default=[], help=argparse.SUPPRESS)
    p.add_argument("--share-out", type=Path, help=argparse.SUPPRESS)
    p.add_argument(
        "--python",
        help=shown(
            "python",
            "the interpreter of the venv the code under test runs in (default: the judge's)",
        ),
    )
    _isolation(p, "isolation" in uses)
    return p


def _sub(sub: argparse._SubParsersAction, name: str, **kwargs: object) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """A subcommand with its exit codes in --help and, for the lane-like ones, its options."""
    parents = [_common(USES[name])] if name in USES else []
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        parents=parents,
        epilog=epilog(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,  # type: ignore[arg-type]
    )
    return parser


def _isolation(p: argparse.ArgumentParser, shown: bool = True) -> None:
    p.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        help="how code from the patch runs; may tighten [gate] isolation, never loosen it"
        if shown
        else argparse.SUPPRESS,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="patchjudge",
        description="A deterministic merge gate for agent-written patches.",
        epilog="`patchjudge COMMAND --help` lists a command's options and exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"patchjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _sub(sub, "gate", help="every lane, then the verdict")
    for name in LANE_COMMANDS:
        lane_parser = _sub(sub, name, help=f"the {name} lane on its own")
        if name in THEN_LANES:
            lane_parser.add_argument(
                "--then-lane",
                action="append",
                choices=THEN_LANES[name],
                default=[],
                metavar="LANE",
                help="then run this lane in this process, a report each (a boxed run only:"
                f" isolation sandbox; {', '.join(THEN_LANES[name])})",
            )
    verdict = _sub(sub, "verdict", help="the verdict over reports on disk")
    verdict.add_argument(
        "--expect",
        action="append",
        type=_expectation,
        metavar="LANE=SHA256",
        help="the digest a lane printed for its report (implies --only-expected)",
    )
    verdict.add_argument(
        "--only-expected",
        action="store_true",
        help="count every lane without an --expect digest as missing",
    )
    verdict.add_argument(
        "--with-lane",
        action="append",
        choices=IN_VERDICT,
        default=[],
        metavar="LANE",
        help="run this lane here first and count the report this process made"
        f" (one that runs none of the patch's code: {', '.join(IN_VERDICT)})",
    )
    lock = _sub(sub, "lock", help="rewrite the fixture lock (a human-reviewed change)")
    lock.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    init = _sub(sub, "init", help="scaffold eval/, the runner, constraints/ and CI")
    init.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    init.add_argument(
        "--runner", choices=("nox", "tox"), default="nox", help="noxfile.py or tox.ini"
    )
    init.add_argument("--base", help="the ref patches are judged against (default: detected)")
    init.add_argument("--force", action="store_true", help="overwrite files init wrote before")
    init.add_argument(
        "--patchjudge-spec",
        help="what constraints/patchjudge.txt installs: a requirement, a wheel or a tree"
        " (default: where this patchjudge was installed from)",
    )
    init.add_argument(
        "--python",
        help="the interpreter of the venv the code under test runs in, for the suite's run"
        " here (default: the judge's)",
    )
    init.add_argument(
        "--no-suite-run",
        action="store_true",
        help="write [suite] run = false (your trusted CI runs the suite): neither init nor"
        " the gate runs it",
    )
    init.add_argument(
        "--allow-red-suite",
        action="store_true",
        help="adopt although the visible suite fails at this commit (its failures are"
        " printed: every patch is rejected until they pass or are frozen)",
    )
    demo = _sub(sub, "demo", help="typical agent patches against an example repository")
    demo.add_argument("--keep", type=Path, help="build the example here and keep it")
    _flakes_parsers(sub)
    _sub(sub, "audit-judge", help="check a change to the freeze registry and lock")
    _replay_steps(sub.choices["replay"])
    oracle = _sub(sub, "oracle", help="audit the properties against mutants of the code")
    oracle.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    oracle.add_argument("--base", default="HEAD", help="the revision audited (default: HEAD)")
    oracle.add_argument("--reports", type=Path, help="reports directory (default: .patchjudge/)")
    oracle.add_argument("--max-examples", type=int, help="per property (default: the ledger's)")
    oracle.add_argument("--limit", type=int, help="at most this many mutants per property file")
    oracle.add_argument(
        "--python",
        help="the interpreter of the venv the code under test runs in (default: the judge's)",
    )
    _isolation(oracle)
    return parser


def _replay_steps(replay: argparse.ArgumentParser) -> None:
    """`replay` alone is the lane; `replay slice|run|check` are its steps."""
    # A step's own defaults would overwrite `replay --base X slice`: argparse
    # copies every attribute of the step's namespace over the parent's.
    quiet = _common()
    for action in quiet._actions:
        action.default = argparse.SUPPRESS
    steps = replay.add_subparsers(dest="replay_step", metavar="[STEP]")
    steps.add_parser("slice", parents=[quiet], help="write DIR/replay-slice.txt, print its sha256")
    run = steps.add_parser("run", parents=[quiet], help="on the trusted host: run a slice")
    run.add_argument("--slice", type=Path, required=True, help="the replay-slice.txt to run")
    run.add_argument(
        "--host-role", default="trusted-ci", help="recorded in the receipt (default: trusted-ci)"
    )
    steps.add_parser("check", parents=[quiet], help="the replay lane with --receipt FILE")


def _flakes_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    flakes = _sub(sub, "flakes", help="run the visible suite N times: flakes.json, candidates")
    flakes.add_argument("--count", type=int, help="runs per node id (default: [flakes] count)")
    flakes.add_argument("--shard", default="1/1", help="run the I-th of N shares, e.g. 2/4")
    flakes.add_argument("--workers", help="xdist workers: auto or a number, 0 = off")
    flakes_sub = flakes.add_subparsers(dest="flakes_command", metavar="merge")
    # SUPPRESS: an option left out after `merge` must not reset one given before it.
    merge = flakes_sub.add_parser(
        "merge", help="sum shards of one run", argument_default=argparse.SUPPRESS
    )
    merge.add_argument("--repo", type=Path, help="the repository (default: .)")
    merge.add_argument("--reports", type=Path, help="where flakes.json goes")
    merge.add_argument("--today", type=_date, help="created date of the candidate rows")
    merge.add_argument("files", nargs="+", type=Path, metavar="FILE")


def options_from(args: argparse.Namespace) -> Options:
    from patchjudge.workspace import Options

    kwargs = {
        "repo": args.repo,
        "base": args.base,
        "head": args.head,
        "reports": args.reports,
        "receipt": args.receipt,
        "run_id": args.run_id,
        "isolation": args.isolation,
        "python": args.python,
        "share_in": tuple(args.share_in),
        "share_out": args.share_out,
    }
    if args.today is not None:
        kwargs["today"] = args.today
    return Options(**kwargs)


def dispatch(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.command == "gate":
        from patchjudge.commands.gate import gate

        return gate(options_from(args), out)
    if args.command == "replay" and getattr(args, "replay_step", None):
        from patchjudge.commands import replay

        if args.replay_step == "slice":
            return replay.slice_command(options_from(args), out)
        if args.replay_step == "run":
            return replay.run_command(options_from(args), args.slice, args.host_role, out)
        return replay.check_command(options_from(args), out)
    if args.command in LANE_COMMANDS:
        from patchjudge.commands.gate import lane

        return lane(
            args.command, options_from(args), out, then=tuple(getattr(args, "then_lane", ()))
        )
    if args.command == "verdict":
        from patchjudge.commands.gate import verdict

        expect = dict(args.expect or []) if args.expect or args.only_expected else None
        return verdict(options_from(args), out, expect, here=tuple(args.with_lane))
    if args.command == "lock":
        from patchjudge.commands.lock import lock

        return lock(args.repo, out)
    if args.command == "init":
        from patchjudge.commands.init import InitOptions, init

        return init(
            InitOptions(
                args.repo,
                args.runner,
                args.force,
                args.base,
                args.patchjudge_spec,
                args.python,
                args.no_suite_run,
                args.allow_red_suite,
            ),
            out,
        )
    if args.command == "demo":
        from patchjudge.commands.demo import demo

        return demo(out, keep=args.keep)
    if args.command == "flakes":
        from patchjudge.commands import flakes

        options = options_from(args)
        if getattr(args, "flakes_command", None) == "merge":
            return flakes.merge(
                repo=args.repo, files=args.files, reports=args.reports, today=options.today, out=out
            )
        return flakes.flakes(
            repo=args.repo,
            head=args.head,
            reports=args.reports,
            today=options.today,
            count=args.count,
            shard=args.shard,
            workers=args.workers,
            out=out,
            isolation=args.isolation,
            python=args.python,
        )
    if args.command == "audit-judge":
        from patchjudge.commands.audit import audit_judge

        if not args.base:
            raise PatchjudgeError("required", key="--base", fix="e.g. --base origin/main")
        return audit_judge(args.repo, args.base, args.head, out)
    if args.command == "oracle":
        from patchjudge.commands.oracle import OracleOptions, oracle_command

        opts = OracleOptions(
            args.repo,
            args.base,
            args.reports,
            args.max_examples,
            args.limit,
            args.isolation,
            args.python,
        )
        return oracle_command(opts, out, os.environ)
    raise AssertionError(f"unreachable: {args.command}")


def main(argv: Sequence[str] | None = None) -> int:
    # Paths that are not UTF-8 appear in reasons; printing one must not crash.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help is 0, bad usage is 2
        return int(exc.code or 0)
    try:
        return dispatch(args)
    except PatchjudgeError as exc:
        print(f"patchjudge: {exc.one_line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("PATCHJUDGE_DEBUG"):
            import traceback

            traceback.print_exc()
        name = type(exc).__name__
        print(
            f"patchjudge: internal error {name}: {exc} "
            "(a bug; PATCHJUDGE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 2
    finally:
        if "patchjudge.git" in sys.modules:  # a command that ran none has none to close
            from patchjudge import git

            git.close_all()  # the run's cat-file process: stdin closed, its exit awaited


if __name__ == "__main__":
    raise SystemExit(main())
