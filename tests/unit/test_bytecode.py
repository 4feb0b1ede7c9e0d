"""issue 19: the bytecode init's noxfile writes once into the judge's venv (patchjudge.bytecode).

Real interpreters throughout: the compile step as the noxfile runs it, an
import that reads what it wrote, a source changed after it, and a box that
tries to write that bytecode from a lane's venv.
"""

from __future__ import annotations

import base64
import errno
import importlib.util
import json
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pluggy
import pytest

from patchjudge import bytecode, cache, guard
from tests.attack_helpers import require_sandbox
from tests.helpers import bare_venv

# A pyc's header: magic, flags (bit 0: hash-based, bit 1: checked), then the source's hash.
CHECKED_HASH = 0b11


def _site(tmp_path: Path) -> Path:
    """A site-packages with a real package the lanes import and one they never do."""
    site = tmp_path / "judge" / "lib" / "site-packages"
    shutil.copytree(
        Path(pluggy.__file__).parent, site / "pluggy", ignore=shutil.ignore_patterns("__pycache__")
    )
    (site / "setuptools").mkdir()
    (site / "setuptools" / "__init__.py").write_text("X = 1\n")
    (site / "pygments" / "lexers").mkdir(parents=True)
    for name in (
        "__init__.py",
        "lexer.py",
        "lexers/__init__.py",
        "lexers/python.py",
        "lexers/c.py",
    ):
        (site / "pygments" / name).write_text("Y = 1\n")
    return site


