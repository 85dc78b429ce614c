"""The `lint` command without its parser, and the fast path to it that start-up takes.

``cli.py`` declares every command and option with typer. Importing typer costs about as much CPU time
as yamllint's whole start-up (measured in bench/RESULTS.md), so the common call of a
pre-commit hook or CI step, ``cfgcheck lint [PATHS...]`` with a few flag options, is recognised by
``fast_lint_arguments`` and run here directly. Any other argument list (help, another command, an
option with a value other than ``--format``, ``--opt=value``, ``-``, ``--``, a mistake) returns None and
goes to typer, so help, usage errors and their exit codes are typer's own. Both read the options of
`lint` from one table, ``LINT_OPTIONS``: ``cli.py`` builds the typer command from it, the fast path its
flags and defaults. ``tests/cli/test_fast_path.py`` checks that both parsers give the command the same
arguments.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .errors import ConfigError, UsageError
from .records import Record
from .reporters import FORMATS

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, List, Optional


ONLINE_HELP = ("Look config.json and the safetensors index up on the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN; "
               "cached); --offline never does (default: hub in the configuration, else CFGCHECK_HUB).")


class LintOption(Record):  # not a frozen dataclass: every run imports it, and a plain record costs it no exec
    """One option of `lint`: the ``run_lint_command`` parameter it sets, its names as typer declares
    them (``--on/--off`` for a switch), its default and help, and what it takes: ``flag`` (no value),
    ``switch`` (--on/--off, default None: the configuration decides), ``format`` (a reporter name),
    ``fail-on`` (a severity), ``count`` (a whole number), ``text``, ``texts`` (repeatable) or ``path``."""

    __slots__ = ("parameter", "declarations", "default", "help", "takes")

    def __init__(self, parameter: str, declarations: tuple[str, ...], default: object, help: str, takes: str) -> None:
        self.parameter = parameter
        self.declarations = declarations
        self.default = default
        self.help = help
        self.takes = takes


# In --help order. cli.py builds the typer command from this table; the fast path reads the flags,
# switches and --format of it (an option that takes another value goes to typer).
LINT_OPTIONS = (
    LintOption("base", ("--base",), None, "Diff mode: compare with the merge base of REF and HEAD.", "text"),
    LintOption("fmt", ("--format", "-f"), "text", "Output format.", "format"),
    LintOption("output", ("--output", "-o"), None, "Write the report to FILE.", "path"),
    LintOption("config_file", ("--config",), None, "Configuration file.", "path"),
    LintOption("select", ("--select",), None, "Only these rules (codes, prefixes or names).", "texts"),
    LintOption("ignore", ("--ignore",), None, "Skip these rules.", "texts"),
    LintOption("fail_on", ("--fail-on",), None, "Lowest severity that fails (default error).", "fail-on"),
    LintOption("stdin_filename", ("--stdin-filename",), None,
               "The path standard input ('-') stands for: reported, and where the configuration is looked up.", "path"),
    LintOption("render_helm", ("--render-helm/--no-render-helm",), None,
               "Render Helm charts with helm template (default: when helm is installed).", "switch"),
    LintOption("online", ("--online/--offline",), None, ONLINE_HELP, "switch"),
    LintOption("baseline_file", ("--baseline",), None, "Report only findings not recorded in this baseline FILE.", "path"),
    LintOption("write_baseline", ("--write-baseline",), None, "Record today's findings in FILE (then they pass).", "path"),
    LintOption("jobs", ("--jobs", "-j"), None,
               "Processes in all that read and adapt files, and check served models, when there are many "
               "(default and 0: the cores this process may use, within its CPU quota, at most 4; 1: one process).", "count"),
    LintOption("no_cache", ("--no-cache",), False,
               "Neither read nor write the content cache (XDG_CACHE_HOME/cfgcheck: see docs/CACHE.md).", "flag"),
    LintOption("quiet", ("--quiet", "-q"), False, "Findings only: no summary line, no progress.", "flag"),
    LintOption("statistics", ("--statistics",), False, "Counts per rule instead of the findings.", "flag"),
    LintOption("show_fixes", ("--show-fixes",), False, "Show the mechanical fix of each fixable [*] finding.", "flag"),
)
PATHS_HELP = "Files or folders (default: .); '-' reads standard input."


def _flag_options() -> dict[str, tuple[str, bool]]:
    """option -> (parameter, value) for every option of `lint` without a value."""
    flags: dict[str, tuple[str, bool]] = {}
    for option in LINT_OPTIONS:
        if option.takes == "flag":
            flags.update((name, (option.parameter, True)) for name in option.declarations)
        elif option.takes == "switch":
            on, off = option.declarations[0].split("/")
            flags.update({on: (option.parameter, True), off: (option.parameter, False)})
    return flags


FLAG_OPTIONS = _flag_options()
FORMAT_OPTIONS = next(option.declarations for option in LINT_OPTIONS if option.takes == "format")
COUNT_OPTIONS = {name: option.parameter for option in LINT_OPTIONS if option.takes == "count"
                 for name in option.declarations}


def lint_defaults() -> dict:
    """Every parameter of `lint` at its default: what typer passes when an option is not given."""
    return {"paths": None, **{option.parameter: option.default for option in LINT_OPTIONS}}


def fast_lint_arguments(argv: list[str]) -> dict | None:
    """The arguments of ``run_lint_command`` for ``lint`` followed by paths, the options of
    ``FLAG_OPTIONS``, ``--format NAME`` / ``-f NAME`` and ``--jobs N`` in any order; None for anything else (and on
    Windows, where click expands wildcards in the arguments)."""
    if not argv or argv[0] != "lint" or sys.platform == "win32":
        return None
    arguments = lint_defaults()
    paths: list[Path] = []
    tokens = iter(argv[1:])
    for token in tokens:
        if token in FLAG_OPTIONS:
            name, value = FLAG_OPTIONS[token]
            arguments[name] = value
        elif token in FORMAT_OPTIONS:
            value = next(tokens, None)
            if value not in FORMATS:
                return None
            arguments["fmt"] = value
        elif token in COUNT_OPTIONS:
            value = next(tokens, None)
            if value is None or not value.isdigit() or not value.isascii():
                return None
            arguments[COUNT_OPTIONS[token]] = int(value)
        elif not token or token.startswith("-") or not token.isprintable():
            return None
        else:
            paths.append(Path(token))
    arguments["paths"] = paths or None
    return arguments


def split_values(values: Optional[List[str]]) -> list[str]:
    return [part for value in values or [] for part in value.split(",") if part.strip()]


def run_lint_command(paths: Optional[List[Path]], base: Optional[str], fmt: str, output: Optional[Path],
                     config_file: Optional[Path], select: Optional[List[str]], ignore: Optional[List[str]],
                     fail_on: Optional[str], stdin_filename: Optional[Path], render_helm: Optional[bool],
                     online: Optional[bool], baseline_file: Optional[Path], write_baseline: Optional[Path],
                     jobs: Optional[int], no_cache: bool, quiet: bool, statistics: bool, show_fixes: bool) -> int:
    """Lint files and folders; the exit code (1 when findings reach ``fail_on``)."""
    from .git import listing_ahead  # before the modules a lint imports: git lists the work tree meanwhile

    with listing_ahead([] if base else paths or [Path(".")]):
        from .lint import lint as run_lint
        from .pool import default_jobs

        if jobs is not None and jobs < 0:
            raise UsageError(f"--jobs {jobs}: give 1 or more processes, or 0 for the machine's cores")

        paths = paths or [Path(".")]
        config = load_config(config_paths(paths, stdin_filename), config_file)
        if render_helm is not None:
            config.data["render-helm"] = render_helm
        if online is not None:
            config.data["hub"] = online
        hand_hub_client(config.data)
        if config.get("render-helm") is True:
            from .render.charts import helm_binary

            if helm_binary() is None:
                raise UsageError("Helm rendering was asked for (--render-helm / render-helm: true) but helm is not installed"
                                 " (pip install 'cfgcheck[helm]')")
        if base:
            from .diff import lint_diff

            refuse_streams(paths, "--base compares files in git")
            result = lint_diff(paths, config, base, split_values(select), split_values(ignore))
        else:
            progress = fmt == "text" and output is None and not quiet
            result = run_lint(paths, config, split_values(select), split_values(ignore), progress=progress,
                              stdin_filename=stdin_filename, jobs=jobs or default_jobs(), cache=not no_cache)
        _baseline(result, baseline_file, write_baseline)
        write_output(render_lint(result, fmt, output, config.root, quiet, statistics, show_fixes), output)
        return result.exit_code(fail_on or config.get("fail-on", "error"))


def hand_hub_client(config: Optional[dict]) -> None:
    """Hand capacity the Hugging Face Hub client when this run's lookup may be on (``--online``, ``hub:
    true``, ``CFGCHECK_HUB``): the command line imports its HTTP stack, capacity never does. ``config`` None:
    the command reads its configuration later, from a commit (review, propose), so only an explicit off
    (``--offline``, ``CFGCHECK_HUB=0``) keeps the client out."""
    from . import online

    if online.enabled(config) if config is not None else not online.switched_off():
        from .capacity import hub

        online.use(hub.client)


def write_output(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None


def use_color(fmt: str, output: Optional[Path]) -> bool:
    """Colour for text on a terminal; NO_COLOR (no-color.org) turns it off and wins over FORCE_COLOR
    (force-color.org), which turns it on without a terminal, except as 0 or false (Node's
    supports-color reading: off). Never in a file."""
    force = os.environ.get("FORCE_COLOR", "")
    if fmt != "text" or output is not None or os.environ.get("NO_COLOR") or force.lower() in ("0", "false"):
        return False
    return bool(force) or sys.stdout.isatty()


def display_paths(root: Path) -> Callable[[str], str]:
    """Repository paths as the user can open them from where they stand: relative to the current
    directory when it is inside the repository (or the repository inside it), absolute otherwise."""
    cwd, root_text = os.getcwd(), str(root)
    if cwd == root_text:
        return lambda path: path
    if (root_text + os.sep).startswith(cwd + os.sep):  # the repository is below the user
        below = os.path.relpath(root_text, cwd).replace(os.sep, "/") + "/"
        return lambda path: below + path
    if not (cwd + os.sep).startswith(root_text + os.sep):
        return lambda path: os.path.join(root_text, path)
    here = os.path.relpath(cwd, root_text).replace(os.sep, "/") + "/"  # the user is below the root

    def relative(path: str) -> str:
        if path.startswith(here):
            return path[len(here):]  # the common case, without relpath's system calls
        return os.path.relpath(os.path.join(root_text, path), cwd).replace(os.sep, "/")
    return relative


def render_lint(result, fmt: str, output: Optional[Path], root: Path, quiet: bool, statistics: bool,
                show_fixes: bool) -> str:
    """The report of `lint`; only text gets paths relative to the user's directory (SARIF, JSON and
    the others are read by tools that resolve paths from the repository root, GitHub's included)."""
    if statistics:
        from .reporters.statistics import render as render_statistics

        if fmt not in ("text", "json"):
            raise UsageError(f"--statistics prints text or json, not {fmt}")
        return render_statistics(result, fmt)
    from .reporters import renderer

    return renderer(fmt)(result, color=use_color(fmt, output), quiet=quiet, show_fixes=show_fixes,
                         where=display_paths(root))


