"""The worker's program: compiled once in the judge, loaded in the worker (issue 20).

Every worker compiled wire, protocol and worker (2,800 lines) at boot, and a
run's review starts one per mutant. The judge now compiles them once per
process and sends their code where the worker runs the judge's own
interpreter; the loader takes that code only for its own bytecode magic,
and another interpreter gets the sources, compiled in the worker as before.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchjudge.boundary import standin

HERE = Path(standin.__file__).resolve().parent
ARGV = ["3", "4", "/tree", "src", ""]

# A program of three modules whose worker says where its parts came from, and runs nothing else.
STAND_INS = {
    "wire": "WHO = 'wire'\n",
    "protocol": "WHO = 'protocol'\n",
    "worker": (
        "import os\n"
        "def main(argv, wire, token, protocol, handed):\n"
        "    os.write(1, f'{wire.WHO} {protocol.WHO} {__name__}'.encode())\n"
        "    return 0\n"
    ),
}


def boot(conf: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
    """Start a worker as Worker.start does (`-c BOOT`, the loader and program on stdin)."""
    loader = standin.LOADER.encode() + standin.STDIN_START.encode()
    stdin = b"%08d" % len(loader) + loader + marshal.dumps(conf)
    return subprocess.run(
        [sys.executable, "-s", "-c", standin.BOOT], input=stdin, capture_output=True, timeout=60
    )


def conf_of(compiled: bool) -> dict[str, object]:
    _, program = standin.worker_program(HERE, ARGV, os.urandom(16), compiled=compiled)
    conf = marshal.loads(program)
    assert isinstance(conf, dict)
    return conf


def test_the_worker_boots_from_the_judges_compiled_program_and_gets_no_source() -> None:
    conf = conf_of(compiled=True)
    assert not {"wire", "protocol", "worker"} & conf.keys()
    # The same loader, given stand-ins' code in that place: it runs the code it was sent.
    conf["code"] = marshal.dumps(
        tuple(compile(STAND_INS[p], "", "exec", dont_inherit=True) for p in standin.PROGRAM)
    )
    done = boot(conf)
    assert done.returncode == 0, done.stderr.decode()
    who = done.stdout.decode().split()
    assert who[:2] == ["wire", "protocol"]
    assert who[2].startswith("_")  # the worker module's name is the run's, as compiled ones were


def test_a_program_compiled_for_another_python_is_refused_before_any_of_it_runs() -> None:
    conf = conf_of(compiled=True)
    conf["code"] = marshal.dumps(
        tuple(compile(STAND_INS[p], "", "exec", dont_inherit=True) for p in standin.PROGRAM)
    )
    conf["magic"] = b"\x00\x00\r\n"
    done = boot(conf)
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"compiled program is for another Python" in done.stderr


def test_another_interpreter_gets_the_sources_and_compiles_them() -> None:
    conf = conf_of(compiled=False)
    assert "code" not in conf
    assert conf["worker"] == (HERE / "worker.py").read_text()
    conf.update(STAND_INS)
    done = boot(conf)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().startswith("wire protocol _")


def in_worker(files: list[Path]) -> tuple[object, ...]:
    """The code objects a worker's loader compiles from these files, in a fresh interpreter."""
    script = (
        "import marshal, sys\n"
        "parts = [open(p).read() for p in sys.argv[1:]]\n"
        "sys.stdout.buffer.write(marshal.dumps(tuple("
        "compile(s, '', 'exec', optimize=2) for s in parts)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, *map(str, files)],
        capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    codes = marshal.loads(done.stdout)
    assert isinstance(codes, tuple)
    return codes


def test_the_judges_code_is_what_the_worker_compiled_from_the_sources() -> None:
    compiled = marshal.loads(standin.compiled_program(HERE))
    theirs = in_worker([HERE / f"{p}.py" for p in standin.PROGRAM])
    assert len(compiled) == len(theirs) == 3
    for judge_code, worker_code in zip(compiled, theirs, strict=True):
        assert judge_code == worker_code


def test_no_future_flag_of_the_judges_module_reaches_the_code(tmp_path: Path) -> None:
    """standin.py has `from __future__ import annotations`: a source without it keeps its
    annotations evaluated, as the worker's own compile keeps them."""
    for part in standin.PROGRAM:
        (tmp_path / f"{part}.py").write_text("def f(x: nowhere) -> None:\n    pass\n")
    compiled = marshal.loads(standin.compiled_program(tmp_path))
    theirs = in_worker([tmp_path / f"{p}.py" for p in standin.PROGRAM])
    assert compiled == theirs
    with pytest.raises(NameError, match="nowhere"):
        exec(compiled[0], {})


def test_the_program_is_compiled_once_per_judge_process() -> None:
    standin.compiled_program.cache_clear()
    first, second = conf_of(compiled=True), conf_of(compiled=True)
    assert standin.compiled_program.cache_info().misses == 1
    assert first["code"] == second["code"] == standin.compiled_program(HERE)
    assert first["salt"] != second["salt"]  # each worker still renames under its own salt


@pytest.mark.parametrize(
    ("python", "same"),
    [
        (sys.executable, True),
        (os.path.realpath(sys.executable), True),
        ("/bin/sh", False),
        ("/nonexistent/python3", False),
    ],
)
def test_only_the_judges_own_interpreter_gets_compiled_code(python: str, same: bool) -> None:
    assert standin.same_interpreter(python) is same


def test_a_venv_of_the_judges_interpreter_is_the_same_interpreter(tmp_path: Path) -> None:
    link = tmp_path / "bin" / "python"
    link.parent.mkdir()
    link.symlink_to(os.path.realpath(sys.executable))
    assert standin.same_interpreter(str(link))
