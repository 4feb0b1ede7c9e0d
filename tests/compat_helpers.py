"""Third-party hypothesis suites, judged bare and out of process (issue 17).

    python -m tests.compat_helpers [--update] [--work NEW_DIR] [--cache DIR]

Each suite is a pinned sdist (version and SHA-256, in SUITES below, the one
place they are written) whose own hypothesis tests a new user would put under
`eval/properties/`. `compare_suite` builds that project as a real git repo,
runs the copied files under bare pytest and through `patchjudge properties`
(out of process, `isolation = "sandbox"`: bwrap is needed) with the same seed and
example count, and returns both outcomes per node id. Without `--update` the
module prints the figures; with it, it rewrites KNOWN (known-differences.json)
from what it saw: the boundary's work changes that list, a human reviews the
diff.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from patchjudge.git import no_git_env
from tests.helpers import commit, git

HERE = Path(__file__).resolve().parent
KNOWN = HERE / "compat" / "known-differences.json"
SEED = 20260924
# Small on purpose (issue 17: all suites together in about a minute of CPU);
# bare and out of process run the same examples, so the comparison holds.
MAX_EXAMPLES = 10


@dataclass(frozen=True)
class Suite:
    """A third-party project whose sdist ships hypothesis tests, pinned by its own SHA-256."""

    name: str  # on PyPI
    version: str
    sha256: str
    top: str  # the sdist's top directory
    pythonpath: str  # where the library's package lives inside the sdist
    package: str  # the directory a patch touches (mapped to the properties lane)
    idioms: str  # what the suite exercises across the boundary
    # sdist path -> path under eval/properties/
    files: Mapping[str, str]
    # (path under eval/properties/, text, replacement, why): every change a user would make
    adjustments: Sequence[tuple[str, str, str, str]] = ()
    # files of the sdist's suite left out, and why
    left_out: Mapping[str, str] = field(default_factory=dict)


SUITES = (
    Suite(
        name="bidict",
        # The last release whose sdist ships its tests (0.22 on ships none).
        version="0.21.4",
        sha256="42c84ffbe6f8de898af6073b4be9ea7ccedcd78d3474aa844c54e49d5a079f6f",
        top="bidict-0.21.4",
        pythonpath=".",
        package="bidict",
        idioms="the library's classes (mapping types, their inverses, views), its exceptions, "
        "judge-side subclasses, iterators, pickle, deepcopy, weakrefs and gc",
        files={
            "tests/properties/test_properties.py": "test_properties.py",
            "tests/properties/_strategies.py": "_strategies.py",
            "tests/properties/_types.py": "_types.py",
        },
        adjustments=(
            (
                "test_properties.py",
                "from . import _strategies as st",
                "import _strategies as st",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
            (
                "_strategies.py",
                "from . import _types as t",
                "import _types as t",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
        ),
        left_out={
            "tests/conftest.py": "sets the suite's own hypothesis profile; the judge's wins",
        },
    ),
    Suite(
        name="pyrsistent",
        version="0.20.0",
        sha256="4c48f78f62ab596c679086084d0dd13254ae4f3d6c72a83ffdf5ebdef8f265a4",
        top="pyrsistent-0.20.0",
        pythonpath=".",
        package="pyrsistent",
        idioms="stateful machines (RuleBasedStateMachine, Bundle), a judge-side PClass "
        "subclass, persistent vectors and evolvers, judge objects stored in the worker",
        files={"tests/hypothesis_vector_test.py": "hypothesis_vector_test.py"},
        left_out={
            "pvectorcmodule.c": "not built: the pure-Python pvector runs, as on any sdist "
            "checkout without a compiler step",
        },
    ),
    Suite(
        name="attrs",
        version="26.1.0",
        sha256="d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32",
        top="attrs-26.1.0",
        pythonpath="src",
        package="src/attr",
        idioms="judge-defined classes: classes the property files define and decorate with "
        "the library (@attr.s, attr.ib, make_class), its functions over them (asdict, evolve, "
        "fields), strategies that build classes; attrs is also a judge dependency",
        files={
            "tests/test_funcs.py": "test_funcs.py",
            "tests/test_functional.py": "test_functional.py",
            "tests/strategies.py": "strategies.py",
            "tests/utils.py": "utils.py",
            "tests/conftest.py": "conftest.py",
        },
        adjustments=(
            (
                "test_funcs.py",
                "from .strategies import",
                "from strategies import",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
            (
                "strategies.py",
                "from .utils import",
                "from utils import",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
            (
                "conftest.py",
                "def pytest_configure(config):",
                "def _suite_profile(config):",
                "the suite's own hypothesis profile would replace the judge's (the lane "
                "refuses a max_examples other than the ledger's); its fixtures stay",
            ),
        ),
        left_out={
            "tests/test_make.py": "the largest of attrs's hypothesis files: left out to keep "
            "the compat test near its CPU budget",
            "tests/test_dunders.py": "as test_make.py",
        },
    ),
    Suite(
        name="python-dateutil",
        version="4.0.0",
        sha256="d7295ff14fdc0f92f662100bfb6c551d160ca090f2939f1ec5b9794265c03f06",
        top="python_dateutil-4.0.0",
        pythonpath="src",
        package="src/dateutil",
        idioms="standard-library values (datetime, timedelta, tzinfo) made and compared "
        "across the boundary, the library's tz classes, rrule iterators, pickle and copy",
        files={
            "tests/property/test_isoparse_prop.py": "test_isoparse_prop.py",
            "tests/property/test_parser_prop.py": "test_parser_prop.py",
            "tests/property/test_rrule_prop.py": "test_rrule_prop.py",
        },
        left_out={
            "tests/property/test_tz_prop.py": "needs the suite's conftest fixtures, which "
            "switch the process's time zone data source (a file for in_process)",
        },
    ),
    Suite(
        name="rubymarshal",
        # Held out in session 14 (15 of 17 out of process before that round's fixes).
        version="1.2.10",
        sha256="899b46e6485200d087858ff56295881764ff5268f6fdf01b7ecc4e4e03d3ed7c",
        top="rubymarshal-1.2.10",
        pythonpath=".",
        package="rubymarshal",
        idioms="a serializer's round trips through its Reader and Writer over streams, the "
        "library's own classes (RubyObject, RubyString, Symbol) with their dunders, "
        "`obj.__class__.__name__` of a library object, hash() compared with a str's",
        files={
            "rubymarshal/tests/test_hypothesis.py": "test_hypothesis.py",
            "rubymarshal/tests/test_new_properties.py": "test_new_properties.py",
        },
    ),
    Suite(
        name="backports.zoneinfo",
        # Held out in session 15: 14 of 14 out of process on first try (cheap: pinned).
        version="0.2.1",
        sha256="fadbfe37f74051d024037f223b8e001611eac868b5c5b06144ef4d8b799862f2",
        top="backports.zoneinfo-0.2.1",
        pythonpath="src",
        package="src/backports/zoneinfo",
        idioms="a stdlib backport's unittest TestCase classes with @given: ZoneInfo objects "
        "made by key, pickled and unpickled by the property, the cache's identity, "
        "datetimes with the library's tzinfo converted from UTC and compared with the "
        "stdlib's, module surgery (`import_fresh_module`, two copies of the module)",
        files={
            "tests/_support.py": "_support.py",
            "tests/test_zoneinfo_property.py": "test_zoneinfo_property.py",
        },
        adjustments=(
            (
                "test_zoneinfo_property.py",
                "from . import _support as test_support",
                "import _support as test_support",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
            (
                "test_zoneinfo_property.py",
                "from ._support import",
                "from _support import",
                "eval/properties is not a package: its helpers are files beside the tests",
            ),
            (
                "_support.py",
                "from test.support import import_fresh_module",
                "from test.support.import_helper import import_fresh_module",
                "the helper moved in Python 3.10; the suite predates it",
            ),
            (
                "_support.py",
                'IS_PYPY = platform.python_implementation() == "PyPy"',
                "IS_PYPY = True",
                "the C accelerator is not built from an sdist checkout: the suite's own "
                "branch for an interpreter without it (two copies of the pure module)",
            ),
        ),
        left_out={
            "tests/test_zoneinfo.py": "no hypothesis test",
        },
    ),
    Suite(
        name="natsort",
        # First tried held out (session 6): 79 of 90 passing bare passed out of process.
        version="8.4.0",
        sha256="45312c4a0e5507593da193dedd04abb1469253b601ecaf63445ad80f0a1ea581",
        top="natsort-8.4.0",
        pythonpath=".",
        package="natsort",
        idioms="judge functions the library calls back (key factories, `lambda y: ('', y)`) "
        "and arguments handed back through them (`f(x)[1] is x`), IntEnum flags, the "
        "library's compiled patterns as parametrize values, partial, bytes and floats",
        files={
            "tests/conftest.py": "conftest.py",
            "tests/test_fake_fastnumbers.py": "test_fake_fastnumbers.py",
            "tests/test_final_data_transform_factory.py": "test_final_data_transform_factory.py",
            "tests/test_input_string_transform_factory.py": "test_input_string_transform_factory.py",
            "tests/test_natsort_key.py": "test_natsort_key.py",
            "tests/test_parse_bytes_function.py": "test_parse_bytes_function.py",
            "tests/test_parse_number_function.py": "test_parse_number_function.py",
            "tests/test_parse_string_function.py": "test_parse_string_function.py",
            "tests/test_string_component_transform_factory.py": "test_string_component_transform_factory.py",
            "tests/test_utils.py": "test_utils.py",
        },
        left_out={
            "tests/test_main.py": "its hypothesis tests need pytest-mock's `mocker`, which "
            "the judge does not install",
            "tests/test_natsorted.py": "plain tests, no hypothesis (as the other files left)",
        },
    ),
)


# --- pure: outcomes, differences, reasons ----------------------------------


@dataclass(frozen=True)
class Outcomes:
    """Per node id: "passed", "failed", "skipped" or why it did not run; failures' text.

    `file_errors` holds each file that failed to collect, with the error's text:
    its tests have no node id of their own then.
    """

    status: Mapping[str, str]
    text: Mapping[str, str] = field(default_factory=dict)
    file_errors: Mapping[str, str] = field(default_factory=dict)

    def passed(self) -> set[str]:
        return {n for n, s in self.status.items() if s == "passed"}


# Why a test that passes bare fails out of process, by idiom: first match wins.
# Patterns are read against the failure's own line (error_line) first, then its text.
REASONS: tuple[tuple[str, str], ...] = (
    (r"Handle\(\) takes no arguments|metaclass conflict|__init_subclass__",
     "a judge class subclasses a worker class"),
    (r"issubclass\(\) arg 1 must be a class|isinstance\(\) arg 2 must be",
     "a stand-in class where the judge needs a real class (issubclass, isinstance)"),
    (r"not type 'Handle'|not 'Handle'|'Handle' object",
     "a handle where the judge needs the real object (a standard-library or C API)"),
    (r"Expected a SearchStrategy but got",
     "a strategy of the code under test drawn by the judge's hypothesis"),
    (r"<class 'patchjudge\.boundary\.standin\.Handle'>", "type() of a handle (the stand-in's class)"),
    (r"\(a judge-side object\) cannot cross",
     "a judge-side object sent to the code (a standard-library value, a judge object)"),
    (r"cannot pickle|pickl", "pickle of a handle"),
    (r"deepcopy|__deepcopy__|copy\.copy|__reduce", "copy of a handle"),
    (r"__slots__|__dict__|repeats slot", "object layout (__slots__, __dict__) of a handle"),
    (r"weakref|weakly", "weak reference to a handle"),
    (r"gc\.|refcount|getrefcount|garbage", "object lifetime (gc) across the boundary"),
    (r"from_type|resolve .* strategy", "st.from_type of a stand-in"),
    (r"cannot cross|can not cross", "a value that cannot cross"),
    (r"unhashable", "hashing a judge object in the worker"),
    (r"crashed|did not answer|deadline", "worker crash or call deadline"),
)  # fmt: skip


def error_line(text: str) -> str:
    """Pure: the failure's own words, one line: its first `E   ` line naming an exception.

    Else the first `E   ` line with a word in it (not an exception group's
    frame, not a line of hypothesis's data), else the text's last line.
    """
    lines = [x[4:].strip() for x in text.splitlines() if x.startswith("E   ")]
    named = [x for x in lines if re.match(r"[\w.]*(Error|Exception|Exit|Interrupt)\b", x)]
    worded = [x for x in lines if re.search(r"[A-Za-z]{2}", x)]
    rest = [x.strip() for x in text.splitlines() if x.strip()]
    found = (named or worded or rest[-1:] or ["no output"])[0]
    # Addresses differ from run to run; the reason must not.
    found = re.sub(r"0x[0-9a-f]+", "0x...", found)
    return found[:200]


def idiom(text: str) -> str:
    """Pure: the idiom a failure's text names (its own line first), or "other"."""
    for where in (error_line(text), text):
        for pattern, name in REASONS:
            if re.search(pattern, where, re.IGNORECASE):
                return name
    return "other"


def file_of(nodeid: str) -> str:
    return nodeid.partition("::")[0]


def reason(nodeid: str, oop: Outcomes) -> str:
    """Pure: why one test that passes bare does not pass out of process, idiom first."""
    status = oop.status.get(nodeid)
    if status == "failed":
        text = oop.text.get(nodeid, "")
        return f"{idiom(text)}: {error_line(text)}"
    if file_of(nodeid) in oop.file_errors:
        text = oop.file_errors[file_of(nodeid)]
        return f"{idiom(text)}: at collection: {error_line(text)}"
    if oop.file_errors:
        first = sorted(oop.file_errors)[0]
        return f"{status or 'not run'}: pytest stopped at the collection error in {first}"
    return f"{status or 'not collected'} out of process"


def differences(bare: Outcomes, oop: Outcomes) -> dict[str, str]:
    """Pure: every test that passes bare and not out of process, with its reason."""
    return {nodeid: reason(nodeid, oop) for nodeid in sorted(bare.passed() - oop.passed())}


def by_idiom(found: Mapping[str, str]) -> dict[str, int]:
    """Pure: how many differences each idiom (a reason's name, before the colon) accounts for."""
    counts: dict[str, int] = {}
    for why in found.values():
        name = why.partition(":")[0]
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def ratchet(found: Mapping[str, str], known: Mapping[str, str]) -> list[str]:
    """Pure: what the committed list gets wrong, both ways, one line each."""
    new = [
        f"passes bare, not out of process: {n}: {found[n]}" for n in sorted(set(found) - set(known))
    ]
    stale = [f"listed as a known difference but passes out of process now (drop it): {n}"
             for n in sorted(set(known) - set(found))]  # fmt: skip
    return new + stale


def collection_errors(output: str) -> dict[str, str]:
    """Pure: pytest's `ERROR collecting FILE` sections, file -> the section's text."""
    found: dict[str, str] = {}
    parts = re.split(r"^_+ ERROR collecting (\S+) _+$", output, flags=re.MULTILINE)
    for path, body in zip(parts[1::2], parts[2::2], strict=True):
        found[path] = re.split(r"^(?:=+ |_+ )", body, maxsplit=1, flags=re.MULTILINE)[0]
    return found


def oop_outcomes(report: Mapping[str, object]) -> Outcomes:
    """Pure: per-test outcomes from the properties lane's report (its details and reasons)."""
    details = report.get("details")
    assert isinstance(details, dict), report
    status = {n: "passed" for n in details.get("passed", [])}
    text = {}
    for f in details.get("failed", []):
        status[f["nodeid"]] = "failed"
        text[f["nodeid"]] = f.get("longrepr", "")
    reasons = report.get("reasons", [])
    assert isinstance(reasons, list)
    sections = collection_errors(str(details.get("output_tail", "")))
    file_errors = {}
    for line in reasons:
        # "property skipped: NODEID (...)", "property did not run: NODEID"
        found = re.match(r"property (skipped|xfailed|did not run): (\S+)", line)
        if found and found.group(2) not in status:
            status[found.group(2)] = found.group(1)
        found = re.match(r"collection error: (\S+)", line)
        if found:
            file_errors[found.group(1)] = sections.get(found.group(1), line)
    return Outcomes(status, text, file_errors)


def share(passed: int, of: int) -> str:
    return f"{100 * passed / of:.1f}%" if of else "n/a"


# --- the world: download, repo, runs ---------------------------------------


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    drop = ("GIT_", "NOX", "PYTEST", "PYTHONPATH", "HYPOTHESIS", "GITHUB_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra or {})
    return env


def fetch(suite: Suite, cache: Path) -> Path:
    """The pinned sdist, by pip with --require-hashes; raises on any failure."""
    dest = cache / f"{suite.name}-{suite.version}"
    dest.mkdir(parents=True, exist_ok=True)
    found = [p for p in dest.iterdir() if p.name.endswith(".tar.gz")]
    if not found:
        req = dest / "requirements.txt"
        req.write_text(f"{suite.name}=={suite.version} --hash=sha256:{suite.sha256}\n")
        # --no-binary for this project only: its build backend may come as a
        # wheel (pip prepares the sdist's metadata), a Rust one built from source cannot.
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
             "--no-binary", suite.name, "-r", str(req), "-d", str(dest)],
            check=True, capture_output=True, text=True, env=clean_env(),
        )  # fmt: skip
        found = [p for p in dest.iterdir() if p.name.endswith(".tar.gz")]
    if len(found) != 1 or hashlib.sha256(found[0].read_bytes()).hexdigest() != suite.sha256:
        raise RuntimeError(f"{suite.name}: expected one sdist with sha256 {suite.sha256} in {dest}")
    return found[0]


