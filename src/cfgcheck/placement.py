"""Where an engine's GPUs are: the machine it runs on and the physical devices it uses there.

Two engines on one machine compete for a GPU when they use the same physical device, and no scheduler
stops them when one of them reaches its GPUs outside the scheduler's count. What an engine uses follows
from what its runtime gives it and which of those it picks:

- the devices the container sees: the ids its runtime is given (compose ``device_ids``, a compose
  ``count: N``, which docker turns into devices 0..N-1, ``NVIDIA_VISIBLE_DEVICES`` set without a
  device-plugin request), every GPU of the machine (``gpus: all``, the NVIDIA runtime class or runtime
  without a device list, a privileged container, AMD's ``/dev/kfd``, a process on the host), or those a
  device plugin chose (not known here: the scheduler counts them);
- which of those it uses: ``CUDA_VISIBLE_DEVICES`` (``HIP_VISIBLE_DEVICES`` on ROCm) picks by index
  among the devices seen, then the engine takes as many as its ranks in this process from the first
  (``--base-gpu-id`` for SGLang): vLLM with one rank runs on ``cuda:0``.

``placement(model)`` is read once per served model (``model.cache``), as ``effective.topology`` is.
"""

from __future__ import annotations


from .records import Record
from .effective import topology
from .model import Location, ServedModel, Setting
from .settings import as_int

ALL = "all"
# CUDA's and ROCm's device selection (CUDA C programming guide, "CUDA Environment Variables"; ROCm
# "GPU isolation techniques"): indices or UUIDs among the devices the process sees
SELECTORS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
# values that select no device (CFG507 reports them)
_NO_DEVICE = ("none", "void", "-1", "", "all")
_MOST_DEVICES = 64  # a larger index is no real device: the value is not read


class Placement(Record):
    """The machine an engine runs on and the physical GPUs it uses there (None: a scheduler's choice)."""

    __slots__ = ("host", "devices", "how", "setting", "location", "scheduled", "shared", "profiles")

    def __init__(self, host: str, devices: tuple[str, ...] | None, how: str, setting: Setting | None,
                 location: Location, scheduled: bool, shared: tuple[str, Location] | None = None,
                 profiles: tuple[str, ...] = ()) -> None:
        self.host = host
        self.devices = devices
        self.how = how  # how the devices come to the engine, for a message
        self.setting = setting  # where they are named (the device list, the variable, the count)
        self.location = location
        self.scheduled = scheduled  # a device plugin or DRA counts them: another pod is not given the same GPU
        self.shared = shared  # the device plugin time-slices its GPUs
        self.profiles = profiles  # started only with one of these compose profiles (none: always)

    def runs_with(self, other: Placement) -> bool:
        """Whether both engines may run at once: a service of a compose profile starts with the services
        of no profile and of a profile it shares, not with those of other profiles only."""
        return not self.profiles or not other.profiles or bool(set(self.profiles) & set(other.profiles))


def placement(model: ServedModel) -> Placement | None:
    """Where ``model``'s engine runs and which GPUs it uses, when the input tells the machine."""
    cache = model.cache
    if "placement" not in cache:
        cache["placement"] = _place(model)
    return cache["placement"]


def _place(model: ServedModel) -> Placement | None:
    pod = model.pod
    host = pod.node if pod is not None else model.host
    if host is None or model.replicas is not None and as_int(model.replicas.value) == 0:
        return None  # not placed, or scaled to nothing: it uses no GPU
    seen = _seen(model)
    if seen is None:
        return None
    visible, how, setting = seen
    profiles = pod.profiles if pod is not None else ()
    if visible is None:  # a device plugin or claim chose them
        where = setting.location if setting is not None else (pod.location if pod is not None else model.location)
        return Placement(host, None, how, setting, where, True, pod.shared_gpus if pod is not None else None,
                         profiles)
    picked = _picked(model, visible)
    if picked is None:
        return None
    devices, chosen_how, chosen = picked
    at = chosen or setting
    location = at.location if at is not None else (pod.location if pod is not None else model.location)
    return Placement(host, devices, f"{how}{chosen_how}", at, location, False, None, profiles)


