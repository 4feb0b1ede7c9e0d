"""Every nox session installs only hash-pinned constraints/ files (or the project, --no-deps)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLERS = {"install", "run_install"}
RUNNERS = {"run", "run_always", "run_install"}


def recorded(noxfile: Path) -> dict[str, list[dict[str, Any]]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.nox_recorder", str(noxfile)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    sessions: dict[str, list[dict[str, Any]]] = json.loads(proc.stdout)
    return sessions


def _pip_install_args(argv: list[str]) -> list[str] | None:
    """The arguments after `install` when argv runs pip (or uv pip) install, else None."""
    words = [Path(a).name if i == 0 else a for i, a in enumerate(argv)]
    for prefix in (["pip", "install"], ["pip3", "install"], ["uv", "pip", "install"]):
        if words[: len(prefix)] == prefix:
            return argv[len(prefix) :]
    if re.fullmatch(r"python[0-9.]*", words[0] if words else "") and words[1:4] == [
        "-m",
        "pip",
        "install",
    ]:
        return argv[4:]
    return None


def install_problem(args: list[str], cwd: Path, root: Path) -> str | None:
    """Why installing `args` would take something not pinned in constraints/, or None.

    Allowed: `--require-hashes -r constraints/<name>.txt`, or `--no-deps` with
    local paths inside the project (what `[gate] install` names).
    """
    requirements, positional, flags = [], [], set()
    words = iter(args)
    for word in words:
        if word in ("-r", "--requirement"):
            requirements.append(next(words, ""))
        elif word.startswith("--requirement="):
            requirements.append(word.partition("=")[2])
        elif word in ("-e", "--editable"):
            positional.append(next(words, ""))
        elif word in ("--python", "-p"):  # `uv pip install --python VENV`: where, not what
            next(words, "")
        elif word.startswith("-"):
            flags.add(word.partition("=")[0])
        else:
            positional.append(word)
    constraints = (root / "constraints").resolve()
    if requirements:
        if "--require-hashes" not in flags:
            return "installs requirements without --require-hashes"
        for req in requirements:
            path = (cwd / req).resolve()
            if path.parent != constraints or path.suffix != ".txt" or not path.is_file():
                return f"installs {req!r}, which is not a constraints/*.txt file"
        if positional:
            return f"installs {positional} beside the pinned file"
        return None
    if not positional:
        return "installs nothing it names"
    if "--no-deps" not in flags:
        return f"installs {positional} and resolves their dependencies from the index"
    for target in positional:
        path = (cwd / target).resolve()
        if not path.exists() or not path.is_relative_to(root.resolve()):
            return f"installs {target!r} from the index (not a local path in the project)"
    return None


def problems(sessions: dict[str, list[dict[str, Any]]], root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, calls in sessions.items():
        for call in calls:
            method, args, cwd = call["method"], call["args"], Path(call["cwd"])
            pip_args = _pip_install_args(args) if method in RUNNERS else None
            if method == "install" or pip_args is not None:
                problem = install_problem(args if pip_args is None else pip_args, cwd, root)
            elif "install" in method and method not in INSTALLERS:
                problem = f"{method}() installs outside constraints/"
            else:
                problem = None
            if problem:
                found.setdefault(name, []).append(f"{method}{tuple(args)}: {problem}")
    return found


@pytest.fixture(scope="module")
def sessions() -> dict[str, list[dict[str, Any]]]:
    return recorded(ROOT / "noxfile.py")


def test_every_session_installs_only_from_constraints(
    sessions: dict[str, list[dict[str, Any]]],
) -> None:
    assert {"gate", "pathfilter", "gate-properties", "lock"} <= set(sessions)
    assert problems(sessions, ROOT) == {}


def test_every_installing_session_pins_with_exactly_one_constraints_file(
    sessions: dict[str, list[dict[str, Any]]],
) -> None:
    for name, calls in sessions.items():
        installs = [c["args"] for c in calls if c["method"] == "install"]
        if not installs:
            continue
        pinned = [a for a in installs if "--require-hashes" in a]
        assert len(pinned) == 1, f"{name}: {installs}"
        assert installs[0] == pinned[0], f"{name}: the pins go in before anything else"


BAD_SESSIONS = {
    "bare": 'session.install("requests")',
    "beside_pins": 'session.install("--require-hashes", "-r", "constraints/lane.txt", "requests")',
    "no_hashes": 'session.install("-r", "constraints/lane.txt")',
    "other_file": 'session.install("--require-hashes", "-r", "requirements.txt")',
    "no_deps_index": 'session.install("--no-deps", "requests")',
    "deps_of_project": 'session.install(".")',
    "pip_run": 'session.run("pip", "install", "requests")',
    "python_pip": 'session.run("python", "-m", "pip", "install", "requests")',
    "uv_pip": 'session.run("uv", "pip", "install", "requests", external=True)',
    "conda": 'session.conda_install("requests")',
    "script": 'session.install_and_run_script("tool.py")',
}


def test_the_check_fails_on_any_unpinned_install(tmp_path: Path) -> None:
    for rel in ("noxfile.py", "eval/gate.toml", "pyproject.toml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    shutil.copytree(ROOT / "constraints", tmp_path / "constraints")
    (tmp_path / "requirements.txt").write_text("requests\n")
    extra = "".join(
        f"\n\n@nox.session(default=False)\ndef bad_{name}(session):\n    {body}\n"
        for name, body in BAD_SESSIONS.items()
    )
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(noxfile.read_text() + extra)

    found = problems(recorded(noxfile), tmp_path)

    assert set(found) == {f"bad_{name}" for name in BAD_SESSIONS}


def _requirement_names(text: str) -> set[str]:
    names = set()
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


# ids by file name: a node id must not hold the checkout path (pathfilter compares them).
@pytest.mark.parametrize(
    "source", sorted((ROOT / "constraints").glob("*.in")), ids=lambda p: p.name
)
def test_every_in_file_compiles_to_hash_pinned_txt(source: Path) -> None:
    target = source.with_suffix(".txt")
    assert target.is_file(), f"run `nox -s lock`: {target.name} is missing"
    text = target.read_text()
    blocks = re.split(r"\n(?=\S)", text.strip())
    pinned = {}
    for block in blocks:
        if block.startswith("#"):
            continue
        first = block.splitlines()[0]
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^ ]+) \\", first)
        assert match, f"{target.name}: not an exact pin with hashes: {first!r}"
        assert "--hash=sha256:" in block, f"{target.name}: {match[1]} has no hash"
        pinned[match[1].lower().replace("_", "-")] = match[2]
    wanted = _requirement_names(source.read_text())
    for line in source.read_text().splitlines():
        if line.startswith("-r "):
            wanted |= _requirement_names((source.parent / line[3:].strip()).read_text())
    missing = wanted - set(pinned)
    assert not missing, f"{target.name} lacks {sorted(missing)}: run `nox -s lock`"


def test_every_txt_file_has_its_in_file() -> None:
    orphans = [
        p.name for p in (ROOT / "constraints").glob("*.txt") if not p.with_suffix(".in").is_file()
    ]
    assert orphans == [], "`nox -s lock` cannot regenerate these"


@pytest.mark.slow
def test_lock_reproduces_the_committed_constraints(
    sessions: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """What `nox -s lock` runs, replayed on a copy: the committed files are what it writes."""
    import uv

    shutil.copytree(ROOT / "constraints", tmp_path / "constraints")
    compiles = [c["args"] for c in sessions["lock"] if c["args"][:3] == ["uv", "pip", "compile"]]
    assert len(compiles) == len(list((ROOT / "constraints").glob("*.in")))
    for argv in compiles:
        proc = subprocess.run(
            [uv.find_uv_bin(), *argv[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
    for committed in sorted((ROOT / "constraints").glob("*.txt")):
        fresh = (tmp_path / "constraints" / committed.name).read_text()
        assert fresh == committed.read_text(), f"{committed.name} is stale: run `nox -s lock`"
