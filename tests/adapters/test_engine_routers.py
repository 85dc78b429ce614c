"""SGLang's load balancers and router forward requests to engines; they serve no model themselves, so no
engine-flag check applies to them. ``sglang_router.launch_server`` is an engine with the router in front."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURES

from cfgcheck.config import Config
from cfgcheck.lint import collect, lint

ROUTERS = FIXTURES / "formats" / "sglang-routers"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROUTERS, root)
    return root


def test_load_balancers_and_routers_serve_no_model(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _, models = collect([root], Config(root))
    by_file = {}
    for model in models:
        by_file.setdefault(model.location.path, []).append(model)
    assert "router.sh" not in by_file and "compose.yaml" not in by_file
    # pd.sh: the prefill and decode engines, not the mini_lb in front of them
    assert sorted(m.value("disaggregation_mode") for m in by_file["pd.sh"]) == ["decode", "prefill"]
    assert all(m.model.value == "Qwen/Qwen2.5-VL-7B-Instruct" for m in by_file["pd.sh"])


def test_no_engine_flag_checks_on_a_load_balancer(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    result = lint([root], Config(root))
    wrong = [f for f in result.findings if f.code in ("CFG102", "CFG103", "CFG110")]
    assert wrong == []


def test_router_launch_server_is_an_engine_without_the_router_flags(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _, models = collect([root / "dp-router.sh"], Config(root))
    (model,) = models
    assert model.engine == "sglang" and model.model.value == "Qwen/Qwen3-8B"
    # --router-policy cache_aware --router-balance-abs-threshold 32 --router-dp-aware are the router's
    assert set(model.settings) == {"model", "data_parallel_size", "max_num_seqs"}
    assert model.value("data_parallel_size") == 2 and model.value("max_num_seqs") == 64
    result = lint([root / "dp-router.sh"], Config(root))
    assert not [f for f in result.findings if f.code in ("CFG102", "CFG103")]
