"""`patchjudge oracle`: run each property file against mutants of the code it exercises."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from patchjudge import codeenv, git, oracle, seed, store, testrun
from patchjudge.boundary import sandbox
from patchjudge.config import LEDGER, Ledger, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes.properties import is_test_file
from patchjudge.paths import is_bytecode, under
from patchjudge.report import dumps


@dataclass(frozen=True)
class OracleOptions:
    repo: Path = Path()
    rev: str = "HEAD"
    reports: Path | None = None
    max_examples: int | None = None  # default: the ledger's
    limit: int | None = None  # at most this many mutants per property file
    isolation: str | None = None  # --isolation: may tighten [gate] isolation, never loosen it
    python: str | None = None  # --python: the venv the code under test runs in (issue 19)


def _failed(result: testrun.TestRun) -> tuple[set[str], bool]:
    """Node ids that did not pass; True when the run as a whole is a kill."""
    if result.timed_out or not result.finished or result.collect_errors:
        return set(), True
    bad = {o.nodeid for o in result.outcomes if o.outcome == "failed"}
    passed = {o.nodeid for o in result.outcomes if o.when == "call" and o.outcome == "passed"}
    return bad | (set(result.collected) - passed), False


def _run(
    tree: Path,
    prop: str,
    ledger: Ledger,
    max_examples: int,
    environ: Mapping[str, str],
    *,
    box: sandbox.Boxer,
    python: str | None,
) -> testrun.TestRun:
    scratch = Path(tempfile.mkdtemp(prefix="patchjudge-oracle-"))
    try:
        plan = testrun.Plan(
            tree=tree,
            args=(prop,),
            conftest_roots=ledger.properties.paths,
            pythonpath=ledger.gate.pythonpath,
            seed=ledger.properties.seed,
            max_examples=max_examples,
            timeout_s=ledger.properties.timeout_s,
            python=python,
        )
        return testrun.run(plan, scratch=scratch, environ=environ, box=box)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def oracle_command(options: OracleOptions, out: TextIO, environ: Mapping[str, str]) -> int:
    repo = git.toplevel(options.repo)
    rev = git.rev_parse(repo, options.rev, "--base")
    source = f"{LEDGER} (at {rev[:12]})"
    data = git.show(repo, rev, LEDGER)
    if data is None:
        raise PatchjudgeError("not found", file=source, fix="adopt patchjudge first")
    ledger = seed.applied(parse_ledger(data, source), environ, rev)
    entries = [e for e in git.ls_tree(repo, rev) if e.kind == "blob"]
    files = [e.path for e in entries]
    props = [
        p for p in files if under(p, ledger.properties.paths) and is_test_file(p)
    ]  # fmt: skip
    if not props:
        raise PatchjudgeError(
            "no property test file", file=source, key="properties.paths", fix="add one"
        )
    examples = options.max_examples or ledger.properties.max_examples
    boundary = sandbox.resolve(sandbox.from_head(ledger.gate.isolation), options.isolation)
    venv = codeenv.resolve(options.python, environ)
    # The property files run in process with the code's interpreter, its venv read-only in a box.
    box = codeenv.boxer(boundary, venv)
    pythonpath = ledger.gate.pythonpath
    results: list[tuple[oracle.Mutant, list[str], list[str]]] = []
    survivors: list[str] = []
    unaudited: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="patchjudge-oracle-tree-"))
    try:
        tree = scratch / "tree"
        git.materialize(
            repo, rev, tree, [e for e in git.ls_tree(repo, rev) if not is_bytecode(e.path)]
        )
        for prop in props:
            prop_source = git.show(repo, rev, prop) or b""
            found: list[oracle.Mutant] = []
            for target in oracle.targets(
                prop_source, lambda m: oracle.module_file(m, pythonpath, files)
            ):
                code = git.show(repo, rev, target.path) or b""
                found += oracle.mutants(target.path, code, target.names)
            if options.limit is not None and len(found) > options.limit > 0:
                # Evenly spaced, so a quick run still reaches every target module.
                step = len(found) / options.limit
                found = [found[int(i * step)] for i in range(options.limit)]
            baseline = _run(tree, prop, ledger, examples, environ, box=box, python=venv.python)
            failing, broken = _failed(baseline)
            if broken or failing or not baseline.collected:
                # A collection error's own exception says why (a missing import: --python?).
                said = [testrun.collection_error(n, t) for n, t in baseline.collect_errors.items()]
                raise PatchjudgeError(
                    "fails on the unmutated code, so it cannot be audited",
                    file=prop,
                    fix=said[0] if said else " / ".join(baseline.output.strip().splitlines()[-2:]),
                )
            nodeids = sorted(baseline.collected)
            if not found:
                unaudited.append(prop)
            print(f"{prop}: {len(found)} mutant(s) of {len(nodeids)} property test(s)", file=out)
            for mutant in found:
                path = tree / mutant.path
                original = path.read_bytes()
                path.write_text(mutant.source, encoding="utf-8")
                try:
                    failing, whole = _failed(
                        _run(tree, prop, ledger, examples, environ, box=box, python=venv.python)
                    )
                finally:
                    path.write_bytes(original)
                dead = nodeids if whole else sorted(failing & set(nodeids))
                results.append((mutant, nodeids, dead))
                if not dead:
                    survivors.append(mutant.id)
                print(f"  {'killed ' if dead else 'SURVIVED'} {mutant.id}", file=out, flush=True)
            if not found:
                results += [(oracle.Mutant(prop, "-", "-", 0, ""), nodeids, [])]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    audit = oracle.audit((m, ran, dead) for m, ran, dead in results if m.operator != "-")
    kills = {n: 0 for _, ran, _ in results for n in ran} | audit.kills
    weak = sorted(n for n, k in kills.items() if k == 0)
    doc: dict[str, Any] = {
        "schema": 1,
        "rev": rev,
        "seed": ledger.properties.seed,
        "max_examples": examples,
        "operators": list(oracle.OPERATORS),
        "properties": {
            n: {"killed": kills[n], "mutants": audit.offered.get(n, 0)} for n in sorted(kills)
        },
        "survivors": survivors,
        "unaudited_files": unaudited,
        "weak": weak,
    }
    reports = options.reports or repo / ".patchjudge"
    store.write_text(reports / "oracle.json", dumps(doc))
    for nodeid in sorted(kills):
        offered = audit.offered.get(nodeid, 0)
        print(f"{nodeid}: killed {kills[nodeid]}/{offered}", file=out)
    for nodeid in weak:
        print(f"patchjudge oracle: kills no mutant: {nodeid}", file=out)
    print(f"report: {reports / 'oracle.json'}", file=out)
    return 1 if weak else 0
