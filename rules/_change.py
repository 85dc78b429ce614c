"""Helpers shared by the change rules (diff mode): effective values before and after."""

from __future__ import annotations

from cfgcheck.api import CapacityEstimate, ServedModel

SEQ_SETTING = "max_num_seqs"


def effective_seqs(estimate: CapacityEstimate) -> int | None:
    """The sequence limit the engine runs with (its effective value: as written, else the version's default on
    its GPU, else derived from the pool), from the facts the estimate read."""
    assert estimate.facts is not None  # every estimate has its facts
    value = estimate.facts.get(SEQ_SETTING).value
    return value if isinstance(value, int) else None


def seqs_location(model: ServedModel):
    setting = model.setting(SEQ_SETTING)
    return setting.location if setting is not None else model.location


def engine_inputs(model: ServedModel) -> dict:
    """Everything that, when changed, restarts the engine: settings, argv, image and model."""
    return {
        "settings": {name: repr(s.value) for name, s in model.settings.items()},
        "argv": [t.text for t in model.argv],
        "image": model.image.value if model.image is not None else None,
        "model": model.model.value if model.model is not None else None,
        "env": {name: repr(s.value) for name, s in model.env.items()},
    }


def changed_settings(base: ServedModel, head: ServedModel) -> list[str]:
    before, after = base.settings, head.settings
    names = [n for n in after if n not in before or repr(before[n].value) != repr(after[n].value)]
    names += [n for n in before if n not in after]
    if (base.image and base.image.value) != (head.image and head.image.value):
        names.append("image")
    if engine_inputs(base)["env"] != engine_inputs(head)["env"]:
        names.append("env")
    return names
