"""What puts engines on one machine or one GPU beyond their own documents, read from every file of the run
and applied once every served model is known (the ``settle`` hook):

- a load balancer's upstream that lists several engines' ports on one host (nginx ``upstream NAME {
  server 127.0.0.1:8001; server 127.0.0.1:8002; }``, in a ``.conf`` file or a ConfigMap): the engines
  started by scripts on those ports run on that machine (``ServedModel.host``);
- the NVIDIA device plugin's time-slicing (``sharing.timeSlicing.resources[].replicas``, in its
  ConfigMap or in the chart values that make it): each request of that resource is a share of one GPU,
  whose memory is not divided (k8s-device-plugin README, "Shared Access to GPUs with CUDA Time-Slicing":
  "there is no memory or fault-isolation between replicas"), so engines that request it may land on one
  GPU (``PodFacts.shared_gpus``).

Registered for its index and settle hooks only: it owns no document.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ...model import Location, ServedModel
from ...settings import as_int
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace

MARKERS = ("upstream", "timeslicing")
_UPSTREAM = re.compile(r"\bupstream[ \t]+([\w.-]+)[ \t\r\n]*\{([^{}]*)\}")
_SERVER = re.compile(r"^[ \t]*server[ \t]+(?:https?://)?(\[[0-9a-fA-F:.]+\]|[\w.-]+):(\d{1,5})\b", re.M)
# addresses of the machine the load balancer runs on: the engines behind them share it
_LOCAL = ("127.0.0.1", "localhost", "0.0.0.0", "[::1]", "host.docker.internal")
_TIME_SLICING = re.compile(r"^([ \t]*)timeSlicing:[^\n]*\n", re.M)
_RESOURCE = re.compile(r"\bname:[ \t]*['\"]?([\w.-]+/[\w.-]+)")
_REPLICAS = re.compile(r"\breplicas:[ \t]*(\d+)")
_RENAMED = re.compile(r"\brenameByDefault:[ \t]*true\b")


@dataclass(frozen=True)
class _Server:
    host: str  # the machine, as the upstream names it
    port: int
    location: Location


def _space(workspace: Workspace) -> dict:
    """This module's index space: upstream groups, and device-plugin resources shared by time-slicing."""
    return workspace.space(__name__, lambda: {"upstreams": [], "sliced": {}})


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: the upstream groups and time-slicing configurations written in ``loaded``."""
    text = loaded.text
    lowered = text.lower()
    if "upstream" not in lowered and "timeslicing" not in lowered:
        return
    starts = [0] + [match.end() for match in re.finditer("\n", text)]
    for group in _UPSTREAM.finditer(text):
        servers = [_Server(match.group(1).lower(), int(match.group(2)),
                           _at(loaded.path, starts, group.start(2) + match.start(1)))
                   for match in _SERVER.finditer(group.group(2))]
        if len(servers) > 1:
            _space(workspace)["upstreams"].append((group.group(1), _at(loaded.path, starts, group.start()), servers))
    for opening in _TIME_SLICING.finditer(text):
        block = _block(text, opening)
        renamed = bool(_RENAMED.search(block))
        for resource, replicas in zip(_RESOURCE.finditer(block), _REPLICAS.finditer(block)):
            count = as_int(replicas.group(1))
            if count is not None and count > 1:
                name = f"{resource.group(1)}.shared" if renamed else resource.group(1)
                where = _at(loaded.path, starts, opening.end() + replicas.start(1))
                _space(workspace)["sliced"].setdefault(name, (f"time-slicing replicas: {count} for {name}", where))


def _block(text: str, opening: re.Match) -> str:
    """The lines under ``timeSlicing:`` (indented deeper than it, blank lines included)."""
    indent, end = len(opening.group(1).expandtabs()), opening.end()
    for line in re.finditer(r"[^\n]*\n?", text[end:]):
        body = line.group()
        if body.strip() and len(body) - len(body.lstrip()) <= indent or not body:
            break
        end += len(body)
    return text[opening.end():end]


def _at(path: str, starts: list[int], offset: int) -> Location:
    line = bisect.bisect_right(starts, offset)
    column = offset - starts[line - 1] + 1
    return Location(path, line, column, line, column)


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every served model is known: the host of engines behind one upstream, and
    the time-sliced GPUs of pods that request a shared resource."""
    space = _space(workspace)
    for name, where, servers in space["upstreams"]:
        _one_machine(models, name, where, servers)
    sliced = space["sliced"]
    for model in models if sliced else ():
        shared = sliced.get(model.gpu_resource or "")
        if shared is not None and model.pod is not None and model.pod.format == "kubernetes":
            model.pod.shared_gpus = shared


def _one_machine(models: list[ServedModel], name: str, where: Location, servers: list[_Server]) -> None:
    """Engines outside any pod whose written port one host of the upstream serves run on that host."""
    by_port: dict[int, set[str]] = {}
    for server in servers:
        by_port.setdefault(server.port, set()).add("local" if server.host in _LOCAL else server.host)
    for model in models:
        port = as_int(model.value("port"))
        hosts = by_port.get(port) if port is not None and model.pod is None and model.host is None else None
        if hosts is None or len(hosts) != 1:
            continue  # not behind this upstream, or behind it on several machines
        host = next(iter(hosts))
        model.host = (f"the host of upstream {name} ({where.path}:{where.line})" if host == "local" else host)
