"""JUnit XML -> outcomes per test case, streamed; the cross-check on the judge's channel."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from patchjudge.errors import CommandError


@dataclass(frozen=True)
class Case:
    """One <testcase>: pytest writes a second one for a teardown error after a failure."""

    classname: str
    name: str
    outcome: str  # passed | failed | error | skipped


def junit_key(nodeid: str) -> tuple[str, str]:
    """A pytest node id as pytest's junitxml names it (classname, name).

    The same mangling as `_pytest.junitxml.mangle_test_address`: the path
    becomes dotted and loses `.py`, parameters stay on the last name. It is
    lossy (`a/b.py` and `a.b.py` meet), which is why the channel, not JUnit,
    is the primary source of node ids.
    """
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"


def read_cases(path: Path) -> list[Case]:
    """Every <testcase> in document order; each element is dropped once read."""
    cases: list[Case] = []
    try:
        for _, elem in ET.iterparse(path, events=("end",)):
            if elem.tag == "testcase":
                cases.append(Case(elem.get("classname", ""), elem.get("name", ""), _outcome(elem)))
                elem.clear()
    except ET.ParseError as exc:
        raise CommandError(f"JUnit XML does not parse: {exc}", file=str(path)) from None
    return cases


def failed_keys(cases: Iterable[Case]) -> dict[tuple[str, str], bool]:
    """(classname, name) -> whether any of its entries failed or errored."""
    found: dict[tuple[str, str], bool] = {}
    for case in cases:
        key = (case.classname, case.name)
        found[key] = found.get(key, False) or case.outcome in ("failed", "error")
    return found
