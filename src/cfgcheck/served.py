"""The records of a served model: its settings, argv tokens, directives, pod and what it fetches.

Adapters build them and rules read them (``cfgcheck.model`` names them too: ``from cfgcheck.model import
ServedModel`` imports this module). They live apart from the findings and locations every run needs, so
that a run whose files hold no served model (most pre-commit runs) never imports them. All are plain
classes with slots (``records.Record``): a dataclass compiles its generated methods when the module is
imported (about 0.7 ms a class on Python 3.11, 9 ms for this module's), which every one-file lint of a
served model paid (bench/RESULTS.md, "One file: start-up"); adapters make changed copies of argv tokens
and downloads with ``Record.replaced``. A factory default (an empty dict or list) is written ``None`` in a
signature, and each record gets its own.
"""

from __future__ import annotations

from sys import intern

from .records import Record

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any
    from .model import Location


class Setting(Record):
    """One value that configures the engine, where it is written, and the comments around it.

    ``name`` is the canonical setting (``max_num_seqs``); ``source`` says how it was given: a field
    path (``spec.parallelSlots``) or a flag (``--max-num-seqs``). ``location`` spans the value as
    written (for a valueless flag, the flag token); ``key_location`` is the key or flag token.
    ``comments`` are the comment lines on and directly above the key, without the ``#``.
    ``text`` is the exact source text of the value span, used to build edits.
    """

    __slots__ = ("name", "value", "location", "source", "comments", "key_location", "text", "origin")

    def __init__(self, name: str, value: Any, location: Location, source: str, comments: tuple[str, ...] = (),
                 key_location: Location | None = None, text: str | None = None, origin: str = "field") -> None:
        # Served models keep their settings to the run's end, and their texts repeat from file to file (the
        # dense corpus: 38,000 settings, 34 names, 118 sources, 4,800 values): one object for each text, the
        # interned one (the test written out each time: a helper was 280,000 calls on that corpus).
        self.name = intern(name) if name.__class__ is str else name
        self.value = intern(value) if value.__class__ is str else value
        self.location = location
        self.source = intern(source) if source.__class__ is str else source
        self.comments = comments
        self.key_location = key_location
        self.text = intern(text) if text.__class__ is str else text
        self.origin = intern(origin) if origin.__class__ is str else origin  # field | arg | env | shell | values

    def __repr__(self) -> str:  # as the dataclass wrote it
        return (f"{type(self).__qualname__}(name={self.name!r}, value={self.value!r}, location={self.location!r}, "
                f"source={self.source!r}, comments={self.comments!r}, key_location={self.key_location!r}, "
                f"text={self.text!r}, origin={self.origin!r})")

    @property
    def is_flag(self) -> bool:
        return self.source.startswith("-")


class ArgToken(Record):
    """One token of the engine's argv with its location (inside a list item, shell or env string)."""

    __slots__ = ("text", "location", "comments", "origin", "synthetic")

    def __init__(self, text: str, location: Location, comments: tuple[str, ...] = (), origin: str = "args",
                 synthetic: bool = False) -> None:
        self.text = intern(text) if text.__class__ is str else text  # as a Setting's texts: 30,000 repeat
        self.location = location
        self.comments = comments
        # args | command | extraArgs | shell | env:<NAME> | typed:<field>
        self.origin = intern(origin) if origin.__class__ is str else origin
        self.synthetic = synthetic  # produced by an operator from a typed field, not written as a token


class Directive(Record):
    """A ``# cfgcheck: key=value <reason>`` comment."""

    __slots__ = ("key", "value", "reason", "location")

    def __init__(self, key: str, value: str, reason: str, location: Location) -> None:
        self.key = key
        self.value = value
        self.reason = reason
        self.location = location


