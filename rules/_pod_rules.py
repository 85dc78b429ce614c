"""Shared by the runtime rules (CFG5xx, CFG209): numbers as written, engines that serve, CPU builds, and
the parallel ranks one pod runs; and, for every rule, remediation worded where the user writes a setting."""

from __future__ import annotations

from cfgcheck.api import ServedModel, Setting, flag, image_engine, parse_image, topology

GPU_ENGINES = ("vllm", "sglang", "tokenspeed")
# CUDA_VISIBLE_DEVICES values that leave a CUDA process no device (CUDA programming guide, CUDA
# environment variables: the list stops at the first invalid entry; `all` is not a device).
HIDING = ("all", "none", "void", "-1", "")
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


def local_ranks(model: ServedModel) -> tuple[int, Setting | None]:
    """Tensor x pipeline ranks inside this pod (``Topology.ranks_here``), and the setting that asks for them."""
    layout = topology(model)
    at = layout.tp_setting if layout.tp > 1 else layout.pp_setting if layout.pp > 1 else layout.tp_setting
    return layout.ranks_here, at


def runs_on_cpu(model) -> bool:
    texts = [t.text for t in model.argv]
    for index, text in enumerate(texts):
        if text == "--device" and index + 1 < len(texts) and texts[index + 1].lower() == "cpu":
            return True
        if text.lower() == "--device=cpu":
            return True
    if cpu_target_ignored(model) is None and _cpu_target(model):
        return True  # a build of the image's own: VLLM_TARGET_DEVICE may have built it for CPU
    image = str(model.image.value).lower() if model.image is not None else ""
    return any(marker in image for marker in NON_GPU_IMAGE_MARKERS)


def _cpu_target(model) -> Setting | None:
    target = model.env.get("VLLM_TARGET_DEVICE")
    return target if target is not None and str(target.value).lower() == "cpu" else None


def cpu_target_ignored(model) -> Setting | None:
    """``VLLM_TARGET_DEVICE=cpu`` in the container of a published GPU image: the variable chooses what
    vLLM's ``setup.py`` builds; at run time vLLM picks the CPU platform only for a CPU build (its version
    names ``cpu``) or on macOS (``vllm/platforms/__init__.py``, ``cpu_platform_plugin``), so the image's
    CUDA build still needs a GPU."""
    target = _cpu_target(model)
    if target is None or model.image is None or not isinstance(model.image.value, str):
        return None
    found = image_engine(parse_image(model.image.value))
    gpu_build = found.known and found.engine == "vllm" and (found.variant or "") not in NON_GPU_IMAGE_MARKERS
    return target if gpu_build and not any(m in model.image.value.lower() for m in NON_GPU_IMAGE_MARKERS) else None
