"""The command line (typer). Thin: each command parses options and calls the library."""

from __future__ import annotations

import inspect
import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__
from .errors import UsageError
from .lint_command import (LINT_OPTIONS, ONLINE_HELP, PATHS_HELP, display_paths, exit_for, hand_hub_client,
                           load_config, refuse_streams, run_lint_command, split_values)
from .reporters import FORMATS

# typer's completion adds --install-completion / --show-completion (bash, zsh, fish, PowerShell).
app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Lint LLM serving configuration (vLLM, SGLang, TokenSpeed) kept in Git.")

Format = Enum("Format", {name: name for name in FORMATS}, type=str)  # every reporter's name


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


class Mode(str, Enum):
    auto = "auto"
    review = "review"
    lint = "lint"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cfgcheck {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                              help="Show the version and exit.")) -> None:
    """cfgcheck: lint LLM serving configuration kept in Git."""


def _lint_signature() -> inspect.Signature:
    """The typer parameters of `lint`, one per entry of ``LINT_OPTIONS`` (the fast path reads the same
    table), each typed by what it takes."""
    types = {"flag": bool, "switch": Optional[bool], "format": Format, "fail-on": Optional[FailOn], "count": Optional[int],
             "text": Optional[str], "texts": Optional[List[str]], "path": Optional[Path]}
    paths = inspect.Parameter("paths", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[List[Path]],
                              default=typer.Argument(None, help=PATHS_HELP))
    return inspect.Signature([paths] + [
        inspect.Parameter(option.parameter, inspect.Parameter.KEYWORD_ONLY, annotation=types[option.takes],
                          default=typer.Option(option.default, *option.declarations, help=option.help))
        for option in LINT_OPTIONS])


def lint(**arguments) -> None:
    """Lint files and folders; exit 1 when findings reach --fail-on."""
    fail_on = arguments["fail_on"]
    raise typer.Exit(run_lint_command(**{**arguments, "fmt": arguments["fmt"].value,
                                         "fail_on": fail_on.value if fail_on else None}))


lint.__signature__ = _lint_signature()
lint.__annotations__ = {name: parameter.annotation for name, parameter in lint.__signature__.parameters.items()}
app.command()(lint)


@app.command()
def capacity(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)"),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json"),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Configuration file."),
    online: Optional[bool] = typer.Option(None, "--online/--offline", help=ONLINE_HELP),
    chart: Optional[Path] = typer.Option(None, "--chart", help="Also write a chart of concurrency against max_model_len (.svg or .html)."),
) -> None:
    """Per served model: KV bytes per token, KV pool, pool-limited concurrency."""
    from .capacity.report import render_capacity
    from .lint import collect

    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format '{fmt}' (text or json)")
    paths = paths or [Path(".")]
    config = load_config(paths, config_file)
    if chart is not None and chart.suffix.lower() not in (".svg", ".html", ".htm"):
        raise UsageError(f"--chart {chart}: the file must end in .svg or .html")
    if online is not None:
        config.data["hub"] = online
    hand_hub_client(config.data)
    _, collected = collect(paths, config)
    models = [model for model in collected if not model.template]  # a runtime template serves nothing
    sys.stdout.write(render_capacity(models, config.as_dict(), fmt))
    if chart is not None:
        from .capacity.concurrency_plot import write_chart

        try:
            write_chart(chart, models, config.as_dict())
        except OSError as exc:
            raise UsageError(f"cannot write {chart}: {exc.strerror or exc}") from None


@app.command()
def init(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)"),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Configuration file (YAML) to edit."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what was found; write nothing."),
) -> None:
    """List the nodes, node pools and served models found; add the hosts whose GPU nothing states to the
    fleet map (`nodes:` in .cfgcheck.yaml) for you to fill in."""
    from .init_command import run

    paths = paths or [Path(".")]
    refuse_streams(paths, "init")
    sys.stdout.write(run(paths, load_config(paths, config_file), dry_run))


@app.command()
def flags(
    engine: str = typer.Argument(..., help="vllm, sglang or tokenspeed"),
    version: Optional[str] = typer.Argument(None, help="Engine version (default: the newest catalogued)"),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json"),
) -> None:
    """Every option that engine version's parser accepts."""
    import re

    from .engines.catalog import catalog_for, render_flags
    from .engines.versions import known_versions

    if fmt not in ("text", "json"):
        raise UsageError(f"unknown format '{fmt}' (text or json)")
    engine = engine.lower()
    known = known_versions(engine)
    if version is not None and known and not re.fullmatch(r"[vV]?\d+(\.\d+)*([.+-]?[A-Za-z0-9]+)*", version.strip()):
        raise UsageError(f"'{version}' is not a version of {engine} (catalogued: {known[0]} to {known[-1]})")
    try:
        sys.stdout.write(render_flags(engine, version, fmt))
    except LookupError as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    catalog = catalog_for(engine, version)
    if version is not None and catalog.assumed:
        sys.stderr.write(f"cfgcheck: note: {engine} {version} is not catalogued; these are the flags of "
                         f"{catalog.version}\n")


