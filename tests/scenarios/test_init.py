"""`patchjudge init` on real repositories, then patches through the real gate."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from patchjudge import __version__, pins
from patchjudge.config import LEDGER, parse_ledger
from tests.helpers import built_once, cli, commit, gate, git, init_repo, shared_dir, verdict, write
from tests.init_helpers import (
    CACHETOOLS,
    PYFLAKES,
    TEAM_PACKAGE,
    flat_project,
    repo_from_tree,
    run,
    sdist,
    six_sdist,
    spec,
    src_project,
    tracked,
    unmapped_tracked,
)

WRITTEN = {
    "eval/gate.toml",
    "eval/properties/test_public_api.py",
    "eval/flakes.freeze.toml",
    "eval/fixtures.lock.json",
    "noxfile.py",
    "constraints/lane.txt",
    "constraints/build.txt",
    "constraints/patchjudge.txt",
    "constraints/project.txt",
    ".github/workflows/patchjudge.yml",
    ".gitlab/ci/patchjudge.yml",
}


REPORT_UNEXERCISED = '\n[review]\nunexercised = "report"\n'


def _adopt(repo: Path, *args: str, replay: str = "", ledger_extra: str = "") -> str:
    result = cli(repo, "init", *args)
    assert result.code == 0, result.err
    if replay:  # the human's edit to what init wrote, in the adoption commit
        text = (repo / LEDGER).read_text()
        (repo / LEDGER).write_text(text.replace("[replay]\n", f"[replay]\n{replay}\n", 1))
    if ledger_extra:
        with (repo / "eval" / "gate.toml").open("a") as fh:
            fh.write(ledger_extra)
    commit(repo, "Adopt patchjudge")
    git(repo, "checkout", "-q", "-b", "patch")
    return result.out


@pytest.mark.long
def test_init_on_a_real_third_party_project_then_a_trivial_patch_is_accepted(tmp_path, judge_wheel):
    # One test for both patches: the sdist download and its metadata build cost ~15 s.
    repo = repo_from_tree(six_sdist(tmp_path / "sdist"), tmp_path / "six")
    # six's suite imports dbm.ndbm, which a host's Python may lack: the freeze
    # lane now runs the suite (issue 19), so the adopter names it host-dependent
    # (a glob: fnmatch reads `[...]` as a class). init runs the suite too and
    # says so, on such a host: adopted with --allow-red-suite, as a team would.
    no_ndbm = importlib.util.find_spec("_dbm") is None
    out = _adopt(
        repo,
        *spec(judge_wheel),
        "--allow-red-suite",
        replay='nodeids = ["test_six.py::test_move_items*dbm_ndbm*"]',
    )
    if no_ndbm:
        assert out.splitlines()[-2:] == [
            "warning: the visible suite (test_six.py) fails at this commit: 1 of 200 tests:"
            " every patch is rejected until those tests pass or are frozen in"
            " eval/flakes.freeze.toml",
            "  test_six.py::test_move_items[dbm_ndbm] — ModuleNotFoundError: No module named '_dbm'",
        ]
    else:
        assert "the visible suite passes at this commit (" in out
    for rel in WRITTEN:
        assert f"wrote {rel}" in out
    assert "next steps:" in out
    assert out.count("\n  1. ") == out.count("\n  2. ") == out.count("\n  3. ") == 1
    assert "nox -s gate -- --base main" in out
    assert set(tracked(repo)) >= WRITTEN
    assert unmapped_tracked(repo) == []
    ledger = parse_ledger((repo / LEDGER).read_bytes())
    assert ledger.gate.pythonpath == (".",)
    assert ledger.suite.paths == ("test_six.py",)
    assert ledger.fixtures.roots == ()
    starter = (repo / "eval/properties/test_public_api.py").read_text()
    assert '"with_metaclass": True' in starter

    write(repo, {"six.py": (repo / "six.py").read_text() + "# a comment an agent added\n"})
    commit(repo, "trivial")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    v = verdict(repo)
    assert v["verdict"] == "accept_for_review"
    assert v["lanes"]["properties"]["status"] == "pass"
    assert v["lanes"]["fixtures"]["status"] == "not_applicable"

    # The starter property is no tautology: deleting public API is rejected.
    source = (repo / "six.py").read_text()
    write(repo, {"six.py": source.replace("def with_metaclass(", "def _with_metaclass(")})
    commit(repo, "agent renames a public function")
    assert gate(repo).code == 1
    reasons = verdict(repo)["lanes"]["properties"]["reasons"]
    assert reasons == [
        "property failed: eval/properties/test_public_api.py::test_every_public_name_is_still_there:"
        " public names gone: six.with_metaclass"
    ]


def test_src_layout_fixtures_and_default_branch_are_detected(tmp_path, judge_wheel):
    upstream = src_project(tmp_path / "upstream")
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(repo))
    out = _adopt(repo, *spec(judge_wheel))
    ledger = parse_ledger((repo / LEDGER).read_bytes())
    assert ledger.gate.base == "origin/main"
    assert "--base origin/main" in out
    assert ledger.gate.pythonpath == ("src",)
    assert ledger.gate.install == (".",)
    assert ledger.suite.paths == ("tests",)
    assert ledger.fixtures.roots == ("tests/fixtures",)
    lock = json.loads((repo / "eval/fixtures.lock.json").read_text())
    assert sorted(lock["files"]) == [
        "tests/fixtures/expected.json",
        "tests/fixtures/nested/raw.bin",
    ]
    mapped = {e.pattern: e.lanes for e in ledger.map}
    assert mapped["src/**"] == {"properties", "freeze"}
    assert mapped["Makefile"] == {"properties", "freeze"}  # unknown: every test lane
    assert mapped["scripts/**"] == {"properties", "freeze"}
    assert mapped["docs/**"] == frozenset()
    assert unmapped_tracked(repo) == []
    assert "attrs>=23" in (repo / "constraints/project.txt").read_text()
    assert ".patchjudge/" in (repo / ".gitignore").read_text().splitlines()
    assert '"count": True' in (repo / "eval/properties/test_public_api.py").read_text()

    write(repo, {"tests/fixtures/expected.json": '{"count": 2}\n'})
    commit(repo, "agent rewrites the expected value")
    assert gate(repo).code == 1
    v = verdict(repo)
    assert v["lanes"]["fixtures"]["reasons"] == ["changed: tests/fixtures/expected.json"]


def test_init_refuses_to_overwrite_without_force(tmp_path, judge_wheel):
    repo = flat_project(tmp_path / "calc")
    assert cli(repo, "init", *spec(judge_wheel)).code == 0
    (repo / "eval/gate.toml").write_text("# my edits\n")
    again = cli(repo, "init", *spec(judge_wheel))
    assert again.code == 2
    assert again.err.count("\n") == 1
    assert "already exists" in again.err and "--force" in again.err
    assert (repo / "eval/gate.toml").read_text() == "# my edits\n"
    forced = cli(repo, "init", "--force", *spec(judge_wheel))
    assert forced.code == 0, forced.err
    assert (repo / "eval/gate.toml").read_text().startswith("# The judge's ledger")
    assert (repo / ".gitignore").read_text().count(".patchjudge/") == 1


def test_init_refuses_to_overwrite_a_noxfile_the_project_already_has(tmp_path, judge_wheel):
    repo = init_repo(
        tmp_path / "r", {"noxfile.py": "# ours\n", "tests/test_a.py": "def test_a():\n    pass\n"}
    )
    result = cli(repo, "init", *spec(judge_wheel))
    assert result.code == 2
    assert "noxfile.py: already exists" in result.err
    assert not (repo / "eval").exists()


def test_a_project_with_nothing_importable_gets_a_starter_that_fails(tmp_path, judge_wheel):
    files = {
        "calc/__init__.py": "def _private():\n    return 1\n",
        "tests/test_a.py": "def test_a():\n    assert 1\n",
    }
    repo = init_repo(tmp_path / "r", files)
    out = _adopt(repo, *spec(judge_wheel))
    assert "FAILS until you write a real property" in out
    assert out.strip().splitlines()[-1] == (
        "warning: init found no public name to record, so eval/properties/test_public_api.py is"
        " a template that rejects every patch until you write a real property in it"
    )
    write(repo, {"calc/__init__.py": "def _private():\n    return 2\n"})
    commit(repo, "patch")
    assert gate(repo).code == 1
    reasons = verdict(repo)["lanes"]["properties"]["reasons"]
    # The assertion's own words, then the example without hypothesis' comment (issue 13).
    assert reasons == [
        "property failed: eval/properties/test_public_api.py::test_replace_me: write a real"
        " property in eval/properties/test_public_api.py; Failing test case: test_replace_me(x=0)"
    ]
    md = (repo / ".patchjudge" / "verdict.md").read_text()  # markdown-escaped: _ is \\_
    assert "write a real property in eval/properties/test\\_public\\_api.py; Failing test" in md
    assert "Failing test case: test\\_replace\\_me(x=0)" in md
    assert "generated value" not in md


@pytest.mark.parametrize(
    "args",
    [("--runner", "make"), ("--patchjudge-spec", "./dist/missing.whl"), ("--base=-x",)],
)
def test_bad_usage_is_exit_2_and_writes_nothing(tmp_path, args):
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init", *args)
    assert result.code == 2
    assert not (repo / "eval").exists()


def test_no_suite_and_no_repository_are_one_line_errors(tmp_path):
    repo = init_repo(tmp_path / "r", {"README.md": "# nothing\n"})
    result = cli(repo, "init")
    assert result.code == 2
    assert "no pytest suite found" in result.err and result.err.count("\n") == 1
    outside = tmp_path / "plain"
    outside.mkdir()
    result = cli(outside, "init")
    assert result.code == 2
    assert "not a git repository" in result.err


def test_the_patchjudge_spec_installs_on_any_machine_never_a_path_on_this_one(
    tmp_path, judge_wheel
):
    # issue 19: constraints/patchjudge.txt held the wheel's (or checkout's) absolute path.
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init")
    assert result.code == 0, result.err
    text = (repo / "constraints/patchjudge.txt").read_text()
    installed = pins.from_direct_url(pins.installed_direct_url(), __version__)
    wheels = sorted((repo / "constraints").glob("patchjudge-*.whl"))
    if installed.kind == "index":
        assert text.endswith(installed.text() + "\n") and not wheels
    else:  # an editable checkout or a wheel file: the wheel is committed, pinned by hash
        (wheel,) = wheels
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        assert text.endswith(f"patchjudge=={__version__} \\\n    --hash=sha256:{digest}\n")
        assert "from the wheel committed beside it" in result.out
    assert str(tmp_path) not in text and "/" not in text.splitlines()[-2]
    # A wheel passed by path is copied in, its bytes and hash kept.
    given = judge_wheel
    assert cli(repo, "init", "--force", "--patchjudge-spec", str(given)).code == 0
    text = (repo / "constraints/patchjudge.txt").read_text()
    digest = hashlib.sha256(given.read_bytes()).hexdigest()
    assert text.endswith(f"patchjudge=={__version__} \\\n    --hash=sha256:{digest}\n")
    assert (repo / "constraints" / given.name).read_bytes() == given.read_bytes()
    assert "No hash here" not in text and str(tmp_path) not in text


def test_a_patchjudge_spec_that_does_not_install_here_is_one_line_naming_the_fix(tmp_path):
    # The first adopter's complaint: a pin no index serves failed every nox lane at install.
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init", "--patchjudge-spec", "patchjudge==0.0.0.dev0")
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert result.err.startswith(
        "patchjudge: constraints/patchjudge.txt: --patchjudge-spec: patchjudge==0.0.0.dev0"
        " does not resolve here"
    )
    assert "pass --patchjudge-spec with a patchjudge wheel" in result.err
    assert not (repo / "eval").exists()


@pytest.mark.slow
def test_the_generated_noxfile_gates_a_patch_without_patchjudges_source_tree(
    tmp_path, judge_wheel, monkeypatch
):
    # No judge cache: a judge venv another test kept (noxcold4) would install nothing here.
    monkeypatch.setenv("PATCHJUDGE_CACHE_DIR", "")
    wheel = judge_wheel
    repo = flat_project(tmp_path / "calc")
    # The starter property checks names, it calls nothing: the changed line is
    # never exercised (issue 18). This test is about the noxfile, so only report it.
    _adopt(repo, "--patchjudge-spec", str(wheel), ledger_extra=REPORT_UNEXERCISED)
    write(repo, {"calc/__init__.py": "def total(xs):\n    return sum(list(xs))\n"})
    commit(repo, "trivial")
    nox = [sys.executable, "-m", "nox", "--no-color", "-s", "gate", "--"]
    result = run([*nox, "--base", "main", "--today", "2026-12-01"], repo)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert verdict(repo)["verdict"] == "accept_for_review"
    # Every install came from constraints/ (and the project itself): nothing else.
    installs = [line for line in result.stderr.splitlines() if "pip install" in line]
    assert installs
    for line in installs:
        assert "/constraints/" in line or line.endswith(str(repo)), line


def test_a_symlinked_fixture_stops_init_before_it_writes_anything(tmp_path, judge_wheel):
    repo = flat_project(tmp_path / "calc")
    (repo / "tests/fixtures").mkdir(parents=True)
    (repo / "tests/fixtures/real.json").write_text("{}\n")
    (repo / "tests/fixtures/link.json").symlink_to("real.json")
    commit(repo, "fixtures")
    result = cli(repo, "init", *spec(judge_wheel))
    assert result.code == 2
    assert result.err.startswith("patchjudge: tests/fixtures/link.json: a fixture must be")
    assert not (repo / "eval").exists()
    assert not (repo / "noxfile.py").exists()


# --- strangers' repositories: adoption with no edit (issue 13) ------------------

GONE = "property failed: eval/properties/test_public_api.py::test_every_public_name_is_still_there"


def _pyflakes_repo(tmp_path: Path) -> Path:
    return repo_from_tree(sdist(tmp_path / "sdist", *PYFLAKES), tmp_path / "pyflakes")


def _cachetools_repo(tmp_path: Path) -> Path:
    tree = sdist(tmp_path / "sdist", *CACHETOOLS)
    write(tree, TEAM_PACKAGE)
    return repo_from_tree(tree, tmp_path / "cachetools")


def _adopted_once(
    factory: pytest.TempPathFactory, wheel: Path, name: str, make: Callable[[Path], Path]
) -> Path:
    """`make`'s repository adopted (init with the run's judge wheel, no edit, committed, on
    branch `patch`) once a run; init's output beside it in `init.out`. Read only: each test
    takes a copy (`_copy`). issue 20: the CLI test and the nox test of a stranger's
    repository adopted it alike, each paying for init (which runs its suite)."""

    def adopt(work: Path) -> Path:
        repo = make(work)
        (work / "init.out").write_text(_adopt(repo, *spec(wheel)))
        return repo

    return built_once(shared_dir(factory), f"{name}-adopted", adopt)


@pytest.fixture(scope="session")
def pyflakes_adopted(tmp_path_factory: pytest.TempPathFactory, judge_wheel: Path) -> Path:
    return _adopted_once(tmp_path_factory, judge_wheel, "pyflakes", _pyflakes_repo)


@pytest.fixture(scope="session")
def cachetools_adopted(tmp_path_factory: pytest.TempPathFactory, judge_wheel: Path) -> Path:
    return _adopted_once(tmp_path_factory, judge_wheel, "cachetools", _cachetools_repo)


def _copy(tmp_path: Path, adopted: Path) -> tuple[Path, str]:
    """A copy of an adopted repository, and init's output there."""
    repo = shutil.copytree(adopted, tmp_path / adopted.name, symlinks=True)
    return repo, (adopted.parent / "init.out").read_text()


