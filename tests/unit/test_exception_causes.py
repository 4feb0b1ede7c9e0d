"""`raise exc from cause` in the worker: the judge's stand-in keeps `__cause__` (issue 17)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patchjudge.boundary import protocol, standin

B = protocol.ERROR_BUILTIN


def _judge_end(tmp_path: Path) -> standin.Worker:
    spec = protocol.WorkerSpec("python3", str(tmp_path), str(tmp_path), ("mylib",))
    return standin.Worker(spec, "test_x.py", [])


def _chain(n: int) -> tuple[Any, ...]:
    """n builtin errors, each raised from the next."""
    desc: tuple[Any, ...] = (B, "ValueError", (f"error {n}",))
    for i in range(n - 1, 0, -1):
        desc = (B, "ValueError", (f"error {i}",), desc)
    return desc


def _causes(exc: BaseException | None) -> list[str]:
    found = []
    while exc is not None:
        found.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__
    return found


@pytest.mark.parametrize(
    ("desc", "expected"),
    [
        ((B, "ValueError", ("plain",)), ["ValueError: plain"]),
        (
            (B, "ValueError", ("outer",), (B, "KeyError", ("k",))),
            ["ValueError: outer", "KeyError: 'k'"],
        ),
        (_chain(protocol.MAX_CAUSES), [f"ValueError: error {i}" for i in range(1, 9)]),
    ],
)
def test_a_described_cause_is_the_stand_ins_cause(
    tmp_path: Path, desc: tuple[Any, ...], expected: list[str]
) -> None:
    exc = _judge_end(tmp_path)._exception(desc)
    assert _causes(exc) == expected
    assert exc.__suppress_context__ is (len(expected) > 1)


@pytest.mark.parametrize(
    ("cause", "said"),
    [
        # A judge function's exception never comes back as a cause: its verdict stays.
        ((protocol.ERROR_JUDGE, 1), "a cause that is not a builtin or foreign error"),
        ((protocol.ERROR_UNCROSSABLE, "x"), "a cause that is not a builtin or foreign error"),
        ("ValueError", "a cause that is not a builtin or foreign error"),
        ((), "a cause that is not a builtin or foreign error"),
        (_chain(protocol.MAX_CAUSES), "a chain of causes longer than the protocol's"),
    ],
)
def test_a_cause_the_worker_may_not_send_fails_the_worker(
    tmp_path: Path, cause: Any, said: str
) -> None:
    end = _judge_end(tmp_path)
    exc = end._exception((B, "ValueError", ("outer",), cause))
    assert isinstance(exc, standin.WorkerFailure)
    assert end.failure is not None and said in end.failure.detail


def test_an_interrupt_as_a_cause_fails_the_property(tmp_path: Path) -> None:
    end = _judge_end(tmp_path)
    exc = end._exception((B, "ValueError", ("outer",), (B, "KeyboardInterrupt", ())))
    assert isinstance(exc, standin.WorkerFailure)
    assert [i.cause for i in end.incidents] == [protocol.Cause.INTERRUPT]
