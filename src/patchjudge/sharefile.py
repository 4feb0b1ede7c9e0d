"""What one nox lane hands a later one (issue 19): `workspace.Shared` entries in a file.

`patchjudge gate` shares in memory what one lane computed and a later lane
would compute alike (the head's suite pass, the required properties' run).
Under nox each lane is a process of its own: the lane writes what it
computed to `--share-out FILE` and prints the file's sha256, which nox
keeps in its own memory, out of reach of the tested code, and hands to the
later lanes as `--share-in FILE=SHA256`. A file whose bytes are not the
ones the lane wrote is refused, and the later lane computes its own. Only
boxed runs write or read one: unboxed, each lane's guard must watch its own
processes run (see lanes/pathfilter.collect_head).

The bytes are a pickle the judge wrote itself; read back only after their
digest matched, by an unpickler that builds nothing but the judge's own
records and plain containers.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import tempfile
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path

from patchjudge.report import RunKey

# Beside the judge's own modules: what its records hold.
_PLAIN = {
    "builtins": {"frozenset", "set", "tuple", "list", "dict", "bytes", "bytearray", "complex"},
    "pathlib": {"Path", "PosixPath", "PurePath", "PurePosixPath"},
    "collections": {"OrderedDict", "defaultdict"},
    "datetime": {"date", "datetime", "timedelta", "timezone"},
}


class _JudgeRecords(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        if module.startswith("patchjudge.") or name in _PLAIN.get(module, ()):
            found = super().find_class(module, name)
            # Classes only: a function of the judge's would be called with the file's arguments.
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not one of the judge's records")


def dumps(run: RunKey, entries: Mapping[Hashable, object]) -> bytes | None:
    """The entries of `run` as bytes; None when one cannot be written (then nothing is shared)."""
    items = sorted(entries.items(), key=repr)
    try:
        return pickle.dumps((run, items), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


def write(path: Path, run: RunKey, entries: Mapping[Hashable, object]) -> str | None:
    """Write `run`'s `entries` to `path`; their sha256, or None when there was nothing to write."""
    data = dumps(run, entries) if entries else None
    if data is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    Path(tmp).replace(path)
    return hashlib.sha256(data).hexdigest()


def read(
    given: Sequence[tuple[Path, str]], run: RunKey
) -> tuple[dict[Hashable, object], list[str]]:
    """The entries of every file of `run` whose bytes have the digest given; what was refused.

    A file of another run (merge base, head, ledger or run id) is refused too:
    a key holds only what the run itself does not fix (workspace.Shared).
    """
    found: dict[Hashable, object] = {}
    refused: list[str] = []
    for path, digest in given:
        try:
            data = path.read_bytes()
        except OSError as exc:
            refused.append(f"{path}: {exc.strerror}")
            continue
        if hashlib.sha256(data).hexdigest() != digest:
            refused.append(f"{path}: not the bytes its lane wrote (sha256 differs)")
            continue
        try:
            theirs, items = _JudgeRecords(io.BytesIO(data)).load()
        except (pickle.UnpicklingError, EOFError, TypeError, ValueError) as exc:
            refused.append(f"{path}: unreadable ({exc})")
            continue
        if theirs != run:
            refused.append(f"{path}: written for another run ({theirs})")
            continue
        found.update(dict(items))
    return found, refused
