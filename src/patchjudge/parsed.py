"""Each distinct Python source parsed once a process (issue 20).

The lanes and the review read the same blobs' ASTs: pathfilter's defined
tests, the properties' thin check and boundary reading, review's changed
classes and mutants, the probe scan. Keyed by the content's digest (what a
blob id names), so two paths with one content share a tree. The trees are
shared: callers only read them.
"""

from __future__ import annotations

import ast
import hashlib
import warnings

# Bounded: a 10,000-file patch must not keep every tree alive.
_LIMIT = 512
_trees: dict[tuple[type, bytes], ast.Module] = {}


def key(source: bytes | str) -> tuple[type, bytes]:
    """Pure: what the cache knows a source by (bytes and str decode differently)."""
    data = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    return type(source), hashlib.sha256(data).digest()


def parse(source: bytes | str) -> ast.Module:
    """ast.parse(source), once per distinct source; raises as ast.parse does (never cached).

    Its SyntaxWarnings are the patch's own, not the gate's output: silenced.
    """
    k = key(source)
    found = _trees.get(k)
    if found is not None:
        return found
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    if len(_trees) >= _LIMIT:
        del _trees[next(iter(_trees))]  # the oldest: dicts keep insertion order
    _trees[k] = tree
    return tree


def clear() -> None:
    _trees.clear()
