"""Pure: a repository's tracked paths -> its layout -> the judge files `patchjudge init` writes."""

from __future__ import annotations

import ast
import json
import re
import string
import sys
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from patchjudge.config import LEDGER, MapEntry, glob_problem
from patchjudge.errors import PatchjudgeError
from patchjudge.paths import first_match
from patchjudge.versionfile import table

RUNNERS = ("nox", "tox")
CODE_LANES = ("properties", "freeze")
PROPERTIES_DIR = "eval/properties"
STARTER = f"{PROPERTIES_DIR}/test_public_api.py"
FREEZE_REGISTRY = "eval/flakes.freeze.toml"
FIXTURE_LOCK = "eval/fixtures.lock.json"
GITHUB_WORKFLOW = ".github/workflows/patchjudge.yml"
# A GitLab project has one .gitlab-ci.yml, usually the team's own: the job goes
# beside it and the next steps say how to include it.
GITLAB_JOB = ".gitlab/ci/patchjudge.yml"
# Directory names that hold test data rather than tests (pytest folklore).
FIXTURE_DIRS = frozenset(
    {"fixtures", "data", "testdata", "test_data", "golden", "snapshots", "__snapshots__",
     "cassettes", "samples"}
)  # fmt: skip
SUITE_DIRS = ("tests", "test", "testing")
# Root files that change how the code builds or how its tests run.
BUILD_FILES = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in", "conftest.py", "pytest.ini",
     "tox.ini", "noxfile.py", "requirements.txt", "requirements-dev.txt", "requirements-test.txt"}
)  # fmt: skip
NOT_CODE = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"})
DOC_DIRS = ("docs", "doc", "documentation")
DOC_SUFFIXES = (".md", ".rst")
# Root files a reviewer reads but no lane could judge.
REVIEWED_FILES = frozenset(
    {".gitignore", ".gitattributes", ".editorconfig", ".mailmap", "LICENSE", "LICENSE.txt",
     "COPYING", "AUTHORS", "CHANGES", "CHANGELOG", "NEWS", "CODEOWNERS", "CITATION.cff"}
)  # fmt: skip


@dataclass(frozen=True)
class Layout:
    """What init found: where the code, the visible suite and its test data live."""

    src_layout: bool
    modules: tuple[str, ...]  # importable top-level names: packages and modules
    code_paths: tuple[str, ...]  # tracked paths that hold them ("src", "calc", "six.py")
    suite_paths: tuple[str, ...]
    fixture_roots: tuple[str, ...]
    installable: bool  # a pyproject.toml or setup.py: lanes install the project
    dependencies: tuple[str, ...]  # [project] dependencies, for constraints/project.txt
    # What builds the project (PEP 518 `[build-system] requires`): pinned in
    # constraints/build.txt so the lanes build it without build isolation.
    build_requires: tuple[str, ...] = ()
    # What the project's suite declares it needs beyond the code's own
    # dependencies (test extras, dependency groups, poetry's dev group): listed
    # in constraints/project.txt, where nothing installs them until pinned.
    test_requires: tuple[str, ...] = ()

    @property
    def pythonpath(self) -> tuple[str, ...]:
        return ("src",) if self.src_layout else (".",)


@dataclass(frozen=True)
class Options:
    base: str  # the ref patches are judged against: origin/main, main, ...
    runner: str  # nox | tox
    patchjudge_spec: str  # what constraints/patchjudge.txt installs (with its hashes)
    patchjudge_note: str = ""  # why that line carries no hash, when it cannot
    # constraints/build.txt: exact pins with hashes of what builds the project
    # (and patchjudge, from a source directory), rendered by pins.Pin.line.
    build_pins: tuple[str, ...] = ()
    # [gate] isolation, written explicitly (issue 19): "sandbox" where a box
    # started when init ran, else "auto" and the probe's reason.
    isolation: str = "sandbox"
    no_sandbox: str = ""  # why no box started when init ran ("" when one did)
    suite_run: bool = True  # [suite] run: false when the team's CI runs the suite


@dataclass(frozen=True)
class MapLine:
    pattern: str
    lanes: tuple[str, ...]
    group: str  # the comment heading the lines of one kind


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _nested(path: str, roots: Sequence[str]) -> bool:
    return any(path.startswith(r + "/") for r in roots if r != path)


