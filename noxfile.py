"""patchjudge's lanes as nox sessions, each in a fresh virtualenv pinned by constraints/.

`nox -s gate -- --base REF` runs every lane and then the verdict. The lanes a
gate depends on are twins of the public lane sessions that count a failing
lane as a finished session: the verdict, not nox, decides. nox counts a
skipped session as a success, so the verdict treats a missing report as a
failed lane, and every report of one gate run carries this run's id.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
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
# lane -> sha256 of the report it wrote, as it printed it. Held in nox's own
# memory, out of reach of the tested code, and checked by `verdict --expect`.
DIGESTS: dict[str, str] = {}


def _constraints(name: str) -> Path:
    own = HERE / "constraints" / f"{name}.txt"
    return own if own.exists() else HERE / "constraints" / "lane.txt"


def _isolation_args(posargs: list[str]) -> list[str]:
    """`--isolation X` as given to the session, for the build (it may only tighten)."""
    for i, arg in enumerate(posargs):
        if arg == "--isolation" and i + 1 < len(posargs):
            return ["--isolation", posargs[i + 1]]
        if arg.startswith("--isolation="):
            return [arg]
    return []


def _wanted_isolation(posargs: list[str]) -> tuple[str, str]:
    """(isolation asked for, who asked): `--isolation` may only tighten the ledger's."""
    gate = tomllib.loads((HERE / "eval" / "gate.toml").read_text()).get("gate", {})
    arg = _isolation_args(posargs)
    cli = arg[-1].removeprefix("--isolation=") if arg else ""
    if cli == "sandbox":
        return "sandbox", "--isolation"
    return str(gate.get("isolation", "auto")), "[gate] isolation"


