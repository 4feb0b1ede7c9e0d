"""The project's build in the code's venv ships the tree's modules as the tree has them.

With `--python` (nox, tox, a CI's own `pip install .`) the code's venv holds
the head's build of the project, and every lane imports the tree first (the
ledger's `pythonpath` is prepended): a module the tree has is judged from the
tree, never from the build. Users import the build. A patch whose backend, or
whose pyproject's packaging table, ships another `calc/__init__.py` than the
tree's (or a `calc/_fast.py` the tree's regular package lacks, which the
tree's package shadows in every run) was judged on code users never get
(red team, session 16, redteam11). Pathfilter now fails such a build.

The project's build is every distribution installed from a local path (its
direct_url.json names a `file:` URL), as `worker._own_builds` reads it; the
files are those its RECORD names, read from disk as installed.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

# A venv built from another commit (or a dirty checkout) fails the same way: fail closed.
_FIX = "build the code's venv from this head as committed, its backend packing the tree"


def blob_sha(data: bytes) -> str:
    """git's object id of a blob of these bytes (what `ls-tree` lists)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def problems(
    installed: Mapping[str, bytes],
    tree: Mapping[str, str],
    roots: Sequence[str],
    generated: Collection[str],
    code_in: Callable[[bytes], str | None],
) -> list[str]:
    """Pure: how the build's files (site-relative path -> bytes) differ from the tree.

    `tree` maps each file of the head's tree to its blob id, a symlink to ""
    (the build packs what it points at: not compared); `roots` is
    the ledger's pythonpath, first first; `generated` the tree paths the
    build writes (the version file), whose installed copy must be data
    (`code_in`: why not, or None).
    """
    found: list[str] = []
    for rel, data in sorted(installed.items()):
        top = rel.split("/", 1)[0]
        for root in roots:
            prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
            path = prefix + rel
            if path in generated:
                why = code_in(data)
                if why is not None:
                    found.append(f"the build installs {rel} holding code, not data ({why})")
                break
            if path in tree:
                if tree[path] and tree[path] != blob_sha(data):
                    found.append(
                        f"the build installs {rel} other than the tree's {path}: users would"
                        f" import code no lane ran ({_FIX})"
                    )
                break
            if "/" in rel and f"{prefix}{top}/__init__.py" in tree:
                if rel.endswith(".py"):
                    found.append(
                        f"the build installs {rel}, which the tree's package {prefix}{top}"
                        f" lacks: the tree shadows it in every run, users import it ({_FIX})"
                    )
                break
    return found


def installed_files(site: Sequence[Path]) -> dict[str, bytes]:
    """What the project's own build installed into these site directories, as on disk."""
    files: dict[str, bytes] = {}
    for entry in dict.fromkeys(site):
        for rel in _own_records(entry):
            path = entry / rel
            if path.is_symlink() or not path.is_file():
                continue
            try:
                files.setdefault(rel, path.read_bytes())
            except OSError:
                continue
    return files


def _own_records(entry: Path) -> Iterator[str]:
    try:
        infos = sorted(p for p in entry.iterdir() if p.name.endswith(".dist-info"))
    except OSError:
        return
    for info in infos:
        try:
            url = json.loads((info / "direct_url.json").read_text(encoding="utf-8"))["url"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not (isinstance(url, str) and url.startswith("file:")):
            continue
        try:
            with (info / "RECORD").open(encoding="utf-8", newline="") as f:
                rows = [r[0] for r in csv.reader(f) if r]
        except (OSError, csv.Error, UnicodeError):
            continue
        for rel in rows:
            parts = rel.split("/")
            # Outside site-packages (scripts, `../../bin`), or the distribution's metadata.
            if ".." in parts or rel.startswith("/") or parts[0].endswith(".dist-info"):
                continue
            if "__pycache__" in parts:
                continue
            yield rel