@app.command("rules")
def rules_command(fmt: str = typer.Option("text", "--format", "-f", help="text, json or markdown")) -> None:
    """List every rule."""
    from .rule_reference import render_rules

    if fmt not in ("text", "json", "markdown"):
        raise UsageError(f"unknown format '{fmt}' (text, json or markdown)")
    sys.stdout.write(render_rules(fmt))


@app.command("rule")
def rule_command(code: str = typer.Argument(..., help="A rule code (CFG203) or name (seqs-exceed-kv-concurrency)")) -> None:
    """Show one rule's documentation."""
    from .registry import UnknownRule, find

    try:
        rule = find(code)
    except UnknownRule as exc:
        raise UsageError(str(exc)) from None
    sys.stdout.write(rule.doc)


@app.command("review")
def review_command(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)"),
    pr: Optional[int] = typer.Option(None, "--pr", help="Pull request number (default: from GITHUB_EVENT_PATH)."),
    base: Optional[str] = typer.Option(None, "--base", help="Base REF (default: the event's base sha)."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME (default: GITHUB_REPOSITORY)."),
    token: Optional[str] = typer.Option(None, "--token", help="GitHub token (default: GITHUB_TOKEN)."),
    api_url: Optional[str] = typer.Option(None, "--api-url", help="REST API root (default: GITHUB_API_URL)."),
    sarif: Optional[Path] = typer.Option(None, "--sarif", help="Also write SARIF to FILE."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Configuration file."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rules (codes, prefixes or names)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rules."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on", help="Lowest severity that fails (default error)."),
    comment: bool = typer.Option(True, "--comment/--no-comment", help="Post the review and summary comment."),
    bot_login: Optional[str] = typer.Option(None, "--bot-login", envvar="CFGCHECK_BOT_LOGIN",
                                            help="The login cfgcheck comments as; it edits or deletes only comments "
                                                 "by this login (default github-actions[bot])."),
    mode: Mode = typer.Option(Mode.auto, "--mode", envvar="CFGCHECK_MODE",
                              help="review (a pull request against its base), lint (the whole repository: push, "
                                   "schedule) or auto (review on pull_request events or with --pr/--base)."),
    online: Optional[bool] = typer.Option(None, "--online/--offline", help=ONLINE_HELP),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="Findings recorded in this baseline FILE do "
                                            "not fail the run (a pull request: the base commit's copy)."),
) -> None:
    """Lint a pull request against its base and post a review, a summary comment, annotations and SARIF."""
    from .github.review import Options, run

    if online is not None:  # the configuration is read from the base commit inside run(): pass it on by the environment
        os.environ["CFGCHECK_HUB"] = "1" if online else "0"
    hand_hub_client(None)

    code = run(Options(paths=paths or [Path(".")], config_file=config_file, base=base, pr=pr, repo=repo,
                       token=token, api_url=api_url, sarif=sarif, fail_on=fail_on.value if fail_on else None,
                       select=split_values(select), ignore=split_values(ignore), comment=comment, bot_login=bot_login,
                       mode=mode.value, baseline=baseline))
    raise typer.Exit(code)


