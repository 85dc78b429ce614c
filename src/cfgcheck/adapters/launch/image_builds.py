"""Which Dockerfile of the repository builds the image a Kubernetes workload deploys, when the repository
states it: a build command that tags it (``docker build -t NAME [-f FILE] CONTEXT``, ``podman build``,
``docker buildx build``, followed through ``docker tag NAME OTHER``) in a README, Makefile or script of
the manifest's folder or one above it, or in a GitHub Actions workflow; a skaffold artifact (``image``,
``context``, ``docker.dockerfile``); a Tiltfile ``docker_build('NAME', 'CONTEXT', dockerfile=...)``; a
``docker/build-push-action`` step (``tags``, ``context``, ``file``). Variables those files assign
(``export IMAGE=...``, ``IMAGE ?= ...``) are substituted; a name still holding one is not matched.

The image names must be the same repository (registry and tag aside): a name is never guessed from a
part of another. The Dockerfile's launch is then the image's default command (Kubernetes: ``command``
replaces its ENTRYPOINT, ``args`` its CMD), not a second served model.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from pathlib import Path

from ...engines.images import parse_image
from ...paths import read_beyond
from . import named_files
from ..core.contexts import Workspace
from .dockerfile import Built, parse
from .expansion import substitute

# bounded repetitions: a pull request's README is hostile input (docs/SECURITY.md), no match may run quadratic
_BUILD = re.compile(r"\b(?:docker|podman)(?:[ \t]+buildx)?[ \t]+build[ \t]+([^\n;&|`]{0,2000})")
_TAG = re.compile(r"\b(?:docker|podman)[ \t]+tag[ \t]+(\S{1,500})[ \t]+(\S{1,500})")
_ASSIGNMENT = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)[ \t]*(?:\?=|:=|=)[ \t]*['\"]?([^\s'\"#]+)", re.M)
_REFERENCE = re.compile(r"\$\{(\w+)\}|\$\((\w+)\)|\$(\w+)")
_TILT = re.compile(r"docker_build\([ \t]*['\"]([^'\"\n]{1,500})['\"][ \t]*,[ \t]*['\"]([^'\"\n]{1,500})['\"]([^)]{0,500})\)")
_TILT_FILE = re.compile(r"dockerfile\s*=\s*['\"]([^'\"]+)['\"]")
# docker build options that take a value (docs.docker.com/reference/cli/docker/buildx/build/)
_VALUED = frozenset(("--build-arg", "--platform", "--target", "--label", "--secret", "--ssh", "--cache-from",
                     "--cache-to", "-o", "--output", "--progress", "--network", "--add-host", "--iidfile",
                     "--build-context", "--shm-size", "--ulimit", "--metadata-file", "--builder", "--annotation",
                     "--attest", "--allow", "--call", "--cgroup-parent"))
_SCRIPT_NAMES = ("Makefile", "makefile", "GNUmakefile", "Tiltfile", "Justfile", "justfile")
_MAX_FILES_PER_FOLDER = 40


def deployed_dockerfile(workspace: Workspace, manifest: str, image: str) -> Built | None:
    """The Dockerfile that builds ``image`` as the repository states it, for a workload of ``manifest``;
    None when nothing states the link."""
    if not image or "$" in image or "{{" in image:
        return None
    wanted = parse_image(image).repository
    folder = posixpath.dirname(manifest)
    folders = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        folders.append(folder)
    for folder in folders + [".github/workflows"]:
        for name, dockerfile in _links(workspace, folder):
            if parse_image(name).repository == wanted:
                text = named_files.read_text(workspace, dockerfile)
                if text is not None:
                    return parse(dockerfile, text)
    return None


def _links(workspace: Workspace, folder: str) -> list[tuple[str, str]]:
    """(image name, Dockerfile path) for every build the files of ``folder`` state; once per run."""
    cache = workspace.space(__name__, dict)  # this module's index space: folder -> the build links its files state
    if folder not in cache:
        cache[folder] = []
        for name in _candidates(workspace, folder):
            rel = posixpath.join(folder, name) if folder else name
            text = named_files.read_text(workspace, rel)
            if text is not None:
                cache[folder].extend(_stated(workspace, rel, text))
    return cache[folder]


def _candidates(workspace: Workspace, folder: str) -> list[str]:
    """The files of ``folder`` that may state a build: READMEs, make and shell scripts, skaffold and
    Tilt files, and (in .github/workflows) workflows."""
    root = workspace.config.get("root")
    read_beyond(Path(str(root)) / folder if root else None)
    try:
        names = sorted(entry.name for entry in os.scandir(Path(str(root)) / folder) if entry.is_file()) if root else []
    except OSError:
        return []
    if folder == ".github/workflows":
        chosen = [name for name in names if name.endswith((".yml", ".yaml"))]
    else:
        chosen = [name for name in names if name in _SCRIPT_NAMES or name.lower().startswith("readme")
                  or name.startswith("skaffold.") or name.endswith((".sh", ".mk"))]
    return chosen[:_MAX_FILES_PER_FOLDER]


def _stated(workspace: Workspace, rel: str, text: str) -> list[tuple[str, str]]:
    folder = "" if rel.startswith(".github/") else posixpath.dirname(rel)  # workflows run at the root
    if posixpath.basename(rel).startswith("skaffold."):
        return _skaffold(workspace, rel, folder)
    text = text.replace("\\\n", " ")
    variables = {name: value for name, value in reversed(_ASSIGNMENT.findall(text))}
    links = [link for match in _BUILD.finditer(text) for link in _command(folder, _expand(match.group(1), variables))]
    links += _tilt(folder, text) + (_build_push_actions(workspace, rel) if "build-push-action" in text else [])
    for source, target in _TAG.findall(text):  # docker tag NAME OTHER: OTHER is the same image
        source, target = _expand(source, variables), _expand(target, variables)
        links += [(target, dockerfile) for name, dockerfile in links if name == source]
    return [(name, dockerfile) for name, dockerfile in links if "$" not in name]


def _expand(text: str, variables: dict[str, str]) -> str:
    expanded = substitute(_REFERENCE, text, lambda m: variables.get(m.group(1) or m.group(2) or m.group(3), m.group(0)))
    return text if expanded is None else expanded  # past the bounds: as written, a name with "$" links nothing


def _command(folder: str, arguments: str) -> list[tuple[str, str]]:
    """The tags and Dockerfile of one build command's arguments (run in ``folder``)."""
    try:
        words = shlex.split(arguments, comments=True)
    except ValueError:
        return []
    tags, file, positional = [], None, []
    iterator = iter(words)
    for word in iterator:
        option, has_value, value = word.partition("=")
        if option in ("-t", "--tag", "-f", "--file") or option in _VALUED:
            value = value if has_value else next(iterator, "")
            if option in ("-t", "--tag"):
                tags.append(value)
            elif option in ("-f", "--file"):
                file = value
        elif not word.startswith("-"):
            positional.append(word)
    if len(positional) != 1 or "$" in positional[0] or "://" in positional[0]:
        return []
    dockerfile = _inside(folder, file) if file else _inside(folder, posixpath.join(positional[0], "Dockerfile"))
    return [(tag, dockerfile) for tag in tags if dockerfile]


