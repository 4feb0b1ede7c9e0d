"""Line probes in the worker mean what coverage.py's tracer meant (issue 20).

The worker measures executed lines with probes compiled into the measured
files, no tracer. Each case runs through a real worker and through
coverage.py on the same source; the lines the review counts must agree.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
import threading
import venv
from pathlib import Path
from typing import Any

import pytest

from patchjudge import review
from patchjudge.boundary import protocol, standin
from patchjudge.boundary import worker as worker_module

TRICKY = '''\
"""The module's docstring."""
from __future__ import annotations
import functools
import asyncio

x = 1; y = 2
TOTAL = (x +
         y)


def deco(f):
    """A decorator."""
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner


@deco
def decorated(n):
    global TOTAL
    TOTAL = n
    if n > 5:
        return "big"
    elif n > 2:
        return "mid"
    else:
        return "small"


class Box:
    """A class."""
    size = 3

    def grow(self):
        with open(__file__) as f:
            first = f.readline()
        return first


def handle(n):
    try:
        if n:
            raise KeyError(n)
        value = 1
    except ValueError:
        value = 2
    except KeyError:
        value = 3
    finally:
        done = True
    return value, done


def shapes(v):
    match v:
        case 0:
            return "zero"
        case [a, *rest]:
            return a
        case _:
            return None


def gen(n):
    for i in range(n):
        yield i
    while n > 0:
        n -= 1


async def run_async():
    await asyncio.sleep(0)
    return 1


square = lambda v: (
    v * v)
squares = [
    square(i)
    for i in range(3)
    if i]
pairs = {k: v for k, v in [(1, 2)]}
never = lambda: 0
lazy = (i for i in range(3))


def unused():
    return 0


def main():
    decorated(7); decorated(3)
    Box().grow()
    handle(0); handle(1)
    shapes(0); shapes([1, 2])
    list(gen(2))
    asyncio.run(run_async())
    list(lazy)
    return square(2)


main()
'''

COVERAGE = """
import json, sys
import coverage
cov = coverage.Coverage(data_file=None, include=[sys.argv[1]], branch=False, config_file=False)
cov.start()
cov.switch_context("t1")
sys.path.insert(0, sys.argv[2])
import tricky
cov.stop()
lines = cov.get_data().contexts_by_lineno(sys.argv[1])
print(json.dumps(sorted(n for n, names in lines.items() if "t1" in names)))
"""


def _by_worker(tree: Path, home: Path) -> dict[str, dict[str, list[int]]]:
    spec = protocol.WorkerSpec(
        sys.executable,
        str(tree),
        str(home),
        ("tricky",),
        pythonpath=(".",),
        coverage=("tricky.py",),
        call_timeout_s=120,
    )
    worker = standin.Worker(spec, "props/test_p.py", [])
    try:
        # In the test's context from the first line: the import runs the whole table.
        worker.request(protocol.CONTEXT, "t1")
        worker.request(protocol.IMPORT, "tricky")
        found = worker.request(protocol.EXECUTED)
    finally:
        assert worker.proc is not None and worker.proc.stderr is not None
        stderr = worker.proc.stderr
        worker.close()
        stderr.close()
    assert isinstance(found, dict)
    return found


def _counted(text: str, lines: list[int]) -> set[int]:
    stmts = review.statements(text)
    assert stmts is not None
    return {stmts.of(n) for n in lines} & stmts.lines


def test_probes_and_coverage_agree_on_the_lines_the_review_counts(tmp_path: Path) -> None:
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    home.mkdir()
    (tree / "tricky.py").write_text(TRICKY)
    probed = _by_worker(tree, home)
    assert set(probed) == {"t1"}
    measured = subprocess.run(
        [sys.executable, "-c", COVERAGE, str(tree / "tricky.py"), str(tree)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    by_probes = _counted(TRICKY, probed["t1"]["tricky.py"])
    by_coverage = _counted(TRICKY, json.loads(measured.stdout))
    line = {n: t.strip() for n, t in enumerate(TRICKY.splitlines(), 1)}
    # Never more than coverage (a line wrongly executed would weaken the review) ...
    assert {line[n] for n in by_probes - by_coverage} == set()
    # ... and less only where coverage counts a line no statement begins on: none here.
    assert {line[n] for n in by_coverage - by_probes} == set()
    assert "return 0" not in {line[n] for n in by_probes}  # unused() never ran


LOOKS = '''\
import inspect
import linecache
import sys
import traceback


def fails(n):
    """Raises on its own line."""
    total = n + 1
    raise ValueError(total)


def where():
    try:
        fails(1)
    except ValueError as exc:
        return [(f.lineno, f.line) for f in traceback.extract_tb(exc.__traceback__)]


