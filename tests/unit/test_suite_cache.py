"""The suite's own speed: one judge's cache a run, shared by its xdist workers
(tests/conftest.py), never one a user's shell or an outer run left in the environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SUITE_CACHE, suite_cache


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        # A worker of this run: the controller's, inherited.
        ({"PYTEST_XDIST_WORKER": "gw1", SUITE_CACHE: "/tmp/c"}, "/tmp/c"),
        # The controller, or a run without xdist: it makes its own.
        ({}, None),
        # A value in a shell is never the suite's: only a worker inherits.
        ({SUITE_CACHE: "/home/me/.cache/patchjudge"}, None),
        ({"PYTEST_XDIST_WORKER": "gw0"}, None),
        ({"PYTEST_XDIST_WORKER": "gw0", SUITE_CACHE: ""}, None),
        # Relative to what? Refused, as the judge refuses one (cache.placement).
        ({"PYTEST_XDIST_WORKER": "gw0", SUITE_CACHE: "cache"}, None),
    ],
)
def test_a_worker_shares_its_controllers_cache_and_nothing_else_is_reused(
    environ: dict[str, str], expected: str | None
) -> None:
    assert suite_cache(environ) == expected


def test_an_xdist_worker_runs_its_gates_on_the_cache_its_controller_made() -> None:
    cache = Path(os.environ["PATCHJUDGE_CACHE_DIR"])
    assert str(cache) == os.environ[SUITE_CACHE]
    assert cache.is_dir()
    maker = int(cache.name.removeprefix("patchjudge-test-cache-").split("-")[0])
    # execnet starts each worker as a child of the controller.
    assert maker == (os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid())
