"""The one error type a user sees: what went wrong, where, and how to fix it."""

from __future__ import annotations


class PatchjudgeError(Exception):
    """A problem with the user's input or judge files; exit 2 and one line.

    Anything that is not a PatchjudgeError is a bug in patchjudge and is
    reported as one.
    """

    def __init__(
        self, message: str, *, file: str | None = None, key: str | None = None, fix: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.fix = fix

    def __str__(self) -> str:
        return self.one_line()

    def one_line(self) -> str:
        where = ": ".join(part for part in (self.file, self.key) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.fix:
            text = f"{text} ({self.fix})"
        # One line whatever the inputs held: a node id or a path may carry a newline.
        return " ".join(text.split("\n"))


class GitError(PatchjudgeError):
    """git refused: a bad ref, no merge base, not a repository."""


class CommandError(PatchjudgeError):
    """A subprocess patchjudge relies on failed in a way that is not a verdict."""
