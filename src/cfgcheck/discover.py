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
import stat
import sys
from functools import lru_cache
from pathlib import Path

from . import git
from .errors import ConfigError
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
        # regular files, resolved (``files``): a file listed in a folder is kept by its repo-relative name, made
        # a Path under ``root`` when first asked for: a run the whole-run cache answers asks for none (5,000
        # Paths of a tree: 23 ms on a slow machine)
        self.listed: list[Path | str] = [] if files is None else list(files)
        self.root: Path | None = None  # what the names are under; None once ``files`` made every one a Path
        self._base: str | None = None  # ``root`` with its separator, a listed name's absolute name without it
        self.streams = [] if streams is None else streams  # pipes, FIFOs and '-', as the user named them
        self.templates = [] if templates is None else templates  # repo-relative Helm templates set aside
        self.related = [] if related is None else related  # named env files: read by the files that use them
        # each regular file listed in a folder, by its position in ``files``: its absolute, normalised name and
        # what ``lstat`` said of it: the whole-run cache's key names it so and its index compares the answer
        # (``cache.StatIndex``) instead of asking the system again (5,000 files of a tree; ``str`` of each
        # file's Path cost 2.5 us more)
        self.stats: dict[int, tuple[str, os.stat_result]] = {}
        # the same files' names with the mode ``lstat`` found (``paths.looked``'s answer: a regular file is no
        # link), kept for the run: a kustomization looks at the files it names (4,843 of the tree's 5,000, each
        # an ``lstat`` of 3.9 us here), which discovery looked at already (``paths.LOOKED``)
        self.looked: dict[str, tuple[int, int]] = {}

    @property
    def files(self) -> list[Path]:
        """The files, each a Path (made now for those listed by name), in the run's order."""
        if self.root is not None:
            for position in range(len(self.listed)):
                self.file(position)
            self.root = None
        return self.listed  # type: ignore[return-value]

    def count(self) -> int:
        """How many files, none made a Path."""
        return len(self.listed)

    def file(self, position: int) -> Path:
        """The file at ``position``, made a Path (and kept) if listed by name."""
        file = self.listed[position]
        if file.__class__ is str:
            file = self.listed[position] = self.root / file  # type: ignore[operator]
        return file  # type: ignore[return-value]

    def names(self) -> list[str]:
        """The files' absolute names, in the run's order, none made a Path: what the run's stages read (a Path
        for each of a GitOps tree's 5,000 files took 25 ms of the run's process before its workers forked)."""
        return [self.name(position) for position in range(len(self.listed))]

    def name(self, position: int) -> str:
        """The file at ``position`` by its absolute name (``str`` of its Path: a listed name is normalised)."""
        file = self.listed[position]
        return self.under(file) if file.__class__ is str else os.fspath(file)  # type: ignore[arg-type]

    def under(self, rel: str) -> str:
        """The absolute name of the listed name ``rel`` (discovery's ``stats`` and ``looked`` are keyed by it)."""
        if self._base is None:
            self._base = os.path.join(str(self.root), "")  # with its separator: a name is added to it
        return self._base + rel


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
    inputs.root = root  # what the names listed in its folders are under
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            if STDIN not in inputs.streams:  # standard input can be read once
                inputs.streams.append(STDIN)
            continue
        if not path.exists() and not path.is_symlink():
            raise ConfigError(f"path does not exist: {path}")
        if path.is_dir():
            before = inputs.count() + len(inputs.templates)
            if not escapes(path, root):
                _add_folder(path, root, exclude, inputs, seen, suffixes)
            if inputs.count() + len(inputs.templates) == before:
                sys.stderr.write(f"cfgcheck: note: no YAML files to lint under {path} "
                                 "(after .gitignore and exclude)\n")
            continue
        if is_stream(path):
            inputs.streams.append(path)
        elif path.is_file() and is_env_file(path.name):
            inputs.related.append(relpath(root, path.resolve()))
        elif path.is_file() or path.is_symlink():
            _add(path, root, exclude, inputs.listed, seen)
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
    for rel in listed:
        full = inputs.under(rel)  # git's names are normalised
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
            _add(Path(full), root, exclude, inputs.listed, seen)
            continue
        seen.add(full)
        if status is not None and stat.S_ISREG(status.st_mode):
            inputs.stats[len(inputs.listed)] = (full, status)
            inputs.looked[full] = (status.st_mode, status.st_mode)
        inputs.listed.append(rel)  # a Path under root when asked for (``Inputs.file``): root's parts parsed once


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


def walk_named(top: Path, root: Path, exclude: list[str], suffixes: tuple[str, ...], limit: int) -> list[Path]:
    """The files discovery would list under ``top`` without git, looking at no more than ``limit`` folder
    entries (``TooManyEntries``)."""
    return _walk(top, root, exclude, _named(suffixes), limit)


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


def _add(path: Path, root: Path, exclude: list[str], found: list[Path | str], seen: set[str]) -> None:
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
