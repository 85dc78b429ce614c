"""cfgcheck's command line for tests, two ways with one result type (``returncode``, ``stdout``, ``stderr``).

``spawn`` runs ``python -m cfgcheck`` in a fresh interpreter: what a user, a hook or CI runs, start-up,
imports and exit code included (an e2e test). ``invoke`` calls the same entry point
(``cfgcheck.__main__.main``) in this process, with the arguments, folder, environment and standard
input it would have had, its output captured as a pipe captures it (not a terminal): the same code
path without an interpreter's start-up. A test that only reads findings, messages and exit codes uses
``invoke``; each path keeps at least one ``spawn`` test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO

# what a test's environment must not pass on: the colour the developer's terminal asked for
COLOUR = ("NO_COLOR", "FORCE_COLOR")


def spawn(*args: str, cwd: Path = REPO, env: dict | None = None, input: str | None = None,  # noqa: A002
          stdin=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m cfgcheck ARGS`` in ``cwd``; ``env`` is added to this environment (less the colour
    variables)."""
    environment = {k: v for k, v in os.environ.items() if k not in COLOUR}
    return subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=cwd, capture_output=True, text=True,
                          env={**environment, **(env or {})}, input=input, stdin=stdin, timeout=timeout)


@dataclasses.dataclass
class Ran:
    """What ``invoke`` gives: the fields of ``subprocess.CompletedProcess`` that tests read (not that class
    itself: naming ``subprocess`` would file every test that calls ``invoke`` as e2e, tests/support/tiers.py)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


class _Pipe(io.TextIOWrapper):
    """Text written to a pipe: ``isatty()`` is false and ``.buffer`` takes bytes, like a child's stdout."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", newline=None, write_through=True)

    def text(self) -> str:
        return self.buffer.getvalue().decode("utf-8", "replace").replace("\r\n", "\n")


def _set(values: dict[str, str | None]) -> None:
    """Set each variable; ``None`` removes it."""
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@contextlib.contextmanager
def _environment(env: dict[str, str | None]):
    saved = {key: os.environ.get(key) for key in env}
    try:
        _set(env)
        yield
    finally:
        _set(saved)


def invoke(*args: str, cwd: Path = REPO, env: dict | None = None,
           input: str | None = None) -> Ran:  # noqa: A002
    """``cfgcheck ARGS`` in this process: ``sys.argv``, the folder, the environment and the standard
    streams are set as for ``spawn`` and put back afterwards; the exit code is what ``main`` exits with."""
    from cfgcheck.__main__ import main

    out, err, stdin = _Pipe(), _Pipe(), _Pipe((input or "").encode("utf-8"))
    saved = (sys.argv, sys.stdin, sys.stdout, sys.stderr, os.getcwd())
    code: int | str | None = 0
    with _environment({**{key: None for key in COLOUR}, **(env or {})}):
        try:
            sys.argv, sys.stdin, sys.stdout, sys.stderr = ["cfgcheck", *args], stdin, out, err
            os.chdir(cwd)
            main()
        except SystemExit as stop:
            code = stop.code
        finally:
            sys.argv, sys.stdin, sys.stdout, sys.stderr = saved[:4]
            os.chdir(saved[4])
    if isinstance(code, str):  # sys.exit("message"): printed on stderr, exit 1
        err.write(code + "\n")
        code = 1
    return Ran(["cfgcheck", *args], code or 0, out.text(), err.text())
