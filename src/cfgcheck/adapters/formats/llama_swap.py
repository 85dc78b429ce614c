"""llama-swap configurations: a proxy that starts one engine per model on demand, each from its ``cmd:``.

A configuration (a ``config.yaml`` of its own, or a ConfigMap key holding it) has ``models:``, a mapping
of model names to ``cmd`` (the command llama-swap runs: llama-server, vLLM, a ``docker run``) and
``macros:`` (``${name}`` in a command is replaced by the macro's text; ``${PORT}`` is the port llama-swap
picks, ``${MODEL_ID}`` the model's name). llama-swap reads ``cmd`` as one command line: lines that start
with ``#`` are dropped and the rest split like a shell would, newlines being spaces
(mostlygeek/llama-swap ``proxy/config.go``: ``SanitizeCommand`` and the macro substitution). Each model
is one served model; a word that comes from a macro is located at the ``${name}`` that brings it in.
"""

from __future__ import annotations

import re

from ...model import ServedModel
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import is_resource
from ..core.yaml_in_strings import embedded_document
from ..launch.scripts import scalar_launches, script_model

MARKERS = ("cmd:",)
# llama-swap macro names (config.go: ^[a-zA-Z0-9_-]+$): a ${name} with a dash is read as the same-length
# name with an underscore, which the shell reader takes for a variable
_MACRO = re.compile(r"\$\{([A-Za-z0-9_-]+)\}")
_COMMENT_LINE = re.compile(r"(?m)^[ \t]*#[^\n]*")
MAX_MACRO_DEPTH = 8  # macros may use macros; a cycle stops here


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if is_resource(root, "", "ConfigMap"):
        data = root.get("data")
        found: list[ServedModel] = []
        for key, value in data.items() if data is not None and data.kind == "map" else []:
            inner = embedded_document(ctx, value) if value.kind == "scalar" and "cmd:" in str(value.value) else None
            if inner is not None:
                found += _config_models(inner[0], inner[1], f"{root.scalar('metadata', 'name')}/{key.value}")
        return found
    if root.get("apiVersion") is not None:
        return []
    return _config_models(ctx, root, ctx.path)


def _config_models(ctx: DocContext, root: YNode, where: str) -> list[ServedModel]:
    models = root.get("models")
    if models is None or models.kind != "map":
        return []
    macros = _macros(root.get("macros"))
    found: list[ServedModel] = []
    for key, spec in models.items():
        cmd = spec.get("cmd") if spec.kind == "map" else None
        if cmd is None or cmd.kind != "scalar" or not isinstance(cmd.value, str):
            continue
        env = {_name(name): text for name, text in macros.items()}
        env.update({"PORT": None, "MODEL_ID": str(key.value)})
        launched = scalar_launches(ctx, cmd, env, rewrite=_readable, shell=False)
        for number, one in enumerate(launched[:1]):  # one command per model
            model = script_model(ctx.workspace, ctx.loaded, one, "llama-swap model", f"{where}#{key.value}", number,
                                 (cmd.line - 1, cmd.end_line), str(key.value))
            if model is not None:
                found.append(model)
    return found


def _macros(node: YNode | None) -> dict[str, str]:
    """Macro name -> its text with the macros it uses replaced (comment lines dropped)."""
    raw = {str(k.value): str(v.value) for k, v in node.items() if v.kind == "scalar" and v.value is not None} \
        if node is not None and node.kind == "map" else {}
    resolved = {}
    for name, text in raw.items():
        for _ in range(MAX_MACRO_DEPTH):
            expanded = _MACRO.sub(lambda m: raw.get(m.group(1), m.group(0)), text)
            if expanded == text:
                break
            text = expanded
        resolved[name] = _COMMENT_LINE.sub("", text)
    return resolved


def _name(macro: str) -> str:
    return macro.replace("-", "_")


def _readable(text: str) -> str:
    """The command as the shell reader takes it, offsets kept: comment lines blanked, ``${a-b}`` as ``${a_b}``."""
    text = _COMMENT_LINE.sub(lambda m: " " * len(m.group(0)), text)
    return _MACRO.sub(lambda m: "${" + _name(m.group(1)) + "}", text)
