"""The lanes' scratch trees: every blob written once per gate run, every tree its own.

A 40,000-file repository made each gate run write its whole tree five
times (issue 12). Here one gate run keeps a store of the blobs its trees
need, each written once from the object store, and each lane's tree is a
private set of directories whose files are taken from that store: a hard
link, a copy-on-write clone, or a copy. How depends on who could write the
shared file through the lane's tree (`choose`, pure): that decides whether a
file one lane's tested code writes could reach another lane.

Sandboxed as root, the store's files may outlive the run (issue 20: writing
40,000 files was ~9 CPU-s of kernel time a run): see `shared_blobs`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import os
import shutil
import stat
import tempfile
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchjudge import git

# The overflow uid: not mapped into the sandbox's user namespace, so a
# sandboxed process can neither write nor chmod a file it owns.
NOBODY = 65534
_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
# A store kept across runs that holds more files than this is emptied by the
# next run that finds no other run using it: a cache, bounded, never pruned under
# a run that may be linking from it.
PRUNE_OVER = 200_000


@dataclass(frozen=True)
class Strategy:
    """How a lane's tree takes its files from the run's store."""

    place: str  # "link" | "clone" | "copy"
    # Store files chowned to NOBODY and made read-only: a sandboxed process
    # that reaches one through its link can neither write nor chmod it.
    lock: bool

    def __str__(self) -> str:
        return f"{self.place}{' read-only' if self.lock else ''}"


def choose(isolation: str, euid: int, *, can_link: bool, can_clone: bool) -> Strategy:
    """Pure: the cheapest way to give each lane its own tree that keeps lanes apart.

    Whatever the choice, the store is checked before any tree takes a file
    (`Store.check`): code that is not sandboxed can reach the store's path,
    and the gate itself edits trees (a mutant); what was written there is
    hashed again and rewritten, never shared.

    - sandboxed, gate run as root, links work: hard links to files owned by
      NOBODY, mode 0444 (the sandbox maps its uid to the caller's; NOBODY is
      not mapped, so it cannot write or chmod them; it may unlink its own link);
    - clones where the filesystem makes them (btrfs, xfs): private from the
      first write, at the cost of a link;
    - not sandboxed, links work: hard links. The tested code runs as the
      gate's user and can reach the store's path whatever the trees are made
      of, so a copy would be no safer: the check is what keeps lanes apart,
      and a link costs a directory entry where a copy writes the bytes;
    - otherwise copies (sandboxed but not root: the caller's own files stay
      writable inside the box, so a link would share a write).
    """
    sandboxed = isolation == "sandbox"
    if sandboxed and euid == 0 and can_link:
        return Strategy("link", lock=True)
    if can_clone:
        return Strategy("clone", lock=False)
    if can_link and not sandboxed:
        return Strategy("link", lock=False)
    return Strategy("copy", lock=False)


def probe(directory: Path) -> tuple[bool, bool]:
    """(hard links work, clones work) between two files in `directory`."""
    src, linked, cloned = (
        directory / ".probe",
        directory / ".probe-link",
        directory / ".probe-clone",
    )
    src.write_bytes(b"probe")
    can_link = can_clone = False
    try:
        with contextlib.suppress(OSError):
            os.link(src, linked)
            can_link = True
        with contextlib.suppress(OSError), src.open("rb") as a, cloned.open("wb") as b:
            fcntl.ioctl(b.fileno(), _FICLONE, a.fileno())
            can_clone = True
    finally:
        for path in (src, linked, cloned):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return can_link, can_clone


def blob_id(sha: str, data_chunks: Iterable[bytes], size: int) -> str:
    """Pure: git's object id of a blob (SHA-1, or SHA-256 in a sha256 repository)."""
    h = hashlib.sha256() if len(sha) == 64 else hashlib.sha1()
    h.update(b"blob %d\0" % size)
    for chunk in data_chunks:
        h.update(chunk)
    return h.hexdigest()


