"""Build a package's wheel in the sandbox: its build backend is the patch's code (issue 10).

`python -m patchjudge.boxbuild SRC OUTDIR [--ledger-isolation X | --ledger GATE_TOML]
[--isolation Y] [--into PY [--install]]` copies SRC (less `.git`, `.nox`, the
reports, venvs and bytecode) to a
scratch tree, runs the PEP 517 backend its pyproject.toml names inside a box
that may write only that copy, its HOME and OUTDIR, and prints the wheel's
path. The nox sessions install that wheel with `--no-deps`: unpacking a wheel
runs no code, so nothing of the package's own runs outside the box. With
`--install` it installs the wheel itself into `--into`'s venv (pip, no deps, no
index): tox.ini cannot pass one command's output to the next.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import tomllib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

# importlib.metadata (and email with it), zipfile and configparser are imported where a
# wheel is built or read: every lane process of a project whose version file the backend
# writes imports this module for version_files/version_at alone (issue 19, ~0.05 CPU-s).
from patchjudge import codeenv, git, proc
from patchjudge.boundary import ISOLATIONS, sandbox
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
# The same frontend asking for the wheel's metadata only: what `pip install -e .`
# runs first, and where a backend writes its generated files (setuptools_scm's).
_METADATA = _FRONTEND.replace(
    "print(os.path.join(out, backend.build_wheel(out)))",
    "getattr(backend, 'prepare_metadata_for_build_wheel', backend.build_wheel)(out)",
)


def copy_source(src: Path, dest: Path) -> Path:
    """SRC's files without the checkout around them; symlinks stay links."""
    top = str(src)

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = _SKIP if folder == top else set()
        return {n for n in names if n in skip or n == "__pycache__" or is_bytecode(n)}

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    return dest