class Probe(Record):
    """A container probe with the Kubernetes API defaults filled in (initialDelaySeconds 0,
    periodSeconds 10, timeoutSeconds 1, failureThreshold 3)."""

    __slots__ = ("kind", "handler", "location", "path", "port", "port_location", "initial_delay", "period", "timeout",
                 "failure_threshold", "timeout_location")

    def __init__(self, kind: str, handler: str, location: Location, path: str | None = None, port: Any = None,
                 port_location: Location | None = None, initial_delay: int = 0, period: int = 10, timeout: int = 1,
                 failure_threshold: int = 3, timeout_location: Location | None = None) -> None:
        self.kind = kind  # liveness | readiness | startup
        self.handler = handler  # httpGet | tcpSocket | grpc | exec
        self.location = location
        self.path = path
        self.port = port  # a number or a named container port
        self.port_location = port_location
        self.initial_delay = initial_delay
        self.period = period
        self.timeout = timeout
        self.failure_threshold = failure_threshold
        self.timeout_location = timeout_location

    @property
    def budget(self) -> int:
        """Seconds from container start until this probe has failed ``failure_threshold`` times."""
        return self.initial_delay + self.period * self.failure_threshold


class Volume(Record):
    """A pod volume (or compose volume) by name: its type and, for emptyDir, medium and size."""

    __slots__ = ("name", "type", "location", "medium", "size", "claim")

    def __init__(self, name: str, type: str, location: Location, medium: str | None = None, size: str | None = None,
                 claim: str | None = None) -> None:
        self.name = name
        self.type = type  # emptyDir | persistentVolumeClaim | hostPath | volumeClaimTemplate | configMap | named | bind | ...
        self.location = location
        self.medium = medium
        self.size = size
        self.claim = claim  # a persistentVolumeClaim's claimName: what another pod that mounts it shares


class Mount(Record):
    """A volume mounted into the engine's container, at ``path``."""

    __slots__ = ("path", "volume", "location")

    def __init__(self, path: str, volume: str, location: Location) -> None:
        self.path = path
        self.volume = volume
        self.location = location


class Port(Record):
    """A container port, by number (or as written), with its name when it has one."""

    __slots__ = ("number", "location", "name")

    def __init__(self, number: Any, location: Location, name: str | None = None) -> None:
        self.number = number
        self.location = location
        self.name = name


class GroupPod(Record):
    """Another pod of an engine's multi-pod group (one Ray worker group's pods, an LWS group's workers): the
    GPUs each such pod holds (the engine's ranks there share its ``/dev/shm``) and where that comes from."""

    __slots__ = ("name", "gpus", "shm", "location")

    def __init__(self, name: str, gpus: int | None, shm: tuple[str, Location] | None, location: Location) -> None:
        self.name = name  # "Ray worker group gpu-workers", "LeaderWorkerSet workers"
        self.gpus = gpus  # per pod; None when not a literal count
        self.shm = shm  # (how, where) the pod gets a RAM-backed /dev/shm, None: the runtime's 64 MiB
        self.location = location  # the pod template


class Download(Record):
    """Weights a command fetches for the engine (an init container, a job, a script): a hub repository
    (``org/name``, with the revision it pins) or a file URL, and the folder or file it writes."""

    __slots__ = ("repo", "revision", "url", "target", "location", "how", "volume")

    def __init__(self, repo: str | None, revision: str | None, url: str | None, target: str | None,
                 location: Location, how: str, volume: tuple[str, str] | None = None) -> None:
        self.repo = repo  # the hub repository, when the command or URL names one
        self.revision = revision  # as written (--revision, a resolve/<rev>/ URL, a checkout); None: the default branch
        self.url = url
        self.target = target  # where the weights land, as the downloading container sees it
        self.location = location  # the repository or URL word
        self.how = how  # "huggingface-cli download in init container 'fetch'"
        self.volume = volume  # (volume or claim, path inside it) of the target, when mounted


class RepositoryModel(Record):
    """A model folder the repository holds and the engine serves (a compose bind mount of it, a path a
    host script serves): its ``config.json`` as Git holds it, and the checkpoint index beside it (the
    weight size), when Git holds one."""

    __slots__ = ("folder", "config", "index")

    def __init__(self, folder: str, config: str, index: str | None = None) -> None:
        self.folder = folder  # repository-relative
        self.config = config  # the config.json's text
        self.index = index  # model.safetensors.index.json's text


class EngineSource(Record):
    """The engine's own server-arguments source the repository holds (it is a fork of the engine): the
    files read and the option strings their ``add_argument(`` calls define."""

    __slots__ = ("paths", "options")

    def __init__(self, paths: tuple[str, ...], options: frozenset[str]) -> None:
        self.paths = paths  # repository-relative
        self.options = options  # "--enable-kvstore", ...


