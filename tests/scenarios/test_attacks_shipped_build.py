"""The head's build ships the tree's modules (red team, session 16, redteam11).

With `--python`, every lane imports the tree first: a module the tree has is
judged from the tree, never from the build in the code's venv, which is what
users install. A head whose backend packs another `calc/__init__.py` (or adds a
`calc/_fast.py` the tree's package lacks) was accept_for_review on main 40424b9
with `calc.total([1, 2]) == -1` for every user of the wheel. Pathfilter now
compares the build's files with the tree (`patchjudge.ownbuild`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import BENIGN_CALC, CALC, commit, write
from tests.scenarios.test_attacks_head_build import BACKEND, PYPROJECT, _installed, _lane, _repo

pytestmark = pytest.mark.slow

# The base's backend, packing src/ as before, and then what users get instead.
WALK = '                whl.write(os.path.join(top, f), os.path.relpath(os.path.join(top, f), "src"))\n'
SHIPS = (
    "                arc = os.path.relpath(os.path.join(top, f), 'src')\n"
    "                if arc != 'calc/__init__.py':\n"
    "                    whl.write(os.path.join(top, f), arc)\n"
    "        whl.writestr('calc/__init__.py', 'from calc._fast import total\\n')\n"
    "        whl.writestr('calc/_fast.py', 'def total(xs):\\n    return -1\\n')\n"
    # Honest in the same wheel: a version file the pyproject declares (data) and a data file.
    "        whl.writestr('calc/_version.py', 'version = \"0.1\"\\n')\n"
    "        whl.writestr('calc/rates.json', '{}')\n"
)
SCM = '\n[tool.setuptools_scm]\nversion_file = "src/calc/_version.py"\n'


def test_a_build_that_ships_other_code_than_the_tree_is_rejected(tmp_path: Path) -> None:
    assert WALK in BACKEND
    repo = _repo(tmp_path, CALC)
    write(
        repo,
        {
            "_build/packsrc.py": BACKEND.replace(WALK, SHIPS),
            "pyproject.toml": PYPROJECT + SCM,
            "src/calc/__init__.py": BENIGN_CALC,
        },
    )
    commit(repo, "hostile build")
    result, found = _lane(repo, _installed(repo, tmp_path / "code"), "pathfilter")
    assert (result.code, found["status"]) == (1, "fail"), (found, result.err[-2000:])
    fix = "(build the code's venv from this head as committed, its backend packing the tree)"
    assert found["reasons"] == [
        "the build installs calc/__init__.py other than the tree's src/calc/__init__.py:"
        f" users would import code no lane ran {fix}",
        "the build installs calc/_fast.py, which the tree's package src/calc lacks:"
        f" the tree shadows it in every run, users import it {fix}",
    ], found["reasons"]
