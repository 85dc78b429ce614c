"""The ``config.json`` files a run reads for a model's architecture, before the bundled table: the model
folder the repository itself holds and serves (``ServedModel.model_folder``, read from Git by the
adapters), else a ``model_configs`` folder of ``.cfgcheck.yaml``. One parser for both
(``architecture.architecture_from_config``); a config that describes no model makes the architecture
unknown and says why, never a silent fall back to the bundled table.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..paths import UnsafePath, inside_repo, read_beyond
from .architecture import Architecture, architecture_from_config, bundled_architecture, normalize_model_id, \
    quant_bits_from_text

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any


class ModelConfigError(ValueError):
    """A ``config.json`` (under ``model_configs``, or in the repository's model folder) that is not a
    Hugging Face model configuration."""


def served_architecture(model: Any, model_id: str | None, model_configs_dir: Path | str | None = None,
                        problems: list[str] | None = None) -> Architecture | None:
    """The architecture of what ``model`` serves: the config.json of the repository's own model folder the
    engine serves, else ``lookup_architecture`` of ``model_id`` (the id the caller reads the model by)."""
    folder = getattr(model, "model_folder", None)
    if folder is None:
        return lookup_architecture(model_id, model_configs_dir, problems)
    name = folder.folder.rsplit("/", 1)[-1]
    qbits, qname = quant_bits_from_text(name)
    try:
        return _parsed(folder.config, folder.index, name, qbits, qname,
                       f"{folder.folder}/config.json in the repository").replaced()
    except ModelConfigError as exc:
        if problems is not None:
            problems.append(str(exc))
        return None


def lookup_architecture(model_id: str | None, model_configs_dir: Path | str | None = None,
                        problems: list[str] | None = None) -> Architecture | None:
    """The architecture of ``model_id``: a local ``DIR/<org>/<name>/config.json``, else the bundled table.

    Quantized repositories (``-AWQ``, ``-GPTQ-Int4``, ``-FP8``, ``-NVFP4`` ...) map to their base
    architecture with the weight size of the quantized checkpoint. A local ``config.json`` that is not
    a model configuration makes the architecture unknown (the user meant it to be used: no silent
    fallback to the bundled table); why is appended to ``problems``.
    """
    if not model_id:
        return None
    if model_configs_dir:
        norm = normalize_model_id(model_id)
        qbits, qname = quant_bits_from_text(norm.rsplit("/", 1)[-1])
        read_beyond()
        base = Path(model_configs_dir)
        candidates = [base / norm, base / norm.rsplit("/", 1)[-1]]
        raw = str(model_id)
        if raw.startswith("/"):
            candidates.append(Path(raw))
        for cand in candidates:
            try:  # the model id comes from the linted file: it must not lead out of model_configs
                cand = inside_repo(base, cand, what="model config folder")
            except UnsafePath:
                continue
            if (cand / "config.json").is_file():
                try:
                    return _local_architecture(cand, norm, qbits, qname)
                except ModelConfigError as exc:
                    if problems is not None:
                        problems.append(str(exc))
                    return None
    return bundled_architecture(model_id)


def _local_architecture(folder: Path, norm: str, qbits: float | None, qname: str | None) -> Architecture:
    """The architecture ``folder/config.json`` describes; ModelConfigError when it describes none. A copy of
    one read per file version and run: the needed-memory search estimates a model on every bundled GPU."""
    versions = tuple(_file_version(folder / name) for name in ("config.json", "model.safetensors.index.json"))
    return _read_local_architecture(folder, norm, qbits, qname, versions).replaced()


def _file_version(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=256)
def _read_local_architecture(folder: Path, norm: str, qbits: float | None, qname: str | None,
                             versions: tuple) -> Architecture:  # versions: the cache key's file versions
    where = f"{norm}/config.json under model_configs"
    try:
        text = (folder / "config.json").read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:  # a Unicode error is a ValueError
        raise ModelConfigError(f"{where} cannot be read as JSON: {type(exc).__name__}") from None
    idx = folder / "model.safetensors.index.json"
    try:
        index = idx.read_text(encoding="utf-8") if idx.is_file() else None
    except (OSError, ValueError):
        index = None
    return _parsed(text, index, norm, qbits, qname, where)


@lru_cache(maxsize=256)
def _parsed(text: str, index: str | None, norm: str, qbits: float | None, qname: str | None,
            where: str) -> Architecture:
    """The architecture a config.json's ``text`` describes (with the weight size of its checkpoint
    ``index``), named ``norm``; ModelConfigError, saying ``where`` the file is, when it describes none."""
    try:
        cfg = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSON errors are ValueErrors; deep nesting recurses
        raise ModelConfigError(f"{where} cannot be read as JSON: {type(exc).__name__}") from None
    if not isinstance(cfg, dict):
        raise ModelConfigError(f"{where} is a JSON {type(cfg).__name__}, not an object")
    weight = None
    if index is not None:
        try:
            weight = int(json.loads(index)["metadata"]["total_size"])
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
            weight = None
    try:
        arch = architecture_from_config(cfg, norm, weight)
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ModelConfigError(f"{where} has a field of the wrong type: {type(exc).__name__}") from None
    if qbits and arch.weight_bits >= 16 and weight is None:
        arch.weight_bits, arch.quantization = qbits, qname
    return arch
