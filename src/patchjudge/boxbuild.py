"""Build a package's wheel in the sandbox: its build backend is the patch's code (issue 10).

`python -m patchjudge.boxbuild SRC OUTDIR [--ledger-isolation X] [--isolation Y]`
copies SRC (less `.git`, `.nox`, the reports, venvs and bytecode) to a
scratch tree, runs the PEP 517 backend its pyproject.toml names inside a box
that may write only that copy, its HOME and OUTDIR, and prints the wheel's
path. The nox sessions install that wheel with `--no-deps`: unpacking a wheel
runs no code, so nothing of the package's own runs outside the box.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from patchjudge import proc, sandbox
from patchjudge.errors import PatchjudgeError
from patchjudge.paths import is_bytecode

# What never goes into the copy: the checkout's history and tools, not the package.
_SKIP = {".git", ".nox", ".tox", ".patchjudge", ".venv", "venv", "build", "dist"}

# The smallest PEP 517 frontend, run inside the box with the venv's interpreter.
_FRONTEND = """
import importlib, os, sys, tomllib
tree, out = sys.argv[1], sys.argv[2]
os.chdir(tree)
try:
    with open("pyproject.toml", "rb") as f:
        system = tomllib.load(f).get("build-system", {})
except FileNotFoundError:
    system = {}
for path in reversed(system.get("backend-path", [])):
    sys.path.insert(0, os.path.join(tree, path))
name = system.get("build-backend", "setuptools.build_meta:__legacy__")
module, _, attr = name.partition(":")
backend = importlib.import_module(module)
for part in filter(None, attr.split(".")):
    backend = getattr(backend, part)
print(os.path.join(out, backend.build_wheel(out)))
"""


def copy_source(src: Path, dest: Path) -> Path:
    """SRC's files without the checkout around them; symlinks stay links."""
    top = str(src)

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = _SKIP if folder == top else set()
        return {n for n in names if n in skip or n == "__pycache__" or is_bytecode(n)}

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    return dest


def build_wheel(
    src: Path,
    outdir: Path,
    isolation: str,
    environ: Mapping[str, str] = os.environ,
    timeout: float = 600,
) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="patchjudge-build-") as tmp:
        scratch = Path(tmp)
        tree = copy_source(src, scratch / "tree")
        home = scratch / "home"
        (home / "tmp").mkdir(parents=True)
        env = {
            k: environ[k] for k in ("PATH", "LANG", "LC_ALL", "SOURCE_DATE_EPOCH") if k in environ
        }
        env.update(HOME=str(home), TMPDIR=str(home / "tmp"), PYTHONDONTWRITEBYTECODE="1")
        box = None
        if isolation == "sandbox":
            box = sandbox.Box(tree=tree, home=home, writable=(outdir.resolve(),))
        argv = [sys.executable, "-I", "-B", "--check-hash-based-pycs", "always"]
        argv += ["-c", _FRONTEND, str(tree), str(outdir.resolve())]
        done = proc.run(sandbox.wrap(box, argv), cwd=tree, env=env, timeout=timeout)
        if done.returncode != 0 or done.timed_out:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-2:]
            said = "timed out" if done.timed_out else f"exit {done.returncode}"
            raise PatchjudgeError(
                f"building {src} failed ({isolation}, {said}): {' / '.join(tail)}",
                key="[gate] install",
                fix="the package must build with its pinned backend, offline",
            )
        lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
        wheel = Path(lines[-1]) if lines else Path()
        if wheel.suffix != ".whl" or not wheel.is_file() or wheel.parent != outdir.resolve():
            raise PatchjudgeError(f"building {src} made no wheel in {outdir}", key="[gate] install")
        return wheel


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m patchjudge.boxbuild")
    parser.add_argument("src", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--ledger-isolation", default="auto", choices=sandbox.ISOLATIONS)
    parser.add_argument("--isolation", choices=sandbox.ISOLATIONS)
    args = parser.parse_args(argv)
    try:
        isolation = sandbox.resolve(args.ledger_isolation, args.isolation)
        print(build_wheel(args.src, args.outdir, isolation))
    except PatchjudgeError as exc:
        print(f"patchjudge: {exc.one_line()}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
