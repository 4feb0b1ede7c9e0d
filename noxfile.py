"""patchjudge's lanes as nox sessions, each in a fresh virtualenv pinned by constraints/.

`nox -s gate -- --base REF` runs every lane and then the verdict. The lanes a
gate depends on are twins of the public lane sessions that count a failing
lane as a finished session: the verdict, not nox, decides. nox counts a
skipped session as a success, so the verdict treats a missing report as a
failed lane, and every report of one gate run carries this run's id.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

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
# (tree, kind of venv) -> its wheel, built once per nox run and shared by the lanes.
WHEELS: dict[str, str] = {}


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
    """Before any venv is built: a `sandbox` that cannot start, or judge settings in
    this directory that are not the merge base's, stop the run here, in one line."""
    _sandbox_starts(session)
    _settings_are_the_bases(session)


# What this noxfile reads from its own directory to build the venvs, before any
# lane: the judge's settings, human-owned and protected. They must be the merge
# base's: run from a checkout of the head, the patch's `install = ["-e ."]` built
# outside the box and its constraints/ chose the judge venv's pins.
JUDGE_SETTINGS = ("eval/gate.toml", "constraints")
GIT_ENV = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.devnull, "GIT_TERMINAL_PROMPT": "0"}


def _git(repo: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, env=env, check=False)


def _merge_base(session: nox.Session) -> tuple[str, str]:
    """(the merge base's sha, "") of `--base` (else the CLI's default) and `--head`; ("", why)."""
    posargs = list(session.posargs)
    refs = {"--base": "", "--head": "HEAD"}
    for i, arg in enumerate(posargs):
        flag, eq, value = arg.partition("=")
        if flag in refs:
            refs[flag] = value if eq else (posargs[i + 1] if i + 1 < len(posargs) else "")
    repo = session.invoked_from
    base = refs["--base"]
    for candidate in ("origin/HEAD", "origin/main") if not base else ():
        ledger = _git(repo, "show", f"{candidate}:eval/gate.toml")
        if ledger.returncode == 0:  # as the CLI: the remote default branch names the base
            with contextlib.suppress(tomllib.TOMLDecodeError, UnicodeDecodeError):
                base = str(tomllib.loads(ledger.stdout.decode()).get("gate", {}).get("base", ""))
            break
    if not base:
        return "", "no --base given and no origin/main to read [gate] base from"
    if base.startswith("-") or refs["--head"].startswith("-"):
        return "", f"--base {base} --head {refs['--head']}: not a revision"
    found = _git(repo, "merge-base", "--", base, refs["--head"])
    if found.returncode != 0:
        return "", f"no merge base of {base} and {refs['--head']} in {repo}"
    return found.stdout.decode().strip(), ""


def _blob_id(path: Path, length: int) -> str:
    """git's object id of `path` as a blob (a symlink: its target), sha1 or sha256."""
    data = str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()
    digest = hashlib.sha1() if length == 40 else hashlib.sha256()
    digest.update(b"blob %d\0" % len(data) + data)
    return digest.hexdigest()


def _settings_are_the_bases(session: nox.Session) -> None:
    """The judge's settings here are the merge base's, byte for byte, and no file more."""
    sha, why = _merge_base(session)
    if not sha:
        session.error(f"{why}: cannot tell the judge's settings are the base's"
                      " (pass --base REF after --); no venv was built")  # fmt: skip
    listed = _git(session.invoked_from, "ls-tree", "-r", "-z", sha, "--", *JUDGE_SETTINGS)
    at_base: dict[str, str] = {}
    for entry in listed.stdout.decode(errors="surrogateescape").split("\0"):
        meta, _, name = entry.partition("\t")
        if name:
            at_base[name] = meta.split()[-1]
    here = {name for name in JUDGE_SETTINGS[:1] if (HERE / name).is_file()}
    for root, dirs, files in os.walk(HERE / JUDGE_SETTINGS[1]):
        # A directory linked in is a file here: its target is compared, not walked.
        files += [d for d in dirs if Path(root, d).is_symlink()]
        here |= {Path(root, f).relative_to(HERE).as_posix() for f in files}
    width = len(next(iter(at_base.values()), "0" * 40))
    differ = sorted(
        name for name in here | set(at_base)
        if name not in here or name not in at_base
        or _blob_id(HERE / name, width) != at_base[name]
    )  # fmt: skip
    if listed.returncode != 0 or differ:
        named = ", ".join(differ[:3]) + (f" and {len(differ) - 3} more" if differ[3:] else "")
        session.error(
            f"{named or ' '.join(JUDGE_SETTINGS)}: not the merge base {sha[:12]}'s in {HERE};"
            " the judge's settings come from the base: run the base's noxfile"
            " (nox -f <base worktree>/noxfile.py -- --base REF); no venv was built"
        )


