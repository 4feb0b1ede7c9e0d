"""The ledger: defaults, and one error line naming file and key for each bad input."""

from __future__ import annotations

import pytest

from patchjudge.config import SCHEMA, check_paths_exist, parse_ledger
from patchjudge.errors import PatchjudgeError

MINIMAL = b'[map]\n"src/**" = ["properties"]\n'


def test_defaults_are_the_spec_values() -> None:
    ledger = parse_ledger(MINIMAL)
    assert ledger.gate.base == "origin/main"
    assert ledger.gate.protected == (
        "eval/**",
        "noxfile.py",
        "constraints/**",
        ".github/workflows/**",
    )
    assert ledger.properties.seed == 20260924 and ledger.properties.max_examples == 200
    assert ledger.properties.timeout_s == 600
    assert ledger.fixtures.roots == ("tests/fixtures",) and ledger.fixtures.canonical_json
    assert not ledger.fixtures.allow_unhashed_new
    assert ledger.suite.run
    assert (ledger.freeze.max_age_days, ledger.freeze.min_fail_count, ledger.freeze.reruns) == (
        14,
        2,
        12,
    )
    assert (ledger.flakes.count, ledger.flakes.candidate_min_fails) == (12, 3)
    assert not ledger.replay.required and ledger.replay.max_slice == 50
    assert ledger.map[0].pattern == "src/**" and ledger.map[0].lanes == {"properties"}
    assert ledger.explicit == frozenset()
    assert (ledger.review.unexercised, ledger.review.probes) == ("undecided", "undecided")
    assert ledger.properties.seed_source == "pinned"


def test_the_review_table_may_only_report() -> None:
    ledger = parse_ledger(MINIMAL + b"[review]\nunexercised = 'report'\nprobes = 'report'\n")
    assert (ledger.review.unexercised, ledger.review.probes) == ("report", "report")


def test_ledger_is_always_protected_whatever_protected_says() -> None:
    ledger = parse_ledger(b"[gate]\nprotected = []\n" + MINIMAL)
    judge = ledger.judge_paths()
    assert "eval/gate.toml" in judge
    assert "eval/fixtures.lock.json" in judge and "eval/flakes.freeze.toml" in judge
    assert "eval/properties/**" in judge


def test_sha256_is_of_the_bytes() -> None:
    import hashlib

    assert parse_ledger(MINIMAL).sha256 == hashlib.sha256(MINIMAL).hexdigest()


BAD = [
    (b"[map\n", "not valid TOML", None),
    (b"\xff\xfe", "not UTF-8", None),
    (b"[gate]\nbase = 'main'\n", "missing", "[map]"),
    (b"map = 3\n", "must be a table", "[map]"),
    (MINIMAL + b"[gates]\n", "unknown table", "[gates]"),
    (MINIMAL + b"[gate]\nbsae = 'x'\n", "unknown key 'bsae'", "gate.bsae"),
    (MINIMAL + b"[properties]\nseed = 'x'\n", "whole number", "properties.seed"),
    (MINIMAL + b"[properties]\nseed = true\n", "whole number", "properties.seed"),
    (MINIMAL + b"[properties]\nmax_examples = 0\n", ">= 1", "properties.max_examples"),
    (MINIMAL + b"[fixtures]\ncanonical_json = 'yes'\n", "true or false", "fixtures.canonical_json"),
    (MINIMAL + b"[suite]\nrun = 1\n", "true or false", "suite.run"),
    (MINIMAL + b"[fixtures]\nroots = 'tests'\n", "must be a list", "fixtures.roots"),
    (MINIMAL + b"[fixtures]\nroots = ['../up']\n", "relative path", "fixtures.roots"),
    (MINIMAL + b"[fixtures]\nlock = '/etc/lock'\n", "relative path", "fixtures.lock"),
    (MINIMAL + b"[gate]\nprotected = ['!eval/**']\n", "negations", "gate.protected"),
    (MINIMAL + b"[gate]\nprotected = ['']\n", "non-empty glob", "gate.protected"),
    (MINIMAL + b"[gate]\nbase = '--upload-pack=x'\n", "git ref", "gate.base"),
    (b'[map]\n"src/**" = ["propertys"]\n', "no lane named 'propertys'", "map.'src/**'"),
    (b'[map]\n"src/**" = "properties"\n', "list of lane names", "map.'src/**'"),
    (b'[map]\n"#x" = []\n', "negations and comments", "map.'#x'"),
    (MINIMAL + b"[flakes]\nworkers = 'many'\n", "'auto'", "flakes.workers"),
    (
        MINIMAL + b"[review]\nunexercised = 'warn'\n",
        "'undecided' or 'report'",
        "review.unexercised",
    ),
    (MINIMAL + b"[review]\nprobes = true\n", "'undecided' or 'report'", "review.probes"),
    (MINIMAL + b"[review]\nprobe = 'report'\n", "unknown key 'probe'", "review.probe"),
]


@pytest.mark.parametrize(("data", "message", "key"), BAD)
def test_bad_ledger_is_one_line_naming_file_and_key(
    data: bytes, message: str, key: str | None
) -> None:
    with pytest.raises(PatchjudgeError) as info:
        parse_ledger(data, "eval/gate.toml")
    line = info.value.one_line()
    assert "\n" not in line
    assert line.startswith("eval/gate.toml")
    assert message in line
    if key:
        assert info.value.key == key and key in line


