"""The suite's hypothesis settings: no deadlines (a loaded CI box is slow, not wrong),
and in CI a derandomized search, so a red run is a change in the code, not in luck."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# The gate's guard watches patchjudge's own package: a test's subprocess that
# wrote bytecode there while another test's gate ran would read as tampering.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

settings.register_profile("patchjudge-suite", deadline=None, print_blob=True)
settings.register_profile(
    "patchjudge-ci", parent=settings.get_profile("patchjudge-suite"), derandomize=True
)
settings.load_profile("patchjudge-ci" if os.environ.get("CI") else "patchjudge-suite")


@pytest.fixture(scope="session")
def judge_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """patchjudge's wheel, built once per xdist worker: tests only read it (init copies it)."""
    from tests.init_helpers import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


def _cost(item: pytest.Item) -> int:
    """A rough rank of a test's wall time: venvs and third-party suites, scenarios, units."""
    if item.get_closest_marker("slow") or item.get_closest_marker("compat"):
        return 0
    return 1 if "scenarios" in item.path.parts else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Longest first (issue 20): xdist hands tests out in this order, so the minute-long
    # ones start early on both workers and the seconds-long units fill in at the end,
    # instead of one worker finishing a 70 s test alone. Stable: a file keeps its order.
    items.sort(key=_cost)
