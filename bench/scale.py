"""Scale (issue 12): the gate's cost on a large repository against the same code without the bulk.

`python bench/scale.py` (or `scale_section(...)` from bench/run.py) builds
two repositories from the pinned more-itertools sdist bench/run.py uses:
the same library, judge and one-line patch, one of them with 40,000 tracked
data files mapped to `[]` that no test reads. It times `patchjudge gate` on
both, alternated (median ratio; goal <= 1.5x), measures the gate's peak
memory on the large one, times the compiled path classification (100,000
paths against 50 patterns; goal <= 0.5 s) and the flakes pair against a bare
`pytest -p no:cacheprovider --count 12 -n 2` (goal <= 1.08x). Nothing here
asserts a timing; the test suite calls `build_large` with a few thousand
files to check the verdict.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as base  # noqa: E402  (the path above makes `bench` importable)
from bench.run import Target  # noqa: E402

DATA_FILES = 40_000
DATA_BYTES = 7_500  # ~300 MB over 40,000 files, as the issue measured
DATA_ROOT = "data"


def data_files(count: int, size: int, seed: int = base.SEED) -> dict[str, bytes]:
    """Pure: `count` files of `size` pseudo-random bytes, 200 to a directory."""
    rng = random.Random(seed)
    return {
        f"{DATA_ROOT}/shard{i // 200:04d}/item{i:06d}.bin": rng.randbytes(size)
        for i in range(count)
    }


def build_repo(
    work: Path,
    name: str,
    *,
    data: int,
    data_bytes: int = DATA_BYTES,
    fixtures: int = 300,
    install: Sequence[str] = (".",),
    unpacked: Path | None = None,
) -> Path:
    """The library on `main` with the judge (and `data` bulk files), a one-line patch on `patch`.

    `unpacked` reuses a copy of the sdist already unpacked (as released, no .git).
    """
    import shutil

    dest = work / name
    if unpacked is None:
        unpacked = work / "sdist"
        if not unpacked.exists():
            repo = base.unpack(work, base.PROJECT, unpacked)
            shutil.rmtree(repo / ".git")
    shutil.copytree(unpacked, dest)
    base.git(dest, "init", "-q", "-b", "main")
    files = base.eval_tree(list(install), dt.date.fromisoformat(base.TODAY), fixtures)
    if data:
        files.update(data_files(data, data_bytes))
    base.write_files(dest, files)
    base.commit_all(dest, f"the library, its judge and {data} data files")
    base.git(dest, "checkout", "-q", "-b", "patch")
    with (dest / base.PACKAGE / "more.py").open("a") as fh:
        fh.write("\n\ndef bench_patch_marker():\n    return 1\n")
    base.commit_all(dest, "a one-line patch")
    return dest


def pj_env(src: Path | None) -> dict[str, str]:
    """The environment a timed command runs in; `src` times another patchjudge source tree."""
    return base.clean_env({"PYTHONPATH": str(src)} if src is not None else None)


def gate_fn(repo: Path, src: Path | None) -> Callable[[], None]:
    return base.checked([*base.PATCHJUDGE, "gate", *base.GATE_ARGS], repo, (0, 1, 3), pj_env(src))


def peak_rss_mib(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> float:
    """The largest resident set of the command or any process it waited for, in MiB."""
    probe = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip()) / 1024


def verdict_of(repo: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((repo / ".patchjudge" / "verdict.json").read_text())
    return doc


# --- classification -----------------------------------------------------------


def classification_workload(
    paths: int = 100_000, patterns: int = 50, seed: int = base.SEED
) -> tuple[tuple[str, ...], list[str]]:
    """Pure: `patterns` ledger-like globs (a catch-all last) and `paths` repository paths."""
    rng = random.Random(seed)
    dirs = ["src", "lib", "tests", "docs", "eval", "data", "vendor", "pkg", "tools", "web"]
    globs = [f"{d}/{s}/**" for d in dirs for s in ("core", "io", "gen")]
    globs += ["*.md", "*.rst", "noxfile.py", "constraints/**", ".github/workflows/**", "eval/**"]
    globs += ["docs/**", "tests/fixtures/**", "tests/**", "src/**", "**/*.json", "a/**/b"]
    globs += ["*.cfg", "setup.py", "pyproject.toml", "vendor/**", "lib/**", "pkg/**", "tools/**"]
    globs = [*globs[: patterns - 1], "*"]
    names = [*dirs, "core", "io", "gen", "x", "y"]
    exts = [".py", ".md", ".json", ".bin", ".txt", ""]
    out = [
        "/".join(rng.choice(names) for _ in range(rng.randint(1, 6))) + rng.choice(exts)
        for _ in range(paths)
    ]
    return tuple(globs), out


def classification_bench(runs: int) -> dict[str, float]:
    """Seconds to classify 100,000 paths: compiled matcher, and one pathspec per pattern."""
    from patchjudge.paths import Globs, matches

    patterns, paths = classification_workload()
    compiled: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        g = Globs(patterns)  # compiling is part of the cost
        found = [g.first(p) for p in paths]
        compiled.append(time.perf_counter() - started)
    sample = paths[:5000]
    started = time.perf_counter()
    ref = [next((i for i, q in enumerate(patterns) if matches(q, p)), None) for p in sample]
    per_pattern = (time.perf_counter() - started) * len(paths) / len(sample)
    if ref != found[: len(sample)]:
        raise SystemExit("bench: the compiled matcher disagrees with pathspec")
    return {"compiled_s": base.median(compiled), "per_pattern_s": per_pattern}


# --- flakes -------------------------------------------------------------------


def flakes_pair(repo: Path, runs: int, src: Path | None, count: int = 12) -> base.Pair:
    """`patchjudge flakes --count N` against a bare `pytest --count N -n 2` of the same suite."""
    ours = base.checked(
        [*base.PATCHJUDGE, "flakes", "--count", str(count), "--today", base.TODAY],
        repo,
        (0,),
        pj_env(src),
    )
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    bare = base.checked(
        [*pytest, "--count", str(count), "-n", "2", "toolz/tests"],
        repo,
        (0,),
        base.clean_env({"PYTHONPATH": "."}),
    )
    mine, theirs = base.alternate(ours, bare, runs)
    return base.Pair(
        f"flakes --count {count}", mine, theirs, "patchjudge flakes", "pytest --count 12 -n 2"
    )


# --- the section ---------------------------------------------------------------


def scale_section(
    work: Path, runs: int, results: base.Results, *, data: int = DATA_FILES, src: Path | None = None
) -> None:
    """Everything issue 12 measures, into `results` (bench/run.py calls this)."""
    small, large = work / "small", work / "large"
    if not small.exists():
        build_repo(work, "small", data=0)
    if not large.exists():
        build_repo(work, "large", data=data)
    ours, theirs = base.alternate(gate_fn(large, src), gate_fn(small, src), runs)
    pair = base.Pair(
        f"gate, {data} data files", ours, theirs, "with the data", "the same code without"
    )
    results.pairs.append(pair)
    results.targets.append(Target(f"gate {data} data files / none", pair.ratio, 1.5, "x", True))
    for name, repo in (("large", large), ("small", small)):
        doc = verdict_of(repo)
        statuses = {k: v["status"] for k, v in doc["lanes"].items()}
        results.notes.append(f"gate verdict on the {name} repository: {doc['verdict']}; {statuses}")
    peak = peak_rss_mib([*base.PATCHJUDGE, "gate", *base.GATE_ARGS], large, pj_env(src))
    results.figures.append(("gate peak RSS on the large repository", f"{peak:.0f} MiB"))
    cls = classification_bench(max(runs, 3))
    results.figures.append(
        (
            "classify 100,000 paths against 50 globs",
            f"compiled {cls['compiled_s']:.3f} s, one pathspec per pattern "
            f"{cls['per_pattern_s']:.2f} s (extrapolated from 5,000)",
        )
    )
    results.targets.append(
        Target("classify 100,000 paths x 50 globs", cls["compiled_s"], 0.5, "s", True)
    )
    flakes_repo = work / "flakes-project"
    if not flakes_repo.exists():
        base.build_flakes_project(work)
    fp = flakes_pair(flakes_repo, runs, src)
    results.pairs.append(fp)
    results.targets.append(Target("flakes / bare pytest -n 2", fp.ratio, 1.08, "x", True))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--workdir", type=Path, required=True, help="kept: the repositories are reused")
    p.add_argument("--data", type=int, default=DATA_FILES)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--src", type=Path, help="time this patchjudge source tree instead (before)")
    p.add_argument("--out", type=Path, help="write the report here (default: print it)")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = base.Results(machine=base.machine())
    results.command = "python bench/scale.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    scale_section(args.workdir, args.runs, results, data=args.data, src=args.src)
    text = base.render(results)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