# Files that run when the judge's interpreter starts, whatever it imports: `site` imports
# sitecustomize in any form it finds, its bytecode alone or an extension module too.
_START_UP = re.compile(r"(?:[^/]+\.pth|(?:site|user)customize(?:[./].*)?)")
# Top-level modules the judge's pytest (the standard library, pytest, hypothesis, the
# plugin) imports when they are there and goes on without when not: a wheel that brings
# one runs in every pytest of the code's venv, the base's runs too (red team, session 12:
# hypothesis.internal.compat tries typing_extensions, the stdlib's copy tries Jython's
# org.python.core). tests/scenarios/test_boxbuild.py asks the pinned runtime which.
STACK_OPTIONAL = frozenset({"org", "typing_extensions"})
# The judge's own package: `-p patchjudge.pytest_plugin` is not installed in the code's venv.
_JUDGE_PACKAGES = frozenset({"patchjudge"})
# Entry point groups the judge's pytest reads: `-p NAME` takes a `pytest11` entry point
# named NAME before it imports the module NAME, autoload off or not; `import hypothesis`
# calls every `hypothesis` entry point.
HOOK_GROUPS = ("pytest11", "hypothesis")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_problems(
    members: Sequence[str],
    scripts: Collection[str],
    installed: Mapping[str, str],
    bin_names: Collection[str],
    judge: Collection[str],
    *,
    hooks: Collection[tuple[str, str]] = (),
    plugins: Mapping[str, str] | None = None,
) -> list[str]:
    """Pure: what installing this wheel into the judge's venv would do besides add a package.

    A wheel installs without running code, but its files land beside the
    judge's own: a top-level `.pth` or `sitecustomize` runs at every start of
    the judge's interpreter, a package named like an installed one replaces
    it (`_pytest/`, `patchjudge/`), a console script named `patchjudge`
    replaces the command nox runs, and `.data/` installs anywhere under the
    prefix. `installed` maps a top-level name to the distribution that owns
    it; `judge` names the distributions the judge runs on (patchjudge's
    requirements, pip, setuptools), which no wheel may replace. A wheel may
    replace an earlier build of itself (`nox -R`) and its own commands.

    Bytecode is refused as the tree's is (pathfilter): a `.pyc` whose header
    matches another module's source stands in for it.

    What the judge's pytest loads without the project importing it runs in
    every pytest of that venv, the base's collection and runs too, whose
    results the judge keeps for later runs: a module it imports if present
    (STACK_OPTIONAL), a `hypothesis` entry point, a `pytest11` entry point
    named like a plugin the judge or the ledger loads by `-p` (`hooks`:
    (group, name) pairs; `plugins`: the pytest11 names installed, each to its
    distribution). A plugin of the project's own name stays allowed.
    """
    infos = [m.partition("/")[0] for m in members if m.partition("/")[0].endswith(".dist-info")]
    dist = _canonical(infos[0][: -len(".dist-info")].rsplit("-", 1)[0]) if infos else ""
    problems = []
    tops: set[str] = set()  # the top-level modules it installs
    for member in members:
        parts = member.rstrip("/").split("/")  # a directory entry ends in "/"
        if member.startswith("/") or "\\" in member or {"", ".", ".."} & set(parts):
            # uv installs `./x.pth` as `x.pth` and `shop/../org/` as `org/`: every
            # check below reads the name as written (red team, session 12).
            problems.append(f"names a file the installer would move: {member}")
            continue
        top, _, rest = member.partition("/")
        if top.endswith(".dist-info"):
            continue
        path = member
        if top.endswith(".data"):
            kind, _, path = rest.partition("/")
            if kind not in ("purelib", "platlib"):
                problems.append(f"installs {kind} files outside its package: {member}")
                continue
            top = path.partition("/")[0]
        if _START_UP.fullmatch(path):
            problems.append(f"runs at every interpreter start: {member}")
        elif is_bytecode(path):
            # A timestamp .pyc in site-packages' __pycache__ runs in place of another
            # distribution's module (_hypothesis_pytestplugin.py): its mtime and size are
            # what the box can stat, and no hash is checked.
            problems.append(f"brings bytecode, which runs in place of a source: {member}")
        module = top[:-3] if top.endswith(".py") else top.split(".", 1)[0]
        tops.add(module)
        owner = installed.get(module)
        if owner is not None and owner != dist:
            problems.append(f"would replace {module}, installed by {owner}: {member}")
    for name in sorted(tops & STACK_OPTIONAL):
        if installed.get(name, "") != dist:
            problems.append(f"would be imported by the judge's pytest, which looks for {name}")
    for group, name in hooks:
        top = name.partition(".")[0]
        if group == "hypothesis":
            problems.append(f"runs at every import of hypothesis: entry point [{group}] {name}")
        elif group == "pytest11" and (
            top in _JUDGE_PACKAGES
            or installed.get(top, dist) != dist
            or (plugins or {}).get(name, dist) != dist
            or ("." in name and top not in tops)
        ):
            problems.append(f"stands in for the plugin `-p {name}` loads: entry point [{group}]")
    if dist in judge:
        problems.append(f"would replace {dist}, which the judge runs on")
    own = {n for n, owner in installed.items() if owner == dist}
    problems += [
        f"installs a command the venv has: {n}" for n in scripts if n in bin_names and n not in own
    ]
    return sorted(set(problems))


def _wheel_contents(wheel: Path) -> tuple[list[str], set[str], set[tuple[str, str]]]:
    """The wheel's file names, the commands its entry points would install and its
    entry points in the groups the judge's pytest reads (HOOK_GROUPS).

    Each entry_points.txt is read twice, as the installer's INI reader would
    and as importlib.metadata (what pytest and hypothesis ask) does, and what
    either sees counts: an indented `[pytest11]` line is a continuation of the
    value above it to configparser and a section of its own to importlib.
    """
    import configparser
    import importlib.metadata
    import zipfile

    with zipfile.ZipFile(wheel) as whl:
        members = whl.namelist()
        scripts: set[str] = set()
        hooks: set[tuple[str, str]] = set()
        for name in members:
            if name.count("/") == 1 and name.endswith(".dist-info/entry_points.txt"):
                points = configparser.ConfigParser(interpolation=None)
                points.optionxform = str  # type: ignore[assignment,method-assign]
                points.read_string(whl.read(name).decode("utf-8", "replace"))
                found = {(g, n) for g in points.sections() for n in points.options(g)}
                info = zipfile.Path(whl, name.partition("/")[0] + "/")
                metadata = importlib.metadata.PathDistribution(info)
                found |= {(point.group, point.name) for point in metadata.entry_points}
                for group, point_name in found:
                    if group in ("console_scripts", "gui_scripts"):
                        scripts |= {point_name, point_name.lower()}
                    elif group in HOOK_GROUPS:
                        hooks.add((group, point_name))
    return members, scripts, hooks


