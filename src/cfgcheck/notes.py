"""The notes channel: what cfgcheck tells the user on stderr besides its findings (a template override
not used, a wrapper image whose tag names no release), each said once per run.

A run opens a channel (``with notes.run():``, or ``@notes.per_run`` on the function that is the run:
the console entry point, ``lint``, ``lint_diff``); a run inside another (the base and head of a diff)
says into the outer one, so a note both meet is said once. A channel collects what it was told
(``Notes.said``) and writes each new message to stderr, its control characters shown rather than
obeyed: paths, tags and tool output come from the pull request (docs/SECURITY.md). A note said outside
any run is written at once.
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from contextvars import ContextVar

from .textsafe import neutralise

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, ContextManager, Iterator, TypeVar
    Run = TypeVar("Run", bound=Callable)


def _to_stderr(message: str) -> None:
    sys.stderr.write(f"cfgcheck: note: {neutralise(message)}\n")


class Notes:
    """The notes of one run, in the order said; ``write`` receives each new one."""

    def __init__(self, write: Callable[[str], None] = _to_stderr) -> None:
        self.said: list[str] = []
        self._write = write

    def __call__(self, message: str) -> None:
        if message not in self.said:
            self.said.append(message)
            self._write(message)


_current: ContextVar[Notes | None] = ContextVar("cfgcheck_notes", default=None)


@contextmanager
def run(channel: Notes | None = None) -> Iterator[Notes]:
    """The channel of the run that starts here: ``channel``, else the open one, else a new one."""
    open_channel = _current.get()
    if channel is None and open_channel is not None:
        yield open_channel
        return
    token = _current.set(channel or Notes())
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def collected() -> ContextManager[Notes]:
    """A run's channel that keeps what is said without writing it: a worker's, or a forked process's,
    whose notes the run says itself (``Notes.said``)."""
    return run(Notes(write=lambda message: None))


def per_run(function: Run) -> Run:
    """``function`` with a notes channel open while it runs (the open one, when it runs inside a run)."""
    @functools.wraps(function)
    def within_a_run(*args, **kwargs):
        with run():
            return function(*args, **kwargs)
    return within_a_run  # type: ignore[return-value]


def note(message: str) -> None:
    """Say ``message`` on the open run's channel (once per run), or at once when no run is open."""
    channel = _current.get()
    (channel if channel is not None else Notes())(message)
