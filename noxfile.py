"""patchjudge's lanes as nox sessions, each in a fresh virtualenv pinned by constraints/.

`nox -s gate -- --base REF` runs every lane and then the verdict. The lanes a
gate depends on are twins of the public lane sessions that count a failing
lane as a finished session: the verdict, not nox, decides. nox counts a
skipped session as a success, so the verdict treats a missing report as a
failed lane, and every report of one gate run carries this run's id.
"""

from __future__ import annotations

import secrets
import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["gate"]

HERE = Path(__file__).resolve().parent
LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")
# One id per nox invocation: a report left over from an earlier run is stale.
RUN_ID = secrets.token_hex(8)


def _constraints(name: str) -> Path:
    own = HERE / "constraints" / f"{name}.txt"
    return own if own.exists() else HERE / "constraints" / "lane.txt"


def _install_judge(session: nox.Session, name: str) -> None:
    """Pinned runtime with hashes, then what `[gate] install` names, from this judge."""
    session.install("--require-hashes", "-r", str(_constraints(name)))
    ledger = tomllib.loads((HERE / "eval" / "gate.toml").read_text())
    for entry in ledger.get("gate", {}).get("install", ["."]):
        target = HERE / entry if not entry.startswith("-") else entry
        session.install("--no-deps", str(target))


def _patchjudge(session: nox.Session, *args: str, success_codes: list[int]) -> None:
    session.run(
        "patchjudge",
        *args,
        "--repo",
        session.invoked_from,
        "--run-id",
        RUN_ID,
        *session.posargs,
        success_codes=success_codes,
    )


def _lane(name: str, *, for_gate: bool) -> None:
    def session_fn(session: nox.Session) -> None:
        _install_judge(session, name)
        # For the gate, a failed or undecided lane is a finished lane: its report says so.
        _patchjudge(session, name, success_codes=[0, 1, 3] if for_gate else [0])

    session_fn.__doc__ = f"The {name} lane{' (for gate)' if for_gate else ''}."
    nox.session(name=f"gate-{name}" if for_gate else name, default=False)(session_fn)


for _name in LANES:
    _lane(_name, for_gate=False)
    _lane(_name, for_gate=True)


@nox.session(requires=[f"gate-{name}" for name in LANES])
def gate(session: nox.Session) -> None:
    """Every lane in its own venv, then the verdict over this run's reports."""
    _install_judge(session, "gate")
    _patchjudge(session, "verdict", success_codes=[0])


@nox.session(default=False, venv_backend="virtualenv")
def bench(session: nox.Session) -> None:
    """issue 7: the gate and its lanes against the bare commands; writes bench/RESULTS.md.

    virtualenv, not uv: the script needs pip to fetch the pinned sdist it runs on.
    """
    session.install("--require-hashes", "-r", str(HERE / "constraints" / "dev.txt"))
    session.install("--no-deps", str(HERE))
    session.run("python", str(HERE / "bench" / "run.py"), *session.posargs)
