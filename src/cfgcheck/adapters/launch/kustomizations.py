"""Kustomizations read for the files they name, without rendering them: a resource, base, component, patch
or generator file that does not exist is a reference that leads nowhere (``core/references.py``).

A kustomization's ``images:`` transformer is applied to the served models of the files it includes (its
``resources`` and ``bases``, through the kustomizations that include it in turn: ``settle``), so that a
container's placeholder image (``image: vllm-gaudi``) is checked as the reference kustomize makes of it.

What kustomize fetches (a URL, a remote repository: ``render/kustomize.py`` names the forms) and what
leaves the repository are not the repository's to hold, and are not looked for. A folder named as a
resource or base must hold a kustomization (kustomize api/krusty: a directory is loaded as a kustomization
root). Registered for its index hook only: it owns no document.
"""

from __future__ import annotations

import functools
import itertools
import os
import posixpath
import re
from stat import S_ISDIR, S_ISREG

from ... import lazy
from ...model import Location, ServedModel, Setting
from ...paths import LOOKED, RESOLVED, child, escapes_by_strings, looked, read_beyond
from ...records import Record
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.recognition import set_image
from ..core.references import record

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

MARKERS: tuple[str, ...] = ()  # indexes kustomizations by file name, reads no document as its own
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# What kustomize fetches instead of reading from the repository (kustomize api/internal/git/repospec.go,
# api/loader/fileloader.go): any URL scheme, and the remote-repository forms without one. A scheme is
# matched from the start of its run of scheme characters (the lookbehind): tried from every letter, a
# reference like ``deployment.yaml`` cost a scan to its end from each (thousands of references a run).
REMOTE_FORMS = (r"(?<![A-Za-z0-9+.-])[0-9+.-]*[A-Za-z][A-Za-z0-9+.-]*://|^\s*(?:git::|[\w.-]+@[\w.-]+:|"
                r"(?:github\.com|gitlab\.com|bitbucket\.org|dev\.azure\.com)[/:])")
_REMOTE = lazy.Pattern(REMOTE_FORMS + r"|\?ref=", re.I)
# a word every form of ``REMOTE_FORMS`` holds, as an ASCII text lowered holds it
URL_WORDS = ("://", "git::", "@", "github.com", "gitlab.com", "bitbucket.org", "dev.azure.com")


def may_be_remote(written: str) -> bool:
    """False when ``written`` is certainly no form of ``REMOTE_FORMS`` and holds no ``?ref=``: an ASCII text
    that holds none of ``URL_WORDS`` lowered. Tested before the pattern, which tries each start of a run of
    scheme characters (a GitOps tree's 3,830 references, each searched by the index hook and by the renderer:
    53 M instructions, 0.9% of bench's ``--jobs 1`` run of the tree). Letters beyond ASCII: True (``re.I``
    matches some of them to ASCII ones, the dotless i and the Kelvin sign)."""
    if not written.isascii():
        return True
    lowered = written.lower()
    for word in URL_WORDS:  # a loop, not any() over a generator: seven words, a few characters each
        if word in lowered:
            return True
    return "?ref=" in lowered


_LISTS = ("resources", "bases", "components", "patchesStrategicMerge", "crds")
# a secretGenerator's files are left out: a repository keeps secrets out of Git on purpose (a gitignored .env
# each operator provides), so its missing file is no mistake of the repository
_GENERATORS = ("configMapGenerator",)
# A rendering's served models carry this in their identity (render/kustomize.py): kubectl applied the
# transformers there already.
RENDERED = "#rendered"
_MAX_CHAINS = 64  # the ways up from one file through the kustomizations that include it, followed at most
_FAR = 1 << 16  # the distance of a kustomization on no way up from a file: further than any way is long


class ImageEntry(Record):
    """One entry of a kustomization's ``images:`` and where the reference it makes is written (its
    ``digest``, else ``newTag``, else ``newName`` line)."""

    __slots__ = ("name", "new_name", "new_tag", "digest", "location")

    def __init__(self, name: str, new_name: str | None, new_tag: str | None, digest: str | None,
                 location: Location) -> None:
        self.name = name
        self.new_name = new_name
        self.new_tag = new_tag
        self.digest = digest
        self.location = location


class Kustomized(Record):
    """What a kustomization includes (repository paths of its resources and bases) and its ``images:``."""

    __slots__ = ("includes", "images")

    def __init__(self, includes: tuple[str, ...], images: tuple[ImageEntry, ...]) -> None:
        self.includes = includes
        self.images = images


