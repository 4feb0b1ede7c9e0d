"""The base's collection, kept in the judge's cache by everything it depends on (issue 20).

pathfilter collects the visible suite at the merge base every run, yet the
base is the same commit run after run. What that collection can depend on is
the key: the base tree's listing (every path, mode and object id), the
ledger, the judge's ini and the plan's settings, the judge's own code, the
interpreter that runs it (path, version, what its site-packages hold; the
code's venv under `--python`), the hash seed and the environment variables
the tests are given. The head's collection is the patch's and never kept.

cache.py's rules hold: read and written only when boxed, outside the
checkout, a digest per entry. A run that timed out, did not finish, left a
process behind or shows tampering is not kept: it may not happen again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.machinery
import json
import os
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import patchjudge
from patchjudge import codeenv, git, proc, testrun
from patchjudge.paths import is_bytecode

KIND = "base-collection"
# Which ids the head skipped at run time ran at base (the freeze lane's question).
RAN_KIND = "base-ran"
# Scratch paths differ each run: kept as this marker, given back as the new scratch.
_SCRATCH = "\x00scratch\x00"
# What a collect-only run reports; a field beyond these is not a collection's.
_EMPTY_WHEN_COLLECTING = (
    "executed", "dunders", "requests", "mutants", "operations", "second", "second_stale",
)  # fmt: skip
_PACKAGING = (".dist-info", ".egg-info", ".egg-link", ".pth")


def _sha(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def key(
    *,
    entries: Iterable[git.TreeEntry],
    ledger_sha256: str,
    plan: testrun.Plan,
    judge: str,
    interpreter: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, str]:
    """Pure: the cache key of the base's collection under `plan` (its tree aside)."""
    settings = dataclasses.asdict(dataclasses.replace(plan, tree=Path()))
    return _key(
        entries=entries,
        ledger_sha256=ledger_sha256,
        settings={"plan": settings},
        judge=judge,
        interpreter=interpreter,
        environ=environ,
    )


def ran_key(
    *,
    entries: Iterable[git.TreeEntry],
    ledger_sha256: str,
    settings: Mapping[str, object],
    nodeids: Iterable[str],
    judge: str,
    interpreter: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, str]:
    """Pure: the key of which of `nodeids` ran (not skipped) at base under `settings`.

    The freeze lane asks it of the ids the head skipped at run time (issue 20:
    a pytest at base on nearly every gate). The same inputs as the base's
    collection, the settings of the run (its spec's fields) and the ids.
    """
    facts = {"spec": settings, "nodeids": sorted(set(nodeids))}
    return _key(
        entries=entries,
        ledger_sha256=ledger_sha256,
        settings=facts,
        judge=judge,
        interpreter=interpreter,
        environ=environ,
    )


def _key(
    *,
    entries: Iterable[git.TreeEntry],
    ledger_sha256: str,
    settings: Mapping[str, object],
    judge: str,
    interpreter: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, str]:
    passed = {k: environ.get(k, "") for k in (*testrun._PASS_ENV, "USER", "LOGNAME")}
    shown = {
        name: {k: str(v) for k, v in sorted(value.items())} if isinstance(value, Mapping) else value
        for name, value in settings.items()
    }
    return {
        "tree": _sha(sorted((e.path, e.mode, e.sha) for e in entries)),
        "ledger": ledger_sha256,
        "settings": _sha(
            {"ini": testrun._INI, **shown, "python_flags": list(proc.ISOLATED_PYTHON)}
        ),
        "judge": judge,
        **{f"python.{k}": v for k, v in sorted(interpreter.items())},
        "hash_seed": proc.HASH_SEED,
        "environ": _sha(passed),
    }


def encode_ran(ran: Iterable[str]) -> bytes:
    """Pure: the payload that keeps which ids ran at base."""
    return json.dumps({"ran": sorted(set(ran))}).encode()


