"""eval/gate.toml -> immutable records; every error names the file and the key."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pathspec

from patchjudge.boundary import ISOLATIONS
from patchjudge.errors import PatchjudgeError

LEDGER = "eval/gate.toml"
# The lanes a [map] entry may force, in the order the gate runs them.
LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")


@dataclass(frozen=True)
class MapEntry:
    pattern: str
    lanes: frozenset[str]


@dataclass(frozen=True)
class GateSettings:
    base: str
    protected: tuple[str, ...]
    pythonpath: tuple[str, ...]
    install: tuple[str, ...]
    isolation: str = "auto"


@dataclass(frozen=True)
class PropertiesSettings:
    paths: tuple[str, ...]
    seed: int
    max_examples: int
    timeout_s: int
    # Property files that run inside the tested process, the v1 way (issue 11).
    in_process: tuple[str, ...] = ()
    # What the properties said about the diff (issue 14): defaults so that
    # settings built without them (tests, older callers) keep working.
    review_mutants: int = 20
    min_changed_lines_executed: float = 0.0
    review_timeout_s: int = 60
    # Out of process, one call's deadline in the worker's time; 0: the lane's timeout_s (issue 17).
    call_timeout_s: int = 0
    # Where this run's `seed` came from (issue 18): "pinned" as parsed; the run
    # replaces seed and source with the key's when PATCHJUDGE_SEED_KEY is set.
    seed_source: str = "pinned"
    # The worker's PYTHONHASHSEED for this run (seed.applied): 0 until the run resolves it.
    hash_seed: int = 0
    # Globs of the judge's data files the code under test may read out of process (issue 17):
    # bound read-only at their path in every worker's box (data_files, lanes/properties.py).
    data: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReviewSettings:
    """What the review's findings do to the verdict (issue 18): "undecided" | "report"."""

    unexercised: str = "undecided"
    probes: str = "undecided"


@dataclass(frozen=True)
class FixturesSettings:
    roots: tuple[str, ...]
    lock: str
    canonical_json: bool
    allow_unhashed_new: bool


@dataclass(frozen=True)
class FreezeSettings:
    registry: str
    max_age_days: int
    min_fail_count: int
    reruns: int
    max_extensions: int


@dataclass(frozen=True)
class SuiteSettings:
    paths: tuple[str, ...]
    plugins: tuple[str, ...]
    timeout_s: int
    # v3 (issue 19): the freeze lane runs the suite at head; false: collected only.
    run: bool = True


@dataclass(frozen=True)
class FlakesSettings:
    count: int
    candidate_min_fails: int
    workers: str


@dataclass(frozen=True)
class ReplaySettings:
    required: bool
    max_slice: int
    nodeids: tuple[str, ...]
    marker: str
    private: tuple[str, ...]


@dataclass(frozen=True)
class Ledger:
    gate: GateSettings
    map: tuple[MapEntry, ...]
    properties: PropertiesSettings
    fixtures: FixturesSettings
    freeze: FreezeSettings
    suite: SuiteSettings
    flakes: FlakesSettings
    replay: ReplaySettings
    sha256: str
    # Keys the file set itself; a default that points at nothing is not an error.
    explicit: frozenset[str]
    review: ReviewSettings = ReviewSettings()

    def judge_paths(self) -> tuple[str, ...]:
        """Globs the patch may never touch, whatever `protected` says."""
        always = [LEDGER, self.fixtures.lock, self.freeze.registry]
        always += [f"{p.rstrip('/')}/**" for p in self.properties.paths]
        always += list(self.properties.paths)
        return tuple(dict.fromkeys([*self.gate.protected, *always]))


# --- the schema: section -> key -> (kind, default) -------------------------

_Check = Callable[[Any], str | None]

# What a review finding does: hold the merge as undecided, or only show it.
FINDINGS = ("undecided", "report")

_DEFAULT_PROTECTED = ["eval/**", "noxfile.py", "constraints/**", ".github/workflows/**"]

