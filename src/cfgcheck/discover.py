"""The files a lint run reads: what git would list, the user's excludes, symlink safety, and streams.

* Inside a git work tree a folder is listed as git lists it (``git ls-files -co --exclude-standard``):
  tracked files and untracked ones that no ``.gitignore`` (or ``.git/info/exclude``) ignores. Outside
  git the folder is walked and every ``.gitignore`` met on the way applies, with git's semantics
  (``pathspec``). ``node_modules/``, ``.venv/`` and ``.git*/`` folders are never walked into.
* ``exclude`` patterns in the configuration follow gitignore semantics too: ``*`` stops at ``/``,
  ``**`` crosses folders, a pattern without ``/`` matches at any depth.
* A file named on the command line is read even when ``.gitignore`` ignores it (the user asked for
  it, as ruff and ``git add -f`` do), but the configuration's ``exclude`` still applies to it, so a
  pre-commit hook that passes every changed file keeps honouring it.
* Symlinks leading outside the repository are never followed (docs/SECURITY.md, "Promises").
* ``-`` is standard input; a named FIFO, ``/dev/stdin`` or ``<(...)`` is read as a stream (it is not a
  regular file, and cannot be read twice). A named path that is none of a file, a folder or a
  readable stream is an error: nothing is reported as clean that was not read.
* Files under a Helm chart's ``templates/`` that hold ``{{`` are not YAML until rendered: they are
  set aside (the chart is rendered as a whole, see ``render/helm.py``) and counted for one note.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from functools import lru_cache
from pathlib import Path

from . import lazy
from . import git
from .errors import ConfigError
from .notes import note
from .paths import escapes, git_may_find_repository
from .yamlio import DEFAULT_LIMITS, LoadedFile, YamlError, decode, parse_text, relpath

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, Iterable
    from .yamlio import Readers

# manifests kept as envsubst templates (x.yaml.tpl) are YAML whose ${VAR} values stay unresolved; one
# that does not parse is a template, reported as such (yamlbounds._TEMPLATE_NAME)
YAML_SUFFIXES = (".yaml", ".yml", ".yaml.tpl", ".yml.tpl")
STDIN = Path("-")
NEVER_WALKED = frozenset({"node_modules", ".venv"})  # and every folder named .git* (.git, .github) ...
WORKFLOWS = ".github/workflows"  # ... but GitHub Actions workflows, which may start an engine


def listed_file(name: str, suffixes: tuple[str, ...] = ()) -> bool:
    """A file discovery lists: YAML, or one whose name ends with ``suffixes``: the formats that are not
    YAML which the run reads (``.sh``, ``Makefile``: the adapter registry's ``file_suffixes``, given by
    the caller, so that discovery does not import the adapters). An entry that ends with a dot is a stem
    a file's name starts with (``Dockerfile.`` lists ``Dockerfile.gpu``: ``named_like``)."""
    return name.endswith(YAML_SUFFIXES) or named_like(name, suffixes)


def named_like(path: str, suffixes: tuple[str, ...]) -> bool:
    """Whether the file ``path`` ends with one of ``suffixes``, or its name starts with one that ends with a
    dot (``Dockerfile.gpu``, ``Containerfile.rocm``), other than the ignore file BuildKit keeps beside a
    Dockerfile (``Dockerfile.dockerignore``)."""
    if path.endswith(suffixes):
        return True
    name = path[path.rfind("/") + 1:]
    return name.startswith(_stems(suffixes)) and not name.endswith(".dockerignore")