def _compile(site: Path, *flags: str) -> None:
    subprocess.run(
        [sys.executable, "-P", "-m", "patchjudge.bytecode", *flags, str(site)],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_packages_the_lanes_import_get_hash_checked_bytecode_and_nothing_else(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path)
    _compile(site, "--code")
    sources = sorted((site / "pluggy").rglob("*.py"))
    assert sources
    for source in sources:
        pyc = Path(importlib.util.cache_from_source(str(source))).read_bytes()
        assert int.from_bytes(pyc[4:8], "little") == CHECKED_HASH, source
        assert pyc[8:16] == importlib.util.source_hash(source.read_bytes()), source
    # pytest's pygments modules, not the lexers nobody asked for, nor setuptools.
    assert Path(importlib.util.cache_from_source(str(site / "pygments/lexers/python.py"))).exists()
    assert not Path(importlib.util.cache_from_source(str(site / "pygments/lexers/c.py"))).exists()
    assert not (site / "setuptools" / "__pycache__").exists()


def test_a_timestamp_pyc_left_by_an_install_is_replaced_by_a_hash_checked_one(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path)
    # What pip leaves: timestamp bytecode whose recorded mtime matches the source's.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(site / "pluggy")],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    source = site / "pluggy" / "_hooks.py"
    pyc = Path(importlib.util.cache_from_source(str(source)))
    assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 0
    _compile(site, "--code")
    header = pyc.read_bytes()[:16]
    assert int.from_bytes(header[4:8], "little") == CHECKED_HASH
    assert header[8:16] == importlib.util.source_hash(source.read_bytes())


def test_a_lane_reads_the_bytecode_and_never_over_a_changed_source(tmp_path: Path) -> None:
    site = _site(tmp_path)
    _compile(site, "--code")
    # As the lanes start the code's interpreter: no bytecode written, hashes checked.
    argv = [sys.executable, "-I", "-B", "--check-hash-based-pycs", "always", "-v", "-c"]
    ask = f"import sys; sys.path.insert(0, {str(site)!r}); import pluggy; print(pluggy.HookspecMarker)"
    loaded = subprocess.run([*argv, ask], capture_output=True, text=True, check=True)
    pyc = importlib.util.cache_from_source(str(site / "pluggy" / "__init__.py"))
    assert f"code object from '{pyc}'" in loaded.stderr
    # A source rewritten after the compile (same size, same mtime or not): its bytes win.
    init = site / "pluggy" / "__init__.py"
    init.write_text(init.read_text() + "\nHookspecMarker = 'rewritten'\n")
    rewritten = subprocess.run([*argv, ask], capture_output=True, text=True, check=True)
    assert rewritten.stdout.strip() == "rewritten"
    assert f"code object from '{pyc}'" not in rewritten.stderr


def test_the_judges_venv_by_default_and_its_own_packages(tmp_path: Path) -> None:
    # With no SITE: the running interpreter's own site-packages, patchjudge among them.
    assert bytecode.targets(Path(sysconfig.get_paths()["purelib"]), bytecode.JUDGE)
    assert "patchjudge" in bytecode.JUDGE and "hypothesis" in bytecode.JUDGE
    assert set(bytecode.PYTEST) <= set(bytecode.JUDGE)
    site = _site(tmp_path)
    assert bytecode.targets(site, ("pluggy", "absent")) == [
        site / "pluggy",
        *(site / f for f in bytecode.PYGMENTS if (site / f).is_file()),
    ]


def test_boxed_code_cannot_write_the_shared_judge_venvs_bytecode(tmp_path: Path) -> None:
    # A lane's venv as init's noxfile makes it: its own site-packages holds a .pth
    # naming the run's judge venv, compiled once before any patch code runs.
    require_sandbox()
    python, own = bare_venv(tmp_path / "lane")
    shared = _site(tmp_path)
    judge = sysconfig.get_paths()["purelib"]
    adds = "".join(f"import site; site.addsitedir({str(p)!r})\n" for p in (shared, judge))
    (own / "patchjudge-judge.pth").write_text(adds)
    _compile(shared)
    pyc = Path(importlib.util.cache_from_source(str(shared / "pluggy" / "__init__.py")))
    before = pyc.read_bytes()
    planted = pyc.parent / f"planted.{sys.implementation.cache_tag}.pyc"
    attack = f"""
import pathlib
for target in ({str(pyc)!r}, {str(planted)!r}):
    try:
        pathlib.Path(target).write_bytes(b"evil")
        print("wrote", target)
    except OSError as exc:
        print("refused", exc.errno)
"""
    run = f"""
import subprocess, sys
from pathlib import Path
from patchjudge.boundary import sandbox
box = sandbox.Box(tree=Path({str(tmp_path / "tree")!r}), home=Path({str(tmp_path / "home")!r}))
with sandbox.wrapped(box, [sys.executable, "-I", "-c", {attack!r}]) as (argv, fds):
    done = subprocess.run(argv, capture_output=True, text=True, pass_fds=fds, timeout=60)
print(done.stdout + done.stderr, end="")
"""
    (tmp_path / "tree").mkdir()
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        [str(python), "-P", "-c", run], capture_output=True, text=True, timeout=120
    )
    # Seen, and read-only: the box binds the shared venv as it binds sys.prefix.
    assert done.stdout.splitlines() == [f"refused {errno.EROFS}"] * 2, done
    assert pyc.read_bytes() == before
    assert not planted.exists()


def test_unboxed_bytecode_rewritten_or_planted_in_the_judge_venv_is_seen_by_the_guard(
    tmp_path: Path,
) -> None:
    # Unboxed, tested code runs as the judge's user: the guard's walk of the
    # shared venv (guard.shared_site) must see a .pyc as it sees a source.
    site = _site(tmp_path)
    _compile(site)
    pyc = Path(importlib.util.cache_from_source(str(site / "pluggy" / "__init__.py")))
    before = guard.walk(site)
    assert str(pyc) in before
    st = pyc.stat()
    pyc.write_bytes(pyc.read_bytes()[:16] + b"\0" * (st.st_size - 16))
    os.utime(pyc, ns=(st.st_atime_ns, st.st_mtime_ns))  # re-dated: the ctime still moved
    planted = pyc.parent / f"planted.{sys.implementation.cache_tag}.pyc"
    planted.write_bytes(b"evil")
    assert guard.changes(before, guard.walk(site)) == [f"added {planted}", f"changed {pyc}"]


