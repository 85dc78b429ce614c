"""Engine command lines: find the engine launcher in an argv and turn flags into canonical settings.

Which option a written flag means is decided by the engine version's catalog, through argparse itself
(so ``--kv-cache-memory`` is ``--kv-cache-memory-bytes`` on vLLM 0.26 exactly as the engine decides).
Without a catalog for the engine, a flag means the option whose argparse destination it spells.
"""

from __future__ import annotations

import re

from ..records import Record
from .. import lazy
from ..model import ArgToken, ServedModel, Setting
from ..settings import canonical_name, parse
from .catalog import Resolution, catalog_for
from .confidence import label

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any
    from .catalog import Catalog

# Launchers: the commands that start an engine, and where the engine's own argv begins.
# (command, subcommand) -> (engine, whether a positional model may follow: ``vllm serve MODEL``)
COMMANDS = {
    ("vllm", "serve"): ("vllm", True),
    ("sglang", "serve"): ("sglang", False), ("sglang", "launch_server"): ("sglang", False),
    ("tokenspeed", "serve"): ("tokenspeed", False), ("tokenspeed", "launch_server"): ("tokenspeed", False),
}
BINARIES = {"llama-server": "llama.cpp", "llama-cpp-server": "llama.cpp"}  # the engine's argv follows at once
# ``python -m MODULE``: the modules that are an engine's server, by exact name, then by prefix.
# NVIDIA Dynamo's workers (dynamo.vllm, dynamo.sglang) take the engine's own arguments.
# sglang_router.launch_server starts --dp-size SGLang servers behind the router: the server's flags, and
# the router's own with a ``--router-`` prefix (sgl-router/py_src/sglang_router/launch_server.py).
MODULES = {"dynamo.vllm": "vllm", "dynamo.sglang": "sglang", "sglang_router.launch_server": "sglang"}
MODULE_PREFIXES = (("vllm.entrypoints", "vllm"), ("sglang.launch_server", "sglang"), ("sglang.srt", "sglang"),
                   ("tokenspeed", "tokenspeed"))
# SGLang's load balancers and router only forward requests to engines (--prefill URL, --decode URL): no model
# (python/sglang/srt/disaggregation/mini_lb.py, launch_lb.py; sgl-router/py_src/sglang_router/launch_router.py)
ROUTER_MODULES = frozenset(("sglang.srt.disaggregation.mini_lb", "sglang.srt.disaggregation.launch_lb",
                            "sglang_router.launch_router", "sglang_router.mini_lb"))
_PYTHON = re.compile(r"^(.*/)?python[0-9.]*$")


# compared by identity: a plain class, its __init__ compiled with the module (records.Record)
class Launch(Record):
    """Where an engine starts in a command line: the engine, its own argv and a positional model."""

    __slots__ = ("engine", "args", "model", "by")

    def __init__(self, engine: str, args: list[ArgToken], model: ArgToken | None, by: str = "command") -> None:
        self.engine = engine
        self.args = args  # the engine's own argv, after the launcher
        self.model = model  # a positional model (``vllm serve MODEL``)
        self.by = by  # command: the tokens name the launcher; image: the image's entrypoint receives them


def _base(token: str) -> str:
    return token.rsplit("/", 1)[-1]


# what makes an engine print and exit instead of serving (``llama-server --help``, ``vllm serve --version``)
_ASKS_ONLY = frozenset(("--help", "-h", "--version", "--usage"))


def find_launch(tokens: list[ArgToken], image_engine: str | None) -> Launch | None:
    """Find the engine start in ``tokens`` (command + args). ``image_engine`` is the engine the image
    runs; with it, an argv of only flags is the engine's own argv (the image's entrypoint starts it).
    An engine asked only for its help or version serves nothing."""
    launch = _find_launch(tokens, image_engine)
    if launch is not None and launch.args and all(token.text in _ASKS_ONLY for token in launch.args):
        return None
    return launch


