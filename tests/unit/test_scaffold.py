"""init's pure side: layout detection, a map that leaves nothing unmapped, the starter files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchjudge import scaffold
from patchjudge.config import LEDGER, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes.properties import thin_reason
from patchjudge.paths import any_match, first_match
from tests.init_helpers import ROOT

segment = st.sampled_from(
    ["src", "tests", "test", "docs", "eval", "fixtures", "data", "pkg", "__init__.py",
     "test_a.py", "a_test.py", "a.py", "README.md", "notes.rst", "Makefile", "LICENSE",
     "setup.py", "pyproject.toml", "conftest.py", ".github", "workflows", "ci.yml",
     "we[ird].txt", "a b", " lead", "é.py", "star*", "back\\slash", "new\nline", "!bang",
     "#hash", "noxfile.py", "tox.ini", "constraints"]
)  # fmt: skip
path = st.lists(segment, min_size=1, max_size=4).map("/".join)
tracked_sets = st.lists(path, max_size=12).map(lambda ps: sorted({"tests/test_x.py", *ps}))


def _options(runner: str = "nox") -> scaffold.Options:
    return scaffold.Options(base="origin/main", runner=runner, patchjudge_spec="patchjudge==0.1.0")


@settings(deadline=None)  # a loaded 2-core CI box is no reason to fail
@given(tracked_sets, st.sampled_from(scaffold.RUNNERS))
def test_the_written_map_leaves_no_path_unmapped_and_protects_the_judge(tracked, runner):
    layout = scaffold.detect(tracked)
    files = scaffold.scaffold(tracked, layout, {}, _options(runner))
    ledger = parse_ledger(files[LEDGER].encode(), LEDGER)
    for p in {*tracked, *files, scaffold.FIXTURE_LOCK}:
        assert first_match(ledger.map, p) is not None, p
    for p in [*files, scaffold.FIXTURE_LOCK]:
        assert any_match(ledger.judge_paths(), p), p
    for code in layout.code_paths:
        entry = first_match(ledger.map, code if code.endswith(".py") else f"{code}/x.py")
        assert entry is not None
        assert entry.lanes == {"properties", "freeze"}


@pytest.mark.parametrize(
    ("tracked", "pyproject", "expected"),
    [
        pytest.param(
            ["src/tally/__init__.py", "src/tally/core.py", "tests/test_tally.py",
             "tests/fixtures/a.json", "tests/fixtures/deep/b.bin", "docs/index.md"],
            None,
            {"src_layout": True, "modules": ("tally",), "code_paths": ("src",),
             "suite_paths": ("tests",), "fixture_roots": ("tests/fixtures",),
             "pythonpath": ("src",), "installable": False},
            id="src layout",
        ),
        pytest.param(
            ["six.py", "test_six.py", "setup.py", "documentation/index.rst"],
            None,
            {"src_layout": False, "modules": ("six",), "code_paths": ("six.py",),
             "suite_paths": ("test_six.py",), "fixture_roots": (), "pythonpath": (".",),
             "installable": True},
            id="flat module, test file at the top",
        ),
        pytest.param(
            ["calc/__init__.py", "calc/tests/test_calc.py", "calc/tests/data/x.txt",
             "conftest.py", "setup.py"],
            None,
            {"modules": ("calc",), "code_paths": ("calc",), "suite_paths": ("calc/tests",),
             "fixture_roots": ("calc/tests/data",)},
            id="tests inside the package",
        ),
        pytest.param(
            ["lib/__init__.py", "testing/test_lib.py", "other/test_other.py", "pyproject.toml"],
            b'[tool.pytest.ini_options]\ntestpaths = ["testing/"]\n'
            b'[project]\nname = "lib"\ndependencies = ["attrs>=23"]\n',
            {"suite_paths": ("testing",), "dependencies": ("attrs>=23",), "installable": True},
            id="testpaths from pyproject",
        ),
    ],
)  # fmt: skip
def test_detect(tracked, pyproject, expected):
    layout = scaffold.detect(tracked, pyproject)
    for key, value in expected.items():
        assert getattr(layout, key) == value, key


@pytest.mark.parametrize(
    "tracked", [["README.md", "pkg/__init__.py"], ["eval/properties/test_p.py", "a.py"]]
)
def test_no_suite_is_an_error_naming_the_fix(tracked):
    with pytest.raises(PatchjudgeError, match="no pytest suite") as info:
        scaffold.detect(tracked)
    assert "commit the tests" in info.value.one_line()


def test_unreadable_pyproject_names_the_file():
    with pytest.raises(PatchjudgeError) as info:
        scaffold.detect(["tests/test_a.py"], b"[project\n")
    assert info.value.one_line().startswith("pyproject.toml: not readable TOML")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(): pass\nclass C: pass\nX = 1\n_y = 2\n", {"f": True, "C": True, "X": False}),
        ("__all__ = ['f', 'gone']\ndef f(): pass\ndef g(): pass\n", {"f": True}),
        ("if True:\n    def maybe(): pass\ntry:\n    import x\nexcept ImportError:\n    x = 0\n",
         {}),
        ("def f(): pass\ndel f\n", {}),
        ("from __future__ import annotations\nfrom .core import load as read, _hidden\n",
         {"read": False}),
        ("def broken(:\n", {}),
    ],
)  # fmt: skip
def test_public_names_are_the_unconditional_top_level(source, expected):
    assert scaffold.public_names(source.encode()) == expected


@pytest.mark.parametrize("api", [{"calc": {"total": True, "RATE": False}}, {}, {"empty": {}}])
def test_the_starter_property_is_no_thin_file(api):
    text = scaffold.render_property(api)
    assert thin_reason("eval/properties/test_public_api.py", text.encode()) is None
    ast.parse(text)


def test_without_public_names_the_starter_fails_until_written():
    text = scaffold.render_property({})
    namespace: dict[str, object] = {}
    exec(compile(text, "starter.py", "exec"), namespace)
    with pytest.raises(AssertionError, match="write a real property"):
        namespace["test_replace_me"]()


def test_the_api_starter_holds_for_what_it_recorded_and_fails_when_a_name_goes(tmp_path):
    text = scaffold.render_property({"json": {"dumps": True, "loads": True}})
    namespace: dict[str, object] = {}
    exec(compile(text, "starter.py", "exec"), namespace)
    namespace["test_public_name_still_there"]()
    broken = text.replace('"loads": True', '"no_such_name": True')
    namespace = {}
    exec(compile(broken, "starter.py", "exec"), namespace)
    with pytest.raises(AssertionError, match=r"json\.no_such_name is gone"):
        namespace["test_public_name_still_there"]()


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (None, [".patchjudge/", ".nox/", ".tox/"]),
        (".nox\n.tox/\n", [".patchjudge/"]),
        ("  .patchjudge/  \n.nox/\n.tox\n", []),
    ],
)
def test_gitignore_additions(current, expected):
    assert scaffold.gitignore_additions(current) == expected


def test_the_packaged_lane_pins_are_the_projects_own():
    # init hands users the pins patchjudge's own lanes are tested with; `nox -s lock`
    # regenerates constraints/lane.txt, and this says when the copy must follow.
    packaged = ROOT / "src" / "patchjudge" / "templates" / "init" / "lane.txt"
    assert packaged.read_bytes() == (ROOT / "constraints" / "lane.txt").read_bytes()


def test_tox_ini_installs_the_project_only_when_it_is_installable():
    flat = scaffold.detect(["calc/__init__.py", "tests/test_calc.py"])
    packaged = scaffold.detect(["calc/__init__.py", "tests/test_calc.py", "setup.py"])
    assert "--no-deps {tox_root}\n" not in scaffold.render_tox(flat)
    assert "--no-deps {tox_root}\n" in scaffold.render_tox(packaged)


def test_an_unknown_runner_is_an_error():
    layout = scaffold.detect(["tests/test_a.py"])
    with pytest.raises(PatchjudgeError, match="unknown runner"):
        scaffold.scaffold(["tests/test_a.py"], layout, {}, _options("make"))


def test_templates_ship_with_the_package():
    for name in ("noxfile.py.tmpl", "tox.ini.tmpl", "gate.toml.tmpl", "lane.txt"):
        assert (Path(scaffold.__file__).parent / "templates" / "init" / name).is_file()


@pytest.mark.parametrize("runner", scaffold.RUNNERS)
def test_the_ci_recipes_are_valid_yaml_that_run_the_chosen_runner(runner):
    import yaml

    layout = scaffold.detect(["tests/test_a.py"])
    files = scaffold.scaffold(["tests/test_a.py"], layout, {}, _options(runner))
    other = {"nox": "tox -e gate", "tox": "nox -s gate"}[runner]
    for rel in (scaffold.GITHUB_WORKFLOW, scaffold.GITLAB_JOB):
        doc = yaml.safe_load(files[rel])
        assert isinstance(doc, dict) and doc, rel
        assert other not in files[rel]
    assert "jobs" in yaml.safe_load(files[scaffold.GITHUB_WORKFLOW])
