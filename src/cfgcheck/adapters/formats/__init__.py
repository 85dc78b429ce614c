"""One module per input format, each registered once in ``core/registry.py``."""
