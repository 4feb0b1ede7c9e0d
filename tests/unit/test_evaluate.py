"""The judge files' eval, exec and compile (boundary/evaluate.py): the pure parts as tables,
and the Evaluator against a box that records what it was asked (issue 17)."""

from __future__ import annotations

import builtins
import marshal
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from patchjudge.boundary import evaluate


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("x + y", {"x", "y"}),
        ("lib.Thing(3)", {"lib", "Thing"}),
        ("[1, 2, 3]", set()),
        ("f'{a!r}' if b else 'c d'", {"f", "a", "r", "if", "b", "else", "c", "d"}),
        (b"calc.total(xs)", {"calc", "total", "xs"}),
        ("été + _x1", {"été", "_x1"}),
    ],
)
def test_the_names_a_text_may_use_are_a_superset_of_its_words(text: Any, names: set[str]) -> None:
    assert evaluate.names_in(text) == frozenset(names)


def test_what_is_not_text_has_no_names_to_pick() -> None:
    assert evaluate.names_in(compile("1", "<s>", "eval")) is None
    assert evaluate.names_in(42) is None


@pytest.mark.parametrize(
    ("source", "literals"),
    [
        (b"X = 'a'\ny = b'b'\n", {"a", b"b"}),
        (b"def f():\n    return exec('''z = 1''')\n", {"z = 1"}),
        (b"n = 3\nf'{n}'\n", set()),  # an f-string is built at run time, not a literal
        (b"def (:\n", set()),  # does not parse: no literal at all
    ],
)
def test_a_files_literals_are_its_str_and_bytes_constants(
    source: bytes, literals: set[str | bytes]
) -> None:
    assert evaluate.literals_in(source) == frozenset(literals)


@pytest.mark.parametrize(
    ("before", "sent", "after", "expected"),
    [
        ({"a": 1}, {"a"}, {"a": 1, "b": 2}, {"a": 1, "b": 2}),  # exec bound a new name
        ({"a": 1, "k": 0}, {"a"}, {}, {"k": 0}),  # exec deleted one it was sent
        ({}, set(), {"__builtins__": "worker's"}, {}),  # never the worker's builtins
        ({"__builtins__": {}}, {"__builtins__"}, {"__builtins__": {}}, {"__builtins__": {}}),
    ],
)
def test_what_exec_left_is_written_back(
    before: dict[str, Any], sent: set[str], after: dict[str, Any], expected: dict[str, Any]
) -> None:
    evaluate.written_back(before, frozenset(sent), after)
    assert before == expected


def test_a_container_written_back_stays_the_same_object() -> None:
    xs = [1]
    into: dict[str, Any] = {"xs": xs}
    evaluate.written_back(into, frozenset({"xs"}), {"xs": [1, 2]})
    assert into["xs"] is xs and xs == [1, 2]


class Remote:
    """A worker object, as the judge holds it (a handle): here, only a box around it."""

    def __init__(self, value: Any) -> None:
        self.value = value