def _seen(model: ServedModel) -> tuple[list[str] | None, str, Setting | None] | None:
    """The devices the engine's container sees: physical ids, [ALL], or None for a scheduler's choice;
    how, and the setting that names them. None when the input does not say."""
    pod = model.pod
    if pod is None:
        return _process(model)
    if pod.devices is not None:
        ids = [str(device) for device in pod.devices.value]
        how = pod.devices.source if pod.devices.source.startswith("count") else f"device_ids {', '.join(ids)}"
        return ids, how, pod.devices
    if model.gpus is not None and (as_int(model.gpus.value) or 0) > 0:  # a device plugin's or a claim's count
        return None, f"{model.gpus.source} {model.gpus.value}", model.gpus
    if pod.host_gpus is None:
        return (None, pod.gpu_access[0], None) if pod.gpu_access is not None else None
    nvidia = model.env.get("NVIDIA_VISIBLE_DEVICES")
    listed = _ids(nvidia.value) if nvidia is not None else None
    if listed:
        return listed, f"NVIDIA_VISIBLE_DEVICES={nvidia.value}", nvidia
    return [ALL], f"{pod.host_gpus[0]}: every GPU", None


def _process(model: ServedModel) -> tuple[list[str] | None, str, Setting | None] | None:
    """An engine started on the machine itself (or by ``docker run`` there): every GPU of the host, or
    what ``docker run --gpus`` gives (a count N is devices 0..N-1, as in compose)."""
    gpus = model.gpus
    if gpus is not None and gpus.source == "docker run --gpus":
        count = as_int(gpus.value)
        if str(gpus.value).strip().lower() == ALL:
            return [ALL], "docker run --gpus all", gpus
        if count is None or not 0 < count <= _MOST_DEVICES or "device=" in str(gpus.text):
            return None
        given = "device 0" if count == 1 else f"devices 0-{count - 1}"
        return [str(index) for index in range(count)], f"docker run --gpus {count} ({given})", gpus
    return [ALL], "a process on the host: every GPU", None


def _picked(model: ServedModel, visible: list[str]) -> tuple[tuple[str, ...], str, Setting | None] | None:
    """The physical devices the engine uses among those it sees: the selector's indices, then as many as
    its ranks in this process from the first (or from SGLang's ``--base-gpu-id``)."""
    selected, how, chosen = visible, "", None
    for name in SELECTORS:
        setting = model.env.get(name)
        if setting is None or setting.value is None or str(setting.value).strip().lower() in _NO_DEVICE:
            continue
        ids = _ids(setting.value)
        if not ids:
            return None  # a variable, a template: which devices is not known
        if visible != [ALL]:
            indices = [as_int(item) for item in ids]
            if any(index is None or not 0 <= index < len(visible) for index in indices):
                return None  # a UUID among listed ids, or an index past them
            ids = [visible[index] for index in indices]
        selected, how, chosen = ids, f", {name}={setting.value}", setting
        break
    else:
        how = ", none selected" if visible == [ALL] else ""
    layout = topology(model)
    ranks = max(1, layout.world * layout.dp if model.engine == "vllm" else layout.world)
    first = as_int(model.value("base_gpu_id")) or 0 if model.engine == "sglang" else 0
    if selected == [ALL]:
        if first + ranks > _MOST_DEVICES:
            return None
        return tuple(str(index) for index in range(first, first + ranks)), how, chosen
    used = selected[first:first + ranks]
    return (tuple(used), how, chosen) if used else None


def _ids(value: object) -> list[str] | None:
    """A device list as written (``0,1``, ``GPU-3f1c...``, ``MIG-...``); None when a part is not literal."""
    parts = [part.strip() for part in str(value).split(",") if part.strip()]
    if not parts or any("$" in part or "{" in part or " " in part for part in parts):
        return None
    if len(parts) == 1 and parts[0].lower() == ALL:
        return None
    return parts
