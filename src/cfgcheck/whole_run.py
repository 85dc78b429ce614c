"""How a lint run uses the whole-run cache (``cache.RunCache``, docs/CACHE.md "Whole runs"): whether it applies
and what its key is asked, and what starts a first run's workers before the run reads its own files. Split
from lint.py, which stays under 600 lines."""

from __future__ import annotations

import os

from . import git, online, pool
from .cache import ContentCache, RunCache, digest
from .config import Config
from .discover import STDIN, Inputs
from .packs import PackedCache
from .paths import git_may_find_repository
from .stages import start_workers

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Callable


def whole_run(paths: list[Path], inputs: Inputs, config: Config, codes: set[str], fast: bool,
              ahead: Callable[[], Callable[[int], bool]] | None = None) -> RunCache | None:
    """The whole-run cache of a lint of folders (``cache.RunCache``): not of files named one by one (the files
    that use them are found with git grep), standard input, or a run that asks the Hugging Face Hub (None);
    ``ahead``: what starts the run's workers on a first run (``starter``)."""
    settings = config.as_dict()
    if inputs.streams or online.enabled(settings) or any(path == STDIN or not path.is_dir() for path in paths):
        return None
    import shutil  # here: a run of files named one by one starts no process (tests/cli/test_startup_imports.py)

    tracked = git.ls_files(config.root) if git_may_find_repository(config.root) else None
    parts = [f"codes {sorted(codes)}", f"paths {[os.path.abspath(path) for path in paths]}",
             f"templates {inputs.templates}", f"related {inputs.related}",
             f"tracked {None if tracked is None else len(tracked)} {digest(chr(0).join(tracked or []))}",
             f"tools {shutil.which('kubectl')} {shutil.which('helm')}",
             f"environment {sorted((k, v) for k, v in os.environ.items() if k.startswith('CFGCHECK'))}"]
    return RunCache(ContentCache(settings, fast, kind="run"), os.path.abspath(config.root), parts,
                    (inputs.count(), inputs.name), ahead, inputs.stats)


def starter(inputs: Inputs, config: Config, fast: bool, jobs: int, wanted: Callable[[str, str], bool],
            started: list[pool.Workers]) -> Callable[[], Callable[[int], bool]] | None:
    """What starts the run's workers on a first run, before the run reads its own files (``RunCache``'s
    ``ahead``: a worker reads and hashes those it stages), kept in ``started``; ``wanted``: the run's
    prefilter. None for a run in one process."""
    if not pool.usable(jobs, inputs.count()):
        return None

    def start() -> Callable[[int], bool]:
        started.append(start_workers(inputs.names(), config, fast, wanted, jobs, PackedCache(config.as_dict(), fast),
                                     inputs.looked))
        return started[0].runs
    return start