class Recorder:
    """The worker's side, for the Evaluator: records each call and answers it here."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def builtin(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append((name, tuple(dict(a) if type(a) is dict else a for a in args)))
            found = getattr(builtins, name)(*(a.value if type(a) is Remote else a for a in args))
            return Remote(found) if name == "compile" else found

        return call

    def module(self, module: types.ModuleType) -> Any:
        if module.__name__.partition(".")[0] not in sys.stdlib_module_names:
            raise TypeError("not the standard library's")
        return module


def _judge_module(tmp_path: Path, source: str) -> tuple[Recorder, dict[str, Any]]:
    """`source` as a module of a judge tree at tmp_path, loaded with the judge builtins."""
    recorder = Recorder()
    evaluator = evaluate.Evaluator(
        evaluate.Box(builtin=recorder.builtin, module=recorder.module), root=str(tmp_path)
    )
    path = tmp_path / "test_judge_file.py"
    path.write_text(source)
    scope: dict[str, Any] = {"__file__": str(path), "__builtins__": evaluator.builtins}
    builtins.exec(compile(source, str(path), "exec"), scope)
    return recorder, scope


def test_a_judge_files_eval_of_text_it_did_not_write_runs_in_the_worker(tmp_path: Path) -> None:
    recorder, scope = _judge_module(
        tmp_path,
        "import builtins\n"
        "import math\n"
        "import json as judge_only\n"
        "def round_trip(text):\n"
        "    return eval(text)\n"
        "def by_module(text):\n"
        "    return builtins.eval(text)\n"
        "def into(text, ns):\n"
        "    exec(text, ns)\n"
        "def compiled(text):\n"
        "    return eval(compile(text, '<t>', 'eval'))\n",
    )
    built = "".join(["[1, ", "math.floor(2.5)]"])  # built at run time: not a literal
    assert scope["round_trip"](built) == [1, 2]
    assert recorder.calls[-1][0] == "eval"
    sent = recorder.calls[-1][1][1]
    assert set(sent) == {"math"}, "only the names the text uses cross"
    assert scope["by_module"](built) == [1, 2]
    ns: dict[str, Any] = {"k": 1}
    scope["into"]("k = k + " + "1", ns)
    assert ns == {"k": 2} and recorder.calls[-1][0] == "exec"
    assert scope["compiled"](built) == [1, 2]
    assert [name for name, _ in recorder.calls[-2:]] == ["compile", "eval"]
    assert set(recorder.calls[-1][1][1]) == {"math"}, "the names of the text compile saw"


def test_a_judge_files_own_literal_runs_in_the_judge(tmp_path: Path) -> None:
    recorder, scope = _judge_module(
        tmp_path,
        "SRC = 'import types as T\\nfound = T.SimpleNamespace(n=1)'\n"
        "def literal():\n"
        "    ns = {}\n"
        "    exec(SRC, ns)\n"
        "    return ns['found']\n"
        "def literal_code():\n"
        "    return eval(compile('6 * 7', '<t>', 'eval'))\n",
    )
    assert scope["literal"]().n == 1
    assert scope["literal_code"]() == 42
    assert recorder.calls == [], "the file's own text never went to the worker"


def test_a_code_object_the_judge_did_not_compile_is_refused(tmp_path: Path) -> None:
    _, scope = _judge_module(tmp_path, "def run(code):\n    return eval(code)\n")
    with pytest.raises(TypeError, match="did not compile from its own text"):
        scope["run"](marshal.loads(marshal.dumps(compile("1", "<x>", "eval"))))


def test_a_judge_module_the_worker_cannot_import_is_named(tmp_path: Path) -> None:
    _, scope = _judge_module(
        tmp_path,
        "import pytest\ndef uses(text):\n    return eval(text)\n",
    )
    with pytest.raises(TypeError, match="'pytest' is the judge's module pytest"):
        scope["uses"]("pytest." + "approx(1)")


def _frame_of_a_file(path: Path, names: dict[str, Any] | None = None) -> types.FrameType:
    """A frame whose code is `path`'s, holding `names` as locals."""
    scope: dict[str, Any] = dict(names or {})
    builtins.exec(compile("import sys\nframe = sys._getframe()", str(path), "exec"), scope)
    frame: types.FrameType = scope["frame"]
    return frame


@pytest.mark.parametrize("event", sorted(evaluate.AUDITED))
def test_a_judge_files_own_route_to_code_is_refused(tmp_path: Path, event: str) -> None:
    evaluator = evaluate.Evaluator(
        evaluate.Box(builtin=Recorder().builtin, module=Recorder().module), root=str(tmp_path)
    )
    with pytest.raises(RuntimeError, match=f"asked for {event} in the judge's process"):
        evaluator.audited(event, _frame_of_a_file(tmp_path / "test_x.py"))
    # The same event from anywhere else (pytest, hypothesis, importlib) passes.
    evaluator.audited(event, _frame_of_a_file(tmp_path.parent / "elsewhere.py"))


def test_code_of_a_file_the_code_has_never_runs_in_the_judge(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    evaluator = evaluate.Evaluator(
        evaluate.Box(builtin=Recorder().builtin, module=Recorder().module),
        root=str(tmp_path / "judge"),
        code=(str(tree),),
    )
    theirs = compile("X = 1", str(tree / "generated.py"), "exec")
    ours = compile("X = 1", str(tmp_path / "judge.py"), "exec")
    runpy_like = _frame_of_a_file(tmp_path / "runpy.py", {"code": theirs})
    importlib_like = _frame_of_a_file(tmp_path / "bootstrap.py", {"args": (theirs, {})})
    for frame in (runpy_like, importlib_like):
        with pytest.raises(RuntimeError, match="a file the code under test has or wrote"):
            evaluator.audited("exec", frame)
    evaluator.audited("exec", _frame_of_a_file(tmp_path / "runpy.py", {"code": ours}))
