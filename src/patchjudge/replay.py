"""Pure replay policy: the slice's bytes, the receipt record, and the rules that judge it."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from patchjudge.errors import PatchjudgeError
from patchjudge.testrun import Outcome

SLICE_FILE = "replay-slice.txt"
RECEIPT_FILE = "receipt.json"
RECEIPT_SCHEMA = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")
# A commit id: SHA-1 repositories have 40 hex digits, SHA-256 ones 64.
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


# --- the slice ---------------------------------------------------------------


def nodeid_problem(nodeid: str) -> str | None:
    """Why `nodeid` may not travel in a slice, or None.

    The trusted host hands these to pytest, so each must name a test inside
    the tree: no option, no absolute path, no way out through `..`, and no
    `@FILE`, which pytest (9) reads as more arguments, options too, from a
    file of the tree (red team, session 12).
    """
    if not nodeid:
        return "empty node id"
    if nodeid != nodeid.strip() or any(c in nodeid for c in "\r\n\0"):
        return f"{nodeid!r}: white space around it or a control character in it"
    path = nodeid.split("::", 1)[0]
    parts = PurePosixPath(path).parts
    if path.startswith(("-", "/", "@")) or "\\" in path or ".." in parts or not parts:
        return f"{nodeid!r}: not a node id relative to the repository"
    return None


def slice_bytes(nodeids: Iterable[str]) -> bytes:
    """The SPEC's byte format: UTF-8, sorted, unique, one a line, LF, a final newline.

    The empty slice is zero bytes: there is no line to end.
    """
    unique = sorted(set(nodeids))
    for nodeid in unique:
        problem = nodeid_problem(nodeid)
        if problem:
            raise ValueError(problem)
    return "".join(f"{n}\n" for n in unique).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_slice(data: bytes, source: str) -> tuple[str, ...]:
    """Slice bytes -> node ids, refusing anything that is not exactly the canonical form."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchjudgeError(f"not UTF-8 (byte {exc.start})", file=source) from None
    if not text:
        return ()
    if not text.endswith("\n"):
        raise PatchjudgeError("no final newline", file=source, fix="regenerate the slice")
    lines = text[:-1].split("\n")
    for i, line in enumerate(lines):
        problem = nodeid_problem(line)
        if problem:
            raise PatchjudgeError(problem, file=source, key=f"line {i + 1}")
        if i and line <= lines[i - 1]:
            what = "repeated" if line == lines[i - 1] else "out of order"
            raise PatchjudgeError(
                f"node id {what}: {line!r}",
                file=source,
                key=f"line {i + 1}",
                fix="a slice is sorted and unique; regenerate it with patchjudge replay slice",
            )
    return tuple(lines)


def nodeid_matches(glob: str, nodeid: str) -> bool:
    """A glob names a node id, or the file that holds it.

    Shell-style, `*` crossing `/` and `::`: `tests/net/*`, `tests/test_net.py`
    and `*::test_*_dns` all name `tests/net/test_net.py::test_fetch_dns`.
    """
    path = nodeid.split("::", 1)[0]
    pattern = glob.rstrip("/")
    return fnmatch.fnmatchcase(nodeid, pattern) or fnmatch.fnmatchcase(path, pattern)


def host_dependent(
    collected_head: Iterable[str],
    globs: Sequence[str],
    marker: str,
    markers_head: Mapping[str, Sequence[str]],
    markers_base: Mapping[str, Sequence[str]],
) -> set[str]:
    """The visible tests at head that only a trusted host can decide.

    Named by a `[replay] nodeids` glob, or carrying the `[replay] marker` at
    head *or at base*: a patch that drops the marker (or strips it in a
    conftest hook) still has its test replayed.
    """
    found = set()
    for nodeid in collected_head:
        if any(nodeid_matches(g, nodeid) for g in globs) or (
            marker
            and (marker in markers_head.get(nodeid, ()) or marker in markers_base.get(nodeid, ()))
        ):
            found.add(nodeid)
    return found


def is_private(nodeid: str, private: Sequence[str]) -> bool:
    return any(nodeid_matches(glob, nodeid) for glob in private)


