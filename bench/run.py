"""`nox -s bench`: patchjudge against the bare commands it stands for, as median ratios (issue 7).

Run it as `nox -s bench` (or `python bench/run.py` in a venv with the dev
constraints and patchjudge installed). It downloads a pinned third-party
sdist that ships its tests, makes it a git repository with a generated
eval/ tree and a small patch, and times each pair alternately over several
runs. The figures go to bench/RESULTS.md; nothing here asserts a timing.

After the flakes and junit branches merge nothing needs switching:
`patchjudge flakes --count 12 --workers 2|0` is timed as soon as
`patchjudge flakes --help` exits 0 (see `flakes_pairs`), and `JUNIT_PARSER`
picks `patchjudge.junit:read_cases` once that module is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import hashlib
import importlib.util
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Sdist:
    """A third-party project, pinned by version and by its sdist's own SHA-256."""

    name: str
    version: str
    sha256: str

    @property
    def top(self) -> str:
        return f"{self.name}-{self.version}"


# A pure-Python project whose sdist ships a sizeable pytest suite (664 tests,
# 2332 subtests): the project the gate and the lanes judge.
PROJECT = Sdist(
    "more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6"
)
PACKAGE = "more_itertools"
# Its tests are unittest.TestCase classes, which pytest-repeat does not
# repeat: the flakes pair runs toolz's plain pytest functions instead.
FLAKES_PROJECT = Sdist(
    "toolz", "1.0.0", "2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02"
)
TODAY = "2026-12-01"
SEED = 20260924
MAX_EXAMPLES = 200
# Module:function timed on the 100k-case JUnit file (path -> the cases): the
# stdlib stand-in below until patchjudge.junit (read_cases) is installed.
JUNIT_PARSER = (
    "patchjudge.junit:read_cases"
    if importlib.util.find_spec("patchjudge.junit") is not None
    else "bench.run:iterparse_outcomes"
)

MiB = 1 << 20


# --- pure: statistics, targets ---------------------------------------------


