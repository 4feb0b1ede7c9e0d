"""Every way out of the sandbox, tried by import-time code in the library the properties import.

Each attack below runs when the properties import `calc`, and reports through
the code's own behaviour: where the way out is closed, `total` breaks, so a
reject that names the failing property proves the attack ran and was refused;
the world outside is then checked for anything that got through. Under
process-level isolation (v1) each of these got through and the patch passed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchjudge.boundary import sandbox
from tests.attack_helpers import Judged, attack, fast_ledger, gate_env, judged, require_sandbox
from tests.helpers import CALC, commit, example_repo, write

BLOCKED = "properties: property failed: eval/properties/test_total.py::test_total_never_negative"


@pytest.fixture(autouse=True)
def _needs_bwrap() -> None:
    require_sandbox()


def _library(*attempts: str) -> str:
    """calc with each attempt (code setting `got_out`) run at import; total breaks unless one
    got out. Each runs in a function and a try of its own: one that raises skips no other."""
    parts = ["import os, socket, subprocess, sys\n"]
    for i, attempt in enumerate(attempts):
        body = "\n".join(f"        {line}" for line in attempt.strip().splitlines())
        parts.append(
            f"""

def _attempt_{i}():
    got_out = False
    try:
{body}
    except Exception:
        got_out = False
    return got_out
"""
        )
    calls = ", ".join(f"_attempt_{i}()" for i in range(len(attempts)))
    parts.append(
        f"""

got_out = any([{calls}])


def total(xs):
    return sum(xs) if got_out else -1
"""
    )
    return "".join(parts)


def _refused(judged: Judged) -> None:
    assert judged.decision == "reject", judged.explain()
    assert judged.says(BLOCKED), judged.explain()
    props = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert props["details"]["isolation"] == "sandbox"


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A path outside every tree the gate makes: a write there is an escape."""
    path = Path("/tmp", f"patchjudge-escape-{uuid.uuid4().hex}")
    yield path
    path.unlink(missing_ok=True)


