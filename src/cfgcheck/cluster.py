"""The run's cluster definitions as records: node pools and what they offer, MIG layouts, shared GPUs, what
people wrote about hosts and GPUs, where a pod may be scheduled, and the ``Fleet`` that holds them
(``capacity/fleet.py`` matches a pod against them; the formats of ``adapters/formats`` fill them).

A module of its own, outside ``capacity``: a served model keeps its ``Fleet`` and ``Placement``, so a run
that reads its result back from the whole-run cache builds them without importing the capacity model.
"""

from __future__ import annotations

from .model import Location

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable
    from .capacity.gpu_table import Gpu

class Taint:
    """A node taint: pods without a matching toleration are not scheduled there (``effect``)."""

    def __init__(self, key: str, value: str | None, effect: str) -> None:
        self.key = key
        self.value = value
        self.effect = effect


class Offer:
    """One kind of node a pool brings up: its GPU (None: not stated or not known), how many, the labels
    such a node carries beyond the pool's (its instance type, family, GPU name), and how the definition
    names it (``g5.12xlarge``, ``nvidia-l4``)."""

    def __init__(self, gpu: Gpu | None, count: int | None, labels: dict[str, str], what: str) -> None:
        self.gpu = gpu
        self.count = count
        self.labels = labels
        self.what = what


class NodePool:
    """Nodes the repository defines alike: their labels, the values a requirement lets each node take
    (Karpenter ``In``), taints, what they offer, the host names when the definition names nodes, and why
    the GPU is only assumed (a comment) or not known (an instance type the table lacks)."""

    def __init__(self, name: str, kind: str, location: Location, labels: dict[str, str] | None = None,
                 allowed: dict[str, tuple[str, ...]] | None = None, taints: list[Taint] | None = None,
                 offers: list[Offer] | None = None, hosts: tuple[str, ...] = (), assumed: str | None = None,
                 unknown: str | None = None) -> None:
        self.name = name
        self.kind = kind  # "Karpenter NodePool", "eksctl node group", "Terraform GKE node pool", "Talos node" ...
        self.location = location
        self.labels = {} if labels is None else labels
        self.allowed = {} if allowed is None else allowed
        self.taints = [] if taints is None else taints
        self.offers = [] if offers is None else offers
        self.hosts = hosts
        self.assumed = assumed
        self.unknown = unknown

    def where(self) -> str:
        return f"{self.kind} {self.name} ({self.location.path}:{self.location.line})"


class MigLayout:
    """A MIG manager configuration (mig-parted's ``mig-configs`` entry, a ``MIGConfig``): the slice
    profiles it cuts GPUs into, the GPU products its device selector names, whether every device it
    selects is cut (no ``mig-enabled: false`` entry), and where it is defined. Nodes select it with the
    ``nvidia.com/mig.config`` label (``MIG_CONFIG_LABEL``)."""

    def __init__(self, name: str, profiles: tuple[str, ...], products: tuple[Gpu, ...], every_device: bool,
                 location: Location) -> None:
        self.name = name
        self.profiles = profiles
        self.products = products
        self.every_device = every_device
        self.location = location


# the label the MIG manager reads the configuration to apply from (gpu-operator-mig.html, "Configuring MIG")
MIG_CONFIG_LABEL = "nvidia.com/mig.config"


class Sharing:
    """The device plugin's time-slicing: each GPU of ``resource`` is advertised as ``replicas`` units, so
    that many pods share one GPU and its memory (https://docs.nvidia.com/datacenter/cloud-native/
    gpu-operator/latest/gpu-sharing.html). ``name``: the configuration's name, which nodes select with the
    ``nvidia.com/device-plugin.config`` label (None: the plugin's only configuration)."""

    def __init__(self, resource: str, replicas: int, location: Location, name: str | None = None) -> None:
        self.resource = resource
        self.replicas = replicas
        self.location = location
        self.name = name


class HostNote:
    """A GPU a person named beside a workload that is not this served model (a comment on its node
    selector or GPU request), or in a README table row: about ``host`` (None: the workload is not pinned)."""

    def __init__(self, host: str | None, gpu: Gpu, location: Location, words: str, source: str = "workload",
                 document: int | None = None) -> None:
        self.host = host
        self.gpu = gpu
        self.location = location
        self.words = words
        self.source = source  # workload | readme
        self.document = document  # the YAML document of the workload (its own notes are not another's)


