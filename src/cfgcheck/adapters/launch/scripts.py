"""Shell commands that start an engine, wherever they are written: a script, a workflow step, a
Makefile recipe, a Dockerfile's shell form, a supervisord program, a script mounted from a ConfigMap.

A script is split into commands with the located shell lexer (``shell.py``: quotes, line
continuations, ``#`` comments, separators), its literal variables expanded (``MODEL=x`` then
``vllm serve $MODEL``). Each command that starts an engine is one served model:

- a launcher anywhere in the command (``vllm serve M``, ``python3 -m vllm.entrypoints.openai.api_server``,
  ``python -m sglang.launch_server``, after ``nohup``, ``exec``, ``CUDA_VISIBLE_DEVICES=0``...);
- ``docker run`` / ``podman run`` of an engine image: the options before the image are docker's
  (``-e``, ``--gpus``, ``--entrypoint``...), the words after it the container's arguments, read as the
  image's entrypoint reads them (``vllm/vllm-openai``: ``vllm serve``, so a first word is the model).

``pip install vllm``, ``vllm --version`` or an ``echo "vllm serve ..."`` start nothing.
"""

from __future__ import annotations

import posixpath
import re

from ...engines.argv import find_launch
from ...engines.images import parse_image
from ...model import ArgToken, Location, ServedModel, Setting
from ...records import ValueRecord
from ...yamlio import Comment, LoadedFile, parse_text
from ..core.offsets import LineIndex
from ..core.contexts import (DocContext, Workspace, comments_between, directives_of, file_comments,
                             served_limit)
from ..core.recognition import ENGINE_MARKERS, apply_launch, finish, set_image, to_int
from ..core.registry import document_models
from . import config_file, engine_containers, engine_pins, llama_env, model_presets, named_files
from .downloads import command_downloads
from .launched import Launched
from .shell import (OPERATORS, SETS_ENV, Environment, SourceMap, assignments, environment_settings, expand, lex,
                    names_engine, segments, tail, WRAPPERS)

# docker run options that take a value (docker CLI reference, `docker run --help`); any other option
# is a switch, or carries its value after "=".
_DOCKER_VALUE_OPTIONS = frozenset("""
-a --attach --add-host --annotation --blkio-weight --cap-add --cap-drop --cgroup-parent --cgroupns --cidfile
-c --cpu-shares --cpu-period --cpu-quota --cpus --cpuset-cpus --cpuset-mems --device --device-cgroup-rule
--dns --dns-option --dns-search --domainname -e --env --env-file --entrypoint --expose --gpus --group-add
--health-cmd --health-interval --health-retries --health-start-period --health-timeout -h --hostname --ip
--ip6 --ipc --isolation --kernel-memory -l --label --label-file --link --log-driver --log-opt --mac-address
-m --memory --memory-reservation --memory-swap --memory-swappiness --mount --name --network --net
--network-alias --oom-score-adj --pid --pids-limit --platform -p --publish --pull --restart --runtime
--security-opt --shm-size --stop-signal --stop-timeout --storage-opt --sysctl --tmpfs -u --user --ulimit
--userns --uts -v --volume --volume-driver --volumes-from -w --workdir
""".split())
_CONTAINER_RUNNERS = ("docker", "podman", "nerdctl")
_ONLY_VARIABLE = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


# ---------------------------------------------------------------- scripts


def scan_comments(text: str) -> dict[int, Comment]:
    """``#`` comments outside quotes, where a word starts (``a#b`` is a word, ``$#`` a parameter)."""
    found: dict[int, Comment] = {}
    quote = None
    for number, line in enumerate(text.split("\n"), start=1):
        previous = " "
        for column, char in enumerate(line):
            if quote:
                quote = None if char == quote and previous != "\\" else quote
            elif char in "'\"" and previous != "\\":
                quote = char
            elif char == "#" and previous in " \t;&|(" and line[max(0, column - 1)] != "$":
                text_part = line[column + 1:].strip()
                found[number] = Comment(number, column + 1, text_part, not line[:column].strip())
                break
            previous = char
    return found


