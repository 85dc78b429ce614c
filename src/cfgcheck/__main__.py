"""The console entry point (``cfgcheck``, ``python -m cfgcheck``): ``run``, which runs the command and ends the
process; ``main`` runs it in a process that goes on (the tests).

``cfgcheck lint PATHS...`` with the common flag options runs without importing typer (see
``lint_command``); everything else goes to the typer command line in ``cli``.
"""

import gc
import os
import sys

# Nothing else at import: ``run`` turns the collector off before the first module of the command is imported
# (the imports of the notes channel alone set off six collections, 1.7 ms of a one-file lint's ~95).


def main() -> None:
    """One command in this process, the cyclic collector off while it runs and on again when it returns (a
    caller that runs ``main`` in its own process, as the tests do)."""
    gc.disable()
    try:
        command()
    finally:
        gc.enable()


def command() -> None:
    """One command, run with the collector off (``main``, ``run``). A lint run allocates millions of objects
    that live to its end and almost no cycles: the cyclic collector only scans them again and again (the
    dense corpus: 17 collections, 0.17 s of 4.5 s CPU, 515 objects freed; the same peak RSS without it,
    97.6 MiB)."""
    from .notes import run as notes_channel
    from .sandbox import session

    # one notes channel (a note is said once), one rendering budget and one private folder for the whole run;
    # SIGTERM (a cancelled CI job) and SIGINT end it through every ``finally``: renderers killed, copies removed
    with notes_channel(), session():
        _run()


def _run() -> None:
    from .lint_command import fast_lint_arguments, run_fast

    arguments = fast_lint_arguments(sys.argv[1:])
    if arguments is not None:
        sys.exit(run_fast(arguments))
    from .cli import main as typer_main

    typer_main()


def run() -> None:
    """``command`` as one process runs it, then the end of that process without the interpreter's own: Python's
    exit frees the objects of some 270 modules one by one and collects garbage once more, 7% of the
    instructions of a one-file lint (530 -> 492 M, bench/RESULTS.md). Everything of cfgcheck's ends within
    ``command`` (renderers killed and private folders removed by ``sandbox.session``, a worker pool closed by
    its ``with``, every file written closed), so only the standard streams are left to flush. The collector
    stays off to the end: turned on again (as ``main`` does), the next allocation collected the youngest
    generation, which held every object of the run (none was collected while it was off): 33 ms of a
    GitOps tree's 1.0 s run, walking 12,355 objects it freed. An exception other than ``SystemExit`` goes on
    as Python's exit would take it; ``main`` (the tests call it in their own process) leaves the interpreter
    as it was."""
    gc.disable()
    try:
        command()
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
