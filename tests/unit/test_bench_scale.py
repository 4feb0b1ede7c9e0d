"""The pure parts of bench/scale.py (issue 12): its bulk files and its classification workload."""

from __future__ import annotations

from bench import scale

from patchjudge.paths import Globs, matches


def test_data_files_are_deterministic_and_sized() -> None:
    files = scale.data_files(450, 32)
    assert files == scale.data_files(450, 32)
    assert len(files) == 450
    assert {len(d) for d in files.values()} == {32}
    assert len({p.rsplit("/", 1)[0] for p in files}) == 3  # 200 to a directory
    assert all(p.startswith(f"{scale.DATA_ROOT}/") for p in files)


def test_classification_workload_has_the_catch_all_last_and_agrees() -> None:
    patterns, paths = scale.classification_workload(paths=300, patterns=50)
    assert len(patterns) == 50
    assert patterns[-1] == "*"
    g = Globs(patterns)
    for path in paths:
        expected = next(i for i, p in enumerate(patterns) if matches(p, path))
        assert g.first(path) == expected