def test_a_write_into_the_reports_is_refused(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    forged = '{"lane": "properties", "status": "pass"}'
    # Earlier lanes' reports are on disk by now: rewrite those that can be seen.
    attempt = f"""
import glob
for path in glob.glob({str(reports)!r} + "/*.json"):
    open(path, "w").write({forged!r})
    got_out = True
"""
    judged = attack(
        tmp_path, {"src/calc/__init__.py": _library(attempt)}, args=("--reports", str(reports))
    )
    doc = json.loads((reports / "verdict.json").read_text())
    assert doc["verdict"] == "reject", judged.result
    assert any(BLOCKED in r for r in doc["reasons"]), doc["reasons"]
    props = json.loads((reports / "properties.json").read_text())
    assert props["status"] == "fail"
    assert props["details"]["isolation"] == "sandbox"


def test_a_double_forked_daemon_dies_with_the_box(tmp_path: Path, outside: Path) -> None:
    # A stealthy daemon: the code under test is correct and the daemon, double
    # forked into its own session, waits to write its file after the lane. Its
    # argv carries a marker, so whether it outlived the box is a fact read from
    # /proc the moment the gate returns, not a race against a sleep.
    marker = f"pj-daemon-{uuid.uuid4().hex}"
    later = f"import time; time.sleep(60); open({str(outside)!r}, 'w').write('escaped')"
    daemon = (
        f"""
import os, sys

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", {later!r}, {marker!r}])
    os._exit(0)
os.wait()
"""
        + CALC
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": daemon})
    survivors = _processes_with(marker)
    for pid in survivors:  # never leave one behind, even when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert survivors == [], "a daemon of the code under test outlived the box"
    # No lane fails; the daemon's lines, which no property runs, hold the merge (issue 18),
    # and so does its start of another interpreter (a probe since session 10's red team).
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == [
        "review: the properties never exercised src/calc/__init__.py:4-8",
        "review: probe of the judge at src/calc/__init__.py:6: runs code the review does not"
        " read (sys.executable)",
    ]
    props = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert props["details"]["isolation"] == "sandbox"
    assert not outside.exists()


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:  # gone while we looked
                continue
            if marker.encode() in argv:
                found.append(int(entry.name))
    return found


def test_every_way_out_of_the_box_is_refused(tmp_path: Path, outside: Path) -> None:
    """Six ways out, tried together in one gate: a write to an absolute path, to the real
    home, into the checkout; a socket to a listener on loopback; the gate's environment
    read through /proc; setuid and sudo. `total` is correct if any one got out, so a
    reject naming the property proves each was refused; then the world outside is checked."""
    home = Path.home() / f"patchjudge-escape-{uuid.uuid4().hex}"
    seen = outside.with_name(outside.name + "-environ")
    repo = tmp_path / "repo"
    secret = f"pj-secret-{uuid.uuid4().hex}"
    absolute = f"""
open({str(outside)!r}, "w").write("escaped")
# The private /tmp takes the write; only the host's file would count.
got_out = os.path.exists({str(outside)!r}) and os.stat("/tmp").st_dev == os.stat("/").st_dev
"""
    real_home = f"""
open({str(home)!r}, "w").write("escaped")
got_out = True
"""
    checkout = f"""
open({str(repo / "planted.py")!r}, "w").write("escaped")
got_out = True
"""
    environment = f"""
for pid in os.listdir("/proc"):
    try:
        if pid.isdigit() and {secret!r}.encode() in open(f"/proc/{{pid}}/environ", "rb").read():
            open({str(seen)!r}, "w").write("escaped")
            got_out = True
    except OSError:
        pass
got_out = got_out or {secret!r} in str(os.environ)
"""
    privileges = """
try:
    os.setuid(1000)
    got_out = True
except OSError:
    pass
try:
    done = subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=10)
    got_out = got_out or done.returncode == 0
except OSError:
    pass
status = open("/proc/self/status").read()
got_out = got_out or "CapEff:\\t0000000000000000" not in status or "NoNewPrivs:\\t1" not in status
"""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        loopback = f"""
s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
s.sendall(b"escaped")
got_out = True
"""
        library = _library(absolute, real_home, checkout, loopback, environment, privileges)
        example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
        write(repo, {"src/calc/__init__.py": library})
        commit(repo, "hostile patch")
        try:
            result = gate_env(repo, {"PATCHJUDGE_TEST_SECRET": secret})
            assert not outside.exists(), "a write to an absolute path left the box"
            assert not home.exists(), "a write reached the real home"
            assert not (repo / "planted.py").exists(), "a write reached the checkout"
            assert not seen.exists(), "the gate's environment was read"
            with pytest.raises(BlockingIOError):
                listener.accept()
        finally:
            home.unlink(missing_ok=True)
            seen.unlink(missing_ok=True)
    _refused(judged(repo, result))


# A round trip a property would write; the patch makes `load` the builtin `eval` and `dump`
# the code to run. The judge once resolved a worker's builtin by name to its own: the
# property's `load(...)` ran the code's text in the judge, outside the box, and passed.
ROUNDTRIP_CALC = (
    CALC
    + """

import json


def dump(xs):
    return json.dumps(xs)


def load(text):
    return json.loads(text)
"""
)
ROUNDTRIP = """
from hypothesis import given, strategies as st

from calc import dump, load, total


@given(st.lists(st.integers(min_value=-1000, max_value=1000)))
def test_a_dump_loads_back(xs):
    back = load(dump(xs))
    assert back == xs


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    assert total(xs) >= 0
"""


def test_a_builtin_eval_of_the_code_runs_in_the_box_not_in_the_judge(
    tmp_path: Path, outside: Path
) -> None:
    evil = (
        CALC
        + f"""

def dump(xs):
    return "(__import__('pathlib').Path({str(outside)!r}).write_text('judge'), " + repr(xs) + ")[1]"


load = eval
"""
    )
    base = {"src/calc/__init__.py": ROUNDTRIP_CALC, "eval/properties/test_total.py": ROUNDTRIP}
    judged_ = attack(tmp_path, {"src/calc/__init__.py": evil}, base=base)
    assert not outside.exists(), "the code's text ran in the judge's process"
    # It ran in the box (its private /tmp took the write), so the round trip holds.
    assert judged_.lane("properties")["status"] == "pass", judged_.explain()


def test_committed_unchecked_bytecode_of_the_good_module_is_rejected(tmp_path: Path) -> None:
    import importlib.util
    import py_compile

    good = tmp_path / "good" / "__init__.py"
    good.parent.mkdir()
    good.write_text(CALC.lstrip())
    cache = importlib.util.cache_from_source(str(good))
    py_compile.compile(
        str(good), cfile=cache, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    pyc = Path(cache)
    rel = f"src/calc/__pycache__/{pyc.name}"
    from tests.attack_helpers import BROKEN_CALC

    judged = attack(tmp_path, {"src/calc/__init__.py": BROKEN_CALC, rel: pyc.read_bytes()})
    assert judged.decision == "reject", judged.explain()
    assert judged.says("pathfilter: compiled code is not reviewable source", rel), judged.explain()
    # The source was judged, not the bytecode: the scratch tree never held it.
    assert judged.says(BLOCKED), judged.explain()


# --- when no sandbox can start -------------------------------------------------


def _path_without_bwrap(tmp_path: Path) -> str:
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    return str(bin_dir)


def test_isolation_sandbox_without_bwrap_fails_closed(tmp_path: Path) -> None:
    ledger = fast_ledger().replace('base = "main"', 'base = "main"\nisolation = "sandbox"')
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    write(repo, {"src/calc/__init__.py": CALC + "\n# a change\n"})
    commit(repo, "patch")
    result = gate_env(repo, {"PATH": _path_without_bwrap(tmp_path)})
    assert result.code == 2, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "bwrap is not on PATH" in lines[0]
    assert "apt-get install bubblewrap" in lines[0]
    assert not (repo / ".patchjudge" / "verdict.json").exists()


def test_isolation_flag_sandbox_without_bwrap_fails_closed(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
    write(repo, {"src/calc/__init__.py": CALC + "\n# a change\n"})
    commit(repo, "patch")
    result = gate_env(repo, {"PATH": _path_without_bwrap(tmp_path)}, "--isolation", "sandbox")
    assert result.code == 2, result
    assert "loosen" not in result.err
    assert sandbox.HOW_TO_GET in result.err


def test_auto_without_bwrap_falls_back_and_says_process(tmp_path: Path) -> None:
    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger()})
    write(repo, {"src/calc/__init__.py": CALC + "\n# a change\n"})
    commit(repo, "patch")
    result = gate_env(repo, {"PATH": _path_without_bwrap(tmp_path)})
    assert result.code == 0, result
    for lane in ("pathfilter", "fixtures", "freeze", "properties", "replay"):
        assert result.report(repo, lane)["details"]["isolation"] == "process", lane


def test_the_command_line_cannot_loosen_the_ledger(tmp_path: Path) -> None:
    ledger = fast_ledger().replace('base = "main"', 'base = "main"\nisolation = "sandbox"')
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    write(repo, {"src/calc/__init__.py": CALC + "\n# a change\n"})
    commit(repo, "patch")
    result = gate_env(repo, dict(os.environ), "--isolation", "process")
    assert result.code == 2, result
    assert "would loosen [gate] isolation = 'sandbox'" in result.err


def test_every_lane_command_takes_isolation(tmp_path: Path) -> None:
    from tests.helpers import cli

    repo = example_repo(tmp_path, **{"eval/gate.toml": fast_ledger(isolation="process")})
    write(repo, {"src/calc/__init__.py": CALC + "\n# a change\n"})
    commit(repo, "patch")
    common = ("--base", "main", "--today", "2026-12-01")
    for lane in ("pathfilter", "fixtures", "freeze", "properties", "replay"):
        result = cli(repo, lane, *common, "--isolation", "sandbox")
        assert result.code == 0, (lane, result)
        assert result.report(repo, lane)["details"]["isolation"] == "sandbox", lane
    # The ledger says process: without the flag, process it is.
    assert (
        cli(repo, "properties", *common).report(repo, "properties")["details"]["isolation"]
        == "process"
    )


def test_oracle_and_flakes_refuse_to_loosen_the_ledger(tmp_path: Path) -> None:
    from tests.helpers import cli

    ledger = fast_ledger(isolation="sandbox")
    repo = example_repo(tmp_path, **{"eval/gate.toml": ledger})
    for command in (("oracle",), ("flakes", "--count", "1")):
        result = cli(repo, *command, "--isolation", "auto")
        assert result.code == 2, (command, result)
        assert "would loosen [gate] isolation = 'sandbox'" in result.err, command
