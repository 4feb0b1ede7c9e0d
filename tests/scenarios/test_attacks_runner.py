"""Attacks on the runner's configuration: the judge's settings, never the patch's, decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack_helpers import BROKEN_CALC, attack, attack_lane
from tests.attack_helpers import FLIP as FLIP_OUTCOMES

# A hook that turns every failure into a pass (attack_helpers.FLIP), and hides the judge's files.
FLIP = (
    FLIP_OUTCOMES
    + """

def pytest_collection_modifyitems(config, items):
    items[:] = [i for i in items if "properties" not in i.nodeid]


collect_ignore_glob = ["eval/*"]
"""
)

DESELECT_ALL = """
def pytest_collection_modifyitems(config, items):
    config.hook.pytest_deselected(items=list(items))
    items[:] = []
"""

UNREGISTER_JUDGE = """
def pytest_configure(config):
    config.pluginmanager.unregister(name="patchjudge.pytest_plugin")
"""

ADDOPTS = "-p no:patchjudge.pytest_plugin -p no:hypothesispytest -k nothing_at_all --co"

ENTRY_POINT = {
    "src/evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
    "src/evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evil_plugin\n",
    "src/evil_plugin.py": FLIP,
}

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2">
<testcase classname="eval.properties.test_total" name="test_total_never_negative"/>
<testcase classname="eval.properties.test_total" name="test_total_matches_sum"/>
</testsuite></testsuites>
"""

FILES: dict[str, dict[str, str | bytes | None]] = {
    "root conftest flips outcomes": {"conftest.py": FLIP},
    "nested conftest flips outcomes": {"src/calc/conftest.py": FLIP},
    "conftest beside the visible tests": {"tests/conftest.py": FLIP},
    "pytest.ini addopts": {"pytest.ini": f"[pytest]\naddopts = {ADDOPTS}\n"},
    "pyproject.toml addopts": {
        "pyproject.toml": f'[tool.pytest.ini_options]\naddopts = "{ADDOPTS}"\n'
    },
    "setup.cfg addopts": {"setup.cfg": f"[tool:pytest]\naddopts = {ADDOPTS}\n"},
    "tox.ini addopts": {"tox.ini": f"[pytest]\naddopts = {ADDOPTS}\n"},
    "pytest11 entry point on the pythonpath": ENTRY_POINT,
    "forged junit report": {"src/calc/junit.xml": JUNIT, "junit.xml": JUNIT},
}


FAILED = "properties: property failed: eval/properties/test_total.py::test_total_never_negative"
# The one case judged by a whole gate: the gate's own path to the properties run.
GATE_CASE = "root conftest flips outcomes"


@pytest.mark.parametrize("name", sorted(FILES))
def test_patch_config_cannot_switch_properties_off(tmp_path: Path, name: str) -> None:
    patch = {"src/calc/__init__.py": BROKEN_CALC, **FILES[name]}
    if name == GATE_CASE:
        judged = attack(tmp_path, patch)
        assert judged.decision == "reject", judged.explain()
        assert judged.says(FAILED), judged.explain()
        return
    # The claim is the properties lane's reason: that lane alone (issue 20), whose fail is
    # a reject in any gate (tests/unit/test_verdict.py).
    lane = attack_lane(tmp_path, patch, "properties")
    assert lane.status == "fail", lane.explain()
    assert lane.says(FAILED), lane.explain()


@pytest.mark.parametrize(
    "env",
    [
        {"PYTEST_ADDOPTS": ADDOPTS},
        {"PYTEST_PLUGINS": "evil_plugin"},
        {"PYTEST_ADDOPTS": "-p evil_plugin", "PYTHONPATH": "src"},
    ],
    ids=["PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH"],
)
def test_gate_environment_cannot_switch_properties_off(tmp_path: Path, env: dict[str, str]) -> None:
    patch = {"src/calc/__init__.py": BROKEN_CALC, "src/evil_plugin.py": FLIP}
    judged = attack(tmp_path, patch, env=env)
    assert judged.decision == "reject", judged.explain()
    assert judged.says("properties: property failed"), judged.explain()


def test_visible_conftest_deselecting_everything_is_a_deleted_suite(tmp_path: Path) -> None:
    judged = attack(tmp_path, {"tests/conftest.py": DESELECT_ALL})
    assert judged.decision == "reject", judged.explain()
    assert judged.says("pathfilter: visible test gone: tests/test_calc.py::test_empty")


def test_visible_conftest_unregistering_the_judge_plugin_fails(tmp_path: Path) -> None:
    """`-p no:`-style removal from inside: the judge's plugin must see the run end."""
    judged = attack(tmp_path, {"tests/conftest.py": UNREGISTER_JUDGE})
    assert judged.decision == "reject", judged.explain()
    assert judged.says(
        "pathfilter: visible suite at head: pytest did not run to the end under the judge's plugin"
    ), judged.explain()
