"""What crosses as data through a real worker (issues 17, 18): stdlib values, views, exceptions.

Each property file runs in a real pytest with the stand-in plugin against a
real worker (tests/unit/test_standin.py's run_judge): `mylib` is only ever a
stand-in, so every value below crossed the boundary.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_standin import outcomes, run_judge

LIBRARY = """
import collections, datetime, decimal, enum, fractions, http, pathlib, re
from collections.abc import Mapping


def stdlib_values():
    return (slice(1, None, 2), range(2, 9, 3), 1 + 2j, decimal.Decimal("-0.10"),
            fractions.Fraction(3, 4), datetime.date(2026, 12, 1),
            datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.timezone.utc),
            datetime.time(1, 2), datetime.timedelta(days=2), pathlib.PurePosixPath("a/b"),
            pathlib.Path("/tmp/x"), collections.OrderedDict(b=1, a=2), bytearray(b"ab"), ...,
            http.HTTPStatus.NOT_FOUND, re.I | re.M)


def echo(x):
    return x, type(x).__module__ + "." + type(x).__qualname__


def sort_by(xs, key):
    return sorted(xs, key=key)


class Seq:
    def __getitem__(self, i):
        return i


Point = collections.namedtuple("Point", "x y")


def point(x, y):
    return Point(x, y)


class Padded(list):
    def __iter__(self):
        return iter([x for x in list.__iter__(self) if x != "pad"])

    def __eq__(self, other):
        return True

    def __len__(self):
        return 0


def rows(n):
    return Padded([*range(n), "pad"])


class Alg(enum.Enum):
    FAST = 1
    SLOW = 2


class Level(enum.IntEnum):
    LOW = 1


class NotFound(LookupError):
    pass


class Invalid(ValueError):
    pass


class Both(NotFound, Invalid):
    pass


def both():
    raise Both("two bases")


Impostor = type("ValueError", (Exception,), {"__module__": "builtins"})


def impostor():
    raise Impostor("I am not the builtin")


def interrupt(kind):
    raise {"k": KeyboardInterrupt, "g": GeneratorExit, "s": SystemExit}[kind]()


class Table(Mapping):
    def __getitem__(self, k):
        return k

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class Plain:
    pass


def table():
    return Table()


def plain():
    return Plain()
"""

PROPERTIES = """
import collections, collections.abc, datetime, decimal, fractions, http, pathlib, re
from collections.abc import Iterable, Mapping, Reversible, Sized

import pytest
import mylib


def test_stdlib_values_cross_as_themselves():
    got = mylib.stdlib_values()
    assert got == (slice(1, None, 2), range(2, 9, 3), 1 + 2j, decimal.Decimal("-0.10"),
                   fractions.Fraction(3, 4), datetime.date(2026, 12, 1),
                   datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.timezone.utc),
                   datetime.time(1, 2), datetime.timedelta(days=2), pathlib.PurePosixPath("a/b"),
                   pathlib.Path("/tmp/x"), collections.OrderedDict(b=1, a=2), bytearray(b"ab"),
                   ..., http.HTTPStatus.NOT_FOUND, re.I | re.M)
    assert type(got[10]) is pathlib.PosixPath and list(got[11]) == ["b", "a"]


def test_stdlib_values_cross_to_the_worker():
    for value, name in [(decimal.Decimal("1.5"), "decimal.Decimal"),
                        (datetime.date(2026, 1, 1), "datetime.date"),
                        (pathlib.PurePosixPath("x"), "pathlib.PurePosixPath"),
                        (collections.OrderedDict(a=1), "collections.OrderedDict"),
                        (slice(1, 2), "builtins.slice"), (int, "builtins.type"),
                        (memoryview(b"ab"), "builtins.memoryview"),
                        (Mapping, "abc.ABCMeta")]:
        assert mylib.echo(value) == (value, name)
    assert mylib.Seq()[1:3] == slice(1, 3) and mylib.Seq()[..., 1] == (..., 1)
    assert mylib.sort_by(["10", "9"], key=int) == ["9", "10"]


def test_builtin_classes_are_the_real_ones():
    assert mylib.echo(ValueError)[0] is ValueError
    assert issubclass(mylib.Invalid, ValueError) and mylib.Invalid.__bases__ == (ValueError,)


def test_a_namedtuple_is_a_tuple_with_its_fields():
    p = mylib.point(1, 2)
    assert p == (1, 2) and isinstance(p, tuple) and p.x == 1 and p.y == 2
    assert p._asdict() == {"x": 1, "y": 2} and {p: 1}[(1, 2)] == 1
    assert mylib.echo(p) == ((1, 2), "mylib.Point")  # the worker gets its own object back


def test_a_list_subclass_compares_as_its_data():
    r = mylib.rows(2)
    assert r == [0, 1, "pad"] and len(r) == 3 and list(r) == [0, 1, "pad"]
    assert r != [0, 1] and isinstance(r, list)


@pytest.mark.parametrize("alg", [mylib.Alg.FAST, mylib.Alg.SLOW])
@pytest.mark.parametrize("level", [mylib.Level.LOW])
def test_enum_ids(alg, level, request):
    assert request.node.name in ("test_enum_ids[1-Alg.FAST]", "test_enum_ids[1-Alg.SLOW]")
    assert level == 1 and alg.name in ("FAST", "SLOW")


def test_two_bases_are_both_caught():
    with pytest.raises(mylib.NotFound):
        mylib.both()
    with pytest.raises(mylib.Invalid):
        mylib.both()
    with pytest.raises(LookupError):
        mylib.both()
    with pytest.raises(ValueError):
        mylib.both()
    assert mylib.Both.__bases__ == (mylib.NotFound, mylib.Invalid)


def test_a_class_named_like_a_builtin_is_not_the_builtin():
    with pytest.raises(Exception) as info:
        mylib.impostor()
    assert type(info.value) is not ValueError and not isinstance(info.value, ValueError)
    assert type(info.value).__name__ == "ValueError" and str(info.value) == "I am not the builtin"


@pytest.mark.parametrize("kind", ["k", "g", "s"])
def test_an_interrupt_fails_even_when_caught(kind):
    try:
        mylib.interrupt(kind)
    except BaseException:
        pass


def test_abcs_are_answered_in_the_worker():
    t, p = mylib.table(), mylib.plain()
    assert isinstance(t, Mapping) and isinstance(t, Sized)
    assert not isinstance(p, Sized) and not isinstance(p, Iterable)
    assert issubclass(mylib.Table, Mapping) and not issubclass(mylib.Plain, Reversible)
    assert isinstance(mylib.rows(0), collections.abc.MutableSequence)
"""


def test_values_exceptions_and_checks_cross_as_in_process(tmp_path: Path) -> None:
    proc = run_judge(tmp_path, PROPERTIES, library=LIBRARY)
    got = outcomes(proc)
    text = proc.stdout[-8000:] + proc.stderr[-3000:]
    interrupts = {f"test_an_interrupt_fails_even_when_caught[{k}]" for k in "kgs"}
    assert {n for n, o in got.items() if o != "PASSED"} == interrupts, text
    assert len(got) == 13, got
    for name in ("KeyboardInterrupt", "GeneratorExit", "SystemExit"):
        assert f"test_props.py: the code under test raised {name} (an interrupt fails" in text