class Service(Record):
    """A Kubernetes Service of the run: where it sends traffic (port -> targetPort, number or name)."""

    __slots__ = ("name", "namespace", "selector", "targets", "location")

    def __init__(self, name: str, namespace: str | None, selector: dict[str, str], targets: list[tuple[Any, Location]],
                 location: Location) -> None:
        self.name = name
        self.namespace = namespace
        self.selector = selector
        self.targets = targets
        self.location = location


class PodFacts(Record):
    """The runtime around the engine container: what its pod (or compose service, or the operator
    that builds the pod) declares. ``shm`` says where a RAM-backed or host ``/dev/shm`` comes from
    (None: the container gets the runtime's 64 MiB default); ``services`` is shared by the whole run."""

    __slots__ = ("format", "location", "namespace", "node", "labels", "shm", "volumes", "mounts", "probes", "ports",
                 "pod_ports", "requests", "limits", "memory_limit", "ephemeral_storage", "devices", "gpu_access",
                 "host_gpus", "shared_gpus", "profiles", "env", "max_surge", "max_unavailable", "services",
                 "resources_at")

    def __init__(self, format: str, location: Location, namespace: str | None = None, node: str | None = None,
                 labels: dict[str, str] | None = None, shm: tuple[str, Location] | None = None,
                 volumes: dict[str, Volume] | None = None, mounts: list[Mount] | None = None,
                 probes: dict[str, Probe] | None = None, ports: list[Port] | None = None,
                 pod_ports: list[Port] | None = None, requests: dict[str, Setting] | None = None,
                 limits: dict[str, Setting] | None = None, memory_limit: int | None = None,
                 ephemeral_storage: int | None = None, devices: Setting | None = None,
                 gpu_access: tuple[str, Location] | None = None, host_gpus: tuple[str, Location] | None = None,
                 shared_gpus: tuple[str, Location] | None = None, profiles: tuple[str, ...] = (),
                 env: dict[str, Setting] | None = None, max_surge: Setting | None = None,
                 max_unavailable: Setting | None = None, services: list[Service] | None = None,
                 resources_at: Location | None = None) -> None:
        self.format = format  # kubernetes | compose | production-stack | llmkube | kserve-llm
        self.location = location
        self.namespace = namespace
        self.node = node  # the host it is pinned to: nodeName / kubernetes.io/hostname, or the compose file
        self.labels = {} if labels is None else labels
        self.shm = shm  # (how, where)
        self.volumes = {} if volumes is None else volumes
        self.mounts = [] if mounts is None else mounts
        self.probes = {} if probes is None else probes
        self.ports = [] if ports is None else ports
        self.pod_ports = [] if pod_ports is None else pod_ports  # every container's: one list shared by the pod's engines
        self.requests = {} if requests is None else requests
        self.limits = {} if limits is None else limits
        self.memory_limit = memory_limit  # bytes: limits.memory read in the format's own units
        self.ephemeral_storage = ephemeral_storage  # bytes: the ephemeral-storage request (or limit)
        # the host's GPUs the runtime gives the container, by physical id (a list of strings): compose device_ids,
        # or a compose count N (docker gives devices 0..N-1)
        self.devices = devices
        self.gpu_access = gpu_access  # GPUs given other than by a counted request (DRA, runtime)
        # GPUs reached outside any scheduler's count (the NVIDIA runtime class or variables, a privileged
        # container, compose's GPU options): every GPU of the host unless a device list narrows them
        self.host_gpus = host_gpus
        # the device plugin shares each GPU it hands out (time-slicing replicas): how, where it is configured
        self.shared_gpus = shared_gpus
        # the compose profiles that start the service (none: it always starts; compose-spec "profiles")
        self.profiles = profiles
        self.env = {} if env is None else env  # a worker pod's container env (the engine's is ServedModel.env)
        self.max_surge = max_surge  # Deployment spec.strategy.rollingUpdate, as written (a number or "25%")
        self.max_unavailable = max_unavailable
        self.services = [] if services is None else services
        # where a GPU request would be written: the container's resources.limits key, else resources, else the container
        self.resources_at = resources_at

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