def test_every_schema_key_has_a_default_of_its_kind() -> None:
    # A default that fails its own check would make every ledger that omits it invalid.
    from patchjudge.config import _KINDS

    for section, keys in SCHEMA.items():
        for key, (kind, default) in keys.items():
            assert _KINDS[kind](default) is None, f"{section}.{key}"


def _exists(*present: str):  # type: ignore[no-untyped-def]
    return set(present).__contains__


def test_missing_files_the_ledger_points_to() -> None:
    ledger = parse_ledger(MINIMAL)
    with pytest.raises(PatchjudgeError, match=r"properties\.paths"):
        check_paths_exist(ledger, _exists())
    # Default fixture root absent and no lock: an empty lane, not an error.
    check_paths_exist(ledger, _exists("eval/properties"))
    with pytest.raises(PatchjudgeError, match=r"run 'patchjudge lock'"):
        check_paths_exist(ledger, _exists("eval/properties", "tests/fixtures"))
    explicit = parse_ledger(MINIMAL + b"[freeze]\nregistry = 'eval/f.toml'\n")
    with pytest.raises(PatchjudgeError, match=r"freeze\.registry"):
        check_paths_exist(explicit, _exists("eval/properties"))
    roots = parse_ledger(MINIMAL + b"[fixtures]\nroots = ['data']\n")
    with pytest.raises(PatchjudgeError, match=r"fixtures.roots\[0\]"):
        check_paths_exist(roots, _exists("eval/properties"))


# --- [properties] data (issue 17): what of the judge's files the code may read ------------

DATA_BAD = [
    ("['tzif/**']", "outside the judge's folder", "properties.data[0]"),
    ("['**/*.tzif']", "outside the judge's folder", "properties.data[0]"),
    ("['/eval/properties/tzif/**']", "outside the judge's folder", "properties.data[0]"),
    ("['src/data/**']", "start it with one of 'eval/', 'eval/properties/'", "properties.data[0]"),
    ("['eval/properties/tzif/*', 'eval/properties/*.py']", "item 1: ", "properties.data"),
    ("['eval/properties/helpers.pyc']", "names Python files", "properties.data"),
    ("['!eval/properties/tzif/**']", "negations", "properties.data"),
    ("'eval/properties/tzif/**'", "must be a list", "properties.data"),
]


@pytest.mark.parametrize(("value", "message", "key"), DATA_BAD)
def test_a_data_glob_outside_the_judges_folder_or_naming_python_is_refused(
    value: str, message: str, key: str
) -> None:
    with pytest.raises(PatchjudgeError) as info:
        parse_ledger(MINIMAL + f"[properties]\ndata = {value}\n".encode(), "eval/gate.toml")
    line = info.value.one_line()
    assert "\n" not in line and line.startswith("eval/gate.toml")
    assert message in line and info.value.key == key


def test_a_data_glob_may_start_in_a_properties_path_outside_eval() -> None:
    ledger = parse_ledger(MINIMAL + b"[properties]\npaths = ['props']\ndata = ['props/tz/*']\n")
    assert ledger.properties.data == ("props/tz/*",)
    assert parse_ledger(MINIMAL).properties.data == ()


JUDGE_FILES = {
    "eval/gate.toml": "100644",
    "eval/fixtures.lock.json": "100644",
    "eval/properties/test_tz.py": "100644",
    "eval/properties/common.py": "100644",
    "eval/properties/tzif/Amsterdam.tzif": "100644",
    "eval/properties/tzif/Asia/Tokyo": "100755",
    "eval/properties/golden/out.json": "100644",
    "eval/properties/links/Ams": "120000",
    "eval/properties/mod/__pycache__/x.cpython-311.pyc": "100644",
}


def _data(*patterns: str):  # type: ignore[no-untyped-def]
    from patchjudge.config import data_files

    listed = ", ".join(repr(p) for p in patterns)
    ledger = parse_ledger(MINIMAL + f"[properties]\ndata = [{listed}]\n".encode())
    return data_files(ledger, JUDGE_FILES, "eval/gate.toml")


def test_data_files_are_the_regular_files_the_globs_match() -> None:
    assert _data("eval/properties/tzif/**") == (
        "eval/properties/tzif/Amsterdam.tzif",
        "eval/properties/tzif/Asia/Tokyo",
    )
    assert _data("eval/properties/tzif/*.tzif", "eval/properties/tzif/Amsterdam.tzif") == (
        "eval/properties/tzif/Amsterdam.tzif",
    )
    assert _data() == ()


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        # The oracle: a property file or helper, its bytecode, the judge's own files.
        ("eval/properties/**", "'eval/properties/common.py', which is a Python file"),
        ("eval/properties/mod/**", "which is a Python file"),
        ("eval/*", "'eval/fixtures.lock.json', which is the judge's own file"),
        ("eval/gate.toml", "which is the judge's own file"),
        # A link would bind what it points to, anywhere.
        ("eval/properties/links/*", "which is not a regular file"),
        ("eval/properties/tzif/Europe/*", "matches no file of the judge's"),
    ],
)
def test_data_that_would_show_the_oracle_is_refused_whole(pattern: str, message: str) -> None:
    with pytest.raises(PatchjudgeError) as info:
        _data("eval/properties/tzif/**", pattern)
    line = info.value.one_line()
    assert "\n" not in line and line.startswith("eval/gate.toml")
    assert message in line and info.value.key == "properties.data[1]"
