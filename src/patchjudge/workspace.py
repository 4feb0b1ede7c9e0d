"""One gate run: the refs, the judge read from the merge base, and scratch trees."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import posixpath
import sys
import tempfile
import tomllib
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from patchjudge import cache, codeenv, git, seed, trees
from patchjudge.boundary import sandbox
from patchjudge.config import LEDGER, Ledger, check_paths_exist, data_files, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.paths import SYMLINK, Change, Classification, classify, globs, is_bytecode
from patchjudge.report import RunKey

DEFAULT_REPORTS = ".patchjudge"


class Shared:
    """Answers one lane of a `patchjudge gate` computed that a later lane would compute alike.

    Issue 20: within one gate the freeze lane ran the required properties the
    properties lane runs again, and the head's suite was collected twice. Only
    the gate makes one (a lane run alone, as nox runs it, computes its own);
    a key holds every input its answer depends on that is not the run's own
    (the run fixes the trees, the ledger and the seed): a miss computes.
    """

    def __init__(self, found: Mapping[Hashable, object] | None = None) -> None:
        # `found`: what earlier lanes of a nox run handed on (sharefile), digest-checked.
        self._found: dict[Hashable, object] = dict(found or {})
        self._made: dict[Hashable, object] = {}

    def get(self, key: Hashable, compute: Callable[[], object]) -> tuple[object, bool]:
        """(the value, whether an earlier lane computed it)."""
        if key in self._found:
            return self._found[key], True
        value = compute()
        self._found[key] = value
        self._made[key] = value
        return value, False

    def earlier(self, kind: str) -> list[tuple[Hashable, object]]:
        """Every (key, value) an earlier lane computed whose key is a tuple led by `kind`."""
        return [(k, v) for k, v in self._found.items() if isinstance(k, tuple) and k[:1] == (kind,)]

    def made(self) -> dict[Hashable, object]:
        """What this process computed (not what it was handed): a later lane's to share."""
        return dict(self._made)


@dataclass(frozen=True)
class Options:
    """What every lane command takes (SPEC: Commands)."""

    repo: Path = Path()
    base: str | None = None
    head: str = "HEAD"
    reports: Path | None = None
    today: dt.date = field(default_factory=lambda: dt.datetime.now(dt.UTC).date())
    receipt: Path | None = None
    run_id: str = ""
    isolation: str | None = None  # --isolation: may tighten [gate] isolation, never loosen it
    python: str | None = None  # --python: the venv the code under test runs in (issue 19)
    # nox only (sharefile): earlier lanes' results, each file with the sha256 nox
    # holds for it, and where this lane writes its own. Boxed runs only.
    share_in: tuple[tuple[Path, str], ...] = ()
    share_out: Path | None = None


