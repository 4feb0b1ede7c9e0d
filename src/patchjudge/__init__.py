"""patchjudge: a deterministic merge gate for patches written by coding agents."""

__version__ = "0.1.0"
