"""The sandbox's argument list as a table, the isolation choice, and the real bwrap at work."""

from __future__ import annotations

import dataclasses
import itertools
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.boundary import sandbox
from patchjudge.boundary.sandbox import Box, Host, bwrap_argv, choose, interpreter_paths
from patchjudge.errors import PatchjudgeError
from tests.attack_helpers import require_sandbox

HOST = Host(
    bwrap="/usr/bin/bwrap",
    readonly=(Path("/usr"), Path("/etc/passwd"), Path("/py")),
    symlinks=(("usr/lib", Path("/lib")),),
    hostname="build-7",
)
PROLOGUE = [
    "/usr/bin/bwrap",
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "build-7",
    "--tmpfs",
    "/tmp",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--symlink",
    "usr/lib",
    "/lib",
]
HOST_RO = [("--ro-bind-try", "/usr"), ("--ro-bind-try", "/py")]  # depth 1, in host order
PASSWD = [("--ro-bind-try", "/etc/passwd")]  # depth 2


@pytest.mark.parametrize(
    ("box", "mounts"),
    [
        (
            Box(tree=Path("/s/tree"), home=Path("/s/home")),
            [*HOST_RO, *PASSWD, ("--bind", "/s/tree"), ("--bind", "/s/home")],
        ),
        (
            # The run's scratch dir, then what it holds; the judge's ini read-only over it.
            Box(
                tree=Path("/s/tree"),
                home=Path("/s/home"),
                readonly=(Path("/s/judge-ini"),),
                writable=(Path("/s"),),
                keep_fds=(7, 9),
            ),
            [
                *HOST_RO,
                ("--bind", "/s"),
                *PASSWD,
                ("--bind", "/s/tree"),
                ("--bind", "/s/home"),
                ("--ro-bind", "/s/judge-ini"),
            ],
        ),
        (
            # A tree inside a read-only host directory is still writable: deeper wins.
            Box(tree=Path("/py/scratch/t"), home=Path("/h")),
            [*HOST_RO, ("--bind", "/h"), *PASSWD, ("--bind", "/py/scratch/t")],
        ),
        (
            # The judge's tmp dir the worker reads (its pytest's basetemp): read-only, deepest.
            Box(tree=Path("/s/w1"), home=Path("/s/h1"), shared=(Path("/s/tmp-1"),)),
            [
                *HOST_RO,
                *PASSWD,
                ("--bind", "/s/w1"),
                ("--bind", "/s/h1"),
                ("--ro-bind", "/s/tmp-1"),
            ],
        ),
        (
            # The tree as its own home binds once.
            Box(tree=Path("/t"), home=Path("/t")),
            [*HOST_RO, ("--bind", "/t"), *PASSWD],
        ),
    ],
)
def test_bwrap_argv(box: Box, mounts: list[tuple[str, str]]) -> None:
    middle = [word for flag, path in mounts for word in (flag, path, path)]
    epilogue = ["--remount-ro", "/", "--chdir", str(box.tree), "--", "python", "-c", "pass"]
    assert bwrap_argv(box, ["python", "-c", "pass"], HOST) == [*PROLOGUE, *middle, *epilogue]


# The judge's pytest out of process (issue 17): testrun.run's box over the judge's tree,
# HOME and scratch dir, with the run's worker box in that scratch dir (properties.py).
JUDGE = Box(
    tree=Path("/s/judge"),
    home=Path("/s/home"),
    readonly=(Path("/venv"), Path("/s/judge-ini")),
    writable=(Path("/s"),),
)
WORKER = Box(tree=Path("/s/w1"), home=Path("/s/h1"), readonly=(Path("/venv"),))


