"""The recipes of CONTRIBUTING.md are true: the files they list exist where they say, a rule module
dropped into the rules package is found, documented and run with nothing registered by hand, and a
format added as the recipe says (one module, one registry line) that delivers a pod spec gets the pod
rules on it.

(A rule shipped as a plugin distribution is ``tests/rules/test_rule_contract.py``; an adapter registered
from a package of its own is ``tests/adapters/test_adapter_protocol.py``.)"""

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


# The "add a format" recipe, followed exactly: one module in adapters/formats/ and one registry line.
# The format delivers a pod spec (spec.pod) and says nothing about pod facts: the pod rules must see
# its pod as they see the same pod in a Deployment.
THROWAWAY_FORMAT = '''
"""Acme ServingPod (``acme.example/v1``): ``spec.pod`` is a Kubernetes pod spec whose ``engine``
container serves the model."""
from cfgcheck.adapters.core.contexts import DocContext
from cfgcheck.adapters.core.recognition import finish, is_resource
from cfgcheck.adapters.launch.containers import container_model

MARKERS = ("acme.example",)


def served_models(ctx: DocContext, root):
    if not is_resource(root, "acme.example/", "ServingPod"):
        return []
    pod = root.path("spec", "pod")
    containers = pod.get("containers") if pod is not None else None
    found = []
    for container in containers.value if containers is not None else []:
        name = f"{root.scalar('metadata', 'name')}/{container.scalar('name')}"
        model = container_model(ctx, root=root, kind="ServingPod", name=name, identity=f"ServingPod/{name}",
                                container=container, pod_spec=pod)
        if model is not None:
            found.append(finish(model))
    return found
'''

POD = """\
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: "4"
"""
AS_THE_FORMAT = "apiVersion: acme.example/v1\nkind: ServingPod\nmetadata:\n  name: chat\nspec:\n  pod:\n" + POD
AS_A_DEPLOYMENT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  template:\n"
                   "    spec:\n" + "\n".join("  " + line if line else line for line in POD.split("\n")))


@pytest.fixture
def dropped_format(tmp_path, monkeypatch):
    """``adapters/formats/acme.py`` written into a folder the formats package spans, and its registry line."""
    from cfgcheck.adapters import formats
    from cfgcheck.adapters.core import protocol, registry as adapters

    folder = tmp_path / "formats"
    folder.mkdir()
    (folder / "acme.py").write_text(textwrap.dedent(THROWAWAY_FORMAT), encoding="utf-8")
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(folder)])
    workloads = next(entry for entry in adapters.BUILT_IN if entry.__name__.endswith(".workloads"))
    entry = protocol.register(protocol.LazyAdapter("formats.acme", ("acme.example",)), before=workloads)
    yield
    protocol.unregister(entry)
    sys.modules.pop("cfgcheck.adapters.formats.acme", None)


def _pod_findings(folder, name: str, text: str) -> list[str]:
    (folder / name).write_text(text, encoding="utf-8")
    result = lint([folder / name], Config(folder))
    assert [model.kind for model in result.models] == ["ServingPod" if "acme" in text else "Deployment"]
    return sorted(f.code for f in result.findings if f.code.startswith("CFG5"))


def test_a_format_added_by_the_recipe_gets_the_pod_rules_on_its_pod(dropped_format, tmp_path) -> None:
    """Its pod has four tensor-parallel ranks and no /dev/shm, and downloads 140 GB of weights into the
    container: CFG501 and CFG505, as for the same pod in a Deployment, with no step the recipe omits."""
    found = _pod_findings(tmp_path, "serving.yaml", AS_THE_FORMAT)
    assert {"CFG501", "CFG505"} <= set(found)
    assert found == _pod_findings(tmp_path, "deployment.yaml", AS_A_DEPLOYMENT)
