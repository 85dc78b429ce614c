"""Python spec files: dict literals that name a model and the engine arguments a test harness or a
launcher passes (``{"model": "Qwen/Qwen3-8B", "tp": 2, "vllm_args": ["--max-num-seqs", "4"]}``).

The file is read with ``ast`` and ``tokenize`` only, never imported or executed (it comes from a pull
request). A spec is a dict literal that names a model and has an engine-arguments key (``vllm_args``,
``sglang_args``, ``tokenspeed_args``; more with ``python-specs:`` in ``.cfgcheck.yaml``) whose value is a list of string
constants (one branch of ``[] if X else [...]`` when the other is empty); each gives one served model of
that engine. The model is the spec's ``model`` value (a string constant, or the first string argument of
a call such as ``_resolve_model_path("org/name")``), else the key the spec sits under in its table.
``tp`` (or ``tensor_parallel_size``) is the GPUs one instance needs. A table entry without engine
arguments is served too, by whichever engine the harness picks: one model of unknown engine. Every flag
is located at its string's line and column; comments on and above a line stay with it, so the rules
that want a reason (CFG205) read them.

A Ray Serve LLM application written in Python (a file that imports ``ray.serve.llm``) serves one vLLM
engine per ``LLMConfig(...)`` call, read as the ``llm_configs`` of a Serve config file are
(``formats/rayserve.py``): the model is ``model_loading_config``'s ``model_source`` (else ``model_id``),
``engine_kwargs`` are keyword arguments of vLLM's ``EngineArgs`` (tokens of origin ``kwargs:``),
``accelerator_type`` names the GPU and ``deployment_config`` the replicas. Only literal values are read
(``dict(k=v)`` calls and ``{"k": v}`` displays of constants).
"""

from __future__ import annotations

import ast
import io
import json
import tokenize

from ...engines.argv import KEYWORD_ORIGIN
from ...model import ArgToken, Location, ServedModel, Setting
from ...yamlio import Comment, LoadedFile, YamlError
from ..core.contexts import Workspace, comments_between, directives_of, file_comments
from ..core.recognition import apply_launch, finish, to_int

ARG_KEYS = {"vllm_args": "vllm", "sglang_args": "sglang", "tokenspeed_args": "tokenspeed"}
MODEL_KEYS = ("model", "model_path", "model_id")
GPU_KEYS = ("tp", "tp_size", "tensor_parallel_size", "num_gpus")
RAY_LLM_MODULE = "ray.serve.llm"  # where LLMConfig lives (docs.ray.io, "Serving LLMs")
# vLLM's engine built in Python (vllm/engine/arg_utils.py: EngineArgs, AsyncEngineArgs), as a Ray Serve
# deployment or any server does before AsyncLLMEngine.from_engine_args / LLM(...)
ENGINE_ARGS = ("AsyncEngineArgs", "EngineArgs")
MARKERS = tuple(ARG_KEYS) + (RAY_LLM_MODULE, "engineargs")
SUFFIXES = (".py",)


def scan_comments(text: str) -> dict[int, Comment]:
    found: dict[int, Comment] = {}
    lines = text.splitlines()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                line, column = token.start
                before = lines[line - 1][:column] if line - 1 < len(lines) else ""
                found[line] = Comment(line, column + 1, token.string[1:].strip(), not before.strip())
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the comments read so far
    return found