def slice_problems(nodeids: Collection[str], private: Sequence[str], max_slice: int) -> list[str]:
    """Why this slice may not be handed to a trusted host.

    A private node id is named by its glob only: the reason lands in reports
    that are uploaded too.
    """
    problems = []
    for glob in private:
        hits = sum(1 for n in nodeids if is_private(n, [glob]))
        if hits:
            problems.append(
                f"{hits} node id(s) match [replay] private glob {glob!r}: "
                "a slice never carries what may not be uploaded"
            )
    if len(nodeids) > max_slice:
        problems.append(f"slice has {len(nodeids)} node ids, over max_slice {max_slice}")
    return problems


# --- the receipt ---------------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    """What the trusted host says it ran (SPEC: A replay receipt)."""

    seed: int
    head: str
    slice_sha256: str
    failed_nodeids: tuple[str, ...]
    skipped_by_freeze: tuple[str, ...]
    passed_nodeids: tuple[str, ...]
    host_role: str
    host: Mapping[str, str] = field(default_factory=dict)
    # Why the host's own run cannot be believed (timeout, tampering); empty when clean.
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": RECEIPT_SCHEMA,
            "seed": self.seed,
            "head": self.head,
            "slice_sha256": self.slice_sha256,
            "failed_nodeids": list(self.failed_nodeids),
            "skipped_by_freeze": list(self.skipped_by_freeze),
            "passed_nodeids": list(self.passed_nodeids),
            "host_role": self.host_role,
            "host": dict(self.host),
            "problems": list(self.problems),
        }


HOST_KEYS = ("python", "platform", "pins_sha256")
_LISTS = ("failed_nodeids", "skipped_by_freeze", "passed_nodeids", "problems")
RECEIPT_KEYS = (
    "schema",
    "seed",
    "head",
    "slice_sha256",
    *_LISTS[:3],
    "host_role",
    "host",
    "problems",
)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Two "head" keys would let two readers see two receipts in one file.
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise ValueError(f"key {key!r} appears twice")
        doc[key] = value
    return doc


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _field_problem(key: str, value: Any) -> str | None:
    if key == "schema":
        return (
            None if type(value) is int and value == RECEIPT_SCHEMA else f"must be {RECEIPT_SCHEMA}"
        )
    if key == "seed":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if ok else "must be a whole number >= 0"
    if key == "head":
        ok = isinstance(value, str) and _COMMIT.fullmatch(value) is not None
        return None if ok else "must be a full commit id (40 or 64 lower-case hex)"
    if key == "slice_sha256":
        ok = isinstance(value, str) and _SHA256.fullmatch(value) is not None
        return None if ok else "must be 64 lower-case hex digits"
    if key == "host_role":
        return None if isinstance(value, str) and value.strip() else "must be a non-empty string"
    if key == "host":
        if not isinstance(value, dict) or set(value) != set(HOST_KEYS):
            return f"must be an object with exactly {', '.join(HOST_KEYS)}"
        return None if all(isinstance(v, str) for v in value.values()) else "values must be strings"
    if key in _LISTS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "must be a list of strings"
        dup = next((v for i, v in enumerate(value) if v in value[:i]), None)
        return None if dup is None else f"lists {dup!r} twice"
    raise AssertionError(f"unreachable: {key}")


def parse_receipt(data: bytes, source: str) -> Receipt:
    """Receipt bytes -> a Receipt, or a PatchjudgeError naming the key (exit 2)."""
    try:
        doc = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constant,
        )
    except UnicodeDecodeError as exc:
        raise PatchjudgeError(f"not UTF-8 (byte {exc.start})", file=source) from None
    except (ValueError, RecursionError) as exc:
        raise PatchjudgeError(
            f"not valid JSON: {exc}", file=source, fix="use the receipt.json the host wrote"
        ) from None
    if not isinstance(doc, dict):
        raise PatchjudgeError("must be a JSON object", file=source)
    for key in doc:
        if key not in RECEIPT_KEYS:
            raise PatchjudgeError(
                "unknown key", file=source, key=key, fix=f"known: {', '.join(RECEIPT_KEYS)}"
            )
    for key in RECEIPT_KEYS:
        if key not in doc:
            raise PatchjudgeError("missing", file=source, key=key)
        problem = _field_problem(key, doc[key])
        if problem:
            raise PatchjudgeError(problem, file=source, key=key)
    return Receipt(
        seed=doc["seed"],
        head=doc["head"],
        slice_sha256=doc["slice_sha256"],
        failed_nodeids=tuple(doc["failed_nodeids"]),
        skipped_by_freeze=tuple(doc["skipped_by_freeze"]),
        passed_nodeids=tuple(doc["passed_nodeids"]),
        host_role=doc["host_role"],
        host=dict(doc["host"]),
        problems=tuple(doc["problems"]),
    )


