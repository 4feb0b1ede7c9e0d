"""hypothesis's Unicode tables, built by the judge beside the lanes before it (issue 7).

Any property using text() or characters() makes hypothesis scan all 1.1M
code points twice (~1.5 CPU-s) unless its storage directory already holds
the tables. The judge's storage directory is fresh each run, so every properties
run paid it. The gate builds them once, in a child process, while
pathfilter's pytest runs, and writes them into the properties run's storage before
pytest starts. The bytes are hypothesis's own writer's, checked against
what it computed in this process, so nothing another process wrote is
passed on.

Issue 20: built only when a base property may draw text (its AST, see
may_draw_text), and kept in the judge's cache (cache.py) by the Unicode,
hypothesis and interpreter versions, so a machine builds them once.
"""

from __future__ import annotations

import ast
import base64
import gzip
import json
import os
import sys
import tempfile
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from patchjudge import cache, parsed, proc
from patchjudge.errors import PatchjudgeError

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

# importlib.metadata and concurrent.futures only where used: every lane process
# imports this module and most never ask (issue 19: ~50 ms a nox lane's start).
_pool: ThreadPoolExecutor | None = None
_future: Future[dict[str, bytes]] | None = None
# Where this process's tables came from, for the properties report.
origin = "not built"

# Names through which a property may reach hypothesis's character tables:
# the text strategies themselves, the ones that infer a strategy from a type
# (a str field), and the ones whose values are strings built from text.
# A strategy handed over by another module is not seen: then hypothesis
# builds the tables itself, as before this decision (slower, never wrong).
TEXT_NAMES = frozenset(
    {
        "text",
        "characters",
        "from_regex",
        "from_type",
        "builds",
        "infer",
        "register_type_strategy",
        "emails",
        "urls",
        "domains",
        "from_lark",
        "from_field",
        "from_form",
        "from_model",
        "from_dtype",
        "arrays",
        "data_frames",
        "series",
        "ip_addresses",
    }
)


def may_draw_text(sources: Iterable[bytes]) -> bool:
    """Pure: whether properties with these sources may draw text; unsure means yes.

    A file that does not parse, any use of a name in TEXT_NAMES (as a name,
    an attribute or an import), `...` (hypothesis infers from annotations),
    a star import or an import from hypothesis.extra is "may". A strategy
    drawn through st.data() is built in the file, so its name shows.
    """
    for source in sources:
        try:
            tree = parsed.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return True
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in TEXT_NAMES:
                return True
            if isinstance(node, ast.Attribute) and node.attr in TEXT_NAMES:
                return True
            if isinstance(node, ast.Constant) and node.value is Ellipsis:
                return True
            if isinstance(node, ast.alias) and (
                node.name.rpartition(".")[2] in TEXT_NAMES
                or node.name == "*"
                or "extra" in node.name.split(".")
            ):
                return True
            if isinstance(node, ast.ImportFrom) and "extra" in (node.module or "").split("."):
                return True
    return False


def _relative(name: str) -> str:
    """Where hypothesis keeps one of its Unicode tables under its storage directory."""
    return f"unicode_data/{unicodedata.unidata_version}/{name}.json.gz"


def build() -> dict[str, bytes]:
    """hypothesis's category map and UTF-8 table as it stores them ({} if it stores them
    otherwise: then the child builds its own, as before)."""
    try:
        from hypothesis import configuration
        from hypothesis.internal import charmap as hc

        with tempfile.TemporaryDirectory(prefix="patchjudge-charmap-") as home:
            configuration.set_hypothesis_home_dir(home)
            try:
                # Computed here, so written here (both are cached per process).
                hc._charmap = None
                hc.intervals_from_codec.cache_clear()
                categories = hc.charmap()
                encodable, lossy = hc.intervals_from_codec("utf-8")
                files = {
                    _relative(name): (Path(home) / _relative(name)).read_bytes()
                    for name in ("charmap", "codec-v2-utf-8")
                }
            finally:
                configuration.set_hypothesis_home_dir(None)
        stored_map = json.loads(gzip.decompress(files[_relative("charmap")]))
        stored_codec = json.loads(gzip.decompress(files[_relative("codec-v2-utf-8")]))
    except Exception:  # internals of hypothesis: without them the child builds its own
        return {}
    # What is passed on is what this process computed, whoever else wrote to /tmp.
    same_map = {c: tuple(map(tuple, v)) for c, v in stored_map} == categories
    same_codec = [list(map(list, x.intervals)) for x in (encodable, lossy)] == stored_codec
    return files if same_map and same_codec else {}