def placeable(path: str) -> bool:
    """Pure: a tree path that stays inside the tree (no absolute path, `..` or `.git`)."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and ".git" not in parts


class Store:
    """One run's blobs on disk, each written once; made lazily, removed at exit.

    Mutable by design: it is the run's cache of what it has written. Its own
    directory (trash, new files) is a fresh 0700 temporary one, never shared.
    The blob files live there too, or, sandboxed as root with a judge cache,
    in the cache's `blobs` directory (`shared_blobs`), where a run trusts no
    file it did not write before it has hashed it.
    """

    def __init__(self) -> None:
        self._root: Path | None = None
        self._strategy: Strategy | None = None
        # Where the blob files are when they outlive the run; None: `_root`.
        self._shared: Path | None = None
        # Closes the flock's descriptor (a shared lock on the kept store while in use).
        self._unlock: Callable[[], object] | None = None
        self._files: set[str] = set()  # keys written or hashed this run: "<sha>.<x|r>"
        self._targets: dict[str, bytes] = {}  # symlink blobs: sha -> target
        # Each store file's stamp as the gate last left it.
        self._stamps: dict[str, _Stamp] = {}

    def strategy(self, isolation: str, keep_in: Path | None = None) -> Strategy:
        """How trees take their files; `keep_in` (the judge's cache) may keep them across runs."""
        if self._strategy is None:
            can_link, can_clone = probe(self._dir())
            self._strategy = choose(isolation, os.geteuid(), can_link=can_link, can_clone=can_clone)
            if self._strategy.lock and keep_in is not None:
                kept = shared_blobs(keep_in, self._dir())
                if kept is not None:
                    self._shared = kept[0]
                    self._unlock = weakref.finalize(self, os.close, kept[1])
        return self._strategy

    def _blobs(self) -> Path:
        return self._shared if self._shared is not None else self._dir()

    def _dir(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="patchjudge-blobs-"))
            (self._root / "trash").mkdir()
            weakref.finalize(self, remove_later, self._root)
        return self._root

    def discard(self, scratch: Path) -> None:
        """Remove a scratch directory: moved aside now, deleted when the run ends.

        Deleting a 40,000-file tree costs seconds on a disk that discards
        freed blocks (ext4 `-o discard` here: 2.7 ms a directory), and every
        unlink of a link moves the ctime of the store file it shared, which
        `check` would then hash again. A rename into the store's trash does
        neither; the trash goes with the store, after the verdict.
        """
        if self._root is not None:
            with contextlib.suppress(OSError):
                scratch.rename(self._root / "trash" / scratch.name)
                return
        shutil.rmtree(scratch, ignore_errors=True)
        self.restamp()  # the gate's own unlinks, not the tested code's

    def close(self) -> None:
        if self._root is not None:
            remove_later(self._root)
        if self._unlock is not None:
            self._unlock()  # once: a finalizer runs at most once
        self._root, self._files, self._targets, self._stamps = None, set(), {}, {}
        self._shared = self._unlock = self._strategy = None

    def check(self) -> None:
        """Drop every store file whose bytes or mode are no longer its blob's.

        Call it before the gate itself links or unlinks store files: a stamp
        that moved since `restamp` was then moved by the tested code (a
        write, a chmod, a replaced file; ctime cannot be set back), and only
        those files are hashed again.
        """
        if self._root is None or self._strategy is None:
            return
        store = os.fspath(self._blobs())
        moved = {k for k, st in self._stamps.items() if _stamp(f"{store}/{k}") != st}
        self._drop_tampered(moved)

    def restamp(self) -> None:
        """Record the store's stamps after the gate's own links and unlinks."""
        if self._root is None or self._strategy is None:
            return
        store = os.fspath(self._blobs())
        self._stamps = {k: st for k in self._files if (st := _stamp(f"{store}/{k}")) is not None}

    def place(
        self,
        repo: Path,
        dest: Path,
        entries: Sequence[git.TreeEntry],
        isolation: str,
        keep_in: Path | None = None,
    ) -> None:
        """Make `dest` a tree of exactly `entries`: directories its own, files from the store."""
        how = self.strategy(isolation, keep_in)
        files = [e for e in entries if e.kind == "blob" and not e.is_symlink]
        links = [e for e in entries if e.kind == "blob" and e.is_symlink]
        wanted = {_key(e) for e in files}
        self.check()
        self._fetch(repo, wanted - self._files, {e.sha for e in links} - self._targets.keys(), how)
        dest.mkdir(parents=True, exist_ok=True)
        top = os.fspath(dest)
        made = {top}
        for e in entries:
            if e.kind == "commit":  # a submodule: an empty directory
                _makedirs(f"{top}/{e.path}", made)
        store = os.fspath(self._blobs())
        place = how.place
        for e in files:
            target = f"{top}/{e.path}"
            _makedirs(target.rpartition("/")[0], made)
            place = _take(f"{store}/{_key(e)}", target, place, e.mode)
        # Links last: no file above is ever written through one of them.
        for e in links:
            target = f"{top}/{e.path}"
            _makedirs(target.rpartition("/")[0], made)
            os.symlink(os.fsdecode(self._targets[e.sha]), target)  # noqa: PTH211 (strings: 40,000 files)
        self.restamp()

    def _drop_tampered(self, keys: set[str]) -> None:
        store = self._blobs()
        lock = self._strategy is not None and self._strategy.lock
        for key in sorted(keys):
            path = store / key
            if not _intact(path, key, lock):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                self._files.discard(key)
                self._stamps.pop(key, None)

    def _fetch(self, repo: Path, keys: set[str], link_shas: set[str], how: Strategy) -> None:
        shared = os.fspath(self._shared) if self._shared is not None else ""
        if shared:
            # An earlier run's file is used only once this run has hashed it: whatever
            # wrote it (a crashed run, a tested process of a run left unboxed as root),
            # what a tree links is the blob's bytes with the locked owner and mode.
            found = {k for k in keys if _intact(f"{shared}/{k}", k, how.lock)}
            self._files |= found
            keys = keys - found
        by_sha: dict[str, list[str]] = {}
        for key in keys:
            by_sha.setdefault(key.partition(".")[0], []).append(key)
        shas = sorted(by_sha.keys() | link_shas)
        if not shas:
            return
        store = os.fspath(self._dir())

        def write(key: str, chunks: Iterable[bytes]) -> None:
            if shared:
                self._keep(key, chunks, how.lock)
            else:
                _write(f"{store}/{key}", chunks, key, how.lock)

        for sha, chunks in git.iter_blobs(repo, shas):
            mine = sorted(by_sha.get(sha, ()))
            if sha in link_shas or len(mine) > 1:
                data = b"".join(chunks)
                if sha in link_shas:
                    self._targets[sha] = data
                for key in mine:
                    write(key, [data])
            elif mine:
                write(mine[0], chunks)
            self._files.update(mine)

    def _keep(self, key: str, chunks: Iterable[bytes], lock: bool) -> None:
        """Write a blob into the kept store, at its name (a rename costs ~0.5 CPU-s a 40,000).

        Another run may hash the file while it is being written: it fails
        the hash there, and that run writes its own whole and renames it over
        this name (below), so a tree only ever links a whole file.
        """
        shared = os.fspath(self._blobs())
        try:
            _write(f"{shared}/{key}", chunks, key, lock)
            return
        except FileExistsError:
            pass  # since the hash in _fetch: another run's, whole or not yet, or a planted one
        private = self._dir() / "new"  # the open failed: no chunk was read yet
        private.mkdir(exist_ok=True)
        _write(f"{private}/{key}", chunks, key, lock)
        os.replace(f"{private}/{key}", f"{shared}/{key}")  # noqa: PTH105 (strings, as above)


