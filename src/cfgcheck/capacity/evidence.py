"""The GPU where no definition states it: the ``nodes:`` fleet map of ``.cfgcheck.yaml`` (a person's
statement about a host), and what people wrote beside a workload, which is only ever an assumption: a
GPU named in a comment on the node selector, the GPU request or the served model's definition, in the
file's header, in the file's path, in the header of a compose file beside it that serves the same model with the
same image, beside another GPU workload pinned to the same host (or on the
cluster's only GPU node), in a README's node table, or in what the nearest README says its folder runs on
(``tested on 2x L40S``). Where the GPU stays unknown, ``hint`` says which of these would state it.

Nothing here reads a file: the adapters recorded the comments (``ServedModel.placement``,
``definition_comments``, ``comments``, the settings' comments) and the fleet's notes.
"""

from __future__ import annotations

import posixpath

from .. import lazy
from ..cluster import HostNote, Statement
from .fleet import layout_key, pinned_host
from .gpu_table import Gpu, accelerator_by_name, gpus_in_text, may_name_gpu, unknown_gpus_in_text

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterable


class Evidence:
    """A GPU and why it is assumed (or, without a GPU, what was found and why it does not decide)."""

    def __init__(self, gpu: Gpu | None, why: str) -> None:
        self.gpu = gpu
        self.why = why


def mapped_gpu(model: Any, config: dict) -> tuple[Gpu | None, str | None]:
    """(GPU, origin) from the ``nodes:`` map for the host the pod is pinned to (the user's statement, so
    exact); (None, why) when the map names a GPU cfgcheck does not know for it; (None, None) otherwise."""
    nodes = config.get("nodes") or {}
    host = pinned_host(model)
    written = nodes.get(host) if isinstance(nodes, dict) and host is not None else None
    if not written:
        return None, None
    gpu = accelerator_by_name(str(written))
    origin = f"nodes.{host} in .cfgcheck.yaml"
    return (gpu, origin) if gpu is not None else (None, f"unknown GPU {str(written)!r} ({origin})")


def only_mapped_gpu(model: Any, config: dict) -> Evidence | None:
    """The fleet map's only GPU node, for a pod pinned to no node (assumed: the map may not be the fleet)."""
    nodes = config.get("nodes") or {}
    if pinned_host(model) is not None or not isinstance(nodes, dict):
        return None
    named = {host: accelerator_by_name(str(value)) for host, value in nodes.items() if value}
    if len(named) == 1 and None not in named.values():
        (host, gpu), = named.items()
        return Evidence(gpu, f"the pod names no node; nodes.{host} is the fleet map's only GPU node")
    return None


# a comment that is one switched-off parameter (``# accelerator_type="A10G",``, ``# --gpu-type a10g``): a setting
# someone did not choose, often under a list of its options, not a statement of the GPU it runs on; a plain word
# before a colon (``# GPU: 2x L40S``) is a statement
_DISABLED_PARAMETER = lazy.Pattern(r"""^[#\s]*(?:-\s+)?["']?(?:--?[A-Za-z][\w.-]*["']?(?:\s*=\s*|\s+)"""
                                   r"""|[A-Za-z][\w-]*[_./][\w./-]*["']?\s*[:=]\s*)["']?[^\s"',]+["']?\s*,?\s*$""")


def one_gpu(texts: Iterable[tuple[str, str]]) -> tuple[Gpu, str, str] | str | None:
    """What ``texts`` (``(where, text)``: comments) say together: ``(gpu, words, where)`` when they name
    one GPU and nothing else that looks like one; a sentence when they name several or one cfgcheck does
    not know; None when they name none."""
    named: dict[str, tuple[Gpu, str, str]] = {}
    unknown: dict[str, str] = {}
    for where, text in texts:
        if _DISABLED_PARAMETER.match(text):
            continue
        for gpu, words in gpus_in_text(text):
            named.setdefault(gpu.name, (gpu, words, where))
        for words in unknown_gpus_in_text(text):
            unknown.setdefault(words, where)
    if len(named) == 1 and not unknown:
        return next(iter(named.values()))
    listed = [f"{words!r} ({where})" for _, words, where in named.values()]
    listed += [f"{words!r} ({where}; not in cfgcheck's GPU table)" for words, where in unknown.items()]
    if not listed:
        return None
    return ("names several GPUs: " if len(listed) > 1 else "names ") + ", ".join(listed)


