"""The boundary between the judge and the code under test: what crosses, how, and the box.

`protocol` names what crosses, `wire` encodes it, `worker` runs inside with the
code, `standin` is the judge's side, `sandbox` and `seccomp` build the box.
`protocol`, `wire` and `worker` import only the standard library: the worker
loads them before the code under test, in a process the code owns.
"""

# How code from the patch may run, loosest first: the CLI may only move right.
# Here, not in `sandbox`: the CLI and the ledger name them without loading the box's
# builder (issue 20: a process's start).
ISOLATIONS = ("process", "auto", "sandbox")
