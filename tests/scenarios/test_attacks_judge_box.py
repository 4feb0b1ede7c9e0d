"""The judge's own pytest is boxed too: a property that evaluates or opens what the code
returns runs the patch's choice in the judge's process, which sees no host (issue 17).

Each patch below is otherwise honest: if what it makes the judge run or open gets
out, the properties hold and the patch is accepted for review. Before the judge's
pytest had a box of its own, each of these wrote the real home, the checkout and
/tmp, read a secret of the host's and connected to loopback, and was accepted.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.attack_helpers import Judged, attack, fast_ledger, require_sandbox
from tests.helpers import CALC


@pytest.fixture(autouse=True)
def _needs_bwrap() -> None:
    require_sandbox()


@dataclass(frozen=True)
class Host:
    """What of the host an attack aims at: each must be untouched after the gate."""

    home: Path  # a file to write in the user's real home
    outside: Path  # a file to write in the host's /tmp, outside every scratch dir
    secret: Path  # a file of the host's to read, in the real home
    leak: Path  # where a read secret is copied to, in the host's /tmp
    text: str  # the secret's text


@pytest.fixture
def host() -> Iterator[Host]:
    tag = uuid.uuid4().hex
    found = Host(
        home=Path.home() / f"patchjudge-judge-escape-{tag}",
        outside=Path("/tmp", f"patchjudge-judge-escape-{tag}"),
        secret=Path.home() / f"patchjudge-judge-secret-{tag}",
        leak=Path("/tmp", f"patchjudge-judge-leak-{tag}"),
        text=f"pj-secret-{uuid.uuid4().hex}",
    )
    found.secret.write_text(found.text)
    yield found
    for path in (found.home, found.outside, found.secret, found.leak):
        path.unlink(missing_ok=True)


def _untouched(host: Host, repo: Path, planted: Path) -> None:
    assert not host.home.exists(), "the judge's process wrote the real home"
    assert not host.outside.exists(), "the judge's process wrote the host's /tmp"
    assert not planted.exists(), "the judge's process wrote the checkout"
    assert not (repo / ".git" / "hooks" / "post-commit").exists(), "it wrote the repo's .git"
    assert not host.leak.exists(), "the judge's process read the host's secret"
    assert host.secret.read_text() == host.text


def _evaluated(code: str) -> str:
    """The code under test whose `dump()` is text that runs `code` when a property evals it;
    `code` sets `ok`, and the text evaluates to the list only when it is true."""
    return (
        CALC
        + f"""

_CODE = {code!r}


def dump(xs):
    return f"(lambda g: (exec({{_CODE!r}}, g), {{xs!r}} if g['ok'] else None)[1])({{{{}}}})"
"""
    )


def _rejected(judged: Judged, prop: str) -> None:
    assert judged.decision != "accept_for_review", judged.explain()
    assert judged.decision == "reject", judged.explain()
    assert judged.says("property failed", prop), judged.explain()
    props = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert props["details"]["isolation"] == "sandbox"


# A round trip through Python's own literal syntax, as a property may check a `dump`.
LITERAL_CALC = CALC + "\n\ndef dump(xs):\n    return repr(xs)\n"
EVAL_PROPERTY = """
from hypothesis import given, strategies as st

from calc import dump, total


@given(st.lists(st.integers(min_value=-1000, max_value=1000)))
def test_a_dump_evaluates_back(xs):
    assert eval(dump(xs)) == xs


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    assert total(xs) >= 0
"""


def test_text_the_judge_evaluates_sees_no_host(tmp_path: Path, host: Host) -> None:
    """`eval(dump(xs))` runs the patch's text in the judge's process: it writes the real
    home, the checkout, its .git and /tmp, reads a secret in the home and copies it out,
    and connects to a listener on loopback. The round trip holds only if the secret was
    read, so a reject naming the property proves the text ran and found no host."""
    repo = tmp_path / "repo"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = f"""
import socket
for path in {[str(host.home), str(host.outside), str(repo / "planted.py"),
              str(repo / ".git" / "hooks" / "post-commit")]!r}:
    try:
        open(path, "w").write("judge")
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"judge")
except OSError:
    pass
try:
    got = open({str(host.secret)!r}).read()
    open({str(host.leak)!r}, "w").write(got)
    ok = bool(got)
except OSError:
    ok = False
"""  # fmt: skip
        evil = _evaluated(code)
        base = {
            "src/calc/__init__.py": LITERAL_CALC,
            "eval/properties/test_total.py": EVAL_PROPERTY,
        }
        judged = attack(tmp_path, {"src/calc/__init__.py": evil}, base=base)
        try:
            listener.accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
    _untouched(host, repo, repo / "planted.py")
    assert not reached, "the judge's process connected to loopback"
    _rejected(judged, "test_a_dump_evaluates_back")


# A cache the property writes and reads back where the code says it lives.
PATH_CALC = (
    CALC
    + """

