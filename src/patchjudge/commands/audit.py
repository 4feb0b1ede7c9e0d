"""`patchjudge audit-judge --base REF`: a person's change to the registry and lock, checked."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from patchjudge import git, hashing
from patchjudge.config import LEDGER, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.freezefile import FreezeRow, parse_registry
from patchjudge.paths import under
from patchjudge.workspace import resolve


@dataclass(frozen=True)
class Findings:
    flags: tuple[str, ...]  # each one fails the audit
    reviews: tuple[str, ...]  # legitimate, and a reviewer must see them


def compare_judge(
    base_rows: Sequence[FreezeRow],
    head_rows: Sequence[FreezeRow],
    base_lock: Mapping[str, str],
    head_lock: Mapping[str, str],
    *,
    changed_fixtures: Collection[str],
    max_extensions: int,
) -> Findings:
    """Pure: what a change to the judge did to the freeze registry and the fixture lock."""
    flags: list[str] = []
    reviews: list[str] = []
    before = {r.nodeid: r for r in base_rows}
    after = {r.nodeid: r for r in head_rows}
    extended = []
    for nodeid, old in before.items():
        new = after.get(nodeid)
        if new is None:
            reviews.append(
                f"graduation: {nodeid} unfrozen (evidence was {old.fail_count}/{old.runs}); "
                "confirm it is fixed, not hidden"
            )
            continue
        if new.expires <= old.expires:
            continue
        extended.append(nodeid)
        same = (new.fail_count, new.runs) == (old.fail_count, old.runs)
        move = f"{old.expires.isoformat()} -> {new.expires.isoformat()}"
        if same:
            flags.append(
                f"expiry moved later without new evidence: {nodeid} ({move}; "
                f"fail_count/runs still {old.fail_count}/{old.runs})"
            )
        else:
            reviews.append(
                f"extended with new evidence: {nodeid} ({move}; "
                f"{old.fail_count}/{old.runs} -> {new.fail_count}/{new.runs})"
            )
    if len(extended) > max_extensions:
        flags.append(
            f"bulk extension is an incident: {len(extended)} rows extended in one change "
            f"(max_extensions {max_extensions})"
        )
    reviews += [f"newly frozen: {n}" for n in after if n not in before]
    for path in sorted(set(base_lock) | set(head_lock)):
        old_digest, new_digest = base_lock.get(path), head_lock.get(path)
        if old_digest == new_digest:
            continue
        what = "added" if old_digest is None else "removed" if new_digest is None else "changed"
        if path not in changed_fixtures:
            flags.append(f"lock entry {what} with no matching fixture change: {path}")
        else:
            reviews.append(f"lock entry {what} with its fixture: {path}")
    return Findings(tuple(flags), tuple(reviews))


def _rows(repo: Path, rev: str, path: str) -> tuple[FreezeRow, ...]:
    data = git.show(repo, rev, path)
    return parse_registry(data, f"{path} (at {rev[:12]})") if data is not None else ()


def _lock(repo: Path, rev: str, path: str) -> Mapping[str, str]:
    data = git.show(repo, rev, path)
    return hashing.parse_lock(data, f"{path} (at {rev[:12]})").files if data is not None else {}


def audit_judge(repo: Path, base: str, head: str, out: TextIO) -> int:
    top = git.toplevel(repo)
    head_sha, mb = resolve(top, base, head)
    data = git.show(top, mb, LEDGER)
    if data is None:
        raise PatchjudgeError("not found at the merge base", file=LEDGER)
    # The settings of the judge being changed, not of the change.
    ledger = parse_ledger(data, f"{LEDGER} (at merge base {mb[:12]})")
    registry, lock = ledger.freeze.registry, ledger.fixtures.lock
    changes = git.diff(top, mb, head_sha)
    changed = {p for c in changes for p in c.sides() if under(p, ledger.fixtures.roots)}
    findings = compare_judge(
        _rows(top, mb, registry),
        _rows(top, head_sha, registry),
        _lock(top, mb, lock),
        _lock(top, head_sha, lock),
        changed_fixtures=changed,
        max_extensions=ledger.freeze.max_extensions,
    )
    for line in findings.flags:
        print(f"flag: {line}", file=out)
    for line in findings.reviews:
        print(f"review: {line}", file=out)
    verdict = "fail" if findings.flags else "pass"
    print(
        f"patchjudge audit-judge: {verdict} ({len(findings.flags)} flag(s), "
        f"{len(findings.reviews)} for review) {mb[:12]}..{head_sha[:12]}",
        file=out,
    )
    return 1 if findings.flags else 0
