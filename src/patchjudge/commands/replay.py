"""`patchjudge replay slice | run | check`: the slice out, the trusted host's run, the check."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from patchjudge import replay, store
from patchjudge.commands.gate import lane
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes import replay as replay_lane
from patchjudge.report import dumps
from patchjudge.workspace import Options, open_run

DEFAULT_HOST_ROLE = "trusted-ci"


def host_info() -> dict[str, str]:
    """The host as a receipt records it: Python, platform, and a digest of what is installed."""
    dists = [
        (d.metadata["Name"], d.version)
        for d in importlib.metadata.distributions()
        if d.metadata["Name"]
    ]
    return {
        "python": platform.python_version(),
        "platform": sysconfig.get_platform(),
        "pins_sha256": replay.pins_digest(dists),
    }


def slice_command(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    """Write `<reports>/replay-slice.txt` and print its sha256 as `sha256sum` would."""
    run = open_run(options, environ)
    sl = replay_lane.compute_slice(run)
    path = replay_lane.write_slice(run, sl)
    if sl.problems:
        for problem in sl.problems:
            print(f"patchjudge replay slice: {problem}", file=out)
        return 1
    print(f"{sl.sha256}  {path}", file=out)
    return 0


def run_command(
    options: Options,
    slice_path: Path,
    host_role: str,
    out: TextIO,
    *,
    environ: Mapping[str, str] = os.environ,
    host: Mapping[str, str] | None = None,
) -> int:
    """On the trusted host: check the slice, run exactly it, write `<reports>/receipt.json`.

    Exit 0 whenever a receipt is written, failures included: the verdict,
    not this host, decides what they mean.
    """
    source = str(slice_path)
    try:
        data = slice_path.read_bytes()
    except OSError as exc:
        raise PatchjudgeError(
            f"cannot read the slice: {exc.strerror}", file=source, key="--slice"
        ) from None
    nodeids = replay.parse_slice(data, source)
    run = open_run(options, environ)
    settings = run.ledger.replay
    refused = replay.slice_problems(nodeids, settings.private, settings.max_slice)
    if refused:
        raise PatchjudgeError(
            refused[0], file=source, fix="the ledger at the merge base refuses this slice"
        )
    receipt, result = replay_lane.run_on_host(
        run, nodeids, replay.sha256(data), host_role, host if host is not None else host_info()
    )
    text = dumps(receipt.to_json())
    path = run.reports / replay.RECEIPT_FILE
    store.write_text(path, text)
    for nodeid in receipt.passed_nodeids:
        print(f"  passed             {nodeid}", file=out)
    for nodeid in receipt.failed_nodeids:
        print(f"  failed             {nodeid}", file=out)
    for nodeid in receipt.skipped_by_freeze:
        print(f"  skipped_by_freeze  {nodeid}", file=out)
    for problem in receipt.problems:
        print(f"  problem: {problem}", file=out)
    if receipt.problems and result is not None:
        print(result.output[-4000:], file=out)
    # The hash goes to the host's log: the verdict's review field must show the same.
    print(f"receipt {replay.sha256(text.encode('utf-8'))}  {path}", file=out)
    return 0


def check_command(options: Options, out: TextIO, environ: Mapping[str, str] = os.environ) -> int:
    if options.receipt is None:
        raise PatchjudgeError(
            "replay check needs a receipt", key="--receipt", fix="pass --receipt FILE"
        )
    return lane(replay_lane.NAME, options, out, environ)