@dataclass(frozen=True)
class Run:
    repo: Path
    base_ref: str
    merge_base: str
    head: str
    ledger: Ledger
    base_entries: tuple[git.TreeEntry, ...]
    changes: tuple[Change, ...]
    classification: Classification
    options: Options
    environ: Mapping[str, str]
    # The --receipt bytes, read when the run opens: before any lane runs code
    # under test that could rewrite the file (issue 4).
    receipt: bytes | None = None
    # How code from the patch runs in this gate run (SPEC: The boundary). Decided once,
    # when the run opens (issue 10); required: a Run without one is an error, never "process".
    isolation: sandbox.Isolation = field(kw_only=True)
    # Why `auto` ran the patch's code unboxed (the failed probe's reason); None
    # when it did not fall back. Every lane report carries it (issue 19).
    isolation_fallback: str | None = None
    # The blobs this run's trees are made from, each written once (issue 12).
    store: trees.Store = field(default_factory=trees.Store, compare=False, repr=False)
    # The interpreter the code under test runs with: --python's venv, else the judge's.
    code: codeenv.CodeEnv = field(default_factory=codeenv.CodeEnv)
    # What the lanes of one gate share (Shared); None: every lane computes its own.
    shared: Shared | None = field(default=None, compare=False, repr=False)

    def once(self, key: Hashable, compute: Callable[[], object]) -> tuple[object, bool]:
        """(`compute()`, False), or within one gate (what an earlier lane computed, True)."""
        return (compute(), False) if self.shared is None else self.shared.get(key, compute)

    def box(self, tree: Path, home: Path) -> sandbox.Box | None:
        """The sandbox for a process that runs the patch's code in `tree`; None without one."""
        return codeenv.boxer(self.isolation, self.code)(tree, home)

    @property
    def key(self) -> RunKey:
        return RunKey(self.merge_base, self.head, self.ledger.sha256, self.options.run_id)

    @property
    def today(self) -> dt.date:
        return self.options.today

    @property
    def reports(self) -> Path:
        return self.options.reports or self.repo / DEFAULT_REPORTS

    def forces(self, lane: str) -> bool:
        return lane in self.classification.forced

    def read_base(self, path: str) -> bytes | None:
        return git.show(self.repo, self.merge_base, path)

    def judge_entries(
        self, entries: tuple[git.TreeEntry, ...] | list[git.TreeEntry]
    ) -> list[git.TreeEntry]:
        judge = globs(self.ledger.judge_paths())
        return [e for e in entries if judge.first(e.path) is not None]

    @functools.cached_property
    def base_judge_entries(self) -> tuple[git.TreeEntry, ...]:
        """The judge's files at the merge base: one pass over the base's tree a run."""
        return tuple(self.judge_entries(self.base_entries))

    @functools.cached_property
    def data_entries(self) -> tuple[git.TreeEntry, ...]:
        """The judge's files at the merge base that `[properties] data` lets the code read."""
        entries = self.base_judge_entries
        declared = set(data_files(self.ledger, {e.path: e.mode for e in entries}))
        return tuple(e for e in entries if e.path in declared)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """A private directory outside the checkout; moved aside after, removed with the run."""
        # tempfile's own prefix: the tested code sees these paths (issue 18, no judge's name).
        path = Path(tempfile.mkdtemp())
        try:
            if path.resolve().is_relative_to(self.repo.resolve()):
                raise PatchjudgeError(
                    f"scratch directory {path} is inside the repository",
                    key="TMPDIR",
                    fix="point TMPDIR outside the checkout",
                )
            yield path
        finally:
            self.store.discard(path)

    @functools.cached_property
    def head_tree(self) -> tuple[git.TreeEntry, ...]:
        """What a head tree holds: the code under test at head, the judge's files from the base.

        Listed once per run; every lane's head tree is made from this list.
        """
        judge = globs(self.ledger.judge_paths())
        judge_entries = self.base_judge_entries
        # A head file where the judge has a directory (`eval` the file) would
        # block the judge's own files: the judge's layout wins.
        judge_dirs = {parent for e in judge_entries for parent in _parents(e.path)}
        code = [
            e
            for e in git.ls_tree(self.repo, self.head)
            if judge.first(e.path) is None and e.path not in judge_dirs
        ]
        return (*code, *judge_entries)

    def materialize(self, dest: Path, which: str = "head") -> Path:
        """The code under test at head with the judge's files from the merge base.

        `which="base"` gives the merge base whole. Every call makes a tree of
        its own (directories its own, files from the run's store, see
        trees.choose): nothing one lane's tests write reaches another lane.
        """
        self._place(dest, which)
        for path, data in self.generated(which).items():
            target = dest / path
            # Only into a directory of the tree itself: a tracked symlink on the
            # way could point anywhere the judge can write.
            parent = target.parent
            inside = parent.is_dir() and parent.resolve().is_relative_to(dest.resolve())
            if inside and not os.path.lexists(target):
                target.write_bytes(data)
        return dest

    def _place(self, dest: Path, which: str) -> None:
        entries = self.base_entries if which == "base" else self.head_tree
        # Every file a lane's tree holds passes this one filter. Bytecode never
        # reaches a scratch tree: the interpreter would run it, not the source.
        kept = [e for e in entries if trees.placeable(e.path) and not is_bytecode(e.path)]
        # Boxed, the judge's cache may keep the blobs for the next run (trees.shared_blobs).
        keep_in = cache.placement(self.environ, self.repo, self.isolation)
        self.store.place(self.repo, dest, kept, self.isolation, keep_in)

    @functools.cached_property
    def _generated(self) -> dict[str, dict[str, bytes]]:
        return {}

    def generated(self, which: str) -> Mapping[str, bytes]:
        """Files the project's build backend writes into its tree, git-ignored (issue 19).

        setuptools_scm's version file: after `pip install -e .` the user's
        package imports it, so every lane's tree of that side holds it too.
        Made once per run and side, in the box, by that side's own backend.
        """
        made = self._made(which)
        if which != "head" or not made:
            return made
        return {f: data for f, data in made.items() if f not in self.refused_generated}

    def _made(self, which: str) -> Mapping[str, bytes]:
        if which not in self._generated:
            self._generated[which] = self._generate(which)
        return self._generated[which]

    @functools.cached_property
    def refused_generated(self) -> dict[str, str]:
        """The head's generated files that hold code, not data: path -> what (red team, session 12).

        Such a file is the patch's code (its template, or its in-tree backend's
        output) in no diff: the review, its mutants and the probe check never
        read it. It is not placed; pathfilter fails the patch with the reason.
        """
        from patchjudge import versionfile

        found = {f: versionfile.code_in(data) for f, data in self._made("head").items()}
        return {f: why for f, why in found.items() if why is not None}

    def _generate(self, which: str) -> dict[str, bytes]:
        rev = self.merge_base if which == "base" else self.head
        entries = self.base_entries if which == "base" else self.head_tree
        pyproject = git.show(self.repo, rev, "pyproject.toml")
        wanted = generated_wanted(pyproject, _exists_in(tuple(entries)), self.ledger.judge_paths())
        # Only when some tracked source names the file: no backend run for a
        # project (iniconfig) whose package never imports its version file.
        wanted = [f for f in wanted if _named(self.repo, rev, Path(f).stem)]
        if not wanted:
            return {}
        from patchjudge import boxbuild  # only for such a project: it imports zipfile & co

        made = render_generated(
            pyproject, wanted, lambda doc: boxbuild.version_at(doc, self.environ, self.repo, rev)
        )
        rest = [f for f in wanted if f not in made]
        if not rest:
            return made
        # A custom template that needs more than the version: the backend writes it.
        with self.scratch() as scratch:
            tree = scratch / "tree"
            self._place(tree, which)
            try:
                made |= boxbuild.generate(
                    tree, rest, self.isolation, repo=self.repo, rev=rev, environ=self.environ
                )
            except PatchjudgeError as exc:
                print(f"patchjudge: {which}: {exc.one_line()}", file=sys.stderr)
            return made


