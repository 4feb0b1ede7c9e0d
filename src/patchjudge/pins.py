"""What init pins: patchjudge as it was installed (PEP 610) and the project's build backend.

The parsers and renderers are pure; `resolve` and `judge_spec` ask pip (or uv)
and read the files a spec names, nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import re
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from patchjudge import proc
from patchjudge.errors import PatchjudgeError
from patchjudge.scaffold import build_requires

RESOLVE_TIMEOUT_S = 300
KEY = "--patchjudge-spec"
FIX = "pass --patchjudge-spec with a patchjudge wheel (uv build) or its source directory"


@dataclass(frozen=True)
class Pin:
    """One exact release with the sha256 of each file that may be installed."""

    name: str
    version: str
    hashes: tuple[str, ...]

    def line(self) -> str:
        head = f"{self.name}=={self.version}"
        return " \\\n    ".join([head, *(f"--hash=sha256:{h}" for h in sorted(self.hashes))])


@dataclass(frozen=True)
class JudgeSpec:
    """The line constraints/patchjudge.txt holds and what init knows about it."""

    kind: str  # index | wheel | directory | url | vcs | committed (a wheel under constraints/)
    requirement: str  # what pip reads: patchjudge==0.1.0, /abs/x.whl, /abs/dir, patchjudge @ URL
    hashes: tuple[str, ...] = ()
    # Why the line carries no hash, for the file's comment ("" when it does).
    no_hash: str = ""

    def text(self) -> str:
        return " \\\n    ".join([self.requirement, *(f"--hash=sha256:{h}" for h in self.hashes)])


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _sha256(archive: Mapping[str, Any]) -> tuple[str, ...]:
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        return (hashes["sha256"],)
    legacy = archive.get("hash")
    if isinstance(legacy, str) and legacy.startswith("sha256="):
        return (legacy.removeprefix("sha256="),)
    return ()


DIRECTORY_NO_HASH = (
    "a directory cannot carry a hash: pip and uv build it as they find it;"
    " for hash checking pass --patchjudge-spec a wheel"
)
VCS_NO_HASH = "a VCS checkout cannot carry a hash: the commit id pins it"


def from_direct_url(doc: Mapping[str, Any] | None, version: str) -> JudgeSpec:
    """Pure: patchjudge's direct_url.json (None: it came from an index) -> its spec.

    PEP 610: an install from an index records no direct_url.json; a local
    directory (editable or not) records dir_info; a file or URL archive_info;
    a VCS checkout vcs_info with the commit.
    """
    if doc is None:
        return JudgeSpec("index", f"patchjudge=={version}")
    url = doc.get("url")
    if not isinstance(url, str):
        raise PatchjudgeError(
            "patchjudge's direct_url.json has no url", file="direct_url.json", fix=FIX
        )
    parsed = urlparse(url)
    local = unquote(parsed.path) if parsed.scheme == "file" else None
    if isinstance(doc.get("dir_info"), dict) and local is not None:
        return JudgeSpec("directory", local, no_hash=DIRECTORY_NO_HASH)
    archive = doc.get("archive_info")
    if isinstance(archive, dict):
        if local is not None:
            return JudgeSpec("wheel", local, _sha256(archive))
        return JudgeSpec("url", f"patchjudge @ {url}", _sha256(archive))
    vcs = doc.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        commit = vcs.get("commit_id")
        pinned = f"{url}@{commit}" if isinstance(commit, str) else url
        return JudgeSpec("vcs", f"patchjudge @ {vcs['vcs']}+{pinned}", no_hash=VCS_NO_HASH)
    raise PatchjudgeError(
        f"cannot tell where patchjudge was installed from ({url})",
        file="direct_url.json",
        fix=FIX,
    )


def installed_direct_url() -> Mapping[str, Any] | None:
    """The running patchjudge's PEP 610 record, None when it came from an index."""
    from importlib import metadata

    try:
        text = metadata.distribution("patchjudge").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        text = None
    if text is None:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


# --- asking the installer ------------------------------------------------------


def installer() -> list[str] | None:
    """pip of this interpreter, else uv on PATH (a uv-made venv has no pip).

    Asked of the installed distributions, not the import system: setuptools'
    distutils hack answers `find_spec("pip")` with a warning on stderr, and
    init's errors are one line.
    """
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("pip")
        return [sys.executable, "-m", "pip"]
    beside = Path(sys.executable).with_name("uv")
    uv = str(beside) if beside.exists() else shutil.which("uv")
    return [uv] if uv else None


def pins_from_pip_report(report: Mapping[str, Any]) -> list[Pin]:
    """Pure: `pip install --dry-run --report` JSON -> what it would install, with hashes."""
    pins = []
    for item in report.get("install", []):
        meta, info = item.get("metadata", {}), item.get("download_info", {})
        archive = info.get("archive_info")
        hashes = _sha256(archive) if isinstance(archive, dict) else ()
        pins.append(Pin(_normal(meta.get("name", "")), str(meta.get("version", "")), hashes))
    return sorted(pins, key=lambda p: p.name)


