"""Terraform (``.tf``, ``.tfvars``) node pools, read with python-hcl2's HCL parser, as node pools of the
run (``capacity.fleet``): GKE ``google_container_node_pool`` and the ``node_pool`` blocks of
``google_container_cluster`` (``node_config.machine_type``, ``guest_accelerator``, ``labels``, ``taint``;
nodes carry ``cloud.google.com/gke-nodepool``), the GKE module's ``node_pools`` list; EKS
``aws_eks_node_group`` and the EKS module's ``eks_managed_node_groups`` / ``self_managed_node_groups``
(``instance_types``, ``labels``, ``taint``; nodes carry ``eks.amazonaws.com/nodegroup``); AKS
``azurerm_kubernetes_cluster_node_pool`` and ``default_node_pool`` (``vm_size``, ``node_labels``,
``node_taints``; nodes carry ``kubernetes.azure.com/agentpool``).

And the containers of any provider's resource (or a block inside it) whose image is an engine image: ``image``,
``container_image`` or the first of ``container_images`` (a GPU cloud's deployment template, a
``kubernetes_deployment``'s ``container``, a ``docker_container``), with ``command`` and ``args`` /
``container_args`` as the container's entrypoint and arguments: one served model each, whose argv is the whole
command (an empty ``container_args`` starts the image's engine with no model).

A value written as ``var.NAME`` is the variable's value in ``terraform.tfvars`` or a ``*.auto.tfvars``
of the same folder (which Terraform loads by itself), else its ``default``; ``local.NAME`` the folder's
``locals``. They may be in files read later, so the pools are made once every file is read (``Fleet.late``).
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from typing import Any

import hcl2
from hcl2.api import parses

from ...cluster import Fleet, NodePool, Taint
from ...engines.images import parse_image
from ...model import ArgToken, Location, ServedModel, Setting
from ...yamlio import Comment, LoadedFile
from ..core.contexts import Workspace, file_comments
from ..core.recognition import apply_launch, finish, set_image
from ..core.fleet import commented_gpu, file_notes, fleet, gpu_offer, instance_offer, parse_taint, taint

MARKERS = ("node_pool", "node_group", "guest_accelerator", "instance_types", "vm_size", "machine_type", 'variable "',
           "vllm", "sglang", "tokenspeed", "llama")
SUFFIXES = (".tf", ".tfvars", ".tf.txt")  # .tf.txt: a Terraform file kept as text beside the code that uses it
NAMES = ("variables.tf", "terraform.tfvars")
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
_REFERENCE = re.compile(r"^\$\{(var|local)\.([A-Za-z_][A-Za-z0-9_-]*)\}$")


@lru_cache(maxsize=4)
def _parsed(text: str) -> tuple[Any, dict | None]:
    """(the parse tree, the body with block lines), or (None, None) when HCL cannot be parsed."""
    try:
        tree = parses(text)
        return tree, hcl2.transform(tree, with_meta=True)
    except Exception:  # lark's errors and the transformer's: a file Terraform would refuse is not read
        return None, None


def scan_comments(text: str) -> dict[int, Comment]:
    """``#``, ``//`` and ``/* */`` comments, as the HCL parser's tokens give them."""
    tree, _ = _parsed(text)
    lines = text.split("\n")
    found: dict[int, Comment] = {}
    for token in tree.scan_values(lambda v: getattr(v, "type", None) == "NL_OR_COMMENT") if tree is not None else []:
        offset = 0
        for part in str(token).split("\n"):
            stripped = part.strip()
            if stripped.startswith(("#", "//", "/*")):
                line = token.line + offset
                column = (token.column if offset == 0 else 1) + len(part) - len(part.lstrip())
                body = re.sub(r"^(#|//|/\*)\s*|\s*\*/$", "", stripped)
                before = lines[line - 1][:column - 1] if line <= len(lines) else ""
                found.setdefault(line, Comment(line, column, body, not before.strip()))
            offset += 1
    return found


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    _, body = _parsed(loaded.text)
    if body is None:
        return []
    space = workspace.space(__name__, dict)
    folder = posixpath.dirname(loaded.path)
    values = space.setdefault(folder, {"var": {}, "local": {}, "set": {}})
    if loaded.path.endswith(".tfvars"):
        if loaded.path.endswith((".auto.tfvars", "/terraform.tfvars")) or loaded.path == "terraform.tfvars":
            values["set"].update({k: v for k, v in body.items() if not k.startswith("__")})
        return []
    for block in body.get("variable", []):
        for name, spec in block.items():
            if isinstance(spec, dict) and "default" in spec:
                values["var"][name] = spec["default"]
    for block in body.get("locals", []):
        values["local"].update({k: v for k, v in block.items() if not k.startswith("__")})
    groups = space.setdefault("groups", [])
    groups.extend((loaded, folder, group) for group in _groups(body))
    if groups and not space.get("late"):
        space["late"] = True
        fleet(workspace).late.append(lambda found: _settle(found, space))
    return [finish(model) for model in _containers(loaded, body)]


