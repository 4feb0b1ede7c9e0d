"""The idioms of the compat suites, one test each, through a real worker (issue 17).

Each row is one idiom the third-party suites use (tests/compat_helpers.py
SUITES): the property passes in process (the bare reference), and out of
process it either passes or fails for the reason named in the row. A row
whose outcome changes fails here, so a boundary change that fixes an idiom
(or breaks one) updates this table in the same commit.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests import compat_helpers as compat
from tests.attack_helpers import fast_ledger, require_sandbox
from tests.helpers import cli, commit, example_repo, write

pytestmark = pytest.mark.compat

LIB = '''
import collections.abc
import dataclasses
import datetime
import enum
import io
import ipaddress
import json
import operator
import os
import random
import re
import time
import types
import typing
import warnings
import zoneinfo

WORDS = re.compile("[a-z]+")


@dataclasses.dataclass(frozen=True)
class Point:
    """btclib's frozen dataclasses: a change raises dataclasses.FrozenInstanceError."""

    x: int


def parse_json(text):
    return json.loads(text)


# btclib's CONSENSUS_PARAMS: a read-only mapping the suite hands pytest as `ids=`.
PARAMS = types.MappingProxyType({"mainnet": 1})


class Error(ValueError):
    pass


class Thing:
    def __init__(self, n=0):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Thing) and other.n == self.n

    def __hash__(self):
        return hash(self.n)

    def __repr__(self):
        return f"lib.Thing({self.n!r})"


class Base:
    """A class the property subclasses (pyrsistent's PClass, bidict's namedbidict bases)."""

    def __init__(self, **kw):
        self.kw = kw


class Box:
    def __init__(self, x):
        self.x = x

    def get(self):
        return self.x


class Counter:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)


class Fixed(datetime.tzinfo):
    def utcoffset(self, dt):
        return datetime.timedelta(hours=1)

    def dst(self, dt):
        return datetime.timedelta(0)


FIXED = Fixed()


def parse(text):
    return datetime.date.fromisoformat(text)


def count_up(n):
    i = n
    while True:
        yield i
        i += 1


def check(x):
    if x < 0:
        raise Error("negative")
    return x


def checked_key(text):
    """btclib's prv_key_data_from_wif: a library error raised from the one under it."""
    try:
        try:
            return check(int(text, 16))
        except ValueError as e:
            raise Error("not hex") from e
    except Error as e:
        raise Error(f"not a key ({e})") from e


def checked_count(text):
    """A builtin error raised from the library's own."""
    try:
        return check(int(text))
    except Error as e:
        raise ValueError("no negative counts") from e


def tagged(x, fn):
    return fn(x)


def pair(x):
    return (x, [x])


def fold(items, fn, acc):
    for item in items:
        fn(item, acc)
    return acc


def kinds(values):
    return [type(v) for v in values]


class Code(enum.IntEnum):
    OK = 0
    CLOSED = 5


class Event:
    def __init__(self):
        self.code = Code.CLOSED


class Perm(enum.IntFlag):
    R = 4
    W = 2
    X = 1


def perms():
    return Perm.R | Perm.W


class Frame:
    def __init__(self):
        self.flags = set()
        self.items = []

    def has(self, flag):
        return flag in self.flags


class Where:
    def __init__(self, p):
        self.p = p

    def __fspath__(self):
        return self.p


class Strict:
    """h2's Settings: == with an unrelated type is NotImplemented, so Python asks the other."""

    def __init__(self, n=0):
        self.n = n

    def __eq__(self, other):
        if not isinstance(other, Strict):
            return NotImplemented
        return other.n == self.n

    def __lt__(self, other):
        return self.n < other.n if isinstance(other, Strict) else NotImplemented


class Items(collections.abc.Sequence):
    def __init__(self, *xs):
        self.xs = list(xs)

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i]


class Table(collections.abc.Mapping):
    def __init__(self, **kw):
        self.kw = kw

    def __len__(self):
        return len(self.kw)

    def __getitem__(self, k):
        return self.kw[k]

    def __iter__(self):
        return iter(self.kw)


class Symbol:
    """jsondiff's symbols: the keys of the dicts its diff returns."""

    def __init__(self, label):
        self.label = label

    def __eq__(self, other):
        return isinstance(other, Symbol) and other.label == self.label

    def __hash__(self):
        return hash(self.label)


INSERT = Symbol("insert")


def keyed(xs):
    return {INSERT: list(xs)}


def symbols():
    return {INSERT, Symbol("delete")}


def lookup(d):
    return d[INSERT]


class Clash:
    """Unequal objects of one hash: the judge's dict compares their handles as it is built."""

    def __hash__(self):
        return 7


def clashing():
    return {Clash(): 1, Clash(): 2, 7: 3}


def dump(text, fp):
    fp.write(text)


def load(fp):
    return fp.read()


def read_any(src):
    """srt's parse: a file's text or the text itself, told apart by isinstance."""
    if isinstance(src, io.IOBase):
        src = src.read()
    return src.upper()


def octets_stream(data):
    """btclib's bytesio_from_binarydata: the caller's BytesIO as it came, anything else wrapped."""
    return data if isinstance(data, io.BytesIO) else io.BytesIO(bytes(data))


def take2(data):
    return octets_stream(data).read(2)


