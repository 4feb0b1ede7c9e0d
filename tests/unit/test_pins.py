"""What init pins: patchjudge's line from its PEP 610 record, resolver output parsed."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from patchjudge import pins
from patchjudge.errors import PatchjudgeError

H = "a" * 64
WHEEL = "/dist/patchjudge-0.1.0-py3-none-any.whl"

# (direct_url.json or None, kind, requirement, hashes, carries a no-hash note)
RECORDS = [
    (None, "index", "patchjudge==0.1.0", (), False),
    ({"url": "file:///work/patchjudge", "dir_info": {"editable": True}}, "directory",
     "/work/patchjudge", (), True),
    ({"url": "file:///work/pj%20copy", "dir_info": {}}, "directory", "/work/pj copy", (), True),
    ({"url": f"file://{WHEEL}", "archive_info": {"hashes": {"sha256": H}}}, "wheel", WHEEL,
     (H,), False),
    ({"url": f"file://{WHEEL}", "archive_info": {"hash": f"sha256={H}"}}, "wheel", WHEEL,
     (H,), False),
    ({"url": f"file://{WHEEL}", "archive_info": {}}, "wheel", WHEEL, (), False),
    ({"url": "https://example.invalid/patchjudge-0.1.0-py3-none-any.whl",
      "archive_info": {"hashes": {"sha256": H}}}, "url",
     "patchjudge @ https://example.invalid/patchjudge-0.1.0-py3-none-any.whl", (H,), False),
    ({"url": "https://example.invalid/patchjudge.git",
      "vcs_info": {"vcs": "git", "commit_id": "c" * 40}}, "vcs",
     f"patchjudge @ git+https://example.invalid/patchjudge.git@{'c' * 40}", (), True),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "kind", "requirement", "hashes", "note"), RECORDS)
def test_the_install_record_names_where_patchjudge_came_from(doc, kind, requirement, hashes, note):
    spec = pins.from_direct_url(doc, "0.1.0")
    assert (spec.kind, spec.requirement, spec.hashes) == (kind, requirement, hashes)
    assert bool(spec.no_hash) == note


@pytest.mark.parametrize("doc", [{}, {"url": "file:///x"}, {"url": 3, "dir_info": {}}])
def test_an_unreadable_install_record_names_the_fix(doc):
    with pytest.raises(PatchjudgeError, match="--patchjudge-spec"):
        pins.from_direct_url(doc, "0.1.0")


def test_the_running_patchjudge_has_a_record_or_came_from_an_index():
    spec = pins.from_direct_url(pins.installed_direct_url(), "0.1.0")
    assert spec.kind in {"index", "directory", "wheel", "url", "vcs"}


def test_a_spec_line_carries_its_hashes():
    assert pins.JudgeSpec("wheel", WHEEL, (H,)).text() == f"{WHEEL} \\\n    --hash=sha256:{H}"
    assert pins.Pin("flit-core", "3.12.0", ("b" * 64, H)).line() == (
        f"flit-core==3.12.0 \\\n    --hash=sha256:{H} \\\n    --hash=sha256:{'b' * 64}"
    )


def test_pips_report_gives_the_pins_and_hashes():
    report = {
        "install": [
            {"metadata": {"name": "Flit_Core", "version": "3.12.0"},
             "download_info": {"url": "https://x/f.whl", "archive_info": {"hashes": {"sha256": H}}}},
            {"metadata": {"name": "patchjudge", "version": "0.1.0"},
             "download_info": {"url": "file:///work/pj", "dir_info": {}}},
        ]
    }  # fmt: skip
    assert pins.pins_from_pip_report(report) == [
        pins.Pin("flit-core", "3.12.0", (H,)),
        pins.Pin("patchjudge", "0.1.0", ()),
    ]


def test_uvs_compile_output_gives_the_pins_and_hashes():
    text = (
        "flit-core==3.12.0 \\\n"
        f"    --hash=sha256:{H} \\\n"
        f"    --hash=sha256:{'b' * 64}\n"
        "    # via -r requirements.in\n"
        "packaging==26.4 \\\n"
        f"    --hash=sha256:{'c' * 64}\n"
    )
    assert pins.pins_from_uv_compile(text) == [
        pins.Pin("flit-core", "3.12.0", (H, "b" * 64)),
        pins.Pin("packaging", "26.4", ("c" * 64,)),
    ]


def test_lane_versions_read_a_hashed_requirements_file():
    text = f"# c\nPytest_Repeat==0.9.4 \\\n    --hash=sha256:{H}\n    # via x\nhypothesis==6.1\n"
    assert pins.lane_versions(text) == {"pytest-repeat": "0.9.4", "hypothesis": "6.1"}


def test_parse_spec(tmp_path):
    wheel = tmp_path / "patchjudge-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"zip")
    assert pins.parse_spec(str(wheel)) == pins.JudgeSpec("wheel", str(wheel))
    assert pins.parse_spec(str(tmp_path)).kind == "directory"
    assert pins.parse_spec("patchjudge==0.1.0") == pins.JudgeSpec("index", "patchjudge==0.1.0")
    assert pins.parse_spec("patchjudge @ git+https://x/p.git@abc").kind == "vcs"
    assert pins.parse_spec("patchjudge @ https://x/p.whl").kind == "url"
    for bad in ("", "a\nb", "./missing.whl"):
        with pytest.raises(PatchjudgeError, match="--patchjudge-spec"):
            pins.parse_spec(bad)


def test_a_local_wheel_is_hashed_and_a_changed_one_refused(tmp_path):
    wheel = tmp_path / "patchjudge-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"zip")
    digest = hashlib.sha256(b"zip").hexdigest()
    assert pins.checked(pins.JudgeSpec("wheel", str(wheel)), {}).hashes == (digest,)
    with pytest.raises(PatchjudgeError, match="changed since patchjudge was installed"):
        pins.checked(pins.JudgeSpec("wheel", str(wheel), (H,)), {})
    other = tmp_path / "six-1.16.0-py2.py3-none-any.whl"
    other.write_bytes(b"zip")
    with pytest.raises(PatchjudgeError, match="not a patchjudge archive"):
        pins.checked(pins.JudgeSpec("wheel", str(other)), {})


def test_a_source_directory_must_build_patchjudge(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "six"\n')
    with pytest.raises(PatchjudgeError, match="builds 'six', not patchjudge"):
        pins.checked(pins.JudgeSpec("directory", str(tmp_path)), {})
    (tmp_path / "empty").mkdir()
    with pytest.raises(PatchjudgeError, match=r"no pyproject\.toml or setup\.py"):
        pins.checked(pins.JudgeSpec("directory", str(tmp_path / "empty")), {})
    root = Path(pins.__file__).resolve().parents[2]
    assert pins.checked(pins.JudgeSpec("directory", str(root)), {}).kind == "directory"
    assert any(r.startswith("setuptools") for r in pins.directory_build_requires(root))


def test_pip_and_uv_pin_a_build_backend_with_its_hashes():
    # One real resolution each way: pip's report, then uv's compile output.
    uv = Path(sys.executable).with_name("uv")
    tools = [[sys.executable, "-m", "pip"], *([[str(uv)]] if uv.exists() else [])]
    for tool in tools:
        (pin,) = pins.resolve(["flit_core>=3.2,<4"], {}, tool=tool)
        assert pin.name == "flit-core" and pin.version.startswith("3.")
        assert pin.hashes and all(len(h) == 64 for h in pin.hashes), tool
    with pytest.raises(PatchjudgeError, match="does not resolve here"):
        pins.resolve(["flit_core==0.0.0.dev0"], {}, tool=tools[-1])


@pytest.mark.parametrize(
    ("path", "pin"),
    [
        ("/x/patchjudge-0.1.0-py3-none-any.whl", "patchjudge==0.1.0"),
        ("/x/y/patchjudge-2.0.1rc1-py3-none-any.whl", "patchjudge==2.0.1rc1"),
        ("/x/patchjudge-1.0-1-py3-none-any.whl", "patchjudge==1.0"),  # a build tag
    ],
)
def test_a_wheel_is_committed_as_a_pin_with_its_hash_never_its_path(path, pin):
    spec, name = pins.committed(pins.JudgeSpec("wheel", path, ("ab" * 32,)))
    assert (spec.kind, spec.requirement, spec.hashes) == ("committed", pin, ("ab" * 32,))
    assert name == path.rsplit("/", 1)[1] and "/" not in spec.text()


def test_a_file_that_is_not_a_wheel_is_not_committed():
    with pytest.raises(PatchjudgeError, match="is not a wheel file name"):
        pins.committed(pins.JudgeSpec("wheel", "/x/patchjudge.zip", ("ab" * 32,)))
