"""Issue 19's nox figure: cold `nox -s gate` against `patchjudge gate`, on iniconfig adopted.

`python bench/nox_gate.py --workdir DIR [--runs 3] [--project pluggy]` adopts
iniconfig 2.3.1 (or pluggy 1.6.0, a larger suite) as
tests/scenarios/test_real_projects.py does (init with no edit, committed, a
benign patch on top), makes the code's venv a user's CI would make for
`--python`, then times, alternated round by round:

- `nox -s gate` cold (`.nox` removed before each run);
- `patchjudge gate`;
- `patchjudge gate --python <the code's venv>` (what every nox lane passes).

CPU is the whole process tree's (`wait4` of the command), which
leaves out what ran in a box (the boxed build's and pytests' CPU is not in
it: docs/bench.md, session 12, has a sampled figure that holds them); wall is
given with the load average. `--judge-src TREE --adopt-only`, run by an
interpreter holding that tree's patchjudge, adopts with another judge
(another branch's init and wheel) for an A/B pair. Needs the source tree (it
reuses the tests' helpers) and network for the pinned sdist. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import init_helpers  # noqa: E402  (the path above makes `tests` importable)
from tests.helpers import cli, commit, git  # noqa: E402
from tests.scenarios import test_real_projects as real  # noqa: E402

ARGS = ("--base", "main", "--today", "2026-12-01")


# A larger suite than either (bench/run.py's project: 664 tests, flit_core's build).
MORE_ITERTOOLS = (
    "more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6"
)  # fmt: skip
MORE_BENIGN = (
    "more_itertools/more.py",
    "def chunked(iterable, n, strict=False):\n",
    "def chunked(iterable, n, strict=False):  # lists of n\n",
)


def _more_itertools_tree(dest: Path) -> Path:
    tree = init_helpers.sdist(dest, *MORE_ITERTOOLS)
    (tree / "PKG-INFO").unlink(missing_ok=True)  # as its authors commit it
    return tree


PROJECTS = {
    "iniconfig": (real._iniconfig_tree, real.BENIGN),
    "pluggy": (real._pluggy_tree, real.PLUGGY_BENIGN),
    "more-itertools": (_more_itertools_tree, MORE_BENIGN),
}


def adopt(work: Path, project: str = "iniconfig", src: Path = ROOT) -> tuple[Path, Path]:
    """The project adopted with `src`'s judge, a benign patch on `patch`; (repo, code python)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    wheel = init_helpers.build_wheel(work / "wheel", src)
    tree, benign = PROJECTS[project]
    repo = init_helpers.repo_from_tree(tree(work / "sdist"), work / project)
    result = cli(repo, "init", "--base", "main", "--patchjudge-spec", str(wheel))
    if result.code != 0:
        raise SystemExit(f"bench: init failed: {result.err.strip()}")
    commit(repo, "Adopt patchjudge")
    git(repo, "checkout", "-q", "-b", "patch")
    real._edit(repo, *benign)
    python = real._code_venv(repo, work / "code")
    real._install_head(repo, python)
    return repo, python


def timed(argv: Sequence[str], repo: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit code) of one run."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    return (
        time.monotonic() - start,
        usage.ru_utime + usage.ru_stime,
        os.waitstatus_to_exitcode(status),
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--project", choices=sorted(PROJECTS), default="iniconfig")
    p.add_argument("--judge-src", type=Path, default=ROOT, help="the judge's tree (its src/)")
    p.add_argument("--adopt-only", action="store_true", help="adopt, print the repo, time nothing")
    args = p.parse_args(argv)
    repo, code = adopt(args.workdir.resolve(), args.project, args.judge_src.resolve())
    if args.adopt_only:
        print(repo)
        return 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "NOX", "GITHUB_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    py = sys.executable
    commands = {
        "nox -s gate (cold)": [py, "-m", "nox", "--no-color", "-s", "gate", "--", *ARGS],
        "patchjudge gate": [py, "-m", "patchjudge", "gate", *ARGS],
        "patchjudge gate --python": [py, "-m", "patchjudge", "gate", *ARGS, "--python", str(code)],
    }
    names = list(commands)
    found: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(args.runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            shutil.rmtree(repo / ".nox", ignore_errors=True)
            load = os.getloadavg()[0]
            wall, cpu, code_ = timed(commands[name], repo, env)
            print(f"round {r} {name}: exit {code_}, {wall:.2f} s wall, {cpu:.2f} CPU-s, "
                  f"load {load:.1f}", flush=True)  # fmt: skip
            found[name].append((wall, cpu))
    med = {n: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for n, v in found.items()}  # fmt: skip
    for name, (wall, cpu) in med.items():
        print(f"{name}: median {wall:.2f} s wall, {cpu:.2f} CPU-s")
    nox = med[names[0]]
    for name in names[1:]:
        print(f"nox / {name}: {nox[0] / med[name][0]:.2f}x wall, {nox[1] / med[name][1]:.2f}x CPU")
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
