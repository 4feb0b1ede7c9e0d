"""`isolation` is one value resolved once, required wherever it is passed (issue 17).

A run's isolation is `sandbox.Isolation` (a str enum: reports keep "sandbox" and
"process"); a Run or a flakes collection without one is an error, and a value
that is neither is refused, never read as "process".
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from patchjudge.boundary import sandbox
from patchjudge.boundary.sandbox import Isolation
from patchjudge.lanes import flakes
from patchjudge.workspace import Run


def _required_run_fields() -> dict[str, object]:
    return {
        f.name: None
        for f in dataclasses.fields(Run)
        if f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
        and f.name != "isolation"
    }


def test_a_run_without_an_isolation_is_an_error() -> None:
    with pytest.raises(TypeError, match="isolation"):
        Run(**_required_run_fields())  # type: ignore[arg-type]


def test_a_run_with_its_isolation_keeps_it() -> None:
    run = Run(**_required_run_fields(), isolation=Isolation.SANDBOX)  # type: ignore[arg-type]
    assert run.isolation is Isolation.SANDBOX


def test_flakes_without_an_isolation_is_an_error() -> None:
    with pytest.raises(TypeError, match="isolation"):
        flakes.collect_evidence(  # type: ignore[call-arg]
            Path(),
            "HEAD",
            None,
            count=1,
            shard=None,
            workers=1,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize("value", ["sandbx", "auto", "", "Sandbox"])
def test_a_value_that_is_no_isolation_is_refused_not_unboxed(value: str) -> None:
    with pytest.raises(ValueError, match="is not a valid Isolation"):
        sandbox.boxer(value)  # type: ignore[arg-type]


def test_each_isolation_boxes_as_it_says(tmp_path: Path) -> None:
    assert sandbox.boxer(Isolation.PROCESS)(tmp_path, tmp_path) is None
    assert sandbox.boxer(Isolation.SANDBOX)(tmp_path, tmp_path) == sandbox.Box(tmp_path, tmp_path)


@pytest.mark.parametrize(
    ("ledger", "cli", "probe", "chosen"),
    [
        ("process", None, None, Isolation.PROCESS),
        ("auto", None, None, Isolation.SANDBOX),
        ("auto", None, "no bwrap", Isolation.PROCESS),
        ("process", "sandbox", None, Isolation.SANDBOX),
    ],
)
def test_the_resolved_value_is_the_enum_and_reads_as_before(
    ledger: str, cli: str | None, probe: str | None, chosen: Isolation
) -> None:
    value = sandbox.choose(ledger, cli, probe)
    assert value is chosen
    assert json.dumps({"isolation": value}) == json.dumps({"isolation": chosen.value})
