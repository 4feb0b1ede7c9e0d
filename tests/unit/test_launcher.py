"""The launcher that starts workers' boxes for a boxed judge: its environment rule as a table,
and the real thing, refusing what a judge-side attacker may send it (issue 17)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchjudge.boundary import launcher, sandbox
from patchjudge.boundary.sandbox import Box
from tests.attack_helpers import require_sandbox

LANE = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LD_PRELOAD": "/lane.so", "SECRET": "s"}


@pytest.mark.parametrize(
    ("asked", "env"),
    [
        # The judge sets only HOME, TMPDIR and the hash seed; the rest is the lane's.
        (
            {"HOME": "/h", "TMPDIR": "/h/tmp", "PYTHONHASHSEED": "7"},
            {"PATH": "/usr/bin", "LANG": "C.UTF-8", "HOME": "/h", "TMPDIR": "/h/tmp",
             "PYTHONHASHSEED": "7"},
        ),
        # bwrap runs unboxed with this environment: nothing the loader or libc reads.
        (
            {"HOME": "/h", "LD_PRELOAD": "/s/evil.so", "PATH": "/s/bin", "LOCPATH": "/s",
             "LANG": "../../s/x", "GCONV_PATH": "/s"},
            {"PATH": "/usr/bin", "LANG": "C.UTF-8", "HOME": "/h"},
        ),
    ],
)  # fmt: skip
def test_worker_env(asked: dict[str, str], env: dict[str, str]) -> None:
    assert launcher.worker_env(asked, LANE) == env


def test_a_hash_seed_is_digits() -> None:
    with pytest.raises(launcher.LaunchError):
        launcher.worker_env({"PYTHONHASHSEED": "0; x"}, LANE)


# --- the real launcher -----------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[launcher.Launcher, launcher.Client]]:
    require_sandbox()
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    home.mkdir()
    with launcher.serving(Box(tree=tree, home=home), {"PATH": os.environ["PATH"]}) as found:
        assert found is not None
        client = launcher.Client(os.dup(found.judge_end.fileno()))
        yield found, client
        client.sock.close()


def _read_all(fd: int) -> bytes:
    out = b""
    while chunk := os.read(fd, 1 << 16):
        out += chunk
    return out


def test_a_worker_starts_in_the_lanes_box_on_the_launchers_pipes(
    served: tuple[launcher.Launcher, launcher.Client], tmp_path: Path
) -> None:
    _, client = served
    ends, (_, out) = client.pipes()
    program = (
        "import os\n"
        f"os.write({out}, repr((os.getcwd(), os.environ.get('LD_PRELOAD'),"
        f" os.path.exists({str(tmp_path / 'judge')!r}))).encode())\n"
    )
    (tmp_path / "judge").mkdir()  # beside the box's tree: not the worker's to see
    asked = {"HOME": str(tmp_path / "home"), "LD_PRELOAD": "/nowhere.so"}
    proc = client.start([sys.executable, "-I", "-c", program], asked)
    os.close(ends["to_worker"])
    os.close(ends["boot"])
    said = _read_all(ends["from_worker"])
    assert proc.wait(timeout=30) == 0, os.read(ends["stderr"], 4096)
    assert said == repr((str(tmp_path / "tree"), None, False)).encode()
    assert b'"exit-code"' in _read_all(ends["status"])  # bwrap's own word that it ran
    for name in ("from_worker", "status", "stderr"):
        os.close(ends[name])


def test_a_killed_worker_is_reaped_and_the_end_kills_the_rest(
    served: tuple[launcher.Launcher, launcher.Client],
) -> None:
    lane, client = served
    procs, kept = [], []
    for _ in range(2):
        ends, _ = client.pipes()
        code = "import time; time.sleep(600)"
        procs.append(client.start([sys.executable, "-I", "-c", code], {}))
        kept += ends.values()  # bwrap writes its status there: open while it runs
    assert procs[0].poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        procs[0].wait(timeout=0.1)
    procs[0].kill()
    assert procs[0].returncode is not None and procs[0].returncode < 0
    lane.close()  # the judge's pytest ended: no worker outlives it
    assert all(p.poll() is not None for p in lane.procs.values())
    for fd in kept:
        os.close(fd)


@pytest.mark.parametrize(
    "request_",
    [
        b"not json",
        json.dumps([1, 2]).encode(),
        json.dumps({"op": "start", "argv": ["/bin/true"], "env": {}}).encode(),  # no pipes yet
        json.dumps({"op": "wait", "id": 99}).encode(),
        json.dumps({"op": "mount", "path": "/"}).encode(),
        b"[" * 100_000,  # deeper than json.loads recurses: an error, not a dead launcher
        json.dumps({"op": "wait", "id": [1]}).encode(),  # an unhashable id
    ],
)
def test_what_a_judge_side_attacker_sends_is_refused_and_the_launcher_serves_on(
    served: tuple[launcher.Launcher, launcher.Client], request_: bytes
) -> None:
    _, client = served
    client.sock.settimeout(30)
    client.sock.send(request_)
    data, fds, _, _ = socket.recv_fds(client.sock, 1 << 16, 1)
    assert fds == []
    assert "error" in json.loads(data)
    ends, _ = client.pipes()  # still serving
    for fd in ends.values():
        os.close(fd)


def test_a_start_names_no_box_of_its_own(
    served: tuple[launcher.Launcher, launcher.Client],
) -> None:
    """argv after bwrap's `--`: a bind in it is the worker's command, never bwrap's."""
    _, client = served
    ends, _ = client.pipes()
    argv = ["--bind", "/", "/", sys.executable, "-c", "pass"]
    proc = client.start(argv, {})
    assert proc.wait(timeout=30) != 0
    # bwrap made the box, then found no program named "--bind" in it to run.
    said = _read_all(ends["status"])
    assert b'"child-pid"' in said and b'"exit-code"' not in said
    for fd in ends.values():
        os.close(fd)


def test_the_judges_box_pins_the_workers_directories(tmp_path: Path) -> None:
    """The judge writes the worker's tree and home, but cannot move them away and leave a
    link in their place for the next worker's box (started outside) to bind."""
    require_sandbox()
    scratch = tmp_path / "s"
    for name in ("judge", "home", "w1", "h1"):
        (scratch / name).mkdir(parents=True)
    judge = Box(tree=scratch / "judge", home=scratch / "home", writable=(scratch,))
    worker = Box(tree=scratch / "w1", home=scratch / "h1")
    fd_r, fd_w = os.pipe()
    program = f"""
import os
for d in {[str(worker.tree), str(worker.home)]!r}:
    try:
        os.rename(d, d + "-moved")
        print("moved", d)
    except OSError as exc:
        print("refused", exc.errno)
    open(os.path.join(d, "written"), "w").write("ok")
"""
    box = sandbox.judge_box(judge, worker, fd_w)
    with sandbox.wrapped(box, [sys.executable, "-I", "-c", program]) as (argv, fds):
        done = subprocess.run(argv, pass_fds=fds, capture_output=True, text=True, check=False)
    os.close(fd_r)
    os.close(fd_w)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["refused 16", "refused 16"]  # EBUSY
    assert (worker.tree / "written").exists() and (worker.home / "written").exists()
