"""Jinja2 rendering of the Markdown documents cfgcheck writes (PR comments, PR bodies, ADRs).

Templates come from the package (``templates/``) unless the repository overrides one in
``.cfgcheck/templates/``. Every value taken from a linted file must pass through the ``md`` filter,
which escapes Markdown, HTML and @mentions, so a YAML value cannot inject into a comment.
"""

from __future__ import annotations

from pathlib import Path

from .reporters.markdown import escape

OVERRIDE_DIR = ".cfgcheck/templates"


def environment(repo_root: Path | None = None):
    import jinja2

    loaders = []
    if repo_root is not None and (repo_root / OVERRIDE_DIR).is_dir():
        loaders.append(jinja2.FileSystemLoader(str(repo_root / OVERRIDE_DIR)))
    loaders.append(jinja2.PackageLoader("cfgcheck.templates", "."))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=False, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["md"] = lambda value: "" if value is None else escape(value)
    env.filters["num"] = format_number
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


def render(template: str, repo_root: Path | None = None, **context: object) -> str:
    return environment(repo_root).get_template(template).render(**context)