class ServedModel(Record):
    """One engine process: what runs, with which settings, and where each of them is written."""

    __slots__ = ("name", "kind", "path", "document", "location", "engine", "engine_version",
                 "engine_version_confidence", "engine_version_why", "engine_variant", "image", "model",
                 "model_revision", "settings", "occurrences", "argv", "gpus", "gpus_span", "group_pods", "gpu_product",
                 "gpu_memory_bytes", "gpu_resource", "node_selector", "gpu_labels", "accelerator_claims", "placement",
                 "cluster", "definition_comments", "replicas", "strategy", "env", "directives", "annotations", "inert",
                 "operator_defaults", "conventions", "setting_keys", "comments", "identity", "pod", "worker_pods",
                 "host", "referenced_at", "disaggregation", "template", "downloads", "worker_images", "model_named",
                 "model_folder", "cache", "launched_by", "launch_comments", "base_image", "engine_source", "model_unset",
                 "in_background")

    def __init__(self, name: str, kind: str, path: str, document: int, location: Location, engine: str = "unknown",
                 engine_version: str | None = None, engine_version_confidence: str | None = None,
                 engine_version_why: str | None = None, engine_variant: str | None = None, image: Setting | None = None,
                 model: Setting | None = None, model_revision: Setting | None = None,
                 settings: dict[str, Setting] | None = None, occurrences: dict[str, list[Setting]] | None = None,
                 argv: list[ArgToken] | None = None, gpus: Setting | None = None, gpus_span: str = "pod",
                 group_pods: list[GroupPod] | None = None, gpu_product: str | None = None,
                 gpu_memory_bytes: int | None = None, gpu_resource: str | None = None,
                 node_selector: dict[str, str] | None = None, gpu_labels: list[tuple[str, str]] | None = None,
                 accelerator_claims: list | None = None, placement: Any = None, cluster: Any = None,
                 definition_comments: list | None = None, replicas: Setting | None = None,
                 strategy: Setting | None = None, env: dict[str, Setting] | None = None,
                 directives: list[Directive] | None = None, annotations: dict[str, str] | None = None,
                 inert: list[tuple[Setting, str]] | None = None,
                 operator_defaults: dict[str, tuple[Any, str]] | None = None, conventions: dict[str, str] | None = None,
                 setting_keys: dict[str, str] | None = None, comments: list[tuple[int, str]] | None = None,
                 identity: str = "", pod: PodFacts | None = None, worker_pods: dict[str, PodFacts] | None = None,
                 host: str | None = None, referenced_at: dict[tuple[str, int, int], Location] | None = None,
                 disaggregation: tuple[str, str] | None = None, template: bool = False,
                 downloads: list[Download] | None = None, worker_images: list[Setting] | None = None,
                 model_named: Setting | None = None, model_folder: RepositoryModel | None = None,
                 cache: dict | None = None, launched_by: str | None = None, launch_comments: tuple[str, ...] = (),
                 base_image: Setting | None = None, engine_source: EngineSource | None = None,
                 model_unset: Setting | None = None, in_background: bool = False) -> None:
        self._what_runs(name, kind, path, document, location, identity, template, engine, engine_version,
                        engine_version_confidence, engine_version_why, engine_variant, image, model, model_revision,
                        launched_by, base_image, model_named, model_folder)
        # the model argument as written when its variable is set to nothing (compose ``vllm serve ${MODEL}``
        # with ``MODEL=`` in the env file): the word vanishes and the engine gets no model; text: as written
        self.model_unset = model_unset
        self._as_written(settings, occurrences, argv, env, directives, annotations, inert, operator_defaults,
                         conventions, setting_keys, comments, definition_comments, launch_comments, referenced_at)
        self._hardware(gpus, gpus_span, group_pods, gpu_product, gpu_memory_bytes, gpu_resource, node_selector,
                       gpu_labels, accelerator_claims, placement, cluster)
        self._around(replicas, strategy, pod, worker_pods, host, disaggregation, downloads, worker_images, cache)
        # the engine's own server-arguments source, where the repository holds it (a fork of the engine)
        self.engine_source = engine_source
        # a script starts it in the background (``vllm serve ... &``) and goes on: what it or a script beside it
        # starts next runs on the same machine at the same time
        self.in_background = in_background

    def _what_runs(self, name: str, kind: str, path: str, document: int, location: Location, identity: str,
                   template: bool, engine: str, engine_version: str | None, engine_version_confidence: str | None,
                   engine_version_why: str | None, engine_variant: str | None, image: Setting | None,
                   model: Setting | None, model_revision: Setting | None, launched_by: str | None,
                   base_image: Setting | None, model_named: Setting | None,
                   model_folder: RepositoryModel | None) -> None:
        """Which engine runs which model, where the served model is written, and how it is started."""
        # kind: the resource or format ("InferenceService", "Deployment", "production-stack"); document: the
        # 0-based index of the YAML document in the file; location: where the served model is defined
        self.name, self.kind, self.path, self.document, self.location = name, kind, path, document, location
        self.identity = identity  # stable id across versions of a file: "<path>#<kind>/<name>[/<container>]"
        # a runtime template (KServe ServingRuntime, LLMInferenceServiceConfig): what a served model will run,
        # not one by itself; only rules about the template's own text (TEMPLATES = True) check it
        self.template = template
        self.engine, self.engine_version = engine, engine_version  # vllm | sglang | tokenspeed | llama.cpp | unknown
        # how sure engine_version is: exact (a version tag, a directive) | assumed | unknown, and why;
        # None: not stated by the adapter (derived from the image, else exact when a version is given)
        self.engine_version_confidence, self.engine_version_why = engine_version_confidence, engine_version_why
        self.engine_variant = engine_variant  # a platform or vendor build that may add flags: rocm, omni, llm-d, ...
        self.image, self.model, self.model_revision = image, model, model_revision
        # how the engine is started: "command" (the argv names its launcher: ``vllm serve``, ``python -m
        # sglang.launch_server``), "image" (the image's entrypoint receives the argv), None (not by an argv)
        self.launched_by = launched_by
        # the final FROM image of the Dockerfile the service builds (compose ``build:``), at its FROM line
        self.base_image = base_image
        # the hub repository a local model path holds, where the input names it (a download into that path,
        # an org/name --served-model-name of the same name; the folder of the repository it is): value
        # "org/name" (or the folder's name), source says which
        self.model_named = model_named
        # the repository's own model folder the local path is, whose config.json describes the architecture
        self.model_folder = model_folder

    def _as_written(self, settings: dict[str, Setting] | None, occurrences: dict[str, list[Setting]] | None,
                    argv: list[ArgToken] | None, env: dict[str, Setting] | None, directives: list[Directive] | None,
                    annotations: dict[str, str] | None, inert: list[tuple[Setting, str]] | None,
                    operator_defaults: dict[str, tuple[Any, str]] | None, conventions: dict[str, str] | None,
                    setting_keys: dict[str, str] | None, comments: list[tuple[int, str]] | None,
                    definition_comments: list | None, launch_comments: tuple[str, ...],
                    referenced_at: dict[tuple[str, int, int], Location] | None) -> None:
        """The engine's settings and argv, and what is written around them (comments, directives, env)."""
        self.settings = {} if settings is None else settings  # effective: what the engine uses
        self.occurrences = {} if occurrences is None else occurrences  # every place, in applied order
        self.argv = [] if argv is None else argv
        self.env = {} if env is None else env  # literal container env values by name
        self.directives = [] if directives is None else directives
        self.annotations = {} if annotations is None else annotations
        self.inert = [] if inert is None else inert  # (setting, why the engine ignores it)
        # what an operator's runtime passes the engine where the configuration leaves a setting unset (KAITO's
        # --gpu-memory-utilization), by canonical name -> (value, whose default: "KAITO's runtime at v0.12.0")
        self.operator_defaults = {} if operator_defaults is None else operator_defaults
        # settings read by a convention the image is assumed to follow (an in-house wrapper read like the known
        # ones), by canonical name -> why: a finding on one of them is never more than a warning, and says so
        self.conventions = {} if conventions is None else conventions
        # where the user writes a setting when a chart or a values mapping gives it a key: canonical name ->
        # dotted key path (``servingEngineSpec.modelSpec[0].vllmConfig.dtype``); "extra_args": the argument list
        self.setting_keys = {} if setting_keys is None else setting_keys
        self.comments = [] if comments is None else comments  # (line, text) of every comment in the document
        # comments on and above the keys that lead to the model's definition in its document (the document's
        # first key, the list or pool that holds the model, its entry): (line, text), read for a GPU named there
        self.definition_comments = [] if definition_comments is None else definition_comments
        # the comment blocks heading what starts the engine: the container's (or service's) entry and the keys
        # that hold its argv (``command:``, ``args:``, ``entrypoint:``, above their first item): where a person
        # explains the flags of the list as a whole, a few lines above any one of them
        self.launch_comments = launch_comments
        # values the model's document takes by name from another file (a compose ``${VAR}`` from ``.env``):
        # (path, line, column) where the value is written -> where the document refers to it. A finding at
        # the value is shown at the reference, with the value as its related location.
        self.referenced_at = {} if referenced_at is None else referenced_at

    def _hardware(self, gpus: Setting | None, gpus_span: str, group_pods: list[GroupPod] | None,
                  gpu_product: str | None, gpu_memory_bytes: int | None, gpu_resource: str | None,
                  node_selector: dict[str, str] | None, gpu_labels: list[tuple[str, str]] | None,
                  accelerator_claims: list | None, placement: Any, cluster: Any) -> None:
        """The GPUs the engine is given and what says which GPUs they are."""
        # what ``gpus`` counts, as the adapter read the topology: "pod" (the engine's one pod), "group" (every
        # pod of a multi-pod group: a Ray head + workers, an LWS leader + workers), "unknown" (one pod of a
        # multi-pod resource whose other pods the input does not show)
        self.gpus, self.gpus_span = gpus, gpus_span
        self.group_pods = [] if group_pods is None else group_pods  # gpus_span "group": the group's other pods
        self.gpu_product = gpu_product  # a GPU name or label value, e.g. "NVIDIA-A100-SXM4-80GB"
        self.gpu_memory_bytes = gpu_memory_bytes  # memory per GPU when the config states it
        self.gpu_resource = gpu_resource  # the device resource requested: nvidia.com/gpu, amd.com/gpu, squat.ai/dri
        self.node_selector = {} if node_selector is None else node_selector
        self.gpu_labels = [] if gpu_labels is None else gpu_labels  # (label, value) naming the GPU, best first
        # node-affinity terms and DRA selectors that name the accelerator (capacity.gpus.Claim), beside node_selector
        self.accelerator_claims = [] if accelerator_claims is None else accelerator_claims
        # where the pod may be scheduled beyond node_selector (cluster.Placement: required node-affinity
        # terms, tolerations, the node it names, the comments beside them): matched to the cluster's node pools
        self.placement = placement
        # the run's cluster definitions (cluster.Fleet: node pools, nodes, shared GPUs), one object for
        # every served model of the run, set once every file has been read; None when the run has none
        self.cluster = cluster

    def _around(self, replicas: Setting | None, strategy: Setting | None, pod: PodFacts | None,
                worker_pods: dict[str, PodFacts] | None, host: str | None, disaggregation: tuple[str, str] | None,
                downloads: list[Download] | None, worker_images: list[Setting] | None, cache: dict | None) -> None:
        """The pods and machines around the engine, how it rolls out, and what fetches its weights."""
        self.replicas, self.strategy = replicas, strategy  # strategy: Recreate | RollingUpdate | StatefulSet | ...
        self.pod = pod  # the pod around the engine, when the input shows it (or its operator is known)
        # pods of a group other than the one whose command starts the engine, where its workers run and load
        # the weights: a Ray cluster's GPU worker groups, by group name
        self.worker_pods = {} if worker_pods is None else worker_pods
        # the machine an engine outside any pod runs on, when the input tells it (the host whose ports one
        # load-balancer upstream lists); a pod's is ``pod.node``
        self.host = host
        # prefill/decode disaggregation: (the graph the worker belongs to, "prefill" | "decode"), when the
        # format says it (a Dynamo graph's workers, an llm-d model service's prefill and decode pods)
        self.disaggregation = disaggregation
        self.downloads = [] if downloads is None else downloads  # what fetches the weights before the engine starts
        # the images of the pods that run the engine's workers beside ``image`` (a Ray cluster's worker groups)
        self.worker_images = [] if worker_images is None else worker_images
        self.cache = {} if cache is None else cache  # facts derived once per run

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