def _edit(repo: Path, rel: str, old: str, new: str, message: str) -> None:
    source = (repo / rel).read_text()
    assert old in source, (rel, old)
    write(repo, {rel: source.replace(old, new, 1)})
    commit(repo, message)


def _surface(repo: Path) -> dict[str, dict[str, bool]]:
    namespace: dict[str, object] = {}
    exec((repo / "eval/properties/test_public_api.py").read_text(), namespace)
    surface = namespace["SURFACE"]
    assert isinstance(surface, dict)
    return surface


@pytest.mark.long
def test_a_flat_package_whose_root_is_empty_is_adopted_with_no_edit(tmp_path, pyflakes_adopted):
    repo, out = _copy(tmp_path, pyflakes_adopted)
    surface = _surface(repo)
    # The root holds only __version__: the API is the submodules', __all__ where declared.
    assert "pyflakes" not in surface
    assert surface["pyflakes.api"] == {
        "check": True, "checkPath": True, "checkRecursive": True, "iterSourceCode": True,
        "main": True,
    }  # fmt: skip
    assert surface["pyflakes.messages"]["UnusedImport"] is True
    # __all__, imported from pyflakes.api: followed to its def (issue 19)
    assert surface["pyflakes.scripts.pyflakes"]["checkRecursive"] is True
    assert not any(m.startswith("pyflakes.test") for m in surface)  # its suite is no API
    assert "public names of pyflakes.api, pyflakes.checker, pyflakes.messages" in out
    assert "warning" not in out
    assert "setuptools==" in (repo / "constraints/build.txt").read_text()  # PEP 517's fallback

    _edit(repo, "pyflakes/api.py", "def check(", "# an agent's comment\ndef check(", "benign")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert verdict(repo)["verdict"] == "accept_for_review"

    _edit(repo, "pyflakes/api.py", "def checkRecursive(", "def _checkRecursive(", "rename")
    assert gate(repo).code == 1
    reasons = verdict(repo)["lanes"]["properties"]["reasons"]
    # pyflakes.scripts.pyflakes re-exports it (its __all__): that module breaks too.
    assert reasons == [
        f"{GONE}: public names gone: pyflakes.api.checkRecursive; pyflakes.scripts.pyflakes does"
        " not import (ImportError: cannot import name 'checkRecursive' from 'pyflakes.api'"
        " (pyflakes/api.py))"
    ]