_UV_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def pins_from_uv_compile(text: str) -> list[Pin]:
    """Pure: `uv pip compile --generate-hashes` output -> its pins."""
    pins: list[Pin] = []
    current: tuple[str, str] | None = None
    hashes: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.strip().rstrip("\\").strip()
        match = _UV_PIN.match(line)
        if match or not line.startswith("--hash="):
            if current is not None:
                pins.append(Pin(_normal(current[0]), current[1], tuple(hashes)))
            current, hashes = (match.group(1), match.group(2)) if match else None, []
        if line.startswith("--hash=sha256:"):
            hashes.append(line.removeprefix("--hash=sha256:"))
    return sorted(pins, key=lambda p: p.name)


def lane_versions(lane_txt: str) -> dict[str, str]:
    """Pure: name -> version of every pin in a requirements file (the lane runtime)."""
    found = {}
    for raw in lane_txt.splitlines():
        match = _UV_PIN.match(raw.strip())
        if match:
            found[_normal(match.group(1))] = match.group(2)
    return found


def resolve(
    requirements: Sequence[str],
    constraints: Mapping[str, str],
    *,
    no_deps: bool = False,
    tool: Sequence[str] | None = None,
) -> list[Pin]:
    """Exact pins with hashes for `requirements`, agreeing with `constraints`, for this
    interpreter: what the lanes' venvs will install. One line error when it cannot.

    `tool`: pip (`python -m pip`) or uv; default: `installer()`.
    """
    tool = list(tool) if tool is not None else installer()
    if tool is None:
        raise PatchjudgeError(
            "no pip or uv to pin requirements with",
            key="init",
            fix="install pip (python -m ensurepip) or uv, then run init again",
        )
    with tempfile.TemporaryDirectory(prefix="patchjudge-pins-") as tmp:
        req = Path(tmp, "requirements.in")
        req.write_text("".join(f"{r}\n" for r in requirements), encoding="utf-8")
        con = Path(tmp, "constraints.txt")
        con.write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())))
        deps = ["--no-deps"] if no_deps else []
        if tool[-1] == "pip":
            report = Path(tmp, "report.json")
            argv = [*tool, "install", "--dry-run", "--ignore-installed", "--quiet",
                    "--disable-pip-version-check", "--report", str(report), *deps,
                    "-c", str(con), "-r", str(req)]  # fmt: skip
        else:
            py = f"{sys.version_info.major}.{sys.version_info.minor}"
            argv = [*tool, "pip", "compile", "--quiet", "--generate-hashes", "--no-header",
                    "--python-version", py, *deps, "-c", str(con), str(req)]  # fmt: skip
        done = proc.run(argv, timeout=RESOLVE_TIMEOUT_S)
        if done.returncode != 0:
            said = _last_error(done.stderr.decode("utf-8", "replace"))
            raise PatchjudgeError(
                f"{', '.join(requirements)} does not resolve here ({said})",
                key=" ".join(tool[-1:]),
                fix="check the name, the version and the index you install from",
            )
        if tool[-1] == "pip":
            return pins_from_pip_report(json.loads(report.read_text(encoding="utf-8")))
        return pins_from_uv_compile(done.stdout.decode("utf-8", "replace"))


def _last_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # pip says "ERROR: ...", uv "error: ..." or a multiplication sign and "No solution found".
    marks = ("error", "\N{MULTIPLICATION SIGN}", "caused by")
    errors = [line for line in lines if line.lower().startswith(marks)]
    return (errors or lines or ["no output"])[-1][:300]


# --- patchjudge's own line -------------------------------------------------------


def _check_directory(path: Path) -> None:
    pyproject = path / "pyproject.toml"
    if not pyproject.is_file() and not (path / "setup.py").is_file():
        raise PatchjudgeError(f"{path} holds no pyproject.toml or setup.py", key=KEY, fix=FIX)
    if pyproject.is_file():
        try:
            name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
            name = name.get("name") if isinstance(name, dict) else None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            name = None
        if isinstance(name, str) and _normal(name) != "patchjudge":
            raise PatchjudgeError(f"{path} builds {name!r}, not patchjudge", key=KEY, fix=FIX)


def directory_build_requires(path: Path) -> tuple[str, ...]:
    """What builds patchjudge from a source directory (PEP 518), for build.txt."""
    pyproject = path / "pyproject.toml"
    try:
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8")) if pyproject.is_file() else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        doc = {}
    return build_requires(doc)


