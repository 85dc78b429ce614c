"""``cfgcheck upgrade ENGINE VERSION``: every served model of an engine moved to a version, as one
proposal through ``propose`` (temporary worktree, comment-preserving edits, re-lint, ADR, one PR).

For each served model of the engine whose image names a version:

* the image tag is moved in the form it is written: ``v0.8.5`` -> ``v0.10.1``, a build suffix kept
  (``v0.5.5.post3-cu129-amd64`` -> ``v0.5.23-cu129-amd64``); a ``tag@sha256:`` reference gets the digest
  of the new tag from ``--digest`` or from the registry (``oci.Registry``); a dry run that cannot
  resolve it shows the tag alone and says so, a real run refuses;
* flags the target version removed or renamed are rewritten to their successors where the catalogs
  are sure of one (``history.rename``: same meaning, same kind of value), as ``cfgcheck fix`` rewrites
  them; the others are listed;
* the defaults that drift (``drift.between``) are listed, for the PR body and the ADR.

A served model without an image tag to move (a rolling tag, a template, a pip pin in a script) is
listed with the reason, never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..drift import DefaultDrift, RemovedFlag, between, show
from ..engines.catalog import catalog_for
from ..engines.history import rename_edit
from ..engines.versions import DISPLAY, known_versions, version_key
from ..engines.images import _VERSION, parse_image
from ..model import Edit, ServedModel
from ..oci import DIGEST, Registry, RegistryError
from .plan import PlanError


@dataclass
class Target:
    """What ``upgrade`` was asked for."""

    engine: str
    version: str
    digest: str | None = None
    registry: Registry = field(default_factory=Registry)
    dry_run: bool = False
    offline: bool = False  # never ask a registry: digests only from --digest
    resolved: dict[str, str | RegistryError] = field(default_factory=dict)  # image -> digest, once per run
    report: dict | None = None  # the plan as data for the documents, once planned

    @property
    def display(self) -> str:
        return f"{DISPLAY.get(self.engine, self.engine)} {self.version}"


@dataclass
class ModelPlan:
    model: ServedModel
    image: str | None = None  # the new image reference
    digest_note: str | None = None  # why the digest is missing from ``image``
    renames: list[tuple[Any, str, str]] = field(default_factory=list)  # (token, written, successor)
    edits: list[Edit] = field(default_factory=list)  # the renames as text edits (history.rename_edit)
    unrewritten: list[RemovedFlag] = field(default_factory=list)
    drifts: list[DefaultDrift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why this served model is not moved


def check_target(engine: str, version: str, digest: str | None) -> list[str]:
    """What the catalogs say about the target; a usage error when they cannot say anything."""
    versions = known_versions(engine)
    if not versions:
        raise PlanError(f"no flag catalog for engine '{engine}' (known: vllm, sglang, tokenspeed)")
    if not re.fullmatch(r"v?\d+(\.\d+){1,3}(\.?post\d+|rc\d+)?", version):
        raise PlanError(f"'{version}' is not an engine version (for example 0.33.0)")
    if digest is not None and not DIGEST.match(digest):
        raise PlanError(f"--digest '{digest}' is not a sha256 digest (sha256:<64 hex digits>)")
    clean = version.lstrip("vV")
    if clean in versions:
        return [f"{DISPLAY.get(engine, engine)} {clean} is catalogued: flags and defaults are checked against it"]
    catalog = catalog_for(engine, clean)
    return [f"{DISPLAY.get(engine, engine)} {clean} is not catalogued (newest: {versions[-1]}); flags and "
            f"defaults are checked against {catalog.display}, assumed. Add the version with "
            "scripts/build_catalogs.py to check it exactly"]


def moved_tag(tag: str, version: str) -> str | None:
    """``tag`` with its version replaced, the rest of its form kept; None when it names no version."""
    match = _VERSION.match(tag)
    if not match:
        return None
    clean = version.lstrip("vV")
    start, end = match.span(1)
    return tag[:start] + clean + tag[end:]


def _digest(target: Target, ref, new_tag: str) -> tuple[str | None, str | None]:
    """(digest, None) or (None, why it is not known) for ``ref`` at ``new_tag``."""
    if target.digest is not None:
        return target.digest, None
    if target.offline:
        return None, "offline: the registry was not asked"
    key = f"{ref.full}:{new_tag}"
    if key not in target.resolved:
        try:
            target.resolved[key] = target.registry.digest(ref.registry, ref.repository, new_tag)
        except RegistryError as exc:
            target.resolved[key] = exc
    found = target.resolved[key]
    return (found, None) if isinstance(found, str) else (None, str(found))


def _image(plan: ModelPlan, target: Target) -> None:
    model = plan.model
    text = model.image.value if model.image is not None else None
    if not isinstance(text, str) or not text:
        plan.skipped = "no image names its engine version (pin it in the script or spec and upgrade by hand)"
        return
    ref = parse_image(text)
    if ref.templated or ref.tag is None or ref.rolling:
        plan.skipped = f"image {text} has no version tag to move ({'templated' if ref.templated else 'rolling'})"
        return
    new_tag = moved_tag(ref.tag, target.version)
    if new_tag is None:
        plan.skipped = f"the tag of {text} names no version"
        return
    if new_tag == ref.tag:
        plan.skipped = f"already at {target.version}"
        return
    image = text.split("@", 1)[0].rsplit(":", 1)[0] + ":" + new_tag
    if ref.digest is not None:
        digest, why = _digest(target, ref, new_tag)
        if digest is not None:
            image += "@" + digest
        elif target.dry_run:
            plan.digest_note = f"the digest of {image} is not known ({why}): the dry run shows the tag alone; " \
                               "a real run needs --digest sha256:... or the registry"
        else:
            raise PlanError(f"{model.name}: cannot pin {image} by digest ({why}); pass --digest sha256:...")
    if ref.registry is not None:
        plan.notes.append(f"{ref.registry} is not the upstream registry: make sure {new_tag} is mirrored there")
    plan.image = image


def _flags(plan: ModelPlan, change) -> None:
    """Removed flags whose successor the catalogs are sure of (``history.rename``: same meaning) become
    renames, as ``cfgcheck fix`` makes them; the others stay listed."""
    for removed in change.removed_flags:
        token = next((t for t in plan.model.argv if t.location == removed.location), None)
        edit = rename_edit(token, removed.written, removed.rename) if token is not None else None
        if edit is not None:
            plan.renames.append((token, removed.written, removed.rename.replacement))
            plan.edits.append(edit)
        else:
            plan.unrewritten.append(removed)


def plan_models(models: list[ServedModel], target: Target, config: dict) -> list[ModelPlan]:
    """One plan per served model of the target engine."""
    plans = []
    for model in models:
        if model.engine != target.engine:
            continue
        plan = ModelPlan(model)
        plans.append(plan)
        _image(plan, target)
        if plan.skipped is not None or not model.engine_version:
            plan.skipped = plan.skipped or "its engine version is not known"
            continue
        if version_key(model.engine_version) > version_key(target.version):
            plan.notes.append(f"this is a downgrade from {model.engine_version}")
        change = between(model, model.engine_version, target.version, config)
        plan.drifts = change.drifts
        plan.notes += change.notes
        _flags(plan, change)
    return plans


def sets(plans: list[ModelPlan]) -> list[str]:
    """The ``--set`` changes propose makes: the images."""
    return [f"{p.model.name}.image={p.image}" for p in plans if p.image is not None]


def flag_edits(plans: list[ModelPlan]) -> dict[str, list[Edit]]:
    """Edits that rename removed flags to their successors, by file."""
    edits: dict[str, list[Edit]] = {}
    for plan in plans:
        for edit in plan.edits:
            edits.setdefault(edit.location.path, []).append(edit)
    return edits


def report(plans: list[ModelPlan], target: Target) -> dict:
    """The plan as data for the PR body and the ADR (values raw: the templates escape them). The
    defaults that drift are not here: the documents group them from the re-lint (``tables.drift_groups``)."""
    return {"target": target.display, "models": [{
        "name": p.model.name, "path": p.model.path, "identity": p.model.identity, "from": p.model.engine_version,
        "skipped": p.skipped, "digest_note": p.digest_note, "notes": p.notes,
        "renamed": [{"from": w, "to": s, "line": t.location.line} for t, w, s in p.renames],
        "unrewritten": [{"flag": r.written, "line": r.location.line} for r in p.unrewritten],
    } for p in plans]}


def render_plan(plans: list[ModelPlan], target: Target, facts: list[str]) -> str:
    """The plan as text (``--dry-run`` prints it before the diff)."""
    lines = [f"upgrade plan: every {DISPLAY.get(target.engine, target.engine)} served model to {target.version}"]
    lines += [f"  {fact}" for fact in facts]
    for p in plans:
        lines.append(f"- {p.model.name} ({p.model.path}), {p.model.engine_version or 'version unknown'}:")
        if p.skipped:
            lines.append(f"    not moved: {p.skipped}")
            continue
        lines.append(f"    image: {p.model.image.value} -> {p.image}")
        lines += [f"    note: {n}" for n in ([p.digest_note] if p.digest_note else []) + p.notes]
        lines += [f"    flag rewritten: {w} -> {s} (line {t.location.line})" for t, w, s in p.renames]
        lines += [f"    flag removed in {target.version}, not rewritten: {r.written} (line {r.location.line})"
                  + (f"; successor {r.successor} is not known to take the same values" if r.successor else "")
                  for r in p.unrewritten]
        lines += [f"    default drift: {d.dest} {show(d.old)} -> {show(d.new)}"
                  + (f" ({d.derived})" if d.derived else "") for d in p.drifts]
    if not any(p.image for p in plans):
        lines.append("nothing to upgrade")
    return "\n".join(lines) + "\n"


def prepare(target: Target, models: list[ServedModel], config: dict, title: str | None,
            why: str | None, out) -> tuple[list[str], str, str]:
    """Plan the upgrade against the served models of the base: the ``--set`` changes, the title and
    the why of the proposal. A dry run prints the plan; nothing to move is a usage error."""
    facts = check_target(target.engine, target.version, target.digest)
    plans = plan_models(models, target, config)
    target.report = report(plans, target)
    if target.dry_run:
        out.write(render_plan(plans, target, facts) + "\n")
    if not any(p.image for p in plans):
        reasons = "; ".join(f"{p.model.name}: {p.skipped}" for p in plans) or \
            f"no served model runs {DISPLAY.get(target.engine, target.engine)}"
        raise PlanError(f"nothing to upgrade to {target.version} ({reasons})")
    title = title or f"Upgrade {target.display.rsplit(' ', 1)[0]} to {target.version.lstrip('vV')}"
    why = why or (f"Move every {DISPLAY.get(target.engine, target.engine)} served model to "
                  f"{target.version.lstrip('vV')} in one change (one restart per served model). The defaults "
                  "that change under settings this configuration leaves unset, and the removed flags that "
                  "could not be rewritten, are listed with the table of changes.")
    return sets(plans), title, why
