"""Two hosts for the replay flow: the developer's repo and a trusted clone of it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.helpers import LEDGER, Result, cli, commit, example_repo, git, write

REPLAY_LEDGER = LEDGER.replace(
    '"src/**" = ["properties", "freeze"]', '"src/**" = ["properties", "freeze", "replay"]'
).replace('"tests/**" = ["freeze"]', '"tests/**" = ["freeze", "replay"]')


def ledger(*, required: bool = True, max_slice: int = 3) -> str:
    return REPLAY_LEDGER + (
        "\n[replay]\n"
        f"required = {str(required).lower()}\n"
        f"max_slice = {max_slice}\n"
        'nodeids = ["tests/test_host.py"]\n'
        'marker = "host_dependent"\n'
        'private = ["*::test_secret_*"]\n'
    )


HOST_TESTS = """
from calc import total


def test_total_on_host():
    assert total([2, 2]) == 4
"""

MARKED_TESTS = """
import pytest

from calc import total


def test_empty():
    assert total([]) == 0


@pytest.mark.host_dependent
def test_clock():
    assert total([1]) == 1
"""

CONFTEST = """
def pytest_configure(config):
    config.addinivalue_line("markers", "host_dependent: only a trusted host can decide it")
"""

FROZEN_ROW = """
[[freeze]]
nodeid = "tests/test_host.py::test_flaky"
owner = "qa-rotation"
reason = "races the sandbox clock"
created = 2026-11-24
expires = 2026-12-08
fail_count = 3
runs = 12
required_properties = ["eval/properties/test_total.py::test_total_never_negative"]
"""

FLAKY_TEST = """

def test_flaky():
    assert False, "the sandbox clock again"
"""

SLICE = "tests/test_calc.py::test_clock\ntests/test_host.py::test_total_on_host\n"


def replay_repo(
    tmp_path: Path,
    *,
    frozen: bool = False,
    required: bool = True,
    isolation: str | None = None,
    extra_ledger: str = "",
    review_mutants: int = 2,
) -> Path:
    """The example project with host-dependent tests; `frozen` adds a frozen, failing one."""
    text = ledger(required=required).replace(
        "[gate]\n", f'[gate]\nisolation = "{isolation}"\n' if isolation else "[gate]\n", 1
    )
    assert "review_mutants = 2\n" in text, "tests/helpers.py's LEDGER no longer sets it"
    text = text.replace("review_mutants = 2\n", f"review_mutants = {review_mutants}\n", 1)
    files: dict[str, str | bytes | None] = {
        "eval/gate.toml": text + extra_ledger,
        "tests/conftest.py": CONFTEST,
        "tests/test_calc.py": MARKED_TESTS,
        "tests/test_host.py": HOST_TESTS + (FLAKY_TEST if frozen else ""),
    }
    if frozen:
        files["eval/flakes.freeze.toml"] = FROZEN_ROW
    return example_repo(tmp_path, **files)


def patch(repo: Path, files: dict[str, str | bytes | None] | None = None) -> str:
    write(repo, files or {"src/calc/__init__.py": "def total(xs):\n    return sum(xs)  # faster\n"})
    return commit(repo, "the patch")


def clone(source: Path, dest: Path) -> Path:
    """A second host: its own clone, the patch checked out, main as origin/main."""
    git(source.parent, "clone", "-q", str(source), str(dest))
    return dest


def make_slice(repo: Path, *args: str) -> Result:
    return cli(repo, "replay", "slice", "--base", "main", *args)


def run_slice(host: Path, slice_path: Path, *args: str) -> Result:
    return cli(host, "replay", "run", "--slice", str(slice_path), "--base", "origin/main", *args)


def check(repo: Path, receipt: Path, *args: str) -> Result:
    return cli(repo, "replay", "check", "--base", "main", "--receipt", str(receipt), *args)


def receipt_of(host: Path) -> Path:
    return host / ".patchjudge" / "receipt.json"


def edit_receipt(source: Path, dest: Path, **changes: Any) -> Path:
    """A copy of a receipt with some keys rewritten (None deletes the key)."""
    doc = json.loads(source.read_text())
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    dest.write_text(json.dumps(doc, indent=2) + "\n")
    return dest


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