def text_models(workspace: Workspace, loaded: LoadedFile, text: str, kind: str, prefix: str,
                env: dict[str, str | None] | None = None, name_of=None, heredocs: list[Heredoc] = ()) -> list[ServedModel]:
    """The served models of shell commands in ``text``, which has the file's offsets (what is not a
    command blanked): one per engine start; ``name_of(line)`` names the model started on ``line``."""
    locate = locator(loaded)
    found = []
    after = 0  # directives between the previous engine start and this one's last line are its own
    limit = served_limit(workspace)
    words = expand(lex(text, shell=True), env)
    started = launches(words, locate)
    if started and _DOWNLOADS.search(text):
        _downloaded_before(started, words, locate, kind, text)
    backgrounded = _background_starts(words, locate)
    for index, launched in enumerate(started):
        if len(found) > limit:
            break  # the registry's served_models reports the limit: the engine starts after it are not read
        last = max(t.location.line for t in launched.tokens + [launched.image] if t is not None)
        first = launched.first
        name = name_of(first.location.line) if name_of is not None and first is not None else None
        model = script_model(workspace, loaded, launched, kind, f"{prefix}/{index}", index, (after, last),
                             name, heredocs=heredocs)
        after = last
        if model is not None and launched.tokens:
            model.in_background = (launched.tokens[0].location.line, launched.tokens[0].location.column) in backgrounded
        if model is None and launched.image is not None and not launched.exec_into:
            model = engine_containers.container_model(loaded, launched.image, f"{prefix}/{index}", name)
        if model is not None:  # a llama-server router stands for the models of its preset file
            routed = model_presets.expand(workspace, loaded.path, model)
            found.extend([model] if routed is None else routed)
    if ".sh" in text:  # an engine image handed to a wrapper script as its argument
        found += engine_containers.wrapped_containers(workspace, loaded, words, locate, _DOCKER_VALUE_OPTIONS)
    return found


# a command that may fetch weights (``launch/downloads.py`` reads them)
_DOWNLOADS = re.compile(r"\b(?:download|clone|curl|wget|aria2c)\b")


def _downloaded_before(started: list[Launched], words: list[tuple[str, int, int]], locate, kind: str, text: str) -> None:
    """What the script downloads before each engine start (``hf download ORG/NAME --local-dir D``, a
    clone, a fetched file): a model folder it fills, and the revision it pins. A script that runs on a
    host in its own folder (no ``cd``) names a relative folder as the engine's ``--model`` does: as written."""
    commands = [[ArgToken(word, *locate(start, end, word), "shell") for word, start, end in command]
                for command in segments(words) if _DOWNLOADS.search(" ".join(word for word, _, _ in command[:5]))
                or command[0][0] == "cd"]
    in_own_folder = kind in named_files.HOST_KINDS and not named_files.changes_folder(text)
    found = command_downloads(commands, "" if in_own_folder else None, kind)
    for launched in started:
        first = launched.first
        launched.downloads = [d for d in found if first is not None and d.location.line < first.location.line]


def _background_starts(words: list[tuple[str, int, int]], locate) -> set[tuple[int, int]]:
    """(line, column) of the first word of each command that ``&`` sends to the background; the ``&`` of a
    redirection (``2>&1``, ``&> log``) is part of the command."""
    starts, first = set(), None
    for index, (word, start, end) in enumerate(words):
        redirect = word == "&" and (index > 0 and words[index - 1][0].endswith((">", "<")) or
                                    index + 1 < len(words) and words[index + 1][0].startswith(">"))
        if word in OPERATORS and not redirect:
            if word == "&" and first is not None:
                location = locate(*first)[0]
                starts.add((location.line, location.column))
            first = None
        elif first is None and not redirect:
            first = (start, end, word)
    return starts


def recipe_models(workspace: Workspace, loaded: LoadedFile, read, kind: str, prefix: str) -> list[ServedModel]:
    """The served models of the recipes ``read(text)`` finds (their commands as shell text at the file's
    offsets, each recipe's (line, name) in order, the variables), each named after its recipe: a
    Makefile's targets, a Justfile's recipes."""
    if not any(marker in loaded.text for marker in ENGINE_MARKERS):
        return []
    recipes, names, variables = read(loaded.text)

    def recipe_of(line: int) -> str | None:
        return next((name for start, name in reversed(names) if start < line), None)

    return text_models(workspace, loaded, recipes, kind, prefix, variables, recipe_of)


def locator(loaded: LoadedFile):
    """``locate(start, end, word)`` for words at offsets of the file's text: location and comments."""
    lines = LineIndex(loaded.text)

    def locate(start: int, end: int, word: str) -> tuple[Location, tuple[str, ...]]:
        line, column = lines.line_column(start)
        end_line = lines.line_column(max(start, end - 1))[0]
        width = end - start if end_line == line else len(word)
        return Location(loaded.path, line, column, line, column + width), loaded.comments_for(line)

    return locate