def kustomized(workspace: Workspace) -> dict[str, Kustomized]:
    """This module's index space: the kustomizations of the run by their folder (repository path)."""
    return workspace.space(f"{__name__}.kustomized", dict)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: record what a kustomization names that is not in the repository."""
    repo = workspace.config.get("root")
    if loaded.path.rpartition("/")[2] not in NAMES or not repo or not loaded.documents:
        return
    document = loaded.documents[0]
    if document.root is None or document.root.kind != "map":
        return
    ctx = DocContext(loaded, document, workspace)
    folder = posixpath.dirname(loaded.path)
    # each reference not fetched, with its repository path (lexical, as the findings name it)
    references = [(at, written, what, folders, posixpath.normpath(posixpath.join(folder, written)))
                  for at, written, what, folders in _references(ctx, document.root)
                  if not (may_be_remote(written) and _REMOTE.search(written))]
    _index_images(ctx, folder, document.root, [rel for _, _, what, _, rel in references if what in ("resource", "base")])
    top = os.path.abspath(str(repo))
    resolved, looks = workspace.space(RESOLVED, dict), workspace.space(LOOKED, dict)
    for at, written, what, folders, rel in references:
        if "$" in written:
            continue
        target = os.path.join(top, rel)
        read_beyond(target)  # whether it is there, for the whole-run cache (cache.py)
        if rel.startswith("../") or rel == ".." or _outside(target, top, resolved, looks):
            continue  # outside the repository: kustomize's load restrictor refuses it, the renderer says so
        mode = looked(target, looks)[1]
        if S_ISREG(mode) or folders and S_ISDIR(mode) and \
                any(S_ISREG(looked(child(target, name), looks)[1]) for name in NAMES):
            continue
        said = f"looked for {rel}" + (" (a folder with a kustomization)" if folders and S_ISDIR(mode) else "")
        record(workspace, at(), f"{what} '{written}'", said,
               f"add {rel}, or remove it from {posixpath.basename(loaded.path)}")


def _outside(target: str, repo: str, resolved: dict[str, str | None], looks: dict[str, tuple[int, int]]) -> bool:
    """Whether ``target`` (absolute, normalised) is outside the repository ``repo``: through a link of the
    nearest part of it that exists (a path that does not exist does not resolve; a folder linked out of
    the repository is not its own). ``resolved``, ``looks``: the run's paths resolved and looked at so far."""
    existing = os.path.normpath(target)  # "." joined to the repository is the repository
    while not looked(existing, looks)[0]:
        parent = os.path.dirname(existing)
        if parent == existing:
            existing = repo
            break
        existing = parent
    return escapes_by_strings(existing, repo, resolved, looks)


def _references(ctx: DocContext, root: YNode) -> list[tuple[Callable[[], Location], str, str, bool]]:
    """(where it is written, the path, what it is, whether a folder may be named) of every file a
    kustomization names; where it is written is worked out when a reference leads nowhere (a few of
    thousands)."""
    found: list[tuple[Callable[[], Location], str, str, bool]] = []
    for key in _LISTS:
        node = root.get(key)
        for item in node.value if node is not None and node.kind == "seq" else []:
            if item.kind == "scalar" and isinstance(item.value, str):
                found.append((functools.partial(ctx.location, item), item.value, _singular(key),
                              key in ("resources", "bases", "components")))
    for key in ("patches", "patchesJson6902"):
        node = root.get(key)
        for item in node.value if node is not None and node.kind == "seq" else []:
            path = item.get("path") if item.kind == "map" else None
            if path is not None and path.kind == "scalar" and isinstance(path.value, str):
                found.append((functools.partial(ctx.location, path), path.value, "patch", False))
    for key in _GENERATORS:
        node = root.get(key)
        for generator in node.value if node is not None and node.kind == "seq" else []:
            for field in ("files", "envs"):
                entries = generator.get(field) if generator.kind == "map" else None
                for item in entries.value if entries is not None and entries.kind == "seq" else []:
                    if item.kind == "scalar" and isinstance(item.value, str):
                        at, written = _source_of(ctx, item)
                        found.append((lambda at=at: at, written, f"{key} file", False))
    return found


def _singular(key: str) -> str:
    return {"resources": "resource", "bases": "base", "components": "component",
            "patchesStrategicMerge": "patch", "crds": "CRD file"}[key]


