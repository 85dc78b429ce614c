"""References the files of a run make that lead nowhere: a file a kustomization names that does not exist,
a KServe runtime no file defines, an engine ``--config`` or ``--models-preset`` file that is not there.

An adapter that looks a reference up and finds nothing records it here (``dangling``), with where it looked;
the lint run reports them (``dangling-reference``, CFG003) only when it read the whole repository, since
a file outside the run may hold what is named (``lint.whole_repository``). What cfgcheck cannot resolve by
design is never recorded: remote kustomize bases, runtimes an operator installs in the cluster, paths
inside an image.
"""

from __future__ import annotations

from ...model import Location
from ...records import Record
from .workspace import Workspace


class Dangling(Record):
    """One reference that leads nowhere: what is named (and by what), and where it was looked for. Never
    changed: a record, which creates no method at import (the run imports this module for every file)."""

    __slots__ = ("location", "named", "looked", "remediation")

    def __init__(self, location: Location, named: str, looked: str, remediation: str) -> None:
        self.location = location  # the name as written
        self.named = named  # "resource 'base/missing.yaml'", "runtime 'vllm-rt'"
        self.looked = looked  # "looked for base/missing.yaml", "looked among the repository's ServingRuntimes (...)"
        self.remediation = remediation

    @property
    def message(self) -> str:
        return f"{self.named} does not exist: {self.looked}"


def dangling(workspace: Workspace) -> list[Dangling]:
    """Every dangling reference the adapters of the run recorded, less those of a file whose launch another
    served model holds (a script a compose service runs in its container, where a relative path is not the
    repository's)."""
    return [found for found in _recorded(workspace) if found.location.path not in workspace.held]


def _recorded(workspace: Workspace) -> list[Dangling]:
    """This module's index space: every reference that leads nowhere, as recorded."""
    return workspace.space(__name__, list)


def record(workspace: Workspace, location: Location, named: str, looked: str, remediation: str) -> None:
    """Record a reference that leads nowhere (once per place and name: a file read twice records it once)."""
    found = _recorded(workspace)
    if not any(d.location == location and d.named == named for d in found):
        found.append(Dangling(location, named, looked, remediation))


def recorded_count(workspace: Workspace) -> int:
    """How many references the run has recorded so far (a renderer's mark before it reads its output)."""
    return len(_recorded(workspace))


def relocate_since(workspace: Workspace, start: int, where) -> None:
    """Move the references recorded after ``start`` (those of a rendering, at rendered lines) to
    ``where(location)``: a place in the files the rendering came from. One moved onto the place and name of
    another (overlays sharing a patch) is dropped."""
    found = _recorded(workspace)
    moved = found[start:]
    del found[start:]
    for reference in moved:
        record(workspace, where(reference.location), reference.named, reference.looked, reference.remediation)


def forget_since(workspace: Workspace, start: int) -> None:
    """Drop the references recorded after ``start``: those of a file read ahead of its turn only to place
    a rendering's models (the run's index may not yet hold what it names; its own turn records them)."""
    del _recorded(workspace)[start:]
