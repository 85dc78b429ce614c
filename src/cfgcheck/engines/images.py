"""Container image references: which engine an image runs, which version its tag names, how sure that is.

``parse_image`` splits a reference the way the OCI distribution spec does (registry, repository, tag,
digest). ``image_engine`` then looks the repository up in ``data/images.json`` (known repositories
with their sources) and says which engine and variant runs, and the engine version with a
**confidence**: ``exact`` (an upstream image's version tag), ``assumed`` (a rolling tag, a mirror, a
vendor build that tracks a release) or ``unknown`` (a local build, an unknown repository).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import namedtuple

from ..data import read_json
from ..records import Record
from .. import lazy

ROLLING_TAGS = {"latest", "nightly", "dev", "main", "master", "edge", "head", "stable", "canary"}
# 0.9.0.1, 0.5.5.post3, 0.10.1rc1, 0.11.0.dev2 followed by a build suffix (-cu129, -rocm630, _amd64)
_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+|rc\d+|\.dev\d+)?)(?:[-_+].*)?$")
# a commit id, abbreviated (7+) or whole; a letter among the digits tells it from a date stamp
_COMMIT = lazy.Pattern(r"(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}")
_DOCKER_HUB = {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}
_ENGINE_HINTS = (
    ("tokenspeed", "tokenspeed"),
    ("sglang", "sglang"),
    ("llama.cpp", "llama.cpp"),
    ("llama-cpp", "llama.cpp"),
    ("llamacpp", "llama.cpp"),
    ("vllm", "vllm"),
)
EXACT, ASSUMED, UNKNOWN = "exact", "assumed", "unknown"
# words of an image name that make it an application beside an engine, not the engine
_NOT_ENGINE = frozenset(("client", "ui", "webui", "frontend", "proxy", "router", "gateway", "bench", "benchmark"))


class ImageRef(namedtuple("ImageRef", ("text", "repository", "tag", "digest", "registry"), defaults=(None,))):
    """A container image reference split into its parts (a named tuple: compared and hashed by value, it is
    the key of image_engine's cache, and costs a fifth of a frozen dataclass to create)."""

    __slots__ = ()
    text: str  # the fields' types, for type checkers (a value here would hide the field)
    repository: str  # without registry host, e.g. "vllm/vllm-openai"
    tag: str | None
    digest: str | None
    registry: str | None  # "ghcr.io", "localhost:5000"; None (the default) for Docker Hub

    @property
    def name(self) -> str:
        return self.repository.rsplit("/", 1)[-1]

    @property
    def full(self) -> str:
        """registry/repository, as ``data/images.json`` matches it (Docker Hub without a host)."""
        return f"{self.registry}/{self.repository}" if self.registry else self.repository

    @property
    def templated(self) -> bool:
        """A reference still holding a variable, a template or a placeholder (``${IMAGE}``,
        ``{{ .Values.image }}``, ``<your-image>``): not a value yet."""
        return placeholder(self.text)

    @property
    def local(self) -> bool:
        """Built where it runs: a ``localhost`` registry, or a bare name without a namespace
        (``team-sglang:v1.2.2``) that no engine publishes as a Docker official image."""
        if self.registry is not None:
            return self.registry.split(":", 1)[0] in ("localhost", "127.0.0.1")
        return "/" not in self.repository and not self.templated

    @property
    def rolling(self) -> bool:
        """True when the tag cannot name a build: a rolling tag, a variant alias of a repository whose
        builds carry a number (``data/images.json`` ``build_tag``), or no tag at all. A rolling word
        followed by a commit (``nightly-<sha>``: vLLM publishes one such tag per commit) names one build."""
        if self.tag is None:
            return True
        tag = self.tag.lower()
        entry = known_image(self)
        if entry is not None and entry.get("build_tag"):
            return not re.search(entry["build_tag"], tag)
        base, _, rest = tag.partition("-")
        if base in ROLLING_TAGS and _COMMIT.fullmatch(rest):
            return False
        return base in ROLLING_TAGS or tag in ROLLING_TAGS

    @property
    def commit_build(self) -> bool:
        """A rolling word pinned to one commit (``nightly-<sha>``): a build, but no release version."""
        base, _, rest = (self.tag or "").lower().partition("-")
        return base in ROLLING_TAGS and bool(_COMMIT.fullmatch(rest))

    @property
    def version(self) -> str | None:
        """The version the tag names, read generically (a known repository may say otherwise)."""
        return _tag_version(self.tag)

    @property
    def engine(self) -> str | None:
        return image_engine(self).engine


# What samples write where the user must put a value: a variable or template (shell, kubelet, Helm/Go,
# Jinja), an <angle-bracketed> name, YOUR_..., REPLACE_ME / CHANGE_ME, ..._HERE.
_PLACEHOLDER = lazy.Pattern(r"\$[({A-Za-z_]|\{\{|\{%|<[^<>\n]*>|(?:^|[^A-Za-z0-9])your[-_]|"
                            r"(?:replace|change)[-_]?me(?![A-Za-z])|[-_]here(?![A-Za-z0-9])", re.I)


# Each branch of _PLACEHOLDER holds one of these: a sign as written, a word in the lower-cased text (under
# IGNORECASE their letters match only their own two cases, unlike i, k and s)
_PLACEHOLDER_SIGNS, _PLACEHOLDER_WORDS = ("$", "{", "<"), ("your", "replace", "change", "here")


def placeholder(text: str) -> bool:
    """True when ``text`` still holds a variable, a template or a placeholder instead of a value."""
    if not any(sign in text for sign in _PLACEHOLDER_SIGNS):
        low = text.lower()
        if not any(word in low for word in _PLACEHOLDER_WORDS):
            return False  # most values: the case-blind search costs several times these tests
    return bool(_PLACEHOLDER.search(text))


# A path whose leading folder is a variable or the home folder and whose last component is written
# (``$HOME/models/NAME``, ``${PROJECT_ROOT}/models/NAME``, ``~/models/NAME``): the folder the engine
# loads is named, as ``/root/models/NAME`` names it, wherever the variable points
_FOLDER_UNDER_VARIABLE = lazy.Pattern(r"(?:\$\{?[A-Za-z_]\w*\}?|~)(?:/\S*)?/([^/$`{}<>\s]+)/?")


def folder_under_variable(text: str) -> bool:
    """Whether ``text`` is a local path whose only unknown is the folder it sits under (its last
    component written, and no placeholder)."""
    match = _FOLDER_UNDER_VARIABLE.fullmatch(text)
    return match is not None and not placeholder(match.group(1))


def _tag_version(tag: str | None) -> str | None:
    if tag is None:
        return None
    match = _VERSION.match(tag)
    if not match:
        return None
    return re.sub(r"(?<=\d)post", ".post", match.group(1))


def parse_image(text: str) -> ImageRef:
    """Split ``[registry/]repository[:tag][@digest]``; the registry is the first component when it has
    a dot or a port or is ``localhost`` (the Docker reference grammar)."""
    return _parsed_image(text) if text.__class__ is str else _parse_image(text)


# Adapters and rules split each served model's image several times (12,500 splits of 2,100 images on
# the dense corpus); an ImageRef is immutable, so one is shared. 4,096 images is more than a repository names.
@functools.lru_cache(maxsize=4096)
def _parsed_image(text: str) -> ImageRef:
    return _parse_image(text)


def _parse_image(text: str) -> ImageRef:
    reference = text.strip()
    digest = None
    if "@" in reference:
        reference, digest = reference.split("@", 1)
    tag = None
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        reference, tag = reference.rsplit(":", 1)
    parts = reference.split("/")
    registry = None
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        registry, parts = parts[0].lower(), parts[1:]
        if registry in _DOCKER_HUB:
            registry = None
    if registry is None and len(parts) == 2 and parts[0] == "library":
        parts = parts[1:]
    return ImageRef(text, "/".join(parts), tag or None, digest or None, registry)


# unlike ImageRef (a cache key), compared by identity: a record with slots (records.Record)
class ImageEngine(Record):
    """What an image runs: the engine (None: not an engine, or not known), the variant build, the
    engine version its tag names, how sure that version is, and why."""

    __slots__ = ("engine", "variant", "version", "confidence", "why", "known")

    def __init__(self, engine: str | None, variant: str | None, version: str | None, confidence: str, why: str,
                 known: bool) -> None:
        self.engine = engine
        self.variant = variant
        self.version = version
        self.confidence = confidence
        self.why = why
        self.known = known  # the repository is in data/images.json (or a mirror of one)


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    return read_json("images.json")


def _entry(ref: ImageRef) -> tuple[dict | None, bool]:
    """The known-image entry for ``ref`` and whether it was found as a mirror of an upstream image."""
    return _repository_entry(ref.full.lower(), ref.name.lower(), ref.registry is not None)


# The entry follows from the repository alone, and one repository is served with many tags: each is
# matched against the table once. 4,096 repositories is more than a repository names.
@functools.lru_cache(maxsize=4096)
def _repository_entry(full: str, name: str, registry: bool) -> tuple[dict | None, bool]:
    for entry in _table()["images"]:
        patterns = entry["match"] if isinstance(entry["match"], list) else [entry["match"]]
        if any(pattern_matches(full, pattern) for pattern in patterns):
            return entry, False
    upstream = _table()["mirrors"]["names"].get(name)
    if upstream and registry:
        for entry in _table()["images"]:
            if entry["match"] == upstream:
                return entry, True
    return None, False


def known_image(ref: ImageRef) -> dict | None:
    """The ``data/images.json`` entry of ``ref``'s repository (or of the upstream image it mirrors)."""
    return _entry(ref)[0]


_WILDCARDS = "*?["


def pattern_matches(full: str, pattern: str) -> bool:
    """``fnmatch`` of a table pattern; most are a plain repository, compared as a string rather than
    through a regex compiled for each row of the table. A pattern with wildcards is compiled only when
    ``full`` starts with the literal text before its first wildcard and ends with the literal text after
    its last wildcard or bracket (``rocm/vllm*``, ``*/lmcache/vllm-openai``): fnmatch matches those
    characters one for one, so any other name fails it anyway, and one lookup compiled most of them
    (a fifth of the work of a one-file lint after its imports)."""
    first = min((i for i in map(pattern.find, _WILDCARDS) if i >= 0), default=-1)
    if first < 0:
        return full == pattern
    last = max(pattern.rfind(special) for special in "*?[]")
    if not (full.startswith(pattern[:first]) and full.endswith(pattern[last + 1:])):
        return False
    return fnmatch.fnmatchcase(full, pattern)


@functools.lru_cache(maxsize=4096)
def image_engine(ref: ImageRef) -> ImageEngine:
    """Engine, variant and version of an image, with the confidence of that version."""
    if ref.templated:
        return ImageEngine(_hint(ref), None, None, UNKNOWN, f"image '{ref.text}' is not expanded", False)
    entry, mirror = _entry(ref)
    if entry is None:
        why = f"'{ref.full}' is a local build" if ref.local else f"'{ref.full}' is not a known engine image"
        return ImageEngine(_hint(ref), None, None, UNKNOWN, why, False)
    engine, variant = entry["engine"], entry["variant"]
    if engine is None:
        return ImageEngine(None, variant, None, UNKNOWN, entry["why"], True)
    if variant is None and ref.tag:
        variant = _tag_variant(ref.tag)
    return _entry_version(ref, entry, engine, variant, mirror)


def _entry_version(ref: ImageRef, entry: dict, engine: str, variant: str | None, mirror: bool) -> ImageEngine:
    how = entry["version"]
    if how == "vendor":
        shipped = vendor_release(entry.get("releases"), ref.tag)
        if shipped is not None:
            return ImageEngine(engine, variant, shipped[0], ASSUMED, shipped[1], True)
        return ImageEngine(engine, variant, None, UNKNOWN, f"{entry['why']} ('{ref.tag or 'no tag'}')", True)
    if how == "embedded":
        match = re.search(entry["pattern"], ref.tag or "")
        version = match.group(1) if match else None
    else:
        version = _tag_version(ref.tag)
    if version is None:
        if ref.rolling or ref.commit_build or how == "embedded" or not ref.tag:
            pinned = f" pinned by digest {ref.digest[:19]}…" if ref.digest else ""
            what = f"tag '{ref.tag}'" if ref.tag else "no tag"
            return ImageEngine(engine, variant, None, ASSUMED, f"image {what}{pinned} gives no version", True)
        return ImageEngine(engine, variant, None, UNKNOWN, f"image tag '{ref.tag}' names no version", True)
    if mirror:
        return ImageEngine(engine, variant, version, ASSUMED, f"'{ref.full}' is taken as a mirror of {entry['match']}", True)
    if not entry.get("exact"):
        why = entry.get("why") or f"{ref.full} is a vendor build"
        return ImageEngine(engine, variant, version, ASSUMED, f"{why}; its tag {ref.tag} is read as the version", True)
    return ImageEngine(engine, variant, version, EXACT, f"image tag {ref.tag}", True)


@functools.lru_cache(maxsize=None)
def _vendor_table() -> dict:
    return read_json("vendor_releases.json")


def vendor_release(vendor: str | None, tag: str | None) -> tuple[str, str] | None:
    """(engine version, why) of a vendor release tag by ``data/vendor_releases.json`` (the vendor's own
    documents): the release itself, else its major.minor line, else the one engine version every listed
    patch release of that line ships; None when the documents name none."""
    match = re.match(r"v?(\d+)\.(\d+)((?:\.\d+)?)(?:[-_+.].*)?$", tag or "")
    if vendor is None or match is None:
        return None
    table = _vendor_table()[vendor]
    releases, name = table["releases"], table["name"]
    line, release = f"{match.group(1)}.{match.group(2)}", f"{match.group(1)}.{match.group(2)}{match.group(3)}"
    if release in releases or line in releases:
        named = release if release in releases else line
        return releases[named], f"{name} {named} ships it, by the vendor's release notes"
    patches = {v for k, v in releases.items() if k.startswith(line + ".")}
    if len(patches) != 1:
        return None
    sibling = next(k for k in releases if k.startswith(line + "."))
    shipped = patches.pop()
    return shipped, f"{name} {release} is taken as {sibling}, which ships it by the vendor's release notes"


def _tag_variant(tag: str) -> str | None:
    variants = {k: v for k, v in _table()["tag_variants"].items() if k != "about"}
    for part in re.split(r"[-_]", tag.lower())[1:]:
        for prefix, variant in variants.items():
            if part.startswith(prefix):
                return variant
    return None


def application_image(ref: ImageRef) -> bool:
    """Whether an image's name makes it an application beside an engine (a client, a UI, a proxy or
    router, a benchmark: ``vllm-client``, ``vllm-router``): it names the engine it talks to."""
    return bool(_NOT_ENGINE.intersection(re.split(r"[-_./]", ref.repository.lower())))


def _hint(ref: ImageRef) -> str | None:
    """The engine an unknown image's name suggests; none for an application beside one."""
    if application_image(ref):
        return None
    lowered = ref.repository.lower()
    for hint, engine in _ENGINE_HINTS:
        if hint in lowered:
            return engine
    return None
