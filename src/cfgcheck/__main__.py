"""The console entry point (``cfgcheck``, ``python -m cfgcheck``).

``cfgcheck lint PATHS...`` with the common flag options runs without importing typer (see
``lint_command``); everything else goes to the typer command line in ``cli``.
"""

import gc
import sys

from .notes import per_run


@per_run  # one command, one notes channel: a note is said once
def main() -> None:
    # A lint run allocates many small objects and few cycles: collecting the young generation every
    # 700 allocations costs more than half the run. Collect rarely instead.
    gc.set_threshold(50_000, 20, 20)
    from .sandbox import session

    # one rendering budget and one private folder for the whole run; SIGTERM (a cancelled CI job) and
    # SIGINT end it through every ``finally``: renderers killed, staged copies removed
    with session():
        _run()


def _run() -> None:
    from .lint_command import fast_lint_arguments, run_fast

    arguments = fast_lint_arguments(sys.argv[1:])
    if arguments is not None:
        sys.exit(run_fast(arguments))
    from .cli import main as typer_main

    typer_main()


if __name__ == "__main__":
    main()