def _source_of(ctx: DocContext, item: YNode) -> tuple[Location, str]:
    """A generator's ``KEY=PATH`` entry names the file PATH (kustomize api/kv/kv.go ParseFileSource)."""
    at = ctx.location(item)
    key, sep, path = str(item.value).partition("=")
    if not sep or at.end_line != at.line:
        return at, str(item.value)
    return Location(at.path, at.line, at.column + len(key) + 1, at.line, at.end_column), path


def _index_images(ctx: DocContext, folder: str, root: YNode, includes: list[str]) -> None:
    """Record what the kustomization in ``folder`` includes (``includes``: the repository paths of its
    resources and bases, none fetched) and its ``images:`` entries."""
    entries = []
    node = root.get("images")
    for item in node.value if node is not None and node.kind == "seq" else []:
        name = item.scalar("name") if item.kind == "map" else None
        if not isinstance(name, str) or not name:
            continue
        values = {key: item.get(key) for key in ("digest", "newTag", "newName")}
        values = {key: value for key, value in values.items() if value is not None and value.kind == "scalar"
                  and value.value not in (None, "")}
        if values:
            at = ctx.location(next(iter(values.values())))
            # as kustomize reads them, strings: an unquoted tag 1.20 is "1.20", not the number 1.2
            written = {key: value.value if isinstance(value.value, str) else ctx.source(value).strip()
                       for key, value in values.items()}
            entries.append(ImageEntry(name, written.get("newName"), written.get("newTag"), written.get("digest"), at))
    kustomized(ctx.workspace)[posixpath.normpath(folder or ".")] = Kustomized(tuple(includes), tuple(entries))


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every file is read: the image of a served model of a file that kustomizations
    include, as their ``images:`` transform it (``_transform_images``); then one served model for each
    container that several kustomizations render alike (``_one_of_alike``)."""
    found = kustomized(workspace)
    parents: dict[str, list[str]] = {}
    for folder, entry in found.items():
        for included in entry.includes:
            parents.setdefault(included, []).append(folder)
    chains = {path: _chains(path, parents) for path in {model.path for model in models} if path in parents}
    if any(entry.images for entry in found.values()):
        _transform_images(found, chains, models)
    if any(RENDERED in model.identity for model in models):
        _one_of_alike(chains, models)


def _transform_images(found: dict[str, Kustomized], chains: dict[str, list[tuple[str, ...]]],
                      models: list[ServedModel]) -> None:
    """The image of each served model of a file the kustomizations include, as the ``images:`` of each
    way up from it transform it; where the ways transform it differently (overlays that each set a tag),
    as far as they all transform it alike."""
    for model in models:
        image, ways = model.image, chains.get(model.path)
        if image is None or not isinstance(image.value, str) or RENDERED in model.identity or not ways:
            continue
        made = [_transformed(image, [found[folder] for folder in way]) for way in ways]
        if len({reference.value for reference in made}) > 1:
            made = [_transformed(image, [found[folder] for folder in _shared(ways)])]
        reference = made[0]
        if reference is not image:
            stated = (model.engine_version, model.engine_version_confidence, model.engine_version_why)
            set_image(None, model, reference)
            if model.directive("engine-version") is not None:  # a directive states the version whatever the image
                model.engine_version, model.engine_version_confidence, model.engine_version_why = stated


def _shared(ways: list[tuple[str, ...]]) -> list[str]:
    """The kustomizations every way up passes through first, innermost first."""
    return [step[0] for step in itertools.takewhile(lambda step: len(set(step)) == 1, zip(*ways))]


def _one_of_alike(chains: dict[str, list[tuple[str, ...]]], models: list[ServedModel]) -> None:
    """Leave out of ``models`` what another served model of the same container stands for: the file's own
    served model when a kustomization every way up from the file passes through rendered it (the file is
    deployed only as that rendering), and a rendering alike, in every value and place the rules read, to
    the file's own served model or to a rendering by a kustomization nearer the file (a base rendered
    through its parent and through overlays that change nothing of it is one served model; an overlay
    that sets another value stays its own)."""
    rendered: dict[tuple, list[ServedModel]] = {}
    for model in models:
        if RENDERED in model.identity:
            rendered.setdefault(_place(model), []).append(model)
    left_out: set[int] = set()
    for model in models:
        if RENDERED in model.identity:
            continue
        shared = set(_shared(chains.get(model.path, [])))
        if any(_rendered_by(other) in shared for other in rendered.get(_place(model), [])):
            left_out.add(id(model))
        else:
            rendered.setdefault(_place(model), []).insert(0, model)  # the file's own first: it stands for the alike
    for place, alike in rendered.items():
        ways = chains.get(place[0], [])
        nearest = sorted(alike, key=lambda m: (RENDERED in m.identity, _distance(_rendered_by(m), ways)))
        kinds: set[str] = set()
        for model in nearest:
            kind = _alike(model)
            if kind in kinds:
                left_out.add(id(model))
            kinds.add(kind)
    models[:] = [model for model in models if id(model) not in left_out]


def _rendered_by(model: ServedModel) -> str | None:
    """The folder of the kustomization whose rendering ``model`` is; None for a file's own served model."""
    written, _, rest = model.identity.partition("#")
    return posixpath.normpath(posixpath.dirname(written) or ".") if rest.startswith(RENDERED[1:]) else None


