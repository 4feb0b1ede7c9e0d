"""How a worker starts (issue 18): its interpreter flags, as a table."""

from __future__ import annotations

import pytest

from patchjudge.boundary import standin


@pytest.mark.parametrize(
    ("cfg", "flags"),
    [
        (None, ("-s",)),  # no venv: a user site would load
        ("home = /py\ninclude-system-site-packages = false\n", ()),
        ("home = /py\nInclude-System-Site-Packages = False\n", ()),
        ("home = /py\ninclude-system-site-packages = true\n", ("-s",)),
        ("home = /py\n", ("-s",)),  # site.py's default: the system's included
    ],
)
def test_the_worker_takes_dash_s_only_where_a_user_site_could_load(
    cfg: str | None, flags: tuple[str, ...]
) -> None:
    # Where no user site loads, `-s` would only show in sys.flags (issue 18).
    assert standin.worker_flags(cfg) == flags
