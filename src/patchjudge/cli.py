"""Command line: parse, dispatch, return an exit code. Nothing else lives here."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from patchjudge import __version__
from patchjudge.errors import PatchjudgeError
from patchjudge.workspace import Options

LANE_COMMANDS = ("pathfilter", "fixtures", "freeze", "properties", "replay")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-12-01") from None


def _common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--repo", type=Path, default=Path(), help="the repository (default: .)")
    p.add_argument("--base", help="the branch the patch was made from (default: [gate] base)")
    p.add_argument("--head", default="HEAD", help="the commit judged (default: HEAD)")
    p.add_argument("--reports", type=Path, help="reports directory (default: .patchjudge/)")
    p.add_argument(
        "--today", type=_date, help="the date freeze rows are judged on (default: UTC today)"
    )
    p.add_argument("--receipt", type=Path, help="a replay receipt from the trusted host")
    p.add_argument("--run-id", default="", help=argparse.SUPPRESS)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="patchjudge", description="A deterministic merge gate for agent-written patches."
    )
    parser.add_argument("--version", action="version", version=f"patchjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _common()
    sub.add_parser("gate", parents=[common], help="every lane, then the verdict")
    for name in LANE_COMMANDS:
        sub.add_parser(name, parents=[common], help=f"the {name} lane on its own")
    sub.add_parser("verdict", parents=[common], help="the verdict over reports on disk")
    lock = sub.add_parser("lock", help="rewrite the fixture lock (a human-reviewed change)")
    lock.add_argument("--repo", type=Path, default=Path())
    oracle = sub.add_parser("oracle", help="audit the properties against mutants of the code")
    oracle.add_argument("--repo", type=Path, default=Path())
    oracle.add_argument("--base", default="HEAD", help="the revision audited (default: HEAD)")
    oracle.add_argument("--reports", type=Path, help="reports directory (default: .patchjudge/)")
    oracle.add_argument("--max-examples", type=int, help="per property (default: the ledger's)")
    oracle.add_argument("--limit", type=int, help="at most this many mutants per property file")
    return parser


def options_from(args: argparse.Namespace) -> Options:
    kwargs = {
        "repo": args.repo,
        "base": args.base,
        "head": args.head,
        "reports": args.reports,
        "receipt": args.receipt,
        "run_id": args.run_id,
    }
    if args.today is not None:
        kwargs["today"] = args.today
    return Options(**kwargs)


def dispatch(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.command == "gate":
        from patchjudge.commands.gate import gate

        return gate(options_from(args), out)
    if args.command in LANE_COMMANDS:
        from patchjudge.commands.gate import lane

        return lane(args.command, options_from(args), out)
    if args.command == "verdict":
        from patchjudge.commands.gate import verdict

        return verdict(options_from(args), out)
    if args.command == "lock":
        from patchjudge.commands.lock import lock

        return lock(args.repo, out)
    if args.command == "oracle":
        from patchjudge.commands.oracle import OracleOptions, oracle_command

        opts = OracleOptions(args.repo, args.base, args.reports, args.max_examples, args.limit)
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
            traceback.print_exc()
        name = type(exc).__name__
        print(
            f"patchjudge: internal error {name}: {exc} "
            "(a bug; PATCHJUDGE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
