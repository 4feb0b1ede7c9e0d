"""Cheating the oracle (issue 18), through the CLI on real repositories.

A patch that knows the inputs, that changes what no property runs, or that
looks at who is watching: each is caught, and its honest look-alike is not.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from patchjudge import seed
from tests.attack_helpers import (
    Judged,
    attack,
    attack_lane,
    fast_ledger,
    require_sandbox,
    symlink,
)
from tests.helpers import cli, git

KEY = "ci-secret-3f9a"
KEYED = {seed.KEY_ENV: KEY}
PINNED = {k: v for k, v in os.environ.items() if k != seed.KEY_ENV}


def _keyed_env() -> dict[str, str]:
    return {**PINNED, **KEYED}


# --- a seed the patch cannot know -------------------------------------------


# Wrong on one input in 60 (a bucket of a rolling hash): bucket 5 is one the
# pinned seed's draws never land in, which is what one recorded run of the
# pinned seed tells a patch. Tuned to the pinned seed, as the attack is; a
# seed from the key draws elsewhere and lands in it.
REPLAYING = """
R = 5


def _bucket(xs):
    code = 0
    for x in xs:
        code = (code * 31 + x) % 60
    return code


def total(xs):
    return sum(xs) + (1 if xs and _bucket(xs) == R else 0)
"""


def test_a_patch_tuned_to_the_pinned_seeds_inputs_is_rejected_with_the_key(
    tmp_path: Path,
) -> None:
    require_sandbox()
    cheat = {"src/calc/__init__.py": REPLAYING}
    pinned = attack(tmp_path / "pinned", cheat, env=PINNED)
    # The attack works on the pinned seed: every property passes.
    assert pinned.lane("properties")["status"] == "pass", pinned.explain()
    md = (pinned.repo / ".patchjudge" / "verdict.md").read_text()
    assert "- inputs: predictable to the patch" in md and "PATCHJUDGE\\_SEED\\_KEY" in md
    # With the key, the properties lane alone: its fail is a reject in any gate
    # (tests/unit/test_verdict.py).
    keyed = attack_lane(tmp_path / "keyed", cheat, "properties", env=KEYED)
    assert keyed.status == "fail", keyed.explain()
    assert keyed.says("properties: property failed", "test_total_"), keyed.explain()


def _head_and_ledger(judged: Judged) -> tuple[str, str]:
    head = git(judged.repo, "rev-parse", "HEAD").strip()
    ledger = hashlib.sha256(git(judged.repo, "show", "main:eval/gate.toml").encode()).hexdigest()
    return head, ledger


HONEST_LOOP = """
def total(xs):
    result = 0
    for x in xs:
        result += x
    return result
"""


def test_an_honest_patch_is_accepted_with_and_without_the_key_and_the_seed_is_recorded(
    tmp_path: Path,
) -> None:
    honest = {"src/calc/__init__.py": HONEST_LOOP}
    pinned = attack(tmp_path / "pinned", honest, env=PINNED)
    assert pinned.decision == "accept_for_review", pinned.explain()
    props = pinned.verdict["review"]["properties"]
    assert (props["seed"], props["seed_source"]) == (20260924, "pinned")
    keyed = attack(tmp_path / "keyed", honest, env=KEYED)
    assert keyed.decision == "accept_for_review", keyed.explain()
    props = keyed.verdict["review"]["properties"]
    head, ledger = _head_and_ledger(keyed)
    assert props["seed"] == seed.derive(KEY.encode(), head, ledger) != 20260924
    assert props["seed_source"] == "key"
    md = (keyed.repo / ".patchjudge" / "verdict.md").read_text()
    assert f"- properties: seed {props['seed']}," in md
    assert "- inputs: unknown to the patch" in md
    # Anyone with the key reruns the same inputs: the same seed, the same verdict.
    first = (keyed.repo / ".patchjudge" / "verdict.json").read_bytes()
    again = cli(keyed.repo, "gate", "--base", "main", "--today", "2026-12-01", env=_keyed_env())
    assert again.code == 0, again
    assert (keyed.repo / ".patchjudge" / "verdict.json").read_bytes() == first


# Reads the whole environment (a probe) and has a branch that must never run:
# this test's ledger only reports both, it is about where the key goes.
LOOKS_FOR_THE_KEY = f"""
import os