def check(
    receipt: Receipt,
    slice_sha256: str,
    head: str,
    frozen_nodeids: Collection[str],
    *,
    slice_nodeids: Collection[str] | None = None,
    seed: int | None = None,
) -> list[str]:
    """Pure: why this receipt does not vouch for this run (SPEC: the replay lane).

    Beyond the SPEC's four rules: the host's own run must have been clean,
    seeded as the ledger says, and (given the slice's node ids) must account
    for each exactly once, so a receipt that drops a failure is no pass.
    """
    reasons = []
    if receipt.head != head:
        reasons.append(f"receipt is for head {receipt.head[:12]}, this run judges {head[:12]}")
    same_slice = receipt.slice_sha256 == slice_sha256
    if not same_slice:
        reasons.append(
            f"receipt slice_sha256 {receipt.slice_sha256[:12]} is not this run's slice "
            f"{slice_sha256[:12]}: the host ran another slice"
        )
    reasons += [f"trusted host: {p}" for p in receipt.problems]
    if seed is not None and receipt.seed != seed:
        reasons.append(f"receipt ran with seed {receipt.seed}, the ledger says {seed}")
    frozen = set(frozen_nodeids)
    reasons += [
        f"receipt skips {n}, which the registry does not freeze"
        for n in receipt.skipped_by_freeze
        if n not in frozen
    ]
    reasons += [
        f"failed on the trusted host (not frozen): {n}"
        for n in receipt.failed_nodeids
        if n not in frozen
    ]
    if slice_nodeids is not None and same_slice:
        reasons += _accounting(receipt, slice_nodeids)
    return reasons


def _accounting(receipt: Receipt, slice_nodeids: Collection[str]) -> list[str]:
    listed: dict[str, list[str]] = {}
    for name in _LISTS[:3]:
        for nodeid in getattr(receipt, name):
            listed.setdefault(nodeid, []).append(name)
    wanted = set(slice_nodeids)
    reasons = [
        f"receipt lists {n} in both {' and '.join(names)}"
        for n, names in listed.items()
        if len(names) > 1
    ]
    reasons += [f"receipt names {n}, which is not in the slice" for n in listed if n not in wanted]
    reasons += [f"receipt does not account for {n}" for n in sorted(wanted) if n not in listed]
    return reasons


# --- the trusted host's run ----------------------------------------------------


def sort_outcomes(
    nodeids: Sequence[str], outcomes: Iterable[Outcome], frozen: Collection[str]
) -> tuple[list[str], list[str], list[str]]:
    """Pure: (passed, failed, skipped_by_freeze) for each slice node id.

    Passed means a clean pass of the call with no phase failing. A frozen test
    that did not pass is excused: failed if it failed, else skipped_by_freeze.
    A test that is not frozen and did not pass (skipped, xfailed, never ran)
    counts as failed: the host could not vouch for it.
    """
    grouped: dict[str, list[Outcome]] = {}
    for o in outcomes:
        grouped.setdefault(o.nodeid, []).append(o)
    passed, failed, skipped = [], [], []
    for nodeid in nodeids:
        seen = grouped.get(nodeid, [])
        bad = any(o.outcome == "failed" for o in seen)
        clean = (
            not bad
            and any(o.when == "call" and o.outcome == "passed" and not o.wasxfail for o in seen)
            and not any(o.outcome == "skipped" for o in seen)
        )
        if clean:
            passed.append(nodeid)
        elif bad or nodeid not in frozen:
            failed.append(nodeid)
        else:
            skipped.append(nodeid)
    return passed, failed, skipped


def pins_digest(distributions: Iterable[tuple[str, str]]) -> str:
    """SHA-256 of the host's installed `name==version` lines, sorted: same pins, same digest."""
    lines = sorted(
        {f"{name.lower().replace('_', '-')}=={version}" for name, version in distributions}
    )
    return sha256("".join(f"{line}\n" for line in lines).encode("utf-8"))
