"""Every process of one command: `python bench/procacct.py CMD...` (issue 20).

Samples /proc every 5 ms and prints, to stderr, each descendant's last
utime+stime and command line (a process shorter than a sample is missed;
the rusage total of the children is printed beside the sampled sum).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, CPU ticks so far) of every process /proc shows now."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        found[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return found


def command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")[:160]


def main(argv: list[str]) -> int:
    child = subprocess.Popen(argv)
    seen: dict[int, list[Any]] = {}  # pid -> [CPU ticks, command line, parent pid]
    mine = {child.pid}
    started = time.time()
    while child.poll() is None:
        now = processes()
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _) in now.items():
                if pid not in mine and ppid in mine:
                    mine.add(pid)
                    grew = True
        for pid in mine & now.keys():
            if pid not in seen:
                seen[pid] = [0, command_line(pid) or "?", now[pid][0]]
            elif cmd := command_line(pid):  # a forked child execs later: keep its last line
                seen[pid][1] = cmd
            seen[pid][0] = now[pid][1]
        time.sleep(0.005)
    wall = time.time() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    print(
        f"# rc={child.returncode} wall={wall:.2f}s children CPU (rusage)={total:.2f}s"
        f" sampled procs={len(seen)} load={os.getloadavg()}",
        file=sys.stderr,
    )
    for pid, (ticks, cmd, ppid) in sorted(seen.items()):
        if ticks >= 2:
            print(f"{ticks / TICKS:7.2f} {pid:7d} {ppid:7d} {cmd}", file=sys.stderr)
    summed = sum(v[0] for v in seen.values()) / TICKS
    print(f"# sum sampled = {summed:.2f}s", file=sys.stderr)
    return child.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
