"""The sandbox's cost (issue 10): bwrap starting `true`, and the gate with and without the box.

`python bench/sandbox.py [--runs N]` in a venv with patchjudge installed
prints the figures as JSON; `sandbox_bench(runs)` returns them for
bench/run.py. Nothing here asserts a timing. Target: sandbox start <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from patchjudge.boundary import sandbox

LEDGER = """
[gate]
base = "main"
isolation = "process"

[map]
"src/**" = ["properties", "freeze"]
"tests/**" = ["freeze"]
"*.md" = []

[properties]
max_examples = 200
"""

CODE = {
    "src/shop/__init__.py": "",
    "src/shop/cart.py": """
        def total(prices, discount=0):
            gross = sum(prices)
            return max(gross - discount, 0)


        def split(amount, ways):
            base, extra = divmod(amount, ways)
            return [base + (1 if i < extra else 0) for i in range(ways)]
    """,
    "tests/test_cart.py": """
        from shop.cart import split, total


        def test_total():
            assert total([1, 2, 3]) == 6


        def test_discount():
            assert total([5], discount=10) == 0


        def test_split():
            assert split(10, 3) == [4, 3, 3]
    """,
    "eval/properties/test_cart.py": """
        from hypothesis import given, strategies as st

        from shop.cart import split, total

        money = st.integers(min_value=0, max_value=10**6)


        @given(st.lists(money), money)
        def test_total_never_negative(prices, discount):
            assert total(prices, discount) >= 0


        @given(money, st.integers(min_value=1, max_value=50))
        def test_split_adds_up(amount, ways):
            parts = split(amount, ways)
            assert sum(parts) == amount
            assert max(parts) - min(parts) <= 1
    """,
    "eval/flakes.freeze.toml": "# known flakes\n",
    "eval/gate.toml": LEDGER,
    "README.md": "# shop\n",
}


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo.parent),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def build_repo(root: Path) -> Path:
    """A small real project on main and a one-line patch on a branch."""
    repo = root / "shop"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for rel, text in CODE.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "patch")
    cart = repo / "src/shop/cart.py"
    cart.write_text(cart.read_text().replace("gross = sum(prices)", "gross = sum(prices)  # ok"))
    _git(repo, "commit", "-q", "-am", "patch")
    return repo


def _time_ms(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm the page cache
    return statistics.median(_time_ms(fn) for _ in range(runs))


def _run(argv: Sequence[str], cwd: Path | None = None, env: Mapping[str, str] | None = None) -> int:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    return done.returncode


def sandbox_bench(runs: int = 5, start_runs: int = 50) -> dict[str, float]:
    """Median milliseconds: bare `true`, boxed `true`, and the gate per isolation."""
    if sandbox.probe() is not None:
        raise SystemExit(f"bench/sandbox.py: no sandbox here: {sandbox.probe()}")
    with tempfile.TemporaryDirectory(prefix="patchjudge-bench-sandbox-") as tmp:
        root = Path(tmp)
        (root / "tree").mkdir()
        (root / "home").mkdir()
        box = sandbox.Box(tree=root / "tree", home=root / "home")
        true = "/usr/bin/true" if Path("/usr/bin/true").exists() else "/bin/true"
        boxed = sandbox.wrap(box, [true])
        repo = build_repo(root)
        gate = [sys.executable, "-m", "patchjudge", "gate", "--base", "main"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GIT_"))}

        def gate_with(*extra: str) -> Callable[[], object]:
            def once() -> None:
                code = _run([*gate, *extra], cwd=repo, env=env)
                if code != 0:
                    raise SystemExit(f"bench/sandbox.py: gate {' '.join(extra)} exited {code}")

            return once

        figures = {
            "true_ms": _median_ms(lambda: _run([true]), start_runs),
            "sandbox_true_ms": _median_ms(lambda: _run(boxed), start_runs),
        }
        # Alternate the two gates so load on a shared machine hits both alike.
        process, boxed_gate = [], []
        gate_with()()
        gate_with("--isolation", "sandbox")()
        for _ in range(runs):
            process.append(_time_ms(gate_with()))
            boxed_gate.append(_time_ms(gate_with("--isolation", "sandbox")))
    figures["sandbox_start_ms"] = figures["sandbox_true_ms"] - figures["true_ms"]
    figures["gate_process_ms"] = statistics.median(process)
    figures["gate_sandbox_ms"] = statistics.median(boxed_gate)
    figures["gate_ratio"] = figures["gate_sandbox_ms"] / figures["gate_process_ms"]
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="gate runs per isolation")
    args = parser.parse_args(argv)
    print(json.dumps(sandbox_bench(args.runs), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
