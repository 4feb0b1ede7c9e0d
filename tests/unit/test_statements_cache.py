"""The review's statements kept in the judge's cache (issue 20): a gate imports coverage.py
only when no earlier boxed run read the same text, changed lines, parser and interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from patchjudge import review
from patchjudge.git import no_git_env
from tests.helpers import benign_repo

SOURCE = 'def f(x):\n    y = (x +\n         1)\n    """doc"""\n    return y\n'

READ = """
import json, os, sys
from pathlib import Path
from patchjudge import review, review_run
from patchjudge.workspace import Options, open_run
run = open_run(Options(repo=Path("."), base="main"), dict(os.environ))
files = review_run.changed_files(run)
print(json.dumps([
    run.isolation,
    [[f.path, review.statements_to_json(f.stmts)] for f in files],
    "coverage" in sys.modules,
]))
"""


def test_statements_round_trip_through_json() -> None:
    stmts = review.statements(SOURCE, frozenset({2, 3}))
    assert stmts is not None and stmts.first  # a multi-line statement: `first` is not empty
    doc = json.loads(json.dumps(review.statements_to_json(stmts)))
    assert review.statements_from_json(doc) == stmts
    assert review.statements_from_json(review.statements_to_json(None)) is None


def test_a_second_boxed_run_reads_the_statements_without_coverage(tmp_path: Path) -> None:
    repo = benign_repo(tmp_path)
    env = no_git_env({**os.environ, "PATCHJUDGE_CACHE_DIR": str(tmp_path / "cache")})

    def read() -> list[object]:
        done = subprocess.run(
            [sys.executable, "-c", READ], cwd=repo, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout.splitlines()[-1]))

    isolation, first, loaded = read()
    assert isolation == "sandbox" and loaded  # computed: coverage.py's parser ran
    assert [path for path, _ in first] == ["src/calc/__init__.py"] and first[0][1]["lines"]
    assert read() == [isolation, first, False]  # the same answer, coverage.py never imported


def test_another_judge_or_parser_is_another_entry(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A patchjudge or coverage.py upgrade that reads statements differently must not
    # take the older one's answer from the cache.
    from patchjudge import basecache, review_run

    changed = frozenset({2, 3})
    review_run.cached_statements(tmp_path, SOURCE, changed)
    review_run.cached_statements(tmp_path, SOURCE, changed)
    assert len(list((tmp_path / review_run.STATEMENTS).iterdir())) == 1
    monkeypatch.setattr(basecache, "judge_digest", lambda: "another judge")
    review_run.cached_statements(tmp_path, SOURCE, changed)
    monkeypatch.setattr(review_run, "coverage_parser", lambda: "another parser")
    review_run.cached_statements(tmp_path, SOURCE, changed)
    assert len(list((tmp_path / review_run.STATEMENTS).iterdir())) == 3
