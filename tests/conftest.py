"""The suite's hypothesis settings: no deadlines (a loaded CI box is slow, not wrong),
and in CI a derandomized search, so a red run is a change in the code, not in luck."""

from __future__ import annotations

import os

from hypothesis import settings

# The gate's guard watches patchjudge's own package: a test's subprocess that
# wrote bytecode there while another test's gate ran would read as tampering.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

settings.register_profile("patchjudge-suite", deadline=None, print_blob=True)
settings.register_profile(
    "patchjudge-ci", parent=settings.get_profile("patchjudge-suite"), derandomize=True
)
settings.load_profile("patchjudge-ci" if os.environ.get("CI") else "patchjudge-suite")