# (size, mtime_ns, ctime_ns, inode, mode, uid)
_Stamp = tuple[int, int, int, int, int, int]


def _stamp(path: str) -> _Stamp | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode, st.st_uid)


def remove_later(path: Path) -> None:
    """Delete `path` in a process of its own that outlives this one: the verdict need not wait.

    posix_spawn, not subprocess: a Popen never waited for warns when collected.
    """
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        os.posix_spawnp(
            "rm", ["rm", "-rf", "--", os.fspath(path)], os.environ, file_actions=quiet, setsid=True
        )
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def _key(e: git.TreeEntry) -> str:
    return f"{e.sha}.{'x' if e.mode == '100755' else 'r'}"


def _perm(key: str, lock: bool) -> int:
    executable = key.endswith(".x")
    if lock:
        return 0o555 if executable else 0o444
    return 0o755 if executable else 0o644


def _write(path: str, chunks: Iterable[bytes], key: str, lock: bool) -> None:
    fd = os.open(path, _OPEN_NEW, 0o600)
    try:
        for chunk in chunks:
            _write_all(fd, chunk)
        if lock:
            os.fchown(fd, NOBODY, NOBODY)
        os.fchmod(fd, _perm(key, lock))
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _intact(path: Path | str, key: str, lock: bool) -> bool:
    """The store file is a regular file with its mode whose bytes hash to its blob id."""
    sha = key.partition(".")[0]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != _perm(key, lock):
            return False
        if lock and st.st_uid != NOBODY:
            return False
        return blob_id(sha, iter(lambda: os.read(fd, 1 << 20), b""), st.st_size) == sha
    except OSError:
        return False
    finally:
        os.close(fd)