import os


def cache_file():
    return os.path.join(os.environ["TMPDIR"], "calc-cache")


def settings_file():
    return cache_file()
"""
)
PATH_PROPERTY = """
from hypothesis import given, strategies as st

from calc import cache_file, settings_file, total


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_a_cache_reads_back(xs):
    with open(cache_file(), "w") as f:
        f.write(repr(total(xs)))
    with open(settings_file()) as f:
        assert f.read() == repr(total(xs))


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    assert total(xs) >= 0
"""


def test_paths_the_judge_opens_are_not_the_hosts(tmp_path: Path, host: Host) -> None:
    """The property opens what the code names: the patch names a hook in the repo's .git
    to write, and a secret in the real home to read back. In the box neither path exists,
    so the property fails; the hook and the secret on the host are as they were."""
    repo = tmp_path / "repo"
    hook = repo / ".git" / "hooks" / "post-commit"
    evil = (
        CALC
        + f"""

import os


def cache_file():
    return {str(hook)!r}


def settings_file():
    return {str(host.secret)!r}
"""
    )
    base = {"src/calc/__init__.py": PATH_CALC, "eval/properties/test_total.py": PATH_PROPERTY}
    judged = attack(tmp_path, {"src/calc/__init__.py": evil}, base=base)
    _untouched(host, repo, repo / "planted.py")
    _rejected(judged, "test_a_cache_reads_back")


def test_the_launchers_socket_starts_nothing_outside_the_workers_box(
    tmp_path: Path, host: Host
) -> None:
    """Evaluated text that finds the launcher's socket in the judge's descriptors asks it
    for a worker of its own: its command writes the home and /tmp, reads the secret,
    with LD_PRELOAD and HOME of its choosing. It runs in the lane's worker box: the
    secret is not there, so it exits 1 and the round trip fails. (No socket: the text
    runs the command itself, as it would in a judge without a box.)"""
    repo = tmp_path / "repo"
    payload = f"""
import sys
for path in {[str(host.home), str(host.outside), str(repo / "planted.py")]!r}:
    try:
        open(path, "w").write("worker")
    except OSError:
        pass
try:
    got = open({str(host.secret)!r}).read()
    open({str(host.leak)!r}, "w").write(got)
except OSError:
    sys.exit(1)
"""  # fmt: skip
    code = f"""
import json, os, socket, subprocess, sys
PAYLOAD = {payload!r}
def ask(s, doc):
    s.send(json.dumps(doc).encode())
    return json.loads(socket.recv_fds(s, 1 << 16, 8)[0])
found = None
for fd in map(int, os.listdir("/proc/self/fd")):
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        continue
    if s.family == socket.AF_UNIX and s.type == socket.SOCK_SEQPACKET:
        found = s
        break
    s.close()
if found is None:
    code = subprocess.run([sys.executable, "-c", PAYLOAD]).returncode
else:
    ask(found, {{"op": "pipes"}})
    env = {{"LD_PRELOAD": "/nowhere.so", "HOME": {str(Path.home())!r}, "PATH": "/tmp"}}
    ident = ask(found, {{"op": "start", "argv": [sys.executable, "-c", PAYLOAD], "env": env}})
    code = ask(found, {{"op": "wait", "id": ident["id"], "timeout": 60}})["returncode"]
ok = code == 0
"""
    evil = _evaluated(code)
    base = {"src/calc/__init__.py": LITERAL_CALC, "eval/properties/test_total.py": EVAL_PROPERTY}
    judged = attack(tmp_path, {"src/calc/__init__.py": evil}, base=base)
    _untouched(host, repo, repo / "planted.py")
    _rejected(judged, "test_a_dump_evaluates_back")


# Text that answers for the judge, run where the property evaluates it: in the judge's
# process it reads the property's own `xs` from the caller's frame (so the round trip holds
# whatever `dump` returns) and rebinds the property file's `total` to an honest sum (so the
# other property holds while the patch's `total` is wrong). In the worker neither exists.
FORGE = (
    "(lambda f: (f.f_globals.__setitem__('total', lambda ys: sum(ys)), f.f_locals['xs'])[1])"
    "(__import__('sys')._getframe(1))"
)
# The same answer from a script the property runs: the frame that holds the property's `xs`.
SCRIPT = """
import sys
f = sys._getframe(1)
while "xs" not in f.f_locals:
    f = f.f_back
RESULT = f.f_locals["xs"]
"""
ROUTES_CALC = (
    CALC
    + """

import marshal
import os


def dump(xs):
    return repr(xs)


def code_of(xs):
    return marshal.dumps(eval("lambda: " + repr(xs)).__code__)


def script(xs):
    path = os.path.join(os.environ["TMPDIR"], "generated.py")
    with open(path, "w") as f:
        f.write(f"RESULT = {xs!r}\\n")
    return path