def _inside(folder: str, written: str) -> str | None:
    return named_files.repo_path(posixpath.join(folder, "x"), written)


def _tilt(folder: str, text: str) -> list[tuple[str, str]]:
    links = []
    for name, context, rest in _TILT.findall(text):
        file = _TILT_FILE.search(rest)
        dockerfile = _inside(folder, file.group(1) if file else posixpath.join(context, "Dockerfile"))
        links += [(name, dockerfile)] if dockerfile else []
    return links


def _skaffold(workspace: Workspace, rel: str, folder: str) -> list[tuple[str, str]]:
    loaded = named_files.read_yaml(workspace, rel)
    links = []
    for document in loaded.documents if loaded is not None else []:
        artifacts = document.root.path("build", "artifacts") if document.root is not None and \
            document.root.kind == "map" else None
        for artifact in artifacts.value if artifacts is not None and artifacts.kind == "seq" else []:
            image = artifact.scalar("image") if artifact.kind == "map" else None
            context = str(artifact.scalar("context", default=".") or ".")
            file = str(artifact.scalar("docker", "dockerfile", default="Dockerfile") or "Dockerfile")
            dockerfile = _inside(folder, posixpath.join(context, file))
            links += [(image, dockerfile)] if isinstance(image, str) and dockerfile else []
    return links


def _build_push_actions(workspace: Workspace, rel: str) -> list[tuple[str, str]]:
    """``uses: docker/build-push-action`` steps: ``tags`` (a list or lines or commas), ``context``
    (default: the repository root), ``file`` (default: ``{context}/Dockerfile``)."""
    loaded = named_files.read_yaml(workspace, rel)
    jobs = loaded.documents[0].root.get("jobs") if loaded and loaded.documents and loaded.documents[0].root is not None \
        and loaded.documents[0].root.kind == "map" else None
    links = []
    for _, job in jobs.items() if jobs is not None and jobs.kind == "map" else []:
        steps = job.get("steps") if job.kind == "map" else None
        for step in steps.value if steps is not None and steps.kind == "seq" else []:
            uses = step.scalar("uses") if step.kind == "map" else None
            if not isinstance(uses, str) or not uses.startswith("docker/build-push-action"):
                continue
            context = str(step.scalar("with", "context", default=".") or ".")
            dockerfile = _inside("", str(step.scalar("with", "file", default="") or posixpath.join(context, "Dockerfile")))
            tags = step.path("with", "tags")
            written = [str(t.value) for t in tags.value] if tags is not None and tags.kind == "seq" else \
                re.split(r"[,\n]", str(tags.value)) if tags is not None and tags.kind == "scalar" else []
            links += [(tag.strip(), dockerfile) for tag in written if tag.strip() and dockerfile]
    return links