@lru_cache(maxsize=8)
def _stems(suffixes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(suffix for suffix in suffixes if suffix.endswith("."))


CHART_FILE = "Chart.yaml"


# one per run, never compared
class Inputs:
    """What the run reads: the files found, the streams named, the Helm templates set aside and the named env files."""

    def __init__(self, files: list[Path] | None = None, streams: list[Path] | None = None,
                 templates: list[str] | None = None, related: list[str] | None = None) -> None:
        self.files = [] if files is None else files  # regular files, resolved
        self.streams = [] if streams is None else streams  # pipes, FIFOs and '-', as the user named them
        self.templates = [] if templates is None else templates  # repo-relative Helm templates set aside
        self.related = [] if related is None else related  # named env files: read by the files that use them
        # each regular file listed in a folder, by its position in ``files``: its absolute, normalised name and
        # what ``lstat`` said of it: the whole-run cache's key names it so and its index compares the answer
        # (``cache.StatIndex``) instead of asking the system again (5,000 files of a tree; ``str`` of each
        # file's Path cost 2.5 us more)
        self.stats: dict[int, tuple[str, os.stat_result]] = {}


@lru_cache(maxsize=64)
def _spec(patterns: tuple[str, ...]):
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def excluded(rel: str, patterns: Iterable[str], folder: bool = False) -> bool:
    """True when the repo-relative ``rel`` matches a gitignore-style pattern of ``patterns``."""
    patterns = tuple(patterns or ())
    if not patterns:
        return False
    return _spec(patterns).match_file(rel + "/" if folder else rel)


def discover(paths: Iterable[Path], root: Path, exclude: list[str], suffixes: tuple[str, ...] = ()) -> Inputs:
    """Files and streams to read under ``paths``, each once, in a stable order; in folders, YAML files
    and those whose name ends with ``suffixes`` (see ``listed_file``)."""
    root = root.resolve()
    inputs = Inputs()
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            if STDIN not in inputs.streams:  # standard input can be read once
                inputs.streams.append(STDIN)
            continue
        if not path.exists() and not path.is_symlink():
            raise ConfigError(f"path does not exist: {path}")
        if path.is_dir():
            before = len(inputs.files) + len(inputs.templates)
            if not escapes(path, root):
                _add_folder(path, root, exclude, inputs, seen, suffixes)
            if len(inputs.files) + len(inputs.templates) == before:
                sys.stderr.write(f"cfgcheck: note: no YAML files to lint under {path} "
                                 "(after .gitignore and exclude)\n")
            continue
        if is_stream(path):
            inputs.streams.append(path)
        elif path.is_file() and is_env_file(path.name):
            inputs.related.append(relpath(root, path.resolve()))
        elif path.is_file() or path.is_symlink():
            _add(path, root, exclude, inputs.files, seen)
        else:
            raise ConfigError(f"{path} is not a file, a folder or a readable stream")
    return inputs


def is_env_file(name: str) -> bool:
    """A ``.env`` (or ``x.env``) file: no YAML, but compose files read it (``adapters/launch/dotenv.py``)."""
    return name == ".env" or name.endswith(".env")


def is_stream(path: Path) -> bool:
    """A pipe, FIFO or device, or a descriptor named through /dev or /proc (``/dev/stdin``, ``<(...)``
    is ``/dev/fd/63``): read once as named, even when it leads to a regular file (``< file``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or os.path.abspath(path).startswith(("/dev/", "/proc/"))


def _add_folder(path: Path, root: Path, exclude: list[str], inputs: Inputs, seen: set[str],
                suffixes: tuple[str, ...]) -> None:
    listed = _git_listing(root, path, exclude, suffixes)
    if listed is None:
        listed = [relpath(root, file) for file in _walk(Path(os.path.realpath(path)), root, exclude, _named(suffixes))]
    charts: dict[str, bool] = {}
    base = os.path.join(str(root), "")  # with its separator: a listed name (git's, normalised) is added to it
    for rel in listed:
        full = base + rel
        if full in seen or exclude and excluded(rel, exclude):
            continue
        if "/templates/" in "/" + rel and is_chart_template(Path(full), charts):
            inputs.templates.append(rel)
            continue
        try:
            status: os.stat_result | None = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):  # tracked, deleted from the work tree: not read
            continue
        except (OSError, ValueError):  # there but not to be looked at: read as a file, as the run reports it
            status = None
        if status is not None and stat.S_ISLNK(status.st_mode):
            _add(Path(full), root, exclude, inputs.files, seen)
            continue
        seen.add(full)
        if status is not None and stat.S_ISREG(status.st_mode):
            inputs.stats[len(inputs.files)] = (full, status)
        inputs.files.append(root / rel)  # root's parts parsed once: 2.7 us a file, not 4.0 (5,000 a tree)


def _git_listing(root: Path, folder: Path, exclude: list[str], suffixes: tuple[str, ...]) -> list[str] | None:
    """Repo-relative YAML files under ``folder`` as git lists them, or None outside a git work tree.
    Submodules (which ``ls-files -o`` cannot recurse into) are walked, their ``.gitignore`` applied."""
    scope = relpath(root, folder)
    if scope.startswith(("/", "../")):
        return None
    # -t tags each name (H tracked, ? untracked); a tracked file deleted from the work tree is listed too, and
    # left out when ``_add_folder`` finds nothing there: git's -d would look at every tracked file as the run does
    listed = _git_names(root, *git.WORK_TREE_LISTING, scope or ".")
    if listed is None:
        return None
    names = {entry[2:] for entry in listed if listed_file(entry[2:], suffixes)}
    folders: dict[str, bool] = {}  # a folder's answer, for every name in it (it depends on the folder only)
    found = [name for name in sorted(names) if not _never_walked_folder(name.rpartition("/")[0], folders)]
    if (root / ".gitmodules").is_file():
        for entry in _git_names(root, "-s", scope or ".") or []:
            meta, _, name = entry.partition("\t")
            if meta.startswith("160000 ") and (root / name).is_dir():
                found.extend(relpath(root, file) for file in _walk(root / name, root, exclude, _named(suffixes)))
    return found


def _git_names(root: Path, *args: str) -> list[str] | None:
    if not git_may_find_repository(root):
        return None
    return git.ls_files(root, *args[:-1], paths=(args[-1],))


def _named(suffixes: tuple[str, ...]) -> Callable[[str], bool]:
    """The file names discovery lists: YAML and the endings of the formats that are not YAML."""
    return lambda name: listed_file(name, suffixes)


def walk_files(top: Path, root: Path) -> list[Path]:
    """Every file under ``top`` git would not ignore, found without git (links listed, not followed)."""
    return _walk(top, root, [], wanted=lambda name: True)


class TooManyEntries(Exception):
    """A bounded walk (``_walk``'s ``limit``) met more folder entries than it may look at."""


def _walk(top: Path, root: Path, exclude: list[str], wanted: Callable[[str], bool],
          limit: int | None = None) -> list[Path]:
    """Files under ``top`` without git (``wanted`` by name: YAML and the adapters' formats): links not
    followed, every ``.gitignore`` applied. ``limit``: the folder entries it may look at, else
    ``TooManyEntries``."""
    found: list[Path] = []
    stack: list[tuple[Path, tuple[tuple[Path, object], ...]]] = [(top, _ignores_above(top, root))]
    seen = 0
    while stack:
        folder, ignores = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if limit is not None and seen > limit:
            raise TooManyEntries(folder)
        if any(entry.name == ".gitignore" and entry.is_file() for entry in entries):
            ignores = ignores + ((folder, _read_ignore(folder / ".gitignore")),)
        subfolders = []
        for entry in entries:
            child = folder / entry.name
            if entry.is_dir(follow_symlinks=False):
                if not _never_walked(entry.name, relpath(root, child)) and not _ignored(child, ignores, True) \
                        and not excluded(relpath(root, child), exclude, folder=True):
                    subfolders.append((child, ignores))
            elif wanted(entry.name) and not _ignored(child, ignores, False) and \
                    not _in_never_walked(relpath(root, child)):
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    found.append(child)
        stack.extend(reversed(subfolders))
    return found


def _never_walked(folder: str, rel: str = "") -> bool:
    """A folder never walked into; ``rel`` (its path) lets ``.github/workflows`` in."""
    if rel.endswith("/.github") or rel == ".github" or _workflows(rel + "/"):
        return False
    return folder in NEVER_WALKED or folder.startswith(".git")


def _workflows(rel: str) -> bool:
    return rel.startswith(WORKFLOWS + "/") or f"/{WORKFLOWS}/" in rel


def _in_never_walked(name: str) -> bool:
    """A file below a folder never walked into (``.github/workflows/*.yml`` are walked)."""
    parts = name.split("/")[:-1]
    if _workflows(name):
        at = parts.index("workflows", parts.index(".github"))
        parts = parts[:at - 1] + parts[at + 1:]
    return any(_never_walked(part) for part in parts)


def _never_walked_folder(folder: str, memo: dict[str, bool]) -> bool:
    """``_in_never_walked`` of the files in ``folder`` (repo-relative, "" for the root), once per folder. A
    folder never walked into is named ``.git*`` or one of ``NEVER_WALKED``: a path that holds none of those
    texts is not looked at part by part (1,168 folders of the GitOps tree: 11 -> 2 ms)."""
    if folder not in memo:
        memo[folder] = bool(folder) and (".git" in folder or any(name in folder for name in NEVER_WALKED)) \
            and _in_never_walked(folder + "/")
    return memo[folder]


def _ignores_above(top: Path, root: Path) -> tuple[tuple[Path, object], ...]:
    """The ``.gitignore`` files of the folders between the repository root and ``top``."""
    chain = []
    folder = top
    while True:
        candidate = folder / ".gitignore"
        if folder != top and candidate.is_file():
            chain.append((folder, _read_ignore(candidate)))
        if folder == root or folder.parent == folder or root not in folder.parents:
            break
        folder = folder.parent
    return tuple(reversed(chain))


def _read_ignore(path: Path):
    import pathspec

    try:
        lines = path.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    return pathspec.GitIgnoreSpec.from_lines(lines)


def gitignored(path: Path, root: Path) -> bool:
    """Whether a ``.gitignore`` between ``root`` and the file ``path`` ignores it, as the walk outside git
    would (``launch/named_files.py`` reads no such file)."""
    return _ignored(path, _ignores_above(path, root), False)


def _ignored(path: Path, ignores, folder: bool) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix()
        if spec.match_file(rel + "/" if folder else rel):
            return True
    return False


def is_chart_template(file: Path, charts: dict[str, bool]) -> bool:
    """A file under ``<chart>/templates/`` (or a folder in it: ``templates/tests/``, which Helm renders
    too) holding template syntax (it is YAML only once rendered)."""
    parent = next((p for p in file.parents if p.name == "templates"), None)
    if parent is None:
        return False
    key = str(parent.parent)
    if key not in charts:
        charts[key] = (parent.parent / CHART_FILE).is_file()
    if not charts[key]:
        return False
    try:
        return b"{{" in file.read_bytes()
    except OSError:
        return False


def _add(path: Path, root: Path, exclude: list[str], found: list[Path], seen: set[str]) -> None:
    """A file named on the command line, or a link met in a folder: resolved, kept inside the repo."""
    if not path.is_file():
        return  # a directory named x.yaml, a dangling or looping symlink
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return
    if escapes(path, root, real):
        return  # never follow a link out of the repository, even one named on the command line
    if str(real) in seen or excluded(relpath(root, real), exclude):
        return
    seen.add(str(real))
    found.append(real)


def stream_name(root: Path, stream: Path, stdin_filename: Path | None) -> str:
    """How a stream is reported: ``--stdin-filename`` (repo-relative) for ``-``, else as named."""
    if stream == STDIN:
        return relpath(root, stdin_filename.absolute()) if stdin_filename is not None else "stdin"
    return stream.as_posix()


def load_stream(root: Path, stream: Path, limits: dict[str, int] | None, fast: bool,
                stdin_filename: Path | None = None, readers: Readers | None = None) -> LoadedFile:
    """Read a stream once, at most ``max-file-bytes``; a stream that cannot be read is a usage error
    (exit 2), never an empty success. ``readers`` as ``yamlio.load_file`` reads them."""
    limit = {**DEFAULT_LIMITS, **(limits or {})}["max-file-bytes"]
    name = stream_name(root, stream, stdin_filename)
    try:
        if stream == STDIN:
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(stream, "rb") as handle:
                data = handle.read(limit + 1)
    except (OSError, AttributeError, ValueError) as exc:
        raise ConfigError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > limit:
        return LoadedFile(name, "", [], {}, YamlError(
            f"input is over the {limit:,}-byte limit (limit max-file-bytes)"))
    try:
        text = decode(data)
    except YamlError as exc:
        return LoadedFile(name, "", [], {}, exc)
    return parse_text(name, text, limits, fast, reader=readers(name) if readers is not None else None)


# ---------------------------------------------------------------- related files

# [ \t], not \s: a \s* at each line start would run on across every blank line below it (quadratic).
_MODEL_REF = lazy.Pattern(r"^[ \t]*modelRef:[ \t]*['\"]?([\w.-]+)", re.M)
_CONFIGMAP_REF = lazy.Pattern(r"configMap:[ \t]*\{?[ \t]*\n?[ \t]*name:[ \t]*['\"]?([\w.-]+)", re.M)
# a document's kind, or an object's in a wrapper of resources (adapters/core/resources.py: ``- kind: X``, ``  kind: X``)
_CONFIGMAP_KIND = re.compile(r"^[ \t-]*kind:[ \t]*ConfigMap[ \t]*$", re.M)
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
        files = _walk(root, root, exclude, _named(suffixes), WALKED_SEARCH_ENTRIES)
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
        kinds = list(_CONFIGMAP_KIND.finditer(document))
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
