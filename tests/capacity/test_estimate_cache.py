"""The per-served-model estimate cache answers for the configuration it was computed for."""

from __future__ import annotations

import importlib
from types import SimpleNamespace


def test_a_new_configuration_never_gets_a_freed_ones_estimate(monkeypatch) -> None:
    estimate_module = importlib.import_module("cfgcheck.capacity.estimate")
    monkeypatch.setattr(estimate_module, "_estimate", lambda model, config: config["marker"])
    model = SimpleNamespace(cache={})
    # CPython hands a freed dict's address to the next dict, so keying by id alone repeats answers here.
    answers = [estimate_module.estimate(model, {"marker": n}) for n in range(200)]
    assert answers == list(range(200))


def test_the_same_configuration_is_estimated_once(monkeypatch) -> None:
    estimate_module = importlib.import_module("cfgcheck.capacity.estimate")
    calls = []
    monkeypatch.setattr(estimate_module, "_estimate", lambda model, config: calls.append(config) or len(calls))
    model = SimpleNamespace(cache={})
    config = {"gpu": "H100-80GB"}
    assert [estimate_module.estimate(model, config) for _ in range(3)] == [1, 1, 1]
    assert calls == [config]


def test_the_accelerator_is_resolved_once_per_configuration(monkeypatch) -> None:
    gpus = importlib.import_module("cfgcheck.capacity.gpus")
    calls = []
    monkeypatch.setattr(gpus, "_resolved", lambda model, config: calls.append(config) or len(calls))
    model = SimpleNamespace(cache={})
    config, other = {"gpu": "L4"}, {"gpu": "H100-80GB"}
    assert [gpus.resolve_accelerator(model, config) for _ in range(3)] == [1, 1, 1]
    assert gpus.resolve_accelerator(model, other) == 2
    assert gpus.resolve_accelerator(SimpleNamespace(), config) == 3  # no cache: worked out every time
