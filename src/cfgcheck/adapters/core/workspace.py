"""The run's ``Workspace``: what the adapters of one run share across files. A module of its own, light to
import: the run makes one (and asks it for the references that lead nowhere) also when no file held a
serving marker, which imports neither the registry nor the document contexts (``contexts.py``)."""

from __future__ import annotations

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar
    Space = TypeVar("Space")


class Workspace:  # one per run, never compared: a plain class, whose __init__ the import does not generate
    """What the adapters of one run share across files: the user's configuration, the files whose launch
    another served model holds, and an index space per module that records documents of every file
    (LLMKube Models by name, Services, ConfigMaps, DRA claims, files read for context ...). A space
    belongs to its module, which alone reads and writes it (others ask that module), so a new format
    adds no field here."""

    def __init__(self, config: dict[str, Any] | None = None, held: set[str] | None = None, commit: str | None = None,
                 indexed: bool = False, spaces: dict[str, Any] | None = None) -> None:
        self.config = {} if config is None else config
        # repository files whose served model is another's launch (a Dockerfile whose image a workload runs)
        self.held = set() if held is None else held
        # the commit whose blobs the files a repository names are (diff mode: each side's); None: what Git
        # tracks in the work tree (launch/named_files.py)
        self.commit = commit
        # every file of the run is indexed: what a document refers to that is not indexed now is not in the
        # run (a ``refers_forward`` hook that waits for whatever any file may add answers by it: formats/kubeai.py)
        self.indexed = indexed
        self.spaces = {} if spaces is None else spaces

    def space(self, owner: str, make: Callable[[], Space]) -> Space:
        """The index space of module ``owner`` (its ``__name__``), made by ``make()`` on first use."""
        found = self.spaces.get(owner)
        if found is None:
            found = self.spaces[owner] = make()
        return found

    def may_render(self) -> bool:
        """Whether a renderer may run a tool (kubectl) for a file here: not in a worker process's workspace,
        which hands such a file to the run (``stages``), whose renders share one time budget (``sandbox``)."""
        return True
