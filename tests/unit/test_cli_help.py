"""issue 19: each subcommand's --help lists the options it reads and its exit codes."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from patchjudge import cli

COMMON = {"repo", "base", "head", "reports", "today", "receipt", "isolation", "python"}


def _help(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main([*argv, "--help"]) == 0
    return out.getvalue()


def _listed(text: str) -> set[str]:
    return set(re.findall(r"^\s+--([a-z-]+)", text, re.MULTILINE)) - {"help"}


@pytest.mark.parametrize("command", sorted(cli.USES))
def test_a_command_lists_only_the_common_options_it_reads(command: str) -> None:
    listed = _listed(_help(command)) & COMMON
    assert listed == set(cli.USES[command])


@pytest.mark.parametrize(
    ("command", "hidden"),
    [
        ("pathfilter", {"today", "receipt"}),
        ("properties", {"today", "receipt"}),
        # --receipt and --isolation are the lanes' that `verdict --with-lane` runs.
        ("verdict", {"today"}),
        ("audit-judge", {"today", "receipt", "isolation", "reports"}),
        ("flakes", {"base", "receipt"}),
    ],
)
def test_options_a_command_ignores_are_not_listed(command: str, hidden: set[str]) -> None:
    assert not _listed(_help(command)) & hidden
    assert "--run-id" not in _help(command)


@pytest.mark.parametrize("command", [*sorted(cli.EXIT_CODES)])
def test_every_subcommand_help_ends_with_its_exit_codes(command: str) -> None:
    text = _help(command)
    codes = text[text.index("exit codes:") :].splitlines()[1:]
    assert [line.split()[0] for line in codes] == [c.split()[0] for c in cli.EXIT_CODES[command]]
    assert any(line.strip().startswith("2 ") for line in codes)


def test_every_subcommand_has_exit_codes() -> None:
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    assert set(sub.choices) == set(cli.EXIT_CODES)  # type: ignore[union-attr]


def test_an_option_it_ignores_is_still_accepted() -> None:
    """nox hands one gate's arguments to every lane session: a hidden option still parses."""
    args = cli.build_parser().parse_args(
        ["pathfilter", "--today", "2026-12-01", "--receipt", "r.json", "--base", "main"]
    )
    assert (str(args.today), str(args.receipt), args.base) == ("2026-12-01", "r.json", "main")
