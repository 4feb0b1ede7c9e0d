"""The venv the code under test runs in (`--python`), kept apart from the judge's (issue 19).

A project the judge itself depends on (pluggy, iniconfig, pytest,
hypothesis) is judged like any other only where its build does not replace
the judge's copy: its wheel goes into this venv, the judge keeps its own.
Without `--python` the code runs with the judge's own interpreter, as before.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchjudge import proc
from patchjudge.boundary import sandbox
from patchjudge.errors import PatchjudgeError

_FIX = "the python of the venv the code under test runs in, e.g. .nox/code/bin/python"

# Asked with -I -S: nothing of the venv's site-packages runs to answer. Without
# site, sys.prefix is the base interpreter's: the venv is found as site.py
# finds it, by the pyvenv.cfg beside or above the interpreter.
#
# init's noxfile gives the code's venv the run's lane runtime (pytest, hypothesis)
# by one .pth, LANE_PTH (named in _ASK too), naming another venv's site-packages:
# read here, never run, and counted as the code's site (what is installed where
# the code imports from: the base collection's cache key, the flakes pins, the
# guard's roots). Only a venv's site-packages is taken, the patch may write the file.
LANE_PTH = "patchjudge-lane.pth"
_ASK = """
import ast, json, os, re, sys, sysconfig
here = os.path.dirname(sys.executable)
venv = next((d for d in (here, os.path.dirname(here))
             if os.path.isfile(os.path.join(d, "pyvenv.cfg"))), sys.prefix)
paths = sysconfig.get_paths(vars={"base": venv, "platbase": venv})
site = [paths["purelib"], paths["platlib"]]
def runtime(folder):
    try:
        with open(os.path.join(folder, "patchjudge-lane.pth"), encoding="utf-8") as f:
            line = re.fullmatch(r"import site; site[.]addsitedir[(](.+)[)]\\n?", f.read())
        path = ast.literal_eval(line.group(1)) if line else None
    except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
        return None
    if not (isinstance(path, str) and os.path.isabs(path) and os.path.isdir(path)):
        return None
    root = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    a_venvs = os.path.isfile(os.path.join(root, "pyvenv.cfg"))
    return os.path.normpath(path) if a_venvs and os.path.basename(path) == "site-packages" else None
site += [r for r in map(runtime, list(dict.fromkeys(site))) if r]
print(json.dumps({
    "prefixes": [venv, sys.base_prefix, sys.base_exec_prefix],
    "site": site,
    "scripts": paths["scripts"],
    "version": list(sys.version_info[:2]),
}))
"""


@dataclass(frozen=True)
class CodeEnv:
    """The interpreter that runs the code under test and what of it a box binds read-only."""

    python: str | None = None  # None: the judge's own interpreter
    binds: tuple[Path, ...] = ()  # its prefixes (the venv, the base interpreter)
    site: tuple[Path, ...] = ()  # its site-packages: where `[gate] install` goes
    scripts: Path | None = None

    @property
    def interpreter(self) -> str:
        return self.python or sys.executable


def _strs(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def from_answer(python: str, doc: Mapping[str, object]) -> CodeEnv:
    """Pure: the CodeEnv an interpreter's own answer to `_ASK` describes."""
    version = doc.get("version")
    numbers = tuple(v for v in version if isinstance(v, int)) if isinstance(version, list) else ()
    if numbers < (3, 11):
        raise PatchjudgeError(
            f"{python} is Python {'.'.join(map(str, numbers)) or '?'}, patchjudge needs 3.11+",
            key="--python",
            fix=_FIX,
        )
    prefixes = _strs(doc.get("prefixes"))
    # The interpreter's real home too, when the venv reaches it through a symlink;
    # a prefix of "/" (some container images) would bind the whole machine.
    roots = [Path(p) for p in [*prefixes, *(os.path.realpath(p) for p in prefixes)]]
    scripts = doc.get("scripts")
    return CodeEnv(
        python=python,
        binds=tuple(dict.fromkeys(r for r in roots if r != Path("/"))),
        site=tuple(dict.fromkeys(Path(p) for p in _strs(doc.get("site")))),
        scripts=Path(scripts) if isinstance(scripts, str) else None,
    )


def resolve(python: str | None, environ: Mapping[str, str] = os.environ) -> CodeEnv:
    """`--python` as given (None: the judge's interpreter), asked once what it is."""
    if not python:
        return CodeEnv()
    # Absolute, not resolved: a venv's bin/python is a symlink whose name makes the venv.
    path = Path(python).absolute()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise PatchjudgeError(
            f"{python} is not an executable interpreter", key="--python", fix=_FIX
        )
    env = {"PATH": environ.get("PATH", os.defpath)}
    done = proc.run([str(path), "-I", "-S", "-c", _ASK], cwd=Path("/"), env=env, timeout=60)
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        doc = None
    if done.returncode != 0 or not isinstance(doc, dict):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no answer"]
        raise PatchjudgeError(
            f"{python} did not say what it is: {said[0]}", key="--python", fix=_FIX
        )
    return from_answer(str(path), doc)


def search_path(code: CodeEnv) -> Sequence[str]:
    """Where `importlib.metadata` finds what is installed in the code's venv."""
    return [str(p) for p in code.site] if code.python else sys.path


def boxer(isolation: sandbox.Isolation, code: CodeEnv) -> sandbox.Boxer:
    """The run's Boxer with the code's venv bound read-only, as the judge's interpreter is."""
    plain = sandbox.boxer(isolation)

    def box(tree: Path, home: Path) -> sandbox.Box | None:
        found = plain(tree, home)
        if found is None or not code.binds:
            return found
        return dataclasses.replace(found, readonly=(*found.readonly, *code.binds))

    return box