def _installed(
    code: codeenv.CodeEnv,
) -> tuple[dict[str, str], set[str], set[str], dict[str, str]]:
    """The venv the wheel goes into: top-level name (and command) -> owning distribution,
    its commands, the distributions the judge runs on (none in the code's own venv), and
    (for wheel_problems' `plugins`) each pytest11 entry point name -> its distribution."""
    import importlib.metadata

    owners: dict[str, str] = {}
    plugins: dict[str, str] = {}
    requires: dict[str, list[str]] = {}
    for found in importlib.metadata.distributions(path=list(codeenv.search_path(code))):
        dist = _canonical(found.metadata["Name"] or "")
        owners.setdefault(dist.replace("-", "_"), dist)
        for point in found.entry_points.select(group="pytest11"):
            plugins.setdefault(point.name, dist)
        for file in found.files or ():
            parts = file.parts
            if not parts or ".." in parts or parts[0].endswith(".dist-info"):
                continue
            top = parts[0]
            if len(parts) > 1 and parts[-2] in ("bin", "Scripts"):
                owners.setdefault(parts[-1], dist)  # a command it installed
            elif not top.endswith(".data"):
                owners.setdefault(top[:-3] if top.endswith(".py") else top, dist)
        requires[dist] = [  # what it needs to run, not its optional extras
            _canonical(re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0])
            for r in found.requires or ()
            if "extra ==" not in r.partition(";")[2]
        ]
    judge: set[str] = set()
    # The judge's own venv: no wheel may replace what the judge runs on. The code's
    # venv runs none of the judge (its plugin comes from the judge's package).
    todo = [] if code.python else ["patchjudge"]
    if todo:
        judge = {"pip", "setuptools", "wheel"}
    while todo:
        for need in requires.get(todo.pop(), []):
            if need not in judge:
                judge.add(need)
                todo.append(need)
    scripts = code.scripts or Path(sysconfig.get_path("scripts"))
    commands = {p.name for p in scripts.iterdir()} if scripts.is_dir() else set()
    return owners, commands, judge, plugins


# Build requirements whose version comes from the checkout's git history, which
# the box leaves out: setuptools_scm, and hatch-vcs and vcs-versioning built on it.
_SCM = {"setuptools-scm", "hatch-vcs", "vcs-versioning"}
PRETEND = "SETUPTOOLS_SCM_PRETEND_VERSION"


def uses_scm(doc: Mapping[str, object]) -> bool:
    """Pure: whether a parsed pyproject.toml takes its version from git (setuptools_scm)."""
    system = doc.get("build-system")
    requires = system.get("requires", []) if isinstance(system, dict) else []
    names = {_canonical(re.split(r"[\s;<>=!~\[(]", str(r), maxsplit=1)[0]) for r in requires}
    tool = doc.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    hatch = tool.get("hatch", {})
    version = hatch.get("version", {}) if isinstance(hatch, dict) else {}
    vcs = isinstance(version, dict) and version.get("source") == "vcs"
    return bool(names & _SCM) or "setuptools_scm" in tool or vcs


def scm_version(head: str, tag: str | None, distance: int) -> str:
    """Pure: the version setuptools_scm would give the head, from what git says of it.

    On a tag, the tag (less a leading `v`); past one, a post-release of it
    naming the commit; with no tag, setuptools_scm's own `0.1.devN+gSHA`.
    """
    short = head[:9]
    if tag is None:
        return f"0.1.dev{distance}+g{short}"
    base = tag[1:] if tag[:1] in ("v", "V") and tag[1:2].isdigit() else tag
    return base if distance == 0 else f"{base}.post{distance}+g{short}"


