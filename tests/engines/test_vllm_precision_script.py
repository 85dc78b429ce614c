"""scripts/build_vllm_precision.py on small synthetic vLLM source trees (no network)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from helpers import REPO

_spec = importlib.util.spec_from_file_location("build_vllm_precision", REPO / "scripts" / "build_vllm_precision.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)

BASE = '''
class QuantizationConfig:
    @classmethod
    def get_min_capability(cls) -> int:
        raise NotImplementedError
'''
FP8 = '''
from typing import cast
from .base_config import QuantizationConfig

class Fp8Config(QuantizationConfig):
    @classmethod
    def get_name(cls):
        return cast("QuantizationMethods", "fp8")

    @classmethod
    def get_min_capability(cls) -> int:
        return {minimum}

class Fp8LinearMethod:  # not a QuantizationConfig: ignored
    def get_min_capability(self):
        return 100
'''
AWQ = '''
from vllm.model_executor.layers.quantization.base_config import QuantizationConfig

class AWQConfig(QuantizationConfig):
    def get_name(self) -> str:
        return "awq"

    def get_supported_act_dtypes(self):
        return [torch.half]

    @classmethod
    def get_min_capability(cls) -> int:
        # The AWQ kernel only supports Turing or newer GPUs.
        return 75

class AWQMarlinConfig(AWQConfig):  # inherits the minimum, has its own name and dtypes
    def get_name(self):
        return "awq_marlin"

    def get_supported_act_dtypes(self):
        return [torch.half, torch.bfloat16]

class Platformish(QuantizationConfig):  # not a constant: not recorded
    def get_name(self):
        return "platformish"

    def get_min_capability(self):
        return 80 if FOO else 70
'''
CONFIG = '''
_FLOAT16_NOT_SUPPORTED_MODELS = {
    "gemma2": "Numerical instability. Please use bfloat16 or float32 instead.",
    "plamo2": "Numerical instability. Please use bfloat16 or float32 instead.",
}

def _check_valid_dtype(model_type, dtype):
    if model_type in _FLOAT16_NOT_SUPPORTED_MODELS and dtype == "float16":
        raise ValueError("does not support float16")

def _get_quantization_config(quant_config, capability, dtype):
    if capability < quant_config.get_min_capability():
        raise ValueError("The quantization method is not supported for the current GPU.")
    if dtype not in quant_config.get_supported_act_dtypes():
        raise ValueError(f"{dtype} is not supported for quantization method")
'''
WARN_ONLY = '''
_FLOAT16_NOT_SUPPORTED_MODELS = {"plamo2": "unstable"}

def _resolve(model_type):
    if model_type in _FLOAT16_NOT_SUPPORTED_MODELS:
        logger.warning("unstable")
'''


def _tree(cache: Path, version: str, files: dict[str, str]) -> Path:
    tree = cache / f"vllm-{version}"
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    (tree / "SDIST").write_text(json.dumps({"sdist": f"vllm-{version}.tar.gz"}))
    return tree


METHOD_TABLE = '''
def get_quantization_config(quantization):
    from .awq import AWQConfig
    method_to_config: dict[str, type[QuantizationConfig]] = {
        "awq": AWQMarlinConfig,  # an alias: --quantization awq loads the Marlin class
        "fp8": Fp8Config,
        "not_a_class": some_function(),
    }
    return method_to_config[quantization]
'''


def _release(cache: Path, version: str, fp8_minimum: int, config: str, table: str = "") -> None:
    quant = "vllm/model_executor/layers/quantization"
    _tree(cache, version, {f"{quant}/base_config.py": BASE, f"{quant}/fp8.py": FP8.format(minimum=fp8_minimum),
                           f"{quant}/awq.py": AWQ, f"{quant}/__init__.py": table, "vllm/config/__init__.py": config,
                           "vllm/broken.py": "def (:\n"})


def test_minimum_capabilities_and_float16_refusals_per_release(tmp_path: Path) -> None:
    _release(tmp_path, "0.9.2", 80, CONFIG)
    _release(tmp_path, "0.22.0", 75, WARN_ONLY, METHOD_TABLE)
    data = script.build(["0.9.2", "0.22.0", "0.99.0"], tmp_path,
                        unpack=lambda engine, version, cache: cache / f"vllm-{version}"
                        if (cache / f"vllm-{version}").is_dir() else None)
    old, new = data["versions"]["0.9.2"], data["versions"]["0.22.0"]
    assert old["sdist"] == "vllm-0.9.2.tar.gz"
    awq_file = "vllm/model_executor/layers/quantization/awq.py"
    assert old["quantization"] == {
        "awq": {"min_capability": 75, "class": "AWQConfig", "file": awq_file, "act_dtypes": ["float16"]},
        "awq_marlin": {"min_capability": 75, "class": "AWQMarlinConfig", "file": awq_file,
                       "act_dtypes": ["bfloat16", "float16"]},
        "fp8": {"min_capability": 80, "class": "Fp8Config", "file": "vllm/model_executor/layers/quantization/fp8.py"}}
    assert new["quantization"]["fp8"]["min_capability"] == 75
    assert new["quantization"]["awq"]["class"] == "AWQMarlinConfig"  # the method table decides
    assert old["capability_check"] == old["act_dtype_check"] == "vllm/config/__init__.py"
    assert old["float16_refused"] == {"file": "vllm/config/__init__.py", "raises": True, "model_types": {
        "gemma2": "Numerical instability. Please use bfloat16 or float32 instead.",
        "plamo2": "Numerical instability. Please use bfloat16 or float32 instead."}}
    assert new["float16_refused"]["raises"] is False  # only a warning there: CFG304 stays quiet
    assert new["capability_check"] is None and new["act_dtype_check"] is None
    assert data["unavailable"] == {"0.99.0": "no sdist or wheel on PyPI"}


def test_main_writes_the_data_file(tmp_path: Path, monkeypatch) -> None:
    _release(tmp_path, "0.9.2", 80, CONFIG)
    out = tmp_path / "out.json"
    build = script.build
    monkeypatch.setattr(script, "build", lambda versions, cache: build(
        versions, cache, unpack=lambda engine, version, folder: folder / f"vllm-{version}"))
    assert script.main(["--sdist-cache", str(tmp_path), "--versions", "0.9.2", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["versions"]["0.9.2"]["quantization"]["fp8"]["min_capability"] == 80
