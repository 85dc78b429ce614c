"""Container image references: which engine an image runs and which version its tag names."""

from __future__ import annotations

import re
from dataclasses import dataclass

ROLLING_TAGS = {"latest", "nightly", "dev", "main", "master", "edge", "head", "stable", "canary"}
_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+|\.dev\d+)?)(?:[-_+].*)?$")
_ENGINE_HINTS = (
    ("tokenspeed", "tokenspeed"),
    ("sglang", "sglang"),
    ("llama.cpp", "llama.cpp"),
    ("llama-cpp", "llama.cpp"),
    ("llamacpp", "llama.cpp"),
    ("vllm", "vllm"),
)


@dataclass(frozen=True, slots=True)
class ImageRef:
    text: str
    repository: str  # without registry host, e.g. "vllm/vllm-openai"
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        return self.repository.rsplit("/", 1)[-1]

    @property
    def rolling(self) -> bool:
        """True when the tag cannot name a version: a rolling tag, or no tag at all."""
        if self.tag is None:
            return True
        base = self.tag.lower().split("-", 1)[0]
        return base in ROLLING_TAGS or self.tag.lower() in ROLLING_TAGS

    @property
    def version(self) -> str | None:
        if self.tag is None:
            return None
        match = _VERSION.match(self.tag)
        if not match:
            return None
        version = match.group(1)
        return re.sub(r"(?<=\d)post", ".post", version)

    @property
    def engine(self) -> str | None:
        lowered = self.repository.lower()
        for hint, engine in _ENGINE_HINTS:
            if hint in lowered:
                return engine
        return None


def parse_image(text: str) -> ImageRef:
    reference = text.strip()
    digest = None
    if "@" in reference:
        reference, digest = reference.split("@", 1)
    tag = None
    last = reference.rsplit("/", 1)[-1]
    if ":" in last:
        reference, tag = reference.rsplit(":", 1)
    parts = reference.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    return ImageRef(text, "/".join(parts), tag or None, digest or None)