def decode_ran(data: bytes | None) -> frozenset[str] | None:
    """Pure: the ids an entry says ran at base, or None when it holds no such list."""
    if data is None:
        return None
    try:
        doc = json.loads(data)
        ran = doc["ran"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if not isinstance(ran, list) or not all(isinstance(n, str) for n in ran):
        return None
    return frozenset(ran)


def encode(run: testrun.TestRun, paths: tuple[str, ...], scratch: Path) -> bytes | None:
    """Pure: the payload that keeps `run`, or None when the run is not worth keeping."""
    if run.timed_out or not run.started or not run.finished or run.escaped or run.garbled:
        return None
    # A tree that shadows a judge module does so every run (issue 19): kept; any other sign is not.
    if dataclasses.replace(run, shadowed=()).tampering():
        return None
    if any(getattr(run, f) for f in _EMPTY_WHEN_COLLECTING):
        return None
    doc = {"paths": list(paths), "run": dataclasses.asdict(run)}
    return json.dumps(doc, sort_keys=True).replace(str(scratch), _SCRATCH).encode()


def decode(data: bytes | None, scratch: Path) -> tuple[testrun.TestRun, tuple[str, ...]] | None:
    """Pure: the run and suite paths an entry keeps, its scratch paths made `scratch`'s."""
    if data is None:
        return None
    try:
        doc = json.loads(data.decode().replace(_SCRATCH, str(scratch)))
        fields: dict[str, Any] = dict(doc["run"])
        fields["markers"] = {k: tuple(v) for k, v in fields["markers"].items()}
        fields["shadowed"] = tuple(fields["shadowed"])
        fields["null_mutants"] = tuple(fields["null_mutants"])
        # A collection has no second harness (encode keeps none that has): never read one here.
        fields["second"], fields["second_stale"] = None, ()
        fields["outcomes"] = tuple(
            testrun.Outcome(**{**o, "falsifying": tuple(o["falsifying"])})
            for o in fields["outcomes"]
        )
        run = testrun.TestRun(**fields)
        paths = tuple(str(p) for p in doc["paths"])
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None
    return run, paths


@functools.cache
def judge_digest() -> str:
    """The judge's code (version, every module's bytes): its plugin decides `collected`."""
    root = Path(patchjudge.__file__).resolve().parent
    digest = hashlib.sha256(patchjudge.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _packaging(site: Iterable[Path]) -> list[str]:
    """What is installed where pytest imports from (`pytest-8.3.4.dist-info`: versions)."""
    found: list[str] = []
    for folder in dict.fromkeys(site):
        try:
            found += sorted(p.name for p in Path(folder).iterdir() if p.name.endswith(_PACKAGING))
        except OSError:
            found.append(f"{folder}: unreadable")
    return found


def shadowed(entries: Iterable[git.TreeEntry], pythonpath: Iterable[str]) -> frozenset[str]:
    """Pure: the top-level modules the base's tree gives its pythonpath, which a base run
    imports from the tree before any copy installed in the code's venv.

    A module (`X.py`) or a regular package (`X/__init__.py`) only: a directory
    without `__init__.py` is a namespace portion, and a regular package `X` in the
    code's venv, later on sys.path, wins over it (red team, session 12, third round:
    the head's installed `calc/__init__.py` ran in the base's collection, unkeyed).
    """
    names = set()
    for entry in entries:
        for root in pythonpath:
            prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
            if entry.path.startswith(prefix):
                parts = entry.path[len(prefix) :].split("/")
                if len(parts) == 1 and parts[0].endswith(".py"):
                    names.add(parts[0][:-3])
                elif len(parts) == 2 and parts[1] == "__init__.py":
                    names.add(parts[0])
    return frozenset(names)


def covered(entries: Iterable[git.TreeEntry], pythonpath: Iterable[str]) -> frozenset[str]:
    """Pure: every path the base's tree gives its pythonpath (files and the folders they
    are in, relative to their root), which a base run finds there before the code's venv.

    Red team, session 13 (redteam7): a base package that merges portions of its
    name (`pkgutil.extend_path`, `__path__ +=`) reaches the files of the installed
    package the tree does not have (`calc/_speedups.py`, an optional import): those
    are the head's, loaded by the base's runs, and belong in the key.
    """
    found: set[str] = set()
    roots = list(pythonpath)
    for entry in entries:
        for root in roots:
            prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
            if entry.path.startswith(prefix):
                parts = entry.path[len(prefix) :].split("/")
                found.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    return frozenset(found)


def _module(name: str) -> str | None:
    """Pure: the top-level module a site-packages entry named `name` is, if it is one
    (`X/`, `X.py`, `X.cpython-311-x86_64-linux-gnu.so`); a `.pth`, a `.dist-info` is not."""
    for suffix in (".py", *importlib.machinery.EXTENSION_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name if "." not in name else None


@functools.cache
def site_digest(
    site: tuple[Path, ...], shadowed: frozenset[str], covered: frozenset[str] = frozenset()
) -> str:
    """The bytes of the code's site-packages the base's runs can load, but the project's own.

    Red team, session 12 (second round): the head's wheel is installed there,
    and what the judge's pytest loads of it unasked (an entry point, a
    start-up file, bytecode, a module the runtime looks for, a copy of a
    runtime distribution under that distribution's name and version) ran in
    the base's runs, whose results were kept under the names and versions of
    `_packaging` alone and served to the next head. Left out: the modules the
    base's tree shadows (`shadowed`: the project's own package, which varies
    head by head) and each distribution's bookkeeping but its entry points
    (RECORD, direct_url.json name the head's files and wheel), and bytecode:
    pip compiles at install with the source's new mtime, and no wheel may
    bring any (boxbuild).
    Of a shadowed package, only what the base's tree covers (`covered`) is left
    out: a file or folder of it the tree lacks is reached by a base package that
    merges portions (red team, session 13, redteam7).
    """
    digest = hashlib.sha256()
    for folder in dict.fromkeys(site):
        try:
            tops = sorted(Path(folder).iterdir())
        except OSError:
            digest.update(f"{folder}: unreadable\0".encode())
            continue
        for top in tops:
            if top.name.endswith((".dist-info", ".egg-info")):
                files = [top / "entry_points.txt"]
            elif _module(top.name) in shadowed:
                # `X.pth` is not the module X: it runs at every start. The tree's copy of
                # each file wins; one it lacks is the installed package's, and reachable.
                files = [
                    p
                    for p in ([top, *sorted(top.rglob("*"))] if top.is_dir() else [top])
                    if p.relative_to(folder).as_posix() not in covered
                ]
            else:
                files = [top, *sorted(top.rglob("*"))] if top.is_dir() else [top]
            for path in files:
                if is_bytecode(str(path)):
                    continue  # compiled from the sources here, in an installer's own way
                digest.update(str(path.relative_to(folder)).encode("utf-8", "surrogateescape"))
                try:
                    if path.is_symlink():
                        digest.update(
                            b"\1" + str(path.readlink()).encode("utf-8", "surrogateescape")
                        )
                    elif path.is_file():
                        digest.update(b"\2" + path.read_bytes())
                except OSError:
                    digest.update(b"\3")
                digest.update(b"\0")
    return digest.hexdigest()


def interpreter(
    code: codeenv.CodeEnv,
    shadowed: frozenset[str] = frozenset(),
    covered: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """The interpreters the collection runs under: the judge's, and the code's (`--python`),
    the code's site-packages by what of its bytes a base run can load (`site_digest`)."""
    judge_site = [Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")]
    facts = {
        "judge": sys.executable,
        "judge_version": sys.version,
        "judge_site": _sha(_packaging(judge_site)),
        "code": code.python or "",
    }
    if code.python is not None:
        real = os.path.realpath(code.python)
        facts["code_real"] = real
        # A patch release installed over the same path: the binary itself changed.
        try:
            st = Path(real).stat()
            facts["code_binary"] = f"{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            facts["code_binary"] = "unreadable"
        # The venv's own answer gave its prefixes: a rebuilt venv keeps its path, not these.
        facts["code_prefixes"] = _sha([str(p) for p in code.binds])
        facts["code_site"] = _sha(_packaging(code.site))
        facts["code_bytes"] = site_digest(tuple(code.site), shadowed, covered)
    return facts