def render_generated(
    pyproject: bytes | None,
    wanted: Sequence[str],
    version_of: Callable[[Mapping[str, object]], str | None],
) -> dict[str, bytes]:
    """The wanted version files the judge fills itself (versionfile): no backend needed.

    `version_of` gives the side's version from its parsed pyproject.toml.
    """
    if pyproject is None or not wanted:
        return {}
    try:
        doc = tomllib.loads(pyproject.decode("utf-8"))
    except (UnicodeError, tomllib.TOMLDecodeError):
        return {}
    version = version_of(doc)
    if version is None:
        return {}
    from patchjudge import versionfile

    found = {f: versionfile.render(doc, f, version) for f in wanted}
    return {f: data for f, data in found.items() if data is not None}


def generated_wanted(
    pyproject: bytes | None, tracked: Collection[str], judge: Sequence[str]
) -> list[str]:
    """Pure: the generated files a side's pyproject.toml declares that its tree lacks.

    A Python file inside the tree, not tracked (git-ignored, as designed),
    and never one of the judge's paths: a patch cannot plant a judge file.
    """
    # Most projects name none: no toml parse, no boxbuild import for them.
    if pyproject is None or not any(
        k in pyproject for k in (b"write_to", b"version_file", b"version-file")
    ):
        return []
    try:
        doc = tomllib.loads(pyproject.decode("utf-8"))
    except (UnicodeError, tomllib.TOMLDecodeError):
        return []
    from patchjudge.boxbuild import version_files

    judging = globs(judge)
    return [
        f
        for f in version_files(doc)
        if f.endswith(".py")
        and trees.placeable(f)
        and f == posixpath.normpath(f)
        and f not in tracked
        and judging.first(f) is None
    ]


def _named(repo: Path, rev: str, stem: str) -> bool:
    """Whether any tracked Python file at `rev` mentions `stem` (one `git grep`)."""
    found = git.git(repo, "grep", "-l", "-F", "-e", stem, rev, "--", "*.py", ok=(0, 1))
    return bool(found.strip())


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _exists_in(entries: tuple[git.TreeEntry, ...]) -> set[str]:
    return {p for e in entries for p in (*_parents(e.path), e.path)}


def default_base(repo: Path) -> str:
    """Without --base: the `[gate] base` of the ledger on the remote default branch.

    Never the ledger at HEAD: a patch that names its own base judges itself.
    """
    for candidate in ("origin/HEAD", "origin/main"):
        with contextlib.suppress(PatchjudgeError):
            git.rev_parse(repo, candidate)
            data = git.show(repo, candidate, LEDGER)
            if data is None:
                raise PatchjudgeError(
                    f"no {LEDGER} on {candidate}", key="--base", fix="pass --base REF"
                )
            return parse_ledger(data, f"{candidate}:{LEDGER}").gate.base
    raise PatchjudgeError(
        "no --base given and no origin/main to read [gate] base from",
        key="--base",
        fix="pass --base REF, e.g. --base main",
    )


