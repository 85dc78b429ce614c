"""Any team's values layout, mapped onto served models by ``.cfgcheck.yaml``:

```yaml
values:
  - files: ["environments/*/values/inference.yaml"]   # globs over repo-relative paths
    models: "models.*"        # each key (or list item) matched is one served model, named by its key
    engine: vllm              # optional when the image says it
    settings:                 # canonical setting -> dotted path inside one model's values
      image: image            # a string, or {repository, tag}
      model: model
      max_model_len: serving.contextSize
      max_num_seqs: serving.maxNumSeqs
      extra_args: serving.extraArgs      # list or string, appended after the typed settings
```

Typed settings become the engine's flags (as an operator would pass them) and ``extra_args`` come
after them, so a flag there overrides a typed setting exactly as with LLMKube ``extraArgs``. Every
setting's ``source`` is its dotted path from the document root, and its location is the value node.
"""

from __future__ import annotations

import fnmatch

from ... import lazy
from ...engines.argv import apply_argv
from ...settings import flag, parse
from ...model import ArgToken, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import operator_tokens, finish, set_image, to_int
from ..core.node_at_location import value_of_key_at
from ..launch.held_values import values_sources
from ..launch.shell import argv_tokens

SPECIAL = {"image", "model", "model_revision", "gpus", "replicas", "extra_args", "strategy"}
_INDEX = lazy.Pattern(r"^(.*)\[(\d+)\]$")
# Files are chosen by the ``files:`` globs of the user's ``values:`` mappings (see ``lint.serving_filter``).
MARKERS: tuple[str, ...] = ()


def entries_for(config: dict, path: str) -> list[dict]:
    found = []
    for entry in config.get("values") or []:
        if isinstance(entry, dict) and any(fnmatch.fnmatchcase(path, pattern) for pattern in entry.get("files", [])):
            found.append(entry)
    return found


def split_path(dotted: str) -> list[str | int]:
    parts: list[str | int] = []
    for part in dotted.split("."):
        match = _INDEX.match(part)
        if match:
            if match.group(1):
                parts.append(match.group(1))
            parts.append(int(match.group(2)))
        elif part.isdigit():
            parts.append(int(part))
        elif part:
            parts.append(part)
    return parts


def resolve(node: YNode, parts: list[str | int]) -> tuple[YNode | None, YNode | None, YNode | None]:
    """(parent, key node, value node) at ``parts`` below ``node``."""
    parent, key = None, None
    for part in parts:
        if node is None:
            return None, None, None
        parent = node
        if isinstance(part, int):
            key, node = None, node.value[part] if node.kind == "seq" and 0 <= part < len(node.value) else None
        else:
            key, node = node.key_node(part), node.get(part)
    return parent, key, node


def expand(node: YNode, parts: list[str], trail: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], YNode, YNode | None]]:
    """(path parts, model node, key node) for every match of a path with ``*`` segments."""
    if not parts:
        return [(trail, node, None)]
    head, rest = parts[0], parts[1:]
    found = []
    if head == "*":
        if node.kind == "map":
            for key, value in node.items():
                if key.kind == "scalar":
                    found.extend((p, n, k if k is not None or rest else key) for p, n, k in
                                 expand(value, rest, trail + (str(key.value),)))
        elif node.kind == "seq":
            for index, item in enumerate(node.value):
                label = item.scalar("name", default=index) if item.kind == "map" else index
                found.extend((p, n, k) for p, n, k in expand(item, rest, trail + (f"[{index}]" if label == index else str(label),)))
        return found
    child = node.get(head) if node.kind == "map" else None
    return expand(child, rest, trail + (head,)) if child is not None else []


def flag_for(engine: str, canonical: str) -> str:
    return flag(engine, canonical) or "--" + canonical.replace("_", "-")


