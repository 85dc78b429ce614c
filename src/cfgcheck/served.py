"""The records of a served model: its settings, argv tokens, directives, pod and what it fetches.

Adapters build them and rules read them (``cfgcheck.model`` names them too: ``from cfgcheck.model import
ServedModel`` imports this module). They live apart from the findings and locations every run needs
because a dataclass costs its generated methods when the module is imported (about 1 ms each on Python
3.11, ``ServedModel`` 2 ms): a run whose files hold no served model (most pre-commit runs) never builds
one, and does not pay for the 13 classes (bench/RESULTS.md, "One file: start-up").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from sys import intern
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Location


@dataclass(slots=True, eq=False)
class Setting:
    """One value that configures the engine, where it is written, and the comments around it.

    ``name`` is the canonical setting (``max_num_seqs``); ``source`` says how it was given: a field
    path (``spec.parallelSlots``) or a flag (``--max-num-seqs``). ``location`` spans the value as
    written (for a valueless flag, the flag token); ``key_location`` is the key or flag token.
    ``comments`` are the comment lines on and directly above the key, without the ``#``.
    ``text`` is the exact source text of the value span, used to build edits.
    """

    name: str
    value: Any
    location: Location
    source: str
    comments: tuple[str, ...] = ()
    key_location: Location | None = None
    text: str | None = None
    origin: str = "field"  # field | arg | env | shell | values

    def __post_init__(self) -> None:
        # Served models keep their settings to the run's end, and their texts repeat from file to file (the
        # dense corpus: 38,000 settings, 34 names, 118 sources, 4,800 values): one object for each text.
        self.name, self.source = _shared(self.name), _shared(self.source)
        self.value, self.text, self.origin = _shared(self.value), _shared(self.text), _shared(self.origin)

    @property
    def is_flag(self) -> bool:
        return self.source.startswith("-")


def _shared(value: Any) -> Any:
    """``value``, the one interned object of its text when it is a ``str``."""
    return intern(value) if value.__class__ is str else value


@dataclass(slots=True, eq=False, repr=False)
class ArgToken:
    """One token of the engine's argv with its location (inside a list item, shell or env string)."""

    text: str
    location: Location
    comments: tuple[str, ...] = ()
    origin: str = "args"  # args | command | extraArgs | shell | env:<NAME> | typed:<field>
    synthetic: bool = False  # produced by an operator from a typed field, not written as a token

    def __post_init__(self) -> None:
        self.text, self.origin = _shared(self.text), _shared(self.origin)  # as a Setting's texts: 30,000 repeat


@dataclass(slots=True, eq=False, repr=False)
class Directive:
    """A ``# cfgcheck: key=value <reason>`` comment."""

    key: str
    value: str
    reason: str
    location: Location


@dataclass(slots=True, eq=False, repr=False)
class Probe:
    """A container probe with the Kubernetes API defaults filled in (initialDelaySeconds 0,
    periodSeconds 10, timeoutSeconds 1, failureThreshold 3)."""

    kind: str  # liveness | readiness | startup
    handler: str  # httpGet | tcpSocket | grpc | exec
    location: Location
    path: str | None = None
    port: Any = None  # a number or a named container port
    port_location: Location | None = None
    initial_delay: int = 0
    period: int = 10
    timeout: int = 1
    failure_threshold: int = 3
    timeout_location: Location | None = None

    @property
    def budget(self) -> int:
        """Seconds from container start until this probe has failed ``failure_threshold`` times."""
        return self.initial_delay + self.period * self.failure_threshold


@dataclass(slots=True, eq=False, repr=False)
class Volume:
    """A pod volume (or compose volume) by name: its type and, for emptyDir, medium and size."""

    name: str
    type: str  # emptyDir | persistentVolumeClaim | hostPath | volumeClaimTemplate | configMap | named | bind | ...
    location: Location
    medium: str | None = None
    size: str | None = None
    claim: str | None = None  # a persistentVolumeClaim's claimName: what another pod that mounts it shares


@dataclass(slots=True, eq=False, repr=False)
class Mount:
    """A volume mounted into the engine's container, at ``path``."""

    path: str
    volume: str
    location: Location


@dataclass(slots=True, eq=False, repr=False)
class Port:
    """A container port, by number (or as written), with its name when it has one."""

    number: Any
    location: Location
    name: str | None = None


