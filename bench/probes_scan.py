"""What a whole-file probe scan costs, this checkout's `probes.py` against a revision's.

`python bench/probes_scan.py [--rev main] [--runs 7]` scans three stdlib modules
(`_pydecimal`, `typing`, `logging`) with each `probes.py`, alternately, and prints the
best CPU time (`time.process_time`) of `--runs` scans for each, with the hits found.
A gate scans only the top-level statements holding a changed line (issue 20), so a
whole file is the worst case. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from types import ModuleType

MODULES = ("_pydecimal.py", "typing.py", "logging/__init__.py")
HERE = Path(__file__).resolve().parent.parent


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _best(module: ModuleType, source: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        module.scan(source)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rev", default="main")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    old_text = subprocess.run(
        ["git", "-C", str(HERE), "show", f"{args.rev}:src/patchjudge/probes.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as scratch:
        old_path = Path(scratch) / "probes_old.py"
        old_path.write_text(old_text)
        old = _load(old_path, "patchjudge.probes_old")
    import patchjudge.probes as new

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for name in MODULES:
        source = (stdlib / name).read_text()
        for _ in range(2):
            for label, module in ((args.rev, old), ("this", new)):
                hits = len(module.scan(source))
                ms = _best(module, source, args.runs) * 1000
                print(f"{name:22} {label:6} {ms:6.0f} ms  {hits} hits")


if __name__ == "__main__":
    main()
