"""Reports on disk: atomic writes, and reads that turn any garbage into Unreadable."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from patchjudge.report import LaneReport, ReportError, dumps, lane_report_from_json
from patchjudge.verdict import Unreadable


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    # A path that is not UTF-8 reaches here as lone surrogates (os.fsdecode):
    # written as \udcXX escapes, still valid UTF-8 and, inside JSON strings,
    # still valid JSON that reads back to the same text.
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(text)
    Path(tmp).replace(path)


def write_report(reports: Path, report: LaneReport) -> Path:
    path = reports / f"{report.lane}.json"
    write_text(path, dumps(report.to_json()))
    return path


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_report(
    reports: Path, lane: str, expect_sha256: str | None = None
) -> LaneReport | Unreadable | None:
    path = reports / f"{lane}.json"
    if path.is_symlink():
        return Unreadable(f"{path.name} is a symlink")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Unreadable(f"{path.name}: {exc.strerror}")
    if expect_sha256 is not None and hashlib.sha256(data).hexdigest() != expect_sha256:
        return Unreadable(f"{path.name} changed after the lane wrote it")
    try:
        return lane_report_from_json(json.loads(data))
    except (ValueError, ReportError, RecursionError) as exc:
        return Unreadable(f"{path.name}: {exc}")