def ledger(suite: Suite, examples: int = MAX_EXAMPLES) -> str:
    return f"""\
[gate]
base = "main"
pythonpath = [{json.dumps(suite.pythonpath)}]
isolation = "sandbox"

[map]
"{suite.package}/**" = ["properties"]
"*" = []

[properties]
seed = {SEED}
max_examples = {examples}
timeout_s = 600
review_mutants = 0
"""


def adopt(suite: Suite, archive: Path, dest: Path, examples: int = MAX_EXAMPLES) -> Path:
    """The project as a user adopting patchjudge makes it; a comment-only patch on `patch`."""
    unpacked = dest.parent / f"{dest.name}-unpacked"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    shutil.move(str(unpacked / suite.top), dest)
    shutil.rmtree(unpacked)
    props = dest / "eval" / "properties"
    props.mkdir(parents=True)
    for source, target in suite.files.items():
        shutil.copyfile(dest / source, props / target)
    for target, old, new, _why in suite.adjustments:
        path = props / target
        text = path.read_text()
        if old not in text:
            raise RuntimeError(f"{suite.name}: adjustment not applicable to {target}: {old!r}")
        path.write_text(text.replace(old, new))
    (dest / "eval" / "gate.toml").write_text(ledger(suite, examples))
    git(dest, "init", "-q", "-b", "main")
    commit(dest, f"{suite.name} {suite.version} with its hypothesis tests as properties")
    git(dest, "checkout", "-q", "-b", "patch")
    init = dest / suite.package / "__init__.py"
    init.write_text(init.read_text() + "\n# a comment-only patch\n")
    commit(dest, "a comment-only patch")
    return dest