_LEAKED = "PATCHJUDGE_SEED_KEY" in os.environ or any({KEY!r} in v for v in os.environ.values())


def total(xs):
    return sum(xs) + (1 if _LEAKED else 0)
"""

VISIBLE_LOOKS_FOR_THE_KEY = f"""
import os

from calc import total


def test_empty():
    assert total([]) == 0


def test_no_seed_key_here():
    assert "PATCHJUDGE_SEED_KEY" not in os.environ
    assert not any({KEY!r} in v for v in os.environ.values())
"""


def test_the_key_reaches_neither_the_tested_code_nor_a_visible_test_nor_a_report(
    tmp_path: Path,
) -> None:
    ledger = fast_ledger() + '\n[review]\nprobes = "report"\nunexercised = "report"\n'
    judged = attack(
        tmp_path,
        {"src/calc/__init__.py": LOOKS_FOR_THE_KEY},
        base={"eval/gate.toml": ledger, "tests/test_calc.py": VISIBLE_LOOKS_FOR_THE_KEY},
        env=KEYED,
    )
    assert judged.decision == "accept_for_review", judged.explain()
    assert judged.verdict["review"]["properties"]["seed_source"] == "key"
    assert judged.verdict["review"]["properties"]["probes"], "the probe is still shown"
    for path in (judged.repo / ".patchjudge").iterdir():
        assert KEY not in path.read_text(errors="replace"), path
    assert KEY not in judged.result.out + judged.result.err


# --- untested change is not a pass --------------------------------------------

SPECIAL_CASED = """
def total(xs):
    if len(xs) > 5000:
        return 0
    return sum(xs)
"""
PROPERTY_OF_SUBTOTAL = """
from hypothesis import given, strategies as st

from calc import subtotal


@given(st.lists(st.integers(-1000, 1000)))
def test_subtotal_is_the_sum(xs):
    assert subtotal(xs) == sum(xs)


@given(st.lists(st.integers(0, 1000)))
def test_subtotal_is_never_negative(xs):
    assert subtotal(xs) >= 0
"""


def test_a_special_cased_domain_no_property_reaches_is_undecided_naming_the_lines(
    tmp_path: Path,
) -> None:
    judged = attack(tmp_path, {"src/calc/__init__.py": SPECIAL_CASED})
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == ["review: the properties never exercised src/calc/__init__.py:3"]
    assert judged.verdict["review"]["properties"]["unexercised"] == ["src/calc/__init__.py:3"]
    assert judged.result.code == 3


def test_with_unexercised_report_the_same_patch_is_accepted_with_the_figure(
    tmp_path: Path,
) -> None:
    ledger = fast_ledger() + '\n[review]\nunexercised = "report"\n'
    judged = attack(
        tmp_path, {"src/calc/__init__.py": SPECIAL_CASED}, base={"eval/gate.toml": ledger}
    )
    assert judged.decision == "accept_for_review", judged.explain()
    assert judged.verdict["review"]["properties"]["unexercised"] == ["src/calc/__init__.py:3"]
    md = (judged.repo / ".patchjudge" / "verdict.md").read_text()
    assert (
        "- not exercised (not executed, or no mutant killed): src/calc/\\_\\_init\\_\\_.py:3" in md
    )


NEW_HELPER = {
    "src/calc/_impl.py": """
        START = 0
        STEP = 1


        def accumulate(xs):
            result = START
            for x in xs:
                result += x * STEP
            return result
        """,
    "src/calc/__init__.py": "from calc._impl import accumulate as total\n",
}


def test_a_new_module_level_helper_the_properties_import_counts_as_executed(
    tmp_path: Path,
) -> None:
    judged = attack(tmp_path, NEW_HELPER)
    assert judged.decision == "accept_for_review", judged.explain()
    changed = judged.verdict["review"]["properties"]["changed_lines"]
    # Import-time lines (the constants, the def, the import) count: every line ran.
    assert changed["executed"] == changed["total"] and changed["unexecuted"] == [], changed


# --- probes are flagged -------------------------------------------------------

PROBING = """
import sys