@pytest.mark.parametrize(
    ("judge", "worker", "mounts"),
    [
        (
            JUDGE,
            WORKER,
            [
                *HOST_RO,
                ("--bind", "/s"),
                ("--ro-bind", "/venv"),
                *PASSWD,
                # The worker's tree and home are mounts of their own: never renamed away.
                ("--bind", "/s/w1"),
                ("--bind", "/s/h1"),
                ("--bind", "/s/judge"),
                ("--bind", "/s/home"),
                ("--ro-bind", "/s/judge-ini"),
            ],
        ),
        (
            # A worker whose tree is its home binds it once; the code's venv, once.
            dataclasses.replace(JUDGE, readonly=(Path("/s/judge-ini"),)),
            Box(tree=Path("/s/w1"), home=Path("/s/w1"), readonly=(Path("/venv"),)),
            [
                *HOST_RO,
                ("--bind", "/s"),
                ("--ro-bind", "/venv"),
                *PASSWD,
                ("--bind", "/s/w1"),
                ("--bind", "/s/judge"),
                ("--bind", "/s/home"),
                ("--ro-bind", "/s/judge-ini"),
            ],
        ),
        (
            # The judge's basetemp (issue 17, heldout13): read-only in the worker's box, but a
            # writable mount of its own in the judge's, which cannot then swap in a link that
            # the next worker's bwrap would follow; never read-only over the judge's writes.
            JUDGE,
            dataclasses.replace(WORKER, shared=(Path("/s/tmp-1"),)),
            [
                *HOST_RO,
                ("--bind", "/s"),
                ("--ro-bind", "/venv"),
                *PASSWD,
                ("--bind", "/s/w1"),
                ("--bind", "/s/h1"),
                ("--bind", "/s/tmp-1"),
                ("--bind", "/s/judge"),
                ("--bind", "/s/home"),
                ("--ro-bind", "/s/judge-ini"),
            ],
        ),
    ],
)
def test_judge_box(judge: Box, worker: Box, mounts: list[tuple[str, str]]) -> None:
    box = sandbox.judge_box(judge, worker, 11)
    middle = [word for flag, path in mounts for word in (flag, path, path)]
    epilogue = ["--remount-ro", "/", "--chdir", "/s/judge", "--", "python", "-m", "pytest"]
    # The worker's policy, word for word: namespaces, no user namespace, capabilities.
    assert bwrap_argv(box, ["python", "-m", "pytest"], HOST) == [*PROLOGUE, *middle, *epilogue]
    # The launcher's socket reaches the judge's pytest; the worker's pipes are not its.
    assert box.keep_fds == (11,)
    assert (box.status_fd, box.judge_package) == (None, True)


_paths = st.lists(
    st.text("abc/", min_size=1, max_size=6).map(lambda s: Path("/tmp", s)), max_size=3
)