# a container's image, entrypoint and arguments as the providers' resources name them
_IMAGE_KEYS = ("image", "container_image", "container_images")
_COMMAND_KEYS = ("command", "container_command", "entrypoint")
_ARGS_KEYS = ("args", "container_args")
CONTAINER_KIND = "Terraform container"


def _containers(loaded: LoadedFile, body: dict) -> list[ServedModel]:
    """A served model for each block of the file's resources whose image is an engine image (the module's docstring)."""
    found: list[ServedModel] = []
    for block in body.get("resource", []):
        for rtype, named in block.items():
            for rname, spec in (named.items() if isinstance(named, dict) else []):
                for path, inner in _blocks(spec, f"{rtype}.{rname}"):
                    model = _container(loaded, path, inner)
                    found.extend([model] if model is not None else [])
    return found


def _blocks(spec: Any, path: str) -> list[tuple[str, dict]]:
    """``spec`` and the nested blocks inside it, each with its address (``kubernetes_deployment.k.spec.template``)."""
    if isinstance(spec, list):
        return [found for item in spec for found in _blocks(item, path)]
    if not isinstance(spec, dict):
        return []
    return [(path, spec)] + [found for key, value in spec.items() if isinstance(value, list) and not key.startswith("__")
                             for found in _blocks(value, f"{path}.{key}")]


def _container(loaded: LoadedFile, path: str, spec: dict) -> ServedModel | None:
    key = next((k for k in _IMAGE_KEYS if k in spec), None)
    image = spec.get(key)
    image = image[0] if isinstance(image, list) and image else image
    # a reference to another resource's image (``${...container_images[0]}``) is that resource's container
    if not isinstance(image, str) or "${" in image or parse_image(image).engine is None or "__start_line__" not in spec:
        return None
    lines = (spec["__start_line__"], spec.get("__end_line__", spec["__start_line__"]))
    at = _token(loaded, image, _attribute_line(loaded, key, lines))
    model = ServedModel(name=path.split(".")[1], kind=CONTAINER_KIND, path=loaded.path, document=0, location=at.location,
                        identity=f"{loaded.path}#{path}")
    set_image(None, model, Setting("image", image, at.location, key, at.comments, at.location, image, "terraform"))
    tokens = []
    for keys in (_COMMAND_KEYS, _ARGS_KEYS):
        written = next((k for k in keys if isinstance(spec.get(k), list)), None)
        line = _attribute_line(loaded, written, lines) if written else lines[0]
        tokens += [_token(loaded, str(word), line) for word in (spec.get(written) or [] if written else [])]
    own_entrypoint = any(isinstance(spec.get(k), list) and spec.get(k) for k in _COMMAND_KEYS)
    engine = model.engine if model.engine != "unknown" and not own_entrypoint else None
    if not apply_launch(None, model, tokens, engine):
        return None
    model.comments = file_comments(loaded)
    return model


