"""Downloads that fill a model folder before the engine starts, read from a container's commands.

The hub's command line (``huggingface-cli download`` and its successor ``hf download``, both
``REPO [FILES...] --revision R --local-dir D``: huggingface_hub ``commands/download.py``), a ``git
clone`` of a hub repository (a later ``git checkout <sha>`` pins it) and file URLs fetched with curl,
wget or aria2c (``https://huggingface.co/ORG/NAME/resolve/REV/FILE``, the hub's file URL scheme). Each is
a :class:`~cfgcheck.model.Download`: which repository, at which revision, written where. A served model
whose model is a local path takes the repository a download writes there as the model it serves
(``model_named``, by ``core.recognition.finish``), so capacity and the model rules can speak; the pinning
rule reads the revisions.
"""

from __future__ import annotations

import posixpath
import re

from ... import lazy
from ...model import ArgToken, Download, Mount
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import HUB_URL
from .env_argv import container_env, splice
from .pods import read_mounts
from .shell import SHELL_C, SHELLS, argv_tokens, shell_commands

_REPO = lazy.Pattern(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SHA = lazy.Pattern(r"^[0-9a-f]{40}$")
_TOOLS = re.compile(r"\b(?:download|clone|curl|wget|aria2c)\b")
# options of `hf download` / `huggingface-cli download` that take a value (huggingface_hub commands/download.py)
_HUB_VALUED = {"--revision", "--local-dir", "--cache-dir", "--include", "--exclude", "--repo-type", "--token",
               "--max-workers", "--local-dir-use-symlinks", "--type"}


def pod_downloads(ctx: DocContext, pod_spec: YNode, engine: YNode | None = None) -> list[Download]:
    """The downloads of a pod's init containers, and those the engine container's own script runs before
    the engine (``sh -c "hf download ORG/NAME --local-dir /models; vllm serve /models"``), each with the
    pod volume its target is on."""
    found: list[Download] = []
    inits = pod_spec.get("initContainers")
    for container in inits.value if inits is not None and inits.kind == "seq" else []:
        if container.kind == "map":
            name = container.scalar("name")
            found.extend(container_downloads(ctx, container, f"init container '{name}'"))
    if engine is not None and _may_download(engine):
        found.extend(container_downloads(ctx, engine, f"container '{engine.scalar('name')}' before the engine"))
    return found


def _may_download(container: YNode) -> bool:
    """Whether a word of the container's command names a download tool (most engine commands do not:
    their words are not split into commands at all)."""
    for key in ("command", "args"):
        node = container.get(key)
        for child in node.value if node is not None and node.kind == "seq" else [node] if node is not None else []:
            if child.kind == "scalar" and isinstance(child.value, str) and _TOOLS.search(child.value):
                return True
    return False


def container_downloads(ctx: DocContext, container: YNode, where: str) -> list[Download]:
    found = command_downloads(_commands(ctx, container), str(container.scalar("workingDir") or "") or None, where)
    mounts = read_mounts(ctx, container.get("volumeMounts"))
    for download in found:
        download.volume = _on_volume(mounts, download.target)
    return found


def command_downloads(commands: list[list[ArgToken]], cwd: str | None, where: str) -> list[Download]:
    """The downloads of a script's commands, in order; ``cd`` moves the folder relative targets are in
    (``cwd`` ``""``: the folder the script runs in, a relative target kept as written; None: unknown)."""
    found: list[Download] = []
    for words in commands:
        words = _run_by(words)
        texts = [w.text for w in words]
        head = texts[0].rsplit("/", 1)[-1] if texts else ""
        if head == "cd" and len(texts) > 1:
            cwd = _absolute(cwd, texts[1])
        elif head in ("huggingface-cli", "hf") and texts[1:2] == ["download"]:
            found.extend(_hub_cli(words[2:], cwd, f"{head} download in {where}"))
        elif head == "git" and "clone" in texts:
            found.extend(_git_clone(words, cwd, where))
        elif head == "git" and _checkout(texts) and found and found[-1].how.startswith("git clone"):
            found[-1].revision = _checkout(texts)
        elif head in ("curl", "wget", "aria2c"):
            found.extend(_fetch(head, words, cwd, where))
    return found


# what runs a command in a project's environment (``uv run hf download ...``) or detached from the shell
_ENVIRONMENT_RUNNERS = {"uv": "run", "poetry": "run", "pdm": "run", "pipenv": "run", "pixi": "run"}
_PREFIXES = ("nohup", "exec", "time", "sudo")


def _run_by(words: list[ArgToken]) -> list[ArgToken]:
    """The command ``words`` run (``uv run CMD``, ``nohup CMD``: CMD)."""
    while words:
        head = words[0].text
        if head in _PREFIXES:
            words = words[1:]
        elif _ENVIRONMENT_RUNNERS.get(head) is not None and len(words) > 1 and words[1].text == _ENVIRONMENT_RUNNERS[head]:
            words = words[2:]
        else:
            return words
    return words


def _commands(ctx: DocContext, container: YNode) -> list[list[ArgToken]]:
    """A container's commands: each command of a ``sh -c`` script, its variables taken from the
    container's own ``env`` as the engine container's are (``hf download "${REPO}"``), else its one argv."""
    joined = argv_tokens(ctx, container.get("command"), "command") + argv_tokens(ctx, container.get("args"), "args")
    texts = [t.text for t in joined]
    if texts and texts[0] in SHELLS:
        flag = next((i for i, text in enumerate(texts[1:3], 1) if SHELL_C.match(text)), None)
        if flag is not None and flag + 1 < len(joined):
            node = _scalar_of(container, joined[flag + 1])
            if node is not None:
                commands = shell_commands(ctx, node, "shell")
                if any("$" in token.text for command in commands for token in command):
                    values = container_env(ctx, container)
                    commands = [splice(command, values) for command in commands]
                return commands
    return [joined]


def _scalar_of(container: YNode, token: ArgToken) -> YNode | None:
    for key in ("command", "args"):
        node = container.get(key)
        for child in node.value if node is not None and node.kind == "seq" else []:
            if child.kind == "scalar" and child.line == token.location.line and str(child.value) == token.text:
                return child
    return None


def _hub_cli(words: list[ArgToken], cwd: str | None, how: str) -> list[Download]:
    options: dict[str, str] = {}
    positional: list[ArgToken] = []
    index = 0
    while index < len(words):
        text = words[index].text
        if text.startswith("--"):
            name, _, value = text.partition("=")
            if not value and name in _HUB_VALUED and index + 1 < len(words):
                value, index = words[index + 1].text, index + 1
            options[name] = value
        else:
            positional.append(words[index])
        index += 1
    if not positional or not _REPO.match(positional[0].text) or options.get("--repo-type", "model") != "model":
        return []
    target = options.get("--local-dir")
    return [Download(positional[0].text, options.get("--revision"), None, _absolute(cwd, target) if target else None,
                     positional[0].location, how)]


def _git_clone(words: list[ArgToken], cwd: str | None, where: str) -> list[Download]:
    texts = [w.text for w in words]
    branch = None
    rest: list[ArgToken] = []
    index = texts.index("clone") + 1
    while index < len(words):
        text = texts[index]
        if text in ("-b", "--branch", "--depth", "--filter", "-c", "--config") and index + 1 < len(words):
            branch = texts[index + 1] if text in ("-b", "--branch") else branch
            index += 1
        elif text.startswith("--branch="):
            branch = text.partition("=")[2]
        elif not text.startswith("-"):
            rest.append(words[index])
        index += 1
    match = HUB_URL.match(rest[0].text) if rest else None
    if match is None or match.group(2):
        return []
    target = rest[1].text if len(rest) > 1 else match.group(1).rsplit("/", 1)[-1]
    return [Download(match.group(1), branch, None, _absolute(cwd, target), rest[0].location, f"git clone in {where}")]


def _checkout(texts: list[str]) -> str | None:
    """The commit a ``git checkout <sha>`` / ``git reset --hard <sha>`` moves a clone to."""
    if "checkout" in texts or "reset" in texts:
        return next((t for t in reversed(texts) if _SHA.match(t)), None)
    return None


def _fetch(tool: str, words: list[ArgToken], cwd: str | None, where: str) -> list[Download]:
    texts = [w.text for w in words]
    found = []
    for word in words:
        match = HUB_URL.match(word.text)
        if match is None or not match.group(3):
            continue
        file = match.group(3).rsplit("/", 1)[-1]
        found.append(Download(match.group(1), match.group(2), word.text, _fetched_file(tool, texts, cwd, file),
                              word.location, f"{tool} in {where}"))
    return found


def _fetched_file(tool: str, texts: list[str], cwd: str | None, file: str) -> str | None:
    """Where curl (``-o``/``--output``, ``-O``), wget (``-O``, ``-P``) or aria2c (``-d``, ``-o``) writes."""
    def option(*names: str) -> str | None:
        for index, text in enumerate(texts[:-1]):
            if text in names:
                return texts[index + 1]
        return next((t.partition("=")[2] for t in texts if any(t.startswith(n + "=") for n in names if n.startswith("--"))), None)

    if tool == "curl":
        output = option("-o", "--output")
        return _absolute(cwd, output) if output else (_absolute(cwd, file) if "-O" in texts else None)
    if tool == "wget":
        output = option("-O", "--output-document")
        return _absolute(cwd, output) if output else _absolute(_absolute(cwd, option("-P", "--directory-prefix") or "."), file)
    folder = _absolute(cwd, option("-d", "--dir") or ".")
    return _absolute(folder, option("-o", "--out") or file)


def _absolute(cwd: str | None, path: str) -> str | None:
    if path.startswith(("/", "$")):  # absolute, or under a folder a variable names (``$HOME/models``)
        return posixpath.normpath(path)
    return posixpath.normpath(posixpath.join(cwd, path)) if cwd is not None else None


def _on_volume(mounts: list[Mount], path: str | None) -> tuple[str, str] | None:
    if path is None:
        return None
    best = None
    for mount in mounts:
        root = mount.path.rstrip("/") or "/"
        if (path == root or path.startswith(root + "/")) and (best is None or len(root) > len(best.path.rstrip("/"))):
            best = mount
    if best is None:
        return None
    return best.volume, path[len(best.path.rstrip("/")):].strip("/")