def total(xs):
    watched = sys._getframe(1) is not None
    return sum(xs) if watched else None
"""

OWN_CONFIG = """
import os


def total(xs):
    start = int(os.environ.get("CALC_START", "0"))
    return start + sum(xs)
"""


def test_a_patch_that_reads_the_call_stack_is_undecided_with_file_and_line(
    tmp_path: Path,
) -> None:
    judged = attack(tmp_path, {"src/calc/__init__.py": PROBING})
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == [
        # The arm `None` runs only where nobody is watching (red team, session 12).
        "review: the properties never exercised src/calc/__init__.py:6",
        "review: probe of the judge at src/calc/__init__.py:5: reads the call stack (sys._getframe)",
    ]


def test_a_library_that_reads_its_own_config_from_the_environment_is_accepted(
    tmp_path: Path,
) -> None:
    judged = attack(tmp_path, {"src/calc/__init__.py": OWN_CONFIG})
    assert judged.decision == "accept_for_review", judged.explain()
    assert judged.verdict["review"]["properties"]["probes"] == []


# Right only in the box, in both of the judge's harnesses (so the differential run
# agrees), wrong on the user's machine: each was accept_for_review (red team, session 11).
# One gate, a function and a property a tell: the verdict is undecided on any one of
# them, so each tell's probe is asserted by name (a tell no longer seen drops its line).
BOX_TELLS = """
import os
import socket
import sys
import tempfile


def total(xs):
    return sum(xs[os.getpid() - 2 :])


def subtotal(xs):
    return sum(xs) - len(os.getgroups())


def grand_total(xs):
    return sum(xs) - ("SHELL" in os.environ)


def net_total(xs):
    return sum(xs) - (socket.socket().connect_ex(("192.0.2.1", 53)) == 0)


def var_total(xs):
    return sum(xs) - os.path.isdir("/var")


def shell_total(xs):
    return sum(xs) + ("_" in os.environ)


def pyc_total(xs):
    return sum(xs) + (not sys.dont_write_bytecode)


HOME = os.path.expanduser("~")


def home_total(xs):
    return sum(xs) - (len(os.listdir(HOME)) > 2)


def temp_total(xs):
    return sum(xs) - (len(os.listdir(tempfile.gettempdir())) > 1)


def nlink_total(xs):
    return sum(xs) - (os.stat(HOME).st_nlink > 3)


def own_total(xs):
    with tempfile.TemporaryDirectory() as own:
        return sum(xs) + len(os.listdir(own))
"""
# redteam10: every shell exports `_` (the command's path) to what it runs, the box has
# none; the judge runs its interpreters with -B (set from inside in the worker).
# redteam11: the box's HOME and temporary directory are scratch directories made for
# the run (HOME holds `tmp`, the temporary directory nothing), a user's never are: a
# listing of either is a probe, and so is its stat (HOME's link count is 3). Honest, in
# the same gate, no probe: a directory of its own listed (`own_total`); a file under
# HOME read by its name is test_probes.py's.
BOX_PROBES = [
    "src/calc/__init__.py:8: reads what the sandbox changes (the process id as a value: os.getpid)",
    "src/calc/__init__.py:12: reads what the sandbox changes (os.getgroups)",
    "src/calc/__init__.py:16: reads the runner's environment (SHELL)",
    "src/calc/__init__.py:20: reads what the sandbox changes (socket.socket)",
    "src/calc/__init__.py:24: reads what the sandbox changes (a path of the machine: '/var')",
    "src/calc/__init__.py:28: reads the runner's environment (_)",
    "src/calc/__init__.py:32: reads what the judge's interpreter sets (sys.dont_write_bytecode)",
    "src/calc/__init__.py:39: reads what the sandbox changes (lists the home directory: os.listdir)",
    "src/calc/__init__.py:43: reads what the sandbox changes (lists the temp directory: os.listdir)",
    "src/calc/__init__.py:47: reads what the sandbox changes (stats the home directory: os.stat)",
]  # fmt: skip
TELL_NAMES = (
    "total", "subtotal", "grand_total", "net_total", "var_total", "shell_total", "pyc_total",
    "home_total", "temp_total", "nlink_total", "own_total",
)  # fmt: skip
TELL_TOTALS = "".join(f"def {name}(xs):\n    return sum(xs)\n\n\n" for name in TELL_NAMES)
TELL_PROPERTIES = (
    "from hypothesis import given, strategies as st\n\n"
    f"from calc import {', '.join(sorted(TELL_NAMES))}\n"
    + "".join(
        f"\n\n@given(st.lists(st.integers(-1000, 1000)))\n"
        f"def test_{name}_is_the_sum(xs):\n    assert {name}(xs) == sum(xs)\n"
        for name in TELL_NAMES
    )
)


def test_a_patch_right_only_inside_the_box_is_undecided_naming_each_line(
    tmp_path: Path,
) -> None:
    require_sandbox()
    base = {"src/calc/__init__.py": TELL_TOTALS, "eval/properties/test_total.py": TELL_PROPERTIES}
    judged = attack(tmp_path, {"src/calc/__init__.py": BOX_TELLS}, base=base)
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == [f"review: probe of the judge at {probe}" for probe in BOX_PROBES]


# Right wherever a test runner's warning machinery is in force (pytest's in process, the
# worker's in both harnesses: an "always" filter first and a hook of their own), off by one
# in a user's interpreter; one gate, three functions and a property each. Before: every
# property passed, accept_for_review (red team, session 14, redteam9).
WARNING_TELLS = """
import warnings