@dataclass(slots=True, eq=False, repr=False)
class GroupPod:
    """Another pod of an engine's multi-pod group (one Ray worker group's pods, an LWS group's workers): the
    GPUs each such pod holds (the engine's ranks there share its ``/dev/shm``) and where that comes from."""

    name: str  # "Ray worker group gpu-workers", "LeaderWorkerSet workers"
    gpus: int | None  # per pod; None when not a literal count
    shm: tuple[str, Location] | None  # (how, where) the pod gets a RAM-backed /dev/shm, None: the runtime's 64 MiB
    location: Location  # the pod template


@dataclass(slots=True, eq=False, repr=False)
class Download:
    """Weights a command fetches for the engine (an init container, a job, a script): a hub repository
    (``org/name``, with the revision it pins) or a file URL, and the folder or file it writes."""

    repo: str | None  # the hub repository, when the command or URL names one
    revision: str | None  # as written (--revision, a resolve/<rev>/ URL, a checkout); None: the default branch
    url: str | None
    target: str | None  # where the weights land, as the downloading container sees it
    location: Location  # the repository or URL word
    how: str  # "huggingface-cli download in init container 'fetch'"
    volume: tuple[str, str] | None = None  # (volume or claim, path inside it) of the target, when mounted


@dataclass(slots=True, eq=False, repr=False)
class RepositoryModel:
    """A model folder the repository holds and the engine serves (a compose bind mount of it, a path a
    host script serves): its ``config.json`` as Git holds it, and the checkpoint index beside it (the
    weight size), when Git holds one."""

    folder: str  # repository-relative
    config: str  # the config.json's text
    index: str | None = None  # model.safetensors.index.json's text


@dataclass(slots=True, eq=False, repr=False)
class Service:
    """A Kubernetes Service of the run: where it sends traffic (port -> targetPort, number or name)."""

    name: str
    namespace: str | None
    selector: dict[str, str]
    targets: list[tuple[Any, Location]]
    location: Location


@dataclass(slots=True, eq=False, repr=False)
class PodFacts:
    """The runtime around the engine container: what its pod (or compose service, or the operator
    that builds the pod) declares. ``shm`` says where a RAM-backed or host ``/dev/shm`` comes from
    (None: the container gets the runtime's 64 MiB default); ``services`` is shared by the whole run."""

    format: str  # kubernetes | compose | production-stack | llmkube | kserve-llm
    location: Location
    namespace: str | None = None
    node: str | None = None  # the host it is pinned to: nodeName / kubernetes.io/hostname, or the compose file
    labels: dict[str, str] = field(default_factory=dict)
    shm: tuple[str, Location] | None = None  # (how, where)
    volumes: dict[str, Volume] = field(default_factory=dict)
    mounts: list[Mount] = field(default_factory=list)
    probes: dict[str, Probe] = field(default_factory=dict)
    ports: list[Port] = field(default_factory=list)
    pod_ports: list[Port] = field(default_factory=list)  # every container's: one list shared by the pod's engines
    requests: dict[str, Setting] = field(default_factory=dict)
    limits: dict[str, Setting] = field(default_factory=dict)
    # where a GPU request would be written: the container's resources.limits key, else resources, else the container
    resources_at: Location | None = None
    memory_limit: int | None = None  # bytes: limits.memory read in the format's own units
    ephemeral_storage: int | None = None  # bytes: the ephemeral-storage request (or limit)
    # the host's GPUs the runtime gives the container, by physical id (a list of strings): compose device_ids,
    # or a compose count N (docker gives devices 0..N-1)
    devices: Setting | None = None
    gpu_access: tuple[str, Location] | None = None  # GPUs given other than by a counted request (DRA, runtime)
    # GPUs reached outside any scheduler's count (the NVIDIA runtime class or variables, a privileged
    # container, compose's GPU options): every GPU of the host unless a device list narrows them
    host_gpus: tuple[str, Location] | None = None
    # the device plugin shares each GPU it hands out (time-slicing replicas): how, where it is configured
    shared_gpus: tuple[str, Location] | None = None
    # the compose profiles that start the service (none: it always starts; compose-spec "profiles")
    profiles: tuple[str, ...] = ()
    env: dict[str, Setting] = field(default_factory=dict)  # a worker pod's container env (the engine's is ServedModel.env)
    max_surge: Setting | None = None  # Deployment spec.strategy.rollingUpdate, as written (a number or "25%")
    max_unavailable: Setting | None = None
    services: list[Service] = field(default_factory=list)

    @property
    def sibling_ports(self) -> list[Port]:
        """The ports of the pod's other containers (sidecars)."""
        own = {id(port) for port in self.ports}
        return [port for port in self.pod_ports if id(port) not in own]

    def mount_at(self, path: str) -> Mount | None:
        """The mount that holds ``path`` (the longest mount path that is a prefix of it)."""
        best = None
        for mount in self.mounts:
            root = mount.path.rstrip("/") or "/"
            if (path == root or path.startswith(root + "/") or root == "/") and \
                    (best is None or len(root) > len(best.path.rstrip("/"))):
                best = mount
        return best


