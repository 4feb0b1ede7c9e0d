"""Pure: a failed test's report text -> the one line a reviewer reads (what failed, on what).

The pytest plugin folds hypothesis' falsifying examples with `examples`; the
properties lane builds its reason with `reason`. Both read pytest's
`longreprtext`, so the words a verdict shows come from one place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from patchjudge.boundary.protocol import Cause

EXAMPLE_STARTS = ("Falsifying example", "Falsifying explicit example", "Failing test case")
# A reason is one line of a table cell: the assertion's message is cut, not the reason's start.
ASSERTION_CAP = 300
# Hypothesis annotates arguments: `x=0,  # or any other generated value`. The
# comment ends at the line's end, so it is cut before the lines are folded.
_COMMENT = re.compile(r"\s+#[^'\"]*$")


# The scratch tree a lane tests lives at a random <tmp>/tmpXXXXXXXX/.../tree/, or for
# the properties' worker at <tmp>/tmpXXXXXXXX/<hex8>/<hex8>/ (no name of the judge's in
# a path the code sees, issue 18): a message naming a file in it (`cannot import name
# 'f' from 'm' (/tmp/...)`) would make verdict.json differ run to run. It is shown
# tree-relative.
_PART = r"[^/\s'\"()]+"
_SCRATCH = re.compile(
    rf"(?:/{_PART})*/(?:tmp[a-z0-9_]{{8}}|patchjudge-{_PART})/"
    rf"(?:[0-9a-f]{{8}}/[0-9a-f]{{8}}/|(?:{_PART}/)*?tree/)"
)


def _lines(text: str) -> list[str]:
    """pytest's `E   ` error lines with the marker and indentation off; others stripped."""
    return [raw[1:].strip() if raw.startswith("E ") else raw.strip() for raw in text.splitlines()]


def examples(text: str) -> list[str]:
    """Hypothesis's failing example(s), each folded onto one line, its comments dropped.

    Hypothesis prints `Falsifying example: f(x=1)` (older) or a multi-line
    `Failing test case: f(\\n    x=1,\\n)` (newer); both end when the call's
    parentheses close.
    """
    found: list[str] = []
    current: list[str] | None = None
    depth = 0
    for line in _lines(text):
        if current is None and line.startswith(EXAMPLE_STARTS):
            current, depth = [], 0
        if current is None:
            continue
        bare = _COMMENT.sub("", line)
        current.append(bare)
        depth += bare.count("(") - bare.count(")")
        if depth <= 0:
            folded = " ".join(current).replace("( ", "(").replace(", )", ")").replace(",)", ")")
            found.append(folded)
            current = None
    return found


def assertion(text: str) -> str:
    """The first line of what the test raised: the last block of `E` lines, its head.

    `AssertionError: ` is dropped (the message is the assertion's own words);
    any other exception keeps its name, which says what went wrong.
    """
    blocks: list[list[str]] = []
    previous = False
    for raw in text.splitlines():
        is_error = raw.startswith("E ") or raw == "E"
        if is_error and not previous:
            blocks.append([])
        if is_error:
            blocks[-1].append(raw[1:].strip())
        previous = is_error
    for block in reversed(blocks):
        head = _SCRATCH.sub("", next((line for line in block if line), ""))
        if head and not head.startswith(EXAMPLE_STARTS):
            head = head.removeprefix("AssertionError: ")
            return head if len(head) <= ASSERTION_CAP else head[: ASSERTION_CAP - 1] + "…"
    return ""


def last_line(text: str) -> str:
    """The exception's last line: what a collection error says went wrong, path-free.

    `E   ModuleNotFoundError: No module named 'x'` and a SyntaxError's
    `E   SyntaxError: invalid syntax` end pytest's text; without `E` lines
    (an error pytest itself raised) its last line stands.
    """
    lines = [raw for raw in text.splitlines() if raw.strip()]
    errors = [raw for raw in lines if raw.startswith("E ")]
    last = (errors or lines or [""])[-1]
    line = _SCRATCH.sub("", last[1:].strip() if last.startswith("E ") else last.strip())
    return line if len(line) <= ASSERTION_CAP else line[: ASSERTION_CAP - 1] + "…"


# What each cause says after "the worker for FILE" (protocol.Incident's detail in {}).
WORKER_TEXT = {
    Cause.SANDBOX: " did not start: the sandbox failed before the worker ran ({})",
    Cause.CRASHED: " crashed ({})",
    Cause.TIMEOUT: " did not answer within the {} s call deadline",
    Cause.GONE: " is gone ({})",
    Cause.MALFORMED: " sent malformed data: {}",
    Cause.PROTOCOL: " broke the protocol: {}",
    Cause.UNCROSSABLE: " returned a value that cannot cross: {}",
    Cause.INTERRUPT: ": the code under test raised {} (an interrupt fails the property)",
    Cause.VERDICT: " did not return what the judge's {} (the judge's verdict stands)",
    Cause.HANDLE_TO_JUDGE: (
        " passed an object of the code under test to the judge's {}: the judge's functions "
        "get data only (pass plain values, or list the file in [properties] in_process)"
    ),
}


def worker_text(cause: Cause, worker: str, detail: str) -> str:
    """Pure: the one line that says why the worker for `worker` could not answer."""
    return f"the worker for {worker}" + WORKER_TEXT[cause].format(detail)


def reason(nodeid: str, when: str, longrepr: str, falsifying: Sequence[str]) -> str:
    """`property failed: NODEID: <assertion's first line>; <falsifying example>`.

    `falsifying` is what the plugin folded with `examples`; the longrepr's
    own example is the fallback.
    """
    where = "" if when == "call" else f" in {when}"
    example = next(iter(falsifying), "") or next(iter(examples(longrepr)), "")
    said = [part for part in (assertion(longrepr), example) if part]
    return f"property failed{where}: {nodeid}" + (f": {'; '.join(said)}" if said else "")
