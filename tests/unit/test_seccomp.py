"""The sandbox's system-call filter: the program as a table, and real calls in a real box."""

from __future__ import annotations

import platform
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge.boundary import sandbox, seccomp
from patchjudge.boundary.sandbox import Box
from tests.attack_helpers import require_sandbox

UNISTD = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


def evaluate(program: bytes, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """A classic-BPF interpreter for exactly the instructions the filter uses."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == seccomp.LD_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == seccomp.JEQ:
            pc += 1 + (jt if acc == k else jf)
        elif code == seccomp.JGE:
            pc += 1 + (jt if acc >= k else jf)
        elif code == seccomp.RET:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


PROGRAM = seccomp.program()
X86 = seccomp.AUDIT_ARCH_X86_64
DENY = seccomp.RET_ERRNO | seccomp.EPERM


@pytest.mark.parametrize(
    ("nr", "arch", "args", "action"),
    [
        (0, X86, (0,) * 6, seccomp.RET_ALLOW),  # read
        (59, X86, (0,) * 6, seccomp.RET_ALLOW),  # execve
        (56, X86, (0,) * 6, seccomp.RET_ALLOW),  # clone
        (101, X86, (0,) * 6, DENY),  # ptrace
        (272, X86, (0,) * 6, DENY),  # unshare
        (165, X86, (0,) * 6, DENY),  # mount
        (16, X86, (0, 0x5401, 0, 0, 0, 0), seccomp.RET_ALLOW),  # ioctl TCGETS
        (16, X86, (0, 0x5412, 0, 0, 0, 0), DENY),  # ioctl TIOCSTI
        (16, X86, (0, 0x5412 | (1 << 32), 0, 0, 0, 0), DENY),  # the kernel drops high bits
        (16, X86, (0, 0x541C, 0, 0, 0, 0), DENY),  # ioctl TIOCLINUX
        (0 | seccomp.X32_SYSCALL_BIT, X86, (0,) * 6, seccomp.RET_KILL_PROCESS),  # x32 ABI
        (0, 0x40000003, (0,) * 6, seccomp.RET_KILL_PROCESS),  # i386 on x86_64
    ],
)
def test_the_filter_decides(nr: int, arch: int, args: tuple[int, ...], action: int) -> None:
    assert evaluate(PROGRAM, nr, arch, args) == action


@given(st.integers(min_value=0, max_value=seccomp.X32_SYSCALL_BIT - 1))
def test_every_x86_64_call_is_allowed_unless_denied(nr: int) -> None:
    want = DENY if nr in seccomp.DENIED_X86_64.values() else seccomp.RET_ALLOW
    if nr == seccomp.IOCTL_X86_64:
        want = seccomp.RET_ALLOW  # a harmless request
    assert evaluate(PROGRAM, nr, X86, (0, 0x5401, 0, 0, 0, 0)) == want


@pytest.mark.skipif(not UNISTD.is_file(), reason="no kernel headers to check the table against")
def test_the_table_holds_the_kernels_numbers() -> None:
    header = UNISTD.read_text()
    numbers = dict(re.findall(r"#define __NR_(\w+) (\d+)", header))
    wrong = {
        name: (nr, numbers.get(name))
        for name, nr in seccomp.DENIED_X86_64.items()
        if numbers.get(name) != str(nr)
    }
    assert wrong == {}
    assert numbers["ioctl"] == str(seccomp.IOCTL_X86_64)


CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    got = libc.syscall(nr, *args)
    return "ok" if got >= 0 else os.strerror(ctypes.get_errno())
print("ptrace", call(101, 0, 0, 0, 0))             # PTRACE_TRACEME
print("unshare", call(272, 0x00020000))            # CLONE_NEWNS
print("keyctl", call(250, 0, -3, 0))               # KEYCTL_GET_KEYRING_ID
print("getpid", call(39))
print("spawn", os.system("true"))
"""


@pytest.mark.skipif(not seccomp.supported(platform.machine()), reason="no table for this machine")
def test_in_a_real_box_denied_calls_fail_and_ordinary_ones_work(tmp_path: Path) -> None:
    require_sandbox()
    with sandbox.wrapped(Box(tree=tmp_path, home=tmp_path), [sys.executable, "-c", CALLS]) as (
        argv,
        fds,
    ):
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, check=False, pass_fds=fds
        )
    assert done.returncode == 0, done.stderr
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert said == {
        "ptrace": "Operation not permitted",
        "unshare": "Operation not permitted",
        "keyctl": "Operation not permitted",
        "getpid": "ok",
        "spawn": "0",
    }
