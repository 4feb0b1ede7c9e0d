"""What can cross the oracle's boundary: data values, handles and frames, as bytes (issue 11).

Pure code, no I/O, and nothing is unpickled or evaluated: a frame holds one
value in a small tagged binary form. Data crosses as itself (None, bool, int,
float, str, bytes, list, tuple, dict, set, frozenset, exact types only);
anything else is a reference the caller turns into bytes and back through
two functions it passes in, so this module never holds an object of either
side. The judge and the worker (worker.py, standin.py) import this module
and nothing of each other. Limits are strict because the worker's side is
the patch's code: a frame past them is malformed, not slow.

Layout: a frame is a 4-byte big-endian length and a payload; a payload is
one value. A value is a tag byte then:

    N T F            None, True, False
    j <8>            int in 64 bits, two's complement, big-endian
    i <u32 n> <n>    a larger int, n bytes, two's complement, big-endian
    f <8>            float, IEEE 754 big-endian
    s <u32 n> <n>    str, UTF-8 (lone surrogates kept: surrogatepass)
    b <u32 n> <n>    bytes
    l t S z <u32 n>  list, tuple, set, frozenset of n values
    d <u32 n>        dict of n key, value pairs
    r <u8 kind> <u64 id> <value meta>   a reference (kind: caller-defined)

Set members and dict keys must be hashable data: no reference in them, so
decoding never runs a hash that would have to cross the boundary.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

MAX_FRAME = 32 * 1024 * 1024  # bytes in one payload
MAX_DEPTH = 64  # containers nested in one value
MAX_ITEMS = 1_000_000  # values in one payload, all levels together
MAX_INT_BYTES = 1024  # about 2,400 decimal digits

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_F64 = struct.Struct(">d")
_S64 = struct.Struct(">q")
_I64 = 1 << 63
_REF = struct.Struct(">BQ")

DATA_TYPES = (type(None), bool, int, float, str, bytes, list, tuple, dict, set, frozenset)
_CONTAINER_TAGS: dict[type, bytes] = {
    list: b"l", tuple: b"t", set: b"S", frozenset: b"z", dict: b"d"
}  # fmt: skip
_HASHED = (type(None), bool, int, float, str, bytes, tuple, frozenset)


class WireError(ValueError):
    """Bytes that are not a value this module writes, or a value it will not write."""


class Ref:
    """A reference as it crosses: who defines `kind` and `id` is the caller."""

    __slots__ = ("id", "kind", "meta")

    def __init__(self, kind: int, id: int, meta: Any = None) -> None:
        self.kind, self.id, self.meta = kind, id, meta

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Ref)
            and (self.kind, self.id) == (other.kind, other.id)
            and same(self.meta, other.meta)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Ref({self.kind}, {self.id}, {self.meta!r})"


# --- encoding -----------------------------------------------------------------

ToRef = Callable[[Any], Ref]


def encode(value: Any, to_ref: ToRef | None = None) -> bytes:
    """One value as a payload; `to_ref` turns what is not data into a Ref (else: WireError)."""
    out: list[bytes] = []
    budget = [MAX_ITEMS]
    _encode(value, to_ref, out, 0, False, budget)
    payload = b"".join(out)
    if len(payload) > MAX_FRAME:
        raise WireError(f"value too large to cross ({len(payload)} bytes > {MAX_FRAME})")
    return payload


def is_data(value: Any) -> bool:
    """Whether `value` crosses as a value (no reference anywhere in it)."""
    try:
        encode(value)
    except (WireError, RecursionError):
        return False
    return True


def _encode(  # noqa: PLR0917  (recursive; the state rides along)
    value: Any, to_ref: ToRef | None, out: list[bytes], depth: int, hashed: bool, budget: list[int]
) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError(f"value has more than {MAX_ITEMS} items")
    kind = type(value)
    if value is None:
        out.append(b"N")
    elif kind is bool:
        out.append(b"T" if value else b"F")
    elif kind is int and -_I64 <= value < _I64:
        out += (b"j", _S64.pack(value))
    elif kind is int:
        size = (value.bit_length() + 8) // 8
        if size > MAX_INT_BYTES:
            raise WireError(f"int too large to cross ({size} bytes)")
        out += (b"i", _U32.pack(size), value.to_bytes(size, "big", signed=True))
    elif kind is float:
        out += (b"f", _F64.pack(value))
    elif kind is str:
        raw = value.encode("utf-8", "surrogatepass")
        out += (b"s", _U32.pack(len(raw)), raw)
    elif kind is bytes:
        out += (b"b", _U32.pack(len(value)), value)
    elif kind in (list, tuple, set, frozenset, dict):
        if depth >= MAX_DEPTH:
            raise WireError(f"value nested deeper than {MAX_DEPTH}")
        if hashed and kind not in _HASHED:
            raise WireError(f"unhashable {kind.__name__} as a set member or dict key")
        tag = _CONTAINER_TAGS[kind]
        out += (tag, _U32.pack(len(value)))
        if kind is dict:
            for k, v in value.items():
                _encode(k, None, out, depth + 1, True, budget)
                _encode(v, to_ref, out, depth + 1, False, budget)
        else:
            member = hashed or kind in (set, frozenset)
            for item in value:
                _encode(item, None if member else to_ref, out, depth + 1, member, budget)
    elif to_ref is not None and not hashed:
        ref = to_ref(value)
        out += (b"r", _REF.pack(ref.kind, ref.id))
        _encode(ref.meta, None, out, depth + 1, False, budget)
    else:
        where = "a set member or dict key" if hashed else "data"
        raise WireError(f"{kind.__name__} cannot cross as {where}")


# --- decoding -----------------------------------------------------------------

FromRef = Callable[[Ref], Any]


def decode(payload: bytes, from_ref: FromRef | None = None) -> Any:
    """A payload back to its value; `from_ref` turns each Ref into an object (else: the Ref)."""
    if len(payload) > MAX_FRAME:
        raise WireError(f"payload too large ({len(payload)} bytes > {MAX_FRAME})")
    reader = _Reader(payload, from_ref)
    value = reader.value(0, False)
    if reader.pos != len(payload):
        raise WireError(f"{len(payload) - reader.pos} stray byte(s) after the value")
    return value


class _Reader:
    """One pass over a payload; bounds are checked before every read."""

    def __init__(self, data: bytes, from_ref: FromRef | None) -> None:
        self.data = data
        self.pos = 0
        self.items = 0
        self.from_ref = from_ref

    def count(self) -> int:
        pos = self.pos
        if pos + 4 > len(self.data):
            raise WireError("payload ends inside a value")
        (n,) = _U32.unpack_from(self.data, pos)
        self.pos = pos + 4
        # Each item needs at least one byte: a count past what is left is a lie.
        if n > len(self.data) - self.pos:
            raise WireError(f"count {n} exceeds the bytes left")
        return int(n)

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise WireError("payload ends inside a value")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def value(self, depth: int, hashed: bool) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise WireError(f"value has more than {MAX_ITEMS} items")
        data, pos = self.data, self.pos
        if pos >= len(data):
            raise WireError("payload ends inside a value")
        tag = data[pos]
        self.pos = pos + 1
        if tag == 0x4E:  # N
            return None
        if tag == 0x54:  # T
            return True
        if tag == 0x46:  # F
            return False
        if tag == 0x6A:  # j
            if pos + 9 > len(data):
                raise WireError("payload ends inside a value")
            self.pos = pos + 9
            return _S64.unpack_from(data, pos + 1)[0]
        if tag == 0x69:  # i
            n = self.count()
            if n == 0 or n > MAX_INT_BYTES:
                raise WireError(f"int of {n} bytes")
            value = int.from_bytes(self.take(n), "big", signed=True)
            if (value.bit_length() + 8) // 8 != n or -_I64 <= value < _I64:
                raise WireError("int not in its shortest form")
            return value
        if tag == 0x73:  # s
            try:
                return self.take(self.count()).decode("utf-8", "surrogatepass")
            except UnicodeDecodeError as exc:
                raise WireError(f"str not UTF-8: {exc.reason}") from None
        if tag == 0x66:  # f
            (f,) = _F64.unpack(self.take(8))
            return f
        if tag == 0x62:  # b
            return self.take(self.count())
        if tag in _CONTAINERS:
            if depth >= MAX_DEPTH:
                raise WireError(f"value nested deeper than {MAX_DEPTH}")
            if hashed and tag not in (0x74, 0x7A):
                raise WireError("unhashable container as a set member or dict key")
            n = self.count()
            if tag == 0x64:  # d
                result = {}
                for _ in range(n):
                    key = self.value(depth + 1, True)
                    result[key] = self.value(depth + 1, False)
                if len(result) != n:
                    raise WireError("dict with a repeated key")
                return result
            member = hashed or tag in (0x53, 0x7A)
            items = [self.value(depth + 1, member) for _ in range(n)]
            if tag == 0x6C:  # l
                return items
            if tag == 0x74:  # t
                return tuple(items)
            built = set(items) if tag == 0x53 else frozenset(items)
            if len(built) != n:
                raise WireError("set with a repeated member")
            return built
        if tag == 0x72:  # r
            if hashed:
                raise WireError("a reference as a set member or dict key")
            kind, ident = _REF.unpack(self.take(_REF.size))
            ref = Ref(kind, ident, self.value(depth + 1, False))
            return ref if self.from_ref is None else self.from_ref(ref)
        raise WireError(f"unknown tag {bytes([tag])!r} at byte {pos}")


_CONTAINERS = frozenset(b"ltSzd")


# --- frames -------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """A payload with its length in front."""
    if len(payload) > MAX_FRAME:
        raise WireError(f"payload too large ({len(payload)} bytes > {MAX_FRAME})")
    return _U32.pack(len(payload)) + payload


def frame_length(header: bytes) -> int:
    """The payload length a 4-byte header announces; past MAX_FRAME is malformed."""
    if len(header) != 4:
        raise WireError("frame header is 4 bytes")
    (n,) = _U32.unpack(header)
    if n > MAX_FRAME:
        raise WireError(f"frame of {n} bytes announced (> {MAX_FRAME})")
    return int(n)


def split_frames(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Whole payloads at the front of `buffer`, and the incomplete rest."""
    payloads, pos = [], 0
    while len(buffer) - pos >= 4:
        n = frame_length(buffer[pos : pos + 4])
        if len(buffer) - pos - 4 < n:
            break
        payloads.append(buffer[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return payloads, buffer[pos:]


def take_frame(buffer: bytearray) -> bytes | None:
    """The first whole payload in `buffer` (removed from it), or None until one has arrived."""
    if len(buffer) < 4:
        return None
    n = frame_length(bytes(buffer[:4]))
    if len(buffer) < 4 + n:
        return None
    payload = bytes(buffer[4 : 4 + n])
    del buffer[: 4 + n]
    return payload


def same(a: Any, b: Any) -> bool:
    """Equality that tells types apart and NaN from nothing: what a round trip must keep."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, Ref):
        return bool(a == b)
    return bool(a == b)
