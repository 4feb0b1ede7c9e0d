"""Pure: a repository's tracked paths -> its layout -> the judge files `patchjudge init` writes."""

from __future__ import annotations

import ast
import json
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from patchjudge.config import LEDGER, MapEntry, glob_problem
from patchjudge.errors import PatchjudgeError
from patchjudge.paths import first_match

RUNNERS = ("nox", "tox")
CODE_LANES = ("properties", "freeze")
PROPERTIES_DIR = "eval/properties"
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

    @property
    def pythonpath(self) -> tuple[str, ...]:
        return ("src",) if self.src_layout else (".",)


@dataclass(frozen=True)
class Options:
    base: str  # the ref patches are judged against: origin/main, main, ...
    runner: str  # nox | tox
    patchjudge_spec: str  # what constraints/patchjudge.txt installs


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
            if top in suite_paths or top in SUITE_DIRS or top in DOC_DIRS:
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
    return Layout(
        src_layout=src_layout,
        modules=tuple(dict.fromkeys(modules)),
        code_paths=tuple(code_paths),
        suite_paths=suite_paths,
        fixture_roots=_outermost(roots),
        installable="pyproject.toml" in files or "setup.py" in files,
        dependencies=tuple(d for d in deps if isinstance(d, str)) if isinstance(deps, list) else (),
    )


def module_source(layout: Layout, module: str, tracked: Sequence[str]) -> str | None:
    """The tracked file that defines `module`'s top level."""
    prefix = "src/" if layout.src_layout else ""
    for candidate in (f"{prefix}{module}/__init__.py", f"{prefix}{module}.py"):
        if candidate in tracked:
            return candidate
    return None


def public_names(source: bytes) -> dict[str, bool]:
    """Public name -> is it a def or class, from the unconditional top level of a module.

    Only what every import defines: a name bound under `if`/`try` may not
    exist on this interpreter, and a property must hold at the base.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, bool] = {}
    deleted: set[str] = set()
    declared: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = True
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name != "*":
                    names.setdefault(alias.asname or alias.name, False)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and isinstance(node.value, ast.List | ast.Tuple):
                        declared = [
                            e.value
                            for e in node.value.elts
                            if isinstance(e, ast.Constant) and isinstance(e.value, str)
                        ]
                    else:
                        names.setdefault(target.id, False)
        elif isinstance(node, ast.Delete):
            deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
    public = {n: c for n, c in names.items() if n not in deleted}
    if declared is not None:
        return {n: public[n] for n in declared if n in public}
    return {n: c for n, c in public.items() if not n.startswith("_")}


# --- the map ----------------------------------------------------------------


def judge_files(options: Options) -> tuple[str, ...]:
    runner_file = "noxfile.py" if options.runner == "nox" else "tox.ini"
    return ("eval/**", runner_file, "constraints/**", ".github/workflows/**", ".gitlab-ci.yml",
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
        map="\n".join(map_text),
        properties=_toml_list([PROPERTIES_DIR]),
        fixture_roots=_toml_list(layout.fixture_roots),
        lock=_toml(FIXTURE_LOCK),
        registry=_toml(FREEZE_REGISTRY),
        suite=_toml_list(layout.suite_paths),
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
    install = "    python -m pip install -q --no-deps {tox_root}\n" if layout.installable else ""
    return string.Template(template("init/tox.ini.tmpl")).substitute(project_install=install)


def ci_recipe(name: str, runner: str) -> str:
    """The CI recipe as shipped; a tox team's copy runs tox where the recipe runs nox."""
    text = template(name)
    if runner == "tox":
        for nox_text, tox_text in (("pip install nox", "pip install tox"), ("nox -s ", "tox -e ")):
            text = text.replace(nox_text, tox_text)
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
    return "\n".join(lines) + "\n"


def render_patchjudge_constraints(spec: str) -> str:
    return (
        "# patchjudge itself, installed with --no-deps (its runtime is pinned in lane.txt).\n"
        "# Written by `patchjudge init --patchjudge-spec`; a path, a wheel URL with\n"
        "# #sha256=..., or a pinned requirement from your index.\n"
        f"{spec}\n"
    )


def scaffold(
    tracked: Sequence[str],
    layout: Layout,
    api: Mapping[str, Mapping[str, bool]],
    options: Options,
) -> dict[str, str]:
    """Every file init writes (path -> text) except the fixture lock, which hashes the tree."""
    if options.runner not in RUNNERS:
        raise PatchjudgeError(
            f"unknown runner {options.runner!r}", key="--runner", fix="use nox or tox"
        )
    files: dict[str, str] = {}
    if options.runner == "nox":
        files["noxfile.py"] = template("init/noxfile.py.tmpl")
    else:
        files["tox.ini"] = render_tox(layout)
    files[f"{PROPERTIES_DIR}/test_public_api.py"] = render_property(api)
    files[FREEZE_REGISTRY] = template("init/flakes.freeze.toml.tmpl")
    files["constraints/lane.txt"] = template("init/lane.txt")
    files["constraints/patchjudge.txt"] = render_patchjudge_constraints(options.patchjudge_spec)
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
