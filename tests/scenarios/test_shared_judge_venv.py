"""issue 19: a lane's venv whose judge packages come from a shared venv through a .pth.

init's noxfile builds the judge's venv once per nox run and gives each lane
session a fresh venv of its own whose site-packages holds one .pth naming
the shared one. The guard must watch that shared site-packages as whole as
it watches sys.prefix: a module rewritten there runs in every later lane.
"""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import pytest

from patchjudge import guard
from tests.attack_helpers import fast_ledger
from tests.helpers import bare_venv, cli_env, commit, example_repo, verdict, write


@pytest.mark.parametrize(
    ("sys_path", "covered", "expected"),
    [
        # The lane venv's own site-packages is under sys.prefix: walked already.
        (["/v/lib/python3.11/site-packages"], ["/v", "/base"], []),
        # A .pth put the run's judge venv on sys.path: walked whole.
        (["/v/lib/site-packages", "/j/lib/site-packages"], ["/v", "/base"], ["/j/lib/site-packages"]),
        # The base interpreter's stays listed only (walking a stdlib costs seconds).
        (["/base/lib/python3.11/site-packages"], ["/v", "/base"], []),
        (["/j/dist-packages", "/j/dist-packages"], ["/v"], ["/j/dist-packages"]),
        # Not installed code: the checkout (sys.path[0]), a relative entry, a zip.
        (["/repo", "", "rel/site-packages", "/x/lib/python311.zip"], ["/v"], []),
    ],
)  # fmt: skip
def test_shared_site_is_every_other_venvs_site_packages(
    sys_path: list[str], covered: list[str], expected: list[str]
) -> None:
    assert guard.shared_site(sys_path, covered) == [Path(p) for p in expected]


def _lane_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A venv like a nox lane's: nothing of its own, a .pth to a shared site-packages.

    The shared one is a directory of its own (a module the attack rewrites)
    ahead of the running judge's (patchjudge and its runtime), so nothing
    other tests use is touched.
    """
    python, own = bare_venv(tmp_path / "lane")
    shared = tmp_path / "judge" / "lib" / "site-packages"
    (shared / "judge_helper").mkdir(parents=True)
    (shared / "judge_helper" / "__init__.py").write_text("HELP = 1\n")
    judge = sysconfig.get_paths()["purelib"]
    # As init's noxfile writes it: the shared dir's own .pth files run too.
    adds = "".join(f"import site; site.addsitedir({str(p)!r})\n" for p in (shared, judge))
    (own / "shared-judge.pth").write_text(adds)
    return python, shared


def test_a_lane_venv_walks_the_shared_judge_site_packages_whole(tmp_path: Path) -> None:
    python, shared = _lane_venv(tmp_path)
    ask = "from patchjudge import guard; print('\\n'.join(map(str, guard.interpreter_roots()[0])))"
    whole = subprocess.run(
        [str(python), "-P", "-c", ask], check=True, capture_output=True, text=True
    ).stdout.split()
    assert str(shared) in whole, whole


def test_unboxed_a_module_rewritten_in_the_shared_judge_venv_fails_the_lane(
    tmp_path: Path,
) -> None:
    # Below the top level of the shared site-packages: before issue 19's change
    # the guard listed that directory's start-up files only and missed this.
    python, shared = _lane_venv(tmp_path)
    target = shared / "judge_helper" / "__init__.py"
    test = f"""
    from calc import total


    def test_plant():
        open({str(target)!r}, "w").write("HELP = 2\\n")
        assert total([1]) == 1
    """
    repo = example_repo(tmp_path / "r", **{"eval/gate.toml": fast_ledger(isolation="process")})
    write(repo, {"tests/test_plant.py": test})
    commit(repo)
    done = subprocess.run(
        [str(python), "-P", "-m", "patchjudge", "gate", "--base", "main"],
        cwd=repo, capture_output=True, text=True, env=cli_env(), timeout=300, check=False,
    )  # fmt: skip
    assert target.read_text() == "HELP = 2\n", "the test ran and wrote"
    assert done.returncode == 1, done.stdout + done.stderr
    reasons = [r for lane in verdict(repo)["lanes"].values() for r in lane["reasons"]]
    assert any(str(target) in r and "outside its scratch tree" in r for r in reasons), reasons
