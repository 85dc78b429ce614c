"""The recipes of CONTRIBUTING.md are true: the files they list exist where they say, and a rule module
dropped into the rules package is found, documented and run with nothing registered by hand.

(The format recipe's throwaway adapter is ``tests/adapters/test_adapter_protocol.py``; a rule shipped
as a plugin distribution is ``tests/rules/test_rule_contract.py``.)"""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

import cfgcheck.rules
from cfgcheck import registry
from cfgcheck.config import Config
from cfgcheck.rule_reference import render_rules
from cfgcheck.lint import lint
from helpers import REPO
from tests.rules.test_rule_contract import EXAMPLE, THROWAWAY

RECIPES = ("add a rule", "add a format", "add an engine version")


def _recipe_files(title: str) -> list[str]:
    """The paths named in the ``Files:`` paragraph of one recipe of CONTRIBUTING.md."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split(f"## Recipe: {title}\n", 1)[1].split("\n## ", 1)[0]
    paragraph = section.split("Files:", 1)[1].split("\n\n", 1)[0]
    return [path for path in re.findall(r"`([^`\s]+)`", paragraph)
            if re.fullmatch(r"[\w<>*./-]+(/|\.(py|md|json|jsonl|yaml))", path)]


@pytest.mark.parametrize("title", RECIPES)
def test_every_file_a_recipe_lists_exists(title: str) -> None:
    files = _recipe_files(title)
    assert len(files) >= 4, files
    for path in files:
        if "/" not in path and ("<" in path or "*" in path):  # beside the previous path: `fail-*.yaml`
            continue
        fixed = path.split("<", 1)[0].split("*", 1)[0].split("CFGnnn", 1)[0]
        target = REPO / fixed
        assert target.exists() if fixed == path else target.parent.is_dir(), f"{title}: {path} does not exist"


@pytest.fixture
def dropped_rule(tmp_path, monkeypatch):
    """``rules/no_chat.py`` written into a folder that the rules package spans, as if added to rules/."""
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "no_chat.py").write_text(textwrap.dedent(THROWAWAY), encoding="utf-8")
    monkeypatch.setattr(cfgcheck.rules, "__path__", [*cfgcheck.rules.__path__, str(folder)])
    registry.all_rules.cache_clear()
    yield
    registry.all_rules.cache_clear()
    sys.modules.pop("cfgcheck.rules.no_chat", None)


def test_a_rule_module_dropped_into_rules_is_found_documented_and_run(dropped_rule, tmp_path) -> None:
    assert "CFG990" in [rule.code for rule in registry.all_rules()]
    assert "## CFG990 no-chat" in render_rules("markdown")
    (tmp_path / "deploy.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    result = lint([tmp_path / "deploy.yaml"], Config(tmp_path))
    found = [f for f in result.findings if f.code == "CFG990"]
    assert [(f.message, f.location.path) for f in found] == [("served model is named qwen-chat", "deploy.yaml")]
