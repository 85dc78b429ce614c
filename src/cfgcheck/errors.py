"""The errors every layer may raise for a mistake the user makes: each is one line on stderr and exit 2
at the entry point (``lint_command.exit_for``), never a traceback. A module at the bottom of the import
graph, so that discovery, the rule registry and the baseline raise them without importing the
configuration code."""

from __future__ import annotations


class ConfigError(Exception):
    """A configuration, a path, a baseline or a rule selection the user must fix; the message is one line."""


class UsageError(Exception):
    """A mistake in how cfgcheck was called (an option, a format, an output file); exit 2 with one line."""