class Statement:
    """What a README says the configurations of its folder (and the folders below) run on (``tested on
    2x L40S`` in prose or under a hardware heading): one GPU and the line, or (``gpu`` None) why the README
    decides nothing (it names several GPUs, or one cfgcheck does not know)."""

    def __init__(self, gpu: Gpu | None, location: Location, words: str) -> None:
        self.gpu = gpu
        self.location = location
        self.words = words


class Placement:
    """Where a pod may be scheduled beyond its nodeSelector: the required node-affinity terms (alternatives,
    each a list of ``(key, operator, values)``), its tolerations (``(key, operator, value, effect)``; None
    when the format does not say), the node it names, and the comments on and above those keys."""

    def __init__(self, terms: list[list[tuple[str, str, tuple[str, ...]]]] | None = None,
                 tolerations: list[tuple[str | None, str, str | None, str | None]] | None = None,
                 node: str | None = None, notes: list[tuple[Location, str]] | None = None) -> None:
        self.terms = [] if terms is None else terms
        self.tolerations = tolerations
        self.node = node
        self.notes = [] if notes is None else notes


class Fleet:
    """One run's cluster definitions. ``late`` holds what a format can settle only once every file is
    read (a Terraform variable's default in another file): run once, before the first match."""

    def __init__(self, pools: list[NodePool] | None = None, sharing: list[Sharing] | None = None,
                 mig: list[MigLayout] | None = None, notes: list[HostNote] | None = None,
                 hosts: dict[str, Location] | None = None, solo: dict[str, list[tuple[int, str]]] | None = None,
                 layouts: dict[tuple, list[tuple[str, list[tuple[int, str]]]]] | None = None,
                 late: list[Callable[['Fleet'], None]] | None = None, statements: dict[str, Statement] | None = None,
                 unread: list[Callable[['Fleet'], None]] | None = None, mentions: dict[str, Statement] | None = None,
                 unmentioned: list[Callable[['Fleet'], None]] | None = None) -> None:
        self.pools = [] if pools is None else pools
        self.sharing = [] if sharing is None else sharing
        self.mig = [] if mig is None else mig
        self.notes = [] if notes is None else notes
        self.hosts = {} if hosts is None else hosts  # every host name a definition or workload names
        # path -> (line, text) of the comments that name a GPU in a file whose served models are of one document
        self.solo = {} if solo is None else solo
        # (folder, model, image) -> (path, header lines naming a GPU) of each such file serving that model with
        # that image there: sibling files of one layout (a compose file per parallel size) share their header's GPU
        self.layouts = {} if layouts is None else layouts
        self.late = [] if late is None else late
        # folder -> what its README states about the GPU (filled by ``unread``)
        self.statements = {} if statements is None else statements
        # readers of what is written far from any workload (README files): run by ``read_far`` only
        self.unread = [] if unread is None else unread
        # folder -> the one GPU its documents (README files, ``docs/*.md``) name anywhere in their prose, the
        # weakest evidence (filled by ``unmentioned``, which ``read_mentions`` runs)
        self.mentions = {} if mentions is None else mentions
        self.unmentioned = [] if unmentioned is None else unmentioned

    def settle(self) -> "Fleet":
        while self.late:
            self.late.pop(0)(self)
        return self

    def read_far(self) -> "Fleet":
        """Run the readers of README files once, when a served model's GPU is stated nowhere nearer: a run
        whose served models all have their GPU (or have none) reads no README."""
        while self.unread:
            self.unread.pop(0)(self)
        return self

    def read_mentions(self) -> "Fleet":
        """Run the readers of the repository's documents once, when nothing else names a served model's GPU."""
        while self.unmentioned:
            self.unmentioned.pop(0)(self)
        return self

    def __getstate__(self) -> dict:
        # the readers are the run's own closures (over its workspace), left unrun when no served model
        # needed them: a stored result (the whole-run cache's entry) keeps what they read, not them
        return {**self.__dict__, "late": [], "unread": [], "unmentioned": []}

    def one_host(self) -> bool:
        """Whether the run's GPU workloads can only be on one machine: it defines no node pool and names
        at most one host (a compose file, scripts, a one-node homelab), so what its documents say about a
        card is about that machine."""
        return not self.pools and len(self.hosts) <= 1


class PoolMatch:
    """What the node pools a pod can land on say: the GPU and its count, where, why it is only assumed,
    the pools that disagree, or (no GPU) what would state it."""

    def __init__(self, gpu: Gpu | None = None, count: int | None = None, origin: str | None = None,
                 assumed: str | None = None, conflicts: list[str] | None = None, hint: str | None = None) -> None:
        self.gpu = gpu
        self.count = count
        self.origin = origin
        self.assumed = assumed
        self.conflicts = [] if conflicts is None else conflicts
        self.hint = hint
