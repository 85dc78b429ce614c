#!/usr/bin/env python3
"""Write src/cfgcheck/data/rule_index.json: code, name, severity, scope, module and diff_only of every
built-in rule, read from the rule modules themselves (cfgcheck.registry). A run whose files hold no served
model reads the index instead of importing every rule, and a lint run imports no diff-only rule;
tests/rules/test_rule_index.py fails until this is re-run after a rule is added, renamed or changes
severity.

Usage::

    python scripts/build_rule_index.py
"""

from __future__ import annotations

import json

from cfgcheck.registry import INDEX, all_rules, index_entries


def main() -> None:
    INDEX.write_text(json.dumps(index_entries(all_rules()), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {INDEX}")


if __name__ == "__main__":
    main()