def test_the_codes_venv_takes_the_judges_bytecode_of_the_same_sources_and_compiles_the_rest(
    tmp_path: Path,
) -> None:
    # The judge's venv compiled first; the code's holds the same wheels, but one
    # source differs (a project pin that replaced it) and one has no donor at all.
    judge = _site(tmp_path)
    _compile(judge)
    code = tmp_path / "code" / "lib" / "site-packages"
    shutil.copytree(judge, code, ignore=shutil.ignore_patterns("__pycache__"))
    changed = code / "pluggy" / "_result.py"
    changed.write_text(changed.read_text() + "\nCHANGED = 1\n")
    (code / "pluggy" / "_extra.py").write_text("EXTRA = 1\n")
    _compile(code, "--code", "--from", str(judge))
    for source in sorted((code / "pluggy").rglob("*.py")):
        pyc = Path(importlib.util.cache_from_source(str(source))).read_bytes()
        theirs = judge / source.relative_to(code)
        donor = Path(importlib.util.cache_from_source(str(theirs)))
        assert pyc[8:16] == importlib.util.source_hash(source.read_bytes()), source
        if source in (changed, code / "pluggy" / "_extra.py"):
            assert int.from_bytes(pyc[4:8], "little") == CHECKED_HASH, source
            assert not donor.exists() or pyc != donor.read_bytes(), source
        else:
            assert pyc == donor.read_bytes(), source
    assert not (code / "setuptools" / "__pycache__").exists()


@pytest.mark.parametrize(
    ("flags", "source", "reused"),
    [
        (CHECKED_HASH, b"X = 1\n", True),
        (CHECKED_HASH, b"X = 2\n", False),  # the code's source is not the donor's
        (0b01, b"X = 1\n", False),  # unchecked hash: the interpreter would believe it blindly
        (0, b"X = 1\n", False),  # timestamp bytecode, as pip writes it
    ],
)
def test_a_donor_pyc_is_reused_only_as_checked_bytecode_of_the_very_source(
    flags: int, source: bytes, reused: bool
) -> None:
    code = compile(b"X = 1\n", "<x>", "exec")
    pyc = b"".join(
        (
            importlib.util.MAGIC_NUMBER,
            flags.to_bytes(4, "little"),
            importlib.util.source_hash(b"X = 1\n"),
            marshal.dumps(code),
        )
    )
    assert bytecode.reusable(pyc, source) is reused
    assert not bytecode.reusable(pyc[:16], b"X = 1\n")  # a header with no code


def test_what_no_lane_imports_is_left_uncompiled(tmp_path: Path) -> None:
    site = tmp_path / "site"
    files = {
        "hypothesis/__init__.py": True,
        "hypothesis/extra/__init__.py": True,
        "hypothesis/extra/pytestplugin.py": True,  # a suite that uses hypothesis loads it
        "hypothesis/extra/ghostwriter.py": False,
        "hypothesis/extra/django/_impl.py": False,
        "patchjudge/cli.py": True,
        "patchjudge/commands/gate.py": True,
        "patchjudge/commands/init.py": False,
        "patchjudge/scaffold.py": False,
    }
    for name in files:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text("X = 1\n")
    _compile(site)
    compiled = {
        name: Path(importlib.util.cache_from_source(str(site / name))).exists() for name in files
    }
    assert compiled == files


# issue 19, session 12: the judge's bytecode kept across nox runs (patchjudge.cache rules).


def _kept(site: Path, cache_dir: Path, repo: Path, *flags: str) -> str:
    """`python -m patchjudge.bytecode SITE` as init's noxfile runs it; its tally line."""
    env = {**os.environ, "PATCHJUDGE_CACHE_DIR": str(cache_dir)}
    argv = [sys.executable, "-P", "-m", "patchjudge.bytecode", str(site)]
    argv += ["--cache-for", str(repo), *flags]
    done = subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120, env=env)
    return done.stdout.strip()


def _pycs(site: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("__pycache__/*.pyc"))
    }


