"""`patchjudge lock`: rewrite the fixture lock from the working tree. A human step."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from patchjudge import git
from patchjudge.config import LEDGER, parse_ledger
from patchjudge.errors import PatchjudgeError
from patchjudge.lanes.fixtures import write_lock


def lock(repo: Path, out: TextIO) -> int:
    top = git.toplevel(repo)
    ledger_path = top / LEDGER
    if not ledger_path.is_file():
        raise PatchjudgeError("not found", file=LEDGER, fix="run patchjudge init first")
    ledger = parse_ledger(ledger_path.read_bytes(), LEDGER)
    settings = ledger.fixtures
    changes = write_lock(top, settings, top / settings.lock)
    for line in changes:
        print(line, file=out)
    print(f"wrote {settings.lock}: {len(changes)} change(s); review and commit it", file=out)
    return 0