# Loaded with -p into the bare run: the judge's seed and example count as a
# profile (set at configure time, before hypothesis is imported by a test
# file), and each node id's outcome as pytest reports it, to a JSON file.
BARE_PLUGIN = """
import json, os


def pytest_configure(config):
    from hypothesis import settings

    examples = int(os.environ["COMPAT_EXAMPLES"])
    settings.register_profile(
        "compat", max_examples=examples, database=None, deadline=None, derandomize=False
    )
    settings.load_profile("compat")


def pytest_runtest_logreport(report):
    seen = _OUT.setdefault(report.nodeid, "passed")
    if report.failed:
        _OUT[report.nodeid] = "failed"
        _TEXT[report.nodeid] = report.longreprtext
    elif report.skipped and seen == "passed":
        _OUT[report.nodeid] = "skipped"


def pytest_unconfigure(config):
    with open(os.environ["COMPAT_OUTCOMES"], "w") as f:
        json.dump({"status": _OUT, "text": _TEXT}, f)


_OUT = {}
_TEXT = {}
"""


def run_bare(
    suite: Suite, repo: Path, work: Path, examples: int = MAX_EXAMPLES
) -> tuple[Outcomes, float]:
    """`pytest eval/properties` as the team runs it, the library importable; outcomes, seconds."""
    plugin_dir = work / "bare-plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "compat_bare.py").write_text(BARE_PLUGIN)
    out = work / f"{suite.name}-bare.json"
    env = clean_env(
        {
            "PYTHONPATH": os.pathsep.join([str(repo / suite.pythonpath), str(plugin_dir)]),
            "COMPAT_OUTCOMES": str(out),
            "COMPAT_EXAMPLES": str(examples),
            # No __pycache__ in the repo; the lane compiles its fresh scratch copy each run too.
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "compat_bare",
            "-c", os.devnull, "--rootdir", str(repo), f"--hypothesis-seed={SEED}",
            "eval/properties"]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    data = json.loads(out.read_text())
    return Outcomes(data["status"], data["text"]), took


def run_oop(repo: Path) -> tuple[Outcomes, float, dict[str, object]]:
    """`patchjudge properties` on the comment-only patch; outcomes, seconds, the report."""
    reports = repo / ".patchjudge"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "patchjudge", "properties", "--base", "main",
         "--reports", str(reports)],
        cwd=repo, env=no_git_env(clean_env()), capture_output=True, text=True, check=False,
    )  # fmt: skip
    took = time.perf_counter() - start
    path = reports / "properties.json"
    if proc.returncode not in (0, 1) or not path.is_file():
        raise RuntimeError(f"properties lane exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    report = json.loads(path.read_text())
    return oop_outcomes(report), took, report


@dataclass(frozen=True)
class Compared:
    suite: Suite
    bare: Outcomes
    oop: Outcomes
    bare_s: float
    oop_s: float

    def differences(self) -> dict[str, str]:
        return differences(self.bare, self.oop)

    def line(self) -> str:
        n_bare = len(self.bare.passed())
        n_both = len(self.bare.passed() & self.oop.passed())
        return (
            f"{self.suite.name} {self.suite.version}: {n_bare} pass bare, {n_both} of them "
            f"out of process ({share(n_both, n_bare)}); properties lane {self.oop_s:.1f} s, "
            f"bare pytest {self.bare_s:.1f} s"
        )


def compare_suite(suite: Suite, cache: Path, work: Path) -> Compared:
    archive = fetch(suite, cache)
    repo = adopt(suite, archive, work / suite.name)
    bare, bare_s = run_bare(suite, repo, work)
    oop, oop_s, _ = run_oop(repo)
    return Compared(suite, bare, oop, bare_s, oop_s)


def load_known(path: Path = KNOWN) -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(path.read_text()) if path.is_file() else {}
    return data


def write_known(found: Iterable[Compared], path: Path = KNOWN) -> None:
    data = {c.suite.name: c.differences() for c in found}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--update", action="store_true", help=f"rewrite {KNOWN.name}")
    parser.add_argument("--work", type=Path, help="a new directory for the repos (default: temp)")
    parser.add_argument("--cache", type=Path, help="where the sdists are kept (default: in --work)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="patchjudge-compat-"))
    work.mkdir(parents=True, exist_ok=True)
    found = [compare_suite(s, args.cache or work / "sdists", work) for s in SUITES]
    for c in found:
        print(c.line())
        print(f"  differences by idiom: {by_idiom(c.differences())}")
        for nodeid, why in c.differences().items():
            print(f"  {nodeid}: {why}")
    if args.update:
        write_known(found)
        print(f"wrote {KNOWN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