SEEN = (
    sys.gettrace(),
    __file__,
    fails.__code__.co_firstlineno,
    inspect.getsource(fails),
    linecache.getline(__file__, 10),
    where(),
    sorted(n for n in dir() if not n.startswith("__")),
    fails.__doc__,
    __loader__.__class__.__name__,
)
'''


def test_probed_code_looks_as_it_does_without_probes(tmp_path: Path) -> None:
    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir()
    home.mkdir()
    (tree / "tricky.py").write_text(LOOKS)
    spec = protocol.WorkerSpec(
        sys.executable, str(tree), str(home), ("tricky",), pythonpath=(".",),
        coverage=("tricky.py",), call_timeout_s=120,
    )  # fmt: skip
    worker = standin.Worker(spec, "props/test_p.py", [])
    try:
        worker.request(protocol.CONTEXT, "t1")
        module = worker.request(protocol.IMPORT, "tricky")
        seen = worker.request(protocol.GETATTR, module, "SEEN")
        found = worker.request(protocol.EXECUTED)
    finally:
        assert worker.proc is not None and worker.proc.stderr is not None
        stderr = worker.proc.stderr
        worker.close()
        stderr.close()
    exec(
        compile(LOOKS, str(tree / "tricky.py"), "exec"),
        plain := {"__file__": str(tree / "tricky.py")},
    )
    assert plain["SEEN"][0] is None
    assert tuple(seen[:-1]) == plain["SEEN"][:-1]  # no tracer, the same file, lines and names
    assert seen[-1] == "SourceFileLoader"
    assert 10 in found["t1"]["tricky.py"]  # measured: by the probes, no tracer ran


# A sum of 400 terms compiles plain, but the probing transformer recurses deeper than
# Python's limit on it: such a file cannot take probes, and coverage.py measures the run.
DEEP = "WIDE = 1" + " + 1" * 400 + "\n"
PICK = "def pick(n):\n    if n:\n        return 1\n    return 2\n"


def _drive(tree: Path, home: Path, source: str, python: str = sys.executable) -> tuple[Any, str]:
    """Import tricky (context t1), call pick(1) (t2): the executed lines or the import's
    error, and what the worker wrote on stderr."""
    tree.mkdir()
    home.mkdir()
    (tree / "tricky.py").write_text(source)
    spec = protocol.WorkerSpec(
        python, str(tree), str(home), ("tricky",), pythonpath=(".",),
        coverage=("tricky.py",), call_timeout_s=120,
    )  # fmt: skip
    worker = standin.Worker(spec, "props/test_p.py", [])
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)  # the worker's stderr is copied to the judge's fd 2
    try:
        worker.request(protocol.CONTEXT, "t1")
        try:
            module = worker.request(protocol.IMPORT, "tricky")
        except Exception as exc:
            answer: Any = exc
        else:
            worker.request(protocol.CONTEXT, "t2")
            pick = worker.request(protocol.GETATTR, module, "pick")
            assert worker.request(protocol.CALL, pick, (1,), {}) == 1
            answer = worker.request(protocol.EXECUTED)
    finally:
        assert worker.proc is not None and worker.proc.stderr is not None
        stderr = worker.proc.stderr
        worker.close()  # the worker has exited: its stderr's copy ends at EOF
        for t in threading.enumerate():
            if t.name.endswith("(_drain)"):
                t.join()
        stderr.close()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)
    with os.fdopen(read, "rb") as f:
        return answer, f.read().decode(errors="replace")


def test_every_probe_carries_its_statements_location() -> None:
    # The worker compiles the probed module without ast.fix_missing_locations (a second walk
    # of the whole tree, issue 20): each probe must take its statement's place itself, as
    # that walk would have given it (a probe placed at line 1 would count line 1 as run).
    probed = worker_module._Probing(("m",)).visit(ast.parse(TRICKY))
    fixed = ast.fix_missing_locations(copy.deepcopy(probed))
    assert ast.dump(probed, include_attributes=True) == ast.dump(fixed, include_attributes=True)
    missing = [
        type(n).__name__
        for n in ast.walk(probed)
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None
    ]
    assert missing == []


def test_a_file_that_cannot_take_probes_is_measured_by_coverage(tmp_path: Path) -> None:
    compile(DEEP, "deep.py", "exec")  # the import works bare ...
    with pytest.raises(RecursionError):  # ... and the probes cannot be compiled in
        worker_module._Probing(("m",)).visit(ast.parse(DEEP))
    found, err = _drive(tmp_path / "tree", tmp_path / "home", DEEP + PICK)
    assert "coverage.py measures this run" in err and "tricky.py: RecursionError" in err
    # The import's two statements, then pick(1)'s lines: measured all the same.
    assert found == {"t1": {"tricky.py": [1, 2]}, "t2": {"tricky.py": [3, 4]}}


def test_a_fallback_without_coverage_measures_nothing_and_says_so(tmp_path: Path) -> None:
    # A `--python` venv without coverage.py: the worker lives and no line counts as
    # executed (undecided), where it used to exit as if the code had crashed.
    venv.create(tmp_path / "bare", with_pip=False)
    python = str(tmp_path / "bare" / "bin" / "python")
    found, err = _drive(tmp_path / "tree", tmp_path / "home", DEEP + PICK, python=python)
    assert "coverage.py is not installed" in err and "nothing measures this run" in err
    assert found == {}


def test_probes_measure_the_same_file_without_the_deep_line(tmp_path: Path) -> None:
    found, err = _drive(tmp_path / "tree", tmp_path / "home", "WIDE = 1\n" + PICK)
    assert "coverage.py" not in err
    assert found == {"t1": {"tricky.py": [1, 2]}, "t2": {"tricky.py": [3, 4]}}


@pytest.mark.parametrize(
    ("source", "raised"),
    [
        # Parses, but does not compile: the import fails as it does bare.
        ("return 1\n" + PICK, "SyntaxError"),
        # Too deep for the AST and for the compiler: the import fails, the worker lives.
        ("WIDE = 1" + " + 1" * 3500 + "\n" + PICK, "RecursionError"),
    ],
    ids=["return at top level", "too deep to compile"],
)
def test_a_file_that_does_not_compile_fails_its_import_as_bare(
    tmp_path: Path, source: str, raised: str
) -> None:
    with pytest.raises(BaseException) as bare:
        compile(source, "tricky.py", "exec")
    assert type(bare.value).__name__ == raised
    failed, err = _drive(tmp_path / "tree", tmp_path / "home", source)
    assert raised in str(failed) or type(failed).__name__ == raised, failed
    assert "coverage.py" not in err  # nothing to fall back from: probes refused nothing
