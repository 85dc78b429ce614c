"""Where a served model's hub weights go, shared by CFG505 (not persisted) and CFG502 (the first start
downloads them): the cache directory, the mount that holds it, the checkpoint's size, offline mode."""

from __future__ import annotations

import re

from cfgcheck.api import LazyPattern, lookup_architecture

PERSISTENT = ("persistentVolumeClaim", "volumeClaimTemplate", "hostPath", "nfs", "csi", "named", "bind",
              "cephfs", "glusterfs", "azureFile", "awsElasticBlockStore", "gcePersistentDisk", "iscsi")
DEFAULT_CACHE = "~/.cache/huggingface"
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_PARAMS = LazyPattern(r"(?<![\w.])(\d+(?:\.\d+)?)([bBmM])(?![a-zA-Z])")
HUB_ID = re.compile(r"^(hf://)?[A-Za-z0-9][\w.-]*/[\w.-]+(@[^/\s]+)?$")
# llama.cpp's -hf / -hfr / --hf-repo ORG/NAME[:QUANT] (env LLAMA_ARG_HF_REPO) download from the hub's default
# branch (common/arg.cpp; the quant defaults to Q4_K_M) into fs_get_cache_directory(): LLAMA_CACHE, else
# $XDG_CACHE_HOME/llama.cpp, else $HOME/.cache/llama.cpp on Linux (ggml-org/llama.cpp common/common.cpp)
LLAMA_HF = ("-hf", "-hfr", "--hf-repo", "LLAMA_ARG_HF_REPO")
LLAMA_CACHE = "~/.cache/llama.cpp"
_LLAMA_REPO = LazyPattern(r"^([A-Za-z0-9][\w.-]*/[\w.-]+)(?::([\w.-]+))?$")


def cache_dir(model, env: dict | None = None) -> tuple[str, str]:
    """(directory, what sets it) where the engine downloads hub weights; ``env``: a worker pod's own
    container env, beneath the engine's."""
    if model.engine == "llama.cpp":
        return _llama_cache(model, env)
    download = model.setting("download_dir")
    if download is not None and isinstance(download.value, str):
        return download.value, download.source
    for name, suffix in (("HF_HUB_CACHE", ""), ("HF_HOME", "/hub")):
        setting = model.env.get(name) or (env or {}).get(name)
        if setting is not None and str(setting.value).startswith("/"):
            return str(setting.value).rstrip("/") + suffix, name
    return DEFAULT_CACHE, "the default"


def _llama_cache(model, env: dict | None) -> tuple[str, str]:
    for name, suffix in (("LLAMA_CACHE", ""), ("XDG_CACHE_HOME", "/llama.cpp")):
        setting = model.env.get(name) or (env or {}).get(name)
        if setting is not None and str(setting.value).startswith("/"):
            return str(setting.value).rstrip("/") + suffix, name
    return LLAMA_CACHE, "the default"


def llama_hub(model) -> tuple[str, str] | None:
    """(``ORG/NAME``, the quant, Q4_K_M when none is written) a llama.cpp server downloads with -hf."""
    source = model.model
    if model.engine != "llama.cpp" or source is None or not isinstance(source.value, str) or \
            not any(flag == source.source or flag in source.source for flag in LLAMA_HF):
        return None
    match = _LLAMA_REPO.match(source.value.strip())
    return (match.group(1), match.group(2) or "Q4_K_M") if match else None


def weight_bytes(name: str, config: dict) -> int | None:
    """The checkpoint size: the bundled model table (or model_configs), else a parameter count in the
    name (``Qwen2.5-Omni-7B``, ``opt-125m``) at 2 bytes per parameter; None when neither says."""
    arch = lookup_architecture(name, config.get("model_configs"))
    if arch is not None and arch.weight_bytes_for():
        return arch.weight_bytes_for()
    match = _PARAMS.search(name.rsplit("/", 1)[-1])
    if match is None:
        return None
    scale = {"b": 1e9, "m": 1e6}[match.group(2).lower()]
    return int(float(match.group(1)) * scale * 2)


def mount_for(pod, directory: str):
    """The mount that holds the weights under ``directory``: the deepest, whatever the mounts' order.
    Under the default ``~/.cache/huggingface`` they land in its ``hub`` folder (huggingface_hub
    constants.py: ``HF_HUB_CACHE`` defaults to ``$HF_HOME/hub``), so a mount there holds them too."""
    if directory.startswith("~"):  # whoever's home: any mount at the folder's tail, or at .cache
        tails = (directory[2:], ".cache") + ((directory[2:] + "/hub",) if directory == DEFAULT_CACHE else ())
        held = [m for m in pod.mounts if m.path.rstrip("/").endswith(tails)]
        return max(held, key=lambda m: len(m.path.rstrip("/")), default=None)
    return pod.mount_at(directory)


def local_folder(model) -> bool:
    """An ``org/name``-shaped model that is a relative local folder: the repository holds its first folder
    (the adapter named the model by it), or it starts in ``models/`` (the folder name local layouts use;
    no hub organisation serves from it)."""
    named = model.model_named
    if named is not None and named.origin == "repository":
        return True
    source = model.model
    return source is not None and isinstance(source.value, str) and source.value.strip().startswith("models/")


def hub_name(model) -> str | None:
    """The hub id the engine downloads (``org/name`` without ``hf://`` or a revision), else None: a local
    path or an object-store URI is not a hub download."""
    source = model.model
    if source is None or not isinstance(source.value, str) or not HUB_ID.match(source.value.strip()) or \
            local_folder(model):
        return None
    return source.value.strip().removeprefix("hf://").split("@", 1)[0]


def offline(model):
    """The setting that puts the hub client in offline mode (it then downloads nothing), or None."""
    return next((model.env[name] for name in OFFLINE if name in model.env
                 and str(model.env[name].value).strip().lower() in ("1", "true", "yes", "on")), None)


def persistent_cache(model, pod, env: dict | None = None) -> tuple[bool, str, object]:
    """(whether the cache directory is on a persistent volume, where it is as a message says it, the
    volume or None)."""
    directory, set_by = cache_dir(model, env)
    mount = mount_for(pod, directory)
    volume = pod.volumes.get(mount.volume) if mount is not None else None
    where = f"{directory} ({set_by})" + (f" on the {volume.type} volume {volume.name!r}" if volume else "")
    return volume is not None and volume.type in PERSISTENT, where, volume
