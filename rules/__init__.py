"""cfgcheck's rules: one module per rule (metadata, a docstring in fixed sections, and ``check``)."""
