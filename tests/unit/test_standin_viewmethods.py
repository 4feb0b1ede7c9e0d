"""A data subclass's own methods are the code's, not its base type's (viewmethods).

The worker names what the code's class defines over its base (protocol.META_OWN);
the judge's view sends those to the code's object and answers the rest from its copy.
"""

from __future__ import annotations

import collections
import enum
from typing import Any

import pytest

from patchjudge.boundary import protocol, standin, wire, worker


class Name(str):
    def strip(self, chars: str | None = None) -> str:
        return self[:]

    def shout(self) -> str:  # str lacks it: read from the code's object already
        return self.upper()

    def __str__(self) -> str:
        return "?"

    def __eq__(self, other: object) -> bool:  # never the view's: the data decides
        return True

    __hash__ = str.__hash__


class Plain(str):
    pass


class Child(Plain):
    def lower(self) -> str:
        return "x"


class Later(str, collections.abc.Sequence):  # type: ignore[misc]
    """A mixin after str in the MRO: its `index`, `count` are not the ones called."""


class Color(enum.IntEnum):
    RED = 1


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker loads these in main(); in this process, the judge's own.
    monkeypatch.setattr(worker, "wire", wire)
    monkeypatch.setattr(worker, "protocol", protocol)
    ids = frozenset(id(cls) for cls in wire.BUILTIN_CLASSES.values())
    monkeypatch.setattr(worker, "_BUILTIN_IDS", ids)


@pytest.mark.parametrize(
    ("cls", "names"),
    [
        (Name, ("__str__", "strip")),
        (Plain, ()),
        (Child, ("lower",)),
        (Later, ()),
        (collections.Counter, ("__add__", "__and__", "__iadd__", "__iand__", "__ior__",
                               "__isub__", "__neg__", "__or__", "__pos__", "__repr__",
                               "__sub__", "copy", "fromkeys", "update")),
        (collections.OrderedDict, ("__ior__", "__or__", "__repr__", "__ror__", "clear",
                                   "copy", "fromkeys", "items", "keys", "pop", "popitem",
                                   "setdefault", "update", "values")),
        (str, ()),
    ],
)  # fmt: skip
def test_the_worker_names_what_the_class_overrides(
    cls: type, names: tuple[str, ...], loaded: None
) -> None:
    assert worker.own_names(cls) == names


def test_the_meta_carries_the_names_and_the_shape(loaded: None) -> None:
    assert worker._meta(Name("a")) == (protocol.META_OWN, ("__str__", "strip"), None)
    counter = worker._meta(collections.Counter("ab"))
    assert counter[:1] == (protocol.META_OWN,) and counter[2] == (protocol.META_MAPPING,)
    assert worker._meta(Plain("a")) is None
    assert worker._meta(Color.RED)[0] == protocol.META_ENUM  # an enum member's is its own


@pytest.mark.parametrize(
    ("meta", "ok"),
    [
        ((protocol.META_OWN, ("strip",), None), True),
        ((protocol.META_OWN, ("strip",), (protocol.META_MAPPING,)), True),
        ((protocol.META_OWN, (), None), False),
        ((protocol.META_OWN, (1,), None), False),
        ((protocol.META_OWN, ["strip"], None), False),
        ((protocol.META_OWN, ("a",) * (protocol.MAX_OWN_NAMES + 1), None), False),
        ((protocol.META_OWN, ("strip",)), False),
        (("enum", ("strip",), None), False),
    ],
)
def test_the_judge_reads_only_a_well_formed_list_of_names(meta: Any, ok: bool) -> None:
    assert standin._is_own_meta(meta) is ok


class FakeHandle:
    """The attributes a handle's worker would answer with."""

    def strip(self) -> str:
        return "the code's strip"


def _view_of(data: Any, names: tuple[str, ...], handle: Any = None) -> Any:
    view = standin._routed_view_class(standin._VIEW_OF[type(data)], names)(data)
    if handle is not None:
        view.__dict__["_pj_handle"] = handle
    return view


def test_a_named_method_is_the_code_objects_and_the_rest_the_datas() -> None:
    view = _view_of(" a ", ("strip", "__eq__", "__hash__", "__len__", "shout"), FakeHandle())
    assert view.strip() == "the code's strip"
    # What the judge never routes, whatever the worker says: comparison, hash, length.
    assert view == " a " and view != "b" and len(view) == 3 and hash(view) == hash(" a ")
    assert view.upper() == " A "
    # Without a handle (a copy the judge made), the base type's method.
    assert _view_of(" a ", ("strip",)).strip() == "a"


def test_the_routed_dunders_and_mutators_replace_the_datas() -> None:
    cls = standin._routed_view_class(standin._VIEW_OF[str], ("__str__", "__format__", "strip"))
    for name in ("__str__", "__format__", "strip"):
        assert name in cls.__dict__, name
    own = standin._routed_view_class(standin._OWN_VIEW_OF[dict], ("update", "__or__", "__add__"))
    assert own.__dict__["update"].__name__ == "update"
    assert own.__dict__["update"] is not standin._OWN_VIEW_OF[dict].__dict__["update"]
    assert issubclass(own, standin._OWN_VIEWS)  # a changed argument still refills it
    assert not hasattr(standin._VIEW_OF[dict], "__add__") and hasattr(own, "__add__")


def test_names_that_route_nothing_keep_the_plain_view_class() -> None:
    plain = standin._VIEW_OF[str]
    assert standin._routed_view_class(plain, ("__eq__", "_pj_handle", "shout")) is plain
    twice = standin._routed_view_class(plain, ("strip",))
    assert standin._routed_view_class(plain, ("strip",)) is twice
    assert twice.__name__ == plain.__name__