def median(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("median of no runs")
    return float(statistics.median(xs))


def ratios(ours: Sequence[float], bare: Sequence[float]) -> list[float]:
    """Per-run ratios of runs timed side by side: noise in one run hits both."""
    if len(ours) != len(bare):
        raise ValueError("ours and bare need the same number of runs")
    return [o / b for o, b in zip(ours, bare, strict=True)]


@dataclass(frozen=True)
class Timing:
    """One side of a pair: wall seconds and CPU seconds (own + children) per run."""

    wall: tuple[float, ...]
    cpu: tuple[float, ...]


@dataclass(frozen=True)
class Pair:
    name: str
    ours: Timing
    bare: Timing
    ours_label: str = "patchjudge"
    bare_label: str = "bare"

    @property
    def ratio(self) -> float:
        return median(ratios(self.ours.wall, self.bare.wall))

    @property
    def cpu_ratio(self) -> float:
        """Less sensitive to a loaded machine than wall time; blind to parallelism."""
        return median(ratios(self.ours.cpu, self.bare.cpu))

    @property
    def overhead_s(self) -> float:
        """Median of the per-run wall differences, in seconds."""
        return median([o - b for o, b in zip(self.ours.wall, self.bare.wall, strict=True)])


@dataclass(frozen=True)
class Target:
    name: str
    figure: float
    limit: float
    unit: str
    at_most: bool  # True: figure <= limit is met; False: figure >= limit is met

    @property
    def met(self) -> bool:
        return self.figure <= self.limit if self.at_most else self.figure >= self.limit

    def line(self) -> str:
        op = "<=" if self.at_most else ">="
        verdict = "met" if self.met else "MISSED"
        return f"| {self.name} | {self.figure:.3g} {self.unit} | {op} {self.limit:g} | {verdict} |"


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def rotation(run: int, sides: int) -> list[int]:
    """Pure: who goes when in run `run`: each side leads in turn, so drift hits all alike."""
    return [(run + k) % sides for k in range(sides)]


def alternate_many(fns: Sequence[Callable[[], object]], runs: int, warmup: int = 1) -> list[Timing]:
    """Time each fn once per run in rotating order; warmup runs are dropped."""
    walls: list[list[float]] = [[] for _ in fns]
    cpus: list[list[float]] = [[] for _ in fns]
    for i in range(warmup + runs):
        for side in rotation(i, len(fns)):
            gc.collect()
            cpu0, wall0 = cpu_seconds(), time.perf_counter()
            fns[side]()
            wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
            if i >= warmup:
                walls[side].append(wall)
                cpus[side].append(cpu)
    return [Timing(tuple(w), tuple(c)) for w, c in zip(walls, cpus, strict=True)]


def alternate(
    a: Callable[[], object], b: Callable[[], object], runs: int, warmup: int = 1
) -> tuple[Timing, Timing]:
    ta, tb = alternate_many([a, b], runs, warmup)
    return ta, tb


# --- pure: the generated eval/ tree ----------------------------------------

PROPERTY_FILES = {
    "eval/properties/test_chunking.py": '''
        """chunked and windowed cut an iterable without losing or inventing items."""

        from hypothesis import given
        from hypothesis import strategies as st

        from more_itertools import chunked, flatten, windowed

        items = st.lists(st.integers())


        @given(items, st.integers(min_value=1, max_value=12))
        def test_chunked_round_trips(xs, n):
            chunks = list(chunked(xs, n))
            assert list(flatten(chunks)) == xs
            assert all(1 <= len(c) <= n for c in chunks)
            assert all(len(c) == n for c in chunks[:-1])


        @given(items, st.integers(min_value=1, max_value=6))
        def test_windowed_slides_by_one(xs, n):
            windows = list(windowed(xs, n))
            if len(xs) >= n:
                assert len(windows) == len(xs) - n + 1
                for i, w in enumerate(windows):
                    assert list(w) == xs[i : i + n]
            elif xs:
                assert windows == [tuple(xs) + (None,) * (n - len(xs))]
            else:
                assert windows == []
        ''',
    "eval/properties/test_grouping.py": '''
        """partition, unique_everseen and run_length keep every item exactly once."""

        from hypothesis import given
        from hypothesis import strategies as st

        from more_itertools import partition, run_length, unique_everseen

        items = st.lists(st.integers(min_value=-5, max_value=5))


        @given(items)
        def test_partition_splits_by_predicate(xs):
            odd, even = (list(p) for p in partition(lambda x: x % 2 == 0, xs))
            assert sorted(odd + even) == sorted(xs)
            assert all(x % 2 for x in odd)
            assert not any(x % 2 for x in even)


        @given(items)
        def test_unique_everseen_keeps_first_occurrences(xs):
            assert list(unique_everseen(xs)) == list(dict.fromkeys(xs))


        @given(items)
        def test_run_length_round_trips(xs):
            encoded = list(run_length.encode(xs))
            assert list(run_length.decode(encoded)) == xs
            assert all(a != b for (a, _), (b, _) in zip(encoded, encoded[1:]))
        ''',
    "eval/properties/test_combinatorics.py": '''
        """distinct_permutations and powerset agree with brute force on small inputs."""

        from itertools import combinations, permutations

        from hypothesis import given
        from hypothesis import strategies as st

        from more_itertools import distinct_permutations, powerset, sort_together

        small = st.lists(st.integers(min_value=0, max_value=3), max_size=6)


        @given(small)
        def test_distinct_permutations_are_the_unique_ones(xs):
            ours = list(distinct_permutations(xs))
            assert len(ours) == len(set(ours))
            assert set(ours) == set(permutations(xs))


        @given(small)
        def test_powerset_is_every_combination(xs):
            expected = [c for r in range(len(xs) + 1) for c in combinations(xs, r)]
            assert list(powerset(xs)) == expected


        @given(st.lists(st.tuples(st.integers(), st.text(max_size=3)), max_size=20))
        def test_sort_together_sorts_by_the_first_key(rows):
            keys = [k for k, _ in rows]
            values = [v for _, v in rows]
            if rows:
                out_keys, out_values = sort_together([keys, values])
                assert list(out_keys) == sorted(keys)
                assert sorted(zip(out_keys, out_values)) == sorted(rows)
        ''',
}


def ledger_toml(install: Sequence[str]) -> str:
    listed = ", ".join(json.dumps(i) for i in install)
    return f"""\
# Generated by bench/run.py for {PROJECT.name} {PROJECT.version}.
[gate]
base = "main"
pythonpath = ["."]
install = [{listed}]

[map]
"{PACKAGE}/**" = ["properties"]
"tests/fixtures/**" = ["fixtures"]
"tests/**" = ["freeze"]
"docs/**" = []
"*" = []

[properties]
seed = {SEED}
max_examples = {MAX_EXAMPLES}
timeout_s = 600

[fixtures]
roots = ["tests/fixtures"]

[suite]
paths = ["tests"]
timeout_s = 600
"""


def freeze_registry(today: dt.date) -> str:
    created = today - dt.timedelta(days=3)
    expires = created + dt.timedelta(days=10)
    return f"""\
[[freeze]]
nodeid = "tests/test_more.py::ChunkedTests::test_even"
owner = "bench"
reason = "generated by bench/run.py: a row for the audit to read"
created = {created.isoformat()}
expires = {expires.isoformat()}
fail_count = 3
runs = 12
required_properties = ["eval/properties/test_chunking.py::test_chunked_round_trips"]
"""


def fixture_files(count: int, seed: int = SEED) -> dict[str, bytes]:
    """A few hundred fixtures: two thirds JSON (hashed canonical), the rest bytes."""
    rng = random.Random(seed)
    files: dict[str, bytes] = {}
    for i in range(count):
        group = f"tests/fixtures/set{i % 7}"
        if i % 3:
            doc = {
                "id": i,
                "name": f"case-{i}",
                "tags": [rng.choice("abcdef") for _ in range(rng.randint(0, 5))],
                "weights": {k: rng.randint(-1000, 1000) for k in rng.sample("uvwxyz", 3)},
            }
            files[f"{group}/case_{i:04d}.json"] = json.dumps(doc, indent=1).encode()
        else:
            files[f"{group}/blob_{i:04d}.bin"] = rng.randbytes(rng.randint(64, 4096))
    return files


def lock_json(files: Mapping[str, bytes]) -> str:
    from patchjudge import hashing

    digests = {p: hashing.digest_bytes(p, data, True) for p, data in files.items()}
    return hashing.lock_json(digests, True)


def eval_tree(
    install: Sequence[str], today: dt.date, fixtures: int, judge_root: Path = ROOT
) -> dict[str, bytes]:
    """Every file the bench adds to the project: judge, fixtures, noxfile, pins."""
    import textwrap

    fx = fixture_files(fixtures)
    out: dict[str, bytes] = {
        p: textwrap.dedent(src).lstrip("\n").encode() for p, src in PROPERTY_FILES.items()
    }
    out.update(fx)
    out["eval/gate.toml"] = ledger_toml(install).encode()
    out["eval/flakes.freeze.toml"] = freeze_registry(today).encode()
    out["eval/fixtures.lock.json"] = lock_json(fx).encode()
    # The adopting project's noxfile and pins are patchjudge's own.
    out["noxfile.py"] = (judge_root / "noxfile.py").read_bytes()
    out["constraints/lane.txt"] = (judge_root / "constraints" / "lane.txt").read_bytes()
    return out


def write_files(root: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def sha256_manifest(files: Mapping[str, bytes]) -> str:
    """What `sha256sum -c` reads: the bare check of the fixtures, raw bytes."""
    return "".join(f"{hashlib.sha256(d).hexdigest()}  {p}\n" for p, d in sorted(files.items()))


# --- pure: JUnit ----------------------------------------------------------


def write_junit(path: Path, cases: int, seed: int = SEED) -> None:
    """A JUnit file of `cases` test cases, a few failing, erroring or skipped."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>')
        fh.write(f'<testsuite name="pytest" tests="{cases}">')
        for i in range(cases):
            cls = f"tests.test_mod{i % 100}.TestCase{i % 7}"
            fh.write(f'<testcase classname="{cls}" name="test_{i}" time="0.{rng.randint(0, 999)}"')
            roll = rng.random()
            if roll < 0.01:
                fh.write('><failure message="assert 1 == 2">Traceback ...\nE assert 1 == 2')
                fh.write("</failure></testcase>")
            elif roll < 0.015:
                fh.write('><error message="boom">RuntimeError: boom</error></testcase>')
            elif roll < 0.03:
                fh.write('><skipped message="not on this host" /></testcase>')
            else:
                fh.write(" />")
        fh.write("</testsuite></testsuites>\n")


def iterparse_outcomes(path: Path) -> dict[str, str]:
    """The stdlib stand-in for patchjudge.junit: classname::name -> outcome, streaming."""
    outcomes: dict[str, str] = {}
    for _, elem in ElementTree.iterparse(path, events=("end",)):
        if elem.tag != "testcase":
            continue
        outcome = "passed"
        for child in elem:
            tag = child.tag
            if tag in ("failure", "error"):
                outcome = "failed"
            elif tag == "skipped":
                outcome = "skipped"
        attrib = elem.attrib
        outcomes[f"{attrib.get('classname', '')}::{attrib.get('name', '')}"] = outcome
        elem.clear()
    return outcomes


def _resolve(spec: str) -> Callable[[Path], Sized]:
    import importlib

    module, _, name = spec.partition(":")
    if module == "bench.run":
        return iterparse_outcomes
    fn: Callable[[Path], Sized] = getattr(importlib.import_module(module), name)
    return fn


# --- pure: the report -----------------------------------------------------


@dataclass
class Results:
    machine: dict[str, str] = field(default_factory=dict)
    command: str = ""
    pairs: list[Pair] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def render(results: Results, kept_notes: str = "") -> str:
    lines = ["# patchjudge benchmark (issue 7)", ""]
    lines += ["Generated by `bench/run.py`; rerun with:", "", f"    {results.command}", ""]
    lines += ["## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in results.machine.items()]
    lines += ["", "## Targets", "", "| target | figure | limit | |", "|---|---|---|---|"]
    lines += [t.line() for t in results.targets]
    lines += ["", "## Pairs (median of per-run ratios, runs alternated)", ""]
    lines += [
        "| pair (ours / theirs) | ours median s | theirs median s | median wall ratio "
        "| median wall diff s | median CPU ratio | runs |"
    ]
    lines += ["|---|---|---|---|---|---|---|"]
    for p in results.pairs:
        lines.append(
            f"| {p.name} ({p.ours_label} / {p.bare_label}) | {median(p.ours.wall):.3f} | "
            f"{median(p.bare.wall):.3f} | {p.ratio:.3f} | {p.overhead_s:+.3f} | "
            f"{p.cpu_ratio:.3f} | {len(p.ours.wall)} |"
        )
    lines += ["", "## Figures", ""]
    lines += [f"- {name}: {value}" for name, value in results.figures]
    if results.notes:
        lines += ["", "## Run notes", ""]
        lines += [f"- {n}" for n in results.notes]
    lines.append("")
    text = "\n".join(lines)
    if kept_notes:
        text += "\n" + NOTES_MARK + "\n" + kept_notes.lstrip("\n")
    return text


NOTES_MARK = "<!-- notes: kept across reruns of bench/run.py -->"


def kept_notes(previous: str) -> str:
    _, mark, rest = previous.partition(NOTES_MARK)
    return rest if mark else ""


# --- the world: git, commands, downloads ------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-11-24T12:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-24T12:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE too: bytecode caching as Python does by default,
    # on both sides of every pair (some CI images set it).
    drop = ("GIT_", "NOX", "PYTEST", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra or {})
    return env


def sh(argv: Sequence[str], cwd: Path | None = None, ok: Sequence[int] = (0,), **kw: Any) -> str:
    env = kw.pop("env", None) or clean_env()
    result = subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False, **kw
    )
    if result.returncode not in ok:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise SystemExit(f"bench: {' '.join(argv)} exited {result.returncode}:\n" + "\n".join(tail))
    out: str = result.stdout
    return out


def git(repo: Path, *args: str) -> str:
    return sh(["git", "-C", str(repo), *args], env=clean_env(GIT_ENV))


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


def pip_argv() -> list[str]:
    import importlib.util

    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip")
    if found is None:
        raise SystemExit("bench: no pip to download the sdist with (nox -s bench brings one)")
    return [found]


def obtain_sdist(dest: Path, sdist: Sdist) -> Path:
    """`pip download` the pinned sdist, hash-checked; never committed anywhere."""
    dest.mkdir(parents=True, exist_ok=True)
    req = dest / "requirements.txt"
    req.write_text(f"{sdist.name}=={sdist.version} --hash=sha256:{sdist.sha256}\n")
    sh(
        [
            *pip_argv(),
            *("download", "-q", "--no-deps", "--no-binary", ":all:", "--require-hashes"),
            *("-r", str(req), "-d", str(dest)),
        ]
    )
    found = [p for p in dest.iterdir() if p.name.endswith(".tar.gz")]
    if len(found) != 1 or hashlib.sha256(found[0].read_bytes()).hexdigest() != sdist.sha256:
        raise SystemExit(f"bench: expected one sdist with sha256 {sdist.sha256} in {dest}")
    return found[0]


def unpack(work: Path, sdist: Sdist, dest: Path) -> Path:
    """The pinned sdist as a git repository on `main`, as released."""
    archive = obtain_sdist(work / "download" / sdist.name, sdist)
    with tarfile.open(archive) as tar:
        tar.extractall(work / "unpacked", filter="data")
    shutil.move(str(work / "unpacked" / sdist.top), dest)
    git(dest, "init", "-q", "-b", "main")
    commit_all(dest, f"{sdist.name} {sdist.version} as released")
    return dest


def uv_beside(python: str) -> str:
    """The uv installed beside `python` (constraints/dev.txt pins it in the venv), else PATH's.

    `.venv/bin/python bench/cost.py` without the venv's bin on PATH found no uv.
    """
    found = Path(python).parent / "uv"
    return str(found) if found.is_file() and os.access(found, os.X_OK) else "uv"


def build_wheel(dest: Path) -> Path:
    """patchjudge as the lane venvs install it: a wheel of this checkout."""
    sh([uv_beside(sys.executable), "build", "--wheel", "-q", "--out-dir", str(dest), str(ROOT)])
    return next(dest.glob("patchjudge-*.whl"))


PATCH = '''

def bench_patch_marker():
    """A small patch under test: a new helper in the package (bench/run.py)."""
    return 1
'''


def build_project(work: Path, fixtures: int) -> tuple[Path, dict[str, bytes]]:
    """The sdist as a git repo on main, the judge committed, a patch on `patch`."""
    wheel = build_wheel(work / "wheel")
    repo = unpack(work, PROJECT, work / "project")
    files = eval_tree([str(wheel)], dt.date.fromisoformat(TODAY), fixtures)
    write_files(repo, files)
    commit_all(repo, "adopt patchjudge (generated by bench/run.py)")
    git(repo, "checkout", "-q", "-b", "patch")
    with (repo / PACKAGE / "more.py").open("a") as fh:
        fh.write(PATCH)
    commit_all(repo, "a small patch")
    fx = {p: d for p, d in files.items() if p.startswith("tests/fixtures/")}
    return repo, fx


def run_cmd(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> int:
    result = subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return result.returncode


def checked(
    argv: Sequence[str], cwd: Path, ok: Sequence[int], env: Mapping[str, str] | None = None
) -> Callable[[], None]:
    def go() -> None:
        code = run_cmd(argv, cwd, env)
        if code not in ok:
            raise SystemExit(f"bench: {' '.join(argv)} exited {code} in {cwd}")

    return go


PATCHJUDGE = [sys.executable, "-m", "patchjudge"]
GATE_ARGS = ["--base", "main", "--today", TODAY]

# `pytest eval/properties` as a team would run it, with the judge's seed and
# example count (a profile set at configure time, so hypothesis is not
# imported before pytest can rewrite its asserts).
BARE_PROPERTIES = f"""
import sys
import pytest


class Profile:
    def pytest_configure(self, config):
        from hypothesis import settings

        settings.register_profile("bare", max_examples={MAX_EXAMPLES}, database=None, deadline=None)
        settings.load_profile("bare")


args = ["-q", "-p", "no:cacheprovider", "--hypothesis-seed={SEED}", "eval/properties"]
sys.exit(pytest.main(args, plugins=[Profile()]))
"""


def gate_pairs(repo: Path, manifest: Path, base_tree: Path, runs: int) -> list[Pair]:
    env = clean_env({"PYTHONPATH": "."})

    def bare() -> None:
        sh(["git", "diff", "--name-only", "main...HEAD"], cwd=repo)
        sh(["sha256sum", "--quiet", "-c", str(manifest)], cwd=repo)
        sh([sys.executable, "-c", BARE_PROPERTIES], cwd=repo, env=env)

    def bare_and_surface() -> None:
        bare()
        # What pathfilter adds: the visible suite collected at base and at head.
        for tree in (base_tree, repo):
            sh(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", "tests"],
                cwd=tree,
                env=env,
            )

    gate = checked([*PATCHJUDGE, "gate", *GATE_ARGS], repo, ok=(0, 1, 3))
    ours, narrow, wide = alternate_many([gate, bare, bare_and_surface], runs)
    return [
        Pair("gate", ours, narrow, "patchjudge gate", "bare equivalent"),
        Pair(
            "gate incl. surface", ours, wide, "patchjudge gate", "bare + collect at base and head"
        ),
    ]


NOX_LANES = ("pathfilter", "fixtures", "freeze", "properties", "replay")


def nox_pairs(
    repo: Path, envdir: Path, runs: int, lanes: Sequence[str], venv_lanes: Sequence[str]
) -> list[Pair]:
    """Each lane's nox session against the lane run directly.

    The venv a session builds does not depend on the lane, so the slow
    virtualenv backend is timed on `venv_lanes` only; a cold run is cold
    each time, so it needs no warmup.
    """
    nox = [sys.executable, "-m", "nox", "-f", str(repo / "noxfile.py")]
    out = []
    for lane in lanes:
        direct = checked([*PATCHJUDGE, lane, *GATE_ARGS], repo, ok=(0, 1, 3))
        # The warm session reuses the venv a first run made and skips the install.
        prime = [*nox, "--envdir", str(envdir / "warm"), "-s", lane, "--", *GATE_ARGS]
        checked(prime, repo, ok=(0, 1))()
        variants = {
            "warm -R": [*nox, "--envdir", str(envdir / "warm"), "-R"],
            "cold uv": [*nox, "--envdir", str(envdir / "uv"), "--force-venv-backend", "uv"],
            "cold virtualenv": [
                *nox,
                "--envdir",
                str(envdir / "venv"),
                "--force-venv-backend",
                "virtualenv",
            ],
        }
        for label, argv in variants.items():
            if label == "cold virtualenv" and lane not in venv_lanes:
                continue
            session = checked([*argv, "-s", lane, "--", *GATE_ARGS], repo, ok=(0, 1))
            ours, theirs = alternate(session, direct, runs, warmup=int(label == "warm -R"))
            out.append(Pair(f"nox -s {lane}, {label}", ours, theirs, "nox", "direct"))
    return out


# --- hashing ----------------------------------------------------------------


@dataclass(frozen=True)
class HashSet:
    name: str
    files: tuple[str, ...]
    total_bytes: int


def make_hash_data(root: Path, quick: bool) -> list[HashSet]:
    """One big file, two half-size ones, 10,000 small files, 10,000 small JSON files."""
    big = (64 if quick else 1024) * MiB
    small_n = 1000 if quick else 10_000
    rng = random.Random(SEED)
    block = rng.randbytes(MiB)

    def big_file(path: Path, size: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            for i in range(size // MiB):
                # Distinct blocks: no layer below can dedupe or shortcut.
                fh.write(i.to_bytes(8, "little") + block[8:])

    sets = []
    big_file(root / "one/big.bin", big)
    sets.append(HashSet("one large file", ("one/big.bin",), big))
    halves = ("two/a.bin", "two/b.bin")
    for h in halves:
        big_file(root / h, big // 2)
    sets.append(HashSet("two large files", halves, big))
    small = []
    total = 0
    for i in range(small_n):
        rel = f"small/d{i % 50:02d}/f{i:05d}.bin"
        data = rng.randbytes(rng.randint(100, 2000))
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        small.append(rel)
        total += len(data)
    sets.append(HashSet("small files", tuple(small), total))
    js = []
    total = 0
    for i in range(small_n):
        rel = f"json/d{i % 50:02d}/f{i:05d}.json"
        doc = {
            "id": i,
            "b": [rng.randint(0, 99) for _ in range(rng.randint(0, 8))],
            "a": {"x": rng.random() < 0.5, "name": f"n{i}", "score": rng.randint(-9999, 9999)},
        }
        data = json.dumps(doc, indent=2).encode()
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        js.append(rel)
        total += len(data)
    sets.append(HashSet("small JSON files (canonical)", tuple(js), total))
    return sets


HASH_TARGETS = {
    "one large file": ("GB/s", 1.3),
    "two large files": ("GB/s", 2.5),
    "small files": ("files/s", 50_000),
    "small JSON files (canonical)": ("files/s", 20_000),
}


def hash_benchmarks(root: Path, sets: list[HashSet], runs: int, results: Results) -> None:
    """Each set through scan_worktree (a directory) and scan_commit (git blobs).

    The fixtures lane hashes blobs from the object store (scan_commit); `lock`
    hashes the working tree (scan_worktree). Both are timed against openssl
    and sha256sum over the same files (which hash JSON raw, not canonical).
    """
    from patchjudge.config import FixturesSettings
    from patchjudge.lanes import fixtures

    git(root, "init", "-q", "-b", "main")
    # Random bytes do not compress: store them, as a fixture repo of blobs would.
    git(root, "-c", "core.compression=0", "add", "-A")
    git(root, "commit", "-q", "-m", "hash data")
    for hs in sets:
        top = hs.files[0].split("/")[0]
        settings = FixturesSettings((top,), "lock.json", hs.name.endswith("(canonical)"), False)

        def ours_dir(settings: FixturesSettings = settings) -> None:
            fixtures.scan_worktree(root, settings)

        def ours_git(settings: FixturesSettings = settings) -> None:
            fixtures.scan_commit(root, "HEAD", settings)

        paths = list(hs.files)
        openssl = checked(["openssl", "dgst", "-sha256", *paths], root, ok=(0,))
        sha256sum = checked(["sha256sum", *paths], root, ok=(0,))
        # One rotation of all four: each of ours against each tool, same runs.
        t_dir, t_git, t_ssl, t_sum = alternate_many([ours_dir, ours_git, openssl, sha256sum], runs)
        ours_walls = {"scan_worktree": list(t_dir.wall), "scan_commit": list(t_git.wall)}
        for label, ours in (("scan_worktree", t_dir), ("scan_commit", t_git)):
            for tool, theirs in (("openssl dgst -sha256", t_ssl), ("sha256sum", t_sum)):
                results.pairs.append(
                    Pair(f"hash {hs.name}", ours, theirs, f"fixtures.{label}", tool)
                )
        unit, limit = HASH_TARGETS[hs.name]
        for label, walls in ours_walls.items():
            best = median(walls)
            rate_gb = hs.total_bytes / best / 1e9
            rate_files = len(hs.files) / best
            results.figures.append(
                (
                    f"{hs.name} via {label}",
                    f"{rate_gb:.2f} GB/s, {rate_files:,.0f} files/s "
                    f"({len(hs.files)} files, {hs.total_bytes / 1e6:.0f} MB, median {best:.3f} s)",
                )
            )
            figure = rate_gb if unit == "GB/s" else rate_files
            results.targets.append(Target(f"hash {hs.name}, {label}", figure, limit, unit, False))


# --- flakes, junit -----------------------------------------------------------


def has_flakes_command() -> bool:
    return run_cmd([*PATCHJUDGE, "flakes", "--help"], ROOT) == 0


FLAKES_LEDGER = """\
# Generated by bench/run.py: toolz's own suite for the flakes pair.
[gate]
base = "main"
pythonpath = ["."]

[map]
"*" = []

[suite]
paths = ["toolz/tests"]
"""

FLAKES_PROPERTY = '''\
"""toolz.unique keeps first occurrences, as dict.fromkeys does."""

from hypothesis import given
from hypothesis import strategies as st

from toolz import unique


@given(st.lists(st.integers(min_value=-3, max_value=3)))
def test_unique_keeps_first_occurrences(xs):
    ours = list(unique(xs))
    assert ours == list(dict.fromkeys(xs))
    assert len(ours) == len(set(xs))
'''


def build_flakes_project(work: Path) -> Path:
    repo = unpack(work, FLAKES_PROJECT, work / "flakes-project")
    write_files(
        repo,
        {
            "eval/gate.toml": FLAKES_LEDGER.encode(),
            "eval/properties/test_unique.py": FLAKES_PROPERTY.encode(),
        },
    )
    commit_all(repo, "adopt patchjudge (generated by bench/run.py)")
    git(repo, "checkout", "-q", "-b", "patch")
    (repo / "README.rst").write_text((repo / "README.rst").read_text() + "\npatched\n")
    commit_all(repo, "a small patch")
    return repo


def flakes_pairs(repo: Path, runs: int, count: int) -> list[Pair]:
    """--count 12 with xdist (-n 2) against without, on toolz's suite.

    Until `patchjudge flakes` exists this times the raw pytest command it
    wraps; once it does, the same pair runs `patchjudge flakes --count N`
    with `--workers 2` against `--workers 0`.
    """
    env = clean_env({"PYTHONPATH": ".", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    if has_flakes_command():
        flakes = [*PATCHJUDGE, "flakes", "--count", str(count), "--today", TODAY]
        sides = {
            "--workers 2": checked([*flakes, "--workers", "2"], repo, ok=(0,)),
            "--workers 0": checked([*flakes, "--workers", "0"], repo, ok=(0,)),
        }
        label = f"patchjudge flakes --count {count}"
    else:
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        pytest += ["-p", "pytest_repeat", "--count", str(count)]
        suite = "toolz/tests"
        xdist = [*pytest, "-p", "xdist.plugin", "-n", "2"]
        sides = {
            "-n 2 (xdist, --dist load)": checked([*xdist, suite], repo, (0,), env),
            "-n 2 --dist worksteal": checked(
                [*xdist, "--dist", "worksteal", suite], repo, (0,), env
            ),
            "serial": checked([*pytest, suite], repo, (0,), env),
        }
        label = f"pytest -p pytest_repeat --count {count}"
    names = list(sides)
    timings = alternate_many([sides[n] for n in names], runs, warmup=0)
    serial = timings[-1]
    return [
        Pair(f"flakes: {label}", t, serial, name, names[-1])
        for name, t in zip(names[:-1], timings[:-1], strict=True)
    ]


def junit_child(path: Path, parser: str) -> dict[str, float]:
    """In a fresh process: parse time, tracemalloc peak and max RSS growth."""
    fn = _resolve(parser)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    n = len(fn(path))
    elapsed = time.perf_counter() - start
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    gc.collect()
    tracemalloc.start()
    fn(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "cases": n,
        "seconds": elapsed,
        "peak_mb": peak / 1e6,
        "rss_growth_mb": (rss1 - rss0) / 1e3,
    }


def junit_bench(work: Path, cases: int, runs: int, results: Results) -> None:
    path = work / "junit-100k.xml"
    write_junit(path, cases)
    samples = []
    for _ in range(runs):
        out = sh(
            [
                sys.executable,
                str(Path(__file__)),
                "--junit-child",
                str(path),
                "--parser",
                JUNIT_PARSER,
            ]
        )
        samples.append(json.loads(out.strip().splitlines()[-1]))
    secs = median([s["seconds"] for s in samples])
    peak = median([s["peak_mb"] for s in samples])
    rss = median([s["rss_growth_mb"] for s in samples])
    results.figures.append(
        (
            f"JUnit parse ({JUNIT_PARSER})",
            f"{int(samples[0]['cases']):,} cases, {path.stat().st_size / 1e6:.1f} MB file: "
            f"median {secs:.3f} s, tracemalloc peak {peak:.1f} MB, max-RSS growth {rss:.1f} MB "
            f"({runs} runs)",
        )
    )
    results.targets.append(Target(f"JUnit {cases:,} cases, time", secs, 0.3, "s", True))
    results.targets.append(Target(f"JUnit {cases:,} cases, peak memory", peak, 50, "MB", True))


# --- main -------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break

    def version(argv: Sequence[str]) -> str:
        try:
            return (
                subprocess.run(list(argv), capture_output=True, text=True, check=False)
                .stdout.strip()
                .splitlines()[0]
            )
        except (OSError, IndexError):
            return "?"

    from importlib.metadata import version as dist_version

    dists = ", ".join(
        f"{d} {dist_version(d)}"
        for d in (
            "patchjudge",
            "pytest",
            "hypothesis",
            "pytest-xdist",
            "pytest-repeat",
            "nox",
            "virtualenv",
            "uv",
            "rfc8785",
        )
    )
    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "git": version(["git", "--version"]),
        "openssl": version(["openssl", "version"]),
        "sha256sum": version(["sha256sum", "--version"]),
        "packages": dists,
        "projects under test": "; ".join(
            f"{p.name} {p.version} sdist (sha256 {p.sha256[:16]}...)"
            for p in (PROJECT, FLAKES_PROJECT)
        ),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


@contextlib.contextmanager
def workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        if keep.exists() and any(keep.iterdir()):
            raise SystemExit(f"bench: --workdir {keep} must be a new or empty directory")
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    path = Path(tempfile.mkdtemp(prefix="patchjudge-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


SECTIONS = (
    "gate", "nox", "hash", "flakes", "junit", "sandbox", "boundary", "review", "scale", "compat",
    "cost",
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--runs", type=int, default=5, help="timed runs per pair (default 5)")
    p.add_argument("--nox-runs", type=int, default=3, help="timed runs per nox pair (default 3)")
    p.add_argument("--flakes-runs", type=int, default=3, help="runs of the flakes pair (default 3)")
    p.add_argument("--only", default=",".join(SECTIONS), help=f"comma list of {','.join(SECTIONS)}")
    p.add_argument("--lanes", default=",".join(NOX_LANES), help="lanes for the nox pairs")
    p.add_argument(
        "--venv-lanes", default="fixtures", help="lanes also timed with the virtualenv backend"
    )
    p.add_argument("--quick", action="store_true", help="small data, one run: checks the script")
    p.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    p.add_argument("--workdir", type=Path, help="keep everything here instead of a temp dir")
    p.add_argument("--junit-child", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--parser", default=JUNIT_PARSER, help=argparse.SUPPRESS)
    return p


def v2_sections(only: set[str], work: Path, runs: int, results: Results) -> None:
    """The v2 figures (issues 10-14), each from its own module in bench/."""
    if "sandbox" in only:
        print("bench: the sandbox", flush=True)
        from bench.sandbox import sandbox_bench

        fig = sandbox_bench(runs)
        results.figures += [(f"sandbox (issue 10): {k}", f"{v:.3g}") for k, v in fig.items()]
        results.targets.append(
            Target("sandbox start (bwrap box, `true`)", fig["sandbox_start_ms"], 20, "ms", True)
        )
        results.targets.append(
            Target("gate sandboxed / process", fig["gate_ratio"], 1.15, "x", True)
        )
    if "boundary" in only:
        print("bench: properties out of process vs in process", flush=True)
        from bench.oracle_boundary import oracle_boundary

        results.notes += oracle_boundary(work, runs)
    if "review" in only:
        print("bench: the review's added time", flush=True)
        from bench.review import review_figures

        results.notes.append(review_figures(work, runs))
    if "scale" in only:
        print("bench: a large repository", flush=True)
        from bench.scale import scale_section

        scale_section(work / "scale", runs, results)
    if "compat" in only:
        print("bench: third-party hypothesis suites, bare vs out of process", flush=True)
        from bench.compat import compat_section

        compat_section(work, runs, results)
    if "cost" in only:
        print("bench: issue 20's table, the gate against running the tests", flush=True)
        from bench.cost import cost_section

        cost_section(work / "cost", runs, results)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.junit_child:
        print(json.dumps(junit_child(args.junit_child, args.parser)))
        return 0
    only = set(args.only.split(","))
    unknown = only - set(SECTIONS)
    if unknown:
        print(f"bench: unknown section {sorted(unknown)[0]!r}; known: {', '.join(SECTIONS)}")
        return 2
    runs, nox_runs, flakes_runs = args.runs, args.nox_runs, args.flakes_runs
    if args.quick:
        runs = nox_runs = flakes_runs = 1
    results = Results(machine=machine())
    results.command = "nox -s bench -- " + " ".join(argv if argv is not None else sys.argv[1:])
    free = shutil.disk_usage(tempfile.gettempdir()).free
    results.notes.append(f"free space in {tempfile.gettempdir()} at start: {free / 1e9:.0f} GB")
    with workdir(args.workdir) as work:
        if only & {"gate", "nox"}:
            print("bench: building the project repository", flush=True)
            repo, fx = build_project(work, fixtures=300)
            manifest = work / "fixtures.sha256"
            manifest.write_text(sha256_manifest(fx))
            base_tree = work / "base-checkout"
            if not base_tree.exists():
                git(repo, "worktree", "add", "-q", "--detach", str(base_tree), "main")
        if "gate" in only:
            print("bench: gate vs bare", flush=True)
            results.pairs += gate_pairs(repo, manifest, base_tree, runs)
            verdict = json.loads((repo / ".patchjudge" / "verdict.json").read_text())
            statuses = {k: v["status"] for k, v in verdict["lanes"].items()}
            results.notes.append(
                f"gate verdict on the bench patch: {verdict['verdict']}; lanes {statuses}"
            )
            narrow, surface = results.pairs[-2:]
            results.targets.append(Target("gate / bare equivalent", narrow.ratio, 1.15, "x", True))
            results.targets.append(
                Target("gate / bare incl. surface collection", surface.ratio, 1.15, "x", True)
            )
        if "nox" in only:
            print("bench: nox sessions vs direct", flush=True)
            lanes = [x for x in args.lanes.split(",") if x]
            venv_lanes = [x for x in args.venv_lanes.split(",") if x]
            nox = nox_pairs(repo, work / "nox-envs", nox_runs, lanes, venv_lanes)
            results.pairs += nox
            for label, limit in (("warm -R", 0.5), ("cold uv", 1.0), ("cold virtualenv", 1.0)):
                worst = max((p for p in nox if p.name.endswith(label)), key=lambda p: p.overhead_s)
                results.targets.append(
                    Target(
                        f"nox session over direct, {label} (worst: {worst.name})",
                        worst.overhead_s,
                        limit,
                        "s",
                        True,
                    )
                )
        if "hash" in only:
            print("bench: hashing", flush=True)
            hash_root = work / "hash"
            hash_root.mkdir(exist_ok=True)
            try:
                sets = make_hash_data(hash_root, args.quick)
                hash_benchmarks(hash_root, sets, runs, results)
            finally:
                shutil.rmtree(hash_root, ignore_errors=True)
        if "flakes" in only:
            print("bench: flakes, xdist vs serial", flush=True)
            pairs = flakes_pairs(build_flakes_project(work), flakes_runs, 12)
            results.pairs += pairs
            best = min(pairs, key=lambda p: p.ratio)
            results.targets.append(
                Target(f"flakes xdist / serial ({best.ours_label})", best.ratio, 0.75, "x", True)
            )
        if "junit" in only:
            print("bench: junit", flush=True)
            junit_bench(work, 10_000 if args.quick else 100_000, runs, results)
        v2_sections(only, work, runs, results)
    results.notes.append("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    previous = args.out.read_text() if args.out.exists() else ""
    args.out.write_text(render(results, kept_notes(previous)))
    for t in results.targets:
        print(t.line())
    print(f"bench: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
