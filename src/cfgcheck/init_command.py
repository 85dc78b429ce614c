"""``cfgcheck init``: the node names, node pools and served models a repository shows, and the fleet map
(``nodes:`` in ``.cfgcheck.yaml``) written for the user to fill in.

A hand-built cluster rarely states its GPUs in a file; its workloads name their hosts (``nodeName``, a
``kubernetes.io/hostname`` selector) and its node configurations name its nodes. ``init`` lists them with
what cfgcheck already knows of each, and adds every host whose GPU nothing states to ``nodes:`` with a
``# fill in`` comment. ruamel's round-trip loader finds where the map is; the new lines are inserted as
text, so every other byte of the configuration (keys, comments, quoting, order) stays as it was; a host
already in the map is left alone; the file must be inside the repository (a ``.cfgcheck.yaml`` that
links elsewhere is refused), and the result is validated against the schema before it is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from .capacity.fleet import pinned_host
from .cluster import Fleet
from .capacity.gpus import resolve_accelerator
from .config import NAMES, PYPROJECT, Config, validate
from .errors import ConfigError, UsageError
from .lint import gather
from .paths import UnsafePath, inside_repo
from .textsafe import neutralise


@dataclass(eq=False)
class Survey:
    """What ``init`` found: host -> (the GPU stated for it or None, who uses it), the node pools, and
    one line per served model."""

    hosts: dict[str, tuple[str | None, list[str]]] = field(default_factory=dict)
    pools: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


def survey(paths: list[Path], config: Config) -> Survey:
    models = [m for m in gather(paths, config).models if not m.template]
    fleet: Fleet | None = next((m.cluster for m in models if m.cluster is not None), None)
    found = Survey()
    settings = config.as_dict()
    for model in models:
        resolution = resolve_accelerator(model, settings)
        host = pinned_host(model)
        gpu = resolution.accelerator.name if resolution.accelerator is not None else None
        how = ("assumed: " + resolution.assumed) if resolution.assumed else resolution.origin
        found.models.append(f"{model.name}  {model.path}:{model.location.line}" + (f"  host {host}" if host else "")
                            + (f"  GPU {gpu} ({how})" if gpu else "  GPU unknown"))
        if host is not None:
            stated = gpu if resolution.accelerator is not None and not resolution.assumed else None
            _use(found, host, stated, model.name)
    for pool in (fleet.settle().pools if fleet is not None else []):
        gpus = sorted({offer.gpu.name for offer in pool.offers if offer.gpu is not None})
        found.pools.append(f"{pool.where()}: {', '.join(gpus) or 'GPU not stated'}"
                           + (f" (assumed: {pool.assumed})" if pool.assumed else ""))
        for host in pool.hosts:
            _use(found, host, gpus[0] if len(gpus) == 1 and not pool.assumed else None, None)
    served = {(model.path, pinned_host(model)) for model in models}
    for host, where in (fleet.hosts.items() if fleet is not None else []):
        _use(found, host, None, None if (where.path, host) in served else f"a GPU workload at {where.path}:{where.line}")
    return found


def _use(found: Survey, host: str, gpu: str | None, user: str | None) -> None:
    stated, users = found.hosts.get(host, (None, []))
    found.hosts[host] = (stated or gpu, users + ([user] if user and user not in users else []))


def report(found: Survey, written: list[str], target: str) -> str:
    lines = ["Nodes:"] + [f"  {host}  {gpu or 'GPU not stated'}" + (f"  used by {', '.join(users)}" if users else "")
                          for host, (gpu, users) in sorted(found.hosts.items())]
    if len(lines) == 1:
        lines.append("  (no host name: no workload is pinned to a node, no node is defined)")
    lines += ["Node pools:"] + ([f"  {pool}" for pool in found.pools] or ["  (none defined)"])
    lines += ["Served models:"] + ([f"  {model}" for model in found.models] or ["  (none found)"])
    if written:
        lines.append(f"Wrote {target}: nodes: {', '.join(written)} (fill in the GPU of each, e.g. RTX-3090)")
    else:
        lines.append(f"{target}: nothing to add (every host named has a GPU stated, or none is named)")
    return "\n".join(neutralise(line) for line in lines) + "\n"


def target_file(config: Config) -> Path:
    """The configuration file ``init`` edits: the one in use when it is YAML, else ``.cfgcheck.yaml``."""
    if config.source is not None and config.source.name == PYPROJECT:
        raise UsageError(f"the configuration is [tool.cfgcheck] in {PYPROJECT}: add `nodes:` there by hand "
                         "(init edits YAML only)")
    written = config.source if config.source is not None else config.root / NAMES[0]
    try:
        return inside_repo(config.root, written, what="configuration file", links=False)
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None


def write_map(path: Path, found: Survey) -> list[str]:
    """Add every host whose GPU nothing states to ``nodes:`` of ``path``; the hosts added. ruamel's
    round-trip loader says where ``nodes:`` and its last entry are; the new lines are inserted there as
    text, so every other byte of the file stays as the user wrote it."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        data = YAML().load(text) if text.strip() else None
    except YAMLError as exc:
        raise ConfigError(f"{path.name}: not valid YAML ({type(exc).__name__}); fix it before init edits it") from None
    data = CommentedMap() if data is None else data
    if not isinstance(data, CommentedMap):
        raise ConfigError(f"{path.name}: expected a mapping at the top level")
    nodes = data.get("nodes")
    if nodes is not None and not isinstance(nodes, CommentedMap):
        raise ConfigError(f"{path.name}: nodes: expected a mapping of host names to GPUs")
    added = [host for host, (gpu, _) in sorted(found.hosts.items()) if gpu is None and (nodes is None or host not in nodes)]
    if not added:
        return []
    lines = text.split("\n") if text else []
    if lines and lines[-1] == "":
        lines.pop()
    at, indent = _insertion(data, nodes, lines)
    entries = [f"{indent}{host}:  # fill in: the GPU of {host} (e.g. RTX-3090)" + (
        f"; runs {', '.join(found.hosts[host][1][:3])}" if found.hosts[host][1] else "") for host in added]
    lines[at:at] = entries
    new = "\n".join(lines) + "\n"
    validate(YAML(typ="safe").load(new), path.name)
    _replace(path, new)
    return added