def _pretend_version(
    src: Path, environ: Mapping[str, str], repo: Path | None = None, rev: str = "HEAD"
) -> dict[str, str]:
    """SETUPTOOLS_SCM_PRETEND_VERSION for a project that needs its .git to build (issue 19).

    `repo` and `rev`: the checkout and commit `src` was made from, when `src` is a copy.
    """
    if PRETEND in environ:
        return {PRETEND: environ[PRETEND]}
    try:
        doc = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError):
        return {}
    found = version_at(doc, environ, repo or src, rev)
    return {} if found is None else {PRETEND: found}


def version_at(
    doc: Mapping[str, object], environ: Mapping[str, str], where: Path, rev: str
) -> str | None:
    """The version setuptools_scm would give `rev` of the checkout `where`, or None."""
    if PRETEND in environ:
        return environ[PRETEND]
    if not uses_scm(doc):
        return None
    try:
        head = git.git(where, "rev-parse", rev).decode().strip()
        found = git.git(where, "describe", "--tags", "--abbrev=0", rev, ok=(0, 128)).decode()
        tag = found.strip() or None
        span = f"{tag}..{rev}" if tag else rev
        distance = int(git.git(where, "rev-list", "--count", span).decode().strip())
    except (PatchjudgeError, ValueError, UnicodeError):
        return None
    return scm_version(head, tag, distance)


def build_wheel(
    src: Path,
    outdir: Path,
    isolation: str,
    *,
    environ: Mapping[str, str] = os.environ,
    timeout: float = 600,
    into: codeenv.CodeEnv | None = None,
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
        # The copy has no .git: the version setuptools_scm would read there, said once.
        pretend = _pretend_version(src, environ)
        if pretend:
            print(f"patchjudge: building {src} as version {pretend[PRETEND]} ({PRETEND})",
                  file=sys.stderr)  # fmt: skip
        env.update(pretend)
        box = None
        if isolation == "sandbox":
            box = sandbox.Box(tree=tree, home=home, writable=(outdir.resolve(),))
        argv = [sys.executable, "-I", "-B", "--check-hash-based-pycs", "always"]
        argv += ["-c", _FRONTEND, str(tree), str(outdir.resolve())]
        with sandbox.wrapped(box, argv) as (boxed, fds):
            done = proc.run(boxed, cwd=tree, env=env, timeout=timeout, pass_fds=fds)
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
        if (
            wheel.suffix != ".whl"
            or wheel.is_symlink()
            or not wheel.is_file()
            or wheel.parent != outdir.resolve()
        ):
            raise PatchjudgeError(f"building {src} made no wheel in {outdir}", key="[gate] install")
        import configparser
        import zipfile

        try:
            members, scripts, hooks = _wheel_contents(wheel)
        except (zipfile.BadZipFile, configparser.Error, UnicodeError) as exc:
            raise PatchjudgeError(
                f"building {src} made an unreadable wheel: {exc}", key="[gate] install"
            ) from None
        owners, commands, judge, plugins = _installed(into or codeenv.CodeEnv())
        problems = wheel_problems(
            members, scripts, owners, commands, judge, hooks=hooks, plugins=plugins
        )
        if problems:
            raise PatchjudgeError(
                f"the wheel built from {src} {problems[0]}"
                + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""),
                key="[gate] install",
                fix="a package may add its own modules and commands, never replace the judge's",
            )
        return wheel


def _ledger_isolation(path: Path) -> str:
    from patchjudge.config import parse_ledger

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PatchjudgeError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return parse_ledger(data, str(path)).gate.isolation


def install(wheel: Path, into: codeenv.CodeEnv) -> None:
    """The wheel into the code's venv: no deps, no index; unpacking it runs nothing of its own.

    By this interpreter's pip (`--python`, pip 22.3+): tox's code venv is made
    without pip (issue 20, its ensurepip was ~8 CPU-s of every run).
    """
    argv = [sys.executable, "-m", "pip", "--python", into.interpreter, "install", "-q"]
    argv += ["--no-deps", "--no-index", str(wheel)]
    done = proc.run(argv, cwd=wheel.parent, env=dict(os.environ), timeout=600)
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise PatchjudgeError(
            f"installing {wheel.name} into {into.interpreter} failed: {tail[0]}",
            key="--install",
            fix="run it with an interpreter that has pip 22.3 or later",
        )


