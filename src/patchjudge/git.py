"""Every git call: refs, merge base, the raw diff, blobs and scratch trees."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchjudge import proc
from patchjudge.errors import GitError
from patchjudge.paths import Change

ZERO = "0" * 40
_PIPE_SIZE = 1 << 20


def no_git_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment minus GIT_* (a hook's GIT_DIR must not leak in)."""
    env = {k: v for k, v in environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Blob bytes are judged as stored: no replace refs, no grafted history.
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    # GIT_NO_REPLACE_OBJECTS leaves .git/info/grafts alone: a graft written
    # in the checkout re-parented the patch onto an older, weaker judge.
    env["GIT_GRAFT_FILE"] = os.devnull
    return env


def _argv(repo: Path, args: tuple[str, ...]) -> list[str]:
    return ["git", "-C", str(repo), "-c", "core.quotepath=false", *args]


def git(repo: Path, *args: str, stdin: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
    # Uncapped: a 10,000-file diff or ls-tree is more than proc's 1 MiB default,
    # and a truncated listing would parse as a different change set.
    result = proc.run(_argv(repo, args), env=no_git_env(os.environ), stdin=stdin, output_cap=None)
    if result.returncode not in ok:
        raise GitError(result.describe(), file=str(repo))
    return result.stdout


def toplevel(path: Path) -> Path:
    result = proc.run(_argv(path, ("rev-parse", "--show-toplevel")), env=no_git_env(os.environ))
    if result.returncode != 0:
        raise GitError(
            "not a git repository", file=str(path), fix="run patchjudge inside a checkout"
        )
    return Path(result.stdout.decode().strip())


def rev_parse(repo: Path, ref: str, what: str = "--base") -> str:
    result = proc.run(
        _argv(repo, ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")),
        env=no_git_env(os.environ),
    )
    if result.returncode != 0:
        raise GitError(
            f"unknown revision {ref!r}",
            key=what,
            fix=f"fetch it (git fetch origin) or pass another {what}",
        )
    return result.stdout.decode().strip()


def merge_base(repo: Path, base: str, head: str) -> str:
    result = proc.run(_argv(repo, ("merge-base", base, head)), env=no_git_env(os.environ))
    if result.returncode == 0:
        return result.stdout.decode().strip()
    shallow = git(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"
    fix = (
        "fetch more history: git fetch --unshallow (or actions/checkout with fetch-depth: 0)"
        if shallow
        else "the two revisions share no history; pass the branch the patch was made from"
    )
    raise GitError(f"no merge base between {base[:12]} and {head[:12]}", key="--base", fix=fix)


def parse_raw_diff(data: bytes) -> list[Change]:
    """Pure: `git diff --raw -z` output -> records. Paths may hold any byte but NUL."""
    fields = data.split(b"\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode("ascii").lstrip(":").split()
        old_mode, new_mode, status = meta[0], meta[1], meta[4]
        letter = status[0]
        first = os.fsdecode(fields[i + 1])
        if letter in "RC":
            second = os.fsdecode(fields[i + 2])
            changes.append(Change(letter, old_mode, new_mode, first, second))
            i += 3
        else:
            old = None if letter == "A" else first
            new = None if letter == "D" else first
            changes.append(Change(letter, old_mode, new_mode, old, new))
            i += 2
    return changes


def diff(repo: Path, base: str, head: str) -> list[Change]:
    out = git(
        repo,
        "diff",
        "--raw",
        "-z",
        "-M",
        "-C",
        "--no-abbrev",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        base,
        head,
        "--",
    )
    return parse_raw_diff(out)


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str  # blob, tree, commit
    sha: str
    path: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"


_listed: dict[tuple[str, str, tuple[str, ...]], tuple[TreeEntry, ...]] = {}


def ls_tree(repo: Path, rev: str, paths: tuple[str, ...] = ()) -> list[TreeEntry]:
    # A commit id names one tree forever: its listing is made once a process
    # (three lanes list head). A ref (HEAD, main) may move, so it is not kept.
    key = (str(repo), rev, paths)
    if key in _listed:
        return list(_listed[key])
    entries = _ls_tree(repo, rev, paths)
    if _is_sha(rev):
        _listed[key] = tuple(entries)
    return entries


def _is_sha(rev: str) -> bool:
    return len(rev) in (40, 64) and all(c in "0123456789abcdef" for c in rev)


def _ls_tree(repo: Path, rev: str, paths: tuple[str, ...]) -> list[TreeEntry]:
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *paths)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.decode("ascii").split()
        entries.append(TreeEntry(mode, kind, sha, os.fsdecode(path)))
    return entries


def show(repo: Path, rev: str, path: str) -> bytes | None:
    """The bytes of `path` at `rev`, or None when it is not there (or is no blob)."""
    name = f"{rev}:{path}"
    if "\n" in name:
        return _show_alone(repo, name)  # --batch reads one object name a line
    return _batch(repo).read(name)


def _show_alone(repo: Path, name: str) -> bytes | None:
    result = proc.run(
        _argv(repo, ("cat-file", "blob", name)),
        env=no_git_env(os.environ),
        output_cap=None,  # a judge file over 1 MiB (a big lock) must come back whole
    )
    return result.stdout if result.returncode == 0 else None


class _Batch:
    """One `git cat-file --batch` for the whole run: every blob read, one process (issue 20).

    A blob per `git show` was 18 processes a gate run; this is one, closed
    cleanly (stdin closed, exit awaited) by close_all().
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.process = subprocess.Popen(
            _argv(repo, ("cat-file", "--batch")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=no_git_env(os.environ),
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        # A 1 MiB pipe instead of 64 KiB: a large blob streams in 16x fewer
        # wake-ups of git and of us (issue 7). Best effort; Linux only.
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(self.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        self.broken = False
        self.streaming: int | None = None  # the thread inside stream(), if any

    def _header(self, name: str) -> tuple[str, int] | None:
        """(type, size) of the next object, None when git has no such object."""
        line = self.stdout.readline()
        fields = line.split()
        if len(fields) == 2 and fields[1] in (b"missing", b"ambiguous"):
            return None
        if len(fields) != 3:
            self.broken = True
            raise GitError(f"cannot read object {name}", file=str(self.repo))
        return fields[1].decode("ascii"), int(fields[2])

    def read(self, name: str) -> bytes | None:
        if self.streaming == threading.get_ident():
            return _show_alone(self.repo, name)  # inside a stream of this thread's
        with self.lock:
            try:
                self.stdin.write(f"{name}\n".encode())
                self.stdin.flush()
                header = self._header(name)
                if header is None:
                    return None
                kind, size = header
                data = self.stdout.read(size)
                self.stdout.read(1)  # the LF after each object
            except (OSError, ValueError):
                self.broken = True
                raise GitError(f"cannot read object {name}", file=str(self.repo)) from None
            if len(data) != size:
                self.broken = True
                raise GitError(f"git cat-file ended early reading {name}", file=str(self.repo))
            return data if kind == "blob" else None

    def stream(self, shas: list[str]) -> Iterator[tuple[str, Callable[[int], bytes], int]]:
        """(sha, read, size) per blob; the caller reads exactly `size` bytes before the next.

        The names are fed from a thread while the answers are read: a long
        list would otherwise fill both pipes and stall git and us alike.
        """
        if self.streaming == threading.get_ident():
            # This thread is inside a stream already (a read inside a read):
            # a process of its own rather than a deadlock.
            other = _Batch(self.repo)
            try:
                yield from other.stream(shas)
            finally:
                other.close()
            return
        self.lock.acquire()
        self.streaming = threading.get_ident()
        try:
            stdin = self.stdin

            def feed() -> None:
                with contextlib.suppress(OSError, ValueError):
                    stdin.write("".join(f"{s}\n" for s in shas).encode())
                    stdin.flush()

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            done = 0
            try:
                for sha in shas:
                    header = self._header(sha)
                    if header is None:
                        self.broken = True
                        raise GitError(f"cannot read object {sha}", file=str(self.repo))
                    yield sha, self.stdout.read, header[1]
                    self.stdout.read(1)  # the LF after each object
                    done += 1
            finally:
                if done != len(shas):
                    # Left mid-stream: the answers still in the pipe belong to no one.
                    self.broken = True
                    self.process.kill()
                writer.join()
        finally:
            self.streaming = None
            self.lock.release()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stdin.close()
        if self.broken:
            self.process.kill()
        try:
            self.process.wait(
                timeout=10
            )  # git exits on EOF at once; a hung one is no reason to hang
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError, ValueError):
            self.stdout.close()


_batches: dict[str, _Batch] = {}
_batches_lock = threading.Lock()


def _batch(repo: Path) -> _Batch:
    key = str(repo)
    with _batches_lock:
        found = _batches.get(key)
        # A forked child shares the parent's pipes: it opens its own.
        if found is None or found.broken or found.pid != os.getpid():
            if found is not None and found.pid == os.getpid():
                found.close()
            found = _batches[key] = _Batch(repo)
        return found


def batch_pid(repo: Path) -> int | None:
    """The pid of the cat-file process serving `repo`'s reads (for tests and benches)."""
    found = _batches.get(str(repo))
    return None if found is None or found.pid != os.getpid() else found.process.pid


def close_all() -> None:
    """Close every cat-file process of this process: stdin closed, exit awaited."""
    with _batches_lock:
        for found in _batches.values():
            if found.pid == os.getpid():
                found.close()
        _batches.clear()


atexit.register(close_all)


def _blobs(repo: Path, shas: list[str]) -> Iterator[tuple[str, Callable[[int], bytes], int]]:
    """Stream blobs through the run's `git cat-file --batch`: (sha, read, size) each.

    A streaming pipe, so a 1 GiB fixture never sits in memory whole; this is
    the one git call that does not go through proc.run for that reason.
    """
    if not shas:
        return
    yield from _batch(repo).stream(shas)


def iter_blobs(repo: Path, shas: list[str]) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(sha, chunks) per blob, streamed; exhaust each chunk iterator before the next."""
    for sha, read, size in _blobs(repo, shas):
        chunks = _chunks(read, size)
        yield sha, chunks
        for _ in chunks:  # whatever the consumer left unread
            pass


def materialize(
    repo: Path, rev: str, dest: Path, entries: list[TreeEntry] | None = None
) -> list[TreeEntry]:
    """Write the tree of `rev` (or just `entries`) under dest, byte for byte.

    Blobs come from the object store, not a checkout: no smudge filters, no
    eol conversion, no export-subst, so .gitattributes in the patch cannot
    change what is judged.
    """
    if entries is None:
        entries = ls_tree(repo, rev)
    dest.mkdir(parents=True, exist_ok=True)
    blobs = [e for e in entries if e.kind == "blob" and _safe(e.path)]
    for e in entries:
        if e.kind == "commit" and _safe(e.path):  # a submodule: an empty directory
            (dest / e.path).mkdir(parents=True, exist_ok=True)
    by_sha: dict[str, list[TreeEntry]] = {}
    for e in blobs:
        by_sha.setdefault(e.sha, []).append(e)
    for sha, read, size in _blobs(repo, list(by_sha)):
        targets = by_sha[sha]
        links = [e for e in targets if e.is_symlink]
        files = [e for e in targets if not e.is_symlink]
        if links:
            data = read(size)
            for e in links:
                _place(dest, e).symlink_to(os.fsdecode(data))
            for e in files:
                _write(_place(dest, e), [data], e.mode)
        else:
            first = _place(dest, files[0])
            _write(first, _chunks(read, size), files[0].mode)
            for e in files[1:]:
                _write(_place(dest, e), [first.read_bytes()], e.mode)
    return entries


def _chunks(read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
    left = size
    while left:
        chunk = read(min(left, 1 << 20))
        if not chunk:
            raise GitError("git cat-file ended early")
        left -= len(chunk)
        yield chunk


def _safe(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and ".git" not in parts


def _place(dest: Path, e: TreeEntry) -> Path:
    target = dest / e.path
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _write(path: Path, chunks: Iterator[bytes] | list[bytes], mode: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    perm = 0o755 if mode == "100755" else 0o644
    fd = os.open(path, flags, perm)
    with os.fdopen(fd, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
    if mode == "100755":
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def diff_blobs(repo: Path, old: str, new: str) -> bytes:
    """`git diff -U0` between two blob ids: the hunks the review reads (issue 14).

    The algorithm and heuristics are named, not taken from the user's git
    config, so two hosts find the same changed lines.
    """
    return git(
        repo,
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--diff-algorithm=histogram",
        "--indent-heuristic",
        "--inter-hunk-context=0",
        old,
        new,
    )


def count_status(porcelain_z: bytes) -> int:
    """Pure: how many paths `git status --porcelain -z` lists (a rename's source is not one)."""
    fields = porcelain_z.split(b"\0")
    count = 0
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        count += 1
        if entry[:1] in (b"R", b"C") or entry[1:2] in (b"R", b"C"):
            i += 1  # -z puts the rename's source in the next field
    return count


def uncommitted(repo: Path, exclude: Path | None = None) -> int:
    """Changes and untracked files in the working tree (ignored ones aside), less `exclude`."""
    spec = ["--", "."]
    if exclude is not None and exclude.resolve().is_relative_to(repo.resolve()):
        rel = exclude.resolve().relative_to(repo.resolve()).as_posix()
        if rel != ".":
            spec.append(f":(exclude,top){rel}")
    return count_status(git(repo, "status", "--porcelain=v1", "-z", *spec))


def checkout_attributes(
    repo: Path, rev: str, paths: Sequence[str], names: Sequence[str]
) -> dict[str, dict[str, str]]:
    """path -> attribute -> value (`set`, `unset`, `unspecified` or the value) as a
    checkout of `rev` would apply them: its own `.gitattributes` files (macros too),
    read from a scratch index of `rev`, never from the working tree."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**no_git_env(os.environ), "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        for args in (("read-tree", rev), ("check-attr", "--cached", "-z", "--stdin", *names)):
            stdin = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
            result = proc.run(
                _argv(repo, ("-c", "core.attributesFile=/dev/null", *args)),
                env=env,
                stdin=stdin if args[0] == "check-attr" else None,
                output_cap=None,
            )
            if result.returncode != 0:
                raise GitError(result.describe(), file=str(repo))
    fields = result.stdout.split(b"\0")
    found: dict[str, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        path = fields[i].decode("utf-8", "surrogateescape")
        found.setdefault(path, {})[fields[i + 1].decode()] = fields[i + 2].decode()
    return found
