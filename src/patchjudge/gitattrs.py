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

A `git archive` of the head (a forge's release tarball, `pip install` of an
archive URL) applies two more: `export-subst` expands `$Format:%H$` in a
string literal to the commit id, and `export-ignore` leaves a file, or a whole
directory (an attribute on the directory's own path), out. Both were
accept_for_review on main 2a6a2dc, wrong or failing to import in every
archive (red team, session 18, redteam14).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

# What a checkout applies to the bytes beyond line ends.
BYTE_CHANGING = ("ident", "filter", "working-tree-encoding")
# What `git archive` applies beyond those; export-ignore also on a directory's path.
ARCHIVE = ("export-subst", "export-ignore")
CHECKED = BYTE_CHANGING + ARCHIVE
_OFF = ("unspecified", "unset")
FILE = ".gitattributes"


def touches_attributes(paths: Iterable[str]) -> bool:
    """Whether a changed path is an attributes file (else base and head apply the same)."""
    return any(p == FILE or p.endswith("/" + FILE) for p in paths)


def directories(paths: Iterable[str]) -> list[str]:
    """Every directory that holds one of `paths` (an archive checks export-ignore on it)."""
    found: dict[str, None] = {}
    for path in paths:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            found["/".join(parts[:i])] = None
    return list(found)


def problems(
    base: Mapping[str, Mapping[str, str]],
    head: Mapping[str, Mapping[str, str]],
    directories: Collection[str] = (),
) -> list[str]:
    """Each head path whose byte-changing attribute the patch turned on or changed; on a
    directory's own path only export-ignore, the one attribute an archive reads there."""
    found = []
    for path, attrs in sorted(head.items()):
        for name in ("export-ignore",) if path in directories else CHECKED:
            value = attrs.get(name, "unspecified")
            if value in _OFF or value == base.get(path, {}).get(name, "unspecified"):
                continue
            shown = name if value == "set" else f"{name}={value}"
            what = "an archive's (git archive)" if name in ARCHIVE else "a checkout's"
            found.append(
                f"{path}: the patch's .gitattributes set {shown}: {what} bytes would"
                " differ from the blob judged (set it at the merge base, by a human)"
            )
    return found
