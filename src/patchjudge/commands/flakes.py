"""`patchjudge flakes`: evidence of unstable visible tests; `flakes merge` sums shards."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from patchjudge import cache, codeenv, git, seed, store
from patchjudge.boundary import sandbox
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import flakes as lane
from patchjudge.repeat import Tally
from patchjudge.report import dumps
from patchjudge.workspace import DEFAULT_REPORTS


def _print_candidates(
    doc: Mapping[str, Any], nodes: Mapping[str, Tally], repo: Path, today: dt.date, out: TextIO
) -> None:
    names = doc["candidates"]
    if not names:
        print("# no freeze candidates", file=out)
        return
    ledger = lane.ledger_at(repo, doc["head"])
    print(
        f"# {len(names)} freeze candidate(s): review, fill in owner and reason and "
        f"required_properties, and paste into {ledger.freeze.registry}",
        file=out,
    )
    print(lane.freeze_rows(nodes, names, ledger, today, doc["head"]), file=out, end="")


def flakes(
    *,
    repo: Path,
    head: str,
    reports: Path | None,
    today: dt.date,
    count: int | None,
    shard: str,
    workers: str | None,
    out: TextIO,
    err: TextIO = sys.stderr,
    environ: Mapping[str, str] = os.environ,
    isolation: str | None = None,
    python: str | None = None,
) -> int:
    top = git.toplevel(repo)
    sha = git.rev_parse(top, head, "--head")
    # The key's seed, as every property run of the gate takes it (issue 18): a visible
    # suite's hypothesis tests draw what a patch cannot know in advance either.
    ledger = seed.applied(lane.ledger_at(top, sha), environ, sha)
    chosen = count if count is not None else ledger.flakes.count
    if chosen < 1:
        raise PatchjudgeError(f"{chosen} is not a count >= 1", key="--count")
    setting: str | int = workers if workers is not None else ledger.flakes.workers
    if isinstance(setting, str) and setting != "auto":
        if not setting.isdigit():
            raise PatchjudgeError(f"{setting!r} is not 'auto' or a number", key="--workers")
        setting = int(setting)
    boundary = sandbox.resolve(sandbox.from_head(ledger.gate.isolation), isolation)
    code = codeenv.resolve(python, environ)
    evidence = lane.collect_evidence(
        top,
        sha,
        ledger,
        count=chosen,
        shard=lane.parse_shard(shard),
        workers=setting,
        environ=environ,
        progress=lambda line: print(f"patchjudge flakes: {line}", file=err, flush=True),
        isolation=boundary,
        cache_dir=cache.placement(environ, top, boundary),
        code=code,
    )
    if evidence.problems:
        for problem in evidence.problems:
            print(f"patchjudge flakes: {problem}", file=err)
        print("patchjudge flakes: no evidence written: the run cannot be believed", file=err)
        return 1
    path = (reports or top / DEFAULT_REPORTS) / lane.FILE
    store.write_text(path, dumps(evidence.doc))
    print(
        f"patchjudge flakes: {len(evidence.nodes)} node ids x{chosen} in "
        f"{evidence.doc['duration_s']:.1f} s: {path}",
        file=err,
    )
    _print_candidates(evidence.doc, evidence.nodes, top, today, out)
    return 0


def merge(
    *,
    repo: Path,
    files: Sequence[Path],
    reports: Path | None,
    today: dt.date,
    out: TextIO,
    err: TextIO = sys.stderr,
) -> int:
    docs = []
    for path in files:
        try:
            docs.append((str(path), json.loads(path.read_bytes())))
        except (OSError, ValueError) as exc:
            raise PatchjudgeError(f"cannot read: {exc}", file=str(path)) from None
    for name, doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("head"), str):
            raise PatchjudgeError("not a flakes.json", file=name, key="head")
    top = git.toplevel(repo)
    ledger = lane.ledger_at(top, docs[0][1]["head"]) if docs else None
    min_fails = ledger.flakes.candidate_min_fails if ledger else 1
    merged = lane.merge(docs, min_fails)
    path = (reports or top / DEFAULT_REPORTS) / lane.FILE
    store.write_text(path, dumps(merged))
    print(
        f"patchjudge flakes merge: {len(docs)} shard(s), shard {merged['shard']}: {path}", file=err
    )
    nodes = lane.nodes_from_json(merged, str(path))
    _print_candidates(merged, nodes, top, today, out)
    return 0
