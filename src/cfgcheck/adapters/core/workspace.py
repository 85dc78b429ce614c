"""The run's ``Workspace``: what the adapters of one run share across files. A module of its own, light to
import: the run makes one (and asks it for the references that lead nowhere) also when no file held a
serving marker, which imports neither the registry nor the document contexts (``contexts.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

Space = TypeVar("Space")


@dataclass(eq=False, repr=False)  # one per run, never compared: no value __eq__ to create at import
class Workspace:
    """What the adapters of one run share across files: the user's configuration, the files whose launch
    another served model holds, and an index space per module that records documents of every file
    (LLMKube Models by name, Services, ConfigMaps, DRA claims, files read for context ...). A space
    belongs to its module, which alone reads and writes it (others ask that module), so a new format
    adds no field here."""

    config: dict[str, Any] = field(default_factory=dict)
    # repository files whose served model is another's launch (a Dockerfile whose image a workload runs)
    held: set[str] = field(default_factory=set)
    # the commit whose blobs the files a repository names are (diff mode: each side's); None: what Git
    # tracks in the work tree (launch/named_files.py)
    commit: str | None = None
    # every file of the run is indexed: what a document refers to that is not indexed now is not in the
    # run (a ``refers_forward`` hook that waits for whatever any file may add answers by it: formats/kubeai.py)
    indexed: bool = False
    spaces: dict[str, Any] = field(default_factory=dict)

    def space(self, owner: str, make: Callable[[], Space]) -> Space:
        """The index space of module ``owner`` (its ``__name__``), made by ``make()`` on first use."""
        found = self.spaces.get(owner)
        if found is None:
            found = self.spaces[owner] = make()
        return found
