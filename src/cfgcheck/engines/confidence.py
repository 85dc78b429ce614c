"""How sure a served model's engine version is, and what a version-dependent finding may claim.

A flag finding depends on the engine version. It is an error only when the version is ``exact`` (an
upstream image's version tag, or a ``# cfgcheck: engine-version=`` directive) or when the flag is
wrong in every catalogued version; otherwise it is a warning that says which version was assumed
and why. Variant and unknown images may add flags of their own: a flag no version knows is a note
there, unless it is a typo of a real flag.
"""

from __future__ import annotations

from .catalog import Catalog, every_catalog
from .versions import DISPLAY, versions
from .images import ASSUMED, EXACT, UNKNOWN, image_engine, parse_image

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

TYPO_CUTOFF = 0.85  # difflib ratio: --gpu-memory-utilisation vs --gpu-memory-utilization is 0.98


def stated(model) -> tuple[str, str]:
    """(confidence, why) of the model's engine version as its adapter stated it; when it did not,
    as its image says, else exact for a version given without an image."""
    if model.engine_version_confidence is not None:
        return model.engine_version_confidence, model.engine_version_why or ""
    if model.image is not None and isinstance(model.image.value, str):
        found = image_engine(parse_image(model.image.value))
        return found.confidence, found.why
    if model.engine_version:
        return EXACT, "version given"
    return UNKNOWN, "no image names the engine version"


def confidence(model, catalog: Catalog) -> str:
    """exact | assumed | unknown: the model's version confidence, lowered when no catalog matches it."""
    sure, _ = stated(model)
    if sure == EXACT:
        return ASSUMED if catalog.assumed else EXACT
    return sure if sure in (ASSUMED, UNKNOWN) else UNKNOWN


def label(model, catalog: Catalog) -> str:
    """The version a finding was checked against, with what was assumed: "vLLM 0.26.0", or
    "assumed vLLM 0.9.2 (vLLM 0.9.0.1 is not catalogued; the nearest catalogued version)"."""
    sure = confidence(model, catalog)
    if sure == EXACT:
        return catalog.display
    name = DISPLAY.get(catalog.engine, catalog.engine)
    requested = getattr(model, "engine_version", None)
    if requested and catalog.assumed and catalog.requested:
        why = f"{name} {requested} is not catalogued; the nearest catalogued version"
    else:
        why = stated(model)[1] or "no engine version known"
        if not requested or catalog.version != catalog.requested:
            why += "; the newest catalog" if catalog.version == versions(catalog.engine)[-1] else ""
    return f"{sure} {catalog.display} ({why})"


def in_every_version(engine: str, wrong: Callable[[Catalog], bool]) -> bool:
    """True when ``wrong`` holds for the catalog of every catalogued version of ``engine``."""
    return all(wrong(catalog) for catalog in every_catalog(engine))


def severity(model, catalog: Catalog, everywhere: Callable[[], bool], rule_severity: str = "error") -> str:
    """The rule's severity when the version is exact or the flag is wrong in every version; else a
    warning (never higher than the rule's own). An image still holding a variable (``${VLLM_IMAGE}``)
    may not run this engine at all: a warning."""
    if not _templated_image(model) and (confidence(model, catalog) == EXACT or everywhere()):
        return rule_severity
    return "warning" if rule_severity == "error" else rule_severity


def _templated_image(model) -> bool:
    return model.image is not None and isinstance(model.image.value, str) and parse_image(model.image.value).templated


def unfamiliar_image(model) -> bool:
    """A variant or vendor build, or an image no table knows: it may accept flags upstream lacks."""
    if model.engine_variant:
        return True
    return model.image is not None and stated(model)[0] == UNKNOWN


def is_typo(catalog: Catalog, flag: str) -> str | None:
    """The real flag that ``flag`` is a near-miss of (difflib ratio >= TYPO_CUTOFF), else None."""
    normalized, _ = catalog.normalize(flag.split("=", 1)[0])
    pool = [o for o in catalog.option_strings() if o.startswith("--")]
    import difflib  # only a flag the catalog does not know is compared

    close = difflib.get_close_matches(normalized, pool, n=1, cutoff=TYPO_CUTOFF)
    return close[0] if close else None