def _find_launch(tokens: list[ArgToken], image_engine: str | None) -> Launch | None:
    texts = [t.text for t in tokens]
    if mentions_only(texts):
        return None  # pkill -f llama-server, echo "vllm serve ...": the engine is named, not started
    for index, text in enumerate(texts):
        base = _base(text)
        nxt = texts[index + 1] if index + 1 < len(texts) else None
        if (base, nxt) in COMMANDS:
            engine, positional = COMMANDS[base, nxt]
            return _with_positional(engine, tokens[index + 2:], positional)
        if base in BINARIES:
            return Launch(BINARIES[base], tokens[index + 1:], None)
        module = _python_module(texts, index)
        engine = _engine_of_module(module[0]) if module else None
        if engine:
            return Launch(engine, _server_argv(module[0], tokens[module[1]:]), None)
    if image_engine and tokens and (tokens[0].text.startswith("-") or
                                    (tokens[0].text.startswith("$") and tokens[0].origin != "shell")):
        # flags, or arguments the runtime expands (${MODEL_SPECIFIER}): the image's entrypoint runs the
        # engine; a shell command that is a variable ($RAY_START_CMD) may run anything
        return Launch(image_engine, tokens, None, "image")
    if image_engine == "vllm" and tokens and tokens[0].origin != "shell" and _model_like(tokens[0].text):
        # the vllm/vllm-openai image's ENTRYPOINT is ["vllm", "serve"] (docker/Dockerfile, target
        # vllm-openai; python3 -m vllm.entrypoints.openai.api_server in 0.9-era images, which refuse a
        # positional): arguments alone start with the model
        return _with_positional("vllm", tokens, by="image")
    if image_engine and not tokens:
        return Launch(image_engine, [], None, "image")
    return None


# Programs whose arguments name an engine without starting it: they print, search, signal or install
# (``pkill -f llama-server``, ``pgrep vllm``, ``echo "vllm serve ..."``, ``pip install vllm``), and the
# container and service managers' commands other than ``run`` / ``exec`` (``docker logs llama-server``).
MENTIONS = frozenset("""
echo printf pkill pgrep killall kill grep egrep fgrep rg ps which whereis type pip pip3 apt apt-get tail head
cat less ls rm mkdir touch chmod chown cp mv ln find test [ [[ logger systemctl journalctl curl wget git
""".split())
_MANAGERS = ("docker", "podman", "nerdctl", "kubectl", "crictl")
# shell keywords that open a command (POSIX 2.4 reserved words) and wrappers that run the words after them
_WRAPPERS = ("sudo", "nohup", "exec", "time", "env", "command", "if", "then", "else", "elif", "do", "while", "until", "!", "{")


def mentions_only(texts: list[str]) -> bool:
    """The command's program (after ``NAME=value`` assignments and ``sudo``/``nohup``-style wrappers)
    only names what follows: a search, a signal, a print, an install, a container manager's ``logs``."""
    index = 0
    while index < len(texts) and (_base(texts[index]) in _WRAPPERS or _ASSIGNMENT.match(texts[index])):
        if texts[index] == "command" and index + 1 < len(texts) and texts[index + 1] in ("-v", "-V"):
            return True  # command -v vllm: where it is, not a start
        index += 1
    if index >= len(texts):
        return False
    program = _base(texts[index])
    if program in _MANAGERS:
        return index + 1 < len(texts) and texts[index + 1] not in ("run", "exec", "compose")
    return program in MENTIONS


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PROGRAM = lazy.Pattern(r"(^|/)(python[0-9.]*|sh|bash|env|exec|serve)$|\.(py|sh)$|=|(^|/)s?bin/")


def _model_like(text: str) -> bool:
    """A first argument that names a model (``org/name``, a local path), not a program to run."""
    return "/" in text and not _PROGRAM.search(text) and "$" not in text and " " not in text


