"""docs/recall-classes.md names, for every recall class, the fixtures and tests that prove it: each must exist,
so the table cannot point at a fixture or a test that was renamed or deleted."""

from __future__ import annotations

import re

from helpers import REPO

TABLE = REPO / "docs" / "recall-classes.md"
NAMED = re.compile(r"`(tests/[^`]+)`")
ROW = re.compile(r"\| (?:(?:8|11)\.)?\d+ \|")  # 1-14, and rounds 8 and 11's classes as 8.N, 11.N


def test_every_fixture_and_test_the_table_names_exists() -> None:
    rows = [line for line in TABLE.read_text(encoding="utf-8").splitlines() if ROW.match(line)]
    classes = {line.split("|")[1].strip() for line in rows}
    assert {int(c) for c in classes if "." not in c} == set(range(1, 15)), "every class 1-14 has a row"
    missing = []
    for line in rows:
        for named in NAMED.findall(line):
            path, _, test = named.partition("::")
            if not (REPO / path).exists():
                missing.append(path)
            elif test and not re.search(rf"^def {re.escape(test)}\(", (REPO / path).read_text(encoding="utf-8"), re.M):
                missing.append(named)
    assert not missing, missing


def test_every_class_is_proved_by_a_fixture_or_a_named_test() -> None:
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if ROW.match(line):
            assert NAMED.search(line), f"a class with nothing that proves it: {line}"
