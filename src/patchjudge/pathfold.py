r"""Pure: paths of the head that one file system would check out as one file.

Every lane reads the head's blobs by their exact path. A clone on a file
system that folds case (Windows, macOS by default) writes two paths that fold
alike to one file, the later in the index's order over the earlier: a patch
that adds an empty `src/calc/__\u0131nit__.py` (dotless i, which NTFS upcases to
`I`) or `\u017frc/calc/__init__.py` (long s, `s` under NFKC) leaves the judge's
`src/calc/__init__.py` alone and replaces it in such a clone. Both were
accept_for_review on main 2a6a2dc (red team, session 18, redteam14).

The fold over-approximates every such file system: Unicode NFKC (macOS's
normalisation, compatibility forms such as U+017F and the Kelvin sign), case
folding, and U+0131 as `i` (NTFS's upcase table). A false alarm costs a rename;
a miss is a clone running code nobody judged.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def fold(path: str) -> str:
    """The one name every case-insensitive, normalising file system could give `path`."""
    return unicodedata.normalize("NFKC", path).casefold().replace("\u0131", "i")


def problems(head: Iterable[str], new: Iterable[str]) -> list[str]:
    """Each path the patch adds (`new`) that folds like another path of the head."""
    by_fold: dict[str, list[str]] = {}
    for path in head:
        by_fold.setdefault(fold(path), []).append(path)
    found = []
    for path in sorted(set(new)):
        others = sorted(p for p in by_fold.get(fold(path), ()) if p != path)
        if others:
            found.append(
                f"{path}: one file with {others[0]} on a case-insensitive file system"
                " (Windows, macOS): a clone there checks out one over the other; rename it"
            )
    return found
