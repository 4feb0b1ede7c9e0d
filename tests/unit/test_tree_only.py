"""A package of the tested tree is the tree's alone (red team, session 13, redteam7).

A tree package that merges portions of its name (`pkgutil.extend_path`) also
found, in the code's venv, the installed project's files the tree lacks: in a
run of the base's tree those are the head's build.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchjudge.pytest_plugin import TreeOnly, namespace_root

MERGING = "import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n"
# The attack's shape: a merging package with code of its own, an optional submodule.
OPTIONAL = "try:\n    from . import _speedups\nexcept ImportError:\n    _speedups = None\n"


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    tree, site = tmp_path / "tree", tmp_path / "site"
    files = {
        tree / "rt7pkg" / "__init__.py": MERGING + OPTIONAL,
        tree / "rt7ns" / "__init__.py": '"""A namespace."""\n' + MERGING,
        tree / "rt7ns" / "mine.py": "WHERE = 'tree'\n",
        site / "rt7ns" / "__init__.py": MERGING,
        site / "rt7ns" / "dep.py": "WHERE = 'site'\n",
        tree / "rt7pkg" / "own.py": "WHERE = 'tree'\n",
        site / "rt7pkg" / "__init__.py": "",
        site / "rt7pkg" / "own.py": "WHERE = 'site'\n",
        site / "rt7pkg" / "_speedups.py": "WHERE = 'site'\n",
        site / "rt7other" / "__init__.py": MERGING,
        site / "rt7other" / "extra.py": "WHERE = 'site'\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(sys, "path", [str(tree), str(site), *sys.path])
    monkeypatch.setattr(sys, "meta_path", [TreeOnly([str(tree)]), *sys.meta_path])
    yield tree, site
    for name in [n for n in sys.modules if n.split(".")[0] in ("rt7pkg", "rt7other", "rt7ns")]:
        del sys.modules[name]


def test_a_tree_package_imports_its_own_submodules_and_no_other_portions(
    roots: tuple[Path, Path],
) -> None:
    assert importlib.import_module("rt7pkg.own").WHERE == "tree"
    # Without TreeOnly, extend_path found it in the site: the head's build at base.
    with pytest.raises(ModuleNotFoundError, match=r"rt7pkg\._speedups"):
        importlib.import_module("rt7pkg._speedups")


def test_a_package_from_elsewhere_keeps_its_portions(roots: tuple[Path, Path]) -> None:
    assert importlib.import_module("rt7other.extra").WHERE == "site"


def test_a_tree_package_that_only_declares_a_namespace_keeps_its_portions(
    roots: tuple[Path, Path],
) -> None:
    # zope.schema's tree beside an installed zope.interface: the portions are other
    # distributions' by design, and a root with no code of its own imports none itself.
    assert importlib.import_module("rt7ns.mine").WHERE == "tree"
    assert importlib.import_module("rt7ns.dep").WHERE == "site"
    assert importlib.import_module("rt7pkg")._speedups is None  # the guarded package's own try


@pytest.mark.parametrize(
    ("source", "root"),
    [
        ("import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n", True),
        ("__import__('pkg_resources').declare_namespace(__name__)\n", True),
        (
            "try:\n    import pkg_resources\n    pkg_resources.declare_namespace(__name__)\n"
            "except ImportError:\n    from pkgutil import extend_path\n"
            "    __path__ = extend_path(__path__, __name__)\n",
            True,
        ),
        ('"""Docs."""\nfrom pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n', True),
        ("import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\nfrom . import _x\n", False),
        ("import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\nX = 1\n", False),
        ("__path__ = [*__path__, '/elsewhere']\n", False),
        ("x = extend_path(__path__, __name__)\n", False),
        ("def f(:\n", False),
    ],
    ids=["extend_path", "declare_namespace", "zope's try", "docstring", "an import of its own",
         "code of its own", "a path of its own", "not __path__", "unparsable"],
)  # fmt: skip
def test_which_inits_only_declare_a_namespace(tmp_path: Path, source: str, root: bool) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(source)
    assert namespace_root(str(init)) is root


def test_a_tree_module_linked_from_off_the_pythonpath_is_the_trees(
    roots: tuple[Path, Path], tmp_path: Path
) -> None:
    # test_cheats' symlinked module: the tree's own file, wherever its target lies.
    tree, _ = roots
    (tmp_path / "off" / "impl.py").parent.mkdir()
    (tmp_path / "off" / "impl.py").write_text("WHERE = 'linked'\n")
    (tree / "rt7pkg" / "impl.py").symlink_to(tmp_path / "off" / "impl.py")
    assert importlib.import_module("rt7pkg.impl").WHERE == "linked"
