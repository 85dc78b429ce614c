"""Jinja2 rendering of the Markdown documents cfgcheck writes (PR comments, PR bodies, ADRs).

Templates come from the package (``templates/``) unless the repository overrides one in
``.cfgcheck/templates/``. A template is code, and in ``review`` the pull request writes the work tree,
so (docs/SECURITY.md):

- every template renders in jinja2's ``ImmutableSandboxedEnvironment`` (no ``__globals__``, no
  attribute that starts with ``_``, no mutation of the values it is given, bounded ``*`` and ``**``);
- every ``{{ value }}`` is escaped for Markdown (HTML, emphasis, links, @mentions) unless it is already
  ``Markup``: the output of the ``md``/``num`` filters, of a macro, or text a caller marks ``trusted``;
- overrides are read from one commit when one is given (``review`` and ``propose``: the base, never
  the pull request's head; symlink entries refused), otherwise only as regular files inside the
  repository (no symlinks, no ``..``);
- a broken or refused override (syntax, sandbox violation, undefined name, unreadable) falls back to
  the packaged template with a one-line note, so a repository's template never stops a review.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .git import run
from .notes import note
from .paths import UnsafePath, blob_at, inside_repo, repo_relative
from .reporters.markdown import escape

OVERRIDE_DIR = ".cfgcheck/templates"
MAX_OVERRIDE_BYTES = 256 * 1024  # the packaged templates are under 5 KiB
MAX_BUILT_ITEMS = 1_000_000  # longest string or list a template may build with `*`
MAX_POWER_BITS = 4096  # largest integer a template may build with `**`


@dataclass(frozen=True)
class Overrides:
    """Where a repository's template overrides are read: its work tree, or ``commit`` (a full sha)."""

    root: Path
    commit: str | None = None

    def text(self, name: str) -> str | None:
        """The override for template ``name``; None when there is none; UnsafePath when refused."""
        relative = repo_relative(self.root, Path(OVERRIDE_DIR) / name, what="template override")
        if self.commit is not None:
            data = _committed(self.root, self.commit, relative)
        else:
            data = self._file(relative)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnsafePath(f"template override {relative!r} is not UTF-8 text; refused") from None

    def _file(self, relative: str) -> bytes | None:
        path = inside_repo(self.root, relative, what="template override", links=False)
        if not path.exists():
            return None
        if not path.is_file():  # a FIFO or a device would block or never end
            raise UnsafePath(f"template override {relative!r} is not a regular file; refused")
        if path.stat().st_size > MAX_OVERRIDE_BYTES:
            raise UnsafePath(f"template override {relative!r} is larger than {MAX_OVERRIDE_BYTES:,} bytes; refused")
        return path.read_bytes()


@lru_cache(maxsize=64)
def _committed(root: Path, commit: str, relative: str) -> bytes | None:
    """A commit's override, read once per run (a review renders one template per comment)."""
    return blob_at(root, commit, relative, what="template override", limit=MAX_OVERRIDE_BYTES)


def trusted(text: str):
    """Text cfgcheck itself wrote (a hidden marker): printed as it is, not escaped."""
    from markupsafe import Markup

    return Markup(text)


def _markdown(value: object):
    """The autoescape of every ``{{ value }}``: Markdown-escaped unless it is already Markup."""
    from markupsafe import Markup

    if hasattr(value, "__html__"):
        return value
    return Markup(escape(value))


def _as_markup(function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose output is final (a code span, a formatted number): not escaped again."""
    from markupsafe import Markup

    return lambda *args, **kwargs: Markup(function(*args, **kwargs))


@lru_cache(maxsize=1)
def _sandbox():
    from jinja2.exceptions import SecurityError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Sandbox(ImmutableSandboxedEnvironment):
        """Jinja's sandbox bounds ``range``; this also bounds ``'x' * n`` and ``n ** m``."""

        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context, operator, left, right):
            if operator == "*":
                for sequence, count in ((left, right), (right, left)):
                    if isinstance(sequence, (str, list, tuple)) and isinstance(count, int) \
                            and len(sequence) * count > MAX_BUILT_ITEMS:
                        raise SecurityError(f"a template may not build more than {MAX_BUILT_ITEMS:,} items")
            elif isinstance(left, int) and isinstance(right, int) and right > 0 \
                    and abs(left).bit_length() * right > MAX_POWER_BITS:
                raise SecurityError(f"a template may not build numbers above {MAX_POWER_BITS} bits")
            return super().call_binop(context, operator, left, right)

    return Sandbox


def environment(overrides: Overrides | None = None, filters: dict[str, Callable[..., Any]] | None = None):
    """The sandboxed environment: the override loader first (when given), then the package."""
    import jinja2

    loaders: list[jinja2.BaseLoader] = []
    if overrides is not None:
        loaders.append(jinja2.FunctionLoader(overrides.text))
    loaders.append(jinja2.PackageLoader("cfgcheck.templates", "."))
    env = _sandbox()(loader=jinja2.ChoiceLoader(loaders), autoescape=True, finalize=_markdown,
                     keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                     undefined=jinja2.StrictUndefined)
    env.filters["md"] = _as_markup(lambda value: "" if value is None else escape(value))
    env.filters["num"] = _as_markup(format_number)
    env.filters["url"] = _as_markup(link_target)
    for name, function in (filters or {}).items():
        env.filters[name] = _as_markup(function)
    return env


def format_number(value: object, digits: int = 2) -> str:
    """Numbers as reviewers read them: thousands separators, fixed decimals for fractions."""
    if value is None:
        return "?"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}" if abs(value) >= 1 or value == 0 else f"{value:g}"
    return escape(value)


def link_target(value: object) -> str:
    """A URL or relative path as a Markdown link destination: what could end it (space, parentheses,
    angle brackets, quotes, backslash, control characters) percent-encoded, existing escapes kept."""
    from urllib.parse import quote

    return quote(str(value), safe=":/?#[]@!$&'*+,;=%~")


def render(template: str, overrides: Overrides | Path | None = None, *,
           filters: dict[str, Callable[..., Any]] | None = None, **context: object) -> str:
    """``template`` rendered with ``context``; ``overrides`` a commit's or a work tree's (a Path)."""
    source = Overrides(overrides) if isinstance(overrides, Path) else overrides
    if source is not None:
        try:
            if source.commit is not None and not filters:  # a commit's templates never change: compiled once
                return _committed_environment(source).get_template(template).render(**context)
            return environment(source, filters).get_template(template).render(**context)
        # a repository's template must never stop the run: syntax and undefined names, sandbox
        # violations, a refused path, and whatever its expressions raise (TypeError, ZeroDivisionError)
        except Exception as exc:  # noqa: BLE001
            note(f"template override {OVERRIDE_DIR}/{template} not used ({_reason(exc)}); "
                 "the packaged template is used")
    return (environment(None, filters) if filters else _packaged_environment()).get_template(template).render(**context)


@lru_cache(maxsize=1)
def _packaged_environment():
    """The packaged templates' environment, made once: jinja2 caches each template compiled in it (a review
    renders one per inline comment, and the summary again for each cut that makes it fit)."""
    return environment(None)


@lru_cache(maxsize=8)
def _committed_environment(source: Overrides):
    return environment(source)


def changed_overrides(root: Path, commit: str) -> list[str]:
    """Template overrides that differ between ``commit`` and the work tree (the pull request's)."""
    out = run(root, "diff", "--name-only", "-z", "--end-of-options", commit, "--", OVERRIDE_DIR)
    return sorted(name for name in out.stdout.decode("utf-8", "replace").split("\0") if name)


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    text = text if len(text) <= 100 else text[:97] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
