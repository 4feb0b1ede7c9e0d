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
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import run as base  # noqa: E402  (the path above makes `bench` importable)

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


def gate_argv() -> list[str]:
    return [*base.PATCHJUDGE, "gate", *base.GATE_ARGS]


def gate_once(repo: Path) -> float:
    started = time.perf_counter()
    code = base.run_cmd(gate_argv(), repo)
    if code not in (0, 1, 3):
        raise SystemExit(f"bench: patchjudge gate exited {code} in {repo}")
    return time.perf_counter() - started


def peak_rss_mib(argv: Sequence[str], cwd: Path) -> float:
    """The largest resident set of the process tree's biggest member, in MiB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run(
        list(argv),
        cwd=cwd,
        env=base.clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024


def verdict_of(repo: Path) -> Mapping[str, object]:
    doc: Mapping[str, object] = json.loads((repo / ".patchjudge" / "verdict.json").read_text())
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--data", type=int, default=DATA_FILES)
    p.add_argument("--build-only", action="store_true")
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    small = args.workdir / "small"
    large = args.workdir / "large"
    if not small.exists():
        build_repo(args.workdir, "small", data=0)
    if not large.exists():
        build_repo(args.workdir, "large", data=args.data)
    if args.build_only:
        return 0
    for repo in (small, large):
        print(repo.name, f"{gate_once(repo):.2f} s", verdict_of(repo)["verdict"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