def packed_ip(ip):
    """btclib's NetworkAddress: an address object, told by its class."""
    if not isinstance(ip, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        raise TypeError(f"invalid ip type: {type(ip).__name__}")
    return ip.packed, ipaddress.ip_address(ip.packed)


def stream_kind(fp):
    if isinstance(fp, io.TextIOBase):
        return "text"
    return "binary" if isinstance(fp, io.BufferedIOBase) else "other"


class Hex(bytes):
    """hexbytes' HexBytes: a bytes subclass with its own repr and reduce."""

    def __repr__(self):
        return f"Hex({self.hex()!r})"

    def __reduce__(self):
        return (type(self), (bytes(self),))


class Lines(list):
    """icalendar's Contentlines: a list subclass with methods of its own."""

    def render(self):
        return "|".join(self)


class Store:
    """A library object that keeps the container it is handed (h2's frames, dpath's nodes)."""

    def __init__(self, data):
        self.data = data

    def get(self, *path):
        node = self.data
        for key in path:
            node = node[key]
        return node

    def size(self):
        return len(self.data)

    def push(self, x):
        self.data.append(x)

    def trim(self, n):
        del self.data[:n]


def extend(xs, more):
    xs.extend(more)


class LibWarning(UserWarning):
    pass


def convert(x):
    """mpmath's mpf(x): an object of the caller's converts itself by a `_name_` hook."""
    if hasattr(x, "_lib_value_"):
        return x._lib_value_
    if hasattr(x, "_lib_"):
        return x._lib_(10)
    raise TypeError("cannot convert")


def old(x):
    """mpmath's deprecated names: a warning the property expects with pytest.warns."""
    warnings.warn("old() is deprecated", DeprecationWarning, stacklevel=2)
    return x


def noisy(x):
    warnings.warn(f"noisy {x}", LibWarning)
    return x


class Wrapper:
    """base64io's Base64IO: a stream over the caller's stream, which must have these."""

    def __init__(self, wrapped):
        if not all(hasattr(wrapped, a) for a in ("read", "write", "close", "closed", "flush")):
            raise TypeError("the wrapped object must be a stream")
        self.wrapped = wrapped

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.wrapped.flush()
        return False

    def write(self, data):
        return self.wrapped.write(data.upper())


class Closing:
    """base64io's Base64IO: its finalizer (IOBase.__del__ -> close) writes to the caller's stream."""

    def __init__(self, fp):
        if not hasattr(fp, "write"):
            raise TypeError("not a stream")
        self.fp = fp

    def __del__(self):
        self.fp.write("closed")


def probe(fp):
    """base64io's passthrough checks on the stream it wraps: present or not, then used."""
    return hasattr(fp, "readable"), fp.read(3)


def upgrade(tz):
    """pytz-deprecation-shim's upgrade_tzinfo: a stdlib tzinfo comes back as itself."""
    return tz


UTC = datetime.timezone.utc


class Lazy(list):
    """pytz's LazyList: a list its own methods fill on first use."""

    def __len__(self):
        if not list.__len__(self):
            list.extend(self, ["b", "a"])
        return list.__len__(self)

    def __iter__(self):
        len(self)
        return list.__iter__(self)


ZONES = Lazy()


def draw(n):
    """A library drawing from its process's `random` (simulations, shuffles, sampling)."""
    return [random.random() for _ in range(n)]


def repeat(text, times):
    """whenever's expect_int: an int-like read through the index protocol, as CPython does."""
    return text * operator.index(times)


def offset_of(dt):
    """whenever's ZonedDateTime(py_dt): a datetime by its exact type, its zone's offset."""
    if type(dt) is not datetime.datetime:
        raise TypeError("offset_of() requires a datetime.datetime")
    return dt.utcoffset(), dt.tzinfo


# hdate's Language: the values a parameter takes, read back with typing.get_args.
LANGUAGE = typing.Literal["he", "en"]


class Month(enum.IntEnum):
    """hdate's Months: an IntEnum whose str() is its own, a parametrize id in process."""

    NISAN = 1
    IYYAR = 2

    def __str__(self):
        return self.name.lower()


def walk(node):
    """dpath's walk: the paths and values of a nested node, from the node itself."""
    for key, value in node.items():
        yield (key,), value
        if isinstance(value, dict):
            for path, inner in walk(value):
                yield (key, *path), inner


def setting(name):
    """A library reading its configuration from the environment (whenever's TZ, a zone path)."""
    return os.environ.get(name)


def utc_offset():
    """The process's local time zone's offset at the epoch, in seconds (TZ, after tzset)."""
    return time.localtime(0).tm_gmtoff


def stdlib_kind(x):
    """whenever's constructors: a datetime or a ZoneInfo, a subclass too, checked by type."""
    if isinstance(x, datetime.datetime):
        return type(x).__name__, x.tzinfo.key
    if isinstance(x, zoneinfo.ZoneInfo):
        return type(x).__name__, x.key
    raise TypeError("requires an ISO 8601 string or datetime.datetime")


def find_zone(key):
    """whenever's TimeZoneNotFoundError._for_key: what the caller gave, named in the error."""
    raise Error(f"time zone ID {key!r} not found")


def zone_of(dt):
    """whenever's ZonedDateTime(py_dt): the tzinfo must be a ZoneInfo, its key a str."""
    tz = dt.tzinfo
    if not isinstance(tz, zoneinfo.ZoneInfo):
        raise ValueError(f"tzinfo must be a ZoneInfo, got {tz!r}")
    if not isinstance(tz.key, str):
        raise TypeError("ZoneInfo key must be a string")
    return tz.key, dt.utcoffset()


def in_zone(dt, tz):
    """whenever's to_tz: a datetime moved into the zone it is given (the zone's fromutc)."""
    return dt.astimezone(tz)


def read_rules(root, name):
    """whenever's `reset_tzpath([dir])`: a library opening a file under a directory it is given."""
    with open(os.path.join(root, name), encoding="utf-8") as f:
        return f.read()
'''

HEADER = """
import builtins
import collections.abc
import concurrent.futures
import copy
import dataclasses
import datetime
import fractions
import inspect
import io
import ipaddress
import itertools
import json
import os
import pickle
import random
import time
import typing
import unittest.mock
import warnings
import zoneinfo

import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, rule

import lib
"""

# idiom -> (the property, what out of process gives today: "passed" or the reason's idiom).
# Not here: a class the file defines subclassing a library class, and weakref. The
# base's AST sends such a file in process whole (issue 17; tests/unit/
# test_properties_judge.py's needs_process table), which would hide every idiom below.
IDIOMS: dict[str, tuple[str, str]] = {
    "library classes built by hypothesis": (
        """
        @given(st.builds(lib.Thing, st.integers()))
        def test_builds(t):
            assert t == lib.Thing(t.n) and isinstance(t, lib.Thing)
        """,
        "passed",
    ),
    "library exceptions": (
        """
        @given(st.integers(max_value=-1))
        def test_raises(x):
            with pytest.raises(lib.Error, match="negative"):
                lib.check(x)
        """,
        "passed",
    ),
    "lazy iterators": (
        """
        @given(st.integers(0, 100))
        def test_iterator(n):
            assert list(itertools.islice(lib.count_up(n), 3)) == [n, n + 1, n + 2]
        """,
        "passed",
    ),
    "a judge object kept by the library": (
        """
        def test_judge_object_kept():
            o = object()
            assert lib.Box(o).get() is o
        """,
        "passed",
    ),
    "a stateful machine over a library object": (
        """
        class CounterMachine(RuleBasedStateMachine):
            def __init__(self):
                super().__init__()
                self.counter, self.model = lib.Counter(), []

            values = Bundle("values")

            @rule(target=values, x=st.integers())
            def push(self, x):
                self.counter.push(x)
                self.model.append(x)
                return x

            @rule()
            def pop(self):
                if self.model:
                    assert self.counter.pop() == self.model.pop()
                assert len(self.counter) == len(self.model)


        TestCounter = CounterMachine.TestCase
        TestCounter.settings = settings(max_examples=5, stateful_step_count=10)
        """,
        "passed",
    ),
    "issubclass of a library class against an ABC": (
        """
        def test_issubclass_abc():
            assert not issubclass(lib.Thing, collections.abc.Mapping)
        """,
        "passed",
    ),
    "a library tzinfo in a standard-library datetime": (
        """
        def test_tzinfo():
            dt = datetime.datetime(2020, 1, 1, tzinfo=lib.FIXED)
            assert dt.utcoffset() == datetime.timedelta(hours=1)
        """,
        "passed",
    ),
    "a standard-library value returned": (
        """
        @given(st.dates())
        def test_date_round_trip(d):
            assert lib.parse(d.isoformat()) == d
        """,
        "passed",
    ),
    "pickle of a library object": (
        """
        def test_pickle():
            assert pickle.loads(pickle.dumps(lib.Thing(3))) == lib.Thing(3)
        """,
        "passed",
    ),
    "os.fspath of a library PathLike": (
        """
        def test_fspath():
            assert os.fspath(lib.Where("data/x.txt")) == "data/x.txt"
            assert isinstance(lib.Where("a"), os.PathLike)
            assert not isinstance(lib.Thing(1), os.PathLike)
        """,
        "passed",
    ),
    "an argument handed back inside the result, and through a judge callback": (
        """
        @given(st.text(min_size=3), st.binary(min_size=3))
        def test_argument_identity(s, b):
            assert lib.pair(s)[0] is s and lib.pair(s)[1][0] is s
            assert lib.tagged(b, lambda y: ("", y))[1] is b
        """,
        "passed",
    ),
    "a library compiled pattern as a parametrize value: the same node id": (
        """
        @pytest.mark.parametrize("p", [lib.WORDS])
        def test_pattern_id(p):  # id: [a-z]+
            assert p.pattern == "[a-z]+"
        """,
        "passed",
    ),
    "a judge callback that changes the list the library gave it": (
        """
        @given(st.lists(st.integers(), max_size=5))
        def test_callback_changes_its_argument(xs):
            def count(item, acc):
                acc[0] += 1

            start = [0]
            assert lib.fold(xs, count, start) is start and start == [len(xs)]
        """,
        "passed",
    ),
    "the classes of None and Ellipsis, which builtins does not name": (
        """
        def test_singleton_types():
            assert lib.kinds([None, ...]) == [type(None), type(...)]
            assert lib.kinds([None])[0] is type(None)
        """,
        "passed",
    ),
    "a library object's class read in the property's source: obj.__class__": (
        """
        def test_class_of_a_library_object():
            t = lib.Thing(1)
            assert t.__class__.__name__ == "Thing" and t.__class__.__module__ == "lib"
            assert t.__class__(2) == lib.Thing(2) and isinstance(t, lib.Thing)
        """,
        "passed",
    ),
    "a library IntEnum with its own __str__ as a parametrize value: its str() is its id": (
        """
        @pytest.mark.parametrize("m", [lib.Month.IYYAR])
        def test_enum_own_str(m):  # id: iyyar
            assert str(m) == "iyyar" and m == 2 and f"{m!s}/{m:d}" == "iyyar/2"
        """,
        "passed",
    ),
    "a datetime in a ZoneInfo handed to a library that checks its type": (
        """
        def test_a_zoned_datetime():
            paris = zoneinfo.ZoneInfo("Europe/Paris")
            offset, zone = lib.offset_of(datetime.datetime(2020, 8, 15, tzinfo=paris))
            assert offset == datetime.timedelta(hours=2) and zone is paris
        """,
        "passed",
    ),
    "an int-like of the property's (__index__) the library reads with operator.index": (
        """
        class Five:
            def __index__(self):
                return 5


        def test_an_int_like_of_the_property():
            assert lib.repeat("a", Five()) == "aaaaa"
        """,
        "passed",
    ),
    "members of two library IntEnums told apart by their type": (
        """
        def test_enum_members_by_type():
            assert isinstance(lib.Code.OK, type(lib.Code.CLOSED))
            assert not isinstance(lib.Month.NISAN, type(lib.Code.OK))
            assert type(lib.Month.NISAN) is type(lib.Month.IYYAR)
            assert type(lib.Month.NISAN).__name__ == "Month"
        """,
        "passed",
    ),
    "a library Literal alias read with typing.get_args": (
        """
        def test_literal_values():
            assert typing.get_args(lib.LANGUAGE) == ("he", "en")
            assert lib.LANGUAGE == typing.Literal["en", "he"]
        """,
        "passed",
    ),
    "a library warning with stacklevel=2 points at the property's line": (
        """
        def test_warning_points_at_the_caller():
            with pytest.warns(DeprecationWarning) as caught:
                lib.old(1)
            assert [w.filename for w in caught] == [__file__]
        """,
        "passed",
    ),
    "a library IntEnum member, read twice, is the same member": (
        """
        def test_enum_member_identity():
            assert lib.Event().code is lib.Code.CLOSED and lib.Event().code == 5
        """,
        "passed",
    ),
    "a library class is a class: inspect.isclass, members of a library module": (
        """
        def test_library_class_is_a_class():
            assert inspect.isclass(lib.Thing) and isinstance(lib.Code, type)
            assert not inspect.isclass(lib.Thing(1))
            assert lib.Thing in [c for _, c in inspect.getmembers(lib, inspect.isclass)]
        """,
        "passed",
    ),
    "hypothesis sampling a library enum class": (
        """
        @given(st.sampled_from(lib.Code))
        def test_sampled_from_a_library_enum(c):
            assert c in (lib.Code.OK, lib.Code.CLOSED)
        """,
        "passed",
    ),
    "a set or list attribute of a library object changed in place": (
        """
        def test_attribute_changed_in_place():
            f = lib.Frame()
            f.flags = {"A"}
            f.flags.add("END")
            f.items.append(1)
            f.items += [2]
            assert f.has("END") and f.items == [1, 2] and lib.Frame().items == []
            mine = copy.copy(f.items)
            mine.append(3)
            assert f.items == [1, 2]
        """,
        "passed",
    ),
    "a library object as a dict key or set member, both ways": (
        """
        def test_library_objects_as_keys():
            d = lib.keyed([1, 2])
            assert d == {lib.INSERT: [1, 2]} and d[lib.INSERT] == [1, 2]
            assert lib.INSERT in lib.symbols() and len(lib.symbols()) == 2
            assert lib.lookup({lib.INSERT: 3}) == 3 and lib.lookup({lib.Symbol("insert"): 4}) == 4
            assert sorted(lib.clashing().values()) == [1, 2, 3]
        """,
        "passed",
    ),
    "a stream the test hands the library, written and read": (
        """
        def test_stream_handed_to_the_library():
            buffer = io.StringIO()
            lib.dump("abc", buffer)
            assert buffer.getvalue() == "abc" and lib.load(io.StringIO("xyz")) == "xyz"
        """,
        "passed",
    ),
    "a stream the library tells from text by isinstance(io.IOBase)": (
        """
        def test_stream_told_apart_by_isinstance():
            assert lib.read_any(io.StringIO("abc")) == "ABC" and lib.read_any("xyz") == "XYZ"
            assert lib.stream_kind(io.StringIO()) == "text"
            assert lib.stream_kind(io.BytesIO()) == "binary" and lib.stream_kind([]) == "other"
        """,
        "passed",
    ),
    "a BytesIO the library tells from octets by isinstance(io.BytesIO), read where it is": (
        """
        def test_a_bytesio_told_from_octets():
            stream = io.BytesIO(b"abcd")
            assert lib.take2(stream) == b"ab" and stream.read() == b"cd"
            assert lib.take2(b"xyz") == b"xy" and lib.octets_stream(stream) is stream
            assert lib.octets_stream(bytearray(b"q")).read() == b"q"
        """,
        "passed",
    ),
    "a BytesIO subclass of the property's, counting the reads the library makes": (
        """
        def test_a_bytesio_subclass_counts_reads():
            reads = []

            class Recording(io.BytesIO):
                def read(self, size=-1):
                    reads.append(size)
                    return super().read(size)

            stream = Recording(b"abcd")
            assert lib.take2(stream) == b"ab" and reads == [2] and stream.read() == b"cd"
        """,
        "passed",
    ),
    "a library IntFlag asked `flag in flags`": (
        """
        def test_an_intflag_member_in_flags():
            rw = lib.perms()
            assert lib.Perm.R in rw and lib.Perm.X not in rw and int(rw) == 6
        """,
        "passed",
    ),
    "IP addresses and networks as values": (
        """
        @given(st.ip_addresses())
        def test_an_ip_address_as_a_value(ip):
            packed, back = lib.packed_ip(ip)
            assert packed == ip.packed and back == ip and type(back) is type(ip)
            net = ipaddress.ip_network(ip)
            assert lib.kinds([net, ipaddress.ip_interface(ip)]) == [type(net), type(ipaddress.ip_interface(ip))]
        """,
        "passed",
    ),
    "a library bytes subclass's own repr, reduce, copy and pickle": (
        """
        def test_library_bytes_subclass_repr_and_reduce():
            h = lib.Hex(b"\\x0f")
            assert repr(h) == "Hex('0f')" and h == b"\\x0f" and repr([h]) == "[Hex('0f')]"
            fn, args = h.__reduce__()[:2]
            assert fn(*args) == h and repr(fn(*args)) == "Hex('0f')"
            assert repr(copy.copy(h)) == repr(copy.deepcopy(h)) == "Hex('0f')"
            assert repr(pickle.loads(pickle.dumps(h))) == "Hex('0f')"
        """,
        "passed",
    ),
    "a library list subclass changed in place, then asked for its own method": (
        """
        def test_library_list_subclass_changed_in_place():
            lines = lib.Lines()
            lines.append("a")
            lines += ["b"]
            assert lines.render() == "a|b" and lines == ["a", "b"]
            mine = copy.copy(lines)
            mine.append("c")
            assert lines.render() == "a|b" and mine.render() == "a|b|c"
        """,
        "passed",
    ),
    # Issue 17, session 11: a container the property hands the library, which keeps it.
    "a dict the library keeps, changed by the test": (
        """
        @given(st.integers())
        def test_a_kept_dict_changed_by_the_test(n):
            d = {}
            store = lib.Store(d)
            d["k"] = n
            assert store.get("k") == n and store.size() == 1
            del d["k"]
            assert store.size() == 0
        """,
        "passed",
    ),
    "a list the library keeps, changed by the test": (
        """
        @given(st.lists(st.integers(), max_size=3))
        def test_a_kept_list_changed_by_the_test(more):
            xs = []
            store = lib.Store(xs)
            xs.append(3)
            xs += more
            assert store.size() == 1 + len(more) and store.get(0) == 3
        """,
        "passed",
    ),
    "a set the test assigns to a library object, then changes": (
        """
        def test_an_assigned_set_changed_by_the_test():
            f = lib.Frame()
            flags = {"END_STREAM"}
            f.flags = flags
            flags.add("PADDED")
            assert f.has("PADDED") and f.has("END_STREAM")
        """,
        "passed",
    ),
    "a nested dict the library keeps, changed inside by the test": (
        """
        def test_a_kept_nested_dict_changed_inside():
            outer = {"a": {}}
            inner = outer["a"]
            store = lib.Store(outer)
            outer["a"]["b"] = 2
            inner["c"] = 3
            assert store.get("a", "b") == 2 and store.get("a", "c") == 3
        """,
        "passed",
    ),
    "a kept container changed by the library, read back by the test": (
        """
        def test_a_kept_container_changed_by_the_library():
            xs = [1]
            store = lib.Store(xs)
            store.push(2)
            assert xs == [1, 2]
            buffer = bytearray(b"abcdef")
            reader = lib.Store(buffer)
            reader.trim(2)
            assert buffer == b"cdef" and reader.size() == 4
        """,
        "passed",
    ),
    "a part of the test's data the library hands back is the test's own": (
        """
        @given(st.dictionaries(st.text(max_size=3), st.integers() | st.text(), max_size=4))
        def test_parts_of_the_tests_data_keep_their_identity(leaves):
            node = {"top": dict(leaves), "n": -6}
            for path, value in lib.walk(node):
                assert lib.Store(node).get(*path) is value
                inner = node
                for key in path:
                    inner = inner[key]
                assert inner is value
        """,
        "passed",
    ),
    "a library list subclass changed in place by the library": (
        """
        def test_a_library_list_subclass_changed_by_the_library():
            lines = lib.Lines()
            lines.append("a")
            lib.extend(lines, ["b"])
            assert lines == ["a", "b"] and lines.render() == "a|b"
        """,
        "passed",
    ),
    "deepcopy of a library object": (
        """
        def test_deepcopy():
            assert copy.deepcopy(lib.Thing(3)) == lib.Thing(3)
        """,
        "passed",
    ),
    "a judge object's reflected comparison against a library object": (
        """
        def test_reflected_comparison():
            class Delegate:
                def __eq__(self, other):
                    return [self]

                __ne__ = __eq__

                def __gt__(self, other):
                    return "gt"

            d = Delegate()
            assert (lib.Strict(1) == d) == [d] and (lib.Strict(1) != d) == [d]
            assert (lib.Strict(1) < d) == "gt"
            assert lib.Strict(1) != object() and not lib.Strict(1) == lib.Thing
            assert lib.Strict(1) == lib.Strict(1) != lib.Strict(2) and lib.Strict(1) != 1
            with pytest.raises(TypeError):
                lib.Strict(1) < object()
        """,
        "passed",
    ),
    "a match statement on a library sequence and mapping": (
        """
        @given(st.lists(st.integers(), min_size=1, max_size=4))
        def test_match_library_collections(xs):
            match lib.Items(*xs):
                case [head, *rest]:
                    assert [head, *rest] == xs
                case _:
                    raise AssertionError("no sequence pattern matched")
            match lib.Table(a=xs[0]):
                case {"a": v}:
                    assert v == xs[0]
                case _:
                    raise AssertionError("no mapping pattern matched")
            match lib.Thing(1):
                case [*_] | {}:
                    raise AssertionError("a Thing is no sequence nor mapping")
        """,
        "passed",
    ),
    # Out of process eval, exec and compile of text the file did not write run in the
    # worker (boundary/evaluate.py); the file's own literals in the judge.
    "eval of a library object's repr": (
        """
        @given(st.integers())
        def test_eval_of_a_library_repr(n):
            assert eval(repr(lib.Thing(n))) == lib.Thing(n)
        """,
        "passed",
    ),
    "eval of data's repr, through the builtins module": (
        """
        @given(st.lists(st.integers()))
        def test_eval_of_data(xs):
            assert eval(repr(xs)) == xs and builtins.eval(repr(xs)) == xs
        """,
        "passed",
    ),
    "exec of built text, then the function it defined": (
        """
        @given(st.integers(0, 100))
        def test_exec_of_built_text(n):
            ns = {}
            exec(f"def f(x):\\n    return x + {n}", ns)
            assert ns["f"](1) == 1 + n
        """,
        "passed",
    ),
    "compile of a library repr, then eval": (
        """
        def test_compile_then_eval():
            assert eval(compile(repr(lib.Thing(2)), "<repr>", "eval")) == lib.Thing(2)
        """,
        "passed",
    ),
    "exec of the file's own literal, naming a judge-only module": (
        """
        def test_exec_of_its_own_literal():
            ns = {}
            exec("from hypothesis import strategies as S\\nfound = S.integers()", ns)
            assert ns["found"] is not None
        """,
        "passed",
    ),
    "the property's threads calling the library, each with a callback": (
        """
        def test_threads_share_the_library():
            with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
                got = list(pool.map(lambda n: lib.tagged(n, lambda x: lib.check(x) + 1), range(100)))
            assert got == [n + 1 for n in range(100)]
        """,
        "passed",
    ),
    "a library's warnings caught by pytest.warns, a builtin category and its own": (
        """
        @given(st.integers())
        def test_library_warns(n):
            with pytest.warns(DeprecationWarning, match="deprecated"):
                assert lib.old(n) == n
            with pytest.warns(lib.LibWarning, match=f"noisy {n}"):
                assert lib.noisy(n) == n
        """,
        "passed",
    ),
    "a library's warning the property's filter turns into an error": (
        """
        def test_a_warning_as_an_error():
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                with pytest.raises(DeprecationWarning, match="deprecated"):
                    lib.old(1)
        """,
        "passed",
    ),
    "a `_name_` hook of the file's class, read and called by the library": (
        """
        class HasValue:
            @property
            def _lib_value_(self):
                return 7


        class Converts:
            def _lib_(self, k):
                return 2 * k


        def test_a_hook_of_the_files_class():
            assert lib.convert(HasValue()) == 7
            assert lib.convert(Converts()) == 20
            with pytest.raises(TypeError):
                lib.convert(object())
        """,
        "passed",
    ),
    "a stream the library checks for close and closed before it wraps it": (
        """
        def test_a_stream_wrapped_by_the_library():
            buffer = io.BytesIO()
            with lib.Wrapper(buffer) as wrapped:
                wrapped.write(b"abc")
            assert buffer.getvalue() == b"ABC" and not buffer.closed
        """,
        "passed",
    ),
    "a library object whose finalizer writes to the judge's stream, let go of": (
        """
        def test_a_finalizer_writing_to_the_judges_stream():
            buffer = io.StringIO()
            for _ in range(3):
                lib.Closing(buffer)
            assert lib.check(1) == 1 and buffer.getvalue() == "closed" * 3
        """,
        "passed",
    ),
    "a MagicMock the property hands the library": (
        """
        def test_a_mock_handed_to_the_library():
            stream = unittest.mock.MagicMock()
            stream.read.return_value = b"xyz"
            del stream.readable
            assert lib.probe(stream) == (False, b"xyz")
            stream.read.assert_called_once_with(3)
        """,
        "passed",
    ),
    "a stdlib value handed back as itself, and the library's timezone.utc": (
        """
        @given(st.timedeltas(min_value=-datetime.timedelta(hours=23), max_value=datetime.timedelta(hours=23)))
        def test_a_stdlib_value_handed_back_is_itself(offset):
            tz = datetime.timezone(offset)
            assert lib.upgrade(tz) is tz
            assert lib.UTC is datetime.timezone.utc and lib.upgrade(lib.UTC) is lib.UTC
            named = datetime.timezone(offset, "X")
            assert lib.upgrade(named) is named and lib.upgrade(named).tzname(None) == "X"
        """,
        "passed",
    ),
    "a library list that fills itself on first use": (
        """
        def test_a_list_filled_on_first_use():
            assert sorted(lib.ZONES) == ["a", "b"]
        """,
        "passed",
    ),
    "an integer too long to print, and a Fraction of it": (
        """
        def test_an_int_too_long_to_print():
            big = 10**5000
            assert lib.check(big) == big and lib.check(-big + big) == 0
            assert lib.kinds([fractions.Fraction(big, 3)]) == [fractions.Fraction]
        """,
        "passed",
    ),
    "a stdlib exception class the library raises, caught as that class": (
        """
        def test_a_stdlib_exception_class_raised_by_the_library():
            point = lib.Point(1)
            with pytest.raises(dataclasses.FrozenInstanceError):
                point.x = 2
            with pytest.raises(json.JSONDecodeError) as info:
                lib.parse_json("[1,")
            assert isinstance(info.value, ValueError) and info.value.pos == 3
            assert type(info.value).__name__ == "JSONDecodeError"
        """,
        "passed",
    ),
    "an exception's __cause__, raised from another in the library": (
        """
        def test_a_library_error_keeps_its_cause():
            with pytest.raises(lib.Error, match="not a key") as info:
                lib.checked_key("zz")
            cause = info.value.__cause__
            assert isinstance(cause, lib.Error) and str(cause) == "not hex"
            assert isinstance(cause.__cause__, ValueError) and cause.__cause__.__cause__ is None
            assert "invalid literal" in str(cause.__cause__)
            with pytest.raises(ValueError, match="no negative") as info:
                lib.checked_count("-1")
            assert isinstance(info.value.__cause__, lib.Error)
            assert str(info.value.__cause__) == "negative"
            with pytest.raises(lib.Error) as info:
                lib.checked_key("-1")  # lib.Error is a ValueError: three deep
            assert str(info.value.__cause__.__cause__) == "negative"
            assert info.value.__cause__.__cause__.__cause__ is None
        """,
        "passed",
    ),
    "a library mapping as pytest's ids=, iterated, not called": (
        """
        @pytest.mark.parametrize("n", [1], ids=lib.PARAMS)  # id: mainnet
        def test_a_library_mapping_names_the_parameters(n):
            assert not callable(lib.PARAMS) and callable(lib.Thing)
            assert lib.PARAMS["mainnet"] == n
        """,
        "passed",
    ),
    "a library drawing from the global `random`, seeded by the judge": (
        """
        @given(st.integers())
        def test_the_librarys_random_is_seeded_per_example(n):
            # The numbers are the worker's own seeding's, run after run, not Random(0)'s
            # (red team, session 12, third round): tests/unit/test_standin_random.py.
            assert all(0 <= x < 1 for x in lib.draw(2))
        """,
        "passed",
    ),
    "the environment the property changes, read by the library (TZ, a setting)": (
        """
        def test_the_environment_the_property_sets(monkeypatch):
            # whenever's suite: TZ set for a test, then the library reads it (issue 17).
            monkeypatch.setenv("LIB_ZONE", "/zones/a")
            monkeypatch.setenv("TZ", "AAA-1")
            time.tzset()
            assert lib.setting("LIB_ZONE") == "/zones/a" and lib.utc_offset() == 3600
            monkeypatch.delenv("LIB_ZONE")
            assert lib.setting("LIB_ZONE") is None
        """,
        "passed",
    ),
    "the environment patched for a block, and restored after it": (
        """
        def test_the_environment_patched_and_restored(monkeypatch):
            monkeypatch.setenv("TZ", "AAA-1")
            os.environ["LIB_MODE"] = "slow"
            with unittest.mock.patch.dict(os.environ, {"LIB_MODE": "fast", "TZ": "BBB-2"}):
                time.tzset()
                assert lib.setting("LIB_MODE") == "fast" and lib.utc_offset() == 7200
            time.tzset()
            assert lib.setting("LIB_MODE") == "slow" and lib.utc_offset() == 3600
            del os.environ["LIB_MODE"]
            assert lib.setting("LIB_MODE") is None
        """,
        "passed",
    ),
    "a file the property writes under tmp_path, opened by the library": (
        """
        def test_a_file_under_tmp_path_opened_by_the_library(tmp_path):
            # whenever's tz_rules_from_file: a zone file copied under tmp_path, whose path the
            # library is then given (issue 17, heldout13): the worker's /tmp is its box's own.
            (tmp_path / "Europe").mkdir()
            (tmp_path / "Europe" / "Amsterdam").write_text("rules")
            assert lib.read_rules(tmp_path, "Europe/Amsterdam") == "rules"
            assert lib.read_rules(str(tmp_path / "Europe"), "Amsterdam") == "rules"
        """,
        "passed",
    ),
    "a data file beside the properties that the base declares, named by the environment": (
        """
        def test_a_declared_data_file_beside_the_properties(monkeypatch):
            # whenever's TZ=AMS_TZ_RAWFILE (issue 17, session 17): `[properties] data` binds
            # the file at its judge path in the worker's box, and a value naming it crosses.
            path = os.path.join(os.path.dirname(__file__), "zones", "Plus5")
            monkeypatch.setenv("LIB_ZONE_FILE", path)
            assert lib.setting("LIB_ZONE_FILE") == path
            assert lib.read_rules(os.path.dirname(path), "Plus5") == "rules of Plus5"
            # The path the worker's box shows it at names no judge: a random folder, as
            # the tree's and the home's.
            assert "judge" not in path.split(os.sep)
        """,
        "passed",
    ),
    "a plain subclass of a stdlib value the property defines (datetime, ZoneInfo)": (
        """
        class DatetimeSubclass(datetime.datetime):
            pass


        def test_a_plain_subclass_of_a_stdlib_value_handed_to_the_library():
            # whenever's suite, "a subclass is accepted" (issue 17, heldout13): the library
            # checks the type, so a judge object would not do; nothing of its own to call back.
            import zoneinfo

            class MyZoneInfo(zoneinfo.ZoneInfo):
                pass

            paris = MyZoneInfo("Europe/Paris")
            d = DatetimeSubclass(2020, 8, 15, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
            assert lib.stdlib_kind(d) == ("DatetimeSubclass", "Europe/Paris")
            assert lib.stdlib_kind(paris) == ("MyZoneInfo", "Europe/Paris")
            assert lib.stdlib_kind(datetime.datetime(2020, 1, 1, tzinfo=paris))[1] == "Europe/Paris"
        """,
        "passed",
    ),
    "a tzinfo class of the property's in a datetime handed to the library": (
        """
        class MyTz(datetime.tzinfo):
            def utcoffset(self, dt):
                return datetime.timedelta(hours=2)

            def dst(self, dt):
                return datetime.timedelta(0)

            def tzname(self, dt):
                return "MyTz"


        class NoOffset(datetime.tzinfo):
            def utcoffset(self, dt):
                return None


        def test_a_tzinfo_of_the_propertys_in_a_datetime():
            # whenever's `Instant(py_datetime(..., tzinfo=MyTz()))` (issue 17, heldout14): the
            # library's C datetime asks the property's tzinfo, which stays the property's.
            tz = MyTz()
            offset, zone = lib.offset_of(datetime.datetime(2020, 1, 1, tzinfo=tz))
            assert offset == datetime.timedelta(hours=2) and zone is tz
            assert lib.offset_of(datetime.datetime(2020, 1, 1, tzinfo=NoOffset()))[0] is None
            utc = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
            moved = lib.in_zone(utc, tz)
            assert (moved.hour, moved.tzname()) == (2, "MyTz") and moved.tzinfo is tz
        """,
        "passed",
    ),
    "a ZoneInfo of the property's the library checks by type (from a file, with methods)": (
        """
        # A zone file of one type, UTC+1 "ABC", no transitions (TZif 2: both sections, footer).
        PLUS_ONE = (b"TZif2" + bytes(31) + b"\\0\\0\\0\\1\\0\\0\\0\\4" + b"\\0\\0\\x0e\\x10\\0\\0"
                    + b"ABC\\0") * 2 + b"\\nABC-1\\n"


        def test_a_zoneinfo_of_the_propertys_checked_by_type():
            # whenever's ZonedDateTime(py_dt) on `ZoneInfo.from_file(f, key=...)` and on a
            # subclass with its own utcoffset (issue 17, heldout14): a ZoneInfo to the
            # library, its key and its offsets the property's.
            zone = zoneinfo.ZoneInfo.from_file(io.BytesIO(PLUS_ONE), key="Test/PlusOne")
            at = datetime.datetime(2020, 1, 1, tzinfo=zone)
            assert lib.zone_of(at) == ("Test/PlusOne", datetime.timedelta(hours=1))
            assert lib.in_zone(at, zone).tzinfo is zone
            keyless = zoneinfo.ZoneInfo.from_file(io.BytesIO(PLUS_ONE))
            with pytest.raises(TypeError, match="key must be a string"):
                lib.zone_of(datetime.datetime(2020, 1, 1, tzinfo=keyless))

            class Shifted(zoneinfo.ZoneInfo):
                def utcoffset(self, dt):
                    return datetime.timedelta(hours=3)

            shifted = datetime.datetime(2020, 1, 1, tzinfo=Shifted("Europe/Paris"))
            assert lib.zone_of(shifted) == ("Europe/Paris", datetime.timedelta(hours=3))
        """,
        "passed",
    ),
    "a library error whose message names a long input": (
        """
        def test_a_library_error_naming_a_long_input():
            # whenever's parse_iso of a 9,999-character zone ID (issue 17, heldout14): the
            # message's end is past the first 4,000 characters, where `match` reads.
            with pytest.raises(lib.Error, match="not found$"):
                lib.find_zone("X" * 9999)
        """,
        "passed",
    ),
}

FILE = "eval/properties/test_idioms.py"
DATA = "eval/properties/zones/Plus5"  # the base's `[properties] data`, beside the properties


def property_file() -> str:
    bodies = [textwrap.dedent(src).strip("\n") for src, _ in IDIOMS.values()]
    return textwrap.dedent(HEADER).lstrip("\n") + "\n\n" + "\n\n\n".join(bodies) + "\n"


def idiom_nodeid(src: str) -> str:
    """An idiom's node id, read from its source: its test (with the `# id:` it is
    parametrized with, as pytest names it in process), or its machine's TestCase."""
    found = re.search(r"^def (test_\w+)|^(Test\w+) = ", textwrap.dedent(src), re.MULTILINE)
    assert found, src
    test, machine = found.groups()
    param = re.search(r"# id: (\S+)$", src, re.MULTILINE)
    if test:
        return f"{FILE}::{test}" + (f"[{param.group(1)}]" if param else "")
    return f"{FILE}::{machine}::runTest"


def judged(tmp_path: Path, inside: bool) -> compat.Outcomes:
    """The properties lane alone (`patchjudge properties`) on a comment-only patch."""
    extra = f'in_process = ["{FILE}"]\n' if inside else ""
    extra += f'data = ["{DATA}"]\n'
    ledger = fast_ledger().replace("review_mutants = 2\n", "review_mutants = 0\n" + extra)
    files = {"src/lib.py": LIB, FILE: property_file(), "eval/gate.toml": ledger}
    files[DATA] = "rules of Plus5"
    repo = example_repo(tmp_path, **files)
    write(repo, {"src/lib.py": LIB + "\n# patched\n"})
    commit(repo, "a comment-only patch")
    result = cli(repo, "properties", "--base", "main")
    assert result.code in (0, 1), result
    report = result.report(repo, "properties")
    if not inside:  # the table is of what crosses: no file may run in process
        assert report["details"]["in_process"] == [], report["details"]["in_process_why"]
    return compat.oop_outcomes(report)


def test_each_idiom_passes_in_process_and_out_of_process_as_the_table_says(
    tmp_path: Path,
) -> None:
    require_sandbox()
    ids = {name: idiom_nodeid(src) for name, (src, _) in IDIOMS.items()}
    inside = judged(tmp_path / "in", inside=True)
    assert set(ids.values()) <= inside.passed(), inside
    outside = judged(tmp_path / "out", inside=False)
    got = {}
    for name, nodeid in ids.items():
        if outside.status.get(nodeid) == "passed":
            got[name] = "passed"
        else:
            got[name] = compat.reason(nodeid, outside).partition(":")[0]
    assert got == {name: expected for name, (_, expected) in IDIOMS.items()}


STRATEGIES_LIB = '''
from hypothesis import strategies as st


def evens(min_value=0):
    """A strategy the library ships for its users (hyperlink.hypothesis's idiom)."""
    return st.integers(min_value, 10**6).map(lambda n: 2 * (n // 2))


def is_even(n):
    return n % 2 == 0
'''

STRATEGIES_FILE = """
from hypothesis import given, strategies as st

import lib


@given(lib.evens())
def test_drawn_from_the_librarys_strategy(n):
    assert lib.is_even(n)


@given(st.data())
def test_drawn_inside(data):
    assert all(lib.is_even(n) for n in data.draw(st.lists(lib.evens(min_value=2))))
"""


def test_a_file_drawing_from_the_librarys_own_strategies_runs_in_process(tmp_path: Path) -> None:
    """Out of process such a strategy is a handle, never a SearchStrategy (hyperlink 12 of 12)."""
    require_sandbox()
    name = "eval/properties/test_lib_strategies.py"
    ledger = fast_ledger().replace("review_mutants = 2\n", "review_mutants = 0\n")
    repo = example_repo(
        tmp_path, **{"src/lib.py": STRATEGIES_LIB, name: STRATEGIES_FILE, "eval/gate.toml": ledger}
    )
    write(repo, {"src/lib.py": STRATEGIES_LIB + "\n# patched\n"})
    commit(repo, "a comment-only patch")
    result = cli(repo, "properties", "--base", "main")
    report = result.report(repo, "properties")
    assert report["details"]["in_process"] == [name], report["details"]
    assert report["details"]["in_process_why"][name].startswith(
        "draws from lib.evens() (line 6), a strategy of the code under test"
    )
    assert {
        f"{name}::test_drawn_from_the_librarys_strategy",
        f"{name}::test_drawn_inside",
    } <= compat.oop_outcomes(report).passed(), report


EXACT_TYPE_FILE = """
import pytest

import lib


@pytest.fixture(params=["Thing"])
def thing_class(request):
    return getattr(lib, request.param)


def test_a_copy_has_the_exact_class(thing_class):
    assert type(lib.Box(thing_class(2)).get()) is thing_class
"""


def test_a_file_comparing_the_exact_type_of_a_library_object_runs_in_process(
    tmp_path: Path,
) -> None:
    """Out of process `type(h)` is the stand-in's class, never the library's (multidict's 2)."""
    require_sandbox()
    name = "eval/properties/test_exact_type.py"
    ledger = fast_ledger().replace("review_mutants = 2\n", "review_mutants = 0\n")
    repo = example_repo(
        tmp_path, **{"src/lib.py": LIB, name: EXACT_TYPE_FILE, "eval/gate.toml": ledger}
    )
    write(repo, {"src/lib.py": LIB + "\n# patched\n"})
    commit(repo, "a comment-only patch")
    report = cli(repo, "properties", "--base", "main").report(repo, "properties")
    assert report["details"]["in_process_why"] == {
        name: "compares type(lib.Box(thing_class(2)).get()) with thing_class (line 12): out of "
        "process the type of a library object is its stand-in's"
    }, report["details"]
    assert f"{name}::test_a_copy_has_the_exact_class[Thing]" in compat.oop_outcomes(report).passed()


HANDED_LIB = '''
import enum
import inspect


def structure(value, cls):
    """cattrs's idiom: dispatch on the class itself (its members, issubclass)."""
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return cls(value)
    raise TypeError(f"unsupported type: {cls!r}")


def seq(fn):
    """expression's @effect.seq: the decorated function must be a generator function."""
    if not inspect.isgeneratorfunction(fn):
        raise TypeError("not a generator function")
    return lambda *a: tuple(fn(*a))
'''

HANDED_FILES = {
    "eval/properties/test_handed_class.py": """
import enum

from hypothesis import given, strategies as st

import lib


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@given(st.sampled_from([1, 2]))
def test_structure_an_enum_of_the_files(n):
    assert lib.structure(n, Color) is Color(n)
""",
    "eval/properties/test_handed_generator.py": """
from hypothesis import given, strategies as st

import lib


@given(st.lists(st.integers(), max_size=4))
def test_a_decorated_generator_of_the_files(xs):
    @lib.seq
    def each():
        yield from xs

    assert each() == tuple(xs)
""",
}


def test_a_file_handing_its_own_class_or_generator_to_the_library_runs_in_process(
    tmp_path: Path,
) -> None:
    """Out of process the class and the generator function are judge handles, which the
    library cannot dispatch on (cattrs's 12, expression's @effect.seq 3)."""
    require_sandbox()
    ledger = fast_ledger().replace("review_mutants = 2\n", "review_mutants = 0\n")
    repo = example_repo(
        tmp_path, **{"src/lib.py": HANDED_LIB, **HANDED_FILES, "eval/gate.toml": ledger}
    )
    write(repo, {"src/lib.py": HANDED_LIB + "\n# patched\n"})
    commit(repo, "a comment-only patch")
    report = cli(repo, "properties", "--base", "main").report(repo, "properties")
    why = "of the code under test: it needs the object itself in its process, not a judge handle"
    assert report["details"]["in_process_why"] == {
        "eval/properties/test_handed_class.py": "class Color (line 8) is handed to "
        f"lib.structure (line 15), {why}",
        "eval/properties/test_handed_generator.py": "generator function each (line 9) is "
        f"decorated with lib.seq (line 8), {why}",
    }, report["details"]
    assert {
        "eval/properties/test_handed_class.py::test_structure_an_enum_of_the_files",
        "eval/properties/test_handed_generator.py::test_a_decorated_generator_of_the_files",
    } <= compat.oop_outcomes(report).passed(), report
