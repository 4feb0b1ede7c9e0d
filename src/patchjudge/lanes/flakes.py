"""flakes: which visible tests are unstable? Evidence for the freeze registry; never gates."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patchjudge import cache, codeenv, git, repeat, testrun, treepyc
from patchjudge.boundary import sandbox
from patchjudge.config import LEDGER, Ledger, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.paths import is_bytecode
from patchjudge.repeat import Tally

SCHEMA = 1
FILE = "flakes.json"


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def parse_shard(text: str) -> Shard:
    index, sep, total = text.partition("/")
    if sep and index.isdigit() and total.isdigit() and 1 <= int(index) <= int(total):
        return Shard(int(index), int(total))
    raise PatchjudgeError(f"{text!r} is not a shard like 1/4", key="--shard")


def shard_of(nodeids: Iterable[str], shard: Shard) -> list[str]:
    """Pure: the node ids shard I of N runs, by a hash of each id.

    A hash, not a position, so adding a test moves no other test between
    shards; every id lands in exactly one shard.
    """
    return [
        n
        for n in nodeids
        if int(hashlib.sha256(n.encode("utf-8", "surrogateescape")).hexdigest(), 16) % shard.total
        == shard.index - 1
    ]


def candidates(nodes: Mapping[str, Tally], min_fails: int) -> list[str]:
    """Pure: flaky enough to freeze: failed at least `min_fails` times but not every time."""
    return sorted(n for n, t in nodes.items() if min_fails <= t.fail < t.runs)


def _toml_str(text: str) -> str:
    # A JSON string is a TOML basic string for everything a node id holds.
    return json.dumps(text, ensure_ascii=False)


def freeze_rows(
    nodes: Mapping[str, Tally], names: Sequence[str], ledger: Ledger, today: dt.date, head: str
) -> str:
    """Pure: ready-to-paste registry rows for `names`; a human fills in the owner."""
    expires = today + dt.timedelta(days=ledger.freeze.max_age_days)
    out = []
    for nodeid in names:
        t = nodes[nodeid]
        out.append(
            "[[freeze]]\n"
            f"nodeid = {_toml_str(nodeid)}\n"
            'owner = ""  # fill in: who will fix or graduate it\n'
            f"reason = {_toml_str(f'failed {t.fail} of {t.runs} runs at {head[:12]}')}"
            "  # say why\n"
            f"created = {today.isoformat()}\n"
            f"expires = {expires.isoformat()}\n"
            f"fail_count = {t.fail}\n"
            f"runs = {t.runs}\n"
            "required_properties = []  # the property tests that must stay on\n"
        )
    return "\n".join(out)


def pins_sha256(python_paths: Sequence[str] | None = None) -> str:
    """A digest of the installed distributions: name==version, sorted."""
    dists = importlib.metadata.distributions(path=list(python_paths or sys.path))
    pins = sorted({f"{d.metadata['Name']}=={d.version}".lower() for d in dists})
    return hashlib.sha256("\n".join(pins).encode()).hexdigest()


def host(python_paths: Sequence[str] | None = None) -> dict[str, Any]:
    """This machine; the pins are those of the venv the suite ran in (--python's, if given)."""
    return {
        "python": platform.python_version(),
        "platform": sysconfig.get_platform(),
        "cpus": os.cpu_count() or 1,
        "pins_sha256": pins_sha256(python_paths),
    }


def evidence_json(
    *,
    head: str,
    count: int,
    shard: Shard,
    seed: int,
    host_info: Mapping[str, Any],
    nodes: Mapping[str, Tally],
    min_fails: int,
    duration_s: float,
    seed_source: str = "pinned",
) -> dict[str, Any]:
    """Pure: flakes.json (SPEC: Reports), plus the duration."""
    return {
        "schema": SCHEMA,
        "head": head,
        "count": count,
        "shard": str(shard),
        "seed": seed,
        "seed_source": seed_source,  # "key" (PATCHJUDGE_SEED_KEY) or "pinned", as properties'
        "host": dict(host_info),
        "nodes": {n: {"fail": t.fail, "runs": t.runs} for n, t in sorted(nodes.items())},
        "candidates": candidates(nodes, min_fails),
        "duration_s": round(duration_s, 3),
    }


def nodes_from_json(doc: Mapping[str, Any], source: str) -> dict[str, Tally]:
    raw = doc.get("nodes")
    if not isinstance(raw, dict):
        raise PatchjudgeError("must be an object", file=source, key="nodes")
    nodes = {}
    for nodeid, t in raw.items():
        ok = isinstance(t, dict) and all(
            isinstance(t.get(k), int) and not isinstance(t.get(k), bool) and t[k] >= 0
            for k in ("fail", "runs")
        )
        if not ok or t["fail"] > t["runs"]:
            raise PatchjudgeError(
                "must be {fail: int, runs: int} with fail <= runs",
                file=source,
                key=f"nodes[{nodeid!r}]",
            )
        nodes[nodeid] = Tally(t["fail"], t["runs"])
    return nodes


# What every shard of one evidence run must agree on.
SETTINGS = ("head", "count", "seed", "seed_source")
HOST_SETTINGS = ("python", "pins_sha256")


def merge(docs: Sequence[tuple[str, Mapping[str, Any]]], min_fails: int) -> dict[str, Any]:
    """Pure: shards of one run summed; different heads, settings or overlaps refuse."""
    if not docs:
        raise PatchjudgeError("no shard files given", key="FILE")
    first_name, first = docs[0]
    shards: list[Shard] = []
    nodes: dict[str, Tally] = {}
    duration = 0.0
    for name, doc in docs:
        if doc.get("schema") != SCHEMA:
            raise PatchjudgeError(f"schema {doc.get('schema')!r}, expected 1", file=name)
        for key in SETTINGS:
            if doc.get(key) != first.get(key):
                raise PatchjudgeError(
                    f"{doc.get(key)!r} differs from {first.get(key)!r} in {first_name}",
                    file=name,
                    key=key,
                    fix="merge only shards of one run: same head and settings",
                )
        for key in HOST_SETTINGS:
            mine, theirs = doc.get("host", {}).get(key), first.get("host", {}).get(key)
            if mine != theirs:
                raise PatchjudgeError(
                    f"{mine!r} differs from {theirs!r} in {first_name}",
                    file=name,
                    key=f"host.{key}",
                    fix="run every shard with the same Python and pins",
                )
        shard = parse_shard(str(doc.get("shard", "")))
        if shards and shard.total != shards[0].total:
            raise PatchjudgeError(
                f"shard {shard} is not of {shards[0].total}", file=name, key="shard"
            )
        if shard in shards:
            raise PatchjudgeError(f"shard {shard} given twice", file=name, key="shard")
        shards.append(shard)
        found = nodes_from_json(doc, name)
        overlap = sorted(set(found) & set(nodes))
        if overlap:
            raise PatchjudgeError(f"node id {overlap[0]} is in two shards", file=name, key="nodes")
        nodes = repeat.add(nodes, found)
        duration += float(doc.get("duration_s", 0.0))
    total = shards[0].total
    indices = sorted(s.index for s in shards)
    merged_shard = Shard(1, 1) if indices == list(range(1, total + 1)) else None
    out = evidence_json(
        head=first["head"],
        count=first["count"],
        shard=merged_shard or Shard(indices[0], total),
        seed=first["seed"],
        seed_source=str(first.get("seed_source", "pinned")),
        host_info=first.get("host", {}),
        nodes=nodes,
        min_fails=min_fails,
        duration_s=duration,
    )
    if merged_shard is None:
        out["shard"] = "+".join(map(str, indices)) + f"/{total}"
    return out


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Evidence:
    doc: dict[str, Any]
    nodes: dict[str, Tally]
    problems: tuple[str, ...]
    workers: int


def ledger_at(repo: Path, rev: str) -> Ledger:
    data = git.show(repo, rev, LEDGER)
    if data is None:
        raise PatchjudgeError(f"not found at {rev[:12]}", file=LEDGER, fix="patchjudge init")
    return parse_ledger(data, f"{LEDGER} (at {rev[:12]})")


def pace_key(repo: Path, ledger: Ledger, executable: str = sys.executable) -> dict[str, str]:
    """What a remembered pace belongs to: this checkout's suite under these settings, here."""
    suite = ledger.suite
    settings = json.dumps(
        [suite.paths, suite.plugins, ledger.gate.pythonpath, suite.timeout_s], default=str
    )
    return {
        "repo": str(repo.resolve()),
        "suite": hashlib.sha256(settings.encode()).hexdigest(),
        "python": sys.version,
        "executable": executable,
    }


def remembered_pace(data: bytes | None) -> float | None:
    """Pure: seconds a test from a cache entry, when it is one finite non-negative number.

    The entry is `{"pace": seconds, "tests": count}`, or the bare number an
    earlier version wrote.
    """
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if isinstance(value, dict):
        value = value.get("pace")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < 3600 else None


def remembered_tests(data: bytes | None) -> int | None:
    """Pure: how many node ids the suite had when its pace was remembered (None: not said)."""
    try:
        value = json.loads(data) if data is not None else None
    except ValueError:
        return None
    tests = value.get("tests") if isinstance(value, dict) else None
    if isinstance(tests, bool) or not isinstance(tests, int) or tests < 1:
        return None
    return tests if remembered_pace(data) is not None else None


def one_session(pace: float | None, tests: int | None, shard: Shard) -> bool:
    """Pure: collect and repeat in one pytest? The whole suite, its size and pace known.

    However long it runs: progress comes from the channel as it fills
    (repeat.Watch). Batches, each a pytest with its own xdist workers, made
    boltons' run 1.6x a bare one's CPU, more the more loaded the machine
    (the pace it measured grew, and with it the number of batches).
    """
    return pace is not None and tests is not None and shard.total == 1


def measured_pace(runs: Path, nodes: Mapping[str, Tally]) -> float | None:
    """Seconds a test run, JUnit's durations over every pass under `runs` (None: nothing ran)."""
    total_runs = sum(t.runs for t in nodes.values())
    if not total_runs:
        return None
    seconds = sum(repeat.junit_seconds(xml) for xml in sorted(runs.glob("pass*/junit.xml")))
    return seconds / total_runs


def collect_evidence(
    repo: Path,
    head: str,
    ledger: Ledger,
    *,
    count: int,
    shard: Shard,
    workers: str | int,
    environ: Mapping[str, str] = os.environ,
    progress: Progress | None = None,
    isolation: sandbox.Isolation,  # required: no default that falls open to "process"
    cache_dir: Path | None = None,
    code: codeenv.CodeEnv | None = None,
) -> Evidence:
    """Run the visible suite of `head` `count` times in a scratch copy and count."""
    say = progress or (lambda _: None)
    code = code or codeenv.CodeEnv()
    started = time.monotonic()
    suite = ledger.suite
    scratch = Path(tempfile.mkdtemp(prefix="patchjudge-flakes-"))
    try:
        tree = scratch / "tree"
        git.materialize(
            repo, head, tree, [e for e in git.ls_tree(repo, head) if not is_bytecode(e.path)]
        )
        # --python: the suite runs with the code's own venv, bound read-only in the box.
        box = codeenv.boxer(isolation, code)
        spec = repeat.Spec(
            nodeids=(),
            count=count,
            conftest_roots=suite.paths,
            pythonpath=ledger.gate.pythonpath,
            plugins=suite.plugins,
            seed=ledger.properties.seed,
            timeout_s=suite.timeout_s,
            python=code.python,
        )
        paths = [p for p in suite.paths if (tree / p).exists()]
        if not paths:
            raise PatchjudgeError(
                f"none of {', '.join(suite.paths)} exists at {head[:12]}",
                file=LEDGER,
                key="suite.paths",
            )
        if cache_dir is not None and code.python is None:
            # The bytecode every process of the run compiled again (-B), the judge's, kept:
            # on toolz the larger part of the CPU beyond a bare run (treepyc.py).
            made = treepyc.provide(tree, [*ledger.gate.pythonpath, *paths], cache_dir)
            say(made.line())
        # Collected plainly, then every run of `count` in the repeated session
        # (issue 20): no serial first pass. xdist is decided from the pace
        # remembered from an earlier run of this suite here, else from the
        # collected count; the pace this run measures is remembered after.
        key = pace_key(repo, ledger, code.interpreter)
        entry = cache.read(cache_dir, "flakes-pace", key)
        pace, known = remembered_pace(entry), remembered_tests(entry)
        if pace is not None and known is not None:
            serial = repeat.serial_seconds(pace * known, known, count)
            guess = repeat.workers_for(workers, serial, os.cpu_count())
            if one_session(pace, known, shard):
                # Size and pace known from the last run: one pytest collects and
                # repeats (issue 20), its node ids those it ran.
                say(
                    f"{', '.join(paths)} at {head[:12]}: ~{known} node ids x{count}, one session, "
                    + (f"xdist -n {guess}" if guess else "no xdist")
                    + f" (remembered {pace * known:.2f} s a run)"
                )
                spec = dataclasses.replace(spec, workers=guess)
                whole, ids = repeat.run_whole(
                    tree, paths, spec, scratch / "runs", environ, progress=say, box=box,
                    expected=known * count,
                )  # fmt: skip
                return _evidence(
                    cache_dir, key, scratch, head=head, count=count, shard=shard, ledger=ledger,
                    started=started, nodes=dict(whole.nodes), trouble=whole.problems, used=guess,
                    whole_suite=ids, code=code,
                )  # fmt: skip
        say(f"collecting {', '.join(paths)} at {head[:12]}")
        found = repeat.collect(tree, paths, spec, scratch / "collect", environ, box=box)
        problems = testrun.run_problems(found, spec.timeout_s)
        if problems:
            return Evidence({}, {}, tuple(problems), 0)
        mine = shard_of(found.collected, shard) if shard.total > 1 else list(found.collected)
        if pace is None:
            used = repeat.resolve_workers(workers, len(mine) * count, os.cpu_count())
        else:
            serial = repeat.serial_seconds(pace * len(mine), len(mine), count)
            used = repeat.workers_for(workers, serial, os.cpu_count())
        say(
            f"shard {shard}: {len(mine)} of {len(found.collected)} node ids x{count}, "
            + (f"xdist -n {used}" if used else "no xdist")
            + (f" (remembered {pace * len(mine):.2f} s a run)" if pace is not None else "")
        )
        nodes: dict[str, Tally] = {}
        trouble: tuple[str, ...] = ()
        if mine:
            spec = dataclasses.replace(spec, nodeids=tuple(mine), workers=used, count=count)
            per_run = pace + repeat.RUN_OVERHEAD_S if pace is not None else None
            result = repeat.run(
                tree,
                spec,
                scratch / "runs",
                environ,
                progress=say,
                box=box,
                seconds_per_run=per_run,
            )
            nodes, trouble = dict(result.nodes), result.problems
        whole_suite = tuple(found.collected) if shard.total == 1 else ()
        return _evidence(
            cache_dir, key, scratch, head=head, count=count, shard=shard, ledger=ledger,
            started=started, nodes=nodes, trouble=trouble, used=used, whole_suite=whole_suite,
            code=code,
        )  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _evidence(
    cache_dir: Path | None,
    key: Mapping[str, str],
    scratch: Path,
    *,
    head: str,
    count: int,
    shard: Shard,
    ledger: Ledger,
    started: float,
    nodes: dict[str, Tally],
    trouble: tuple[str, ...],
    used: int,
    whole_suite: tuple[str, ...],
    code: codeenv.CodeEnv,
) -> Evidence:
    """The evidence of a run, its pace (and, of a whole suite, its size) remembered."""
    measured = measured_pace(scratch / "runs", nodes)
    if not trouble and measured is not None:
        remembered: float | dict[str, float | int] = measured
        if whole_suite:
            remembered = {"pace": measured, "tests": len(whole_suite)}
        cache.write(cache_dir, "flakes-pace", key, json.dumps(remembered).encode())
    doc = evidence_json(
        head=head,
        count=count,
        shard=shard,
        seed=ledger.properties.seed,
        seed_source=ledger.properties.seed_source,
        host_info=host(codeenv.search_path(code)),
        nodes=nodes,
        min_fails=ledger.flakes.candidate_min_fails,
        duration_s=time.monotonic() - started,
    )
    return Evidence(doc, nodes, trouble, used)