def launch_offset(tokens: list) -> int:
    """How many leading tokens are a launcher (``python -m module``) rather than engine argv."""
    module = _python_module([t.text for t in tokens], 0) if tokens else None
    return module[1] if module else 0


def _python_module(texts: list[str], index: int) -> tuple[str, int] | None:
    """``python -m MODULE`` at ``index``, or ``-m MODULE`` opening the argv (the image's entrypoint is
    python): the module and where its own argv begins."""
    if _PYTHON.match(_base(texts[index])):
        at = _after_interpreter_options(texts, index + 1)
        if at + 1 < len(texts) and texts[at] == "-m":
            return texts[at + 1], at + 2
        return None
    if index == 0 and len(texts) > 1 and texts[0] == "-m" and texts[1]:
        return texts[1], 2
    return None


# The interpreter's own options before ``-m`` (``python -u -m vllm...``; docs.python.org, "Command line and
# environment"): switches, and the two that take a value.
_PYTHON_SWITCHES = frozenset("-b -bb -B -d -E -i -I -O -OO -P -q -s -S -u -v -x".split())
_PYTHON_VALUED = ("-W", "-X")


def _after_interpreter_options(texts: list[str], index: int) -> int:
    while index < len(texts):
        text = texts[index]
        if text in _PYTHON_SWITCHES:
            index += 1
        elif text in _PYTHON_VALUED:
            index += 2
        elif text.startswith(_PYTHON_VALUED) and len(text) > 2:
            index += 1
        else:
            break
    return index


def _engine_of_module(module: str) -> str | None:
    if module in ROUTER_MODULES:
        return None
    if module in MODULES:
        return MODULES[module]
    return next((engine for prefix, engine in MODULE_PREFIXES if module.startswith(prefix)), None)


def _server_argv(module: str, argv: list[ArgToken]) -> list[ArgToken]:
    """The engine's own argv: without sglang_router.launch_server's ``--router-*`` flags and their values
    (the server takes no positional argument, so every word up to the next flag is the router flag's)."""
    if module != "sglang_router.launch_server":
        return argv
    kept, routing = [], False
    for token in argv:
        if token.text.startswith("-"):
            routing = token.text.startswith("--router-")
        if not routing:
            kept.append(token)
    return kept


def _with_positional(engine: str, rest: list[ArgToken], positional: bool = True, by: str = "command") -> Launch:
    if positional and rest and not rest[0].text.startswith("-"):
        return Launch(engine, rest[1:], rest[0], by)
    return Launch(engine, rest, None, by)


def _dest_of(flag: str) -> str:
    return flag.lstrip("-").split("=", 1)[0].replace("-", "_")


class _Uncatalogued:
    """The flags of an engine without a catalog, for ``walk``: every flag is unknown, so it means the
    option whose argparse destination it spells and takes the next token as its value unless that
    token is a flag."""

    @staticmethod
    def resolve(token: str) -> Resolution:
        written, eq, value = token.partition("=")
        return Resolution("unknown", written, None, None, (), written, "", value if eq else None)


def walk_tokens(model: ServedModel, tokens: list[ArgToken]):
    """Yield (flag token, argparse dest or None, value token or None, flag as written, negative, inline value
    or None) per flag.

    The catalog of the model's engine version decides, through argparse itself, what a flag resolves
    to and whether it takes a value; without a catalog, a flag takes the next token as its value
    unless that token is a flag, its destination is the one argparse would derive from its name, and
    ``--no-X`` / ``--disable-X`` are read as turning something off.
    """

    catalog = catalog_for(model.engine, model.engine_version) if model.engine != "unknown" else None
    for parsed in walk(catalog or _Uncatalogued(), tokens):
        spec, resolution = parsed.resolution.spec, parsed.resolution
        dest = spec.dest if spec is not None and not resolution.suffix else None
        if catalog is None:
            negative = resolution.written.startswith(("--no-", "--disable-"))
        else:
            negative = bool(spec is not None and resolution.option and spec.is_negative(resolution.option))
        yield parsed.token, dest, parsed.value, resolution.written, negative, parsed.inline_value


