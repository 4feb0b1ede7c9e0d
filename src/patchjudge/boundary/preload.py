"""Imports the stand-ins' plugin as a module, before pytest loads it by name (issue 20).

pytest rewrites the asserts of every module a `-p` names that is not imported yet,
from its source, in every run: the judge writes no bytecode, so standin.py's 3,000
lines were parsed, rewritten and compiled again by each judge pytest without the
review's plugin (the differential's second harness among them: ~80 ms a run). Named
just before it, this module (nothing to rewrite) imports standin the ordinary way,
as the review's plugin does. standin's asserts are the judge's own type checks: no
report reads their rewritten text.
"""

from patchjudge.boundary import standin

__all__ = ["standin"]
