"""The console entry point (``cfgcheck``, ``python -m cfgcheck``).

``cfgcheck lint PATHS...`` with the common flag options runs without importing typer (see
``lint_command``); everything else goes to the typer command line in ``cli``.
"""

import gc
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


if __name__ == "__main__":
    main()