def apply_argv(model: ServedModel, tokens: list[ArgToken]) -> None:
    """Record every flag of ``tokens`` as a setting of ``model`` (a later occurrence wins)."""
    for flag_token, spec_dest, value_token, written, negative, attached in walk_tokens(model, tokens):
        dest = spec_dest or _dest_of(written)
        name = canonical_name(model.engine, dest)
        if value_token is not None:
            text, location, value_comments = value_token.text, value_token.location, value_token.comments
        elif attached is not None:  # --x=v, or a short option's attached value (-O3)
            text = attached
            offset = len(flag_token.text) - len(text)
            loc = flag_token.location
            location = type(loc)(loc.path, loc.line, loc.column + offset, loc.line, loc.column + len(flag_token.text))
            value_comments = ()
        else:
            text, location, value_comments = None, flag_token.location, ()
        value: object = (not negative) if text is None else parse(name, text, model.engine)
        comments = tuple(dict.fromkeys(flag_token.comments + value_comments))
        model.add(Setting(name, value, location, written, comments, flag_token.location, text, flag_token.origin))


# --------------------------------------------------------------------------------------------------
# walking argv as the engine's parser does

_NEG_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class ParsedFlag(Record):
    """A flag token of argv with what it resolved to and the value token(s) it consumed (slots: every flag of
    every served model, kept for the run's rules)."""

    __slots__ = ("token", "resolution", "value", "values", "inline_value")

    def __init__(self, token: Any, resolution: Resolution, value: Any = None, values: tuple = (),
                 inline_value: str | None = None) -> None:
        self.token = token  # ArgToken
        self.resolution = resolution
        self.value = value  # ArgToken or None
        self.values = values  # every consumed value token (nargs +, *, N)
        self.inline_value = inline_value  # the value of "--x=v"

    @property
    def written(self) -> str:
        return self.resolution.written


def _looks_like_flag(text: str) -> bool:
    # a negative number is the only text _NEG_NUMBER matches, and starts with "-" then a digit or "."
    return text.startswith("-") and len(text) > 1 and text != "--" \
        and not ((text[1] == "." or text[1].isdigit()) and _NEG_NUMBER.match(text)) and " " not in text.partition("=")[0]


# Tokens an adapter made from keyword arguments (Ray Serve LLM ``engine_kwargs`` -> ``EngineArgs(**kwargs)``)
# carry this origin prefix: a keyword names a field exactly, with no prefix matching and no dashes.
KEYWORD_ORIGIN = "kwargs:"


def _exact_keyword(resolution: Resolution) -> Resolution:
    if resolution.kind == "exact" and "-" not in resolution.written.lstrip("-"):
        return resolution
    # no history either: other versions' argv parsers would match it by prefix, EngineArgs never does
    return resolution.replaced(kind="unknown", option=None, spec=None, candidates=(),
                               normalized=KEYWORD_ORIGIN + resolution.written.lstrip("-"))