SCHEMA: dict[str, dict[str, tuple[str, Any]]] = {
    "gate": {
        "base": ("ref", "origin/main"),
        "protected": ("globs", _DEFAULT_PROTECTED),
        "pythonpath": ("paths", ["src"]),
        "install": ("strs", ["."]),
        "isolation": ("isolation", "auto"),
    },
    "properties": {
        "paths": ("paths", ["eval/properties"]),
        "seed": ("uint", 20260924),
        "max_examples": ("posint", 200),
        "timeout_s": ("posint", 600),
        "in_process": ("paths", []),
        "review_mutants": ("uint", 20),
        "min_changed_lines_executed": ("fraction", 0.0),
        "review_timeout_s": ("posint", 60),
        "call_timeout_s": ("uint", 0),
        "data": ("data", []),
    },
    "fixtures": {
        "roots": ("paths", ["tests/fixtures"]),
        "lock": ("path", "eval/fixtures.lock.json"),
        "canonical_json": ("bool", True),
        "allow_unhashed_new": ("bool", False),
    },
    "freeze": {
        "registry": ("path", "eval/flakes.freeze.toml"),
        "max_age_days": ("posint", 14),
        "min_fail_count": ("posint", 2),
        "reruns": ("posint", 12),
        "max_extensions": ("uint", 3),
    },
    "suite": {
        "paths": ("paths", ["tests"]),
        "plugins": ("strs", []),
        "timeout_s": ("posint", 600),
        "run": ("bool", True),
    },
    "flakes": {
        "count": ("posint", 12),
        "candidate_min_fails": ("posint", 3),
        "workers": ("workers", "auto"),
    },
    "replay": {
        "required": ("bool", False),
        "max_slice": ("posint", 50),
        "nodeids": ("globs", []),
        "marker": ("str", ""),
        "private": ("globs", []),
    },
    "review": {
        "unexercised": ("finding", "undecided"),
        "probes": ("finding", "undecided"),
    },
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_path(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be a non-empty string path"
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        return f"must be a relative path inside the repository, got {value!r}"
    return None


def glob_problem(pattern: Any) -> str | None:
    """Why `pattern` is not a usable gitignore-style glob, or None."""
    if not isinstance(pattern, str) or not pattern.strip():
        return "must be a non-empty glob string"
    if pattern.startswith(("!", "#")):
        return f"{pattern!r}: negations and comments are not globs here; list what matches"
    if "\n" in pattern or "\\" in pattern:
        return f"{pattern!r}: a glob may not hold a newline or a backslash"
    try:
        compiled = pathspec.PathSpec.from_lines("gitignore", [pattern])
    except Exception as exc:  # pathspec raises several types for bad patterns
        return f"{pattern!r}: not a gitignore-style glob ({exc})"
    if not compiled.patterns or compiled.patterns[0].include is None:
        return f"{pattern!r}: not a gitignore-style glob"
    return None


# A Python file of the judge's (a property, a helper, its bytecode or stub) is the oracle
# itself: never data the code may read, whatever a pattern says.
PYTHON_SUFFIXES = (".py", ".pyc", ".pyo", ".pyi", ".pyw", ".pyx", ".pxd")


def data_problem(pattern: Any) -> str | None:
    """Why `pattern` cannot be a `[properties] data` glob, or None (data_files checks the
    files it matches at the base)."""
    problem = glob_problem(pattern)
    if problem:
        return problem
    if pattern.endswith(PYTHON_SUFFIXES):
        return f"{pattern!r} names Python files: the judge's sources are never data"
    return None


def _list_of(item_check: _Check) -> _Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"must be a list, got {type(value).__name__}"
        for i, item in enumerate(value):
            problem = item_check(item)
            if problem:
                return f"item {i}: {problem}"
        return None

    return check


def _str(value: Any) -> str | None:
    return None if isinstance(value, str) else f"must be a string, got {type(value).__name__}"


def _ref(value: Any) -> str | None:
    if not isinstance(value, str) or not value or value.startswith("-") or "\n" in value:
        return "must be a git ref such as 'origin/main'"
    return None


def _workers(value: Any) -> str | None:
    if value == "auto" or (_is_int(value) and value >= 0):
        return None
    return "must be 'auto' or a whole number of workers (0: no xdist)"


def _fraction(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return None
    return "must be a number from 0 to 1 (a fraction of the changed lines)"


_KINDS: dict[str, _Check] = {
    "ref": _ref,
    "str": _str,
    "strs": _list_of(lambda v: None if isinstance(v, str) and v else "must be a non-empty string"),
    "globs": _list_of(glob_problem),
    "data": _list_of(data_problem),
    "path": _check_path,
    "paths": _list_of(_check_path),
    "bool": lambda v: None if isinstance(v, bool) else "must be true or false",
    "uint": lambda v: None if _is_int(v) and v >= 0 else "must be a whole number >= 0",
    "posint": lambda v: None if _is_int(v) and v >= 1 else "must be a whole number >= 1",
    "workers": _workers,
    "isolation": lambda v: None if v in ISOLATIONS else "must be 'sandbox', 'auto' or 'process'",
    "fraction": _fraction,
    "finding": lambda v: None if v in FINDINGS else "must be 'undecided' or 'report'",
}


def _section(doc: Mapping[str, Any], name: str, source: str, explicit: set[str]) -> dict[str, Any]:
    raw = doc.get(name, {})
    if not isinstance(raw, dict):
        raise PatchjudgeError("must be a table", file=source, key=f"[{name}]")
    schema = SCHEMA[name]
    for key in raw:
        if key not in schema:
            known = ", ".join(schema)
            raise PatchjudgeError(
                f"unknown key {key!r}", file=source, key=f"{name}.{key}", fix=f"known: {known}"
            )
    values: dict[str, Any] = {}
    for key, (kind, default) in schema.items():
        if key in raw:
            problem = _KINDS[kind](raw[key])
            if problem:
                raise PatchjudgeError(problem, file=source, key=f"{name}.{key}")
            explicit.add(f"{name}.{key}")
            value = float(raw[key]) if kind == "fraction" else raw[key]
        else:
            value = default
        values[key] = tuple(value) if isinstance(value, list) else value
    return values


def _map_entries(doc: Mapping[str, Any], source: str) -> tuple[MapEntry, ...]:
    raw = doc.get("map")
    if raw is None:
        raise PatchjudgeError(
            "missing", file=source, key="[map]", fix='add e.g. [map] "src/**" = ["properties"]'
        )
    if not isinstance(raw, dict):
        raise PatchjudgeError("must be a table of glob = [lanes]", file=source, key="[map]")
    entries = []
    for pattern, lanes in raw.items():
        key = f"map.{pattern!r}"
        problem = glob_problem(pattern)
        if problem:
            raise PatchjudgeError(problem, file=source, key=key)
        if not isinstance(lanes, list) or not all(isinstance(x, str) for x in lanes):
            raise PatchjudgeError("must be a list of lane names", file=source, key=key)
        unknown = [x for x in lanes if x not in LANES]
        if unknown:
            raise PatchjudgeError(
                f"no lane named {unknown[0]!r}",
                file=source,
                key=key,
                fix=f"lanes: {', '.join(LANES)}",
            )
        entries.append(MapEntry(pattern, frozenset(lanes)))
    return tuple(entries)


def load_toml(data: bytes, source: str) -> dict[str, Any]:
    """Any judge file's TOML: one error line naming the file, whatever the bytes."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PatchjudgeError(f"not UTF-8 (byte {exc.start})", file=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise PatchjudgeError(f"not valid TOML: {exc}", file=source) from None
    except RecursionError:  # tomllib recurses once per nested array or table
        raise PatchjudgeError("nested too deeply to be a judge file", file=source) from None


def parse_ledger(data: bytes, source: str = LEDGER) -> Ledger:
    """Pure: the bytes of gate.toml -> a Ledger, or a PatchjudgeError naming the key."""
    doc = load_toml(data, source)
    known = {*SCHEMA, "map"}
    for name in doc:
        if name not in known:
            raise PatchjudgeError(
                "unknown table",
                file=source,
                key=f"[{name}]",
                fix=f"known: {', '.join(sorted(known))}",
            )
    explicit: set[str] = set()
    s = {name: _section(doc, name, source, explicit) for name in SCHEMA}
    _check_data_roots(s["properties"], source)
    return Ledger(
        gate=GateSettings(**s["gate"]),
        map=_map_entries(doc, source),
        properties=PropertiesSettings(**s["properties"]),
        fixtures=FixturesSettings(**s["fixtures"]),
        freeze=FreezeSettings(**s["freeze"]),
        suite=SuiteSettings(**s["suite"]),
        flakes=FlakesSettings(**s["flakes"]),
        replay=ReplaySettings(**s["replay"]),
        sha256=hashlib.sha256(data).hexdigest(),
        explicit=frozenset(explicit),
        review=ReviewSettings(**s["review"]),
    )


def _check_data_roots(properties: Mapping[str, Any], source: str) -> None:
    """Each data glob starts in the judge's own folder: eval/ or a [properties] path.

    Anything else is the code's (the worker's tree has it already) or the host's.
    """
    roots = ("eval/", *(p.rstrip("/") + "/" for p in properties["paths"]))
    for i, pattern in enumerate(properties["data"]):
        if not pattern.startswith(roots):
            raise PatchjudgeError(
                f"{pattern!r} is outside the judge's folder",
                file=source,
                key=f"properties.data[{i}]",
                fix=f"start it with one of {', '.join(repr(r) for r in dict.fromkeys(roots))}",
            )


# git's modes of a regular file; a symlink (120000) or a submodule (160000) is no data.
_REGULAR = ("100644", "100755")


def data_files(
    ledger: Ledger, judge_files: Mapping[str, str], source: str = LEDGER
) -> tuple[str, ...]:
    """Pure: the judge's files at the base (path -> git mode) `[properties] data` declares.

    Every pattern must match a file, and every file it matches must be plain data:
    a regular file (a symlink would bind what it points to), no Python source, and
    none of the judge's own files (the ledger, the fixtures lock, the freeze
    registry). A pattern too wide is refused whole, never trimmed: what the code
    may read is exactly what the ledger says.
    """
    own = {LEDGER, ledger.fixtures.lock, ledger.freeze.registry, *ledger.properties.in_process}
    found: dict[str, None] = {}
    for i, pattern in enumerate(ledger.properties.data):
        key = f"properties.data[{i}]"
        spec = pathspec.PathSpec.from_lines("gitignore", [pattern])
        matched = sorted(p for p in judge_files if spec.match_file(p))
        if not matched:
            raise PatchjudgeError(
                f"{pattern!r} matches no file of the judge's at the base revision",
                file=source,
                key=key,
                fix="commit the data under the judge's folder, or correct the pattern",
            )
        for path in matched:
            why = (
                "is the judge's own file"
                if path in own
                else "is a Python file"
                if path.endswith(PYTHON_SUFFIXES)
                else "is not a regular file (a symlink or a submodule)"
                if judge_files[path] not in _REGULAR
                else None
            )
            if why is not None:
                raise PatchjudgeError(
                    f"{pattern!r} matches {path!r}, which {why}",
                    file=source,
                    key=key,
                    fix="narrow the pattern to the data files, e.g. 'eval/properties/tzif/*.tzif'",
                )
            found[path] = None
    return tuple(found)


def check_paths_exist(ledger: Ledger, exists: Callable[[str], bool], source: str = LEDGER) -> None:
    """Every file the ledger points to must be there at the base revision.

    A default that points at nothing (no fixture root, no freeze registry) is
    an empty lane, not an error; a path the file names itself must exist.
    """
    for i, path in enumerate(ledger.properties.paths):
        if not exists(path):
            raise PatchjudgeError(
                f"{path!r} does not exist at the base revision",
                file=source,
                key=f"properties.paths[{i}]",
                fix="create it with at least one property test",
            )
    for i, path in enumerate(ledger.properties.in_process):
        inside = any(path.startswith(p.rstrip("/") + "/") for p in ledger.properties.paths)
        if not inside or not exists(path):
            raise PatchjudgeError(
                f"{path!r} is not a property file at the base revision",
                file=source,
                key=f"properties.in_process[{i}]",
                fix="name a file under [properties] paths, or remove it",
            )
    for key, path in (("freeze.registry", ledger.freeze.registry),):
        if key in ledger.explicit and not exists(path):
            raise PatchjudgeError(
                f"{path!r} does not exist at the base revision",
                file=source,
                key=key,
                fix="commit an empty registry or remove the key",
            )
    for i, root in enumerate(ledger.fixtures.roots):
        if "fixtures.roots" in ledger.explicit and not exists(root):
            raise PatchjudgeError(
                f"{root!r} does not exist at the base revision",
                file=source,
                key=f"fixtures.roots[{i}]",
                fix="create it or remove it from roots",
            )
    has_roots = any(exists(root) for root in ledger.fixtures.roots)
    if (has_roots or "fixtures.lock" in ledger.explicit) and not exists(ledger.fixtures.lock):
        raise PatchjudgeError(
            f"{ledger.fixtures.lock!r} does not exist at the base revision",
            file=source,
            key="fixtures.lock",
            fix="run 'patchjudge lock' and commit the lock",
        )