def _sandbox_starts(session: nox.Session) -> None:
    """`sandbox` asked for and no box starts: the run stops, in one line."""
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


def _gate() -> dict[str, Any]:
    gate: dict[str, Any] = tomllib.loads((HERE / "eval" / "gate.toml").read_text()).get("gate", {})
    return gate


def _judge_tree(entries: list[str]) -> Path | None:
    """patchjudge's own source: this tree, or the patchjudge tree `[gate] install` names."""
    for root in (HERE, *(HERE / e for e in entries if not e.startswith("-"))):
        if (root / "src" / "patchjudge" / "boxbuild.py").is_file():
            return root
    return None


def _wheel(session: nox.Session, entry: Path, into: str) -> str:
    """The wheel of one tree, built in the box once per nox run and per kind of venv.

    Building runs the package's own backend: the patch's code when this tree
    is the head's. It runs in the sandbox (issue 10); only the wheel comes
    out, and installing a wheel runs nothing. `into`: the code's venv the
    wheel is checked against ("": the judge's own).
    """
    key = f"{entry}\0{bool(into)}"
    if key not in WHEELS:
        wheels = HERE / ".nox" / "_wheels" / RUN_ID / str(len(WHEELS))
        wheels.mkdir(parents=True, exist_ok=True)
        isolation = ["--ledger-isolation", str(_gate().get("isolation", "auto"))]
        isolation += _isolation_args(list(session.posargs))
        # Before patchjudge is installed, boxbuild comes from the judge's own source.
        judge = _judge_tree(_gate().get("install", ["."]))
        # -P: the working directory is the checkout, the patch's tree, and must not shadow
        # patchjudge (-m would put it first on sys.path).
        built = session.run(
            "python", "-P", "-m", "patchjudge.boxbuild", str(entry), str(wheels), *isolation,
            *(["--into", into] if into else []),
            env={"PYTHONPATH": str(judge / "src") if judge else ""}, silent=True,
        )  # fmt: skip
        lines = built.strip().splitlines() if isinstance(built, str) else []
        for line in lines[:-1]:  # what the build said (the version it was given)
            print(line, file=sys.stderr)
        WHEELS[key] = lines[-1] if lines else str(wheels)
    return WHEELS[key]


def _install_judge(session: nox.Session, name: str) -> None:
    """The judge's venv: its pinned runtime and patchjudge itself, never the project.

    The project `[gate] install` names goes into the code's venv (`_code_venv`):
    a project the judge depends on (patchjudge itself, here) must not replace
    the judge's copy (issue 19).
    """
    # Copies, not uv's hard links into its cache: a link's count moves whenever
    # another install on the machine links the same file, read as tampering.
    session.env["UV_LINK_MODE"] = "copy"
    # Built without isolation from a pinned backend: an isolated build would
    # fetch whatever setuptools the index serves, unhashed.
    build = ["-r", str(HERE / "constraints" / "build.txt")]
    session.install("--require-hashes", "-r", str(HERE / "constraints" / "lane.txt"), *build)
    judge = _judge_tree(_gate().get("install", ["."]))
    if judge is None:
        session.error(
            "eval/gate.toml [gate] install: names no patchjudge source tree"
            " (add the path of one; this noxfile installs the judge from it)"
        )
    session.install("--no-deps", _wheel(session, judge, ""))


