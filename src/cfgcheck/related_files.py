"""The files related to a lint run's own: those its files name and those that name them (a ConfigMap a
Deployment mounts, a KubeAI Model's resource profiles, the files that document a GPU memory ceiling), found
with ``git grep`` once per run (``RepoSearch``), or by a bounded walk outside a git work tree. Split from
discover.py, which lists the files a run is asked to read."""

from __future__ import annotations

import re
from pathlib import Path

from . import git, lazy
from .discover import YAML_SUFFIXES, TooManyEntries, excluded, listed_file, walk_named
from .notes import note
from .paths import escapes, git_may_find_repository
from .yamlio import relpath

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterable

# [ \t], not \s: a \s* at each line start would run on across every blank line below it (quadratic).
_MODEL_REF = lazy.Pattern(r"^[ \t]*modelRef:[ \t]*['\"]?([\w.-]+)", re.M)
_CONFIGMAP_REF = lazy.Pattern(r"configMap:[ \t]*\{?[ \t]*\n?[ \t]*name:[ \t]*['\"]?([\w.-]+)", re.M)
# a document's kind, or an object's in a wrapper of resources (adapters/core/resources.py: ``- kind: X``, ``  kind: X``)
_CONFIGMAP_KIND = lazy.Pattern(r"^[ \t-]*kind:[ \t]*ConfigMap[ \t]*$", re.M)  # behind "ConfigMap" in the text
_OBJECT_KIND = "^([[:space:]]|-)*kind:[[:space:]]*"
_METADATA_NAME = lazy.Pattern(r"^[ \t]+name:[ \t]*['\"]?([\w.-]+)", re.M)
_COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_MEMORY_KEY = lazy.Pattern(r"gpuMemoryUtilization|gpu[-_]memory[-_]utilization|memFractionStatic|mem[-_]fraction[-_]static")
_CEILING_WORDS = r"ceiling|never raise|do not raise|don't raise|must not be raised"
_SERVING_WORDS = r"vllm|sglang|tokenspeed|llmkube|servingEngineSpec"
# A KubeAI Model (or an entry of KubeAI's ``models`` chart) selects a resource profile, whose devices and
# image the KubeAI chart's values define (charts/kubeai/values.yaml: ``resourceProfiles``,
# ``modelServers.VLLM.images``), wherever the repository keeps them (adapters/formats/kubeai.py)
_KUBEAI_PROFILE = lazy.Pattern(r"^[ \t]*resourceProfile:[ \t]*['\"]?[\w.-]", re.M)
KUBEAI_VALUES_SEARCH = (r"^[[:space:]]*(resourceProfiles|modelServers):",)


# The search for files that document a GPU memory ceiling: it depends on no file's text, so a run that
# names files (and may need it) asks for it with its first search, in the same git process.
CEILING_SEARCH = (_CEILING_WORDS, _SERVING_WORDS)


class RepoSearch:
    """``git grep -l --all-match`` searches (a search: patterns a file must all match, each within a
    line) over the YAML and adapter files of the repository at ``root``, for one run: each search runs
    once, and the searches asked together (with those ``pending``) share one git process. Outside a
    work tree the files ``discover`` lists are read instead."""

    def __init__(self, root: Path, exclude: list[str], pending: Iterable[tuple[str, ...]] = (),
                 suffixes: tuple[str, ...] = ()) -> None:
        self.root, self.exclude, self.suffixes = root, exclude, suffixes
        self.pending = list(pending)
        self.found: dict[tuple[str, ...], set[str]] = {}

    def files(self, searches: list[tuple[str, ...]]) -> set[str]:
        """Repo-relative files matching any of ``searches``."""
        missing = list(dict.fromkeys(s for s in [*searches, *self.pending] if s not in self.found))
        self.pending = []
        if missing:
            each = _grep(self.root, missing, self.suffixes)
            if each is None:
                each = _grep_walk(self.root, missing, self.exclude, self.suffixes)
            self.found.update(zip(missing, each or [set() for _ in missing]))
        return set().union(*(self.found[search] for search in searches))


