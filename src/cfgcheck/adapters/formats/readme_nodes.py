"""A README's node table: a Markdown table whose rows name a node (the first cell) and, in another cell, its
GPU (``| gpu-box | Ryzen 9 | 64 GB | RTX 3090 |``), as notes about those hosts (``capacity.fleet.HostNote``).
Homelab repositories list their hardware this way more often than in any file a scheduler reads.

It is an assumption, never a statement: a README may be out of date and nothing checks it against the
cluster. So capacity reads it only for a pod pinned to that node, or for the cluster's only GPU node, and
says where it read it. A README's prose (``the lab has a 3090``) says nothing about which node, and is not
read. The READMEs read are those of the repository's root and of each folder that holds a file of the run,
inside the repository only (``launch/named_files``). Reads no served model.
"""

from __future__ import annotations

import posixpath
import re

from ...capacity.evidence import one_gpu
from ...capacity.fleet import HostNote
from ...model import Location, ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import fleet
from ..launch.named_files import read_text

MARKERS = ()  # reads no document: its index hook reads README files beside the run's files
_READMES = ("README.md", "readme.md", "Readme.md")
_HOST_HEADER = re.compile(r"node|host|machine|server|computer")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")  # a host name (RFC 1123 label, dots for FQDNs)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    seen = workspace.space(__name__, set)
    # standard input and pipes have no folder in the repository: only the root's README is theirs
    folder = posixpath.dirname(loaded.path) if not loaded.path.startswith(("/", "<", "..")) else ""
    while folder not in seen:
        seen.add(folder)
        for name in _READMES:
            rel = posixpath.join(folder, name) if folder else name
            text = read_text(workspace, rel)
            if text is not None:
                fleet(workspace).notes.extend(table_notes(rel, text))
                break
        folder = posixpath.dirname(folder)


def table_notes(path: str, text: str) -> list[HostNote]:
    """One note per row of a node table (its first header cell says node, host, machine or server) whose
    first cell is a host name and whose other cells name one GPU."""
    notes, header = [], None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.lstrip().startswith("|"):
            header = None
            continue
        cells = [cell.strip().strip("`*_ ") for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells[0].lower()
            continue
        if len(cells) < 2 or not _HOST_HEADER.search(header) or not _NAME.match(cells[0]):
            continue
        found = one_gpu([(f"{path}:{number}", " | ".join(cells[1:]))])
        if isinstance(found, tuple):
            gpu, words, _ = found
            notes.append(HostNote(cells[0], gpu, Location(path, number, 1), words, "readme"))
    return notes
