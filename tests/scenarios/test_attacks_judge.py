"""Attacks on the judge itself: every edit of a judge file, in any disguise, is a reject."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.attack_helpers import BROKEN_CALC, attack, attack_lane, git_mv, symlink
from tests.helpers import git

# (patch files, extra step on the repo before the commit, fragments of one reason)
Case = tuple[dict[str, str | bytes | None], Callable[[Path], None] | None, tuple[str, ...]]

NOXFILE = "import nox\n\n@nox.session\ndef gate(session):\n    pass\n"


def _rm_eval(repo: Path) -> None:
    shutil.rmtree(repo / "eval")


def _rename_out(repo: Path) -> None:
    git_mv(repo, "eval/properties/test_total.py", "src/calc/test_total.py")


def _rename_in(repo: Path) -> None:
    git_mv(repo, "src/calc/__init__.py", "eval/properties/calc_impl.py")


def _copy_in(repo: Path) -> None:
    # A copy of a judge file the patch also edits: git reports it as C.
    (repo / "src/calc/props.py").write_text((repo / "eval/properties/test_total.py").read_text())


def _link_dir(repo: Path) -> None:
    symlink(repo, "src/calc/judge", "../../eval")


def _link_file(repo: Path) -> None:
    symlink(repo, "src/calc/ledger.toml", "../../eval/gate.toml")


def _link_out(repo: Path) -> None:
    symlink(repo, "src/calc/passwd", "/etc/passwd")


CASES: dict[str, Case] = {
    "ledger": (
        {"eval/gate.toml": '[gate]\nbase = "main"\n[map]\n"**" = []\n'},
        None,
        ("protected path changed: eval/gate.toml",),
    ),
    "property file": (
        {"eval/properties/test_total.py": "def test_nothing():\n    pass\n"},
        None,
        ("protected path changed: eval/properties/test_total.py",),
    ),
    "fixture lock": (
        {"eval/fixtures.lock.json": '{"version": 1, "canonical_json": true, "files": {}}\n'},
        None,
        ("protected path changed: eval/fixtures.lock.json",),
    ),
    "freeze registry": (
        {"eval/flakes.freeze.toml": "# nothing frozen, honest\n"},
        None,
        ("protected path changed: eval/flakes.freeze.toml",),
    ),
    "new file under eval": (
        {"eval/notes.txt": "the judge agrees\n"},
        None,
        ("protected path changed: eval/notes.txt",),
    ),
    "noxfile": ({"noxfile.py": NOXFILE}, None, ("protected path changed: noxfile.py",)),
    "constraints": (
        {"constraints/lane.txt": "hypothesis==0.0.1\n"},
        None,
        ("protected path changed: constraints/lane.txt",),
    ),
    "ci workflow": (
        {".github/workflows/ci.yml": "on: push\njobs: {}\n"},
        None,
        ("protected path changed: .github/workflows/ci.yml",),
    ),
    "rename out of the judge": (
        {},
        _rename_out,
        (
            "protected path changed",
            "eval/properties/test_total.py -> src/calc/test_total.py (renamed)",
        ),
    ),
    "rename into the judge": (
        {},
        _rename_in,
        ("protected path changed", "src/calc/__init__.py -> eval/properties/calc_impl.py"),
    ),
    "copy out of the judge": (
        {"eval/properties/test_total.py": "# weakened\n"},
        _copy_in,
        ("protected path changed", "eval/properties/test_total.py"),
    ),
    "whole judge deleted": (
        {},
        _rm_eval,
        ("protected path changed: eval/gate.toml (deleted)",),
    ),
    "symlink to the judge directory": (
        {},
        _link_dir,
        ("symlink into the judge: src/calc/judge -> ../../eval",),
    ),
    "symlink to the ledger": (
        {},
        _link_file,
        ("symlink into the judge: src/calc/ledger.toml -> ../../eval/gate.toml",),
    ),
    "symlink out of the repository": (
        {},
        _link_out,
        ("symlink out of the repository: src/calc/passwd -> /etc/passwd",),
    ),
    "new property file": (
        {"eval/properties/test_extra.py": "def test_extra():\n    assert True\n"},
        None,
        ("new file under the properties path: eval/properties/test_extra.py",),
    ),
}


# Whole gates: a judge file the patch edits or deletes must not reach a later lane.
# The properties judged at the base still ran and caught the broken code.
GATE_CASES = ("property file", "whole judge deleted")


@pytest.mark.parametrize("name", GATE_CASES)
def test_judge_edit_is_rejected_and_the_bases_judge_still_runs(tmp_path: Path, name: str) -> None:
    files, step, fragments = CASES[name]
    judged = attack(tmp_path, {"src/calc/__init__.py": BROKEN_CALC, **files}, before_commit=step)
    assert judged.decision == "reject", judged.explain()
    assert judged.says(*fragments), judged.explain()
    assert judged.result.code == 1
    assert judged.says("properties: property failed"), judged.explain()
    if name != "whole judge deleted":
        assert judged.lane("pathfilter")["status"] == "fail"


@pytest.mark.parametrize("name", sorted(set(CASES) - set(GATE_CASES)))
def test_judge_edit_fails_pathfilter(tmp_path: Path, name: str) -> None:
    """Each disguise is pathfilter's to see from git data alone: that lane on its own
    (issue 20); a pathfilter fail is a reject (tests/unit/test_verdict.py)."""
    files, step, fragments = CASES[name]
    # The rename into the judge moves the code itself; every other case also breaks it.
    broken = {} if step is _rename_in else {"src/calc/__init__.py": BROKEN_CALC}
    judged = attack_lane(tmp_path, {**broken, **files}, "pathfilter", before_commit=step)
    assert judged.status == "fail", judged.explain()
    assert judged.says(*fragments), judged.explain()
    assert judged.result.code == 1, judged.explain()


def test_patched_ledger_cannot_pick_its_own_base(tmp_path: Path) -> None:
    """A patch that rewrites [gate] base is judged against the base it was made from."""
    ledger = '[gate]\nbase = "patch"\n[map]\n"**" = []\n'
    judged = attack(tmp_path, {"eval/gate.toml": ledger, "src/calc/__init__.py": BROKEN_CALC})
    assert judged.decision == "reject", judged.explain()
    assert judged.says("property failed"), judged.explain()
    assert git(judged.repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "patch"


LENIENT = '[gate]\nbase = "main"\n[map]\n"**" = []\n'
WEAK = "from calc import total\n" + "\n" * 7 + "def test_x():\n    assert total([]) or True\n"


def test_grafted_history_cannot_pick_an_older_judge(tmp_path: Path) -> None:
    """In the agent's own checkout: .git/info/grafts re-parents the patch (fixed)."""
    from tests.attack_helpers import fast_ledger, judged
    from tests.helpers import PROPERTY, commit, example_repo, gate, write

    repo = example_repo(
        tmp_path, **{"eval/gate.toml": LENIENT, "eval/properties/test_total.py": WEAK}
    )
    weak_base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    write(repo, {"eval/gate.toml": fast_ledger(), "eval/properties/test_total.py": PROPERTY})
    commit(repo, "the judge gets stronger")
    git(repo, "checkout", "-q", "-b", "hostile")
    # Broken code, with the old lenient judge back in the tree, grafted onto the old base.
    patch = {"src/calc/__init__.py": BROKEN_CALC, "eval/gate.toml": LENIENT}
    write(repo, {**patch, "eval/properties/test_total.py": WEAK})
    head = commit(repo)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{head} {weak_base}\n")
    result = judged(repo, gate(repo))
    assert result.decision == "reject", result.explain()
    assert result.says("protected path changed: eval/gate.toml"), result.explain()
    assert result.says("properties: property failed"), result.explain()


def test_replace_refs_cannot_swap_the_base_ledger(tmp_path: Path) -> None:
    import subprocess

    from tests.attack_helpers import judged
    from tests.helpers import commit, example_repo, gate, write

    repo = example_repo(tmp_path)
    write(repo, {"src/calc/__init__.py": BROKEN_CALC})
    commit(repo)
    blob = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
        input=LENIENT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(repo, "replace", git(repo, "rev-parse", "main:eval/gate.toml").strip(), blob)
    result = judged(repo, gate(repo))
    assert result.decision == "reject", result.explain()
    assert result.says("properties: property failed"), result.explain()