def test_a_second_cold_run_reads_the_kept_bytecode_and_compiles_nothing(tmp_path: Path) -> None:
    require_sandbox()
    first = _site(tmp_path / "run1")
    found = bytecode.sources(first, bytecode.JUDGE)
    # One entry per source's bytes: a file equal to one compiled before is a hit.
    count, distinct = len(found), len({p.read_bytes() for p in found})
    kept, repo = tmp_path / "cache", tmp_path / "repo"
    flags = ("--ledger-isolation", "sandbox")
    said = _kept(first, kept, repo, *flags)
    assert said == f"bytecode: {count - distinct} from the cache, {distinct} compiled, 0 failed"
    # The next run's venv is a fresh one: the same sources, no bytecode at all.
    second = _site(tmp_path / "run2")
    assert not _pycs(second)
    said = _kept(second, kept, repo, *flags)
    assert said == f"bytecode: {count} from the cache, 0 compiled, 0 failed"
    assert _pycs(second) == _pycs(first)
    # What it wrote is what an import reads, hash-checked against the very source.
    argv = [sys.executable, "-I", "-B", "--check-hash-based-pycs", "always", "-v", "-c"]
    ask = f"import sys; sys.path.insert(0, {str(second)!r}); import pluggy"
    loaded = subprocess.run([*argv, ask], capture_output=True, text=True, check=True)
    pyc = importlib.util.cache_from_source(str(second / "pluggy" / "__init__.py"))
    assert f"code object from '{pyc}'" in loaded.stderr


def test_a_kept_entry_whose_bytes_differ_or_that_is_not_its_sources_is_not_used(
    tmp_path: Path,
) -> None:
    require_sandbox()
    kept, repo = tmp_path / "cache", tmp_path / "repo"
    flags = ("--ledger-isolation", "sandbox")
    _kept(_site(tmp_path / "run1"), kept, repo, *flags)
    hooks, result = (Path("pluggy") / n for n in ("_hooks.py", "_result.py"))
    site = _site(tmp_path / "run2")
    entry = {
        name: cache.path_of(kept, bytecode.KIND, bytecode.cache_key((site / name).read_bytes()))
        for name in (hooks, result)
    }
    # One entry's payload changed by a byte (its recorded digest no longer holds);
    # another's replaced, digest and all, by the bytecode of a different source.
    doc = json.loads(entry[hooks].read_text())
    payload = bytearray(base64.b64decode(doc["payload"]))
    payload[-1] ^= 1
    doc["payload"] = base64.b64encode(bytes(payload)).decode()
    entry[hooks].write_text(json.dumps(doc))
    other = json.loads(entry[hooks].read_text())  # any pyc but _result.py's own
    key = json.loads(entry[result].read_text())["key"]
    entry[result].write_bytes(cache.encode(key, base64.b64decode(other["payload"])))
    count = len(bytecode.sources(site, bytecode.JUDGE))
    said = _kept(site, kept, repo, *flags)
    assert said == f"bytecode: {count - 2} from the cache, 2 compiled, 0 failed"
    for name in (hooks, result):
        source = (site / name).read_bytes()
        pyc = Path(importlib.util.cache_from_source(str(site / name))).read_bytes()
        assert bytecode.reusable(pyc, source), name
        assert marshal.loads(pyc[16:]).co_consts == compile(source, "x", "exec").co_consts


def test_an_unboxed_run_neither_reads_nor_keeps_bytecode(tmp_path: Path) -> None:
    kept, repo = tmp_path / "cache", tmp_path / "repo"
    site = _site(tmp_path / "run1")
    count = len(bytecode.sources(site, bytecode.JUDGE))
    # isolation "process": the tested code runs as the judge's user and could write it.
    said = _kept(site, kept, repo, "--ledger-isolation", "process")
    assert said == f"bytecode: 0 from the cache, {count} compiled, 0 failed"
    assert not kept.exists()
    # Nor inside the checkout, whatever PATCHJUDGE_CACHE_DIR says.
    inside = repo / ".cache"
    assert bytecode.cache_dir(repo, "sandbox", None, {"PATCHJUDGE_CACHE_DIR": str(inside)}) is None


