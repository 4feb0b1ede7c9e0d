"""The wheel and the sdist as a new user gets them: built, listed, installed, run."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pathspec
import pytest
import uv

import patchjudge
from patchjudge.git import no_git_env
from tests.helpers import built_once, shared_dir

ROOT = Path(__file__).resolve().parents[2]
UV = uv.find_uv_bin()

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        argv,
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=env or _clean_env(),
    )
    assert proc.returncode == 0, f"{argv} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _clean_env() -> dict[str, str]:
    # A fresh user shell: nothing of this venv or of a surrounding CI job leaks in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    # But no bytecode: these run this venv's python on this checkout's patchjudge, both of
    # which another test's process-isolated gate is guarding at the same time (a .pyc
    # written there reads as tampering: seen in a CI run).
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def source_files(root: Path) -> set[str]:
    """The project's files: what git tracks, or (an unpacked sdist) what .gitignore keeps."""
    if (root / ".git").exists():  # a checkout (or worktree), not a folder inside one
        tracked = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"],
            capture_output=True,
            check=True,
            env=no_git_env(os.environ),
        )
        names = tracked.stdout.decode().split("\0")
        return {n for n in names if n and (root / n).is_file()}
    ignore_file = root / ".gitignore"
    lines = ignore_file.read_text().splitlines() if ignore_file.exists() else []
    spec = pathspec.PathSpec.from_lines("gitignore", [*lines, ".git", ".git/"])
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not spec.match_file(p.relative_to(root).as_posix())
    }


def _build_dists(base: Path) -> Path:
    src = base / "src"
    for rel in source_files(ROOT):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    out = base / "out"
    env = _clean_env()
    env["PATH"] = f"{Path(UV).parent}{os.pathsep}{env.get('PATH', '')}"
    _run([sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(out), "."], src, env)
    return base


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(source copy, sdist, wheel), built like `python -m build` in a clean copy.

    A copy, because building writes egg-info and build/ into the source tree;
    the wheel is built from the sdist, so the sdist must be complete to build.
    Built once a run, by the first xdist worker that asks (issue 20): the tests only read.
    """
    base = built_once(shared_dir(tmp_path_factory), "patchjudge-dists", _build_dists)
    (sdist,) = (base / "out").glob("patchjudge-*.tar.gz")
    (wheel,) = (base / "out").glob("patchjudge-*.whl")
    return base / "src", sdist, wheel


def test_sdist_is_the_source_tree(dists: tuple[Path, Path, Path]) -> None:
    src, sdist, _ = dists
    with tarfile.open(sdist) as tar:
        prefix = f"patchjudge-{patchjudge.__version__}/"
        names = {m.name.removeprefix(prefix) for m in tar.getmembers() if m.isfile()}
    # Every file of the tree ships: the suite, eval/, constraints/, noxfile.py, docs/.
    missing = source_files(src) - names
    assert not missing, f"not in the sdist: {sorted(missing)}"
    for required in ("noxfile.py", "tests/helpers.py", "eval/gate.toml", "constraints/lane.txt"):
        assert required in names
    assert any(n.startswith("docs/") and n.endswith(".md") for n in names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_suite_shipped_in_the_sdist_collects(
    dists: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, sdist, _ = dists
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = tmp_path / f"patchjudge-{patchjudge.__version__}"
    out = _run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        unpacked,
    )
    # Its own pyproject (testpaths, strict markers) and every helper module came along.
    assert "tests/unit/test_schemas.py::" in out
    assert "eval/properties/test_verdict.py::" in out
    assert "error" not in out.lower().splitlines()[-1]


def test_wheel_holds_the_package_and_nothing_else(dists: tuple[Path, Path, Path]) -> None:
    src, _, wheel = dists
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"patchjudge-{patchjudge.__version__}.dist-info"
        metadata = email.message_from_bytes(zf.read(f"{info}/METADATA"))
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
    package = {
        f"patchjudge/{p.relative_to(src / 'src' / 'patchjudge').as_posix()}"
        for p in (src / "src" / "patchjudge").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert "patchjudge/py.typed" in package
    assert any(n.startswith("patchjudge/schemas/") for n in package)
    outside = {n for n in names if not n.startswith(f"{info}/")}
    assert outside == package
    assert "patchjudge = patchjudge.cli:main" in entry_points
    project = tomllib.loads((src / "pyproject.toml").read_text())["project"]
    assert metadata["Requires-Python"] == project["requires-python"]
    requires = metadata.get_all("Requires-Dist") or []
    runtime = [r for r in requires if "extra ==" not in r]
    assert sorted(runtime) == sorted(project["dependencies"])


def test_wheel_installs_into_a_fresh_venv_and_runs(
    dists: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, _, wheel = dists
    venv = tmp_path / "venv"
    _run([UV, "venv", "-q", "--python", sys.executable, str(venv)], tmp_path)
    python = venv / "bin" / "python"
    # Its dependencies come from the index, as for `pip install patchjudge`.
    _run([UV, "pip", "install", "-q", "--python", str(python), str(wheel)], tmp_path)

    out = _run([str(venv / "bin" / "patchjudge"), "--version"], tmp_path)
    assert out.strip() == f"patchjudge {patchjudge.__version__}"
    help_text = _run([str(python), "-m", "patchjudge", "--help"], tmp_path)
    for command in ("gate", "verdict", "lock", "pathfilter", "properties"):
        assert command in help_text
    located = _run(
        [
            str(python),
            "-I",
            "-c",
            "import importlib.resources as r, patchjudge; "
            "print(patchjudge.__file__); "
            "print(r.files('patchjudge').joinpath('py.typed').is_file()); "
            "print(sorted(p.name for p in r.files('patchjudge').joinpath('schemas').iterdir()))",
        ],
        tmp_path,
    ).splitlines()
    assert Path(located[0]).is_relative_to(venv), "imported from outside the fresh venv"
    assert located[1] == "True"
    assert located[2] == str(
        sorted(["flakes.json", "lane_report.json", "receipt.json", "verdict.json"])
    )
    # Typed (py.typed): strict mypy, run against the fresh venv, sees patchjudge's types.
    consumer = tmp_path / "consumer.py"
    consumer.write_text(
        "from patchjudge.cli import main\n"
        "from patchjudge.report import Decision\n\n"
        "code: int = main(['--version'])\n"
        "wrong: str = Decision.REJECT.exit_code\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
         str(python), str(consumer)],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert "import-untyped" not in proc.stdout, proc.stdout
    assert proc.stdout.count("error:") == 1, proc.stdout
    assert 'Incompatible types in assignment (expression has type "int"' in proc.stdout
