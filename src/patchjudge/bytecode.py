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
import hashlib
import importlib.util
import os
import py_compile
import re
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchjudge import cache

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


def sources(site: Path, packages: Iterable[str], files: Iterable[str] = PYGMENTS) -> list[Path]:
    """The `.py` files `compile_site` compiles, in a stable order."""
    found: list[Path] = []
    for target in targets(site, packages, files):
        if target.is_dir():
            found += (s for s in sorted(target.rglob("*.py")) if not UNIMPORTED.search(str(s)))
        else:
            found.append(target)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Tally:
    """What one compile did: from the cache, compiled here, failed to compile."""

    cached: int = 0
    compiled: int = 0
    failed: int = 0

    def line(self) -> str:
        done = f"{self.cached} from the cache, {self.compiled} compiled"
        return f"bytecode: {done}, {self.failed} failed"


def cache_key(source: bytes) -> cache.Key:
    """Pure but for the interpreter: what a `.pyc` of `source` depends on, besides its bytes."""
    return {
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "magic": importlib.util.MAGIC_NUMBER.hex(),
        "tag": str(sys.implementation.cache_tag),
        "optimize": str(sys.flags.optimize),
        "mode": "checked-hash",
    }


KIND = "pyc"


def _write(pyc: Path, data: bytes) -> None:
    """A new file replacing whatever was at `pyc` (a link's target is never written)."""
    pyc.parent.mkdir(exist_ok=True)
    pyc.unlink(missing_ok=True)  # a fresh venv has none: uv writes no bytecode
    with pyc.open("xb") as fh:
        fh.write(data)


def compile_files(files: Iterable[Path], directory: Path | None = None) -> Tally:
    """Hash-checked bytecode beside each of `files`: from the cache where it holds the very
    source's, else compiled here (and kept in the cache, when there is one)."""
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    cached = compiled = failed = 0
    for path in files:
        pyc = Path(importlib.util.cache_from_source(str(path)))
        try:
            source = path.read_bytes()
        except OSError:
            failed += 1
            continue
        key = cache_key(source)
        found = cache.read(directory, KIND, key)
        if found is not None and reusable(found, source):
            try:
                _write(pyc, found)
            except OSError:
                failed += 1
                continue
            cached += 1
            continue
        try:
            py_compile.compile(str(path), cfile=str(pyc), doraise=True, invalidation_mode=mode)
            written = pyc.read_bytes()
        except (py_compile.PyCompileError, OSError, ValueError, SyntaxError):
            failed += 1
            continue
        compiled += 1
        if reusable(written, source):
            cache.write(directory, KIND, key, written)
    return Tally(cached, compiled, failed)


def compile_site(
    site: Path,
    packages: Iterable[str],
    directory: Path | None = None,
    extra: Iterable[Path] = (),
) -> Tally:
    """Hash-checked bytecode for `packages` (and pytest's pygments, and `extra`) in `site`.

    A source that does not compile (a broken install) is counted as failed
    and left without bytecode: it is imported from source, and fails there
    as it would have.
    """
    return compile_files([*sources(site, packages), *extra], directory)


def pinned_names(requirements: str) -> list[str]:
    """Pure: the distribution names a hashed requirements file pins (`name==version \\`)."""
    names: list[str] = []
    for line in requirements.splitlines():
        text = line.split("#", 1)[0].strip()
        if not text or text.startswith("-") or line[:1].isspace():
            continue
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)
        if name:
            names.append(name.group(0))
    return names


def distribution_sources(site: Path | Sequence[Path], names: Iterable[str]) -> list[Path]:
    """The `.py` files the named distributions, and what they require, installed in `site`
    (or in any of several: init's noxfile keeps the lane runtime beside the judge's venv)."""
    import importlib.metadata  # only here: `--code` runs without it (email, zipfile)

    sites = [site] if isinstance(site, Path) else list(site)
    found: list[Path] = []
    todo, seen = list(names), set[str]()
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        where = [str(s) for s in sites]
        dist = next(iter(importlib.metadata.distributions(name=name, path=where)), None)
        if dist is None:
            continue
        # What it needs at run time (not an extra's): setuptools_scm's packaging.
        todo += (
            m.group(0)
            for r in dist.requires or ()
            if "extra" not in r.partition(";")[2]
            and (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r))
        )
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            inside = any(path.is_relative_to(s) for s in sites)
            if file.suffix == ".py" and inside and path.is_file():
                found.append(path)
    return sorted(found)


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


def cache_dir(
    repo: Path | None, ledger: str, asked: str | None, environ: Mapping[str, str]
) -> Path | None:
    """The judge's cache for this run: only where its lanes will box the patch's code."""
    if repo is None:
        return None
    # Only here: the code venv's step (`--code`) starts without the sandbox's imports.
    from patchjudge.boundary import sandbox
    from patchjudge.errors import PatchjudgeError

    wanted = asked if asked is not None else ledger
    # Only `auto` needs the probe (two interpreters and a box): with `sandbox`
    # every lane boxes the code or none runs it (nox's `isolation` session and
    # each lane stop first), so the cache is safe either way (issue 19, session 12).
    probed = sandbox.probe(environ) if wanted == "auto" else None
    try:
        isolation = sandbox.choose(ledger, asked, probed)
    except PatchjudgeError:
        return None  # the run stops before any lane: nothing to keep
    return cache.placement(environ, repo, str(isolation))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m patchjudge.bytecode", description=__doc__)
    p.add_argument("site", nargs="*", type=Path, help="site-packages (default: this venv's)")
    p.add_argument("--code", action="store_true", help="the code's venv: pytest's packages only")
    p.add_argument(
        "--from",
        dest="donor",
        type=Path,
        help="with --code: whose .pyc to take (default: this venv's)",
    )
    p.add_argument("--build", type=Path, help="constraints/build.txt: its backends too")
    p.add_argument("--cache-for", type=Path, help="the checkout: keep bytecode across runs")
    p.add_argument("--ledger-isolation", default="auto", help="[gate] isolation")
    p.add_argument("--isolation", help="--isolation as given to the lanes")
    args = p.parse_args(argv)
    own = Path(sysconfig.get_paths()["purelib"])
    sites: list[Path] = args.site or [own]
    site = sites[0]
    donor = args.donor or own
    if args.code and len(sites) > 1:
        p.error("--code takes one site-packages")
    if not args.code or site.resolve() == donor.resolve():
        directory = cache_dir(args.cache_for, args.ledger_isolation, args.isolation, os.environ)
        extra: list[Path] = []
        if args.build is not None and args.build.is_file():
            extra = distribution_sources(sites, pinned_names(args.build.read_text()))
        # Several sites (the judge's venv and the lane runtime): one set, one cache pass.
        found = [s for one in sites for s in sources(one, PYTEST if args.code else JUDGE)]
        print(compile_files(list(dict.fromkeys([*found, *extra])), directory).line())
        return 0
    mode = py_compile.PycInvalidationMode.CHECKED_HASH
    for source in copy_site(site, donor, PYTEST):
        compileall.compile_file(source, quiet=2, force=True, invalidation_mode=mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
