"""The engine version a build or a host environment pins where no image tag names one.

- An image build: ``RUN pip install vllm==0.11.2`` (also ``pip3``, ``python3 -m pip``, ``uv pip install
  "vllm==X"``, ``sglang[all]==X``, ``vllm==${VLLM_VERSION}`` with the ``ARG`` default) in the stage the
  image ends with or a stage it is built ``FROM``. The last such install wins, as it does in the image:
  it replaces whatever the base image shipped. Exact: the version is what pip installs.
- A host script: the engine executable (or its Python) in an environment directory whose name carries
  a version (``~/miniconda3/envs/vllm-0.10.1/bin/vllm``, ``venvs/vllm_0.8.5/bin/python``). Assumed: a
  directory name says what was meant to be installed, not what is.
"""

from __future__ import annotations

import re

from ... import lazy
from ...engines.images import ASSUMED, EXACT

ENGINES = ("vllm", "sglang")
# Compiled on first use: only a Dockerfile's RUN lines and a host script's launcher are read with them, and
# every served Kubernetes file imports this module (pod_specs applies a built image's pin).
# a requirement pinned with ==, in or out of quotes: vllm==0.11.2, "sglang[all]==0.4.6.post1", vllm==${V}
_PINNED = lazy.Pattern(r"(?<![\w.-])(vllm|sglang)(?:\[[^\]\s]{0,100}\])?[ \t]*==[ \t]*"
                       r"([0-9][\w.+-]{0,40}|\$\{?[A-Za-z_]\w{0,60}\}?)")
_INSTALLER = lazy.Pattern(r"\bpip3?[ \t]+install\b")  # pip, pip3, python3 -m pip, uv pip
_COMMAND_BREAK = lazy.Pattern(r"&&|\|\||;|(?<!\\)\n")  # a continued line is the same command
_VARIABLE = lazy.Pattern(r"\$\{?([A-Za-z_]\w*)\}?")
# an environment directory named for the engine and a version, then bin/: conda envs, venvs, pyenv
_ENVIRONMENT = lazy.Pattern(r"(?:^|/)((?:[\w.]*[-_.])?(vllm|sglang)[-_]v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+|rc\d+)?))"
                            r"/bin/[\w.-]+$")


class Pin:
    __slots__ = ("engine", "version", "confidence", "why")

    def __init__(self, engine: str, version: str, confidence: str, why: str) -> None:
        self.engine, self.version, self.confidence, self.why = engine, version, confidence, why


def installed(commands: list[tuple[str, int]], variables: dict[str, str | None]) -> Pin | None:
    """The engine the last ``pip install ENGINE==X`` of ``commands`` (each a RUN's text and its line)
    installs; a version from a variable takes its value in ``variables`` (ARG and ENV defaults)."""
    found = None
    for text, line in commands:
        breaks = [0] + [match.end() for match in _COMMAND_BREAK.finditer(text)] + [len(text)]
        for match in _PINNED.finditer(text):
            start = max(at for at in breaks if at <= match.start())
            end = min(at for at in breaks if at >= match.end())
            if _INSTALLER.search(text, start, end) is None:
                continue
            engine, version = match.group(1), match.group(2)
            if version.startswith("$"):
                version = variables.get(_VARIABLE.match(version).group(1)) or ""
            if re.fullmatch(r"[0-9][\w.+-]*", version):
                at = line + text.count("\n", 0, match.start())
                found = Pin(engine, version.lstrip("vV"), EXACT,
                            f"the image's build installs {engine}=={version} (Dockerfile line {at})")
    return found


def environment_pin(paths: list[str]) -> Pin | None:
    """The version an environment directory's name gives the engine started from it, among the
    launcher words ``paths`` (the executable, or the Python that runs ``-m vllm...``)."""
    for path in paths:
        match = _ENVIRONMENT.search(path)
        if match is not None:
            return Pin(match.group(2), match.group(3), ASSUMED,
                       f"the environment directory '{match.group(1)}' the executable runs from names it")
    return None


def apply(model, pin: Pin | None) -> None:
    """Give ``model`` the pinned version when the pin is of the engine it runs."""
    if pin is not None and pin.engine == model.engine:
        model.engine_version, model.engine_variant = pin.version, None
        model.engine_version_confidence, model.engine_version_why = pin.confidence, pin.why
