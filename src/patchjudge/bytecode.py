"""Bytecode for what the lanes import, written once into a venv nox builds for a run (issue 19).

uv installs no `.pyc`, and every lane process runs with bytecode writing off,
so without this each of a nox run's lane processes (and the processes they
start in the box) compiled pytest, hypothesis and patchjudge again: about a
second of CPU a lane. `python -P -m patchjudge.bytecode [--code] [SITE]`
compiles only the packages the lanes import, once, right after the venv is
built and before any code of the patch has run (a `.pyc` is code: it is
written here by the judge or not at all). The rest of a venv (setuptools,
the 4 MiB of pygments lexers) is imported by no lane and is left alone.

Hash-checked bytecode (PEP 552): the interpreter reads a `.pyc` only when the
source's bytes still hash to what it records, so bytecode never stands in
for a source that changed, whatever the timestamps say. Once written, the
judge's venv is read-only in the box and watched whole by the guard
outside it, `__pycache__` as much as the sources (guard.shared_site).

`--code SITE` (the code's venv, built from the same pinned wheels) takes the
judge's own `.pyc` of each source whose bytes it records, and compiles only
the rest: the code's venv is built after the judge's and before any of the
patch's code runs, so both are the judge's bytecode (issue 19, session 11:
pytest's compile was 0.8 CPU-s of every cold run).
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import py_compile
import re
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

# What pytest and its plugins import in the code's venv at start-up.
PYTEST = ("_pytest", "pytest", "pluggy", "iniconfig")
# What the judge's lane processes and their boxed workers import besides.
JUDGE = ("patchjudge", *PYTEST, "hypothesis", "sortedcontainers", "coverage", "pathspec", "rfc8785")
# pytest's terminal writer imports these at start-up; the rest of pygments
# (hundreds of lexers) only a highlighter asked for one would.
PYGMENTS = tuple(
    f"pygments/{m}.py"
    for m in (
        "__init__", "console", "filter", "formatter", "lexer", "modeline", "plugin", "regexopt",
        "token", "unistring", "util", "filters/__init__", "formatters/__init__",
        "formatters/_mapping", "formatters/terminal", "lexers/__init__", "lexers/_mapping",
        "lexers/diff", "lexers/python", "styles/__init__", "styles/_mapping",
    )
)  # fmt: skip

# Inside those packages, what no lane imports (strace of a cold nox run, session 11):
# hypothesis' extras for other libraries, patchjudge's commands other than the lanes'.
# Left out costs only a compile in memory, should a session import one after all.
UNIMPORTED = re.compile(
    r"/hypothesis/extra/(?!__init__\.py$|pytestplugin\.py$)"
    r"|/patchjudge/(commands/(audit|demo|init|lock|oracle)|scaffold|pins)\.py$"
)


def targets(site: Path, packages: Iterable[str], files: Iterable[str] = PYGMENTS) -> list[Path]:
    """The package directories, single-module packages and files of `site` to compile."""
    found: list[Path] = []
    for name in packages:
        for candidate in (site / name, site / f"{name}.py"):
            if candidate.is_dir() or candidate.is_file():
                found.append(candidate)
    found += [site / f for f in files if (site / f).is_file()]
    return found


def compile_site(site: Path, packages: Iterable[str]) -> bool:
    """Hash-checked bytecode for `packages` (and pytest's pygments) in `site`; False on an error."""
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    ok = True
    # force: compileall keeps a timestamp `.pyc` whose mtime matches (pip writes them at
    # install), whatever mode it is asked for; that one would outlive a re-dated source.
    for path in targets(site, packages):
        if path.is_dir():
            ok &= bool(
                compileall.compile_dir(
                    path, quiet=2, force=True, rx=UNIMPORTED, invalidation_mode=mode
                )
            )
        else:
            ok &= bool(compileall.compile_file(path, quiet=2, force=True, invalidation_mode=mode))
    return ok


# A pyc's header: magic, flags (PEP 552: bit 0 hash-based, bit 1 checked), source hash.
_CHECKED_HASH = (0b11).to_bytes(4, "little")


def reusable(pyc: bytes, source: bytes) -> bool:
    """Pure: whether `pyc` is this interpreter's hash-checked bytecode of exactly `source`."""
    header = importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(source)
    return len(pyc) > len(header) and pyc.startswith(header)


def copy_site(site: Path, donor: Path, packages: Iterable[str]) -> list[Path]:
    """The donor's `.pyc` of each of `packages`' sources in `site` it matches; the sources left.

    `donor` is a site-packages holding the same files (the judge's venv, made
    from the same wheels): the interpreter fixes a code object's file name
    at import, so a `.pyc` is the same wherever its source lies.
    """
    left: list[Path] = []
    for target in targets(site, packages):
        sources = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        for source in sources:
            pyc = Path(importlib.util.cache_from_source(str(source)))
            theirs = Path(importlib.util.cache_from_source(str(donor / source.relative_to(site))))
            try:
                data, code = theirs.read_bytes(), source.read_bytes()
            except OSError:
                left.append(source)
                continue
            if not reusable(data, code):
                left.append(source)
                continue
            pyc.parent.mkdir(exist_ok=True)
            pyc.write_bytes(data)
    return left


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m patchjudge.bytecode", description=__doc__)
    p.add_argument("site", nargs="?", type=Path, help="site-packages (default: this venv's)")
    p.add_argument("--code", action="store_true", help="the code's venv: pytest's packages only")
    p.add_argument(
        "--from",
        dest="donor",
        type=Path,
        help="with --code: whose .pyc to take (default: this venv's)",
    )
    args = p.parse_args(argv)
    own = Path(sysconfig.get_paths()["purelib"])
    site = args.site or own
    donor = args.donor or own
    # A source that does not compile (a broken install) is still imported from
    # source, and fails there as it would have: not this step's to decide.
    if not args.code or site.resolve() == donor.resolve():
        compile_site(site, PYTEST if args.code else JUDGE)
        return 0
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    for source in copy_site(site, donor, PYTEST):
        compileall.compile_file(source, quiet=2, force=True, invalidation_mode=mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
