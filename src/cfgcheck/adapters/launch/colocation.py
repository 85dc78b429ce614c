"""What puts engines on one machine or one GPU beyond their own documents, read from every file of the run
and applied once every served model is known (the ``settle`` hook):

- a load balancer's upstream that lists several engines' ports on one host (nginx ``upstream NAME {
  server 127.0.0.1:8001; server 127.0.0.1:8002; }``, in a ``.conf`` file or a ConfigMap): the engines
  started by scripts on those ports run on that machine (``ServedModel.host``);
- the NVIDIA device plugin's time-slicing (read with the cluster definitions, ``formats/time_slicing.py``;
  the configuration that applies to a pod's nodes, ``capacity.fleet.sharing_of``): each request of that
  resource is a share of one GPU, whose memory is not divided (k8s-device-plugin README, "Shared Access to GPUs with CUDA Time-Slicing":
  "there is no memory or fault-isolation between replicas"), so engines that request it may land on one
  GPU (``PodFacts.shared_gpus``).

Registered for its index and settle hooks only: it owns no document.
"""

from __future__ import annotations

import re

from ... import lazy
from ...model import Location, ServedModel
from ...records import Record
from ...settings import as_int
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ...capacity.fleet import sharing_of
from ..core.fleet import fleet
from ..core.offsets import LineIndex

MARKERS = ("upstream",)
INDEX_WORDS = MARKERS  # index() returns at once for a file without the word
_UPSTREAM = lazy.Pattern(r"\bupstream[ \t]+([\w.-]+)[ \t\r\n]*\{([^{}]*)\}")
_SERVER = lazy.Pattern(r"^[ \t]*server[ \t]+(?:https?://)?(\[[0-9a-fA-F:.]+\]|[\w.-]+):(\d{1,5})\b", re.M)
# addresses of the machine the load balancer runs on: the engines behind them share it
_LOCAL = ("127.0.0.1", "localhost", "0.0.0.0", "[::1]", "host.docker.internal")


class _Server(Record):  # never changed: a record creates no method at import, as a dataclass does
    __slots__ = ("host", "port", "location")

    def __init__(self, host: str, port: int, location: Location) -> None:
        self.host = host  # the machine, as the upstream names it
        self.port = port
        self.location = location


def _space(workspace: Workspace) -> list:
    """This module's index space: the upstream groups of the run's load balancers (a list: what a file
    adds to it is merged by the run when a worker process read the file, ``registry.APPEND_ONLY``)."""
    return workspace.space(__name__, list)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: the upstream groups written in ``loaded``."""
    text = loaded.text
    lowered = text.lower()
    if "upstream" not in lowered:
        return
    lines = LineIndex(text)
    for group in _UPSTREAM.finditer(text):
        servers = [_Server(match.group(1).lower(), int(match.group(2)),
                           _at(loaded.path, lines, group.start(2) + match.start(1)))
                   for match in _SERVER.finditer(group.group(2))]
        if len(servers) > 1:
            _space(workspace).append((group.group(1), _at(loaded.path, lines, group.start()), servers))


def _at(path: str, lines: LineIndex, offset: int) -> Location:
    line, column = lines.line_column(offset)
    return Location(path, line, column, line, column)


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every served model is known: the host of engines behind one upstream, and
    the time-sliced GPUs of pods that request a shared resource (the fleet's configuration for their nodes)."""
    space = _space(workspace)
    for name, where, servers in space:
        _one_machine(models, name, where, servers)
    cluster = fleet(workspace)
    for model in models if cluster.sharing else ():
        if model.gpu_resource and model.pod is not None and model.pod.format == "kubernetes":
            shared = sharing_of(model, cluster)
            if shared is not None:
                model.pod.shared_gpus = (f"time-slicing replicas: {shared.replicas} for {shared.resource}",
                                         shared.location)


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
