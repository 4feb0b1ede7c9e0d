"""The verdict for people: verdict.md (PR comment, step summary) and the terminal lines."""

from __future__ import annotations

from patchjudge.report import Status, Verdict

_ICON = {
    Status.PASS: "pass",
    Status.FAIL: "**FAIL**",
    Status.NOT_APPLICABLE: "n/a",
    Status.UNDECIDED: "**undecided**",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
        f"- properties: seed {props.get('seed')}, {props.get('max_examples')} cases",
        f"- fixtures: {_cell(str(review.get('fixtures')))}",
        "- frozen: "
        + (", ".join(f"`{f['nodeid']}` until {f['expires']}" for f in frozen) or "none"),
        f"- replay: {_cell(str(review.get('replay')))}",
        "",
    ]
    return "\n".join(lines)


def summary(verdict: Verdict) -> str:
    """Leads with the verdict and the first reason: what a person reads first."""
    head = f"patchjudge: {verdict.decision.value}"
    if verdict.reasons:
        head += f" — {verdict.reasons[0]}"
        if len(verdict.reasons) > 1:
            head += f" (+{len(verdict.reasons) - 1} more)"
    rows = [head]
    for name, outcome in verdict.lanes.items():
        first = outcome.reasons[0] if outcome.reasons else ""
        rows.append(f"  {name:<11} {outcome.status.value:<15} {first}")
    return "\n".join(rows)
