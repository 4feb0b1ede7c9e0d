"""verdict.md, the terminal summary and GitHub annotations: readable, and shaped by us alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchjudge import render
from patchjudge.config import PropertiesSettings
from patchjudge.report import LaneReport, RunKey, Status, Verdict
from patchjudge.verdict import ALL_LANES, decide

KEY = RunKey("a" * 40, "b" * 40, "c" * 64)
PROPS = PropertiesSettings(paths=("eval/properties",), seed=7, max_examples=50, timeout_s=60)
# A properties report of this run's seed with nothing for the review to hold (issue 18).
CLEAN = {"seed": 7, "unexercised": [], "probes": []}


def verdict_of(**lanes: tuple[Status, list[str]]) -> Verdict:
    """A verdict from lane statuses; a lane not named passes."""
    reports: dict[str, LaneReport | None] = {}
    for name in ALL_LANES:
        status, reasons = lanes.get(name, (Status.PASS, []))
        details = CLEAN if name == "properties" else {}
        reports[name] = LaneReport(name, status, tuple(reasons), KEY, details)
    return decide(reports, KEY, PROPS)


# (lanes, expected annotation lines)
ANNOTATIONS = [
    ({}, []),
    (
        {"fixtures": (Status.FAIL, ["changed: tests/fixtures/order.json"])},
        ["::error title=patchjudge fixtures::changed: tests/fixtures/order.json"],
    ),
    (
        {
            "pathfilter": (Status.FAIL, ["unmapped path: a", "unmapped path: b"]),
            "properties": (Status.FAIL, ["test_x failed"]),
        },
        [
            "::error title=patchjudge pathfilter::unmapped path: a",
            "::error title=patchjudge pathfilter::unmapped path: b",
            "::error title=patchjudge properties::test_x failed",
        ],
    ),
    (
        {"replay": (Status.UNDECIDED, ["replay required and no receipt"])},
        ["::warning title=patchjudge replay::replay required and no receipt"],
    ),
    ({"replay": (Status.NOT_APPLICABLE, ["replay not required"])}, []),
    (
        # A core lane saying undecided counts as failed: an error, not a warning.
        {"freeze": (Status.UNDECIDED, ["?"])},
        ["::error title=patchjudge freeze::only replay may be undecided"],
    ),
    (
        {"fixtures": (Status.FAIL, ["100% changed\nnext line\r"])},
        ["::error title=patchjudge fixtures::100%25 changed%0Anext line%0D"],
    ),
]


@pytest.mark.parametrize(("lanes", "expected"), ANNOTATIONS)
def test_annotations_table(lanes: dict[str, tuple[Status, list[str]]], expected: list[str]) -> None:
    assert render.github_annotations(verdict_of(**lanes)) == expected


def test_annotations_stop_at_githubs_limit_and_say_how_many_more() -> None:
    reasons = [f"unmapped path: f{i}" for i in range(15)]
    lines = render.github_annotations(verdict_of(pathfilter=(Status.FAIL, reasons)))
    assert len(lines) == 10
    assert lines[8] == "::error title=patchjudge pathfilter::unmapped path: f8"
    assert lines[9] == "::error title=patchjudge pathfilter::… and 6 more in verdict.md"


def _unescape(data: str) -> str:
    return data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


_PIECES = ["\n", "\r", "%", "::", "|", "`", "```", "<!--", "](", "\\", "\x1b", "#", "*"]
hostile = st.lists(
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=5) | st.sampled_from(_PIECES),
    min_size=1,
    max_size=8,
).map("".join)


@given(st.lists(hostile, min_size=1, max_size=9))
def test_an_annotation_is_one_line_that_carries_its_reason_exactly(reasons: list[str]) -> None:
    lines = render.github_annotations(verdict_of(fixtures=(Status.FAIL, reasons)))
    assert len(lines) == len(reasons)
    for line, reason in zip(lines, reasons, strict=True):
        assert "\n" not in line
        assert "\r" not in line
        prefix = "::error title=patchjudge fixtures::"
        assert line.startswith(prefix)
        assert _unescape(line.removeprefix(prefix)) == reason


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line.replace("\\\\", "")))


@given(
    st.lists(hostile, min_size=1, max_size=4),
    st.lists(hostile, min_size=1, max_size=4),
    hostile,
)
def test_patch_controlled_text_cannot_reshape_verdict_md(
    fixture_reasons: list[str], pathfilter_reasons: list[str], nodeid: str
) -> None:
    verdict = verdict_of(
        fixtures=(Status.FAIL, fixture_reasons), pathfilter=(Status.FAIL, pathfilter_reasons)
    )
    verdict = Verdict(
        verdict.decision,
        verdict.key,
        verdict.lanes,
        verdict.reasons,
        {**verdict.review, "freeze": [{"nodeid": nodeid, "expires": "2026-12-08"}]},
    )
    md = render.markdown(verdict)
    clean = render.markdown(
        verdict_of(fixtures=(Status.FAIL, ["x"] * len(fixture_reasons)),
                   pathfilter=(Status.FAIL, ["x"] * len(pathfilter_reasons)))
    )  # fmt: skip
    # Same number of lines as with harmless reasons, whatever the reasons hold.
    assert len(md.splitlines()) == len(clean.splitlines())
    for line in md.splitlines():
        assert "<" not in line
        assert not line.lstrip("- ").startswith(("```", "~~~", "::", "#", ">")) or line.startswith(
            "## patchjudge"
        )
        if line.startswith("| ") and not line.startswith("|---"):
            assert _unescaped_pipes(line) == 4, line
        assert re.search(r"(?<!\\)\[", line.replace("\\\\", "")) is None, line


@given(st.lists(hostile, min_size=1, max_size=4))
def test_the_terminal_summary_is_one_line_a_lane(reasons: list[str]) -> None:
    text = render.summary(verdict_of(pathfilter=(Status.FAIL, reasons)))
    lines = text.split("\n")
    assert len(lines) == 1 + len(ALL_LANES)
    # GitHub Actions obeys a stdout line that starts with `::`: none may come from a reason.
    assert not [line for line in lines if line.startswith("::") or "\r" in line]


def test_verdict_md_reads_as_a_pr_comment() -> None:
    md = render.markdown(verdict_of(fixtures=(Status.FAIL, ["changed: tests/fixtures/order.json"])))
    assert md.startswith("## patchjudge: `reject`\n")
    assert "- fixtures: changed: tests/fixtures/order.json\n" in md
    assert "| fixtures | **FAIL** | changed: tests/fixtures/order.json |" in md
    assert "- properties: seed 7, 50 cases" in md
    assert md.endswith("\n")


def test_paths_render_as_written() -> None:
    md = render.markdown(verdict_of(pathfilter=(Status.FAIL, ["unmapped path: src/__init__.py"])))
    # Escaped, so GitHub shows the underscores instead of bold text.
    assert r"- pathfilter: unmapped path: src/\_\_init\_\_.py" in md


# --- "What the properties said about this diff" (issue 14) -------------------


def _with_review(verdict: Verdict, isolation: str, **props: object) -> Verdict:
    review = {
        **verdict.review,
        "isolation": isolation,
        "properties": {**verdict.review["properties"], **props},
    }
    return Verdict(verdict.decision, verdict.key, verdict.lanes, verdict.reasons, review)


FIGURES = {
    "changed_lines": {"executed": 9, "total": 12, "unexecuted": ["mylib/core.py:120-122"]},
    "mutants": {
        "killed": 4,
        "total": 7,
        "not_tried": 2,
        "survivors": ["mylib/core.py:121: < -> >="],
    },
}


def test_the_section_shows_the_figures_and_says_they_prove_nothing() -> None:
    md = render.markdown(_with_review(verdict_of(), "sandbox", **FIGURES))
    section = md.split("**What the properties said about this diff**\n", 1)[1]
    assert section.splitlines() == [
        "",
        "Both figures come from the sandboxed worker that ran the patch's code: they inform "
        "a reviewer and prove nothing on their own.",
        "",
        "- changed lines executed: 9 of 12",
        "- never executed: mylib/core.py:120-122",
        "- mutants of the changed lines: 4 of 5 killed, 2 not tried (time budget)",
        "- survived: mylib/core.py:121: &lt; -&gt; &gt;=",
    ]
    assert "- isolation: sandbox (the patch's code ran under bubblewrap)" in md


def test_without_a_sandbox_the_section_does_not_claim_one() -> None:
    md = render.markdown(_with_review(verdict_of(), "process", **FIGURES))
    assert "the sandboxed worker" not in md
    assert "Both figures come from the unsandboxed process" in md
    assert "- isolation: process (no sandbox" in md


def test_fields_that_say_why_there_are_no_figures_are_shown_as_said() -> None:
    why = {
        "changed_lines": "not measured: the properties lane did not run (no changed path forces properties)",
        "mutants": "off: [properties] review_mutants = 0",
    }
    md = render.markdown(_with_review(verdict_of(), "process", **why))
    assert "- changed lines: not measured: the properties lane did not run" in md
    assert "- mutants: off: \\[properties\\] review\\_mutants = 0" in md
    assert "prove nothing" not in md  # no figure, no caveat to go with it


def test_long_lists_stop_at_twenty_and_say_how_many_more() -> None:
    survivors = [f"src/m.py:{i}: 0 -> 1" for i in range(25)]
    mutants = {"killed": 0, "total": 25, "not_tried": 0, "survivors": survivors}
    md = render.markdown(_with_review(verdict_of(), "process", mutants=mutants))
    assert "- survived: src/m.py:19: 0 -&gt; 1\n" in md
    assert "src/m.py:20:" not in md
    assert "- survived: … and 5 more (verdict.json has all)\n" in md


@given(st.lists(hostile, min_size=1, max_size=4), st.lists(hostile, min_size=1, max_size=4))
def test_patch_controlled_survivors_and_paths_cannot_reshape_verdict_md(
    survivors: list[str], paths: list[str]
) -> None:
    """Survivors quote the patch's source, ranges and in_process name its files."""

    def md(texts: list[str], files: list[str]) -> str:
        props = {
            "in_process": files,
            "changed_lines": {
                "executed": 1,
                "total": 9,
                "unexecuted": [f"{p}:3-4" for p in files],
            },
            "mutants": {
                "killed": 0,
                "total": len(texts),
                "not_tried": 0,
                "survivors": [f"src/m.py:1: {t}" for t in texts],
            },
        }
        return render.markdown(_with_review(verdict_of(), "sandbox", **props))

    hostile_md = md(survivors, paths)
    clean = md(["x"] * len(survivors), ["x"] * len(paths))
    assert len(hostile_md.splitlines()) == len(clean.splitlines())
    for line in hostile_md.splitlines():
        assert "<" not in line
        assert not line.lstrip("- ").startswith(("```", "~~~", "::", "#", ">")) or line.startswith(
            "## patchjudge"
        )
        assert re.search(r"(?<!\\)\[", line.replace("\\\\", "")) is None, line
