"""What a repository's README files say about its GPUs: a node table whose rows name a node (the first
cell) and, in another cell, its GPU (``| gpu-box | Ryzen 9 | 64 GB | RTX 3090 |``), as notes about those
hosts (``cluster.HostNote``); and what the README states its folder's configurations run on
(``cluster.Statement``): a line that says so (``Tested on 2x L40S``, ``Requires one A100 80GB``),
a line labelled as the hardware (``- GPU: RTX 4090``, a table row ``| GPU | Tesla T4 (16GB) |``), a
sentence that says what powers the box (``built on the NVIDIA GB10 SoC``) or any line under a hardware heading
(``## Hardware``, ``## Requirements``); and a ``hardware.json`` sidecar beside a launch script
(``{"gpu": "MI300X"}``), which speaks for its folder before the README does. Homelab repositories list
their hardware this way more often than in any file a scheduler reads; samples say what they were
tested on.

Each is an assumption, never a statement: a README may be out of date and nothing checks it against the
cluster. So capacity reads a node table only for a pod pinned to that node, or for the cluster's only
GPU node; a statement only for the served models of its folder and the folders below, when nothing
nearer names a GPU; and it says where it read it. Prose that merely mentions a GPU (``the lab once had
an A6000``) is not read, nor are code blocks or example lists (``e.g. T4, L4``). The READMEs are those of
the repository's root and of each folder that holds a file of the run, inside the repository only
(``launch/named_files``), read once and only when a served model's GPU is stated nowhere nearer
(``Fleet.read_far``). Reads no served model.

Last, the weakest evidence: the folder's other documents (a README of another ending, ``README.rst``,
and the Markdown files of a ``docs/`` folder beside it, ``MENTIONED_DOCS`` at most) whose hardware lines,
read as a README's are, name one card model together (``docs/hardware.md``'s table row ``| GPU | NVIDIA
GB10 |``), for a repository of one machine (``Fleet.one_host``) whose served models nothing else gives a
GPU; read only then (``Fleet.read_mentions``). Documents of a folder that name several cards decide nothing.
"""

from __future__ import annotations

import json
import posixpath

from ... import lazy
from ...capacity.evidence import one_gpu
from ...cluster import Fleet, HostNote, Statement
from ...model import Location, ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import fleet
from ..launch.named_files import lister, read_text
from ..launch.provisioned_hosts import SCRIPT_ENDINGS, provisioned

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

