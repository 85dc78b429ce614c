"""Justfiles read as Makefiles are: ``NAME := "value"`` variables, ``{{NAME}}`` interpolation (spaces
inside the braces allowed), recipe bodies as shell commands with their environment prefix, and the
findings shell commands get (CFG303 for the unpinned hub model, CFG306 for --trust-remote-code)."""

from __future__ import annotations

from helpers import FIXTURES

from cfgcheck.adapters.core.protocol import file_format
from cfgcheck.adapters.formats.justfile import _read
from cfgcheck.config import Config
from cfgcheck.lint import lint

JUSTFILE = FIXTURES / "formats" / "justfile"


def test_recipes_are_served_models_with_their_variables_and_env_prefix():
    result = lint([JUSTFILE], Config(JUSTFILE, {}))
    models = {model.name: model for model in result.models}
    assert set(models) == {"baseline", "prefill", "decode"}  # `port PORT:` starts no engine
    for name, model in models.items():
        assert model.engine == "vllm" and model.model.value == "Qwen/Qwen2.5-7B-Instruct"
        assert (model.model.location.line, model.model.location.column) == ({"baseline": 16, "prefill": 26,
                                                                               "decode": 37}[name], 16)
        assert model.value("tensor_parallel_size") == 1 and model.value("gpu_memory_utilization") == 0.5
        assert model.value("max_model_len") == 2048 and model.gpus.value == 1  # CUDA_VISIBLE_DEVICES=0
    assert models["decode"].env["CUDA_VISIBLE_DEVICES"].value == "1"
    counts = {code: sum(1 for f in result.findings if f.code == code) for code in ("CFG303", "CFG306")}
    assert counts == {"CFG303": 3, "CFG306": 3}


def test_what_is_not_a_literal_stays_unknown():
    text = ('MODEL := env_var("MODEL")\nNAME := "a" + "b"\nTP := \'2\'\n\nserve PORT="8000":\n'
            '    -vllm serve {{MODEL}} --port {{PORT}} --tensor-parallel-size {{ TP }} --served-model-name {{NAME}}\n')
    body, recipes, variables = _read(text)
    assert recipes == [(5, "serve")] and len(body) == len(text)  # the body keeps the file's offsets
    assert variables["MODEL_"] is None and variables["NAME_"] is None and variables["TP___"] == "2"
    assert variables["PORT_"] is None  # a recipe parameter: whatever the caller passes
    assert body.splitlines()[5].startswith("     vllm serve ${MODEL_}")  # the - prefix is not part of the command
    assert file_format("Justfile") is file_format("ops/justfile") is file_format("serve.just")