def walk(catalog: Catalog | _Uncatalogued, tokens: list) -> list[ParsedFlag]:
    """Walk argv as the engine's parser would: each flag with its resolution and consumed value(s).

    A flag that takes a value consumes the next token unless written ``--x=v`` (``nargs`` "?" only
    when the next token is not a flag, "+"/"*" every following non-flag token). Positional tokens
    (the model, stray words) are skipped; everything after ``--`` is positional. An unknown or
    ambiguous flag consumes the next token when that is not a flag (so its value is not mistaken for
    a positional).
    """
    flags: list[ParsedFlag] = []
    index, count = 0, len(tokens)
    while index < count:
        token = tokens[index]
        text = token.text
        if text == "--":
            break
        if not _looks_like_flag(text):
            index += 1
            continue
        resolution = catalog.resolve(text)
        if str(getattr(token, "origin", "")).startswith(KEYWORD_ORIGIN):
            resolution = _exact_keyword(resolution)
        inline = resolution.explicit_value
        index += 1
        consumed: list = []
        if inline is None:
            spec = resolution.spec
            if resolution.kind in ("exact", "abbrev") and spec is not None and not resolution.suffix:
                nargs = spec.nargs if spec.takes_value else 0
                if nargs is None:
                    want = 1
                elif isinstance(nargs, int):
                    want = nargs
                elif nargs == "?":
                    want = 1 if index < count and not _looks_like_flag(tokens[index].text) else 0
                else:  # "+", "*", "..." and REMAINDER-likes
                    want = 0
                    while index + want < count and not _looks_like_flag(tokens[index + want].text) \
                            and tokens[index + want].text != "--":
                        want += 1
                consumed = list(tokens[index:index + want])
                index += len(consumed)
            elif resolution.suffix and index < count:
                consumed = [tokens[index]]  # vLLM's dotted keys always take the next token
                index += 1
            elif resolution.kind in ("unknown", "ambiguous") and index < count \
                    and not _looks_like_flag(tokens[index].text):
                consumed = [tokens[index]]
                index += 1
        flags.append(ParsedFlag(token, resolution, consumed[0] if consumed else None, tuple(consumed), inline))
    return flags


# --------------------------------------------------------------------------------------------------
# served models (the flag rules' shared entry point)


def model_flags(model) -> tuple[Catalog, list[ParsedFlag], str] | None:
    """(catalog, walked argv flags, version label for messages) of a served model, or None.
    Computed once per served model: every flag rule reads the same walk."""
    if "flags" not in model.cache:
        model.cache["flags"] = _model_flags(model)
    return model.cache["flags"]


def _model_flags(model) -> tuple[Catalog, list[ParsedFlag], str] | None:
    # no argv is a walk of no flags, not an unknown one: the engine runs on its defaults (an image's
    # entrypoint started with no arguments serves vLLM's default model, CFG110)
    catalog = catalog_for(model.engine, model.engine_version)
    if catalog is None:
        return None
    tokens = list(model.argv)
    return catalog, walk(catalog, tokens[launch_offset(tokens):]), label(model, catalog)


def flag_location(token, written: str):
    """The span of the flag part of a token (``--x`` of ``--x=v``), when the token is on one line."""
    loc = token.location
    if loc.end_line not in (None, loc.line):
        return loc
    return type(loc)(loc.path, loc.line, loc.column, loc.line, loc.column + len(as_written(token, written)) - 1)


def as_written(token, flag: str) -> str:
    """How ``flag`` is spelled where ``token`` is written: a key of an engine ``--config`` file is the
    flag without its dashes (``kv-cache-memory:`` is ``--kv-cache-memory``)."""
    return flag[2:] if token.origin.startswith("config:") and flag.startswith("--") else flag


# a flag written inside ``${VAR:+...}``: the shell passes it only when VAR is set (origin ``if-set:VAR``)
IF_SET = "if-set:"


def only_if_set(finding, token):
    """``finding`` of a flag the shell passes only when a variable is set: an error becomes a warning and the
    message says under which condition it holds; other findings as they are."""
    if not token.origin.startswith(IF_SET):
        return finding
    variable = token.origin[len(IF_SET):]
    finding.message += f" (only when {variable} is set: the flag is written inside ${{{variable}:+...}})"
    finding.severity = "warning" if finding.severity in ("", "error") else finding.severity
    return finding


def value_location(flag: ParsedFlag):
    """Where the value of a flag is written: the value token, or the part after "=" of the flag token."""
    if flag.value is not None:
        return flag.value.location
    loc = flag.token.location
    text = flag.token.text
    if flag.inline_value is not None and loc.end_line in (None, loc.line):
        start = loc.column + len(text) - len(flag.inline_value)
        return type(loc)(loc.path, loc.line, start, loc.line, loc.column + len(text) - 1)
    return loc
