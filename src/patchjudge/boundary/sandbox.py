"""The boundary around code under test: bubblewrap's argument list and when it applies.

A lane builds a `Box` for a process that runs the patch's code and passes its
argv through `wrapped`; `None` is the process-level isolation of v1 (issue 10).
`bwrap_argv` is the whole policy, pure; `host()` and `probe()` are the only
places that look at this machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import errno
import functools
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from patchjudge.boundary import ISOLATIONS, seccomp
from patchjudge.errors import PatchjudgeError


class Isolation(enum.StrEnum):
    """How a run boxes the patch's code, as decide() resolved it once for the run (issue 17).

    A str, so reports keep "sandbox" / "process"; required wherever it is
    passed, never defaulted: a missing value is an error, not `process`.
    """

    SANDBOX = "sandbox"
    PROCESS = "process"


HOW_TO_GET = (
    "install bubblewrap (apt-get install bubblewrap) or enable unprivileged user namespaces "
    "(Ubuntu 24.04: sysctl kernel.apparmor_restrict_unprivileged_userns=0)"
)

# Top-level system directories the interpreter and the tools it starts need.
# Each is bound read-only, or recreated as the same symlink (/lib -> usr/lib).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Of /etc only what a program needs to start and name users: not shadow,
# not credentials, not the host's git or pip configuration.
_ETC = (
    "passwd",
    "group",
    "hosts",
    "nsswitch.conf",
    "host.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "alternatives",
    "ssl",
    "ca-certificates",
    "mime.types",
    "os-release",
    "protocols",
    "services",
)


@dataclass(frozen=True)
class Box:
    """What one sandboxed process may touch."""

    tree: Path  # its scratch tree: bound read-write at the same path, and its cwd
    home: Path  # HOME and TMPDIR: bound read-write at the same path
    readonly: tuple[Path, ...] = ()  # further read-only binds (a venv, the judge's ini)
    # Inherited descriptors it may use (its result pipes). bwrap closes none:
    # what reaches it (subprocess's pass_fds) reaches the sandboxed process.
    keep_fds: tuple[int, ...] = ()
    # Further read-write binds: the run's own scratch files (its JUnit XML).
    writable: tuple[Path, ...] = ()
    # bwrap's --json-status-fd (in keep_fds): its "exit-code" line says the program ran, so
    # a box that failed to start is told from a program that failed (isolate's XX vs RE).
    status_fd: int | None = None
    # patchjudge's own package, bound read-only: the judge's pytest imports its plugins from
    # it; a worker, whose sources come down its stdin, needs none of it (issue 18).
    judge_package: bool = True
    # The judge's tmp dirs (its pytest's basetemp, issue 17): read-only here, at the same path.
    # The judge's own box binds them writable, each a mount of its own (judge_box).
    shared: tuple[Path, ...] = ()
    # (source, at): a file bound read-only at another path (issue 17, `[properties] data`):
    # the lane's own copy of a judge's data file, at that file's path in the judge's tree.
    # The judge's box has none of them: a source it could write, it could swap for a link.
    data: tuple[tuple[Path, Path], ...] = ()


# tree, home -> the box for a process that runs the patch's code there (None: unboxed).
Boxer = Callable[[Path, Path], "Box | None"]


def boxer(isolation: Isolation) -> Boxer:
    """The Boxer of a run whose isolation is `isolation`; any other value is an error."""
    boxed = Isolation(isolation) is Isolation.SANDBOX  # ValueError, never a fallback

    def box(tree: Path, home: Path) -> Box | None:
        return Box(tree=tree, home=home) if boxed else None

    return box


def judge_box(judge: Box, worker: Box, launcher_fd: int, second: Box | None = None) -> Box:
    """Pure: the box of the judge's own pytest out of process, beside its workers' (issue 17).

    The worker's policy (bwrap_argv) over the judge's tree and scratch: a
    property that evaluates or opens what the code returns runs the patch's
    text in this process. It also writes the worker's tree (the review's
    mutants) and its home (a script-shaped worker's file): each is a mount of
    its own there, so the judge cannot rename it away and put a link in its
    place that the next worker's box, started outside by the launcher
    (launcher.py) on `launcher_fd`, would bind; so is each tmp dir of the
    judge's that the workers see read-only (`shared`). `second`: the
    differential's box (issue 20), whose home the judge writes the same way.
    """
    others = () if second is None else (second.tree, second.home, *second.shared)
    return dataclasses.replace(
        judge,
        writable=(*judge.writable, worker.tree, worker.home, *worker.shared, *others),
        readonly=tuple(
            dict.fromkeys((*judge.readonly, *worker.readonly, *(second.readonly if second else ())))
        ),
        keep_fds=(*judge.keep_fds, launcher_fd),
    )


@dataclass(frozen=True)
class Host:
    """What of this machine a box sees: system binds, symlinks, the judge's interpreter."""

    bwrap: str
    readonly: tuple[Path, ...]  # bound read-only at the same path, when present
    symlinks: tuple[tuple[str, Path], ...] = ()  # (target, link): /lib -> usr/lib
    # The machine's own name: a fixed one would tell the code it is being judged (issue 18).
    hostname: str = "localhost"
    package: Path | None = None  # patchjudge's own package directory (Box.judge_package)


def bwrap_argv(
    box: Box, argv: Sequence[str], host: Host, seccomp_fd: int | None = None
) -> list[str]:
    """Pure: the bwrap command line that runs `argv` inside `box`.

    Order matters to bwrap: a mount made later covers what an earlier one
    put at or below its path, so /tmp is a fresh tmpfs before anything under
    it is bound, and deeper binds come after shallower ones.
    """
    out = [host.bwrap]
    # --unshare-all takes the user namespace only "if possible": ask for it
    # outright, so a box never silently shares the caller's user namespace.
    out += ["--unshare-all", "--unshare-user", "--disable-userns"]
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if seccomp_fd is not None:  # the filter bwrap reads from it before the exec
        out += ["--seccomp", str(seccomp_fd)]
    out += ["--hostname", host.hostname]
    if box.status_fd is not None:
        out += ["--json-status-fd", str(box.status_fd)]
    out += ["--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    for target, link in host.symlinks:
        out += ["--symlink", target, str(link)]
    mounts = [("--ro-bind-try", path, path) for path in host.readonly]
    if box.judge_package and host.package is not None:
        mounts.append(("--ro-bind-try", host.package, host.package))
    mounts += [("--bind", p, p) for p in dict.fromkeys([*box.writable, box.tree, box.home])]
    mounts += [("--ro-bind", path, path) for path in (*box.readonly, *box.shared)]
    mounts += [("--ro-bind", source, at) for source, at in box.data]
    # Ancestors first (a stable sort: the box's own entries after the host's at
    # one depth), so every path has the mode of its most specific entry: a
    # read-only ini inside the writable scratch dir, a tree inside anything.
    for flag, source, at in sorted(mounts, key=lambda m: len(m[2].parts)):
        out += [flag, str(source), str(at)]
    # The root itself is bwrap's tmpfs: nothing may be left there either.
    out += ["--remount-ro", "/", "--chdir", str(box.tree), "--", *argv]
    return out


def interpreter_paths(
    prefixes: Sequence[str], sys_path: Sequence[str], package: Path | None = None
) -> tuple[Path, ...]:
    """Pure: what of the judge's interpreter a box binds read-only.

    The prefixes (the base interpreter, the venv), the sys.path entries that
    are installed code (under a prefix, or a site-packages of another venv a
    .pth adds), and patchjudge's own package directory when given, never the
    folder it sits in: an editable install imports from a checkout, and the rest of
    that checkout is not the box's.
    """
    # A prefix of "/" (some container images) would bind the whole machine.
    roots = [Path(p) for p in prefixes if p and Path(p) != Path("/")]
    found = list(roots)
    for entry in sys_path:
        if not entry or not Path(entry).is_absolute():
            continue
        path = Path(entry)
        installed = path.name in ("site-packages", "dist-packages") or path.suffix == ".zip"
        if installed or any(path.is_relative_to(r) for r in roots):
            found.append(path)
    if package is not None:
        found.append(package)
    return tuple(dict.fromkeys(found))


def host(environ: Mapping[str, str] | None = None) -> Host | None:
    """This machine's side of every box; None when no bwrap is on PATH."""
    env = os.environ if environ is None else environ
    found = shutil.which("bwrap", path=env.get("PATH", os.defpath))
    if found is None:
        return None
    return _host(found)


@functools.cache
def _host(bwrap: str) -> Host:
    symlinks: list[tuple[str, Path]] = []
    readonly: list[Path] = []
    for name in _SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            symlinks.append((str(path.readlink()), path))
        elif path.is_dir():
            readonly.append(path)
    readonly += [Path("/etc", name) for name in _ETC if os.path.lexists(Path("/etc", name))]
    prefixes = [sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix]
    # The interpreter's real home too, when the venv reaches it through a symlink.
    prefixes += [str(Path(p).resolve()) for p in list(prefixes)]
    package = Path(__file__).resolve().parent.parent  # patchjudge/, not boundary/
    readonly += interpreter_paths(prefixes, sys.path)
    return Host(
        bwrap=bwrap,
        readonly=tuple(p for p in dict.fromkeys(readonly) if p != package),
        symlinks=tuple(symlinks),
        hostname=socket.gethostname() or "localhost",
        package=package,
    )


def _filter_fd() -> int | None:
    """A fresh descriptor holding the system-call filter (bwrap reads it to the end)."""
    if not seccomp.supported(platform.machine()):
        return None
    data = seccomp.program()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # a few hundred bytes: well inside a pipe's buffer
    finally:
        os.close(write_end)
    return read_end


@contextlib.contextmanager
def wrapped(box: Box | None, argv: Sequence[str]) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """argv to run inside `box` and the descriptors the child must inherit (`pass_fds`).

    Without a box, argv unchanged. A box with no bwrap to run it is a bug of
    the caller's (the run chose "sandbox" after probe() said it works), never
    a silent fallback.
    """
    if box is None:
        yield list(argv), ()
        return
    found = host()
    if found is None:
        raise PatchjudgeError("bwrap is no longer on PATH", key="[gate] isolation", fix=HOW_TO_GET)
    fd = _filter_fd()
    try:
        fds = (*box.keep_fds, *(() if fd is None else (fd,)))
        yield bwrap_argv(box, argv, found, fd), fds
    finally:
        if fd is not None:
            os.close(fd)


@dataclass(frozen=True)
class NoSandbox:
    """Why no box starts here, as the probe step that failed found it (issue 19).

    `step` is data the caller may branch on; `detail` is what that step was
    told (the kernel's strerror, bwrap's own last line), never parsed.
    """

    step: str  # "bwrap" (not on PATH) | "userns" (the kernel refused one) | "start" (bwrap failed)
    detail: str

    def line(self) -> str:
        return self.detail


# An interpreter that asks the kernel for a user namespace, as bwrap will, and
# prints the errno it got (0: granted): the kernel's answer as a number. Its
# exit code is not the answer: a crash exits 1, which is also EPERM.
_UNSHARE_USER = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "print(0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno())\n"
)
_APPARMOR_USERNS = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def _sysctl_note() -> str:
    """Ubuntu 24.04's AppArmor switch, when it is on: the usual cause bwrap cannot name."""
    try:
        on = _APPARMOR_USERNS.read_text().strip() == "1"
    except OSError:
        return ""
    return " (kernel.apparmor_restrict_unprivileged_userns = 1)" if on else ""


def _userns_refused(python: str) -> NoSandbox | None:
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", _UNSHARE_USER], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # no answer is no evidence: bwrap's own start decides
    answer = done.stdout.strip()
    if done.returncode != 0 or not answer.isdigit():
        return None
    code = int(answer)
    if code == 0 or code not in errno.errorcode:
        return None
    said = f"{os.strerror(code)} ({errno.errorcode[code]})"
    return NoSandbox(
        "userns", f"the kernel refuses user namespaces: unshare: {said}{_sysctl_note()}"
    )


@functools.cache
def _probe(bwrap: str | None, python: str) -> NoSandbox | None:
    if bwrap is None:
        return NoSandbox("bwrap", "bwrap is not on PATH")
    refused = _userns_refused(python)
    if refused is not None:
        return refused
    with tempfile.TemporaryDirectory(prefix="patchjudge-probe-") as tmp:
        box = Box(tree=Path(tmp), home=Path(tmp))
        # The judge's own interpreter, not `true`: a box that cannot start it
        # cannot run a single lane either.
        fd = _filter_fd()
        argv = bwrap_argv(box, [python, "-I", "-S", "-c", "pass"], _host(bwrap), fd)
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=30,
                check=False,
                pass_fds=() if fd is None else (fd,),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return NoSandbox("start", f"bwrap did not start: {exc}")
        finally:
            if fd is not None:
                os.close(fd)
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return NoSandbox("start", f"bwrap cannot start a sandbox here: {tail[0]}{_sysctl_note()}")
    return None


def why_not(environ: Mapping[str, str] | None = None) -> NoSandbox | None:
    """None when a box really starts here (tried once per process), else which step failed."""
    env = os.environ if environ is None else environ
    return _probe(shutil.which("bwrap", path=env.get("PATH", os.defpath)), sys.executable)


def probe(environ: Mapping[str, str] | None = None) -> str | None:
    """None when a box really starts here, else why not, in one line."""
    found = why_not(environ)
    return None if found is None else found.line()


def check_isolation(value: str, key: str, file: str | None = None) -> str:
    if value not in ISOLATIONS:
        raise PatchjudgeError(
            f"{value!r} is not an isolation", file=file, key=key, fix="sandbox, auto or process"
        )
    return value


def choose(ledger_value: str, cli_value: str | None, probe_reason: str | None) -> Isolation:
    """Pure: "sandbox" or "process", from the ledger, --isolation and what probe() said.

    --isolation may tighten the ledger (process < auto < sandbox), never
    loosen it: a command line that asks for less than the judge is refused
    rather than quietly overruled.
    """
    check_isolation(ledger_value, "gate.isolation")
    wanted = ledger_value
    if cli_value is not None:
        check_isolation(cli_value, "--isolation")
        if ISOLATIONS.index(cli_value) < ISOLATIONS.index(ledger_value):
            raise PatchjudgeError(
                f"{cli_value!r} would loosen [gate] isolation = {ledger_value!r}",
                key="--isolation",
                fix=f"pass --isolation {ledger_value} or tighter, or change the ledger",
            )
        wanted = cli_value
    if wanted == "process":
        return Isolation.PROCESS
    if probe_reason is None:
        return Isolation.SANDBOX
    if wanted == "auto":
        return Isolation.PROCESS
    asked = "[gate] isolation" if ledger_value == "sandbox" else "--isolation"
    raise PatchjudgeError(f"isolation 'sandbox' but {probe_reason}", key=asked, fix=HOW_TO_GET)


def from_head(ledger_value: str) -> str:
    """Pure: a ledger read at a revision the patch may have written may tighten, not loosen.

    `flakes` and `oracle` read the ledger at the revision they run; a patch
    that sets `isolation = "process"` there must not take its own code out
    of the box: below "auto" counts as "auto".
    """
    check_isolation(ledger_value, "gate.isolation")
    return ledger_value if ISOLATIONS.index(ledger_value) >= ISOLATIONS.index("auto") else "auto"


@dataclass(frozen=True)
class Decision:
    """How one run boxes the patch's code, and why it is weaker than asked, when it is."""

    value: Isolation
    fallback: str | None = None  # "auto" found no sandbox: the probe's reason


def fallback_line(reason: str) -> str:
    """The one stderr line of a run that `auto` took out of the box (issue 19)."""
    return (
        f"patchjudge: isolation 'auto' runs the patch's code without a sandbox: {reason};"
        f' set [gate] isolation = "sandbox" to stop instead, or {HOW_TO_GET}'
    )


# Set by init's noxfile for the processes of a nox run whose `isolation` session
# has just started a box here: with "sandbox" asked, each lane and the boxed
# build then skip their own probe (two interpreters and a box, issue 19).
# Never for "auto", whose choice is the probe's. Wrongly set, it cannot take
# code out of the box: the boxes fail to start instead of the probe saying so.
STARTED = "PATCHJUDGE_SANDBOX_STARTED"


def decide(
    ledger_value: str,
    cli_value: str | None,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> Decision:
    """choose() with a probe only when the answer can depend on it.

    A fallback is never silent: it is printed on `err` (default: the
    stderr of the moment) and kept in the record, so every lane report (and
    the verdict) carries the reason.
    """
    env = os.environ if environ is None else environ
    wanted = cli_value if cli_value is not None else ledger_value
    started = wanted == "sandbox" and env.get(STARTED) == "1"
    reason = probe(env) if wanted != "process" and not started else None
    value = choose(ledger_value, cli_value, reason)
    fallback = reason if value == "process" and wanted == "auto" else None
    if fallback is not None:
        print(fallback_line(fallback), file=err or sys.stderr, flush=True)
    return Decision(value, fallback)


def resolve(ledger_value: str, cli_value: str | None) -> Isolation:
    """decide()'s value: "sandbox" or "process" (a fallback is printed on stderr)."""
    return decide(ledger_value, cli_value).value