def _attribute_line(loaded: LoadedFile, key: str, lines: tuple[int, int]) -> int:
    """The line of ``key = ...`` inside the block at ``lines`` (python-hcl2 gives lines to blocks only)."""
    written = loaded.text.split("\n")
    for number in range(lines[0], min(lines[1], len(written)) + 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", written[number - 1]):
            return number
    return lines[0]


def _token(loaded: LoadedFile, word: str, line: int) -> ArgToken:
    """``word`` located where it is first written as a string from ``line`` on (a list may span lines)."""
    written = loaded.text.split("\n")
    for number in range(line, min(line + 50, len(written)) + 1):
        column = written[number - 1].find(f'"{word}"')
        if column >= 0:
            return ArgToken(word, Location(loaded.path, number, column + 2, number, column + 2 + len(word)),
                            loaded.comments_for(number), "args")
    return ArgToken(word, Location(loaded.path, line, 1), loaded.comments_for(line), "args")


def _groups(body: dict) -> list[dict]:
    """Each node group or pool of the file: kind, name, instance types (raw), labels, taints, line."""
    found = []
    for block in body.get("resource", []):
        for rtype, named in block.items():
            for rname, spec in (named.items() if isinstance(named, dict) else []):
                if isinstance(spec, dict):
                    found.extend(_resource(rtype, rname, spec))
    for block in body.get("module", []):
        for mname, spec in block.items():
            if isinstance(spec, dict):
                found.extend(_module(mname, spec))
    return found


def _first(value: Any) -> dict:
    """An HCL block as python-hcl2 gives it: a list of one mapping."""
    return value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value \
        if isinstance(value, dict) else {}


def _resource(rtype: str, rname: str, spec: dict) -> list[dict]:
    line = spec.get("__start_line__", 1)
    if rtype == "google_container_node_pool":
        return [_gke(spec.get("name", rname), _first(spec.get("node_config")), line)]
    if rtype == "google_container_cluster":
        return [_gke(pool.get("name", rname), _first(pool.get("node_config")), pool.get("__start_line__", line))
                for pool in spec.get("node_pool", []) if isinstance(pool, dict)]
    if rtype == "aws_eks_node_group":
        taints = [_taint(t) for t in spec.get("taint", []) if isinstance(t, dict)]
        return [_eks(spec.get("node_group_name", rname), spec.get("instance_types"), spec.get("labels"), taints, line)]
    if rtype == "azurerm_kubernetes_cluster_node_pool":
        return [_aks(spec, rname, line)]
    if rtype == "azurerm_kubernetes_cluster":
        pool = _first(spec.get("default_node_pool"))
        return [_aks(pool, "default", pool.get("__start_line__", line))] if pool else []
    return []


def _gke(name: Any, config: dict, line: int) -> dict:
    accelerator = _first(config.get("guest_accelerator"))
    taints = [_taint(t) for t in config.get("taint", []) if isinstance(t, dict)]
    return {"kind": "Terraform GKE node pool", "name": name, "types": config.get("machine_type"),
            "gpu": accelerator.get("type"), "count": accelerator.get("count"), "labels": config.get("labels"),
            "pool_label": "cloud.google.com/gke-nodepool", "taints": taints, "line": line}


def _eks(name: Any, types: Any, labels: Any, taints: list, line: int) -> dict:
    return {"kind": "Terraform EKS node group", "name": name, "types": types, "labels": labels,
            "pool_label": "eks.amazonaws.com/nodegroup", "taints": taints, "line": line}


def _aks(spec: dict, name: str, line: int) -> dict:
    taints = spec.get("node_taints") or []
    return {"kind": "Terraform AKS node pool", "name": spec.get("name", name), "types": spec.get("vm_size"),
            "labels": spec.get("node_labels"), "pool_label": "kubernetes.azure.com/agentpool",
            "taints": [t if not isinstance(t, str) else parse_taint(t) for t in taints], "line": line}


def _taint(spec: dict) -> Taint | None:
    effect = spec.get("effect")
    return taint(spec.get("key"), spec.get("value"), _EFFECTS.get(str(effect).upper(), effect))


def _module(mname: str, spec: dict) -> list[dict]:
    """The EKS module's node-group maps and the GKE module's ``node_pools`` list."""
    line = spec.get("__start_line__", 1)
    found = []
    for key in ("eks_managed_node_groups", "self_managed_node_groups"):
        groups = spec.get(key)
        for gname, group in (groups.items() if isinstance(groups, dict) else []):
            if isinstance(group, dict):
                taints = group.get("taints") or {}
                listed = taints.values() if isinstance(taints, dict) else taints
                found.append(_eks(group.get("name", gname), group.get("instance_types") or group.get("instance_type"),
                                  group.get("labels"), [_taint(t) for t in listed if isinstance(t, dict)], line)
                             | {"entry": gname})
    labels, taints = spec.get("node_pools_labels") or {}, spec.get("node_pools_taints") or {}
    for pool in spec.get("node_pools") or [] if isinstance(spec.get("node_pools"), list) else []:
        if isinstance(pool, dict) and "name" in pool:
            name = pool["name"]
            listed = taints.get(name, []) if isinstance(taints, dict) else []
            found.append({"kind": "Terraform GKE node pool", "name": name, "types": pool.get("machine_type"),
                          "gpu": pool.get("accelerator_type"), "count": pool.get("accelerator_count"),
                          "labels": {**(labels.get("all") or {}), **(labels.get(name) or {})} if isinstance(labels, dict)
                          else {}, "pool_label": "cloud.google.com/gke-nodepool",
                          "taints": [_taint(t) for t in listed if isinstance(t, dict)], "line": line, "entry": name})
    return found


def _settle(found: Fleet, space: dict) -> None:
    for loaded, folder, group in space.pop("groups", []):
        values = space.get(folder, {"var": {}, "local": {}, "set": {}})
        found.pools.append(_pool(loaded, group, values))


def _value(raw: Any, values: dict) -> tuple[Any, str | None]:
    """A written value with ``var.X`` / ``local.X`` replaced; (None, why) when it cannot be."""
    if isinstance(raw, list):
        parts = [_value(item, values) for item in raw]
        why = next((w for _, w in parts if w), None)
        return (None, why) if why else ([v for v, _ in parts], None)
    match = _REFERENCE.match(raw) if isinstance(raw, str) else None
    if match is None:
        return (None, f"{raw} is an expression cfgcheck does not evaluate") if isinstance(raw, str) and "${" in raw \
            else (raw, None)
    kind, name = match.groups()
    if kind == "var" and name in values["set"]:
        return _value(values["set"][name], values)
    table = values["var"] if kind == "var" else values["local"]
    if name not in table:
        return None, f"{kind}.{name} has no {'default' if kind == 'var' else 'value'} in its folder"
    return _value(table[name], values)


def _pool(loaded: LoadedFile, group: dict, values: dict) -> NodePool:
    name = str(_value(group["name"], values)[0] or group.get("entry") or "pool")
    labels, _ = _value(group.get("labels"), values)
    labels = {str(k): str(v) for k, v in labels.items() if not str(k).startswith("__")} if isinstance(labels, dict) else {}
    line = _entry_line(loaded, group)
    pool = NodePool(name, group["kind"], Location(loaded.path, line, 1), {**labels, group["pool_label"]: name})
    pool.taints = [t for t in group.get("taints", []) if t is not None]
    types, why = _value(group.get("types"), values)
    gpu, _ = _value(group.get("gpu"), values)
    count, _ = _value(group.get("count"), values)
    if isinstance(gpu, str):
        pool.offers = [gpu_offer(gpu, count if isinstance(count, int) else None,
                                 {"cloud.google.com/gke-accelerator": gpu})]
    else:
        pool.offers = [instance_offer(str(t)) for t in ([types] if isinstance(types, str) else types or [])]
    if not any(offer.gpu is not None for offer in pool.offers):
        pool.unknown = why or f"instance types {', '.join(o.what for o in pool.offers) or 'not stated'}"
    return commented_gpu(pool, file_notes(loaded, [line]))


def _entry_line(loaded: LoadedFile, group: dict) -> int:
    """The line of a module's map entry (python-hcl2 gives lines to blocks only): the first line of the
    module block that assigns to the entry's key."""
    line = group["line"]
    entry = group.get("entry")
    if entry is None:
        return line
    lines = loaded.text.split("\n")
    for number in range(line, len(lines) + 1):
        text = lines[number - 1].strip()
        if text.startswith((f"{entry} ", f"{entry}=", f'"{entry}"', f"name = \"{entry}\"")):
            return number
    return line