def shared_blobs(cache: Path, private: Path) -> tuple[Path, int] | None:
    """The judge cache's `blobs` directory, held with a shared flock; None: keep none.

    Only for the locked strategy (sandboxed, as root): its files are owned by
    NOBODY, mode 0444, so no box can write or chmod them through a tree's
    link, and the directory, in the judge's cache, is in no box (cache.py).
    Refused, and the run keeps its blobs to itself, when the directory is
    not this user's alone (0700, not a symlink) or cannot take a link from
    the run's own directory (another filesystem or mount: trees would copy).
    A new file is written at its name (`Store._keep`); no tree links a file
    its run neither wrote whole nor hashed.
    A run that finds no other holding the lock empties a store grown over
    `PRUNE_OVER` files first.
    """
    blobs, lock = cache / "blobs", cache / "blobs.lock"
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            alone = True
        except BlockingIOError:
            fcntl.flock(fd, fcntl.LOCK_SH)  # others use it, or one prunes: wait for that
            alone = False
        if alone and _count(blobs) > PRUNE_OVER:
            blobs.rename(private / "pruned")  # removed with the run's own directory
        with contextlib.suppress(FileExistsError):
            blobs.mkdir(mode=0o700)
        st = os.lstat(blobs)
        mine = stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
        if not mine or stat.S_IMODE(st.st_mode) & 0o077:
            raise OSError(errno.EPERM, "not the judge's own directory", os.fspath(blobs))
        probe_file, linked = private / ".probe-kept", blobs / f".probe-{os.getpid()}"
        probe_file.write_bytes(b"")
        try:
            os.link(probe_file, linked)
            linked.unlink()
        finally:
            probe_file.unlink()
        if alone:
            fcntl.flock(fd, fcntl.LOCK_SH)  # others may use it from now on
    except OSError:
        os.close(fd)
        return None
    return blobs, fd


def _count(directory: Path) -> int:
    try:
        with os.scandir(directory) as found:
            return sum(1 for _ in found)
    except OSError:
        return 0


def _makedirs(path: str, made: set[str]) -> None:
    if path in made:
        return
    os.makedirs(path, exist_ok=True)  # noqa: PTH103 (strings, not Path: 40,000 files)
    made.add(path)


def _take(source: str, target: str, how: str, mode: str) -> str:
    """Put one store file at `target`; returns how the next file is taken."""
    if how == "link":
        try:
            os.link(source, target, follow_symlinks=False)
            return how
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            how = "copy"  # another filesystem than the store: this tree copies
    perm = 0o755 if mode == "100755" else 0o644
    fd = os.open(target, _OPEN_NEW, perm)
    with io.FileIO(source) as src, os.fdopen(fd, "wb") as dst:
        if how == "clone":
            try:
                fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
                return how
            except OSError:
                how = "copy"  # this filesystem clones no more: copy the rest
        shutil.copyfileobj(src, dst, 1 << 20)
    return how
