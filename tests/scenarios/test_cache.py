"""The judge's cache holds only what the judge wrote: never a committed file, never a bad entry.

Issue 20: hypothesis's Unicode tables are kept between runs. A patch that
could plant them would choose which characters the properties draw.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from pathlib import Path

from patchjudge import cache, charmap
from tests.helpers import CALC, Result, cli, commit, example_repo, git, write

TEXT_PROPERTY = """
from hypothesis import given, strategies as st

from calc import shout


@given(st.text(max_size=5))
def test_shout(s):
    loud = shout(s)
    assert isinstance(loud, str)
    assert loud == s.upper()
    assert len(loud) >= 0
"""
CODE = CALC + "\n\ndef shout(s):\n    return s.upper()\n"


def _poisoned() -> bytes:
    """A well-formed entry whose tables say the only characters are 'a' (a weaker judge)."""
    tables = {name: gzip.compress(b'[["Ll", [[97, 97]]]]', mtime=0) for name in charmap._wanted()}
    doc = {k: base64.b64encode(v).decode() for k, v in tables.items()}
    return cache.encode(charmap.cache_key(), json.dumps(doc).encode())


def _gate(repo: Path, cache_dir: Path) -> Result:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GITHUB_") and k != "PATCHJUDGE_SEED_KEY"
    }
    env["PATCHJUDGE_CACHE_DIR"] = str(cache_dir)
    return cli(repo, "gate", "--base", "main", "--today", "2026-12-01", env=env)


def _patched(tmp_path: Path, **files: str | bytes | None) -> Path:
    repo = example_repo(
        tmp_path,
        **{"eval/properties/test_total.py": TEXT_PROPERTY, "src/calc/__init__.py": CODE},
        **files,
    )
    write(repo, {"src/calc/__init__.py": CODE + "\n\ndef double(x):\n    return 2 * x\n"})
    commit(repo)
    return repo


def _properties(result: Result, repo: Path) -> dict:  # type: ignore[type-arg]
    report = result.report(repo, "properties")
    assert report["details"]["isolation"] == "sandbox", report
    assert report["status"] == "pass", report
    return report


def test_a_committed_entry_at_the_caches_path_is_never_read(tmp_path: Path) -> None:
    # The cache pointed into the checkout, where the base commits an entry at
    # exactly the path the judge would read: the directory is refused.
    inside = tmp_path / "repo" / ".cache" / "patchjudge"
    rel = cache.path_of(inside, "charmap", charmap.cache_key()).relative_to(tmp_path / "repo")
    repo = _patched(tmp_path, **{rel.as_posix(): _poisoned()})
    result = _gate(repo, inside)
    assert _properties(result, repo)["details"]["charmap"] == "built"
    assert (repo / rel).read_bytes() == _poisoned()  # neither read nor rewritten
    assert git(repo, "status", "--porcelain", "--", ".cache") == ""


def test_a_corrupt_entry_is_rebuilt_and_an_intact_one_reused(tmp_path: Path) -> None:
    repo = _patched(tmp_path)
    store = tmp_path / "cache"
    entry = cache.path_of(store, "charmap", charmap.cache_key())
    entry.parent.mkdir(parents=True)
    # The poisoned tables with a digest that no longer matches them: recomputed.
    doc = json.loads(_poisoned())
    doc["payload"] = base64.b64encode(b"{}").decode()
    entry.write_text(json.dumps(doc))
    assert _properties(_gate(repo, store), repo)["details"]["charmap"] == "built"
    rebuilt = charmap._from_cache(cache.read(store, "charmap", charmap.cache_key()))
    assert rebuilt is not None
    categories = json.loads(gzip.decompress(rebuilt[charmap._relative("charmap")]))
    assert len(categories) > 20  # the judge's own tables now, not the one-letter forgery
    # The honest look-alike: the entry the judge wrote is believed next run.
    assert _properties(_gate(repo, store), repo)["details"]["charmap"] == "cache"
