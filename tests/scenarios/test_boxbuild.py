"""Building the package to install runs its build backend in the sandbox (nox sessions)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.attack_helpers import require_sandbox
from tests.helpers import commit, git

# An in-tree PEP 517 backend (pyproject's backend-path): the patch's own code,
# run by the build. It tries the ways out, then makes a real wheel.
BACKEND = """
import os, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.path.exists(".git"):
        raise RuntimeError("the checkout's .git came along")
    for target in {targets!r}:
        try:
            with open(target, "w") as f:
                f.write("escaped")
        except OSError:
            pass
    name = "shop-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        whl.writestr("shop/__init__.py", "VALUE = 1\\n")
        whl.writestr("shop-1.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: shop\\nVersion: 1.0\\n")
        whl.writestr("shop-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        whl.writestr("shop-1.0.dist-info/RECORD", "")
        for member, data in {extra!r}:
            whl.writestr(member, data)
    return name
"""


def _project(tmp_path: Path, targets: list[str], extra: tuple[tuple[str, str], ...] = ()) -> Path:
    src = tmp_path / "checkout"
    (src / ".git").mkdir(parents=True)
    (src / ".git" / "config").write_text("[core]\n")
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    )
    (src / "backend.py").write_text(textwrap.dedent(BACKEND.format(targets=targets, extra=extra)))
    return src


def _build(src: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "patchjudge.boxbuild", str(src), str(out), *args],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_the_build_backend_runs_boxed_and_only_the_wheel_leaves(tmp_path: Path) -> None:
    require_sandbox()
    home = Path.home() / f"patchjudge-escape-{uuid.uuid4().hex}"
    checkout_file = tmp_path / "checkout" / ".git" / "hooks-planted"
    beside = tmp_path / "beside.txt"
    src = _project(tmp_path, [str(home), str(checkout_file), str(beside)])
    try:
        done = _build(src, tmp_path / "wheels", "--isolation", "sandbox")
        assert done.returncode == 0, done.stderr
        wheel = Path(done.stdout.strip().splitlines()[-1])
        assert wheel == (tmp_path / "wheels" / "shop-1.0-py3-none-any.whl").resolve()
        assert "shop/__init__.py" in zipfile.ZipFile(wheel).namelist()
        assert not home.exists()
        assert not checkout_file.exists()
        assert not beside.exists()
    finally:
        home.unlink(missing_ok=True)


def test_a_build_that_fails_is_exit_2_with_the_reason(tmp_path: Path) -> None:
    require_sandbox()
    src = _project(tmp_path, [])
    (src / "backend.py").write_text("raise RuntimeError('no backend here')\n")
    done = _build(src, tmp_path / "wheels", "--isolation", "sandbox")
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line
    assert "building" in line and "no backend here" in line and "(sandbox, exit 1)" in line


def test_the_command_line_cannot_loosen_the_ledger_for_a_build(tmp_path: Path) -> None:
    src = _project(tmp_path, [])
    done = _build(src, tmp_path / "w", "--ledger-isolation", "sandbox", "--isolation", "process")
    assert done.returncode == 2
    assert "would loosen" in done.stderr


@pytest.mark.parametrize(
    ("member", "data", "said"),
    [
        ("shop.pth", "import os\n", "runs at every interpreter start: shop.pth"),
        ("sitecustomize.py", "", "runs at every interpreter start: sitecustomize.py"),
        ("_pytest/main.py", "", "would replace _pytest, installed by pytest"),
        ("shop-1.0.data/scripts/patchjudge", "", "installs scripts files outside its package"),
        ("shop-1.0.data/data/lib/x.pth", "", "installs data files outside its package"),
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[console_scripts]\npatchjudge = shop:main\n",
            "installs a command the venv has: patchjudge",
        ),
    ],
    ids=["pth", "sitecustomize", "judge package", "scripts", "data", "console script"],
)
def test_a_wheel_that_would_reach_the_judge_is_refused(
    tmp_path: Path, member: str, data: str, said: str
) -> None:
    # Installing a wheel runs no code, but its files land in the judge's venv.
    src = _project(tmp_path, [], extra=((member, data),))
    done = _build(src, tmp_path / "wheels", "--ledger-isolation", "process")
    assert done.returncode == 2, done.stdout
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_judge_dependency_builds_into_the_codes_own_venv(tmp_path: Path, lane_venv: Path) -> None:
    # issue 19: a project that is pluggy replaces the judge's pluggy in the
    # judge's venv, but is judged like any other in the venv its code runs in.
    src = _project(tmp_path, [])
    (src / "backend.py").write_text((src / "backend.py").read_text().replace("shop", "pluggy"))
    judges = _build(src, tmp_path / "w1", "--ledger-isolation", "process")
    assert judges.returncode == 2
    assert "would replace pluggy, which the judge runs on" in judges.stderr
    done = _build(src, tmp_path / "w2", "--ledger-isolation", "process", "--into", str(lane_venv))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("pluggy-1.0-py3-none-any.whl")


def test_the_codes_venv_still_refuses_another_distributions_package(
    tmp_path: Path, lane_venv: Path
) -> None:
    src = _project(tmp_path, [], extra=(("_pytest/main.py", ""),))
    done = _build(src, tmp_path / "w", "--ledger-isolation", "process", "--into", str(lane_venv))
    assert done.returncode == 2
    assert "would replace _pytest, installed by pytest" in done.stderr


def test_the_wheel_installs_into_a_code_venv_made_without_pip(tmp_path: Path) -> None:
    # issue 20: tox's code venv is made with --without-pip (no ensurepip each run);
    # --install puts the wheel there with the judge's own pip (--python).
    venv = tmp_path / "code"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    src = _project(tmp_path, [])
    args = ("--ledger-isolation", "process", "--into", str(python), "--install")
    done = _build(src, tmp_path / "w", *args)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [str(python), "-c", "import shop; print(shop.VALUE)"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert shown.stdout == "1\n", shown.stderr
    assert not list(venv.glob("lib/python*/site-packages/pip"))


SCM_BACKEND = """
import os, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = os.environ.get("SETUPTOOLS_SCM_PRETEND_VERSION")
    if version is None or os.path.exists(".git"):
        raise LookupError("setuptools-scm was unable to detect version")
    name = f"shop-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        whl.writestr("shop/_version.py", f"version = {version!r}\\n")
        whl.writestr(f"shop-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\\nName: shop\\nVersion: {version}\\n")
        whl.writestr(f"shop-{version}.dist-info/RECORD", "")
    return name
"""


@pytest.mark.parametrize(("tag", "version"), [(None, "0.1.dev1+g"), ("v1.2", "1.2")])
def test_a_setuptools_scm_build_gets_its_version_from_the_checkout(
    tmp_path: Path, tag: str | None, version: str
) -> None:
    # issue 19: the box's copy has no .git; the version setuptools_scm would
    # read there is given to the build, and said.
    src = tmp_path / "checkout"
    src.mkdir()
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools-scm>=8"]\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n'
    )
    (src / "backend.py").write_text(textwrap.dedent(SCM_BACKEND))
    git(src, "init", "-q", "-b", "main")
    head = commit(src, "one")
    if tag:
        git(src, "tag", tag)
    done = _build(src, tmp_path / "wheels", "--ledger-isolation", "process")
    assert done.returncode == 0, done.stderr
    expected = version + (head[:9] if version.endswith("+g") else "")
    assert Path(done.stdout.strip()).name == f"shop-{expected}-py3-none-any.whl"
    assert f"as version {expected} (SETUPTOOLS_SCM_PRETEND_VERSION)" in done.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--install"], "--install: needs --into"),
        (["--ledger", "nowhere/gate.toml"], "nowhere/gate.toml: cannot read"),
    ],
)
def test_tox_options_misused_are_one_line_before_any_build(
    tmp_path: Path, args: list[str], said: str
) -> None:
    # issue 19: tox.ini's line passes --ledger and --install; a wrong one is exit 2, one line.
    done = subprocess.run(
        [sys.executable, "-m", "patchjudge.boxbuild", str(tmp_path), str(tmp_path / "out"), *args],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


# Red team, session 12 (second round): what the judge's pytest in the code's venv loads
# without the project importing it. Each ran the head's code in every pytest of that venv,
# the base's collection too, whose result the judge keeps for later runs: a later honest
# patch was rejected "visible test gone" for a test only the hostile wheel's run saw.
@pytest.mark.parametrize(
    ("member", "data", "said"),
    [
        ("sitecustomize.pyc", "", "runs at every interpreter start: sitecustomize.pyc"),
        (
            "sitecustomize.cpython-311-x86_64-linux-gnu.so",
            "",
            "runs at every interpreter start: sitecustomize.cpython-311-x86_64-linux-gnu.so",
        ),
        (
            "__pycache__/_hypothesis_pytestplugin.cpython-311.pyc",
            "",
            "brings bytecode, which runs in place of a source: __pycache__/_hypothesis_pytest",
        ),
        ("./zz.pth", "", "names a file the installer would move: ./zz.pth"),
        ("shop/../org/__init__.py", "", "names a file the installer would move: shop/../org"),
        ("typing_extensions.py", "", "which looks for typing_extensions"),
        ("org/__init__.py", "", "which looks for org"),
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[hypothesis]\n_ = shop:hook\n",
            "runs at every import of hypothesis: entry point [hypothesis] _",
        ),
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[pytest11]\npatchjudge.pytest_plugin = shop\n",
            "stands in for the plugin `-p patchjudge.pytest_plugin` loads",
        ),
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[pytest11]\nhypothesis.extra.pytestplugin = shop\n",
            "stands in for the plugin `-p hypothesis.extra.pytestplugin` loads",
        ),
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[pytest11]\nrepeat = shop\n",
            "stands in for the plugin `-p repeat` loads",
        ),
        # configparser reads the indented lines as the value above them; importlib.metadata,
        # which pytest asks, as a section of their own.
        (
            "shop-1.0.dist-info/entry_points.txt",
            "[console_scripts]\nshop = shop:main\n  [pytest11]\n  patchjudge.pytest_plugin = shop\n",
            "stands in for the plugin `-p patchjudge.pytest_plugin` loads",
        ),
    ],
    ids=[
        "sitecustomize bytecode", "sitecustomize extension", "bytecode of another's module",
        "a .pth behind ./", "a package behind ..",
        "typing_extensions", "org",
        "hypothesis entry point", "the judge's plugin", "hypothesis' plugin", "pytest-repeat's name",
        "hidden from configparser",
    ],
)  # fmt: skip
def test_a_wheel_the_judges_pytest_would_load_unasked_is_refused(
    tmp_path: Path, lane_venv: Path, member: str, data: str, said: str
) -> None:
    require_sandbox()
    src = _project(tmp_path, [], extra=((member, data),))
    done = _build(src, tmp_path / "w", "--isolation", "sandbox", "--into", str(lane_venv))
    assert done.returncode == 2, done.stdout
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(
    ("member", "data"),
    [
        ("shop-1.0.dist-info/entry_points.txt", "[pytest11]\nshop = shop\nshop.extra = shop\n"),
        ("shop-1.0.dist-info/entry_points.txt", "[console_scripts]\nshop = shop:main\n"),
        ("shop/sitecustomize.py", ""),
        ("shop/typing_extensions.py", ""),
    ],
    ids=["a pytest plugin of its own", "a command", "a module named so in its package", "nested"],
)
def test_a_wheels_own_plugin_and_modules_still_build(
    tmp_path: Path, lane_venv: Path, member: str, data: str
) -> None:
    require_sandbox()
    src = _project(tmp_path, [], extra=((member, data),))
    done = _build(src, tmp_path / "w", "--isolation", "sandbox", "--into", str(lane_venv))
    assert done.returncode == 0, done.stderr
    assert member in zipfile.ZipFile(done.stdout.strip().splitlines()[-1]).namelist()


# What the pinned runtime imports when it is there and goes on without: a finder last on
# sys.meta_path hears every name no other finder found (the judge's plugin, hypothesis'
# plugin, a @given test and a plain one, as a visible suite runs in the code's venv).
PROBE = """
import json, sys
missing = set()
class Last:
    @staticmethod
    def find_spec(name, path=None, target=None):
        missing.add(name.partition(".")[0])
import pytest
sys.meta_path.append(Last)
status = pytest.main(sys.argv[1:])
print(json.dumps(sorted(n for n in missing if n not in sys.stdlib_module_names | {"test_p"})))
sys.exit(status)
"""


def test_the_names_the_judges_pytest_looks_for_are_all_refused(
    tmp_path: Path, lane_venv: Path
) -> None:
    from patchjudge import boxbuild

    (tmp_path / "test_p.py").write_text(
        "from hypothesis import given, strategies as st\n\n\n"
        "@given(st.lists(st.integers()))\ndef test_p(xs):\n    assert sum(xs) == sum(reversed(xs))\n"
    )
    src = str(Path(boxbuild.__file__).parents[1])
    done = subprocess.run(
        [str(lane_venv), "-s", "-P", "-B", "-c", PROBE, "-q", "-p", "patchjudge.pytest_plugin",
         "-p", "hypothesis.extra.pytestplugin", "-p", "no:cacheprovider", "test_p.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={"PYTHONPATH": src, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    looked_for = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert looked_for, "the probe heard nothing: it is not listening"
    assert looked_for <= boxbuild.STACK_OPTIONAL, looked_for - boxbuild.STACK_OPTIONAL
