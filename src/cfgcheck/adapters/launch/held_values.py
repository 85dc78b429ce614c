"""Where a deployment object keeps the chart values it installs a chart with: the one reader of it, for
the formats that read chart values (``formats/chart_values.py``, ``formats/mapped.py``,
``formats/kubeai.py``) and for the renderer's resolver of the repository's own deployments of a local
chart (``render/deployments.py``).

- A Flux ``HelmRelease``: ``spec.values`` (helm-controller, docs/api/v2/helm.md: "Values holds the values
  for this Helm release"); ``spec.valuesFrom`` names ConfigMaps and Secrets and is not read here.
- An Argo CD ``Application``: each source, ``spec.source`` then each of ``spec.sources``, with
  ``helm.valuesObject`` (a mapping) and ``helm.values`` (a string holding YAML) (argo-cd docs,
  user-guide/helm.md, "Values"); an ``ApplicationSet``'s ``spec.template.spec`` is an Application's spec.
- A helmfile (``helmfile.yaml``): each ``releases[]`` entry's ``values:`` list, whose entries are values
  file names or inline mappings (helmfile docs, "Values Files"); read only for a caller that asks.
- Any other document without ``apiVersion`` or ``kind``: a values file, the values themselves.
"""

from __future__ import annotations

from ...yamlio import YNode, parse_text
from ..core.contexts import DocContext

# (context, values mapping, key path it sits at with a trailing dot, release name)
Values = tuple[DocContext, YNode, str, "str | None"]


def argo_sources(spec: YNode | None, path: str = "spec") -> list[tuple[YNode, str]]:
    """An Argo CD Application's spec (or an ApplicationSet's template spec) -> each source mapping with
    its key path (``spec.source``, ``spec.sources[1]``)."""
    if spec is None or spec.kind != "map":
        return []
    source, many = spec.get("source"), spec.get("sources")
    found = [(source, f"{path}.source")] if source is not None and source.kind == "map" else []
    if many is not None and many.kind == "seq":
        found += [(item, f"{path}.sources[{i}]") for i, item in enumerate(many.value) if item.kind == "map"]
    return found


def argo_values(source: YNode) -> list[tuple[YNode, str]]:
    """The inline values one Argo CD source writes, each (node, key path below the source): its
    ``helm.valuesObject`` and its ``helm.values``, when not empty (whatever their shape: Argo CD renders
    the chart with them, or refuses the Application)."""
    helm = source.get("helm")
    if helm is None or helm.kind != "map":
        return []
    return [(node, f"helm.{key}") for key in ("valuesObject", "values")
            if (node := helm.get(key)) is not None and node.value]


def values_sources(ctx: DocContext, root: YNode, releases: bool = False) -> list[Values]:
    """(context, values mapping, key prefix, release name) for each set of chart values the document
    holds (the module's docstring); an Argo CD ``values`` string is parsed and located at its lines in the
    file (``embedded_yaml``). ``releases``: a helmfile's releases' inline values too."""
    kind = root.scalar("kind")
    name = root.scalar("metadata", "name")
    release = str(name) if name is not None else None
    found: list[Values] = []
    if kind == "HelmRelease":
        values = root.path("spec", "values")
        if values is not None and values.kind == "map":
            found.append((ctx, values, "spec.values.", release))
        return found
    if kind == "Application":
        for source, path in argo_sources(root.get("spec")):
            for node, key in argo_values(source):
                parsed = (ctx, node) if key == "helm.valuesObject" and node.kind == "map" else \
                    embedded_yaml(ctx, node) if key == "helm.values" else None
                if parsed is not None:
                    found.append((parsed[0], parsed[1], f"{path}.{key}.", release))
        return found
    if root.get("apiVersion") is None and kind is None:
        found.append((ctx, root, "", None))
        found += _release_values(ctx, root) if releases else []
    return found


def _release_values(ctx: DocContext, root: YNode) -> list[Values]:
    """A helmfile's ``releases[].values[]`` entries written inline (a mapping, not a file name)."""
    listed = root.get("releases")
    found: list[Values] = []
    for i, entry in enumerate(listed.value if listed is not None and listed.kind == "seq" else ()):
        values = entry.get("values") if entry.kind == "map" and entry.get("chart") is not None else None
        name = entry.scalar("name") if values is not None else None
        for j, item in enumerate(values.value if values is not None and values.kind == "seq" else ()):
            if item.kind == "map":
                found.append((ctx, item, f"releases[{i}].values[{j}].", str(name) if name is not None else None))
    return found


def embedded_yaml(ctx: DocContext, node: YNode) -> tuple[DocContext, YNode] | None:
    """Parse a string holding YAML so that every node keeps its line (and, for a literal block, its
    column) in the enclosing file: the lines before the block's content are blanked, not dropped."""
    if node.kind != "scalar" or not isinstance(node.value, str) or not node.value.strip():
        return None
    text = ctx.loaded.text
    if node.style == "|":
        header_end = text.find("\n", node.start_index) + 1
        if header_end <= 0:
            return None
        padded = "\n" * text.count("\n", 0, header_end) + text[header_end:node.end_index]
    else:
        padded = "\n" * (node.line - 1) + node.value
    sub = parse_text(ctx.path, padded)
    if sub.error is not None or not sub.documents or sub.documents[0].root is None \
            or sub.documents[0].root.kind != "map":
        return None
    return DocContext(sub, sub.documents[0], ctx.workspace, ctx.first_line), sub.documents[0].root