def total(xs):
    return sum(xs) + (warnings.filters[0][0] != "always")


def subtotal(xs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.warn("?", DeprecationWarning)
    return sum(xs) + (not seen)


def grand_total(xs):
    return sum(xs) + (warnings._showwarnmsg_impl.__name__ == "_showwarnmsg_impl")
"""
THREE_TOTALS = """
def total(xs):
    return sum(xs)


def subtotal(xs):
    return sum(xs)


def grand_total(xs):
    return sum(xs)
"""
THREE_PROPERTIES = """
from hypothesis import given, strategies as st

from calc import grand_total, subtotal, total


@given(st.lists(st.integers(-1000, 1000)))
def test_total_is_the_sum(xs):
    assert total(xs) == sum(xs)


@given(st.lists(st.integers(-1000, 1000)))
def test_subtotal_is_the_sum(xs):
    assert subtotal(xs) == sum(xs)


@given(st.lists(st.integers(-1000, 1000)))
def test_grand_total_is_the_sum(xs):
    assert grand_total(xs) == sum(xs)
"""


def test_a_patch_right_only_under_a_test_runners_warning_machinery_is_undecided(
    tmp_path: Path,
) -> None:
    base = {"src/calc/__init__.py": THREE_TOTALS, "eval/properties/test_total.py": THREE_PROPERTIES}
    judged = attack(tmp_path, {"src/calc/__init__.py": WARNING_TELLS}, base=base)
    assert judged.decision == "undecided", judged.explain()
    probe = "review: probe of the judge at src/calc/__init__.py:{}: reads the warning machinery a test runner sets ({})"
    assert judged.reasons == [
        probe.format(5, "warnings.filters"),
        probe.format(9, "catch_warnings(record=True)"),
        probe.format(15, "warnings._showwarnmsg_impl"),
    ]


def _hash_under(hash_seed: int | str, text: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", f"print(hash({text!r}))"],
        env={"PYTHONHASHSEED": str(hash_seed)},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def test_a_patch_right_only_under_the_judges_known_hash_seeds_is_rejected(
    tmp_path: Path,
) -> None:
    # The visible suite's hash seed is 0 and the worker's came from the pinned seed: both
    # public, so a patch knew hash("calc") wherever it was judged and was wrong in every
    # run of the user's (random hash seeds): accept_for_review (red team, session 11).
    zero, pinned = _hash_under(0, "calc"), _hash_under(seed.hash_seed(20260924), "calc")
    source = f"""
# hash("calc") under the judge's two known hash seeds: the visible suite's 0, and the
# worker's, derived from the pinned [properties] seed (seed.hash_seed(20260924)).
_JUDGED = {{{zero}, {pinned}}}


def total(xs):
    return sum(xs) + (hash("calc") not in _JUDGED)
"""
    # The properties lane alone: its fail is a reject in any gate (tests/unit/test_verdict.py).
    judged = attack_lane(tmp_path, {"src/calc/__init__.py": source}, "properties")
    assert judged.status == "fail", judged.explain()


# Two tells, one function each (total, subtotal) with its property (THREE_PROPERTIES):
# the verdict rejects on either, so each property's failure is asserted by name.
SEED_TELLS = """
import random

_FIRST = []


# In process every hypothesis example starts from random.Random(0)'s state: public.
def _from_zero():
    copy = random.Random()
    copy.setstate(random.getstate())
    return copy.random() == 0.8444218515250481


# Whatever the seed: every example starts again from one state, which a library that
# drew since never sees again on a user's machine.
def _seen_before():
    state = random.getstate()
    _FIRST.append(state)
    drawn = random.random()
    return state == _FIRST[0] and drawn < 1.0


def total(xs):
    return sum(xs) + (not _from_zero())


def subtotal(xs):
    return sum(xs) + (not _seen_before())


def grand_total(xs):
    return sum(xs)
"""

# The visible tests put the global random in that state first (item 7: the tree's own).
SEEDING_VISIBLE_TESTS = """
import random

from calc import subtotal, total


def test_empty():
    random.seed(0)
    assert total([]) == 0
    assert subtotal([]) == 0


def test_two():
    random.seed(0)
    assert total([1, 2]) == 3
    assert subtotal([1, 2]) == 3
"""


def test_a_patch_right_only_where_each_example_starts_random_again_is_rejected(
    tmp_path: Path,
) -> None:
    # Since held-out round 8 the worker's `random` started each example as hypothesis'
    # does in process, from random.Random(0)'s state: a patch right only there, or only
    # in a state it saw before, was accept_for_review, wrong wherever nobody reseeds
    # (red team, session 12, third round). The worker now seeds once, its state goes on.
    require_sandbox()
    base = {"src/calc/__init__.py": THREE_TOTALS, "eval/properties/test_total.py": THREE_PROPERTIES}
    # The properties lane alone: its fail is a reject in any gate (tests/unit/test_verdict.py).
    judged = attack_lane(
        tmp_path,
        {"src/calc/__init__.py": SEED_TELLS, "tests/test_calc.py": SEEDING_VISIBLE_TESTS},
        "properties",
        base=base,
    )
    assert judged.status == "fail", judged.explain()
    for tell in ("test_total_is_the_sum", "test_subtotal_is_the_sum"):
        assert judged.says("properties: property failed", tell), (tell, judged.explain())
    assert not judged.says("test_grand_total_is_the_sum"), judged.explain()


# --- the trusted host of replay holds the key too ------------------------------


def test_replay_on_a_trusted_host_with_the_key_runs_the_derived_seed(tmp_path: Path) -> None:
    from tests.replay_helpers import clone, patch, receipt_of, replay_repo

    dev = replay_repo(tmp_path)
    head = patch(dev)
    made = cli(dev, "replay", "slice", "--base", "main", env=_keyed_env())
    assert made.code == 0, made
    trusted = clone(dev, tmp_path / "trusted")
    slice_path = str(dev / ".patchjudge" / "replay-slice.txt")
    ran = cli(
        trusted, "replay", "run", "--slice", slice_path, "--base", "origin/main", env=_keyed_env()
    )
    assert ran.code == 0, ran
    receipt = receipt_of(trusted)
    ledger = hashlib.sha256(git(dev, "show", "main:eval/gate.toml").encode()).hexdigest()
    derived = seed.derive(KEY.encode(), head, ledger)
    assert json.loads(receipt.read_text())["seed"] == derived
    args = ("gate", "--base", "main", "--today", "2026-12-01", "--receipt", str(receipt))
    keyed = cli(dev, *args, env=_keyed_env())
    assert keyed.code == 0, keyed
    # A gate without the key runs the pinned seed: the keyed receipt is not its run.
    pinned = cli(dev, *args, env=PINNED)
    assert pinned.code == 1, pinned
    doc = json.loads((dev / ".patchjudge" / "verdict.json").read_text())
    assert doc["reasons"] == [f"replay: receipt ran with seed {derived}, the ledger says 20260924"]


# --- code under test where the review does not look (red team, session 10) ---

# The library puts a directory off the pythonpath on sys.path and imports the
# special case from there: the only changed lines on the pythonpath run and
# their mutants die, the special case is in a file the review did not read.
# Two such directories, one a function with its property: tools/, and the suite's tests/.
OFF_PATH_LOADER = """
import os
import sys

_ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path[:0] = [os.path.join(_ROOT, "tools"), os.path.join(_ROOT, "tests")]
from calcimpl import total  # noqa: E402
from calcsub import subtotal  # noqa: E402
"""
OFF_PATH = {"tools/calcimpl.py": SPECIAL_CASED, "tests/calcsub.py": SPECIAL_CASED.replace("total", "subtotal")}  # fmt: skip


def test_a_special_case_in_a_file_off_the_pythonpath_the_code_imports_is_undecided(
    tmp_path: Path,
) -> None:
    # The base's library already imports from there; the patch changes only those files.
    judged = attack(
        tmp_path,
        OFF_PATH,
        base={
            # The humans' map sends those files to the properties: they are code.
            "eval/gate.toml": fast_ledger().replace(
                "[map]\n",
                '[map]\n"tools/calcimpl.py" = ["properties", "freeze"]\n'
                '"tests/calcsub.py" = ["properties", "freeze"]\n',
            ),
            "src/calc/__init__.py": OFF_PATH_LOADER,
            "tools/calcimpl.py": "def total(xs):\n    return sum(xs)\n",
            "tests/calcsub.py": "def subtotal(xs):\n    return sum(xs)\n",
            "eval/properties/test_subtotal.py": PROPERTY_OF_SUBTOTAL,
        },
    )
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == [
        "review: the properties never exercised tests/calcsub.py:3, tools/calcimpl.py:3"
    ], judged.explain()


def test_a_changed_script_no_property_runs_is_not_held(tmp_path: Path) -> None:
    # Off the pythonpath and never executed by a property: not code under test.
    judged = attack(
        tmp_path,
        {"tools/release.py": SPECIAL_CASED, "tests/test_more.py": "def test_more():\n    pass\n"},
    )
    assert judged.decision == "accept_for_review", judged.explain()


# The same special case in a file that is no module: read and run by a changed line.
EXEC_LOADER = """
from pathlib import Path

exec(Path(__file__).with_name("impl.txt").read_text())
"""


def test_a_special_case_run_from_a_text_file_is_undecided_naming_the_loading_line(
    tmp_path: Path,
) -> None:
    judged = attack(
        tmp_path, {"src/calc/__init__.py": EXEC_LOADER, "src/calc/impl.txt": SPECIAL_CASED}
    )
    assert judged.decision == "undecided", judged.explain()
    assert judged.verdict["review"]["properties"]["probes"] == [
        "src/calc/__init__.py:3: runs code the review does not read (exec)"
    ]


# Two symlinked modules, a function each with a property (the base's): one to a text file
# beside it, one to a module off the pythonpath. Each is named by its real file.
LINKED_BASE = {
    "src/calc/__init__.py": "def total(xs):\n    return sum(xs)\n\n\n"
    "def subtotal(xs):\n    return sum(xs)\n",
    "eval/properties/test_subtotal.py": PROPERTY_OF_SUBTOTAL,
}
LINKED = {
    "src/calc/__init__.py": "from calc.impl import total\nfrom calc.impl_off import subtotal\n",
    "src/calc/impl.txt": SPECIAL_CASED,
    "tools/impl.py": SPECIAL_CASED.replace("total", "subtotal"),
}


def test_a_special_case_behind_a_symlinked_module_is_undecided_naming_the_real_file(
    tmp_path: Path,
) -> None:
    def links(repo: Path) -> None:
        symlink(repo, "src/calc/impl.py", "impl.txt")
        symlink(repo, "src/calc/impl_off.py", "../../tools/impl.py")

    judged = attack(tmp_path, LINKED, base=LINKED_BASE, before_commit=links)
    assert judged.decision == "undecided", judged.explain()
    assert judged.reasons == [
        "review: the properties never exercised src/calc/impl.txt:3, tools/impl.py:3"
    ], judged.explain()