def checked(spec: JudgeSpec, constraints: Mapping[str, str]) -> JudgeSpec:
    """The spec once it is known to install here: a local file hashed, an index pin resolved.

    A spec that cannot install is exit 2 before init writes anything: a
    constraints/patchjudge.txt that names nothing installable fails every lane.
    """
    if spec.kind == "directory":
        path = Path(spec.requirement)
        if not path.is_dir():
            raise PatchjudgeError(f"{path} is not a directory", key=KEY, fix=FIX)
        _check_directory(path)
        return spec
    if spec.kind == "wheel":
        path = Path(spec.requirement)
        if not path.is_file():
            raise PatchjudgeError(f"{path} does not exist", key=KEY, fix=FIX)
        if not _normal(path.name.split("-", 1)[0]) == "patchjudge":
            raise PatchjudgeError(f"{path.name} is not a patchjudge archive", key=KEY, fix=FIX)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if spec.hashes and digest not in spec.hashes:
            raise PatchjudgeError(
                f"{path} changed since patchjudge was installed from it", key=KEY, fix=FIX
            )
        return JudgeSpec("wheel", str(path), (digest,))
    try:  # an index pin, a URL or a VCS checkout: ask the installer, as a lane's venv will
        (pin,) = resolve([spec.requirement], constraints, no_deps=True)
    except PatchjudgeError as exc:
        raise PatchjudgeError(
            exc.message, file="constraints/patchjudge.txt", key=KEY, fix=FIX
        ) from None
    except ValueError:
        raise PatchjudgeError(
            f"{spec.requirement} resolves to no single release", key=KEY, fix=FIX
        ) from None
    if pin.name != "patchjudge":
        raise PatchjudgeError(f"{spec.requirement} installs {pin.name}", key=KEY, fix=FIX)
    hashes = spec.hashes or pin.hashes
    no_hash = spec.no_hash or ("" if hashes else "the index served no sha256 for it")
    if spec.kind == "index":
        return JudgeSpec("index", f"patchjudge=={pin.version}", hashes, no_hash)
    return JudgeSpec(spec.kind, spec.requirement, hashes, no_hash)


# What a source tree's wheel is built from: never its venvs, VCS data or old builds.
_NOT_SOURCE = (".git", ".venv", ".nox", ".tox", "build", "dist", "*.egg-info", "__pycache__")


def wheel_from_directory(path: Path, dest: Path) -> Path:
    """patchjudge's wheel, built from a copy of its source tree (the tree itself untouched).

    A directory is a path on one machine: CI installs the wheel init commits
    under constraints/, never the directory (issue 19).
    """
    tree = dest / "source"
    shutil.copytree(path, tree, ignore=shutil.ignore_patterns(*_NOT_SOURCE), symlinks=True)
    beside = Path(sys.executable).with_name("uv")
    uv = str(beside) if beside.exists() else shutil.which("uv")
    out = dest / "wheel"
    if uv:
        argv = [uv, "build", "-q", "--wheel", "--out-dir", str(out), str(tree)]
    else:
        argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(tree)]
    done = proc.run(argv, timeout=RESOLVE_TIMEOUT_S)
    wheels = sorted(out.glob("patchjudge-*.whl")) if out.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        said = _last_error(done.stderr.decode("utf-8", "replace")) or f"exit {done.returncode}"
        raise PatchjudgeError(
            f"cannot build a patchjudge wheel from {path}: {said}", key=KEY, fix=FIX
        )
    return wheels[0]


def committed(wheel: JudgeSpec) -> tuple[JudgeSpec, str]:
    """Pure: a checked wheel -> the pin constraints/patchjudge.txt holds, and the wheel's name.

    The wheel is committed under constraints/ and the lanes install the pin
    with `--find-links constraints/`: the same bytes on any runner, by hash.
    """
    if wheel.kind != "wheel" or not wheel.hashes:
        raise AssertionError(f"not a checked wheel: {wheel}")
    name = Path(wheel.requirement).name
    parts = name.removesuffix(".whl").split("-")
    if not name.endswith(".whl") or len(parts) < 5:
        raise PatchjudgeError(f"{name} is not a wheel file name", key=KEY, fix=FIX)
    return JudgeSpec("committed", f"patchjudge=={parts[1]}", wheel.hashes), name


def parse_spec(text: str) -> JudgeSpec:
    """What --patchjudge-spec names: a wheel or sdist file, a source directory, a requirement."""
    if "\n" in text or not text.strip():
        raise PatchjudgeError("must be one requirement or path", key=KEY, fix=FIX)
    text = text.strip()
    if " @ " in text:  # PEP 508 direct reference: a URL or a VCS checkout
        scheme = text.split(" @ ", 1)[1].split("://", 1)[0]
        if "+" in scheme:
            return JudgeSpec("vcs", text, no_hash=VCS_NO_HASH)
        return JudgeSpec("url", text)
    candidate = Path(text).expanduser()
    if text.startswith((".", "/", "~")) or candidate.suffix == ".whl" or candidate.exists():
        if not candidate.exists():
            raise PatchjudgeError(f"{text!r} does not exist", key=KEY, fix=FIX)
        resolved = candidate.resolve()
        if resolved.is_dir():
            return JudgeSpec("directory", str(resolved), no_hash=DIRECTORY_NO_HASH)
        return JudgeSpec("wheel", str(resolved))
    return JudgeSpec("index", text)
