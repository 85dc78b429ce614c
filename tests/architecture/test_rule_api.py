"""Rules read cfgcheck through one module: every module in ``rules/`` imports from cfgcheck only
``cfgcheck.api`` (and the ``rules/_*`` helpers beside it), the api gives what it says it gives, rules have
the check signature of their scope, and the cross-model rules are run-scoped."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from cfgcheck import api
from cfgcheck.registry import all_rules
from helpers import REPO

RULES = REPO / "rules"
API = REPO / "src" / "cfgcheck" / "api.py"
# rules that compare served models with each other: they group the run's models once (SCOPE = "run")
CROSS_MODEL = {"CFG204", "CFG209", "CFG215", "CFG403"}


def _cfgcheck_imports(path: Path) -> list[str]:
    """What ``path`` imports from cfgcheck or beside it, at any depth (a function-level import counts)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "cfgcheck"]
        elif isinstance(node, ast.ImportFrom) and node.level:
            found += [f".{node.module}" if node.module else f".{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "cfgcheck":
            found.append(node.module)
    return found


def test_rules_import_only_the_api_and_their_helpers() -> None:
    wrong = [f"{path.name}: {name}" for path in sorted(RULES.glob("*.py"))
             for name in _cfgcheck_imports(path)
             if name != "cfgcheck.api" and not (name.startswith("._") and (RULES / f"{name[1:]}.py").is_file())]
    assert not wrong, "rules import cfgcheck only through cfgcheck.api:\n" + "\n".join(wrong)


def test_the_check_finds_a_rule_that_reaches_past_the_api(tmp_path: Path) -> None:
    path = tmp_path / "sneaky.py"
    path.write_text("from cfgcheck.engines.defaults import parse_version\n\ndef check(model, ctx):\n"
                    "    from cfgcheck.capacity import estimate\n    return []\n")
    assert _cfgcheck_imports(path) == ["cfgcheck.engines.defaults", "cfgcheck.capacity"]


def _type_checking_names() -> set[str]:
    """The names api.py imports from cfgcheck under ``if TYPE_CHECKING:`` (as it exports them; not typing's)."""
    tree = ast.parse(API.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    return {alias.asname or alias.name for node in block.body if isinstance(node, ast.ImportFrom) and node.level
            for alias in node.names}


def test_what_type_checkers_see_is_what_the_api_loads() -> None:
    assert _type_checking_names() == set(api._LAZY)
    assert set(api.__all__) >= set(api._LAZY) and len(api.__all__) == len(set(api.__all__))


@pytest.mark.parametrize("name", sorted(api.__all__))
def test_every_exported_name_resolves(name: str) -> None:
    value = getattr(api, name)
    module, attribute = api._LAZY.get(name, (None, name))
    if module is not None:
        assert value is getattr(importlib.import_module(module), attribute)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'estimate'"):
        api.estimate  # noqa: B018 - the access is the test


def test_checks_have_the_signature_of_their_scope_and_cross_model_rules_run_once() -> None:
    for rule in all_rules():
        if rule.check is None:
            assert rule.scope == "engine", rule.code
            continue
        assert rule.scope in ("model", "run"), rule.code
        positional = [p for p in inspect.signature(rule.check).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        assert len(positional) == 2, f"{rule.code}: check(model, ctx) or check(models, ctx)"
        assert (rule.scope == "run") == (rule.code in CROSS_MODEL), rule.code