def test_only_auto_probes_for_a_sandbox_before_keeping_bytecode(tmp_path: Path) -> None:
    # issue 19, session 12: with "sandbox" every lane boxes the code or none runs
    # it (the run stops first), so the cache is the judge's whether a box would
    # start here or not: no probe (two interpreters and a box) is needed.
    repo, kept = tmp_path / "repo", tmp_path / "cache"
    no_bwrap = {"PATH": str(tmp_path / "empty"), "PATCHJUDGE_CACHE_DIR": str(kept)}
    assert bytecode.cache_dir(repo, "sandbox", None, no_bwrap) == kept
    assert bytecode.cache_dir(repo, "auto", "sandbox", no_bwrap) == kept
    # "auto" is boxed only where a box starts: no bwrap, no cache.
    assert bytecode.cache_dir(repo, "auto", None, no_bwrap) is None
    assert bytecode.cache_dir(repo, "process", None, no_bwrap) is None
    # A command line that would loosen the ledger stops the run: nothing kept.
    assert bytecode.cache_dir(repo, "sandbox", "auto", no_bwrap) is None


def test_the_build_backends_pinned_in_build_txt_and_what_they_need_get_bytecode(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path)

    def dist(name: str, *requires: str) -> None:
        (site / name).mkdir()
        (site / name / "__init__.py").write_text(f"NAME = {name!r}\n")
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        meta = [f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0"]
        meta += [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(meta) + "\n")
        (info / "RECORD").write_text(f"{name}/__init__.py,,\n{info.name}/METADATA,,\n")

    dist("backend_x", "helper_y>=1", "extra_only; extra == 'docs'")
    dist("helper_y")
    dist("extra_only")
    dist("unpinned")
    build = tmp_path / "build.txt"
    build.write_text("# pins\nbackend-x==1.0 \\\n    --hash=sha256:00\n")
    assert bytecode.pinned_names(build.read_text()) == ["backend-x"]
    _compile(site, "--build", str(build))
    compiled = {
        name: Path(importlib.util.cache_from_source(str(site / name / "__init__.py"))).exists()
        for name in ("backend_x", "helper_y", "extra_only", "unpinned")
    }
    assert compiled == {"backend_x": True, "helper_y": True, "extra_only": False, "unpinned": False}


def test_the_code_venvs_step_starts_without_the_sandbox_or_importlib_metadata() -> None:
    # `--code` runs once a nox run and needs neither: only the judge venv's step
    # asks the sandbox (for the cache) and reads build.txt's distributions.
    check = (
        "import sys, patchjudge.bytecode; "
        "print(sorted({'patchjudge.boundary.sandbox', 'importlib.metadata'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", check], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_judges_venv_and_the_lane_runtime_beside_it_are_compiled_in_one_step(
    tmp_path: Path,
) -> None:
    # issue 19, session 12: init's noxfile keeps lane.txt in a venv of its own that the
    # judge's venv and the code's reach by a .pth; one step compiles both, and a
    # backend in the judge's venv has what it needs compiled in the runtime.
    judge, runtime = _site(tmp_path / "judge"), _site(tmp_path / "lane")
    shutil.rmtree(judge / "pluggy")
    (judge / "patchjudge").mkdir()
    (judge / "patchjudge" / "__init__.py").write_text("J = 1\n")
    for site, name, requires in ((judge, "backend_x", "helper_y"), (runtime, "helper_y", "")):
        (site / name).mkdir()
        (site / name / "__init__.py").write_text(f"NAME = {name!r}\n")
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        needs = f"Requires-Dist: {requires}\n" if requires else ""
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{needs}"
        )
        (info / "RECORD").write_text(f"{name}/__init__.py,,\n{info.name}/METADATA,,\n")
    build = tmp_path / "build.txt"
    build.write_text("backend-x==1.0 \\\n    --hash=sha256:00\n")
    argv = [sys.executable, "-P", "-m", "patchjudge.bytecode", str(judge), str(runtime)]
    done = subprocess.run(
        [*argv, "--build", str(build)], check=True, capture_output=True, text=True
    )
    wanted = [
        *bytecode.sources(judge, bytecode.JUDGE),  # patchjudge's own among them
        judge / "backend_x" / "__init__.py",
        runtime / "helper_y" / "__init__.py",
        *bytecode.sources(runtime, bytecode.JUDGE),
    ]
    assert judge / "patchjudge" / "__init__.py" in wanted
    for source in wanted:
        pyc = Path(importlib.util.cache_from_source(str(source)))
        assert bytecode.reusable(pyc.read_bytes(), source.read_bytes()), source
    assert done.stdout.strip().endswith(f"{len(set(wanted))} compiled, 0 failed"), done.stdout
