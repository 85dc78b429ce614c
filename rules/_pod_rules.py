"""Shared by the runtime rules (CFG5xx, CFG209): numbers as written, engines that serve, CPU builds, and
the parallel ranks one pod runs; and, for every rule, remediation worded where the user writes a setting."""

from __future__ import annotations

from cfgcheck.model import ServedModel, Setting
from cfgcheck.settings import flag

GPU_ENGINES = ("vllm", "sglang", "tokenspeed")
# Image names and tags of engine builds that run without a GPU (vLLM's vllm-cpu / -cpu images,
# SGLang's -cpu / xeon images, the Neuron, TPU, Gaudi (HPU) and OpenVINO builds).
NON_GPU_IMAGE_MARKERS = ("cpu", "xeon", "neuron", "tpu", "hpu", "gaudi", "openvino")


def how_to_pass(model: ServedModel, name: str, value: str) -> str:
    """The advice to give setting ``name`` the value ``value``, worded where the user writes it: the key a
    chart or values mapping has for it, else the argument list it passes through, else the engine's flag."""
    keys = getattr(model, "setting_keys", None) or {}
    if name in keys:
        return f"set {keys[name]}: {value}"
    option = flag(model.engine, name) or "--" + name.replace("_", "-")
    if "extra_args" in keys:
        return f'add "{option}", "{value}" to {keys["extra_args"]}'
    return f"{'use' if model.setting(name) is not None else 'add'} {option} {value}"


def serves(model) -> bool:
    """A GPU engine with a model to serve: a container without one (a placeholder in a sample, or a
    non-engine image that merely has an engine's name in its path) is not a serving config yet."""
    return model.engine in GPU_ENGINES and model.model is not None


def as_int(value, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return default


def pod_gpus(model: ServedModel) -> int | None:
    """GPUs of this one pod: its container's own request (``model.gpus`` may count a whole LWS or Ray
    group), else the served model's GPU count."""
    pod = model.pod
    if pod is not None and model.gpu_resource:
        own = pod.limits.get(model.gpu_resource) or pod.requests.get(model.gpu_resource)
        if own is not None:
            return as_int(own.value)
    return as_int(model.gpus.value) if model.gpus is not None else None


def local_ranks(model: ServedModel) -> tuple[int, Setting | None]:
    """Tensor x pipeline ranks inside this pod, and the setting that asks for them.

    A pod that requests fewer GPUs than the world size holds only its share of the ranks (a
    multi-node layout); the rest run in other pods."""
    tp_setting = model.setting("tensor_parallel_size")
    pp_setting = model.setting("pipeline_parallel_size")
    tp = as_int(tp_setting.value, 1) if tp_setting is not None else 1
    pp = as_int(pp_setting.value, 1) if pp_setting is not None else 1
    world = max(tp, 1) * max(pp, 1)
    gpus = pod_gpus(model)
    if gpus is not None and 0 < gpus < world:
        world = gpus
    at = tp_setting if tp_setting is not None and tp > 1 else pp_setting if pp > 1 else tp_setting
    return world, at


def runs_on_cpu(model) -> bool:
    texts = [t.text for t in model.argv]
    for index, text in enumerate(texts):
        if text == "--device" and index + 1 < len(texts) and texts[index + 1].lower() == "cpu":
            return True
        if text.lower() == "--device=cpu":
            return True
    target = model.env.get("VLLM_TARGET_DEVICE")
    if target is not None and str(target.value).lower() == "cpu":
        return True
    image = str(model.image.value).lower() if model.image is not None else ""
    return any(marker in image for marker in NON_GPU_IMAGE_MARKERS)
