"""The verdict for people: verdict.md (PR comment, step summary) and the terminal lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from patchjudge.report import Decision, Status, Verdict

_ICON = {
    Status.PASS: "pass",
    Status.FAIL: "**FAIL**",
    Status.NOT_APPLICABLE: "n/a",
    Status.UNDECIDED: "**undecided**",
}


# Reasons carry patch-controlled text (paths, node ids). It must not change the
# comment's shape: `<!--` would hide the rest of it, a leading ``` would swallow
# it, `|` splits a table cell, `[..](..)` makes a link, `__x__` turns bold.
_MARKDOWN = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "|": "\\|",
        "[": "\\[",
        "]": "\\]",
        "*": "\\*",
        # `src/calc/__init__.py` would render as src/calc/<b>init</b>.py.
        "_": "\\_",
        "~": "\\~",
        # GitHub renders $...$ as math.
        "$": "\\$",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "\n": " ",
        "\r": " ",
    }
)


def printable(text: str) -> str:
    """Control characters shown, not obeyed: a newline in a path must not start a line."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _cell(text: str) -> str:
    return printable(text.translate(_MARKDOWN))


def markdown(verdict: Verdict) -> str:
    review = verdict.review
    props = review.get("properties", {})
    frozen = review.get("freeze") or []
    lines = [
        f"## patchjudge: `{verdict.decision.value}`",
        "",
        f"base `{verdict.key.base[:12]}` · head `{verdict.key.head[:12]}` · "
        f"ledger `{verdict.key.ledger_sha256[:12]}`",
        "",
    ]
    if verdict.reasons:
        lines += [f"- {_cell(r)}" for r in verdict.reasons[:20]]
        if len(verdict.reasons) > 20:
            lines.append(f"- … and {len(verdict.reasons) - 20} more (verdict.json has all)")
        lines.append("")
    lines += ["| lane | status | reasons |", "|---|---|---|"]
    for name, outcome in verdict.lanes.items():
        reasons = "; ".join(outcome.reasons[:3]) + (" …" if len(outcome.reasons) > 3 else "")
        lines.append(f"| {name} | {_ICON[outcome.status]} | {_cell(reasons)} |")
    lines += [
        "",
        "**For the reviewer**",
        "",
        f"- isolation: {_ISOLATION.get(str(review.get('isolation')), 'process')}"
        + _fallback(review),
        f"- properties: seed {props.get('seed')}, {props.get('max_examples')} cases, "
        + _oracle(props),
        f"- inputs: {_cell(_SEED_SOURCE.get(str(props.get('seed_source')), _PINNED))}",
        f"- fixtures: {_cell(str(review.get('fixtures')))}",
        "- frozen: "
        + (", ".join(_cell(f"{f['nodeid']} until {f['expires']}") for f in frozen) or "none"),
        f"- replay: {_cell(str(review.get('replay')))}",
        f"- visible suite: {_cell(str(review.get('suite')))}",
        "",
        *_suite_not_run(verdict),
        *_what_the_properties_said(props, sandboxed=review.get("isolation") == "sandbox"),
    ]
    return "\n".join(lines)


def _suite_not_run(verdict: Verdict) -> list[str]:
    """An accept must not read as "the tests pass" where the gate ran none of them (issue 19)."""
    if verdict.decision is not Decision.ACCEPT_FOR_REVIEW:
        return []
    if verdict.review.get("suite") != "not run: [suite] run = false":
        return []
    return [
        "**Note:** the project's own tests were not run here (`[suite] run = false`): this "
        "accept rests on the properties and the other lanes; run the suite elsewhere (CI) "
        "before merging.",
        "",
    ]


_ISOLATION = {
    "sandbox": "sandbox (the patch's code ran under bubblewrap)",
    "process": "process (no sandbox: the patch's code ran with process-level isolation only)",
}
_PINNED = "predictable to the patch (the pinned [properties] seed; set PATCHJUDGE_SEED_KEY)"
_SEED_SOURCE = {
    "key": "unknown to the patch (seed derived from PATCHJUDGE_SEED_KEY, the head and the ledger)",
    "pinned": _PINNED,
}


def _fallback(review: Mapping[str, Any]) -> str:
    """`auto` without a sandbox says why, where the reviewer reads the isolation (issue 19)."""
    reason = review.get("isolation_fallback")
    return (
        f"; isolation 'auto' found no sandbox: {_cell(reason)}" if isinstance(reason, str) else ""
    )


SHOWN = 20  # survivors or ranges listed in verdict.md; verdict.json has all


