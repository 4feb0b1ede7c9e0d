"""Inside pytest: keep only the node ids listed in a file; repeat unittest cases too.

Loaded with `-p patchjudge.select_plugin --patchjudge-select FILE`. Needed
because pytest-repeat renames items (`test_x[a-1]` -> `test_x[a-1-3-12]`):
a parametrised node id given on the command line then matches nothing
("not found"), so the files are collected whole and the items filtered here,
after pytest-repeat has parametrised them. Runs on xdist workers too (they
collect; the controller does not).

pytest-repeat silently repeats nothing for a unittest.TestCase, so with
`--patchjudge-repeat N` each TestCase item is listed N times under ids in
pytest-repeat's `[i-N]` form. That leans on pytest internals (a node's id
attribute); if it breaks, the caller's count check sees the short runs and
falls back to further passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPEAT_PARAM = "__pytest_repeat_step_number"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--patchjudge-select", default=None, help="file of node ids to keep")
    parser.addoption("--patchjudge-repeat", type=int, default=1, help="repeat unittest cases")


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    # setattr: private attributes of pytest's Node, on purpose (see the module doc).
    try:  # pytest >= 9 keeps a structured id
        from _pytest.nodeid import coerce_node_id

        setattr(item, "_id", coerce_node_id(nodeid))  # noqa: B010
    except ImportError:
        setattr(item, "_nodeid", nodeid)  # noqa: B010


def repeat_unittest(items: list[pytest.Item], count: int) -> list[pytest.Item]:
    from _pytest.unittest import TestCaseFunction

    out: list[pytest.Item] = []
    for item in items:
        if not isinstance(item, TestCaseFunction) or count < 2:
            out.append(item)
            continue
        for i in range(count):
            dup = TestCaseFunction.from_parent(item.parent, name=item.name, callobj=item.obj)
            _set_nodeid(dup, f"{item.nodeid}[{i + 1}-{count}]")
            out.append(dup)
    return out


def plain_nodeid(item: pytest.Item) -> str:
    """The item's node id without pytest-repeat's `i-N` id part, if it has one."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or REPEAT_PARAM not in callspec.params:
        return item.nodeid
    # pytest-repeat parametrises last (trylast), so its id is the last part.
    head, _, ids = item.nodeid.rpartition("[")
    parts = ids[:-1].split("-")
    # More than pytest-repeat's two parts: the test had ids of its own, maybe
    # an empty one (`test_x[]` repeats as `test_x[-1-12]`).
    return f"{head}[{'-'.join(parts[:-2])}]" if len(parts) > 2 else head


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = config.getoption("patchjudge_select")
    if path:
        wanted = set(Path(path).read_text(encoding="utf-8").splitlines())
        keep = [item for item in items if plain_nodeid(item) in wanted]
        drop = [item for item in items if plain_nodeid(item) not in wanted]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
    items[:] = repeat_unittest(items, config.getoption("patchjudge_repeat"))