def _outermost(paths: Sequence[str]) -> tuple[str, ...]:
    unique = sorted(set(paths))
    return tuple(p for p in unique if not _nested(p, unique))


def _dirs(tracked: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for path in tracked:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return found


def _pyproject(data: bytes | None) -> dict[str, object]:
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PatchjudgeError(
            f"not readable TOML ({exc})", file="pyproject.toml", fix="fix it, then run init again"
        ) from None


def _declared_testpaths(doc: Mapping[str, object], dirs: set[str], files: set[str]) -> list[str]:
    tool = doc.get("tool")
    pytest_cfg = tool.get("pytest", {}) if isinstance(tool, dict) else {}
    ini = pytest_cfg.get("ini_options", {}) if isinstance(pytest_cfg, dict) else {}
    raw = ini.get("testpaths", []) if isinstance(ini, dict) else []
    if not isinstance(raw, list):
        return []
    found = []
    for item in raw:
        if isinstance(item, str):
            path = item.strip().rstrip("/").removeprefix("./")
            if path in dirs or path in files:
                found.append(path)
    return found


def _suite_path(test_file: str) -> str:
    parts = test_file.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in SUITE_DIRS:
            return "/".join(parts[: i + 1])
    return parts[0]


def detect(tracked: Sequence[str], pyproject: bytes | None = None) -> Layout:
    """The layout of a repository from its tracked paths (and pyproject.toml, if any)."""
    # A path no glob can spell is left to the map's catch-all, never made a suite or a root.
    files = {p for p in tracked if not p.startswith("eval/") and all(map(_plain, p.split("/")))}
    dirs = _dirs(sorted(files))
    doc = _pyproject(pyproject)
    tests = sorted(p for p in files if is_test_file(p))
    suite = _declared_testpaths(doc, dirs, files)
    if not suite:
        suite = [_suite_path(p) for p in tests]
    if not tests or not suite:
        raise PatchjudgeError(
            "no pytest suite found (no tracked test_*.py or *_test.py outside eval/)",
            file=".",
            fix="commit the tests first; init needs a suite to judge against",
        )
    suite_paths = _outermost(suite)
    src_layout = any(p.startswith("src/") and p.endswith(".py") for p in files)
    modules: list[str] = []
    code_paths: list[str] = []
    if src_layout:
        code_paths.append("src")
        for p in sorted(files):
            parts = p.split("/")
            if (
                len(parts) < 2
                or parts[0] != "src"
                or not parts[1].removesuffix(".py").isidentifier()
            ):
                continue
            if len(parts) == 3 and parts[2] == "__init__.py":
                modules.append(parts[1])
            elif len(parts) == 2 and p.endswith(".py"):
                modules.append(parts[1].removesuffix(".py"))
    else:
        for p in sorted(files):
            parts = p.split("/")
            top = parts[0]
            # constraints/ is the judge's, whatever a __init__.py there says: protected, not code.
            if top in suite_paths or top in SUITE_DIRS or top in DOC_DIRS or top == "constraints":
                continue
            if len(parts) == 2 and parts[1] == "__init__.py" and top.isidentifier():
                modules.append(top)
                code_paths.append(top)
            elif (
                len(parts) == 1
                and p.endswith(".py")
                and p not in NOT_CODE
                and not is_test_file(p)
                and p.removesuffix(".py").isidentifier()
            ):
                modules.append(p.removesuffix(".py"))
                code_paths.append(p)
    roots = [
        d
        for d in dirs
        if d.rsplit("/", 1)[-1] in FIXTURE_DIRS and any(d == s or _nested(d, [s]) for s in suite)
    ]
    project = doc.get("project")
    deps = project.get("dependencies", []) if isinstance(project, dict) else []
    installable = "pyproject.toml" in files or "setup.py" in files
    return Layout(
        src_layout=src_layout,
        modules=tuple(dict.fromkeys(modules)),
        code_paths=tuple(code_paths),
        suite_paths=suite_paths,
        fixture_roots=_outermost(roots),
        installable=installable,
        dependencies=tuple(d for d in deps if isinstance(d, str)) if isinstance(deps, list) else (),
        build_requires=build_requires(doc) if installable else (),
        test_requires=suite_requires(doc),
    )


# The names projects give the requirements their suite runs with.
TEST_GROUPS = ("test", "tests", "testing", "dev")


def suite_requires(doc: Mapping[str, object]) -> tuple[str, ...]:
    """Pure: the test requirements a parsed pyproject.toml declares, as requirement strings.

    `[project.optional-dependencies]` and PEP 735 `[dependency-groups]` named
    test, tests, testing or dev, and poetry's `group.<those>.dependencies` and
    `dev-dependencies` (issue 19, held out: tomlkit's suite imports PyYAML,
    platformdirs's needs appdirs and pytest-mock; the judge's venv has neither).
    """
    found: list[str] = []
    for groups in (table(doc, "project", "optional-dependencies"), table(doc, "dependency-groups")):
        for name in TEST_GROUPS:
            items = groups.get(name)
            found += [d for d in items if isinstance(d, str)] if isinstance(items, list) else []
    poetry = table(doc, "tool", "poetry")
    tables = [table(doc, "tool", "poetry", "group", name, "dependencies") for name in TEST_GROUPS]
    for deps in [*tables, poetry.get("dev-dependencies")]:
        if isinstance(deps, Mapping):
            found += [str(name) for name in deps if name != "python"]
    return tuple(dict.fromkeys(found))


# PEP 517's fallback for a project without `[build-system]`: what pip and uv
# build a setup.py project with.
LEGACY_BUILD_REQUIRES = ("setuptools>=40.8.0",)


def build_requires(doc: Mapping[str, object]) -> tuple[str, ...]:
    """`[build-system] requires` of a parsed pyproject.toml, or PEP 517's fallback."""
    system = doc.get("build-system")
    if not isinstance(system, dict) or "requires" not in system:
        return LEGACY_BUILD_REQUIRES
    raw = system["requires"]
    if not isinstance(raw, list) or not all(isinstance(r, str) for r in raw):
        raise PatchjudgeError(
            "[build-system] requires must be a list of strings",
            file="pyproject.toml",
            key="build-system.requires",
            fix="fix it (PEP 518), then run init again",
        )
    return tuple(r.strip() for r in raw if r.strip())


def module_source(layout: Layout, module: str, tracked: Collection[str]) -> str | None:
    """The tracked file that defines `module`'s top level."""
    prefix = "src/" if layout.src_layout else ""
    for candidate in (f"{prefix}{module}/__init__.py", f"{prefix}{module}.py"):
        if candidate in tracked:
            return candidate
    return None


def _parse(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _own_import(node: ast.ImportFrom, own: Collection[str]) -> bool:
    # `from .core import load` re-exports; `from typing import Any` is incidental.
    return node.level > 0 or (node.module or "").split(".")[0] in own


def _declared(node: ast.Assign | ast.AugAssign) -> list[str] | None:
    value = node.value
    if not isinstance(value, ast.List | ast.Tuple):
        return None
    return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def public_names(
    source: bytes, own: Collection[str] = (), *, reexports: bool = True
) -> dict[str, bool]:
    """Public name -> is it a def or class, from the unconditional top level of a module.

    Only what every import defines: a name bound under `if`/`try` may not
    exist on this interpreter, and a property must hold at the base. `__all__`
    decides when the module declares it; a name it lists that no statement
    binds counts only when a star import may bind it. Names imported from
    another distribution are not the module's own API; `own` holds the
    project's top-level modules, whose names a module may re-export. Only a
    package's `__init__` or a top-level module re-exports (`reexports`): in
    any other module an import is a means, not API, unless `__all__` says so.
    """
    tree = _parse(source)
    if tree is None:
        return {}
    names: dict[str, bool] = {}
    imported: set[str] = set()  # every name an import binds: `__all__` may list any
    deleted: set[str] = set()
    declared: list[str] | None = None
    star = False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = True
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            star = star or any(alias.name == "*" for alias in node.names)
            bound = [alias.asname or alias.name for alias in node.names if alias.name != "*"]
            imported.update(bound)
            if reexports and _own_import(node, own):
                for name in bound:
                    names.setdefault(name, False)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__":
                        declared = _declared(node)
                    else:
                        names.setdefault(target.id, False)
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "__all__"
        ):
            declared = [*(declared or []), *(_declared(node) or [])]
        elif isinstance(node, ast.Delete):
            deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
    public = {n: c for n, c in names.items() if n not in deleted}
    if declared is not None:
        public = {**dict.fromkeys(imported - deleted, False), **public}
        return {n: public.get(n, False) for n in declared if n in public or star}
    return {n: c for n, c in public.items() if not n.startswith("_")}


# --- the public surface ---------------------------------------------------------


@dataclass(frozen=True)
class SourceModule:
    """A module of the project as the property will import it."""

    name: str  # dotted import name: pkg.sub.mod
    path: str  # the tracked file that defines it
    package: bool  # an __init__.py: relative imports start from the module itself


def _package_dir(layout: Layout, top: str) -> str:
    return f"src/{top}" if layout.src_layout else top


def submodules(layout: Layout, top: str, tracked: Collection[str]) -> list[SourceModule]:
    """The public modules under package `top`, its root aside, from the tracked paths.

    Public: every directory on the way is a package (has __init__.py) with a
    public name, and the module is neither private (`_x`), nor a test, nor a
    suite directory's: what a user of the package imports.
    """
    base = _package_dir(layout, top)
    tracked = set(tracked)
    found = []
    for path in sorted(tracked):
        if not path.startswith(base + "/") or not path.endswith(".py"):
            continue
        *dirs, file = path[len(base) + 1 :].split("/")
        if any(
            not d.isidentifier() or d.startswith("_") or d in SUITE_DIRS
            or "/".join([base, *dirs[: i + 1], "__init__.py"]) not in tracked
            for i, d in enumerate(dirs)
        ):  # fmt: skip
            continue
        stem = file.removesuffix(".py")
        if file == "__init__.py":
            if dirs:
                found.append(SourceModule(".".join([top, *dirs]), path, package=True))
        elif (
            stem.isidentifier()
            and not stem.startswith("_")
            and not is_test_file(path)
            and (file not in NOT_CODE)
        ):
            found.append(SourceModule(".".join([top, *dirs, stem]), path, package=False))
    return found


def _imported(module: SourceModule, tree: ast.Module) -> set[str]:
    """Absolute names of what the module imports unconditionally (and so runs)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                parts = module.name.split(".") if module.package else module.name.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                if not parts:  # beyond the top-level package: not importable anyway
                    names.add("")
                    continue
                base = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def self_contained(
    modules: Sequence[SourceModule],
    sources: Mapping[str, bytes],
    own: Collection[str],
    stdlib: Collection[str] = sys.stdlib_module_names,
) -> set[str]:
    """The modules that import nothing but the standard library and each other.

    A walked module that needs another distribution would fail the starter at
    the adoption commit wherever that distribution is not pinned, so the
    starter records only these. Importing a.b.c runs a and a.b first.
    """
    by_name = {m.name: m for m in modules}
    needs: dict[str, set[str]] = {}
    broken: set[str] = set()
    for m in modules:
        tree = _parse(sources.get(m.path, b""))
        if tree is None:
            broken.add(m.name)
            continue
        deps: set[str] = set()
        for name in _imported(m, tree):
            top = name.split(".")[0]
            if top not in own:
                if top not in stdlib:
                    broken.add(m.name)
                continue
            parts = name.split(".")
            deps.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        parts = m.name.split(".")
        deps.update(".".join(parts[: i + 1]) for i in range(len(parts) - 1))
        needs[m.name] = {d for d in deps if d in by_name and d != m.name}
    changed = True
    while changed:  # a module that runs a broken one is broken: to a fixed point
        changed = False
        for name, deps in needs.items():
            if name not in broken and deps & broken:
                broken.add(name)
                changed = True
    return {m.name for m in modules} - broken


def _absolute(module: str, package: bool, node: ast.ImportFrom) -> str | None:
    """The absolute module an `from X import y` reads, or None beyond the top level."""
    if not node.level:
        return node.module
    parts = module.split(".") if package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    if not parts:
        return None
    return ".".join([*parts, *([node.module] if node.module else [])])


def _module_path(layout: Layout, module: str, tracked: Collection[str]) -> tuple[str, bool] | None:
    """(tracked file, is a package) of an absolute module of the project."""
    stem = ("src/" if layout.src_layout else "") + module.replace(".", "/")
    for path, package in ((f"{stem}/__init__.py", True), (f"{stem}.py", False)):
        if path in tracked:
            return path, package
    return None


def _origin_defines(
    layout: Layout,
    module: str,
    name: str,
    tracked: Collection[str],
    sources: Mapping[str, bytes],
    *,
    depth: int = 0,
) -> bool:
    """Does `name`, as `module` binds it, come from a def or class (through re-exports)?"""
    found = _module_path(layout, module, tracked)
    tree = _parse(sources.get(found[0], b"")) if found is not None and depth < 8 else None
    if tree is None or found is None:
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if (alias.asname or alias.name) != name or alias.name == "*":
                    continue
                origin = _absolute(module, found[1], node)
                if origin is not None and origin.split(".")[0] in layout.modules:
                    return _origin_defines(
                        layout, origin, alias.name, tracked, sources, depth=depth + 1
                    )
    return False


def _resolve_reexports(
    layout: Layout,
    module: str,
    names: dict[str, bool],
    tracked: Collection[str],
    sources: Mapping[str, bytes],
) -> dict[str, bool]:
    """A class or function re-exported from another module of the project is callable too.

    `from .core import Thing` in a package's `__init__` records `Thing`; read
    alone, that import says nothing of what it is, and the starter then
    checked nothing about it (issue 19): follow it to its def or class.
    """
    return {n: c or _origin_defines(layout, module, n, tracked, sources) for n, c in names.items()}


def public_surface(
    layout: Layout,
    tracked: Collection[str],
    sources: Mapping[str, bytes],
    stdlib: Collection[str] = sys.stdlib_module_names,
) -> dict[str, dict[str, bool]]:
    """module -> public name -> callable, read from the source (never imported).

    A top-level module or a package whose root names its API is its own
    surface. A package whose root names nothing (empty, a docstring, a
    version) keeps its API in its submodules: those are walked instead.
    `stdlib`: the standard modules this interpreter has (a walked module that
    needs `msvcrt` or `fcntl` is left out where it cannot import).
    """
    own = set(layout.modules)
    api: dict[str, dict[str, bool]] = {}
    for top in layout.modules:
        root = module_source(layout, top, tracked)
        if root is None or top.startswith("_"):  # a private top level: no one imports it
            continue
        names = public_names(sources.get(root, b""), own)
        if names or not root.endswith("/__init__.py"):
            api[top] = _resolve_reexports(layout, top, names, tracked, sources)
            continue
        subs = submodules(layout, top, tracked)
        everything = [SourceModule(top, root, package=True), *subs]
        usable = self_contained(everything, sources, own, stdlib)
        for sub in subs:
            if sub.name in usable:
                found = public_names(sources.get(sub.path, b""), own, reexports=sub.package)
                if found:
                    api[sub.name] = _resolve_reexports(layout, sub.name, found, tracked, sources)
    return api


def surface_files(layout: Layout, tracked: Collection[str]) -> list[str]:
    """The tracked files public_surface reads: each package's modules, private ones too
    (a re-exported class may be defined in `_impl.py`)."""
    files = []
    for top in layout.modules:
        root = module_source(layout, top, tracked)
        if root is not None:
            files.append(root)
            if root.endswith("/__init__.py"):
                base = root.removesuffix("__init__.py")
                files += sorted(p for p in tracked if p.startswith(base) and p.endswith(".py"))
    return list(dict.fromkeys(files))


# --- the map ----------------------------------------------------------------


def judge_files(options: Options) -> tuple[str, ...]:
    runner = ("noxfile.py",) if options.runner == "nox" else ("tox.ini", "toxfile.py")
    return ("eval/**", *runner, "constraints/**", ".github/workflows/**", ".gitlab-ci.yml",
            ".gitlab/ci/**")  # fmt: skip


def _plain(name: str) -> bool:
    # A name that is its own glob: nothing pathspec would read as a wildcard.
    return not any(c in name for c in "*?[]!#\\\n") and name.strip() == name


def plan_map(layout: Layout, tracked: Sequence[str], options: Options) -> tuple[MapLine, ...]:
    """[map] lines, first match wins, that leave no tracked path unmapped."""
    lines: list[MapLine] = []

    def add(pattern: str, lanes: Sequence[str], group: str) -> None:
        if all(line.pattern != pattern for line in lines):
            lines.append(MapLine(pattern, tuple(lanes), group))

    judge = "the judge: protected, so pathfilter rejects any change to it"
    for pattern in judge_files(options):
        add(pattern, [], judge)
    for root in layout.fixture_roots:
        add(f"{root}/**", ["fixtures"], "test data: the fixture lock holds its bytes")
    code = "the code under test: the properties judge it, frozen tests rerun"
    for path in layout.code_paths:
        add(path if path.endswith(".py") else f"{path}/**", CODE_LANES, code)
    suite = "the visible suite: a change reruns the frozen tests it touches"
    for path in layout.suite_paths:
        add(path if path.endswith(".py") else f"{path}/**", ["freeze"], suite)
    top = sorted({p.split("/", 1)[0] for p in tracked})
    build = "how the code builds and how its tests run"
    for name in top:
        if name in BUILD_FILES and name not in judge_files(options):
            add(name, CODE_LANES, build)
    reviewed = "reviewed by a human, no lane needed"
    for name in top:
        if name in DOC_DIRS and any(p.startswith(name + "/") for p in tracked):
            add(f"{name}/**", [], reviewed)
    for suffix in DOC_SUFFIXES:
        if any(p.endswith(suffix) for p in tracked):
            add(f"*{suffix}", [], reviewed)
    for name in top:
        if name in REVIEWED_FILES:
            add(f"/{name}", [], reviewed)  # anchored: vendor/LICENSE is not reviewed text
    entries = [MapEntry(line.pattern, frozenset(line.lanes)) for line in lines]
    unknown = "not recognised by init: forces every test lane; narrow it once you know it"
    for path in sorted(tracked):
        if first_match(entries, path) is not None:
            continue
        name, _, rest = path.partition("/")
        pattern = (f"{name}/**" if rest else name) if _plain(name) else "**"
        add(pattern, CODE_LANES, unknown)
        entries.append(MapEntry(pattern, frozenset(CODE_LANES)))
    return tuple(lines)


def unmapped(tracked: Sequence[str], lines: Sequence[MapLine]) -> list[str]:
    entries = [MapEntry(line.pattern, frozenset(line.lanes)) for line in lines]
    return [p for p in tracked if first_match(entries, p) is None]


# --- rendering ----------------------------------------------------------------


def template(name: str) -> str:
    return (resources.files("patchjudge") / "templates" / name).read_text(encoding="utf-8")


def _toml(value: str) -> str:
    # JSON strings are TOML basic strings for everything a path holds.
    return json.dumps(value, ensure_ascii=False)


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_toml(v) for v in values) + "]"


def render_ledger(layout: Layout, lines: Sequence[MapLine], options: Options) -> str:
    map_text: list[str] = []
    group = ""
    for line in lines:
        if line.group != group:
            group = line.group
            map_text.append(f"# {group}")
        map_text.append(f"{_toml(line.pattern)} = {_toml_list(line.lanes)}")
    for line in lines:
        problem = glob_problem(line.pattern)
        if problem:  # a path init saw that no glob can spell: a bug to report
            raise AssertionError(f"init wrote a bad glob: {problem}")
    return string.Template(template("init/gate.toml.tmpl")).substitute(
        base=_toml(options.base),
        protected=_toml_list(judge_files(options)),
        pythonpath=_toml_list(layout.pythonpath),
        install=_toml_list(["."] if layout.installable else []),
        isolation=_toml(options.isolation),
        isolation_why=(
            f"{options.isolation!r}: no sandbox started here ({options.no_sandbox})"
            if options.no_sandbox
            else f"{options.isolation!r}: a sandbox started where init ran"
        ),
        map="\n".join(map_text),
        properties=_toml_list([PROPERTIES_DIR]),
        fixture_roots=_toml_list(layout.fixture_roots),
        lock=_toml(FIXTURE_LOCK),
        registry=_toml(FREEZE_REGISTRY),
        suite=_toml_list(layout.suite_paths),
        suite_run="true" if options.suite_run else "false",
    )


def render_property(api: Mapping[str, Mapping[str, bool]]) -> str:
    """The starter property: the public names the project has today must stay.

    A starter that passes whatever the code does would be a tautology, so
    it checks something real (names a patch could delete or break), or,
    when init found nothing importable, fails until a human writes one.
    """
    surface = {m: dict(sorted(names.items())) for m, names in sorted(api.items()) if names}
    if not surface:
        return template("init/property_todo.py.tmpl")
    body = json.dumps(surface, indent=4, sort_keys=True)
    body = body.replace(": true", ": True").replace(": false", ": False")
    return string.Template(template("init/property_api.py.tmpl")).substitute(surface=body)


def render_tox(layout: Layout) -> str:
    # Built in the box (its backend is the patch's code), checked against the code's venv
    # and installed there: never into the judge's environment (issue 19). The checkout
    # judged, not tox.ini's folder: in CI that is the base's tree (toxci, issue 19).
    install = (
        "    python -m patchjudge.boxbuild {patchjudge_repo} {env_dir}{/}wheels"
        " --ledger {tox_root}{/}eval{/}gate.toml"
        " --into {env_dir}{/}code{/}bin{/}python --install\n"
        if layout.installable
        else ""
    )
    return string.Template(template("init/tox.ini.tmpl")).substitute(project_install=install)


_TRUSTED_HOST = "# TRUSTED-HOST-NOTE\npatchjudge:trusted-host:"
# GitLab waits for a runner with the job's tag for ever (issue 19): with replay
# not required the job is hidden (a leading dot), so the pipeline ends.
_TRUSTED_HOST_OFF = (
    "# Hidden (the leading dot): [replay] required = false, so nothing waits on a\n"
    "# receipt. With required = true, drop the dot and register the tagged runner.\n"
    ".patchjudge:trusted-host:"
)


# tox as constraints/dev.txt pins it: the version the tox scenarios run.
TOX_VERSION = "4.67.15"
# A tox team's recipe, from the nox one: (pattern, replacement, times it must match).
# A count that no longer holds is a template change this table missed: init fails
# loudly rather than write a recipe that installs nox or runs a noxfile the team lacks.
_TOX_RECIPE = (
    (
        r'Every nox call reads the noxfile of the merge base \(nox -f "\$JUDGE/noxfile\.py"\)',
        'Every tox call reads the tox.ini of the merge base (tox -c "$JUDGE/tox.ini")',
        1,
    ),
    (r"a patched noxfile could skip", "a patched tox.ini could skip", 1),
    (
        r'(?m)^( +)NOX_VERSION: "[^"]*"\n +# uv beside nox:.*\n +#.*\n +UV_VERSION: "[^"]*"\n',
        rf'\1TOX_VERSION: "{TOX_VERSION}" # tox.ini builds its venvs with venv and pip\n',
        1,
    ),
    (
        r'python -m pip install "nox==\$NOX_VERSION" "uv==\$UV_VERSION"',
        'python -m pip install "tox==$TOX_VERSION"',
        None,
    ),
    # The judge's tox.ini, run from the head's checkout, which toxfile.py names the
    # judged repo ({patchjudge_repo}); {tox_root}, the judge's worktree, gives constraints/.
    (r'nox -f "(\$[A-Z_]+(?:/judge)?)/noxfile\.py" -s ', r'tox -c "\1/tox.ini" -e ', 3),
)


def ci_recipe(name: str, runner: str, replay_required: bool = False) -> str:
    """The CI recipe as shipped; a tox team's copy runs the base's tox.ini where the
    recipe runs the base's noxfile (`_TOX_RECIPE`), and names no nox at all.

    GitLab's trusted-host job runs only when the ledger requires replay;
    GitHub's decides from the base's ledger in the run itself.
    """
    text = template(name)
    text = text.replace(
        _TRUSTED_HOST, "patchjudge:trusted-host:" if replay_required else _TRUSTED_HOST_OFF
    )
    if runner == "tox":
        for pattern, replacement, times in _TOX_RECIPE:
            text, done = re.subn(pattern, replacement, text)
            if done == 0 or (times is not None and done != times):
                raise AssertionError(f"{name}: tox recipe: {pattern!r} {done}x, not {times}x")
        if "nox" in text.lower():
            raise AssertionError(f"{name}: the tox recipe still names nox")
    return text


def render_project_constraints(layout: Layout) -> str:
    lines = [
        "# The project's own runtime and test requirements, pinned, installed before the",
        "# project itself (which installs with --no-deps). Regenerate with hashes, e.g.",
        "#   uv pip compile --generate-hashes requirements.in -o constraints/project.txt",
    ]
    if layout.dependencies:
        lines.append("# pyproject.toml declares (pin these here):")
        lines += [f"#   {dep}" for dep in layout.dependencies]
    if layout.test_requires:
        lines.append(
            "# its suite's requirements (pin those the visible suite imports or uses; lane.txt"
            " has pytest and hypothesis): until then a test that needs one fails at every patch"
        )
        lines += [f"#   {dep}" for dep in layout.test_requires]
    return "\n".join(lines) + "\n"


def render_patchjudge_constraints(spec: str, note: str = "") -> str:
    lines = [
        "# patchjudge itself, installed with --no-deps (its runtime is pinned in lane.txt).",
        "# Written by `patchjudge init` from where this patchjudge was installed (or",
        "# --patchjudge-spec): a pin from your index, or of the wheel committed beside this",
        "# file (the lanes install with --find-links constraints/), a URL or a VCS commit;",
        "# never a path on one machine. Checked to resolve when it was written.",
    ]
    if note:
        lines.append(f"# No hash here: {note}.")
    return "\n".join([*lines, spec]) + "\n"


def render_build_constraints(pins: Sequence[str]) -> str:
    lines = [
        "# What builds the project ([build-system] requires in pyproject.toml, or PEP 517's",
        "# setuptools for a setup.py) and patchjudge from a source directory: exact pins",
        "# with hashes, installed with lane.txt, so the lanes build with --no-build-isolation",
        "# and never fetch an unpinned backend. Written by `patchjudge init`; beside",
        "# lane.txt's pins, not repeated here. Regenerate after a change to [build-system]:",
        "#   uv pip compile --generate-hashes -c constraints/lane.txt build.in \\",
        "#     -o constraints/build.txt",
    ]
    return "\n".join([*lines, *pins]) + "\n"


def check_runner(runner: str) -> None:
    if runner not in RUNNERS:
        raise PatchjudgeError(f"unknown runner {runner!r}", key="--runner", fix="use nox or tox")


def scaffold(
    tracked: Sequence[str],
    layout: Layout,
    api: Mapping[str, Mapping[str, bool]],
    options: Options,
) -> dict[str, str]:
    """Every file init writes (path -> text) except the fixture lock, which hashes the tree."""
    check_runner(options.runner)
    files: dict[str, str] = {}
    if options.runner == "nox":
        files["noxfile.py"] = template("init/noxfile.py.tmpl")
    else:
        files["tox.ini"] = render_tox(layout)
        # tox's inline plugin: a sandbox that cannot start stops tox before any env (issue 19).
        files["toxfile.py"] = template("init/toxfile.py.tmpl")
    files[STARTER] = render_property(api)
    files[FREEZE_REGISTRY] = template("init/flakes.freeze.toml.tmpl")
    files["constraints/lane.txt"] = template("init/lane.txt")
    files["constraints/patchjudge.txt"] = render_patchjudge_constraints(
        options.patchjudge_spec, options.patchjudge_note
    )
    files["constraints/build.txt"] = render_build_constraints(options.build_pins)
    files["constraints/project.txt"] = render_project_constraints(layout)
    files[GITHUB_WORKFLOW] = ci_recipe("ci/github-workflow.yml", options.runner)
    files[GITLAB_JOB] = ci_recipe("ci/gitlab-ci.yml", options.runner)
    everything = sorted({*tracked, *files, LEDGER, FIXTURE_LOCK})
    lines = plan_map(layout, everything, options)
    missed = unmapped(everything, lines)
    if missed:
        raise AssertionError(f"init left paths unmapped: {missed[:3]}")
    files[LEDGER] = render_ledger(layout, lines, options)
    return dict(sorted(files.items()))


def gitignore_additions(current: str | None) -> list[str]:
    """Lines .gitignore needs so reports and runner venvs are never committed."""
    have = {line.strip().rstrip("/") for line in (current or "").splitlines()}
    return [entry for entry in (".patchjudge/", ".nox/", ".tox/") if entry.rstrip("/") not in have]