def related_paths(root: Path, texts: list[str], exclude: list[str], skip: set[str], scopes: Iterable[str] = ("",),
                  ceilings: bool = True, search: RepoSearch | None = None, suffixes: tuple[str, ...] = ()) -> list[str]:
    """Repo-relative YAML files outside ``skip`` that the files with ``texts`` depend on: the LLMKube
    Models their InferenceServices name, the KubeAI chart values that define the resource profiles their
    KubeAI Models select and, with ``ceilings``, when they set a memory fraction, the
    serving files that document a ceiling (a ceiling is shared by served models on the same GPUs).
    Found with ``git grep`` inside a work tree (no read of the tree in Python), else by reading the
    files ``discover`` lists."""
    refs = {ref for text in texts for ref in _MODEL_REF.findall(text)}
    searches: list[tuple[str, ...]] = []
    if refs:
        names = "|".join(re.escape(r) for r in sorted(refs))
        searches.append((rf"^[[:space:]]+name:[[:space:]]*['\"]?({names})['\"]?[[:space:]]*$",
                         _OBJECT_KIND + r"Model[[:space:]]*$"))
    configmaps = {ref for text in texts if "--config" in text for ref in _CONFIGMAP_REF.findall(text)}
    if configmaps:  # an engine --config file in a mounted ConfigMap
        names = "|".join(re.escape(r) for r in sorted(configmaps))
        searches.append((rf"^[[:space:]]+name:[[:space:]]*['\"]?({names})['\"]?[[:space:]]*$",
                         _OBJECT_KIND + r"ConfigMap[[:space:]]*$"))
    if any("resourceProfile:" in text and _KUBEAI_PROFILE.search(text) for text in texts):
        searches.append(KUBEAI_VALUES_SEARCH)
    if ceilings and any(_MEMORY_KEY.search(text) for text in texts):
        searches.append(CEILING_SEARCH)
    if not searches:
        return []
    found = (search or RepoSearch(root, exclude, suffixes=suffixes)).files(searches)
    scopes = list(scopes)
    keep = []
    for rel in sorted(found - skip):
        path = root / rel
        if within(rel, scopes) and not excluded(rel, exclude) and path.is_file() and not escapes(path, root):
            keep.append(rel)
    return keep


def _grep(root: Path, searches: list[tuple[str, ...]], suffixes: tuple[str, ...]) -> list[set[str]] | None:
    """The files matching each of ``searches``, from one ``git grep``; None outside a work tree. One
    search is git's ``--all-match`` answer; several are one ``git grep -l`` for the first pattern of
    each (the most telling one), the few files it lists then matched against every search here."""
    if not git_may_find_repository(root):  # git grep --untracked fails outside a work tree, whatever the config
        return None
    first = searches[0] if len(searches) == 1 else tuple(dict.fromkeys(patterns[0] for patterns in searches))
    args = [arg for pattern in first for arg in ("-e", pattern)]
    try:
        run = git.run(root, "grep", "-l", "-I", "-i", "-E", "--untracked",
                      *(["--all-match"] if len(searches) == 1 else []), *args, "--",
                      *(f"*{suffix}" + ("*" if suffix.endswith(".") else "") for suffix in YAML_SUFFIXES + suffixes))
    except git.GitError:
        return None
    if run.returncode not in (0, 1):  # 1: nothing matched; anything else: not a work tree
        return None
    listed = [line for line in run.stdout.decode("utf-8", "surrogateescape").splitlines() if line]
    if len(searches) == 1:
        return [set(listed)]
    # read only what the callers keep: a link out of the repository (a hostile one to a device) is not opened
    files = [root / rel for rel in listed if (root / rel).is_file() and not escapes(root / rel, root)]
    return _matching(root, files, searches, _GIT_SPACE)


# POSIX [[:space:]] within one line, as git grep reads it: a CRLF file's \r is one.
_GIT_SPACE = "[ \t\r\f\v]"


# Outside a git work tree the root of a named file is its folder, which may be a home or downloads folder:
# the search for related files reads what is under it only up to this many folder entries (a small
# project's folder holds a few hundred; git grep, inside a work tree, has no such bound).
WALKED_SEARCH_ENTRIES = 10_000


