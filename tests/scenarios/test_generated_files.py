"""issue 19: a file the build backend writes into the tree (setuptools_scm's git-ignored
version file) is in the lanes' trees, as it is in the user's after `pip install -e .`.

The project here is the smallest of that kind: an in-tree PEP 517 backend
(`backend-path`) whose metadata hook writes `src/calc/_version.py` from the
version setuptools_scm would be pretended, declared as `[tool.setuptools_scm]
write_to` and git-ignored; the package imports it.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import commit, example_repo, gate, verdict, write

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
