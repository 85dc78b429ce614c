"""YAML written inside a YAML string (a RayService ``serveConfigV2``, a KAITO ``inference_config.yaml``
ConfigMap key), parsed so that every node keeps the line and column it has in the file.

A literal block scalar (``|``, ``|-``, ``|+``) holds its lines verbatim, only indented: the file's own
lines, with the lines before the block blanked, parse to the same document at the same positions (a
mapping may start at any column). Other styles (quoted, folded) change the text, so their document is
located at the string as a whole.
"""

from __future__ import annotations

from ...yamlio import LoadedFile, YNode, parse_text
from .contexts import DocContext


def embedded_document(ctx: DocContext, node: YNode | None) -> tuple[DocContext, YNode] | None:
    """(a context whose locations are in ``ctx``'s file, the root mapping) of the YAML in string
    ``node``; None when it is not a string holding a YAML mapping."""
    if node is None or node.kind != "scalar" or not isinstance(node.value, str):
        return None
    if node.style == "|":
        lines = ctx.loaded.text.splitlines(keepends=True)
        # content starts on the line below the indicator and ends before the end mark's line when
        # that mark is at its first column (the next key)
        first = node.line
        last = min(node.end_line - 1 if node.end_column == 1 else node.end_line, len(lines))
        text = "\n" * first + "".join(lines[first:last])
        inner = _parse(ctx, text)
        if inner is not None:
            return inner
    inner = _parse(ctx, node.value)
    if inner is None:
        return None
    inner_ctx, root = inner
    return _Relocated(inner_ctx.loaded, inner_ctx.document, ctx.workspace, at=ctx.location(node)), root


def _parse(ctx: DocContext, text: str) -> tuple[DocContext, YNode] | None:
    loaded: LoadedFile = parse_text(ctx.path, text)
    if loaded.error is not None or not loaded.documents:
        return None
    document = loaded.documents[0]
    if document.root is None or document.root.kind != "map":
        return None
    return DocContext(loaded, document, ctx.workspace), document.root


class _Relocated(DocContext):
    """A document parsed from a string whose style changed its text: every node is located at the
    string in the file (the closest place that is true)."""

    def __init__(self, loaded, document, workspace, at) -> None:
        super().__init__(loaded, document, workspace)
        self._at = at

    def location(self, node: YNode):
        return self._at

    def comments(self, line: int) -> tuple[str, ...]:
        return ()
