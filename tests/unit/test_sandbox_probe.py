"""issue 19: why no sandbox starts, as the probe step that failed found it (data, not text)."""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

import pytest

from patchjudge.boundary import sandbox


def _interpreter(tmp_path: Path, prints: str, exits: int = 0) -> str:
    """A stand-in for the child interpreter: it answers as the kernel did."""
    path = tmp_path / "python"
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' '{prints}'\nexit {exits}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize(
    ("prints", "exits", "expected"),
    [
        ("0", 0, None),  # granted: bwrap's own start decides
        (str(errno.ENOSPC), 0, f"{os.strerror(errno.ENOSPC)} (ENOSPC)"),
        (str(errno.EPERM), 0, f"{os.strerror(errno.EPERM)} (EPERM)"),
        (str(errno.EPERM), 1, None),  # a crash exits 1 too: no evidence
        ("Traceback", 0, None),
        ("99999", 0, None),  # no such errno
    ],
)
def test_the_kernels_answer_to_unshare_is_the_reason(
    tmp_path: Path, prints: str, exits: int, expected: str | None
) -> None:
    found = sandbox._userns_refused(_interpreter(tmp_path, prints, exits))
    if expected is None:
        assert found is None
        return
    assert found is not None and found.step == "userns"
    assert found.detail.startswith(f"the kernel refuses user namespaces: unshare: {expected}")


def test_no_bwrap_is_its_own_step() -> None:
    found = sandbox.why_not({"PATH": "/nonexistent"})
    assert found == sandbox.NoSandbox("bwrap", "bwrap is not on PATH")
    assert sandbox.probe({"PATH": "/nonexistent"}) == "bwrap is not on PATH"


def test_the_fallback_line_names_the_reason_and_both_ways_out() -> None:
    line = sandbox.fallback_line("bwrap is not on PATH")
    assert "\n" not in line
    assert line.startswith(
        "patchjudge: isolation 'auto' runs the patch's code without a sandbox: bwrap is not on PATH;"
    )
    assert 'isolation = "sandbox"' in line and sandbox.HOW_TO_GET in line


def test_a_box_nox_started_this_run_spares_a_sandbox_lane_its_probe_never_auto(
    tmp_path: Path,
) -> None:
    # issue 19, session 12: init's noxfile's `isolation` session starts a box before
    # any lane; its lanes are told so and skip the probe (two interpreters and a
    # box each). Only where "sandbox" is asked: a wrong word then fails the boxes,
    # it never runs the code unboxed. `auto` chooses by its own probe, always.
    sandbox._probe.cache_clear()
    no_bwrap = {"PATH": str(tmp_path), sandbox.STARTED: "1"}
    told = sandbox.decide("sandbox", None, environ=no_bwrap)
    assert told == sandbox.Decision(sandbox.Isolation.SANDBOX)
    assert sandbox.decide("auto", "sandbox", environ=no_bwrap).value == sandbox.Isolation.SANDBOX
    err = io.StringIO()
    auto = sandbox.decide("auto", None, err, environ=no_bwrap)
    assert auto == sandbox.Decision(sandbox.Isolation.PROCESS, "bwrap is not on PATH")
    assert "bwrap is not on PATH" in err.getvalue()
    with pytest.raises(sandbox.PatchjudgeError, match="bwrap is not on PATH"):
        sandbox.decide("sandbox", None, environ={"PATH": str(tmp_path)})
