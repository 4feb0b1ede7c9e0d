"""issue 19: real projects as their users build them, through the CLI and nox.

iniconfig 2.3.1's sdist, fetched by pip with its pinned hash, is both kinds
the issue names: its build backend writes its version file (setuptools_scm's
`write_to = "src/iniconfig/_version.py"`, git-ignored, no fallback version:
it builds only where the version can be found), and it is one of the
judge's own dependencies (pytest imports it), so its wheel would replace the
judge's copy. Each: init, commit with no edit, then a benign patch accepted,
a break rejected and a removed test rejected (through the CLI one gate each;
through nox the break and the removal are one patch, one run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.attack_helpers import require_sandbox
from tests.helpers import built_once, cli, commit, git, run_lane, shared_dir, verdict
from tests.init_helpers import no_git_env, repo_from_tree, run, sdist

INICONFIG = (
    "iniconfig", "2.3.1", "67f4b9c50da0dedf52af349e7749a80a9057a5031199791b906c3bb3ae878960"
)  # fmt: skip
VERSION_FILE = "src/iniconfig/_version.py"

BENIGN = (
    "src/iniconfig/__init__.py",
    "    def lineof(self, name: str) -> int | None:\n",
    "    def lineof(self, name: str) -> int | None:  # the line a name is on\n",
)
BREAK = (
    "src/iniconfig/_parse.py",
    "    return c in COMMENTCHARS\n",
    "    return c not in COMMENTCHARS\n",
)
REMOVAL = (
    "testing/test_iniconfig.py",
    'def test_api_import() -> None:\n    assert ALL == ["COMMENTCHARS", "IniConfig", "ParseError",'
    ' "iscommentline"]\n\n\n',
    "",
)
# The ledger asking replay for a slice by marker: what gives it a collection to run.
MARKER = ("eval/gate.toml", "[replay]\n", '[replay]\nmarker = "slow"\n')
GONE = "visible test gone: testing/test_iniconfig.py::test_api_import"


def _iniconfig_tree(dest: Path) -> Path:
    tree = sdist(dest, *INICONFIG)
    # As its authors commit it: no sdist metadata, and the version file the
    # build writes is git-ignored (its own .gitignore says so).
    (tree / "PKG-INFO").unlink()
    shutil.rmtree(tree / "src" / "iniconfig.egg-info")
    (tree / VERSION_FILE).unlink()
    assert VERSION_FILE in (tree / ".gitignore").read_text()
    return tree


@pytest.fixture(scope="session")
def iniconfig_adopted(tmp_path_factory: pytest.TempPathFactory, judge_wheel: Path) -> Path:
    """iniconfig adopted once a run (init with no edit, committed): each test takes a copy.

    Built by the first xdist worker that asks and read by every other (issue 20: the
    adoption is ~8 CPU-s, a second worker paid for it again)."""

    def adopt(work: Path) -> Path:
        repo = repo_from_tree(_iniconfig_tree(work / "sdist"), work / "iniconfig")
        result = cli(repo, "init", "--base", "main", "--patchjudge-spec", str(judge_wheel))
        assert result.code == 0, result.err
        commit(repo, "Adopt patchjudge")  # no edit of what init wrote
        git(repo, "checkout", "-q", "-b", "patch")
        return repo

    return built_once(shared_dir(tmp_path_factory), "iniconfig-adopted", adopt)


def _adopted(tmp_path: Path, adopted: Path) -> Path:
    repo = tmp_path / "iniconfig"
    shutil.copytree(adopted, repo, symlinks=True)
    return repo


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    text = (repo / path).read_text()
    assert old in text, old
    (repo / path).write_text(text.replace(old, new, 1))
    commit(repo, f"edit {path}")


def _code_venv(repo: Path, dest: Path) -> Path:
    """The venv a user's CI makes for the code: init's pins, then the project built."""
    uv = str(Path(sys.executable).with_name("uv"))
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(dest)], check=True)
    python = dest / "bin" / "python"
    pins = [
        "-r",
        str(repo / "constraints" / "lane.txt"),
        "-r",
        str(repo / "constraints" / "build.txt"),
    ]
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), "--require-hashes", *pins], check=True
    )
    return python


def _install_head(repo: Path, python: Path) -> None:
    # As the user's CI installs it: built from the checkout by its own backend.
    uv = str(Path(sys.executable).with_name("uv"))
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), "--reinstall", "--no-deps",
         "--no-build-isolation", "--no-cache", str(repo)],
        check=True, capture_output=True,
    )  # fmt: skip


def _lane(repo: Path, python: Path, lane: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    """One lane alone over the head (issue 20): a failing lane is a reject in any gate."""
    _install_head(repo, python)
    result = run_lane(repo, lane, "--python", str(python))
    assert result.code in (0, 1, 3), result.err
    return result.code, result.report(repo, lane)


@pytest.mark.long
def test_a_judge_dependency_with_a_generated_version_file_through_the_cli(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    repo = _adopted(tmp_path, iniconfig_adopted)
    python = _code_venv(repo, tmp_path / "code")
    _edit(repo, *BENIGN)
    _install_head(repo, python)
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01", "--python", str(python))
    found = verdict(repo)
    assert (result.code, found["verdict"]) == (0, "accept_for_review"), found
    # With --python nothing is said about the judge's copy (it is not the code's).
    assert "the judge's own copy" not in result.err, "with --python: nothing said"
    assert "judges_copy" not in result.report(repo, "pathfilter")["details"], "nothing kept"
    # The break is the visible suite's to see: it runs the head's iniconfig,
    # not the copy the judge's own pytest imported.
    git(repo, "checkout", "-q", "-b", "break")
    _edit(repo, *BREAK)
    # Each is one lane's fail (its report is the claim), so that lane alone.
    code, found = _lane(repo, python, "freeze")
    assert (code, found["status"]) == (1, "fail"), found
    assert found["reasons"][0].startswith("suite: "), found
    # flakes, in the same venv (one build, issue 20): with --python its runs test the
    # head's iniconfig too, not the copy the judge's pytest imported, so the break's
    # failures are counted.
    flakes = ["flakes", "--count", "1", "--workers", "0", "--today", "2026-12-01"]
    result = cli(repo, *flakes, "--python", str(python))
    assert result.code == 0, result.err
    nodes = json.loads((repo / ".patchjudge" / "flakes.json").read_text())["nodes"]
    failed = sorted(n for n, t in nodes.items() if t["fail"])
    assert failed and all(n.startswith("testing/") for n in failed), nodes
    git(repo, "checkout", "-q", "patch")
    git(repo, "checkout", "-q", "-b", "removal")
    _edit(repo, *REMOVAL)
    code, found = _lane(repo, python, "pathfilter")
    assert (code, found["status"]) == (1, "fail"), found
    assert GONE in found["reasons"], found


def _nox_gate(
    repo: Path, *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    nox = [sys.executable, "-m", "nox", "--no-color", *flags, "-s", "gate", "--"]
    argv = [*nox, "--base", "main", "--today", "2026-12-01"]
    if env is None:
        return run(argv, repo, timeout=900)
    env = {**no_git_env(os.environ), **env}
    return subprocess.run(
        argv, cwd=repo, capture_output=True, text=True, env=env, timeout=900, check=False
    )


def _fresh_lane_venvs(repo: Path) -> Path:
    """Each lane session's venv holds nothing but a .pth to this run's one judge venv.

    issue 19: the judge's venv is built once per nox run (pinned, from
    constraints/), or, boxed, kept as an earlier boxed run built it (session
    12, noxcold4); each session still has a venv of its own; a lane's copy of
    the code's venv is gone once it ran.
    """
    (pth,) = (repo / ".nox" / "gate").glob("lib/python*/site-packages/patchjudge-judge.pth")
    judge_site = Path(pth.read_text().split("addsitedir(", 1)[1].rsplit(")", 1)[0].strip("'\""))
    judge = judge_site.parents[2]
    if judge.parent.parent != repo / ".nox" / "_judge":
        assert judge.parent.parent.name == "venvs", judge  # kept: the judge's cache
    # The lane runtime beside it, installed once a run, which the judge's venv and
    # the code's reach after their own packages (issue 19, session 12).
    (runtime,) = judge.parent.glob("lane/lib/python*/site-packages")
    pins = (repo / "constraints" / "lane.txt").read_text()
    for name in ("pytest", "hypothesis"):
        (dist,) = runtime.glob(f"{name}-*.dist-info")
        assert f"{name}=={dist.name.removesuffix('.dist-info').split('-')[1]} " in pins, dist.name
        assert not list(judge_site.glob(f"{name}-*.dist-info")), "installed once, in the runtime"
    reach = f"import site; site.addsitedir({str(runtime)!r})\n"
    for venv in (judge, repo / ".nox" / "_code" / "lane" / "code"):
        if venv.exists():
            (pth,) = venv.glob("lib/python*/site-packages/patchjudge-lane.pth")
            assert pth.read_text() == reach, venv
    # fixtures (and replay, whose slice collects nothing here) ran in the verdict's process.
    assert not (repo / ".nox" / "gate-fixtures").exists()
    ledger = tomllib.loads((repo / "eval" / "gate.toml").read_text())
    boxed = ledger["gate"]["isolation"] == "sandbox"
    lanes = ("pathfilter", "freeze", "properties")
    for session in ["gate", *(f"gate-{lane}" for lane in lanes)]:
        venv = repo / ".nox" / session
        assert (venv / "pyvenv.cfg").is_file(), session
        (site,) = venv.glob("lib/python*/site-packages")
        if boxed and session in ("gate-freeze", "gate-properties"):
            # Boxed, the freeze and properties lanes ran in pathfilter's process
            # (sessions 17-18): each session handed its digest on and ran nothing.
            assert [p.name for p in site.iterdir()] == [], session
            continue
        assert [p.name for p in site.iterdir()] == ["patchjudge-judge.pth"], session
        line = f"import site; site.addsitedir({str(judge_site)!r})\n"
        assert (site / "patchjudge-judge.pth").read_text() == line, session
    codes = repo / ".nox" / "_code"
    assert [p.name for p in codes.glob("*/code")] == ["code"], "one code venv for the run"
    if boxed:
        # Boxed, every lane took the one venv as built, read-only to its code (session 12).
        assert [p.name for p in codes.iterdir()] == ["lane"], "no copy for any lane"
    else:
        # Every lane's copy of the code's venv (one path, each copied fresh) is gone once it ran.
        assert not list(codes.glob("lane/*")), "every lane's copy (one path) is gone"
    return judge


def _lane_commands(log: str, lane: str) -> list[str]:
    return [line for line in log.splitlines() if f"-m patchjudge {lane} --repo" in line]


@pytest.mark.slow
def test_a_judge_dependency_with_a_generated_version_file_through_nox(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    repo = _adopted(tmp_path, iniconfig_adopted)
    _edit(repo, *BENIGN)
    result = _nox_gate(repo)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    # Built in the box from a copy with no .git: the version came from the
    # checkout's history, and was said.
    assert "as version 0.1.dev" in log and "SETUPTOOLS_SCM_PRETEND_VERSION" in log, log[-4000:]
    # The judge's venv never got the project: only the code's venv did.
    # Once per nox run, into the code's venv that each lane gets a copy of.
    wheel_installs = [line for line in log.splitlines() if "iniconfig-0.1.dev" in line]
    assert wheel_installs and all("/.nox/_code/" in line for line in wheel_installs), log[-4000:]
    # The project's wheel built once for the run (issue 19), whichever lanes take it.
    built = [line for line in log.splitlines() if "-m patchjudge.boxbuild " in line]
    assert len(built) == 1, log[-4000:]
    first = _fresh_lane_venvs(repo)
    # Boxed, the freeze lane took pathfilter's suite pass, handed on by nox (sharefile).
    freeze = json.loads((repo / ".patchjudge" / "freeze.json").read_text())
    assert freeze["details"]["shared"] == {"suite_run": "pathfilter's"}, freeze
    # issue 19: replay runs no code when the base ledger gives it nothing to collect
    # (no node id, no marker): the verdict's process runs it, with fixtures, and gets
    # no code venv; the lanes that run code get one.
    assert not _lane_commands(log, "replay"), log[-4000:]
    (verdict_run,) = [line for line in log.splitlines() if "-m patchjudge verdict " in line]
    assert "--with-lane=fixtures --with-lane=replay" in verdict_run, verdict_run
    assert "--python" not in verdict_run, verdict_run
    assert all("--python" in c for c in _lane_commands(log, "freeze")), log[-4000:]
    if tomllib.loads((repo / "eval" / "gate.toml").read_text())["gate"]["isolation"] == "sandbox":
        # Boxed, the freeze and properties lanes ran after pathfilter in its process
        # (sessions 17-18).
        assert not _lane_commands(log, "freeze") + _lane_commands(log, "properties"), log[-4000:]
        (both,) = [line for line in log.splitlines() if "-m patchjudge pathfilter " in line]
        assert "--then-lane=freeze --then-lane=properties" in both, both
    # One patch that both breaks the code and removes a test (issue 20: one nox run, not
    # two): each lane's reason reaches the verdict through nox. Each edit alone is
    # rejected through the CLI (..._through_the_cli). Only the base's ledger gives replay
    # a code venv (test_a_skipped_lane_fails_the_gate_and_a_base_marker_...); a head that
    # edits the ledger stops a nox run in its checkout before any venv (session 13:
    # test_attacks_nox.py), so this patch leaves it alone.
    git(repo, "checkout", "-q", "-b", "break")
    _edit(repo, *BREAK)
    _edit(repo, *REMOVAL)
    result = _nox_gate(repo, "-R")  # the sessions' venvs reused; the code's rebuilt
    log = result.stdout + result.stderr
    assert result.returncode == 1, log[-4000:]
    assert verdict(repo)["lanes"]["freeze"]["reasons"][0].startswith("suite: ")
    assert GONE in verdict(repo)["lanes"]["pathfilter"]["reasons"]
    if "/venvs/" in str(first):  # boxed, with the suite's cache: the judge's kept venv
        assert _fresh_lane_venvs(repo) == first
    else:
        assert _fresh_lane_venvs(repo) != first, "a judge venv of the run's own, the last gone"
    assert not _lane_commands(log, "replay"), log[-4000:]


def _installed_lane_txt(log: str) -> bool:
    return any(
        "pip install" in line and "/constraints/lane.txt" in line for line in log.splitlines()
    )


@pytest.mark.slow
def test_a_boxed_nox_run_takes_the_judges_venvs_an_earlier_one_kept_only_as_built(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    # issue 19, session 12 (noxcold4): with isolation "sandbox" the judge's venv
    # and the lane runtime (with their bytecode) are kept in the judge's cache,
    # which the box never sees, and a later run takes them only when every entry
    # is as the run that built them recorded it.
    require_sandbox()
    repo = _adopted(tmp_path, iniconfig_adopted)
    ledger = tomllib.loads((repo / "eval" / "gate.toml").read_text())
    assert ledger["gate"]["isolation"] == "sandbox"
    _edit(repo, *BENIGN)
    env = {"PATCHJUDGE_CACHE_DIR": str(tmp_path / "cache")}
    first = _nox_gate(repo, env=env)
    log = first.stdout + first.stderr
    assert first.returncode == 0, log[-4000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    judge = _fresh_lane_venvs(repo)
    assert judge.parent.parent == tmp_path / "cache" / "venvs", judge
    assert not (repo / ".nox" / "_judge").exists()
    assert _installed_lane_txt(log), log[-4000:]
    # Taken as built: nothing installed or compiled for the judge; the gate as before.
    second = _nox_gate(repo, "-R", env=env)
    log = second.stdout + second.stderr
    assert second.returncode == 0, log[-4000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    assert _fresh_lane_venvs(repo) == judge
    assert not _installed_lane_txt(log) and "patchjudge.bytecode" not in log, log[-4000:]
    # The lane runtime at the path the first run gave it: the code's interpreter reads
    # alike, and the base's collection the first run kept is a hit (a runtime under a
    # path of each run's own missed it every run).
    pathfilter = json.loads((repo / ".patchjudge" / "pathfilter.json").read_text())
    assert pathfilter["details"]["cache"] == {"base_collection": "hit"}, pathfilter["details"]
    # One entry more (a .pth runs at every start): not taken, said, removed, built again.
    (site,) = judge.glob("lib/python*/site-packages")
    (site / "planted.pth").write_text("import os\n")
    third = _nox_gate(repo, "-R", env=env)
    log = third.stdout + third.stderr
    assert third.returncode == 0, log[-4000:]
    assert "changed since it was built; building it again" in log, log[-4000:]
    assert _installed_lane_txt(log), log[-4000:]
    rebuilt = _fresh_lane_venvs(repo)
    assert rebuilt != judge and not judge.parent.exists(), rebuilt
    assert not list(rebuilt.glob("lib/python*/site-packages/planted.pth"))


@pytest.mark.slow
def test_a_skipped_lane_fails_the_gate_and_a_base_marker_gives_replay_a_code_venv(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    # Two claims on one nox run (issue 20: one fresh nox run, not two), each from its own
    # edit of the adoption commit and read from its own lane: freeze's and replay's.
    repo = _adopted(tmp_path, iniconfig_adopted)
    git(repo, "checkout", "-q", "main")
    # nox counts a skipped session as a success. The judge's noxfile is edited
    # here, at the adoption commit, so that gate-freeze skips before its lane
    # runs: the lanes' venvs are shared per run now, and a lane nox skipped must
    # still be missing to the verdict, never a pass.
    noxfile = repo / "noxfile.py"
    text = noxfile.read_text()
    old = "    def session_fn(session: nox.Session) -> None:\n"
    assert old in text
    skip = '        if name == "freeze" and for_gate:\n            session.skip("skipped")\n'
    noxfile.write_text(text.replace(old, old + skip, 1))
    # issue 19: each lane's copy of the code's venv costs a copy and a guard walk.
    # replay runs code only to collect a slice the ledger names by node id or
    # marker; the ledger read is the merge base's, never the head's. Here the base's
    # marker gives the slice a collection to run: the code's venv. Without a marker at
    # the base replay gets none, and the head asking for one (MARKER) changes nothing:
    # test_a_judge_dependency_with_a_generated_version_file_through_nox asserts both.
    ledger = (repo / "eval" / "gate.toml").read_text()
    marked = ledger.replace(MARKER[1], MARKER[2], 1)
    assert marked != ledger
    (repo / "eval" / "gate.toml").write_text(marked)
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    git(repo, "branch", "-f", "patch", "main")
    git(repo, "checkout", "-q", "patch")
    _edit(repo, *BENIGN)
    result = _nox_gate(repo)
    log = result.stdout + result.stderr
    assert "gate-freeze: skipped" in log, log[-4000:]
    assert result.returncode == 1, log[-4000:]
    found = verdict(repo)
    assert found["verdict"] == "reject", found
    assert found["lanes"]["freeze"]["reasons"] == ["report missing: the lane did not run"], found
    (replay,) = _lane_commands(log, "replay")
    assert "--python" in replay and "/lane/code/bin/python" in replay, replay


def _nox_without_uv(dest: Path) -> Path:
    """A python with nox and virtualenv importable and no uv anywhere it or nox looks.

    A venv of the base interpreter (its bin/ holds no uv) that reaches this run's
    site-packages by a .pth, as a team without uv has nox from pip.
    """
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(dest)], check=True)
    (site,) = dest.glob("lib/python*/site-packages")
    here = [p for p in sys.path if p.endswith("site-packages")]
    (site / "outer.pth").write_text("\n".join(here) + "\n")
    assert not (dest / "bin" / "uv").exists()
    return dest / "bin" / "python"


@pytest.mark.slow
def test_nox_gate_without_uv_builds_every_venv_with_virtualenv_and_pip(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    # issue 19: uv is used where it is; without it the noxfile init wrote must
    # still work, each venv from virtualenv (nox) or venv + pip (the judge's, the code's).
    repo = _adopted(tmp_path, iniconfig_adopted)
    _edit(repo, *BENIGN)
    python = _nox_without_uv(tmp_path / "nox-no-uv")
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (Path(p) / "uv").exists()
    )  # fmt: skip
    env = {**no_git_env(os.environ), "PATH": path, "UV": str(tmp_path / "no-such-uv")}
    nox = [str(python), "-m", "nox", "--no-color", "-s", "gate", "--"]
    result = subprocess.run(
        [*nox, "--base", "main", "--today", "2026-12-01"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=1800, check=False,
    )  # fmt: skip
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    assert "(virtualenv)" in log and "(uv)" not in log and "/uv " not in log, log[-4000:]
    # The judge's venv was built by pip: its pins hold, and no uv made it.
    judge = _fresh_lane_venvs(repo)
    assert list(judge.glob("lib/python*/site-packages/pip")), "venv + pip, not uv"
    cfg = (judge / "pyvenv.cfg").read_text().splitlines()
    assert not [line for line in cfg if line.startswith("uv ")], cfg


def test_without_python_the_suite_tests_the_trees_iniconfig_not_the_judges(
    tmp_path: Path, iniconfig_adopted: Path
) -> None:
    # The judge's own pytest imported iniconfig before the tree joined sys.path.
    # Before, the visible suite tested that copy: the break passed it. Now the
    # plugin hands the name to the tree: its tests import the head's iniconfig.
    repo = _adopted(tmp_path, iniconfig_adopted)
    _edit(repo, *BREAK)
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01")
    found = verdict(repo)
    assert (result.code, found["verdict"]) == (1, "reject"), found
    assert found["lanes"]["freeze"]["reasons"][0].startswith("suite: "), found
    assert "the judge's own" not in result.err, result.err
    assert "judges_copy" not in result.report(repo, "pathfilter")["details"]


# pluggy 1.6.0 (issue 19, held out): src layout, setuptools_scm's `version_file`
# (git-ignored), the fixture `pm` in testing/conftest.py, and the module pytest
# itself runs on. A break of its hook calls broke the pytest that ran its suite:
# 81 tests "fixture 'pm' not found", pytest's reasons, not the tests'.
PLUGGY = ("pluggy", "1.6.0", "7dcc130b76258d33b90f61b658791dede3486c3e6bfb003ee5c9bfb396dd22f3")
PLUGGY_VERSION_FILE = "src/pluggy/_version.py"
PLUGGY_BENIGN = (
    "src/pluggy/_hooks.py",
    "    def _add_hookimpl(self, hookimpl: HookImpl) -> None:\n",
    "    def _add_hookimpl(self, hookimpl: HookImpl) -> None:  # in call order\n",
)
# Hooks called first to last instead of last to first: pytest's own hooks too.
PLUGGY_BREAK = (
    "src/pluggy/_callers.py",
    "            for hook_impl in reversed(hook_impls):\n",
    "            for hook_impl in hook_impls:\n",
)
# The test's own failure, as pluggy's own suite reports it.
PLUGGY_FAILS = "testing/test_invocations.py::test_call_order — assert [1, 2, 3] == [3, 2, 1]"


def _pluggy_tree(dest: Path) -> Path:
    tree = sdist(dest, *PLUGGY)
    (tree / "PKG-INFO").unlink()
    shutil.rmtree(tree / "src" / "pluggy.egg-info")
    (tree / PLUGGY_VERSION_FILE).unlink()
    assert PLUGGY_VERSION_FILE in (tree / ".gitignore").read_text()
    return tree


@pytest.fixture(scope="session")
def pluggy_adopted(tmp_path_factory: pytest.TempPathFactory, judge_wheel: Path) -> Path:
    """pluggy adopted once a run (init with no edit, committed): each test takes a copy."""

    def adopt(work: Path) -> Path:
        repo = repo_from_tree(_pluggy_tree(work / "sdist"), work / "pluggy")
        result = cli(repo, "init", "--base", "main", "--patchjudge-spec", str(judge_wheel))
        assert result.code == 0, result.err
        commit(repo, "Adopt patchjudge")
        git(repo, "checkout", "-q", "-b", "patch")
        return repo

    return built_once(shared_dir(tmp_path_factory), "pluggy-adopted", adopt)


def _pluggy_rejected(found: dict, log: str) -> None:  # type: ignore[type-arg]
    assert found["verdict"] == "reject", found
    (reason,) = found["lanes"]["freeze"]["reasons"]
    assert PLUGGY_FAILS in reason, reason
    assert "fixture 'pm' not found" not in json.dumps(found) + log, reason


@pytest.mark.long
def test_pluggy_is_judged_by_its_own_tests_through_the_cli(
    tmp_path: Path, pluggy_adopted: Path
) -> None:
    repo = shutil.copytree(pluggy_adopted, tmp_path / "pluggy", symlinks=True)
    _edit(repo, *PLUGGY_BENIGN)
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01")
    assert (result.code, verdict(repo)["verdict"]) == (0, "accept_for_review"), result.out
    assert "the judge's own" not in result.err, result.err
    git(repo, "checkout", "-q", "-b", "break")
    _edit(repo, *PLUGGY_BREAK)
    # Without --python: the tests import the head's pluggy, not the judge's.
    result = cli(repo, "gate", "--base", "main", "--today", "2026-12-01")
    assert result.code == 1, result.out
    _pluggy_rejected(verdict(repo), result.err)
    # With the code's own venv, which holds the head's build: pytest still runs
    # on the judge's pluggy, the tests on the head's.
    # The suite is freeze's (the gate above read its reason): that lane alone (issue 20).
    python = _code_venv(repo, tmp_path / "code")
    code, found = _lane(repo, python, "freeze")
    assert (code, found["status"]) == (1, "fail"), found
    (reason,) = found["reasons"]
    assert PLUGGY_FAILS in reason, reason
    assert "fixture 'pm' not found" not in json.dumps(found), reason


@pytest.mark.slow
def test_pluggy_is_judged_by_its_own_tests_through_nox(
    tmp_path: Path, pluggy_adopted: Path
) -> None:
    # The break alone (issue 20: one nox run, not two): every other lane passes, so the
    # adoption gates pluggy through nox, and freeze fails on pluggy's own test only. A
    # benign patch accepted: ..._through_the_cli here, iniconfig's ..._through_nox.
    repo = shutil.copytree(pluggy_adopted, tmp_path / "pluggy", symlinks=True)
    _edit(repo, *PLUGGY_BREAK)
    result = _nox_gate(repo)
    log = result.stdout + result.stderr
    assert result.returncode == 1, log[-4000:]
    found = verdict(repo)
    _pluggy_rejected(found, log)
    others = {n: lane["status"] for n, lane in found["lanes"].items() if n != "freeze"}
    assert set(others.values()) <= {"pass", "not_applicable"}, found
