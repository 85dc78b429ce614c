"""A script that another script of the repository runs with positional arguments.

A launcher (a Slurm batch script, a script a systemd unit runs) sets ``MODEL_PATH=...``, ``TP_SIZE=4``
and runs ``bash serving/server.sh $MODEL_PATH $PORT $TP_SIZE``; the script it runs assigns
``MODEL_PATH=$1`` ... and starts the engine with ``--model-path "$MODEL_PATH"``. Each such call is one
served model, at the launcher's call: the engine command of the script it runs, with the launcher's
values (each located where the launcher writes it), its ``#SBATCH`` GPUs and its header comments. The
script it runs is not reported on its own without a model when a caller in the repository gives it one.

The launcher names the script in three ways: a path relative to its own folder (or to the repository
root), a path under a folder held in a variable (``"${SCRIPT_DIR}/server.sh"``, ``$(dirname "$0")/...``:
the launcher's own folder, or the root), and an absolute path of the machine the repository is checked
out on, whose tail is the script's path in the repository. A script that parses options (``shift``,
``getopts``) is not read this way: what its positions hold depends on the options given.
"""

from __future__ import annotations

import posixpath

from ... import lazy
from ...model import ArgToken, ServedModel
from ...yamlio import LoadedFile
from ..core.contexts import Workspace
from . import named_files
from .scripts import file_heredocs, launches, locator, manifest_heredocs, scan_comments, script_model, without
from .shell import expand, lex, segments

# shell scripts, and Slurm batch scripts, often named .slurm or .sbatch: what a launcher may be
SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")
_POSITIONAL = lazy.Pattern(r"\$\{?[1-9]")
_PARSES_OPTIONS = lazy.Pattern(r"\b(?:shift|getopts)\b")
# the words before the script in a call: the shell that runs it and what runs that shell
_RUNNERS = frozenset(("bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/env", "srun", "nohup", "exec",
                      "time"))
_REDIRECTION = lazy.Pattern(r"\d*[<>].*")
# a path under a folder the launcher computes: ``${SCRIPT_DIR}/x.sh``, ``$DIR/x.sh``, ``$(dirname "$0")/x.sh``
_UNDER_FOLDER = lazy.Pattern(r"(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(\s*dirname\s[^)]*\))/(.+)")


def called_models(workspace: Workspace, loaded: LoadedFile, text: str, own: list[ServedModel]) -> list[ServedModel]:
    """``own`` (the served models of the script ``loaded``, whose commands are ``text``) with one served
    model per call of the script by another script of the repository that passes it positional
    arguments; the script's own engine starts without a model are dropped when a caller gives one."""
    if not _POSITIONAL.search(text) or _PARSES_OPTIONS.search(text):
        return own
    name = posixpath.basename(loaded.path)
    found: list[ServedModel] = []
    for rel in named_files.files_ending(workspace, SCRIPT_SUFFIXES):
        caller = named_files.read_text(workspace, rel) if rel != loaded.path else None
        if caller is not None and name in caller:
            found += _caller_models(workspace, loaded, text, LoadedFile(rel, caller, [], scan_comments(caller)))
    if not any(model.model is not None for model in found):
        return own
    return [model for model in own if model.model is not None] + found


def _caller_models(workspace: Workspace, wrapper: LoadedFile, text: str, caller: LoadedFile) -> list[ServedModel]:
    """The served models of each call of ``wrapper`` (its commands ``text``) in ``caller``."""
    data = file_heredocs(caller.text) + manifest_heredocs(caller.text)
    at_caller, at_wrapper = locator(caller), locator(wrapper)
    shift = len(text) + 1  # the caller's offsets, past the wrapper's: a word's offset says whose text it is in

    def locate(start: int, end: int, word: str):
        return at_caller(start - shift, end - shift, word) if start >= shift else at_wrapper(start, end, word)

    found: list[ServedModel] = []
    after = 0
    for command in segments(expand(lex(without(caller.text, data)))):
        index = _script_at(command, caller.path, wrapper.path)
        if index is None:
            continue
        word, start, end = command[0]
        call = ArgToken(word, *at_caller(start, end, word), "shell")
        for launched in launches(expand(lex(text), None, _positionals(command[index + 1:], shift)), locate):
            launched.command = call
            model = script_model(workspace, caller, launched, "shell script", f"call/{len(found)}", len(found),
                                 (after, call.location.line))
            found += [model] if model is not None else []
        after = call.location.line
    return found


def _script_at(command: list[tuple[str, int, int]], caller: str, wrapper: str) -> int | None:
    """Where ``command`` names the script ``wrapper`` it runs (after the shell that runs it), or None."""
    for index, (word, _, _) in enumerate(command):
        if _names(word, caller, wrapper):
            return index
        if word not in _RUNNERS and not word.startswith("-"):
            return None
    return None


def _names(written: str, caller: str, wrapper: str) -> bool:
    """Whether the path ``written`` in the script ``caller`` is the repository's script ``wrapper``."""
    if written.startswith("/"):  # the checkout's absolute path: its tail is the path in the repository
        ends = wrapper.split("/")
        tail = written.split("/")[-len(ends):]
        # (the repository may be a folder of the checkout: the script's folder and name are enough)
        return tail == ends or len(ends) > 1 and tail[-2:] == ends[-2:]
    under = _UNDER_FOLDER.fullmatch(written)
    written = under.group(1) if under is not None else written
    return wrapper in (named_files.repo_path(caller, written), named_files.repo_path("", written))


def _positionals(arguments: list[tuple[str, int, int]], shift: int) -> dict[str, tuple[str | None, int | None, int | None]]:
    """The positional parameters a call passes (``$1`` ...), each located in the caller (offset by
    ``shift``); one whose value the caller does not know is unknown (its default does not apply)."""
    found: dict[str, tuple[str | None, int | None, int | None]] = {}
    for number, (value, start, end) in enumerate(arguments, start=1):
        if _REDIRECTION.fullmatch(value):
            break
        known = "$" not in value and "`" not in value
        found[str(number)] = (str(value), start + shift, end + shift) if known else (None, None, None)
    return found