def _code_venv(session: nox.Session, name: str) -> str:
    """The venv the code under test runs in, beside the judge's; its python (issue 19).

    The session's pins (what the visible suite imports: constraints/<name>.txt,
    else the lane runtime), then what `[gate] install` names, each built once
    per nox run in the box and installed with no deps. A patchjudge tree named
    from outside this checkout is the judge, not the code: it is not installed here.
    """
    venv = Path(session.create_tmp()).absolute() / "code"
    # create_tmp() also points TMPDIR into the checkout, where the lanes
    # refuse to make their scratch trees.
    session.env.pop("TMPDIR", None)
    python = venv / "bin" / "python"
    judges = str(Path(session.bin, "python"))  # the code runs on the judge's Python version
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv:
        session.run(uv, "venv", "-q", "--clear", "--python", judges, str(venv),
                    external=True, silent=True)  # fmt: skip
        install = [uv, "pip", "install", "-q", "--python", str(python)]
    else:
        session.run(judges, "-m", "venv", "--clear", str(venv), external=True, silent=True)
        install = [str(python), "-m", "pip", "install", "-q"]

    def into_code(*args: str) -> None:
        session.run(*install, *args, external=True, silent=True)

    entries = _gate().get("install", ["."])
    builds = any(e.startswith("-") for e in entries)
    build = ["-r", str(HERE / "constraints" / "build.txt")] if builds else []
    into_code("--require-hashes", "-r", str(_constraints(name)), *build)
    judge = _judge_tree(entries)
    for entry in entries:
        if entry.startswith("-"):
            into_code("--no-deps", "--no-build-isolation", entry)
        elif (HERE / entry).resolve() == HERE or (HERE / entry) != judge:
            into_code("--no-deps", _wheel(session, HERE / entry, str(python)))
    return str(python)


def _patchjudge(
    session: nox.Session, *args: str, success_codes: list[int], python: str = ""
) -> str:
    output = session.run(
        "patchjudge",
        *args,
        "--repo",
        session.invoked_from,
        "--run-id",
        RUN_ID,
        *(["--python", python] if python else []),
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
        # fixtures reads bytes and runs no code: it needs no code venv.
        python = "" if name == "fixtures" else _code_venv(session, name)
        # For the gate, a failed or undecided lane is a finished lane: its report says so.
        codes = [0, 1, 3] if for_gate else [0]
        output = _patchjudge(session, name, success_codes=codes, python=python)
        last = output.strip().splitlines()[-1] if output.strip() else ""
        if last.startswith("report: ") and " sha256=" in last:
            DIGESTS[name] = last.rsplit("sha256=", 1)[1]

    session_fn.__doc__ = f"The {name} lane{' (for gate)' if for_gate else ''}."
    # Every lane first asks `isolation`: a sandbox that cannot start fails the
    # run before nox builds a single venv (issue 19).
    nox.session(name=f"gate-{name}" if for_gate else name, default=False, requires=["isolation"])(
        session_fn
    )


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
    code = ["--python", _code_venv(session, "replay")]
    session.run("patchjudge", "replay", "run", "--repo", session.invoked_from, *code,
                *session.posargs)  # fmt: skip


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
    # The suite runs in the code's venv, as the gate's lanes run it.
    code = ["--python", _code_venv(session, "flakes")]
    # Not through _patchjudge: a 12x run streams its progress instead of holding it.
    session.run("patchjudge", "flakes", "--repo", session.invoked_from, *code, *session.posargs)


@nox.session(default=False, requires=["isolation"])
def oracle(session: nox.Session) -> None:
    """Audit the property tests against mutants of the code (when the judge changes)."""
    _install_judge(session, "oracle")
    code = ["--python", _code_venv(session, "oracle")]  # the properties run with it
    session.run("patchjudge", "oracle", "--repo", session.invoked_from, *code, *session.posargs)


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