def _read_receipt(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PatchjudgeError(
            f"cannot read the receipt: {exc.strerror}",
            file=str(path),
            key="--receipt",
            fix="pass the receipt.json the trusted host wrote",
        ) from None
    # A malformed receipt is exit 2 now, not after every other lane has run. Imported
    # here, before any lane (issue 20): a run without a receipt need not load replay's.
    from patchjudge.replay import parse_receipt

    parse_receipt(data, str(path))
    return data


def resolve(repo: Path, base_ref: str, head_ref: str) -> tuple[str, str]:
    """(head sha, merge base sha); a base that already holds head leaves nothing to judge."""
    head = git.rev_parse(repo, head_ref, "--head")
    mb = git.merge_base(repo, git.rev_parse(repo, base_ref, "--base"), head)
    if mb == head:
        raise PatchjudgeError(
            f"{base_ref} already contains {head_ref} ({head[:12]}): nothing to judge",
            key="--base",
            fix="pass the branch the patch was made from, e.g. --base HEAD~1",
        )
    return head, mb


def _say_uncommitted(repo: Path, head: str, reports: Path) -> None:
    """The gate judges commits only: a dirty tree is said, never judged in silence (issue 19)."""
    count = git.uncommitted(repo, exclude=reports)
    if count:
        changes = "change is" if count == 1 else "changes are"
        print(
            f"patchjudge: judging HEAD {head[:12]}; {count} uncommitted {changes} not judged",
            file=sys.stderr,
            flush=True,
        )


def _handed_on(options: Options, run: RunKey) -> Shared | None:
    """A nox lane's Shared: what earlier lanes wrote (sharefile), when nox said to share.

    A file refused (its digest is not the one nox holds) is said on stderr and
    left out: the lane computes that part itself, as a lane run alone does.
    """
    if not options.share_in and options.share_out is None:
        return None
    from patchjudge import sharefile

    found, refused = sharefile.read(options.share_in, run)
    for problem in refused:
        print(f"patchjudge: shared results refused, computed here: {problem}", file=sys.stderr)
    return Shared(found)


def open_run(
    options: Options, environ: Mapping[str, str] = os.environ, *, shared: bool = False
) -> Run:
    receipt = _read_receipt(options.receipt)
    repo = git.toplevel(options.repo)
    base_ref = options.base or default_base(repo)
    head, mb = resolve(repo, base_ref, options.head)
    if options.head == "HEAD":
        _say_uncommitted(repo, head, options.reports or repo / DEFAULT_REPORTS)
    data = git.show(repo, mb, LEDGER)
    source = f"{LEDGER} (at merge base {mb[:12]})"
    if data is None:
        raise PatchjudgeError(
            "not found at the merge base",
            file=source,
            fix="adopt patchjudge on the base branch first (patchjudge init)",
        )
    # The properties' seed for this run: the key's when the environment holds one (issue 18).
    ledger = seed.applied(parse_ledger(data, source), environ, head)
    base_entries = tuple(git.ls_tree(repo, mb))
    check_paths_exist(ledger, _exists_in(base_entries).__contains__, source)
    changes = tuple(git.diff(repo, mb, head))
    symlinks = {}
    for change in changes:
        if change.new_mode == SYMLINK and change.new_path is not None:
            target = git.show(repo, head, change.new_path) or b""
            symlinks[change.new_path] = os.fsdecode(target)
    judge = ledger.judge_paths()
    judging = globs(judge)
    judge_entries = [e for e in base_entries if judging.first(e.path) is not None]
    judge_files = [e.path for e in judge_entries]
    # What the code may read of the judge's (issue 17), checked before any lane runs.
    data_files(ledger, {e.path: e.mode for e in judge_entries}, source)
    classification = classify(
        changes,
        protected=judge,
        map_entries=ledger.map,
        properties_paths=ledger.properties.paths,
        symlinks=symlinks,
        judge_files=judge_files,
        pythonpath=ledger.gate.pythonpath,
    )
    # Once, before any lane: every process of this run is boxed alike (issue 10).
    isolation = sandbox.decide(ledger.gate.isolation, options.isolation)
    key = RunKey(mb, head, ledger.sha256, options.run_id)
    handed = _handed_on(options, key) if isolation.value == "sandbox" and not shared else None
    return Run(
        repo=repo,
        base_ref=base_ref,
        merge_base=mb,
        head=head,
        ledger=ledger,
        base_entries=base_entries,
        changes=changes,
        classification=classification,
        options=options,
        environ=environ,
        receipt=receipt,
        isolation=isolation.value,
        isolation_fallback=isolation.fallback,
        code=codeenv.resolve(options.python, environ),
        shared=Shared() if shared else handed,
    )
