"""The cheap test that spares a document the event walk (``yamlbounds.may_exceed``) must never say "no
limit can be broken" of a document that breaks one: its nesting bound by columns is at least the nesting
libyaml's and PyYAML's parsers open, on written shapes and on generated ones; and a served file whose
only depth is a long list is not walked twice."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cfgcheck.yamlbounds import DEFAULT_LIMITS, _depth_by_columns, may_exceed
from cfgcheck.yamlio import parse_text

# compact and indentless sequences, explicit keys, anchors and tags before a collection, flow pairs
SHAPES = ["- - - - a\n", "a:\n- b:\n  - c:\n    - d\n", "? - - a\n: - - b\n", "- &x a: b\n", "- !!map\n  a: b\n",
          "--- - - a\n", "a: [b: [c: [d]]]\n", "{a: {b: {c: [d, {e: f}]}}}\n", "a: &y\n  b:\n  - c\n", "x\r- - a\r"]


def event_depth(text: str, loader: type) -> int:
    """The deepest nesting the parser opens (the events before a syntax error, if there is one)."""
    depth = deepest = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                deepest = max(deepest, depth)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        pass
    return deepest


@pytest.mark.parametrize("text", SHAPES)
def test_the_bound_holds_on_written_shapes(text: str) -> None:
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert _depth_by_columns(text) >= event_depth(text, loader), (text, loader)


_LEAVES = st.sampled_from(["a", 1, None, "- x", "k: v", "? q"])
DATA = st.recursive(_LEAVES, lambda inner: st.lists(inner, min_size=1, max_size=3)
                    | st.dictionaries(st.sampled_from(["a", "b c", "- d"]), inner, min_size=1, max_size=3), max_leaves=40)


@settings(max_examples=15, deadline=None)
@given(DATA, st.sampled_from([False, None, True]), st.integers(2, 6), st.integers(0, 40))
def test_the_bound_holds_on_generated_documents(data, flow, indent: int, cut: int) -> None:
    text = yaml.dump(data, default_flow_style=flow, indent=indent)
    for variant in (text, text[:cut] + text[cut + 1:], text.replace("  ", "- ", 1)):  # and broken ones
        assert _depth_by_columns(variant) >= event_depth(variant, yaml.CSafeLoader), variant


def test_a_long_list_is_not_walked_twice_and_deep_nesting_still_is() -> None:
    args = "args:\n" + "".join(f"- --flag-{n}=1\n" for n in range(300))
    assert not may_exceed(args, DEFAULT_LIMITS)
    deep = "- " * 150 + "a\n"
    assert may_exceed(deep, DEFAULT_LIMITS)
    assert "limit max-depth" in parse_text("deep.yaml", deep).error.message


@pytest.mark.parametrize("text, limit", [("a: 1\nb: 2\nc: 3\n", {"max-expanded-nodes": 13}),
                                         ("---\n---\n---\n", {"max-documents": 3}),
                                         ("a: 1\n...\n---\n", {"max-documents": 2})])
def test_a_short_text_is_counted_for_a_limit_it_can_reach(text: str, limit: dict[str, int]) -> None:
    """A text is counted for the node and document limits only when it is long enough to reach them."""
    assert may_exceed(text, {**DEFAULT_LIMITS, **limit})
    assert not may_exceed(text, {**DEFAULT_LIMITS, **{name: value + 1 for name, value in limit.items()}})
    assert not may_exceed(text, DEFAULT_LIMITS)


@pytest.mark.parametrize("text", ["[" * 12 + "]" * 12 + "\n", "{a: " * 12 + "b" + "}" * 12 + "\n", "? " * 12 + "a\n"])
def test_nesting_by_the_rare_indicators_alone_is_counted(text: str) -> None:
    """Flow openers and explicit keys are looked for before they are counted: nesting by them alone is seen."""
    assert event_depth(text, yaml.CSafeLoader) > 10
    assert may_exceed(text, {**DEFAULT_LIMITS, "max-depth": 10})
    assert not may_exceed(text, {**DEFAULT_LIMITS, "max-depth": 50})