# cat > FILE << EOF ... EOF (also <<-, a quoted delimiter, tee): a file the script writes, e.g. the
# engine --config file a benchmark script generates before it starts the server
_HEREDOC_START = re.compile(r"(?:cat|tee)[ \t]*>?[ \t]*([\w./-]+)[ \t]*<<-?[ \t]*['\"]?(\w+)['\"]?[^\n]*\n")


class Heredoc(ValueRecord):
    """A heredoc of a script: the file it writes, where its body starts, its body."""

    __slots__ = ("name", "start", "body")

    def __init__(self, name: str, start: int, body: str) -> None:
        self.name = name  # the file it writes, as written
        self.start = start  # offset of its body in the script
        self.body = body


def file_heredocs(text: str) -> list[Heredoc]:
    """Heredocs that write a file, in order."""
    return [Heredoc(match.group(1), match.end(), body) for match, body in _bodies(text, _HEREDOC_START)]


def _bodies(text: str, start: re.Pattern):
    """(opening match, body) of each heredoc ``start`` opens (delimiter in group 2); each search starts
    after the previous body (linear in the script, whatever a pull request writes: a body without its
    delimiter runs to the end, as in the shell)."""
    position = 0
    while (match := start.search(text, position)) is not None:
        end = re.compile(rf"^[ \t]*{re.escape(match.group(2))}[ \t]*$", re.M).search(text, match.end())
        yield match, text[match.end():end.start() if end is not None else len(text)]
        position = end.end() if end is not None else len(text)


# any heredoc (`cat <<EOF > FILE`, `kubectl apply -f - <<'EOF'`, `cat <<EOF | kubectl apply -f -`); the
# delimiter starts with a letter, so `$((1 << 2))` opens none
_ANY_HEREDOC = re.compile(r"(?<![<\w])<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1[^\n]*\n")
_MANIFEST_KEYS = (re.compile(r"^[ \t]*apiVersion:[ \t]*\S", re.M), re.compile(r"^[ \t]*kind:[ \t]*\S", re.M))


def manifest_heredocs(text: str) -> list[Heredoc]:
    """Heredocs whose body is a Kubernetes manifest (apiVersion and kind): what the script applies."""
    return [Heredoc("", match.end(), body) for match, body in _bodies(text, _ANY_HEREDOC)
            if all(key.search(body) for key in _MANIFEST_KEYS)]


def manifest_models(workspace: Workspace, loaded: LoadedFile, manifests: list[Heredoc]) -> list[ServedModel]:
    """The served models of each manifest heredoc, read as the YAML file it is, every node at its line
    and column in the script (the body is parsed below as many blank lines as precede it)."""
    found: list[ServedModel] = []
    for inner in parsed_manifests(loaded, manifests):
        found += document_models(workspace, inner)
    return found


def parsed_manifests(loaded: LoadedFile, manifests: list[Heredoc]) -> list[LoadedFile]:
    """Each manifest heredoc parsed as the YAML file it is, at the script's path and lines."""
    found = []
    for doc in manifests:
        inner = parse_text(f"{loaded.path}#heredoc.yaml", "\n" * loaded.text.count("\n", 0, doc.start) + doc.body)
        inner.path = loaded.path
        if inner.error is None:
            found.append(inner)
    return found


# cmd=$(cat <<- EOF (also <<, a quoted delimiter): a command written as text into a variable from a
# heredoc, which the script runs later with ``eval $cmd``
_CAPTURED_HEREDOC = re.compile(r"^[ \t]*([A-Za-z_]\w*)=\$\([ \t]*cat[ \t]*<<-?[ \t]*['\"]?([A-Za-z_]\w*)['\"]?[ \t]*\n", re.M)


def evaluated_heredocs(text: str) -> str:
    """The script with each command it captures from a heredoc into a variable and ``eval``s
    (``cmd=$(cat <<- EOF`` / ``vllm serve ${MODEL} ...`` / ``EOF`` / ``)`` ... ``eval $cmd``) opened in
    place: the opening and the closing blanked (offsets kept), the body a command on its own lines,
    after the assignments above it, as ``eval`` runs it. A variable nothing evaluates stays text."""
    for match, body in list(_bodies(text, _CAPTURED_HEREDOC)) if "eval" in text else ():
        end = match.end() + len(body)
        closing = re.compile(rf"[ \t]*{re.escape(match.group(2))}[ \t]*\n[ \t]*\)").match(text, end)
        evaluated = re.compile(rf"\beval[ \t]+[\"']?\$\{{?{match.group(1)}\b").search(text, end)
        if closing is not None and evaluated is not None:
            text = _blanked(_blanked(text, match.start(), match.end() - 1), closing.start(), closing.end())
    return text


