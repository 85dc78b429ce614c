"""Shell words of a YAML string, each located at its exact line and column in the file.

Two steps. ``lex`` splits the *value* of a string (what the container runtime or shell receives) into
words the way a POSIX shell does, leniently: quotes, backslash escapes and line continuations,
``$(...)`` / ``${...}`` / Helm-Go ``{{ ... }}`` kept whole, ``#`` comments, and command separators
(``;``, ``&&``, ``||``, ``|``, ``&``, and in shell mode newlines and the parentheses of an array assignment)
as words of their own. ``eval "..."``
is lexed as the command it evaluates. ``SourceMap`` then maps an offset in the value back to the
source text of the scalar (plain, quoted with escapes, literal or folded block), so each word is
located where it is written.
"""

from __future__ import annotations

import re

from ... import lazy
from ...engines import argv as engine_argv
from ...engines.images import folder_under_variable
from ...model import ArgToken, Location, Setting
from ..core.offsets import LineIndex, line_index
from .expansion import MAX_SPLICED_WORDS, substitute
from .parameters import REFERENCE, Quoted, lookup

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from ...yamlio import YNode
    from ..core.contexts import DocContext

OPERATORS = (";", "&&", "||", "|", "&", "(", ")")
# The shells a container or program runs a script with, and their "run this string" flag
SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/env", "dash", "zsh"}
SHELL_C = lazy.Pattern(r"^-[a-z]*c[a-z]*$")  # -c, -lc, -exc, -ec
_ARRAY_NAME = lazy.Pattern(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_WS = " \t\r"
# Runs of characters that are never special to ``_Lexer._step`` (nor, the second, inside double quotes):
# read as one piece instead of one character at a time.
_PLAIN_RUN = lazy.Pattern(r"[^\\ \t\r\n#()$;&|'\"{]+")
_QUOTED_RUN = lazy.Pattern(r'[^"\\{]+')


def lex(value: str, shell: bool = True, base: int = 0, ignore_quotes: bool = False) -> list[tuple[str, int, int]]:
    """Words of ``value`` as (text, start, end) offsets into ``value`` (+ ``base``).

    ``start`` is the first character that contributes to the word (inside an opening quote), so the
    source text at the word's location is the word itself for unquoted and quoted words alike.
    In shell mode a newline separates commands and ``#`` starts a comment.
    """
    return _Lexer(value, shell, base, ignore_quotes).words()


class _Lexer:
    """One pass over a value: each ``_step`` reads one token's worth and returns where to go on."""

    def __init__(self, value: str, shell: bool, base: int, ignore_quotes: bool) -> None:
        self.value, self.shell, self.base, self.ignore_quotes = value, shell, base, ignore_quotes
        self.found: list[tuple[str, int, int]] = []
        self.buf: list[str] = []
        self.start, self.end, self.in_word, self.quoted = -1, 0, False, False
        self.in_array = False

    def words(self) -> list[tuple[str, int, int]]:
        i = 0
        while i < len(self.value):
            i = self._step(i)
        self._flush()
        return self.found

    def _flush(self) -> None:
        if self.in_word:
            start = self.start if self.start >= 0 else self.end
            text = "".join(self.buf)
            self.found.append((Quoted(text) if self.quoted else text, self.base + start, self.base + self.end))
        self.buf, self.start, self.in_word, self.quoted = [], -1, False, False

    def _put(self, text: str, at: int, upto: int) -> None:
        if self.start < 0:
            self.start = at
        self.buf.append(text)
        self.end = upto
        self.in_word = True

    def _step(self, i: int) -> int:
        value, n, c = self.value, len(self.value), self.value[i]
        if c == "\\" and i + 1 < n and value[i + 1] == "\n":
            return i + 2  # line continuation
        if c in _WS:
            self._flush()
            return i + 1
        if c == "\n":
            self._flush()
            if self.shell and not self.in_array:
                self.found.append((";", self.base + i, self.base + i + 1))
            return i + 1
        if self.shell and c == "#" and not self.in_word:
            newline = value.find("\n", i)
            return n if newline == -1 else newline
        if self.shell and (c == ")" and self.in_array or c == "(" and _ARRAY_NAME.fullmatch("".join(self.buf))):
            return self._array_bound(i)
        if self.shell and c in ";&|":
            self._flush()
            op = value[i:i + 2] if value[i:i + 2] in ("&&", "||") else c
            self.found.append((op, self.base + i, self.base + i + len(op)))
            return i + len(op)
        if c == "\\" and i + 1 < n:
            self._put(value[i + 1], i + 1, i + 2)
            return i + 2
        if c == "'" and not self.ignore_quotes:
            return self._single_quoted(i)
        if c == '"':
            return i + 1 if self.ignore_quotes else self._double_quoted(i)
        if value.startswith("{{", i):
            return self._template(i)
        if c == "$" and i + 1 < n and value[i + 1] in "({":
            stop = _balanced(value, i + 1)
            self._put(value[i:stop], i, stop)
            return stop
        run = _PLAIN_RUN.match(value, i + 1)
        stop = run.end() if run is not None else i + 1
        self._put(value[i:stop], i, stop)
        return stop

    def _array_bound(self, i: int) -> int:
        """The parentheses of a bash array assignment ``cmd=(vllm serve M --x 1)`` belong to no word:
        its elements are the words of a command (bash(1) "Arrays"), newlines inside included."""
        self._flush()
        self.in_array = self.value[i] == "("
        self.found.append((self.value[i], self.base + i, self.base + i + 1))
        return i + 1

    def _template(self, i: int) -> int:
        """A Helm/Go ``{{ ... }}`` kept whole, quotes and spaces inside it included."""
        stop = self.value.find("}}", i)
        stop = len(self.value) if stop == -1 else stop + 2
        self._put(self.value[i:stop], i, stop)
        return stop

    def _single_quoted(self, i: int) -> int:
        value = self.value
        close = value.find("'", i + 1)
        close = len(value) if close == -1 else close
        self.quoted = True
        if not self.in_word:
            self._put("", i + 1, i + 1)
        if close > i + 1:
            self._put(value[i + 1:close], i + 1, close)
        self.end = close
        return close + 1

    def _double_quoted(self, i: int) -> int:
        value, n = self.value, len(self.value)
        if self.shell and _last_command_word(self.found, self.in_word) == "eval":
            close = _eval_end(value, i)
            self.found.extend(lex(value[i + 1:close], self.shell, self.base + i + 1, ignore_quotes=True))
            return close + 1
        j = i + 1
        self.quoted = True
        if not self.in_word:
            self._put("", j, j)
        while j < n and value[j] != '"':
            if value[j] == "\\" and j + 1 < n and value[j + 1] == "\n":
                j += 2
            elif value[j] == "\\" and j + 1 < n and value[j + 1] in '"\\$`':
                self._put(value[j + 1], j + 1, j + 2)
                j += 2
            elif value.startswith("{{", j):
                j = self._template(j)
            else:
                run = _QUOTED_RUN.match(value, j + 1)
                stop = run.end() if run is not None else j + 1
                self._put(value[j:stop], j, stop)
                j = stop
        self.end = j
        return j + 1


def _last_command_word(words: list[tuple[str, int, int]], in_word: bool) -> str | None:
    if in_word or not words:
        return None
    return words[-1][0]


def _eval_end(value: str, quote: int) -> int:
    """Where the string given to ``eval`` ends: at the first newline that is not continued, minus a
    closing quote. Inner quotes are not trusted: templates nest them."""
    j = quote + 1
    n = len(value)
    while j < n:
        if value[j] == "\n" and value[j - 1] != "\\":
            break
        j += 1
    k = j - 1
    while k > quote and value[k] in _WS:
        k -= 1
    return k if value[k] == '"' and k > quote else j


def _balanced(value: str, open_at: int) -> int:
    opening = value[open_at]
    closing = ")" if opening == "(" else "}"
    depth = 0
    j = open_at
    quote = None
    while j < len(value):
        c = value[j]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(value)


def segments(words: list[tuple[str, int, int]]) -> list[list[tuple[str, int, int]]]:
    """Split words into commands at separators."""
    found: list[list[tuple[str, int, int]]] = [[]]
    for word in words:
        if word[0] in OPERATORS:
            found.append([])
        else:
            found[-1].append(word)
    return [segment for segment in found if segment]


class SourceMap:
    """Maps offsets in a scalar's value to absolute offsets in the file text."""

    def __init__(self, text: str, node) -> None:
        self.text = text
        value = node.value if isinstance(node.value, str) else text[node.start_index:node.end_index]
        self.value = value
        start = node.start_index
        if node.style in ("'", '"'):
            start += 1
        elif node.style in ("|", ">"):
            newline = text.find("\n", start)
            start = node.end_index if newline == -1 else newline + 1
        self.positions = _align(value, text, start, node.end_index)
        self._lines: LineIndex | None = None

    def absolute(self, offset: int) -> int:
        offset = max(0, min(offset, len(self.value)))
        return self.positions[offset]

    def span(self, start: int, end: int, word: str) -> tuple[int, int, int]:
        """(line, column, end column) of the word at value offsets ``start``..``end``; a word that
        crosses a line (a continuation) ends where its text would on its first line."""
        line, column = self.line_column(self.absolute(start))
        end_line, end_column = self.line_column(self.absolute(end)) if end > start else (line, column)
        return (line, column, end_column) if end_line == line else (line, column, column + len(word))

    def line_column(self, absolute: int) -> tuple[int, int]:
        if self._lines is None:  # made when a word is first located: many maps locate none
            self._lines = line_index(self.text)
        return self._lines.line_column(absolute)


def _align(value: str, src: str, j: int, limit: int) -> list[int]:
    """Position in ``src`` of each character of ``value`` (and one past the end).

    Exact for plain scalars and literal blocks; for quoted and folded scalars escapes, doubled quotes,
    indentation and folded line breaks in the source are skipped over.
    """
    end = min(len(src), max(limit, j))
    if j + len(value) <= end and src.startswith(value, j):  # written as it reads: no search
        return list(range(j, j + len(value) + 1))
    runs = {m.start(): m.end() for m in re.finditer(r"[^ \t\n]+", value)}  # the words of the value
    i, count, positions = 0, len(value), [0] * (len(value) + 1)
    while i < count:
        c, at = value[i], i
        i += 1
        if j >= end:
            positions[at] = end
            continue
        run = runs.get(at, at)
        if run - at > 1 and j + run - at <= end and src.startswith(value[at:run], j):
            positions[at:run] = range(j, j + run - at)  # a word written as it reads: placed at once
            j, i = j + run - at, run
            continue
        if c in " \t\n":
            positions[at] = j
            if src[j] == c:
                j += 1
            elif src[j] == "\\" and j + 1 < end and src[j + 1] in "ntr ":
                j += 2
            else:
                while j < end and src[j] in " \t\r\n":
                    j += 1
            continue
        k = j
        while k < end and src[k] != c and k - j < 400:
            k += 1
        if k < end and src[k] == c:
            positions[at] = k
            j = k + 1
        else:
            positions[at] = j
    positions[len(value)] = min(j, end)
    return positions


# --------------------------------------------------------------------------------------------------
# parameter expansion

_ASSIGNMENT = lazy.Pattern(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_DECLARE = {"export", "readonly", "local", "declare"}
_NOT_LITERAL = ("$", "`")


def expand(words: list[tuple[str, int, int]], env: dict[str, str | None] | None = None,
           located: dict[str, tuple[str | None, int | None, int | None]] | None = None) -> list[tuple[str, int, int]]:
    """Shell parameter expansion where the value is literal, as ``sh`` would do it.

    Values come from assignments earlier in the script (``TP=2``, ``export TP=2``) and from ``env``
    (the container's environment: a string, or None when it is set but not literal, e.g. from a
    secret) and ``located`` (values with their offsets: the positional parameters a caller passes).
    ``${VAR:-default}`` gives the default when VAR is set nowhere. A reference whose value is
    not literal stays as written: the value is unknown. A word that is exactly one reference is
    relocated to where its value is written (the assignment's value, the default), so that a finding
    or an edit lands there. Inside ``case ... esac`` (an option-parsing loop: ``--model) MODEL="$2"``) an
    assignment does not replace a value set before the ``case``: the script runs with that default
    unless its caller passes the option; a pattern (``--model)``) is no part of the command after it.
    """
    known: dict[str, tuple[str | None, int | None, int | None]] = {
        name: (value, None, None) for name, value in (env or {}).items()}
    known.update(located or {})
    out: list[tuple[str, int, int]] = []
    command_start, cases = True, 0
    budget = [MAX_SPLICED_WORDS]
    for word in words:
        text = word[0]
        if text in OPERATORS or text == ";":
            out.append(word)
            command_start = True
            continue
        if command_start and text in _DECLARE:
            out.append(word)
            continue
        if command_start and text in ("case", "esac"):
            cases = cases + 1 if text == "case" else max(0, cases - 1)
        elif cases and command_start and text.endswith(")") and not text.startswith("$("):
            out.append(word)  # a case pattern: the arm's command starts after it
            continue
        assignment = _ASSIGNMENT.match(text) if command_start else None
        if assignment:
            value, start, end = _assigned(word, len(assignment.group(1)) + 1, known)
            # a folder under an unknown one (``MODEL_PATH=${PROJECT_ROOT}/models/NAME``) names what it
            # holds, as a model path written so does: its references expand to the path as written
            literal = not any(mark in value for mark in _NOT_LITERAL) or \
                folder_under_variable(value.split("=", 1)[1])
            offset = start + (len(assignment.group(1)) + 1 if start == word[1] else 0)
            if not cases or assignment.group(1) not in known:
                known[assignment.group(1)] = (value.split("=", 1)[1], offset, end) if literal else (None, None, None)
            # the value as the command receives it (``HF_HOME=$BASE/hf`` -> ``HF_HOME=/data/hf``), at the word
            out.append((value, word[1], word[2]) if literal and value != text else word)
            continue
        command_start = False
        out.extend(_fields(word, _expanded(word, known), budget))
    return out


def _fields(word: tuple[str, int, int], expanded: tuple[str, int, int], budget: list[int]) -> list[tuple[str, int, int]]:
    """An unquoted word that is exactly one reference, split on whitespace (IFS) as the shell splits
    the result of an unquoted expansion (POSIX 2.6.5): ``ARGS="--tp 2"; vllm serve m $ARGS`` gives two
    words, each located in the value; ``"$ARGS"`` stays one word. ``budget`` is the words left to
    split: past it, the reference stays as written (a hostile script repeating a long value)."""
    text, start, end = expanded
    if expanded is word or isinstance(word[0], Quoted) or isinstance(text, Quoted) or not REFERENCE.fullmatch(word[0]):
        return [expanded]
    fields = text.split()
    if len(fields) > budget[0]:
        return [word]
    budget[0] -= len(fields)
    if end - start == word[2] - word[1] and start == word[1]:  # the value is located at the reference
        return [(field, start, end) for field in fields]
    # the value ends where it is written; an opening quote before it is skipped
    base = end - len(text) if end - len(text) >= start else start
    return [(match.group(), base + match.start(), base + match.end()) for match in re.finditer(r"\S+", text)]


class Spliced(str):
    """An environment value that the caller splices in itself where a word is exactly its reference
    (located in the env value, see ``env_argv``); inside longer words and assignments it is
    substituted here as any literal value."""


def _assigned(word: tuple[str, int, int], cut: int, known: dict) -> tuple[str, int, int]:
    """An assignment word expanded; a value that is exactly one reference with a default (``DTYPE=${DTYPE:-"auto"}``)
    or to a positional parameter (``MODEL=$1``) is located where what it gives is written, as such a word is."""
    text, start, end = word
    reference = None if isinstance(text, Quoted) else REFERENCE.fullmatch(text[cut:])
    if reference and (reference.group(2) or (reference.group(1) or reference.group(4)).isdigit()):
        value = (text[cut:], start + cut, end)
        found = _expanded(value, known)
        if found is not value:
            return text[:cut] + found[0], found[1], found[2]
    return _expanded(word, known)


def _expanded(word: tuple[str, int, int], known: dict) -> tuple[str, int, int]:
    text, start, end = word
    whole, double = REFERENCE.fullmatch(text), isinstance(text, Quoted)
    if whole:
        found = lookup(whole, known, start, double)
        return word if found is None or isinstance(found[0], Spliced) else found

    def replace(match: re.Match) -> str:
        found = lookup(match, known, start, double)
        return found[0] if found is not None else match.group(0)

    expanded = substitute(REFERENCE, text, replace)  # None past the bounds: unknown, kept as written
    return word if expanded is None else (expanded, start, end)


# ---------------------------------------------------------------- located argv tokens of a document


def argv_tokens(ctx: DocContext, node: YNode | None, origin: str) -> list[ArgToken]:
    """Tokens of an argv given as a list, or as one string (split like a shell would)."""
    if node is None:
        return []
    if node.kind == "seq":
        return [ctx.token(child, origin) for child in node.value if child.kind == "scalar"]
    if node.kind == "scalar" and isinstance(node.value, str):
        return shell_tokens(ctx, node, origin, segment=False)
    return []


def shell_tokens(ctx: DocContext, node: YNode, origin: str, segment: bool = True,
                 env: dict[str, str | None] | None = None, script_word: int | None = None,
                 exports: dict[str, ArgToken] | None = None) -> list[ArgToken]:
    """Tokens of a shell (or env) string, each located at its line and column in the file.

    The string's value is split as a shell would (``lex``); with ``segment`` only the command that
    starts the engine is kept, after the script's literal variables (and ``env``, the container's
    environment) are expanded, and ``exports`` (when given) receives what the script gives that
    command's environment (``export``, ``set -a``, ``NAME=value`` before it). Locations point into the
    source text, inside quotes, escapes and block scalars. With ``script_word`` the string is a command
    line (``bash -c "..."``) and that word of it is the script read.
    """
    mapping = SourceMap(ctx.loaded.text, node)

    def token(word: str, start: int, end: int) -> ArgToken:
        return _located(ctx, mapping, [(word, start, end)], origin)[0]

    words = lex(mapping.value, shell=segment)
    if script_word is not None and script_word < len(words):
        text, start, _ = words[script_word]  # offsets hold while the quoted script has no escapes
        words = lex(text, shell=segment, base=start)
    if segment:
        commands = segments(expand(words, env))
        chosen = _engine_index(commands)
        words = [w for w in commands[chosen] if w[0] != "exec"] if commands else []
        if exports is not None and commands:
            exports.update(_environment_of(commands, chosen, token))
    return [token(*word) for word in words]


def shell_commands(ctx: DocContext, node: YNode, origin: str) -> list[list[ArgToken]]:
    """Every command of a shell string, in order, its words located (what a script does before it
    starts the engine: a download, a ``cd``)."""
    mapping = SourceMap(ctx.loaded.text, node)
    return [_located(ctx, mapping, command, origin) for command in segments(expand(lex(mapping.value)))]


def _located(ctx: DocContext, mapping: SourceMap, words: list[tuple[str, int, int]], origin: str) -> list[ArgToken]:
    tokens = []
    for word, start, end in words:
        line, column, end_column = mapping.span(start, end, word)
        location = Location(ctx.path, line, column, line, end_column)
        tokens.append(ArgToken(word, location, ctx.comments(line), origin))
    return tokens


def _engine_index(commands: list[list[tuple[str, int, int]]]) -> int:
    """The shell command that runs the engine, else the last command."""
    for index, command in enumerate(commands):
        if any(names_engine(word) for word, _, _ in command) and \
                not engine_argv.mentions_only([word for word, _, _ in command]):
            return index
    return len(commands) - 1


def _environment_of(commands: list[list[tuple[str, int, int]]], chosen: int, token) -> dict[str, ArgToken]:
    """What the commands before ``chosen`` export, and the assignments before its program (also after
    ``exec``, ``nohup``, ``env``: env(1) sets them); only the words of commands that set the environment
    are located."""
    environment = Environment()
    for command in commands[:chosen]:
        texts = [word for word, _, _ in command if word not in OPERATORS]
        if texts and ("=" in texts[0] or texts[0] in SETS_ENV):
            environment.read([token(*word) for word in command if word[0] not in OPERATORS])
    run = [word for word in commands[chosen] if word[0] not in OPERATORS]
    wrapped = next((i for i, word in enumerate(run) if word[0] not in WRAPPERS), len(run))
    leading = []
    for word in run[wrapped:]:
        if not _ASSIGNMENT.match(word[0]):
            break
        leading.append(token(*word))
    return {**environment.exported, **assignments(leading, "prefix")}


def names_engine(word: str) -> bool:
    """A word that is an engine's program or server module (``vllm``, ``/usr/bin/llama-server``,
    ``sglang.launch_server``)."""
    base = word.rsplit("/", 1)[-1]
    return base in ("vllm", "sglang", "llama-server", "llama-cpp-server", "tokenspeed") or \
        engine_argv._engine_of_module(word) is not None


# ---------------------------------------------------------------- the environment a script builds

# words before a program that still leave its assignments its environment (env(1) sets them)
WRAPPERS = ("exec", "nohup", "env", "time")
# commands that set the environment (after a keyword that opens a branch or loop)
SETS_ENV = ("export", "declare", "set", "unset", "then", "do", "else", "{")


class Environment:
    """The environment a script builds for the commands it starts: ``export NAME=value``, ``export NAME``
    of a variable set before, ``declare -x``, every assignment while ``set -a`` is on, ``unset NAME``
    (POSIX ``export``, ``set -a``: the exported variables are the environment of every later command)."""

    def __init__(self) -> None:
        self.exported: dict[str, ArgToken] = {}
        self.assigned: dict[str, ArgToken] = {}
        self.all_export = False

    def read(self, tokens: list[ArgToken]) -> None:
        texts = [t.text for t in tokens]
        while texts and texts[0] in ("then", "do", "else", "{"):
            tokens, texts = tokens[1:], texts[1:]
        if not texts:
            return
        if texts[0] == "set":
            for index, text in enumerate(texts[1:], start=1):
                if text[:1] in "-+" and "o" not in text and "a" in text:  # set -a, set -ea, set +a
                    self.all_export = text[0] == "-"
                elif text in ("-o", "+o") and texts[index + 1:index + 2] == ["allexport"]:
                    self.all_export = text == "-o"
        elif texts[0] == "unset":
            for text in texts[1:]:
                self.exported.pop(text, None)
        elif texts[0] == "export" or texts[:2] == ["declare", "-x"]:
            for token in tokens[1 if texts[0] == "export" else 2:]:
                name, assigned, _ = token.text.partition("=")
                if assigned and name.isidentifier():
                    self.exported[name] = tail(token, len(name) + 1, "export")
                elif name in self.assigned:  # export NAME of a variable set before: its value
                    self.exported[name] = self.assigned[name].replaced(origin="export")
        else:
            assigned = assignments(tokens, "assign")
            if len(assigned) == len(tokens):  # only assignments: shell variables, exported under set -a
                self.assigned.update(assigned)
                self.exported.update(assigned if self.all_export else {})


def assignments(tokens: list[ArgToken], how: str) -> dict[str, ArgToken]:
    """``NAME=value`` words before the program (``CUDA_VISIBLE_DEVICES=0,1 vllm serve ...``): its env;
    each value's origin says how it was given (``prefix``, ``export``, ``assign``)."""
    env: dict[str, ArgToken] = {}
    for token in tokens:
        name, assigned, _ = token.text.partition("=")
        if not assigned or not name.isidentifier():
            break
        env[name] = tail(token, len(name) + 1, how)
    return env


def tail(token: ArgToken, offset: int, origin: str | None = None) -> ArgToken:
    """The part of ``token`` after its first ``offset`` characters (``--gpus=2`` -> ``2``), located."""
    loc = token.location
    return ArgToken(token.text[offset:], Location(loc.path, loc.line, loc.column + offset, loc.line, loc.end_column),
                    token.comments, origin or token.origin)


# how a script gives a variable to the engine, as a setting's source says it
_ENV_SOURCES = {"docker -e": "docker run -e {}", "export": "export {}", "assign": "{}= under set -a",
                "prefix": "{}= before the command"}


def environment_settings(env: dict[str, ArgToken]) -> dict[str, Setting]:
    """Variables a script gives the engine, as settings located where each is assigned (the token's
    origin says how: ``export``, ``prefix``, ``docker -e`` ...)."""
    found = {}
    for name, token in env.items():
        source = _ENV_SOURCES.get(token.origin, "{}=").format(name)
        found[name] = Setting(name, token.text if not token.synthetic else None, token.location, source,
                              token.comments, token.location, token.text, "env")
    return found
