"""One engine start found in shell words (a script's ``docker run``, a Dockerfile's ``RUN``): the record the
script and Containerfile adapters build and read."""

from __future__ import annotations

from ...model import ArgToken, Download
from ...records import ValueRecord


class Launched(ValueRecord):
    """One engine start found in shell words: its argv (with the image's entrypoint) and container facts."""

    __slots__ = ("tokens", "image", "gpus", "env", "own_entrypoint", "command", "downloads", "container", "exec_into")

    def __init__(self, tokens: list[ArgToken], image: ArgToken | None = None, gpus: ArgToken | None = None,
                 env: dict[str, ArgToken] | None = None, own_entrypoint: bool = False, command: ArgToken | None = None,
                 downloads: list[Download] | None = None, container: str | None = None, exec_into: bool = False) -> None:
        self.tokens = tokens
        self.image = image
        self.gpus = gpus
        self.env = {} if env is None else env
        self.own_entrypoint = own_entrypoint  # --entrypoint replaced (or cleared) the image's
        self.command = command  # the first word of the command (``docker`` of ``docker run``)
        self.downloads = [] if downloads is None else downloads  # what the script downloads before it
        self.container = container  # docker run --name: a later ``docker exec NAME`` runs in this container
        self.exec_into = exec_into  # a later ``docker exec`` of the script starts the engine in this container

    @property
    def first(self) -> ArgToken | None:
        """Where the engine start is written: the command's first word, else the image (its value may be
        assigned far above, ``IMAGE=...``), else the argv's first word."""
        return self.command or self.image or (self.tokens[0] if self.tokens else None)