def _oracle(props: Mapping[str, Any]) -> str:
    if props.get("oracle") == "out_of_process":
        text = "judged out of process"
    else:
        text = "judged inside the tested process"
    files = props.get("in_process") or []
    if files:
        # Issue 18: the reviewer sees where the code could reach the oracle (ledger or AST).
        text += "; in process, where the code could reach the oracle: " + ", ".join(
            _cell(str(f)) for f in files
        )
    return text


def _more(items: Sequence[str]) -> str:
    return f" … and {len(items) - SHOWN} more (verdict.json has all)" if len(items) > SHOWN else ""


def _what_the_properties_said(props: Mapping[str, Any], sandboxed: bool) -> list[str]:
    """SPEC "What the properties said about this diff": figures for review, not a gate."""
    where = "the sandboxed worker" if sandboxed else "the unsandboxed process"
    changed = props.get("changed_lines")
    mutants = props.get("mutants")
    lines = ["**What the properties said about this diff**", ""]
    if isinstance(changed, dict) or isinstance(mutants, dict):
        lines += [
            f"Both figures come from {where} that ran the patch's code: they inform a "
            "reviewer and prove nothing on their own.",
            "",
        ]
    if isinstance(changed, dict):
        lines.append(f"- changed lines executed: {changed['executed']} of {changed['total']}")
        ranges = changed["unexecuted"]
        if ranges:
            # Behind a label: a path must never start a line of the comment.
            shown = ", ".join(_cell(r) for r in ranges[:SHOWN])
            lines.append(f"- never executed: {shown}{_more(ranges)}")
    else:
        lines.append(f"- changed lines: {_cell(str(changed))}")
    if isinstance(mutants, dict) and mutants["total"] == 0:
        lines.append("- mutants of the changed lines: none (no changed line to mutate)")
    elif isinstance(mutants, dict):
        tried = mutants["total"] - mutants["not_tried"]
        lines.append(
            f"- mutants of the changed lines: {mutants['killed']} of {tried} killed"
            + (f", {mutants['not_tried']} not tried (time budget)" if mutants["not_tried"] else "")
        )
        survivors = mutants["survivors"]
        lines += [f"- survived: {_cell(s)}" for s in survivors[:SHOWN]]
        if len(survivors) > SHOWN:
            lines.append(f"- survived:{_more(survivors)}")
    else:
        lines.append(f"- mutants: {_cell(str(mutants))}")
    unexercised = props.get("unexercised") or []
    if unexercised:
        shown = ", ".join(_cell(r) for r in unexercised[:SHOWN])
        lines.append(
            f"- not exercised (not executed, or no mutant killed): {shown}{_more(unexercised)}"
        )
    probes = props.get("probes") or []
    lines += [f"- probe: {_cell(p)}" for p in probes[:SHOWN]]
    if len(probes) > SHOWN:
        lines.append(f"- probe:{_more(probes)}")
    lines.append("")
    return lines


def summary(verdict: Verdict) -> str:
    """Leads with the verdict and the first reason: what a person reads first."""
    head = f"patchjudge: {verdict.decision.value}"
    if verdict.reasons:
        head += f" — {printable(verdict.reasons[0])}"
        if len(verdict.reasons) > 1:
            head += f" (+{len(verdict.reasons) - 1} more)"
    rows = [head]
    for name, outcome in verdict.lanes.items():
        first = outcome.reasons[0] if outcome.reasons else ""
        rows.append(f"  {name:<11} {outcome.status.value:<15} {printable(first)}")
    return "\n".join(rows)


def _workflow_data(text: str) -> str:
    # GitHub's escaping for workflow command data: a newline would end the command.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _workflow_property(text: str) -> str:
    return _workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(verdict: Verdict, limit: int = 10) -> list[str]:
    """GitHub Actions workflow commands: an error per reason of a failing lane.

    An undecided replay lane is a warning: it holds the merge without being a
    fault of the patch. GitHub shows at most 10 errors a step, so at most
    `limit` lines, the last one saying how many more verdict.md has.
    """
    found = []
    for name, outcome in verdict.lanes.items():
        level = {Status.FAIL: "error", Status.UNDECIDED: "warning"}.get(outcome.status)
        if level:
            found += [(level, name, r) for r in outcome.reasons or (outcome.status.value,)]
    if len(found) > limit:
        level, name, _ = found[limit - 1]
        found = [
            *found[: limit - 1],
            (level, name, f"… and {len(found) - limit + 1} more in verdict.md"),
        ]
    return [
        f"::{level} title={_workflow_property(f'patchjudge {name}')}::{_workflow_data(reason)}"
        for level, name, reason in found
    ]