def test_a_src_layout_with_two_top_level_packages_is_adopted_with_no_edit(
    tmp_path, cachetools_adopted
):
    repo, out = _copy(tmp_path, cachetools_adopted)
    surface = _surface(repo)
    # Its root names its API (__all__), so the root is the surface; the team's empty root is walked.
    assert set(surface) == {"cachetools", "cachestats.counters"}
    assert surface["cachestats.counters"] == {"WINDOW": False, "hit_ratio": True}
    assert surface["cachetools"]["TTLCache"] is True
    assert "public names of cachestats.counters, cachetools stay" in out
    build = (repo / "constraints/build.txt").read_text()
    assert "setuptools==" in build and "wheel==" in build  # its [build-system] requires

    _edit(repo, "src/cachetools/keys.py", '"""', '# an agent\'s comment\n"""', "benign")
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert verdict(repo)["verdict"] == "accept_for_review"

    _edit(repo, "src/cachestats/counters.py", "def hit_ratio(", "def ratio(", "rename")
    _edit(repo, "src/cachetools/__init__.py", "def cachedmethod(", "def cached_method(", "too")
    assert gate(repo).code == 1
    reasons = verdict(repo)["lanes"]["properties"]["reasons"]
    assert reasons == [
        f"{GONE}: public names gone: cachestats.counters.hit_ratio, cachetools.cachedmethod"
    ]


