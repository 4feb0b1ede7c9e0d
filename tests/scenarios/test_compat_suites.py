"""Third-party hypothesis suites: what passes bare passes out of process, or says why (issue 17).

Each suite in tests/compat_helpers.py SUITES is fetched by pip (pinned
version and sdist SHA-256), adopted as a user would (its hypothesis files
under eval/properties/), and run bare and through `patchjudge properties`.
The committed tests/compat/known-differences.json is a ratchet both ways: a
test that passes bare and fails out of process must be listed with its
reason, and a listed test that passes now must be dropped. Regenerate it with
`python -m tests.compat_helpers --update` and review the diff.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import compat_helpers as compat
from tests.attack_helpers import require_sandbox
from tests.helpers import built_once, shared_dir

pytestmark = pytest.mark.compat


@pytest.fixture(scope="session")
def sdist_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_dir(tmp_path_factory)


def fetched(suite: compat.Suite, cache: Path) -> Path:
    """The sdist, or a visible skip off CI; in CI a failed download fails the test."""
    try:
        # Once for the run's workers; fetch checks the hash of what it returns.
        return built_once(cache, f"compat-{suite.name}", lambda d: compat.fetch(suite, d))
    except (subprocess.CalledProcessError, RuntimeError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        message = f"cannot fetch {suite.name}=={suite.version}: {detail.strip()[-300:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize("suite", compat.SUITES, ids=lambda s: s.name)
def test_what_passes_bare_passes_out_of_process_or_is_listed(
    suite: compat.Suite, sdist_cache: Path, tmp_path: Path
) -> None:
    require_sandbox()
    repo = compat.adopt(suite, fetched(suite, sdist_cache), tmp_path / suite.name)
    bare, _ = compat.run_bare(suite, repo, tmp_path)
    oop, _, report = compat.run_oop(repo)
    details = report["details"]
    # A file whose base AST needs the code in its own process (a library decorator or
    # base class on a class it defines, weakref) runs in process, with its reason
    # (issue 17); every other file ran out of process.
    assert set(details["in_process"]) == set(details["in_process_why"]), details
    assert all(details["in_process_why"].values()), details
    # The bare run is the reference: it must have run the suite's tests.
    assert len(bare.passed()) >= 3, bare.status
    problems = compat.ratchet(
        compat.differences(bare, oop), compat.load_known().get(suite.name, {})
    )
    assert not problems, "\n".join(
        [*problems, "(python -m tests.compat_helpers --update rewrites the list: review it)"]
    )


def test_every_suite_has_its_list_and_no_other() -> None:
    assert sorted(compat.load_known()) == sorted(s.name for s in compat.SUITES)