def setting_home(model: ServedModel, root: YNode, name: str, config: dict) -> tuple[YNode, list] | None:
    """Protocol hook for ``propose``: the values path the user's mapping gives for setting ``name``."""
    node = value_of_key_at(root, model.location, model.path) if model.kind == "values" else None
    for entry in entries_for(config, model.path) if node is not None else []:
        dotted = (entry.get("settings") or {}).get(name)
        if isinstance(dotted, str):
            return node, split_path(dotted)
    return None


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    entries = entries_for(ctx.workspace.config, ctx.path)
    if not entries:
        return []
    sources = values_sources(ctx, root) or [(ctx, root, "", None)]
    found: list[ServedModel] = []
    for number, entry in enumerate(entries):
        for values_ctx, values, prefix, _ in sources:
            pattern = entry.get("models")
            parts = [p for p in pattern.split(".") if p] if pattern else []
            for trail, node, key in expand(values, parts):
                if node.kind != "map":
                    continue
                model = _model(values_ctx, entry, node, key, prefix, trail, number)
                if model is not None:
                    found.append(finish(model))
    return found


def _model(ctx: DocContext, entry: dict, node: YNode, key: YNode | None, prefix: str,
           trail: tuple[str, ...], number: int) -> ServedModel | None:
    model_path = prefix + ".".join(trail).replace(".[", "[")
    label = trail[-1] if trail else ctx.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    model = ctx.new_model(str(label), "values", key or node, f"values/{model_path or label}")
    mapping: dict = entry.get("settings") or {}
    base = f"{model_path}." if model_path else ""
    model.setting_keys.update({name: f"{base}{dotted}" for name, dotted in mapping.items() if isinstance(dotted, str)})
    engine = entry.get("engine")
    if "image" in mapping:
        parent, key_node, value = resolve(node, split_path(mapping["image"]))
        if value is not None and parent is not None:
            if value.kind == "map":
                setting = _image_map(ctx, value, f"{base}{mapping['image']}")
            else:
                setting = ctx.setting("image", key_node, value, f"{base}{mapping['image']}")
            set_image(ctx, model, setting)
    model.engine = engine or model.engine
    synthetic: list[ArgToken] = []
    for canonical, dotted in mapping.items():
        if canonical in ("image", "extra_args") or not isinstance(dotted, str):
            continue
        _, key_node, value = resolve(node, split_path(dotted))
        if value is None or (value.kind == "scalar" and value.value is None):
            continue
        source = f"{base}{dotted}"
        if canonical in ("gpus", "replicas"):
            setattr(model, canonical, ctx.setting(canonical, key_node, value, source, to_int, origin="values"))
            continue
        if canonical == "strategy":
            model.strategy = ctx.setting("strategy", key_node, value, source, origin="values")
            continue
        setting = ctx.setting(canonical, key_node, value, source, origin="values")
        if isinstance(setting.value, str) and canonical not in ("model", "model_revision"):
            setting.value = parse(canonical, setting.value, model.engine)
        model.add(setting)
        if canonical in ("model", "model_revision"):
            continue
        synthetic.extend(operator_tokens(setting, flag_for(model.engine, canonical)))
    model.argv.extend(synthetic)
    if "extra_args" in mapping:
        _, _, value = resolve(node, split_path(mapping["extra_args"]))
        extra = argv_tokens(ctx, value, "extraArgs")
        if extra:
            model.argv.extend(extra)
            apply_argv(model, extra)
    if model.strategy is None:
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "values mapping default")
    return model


def _image_map(ctx: DocContext, image: YNode, source: str) -> Setting | None:
    repository, tag = image.get("repository"), image.get("tag")
    if repository is None or repository.kind != "scalar":
        return None
    anchor = "tag" if tag is not None and tag.kind == "scalar" else "repository"
    setting = ctx.setting("image", image.key_node(anchor), image.get(anchor), f"{source}.{anchor}")
    setting.value = f"{repository.value}:{tag.value}" if anchor == "tag" else str(repository.value)
    return setting