@dataclass(slots=True, eq=False, repr=False)
class ServedModel:
    """One engine process: what runs, with which settings, and where each of them is written."""

    name: str
    kind: str  # the resource or format, e.g. "InferenceService", "Deployment", "production-stack"
    path: str
    document: int  # 0-based index of the YAML document in the file
    location: Location  # where the served model is defined
    engine: str = "unknown"  # vllm | sglang | tokenspeed | llama.cpp | unknown
    engine_version: str | None = None
    # how sure engine_version is: exact (a version tag, a directive) | assumed | unknown, and why;
    # None: not stated by the adapter (derived from the image, else exact when a version is given)
    engine_version_confidence: str | None = None
    engine_version_why: str | None = None
    engine_variant: str | None = None  # a platform or vendor build that may add flags: rocm, omni, llm-d, ...
    image: Setting | None = None
    model: Setting | None = None
    model_revision: Setting | None = None
    settings: dict[str, Setting] = field(default_factory=dict)  # effective: what the engine uses
    occurrences: dict[str, list[Setting]] = field(default_factory=dict)  # every place, in applied order
    argv: list[ArgToken] = field(default_factory=list)
    # how the engine is started: "command" (the argv names its launcher: ``vllm serve``, ``python -m
    # sglang.launch_server``), "image" (the image's entrypoint receives the argv), None (not by an argv)
    launched_by: str | None = None
    gpus: Setting | None = None
    # what ``gpus`` counts, as the adapter read the topology: "pod" (the engine's one pod), "group" (every
    # pod of a multi-pod group: a Ray head + workers, an LWS leader + workers), "unknown" (one pod of a
    # multi-pod resource whose other pods the input does not show)
    gpus_span: str = "pod"
    group_pods: list[GroupPod] = field(default_factory=list)  # gpus_span "group": the group's other pods
    gpu_product: str | None = None  # a GPU name or label value, e.g. "NVIDIA-A100-SXM4-80GB"
    gpu_memory_bytes: int | None = None  # memory per GPU when the config states it
    gpu_resource: str | None = None  # the device resource requested: nvidia.com/gpu, amd.com/gpu, squat.ai/dri
    node_selector: dict[str, str] = field(default_factory=dict)
    gpu_labels: list[tuple[str, str]] = field(default_factory=list)  # (label, value) naming the GPU, best first
    # node-affinity terms and DRA selectors that name the accelerator (capacity.gpus.Claim), beside node_selector
    accelerator_claims: list = field(default_factory=list)
    # where the pod may be scheduled beyond node_selector (capacity.fleet.Placement: required node-affinity
    # terms, tolerations, the node it names, the comments beside them): matched to the cluster's node pools
    placement: Any = None
    # the run's cluster definitions (capacity.fleet.Fleet: node pools, nodes, shared GPUs), one object for
    # every served model of the run, set once every file has been read; None when the run has none
    cluster: Any = None
    # comments on and above the keys that lead to the model's definition in its document (the document's
    # first key, the list or pool that holds the model, its entry): (line, text), read for a GPU named there
    definition_comments: list = field(default_factory=list)
    replicas: Setting | None = None
    strategy: Setting | None = None  # Recreate | RollingUpdate | StatefulSet | ...
    env: dict[str, Setting] = field(default_factory=dict)  # literal container env values by name
    directives: list[Directive] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    inert: list[tuple[Setting, str]] = field(default_factory=list)  # (setting, why the engine ignores it)
    # what an operator's runtime passes the engine where the configuration leaves a setting unset (KAITO's
    # --gpu-memory-utilization), by canonical name -> (value, whose default: "KAITO's runtime at v0.12.0")
    operator_defaults: dict[str, tuple[Any, str]] = field(default_factory=dict)
    # settings read by a convention the image is assumed to follow (an in-house wrapper read like the known
    # ones), by canonical name -> why: a finding on one of them is never more than a warning, and says so
    conventions: dict[str, str] = field(default_factory=dict)
    # where the user writes a setting when a chart or a values mapping gives it a key: canonical name ->
    # dotted key path (``servingEngineSpec.modelSpec[0].vllmConfig.dtype``); "extra_args": the argument list
    setting_keys: dict[str, str] = field(default_factory=dict)
    comments: list[tuple[int, str]] = field(default_factory=list)  # (line, text) of every comment in the document
    # the comment blocks heading what starts the engine: the container's (or service's) entry and the keys
    # that hold its argv (``command:``, ``args:``, ``entrypoint:``, above their first item): where a person
    # explains the flags of the list as a whole, a few lines above any one of them
    launch_comments: tuple[str, ...] = ()
    identity: str = ""  # stable id across versions of a file: "<path>#<kind>/<name>[/<container>]"
    pod: PodFacts | None = None  # the pod around the engine, when the input shows it (or its operator is known)
    # pods of a group other than the one whose command starts the engine, where its workers run and load
    # the weights: a Ray cluster's GPU worker groups, by group name
    worker_pods: dict[str, PodFacts] = field(default_factory=dict)
    # the machine an engine outside any pod runs on, when the input tells it (the host whose ports one
    # load-balancer upstream lists); a pod's is ``pod.node``
    host: str | None = None
    # values the model's document takes by name from another file (a compose ``${VAR}`` from ``.env``):
    # (path, line, column) where the value is written -> where the document refers to it. A finding at
    # the value is shown at the reference, with the value as its related location.
    referenced_at: dict[tuple[str, int, int], Location] = field(default_factory=dict)
    # prefill/decode disaggregation: (the graph the worker belongs to, "prefill" | "decode"), when the
    # format says it (a Dynamo graph's workers, an llm-d model service's prefill and decode pods)
    disaggregation: tuple[str, str] | None = None
    # a runtime template (KServe ServingRuntime, LLMInferenceServiceConfig): what a served model will run,
    # not one by itself; only rules about the template's own text (TEMPLATES = True) check it
    template: bool = False
    downloads: list[Download] = field(default_factory=list)  # what fetches the weights before the engine starts
    # the images of the pods that run the engine's workers beside ``image`` (a Ray cluster's worker groups)
    worker_images: list[Setting] = field(default_factory=list)
    # the final FROM image of the Dockerfile the service builds (compose ``build:``), at its FROM line
    base_image: Setting | None = None
    # the hub repository a local model path holds, where the input names it (a download into that path,
    # an org/name --served-model-name of the same name; the folder of the repository it is): value
    # "org/name" (or the folder's name), source says which
    model_named: Setting | None = None
    # the repository's own model folder the local path is, whose config.json describes the architecture
    model_folder: RepositoryModel | None = None
    cache: dict = field(default_factory=dict, repr=False)  # facts derived once per run

    def gpu_pool(self) -> tuple[str, str] | None:
        """What identifies the GPUs this model runs on, for ceilings shared between served models:
        a pinned node, a GPU product, a device-plugin resource, or failing those the node selector."""
        hostname = self.node_selector.get("kubernetes.io/hostname")
        if hostname:
            return ("host", hostname)
        if self.gpu_product:
            return ("product", self.gpu_product)
        if self.gpu_resource and self.gpu_resource not in ("nvidia.com/gpu", "amd.com/gpu"):
            return ("resource", self.gpu_resource)
        if self.node_selector:
            return ("selector", ",".join(f"{k}={v}" for k, v in sorted(self.node_selector.items())))
        return None

    def setting(self, name: str) -> Setting | None:
        return self.settings.get(name)

    def model_id(self) -> str | None:
        """What to look the model's architecture up by: the hub repository a local path holds when the
        input names it (``model_named``), else the model as written."""
        if self.model_named is not None:
            return str(self.model_named.value)
        return self.model.value if self.model is not None and isinstance(self.model.value, str) else None

    def value(self, name: str, default: Any = None) -> Any:
        found = self.settings.get(name)
        return default if found is None else found.value

    def directive(self, key: str) -> Directive | None:
        for directive in self.directives:
            if directive.key == key:
                return directive
        return None

    def add(self, setting: Setting) -> None:
        """Record a setting occurrence; a later occurrence wins, as with argparse and operators."""
        found = self.occurrences.get(setting.name)
        if found is None:  # most settings occur once: a list of one, not setdefault's spare room (38,000 lists)
            self.occurrences[setting.name] = [setting]
        else:
            found.append(setting)
        self.settings[setting.name] = setting