def _build_in_child() -> dict[str, bytes]:
    """build() in a fresh interpreter, the verified bytes back over its private stdout.

    A child, not a thread: the scan is pure Python, and under the GIL it
    slowed the gate's own work as much as it saved.
    """
    with tempfile.TemporaryDirectory(prefix="patchjudge-charmap-") as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "PYTHONHASHSEED": "0"}
        try:
            result = proc.run(
                [sys.executable, "-I", "-B", "-m", "patchjudge.charmap"],
                cwd=home,
                env=env,
                timeout=300,
            )
            if result.returncode != 0 or result.timed_out:
                return {}
            doc = json.loads(result.stdout)
            return {str(k): base64.b64decode(v, validate=True) for k, v in doc.items()}
        except (PatchjudgeError, ValueError, AttributeError):
            return {}


def cache_key() -> dict[str, str]:
    """What the tables depend on: the Unicode tables, hypothesis's writer, the interpreter."""
    import importlib.metadata

    try:
        hypothesis = importlib.metadata.version("hypothesis")
    except importlib.metadata.PackageNotFoundError:
        hypothesis = ""
    return {
        "unicodedata": unicodedata.unidata_version,
        "hypothesis": hypothesis,
        "python": sys.version,
        "executable": sys.executable,
    }


def _wanted() -> set[str]:
    return {_relative(name) for name in ("charmap", "codec-v2-utf-8")}


def _from_cache(data: bytes | None) -> dict[str, bytes] | None:
    """Pure: a cached entry's tables when they are the two hypothesis reads, each readable."""
    if data is None:
        return None
    try:
        doc = json.loads(data)
        tables = {str(k): base64.b64decode(v, validate=True) for k, v in doc.items()}
        for blob in tables.values():
            json.loads(gzip.decompress(blob))
    except (ValueError, AttributeError, TypeError, OSError, EOFError):
        return None
    return tables if set(tables) == _wanted() else None


def _cached_or_built(directory: Path | None) -> dict[str, bytes]:
    global origin  # noqa: PLW0603  (one set per process)
    key = cache_key()
    found = _from_cache(cache.read(directory, "charmap", key)) if key["hypothesis"] else None
    if found is not None:
        origin = "cache"
        return found
    tables = _build_in_child()
    origin = "built" if tables else "left to hypothesis"
    if tables and key["hypothesis"]:
        doc = {k: base64.b64encode(v).decode() for k, v in tables.items()}
        cache.write(directory, "charmap", key, json.dumps(doc, sort_keys=True).encode())
    return tables


def prefetch(directory: Path | None = None) -> None:
    """Start building (or reading from `directory`) the tables in the background; once a process."""
    global _pool, _future  # noqa: PLW0603  (one set per process, like hypothesis's own)
    if _future is None:
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="patchjudge-charmap")
        _future = _pool.submit(_cached_or_built, directory)
        _pool.shutdown(wait=False)


def provide(tables: dict[str, bytes]) -> None:
    """Tables another process built (a worker's parent): what prefetched() gives here."""
    global _future  # noqa: PLW0603  (one set per process)
    from concurrent.futures import Future

    done: Future[dict[str, bytes]] = Future()
    done.set_result(dict(tables))
    _future = done


def prefetched() -> dict[str, bytes]:
    """The tables if prefetch() was called (waiting for them), else {}: pytest builds them."""
    return {} if _future is None else _future.result()


def install(storage: Path, files: dict[str, bytes], python: str = sys.executable) -> None:
    """Put the tables where the child's hypothesis reads them; only for this interpreter."""
    if python != sys.executable:
        return  # another interpreter may have another Unicode version
    for rel, data in files.items():
        target = storage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


if __name__ == "__main__":
    print(json.dumps({k: base64.b64encode(v).decode() for k, v in build().items()}))
