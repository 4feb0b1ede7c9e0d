"""pathfilter keeps the base's collection in the judge's cache, never the head's (issue 20).

The base is the same commit run after run, so its collection is read back
while nothing it depends on moved; the head's is the patch's and is always
collected. An entry the judge did not write intact is never believed: a
forged "the base had no tests" would let a patch delete them unseen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from patchjudge import basecache, cache
from tests.helpers import LEDGER, Result, cli, commit, example_repo, git, write


def _pathfilter(repo: Path, store: Path) -> Result:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GITHUB_") and k != "PATCHJUDGE_SEED_KEY"
    }
    env["PATCHJUDGE_CACHE_DIR"] = str(store)
    return cli(repo, "pathfilter", "--base", "main", env=env)


def _origin(result: Result, repo: Path) -> str:
    details = result.report(repo, "pathfilter")["details"]
    assert details["isolation"] == "sandbox", details
    return str(details["cache"]["base_collection"])


def _entries(store: Path) -> list[Path]:
    return sorted((store / basecache.KIND).glob("*.json"))


def test_the_base_is_collected_once_and_the_head_every_run(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    store = tmp_path / "cache"
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    first = _pathfilter(repo, store)
    assert first.code == 0, first.out + first.err
    assert _origin(first, repo) == "miss"
    assert len(_entries(store)) == 1
    again = _pathfilter(repo, store)
    assert again.code == 0 and _origin(again, repo) == "hit"
    assert again.report(repo, "pathfilter")["details"]["visible_tests"] == {"base": 2, "head": 2}
    # Same base, a new head that deletes a test: the head is collected, not remembered.
    write(
        repo,
        {
            "tests/test_calc.py": "from calc import total\n\n\ndef test_empty():\n    assert total([]) == 0\n"
        },
    )
    commit(repo)
    deleted = _pathfilter(repo, store)
    assert _origin(deleted, repo) == "hit"
    assert deleted.code == 1
    assert (
        "visible test gone: tests/test_calc.py::test_two"
        in deleted.report(repo, "pathfilter")["reasons"]
    )


def test_a_new_base_or_new_suite_settings_collect_again(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    store = tmp_path / "cache"
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    assert _origin(_pathfilter(repo, store), repo) == "miss"
    # The base moves on (a new test on main): another tree, another entry.
    git(repo, "checkout", "-q", "main")
    write(repo, {"tests/test_more.py": "def test_more():\n    assert True\n"})
    commit(repo)
    git(repo, "checkout", "-q", "patch")
    git(repo, "merge", "-q", "--no-edit", "main")
    moved = _pathfilter(repo, store)
    assert moved.code == 0, moved.out + moved.err
    assert _origin(moved, repo) == "miss"
    assert moved.report(repo, "pathfilter")["details"]["visible_tests"]["base"] == 3
    # The judge's settings change at the base (the suite's deadline): collected again.
    git(repo, "checkout", "-q", "main")
    write(
        repo,
        {"eval/gate.toml": LEDGER.replace("[suite]\ntimeout_s = 60", "[suite]\ntimeout_s = 90")},
    )
    commit(repo)
    git(repo, "checkout", "-q", "patch")
    git(repo, "merge", "-q", "--no-edit", "main")
    assert _origin(_pathfilter(repo, store), repo) == "miss"
    assert len(_entries(store)) == 3
    assert _origin(_pathfilter(repo, store), repo) == "hit"


def test_a_damaged_entry_is_collected_again_and_a_deleted_test_still_seen(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    store = tmp_path / "cache"
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    assert _origin(_pathfilter(repo, store), repo) == "miss"
    [entry] = _entries(store)
    # The entry rewritten to say the base collected nothing, its digest left as it was:
    # believed, the deleted test below would have had no base to be missing from.
    doc = json.loads(entry.read_bytes())
    kept = json.loads(cache.decode(entry.read_bytes(), doc["key"]) or b"{}")
    kept["run"]["collected"] = {}
    forged = cache.encode(doc["key"], json.dumps(kept).encode())
    forged_doc = json.loads(forged)
    forged_doc["sha256"] = doc["sha256"]
    entry.write_text(json.dumps(forged_doc))
    write(
        repo,
        {
            "tests/test_calc.py": "from calc import total\n\n\ndef test_empty():\n    assert total([]) == 0\n"
        },
    )
    commit(repo)
    result = _pathfilter(repo, store)
    assert _origin(result, repo) == "miss"
    assert result.code == 1
    assert (
        "visible test gone: tests/test_calc.py::test_two"
        in result.report(repo, "pathfilter")["reasons"]
    )
    # Recomputed and written whole again: the next run believes the judge's own entry.
    assert json.loads(cache.decode(entry.read_bytes(), doc["key"]) or b"{}")["run"]["collected"]
    assert _origin(_pathfilter(repo, store), repo) == "hit"


def test_an_unreadable_entry_is_collected_again(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    store = tmp_path / "cache"
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    assert _origin(_pathfilter(repo, store), repo) == "miss"
    [entry] = _entries(store)
    entry.write_bytes(entry.read_bytes()[: len(entry.read_bytes()) // 2])  # torn
    result = _pathfilter(repo, store)
    assert result.code == 0 and _origin(result, repo) == "miss"
    assert _origin(_pathfilter(repo, store), repo) == "hit"


def test_no_cache_is_read_or_written_when_turned_off(tmp_path: Path) -> None:
    repo = example_repo(tmp_path)
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PATCHJUDGE_CACHE_DIR"] = ""
    result = cli(repo, "pathfilter", "--base", "main", env=env)
    assert result.code == 0, result.out + result.err
    assert result.report(repo, "pathfilter")["details"]["cache"] == {"base_collection": "off"}


def test_a_kept_collection_error_at_base_reads_as_a_fresh_one(tmp_path: Path) -> None:
    broken = "import nosuchmodule\n\n\ndef test_it():\n    assert nosuchmodule\n"
    repo = example_repo(tmp_path, **{"tests/test_broken.py": broken})
    store = tmp_path / "cache"
    write(repo, {"README.md": "# calc, documented\n"})
    commit(repo)
    fresh = _pathfilter(repo, store)
    # Read at once: the next run rewrites the report.
    first = (_origin(fresh, repo), fresh.report(repo, "pathfilter")["reasons"])
    kept = _pathfilter(repo, store)
    assert first[0] == "miss" and _origin(kept, repo) == "hit"
    assert (
        kept.report(repo, "pathfilter")["reasons"]
        == first[1]
        == [
            "the base does not collect: tests/test_broken.py: "
            "ModuleNotFoundError: No module named 'nosuchmodule' "
            "(not installed where the code runs: pin it in constraints/project.txt, or install it into the --python venv; else fix it at the merge base)"
        ]
    )
