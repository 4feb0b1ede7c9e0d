"""A run of the base's tree sees the base's tree, not the project's build (red team, s14).

The code's venv holds the head's build of the project (`[gate] install`). In a
run of the merge base's tree (`worker.hide_own_build`) nothing that build
installed is importable unless the tree holds it, and importlib.metadata shows
its distribution without the head's entry points, file list or nested
distributions. Each case runs in a fresh interpreter: the function changes the
import system of the process it runs in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import patchjudge

JUDGE = str(Path(patchjudge.__file__).parent.parent)

# What the head's wheel installed, as pip writes it (paths relative to the site directory).
BUILT = {
    "_calc_speedups.py": "WHERE = 'head'\n",
    "calc/__init__.py": "WHERE = 'head'\n",
    "calc/_speedups.py": "WHERE = 'head'\n",
    "nsp/__init__.py": "WHERE = 'head'\n",
    "headonly/mod.py": "WHERE = 'head'\n",
    "calc-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n",
    "calc-0.1.dist-info/entry_points.txt": (
        "[calc.plugins]\nmine = calc_plugins:run\nhead = _calc_speedups:run\n"
        "std = os:getcwd\n\n[console_scripts]\ncalc = calc.core:main\n"
    ),
    "calc-0.1.dist-info/direct_url.json": json.dumps(
        {"url": "file:///tmp/wheels/calc-0.1-py3-none-any.whl", "archive_info": {}}
    ),
    "sneaky-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sneaky\nVersion: 1.0\n",
    "sneaky-1.0.dist-info/entry_points.txt": "[calc.plugins]\nsneaky = headonly.mod:run\n",
}
# A dependency from an index: no direct_url.json, untouched.
DEPENDENCY = {
    "dep.py": "WHERE = 'dep'\n",
    "dep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: dep\nVersion: 1.0\n",
    "dep-1.0.dist-info/entry_points.txt": "[calc.plugins]\ndep = dep:run\n",
    "dep-1.0.dist-info/RECORD": "dep.py,,\ndep-1.0.dist-info/METADATA,,\n",
}
TREE = {
    "calc/__init__.py": (
        "import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n"
        "try:\n    from calc import _speedups\nexcept ImportError:\n    _speedups = None\n"
        "WHERE = 'tree'\n"
    ),
    "calc/core.py": "WHERE = 'tree'\n",
    "calc_plugins.py": "WHERE = 'tree'\n",
    "nsp/mine.py": "WHERE = 'tree'\n",
}

PROBE = """
import importlib, importlib.util, json, sys
site, tree, checkout, hide = sys.argv[1:5]
sys.path[:0] = [site, JUDGE]
sys.path += [checkout, checkout + "/.venv/site"]
if hide == "1":
    from patchjudge.boundary.worker import hide_own_build
    hide_own_build([tree])
sys.path.insert(0, tree)
from importlib import metadata

def where(name):
    try:
        return importlib.import_module(name).WHERE
    except ImportError as exc:
        return "missing: " + str(exc)

import calc
print(json.dumps({
    "top": where("_calc_speedups"),
    "calc": calc.WHERE,
    "portion": calc._speedups and calc._speedups.WHERE,
    "core": where("calc.core"),
    "namespace": where("nsp.mine"),
    "head folder": where("headonly.mod"),
    "editable": where("editable_only"),
    "probed": importlib.util.find_spec("_calc_speedups") is not None,
    "deep": where("deep_dep"),
    "dep": where("dep"),
    "plugins": sorted(e.name for e in metadata.entry_points(group="calc.plugins")),
    "script": "calc" in [e.name for e in metadata.entry_points(group="console_scripts")],
    "version": metadata.version("calc"),
    "files": metadata.files("calc") is None,
    "sneaky": [d.metadata["Name"] for d in metadata.distributions()].count("sneaky"),
}))
""".replace("JUDGE", repr(JUDGE))


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _probe(tmp_path: Path, hide: bool) -> dict[str, object]:
    site, tree, checkout = tmp_path / "site", tmp_path / "tree", tmp_path / "checkout"
    _write(site, {**BUILT, **DEPENDENCY})
    record = [*BUILT, "calc-0.1.dist-info/RECORD"]
    (site / "calc-0.1.dist-info" / "RECORD").write_text("".join(f"{r},,\n" for r in record))
    _write(tree, TREE)
    # An editable install of another local entry (a flat checkout, its .pth naming it):
    # what it imports from there is the build; a venv inside that checkout is not.
    _write(checkout, {"editable_only.py": "WHERE = 'checkout'\n"})
    _write(checkout / ".venv" / "site", {"deep_dep.py": "WHERE = 'deep'\n"})
    editable = site / "tool-1.0.dist-info"
    _write(editable, {"METADATA": "Metadata-Version: 2.1\nName: tool\nVersion: 1.0\n"})
    url = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    (editable / "direct_url.json").write_text(json.dumps(url))
    (site / "__editable__.tool-1.0.pth").write_text(f"{checkout}\n")
    (editable / "RECORD").write_text("__editable__.tool-1.0.pth,,\ntool-1.0.dist-info/RECORD,,\n")
    argv = [sys.executable, "-I", "-S", "-B", "-c", PROBE, str(site), str(tree), str(checkout)]
    done = subprocess.run([*argv, "1" if hide else "0"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_base_run_sees_its_tree_and_the_dependencies_only(tmp_path: Path) -> None:
    seen = _probe(tmp_path, hide=True)
    assert str(seen.pop("top")).startswith("missing: No module named '_calc_speedups'")
    assert str(seen.pop("head folder")).startswith("missing: No module named 'headonly'")
    assert str(seen.pop("editable")).startswith("missing: No module named 'editable_only'")
    assert seen == {
        "calc": "tree",
        "portion": None,
        "core": "tree",
        "namespace": "tree",
        "dep": "dep",
        "deep": "deep",
        # Probed, it is not there (as on a machine without the build), not an error.
        "probed": False,
        # The head's own entry points to modules the tree lacks, and its nested dist's, gone.
        "plugins": ["dep", "mine"],
        "script": True,
        "version": "0.1",
        "files": True,
        "sneaky": 0,
    }


def test_without_it_the_base_run_imported_the_heads_build(tmp_path: Path) -> None:
    seen = _probe(tmp_path, hide=False)
    assert seen["top"] == seen["portion"] == seen["head folder"] == "head"
    assert seen["editable"] == "checkout"
    assert seen["probed"] is True
    assert seen["plugins"] == ["dep", "head", "mine", "sneaky", "std"]
    # The head's regular `nsp` wins over the tree's namespace portion.
    assert str(seen["namespace"]).startswith("missing")


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("[g]\na = calc.x:f\nb = other:f [extra]\n", "[g]\na = calc.x:f\n"),
        ("# comment\n[g]\n\nc=calc\n", "# comment\n[g]\n\nc=calc\n"),
    ],
)
def test_entry_points_keep_only_the_trees_modules(text: str, kept: str) -> None:
    from patchjudge.boundary.worker import _tree_entry_points

    assert _tree_entry_points(text, {"calc"}) == kept


def test_an_editable_finder_names_the_folders_it_imports_from(tmp_path: Path) -> None:
    from patchjudge.boundary.worker import _editable_folders

    (tmp_path / "src" / "calc").mkdir(parents=True)
    finder = tmp_path / "__editable___calc_0_1_finder.py"
    finder.write_text(f"import sys\nMAPPING = {{'calc': {str(tmp_path / 'src' / 'calc')!r}}}\n")
    assert _editable_folders(str(finder)) == [str((tmp_path / "src" / "calc").resolve())]
