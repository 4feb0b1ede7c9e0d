"""The sandbox's system-call filter: a classic BPF program bwrap installs (issue 18).

Pure: bytes out, no I/O. Default allow, with a deny list of what no test
needs and a breakout or a probe of the host does — other processes'
memory (ptrace, process_vm_*), the kernel's keyrings, eBPF, perf,
userfaultfd, modules, mounts and namespaces, the clock, io_uring, and
typing into the terminal (ioctl TIOCSTI / TIOCLINUX). nsjail and isolate
filter the same way; Docker's default profile denies the same set. A denied
call fails with EPERM, as it would for an unprivileged user, so honest code
that probes for a feature falls back instead of dying. Any other
architecture or ABI (x32, i386 on x86_64) is killed: its numbers are
another table, and a filter that does not know them must not allow them.

Layout (linux/filter.h, linux/seccomp.h): an array of `struct sock_filter`
{u16 code; u8 jt; u8 jf; u32 k}, native byte order, over `struct
seccomp_data` {int nr; u32 arch; u64 ip; u64 args[6]}.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Mapping

# x86_64 numbers (asm/unistd_64.h), checked against the header in tests.
DENIED_X86_64: Mapping[str, int] = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "keyctl": 250, "add_key": 248, "request_key": 249,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320, "reboot": 169,
    "init_module": 175, "finit_module": 313, "delete_module": 176,
    "create_module": 174, "get_kernel_syms": 177, "query_module": 178,
    "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "nfsservctl": 180,
    "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
    "iopl": 172, "ioperm": 173,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "unshare": 272, "setns": 308,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "lookup_dcookie": 212,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "vhangup": 153, "syslog": 103, "uselib": 134, "ustat": 136, "sysfs": 139,
    "_sysctl": 156,
}  # fmt: skip
IOCTL_X86_64 = 16
# ioctl requests that act on another process's terminal (asm-generic/ioctls.h).
DENIED_IOCTLS = {"TIOCSTI": 0x5412, "TIOCLINUX": 0x541C}

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
EPERM = 1

# BPF opcodes (linux/bpf_common.h): LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K.
LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
NR, ARCH, ARG1_LOW = 0, 4, 24  # offsets in seccomp_data (ioctl's request is args[1])

_INSN = struct.Struct("=HBBI")


def supported(machine: str) -> bool:
    """Whether this module has the table for `machine` (platform.machine())."""
    return machine in ("x86_64", "AMD64") and sys.byteorder == "little"


def program() -> bytes:
    """The x86_64 filter as bwrap's --seccomp reads it."""
    denied = sorted(set(DENIED_X86_64.values()))
    ioctls = sorted(DENIED_IOCTLS.values())
    # Instructions as (code, jt, jf, k); a jump's targets are labels resolved below.
    body: list[tuple[int, int | str, int | str, int]] = [
        (LD_ABS, 0, 0, ARCH),
        (JEQ, 0, "kill", AUDIT_ARCH_X86_64),
        (LD_ABS, 0, 0, NR),
        (JGE, "kill", 0, X32_SYSCALL_BIT),
    ]
    body += [(JEQ, "deny", 0, nr) for nr in denied]
    body += [(JEQ, 0, "allow", IOCTL_X86_64), (LD_ABS, 0, 0, ARG1_LOW)]
    body += [(JEQ, "deny", 0, request) for request in ioctls]
    labels = {"allow": len(body), "deny": len(body) + 1, "kill": len(body) + 2}
    body += [
        (RET, 0, 0, RET_ALLOW),
        (RET, 0, 0, RET_ERRNO | EPERM),
        (RET, 0, 0, RET_KILL_PROCESS),
    ]
    out = bytearray()
    for pc, (code, jt, jf, k) in enumerate(body):
        # A jump is relative to the next instruction; every target here is ahead.
        t = labels[jt] - pc - 1 if isinstance(jt, str) else jt
        f = labels[jf] - pc - 1 if isinstance(jf, str) else jf
        out += _INSN.pack(code, t, f, k)
    return bytes(out)