def _blanked(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def without(text: str, heredocs: list[Heredoc]) -> str:
    """The script with heredoc bodies blanked (newlines kept): they are data, not commands."""
    for doc in heredocs:
        text = _blanked(text, doc.start, doc.start + len(doc.body))
    return text


class _TextMap:
    """Offsets in a heredoc body -> lines and columns of the script (the protocol of ``shell.SourceMap``)."""

    def __init__(self, text: str, start: int):
        self.start, self.line_column = start, LineIndex(text).line_column

    def absolute(self, offset: int) -> int:
        return self.start + offset


def _heredoc_config(loaded: LoadedFile, heredocs: list[Heredoc], written: str):
    """The engine --config file the script itself writes, parsed and located in the script."""
    for doc in heredocs:
        if posixpath.normpath(doc.name) == posixpath.normpath(written):
            inner = parse_text(f"{loaded.path}#{doc.name}.yaml", doc.body)  # YAML, whatever the script's suffix
            inner.path = loaded.path
            if inner.error is None and inner.documents and inner.documents[0].root is not None:
                return inner, inner.documents[0].root, _TextMap(loaded.text, doc.start)
    return None


# ---------------------------------------------------------------- commands that start an engine


def launches(words: list[tuple[str, int, int]], locate) -> list[Launched]:
    """Every engine start in already expanded shell ``words``; ``locate(start, end, word)`` gives a
    word's location and comments."""
    found: list[Launched] = []
    variables = Environment()
    containers: dict[str, Launched] = {}  # docker run --name NAME of an engine image, whatever its entrypoint
    for command in segments(words):
        texts = [word for word, _, _ in command if word not in OPERATORS]
        if not _may_matter(texts):
            continue  # locating every word of a long script is most of its cost
        tokens = [ArgToken(word, *locate(start, end, word), "shell") for word, start, end in command
                  if word not in OPERATORS]
        runner = next((i for i, t in enumerate(texts[:-1]) if t.rsplit("/", 1)[-1] in _CONTAINER_RUNNERS
                       and texts[i + 1] == "run"), None)
        if runner is not None:
            launched = docker_run(tokens[runner + 2:], variables.exported)
            if launched is not None:
                launched.command = tokens[runner]
                containers.update({launched.container: launched} if launched.container else {})
                found.append(launched)
        elif _starts(tokens):
            # NAME=value before the program, also after ``exec``, ``nohup``, ``env`` (env(1): it sets them)
            wrapped = next((i for i, t in enumerate(texts) if t not in WRAPPERS), len(texts))
            found.append(_in_container(Launched(tokens, env={**variables.exported, **assignments(tokens[wrapped:], "prefix")}),
                                       texts, containers))
        else:
            variables.read(tokens)
    return found


# docker exec options that take a value (docker CLI reference, `docker exec --help`)
_EXEC_VALUE_OPTIONS = frozenset(("-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"))


def _in_container(launched: Launched, texts: list[str], containers: dict[str, Launched]) -> Launched:
    """An engine ``docker exec NAME ...`` starts in the container an earlier ``docker run --name NAME IMAGE``
    of the script runs (with a shell as its entrypoint, to keep it up): that image runs the engine."""
    if len(texts) < 3 or texts[0].rsplit("/", 1)[-1] not in _CONTAINER_RUNNERS or texts[1] != "exec":
        return launched
    index = 2
    while index < len(texts) and texts[index].startswith("-"):
        index += 2 if texts[index] in _EXEC_VALUE_OPTIONS else 1
    started = containers.get(texts[index]) if index < len(texts) else None
    if started is not None:
        launched.command, launched.image, launched.own_entrypoint = launched.tokens[0], started.image, True
        launched.gpus, launched.env = started.gpus, {**started.env, **launched.env}
        started.exec_into = True
    return launched


def _may_matter(texts: list[str]) -> bool:
    """Whether a command may start an engine (it names one, or runs a container) or set the environment
    (an assignment, ``export``, ``set``, ``unset``): the others are skipped before their words are located."""
    return bool(texts) and ("=" in texts[0] or texts[0] in SETS_ENV or any(
        names_engine(text) or text.rsplit("/", 1)[-1] in _CONTAINER_RUNNERS for text in texts))


def file_launch(workspace: Workspace, rel: str, env: dict[str, str | None]) -> Launched | None:
    """The first engine start of the repository script ``rel`` (a compose service's entrypoint mounted
    from the repository), its variables from ``env`` (the container's), each word located in the
    script; heredoc bodies are data. None when the file cannot be read or starts no engine."""
    text = named_files.read_text(workspace, rel)
    if text is None:
        return None
    loaded = LoadedFile(rel, text, [], scan_comments(text))
    data = file_heredocs(text) + manifest_heredocs(text)
    return next(iter(launches(expand(lex(without(text, data), shell=True), env), locator(loaded))), None)


def scalar_launches(ctx: DocContext, node, env: dict[str, str | None], rewrite=None, shell: bool = True) -> list[Launched]:
    """Every engine start in a YAML string that holds shell commands (a workflow step's or a SkyPilot
    task's ``run:``), each word located where it is written in the file. ``rewrite`` changes the text
    before it is read without moving any character (a format's own syntax made the shell's); without
    ``shell`` the string is one command line whose newlines are spaces."""
    mapping = SourceMap(ctx.loaded.text, node)
    text = rewrite(mapping.value) if rewrite is not None else mapping.value

    def locate(start: int, end: int, word: str):
        line, column, end_column = mapping.span(start, end, word)
        return Location(ctx.path, line, column, line, end_column), ctx.comments(line)

    return launches(expand(lex(text, shell=shell), env), locate)


def _starts(tokens: list[ArgToken]) -> bool:
    return find_launch(tokens, None) is not None


def docker_run(tokens: list[ArgToken], exported: dict[str, ArgToken] | None = None) -> Launched | None:
    """``docker run [OPTIONS] IMAGE [ARG...]``: the engine image's argv and the options that matter;
    ``-e NAME`` passes the value the script ``exported``, if any."""
    launched = Launched([])
    entrypoint: list[ArgToken] = []
    index = 0
    while index < len(tokens) and (tokens[index].text.startswith("-") or _variable(tokens[index].text)):
        token = tokens[index]  # a word that is only a variable ($GPU_OPTIONS): options of unknown value
        option, has_value, value = token.text.partition("=")
        if not has_value and option in _DOCKER_VALUE_OPTIONS and index + 1 < len(tokens):
            index += 1
            value_token = tokens[index]
        else:
            value_token = tail(token, len(option) + 1) if has_value else None
        if value_token is not None:
            _docker_option(launched, entrypoint, option, value_token, exported or {})
        index += 1
    if index >= len(tokens):
        return None
    launched.image = tokens[index]
    if parse_image(launched.image.text).engine is None:
        return None
    # the container's arguments: what the image's entrypoint receives, not a shell command
    arguments = entrypoint + [ArgToken(t.text, t.location, t.comments, "args") for t in tokens[index + 1:]]
    texts = [t.text for t in arguments]
    if len(texts) >= 3 and texts[0].rsplit("/", 1)[-1] in ("sh", "bash") and texts[1] in ("-c", "-lc", "-ec"):
        inner = next(iter(launches(expand(lex(texts[2])), _within(arguments[2]))), None)
        arguments = inner.tokens if inner is not None else arguments
    launched.tokens = arguments
    return launched


def _variable(text: str) -> bool:
    return text.startswith("$") and bool(_ONLY_VARIABLE.fullmatch(text))


def _within(token: ArgToken):
    """``locate`` for words of a script held in one token (``bash -c "..."``), by offset from it."""
    def locate(start: int, end: int, word: str):
        before = token.text[:start]
        line = token.location.line + before.count("\n")
        column = (token.location.column + start) if "\n" not in before else start - before.rfind("\n")
        return Location(token.location.path, line, column, line, column + len(word)), token.comments

    return locate


def _docker_option(launched: Launched, entrypoint: list[ArgToken], option: str, value: ArgToken,
                   exported: dict[str, ArgToken]) -> None:
    if option == "--gpus":
        launched.gpus = value
    elif option == "--name":
        launched.container = value.text
    elif option == "--entrypoint":  # --entrypoint="" clears the image's: the arguments are the command
        launched.own_entrypoint = True
        entrypoint.extend([value] if value.text else [])
    elif option in ("-e", "--env"):
        name, assigned, _ = value.text.partition("=")
        passed = exported.get(name) or ArgToken("", value.location, (), "docker -e", True)
        launched.env[name] = tail(value, len(name) + 1, "docker -e") if assigned else passed


# Slurm's GPU requests (sbatch(1), srun(1)): --gres=gpu[:TYPE]:COUNT, --gpus[-per-node|-per-task]=[TYPE:]COUNT,
# -G [TYPE:]COUNT. A TYPE is the site's GRES name (a100, nvidia_rtx_a6000, ...). A GRES without a count
# (--gres=gpu, --gres=gpu:a100) is one (Slurm's gres syntax ``name[[:type]:count]``, count 1 by default).
_SLURM_GPUS = re.compile(r"(?:--gres[= ]gpu(?::(?P<gres>[\w.-]+))?:|--gpus(?:-per-node|-per-task)?[= ](?:(?P<gpus>[\w.-]+):)?"
                         r"|-G ?(?:(?P<short>[\w.-]+):)?)(?P<count>\d+)\b|--gres[= ]gpu(?::(?P<one>[A-Za-z][\w.-]*))?(?=$|[\s,])")


def slurm_gpus(loaded: LoadedFile, tokens: list[ArgToken]) -> tuple[Setting | None, str | None]:
    """The GPUs Slurm gives the engine, and their type when named: ``srun --gres=gpu:2 vllm serve ...``
    (the command's own options), else the script's ``#SBATCH`` lines."""
    for index, token in enumerate(tokens):
        if token.text.startswith(("--gres", "--gpus", "-G")):
            joined = token.text if "=" in token.text or index + 1 >= len(tokens) else f"{token.text}={tokens[index + 1].text}"
            match = _SLURM_GPUS.fullmatch(joined.replace("-G=", "-G "))
            if match is not None:
                where = token if "=" in token.text else tokens[index + 1]
                return Setting("gpus", int(match.group("count") or 1), where.location, "srun GPUs", where.comments,
                               where.location, where.text, "shell"), _slurm_type(match)
    if "sbatch" not in loaded.shared:  # the script's #SBATCH lines: read once for all its engine starts
        loaded.shared["sbatch"] = _sbatch_gpus(loaded)
    found = loaded.shared["sbatch"]
    return (found[0].replaced(), found[1]) if found is not None else (None, None)  # each model its own Setting


def _sbatch_gpus(loaded: LoadedFile) -> tuple[Setting, str | None] | None:
    for number, line in enumerate(loaded.text.split("\n"), start=1):
        match = _SLURM_GPUS.search(line) if line.startswith("#SBATCH") else None
        if match is not None:
            written = match.group("count") or match.group(0)  # the count, else the whole request
            column = (match.start("count") if match.group("count") else match.start()) + 1
            location = Location(loaded.path, number, column, number, column + len(written))
            return Setting("gpus", int(match.group("count") or 1), location, "#SBATCH GPUs", loaded.comments_for(number),
                           location, written, "shell"), _slurm_type(match)
    return None


def _slurm_type(match: re.Match) -> str | None:
    return match.group("gres") or match.group("gpus") or match.group("short") or match.group("one")


def gpu_count(text: str) -> int | str:
    """``--gpus``: ``2``, ``all`` (unknown here), ``device=0,1`` (quoted or not) -> 2."""
    value = text.strip("'\"")
    if value.startswith("device="):
        return len(value.split("=", 1)[1].strip("'\"").split(","))
    if value.startswith("count="):
        return to_int(value.split("=", 1)[1])
    return to_int(value)


# ---------------------------------------------------------------- served models

def env_settings(launched: Launched) -> dict[str, Setting]:
    """The variables a script gives the engine it starts, as settings located where each is assigned."""
    return environment_settings(launched.env)


def _launcher_words(tokens: list[ArgToken]):
    """The words before the first flag: the executable and what runs it (``nohup``, ``python -m``)."""
    for token in tokens:
        if token.text.startswith("--"):
            return
        yield token.text


def script_model(workspace: Workspace, loaded: LoadedFile, launched: Launched, kind: str, identity: str,
                 index: int, lines: tuple[int, int], name: str | None = None,
                 heredocs: list[Heredoc] = ()) -> ServedModel | None:
    """The served model of one engine start in a script (or a workflow step); directives on the
    lines after ``lines[0]`` up to ``lines[1]`` are its own."""
    first = launched.first
    if first is None:
        return None
    stem = posixpath.splitext(posixpath.basename(loaded.path))[0]
    model = ServedModel(name=name or (stem if index == 0 else f"{stem}#{index + 1}"), kind=kind, path=loaded.path,
                        document=0, location=first.location, identity=f"{loaded.path}#{identity}")
    model.comments = file_comments(loaded)
    model.launch_comments = first.comments  # the block on and above the line the command starts on
    model.directives = directives_of(loaded.path, comments_between(loaded, *lines))
    image_engine = None
    if launched.image is not None:
        image = Setting("image", launched.image.text, launched.image.location, "docker run IMAGE", launched.image.comments,
                        launched.image.location, launched.image.text, "shell")
        set_image(None, model, image)
        image_engine = model.engine if model.engine != "unknown" and not launched.own_entrypoint else None
    if not apply_launch(None, model, launched.tokens, image_engine):
        return None
    if launched.image is None:  # on the host: the executable's environment may name the version
        engine_pins.apply(model, engine_pins.environment_pin(list(_launcher_words(launched.tokens))))
    model.env.update(env_settings(launched))
    model.downloads.extend(launched.downloads)
    llama_env.env_args(model)
    if launched.gpus is not None:
        model.gpus = Setting("gpus", gpu_count(launched.gpus.text), launched.gpus.location, "docker run --gpus",
                             launched.gpus.comments, launched.gpus.location, launched.gpus.text, "shell")
    visible = launched.env.get("CUDA_VISIBLE_DEVICES")
    if model.gpus is None and visible is not None and re.fullmatch(r"\d+(,\d+)*", visible.text):
        model.gpus = Setting("gpus", len(visible.text.split(",")), visible.location, "CUDA_VISIBLE_DEVICES",
                             visible.comments, visible.location, visible.text, "env")
    if model.gpus is None:
        model.gpus, product = slurm_gpus(loaded, launched.tokens)
        model.gpu_product = model.gpu_product or product
    argument = config_file.config_argument(model)
    if argument is not None:
        found = _heredoc_config(loaded, heredocs, argument.text) or \
            config_file.beside(workspace, loaded.path, argument.text) or \
            config_file.beside(workspace, "", argument.text)
        if found is not None:
            config_file.apply_file(model, *found)
        elif (rel := _absent_beside(workspace, loaded, launched, kind, argument.text)) is not None:
            config_file.missing(workspace, argument, rel)
    for template in _file_arguments(model.argv, "--chat-template", _TEMPLATE_SUFFIXES):
        if (rel := _absent_beside(workspace, loaded, launched, kind, template.text)) is not None:
            config_file.missing(workspace, template, rel, "chat template", "--chat-template")
    return finish(model)


# the file suffixes of a chat template (vLLM's and SGLang's --chat-template also take the template itself, or
# for SGLang a built-in template's name: a value is a file only when it ends so)
_TEMPLATE_SUFFIXES = (".jinja", ".jinja2", ".j2", ".json", ".tmpl", ".txt")


def _file_arguments(argv: list[ArgToken], flag: str, suffixes: tuple[str, ...]) -> list[ArgToken]:
    """The values of ``flag`` (``--flag VALUE``, ``--flag=VALUE``) in ``argv`` that name a file by its suffix."""
    found = []
    for index, token in enumerate(argv):
        if token.text == flag and index + 1 < len(argv):
            found.append(argv[index + 1])
        elif token.text.startswith(f"{flag}="):
            found.append(tail(token, len(flag) + 1))
    return [token for token in found if token.text.endswith(suffixes)]


def _absent_beside(workspace: Workspace, loaded: LoadedFile, launched: Launched, kind: str, written: str) -> str | None:
    """The repository path of a relative file an engine run on the host reads (a docker run's path is in its
    image), from the script's folder, when the repository holds no such file beside the script nor at the
    root (the script may be run from there); None when it is there, or not judged (see ``beside_script``)."""
    if kind not in named_files.HOST_KINDS or launched.image is not None or written.startswith("/") or \
            not named_files.beside_script(loaded.text, written):
        return None
    rel = named_files.repo_path(loaded.path, written)
    return rel if rel and named_files.absent(workspace, named_files.repo_path("", written) or rel) else None
