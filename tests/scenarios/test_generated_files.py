"""issue 19: a file the build backend writes into the tree (setuptools_scm's git-ignored
version file) is in the lanes' trees, as it is in the user's after `pip install -e .`.

The project here is the smallest of that kind: an in-tree PEP 517 backend
(`backend-path`) whose metadata hook writes `src/calc/_version.py` from the
version setuptools_scm would be pretended, declared as `[tool.setuptools_scm]
write_to` and git-ignored; the package imports it.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli, commit, example_repo, gate, init_repo, verdict, write
from tests.init_helpers import spec

PYPROJECT = """\
[build-system]
requires = []
build-backend = "versionwriter"
backend-path = ["_build"]

[project]
name = "calc"
dynamic = ["version"]

[tool.setuptools_scm]
write_to = "{write_to}"
"""

BACKEND = """\
import os


def prepare_metadata_for_build_wheel(out, config_settings=None):
    version = os.environ.get("SETUPTOOLS_SCM_PRETEND_VERSION", "unknown")
    target = {write_to!r}
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as fh:
        fh.write(f"version = {{version!r}}\\n")
    os.makedirs(os.path.join(out, "calc-0.dist-info"))
    with open(os.path.join(out, "calc-0.dist-info", "METADATA"), "w") as fh:
        fh.write("Metadata-Version: 2.1\\nName: calc\\nVersion: 0\\n")
    return "calc-0.dist-info"


def build_wheel(out, config_settings=None, metadata_directory=None):
    raise NotImplementedError
"""

CALC = """\
from ._version import version


def total(xs):
    return sum(xs)
"""

VERSION_TEST = """\
import calc


def test_the_version_is_the_checkouts():
    assert calc.version.startswith("0.1.dev")
"""


def _project(tmp_path: Path, write_to: str = "src/calc/_version.py") -> Path:
    return example_repo(
        tmp_path,
        **{
            "pyproject.toml": PYPROJECT.format(write_to=write_to),
            "_build/versionwriter.py": BACKEND.format(write_to=write_to),
            ".gitignore": "src/calc/_version.py\n",
            "src/calc/__init__.py": CALC,
            "tests/test_version.py": VERSION_TEST,
        },
    )


def test_the_backends_version_file_is_in_every_lanes_tree(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    write(repo, {"src/calc/__init__.py": CALC + "\n# a comment\n"})
    commit(repo)
    result = gate(repo)
    assert result.code == 0, result.out + result.err
    assert verdict(repo)["verdict"] == "accept_for_review"
    # Not the checkout's: nothing was written there.
    assert not (repo / "src" / "calc" / "_version.py").exists()


def test_a_head_that_breaks_the_import_is_the_patchs(tmp_path: Path) -> None:
    # The look-alike that must still fail: the head imports a name the file lacks.
    repo = _project(tmp_path)
    write(repo, {"src/calc/__init__.py": CALC.replace("import version", "import release")})
    commit(repo)
    result = gate(repo)
    assert result.code == 1, result.out + result.err
    assert "release" in " ".join(verdict(repo)["reasons"])


def test_a_declared_file_behind_a_symlink_is_not_written_outside_the_tree(
    tmp_path: Path,
) -> None:
    # The head points a directory of its tree elsewhere and declares the file
    # there: the judge writes only inside its scratch trees.
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = _project(tmp_path)
    (repo / "src" / "calc" / "gen").symlink_to(outside, target_is_directory=True)
    write(
        repo,
        {
            "pyproject.toml": PYPROJECT.format(write_to="src/calc/gen/_version.py"),
            "src/calc/__init__.py": CALC.replace("._version", ".gen._version"),
        },
    )
    commit(repo)
    gate(repo)
    assert list(outside.iterdir()) == []


# issue 19, held out (pluggy 1.6.0, platformdirs 4.3.8): a real declaration,
# whose backend (setuptools_scm, hatch-vcs) is not installed where the judge
# runs, as after a plain `pip install patchjudge`. The judge fills the
# backend's template itself: version, version_tuple, as both backends write.
SCM = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
dynamic = ["version"]

[tool.setuptools_scm]
version_file = "src/calc/_version.py"
"""

HATCH_VCS = """\
[build-system]
requires = ["hatchling>=1.27", "hatch-vcs>=0.4"]
build-backend = "hatchling.build"

[project]
name = "calc"
dynamic = ["version"]

[tool.hatch]
version.source = "vcs"
build.hooks.vcs.version-file = "src/calc/_version.py"
"""

CALC_TUPLE = """\
from ._version import __version__, version_tuple


def total(xs):
    return sum(xs)
"""

TUPLE_TEST = """\
import calc


def test_the_version_is_the_checkouts():
    assert calc.__version__.startswith("0.1.dev")
    assert calc.version_tuple[:3] == (0, 1, "dev" + calc.__version__.split("dev")[1][:1])
"""


def test_a_backend_missing_here_still_gives_every_lane_its_version_file(tmp_path: Path) -> None:
    repo = example_repo(
        tmp_path,
        **{
            "pyproject.toml": HATCH_VCS,
            ".gitignore": "src/calc/_version.py\n",
            "src/calc/__init__.py": CALC_TUPLE,
            "tests/test_version.py": TUPLE_TEST,
        },
    )
    write(repo, {"src/calc/__init__.py": CALC_TUPLE + "\n# a comment\n"})
    commit(repo)
    result = gate(repo)
    assert (result.code, verdict(repo)["verdict"]) == (0, "accept_for_review"), result.out
    assert "did not write" not in result.err, result.err  # no backend was asked
    assert not (repo / "src" / "calc" / "_version.py").exists()


def test_init_starts_green_where_the_backend_writes_the_version_file(
    tmp_path: Path, judge_wheel: Path
) -> None:
    # Before: a red start ("No module named 'calc._version'") on a tree every
    # lane would have given the file; init refused a project the gate judges.
    repo = init_repo(
        tmp_path / "calc",
        {
            "pyproject.toml": SCM,
            ".gitignore": "src/calc/_version.py\n",
            "src/calc/__init__.py": CALC_TUPLE,
            "tests/test_version.py": TUPLE_TEST,
        },
    )
    result = cli(repo, "init", *spec(judge_wheel))
    assert result.code == 0, result.err
    assert "the starter passes at this commit (2 names)" in result.out, result.out
    assert not (repo / "src" / "calc" / "_version.py").exists(), "the checkout is not written"
