"""cfgcheck: a linter and change-proposal bot for LLM inference serving configuration kept in Git."""

__version__ = "0.1.0"