def _insertion(data: CommentedMap, nodes: CommentedMap | None, lines: list[str]) -> tuple[int, str]:
    """(the line index the new entries go at, their indentation); adds ``nodes:`` when it is missing or
    written on one line (``nodes: {}``)."""
    if nodes is None:
        lines.append("nodes:")
        return len(lines), "  "
    line = data.lc.key("nodes")[0]
    if not nodes or nodes.fa.flow_style():
        if nodes:
            raise ConfigError("nodes: written as a flow mapping ({...}); write it as a block for init to extend it")
        lines[line] = lines[line][:data.lc.key("nodes")[1]] + "nodes:"
        return line + 1, "  "
    last = list(nodes)[-1]
    key_line, column = nodes.lc.key(last)
    end = key_line + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > column):
        end += 1  # the last entry's value and comments below it
    while end > key_line + 1 and not lines[end - 1].strip():
        end -= 1
    return end, " " * column


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, so a failure leaves the old file."""
    temporary = path.with_name(f".{path.name}.cfgcheck-init")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ConfigError(f"cannot write {path.name}: {exc.strerror or exc}") from None


def run(paths: list[Path], config: Config, dry_run: bool = False) -> str:
    """``cfgcheck init``: the survey as text, the map written unless ``dry_run``."""
    target = target_file(config)
    found = survey(paths, config)
    written = [] if dry_run else write_map(target, found)
    shown = os.path.relpath(target, config.root)
    text = report(found, written, shown)
    if dry_run:
        text += f"(--dry-run: {shown} not written)\n"
    return text