@nox.session(name="isolation", venv_backend="none", default=False)
def isolation(session: nox.Session) -> None:
    """Before any venv is built: a `sandbox` that cannot start stops here, in one line."""
    wanted, asked = _wanted_isolation(list(session.posargs))
    if wanted != "sandbox":
        return  # `auto` that finds no sandbox says so itself, on stderr and in verdict.md
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        said = "bwrap is not on PATH"
    else:
        # The box the lanes use, reduced to what decides whether one can start.
        argv = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns"]
        argv += ["--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        done = subprocess.run(
            [*argv, "--", sys.executable, "-I", "-S", "-c", "pass"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            return
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        said = f"bwrap cannot start a sandbox here: {tail[0]}"
    session.error(
        f"{asked}: isolation 'sandbox' but {said} (install bubblewrap, or enable unprivileged"
        " user namespaces: docs/ci.md); no venv was built"
    )


def _boxbuild_root(entries: list[str]) -> str:
    """Where `patchjudge.boxbuild` comes from before patchjudge is installed: this
    judge's own tree, or the patchjudge tree it installs (never the venv: empty yet)."""
    for root in (HERE, *(HERE / e for e in entries if not e.startswith("-"))):
        if (root / "src" / "patchjudge" / "boxbuild.py").is_file():
            return str(root / "src")
    return ""


def _install_judge(session: nox.Session, name: str) -> None:
    """Pinned runtime with hashes, then what `[gate] install` names, from this judge."""
    gate = tomllib.loads((HERE / "eval" / "gate.toml").read_text()).get("gate", {})
    entries = gate.get("install", ["."])
    # The entries are built without isolation from a pinned backend: an
    # isolated build would fetch whatever setuptools the index serves, unhashed.
    build = ["-r", str(HERE / "constraints" / "build.txt")] if entries else []
    session.install("--require-hashes", "-r", str(_constraints(name)), *build)
    isolation = ["--ledger-isolation", gate.get("isolation", "auto")]
    isolation += _isolation_args(list(session.posargs))
    for i, entry in enumerate(entries):
        if entry.startswith("-"):
            session.install("--no-deps", "--no-build-isolation", entry)
            continue
        # Building runs the package's own backend: the patch's code when this
        # tree is the head's. It runs in the sandbox (issue 10); only the wheel
        # comes out, and installing a wheel runs nothing.
        wheels = Path(session.create_tmp()) / f"wheels-{i}"
        # create_tmp() also points the session's TMPDIR into the checkout,
        # where the lanes refuse to make their scratch trees.
        session.env.pop("TMPDIR", None)
        wheels.mkdir(parents=True, exist_ok=True)
        built = session.run(
            "python", "-m", "patchjudge.boxbuild", str(HERE / entry), str(wheels), *isolation,
            env={"PYTHONPATH": _boxbuild_root(entries)}, silent=True,
        )  # fmt: skip
        lines = built.strip().splitlines() if isinstance(built, str) else []
        session.install("--no-deps", lines[-1] if lines else str(wheels))


def _patchjudge(session: nox.Session, *args: str, success_codes: list[int]) -> str:
    output = session.run(
        "patchjudge",
        *args,
        "--repo",
        session.invoked_from,
        "--run-id",
        RUN_ID,
        *session.posargs,
        success_codes=success_codes,
        silent=True,
    )
    text = output if isinstance(output, str) else ""
    print(text, end="")
    return text


def _lane(name: str, *, for_gate: bool) -> None:
    def session_fn(session: nox.Session) -> None:
        _install_judge(session, name)
        # For the gate, a failed or undecided lane is a finished lane: its report says so.
        output = _patchjudge(session, name, success_codes=[0, 1, 3] if for_gate else [0])
        last = output.strip().splitlines()[-1] if output.strip() else ""
        if last.startswith("report: ") and " sha256=" in last:
            DIGESTS[name] = last.rsplit("sha256=", 1)[1]

    session_fn.__doc__ = f"The {name} lane{' (for gate)' if for_gate else ''}."
    # Every lane first asks `isolation`: a sandbox that cannot start fails the
    # run before nox builds a single venv (issue 19).
    nox.session(
        name=f"gate-{name}" if for_gate else name, default=False, requires=["isolation"]
    )(session_fn)


for _name in LANES:
    _lane(_name, for_gate=False)
    _lane(_name, for_gate=True)


@nox.session(requires=["isolation", *(f"gate-{name}" for name in LANES)])
def gate(session: nox.Session) -> None:
    """Every lane in its own venv, then the verdict over this run's reports."""
    _install_judge(session, "gate")
    # A lane nox skipped or that printed no digest is missing to the verdict.
    expect = [f"--expect={lane}={digest}" for lane, digest in sorted(DIGESTS.items())]
    _patchjudge(session, "verdict", "--only-expected", *expect, success_codes=[0])


# --- pinned environments ------------------------------------------------------
# Every constraints/<name>.in compiles to constraints/<name>.txt: exact pins with
# hashes, which the sessions install with --require-hashes (a session uses
# <session>.txt when there is one, else the lanes' shared lane.txt). uv keeps
# the current pins unless told otherwise: `nox -s lock -- --upgrade`, or
# `-- --upgrade-package pytest`.
LOCK_PYTHON = "3.11"


def _compile_argv(source: str, target: str) -> list[str]:
    return [
        "uv",
        "pip",
        "compile",
        "--quiet",
        "--generate-hashes",
        "--no-header",
        "--annotation-style",
        "line",
        "--python-version",
        LOCK_PYTHON,
        source,
        "--output-file",
        target,
    ]


@nox.session(default=False)
def lock(session: nox.Session) -> None:
    """Regenerate every constraints/*.txt from its .in: pinned, with hashes."""
    session.install("--require-hashes", "-r", str(_constraints("lock")))
    # Relative paths: the `# via -r constraints/x.in` comments must not name a machine.
    with session.chdir(HERE):
        for source in sorted((HERE / "constraints").glob("*.in")):
            target = source.with_suffix(".txt")
            argv = _compile_argv(f"constraints/{source.name}", f"constraints/{target.name}")
            session.run(*argv, *session.posargs)


@nox.session(default=False)
def demo(session: nox.Session) -> None:
    """Typical agent patches against an example repository, and the verdict table."""
    _install_judge(session, "demo")
    session.run("patchjudge", "demo", *session.posargs)


# --- replay (issue 4): the trusted host's run, and the verdict over its receipt ---
# CI runs both from the base's noxfile (`nox -f <base>/noxfile.py`), never the
# patch's: a patched noxfile could skip everything.


@nox.session(name="replay-run", default=False, requires=["isolation"])
def replay_run(session: nox.Session) -> None:
    """On the trusted host: -- --base REF --slice FILE; writes .patchjudge/receipt.json."""
    _install_judge(session, "replay")
    session.run("patchjudge", "replay", "run", "--repo", session.invoked_from, *session.posargs)


@nox.session(name="replay-verdict", default=False, requires=["isolation"])
def replay_verdict(session: nox.Session) -> None:
    """The local lanes' reports plus the receipt (-- --base REF [--receipt FILE]) -> verdict."""
    _install_judge(session, "gate")
    # The other lanes' reports come from the CI job that ran them, under its run
    # id; the replay lane (check, when --receipt is given) runs here, then the verdict.
    repo = ("--repo", session.invoked_from)
    session.run("patchjudge", "replay", *repo, *session.posargs, success_codes=[0, 1, 3])
    session.run("patchjudge", "verdict", *repo, *session.posargs)


@nox.session(default=False, requires=["isolation"])
def flakes(session: nox.Session) -> None:
    """Evidence: the visible suite N times (`nox -s flakes -- --count 12 [--shard 1/4]`)."""
    _install_judge(session, "flakes")
    # Not through _patchjudge: a 12x run streams its progress instead of holding it.
    session.run("patchjudge", "flakes", "--repo", session.invoked_from, *session.posargs)


@nox.session(default=False, requires=["isolation"])
def oracle(session: nox.Session) -> None:
    """Audit the property tests against mutants of the code (when the judge changes)."""
    _install_judge(session, "oracle")
    session.run("patchjudge", "oracle", "--repo", session.invoked_from, *session.posargs)


@nox.session(default=False, venv_backend="virtualenv")
def bench(session: nox.Session) -> None:
    """issue 7: the gate and its lanes against the bare commands; writes bench/RESULTS.md.

    virtualenv, not uv: the script needs pip to fetch the pinned sdist it runs on.
    """
    session.install("--require-hashes", "-r", str(HERE / "constraints" / "dev.txt"))
    session.install("--no-deps", str(HERE))
    session.run("python", str(HERE / "bench" / "run.py"), *session.posargs)


@nox.session(name="bench-cost", default=False, venv_backend="virtualenv")
def bench_cost(session: nox.Session) -> None:
    """issue 20's table: gate and flakes against the bare commands (`-- --runs 3`).

    Its own session, not `bench`'s: the figures take a loaded machine half an
    hour, and the sessions' install lines may change apart.
    """
    session.install("--require-hashes", "-r", str(HERE / "constraints" / "dev.txt"))
    session.install("--no-deps", str(HERE))
    args = list(session.posargs) or ["--runs", "3"]
    session.run("python", str(HERE / "bench" / "run.py"), "--only", "cost", *args)