@given(tree=_paths, home=_paths, writable=_paths, readonly=_paths)
def test_only_the_box_is_writable_and_the_command_is_untouched(
    tree: list[Path], home: list[Path], writable: list[Path], readonly: list[Path]
) -> None:
    box = Box(
        tree=(tree or [Path("/tmp/t")])[0],
        home=(home or [Path("/tmp/h")])[0],
        readonly=tuple(readonly),
        writable=tuple(writable),
    )
    argv = ["prog", "--bind", "/", "/"]
    out = bwrap_argv(box, argv, HOST)
    assert out[-len(argv) - 1 :] == ["--", *argv]
    opts = out[: -len(argv) - 1]
    binds = [opts[i + 1] for i, a in enumerate(opts) if a == "--bind"]
    assert set(binds) == {str(p) for p in (box.tree, box.home, *box.writable)}
    # /tmp is private before anything lands under it; no mount covers a deeper one.
    assert opts.index("--tmpfs") < opts.index("--bind")
    flags = ("--bind", "--ro-bind", "--ro-bind-try")
    order = [Path(opts[i + 1]) for i, a in enumerate(opts) if a in flags]
    for i, earlier in enumerate(order):
        assert not any(earlier.is_relative_to(later) and earlier != later for later in order[i:])
    for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"):
        assert flag in opts
    assert opts[opts.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in opts


def test_a_root_prefix_binds_nothing_but_the_package() -> None:
    found = interpreter_paths(["/", ""], ["/repo"], Path("/usr/lib/python3/patchjudge"))
    assert found == (Path("/usr/lib/python3/patchjudge"),)


@pytest.mark.parametrize(
    ("sys_path", "bound", "not_bound"),
    [
        # An editable install imports from a checkout: only the package dir is the box's.
        (
            ["", "/py/lib/python311.zip", "/py/lib/python3.11", "/venv/lib/site-packages",
             "/work/checkout/src"],
            ["/py", "/venv", "/py/lib/python311.zip", "/venv/lib/site-packages",
             "/work/checkout/src/patchjudge"],
            ["", "/work/checkout/src", "/work/checkout"],
        ),
        # A .pth that adds another venv's site-packages; a relative entry (the cwd) never.
        (
            ["repo", "/other/venv/lib/python3.11/site-packages", "/home/u/repo"],
            ["/other/venv/lib/python3.11/site-packages"],
            ["repo", "/home/u/repo"],
        ),
    ],
)  # fmt: skip
def test_interpreter_paths(sys_path: list[str], bound: list[str], not_bound: list[str]) -> None:
    found = {str(p) for p in interpreter_paths(["/py", "/venv"], sys_path,
                                               Path("/work/checkout/src/patchjudge"))}  # fmt: skip
    assert set(bound) <= found
    assert not set(not_bound) & found


@pytest.mark.parametrize(
    ("ledger", "cli", "probe", "chosen"),
    [
        ("auto", None, None, "sandbox"),
        ("auto", None, "no bwrap", "process"),
        ("process", None, None, "process"),
        ("process", None, "no bwrap", "process"),
        ("sandbox", None, None, "sandbox"),
        ("process", "auto", None, "sandbox"),
        ("process", "auto", "no bwrap", "process"),
        ("process", "sandbox", None, "sandbox"),
        ("auto", "sandbox", None, "sandbox"),
        ("auto", "auto", "no bwrap", "process"),
        ("sandbox", "sandbox", None, "sandbox"),
    ],
)
def test_choose(ledger: str, cli: str | None, probe: str | None, chosen: str) -> None:
    assert choose(ledger, cli, probe) == chosen


@pytest.mark.parametrize(
    ("ledger", "cli", "probe", "says"),
    [
        ("sandbox", None, "bwrap is not on PATH", "apt-get install bubblewrap"),
        ("auto", "sandbox", "bwrap cannot start", "apparmor_restrict_unprivileged_userns=0"),
        ("sandbox", "process", None, "would loosen"),
        ("sandbox", "auto", None, "would loosen"),
        ("auto", "process", None, "would loosen"),
        ("jail", None, None, "not an isolation"),
        ("auto", "jail", None, "not an isolation"),
    ],
)
def test_choose_refuses(ledger: str, cli: str | None, probe: str | None, says: str) -> None:
    with pytest.raises(PatchjudgeError) as raised:
        choose(ledger, cli, probe)
    line = raised.value.one_line()
    assert says in line
    if probe is not None:  # who asked for the sandbox is named
        assert line.startswith("[gate] isolation" if ledger == "sandbox" else "--isolation")
    assert "\n" not in line


@pytest.mark.parametrize(
    ("ledger", "counted"), [("process", "auto"), ("auto", "auto"), ("sandbox", "sandbox")]
)
def test_a_ledger_at_the_head_cannot_take_the_code_out_of_the_box(
    ledger: str, counted: str
) -> None:
    assert sandbox.from_head(ledger) == counted


@pytest.mark.parametrize(("judge_package", "bound"), [(True, True), (False, False)])
def test_patchjudges_package_is_bound_only_for_a_box_that_needs_it(
    judge_package: bool, bound: bool
) -> None:
    # The judge's pytest imports its plugins from it; a worker reads its sources from stdin,
    # and a patchjudge it could import would tell it who judges it (issue 18).
    host = dataclasses.replace(HOST, package=Path("/src/patchjudge"))
    box = Box(tree=Path("/t"), home=Path("/h"), judge_package=judge_package)
    out = bwrap_argv(box, ["x"], host)
    pairs = list(itertools.pairwise(out))
    assert (("--ro-bind-try", "/src/patchjudge") in pairs) is bound


def test_without_a_box_the_argv_is_unchanged() -> None:
    with sandbox.wrapped(None, ["python", "-c", "pass"]) as (argv, fds):
        assert (argv, fds) == (["python", "-c", "pass"], ())


def test_the_filter_is_read_from_the_descriptor_named_after_the_prologue() -> None:
    argv = bwrap_argv(Box(tree=Path("/t"), home=Path("/h")), ["x"], HOST, seccomp_fd=9)
    assert argv[: len(PROLOGUE)][:8] == PROLOGUE[:8]
    assert argv[8:10] == ["--seccomp", "9"]


def test_probe_says_why_without_bwrap_on_path(tmp_path: Path) -> None:
    reason = sandbox.probe({"PATH": str(tmp_path)})
    assert reason == "bwrap is not on PATH"


# --- the real bwrap ------------------------------------------------------------


def _boxed(tmp_path: Path, code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    require_sandbox()
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    with sandbox.wrapped(Box(tree=tree, home=home), [sys.executable, "-I", "-c", code]) as (
        argv,
        fds,
    ):
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            argv, capture_output=True, text=True, timeout=60, check=False, pass_fds=fds, **kwargs
        )


def test_the_probe_starts_a_box_here() -> None:
    require_sandbox()
    assert sandbox.probe() is None


def test_a_box_writes_its_tree_and_home_and_sees_nothing_else(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    code = f"""
import os, pathlib
pathlib.Path({str(tmp_path / "tree" / "a")!r}).write_text("a")
pathlib.Path({str(tmp_path / "home" / "b")!r}).write_text("b")
print(os.path.exists({str(outside)!r}), os.path.exists({str(Path.cwd() / ".git")!r}))
for target in ("/usr/pj-probe", {sys.prefix!r} + "/pj-probe", "/pj-probe"):
    try:
        open(target, "w")
        print("wrote", target)
    except OSError as exc:
        print("refused", exc.errno)
"""
    done = _boxed(tmp_path, code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "False False"
    assert all(line.startswith("refused") for line in lines[1:]), lines
    assert (tmp_path / "tree" / "a").read_text() == "a"
    assert (tmp_path / "home" / "b").read_text() == "b"


def test_a_box_has_no_network_and_no_privilege(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"""
import os, socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
    print("connected")
except OSError:
    print("no network")
try:
    os.setuid(1000)
    print("setuid")
except OSError:
    print("no setuid")
print(open("/proc/self/status").read().count("CapEff:\\t0000000000000000"))
print(len([p for p in os.listdir("/proc") if p.isdigit()]))
"""
        done = _boxed(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["no", "network", "no", "setuid", "1", "2"]


def test_a_long_lived_process_talks_over_two_kept_pipes(tmp_path: Path) -> None:
    require_sandbox()
    to_child, from_judge = os.pipe()
    to_judge, from_child = os.pipe()
    box = Box(tree=tmp_path, home=tmp_path, keep_fds=(to_child, from_child))
    code = (
        "import os, sys\n"
        "r, w = map(int, sys.argv[1:])\n"
        "with os.fdopen(r, 'rb') as inp, os.fdopen(w, 'wb', buffering=0) as out:\n"
        "    for line in inp:\n"
        "        out.write(line.upper())\n"
    )
    with sandbox.wrapped(
        box, [sys.executable, "-I", "-c", code, str(to_child), str(from_child)]
    ) as (argv, fds):
        worker = subprocess.Popen(argv, pass_fds=fds)
    os.close(to_child)
    os.close(from_child)
    with os.fdopen(from_judge, "wb", buffering=0) as ask, os.fdopen(to_judge, "rb") as hear:
        for word in (b"ping\n", b"again\n"):
            ask.write(word)
            assert hear.readline() == word.upper()
        ask.close()
        assert hear.read() == b""
    assert worker.wait(timeout=30) == 0


def test_a_data_file_binds_read_only_at_its_judge_path_and_never_in_the_judges_box() -> None:
    # `[properties] data` (issue 17): the lane's copy, outside every box, at the path the
    # property names it by in the judge's tree; deeper than the tree, so after it.
    copy, at = Path("/c/tzif/A.tzif"), Path("/s/judge/eval/properties/tzif/A.tzif")
    worker = dataclasses.replace(WORKER, data=((copy, at),))
    argv = bwrap_argv(worker, ["python"], HOST)
    i = argv.index(str(copy))
    assert argv[i - 1 : i + 2] == ["--ro-bind", str(copy), str(at)]
    assert i > argv.index("/s/h1")
    # The judge reads its own tree: the copy is not in its box, nor a bind over its tree.
    judge = bwrap_argv(sandbox.judge_box(JUDGE, worker, 11), ["python"], HOST)
    assert str(copy) not in judge and str(at) not in judge
