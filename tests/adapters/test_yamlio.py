"""The loader: positions, comments, multi-document files, both composers, and hostile input limits."""

from __future__ import annotations

import pytest

from cfgcheck.model import Edit, Location
from cfgcheck.yamlio import apply_edits, decode, parse_text, YamlError

TEXT = """\
# leading
a: 1  # one
b:
  # above c
  c: "x # not a comment"
  d: |
    # not a comment either
    run
e: [1, 0x10, 1.5, true, null, '3', 32K]
---
second: doc
"""


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "ruamel"])
def test_positions_values_and_comments(fast: bool) -> None:
    loaded = parse_text("f.yaml", TEXT, fast=fast)
    assert loaded.error is None
    first, second = (d.root for d in loaded.documents)
    assert first.to_python() == {"a": 1, "b": {"c": "x # not a comment", "d": "# not a comment either\nrun\n"},
                                 "e": [1, 16, 1.5, True, None, "3", "32K"]}
    assert second.to_python() == {"second": "doc"}
    c = first.path("b", "c")
    assert (c.line, c.column, c.style) == (5, 6, '"')
    assert loaded.source(c) == '"x # not a comment"'
    assert sorted(loaded.comments) == [1, 2, 4]
    assert loaded.comments_for(5) == ("above c",)
    assert loaded.comments_for(2) == ("leading", "one")


def test_composers_build_identical_trees() -> None:
    fast, pure = parse_text("f.yaml", TEXT, fast=True), parse_text("f.yaml", TEXT, fast=False)
    def shape(node):
        if node.kind == "map":
            return [(shape(k), shape(v)) for k, v in node.value]
        if node.kind == "seq":
            return [shape(c) for c in node.value]
        return (node.value, node.line, node.column, node.end_line, node.end_column, node.style)
    assert [shape(d.root) for d in fast.documents] == [shape(d.root) for d in pure.documents]


def test_bad_yaml_is_located_and_earlier_documents_kept() -> None:
    loaded = parse_text("f.yaml", "a: 1\n---\nb: [1, 2\nc: 3\n")
    assert loaded.documents[0].root.to_python() == {"a": 1}
    assert loaded.error is not None and loaded.error.line >= 3


def test_alias_bomb_is_bounded() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 9) + "]")
    loaded = parse_text("bomb.yaml", "\n".join(lines) + "\n")
    assert loaded.error is not None and "max-expanded-nodes" in loaded.error.message


def test_deep_nesting_is_bounded() -> None:
    loaded = parse_text("deep.yaml", "[" * 5000 + "]" * 5000 + "\n")
    assert loaded.error is not None and "max-depth" in loaded.error.message


def test_duplicate_keys_reported_last_wins() -> None:
    loaded = parse_text("d.yaml", "a: 1\nb: 2\na: 3\n")
    root = loaded.documents[0].root
    assert root.get("a").value == 3
    assert loaded.documents[0].problems[0][1:] == (3, 1)


def test_decoding() -> None:
    assert decode("a: é\n".encode("utf-16")) == "a: é\n"
    assert decode(b"\xef\xbb\xbfa: 1\n") == "a: 1\n"
    with pytest.raises(YamlError, match="UTF-8"):
        decode(b"a: \xff\n")
    with pytest.raises(YamlError, match="NUL"):
        decode(b"a: 1\n\x00")


def test_apply_edits_keeps_every_other_byte() -> None:
    text = "a: 1\r\nb: --kv-cache-memory  # keep\r\n"
    edit = Edit(Location("f", 2, 4), "--kv-cache-memory", "--kv-cache-memory-bytes")
    assert apply_edits(text, [edit]) == "a: 1\r\nb: --kv-cache-memory-bytes  # keep\r\n"
    with pytest.raises(ValueError):
        apply_edits(text, [Edit(Location("f", 1, 4), "x", "y")])


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"])
def test_yaml11_line_breaks_keep_line_numbers(char: str) -> None:
    loaded = parse_text("f.yaml", f'a: "x{char}y"\nb: 1\n')
    assert loaded.error is None
    assert loaded.documents[0].root.get("b").line == 2


@pytest.mark.parametrize("text, value", [
    ("", ""), ("~", None), ("null", None), ("nULL", "nULL"), ("True", True), ("FALSE", False), ("name", "name"),
    ("-", "-"), ("--port", "--port"), ("-x", "-x"), ("-1", -1), ("+5", 5), ("1_000", 1000), ("0x1F", 31),
    ("0o17", 15), ("1e3", 1000.0), (".5", 0.5), ("1Gi", "1Gi"), ("/models", "/models"), ("_x", "_x")])
def test_plain_scalars_resolve_by_the_core_schema(text: str, value: object) -> None:
    from cfgcheck.yamltree import resolve_plain

    resolved = resolve_plain(text)
    assert resolved == value and type(resolved) is type(value)


def test_special_floats_resolve_in_any_case() -> None:
    from cfgcheck.yamltree import resolve_plain

    assert resolve_plain(".Inf") == float("inf") and resolve_plain("-.INF") == float("-inf")
    assert resolve_plain(".NaN") != resolve_plain(".NaN")  # a NaN


def test_merge_keys_bring_the_merged_pairs_and_the_last_one_wins() -> None:
    text = "base: &b {a: 1, b: 2}\nother: &o {b: 3, c: 4}\nm:\n  a: 0\n  <<: [*b, *o]\n  c: 5\n"
    for fast in (True, False):
        merging = parse_text("m.yaml", text, fast=fast).documents[0].root.get("m")
        assert [(key.value, value.value) for key, value in merging.items()] == [
            ("a", 0), ("a", 1), ("b", 2), ("b", 3), ("c", 4), ("c", 5)]
        assert {key: merging.scalar(key) for key in "abc"} == {"a": 1, "b": 3, "c": 5}
        assert merging.key_node("b").line == 2  # the key of the pair that wins
