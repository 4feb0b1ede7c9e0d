"""Inside pytest: keep only the node ids listed in a file, repeated or not.

Loaded with `-p patchjudge.select_plugin --patchjudge-select FILE`. Needed
because pytest-repeat renames items (`test_x[a-1]` -> `test_x[a-1-3-12]`):
a parametrised node id given on the command line then matches nothing
("not found"), so the files are collected whole and the items filtered here,
after pytest-repeat has parametrised them. Runs on xdist workers too (they
collect; the controller does not).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPEAT_PARAM = "__pytest_repeat_step_number"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--patchjudge-select", default=None, help="file of node ids to keep")


def plain_nodeid(item: pytest.Item) -> str:
    """The item's node id without pytest-repeat's `i-N` id part, if it has one."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or REPEAT_PARAM not in callspec.params:
        return item.nodeid
    # pytest-repeat parametrises last (trylast), so its id is the last part.
    head, _, ids = item.nodeid.rpartition("[")
    parts = ids[:-1].split("-")
    rest = "-".join(parts[:-2])
    return f"{head}[{rest}]" if rest else head


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = config.getoption("patchjudge_select")
    if not path:
        return
    wanted = set(Path(path).read_text(encoding="utf-8").splitlines())
    keep = [item for item in items if plain_nodeid(item) in wanted]
    drop = [item for item in items if plain_nodeid(item) not in wanted]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
