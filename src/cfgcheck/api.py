"""What a rule may import: the one module a rule in ``rules/`` (or a plugin) reads cfgcheck through.

- the objects: ``Finding`` (with ``Fix`` and ``Edit``), ``Location``, ``ServedModel``, ``Setting``,
  ``SEVERITIES``, ``Option`` (a declared rule option); ``derived`` (what a rule finds in a model's
  comments, worked out once for every model sharing them: ``model.Comments``); ``configured`` (what ``rules:`` sets for a rule, read
  with a ``Config``: a rule that keeps to another rule's option); ``LazyPattern`` (a regular expression
  compiled the first time it matches: a rule's patterns for an uncommon case cost no run that never meets it);
- the contract: ``RuleContext`` (``ctx``) and the two ``check`` signatures, ``ModelCheck`` and, for a rule
  with ``SCOPE = "run"``, ``RunCheck``;
- effective facts: ``ctx.effective(model, name)`` returns a ``Fact`` (value in its unit, and its source:
  ``WRITTEN``, ``DEFAULT``, ``DERIVED``, ``UNKNOWN``); ``MEMORY_FRACTION`` names an engine's memory fraction
  whatever the engine calls it; ``topology(model)`` / ``ctx.topology(model)`` the parallel layout;
  ``placement(model)`` the machine and the physical GPUs the engine uses there;
- capacity: ``ctx.capacity(model)`` (a ``CapacityEstimate``) and the arithmetic on it (``concurrency_at``,
  ``cap_for``, ``longest_fitting_len``), the accelerator and model lookups, the memory-needs search;
- engine knowledge rules share: flag catalogs, versions, confidence, env variables, images, precision,
  flag history, drift between versions; the number parsers of the settings vocabulary; and
  ``secret_name`` (the one definition of a secret's name: a value under it is never quoted).

Rules import nothing else from cfgcheck (``tests/architecture/test_rule_api.py`` holds it). The objects and
the rule context load with this module; the rest (the two ``check`` signatures too) loads with the first rule that names it (``_LAZY``), as each
rule's own imports did: a run that needs no capacity rule does not import the capacity model, and a lint
run does not import the drift tables only a diff rule reads.
"""

from __future__ import annotations

import importlib

from .context import RuleContext
from .lazy import Pattern as LazyPattern
from .model import CONTAINER_KIND, SEVERITIES, Edit, Finding, Fix, Location, ServedModel, Setting, derived, unresolved
from .registry import Option, configured
from .settings import as_int, flag, float_value, human_int, int_value, scaled_pods, truthy

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # what _LAZY loads, for type checkers (tests/architecture/test_rule_api.py keeps the two equal)
    from typing import Any
    from .capacity import (GiB, cap_for, concurrency_at, longest_fitting_len, lookup_architecture, resolve_gpu,
                           served_architecture)
    from .capacity.architecture import normalize_model_id, quant_bits_from_text
    from .capacity.estimate import CapacityEstimate
    from .capacity.gpus import DEVICE, UNIT, accelerator_kind, kv_from_compiled_buckets, parallel_units, request_unit
    from .capacity.needs import ESTIMATE_MARGIN, on_largest_gpu, vendor_label, vendor_of, weight_assumptions
    from .check_signatures import ModelCheck, RunCheck
    from .config import Config
    from .drift import DefaultDrift, VersionChange, show, version_change
    from .effective import DEFAULT, DERIVED, MEMORY_FRACTION, UNKNOWN, WRITTEN, Fact, Facts, Topology, topology
    from .engines.argv import KEYWORD_ORIGIN, as_written, flag_location, only_if_set, value_location
    from .engines.catalog import catalog_for
    from .engines.confidence import confidence, in_every_version, is_typo, label, severity, stated, unfamiliar_image
    from .engines.envs import names_read, prefixes, readers, typo_of
    from .engines.history import flag_history, rename, rename_edit, undecided
    from .engines.images import EXACT as IMAGE_EXACT
    from .engines.images import UNKNOWN as IMAGE_UNKNOWN
    from .engines.images import image_engine, known_image, parse_image
    from .engines.precision import (act_dtype_refused_everywhere, act_dtypes, facts_version, float16_refusal,
                                    float16_refused_everywhere, needs_more_everywhere, quantization_requirement)
    from .engines.versions import DISPLAY, known_versions, version_key, version_ranges, versions
    from .secret_names import secret_name
    from .placement import SELECTORS, Placement, placement

# module -> the names it gives (``name`` or ``exported=name`` for a name the api renames)
_MODULES: dict[str, tuple[str, ...]] = {
    "capacity": ("GiB", "cap_for", "concurrency_at", "longest_fitting_len", "lookup_architecture", "resolve_gpu",
                 "served_architecture"),
    "capacity.architecture": ("normalize_model_id", "quant_bits_from_text"),
    "capacity.estimate": ("CapacityEstimate",),
    "capacity.gpus": ("DEVICE", "UNIT", "accelerator_kind", "kv_from_compiled_buckets", "parallel_units",
                      "request_unit"),
    "capacity.needs": ("ESTIMATE_MARGIN", "on_largest_gpu", "vendor_label", "vendor_of", "weight_assumptions"),
    "check_signatures": ("ModelCheck", "RunCheck"),  # typing Protocols: a one-file lint imports no typing
    "config": ("Config",),
    "drift": ("DefaultDrift", "VersionChange", "show", "version_change"),
    "effective": ("DEFAULT", "DERIVED", "MEMORY_FRACTION", "UNKNOWN", "WRITTEN", "Fact", "Facts", "Topology",
                  "topology"),
    "engines.argv": ("KEYWORD_ORIGIN", "as_written", "flag_location", "only_if_set", "value_location"),
    "engines.catalog": ("catalog_for",),
    "engines.confidence": ("confidence", "in_every_version", "is_typo", "label", "severity", "stated",
                           "unfamiliar_image"),
    "engines.envs": ("names_read", "prefixes", "readers", "typo_of"),
    "engines.history": ("flag_history", "rename", "rename_edit", "undecided"),
    "engines.images": ("IMAGE_EXACT=EXACT", "IMAGE_UNKNOWN=UNKNOWN", "image_engine", "known_image", "parse_image"),
    "engines.precision": ("act_dtype_refused_everywhere", "act_dtypes", "facts_version", "float16_refusal",
                          "float16_refused_everywhere", "needs_more_everywhere", "quantization_requirement"),
    "engines.versions": ("DISPLAY", "known_versions", "version_key", "version_ranges", "versions"),
    "secret_names": ("secret_name",),
    "placement": ("SELECTORS", "Placement", "placement"),
}
# exported name -> (module, its name there)
_LAZY: dict[str, tuple[str, str]] = {
    entry.split("=")[0]: (f"{__package__}.{module}", entry.split("=")[-1])
    for module, entries in _MODULES.items() for entry in entries
}

__all__ = [
    "CONTAINER_KIND", "Edit", "Finding", "Fix", "Location", "Option", "RuleContext", "SEVERITIES", "configured",
    "ServedModel", "Setting", "as_int", "flag", "float_value", "human_int", "int_value", "scaled_pods", "truthy",
    "derived", "unresolved", "LazyPattern",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    """A name of ``_LAZY``, imported from its module the first time a rule asks for it."""
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home[0]), home[1])
    globals()[name] = value
    return value