MARKERS = ()  # reads no document: its index hook records the folders of the run's files
_READMES = ("README.md", "readme.md", "Readme.md")
_HOST_HEADER = lazy.Pattern(r"node|host|machine|server|computer")
_NAME = lazy.Pattern(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")  # a host name (RFC 1123 label, dots for FQDNs)
# A line that says what the configuration runs on, or what it needs
_SAYS = lazy.Pattern(r"(?i)\b(?:tested|verified|validated|benchmarked|measured|deployed|runs?|running|ran|served|works?)"
                   r"\s+(?:\w+\s+){0,2}?(?:on|with|using)\b|\b(?:requires?|required|needs?|minimum|recommended)\b"
                   r"|\b(?:powered by|equipped with|built (?:on|around)|uses|using)\b|\bSoC\b"
                   # what a project was made for (``Designed for the RTX 5060 Ti 16GB``), a tested list (``tested: RTX 4080``)
                   r"|\b(?:designed|built|made|optimi[sz]ed|tuned|sized) for\b|\b(?:tested|verified|validated)\s*:"
                   # a deploy step that picks the machine (``In the Instance section, choose RTX-4000-SFF-ADA``)
                   r"|\b(?:choose|select|pick)\b[^.\n]*\binstance\b|\binstance\b[^.\n]*\b(?:choose|select|pick)\b")
_HARDWARE_HEADING = lazy.Pattern(r"(?i)\b(?:hardware|requirements?|prerequisites|tested|gpus?|accelerators?|specs?)\b")
# A line labelled as the hardware (``- GPU: RTX 4090``, ``**Hardware:** 2x 3090``, a table row
# ``| GPU | NVIDIA Tesla T4 (16GB) |``)
_HARDWARE_LABEL = lazy.Pattern(r"(?i)^[\s>*+|-]*(?:\*\*|__)?(?:gpus?|graphics(?: card)?|video card|accelerators?|hardware|"
                             r"machine|box|server|card)(?:\*\*|__)?\s*(?::|\*\*:|:\*\*|\|)")
# A sidecar a launch script's folder keeps beside it, naming the machine's GPU (``{"gpu": "MI300X"}``)
_SIDECARS = ("hardware.json",)
_SIDECAR_KEYS = ("gpu", "gpu_name", "gpu_model", "gpu_type", "gpu_product", "accelerator", "accelerator_type", "device_name")
_HEADING = lazy.Pattern(r"^\s{0,3}#{1,6}\s")
# the instance a PaaS deploy button's link asks for (``app.koyeb.com/deploy?...&instance_type=gpu-nvidia-l4``): links
# are otherwise not read, their paths name pages
_INSTANCE_QUERY = lazy.Pattern(r"[?&](?:instance_type|instance-type|instanceType)=([A-Za-z0-9][\w.-]*)")
# A threshold names a generation, not the card (``FP8 requires an H100 or newer``, ``Ampere+``)
_THRESHOLD = lazy.Pattern(r"(?i)\bor (?:newer|later|better|above|higher)\b|\band (?:newer|later|above)\b|[a-z]\+(?!\w)")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    seen = workspace.space(__name__, set)
    if not seen:  # the first file of the run: read the README files later, if a served model needs them
        fleet(workspace).unread.append(lambda found: _read(workspace, seen, found))
        fleet(workspace).unmentioned.append(lambda found: _read_mentions(workspace, seen, found))
    # standard input and pipes have no folder in the repository: only the root's README is theirs
    folder = posixpath.dirname(loaded.path) if not loaded.path.startswith(("/", "<", "..")) else ""
    while folder not in seen:
        seen.add(folder)
        folder = posixpath.dirname(folder)


def _read(workspace: Workspace, folders: set[str], found: Fleet) -> None:
    listed = lister(workspace)
    for folder in sorted(folders):
        names = listed(folder)
        if not any(_may_state(name) for name in names):
            continue  # no README, sidecar or script to read (each of a GitOps tree's 1,254 folders: 14 -> 3 ms)
        for name in _SIDECARS:  # nearer to the launch than the folder's README: it wins over it
            rel = posixpath.join(folder, name) if folder else name
            said = sidecar(rel, read_text(workspace, rel))
            if said is not None:
                found.statements[folder] = said
        said = provisioned(workspace, folder, names)  # the host a script beside the launch scripts starts
        if said is not None:
            found.statements.setdefault(folder, said)
        for name in _READMES:
            rel = posixpath.join(folder, name) if folder else name
            text = read_text(workspace, rel)
            if text is not None:
                found.notes.extend(table_notes(rel, text))
                said = statement(rel, text)
                if said is not None:
                    found.statements.setdefault(folder, said)
                break


def _may_state(name: str) -> bool:
    """Whether ``_read`` may read a file of a folder called ``name``: a README or sidecar (in any case: a file
    system blind to case finds ``README.md`` as ``Readme.MD``), or a script ``provisioned`` reads."""
    return _readme(name) or name.lower() in _SIDECARS or name.endswith(SCRIPT_ENDINGS)


# the Markdown files of one docs/ folder read for the card they name: a project's hardware and setup pages
# are a few; a documentation site of hundreds of pages names cards it does not run on
MENTIONED_DOCS = 16
_README_ENDINGS = ("", ".md", ".markdown", ".rst", ".txt")


def _documents(listed: Callable[[str], list[str]], folder: str) -> list[str]:
    """The README files of ``folder`` that ``_read`` leaves (``README.rst``, ``README``) and the Markdown
    files of its ``docs/`` folder (bounded); ``listed``: the run's ``named_files.lister``."""
    readmes = [name for name in listed(folder) if _readme(name) and name not in _READMES]
    docs = posixpath.join(folder, "docs") if folder else "docs"
    pages = [name for name in listed(docs) if name.lower().endswith(".md")][:MENTIONED_DOCS]
    return [posixpath.join(folder, name) if folder else name for name in readmes] + \
        [posixpath.join(docs, name) for name in pages]


def _readme(name: str) -> bool:
    lowered = name.lower()
    if not lowered.startswith("readme"):  # most names: no splitext (5,000 of a GitOps tree's run)
        return False
    stem, ending = posixpath.splitext(lowered)
    return stem == "readme" and ending in _README_ENDINGS


def _read_mentions(workspace: Workspace, folders: set[str], found: Fleet) -> None:
    listed = lister(workspace)
    for folder in sorted(folders):
        lines: dict[str, str] = {}
        for rel in _documents(listed, folder):
            lines.update(hardware_lines(rel, read_text(workspace, rel) or ""))
        said = _said(folder, lines) if lines else None  # no line names a GPU: most folders have no document
        if said is not None and said.gpu is not None:  # documents that name several cards decide nothing
            found.mentions[folder] = said


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


def statement(path: str, text: str) -> Statement | None:
    """What the README at ``path`` states its configurations run on: the GPU its hardware lines
    (``hardware_lines``) name together, with the first line naming it; or why they decide nothing; None
    when they name none."""
    return _said(path, hardware_lines(path, text))


def _said(path: str, lines: dict[str, str]) -> Statement | None:
    found = one_gpu(lines.items())
    if found is None:
        return None
    if isinstance(found, str):
        return Statement(None, Location(path, 1, 1), f"{path} {found}")
    gpu, _, where = found
    at, _, number = where.rpartition(":")
    return Statement(gpu, Location(at, int(number), 1), " ".join(lines[where].split())[:120])


def hardware_lines(path: str, text: str) -> dict[str, str]:
    """(``path:line`` -> line) of a document's lines that say what it runs on: a line that says tested on /
    runs on / requires / designed for / choose the instance, a line labelled as the hardware, or any line under a
    hardware heading; not in a code block, nor one that names a threshold; and the instance type a deploy link asks
    for."""
    lines, hardware, fenced = {}, False, False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced:
            continue
        elif _HEADING.match(line):
            hardware = bool(_HARDWARE_HEADING.search(line))
            if hardware:  # ``## Tested on H100`` says it in the heading
                lines[f"{path}:{number}"] = line
        elif (hardware or _SAYS.search(line) or _HARDWARE_LABEL.match(line)) and not _THRESHOLD.search(line):
            lines[f"{path}:{number}"] = line
        if not fenced and "instance" in line.lower() and (asked := [m.group(1) for m in _INSTANCE_QUERY.finditer(line)]):
            lines[f"{path}:{number}"] = "instance " + " ".join(asked)  # the link's instance, not its page
    return lines


def sidecar(path: str, text: str | None) -> Statement | None:
    """What a ``hardware.json`` beside the run's files names as the GPU: a ``gpu`` (``gpu_name``,
    ``accelerator`` ...) string at its top level or one level down (``{"system": {"gpu": "MI300X"}}``)."""
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    maps = [data, *(value for value in data.values() if isinstance(value, dict))] if isinstance(data, dict) else []
    named = {f"{key}: {m[key]}": m[key] for m in maps for key in m
             if str(key).lower() in _SIDECAR_KEYS and isinstance(m[key], str)}
    found = one_gpu([(said, value) for said, value in named.items()])
    if found is None:
        return None
    if isinstance(found, str):
        return Statement(None, Location(path, 1, 1), f"{path} {found}")
    gpu, _, said = found
    line = 1 + (text or "")[:max((text or "").find(json.dumps(named[said])), 0)].count("\n")
    return Statement(gpu, Location(path, line, 1), said)