def version_files(doc: Mapping[str, object]) -> tuple[str, ...]:
    """Pure: the files a parsed pyproject.toml says its build backend writes into the tree.

    setuptools_scm's `write_to` / `version_file`, hatch-vcs's `version-file`:
    git-ignored by design, so never in a tree made from git (issue 19).
    """
    tool = doc.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    scm = tool.get("setuptools_scm")
    found = [scm.get(k) for k in ("write_to", "version_file")] if isinstance(scm, dict) else []
    hatch = tool.get("hatch")
    hooks = hatch.get("build", {}).get("hooks", {}) if isinstance(hatch, dict) else {}
    vcs = hooks.get("vcs") if isinstance(hooks, dict) else None
    found += [vcs.get("version-file")] if isinstance(vcs, dict) else []
    return tuple(dict.fromkeys(f for f in found if isinstance(f, str) and f))


def generate(
    tree: Path,
    files: Sequence[str],
    isolation: str,
    *,
    repo: Path,
    rev: str,
    environ: Mapping[str, str] = os.environ,
    timeout: float = 600,
) -> dict[str, bytes]:
    """The generated `files` as the project's backend writes them into a copy of `tree`.

    The backend's metadata hook runs in the box, as a build does; only the
    named files come out (a regular file each), so it cannot add others.
    """
    with tempfile.TemporaryDirectory(prefix="patchjudge-gen-") as tmp:
        scratch = Path(tmp)
        copy = copy_source(tree, scratch / "tree")
        home, out = scratch / "home", scratch / "out"
        (home / "tmp").mkdir(parents=True)
        out.mkdir()
        env = {k: environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in environ}
        env.update(HOME=str(home), TMPDIR=str(home / "tmp"), PYTHONDONTWRITEBYTECODE="1")
        env.update(_pretend_version(copy, environ, repo, rev))
        box = None
        if isolation == "sandbox":
            box = sandbox.Box(tree=copy, home=home, writable=(out,))
        argv = [sys.executable, "-I", "-B", "-c", _METADATA, str(copy), str(out)]
        with sandbox.wrapped(box, argv) as (boxed, fds):
            done = proc.run(boxed, cwd=copy, env=env, timeout=timeout, pass_fds=fds)
        if done.returncode != 0 or done.timed_out:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            said = (
                "timed out" if done.timed_out else (tail[0] if tail else f"exit {done.returncode}")
            )
            raise PatchjudgeError(
                f"the build backend did not write {', '.join(files)}: {said}",
                file="pyproject.toml",
                fix="the backend must run with the pinned build requirements, offline",
            )
        made = {}
        for name in files:
            path = copy / name
            if path.is_file() and not path.is_symlink():
                made[name] = path.read_bytes()
        return made


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m patchjudge.boxbuild")
    parser.add_argument("src", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--ledger-isolation", default="auto", choices=ISOLATIONS)
    parser.add_argument(
        "--ledger", type=Path, metavar="GATE_TOML", help="read [gate] isolation from this ledger"
    )
    parser.add_argument("--isolation", choices=ISOLATIONS)
    parser.add_argument(
        "--into", metavar="PYTHON", help="the interpreter of the venv the wheel goes into"
    )
    parser.add_argument("--install", action="store_true", help="install it there (needs --into)")
    args = parser.parse_args(argv)
    try:
        ledger = args.ledger_isolation
        if args.ledger is not None:
            ledger = _ledger_isolation(args.ledger)
        isolation = sandbox.resolve(ledger, args.isolation)
        if args.install and not args.into:
            raise PatchjudgeError("needs --into", key="--install", fix="name the venv's python")
        into = codeenv.resolve(args.into)
        wheel = build_wheel(args.src, args.outdir, isolation, into=into)
        if args.install:
            install(wheel, into)
        print(wheel)
    except PatchjudgeError as exc:
        print(f"patchjudge: {exc.one_line()}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
