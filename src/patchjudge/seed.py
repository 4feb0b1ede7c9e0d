"""Pure: the properties' seed for one run, from a key the patch cannot know (issue 18).

A pinned seed in eval/gate.toml is public: one recorded run tells a patch
every input hypothesis draws, and a patch exact on those inputs only passes.
With a key kept outside the repository (a CI secret) the seed is
HMAC-SHA256(key, message) over the head and the ledger: the same for every
rerun of one commit under one ledger, unknowable to a patch that never sees
the key, reproducible by anyone who holds it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from patchjudge.config import Ledger

KEY_ENV = "PATCHJUDGE_SEED_KEY"
# The message is versioned: a later change of what goes in cannot collide with this one.
_MESSAGE = "patchjudge-seed-v1\0{head}\0{ledger_sha256}"


@dataclass(frozen=True)
class Seed:
    value: int
    source: str  # "key": derived from PATCHJUDGE_SEED_KEY; "pinned": [properties] seed


def derive(key: bytes, head: str, ledger_sha256: str) -> int:
    """The first 8 bytes of HMAC-SHA256(key, "patchjudge-seed-v1\\0<head>\\0<ledger sha256>")."""
    message = _MESSAGE.format(head=head, ledger_sha256=ledger_sha256).encode("utf-8")
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")


# PYTHONHASHSEED's range is 0..2**32-1, and 0 turns hash randomisation off: never drawn.
_HASH_SEEDS = 2**32 - 1
_HASH_MESSAGE = b"patchjudge-hash-seed-v1\0%d"


def hash_seed(run_seed: int) -> int:
    """The worker's PYTHONHASHSEED under the key: 1..2**32-1, from the run's resolved seed.

    Under seed 0, `hash("a")` is a known constant a patch can test for. This
    one is fixed for the run (a rerun, the differential run and the review's
    mutants hash alike) and unknowable where the run's seed is (the key's).
    """
    digest = hashlib.sha256(_HASH_MESSAGE % run_seed).digest()
    return int.from_bytes(digest[:8], "big") % _HASH_SEEDS + 1


_COMMIT_HASH_MESSAGE = "patchjudge-hash-seed-v2\0{seed}\0{head}\0{ledger_sha256}"


def commit_hash_seed(run_seed: int, head: str, ledger_sha256: str) -> int:
    """The worker's PYTHONHASHSEED without the key: 1..2**32-1, from the seed, head and ledger.

    The same for every run of one commit under one ledger (a rerun, each nox
    lane's process, `replay run` hash alike, so the verdict stays one
    commit's), and unknowable to the patch's code: the head's sha covers the
    patch itself, so no file of it can hold the hash seed it will run under,
    and the box's trees have no `.git` to compute it from (red team, session 11).
    """
    message = _COMMIT_HASH_MESSAGE.format(seed=run_seed, head=head, ledger_sha256=ledger_sha256)
    digest = hashlib.sha256(message.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % _HASH_SEEDS + 1


def resolve(pinned: int, environ: Mapping[str, str], head: str, ledger_sha256: str) -> Seed:
    """The key's seed when the environment holds a non-empty key, else the pinned one."""
    key = environ.get(KEY_ENV, "")
    if not key:
        return Seed(pinned, "pinned")
    return Seed(derive(key.encode("utf-8", "surrogateescape"), head, ledger_sha256), "key")


def applied(ledger: Ledger, environ: Mapping[str, str], head: str) -> Ledger:
    """The ledger as this run uses it: `[properties] seed` is the run's resolved seed.

    Resolved once, when the run opens, so that every property run of the
    gate (the properties lane, the freeze lane's, the review's mutants,
    `replay run`) takes the same seed and none can be left on the pinned one.
    The worker's hash seed too: the key's seed's (`hash_seed`), else the
    commit's (`commit_hash_seed`). One derived from the pinned seed alone is
    public like it, and a patch that knows `hash("a")` under it (and under the
    visible suite's 0) knows when it is judged: right there, wrong in every
    run of the user's (red team, session 11).
    """
    chosen = resolve(ledger.properties.seed, environ, head, ledger.sha256)
    if chosen.source == "key":
        hashed = hash_seed(chosen.value)
    else:
        hashed = commit_hash_seed(chosen.value, head, ledger.sha256)
    props = dataclasses.replace(
        ledger.properties, seed=chosen.value, seed_source=chosen.source, hash_seed=hashed
    )
    return dataclasses.replace(ledger, properties=props)