def _distance(folder: str | None, ways: list[tuple[str, ...]]) -> int:
    """How many kustomizations up from the file ``folder`` is, at the nearest (far when on no way up)."""
    return min((way.index(folder) for way in ways if folder in way), default=_FAR)


def _place(model: ServedModel) -> tuple:
    return model.path, model.location.line, model.location.column, model.name


def _alike(model: ServedModel) -> str:
    """What the rules read of a served model, with where each value is written (its identity, name and
    the namespace an overlay gives its pod left out)."""
    def written(settings: dict[str, Setting]) -> list[tuple]:
        return sorted((name, repr(setting.value), setting.location) for name, setting in settings.items())

    def one(setting: Setting | None) -> tuple | None:
        return None if setting is None else (repr(setting.value), setting.location)

    placement = model.placement
    facts: list = [model.engine, model.engine_version, model.engine_variant, one(model.image), one(model.model),
                   one(model.model_revision), one(model.gpus), one(model.replicas), written(model.settings),
                   written(model.env), [token.text for token in model.argv], sorted(model.node_selector.items()),
                   model.gpu_product, model.gpu_resource, model.gpu_memory_bytes,
                   None if placement is None else (placement.terms, placement.tolerations, placement.node)]
    pod = model.pod
    if pod is not None:
        facts += [sorted((v.name, v.type, v.medium, v.size, v.location) for v in pod.volumes.values()),
                  sorted((m.path, m.volume, m.location) for m in pod.mounts),
                  sorted((kind, p.handler, p.path, p.port, p.initial_delay, p.period, p.timeout, p.failure_threshold,
                          p.location) for kind, p in pod.probes.items()),
                  written(pod.requests), written(pod.limits), pod.shm, pod.memory_limit, pod.ephemeral_storage]
    return repr(facts)


def _chains(path: str, parents: dict[str, list[str]]) -> list[tuple[str, ...]]:
    """The ways up from ``path`` through the kustomizations that include it, each innermost first, to one
    that nothing includes (at most ``_MAX_CHAINS``; a kustomization met twice ends its way)."""
    chains: list[tuple[str, ...]] = []
    stack: list[tuple[str, tuple[str, ...]]] = [(path, ())]
    while stack and len(chains) < _MAX_CHAINS:
        current, chain = stack.pop()
        above = [folder for folder in parents.get(current, []) if folder not in chain]
        if not above and chain:
            chains.append(chain)
        stack.extend((folder, chain + (folder,)) for folder in reversed(above))
    return chains


def _transformed(image: Setting, through: list[Kustomized]) -> Setting:
    """``image`` as the ``images:`` of ``through`` transform it in turn (kustomize api/filters/imagetag:
    an entry matches the image's name, without its tag and digest; ``newName`` replaces the name, and a
    ``newTag`` or ``digest`` both the tag and the digest); ``image`` itself when none matches."""
    for entry in (entry for step in through for entry in step.images):
        name, tag, digest = _split(str(image.value))
        if name != entry.name:
            continue
        name = entry.new_name or name
        if entry.new_tag or entry.digest:
            tag, digest = entry.new_tag, entry.digest
        value = name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")
        image = Setting("image", value, entry.location, f"{image.source} (kustomize images: {entry.name})",
                        image.comments, image.key_location, None, image.origin)
    return image


def _split(reference: str) -> tuple[str, str | None, str | None]:
    """(name, tag, digest) of an image reference, as kustomize splits it (api/image/image.go Split)."""
    name, _, digest = reference.partition("@")
    last = name.rpartition("/")[2]
    if ":" in last:
        name, _, tag = name.rpartition(":")
        return name, tag, digest or None
    return name, None, digest or None