def _grep_walk(root: Path, searches: list[tuple[str, ...]], exclude: list[str],
               suffixes: tuple[str, ...]) -> list[set[str]] | None:
    """``git grep --all-match`` without git: each pattern matches within a line, as git's do (so
    ``[[:space:]]`` is a space or a tab: a backslash-s could run across lines, quadratically over blank
    ones). None, and a note, when the folder holds more than ``WALKED_SEARCH_ENTRIES`` entries."""
    try:
        files = walk_named(root, root, exclude, suffixes, WALKED_SEARCH_ENTRIES)
    except TooManyEntries:
        note(f"related files not searched: {root} is not in a git work tree and holds more than "
             f"{WALKED_SEARCH_ENTRIES:,} entries (lint inside the repository, or name its folder)")
        return None
    return _matching(root, files, searches, "[ \t]")


def _matching(root: Path, files: Iterable[Path], searches: list[tuple[str, ...]], space: str) -> list[set[str]]:
    """The files of ``files`` whose text matches every pattern of each search (``space``: what
    ``[[:space:]]`` stands for)."""
    # a pattern is compiled when first searched: a file that fails a search's first pattern is never tried on
    # the rest (a one-file run lints a file that names no engine)
    compiled = [[lazy.Pattern(p.replace("[[:space:]]", space), re.I | re.M) for p in patterns] for patterns in searches]
    found: list[set[str]] = [set() for _ in searches]
    for file in files:
        try:
            text = file.read_text("utf-8", errors="replace")
        except OSError:
            continue
        for hits, patterns in zip(found, compiled):
            if all(p.search(text) for p in patterns):
                hits.add(relpath(root, file))
    return found


def within(path: str, scopes: list[str]) -> bool:
    return any(scope in ("", ".") or path == scope or path.startswith(scope.rstrip("/") + "/") for scope in scopes)


def _configmap_names(text: str) -> list[str]:
    """metadata.name of each ConfigMap: the first indented ``name:`` of a ConfigMap document, or after the
    ``kind:`` of each ConfigMap object of a wrapper (objects write kind before metadata)."""
    names = []
    for document in text.split("\n---"):
        kinds = list(_CONFIGMAP_KIND.finditer(document)) if "ConfigMap" in document else []
        # a ConfigMap document (its metadata may come first): from its start; objects: after each kind
        starts = [0] if [k.group().startswith("kind") for k in kinds] == [True] else [k.end() for k in kinds]
        for start in starts:
            match = _METADATA_NAME.search(document, start)
            if match:
                names.append(match.group(1))
    return names


def referrers(root: Path, named: list[str], exclude: list[str], search: RepoSearch | None = None,
              suffixes: tuple[str, ...] = ()) -> list[str]:
    """Repo-relative files outside ``named`` that read one of the ``named`` files, so that a change to
    only a related file re-lints the file that uses it: the compose files beside a ``.env``; files
    that name a file (an ``env_file``, an engine ``--config`` file, a bind-mounted config); files that
    mount a ConfigMap a named file defines."""
    found: set[str] = set()
    fixed: set[str] = set()
    searches: list[tuple[str, ...]] = []
    for rel in named:
        folder, _, base = rel.rpartition("/")
        if base == ".env":
            found.update(f"{folder}/{name}".lstrip("/") for name in _COMPOSE_NAMES if (root / folder / name).is_file())
            continue
        fixed.add(base)
        try:
            text = (root / rel).read_text("utf-8", errors="replace") if rel.endswith(YAML_SUFFIXES) else ""
        except OSError:
            text = ""
        for name in _configmap_names(text):
            # the name first: the pattern one git process for several searches lists files by
            searches.append((rf"name:[[:space:]]*['\"]?{re.escape(name)}['\"]?[[:space:]]*$", r"configMap:"))
    for base in sorted(fixed):
        searches.append((re.escape(base),))
    if searches:
        found |= (search or RepoSearch(root, exclude, suffixes=suffixes)).files(searches)
    keep = []
    for rel in sorted(found - set(named)):
        path = root / rel
        if listed_file(rel, suffixes) and not excluded(rel, exclude) and path.is_file() and not escapes(path, root):
            keep.append(rel)
    return keep