def _nox_gate(repo: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    nox = [sys.executable, "-m", "nox", "--no-color", *flags, "-s", "gate", "--"]
    return run([*nox, "--base", "main", "--today", "2026-12-01"], repo)


def _installs_only_from_constraints(repo: Path, log: str) -> None:
    installs = [line for line in log.splitlines() if "pip install" in line]
    assert installs
    wheels = [line for line in installs if "/constraints/" not in line]
    # The project: built into a wheel in the sandbox from build.txt's backend,
    # offline, then installed with no deps (installing a wheel runs nothing).
    assert wheels, log
    for line in wheels:
        assert "/_wheels/" in line and line.endswith(".whl") and "--no-deps" in line, line


@pytest.mark.slow
@pytest.mark.parametrize(
    ("adopted", "edit", "gone"),
    [
        # One nox run, not two (issue 20): a helper its own suite never names made private
        # (its caller too), so properties alone rejects and every other lane passes on the
        # head's build. The removal of a name the suite uses: through the CLI,
        # test_a_flat_package_whose_root_is_empty_is_adopted_with_no_edit.
        ("pyflakes_adopted", ("pyflakes/checker.py", "getAlternatives", "_getAlternatives"),
         "pyflakes.checker.getAlternatives"),
        # A benign patch accepted. Its removal through the CLI only (issue 20: one nox run
        # fewer): the same adoption and a removal of the same name,
        # test_a_src_layout_with_two_top_level_packages_is_adopted_with_no_edit.
        ("cachetools_adopted", ("src/cachetools/keys.py", '"""Key functions', '# x\n"""Key functions'),
         None),
    ],
    ids=["pyflakes", "cachetools"],
)  # fmt: skip
def test_the_noxfile_init_wrote_gates_a_strangers_repository(
    tmp_path, request, adopted, edit, gone
):
    # The adoption is the CLI test's (a session fixture, built once a run: issue 20).
    repo, _ = _copy(tmp_path, request.getfixturevalue(adopted))
    rel, old, new = edit
    source = (repo / rel).read_text()
    assert old in source, (rel, old)
    write(repo, {rel: source.replace(old, new)})  # every use: a name and its callers
    commit(repo, "the patch")
    result = _nox_gate(repo)
    log = result.stdout[-3000:] + result.stderr[-3000:]
    assert result.returncode == (0 if gone is None else 1), log
    _installs_only_from_constraints(repo, result.stderr)
    found = verdict(repo)
    if gone is None:
        assert found["verdict"] == "accept_for_review"
        return
    module, name = gone.rsplit(".", 1)
    assert name in _surface(repo)[module], "a recorded public name"
    assert found["verdict"] == "reject"
    assert found["lanes"]["properties"]["reasons"] == [f"{GONE}: public names gone: {gone}"], found
    others = {n: lane["status"] for n, lane in found["lanes"].items() if n != "properties"}
    assert set(others.values()) <= {"pass", "not_applicable"}, found
    assert others["pathfilter"] == others["freeze"] == "pass", found


def test_an_index_that_serves_patchjudge_gets_the_pin_with_its_hash(tmp_path, judge_wheel):
    # An index of our own (a find-links directory holding the wheel), as pip sees it.
    index = tmp_path / "index"
    index.mkdir()
    (index / judge_wheel.name).write_bytes(judge_wheel.read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PIP_"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(index), PIP_CONFIG_FILE=os.devnull)
    repo = flat_project(tmp_path / "calc")
    result = cli(repo, "init", "--patchjudge-spec", f"patchjudge=={__version__}", env=env)
    assert result.code == 0, result.err
    text = (repo / "constraints/patchjudge.txt").read_text()
    digest = hashlib.sha256(judge_wheel.read_bytes()).hexdigest()
    assert text.endswith(f"patchjudge=={__version__} \\\n    --hash=sha256:{digest}\n"), text