@app.command("fix")
def fix_command(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)"),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff instead of writing the files."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Configuration file."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these rules (codes, prefixes or names)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these rules."),
) -> None:
    """Apply the mechanical fixes of findings (e.g. abbreviated flags spelled out); every other byte is kept.

    With --diff nothing is written, and the exit code is 1 when a file would change."""
    from .lint import lint as run_lint
    from .propose.fix import compute, unified_diff, write

    paths = paths or [Path(".")]
    refuse_streams(paths, "fix edits files in place")
    config = load_config(paths, config_file)
    hand_hub_client(config.data)
    outcome = compute(run_lint(paths, config, split_values(select), split_values(ignore)))
    where = display_paths(config.root)
    for finding, why in outcome.skipped:
        sys.stderr.write(f"cfgcheck: skipped {finding.code} at {where(finding.location.path)}:"
                         f"{finding.location.line}: {why}\n")
    if diff:
        patch = unified_diff(outcome.files)
        sys.stdout.write(patch)
        raise typer.Exit(1 if patch else 0)  # like `ruff check --diff`: 1 when there is something to fix
    try:
        write(config.root, outcome.files)
    except (OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    count = len(outcome.applied)
    if count:
        sys.stdout.write(f"fixed {count} finding{'s' if count != 1 else ''} in {len(outcome.files)} "
                         f"file{'s' if len(outcome.files) != 1 else ''}\n")
    else:
        sys.stdout.write("nothing to fix\n")


# Options shared by the commands that open a pull request (propose, upgrade).
_BASE = typer.Option(None, "--base", help="Base branch (default: the remote's default branch).")
_REMOTE = typer.Option("origin", "--remote", help="Git remote to push to.")
_REPO = typer.Option(None, "--repo", help="OWNER/NAME (default: GITHUB_REPOSITORY or the remote URL).")
_TOKEN = typer.Option(None, "--token", help="GitHub token (default: GITHUB_TOKEN).")
_API_URL = typer.Option(None, "--api-url", help="REST API root (default: GITHUB_API_URL).")
_CONFIG = typer.Option(None, "--config", help="Configuration file.")


@app.command("propose")
def propose_command(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders to look for the served models in (default: the repository)."),
    sets: Optional[List[str]] = typer.Option(None, "--set", help="NAME.SETTING=VALUE (repeatable); SETTING may be arg:--flag."),
    file: Optional[Path] = typer.Option(None, "--file", help="A proposal file: title, why, set."),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the PR and the ADR."),
    why: Optional[str] = typer.Option(None, "--why", help="The decision, recorded in the ADR."),
    fix: bool = typer.Option(False, "--fix", help="Propose the mechanical fixes of current findings instead."),
    base: Optional[str] = _BASE,
    remote: str = _REMOTE,
    repo: Optional[str] = _REPO,
    token: Optional[str] = _TOKEN,
    api_url: Optional[str] = _API_URL,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff, the ADR and the PR body; write nothing."),
    allow_findings: bool = typer.Option(False, "--allow-findings", help="Propose even if the change introduces errors."),
    config_file: Optional[Path] = _CONFIG,
) -> None:
    """Propose a serving change as one pull request: edits, re-lint, ADR stub and governance checklist."""
    from .propose.run import Options, main as run_main

    hand_hub_client(None)  # the configuration is read from the base commit
    code = run_main(Options(sets=list(sets or []), file=file, title=title, why=why, fix=fix, paths=list(paths or []),
                            base=base, remote=remote, repo=repo, dry_run=dry_run, allow_findings=allow_findings,
                            config_file=config_file, token=token, api_url=api_url))
    raise typer.Exit(code)


@app.command("upgrade")
def upgrade_command(
    engine: str = typer.Argument(..., help="The engine: vllm, sglang or tokenspeed."),
    version: str = typer.Argument(..., help="The version to move every served model of ENGINE to, e.g. 0.33.0."),
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders to look for the served models in (default: the repository)."),
    digest: Optional[str] = typer.Option(None, "--digest", help="sha256:... of the new tag, for images pinned by digest (default: asked of the registry)."),
    offline: bool = typer.Option(False, "--offline", help="Never ask a registry for a digest (then --digest, or a dry run)."),
    title: Optional[str] = typer.Option(None, "--title", help="Title of the PR and the ADR (default: Upgrade ENGINE to VERSION)."),
    why: Optional[str] = typer.Option(None, "--why", help="The decision, recorded in the ADR."),
    base: Optional[str] = _BASE,
    remote: str = _REMOTE,
    repo: Optional[str] = _REPO,
    token: Optional[str] = _TOKEN,
    api_url: Optional[str] = _API_URL,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan, the diff, the ADR and the PR body; write nothing."),
    allow_findings: bool = typer.Option(False, "--allow-findings", help="Propose even if errors remain after the upgrade."),
    config_file: Optional[Path] = _CONFIG,
) -> None:
    """Move every served model of ENGINE to VERSION in one pull request: image tags (digests resolved),
    removed flags rewritten where the catalogs know their successor, drifting defaults listed."""
    from .propose.run import Options, main as run_main
    from .propose.upgrade import Target

    target = Target(engine.lower(), version, digest, dry_run=dry_run, offline=offline)
    hand_hub_client(None)  # the configuration is read from the base commit
    code = run_main(Options(title=title, why=why, paths=list(paths or []), base=base, remote=remote, repo=repo,
                            dry_run=dry_run, allow_findings=allow_findings, config_file=config_file, token=token,
                            api_url=api_url, upgrade=target))
    raise typer.Exit(code)


def main() -> None:
    """The command line through typer (``__main__.main`` is the console entry point and calls this for
    everything but its fast path): user mistakes exit 2 with one line, never a traceback."""
    try:
        code = app(standalone_mode=False, prog_name="cfgcheck")  # returns the exit code; `python -m` too
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - the last line of defence for a CI check
        if isinstance(exc, typer.Abort):
            sys.exit(130)
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `cfgcheck`: the help, no error line
            message = exc.format_message()  # empty when typer printed the help itself (rich)
            sys.stdout.write(message + "\n" if message.strip() else "")
            sys.exit(2)
        if isinstance(exc, typer.TyperException) and hasattr(exc, "format_message"):  # click usage errors
            sys.stderr.write(f"cfgcheck: error: {exc.format_message()}\n")
            sys.exit(2)
        sys.exit(exit_for(exc))