def load_config(paths: list[Path], config_file: Optional[Path]):
    from .config import load_for  # here, not at the top: --version and --help never load the configuration code
    return load_for(paths, config_file)


def config_paths(paths: list[Path], stdin_filename: Optional[Path]) -> list[Path]:
    """Where the configuration is looked up: for standard input ``--stdin-filename`` (or the nearest
    folder of it that exists), for a pipe or FIFO the current folder, else the paths."""
    from .discover import STDIN, is_stream

    if paths[0] != STDIN and not is_stream(paths[0]):
        return paths
    if stdin_filename is None:
        return [Path(".")]
    existing = next((p for p in [stdin_filename, *stdin_filename.absolute().parents] if p.exists()), Path("."))
    return [existing]


def refuse_streams(paths: list[Path], why: str) -> None:
    from .discover import STDIN, is_stream

    named = next((p for p in paths if p == STDIN or is_stream(p)), None)
    if named is not None:
        raise UsageError(f"{why}: it cannot use standard input or a pipe ({named})")


def _baseline(result, baseline_file: Optional[Path], write_baseline: Optional[Path]) -> None:
    if baseline_file is None and write_baseline is None:
        return  # a run without a baseline does not import its reader
    from . import baseline

    if write_baseline is not None and result.base is not None:
        raise UsageError("--write-baseline records every finding of a full lint; drop --base")
    if baseline_file is not None:
        stale = baseline.apply(result.findings, baseline.load(baseline_file), baseline_file.name)
        if stale and result.base is None:  # in diff mode unchanged files are not linted: not stale
            sys.stderr.write(f"cfgcheck: note: {stale} baselined finding{'s' if stale != 1 else ''} no longer "
                             f"occur{'s' if stale == 1 else ''}; shrink {baseline_file} with --write-baseline\n")
    if write_baseline is not None:
        count = baseline.write(write_baseline, result.findings)
        baseline.apply(result.findings, baseline.load(write_baseline), write_baseline.name)
        sys.stderr.write(f"cfgcheck: recorded {count} finding{'s' if count != 1 else ''} in {write_baseline}\n")


def exit_for(exc: Exception) -> int:
    """The exit code of an exception that reached the entry point, after its one line on stderr: 2 for a
    usage or configuration error and, short of CFGCHECK_DEBUG (which re-raises), for an internal error."""
    if isinstance(exc, (UsageError, ConfigError)):
        sys.stderr.write(f"cfgcheck: error: {exc}\n")
        return 2
    if os.environ.get("CFGCHECK_DEBUG"):
        raise exc
    sys.stderr.write(f"cfgcheck: internal error: {type(exc).__name__}: {exc} "
                     "(set CFGCHECK_DEBUG=1 for the traceback)\n")
    return 2


def run_fast(arguments: dict) -> int:
    """``run_lint_command`` as typer's ``main`` would end it (typer/core.py ``_main``): end of input is an
    abort (130, after a new line), Ctrl-C exits 130, a closed pipe 1 with the streams silenced."""
    try:
        return run_lint_command(**arguments)
    except EOFError:
        sys.stderr.write("\n")
        return 130
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        import errno

        if exc.errno != errno.EPIPE:
            return exit_for(exc)
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout, sys.stderr = PacifyFlushWrapper(sys.stdout), PacifyFlushWrapper(sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence for a CI check
        return exit_for(exc)
