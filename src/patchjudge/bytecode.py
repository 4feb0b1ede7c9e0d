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
"""

from __future__ import annotations

import argparse
import compileall
import py_compile
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
            ok &= bool(compileall.compile_dir(path, quiet=2, force=True, invalidation_mode=mode))
        else:
            ok &= bool(compileall.compile_file(path, quiet=2, force=True, invalidation_mode=mode))
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m patchjudge.bytecode", description=__doc__)
    p.add_argument("site", nargs="?", type=Path, help="site-packages (default: this venv's)")
    p.add_argument("--code", action="store_true", help="the code's venv: pytest's packages only")
    args = p.parse_args(argv)
    site = args.site or Path(sysconfig.get_paths()["purelib"])
    # A source that does not compile (a broken install) is still imported from
    # source, and fails there as it would have: not this step's to decide.
    compile_site(site, PYTEST if args.code else JUDGE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
