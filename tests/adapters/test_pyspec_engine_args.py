"""vLLM's engine built in Python (``AsyncEngineArgs(...)`` in a Ray Serve deployment class), read with ast."""

from __future__ import annotations

from cfgcheck.adapters.core.registry import Workspace, served_models
from cfgcheck.yamlio import parse_text
from helpers import FIXTURES


def test_engine_args_keywords_are_the_engines_settings_located() -> None:
    name = "ray-serve-engine-args.py"
    loaded = parse_text(name, (FIXTURES / "formats" / name).read_text())
    (model,) = served_models(Workspace(config={"root": "."}), loaded)
    assert model.engine == "vllm" and model.model.value == "Qwen/Qwen3-8B"
    assert (model.model.location.line, model.model.location.column) == (10, 20)
    assert model.value("max_model_len") == 32768 and model.setting("max_num_seqs").location.line == 12
    assert model.setting("max_num_seqs").comments == ("the load test's knee",)
    assert model.value("trust_remote_code") is True and model.value("enforce_eager") is False
