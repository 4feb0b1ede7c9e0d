"""Run every session of a noxfile against a recording stand-in: what would each install?

`python -m tests.nox_recorder NOXFILE` prints JSON: session name -> the calls it
made (method, arguments, working directory). Nothing is installed or run. A
separate process, because loading a noxfile registers sessions and sets
nox.options globally.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nox.registry


class Stopped(Exception):
    """session.error() or session.skip(): the session ends here."""


class RecordingSession:
    """Enough of nox.Session for a session function to run without side effects."""

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.calls: list[dict[str, Any]] = []
        self.posargs: list[str] = []
        self.invoked_from = str(root)
        self.env: dict[str, str] = {}
        self.python: str | None = None
        # The session's own venv, as nox would have made it: a site-packages and
        # nothing in it (init's noxfile writes a .pth there). Outside the project.
        self._own = tempfile.TemporaryDirectory(prefix=f"nox-recorder-{name}-")
        (Path(self._own.name) / SITE).mkdir(parents=True)
        self.bin = str(Path(self._own.name) / "bin")
        self.bin_paths = [self.bin]
        self.interactive = False
        self._cwd = root

    def _record(self, method: str, args: tuple[Any, ...]) -> None:
        self.calls.append({"method": method, "args": [str(a) for a in args], "cwd": str(self._cwd)})

    def install(self, *args: Any, **_: Any) -> None:
        self._record("install", args)

    def run(self, *args: Any, **kwargs: Any) -> str:
        self._record("run", args)
        if kwargs.get("env"):
            self.calls[-1]["env"] = {str(k): str(v) for k, v in kwargs["env"].items()}
        _made_venv([str(a) for a in args])
        return ""

    def run_always(self, *args: Any, **_: Any) -> str:
        self._record("run_always", args)
        return ""

    def run_install(self, *args: Any, **_: Any) -> str:
        self._record("run_install", args)
        return ""

    def chdir(self, path: str | os.PathLike[str]) -> contextlib.AbstractContextManager[None]:
        previous, self._cwd = self._cwd, (self._cwd / path).resolve()

        @contextlib.contextmanager
        def back() -> Iterator[None]:
            try:
                yield
            finally:
                self._cwd = previous

        return back()

    cd = chdir

    def create_tmp(self) -> str:
        return str(self._cwd / ".nox" / self.name / "tmp")

    def log(self, *_: Any, **__: Any) -> None:
        pass

    warn = debug = notify = log

    def error(self, *_: Any) -> None:
        raise Stopped

    skip = error

    def __getattr__(self, method: str) -> Callable[..., None]:
        # Anything else a session calls (conda_install, install_and_run_script, ...)
        # is recorded under its own name, so the checks see it.
        def record(*args: Any, **_: Any) -> None:
            self._record(method, args)

        return record


SITE = Path("lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


def _made_venv(args: list[str]) -> None:
    """A venv the session would have created (`uv venv ... DEST`, `python -m venv ... DEST`):
    its site-packages, where the noxfile made DEST itself (nothing else is touched)."""
    words = [Path(a).name for a in args]
    if "venv" not in words[:3] or not args:
        return
    dest = Path(args[-1])
    if dest.is_absolute() and dest.is_dir():
        (dest / SITE).mkdir(parents=True, exist_ok=True)


def record(noxfile: Path) -> dict[str, list[dict[str, Any]]]:
    spec = importlib.util.spec_from_file_location("recorded_noxfile", noxfile)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    os.chdir(noxfile.parent)  # as nox does before it loads a noxfile
    spec.loader.exec_module(module)
    sessions: dict[str, list[dict[str, Any]]] = {}
    for name, func in nox.registry.get().items():
        params = getattr(func, "parametrize", None) or [None]
        for param in params:
            session = RecordingSession(name, noxfile.parent)
            kwargs = dict(param.call_spec) if param is not None else {}
            with contextlib.suppress(Stopped):
                func(session, **kwargs)
            label = name if param is None else f"{name}({param})"
            sessions[label] = session.calls
    return sessions


if __name__ == "__main__":
    print(json.dumps(record(Path(sys.argv[1]).resolve())))