def _sources(model: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """Where people write about a served model's GPU, most specific first: (what, [(where, text)])."""
    path = getattr(model, "path", "")
    placement = getattr(model, "placement", None)
    notes = [(f"{where.path}:{where.line}", text) for where, text in (placement.notes if placement is not None else [])]
    gpus = getattr(model, "gpus", None)
    request = [(f"{gpus.location.path}:{gpus.location.line}", text) for text in (gpus.comments if gpus is not None else ())]
    written = getattr(model, "definition_comments", None) or []
    header = _header(written) or _header(getattr(model, "comments", None) or [])
    definition = [(f"{path}:{line}", text) for line, text in written if (line, text) not in header]
    fleet = getattr(model, "cluster", None)
    # the file's header and its other comments speak for the served model when its document is the file's only one
    solo = fleet.solo.get(path, []) if fleet is not None else []
    header = header if solo else []
    return [("a comment on the node selector", notes), ("a comment on the GPU request", request),
            ("a comment on the served model's definition", definition),
            ("the file's header", [(f"{path}:{line}", text) for line, text in header]),
            ("a comment in the served model's file", [(f"{path}:{line}", text) for line, text in solo])]


def _header(comments: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The comment block a file opens with (a shebang aside), among ``comments``."""
    block, expected = [], 1
    for line, text in sorted(comments):
        if line != expected:
            break
        block.append((line, text))
        expected = line + 1
    return [(line, text) for line, text in block if not text.startswith("!")]


def written_gpu(model: Any) -> Evidence | None:
    """A GPU named beside the served model, from the most specific place that names one; a place that
    names several decides nothing and says so."""
    for what, texts in _sources(model):
        found = one_gpu(texts)
        if isinstance(found, tuple):
            gpu, words, where = found
            return Evidence(gpu, f"{what} at {where} names {words!r}")
        if found is not None:
            return Evidence(None, f"{what} {found}")
    return None


def sibling_gpu(model: Any, fleet: Any) -> Evidence | None:
    """The GPU the headers of the files beside the served model's name, when they serve the same model with
    the same image (one layout written for several parallel sizes: ``compose.tp2.yaml`` beside a
    ``compose.tp4.yaml`` whose header says ``Llama-70B on 4x A100 80GB``); headers that name several decide
    nothing."""
    own = getattr(model, "path", None)
    if model.model_id() is None:
        return None
    siblings = [(path, lines) for path, lines in fleet.layouts.get(layout_key(model), []) if path != own]
    found = one_gpu((f"{path}:{line}", text) for path, lines in siblings for line, text in lines)
    if not isinstance(found, tuple):
        return None
    gpu, words, where = found
    return Evidence(gpu, f"the header of {where.rpartition(':')[0]}, beside it with the same model and image, "
                         f"at {where} names {words!r}")


def path_gpu(model: Any) -> Evidence | None:
    """The served model's file or a folder above it named after one GPU or instance type
    (``values-h100.yaml``, ``gpu/l40s/deploy.yaml``, ``eks/g5.12xlarge/``); a path that names several
    decides nothing. Names cfgcheck does not know are left out: a path's words are seldom about hardware."""
    path = str(getattr(model, "path", "") or "")
    found = gpus_in_text(path) if may_name_gpu(path) else []  # each GPU once
    if len(found) != 1:
        return None
    (gpu, words), = found
    return Evidence(gpu, f"the file's path {path} names {words!r}")


def documented_gpu(model: Any, statements: dict[str, Statement]) -> Evidence | None:
    """What the README nearest to the served model's file (its folder, then each folder above) states
    about the GPU its configurations run on; a README that names several GPUs decides nothing and says so."""
    folder = posixpath.dirname(str(getattr(model, "path", "") or ""))
    while True:
        said = statements.get(folder)
        if said is not None:
            where = f"{said.location.path}:{said.location.line}"
            return Evidence(said.gpu, f"{where} says {said.words!r}" if said.gpu is not None else said.words)
        if folder in ("", "/") or folder.startswith((".", "<")):
            return None
        folder = posixpath.dirname(folder)


def noted_gpu(model: Any, notes: list[HostNote]) -> Evidence | None:
    """A GPU named beside another GPU workload (or in a README's node table) about the host ``model`` is
    pinned to; for a pod pinned nowhere, about the cluster's only GPU node (every note that names a host
    names the same one)."""
    own = (getattr(model, "path", None), getattr(model, "document", None))
    others = [n for n in notes if (n.location.path, n.document) != own]
    host = pinned_host(model)
    if host is not None:
        chosen = [n for n in others if n.host == host]
        about = f"host {host}"
    else:
        hosts = {n.host for n in others if n.host is not None}
        if len(hosts) > 1:
            return None
        chosen, about = others, f"host {hosts.pop()}, the only GPU node named" if hosts else "the cluster's GPU node"
    named = {n.gpu.name: n for n in chosen}
    if len(named) != 1:
        return Evidence(None, "notes about " + about + " name " + ", ".join(sorted(named))) if named else None
    note, = named.values()
    place = "a README node table" if note.source == "readme" else "a comment beside another GPU workload"
    return Evidence(note.gpu, f"{place} at {note.location.path}:{note.location.line} names {note.words!r} for {about}")


def hint(model: Any, kind_hint: str, fleet: Any, found: list[str]) -> str:
    """What would state the GPU of ``model``: the fleet map for the host it is pinned to, a label of the
    pool it lands on, or the ways every workload can say it; with what was found and did not decide."""
    host = pinned_host(model)
    ways = []
    if host is not None:
        ways.append(f"`nodes: {{{host}: GPU}}` in .cfgcheck.yaml (`cfgcheck init` writes the map)")
    elif fleet is not None and fleet.pools:
        ways.append("a nodeSelector on the label of the node pool that has the GPU")
    ways.append(kind_hint)
    said = "; ".join(found)
    return "state it with " + ", or ".join(ways) + (f" ({said})" if said else "")
