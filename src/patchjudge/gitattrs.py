"""Pure: attributes a patch sets that make a checkout's bytes differ from its blobs.

Every lane reads the head's blobs from the object store (no checkout, no
filters). A user's clone, and a wheel built from it, gets the working tree:
`ident` expands `$Id$` in a string literal to `$Id: <blob id> $`, a `filter`
runs a command the user's config names, `working-tree-encoding` re-encodes
the source. A patch that adds `src/calc/.gitattributes` saying `*.py ident`
(the path mapped like the code beside it) and `len("$Id$") > 4` in `total`
was accept_for_review on main 40424b9, and wrong in every clone (red team,
session 16, redteam11). Line ends (`text`, `eol`) change no Python source's
meaning and stay allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# What a checkout applies to the bytes beyond line ends.
BYTE_CHANGING = ("ident", "filter", "working-tree-encoding")
_OFF = ("unspecified", "unset")
FILE = ".gitattributes"


def touches_attributes(paths: Iterable[str]) -> bool:
    """Whether a changed path is an attributes file (else base and head apply the same)."""
    return any(p == FILE or p.endswith("/" + FILE) for p in paths)


def problems(
    base: Mapping[str, Mapping[str, str]], head: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """Each head path whose byte-changing attribute the patch turned on or changed."""
    found = []
    for path, attrs in sorted(head.items()):
        for name in BYTE_CHANGING:
            value = attrs.get(name, "unspecified")
            if value in _OFF or value == base.get(path, {}).get(name, "unspecified"):
                continue
            shown = name if value == "set" else f"{name}={value}"
            found.append(
                f"{path}: the patch's .gitattributes set {shown}: a checkout's bytes would"
                " differ from the blob judged (set it at the merge base, by a human)"
            )
    return found