"""
)
# Every route by which a property turns what the code returned into code to run.
ROUTES_PROPERTY = """
import builtins
import importlib
import marshal
import runpy
import sys
import types

from hypothesis import given, strategies as st

from calc import code_of, dump, script, total

LISTS = st.lists(st.integers(min_value=-1000, max_value=1000))


@given(LISTS)
def test_a_eval(xs):
    assert eval(dump(xs)) == xs


@given(LISTS)
def test_b_exec_into_a_namespace(xs):
    ns = {}
    exec("got = " + dump(xs), ns)
    assert ns["got"] == xs


@given(LISTS)
def test_c_compile_then_eval(xs):
    assert eval(compile(dump(xs), "<dump>", "eval")) == xs


@given(LISTS)
def test_d_builtins_module(xs):
    assert builtins.eval(dump(xs)) == xs


@given(LISTS)
def test_e_builtins_from_sys_modules(xs):
    assert sys.modules["builtins"].eval(dump(xs)) == xs


@given(LISTS)
def test_f_builtins_from_import_module(xs):
    assert importlib.import_module("builtins").eval(dump(xs)) == xs


@given(LISTS)
def test_g_function_from_marshalled_code(xs):
    assert types.FunctionType(marshal.loads(code_of(xs)), globals())() == xs


@given(LISTS)
def test_h_runpy_of_a_script_the_code_wrote(xs):
    assert runpy.run_path(script(xs))["RESULT"] == xs


@given(st.lists(st.integers(min_value=0, max_value=1000)))
def test_total_never_negative(xs):
    assert total(xs) >= 0
"""
ROUTES = ("test_a_eval", "test_b_exec_into_a_namespace", "test_c_compile_then_eval",
          "test_d_builtins_module", "test_e_builtins_from_sys_modules",
          "test_f_builtins_from_import_module", "test_g_function_from_marshalled_code",
          "test_h_runpy_of_a_script_the_code_wrote", "test_total_never_negative")  # fmt: skip
ROUTES_BASE = {
    "src/calc/__init__.py": ROUTES_CALC,
    "eval/properties/test_total.py": ROUTES_PROPERTY,
    "eval/gate.toml": fast_ledger(timeout=120),  # eight properties on a shared machine
}


def test_text_the_code_returns_never_runs_as_judge_code(tmp_path: Path) -> None:
    """Each property turns what the code returned into code by another route (eval, exec,
    compile, the builtins module three ways, a function from marshalled code, a script the
    code wrote, run by runpy), and the
    patch's text forges the outcome where it runs: in the judge's process every property,
    `total`'s too, held and a wrong `total` was not rejected. Out of process the builtins
    of a judge file run the text in the worker, and the other routes are refused in the
    judge: every property fails, each for its own reason."""
    evil = (
        "def total(xs):\n    return -1 if len(xs) > 2 else sum(xs)\n\n\nimport marshal\n\n\n"
        f"FORGE = {FORGE!r}\n\n\n"
        "def dump(xs):\n    return FORGE\n\n\n"
        "def code_of(xs):\n"
        "    return marshal.dumps(eval('lambda: ' + FORGE).__code__)\n\n\n"
        "def script(xs):\n"
        "    import os\n"
        "    path = os.path.join(os.environ['TMPDIR'], 'generated.py')\n"
        "    with open(path, 'w') as f:\n"
        "        f.write(SCRIPT)\n"
        "    return path\n\n\n"
        f"SCRIPT = {SCRIPT!r}\n"
    )
    judged = attack(tmp_path, {"src/calc/__init__.py": evil}, base=ROUTES_BASE)
    assert judged.decision == "reject", judged.explain()
    for prop in ROUTES:
        assert judged.says("property failed", prop), (prop, judged.explain())
    props = json.loads((judged.repo / ".patchjudge" / "properties.json").read_text())
    assert props["details"]["isolation"] == "sandbox"


def test_the_routes_hold_for_an_honest_round_trip_where_they_are_kept(tmp_path: Path) -> None:
    """The same file on the honest code: eval, exec, compile and the builtins module
    evaluate in the worker and hold; the routes around them are refused in the judge,
    each with what to use instead."""
    honest = {"src/calc/__init__.py": ROUTES_CALC + "\n# an honest patch\n"}
    judged = attack(tmp_path, honest, base=ROUTES_BASE)
    refused = {
        "test_e_builtins_from_sys_modules": "asked for compile in the judge's process",
        "test_f_builtins_from_import_module": "asked for compile in the judge's process",
        "test_g_function_from_marshalled_code": "asked for marshal.loads in the judge's process",
        "test_h_runpy_of_a_script_the_code_wrote": "a file the code under test has or wrote",
    }
    for prop in ROUTES:
        assert judged.says("property failed", prop) is (prop in refused), (prop, judged.explain())
    for prop, why in refused.items():
        assert judged.says("property failed", prop, why), (prop, judged.explain())