def _arg_keys(workspace: Workspace) -> dict[str, str]:
    keys = dict(ARG_KEYS)
    for engine, names in ((workspace.config.get("python-specs") or {}).get("args") or {}).items():
        keys.update({name: engine for name in ([names] if isinstance(names, str) else names)})
    return keys


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    keys = _arg_keys(workspace)
    ray_llm = RAY_LLM_MODULE in loaded.text
    engine_args = "EngineArgs" in loaded.text and "vllm" in loaded.text
    if not ray_llm and not engine_args and not any(key in loaded.text for key in keys):
        return []
    try:
        tree = ast.parse(loaded.text, loaded.path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        _unparsed(loaded, exc)
        return []
    lines = loaded.text.splitlines()
    found: list[ServedModel] = []
    for owner, spec in _specs(tree, keys):
        found.extend(_spec_models(loaded, lines, owner, spec, keys))
    if ray_llm:
        found.extend(_llm_config_model(loaded, lines, call) for call in ast.walk(tree)
                     if isinstance(call, ast.Call) and _callee(call) == "LLMConfig")
    if engine_args:
        found.extend(_engine_args_model(loaded, lines, call) for call in ast.walk(tree)
                     if isinstance(call, ast.Call) and _callee(call) in ENGINE_ARGS)
    return found


def _unparsed(loaded: LoadedFile, exc: Exception) -> None:
    """A file that names a spec key but that Python's parser refuses (a syntax error, or nesting past
    the parser's limits: 201 parentheses, 100,000 unary minuses) holds specs nobody can check: that is
    the file's CFG000, naming the error's class, not silence (in review its specs would count as
    fixed). The parser's message is not quoted: it may quote the file."""
    if loaded.error is None:
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        loaded.error = YamlError(f"cannot parse this Python file ({type(exc).__name__}): its engine specs are not "
                                 "read", line or 1, 1)


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _entries(node: ast.AST | None) -> list[tuple[str, ast.AST, ast.AST]]:
    """(key, the key's node, value) of a literal mapping: ``dict(k=v)`` or ``{"k": v}``."""
    if isinstance(node, ast.Call) and _callee(node) == "dict":
        return [(k.arg, k, k.value) for k in node.keywords if k.arg is not None]
    if isinstance(node, ast.Dict):
        return [(_string(k), k, v) for k, v in zip(node.keys, node.values) if _string(k) is not None]
    return []


def _llm_config_model(loaded: LoadedFile, lines: list[str], call: ast.Call) -> ServedModel:
    fields = {k.arg: k.value for k in call.keywords if k.arg is not None}
    loading = {key: value for key, _, value in _entries(fields.get("model_loading_config"))}
    source = next((v for v in (loading.get("model_source"), loading.get("model_id")) if _string(v)), None)
    label = _string(loading.get("model_id")) or f"LLMConfig@{call.lineno}"
    model = ServedModel(name=label, kind="Ray Serve LLMConfig", path=loaded.path, document=0,
                        location=_located(loaded, lines, call), identity=f"{loaded.path}#LLMConfig/{label}")
    model.comments = file_comments(loaded)
    model.directives = directives_of(loaded.path, comments_between(loaded, call.lineno - 3,
                                                                   call.end_lineno or call.lineno))
    tokens = [ArgToken(word, model.location, (), "rayserve", True) for word in ("vllm", "serve")]
    if source is not None:
        tokens.append(_token(loaded, lines, source))
    kwargs, falses = _kwarg_tokens(loaded, lines, fields.get("engine_kwargs"))
    apply_launch(None, model, tokens + kwargs, "vllm")
    for setting in model.settings.values():
        if setting.key_location in falses:
            setting.value = False
    if _string(fields.get("accelerator_type")) is not None:
        model.gpu_product = _string(fields.get("accelerator_type"))
    model.replicas = _llm_replicas(loaded, lines, fields.get("deployment_config"))
    return finish(model)


def _engine_args_model(loaded: LoadedFile, lines: list[str], call: ast.Call) -> ServedModel:
    """``AsyncEngineArgs(model=..., max_model_len=...)``: vLLM's engine arguments as keywords, one engine."""
    model_node = next((k.value for k in call.keywords if k.arg == "model"), call.args[0] if call.args else None)
    label = _string(model_node) or f"{_callee(call)}@{call.lineno}"
    model = ServedModel(name=label, kind=f"vLLM {_callee(call)}", path=loaded.path, document=0,
                        location=_located(loaded, lines, call), identity=f"{loaded.path}#{_callee(call)}@{call.lineno}")
    model.comments = [(line, c.text) for line, c in sorted(loaded.comments.items())]
    model.directives = directives_of(loaded.path, [c for line, c in sorted(loaded.comments.items())
                                                   if call.lineno - 2 <= line <= (call.end_lineno or call.lineno)])
    keywords = ast.Dict(keys=[ast.Constant(k.arg, lineno=k.lineno, col_offset=k.col_offset) for k in call.keywords
                              if k.arg not in (None, "model")],
                        values=[k.value for k in call.keywords if k.arg not in (None, "model")])
    tokens = [ArgToken(word, model.location, (), "python", True) for word in ("vllm", "serve")]
    tokens += [_token(loaded, lines, model_node)] if _string(model_node) is not None else []
    kwargs, falses = _kwarg_tokens(loaded, lines, keywords)
    apply_launch(None, model, tokens + kwargs, "vllm")
    for setting in model.settings.values():
        if setting.key_location in falses:
            setting.value = False
    return finish(model)


def _kwarg_tokens(loaded: LoadedFile, lines: list[str], kwargs: ast.AST | None) -> tuple[list[ArgToken], list[Location]]:
    """``engine_kwargs`` as argv tokens of origin ``kwargs:`` (as ``rayserve.engine_kwarg_tokens`` makes
    them), and where the keys set to False are. A value that is not a literal is left out."""
    tokens: list[ArgToken] = []
    falses: list[Location] = []
    for key, key_node, value in _entries(kwargs):
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        origin, at = f"{KEYWORD_ORIGIN}engine_kwargs.{key}", _located(loaded, lines, key_node)
        tokens.append(ArgToken(f"--{key}", at, loaded.comments_for(key_node.lineno), origin))
        if isinstance(literal, bool):
            falses.extend([] if literal else [at])
            continue
        text = literal if isinstance(literal, str) else json.dumps(literal) if isinstance(literal, (dict, list)) \
            else str(literal)
        tokens.append(ArgToken(text, _located(loaded, lines, value), loaded.comments_for(value.lineno), origin))
    return tokens, falses


def _llm_replicas(loaded: LoadedFile, lines: list[str], deployment: ast.AST | None) -> Setting | None:
    """``num_replicas``, else ``autoscaling_config.min_replicas``: the replicas that always run."""
    fields = {key: value for key, _, value in _entries(deployment)}
    autoscaling = {key: value for key, _, value in _entries(fields.get("autoscaling_config"))}
    node = fields.get("num_replicas") or autoscaling.get("min_replicas")
    if not isinstance(node, ast.Constant) or not isinstance(node.value, int) or isinstance(node.value, bool):
        return None
    location = _located(loaded, lines, node)
    return Setting("replicas", node.value, location, "deployment_config", loaded.comments_for(node.lineno),
                   location, str(node.value))


def _specs(tree: ast.AST, keys: dict[str, str]):
    """(the key node a spec sits under, or None; the spec dict) for every spec dict, and the entries
    of a table that holds one (its other entries are served too)."""
    seen: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        entries = [(k, v) for k, v in zip(node.keys, node.values) if isinstance(v, ast.Dict)]
        if entries and any(_is_spec(v, keys) for _, v in entries):
            for key, value in entries:
                if _string(key) is not None and (_is_spec(value, keys) or _field(value, MODEL_KEYS)):
                    seen.add(id(value))
                    yield key, value
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and id(node) not in seen and _is_spec(node, keys):
            yield None, node


def _is_spec(node: ast.Dict, keys: dict[str, str]) -> bool:
    return any(_string(k) in keys for k in node.keys)


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _field(spec: ast.Dict, names: tuple[str, ...]) -> ast.AST | None:
    for key, value in zip(spec.keys, spec.values):
        if _string(key) in names:
            return value
    return None


def _spec_models(loaded: LoadedFile, lines: list[str], owner: ast.Constant | None, spec: ast.Dict,
                 keys: dict[str, str]) -> list[ServedModel]:
    engines = [(keys[_string(k)], v) for k, v in zip(spec.keys, spec.values) if _string(k) in keys]
    if _field(spec, MODEL_KEYS) is None and "/" not in (_string(owner) or ""):
        return []  # engine arguments without a model (a benchmark's knob sets): no served model
    label = _string(owner) or f"spec@{spec.lineno}"
    found = []
    for engine, value in engines or [("unknown", None)]:
        tokens = [_token(loaded, lines, item) for item in _flags(value)] if value is not None else []
        model = ServedModel(name=f"{label}/{engine}" if engines else label, kind="python spec", path=loaded.path,
                            document=0, location=_located(loaded, lines, owner or spec),
                            identity=f"{loaded.path}#pyspec/{label}/{engine}")
        model.comments = file_comments(loaded)
        model.directives = directives_of(loaded.path, comments_between(loaded, spec.lineno - 3,
                                                                       spec.end_lineno or spec.lineno))
        if engine != "unknown":
            apply_launch(None, model, tokens, engine)
        else:
            model.engine = "unknown"
        _typed(loaded, lines, model, spec, owner)
        found.append(finish(model))
    return found


def _flags(value: ast.AST) -> list[ast.Constant]:
    """The string constants of an argument list (``[] if nightly else ["--enforce-eager"]``: the
    branch that has arguments)."""
    if isinstance(value, ast.IfExp):
        branches = [_flags(value.body), _flags(value.orelse)]
        return next((b for b in branches if b), [])
    if isinstance(value, (ast.List, ast.Tuple)):
        return [item for item in value.elts if _string(item) is not None]
    return []


def _typed(loaded: LoadedFile, lines: list[str], model: ServedModel, spec: ast.Dict,
           owner: ast.Constant | None) -> None:
    """The spec's model (unless the arguments name one) and GPU count."""
    node = _field(spec, MODEL_KEYS)
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if "model" not in model.settings:
        if _string(node) is not None:
            token = _token(loaded, lines, node)
            model.add(Setting("model", token.text, token.location, "model", token.comments, token.location, token.text))
        elif owner is not None and "/" in _string(owner):  # {"org/name": {...}}: the table key names it
            token = _token(loaded, lines, owner)
            model.add(Setting("model", token.text, token.location, "table key", token.comments, token.location,
                              token.text))
    gpus = _field(spec, GPU_KEYS)
    if isinstance(gpus, ast.Constant) and isinstance(gpus.value, int) and not isinstance(gpus.value, bool):
        location = _located(loaded, lines, gpus)
        comments = loaded.comments_for(gpus.lineno)
        model.gpus = Setting("gpus", to_int(gpus.value), location, "tp", comments, location, str(gpus.value))
        if model.engine != "unknown":  # the harness passes it as the engine's tensor-parallel size
            parallel = Setting("tensor_parallel_size", gpus.value, location, "tp", comments, location, str(gpus.value))
            model.occurrences.setdefault("tensor_parallel_size", []).insert(0, parallel)
            model.settings.setdefault("tensor_parallel_size", parallel)  # a flag in the arguments wins


def _token(loaded: LoadedFile, lines: list[str], node: ast.Constant) -> ArgToken:
    """A string constant as an argv token, located inside its quotes."""
    line = lines[node.lineno - 1] if node.lineno - 1 < len(lines) else ""
    prefix = line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace")
    column = len(prefix) + 1
    rest = line[column - 1:]
    opening = next((i for i, c in enumerate(rest[:4]) if c in "'\""), 0)
    quote = 3 if rest[opening:opening + 3] in ('"""', "'''") else 1
    start = column + opening + quote
    location = Location(loaded.path, node.lineno, start, node.lineno, start + len(node.value))
    return ArgToken(node.value, location, loaded.comments_for(node.lineno), "python")


def _located(loaded: LoadedFile, lines: list[str], node: ast.AST) -> Location:
    line = lines[node.lineno - 1] if node.lineno - 1 < len(lines) else ""
    column = len(line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace")) + 1
    return Location(loaded.path, node.lineno, column)
