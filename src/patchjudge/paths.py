"""Pure path policy: gitignore-style globs, the [map], protected paths, symlinks."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pathspec

from patchjudge.config import MapEntry

SYMLINK = "120000"
SUBMODULE = "160000"
_KIND = {SYMLINK: "symlink", SUBMODULE: "submodule", "000000": "nothing"}


@dataclass(frozen=True)
class Change:
    """One changed path pair from `git diff --raw -M -C`."""

    status: str  # A C D M R T U X
    old_mode: str
    new_mode: str
    old_path: str | None
    new_path: str | None

    def sides(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in (self.old_path, self.new_path) if p is not None))

    def describe(self) -> str:
        if self.status in "RC" and self.old_path != self.new_path:
            verb = "renamed" if self.status == "R" else "copied"
            return f"{self.old_path} -> {self.new_path} ({verb})"
        kinds = (_kind(self.old_mode), _kind(self.new_mode))
        if self.status == "T" or (self.status == "M" and kinds[0] != kinds[1]):
            return f"{self.new_path} ({kinds[0]} -> {kinds[1]})"
        if self.status == "M" and self.old_mode != self.new_mode:
            return f"{self.new_path} (mode {self.old_mode} -> {self.new_mode})"
        word = {"A": "added", "D": "deleted", "M": "modified"}.get(self.status, self.status)
        return f"{self.sides()[0]} ({word})"


def _kind(mode: str) -> str:
    return _KIND.get(mode, "file")


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> pathspec.PathSpec:  # type: ignore[type-arg]
    return pathspec.PathSpec.from_lines("gitignore", [pattern])


def matches(pattern: str, path: str) -> bool:
    """gitignore semantics: `src/**` is everything under src, `*.py` any depth.

    One pattern, one path: the reference the compiled `Globs` agree with.
    """
    return bool(_compiled(pattern).match_file(path))


@dataclass(frozen=True)
class Globs:
    """An ordered list of globs compiled into one regular expression: first match wins.

    Matching a path against each pattern in turn made 2.2 million pathspec
    calls on a 40,000-file tree (issue 12); one alternation of pathspec's own
    regexes answers the same question in one `re.match` per path. Each
    alternative ends in an empty named group, so `lastgroup` says which
    pattern matched first. A pattern that matches nothing on its own (a
    comment, a blank, a `!negation` alone) never matches here either.
    """

    patterns: tuple[str, ...]

    def first(self, path: str) -> int | None:
        """The index of the first pattern that matches `path`, or None."""
        regex, fallback = _alternation(self.patterns)
        if fallback:
            return next((i for i, p in enumerate(self.patterns) if matches(p, path)), None)
        if regex is None:
            return None
        found = regex.match(pathspec.util.normalize_file(path))
        if found is None or found.lastgroup is None:
            return None
        return int(found.lastgroup[1:])

    def match(self, path: str) -> str | None:
        """The first pattern that matches `path`, or None."""
        i = self.first(path)
        return None if i is None else self.patterns[i]


def globs(patterns: Iterable[str]) -> Globs:
    return Globs(tuple(patterns))


@functools.lru_cache(maxsize=256)
def _alternation(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, bool]:
    """(one regex for all patterns, whether to fall back to one pattern at a time)."""
    parts = []
    for i, pattern in enumerate(patterns):
        compiled = _compiled(pattern).patterns
        if len(compiled) != 1:
            return None, True
        one = compiled[0]
        regex = getattr(one, "regex", None)
        if one.include is not True:  # a comment, a blank line, a lone negation: no match
            continue
        # Named groups inside a pattern would clash across alternatives, and
        # other flags would change its meaning inside the alternation.
        if not isinstance(regex, re.Pattern) or regex.groupindex or regex.flags != re.UNICODE:
            return None, True
        # pathspec searches (`*/` is `/` anywhere): a `match` of a lazy prefix
        # and the pattern is that search; one anchored by `^` needs no prefix.
        anchored = regex.pattern.startswith("^") and not _alternates(regex.pattern)
        prefix = "" if anchored else "(?s:.*?)"
        parts.append(f"{prefix}(?:{regex.pattern})(?P<p{i}>)")
    if not parts:
        return None, False
    return re.compile("|".join(parts)), False


def _alternates(regex: str) -> bool:
    """Pure: whether `regex` has a `|` outside every group and class (`^a|b` is not anchored)."""
    depth, in_class, escaped = 0, False, False
    for ch in regex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


def first_match(entries: Sequence[MapEntry], path: str) -> MapEntry | None:
    i = globs(e.pattern for e in entries).first(path)
    return None if i is None else entries[i]


def any_match(patterns: Iterable[str], path: str) -> str | None:
    return globs(patterns).match(path)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r.rstrip("/") or path.startswith(r.rstrip("/") + "/") for r in roots)


def within(roots: Iterable[str]) -> Callable[[str], bool]:
    """Pure: `under` with the roots prepared once, for a pass over a whole tree's paths.

    A 40,000-file tree made the properties lane call `under` 320,000 times a gate
    (issue 20); one `str.startswith` of a tuple answers each path here.
    """
    exact = frozenset(r.rstrip("/") for r in roots)
    children = tuple(f"{r}/" for r in exact)
    return lambda path: path in exact or path.startswith(children)


def symlink_target(link: str, target: str) -> str | None:
    """Where a symlink committed at `link` points, repository-relative; None if outside."""
    if target.startswith("/"):
        return None
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if resolved == ".." or resolved.startswith("../"):
        return None
    return resolved


_BYTECODE_SUFFIXES = (".pyc", ".pyo")
_EXTENSION_SUFFIXES = (".so", ".pyd")


def is_bytecode(path: str) -> bool:
    """Python bytecode: what an interpreter may run in place of the source beside it."""
    return path.endswith(_BYTECODE_SUFFIXES) or "__pycache__" in path.split("/")


def compiled_problem(path: str, pythonpath: Sequence[str]) -> str | None:
    """Why a path the patch adds or changes is compiled code, not reviewable source (issue 10).

    The reviewer reads the source; an interpreter may run the bytecode or the
    extension module instead. Extension modules count where they can be
    imported: under the pythonpath (or at the top, when it holds ".").
    """
    said = "compiled code is not reviewable source"
    if is_bytecode(path):
        return f"{said}: {path} (commit the source only)"
    name = path.rsplit("/", 1)[-1]
    roots = [r for r in pythonpath if r.strip("/") not in ("", ".")]
    importable = under(path, roots) or len(roots) < len(pythonpath)
    if importable and (name.endswith(_EXTENSION_SUFFIXES) or ".so." in name):
        return f"{said}: {path} (an extension module on the pythonpath)"
    return None


@dataclass(frozen=True)
class Classification:
    forced: frozenset[str]
    problems: tuple[str, ...]
    # path -> the [map] pattern that claimed it (None: unmapped)
    mapped: Mapping[str, str | None]


def classify(
    changes: Sequence[Change],
    *,
    protected: Sequence[str],
    map_entries: Sequence[MapEntry],
    properties_paths: Sequence[str],
    symlinks: Mapping[str, str],
    judge_files: Sequence[str] = (),
    pythonpath: Sequence[str] = (),
) -> Classification:
    """Total over any changes: every path is either mapped or a problem.

    `symlinks` holds the target of each symlink the head commit adds or
    changes; one that reaches into the judge or out of the repository lets
    the code under test read or write what it may not; `judge_files` (the
    judge's files at base) catch a link to a directory that holds them.
    """
    problems: list[str] = []
    forced: set[str] = set()
    mapped: dict[str, str | None] = {}
    guarded, claimed = globs(protected), globs(e.pattern for e in map_entries)
    for change in changes:
        for path in change.sides():
            guard = guarded.match(path)
            if guard:
                what = change.describe()
                shown = what if what.startswith(path + " ") else f"{path}: {what}"
                problems.append(f"protected path changed: {shown} matches {guard!r}")
            index = claimed.first(path)
            entry = None if index is None else map_entries[index]
            mapped[path] = entry.pattern if entry else None
            if entry is not None:
                forced |= entry.lanes
            elif not guard:  # a protected path fails already
                problems.append(f"unmapped path: {path} (extend [map] in eval/gate.toml)")
        new = change.new_path
        # Added, changed, copied or renamed into place: a deletion of bytecode is fine.
        if new is not None and change.status != "D":
            compiled = compiled_problem(new, pythonpath)
            if compiled:
                problems.append(compiled)
        if change.status in "ACR" and new is not None and under(new, properties_paths):
            problems.append(f"new file under the properties path: {new}")
        if new is not None and new in symlinks:
            target = symlink_target(new, symlinks[new])
            if target is None:
                problems.append(f"symlink out of the repository: {new} -> {symlinks[new]}")
            elif (
                guarded.match(target)
                or under(target, properties_paths)
                or target == "."
                or any(under(f, [target]) for f in judge_files)
            ):
                problems.append(f"symlink into the judge: {new} -> {symlinks[new]}")
    return Classification(frozenset(forced), tuple(dict.fromkeys(problems)), mapped)
