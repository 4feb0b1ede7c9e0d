"""A sequence's or mapping's handle is callable exactly when the worker's object is (issue 17).

pytest takes a callable `ids=` for an id function: btclib hands it a library
`MappingProxyType`, which out of process must be iterated for its keys as in process.
"""

from __future__ import annotations

import collections
import types
from typing import Any

import pytest

from patchjudge.boundary import protocol, standin, wire, worker


class CallableMapping(dict[str, int]):
    def __call__(self) -> int:
        return len(self)


class CallableDeque(collections.deque[int]):
    def __call__(self) -> int:
        return len(self)


@pytest.mark.parametrize(
    ("obj", "meta"),
    [
        (types.MappingProxyType({"mainnet": 1}), (protocol.META_MAPPING,)),
        (CallableMapping(a=1), (protocol.META_MAPPING, protocol.META_CALLABLE)),
        (collections.deque([1]), (protocol.META_SEQUENCE,)),
        (CallableDeque([1]), (protocol.META_SEQUENCE, protocol.META_CALLABLE)),
    ],
)
def test_the_worker_says_whether_a_sequence_or_mapping_is_callable(
    obj: Any, meta: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker loads these by path in main(); in this process, the judge's own.
    monkeypatch.setattr(worker, "wire", wire)
    monkeypatch.setattr(worker, "protocol", protocol)
    assert worker._meta(obj) == meta


@pytest.mark.parametrize(
    ("meta", "is_callable"),
    [
        ((protocol.META_MAPPING,), False),
        ((protocol.META_SEQUENCE,), False),
        ((protocol.META_MAPPING, protocol.META_CALLABLE), True),
        ((protocol.META_SEQUENCE, protocol.META_CALLABLE), True),
    ],
)
def test_the_judges_handle_is_callable_as_the_worker_says(meta: Any, is_callable: bool) -> None:
    cls = standin._SHAPES[meta]
    assert callable(object.__new__(cls)) is is_callable
    assert issubclass(cls, standin.HandleBase) and cls in standin.HANDLE_TYPES
    assert standin._is_shape_meta(meta)


def test_any_other_handle_stays_callable() -> None:
    assert callable(object.__new__(standin.Handle))
    assert not standin._is_shape_meta((protocol.META_MAPPING, "other"))
