"""`patchjudge init`: read the repository, write the judge scaffold, say what comes next."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from patchjudge import __version__, codeenv, git, pins, proc, repeat, runner, scaffold, testrun
from patchjudge.boundary import sandbox
from patchjudge.config import LEDGER, Ledger, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import freeze, suitepass
from patchjudge.lanes.fixtures import scan_worktree, write_lock
from patchjudge.lanes.pathfilter import defined_tests
from patchjudge.workspace import generated_wanted, render_generated


@dataclass(frozen=True)
class InitOptions:
    repo: Path = Path()
    runner: str = "nox"
    force: bool = False
    base: str | None = None  # default: the detected default branch
    patchjudge_spec: str | None = None  # None: where this patchjudge was installed from
    python: str | None = None  # --python: the venv the code under test runs in
    no_suite_run: bool = False  # write [suite] run = false: the team's CI runs the suite
    allow_red_suite: bool = False  # adopt a suite that fails here (its failures to freeze)


def _standard_modules() -> frozenset[str]:
    """The standard library's top-level modules this interpreter can import (no msvcrt here)."""
    return frozenset(n for n in sys.stdlib_module_names if importlib.util.find_spec(n) is not None)


def tracked_paths(top: Path) -> list[str]:
    out = git.git(top, "ls-files", "-z", "--cached")
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def default_branch(top: Path) -> str:
    """The ref patches are judged against: the remote's default branch, else main/master."""
    origin_head = git.git(top, "symbolic-ref", "-q", "refs/remotes/origin/HEAD", ok=(0, 1))
    name = origin_head.decode().strip()
    if name.startswith("refs/remotes/"):
        return name.removeprefix("refs/remotes/")
    refs = git.git(top, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes/origin")
    known = set(refs.decode().split())
    for branch in ("main", "master", "trunk"):
        if f"refs/remotes/origin/{branch}" in known:
            return f"origin/{branch}"
    for branch in ("main", "master", "trunk"):
        if f"refs/heads/{branch}" in known:
            return branch
    current = git.git(top, "symbolic-ref", "-q", "--short", "HEAD", ok=(0, 1)).decode().strip()
    if current:
        return current
    raise PatchjudgeError(
        "cannot tell the default branch (detached HEAD, no main or master)",
        key="--base",
        fix="pass --base REF, e.g. --base origin/main",
    )


def judge_requirement(spec: str | None, lane_txt: str) -> tuple[pins.JudgeSpec, dict[str, bytes]]:
    """constraints/patchjudge.txt's line, checked to install here, and the files it needs.

    Default: where this patchjudge was installed from (PEP 610), so the lanes
    install the very judge that ran init. A wheel file, or a wheel built from
    a source directory, is committed under constraints/ and pinned by its
    hash: a path on this machine installs nowhere else (issue 19).
    """
    if spec is None:
        wanted = pins.from_direct_url(pins.installed_direct_url(), __version__)
    else:
        wanted = pins.parse_spec(spec)
    constraints = pins.lane_versions(lane_txt)
    if wanted.kind == "directory":
        pins.checked(wanted, constraints)
        with tempfile.TemporaryDirectory(prefix="patchjudge-wheel-") as tmp:
            built = pins.wheel_from_directory(Path(wanted.requirement), Path(tmp))
            wheel = pins.checked(pins.JudgeSpec("wheel", str(built)), constraints)
            data = built.read_bytes()
    else:
        wheel = pins.checked(wanted, constraints)
        if wheel.kind != "wheel":
            return wheel, {}
        data = Path(wheel.requirement).read_bytes()
    pin, name = pins.committed(wheel)
    return pin, {f"constraints/{name}": data}


def build_pins(requirements: Sequence[str], lane_txt: str) -> tuple[str, ...]:
    """constraints/build.txt's pins: resolved beside the lane's, without its repeats."""
    if not requirements:
        return ()
    lane = pins.lane_versions(lane_txt)
    try:
        resolved = pins.resolve(list(dict.fromkeys(requirements)), lane)
    except PatchjudgeError as exc:
        raise PatchjudgeError(
            exc.message,
            file="constraints/build.txt",
            key="build-system.requires",
            fix="pin a build backend that installs beside constraints/lane.txt",
        ) from None
    missing = [p.name for p in resolved if not p.hashes]
    if missing:
        raise PatchjudgeError(
            f"the index gave no sha256 for {', '.join(missing)}",
            file="constraints/build.txt",
            fix="install from an index that serves hashes (PyPI does)",
        )
    return tuple(p.line() for p in resolved if lane.get(p.name) != p.version)


@dataclass(frozen=True)
class Plan:
    """What init would write, decided before anything is written."""

    top: Path
    files: dict[str, str]  # path -> text, the fixture lock aside
    gitignore: list[str]  # lines .gitignore lacks
    modules: list[str]  # modules whose public names the starter property records
    names: int  # how many names it records
    wheels: dict[str, bytes]  # path -> bytes: the patchjudge wheel committed under constraints/
    judge: pins.JudgeSpec  # what constraints/patchjudge.txt installs
    suite_off: str | None = None  # why init does not run the visible suite; None: it does


def suite_off(options: InitOptions, existing: bytes | None) -> str | None:
    """Pure: why the visible suite is not run (and `[suite] run = false` written), or None.

    An existing ledger's `run = false` (an init --force over a judge) is kept:
    the team said its CI runs the suite. Read as TOML alone, so an old ledger
    that no longer parses still says it.
    """
    if options.no_suite_run:
        return "--no-suite-run"
    if existing is None:
        return None
    try:
        doc = tomllib.loads(existing.decode("utf-8"))
    except (UnicodeError, tomllib.TOMLDecodeError):
        return None
    suite = doc.get("suite")
    if isinstance(suite, dict) and suite.get("run") is False:
        return f"kept from the existing {LEDGER}"
    return None


def plan(options: InitOptions) -> Plan:
    top = git.toplevel(options.repo)
    tracked = tracked_paths(top)
    pyproject = top / "pyproject.toml"
    layout = scaffold.detect(
        tracked, pyproject.read_bytes() if "pyproject.toml" in tracked else None
    )
    # Read, never imported: init runs no code of the project it adopts.
    sources = {rel: (top / rel).read_bytes() for rel in scaffold.surface_files(layout, tracked)}
    api = scaffold.public_surface(layout, tracked, sources, _standard_modules())
    gitignore = top / ".gitignore"
    additions = scaffold.gitignore_additions(
        gitignore.read_text(encoding="utf-8", errors="replace") if gitignore.exists() else None
    )
    base = options.base or default_branch(top)
    scaffold.check_runner(options.runner)  # before asking an index anything
    lane_txt = scaffold.template("init/lane.txt")
    judge, wheels = judge_requirement(options.patchjudge_spec, lane_txt)
    # Written explicitly (issue 19): sandbox where a box starts, else auto saying why.
    no_sandbox = sandbox.probe() or ""
    ledger_path = top / LEDGER
    kept = ledger_path.is_file() and not ledger_path.is_symlink()
    off = suite_off(options, ledger_path.read_bytes() if kept else None)
    settings = scaffold.Options(
        base=base,
        isolation="auto" if no_sandbox else "sandbox",
        no_sandbox=no_sandbox,
        runner=options.runner,
        patchjudge_spec=judge.text(),
        patchjudge_note=judge.no_hash,
        build_pins=build_pins(list(layout.build_requires), lane_txt),
        suite_run=off is None,
    )
    files = scaffold.scaffold([*tracked, ".gitignore"], layout, api, settings)
    parse_ledger(files[LEDGER].encode(), "--base")  # what the user passed must make a ledger
    recorded = sorted(m for m, names in api.items() if names)
    names = sum(len(api[m]) for m in recorded)
    return Plan(top, files, additions, recorded, names, wheels, judge, off)


def first_failure(junit_xml: bytes) -> str | None:
    """Pure: the first failed or errored test's message in a JUnit report, on one line."""
    try:
        root = ET.fromstring(junit_xml)
    except ET.ParseError:
        return None
    for case in root.iter("testcase"):
        for tag in ("failure", "error"):
            found = case.find(tag)
            if found is not None:
                text = found.get("message") or (found.text or "").strip() or tag
                name = case.get("name", "?")
                line = " ".join(text.split())
                return f"{name}: {line.removeprefix('AssertionError: ')}"[:400]
    return None


def generated_here(top: Path, tracked: Sequence[str], judge: Sequence[str]) -> dict[str, bytes]:
    """The version files the backend writes that this checkout lacks, as the lanes get them.

    Git-ignored by design (setuptools_scm, hatch-vcs): without them a package
    that imports its version is a red start here although every lane's tree
    has the file (issue 19).
    """
    pyproject = top / "pyproject.toml"
    data = pyproject.read_bytes() if "pyproject.toml" in tracked else None
    wanted = generated_wanted(data, set(tracked), judge)
    wanted = [f for f in wanted if not os.path.lexists(top / f)]
    if not wanted:
        return {}
    from patchjudge import boxbuild

    return render_generated(
        data, wanted, lambda doc: boxbuild.version_at(doc, os.environ, top, "HEAD")
    )


def _tree_copy(top: Path, dest: Path, files: Sequence[str], extra: Mapping[str, bytes]) -> Path:
    """The tracked files, then `extra` (the judge's files, the generated ones) over them.

    What a lane's tree holds at this commit, made before init writes
    anything: a red start leaves the checkout as it was. A link stays a link,
    as in a lane's tree; a gitlink (a directory) adds nothing.
    """
    for rel in files:
        src, target = top / rel, dest / rel
        if not (src.is_symlink() or src.is_file()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(src.readlink())  # the target as git holds it
        else:
            shutil.copyfile(src, target)
    for rel, data in extra.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
    return dest


def run_starter(
    top: Path,
    pythonpath: Sequence[str],
    tracked: Sequence[str] = (),
    generated: dict[str, bytes] | None = None,
) -> str | None:
    """Run the starter property once at the adoption commit: None when green, else why.

    A judge that is red before any patch rejects every patch (issue 19). It
    runs the project's code, boxed where a sandbox starts, under the judge's
    settings only (no conftest, no ini, no autoloaded plugin of the project's).
    With `generated` files, in a copy of the tracked tree that holds them:
    the checkout is never written to.
    """
    with (
        tempfile.TemporaryDirectory(prefix="patchjudge-starter-") as tmp,
        tempfile.TemporaryDirectory(prefix="patchjudge-starter-tree-") as copy,
    ):
        home = Path(tmp)
        if generated:
            top = _tree_copy(top, Path(copy), [*tracked, scaffold.STARTER], generated)
        xml = home / "starter.xml"
        # The tree joins sys.path through the judge's plugin, after pytest has
        # imported pluggy and iniconfig: a project that is one of them (or
        # vendors a copy) is the starter's code, never pytest's (issue 19).
        argv = [sys.executable, *proc.ISOLATED_PYTHON, "-m", "pytest", "-q",
                "-p", "patchjudge.pytest_plugin", "-p", "no:cacheprovider",
                "--noconftest", "-c", os.devnull, "--rootdir", str(top),
                f"--junitxml={xml}", scaffold.STARTER]  # fmt: skip
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": tmp,
            "TMPDIR": tmp,
            "PYTHONHASHSEED": proc.HASH_SEED,
            "PATCHJUDGE_PYTHONPATH": os.pathsep.join(str(top / p) for p in pythonpath),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        box = sandbox.Box(tree=top, home=home) if sandbox.probe() is None else None
        with sandbox.wrapped(box, argv) as (boxed, fds):
            done = proc.run(boxed, cwd=top, env=env, timeout=600, pass_fds=fds)
        if done.returncode == 0:
            return None
        said = first_failure(xml.read_bytes()) if xml.exists() else None
        return said or done.describe()[-400:]


def runner_kept(tracked: Sequence[str], pythonpath: Sequence[str]) -> list[str]:
    """Pure: the modules the tree provides that the judge's pytest keeps its own copy of.

    pluggy, iniconfig and the like are handed to the tree's tests in any venv
    (`runner.tree_owned`); pytest, hypothesis or coverage are one copy a
    process: without --python the suite runs the judge's (issue 19).
    """
    listing = set()
    for entry in pythonpath:
        prefix = "" if entry in ("", ".") else entry.strip("/") + "/"
        listing |= {
            p.removeprefix(prefix).split("/", 1)[0] for p in tracked if p.startswith(prefix)
        }
    kept = runner.top_level(listing) & runner.RUNNER_KEEPS - {"patchjudge"}
    return sorted(kept)


@dataclass(frozen=True)
class SuiteRun:
    """The visible suite's one run at the adoption commit, as the freeze lane reads one."""

    ran: int
    passed: int
    skipped: int
    failed: tuple[str, ...]  # one line a failing test: node id — what it raised
    trouble: tuple[str, ...]  # why the run says nothing of the tests (a collection error, ...)

    @property
    def green(self) -> bool:
        return not self.trouble and not self.failed and self.ran > 0


def suite_run(
    tree: Path, ledger: Ledger, code: codeenv.CodeEnv, boxed: bool, environ: Mapping[str, str]
) -> SuiteRun:
    """The visible suite once in `tree`, as the freeze lane runs it at head (issue 19).

    Its settings (suitepass.suite_spec), its schedule (one pytest, or collected
    then run under xdist where `[flakes] workers` picks it), its box with the
    code's venv bound, its interpreter (`--python`); frozen ids none, as the
    registry init writes is empty.
    """
    spec, paths = suitepass.suite_spec(ledger, tree, code.python)
    if not paths:
        return SuiteRun(0, 0, 0, (), ())
    isolation = sandbox.Isolation.SANDBOX if boxed else sandbox.Isolation.PROCESS
    box = codeenv.boxer(isolation, code)
    workers = repeat.resolve_workers(
        ledger.flakes.workers, defined_here(tree, paths), os.cpu_count()
    )
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if not workers:
            first = repeat.first_pass(
                tree, paths, spec, scratch / "run", environ, box=box, tolerated=(freeze.SHADOWING,)
            )
            collected = tuple(first.collected.collected)
            problems = list(first.problems)
            if not believable(problems):
                problems += [f"node id did not run: {n}" for n in collected if n not in first.nodes]
            return read_suite(collected, first.collected.outcomes, problems)
        found = repeat.collect(tree, paths, spec, scratch / "collect", environ, box=box)
        collected = tuple(found.collected)
        problems = testrun.run_problems(found, spec.timeout_s)
        if not collected or not believable(problems):
            return read_suite(collected, (), problems)
        spec = dataclasses.replace(spec, nodeids=collected, workers=workers)
        result, believed = repeat.once(tree, spec, scratch / "run", environ, box=box)
        return read_suite(collected, result.outcomes, [*problems, *believed])


def defined_here(tree: Path, paths: Sequence[str]) -> int:
    """How many tests the suite's files define, from their source (the lane's xdist estimate)."""
    count = 0
    for path in paths:
        root = tree / path
        for file in [root] if root.is_file() else sorted(root.rglob("*.py")):
            if scaffold.is_test_file(file.name) and file.is_file() and not file.is_symlink():
                rel = file.relative_to(tree).as_posix()
                count += len(defined_tests(rel, file.read_bytes()))
    return count


def believable(problems: Sequence[str]) -> bool:
    """Pure: no problem but a tree shadowing a judge module (the code's own process)."""
    return all(p.startswith(freeze.SHADOWING) for p in problems)


def read_suite(
    collected: Sequence[str], outcomes: Sequence[testrun.Outcome], problems: Sequence[str]
) -> SuiteRun:
    """Pure: one run of the visible suite -> what init says of it."""
    trouble = tuple(p for p in problems if not p.startswith(freeze.SHADOWING))
    if trouble:
        return SuiteRun(0, 0, 0, (), trouble)
    _, ran = freeze.suite_verdict(collected, outcomes, (), 0)
    first = freeze.first_failures(outcomes)
    failed = tuple(freeze.failure_line(first[n]) for n in ran["failed"])
    return SuiteRun(ran["ran"], ran["passed"], ran["skipped"], failed, ())


SUITE_FIX = (
    "fix: install what the tests need where the code runs (--python VENV; the runner's"
    " code venv installs constraints/project.txt) or fix them; or pass --allow-red-suite"
    " and freeze them in eval/flakes.freeze.toml; or --no-suite-run if your CI runs the"
    " suite ([suite] run = false)"
)


def suite_lines(s: SuiteRun, paths: Sequence[str]) -> list[str]:
    """Pure: what init says of a suite that is not green: a head line, one a test, the rest."""
    where = ", ".join(paths)
    if s.trouble:
        collects = not all(t.startswith("collection error") for t in s.trouble)
        head = f"the visible suite ({where}) " + (
            "cannot be run at this commit" if collects else "does not collect at this commit"
        )
        shown = [f"  {t}" for t in s.trouble[: freeze.SUITE_SHOWN]]
        more = len(s.trouble) - freeze.SUITE_SHOWN
    elif not s.ran:
        return [f"the visible suite ({where}) collected no test at this commit"]
    else:
        head = f"the visible suite ({where}) fails at this commit: {len(s.failed)} of {s.ran} tests"
        shown = [f"  {line}" for line in s.failed[: freeze.SUITE_SHOWN]]
        more = len(s.failed) - freeze.SUITE_SHOWN
    return [head, *shown, *([f"  and {more} more"] if more > 0 else [])]


def suite_said(s: SuiteRun) -> str:
    """Pure: a green suite's line: it passed, with its counts."""
    skipped = f", {s.skipped} skipped" if s.skipped else ""
    return f"the visible suite passes at this commit ({s.passed} passed{skipped})"


def _judge_source(p: Plan) -> str:
    """Which kind of line init wrote, so the user knows what CI will fetch (issue 19)."""
    first = p.judge.requirement
    if p.judge.kind == "committed":
        return f"{first} from the wheel committed beside it ({', '.join(p.wheels)}), by its hash"
    if p.judge.kind == "index":
        return f"{first} from your package index, by its hash"
    return f"{first} ({p.judge.kind}{': ' + p.judge.no_hash if p.judge.no_hash else ''})"


def _few(modules: list[str]) -> str:
    shown = ", ".join(modules[:3])
    return shown + (f" and {len(modules) - 3} more modules" if len(modules) > 3 else "")


def init(options: InitOptions, out: TextIO) -> int:
    p = plan(options)
    top, files, additions, modules = p.top, p.files, p.gitignore, p.modules
    targets = [*files, *p.wheels, scaffold.FIXTURE_LOCK]
    existing = [p for p in targets if (top / p).exists() or (top / p).is_symlink()]
    if existing and not options.force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise PatchjudgeError(
            f"already exists{more}; init writes nothing over a judge",
            file=existing[0],
            fix="review and remove it, or pass --force to overwrite",
        )
    ledger = parse_ledger(files[LEDGER].encode(), LEDGER)
    # A fixture symlink stops init before it writes anything, not halfway through.
    _, symlinks = scan_worktree(top, ledger.fixtures)
    if symlinks:
        raise PatchjudgeError(
            "a fixture must be a regular file, not a symlink",
            file=symlinks[0],
            fix="replace the link with the bytes it points to, then run init again",
        )
    tracked = tracked_paths(top)
    made = generated_here(top, tracked, ledger.judge_paths())
    suite: SuiteRun | None = None
    if p.suite_off is None:
        # Before anything is written: a red suite leaves the checkout as it was.
        code = codeenv.resolve(options.python)
        judge = {rel: text.encode("utf-8") for rel, text in files.items()}
        with tempfile.TemporaryDirectory() as scratch:
            tree = _tree_copy(top, Path(scratch) / "tree", tracked, {**judge, **made})
            suite = suite_run(tree, ledger, code, sandbox.probe() is None, os.environ)
        if not suite.green and not options.allow_red_suite:
            said = suite_lines(suite, ledger.suite.paths)
            print(f"patchjudge init: {said[0]}; nothing written", *said[1:], f"  {SUITE_FIX}",
                  sep="\n", file=sys.stderr)  # fmt: skip
            return 1
    for rel, text in files.items():
        path = top / rel
        if path.is_symlink():  # --force replaces the link, never writes through it
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {rel}", file=out)
    for rel, data in p.wheels.items():
        path = top / rel
        if path.is_symlink():
            path.unlink()
        path.write_bytes(data)
        print(f"wrote {rel}", file=out)
    print(f"constraints/patchjudge.txt: {_judge_source(p)}", file=out)
    lock_path = top / ledger.fixtures.lock
    if lock_path.is_symlink():
        lock_path.unlink()
    write_lock(top, ledger.fixtures, lock_path)
    no_sandbox = sandbox.probe()
    print(
        f'[gate] isolation = "{ledger.gate.isolation}": '
        + (
            f"no sandbox starts here ({no_sandbox}); CI passes --isolation sandbox"
            if no_sandbox
            else "the patch's code runs under bubblewrap"
        ),
        file=out,
    )
    roots = ", ".join(ledger.fixtures.roots) or "no fixture folders"
    print(f"wrote {ledger.fixtures.lock} ({roots})", file=out)
    if additions:
        gitignore = top / ".gitignore"
        current = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
        sep = "" if not current or current.endswith("\n") else "\n"
        gitignore.write_text(current + sep + "\n".join(additions) + "\n", encoding="utf-8")
        print(f"appended to .gitignore: {' '.join(additions)}", file=out)
    starter = (
        f"it checks the {p.names} public names of {_few(modules)} stay"
        if modules
        else "it FAILS until you write a real property"
    )
    if modules:
        red = run_starter(top, ledger.gate.pythonpath, tracked, made)
        if red is not None:
            print(
                f"patchjudge init: red start: {scaffold.STARTER} fails at this commit: {red}"
                " (fix the code, or edit the starter, before you commit the judge)",
                file=sys.stderr,
            )
            return 1
        print(f"the starter passes at this commit ({p.names} names)", file=out)
    if suite is None:
        print(f"[suite] run = false ({p.suite_off}): the visible suite is not run here", file=out)
    elif suite.green:
        print(suite_said(suite), file=out)
    base = ledger.gate.base
    branch = base.removeprefix("origin/")
    run = "nox -s gate" if options.runner == "nox" else "tox -e gate"
    kept = runner_kept(tracked_paths(top), ledger.gate.pythonpath)
    alone = f"patchjudge gate --base {base}"
    if kept:
        # issue 19: the runner's own copy would be what the visible suite tests.
        names = ", ".join(kept)
        print(
            f"{names}: the judge's pytest runs on its own {names}, so `patchjudge gate` tests"
            f" the tree's {names} only with --python VENV/bin/python, a venv this project is"
            f" installed in; {run} and the CI recipes build that venv (without it: undecided)",
            file=out,
        )
        alone += " --python VENV/bin/python"
    print(
        "\nnext steps:\n"
        f"  1. review eval/gate.toml (the [map] above all) and eval/properties/ ({starter});\n"
        "     add the properties that say what your code must do\n"
        f"  2. commit the judge on {branch}: git add -A && git commit -m 'Adopt patchjudge'\n"
        f"  3. on a patch branch: {run} -- --base {base}   (or: {alone})",
        file=out,
    )
    if not modules:
        # Last, where it is read: until a human writes a property every patch is rejected.
        print(
            f"\nwarning: init found no public name to record, so {scaffold.STARTER} is a"
            " template that rejects every patch until you write a real property in it",
            file=out,
        )
    if suite is not None and not suite.green:
        # --allow-red-suite: adopted as it is, said last, where it is read.
        said = suite_lines(suite, ledger.suite.paths)
        until = (
            "it collects"
            if suite.trouble or not suite.ran
            else "those tests pass or are frozen in eval/flakes.freeze.toml"
        )
        print(f"\nwarning: {said[0]}: every patch is rejected until {until}", *said[1:],
              sep="\n", file=out)  # fmt: skip
    return 0
