"""The console entry point (``cfgcheck``, ``python -m cfgcheck``): ``run``, which runs ``main`` and ends the
process.

``cfgcheck lint PATHS...`` with the common flag options runs without importing typer (see
``lint_command``); everything else goes to the typer command line in ``cli``.
"""

import gc
import os
import sys

from .notes import per_run


@per_run  # one command, one notes channel: a note is said once
def main() -> None:
    # A lint run allocates millions of objects that live to its end and almost no cycles: the cyclic
    # collector only scans them again and again (the dense corpus: 17 collections, 0.17 s of 4.5 s CPU,
    # 515 objects freed; the same peak RSS without it, 97.6 MiB). One command is one short process: no
    # collection during it; enabled again when it returns (a caller that runs ``main`` in its own process).
    gc.disable()
    from .sandbox import session

    try:
        # one rendering budget and one private folder for the whole run; SIGTERM (a cancelled CI job) and
        # SIGINT end it through every ``finally``: renderers killed, staged copies removed
        with session():
            _run()
    finally:
        gc.enable()


def _run() -> None:
    from .lint_command import fast_lint_arguments, run_fast

    arguments = fast_lint_arguments(sys.argv[1:])
    if arguments is not None:
        sys.exit(run_fast(arguments))
    from .cli import main as typer_main

    typer_main()


def run() -> None:
    """``main`` as one process runs it, then the end of that process without the interpreter's own: Python's
    exit frees the objects of some 270 modules one by one and collects garbage once more, 7% of the
    instructions of a one-file lint (530 -> 492 M, bench/RESULTS.md). Everything of cfgcheck's ends within
    ``main`` (renderers killed and private folders removed by ``sandbox.session``, a worker pool closed by
    its ``with``, every file written closed), so only the standard streams are left to flush. An exception
    other than ``SystemExit`` goes on as Python's exit would take it; ``main`` alone (the tests call it in
    their own process) leaves the interpreter as it was."""
    try:
        main()
        code: object = 0
    except SystemExit as stop:
        code = stop.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"), as Python ends it: the message on stderr, 1
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a reader that went away (a closed pipe): what Python's exit says with 120
        code = 120
    os._exit(code)


if __name__ == "__main__":
    run()
