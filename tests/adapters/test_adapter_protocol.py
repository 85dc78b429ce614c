"""The adapter protocol: adding a format is one module, one ``register`` line and its fixtures."""

from __future__ import annotations

import importlib
import random
import sys
import textwrap
from pathlib import Path

import pytest

from cfgcheck.adapters.core import registry as adapters
from cfgcheck.adapters.core import protocol
from cfgcheck.adapters.formats import workloads
from cfgcheck.config import Config
from cfgcheck.yamlio import LoadedFile
from cfgcheck.lint import lint

# A format no built-in adapter knows, whose file holds none of the built-in marker words.
ACME_ADAPTER = '''
"""Acme ModelServer: ``spec.model`` is the model, ``spec.maxSeqs`` is vLLM's --max-num-seqs."""
from cfgcheck.adapters.core.contexts import DocContext
from cfgcheck.adapters.core.recognition import finish, operator_tokens
from cfgcheck.engines.argv import apply_argv

MARKERS = ("acme.example",)


def served_models(ctx: DocContext, root):
    if root.scalar("apiVersion") != "acme.example/v1" or root.scalar("kind") != "ModelServer":
        return []
    spec = root.get("spec")
    model = ctx.new_model(str(root.scalar("metadata", "name")), "ModelServer", root, "acme")
    model.engine = "vllm"
    model.add(ctx.field_setting(spec, "model", "model", "spec.model"))
    seqs = ctx.field_setting(spec, "maxSeqs", "max_num_seqs", "spec.maxSeqs")
    model.argv.extend(operator_tokens(seqs, "--max-num-seqs"))
    apply_argv(model, model.argv)
    return [finish(model)]
'''

ACME_FILE = """\
apiVersion: acme.example/v1
kind: ModelServer
metadata:
  name: chat
spec:
  model: org/chat-model
  maxSeqs: many
"""


@pytest.fixture
def acme(tmp_path, monkeypatch):
    package = tmp_path / "plugins" / "acme_formats"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "modelserver.py").write_text(textwrap.dedent(ACME_ADAPTER))
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    module = importlib.import_module("acme_formats.modelserver")
    yield module
    protocol.unregister(module)
    sys.modules.pop("acme_formats.modelserver", None)
    sys.modules.pop("acme_formats", None)


def _lint(root: Path):
    return lint([root], Config(root.resolve()))


def test_registered_throwaway_adapter_has_its_model_linted(acme, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "server.yaml").write_text(ACME_FILE)
    assert not _lint(repo).models  # unknown format, and no built-in marker word: skipped

    protocol.register(acme, before=workloads)

    assert "acme.example" in protocol.serving_markers()
    result = _lint(repo)
    assert [(m.name, m.engine, m.model.value) for m in result.models] == [("chat", "vllm", "org/chat-model")]
    located = [(f.code, f.location.line) for f in result.findings if f.location.path.endswith("server.yaml")]
    assert ("CFG105", 7) in located  # "many" is no integer for --max-num-seqs, at spec.maxSeqs


def test_unregistering_an_adapter_drops_its_marker(acme):
    protocol.register(acme)
    protocol.unregister(acme)
    assert acme not in protocol.REGISTRY
    assert "acme.example" not in protocol.serving_markers()


def test_a_module_without_markers_is_refused_at_registration(tmp_path):
    forgetful = type(sys)("forgetful")
    forgetful.served_models = lambda ctx, root: []
    with pytest.raises(TypeError, match="MARKERS"):
        protocol.register(forgetful)
    assert forgetful not in protocol.REGISTRY


def test_every_built_in_adapter_declares_markers_and_the_prefilter_is_their_union():
    assert all(protocol.meets_protocol(adapter) for adapter in protocol.REGISTRY)
    declared = {word for adapter in protocol.REGISTRY for word in adapter.MARKERS} | {protocol.DIRECTIVE_MARKER}
    assert set(protocol.serving_markers()) == declared
    # The words the prefilter used before adapters declared them: none lost.
    assert declared >= {"vllm", "sglang", "tokenspeed", "llama", "llmkube", "servingenginespec",
                        "inferenceservice", "servingruntime", "cfgcheck", "ome.io"}


def test_the_prefilter_finds_each_marker_alone_and_in_any_case_and_nothing_else():
    # the markers are tested in groups behind a piece they share (protocol._grouped): none may be lost
    for marker in protocol.serving_markers():
        assert protocol.has_serving_marker(f"key: x{marker.upper()}y\n"), marker
    assert not protocol.has_serving_marker("apiVersion: v1\nkind: Service\nmetadata:\n  name: model-node\n")
    assert protocol.has_serving_marker("kind: ConfigMap\ndata:\n  MAX_MODEL_LEN: '4096'\n")
    # a snake_case marker is searched for only in a text with an underscore; one that holds a plain marker
    # (vllm_args holds vllm) is found by that one
    assert protocol.has_serving_marker("env:\n  VLLM_ARGS: --x\n")
    assert not protocol.has_serving_marker("kind: Service\nspec:\n  nodePool: a\n")


def _greedy_groups(kept: list[str]) -> tuple:
    """The greedy grouping written plainly, as recursion: the piece most of ``kept`` hold (the first counted of
    those) while three or more hold one, every piece counted again for each group."""
    counts: dict[str, int] = {}
    for piece in [piece for marker in kept for piece in dict.fromkeys(marker[i:i + 3] for i in range(len(marker) - 2))]:
        counts[piece] = counts.get(piece, 0) + 1
    best = max(counts, key=counts.__getitem__, default=None)
    if best is None or counts[best] < 3:
        return tuple((marker, None) for marker in kept)
    return ((best, tuple(m for m in kept if best in m)), *_greedy_groups([m for m in kept if best not in m]))


def _grouped_pair_by_pair(markers: tuple[str, ...]) -> tuple:
    """``protocol._grouped`` written plainly: every pair of markers compared in Python."""
    return _greedy_groups([m for m in markers if not any(other != m and other in m for other in markers)])


def test_the_prefilters_groups_are_those_of_the_plain_greedy_loop():
    """``_grouped`` counts with C (``str.count`` over the joined markers, ``Counter``): the same groups, in the
    same order, ties to the piece counted first, as the loop over every pair and piece, on the built-in
    markers and on random sets of short words that hold one another (duplicates included)."""
    plain, snake = protocol._snake_apart(protocol.serving_markers())
    for markers in (tuple(plain), tuple(snake), protocol.serving_markers(), ()):
        assert protocol._grouped(markers) == _grouped_pair_by_pair(markers)
    draw = random.Random(16)
    for _ in range(2000):
        words = [("".join(draw.choice("abcd_ .") for _ in range(draw.randint(1, 7)))) for _ in range(draw.randint(0, 25))]
        markers = tuple(dict.fromkeys(words)) + tuple(words[:draw.randint(0, 2)])
        assert protocol._grouped(markers) == _grouped_pair_by_pair(markers), markers


def test_words_in_finds_each_registry_word_alone_and_nothing_else():
    words = set(protocol._words) | set(protocol._snake_words)
    assert {word for word in words if "_" in word} == set(protocol._snake_words) and "node_pool" in words
    for word in words:
        assert word in protocol.words_in(f"key: x{word}y\n"), word
    assert protocol.words_in("kind: service\nnode_pool: gpu\n") == {"service", "node_pool"}
    assert protocol.words_in("metadata:\n  name: a\n") == frozenset()


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: big
spec:
  leaderWorkerTemplate:
    size: {size}
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: vllm/vllm-openai:v0.10.0
            command: ["vllm", "serve", "org/m", "--tensor-parallel-size", "8"]
            resources:
              limits:
                nvidia.com/gpu: "4"
    workerTemplate:
      spec:
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
        containers:
          - name: worker
            image: vllm/vllm-openai:v0.10.0
            command: ["sh", "-c", "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
            resources:
              limits:
                nvidia.com/gpu: "4"
"""


def _models(text: str):
    from cfgcheck.yamlio import parse_text
    loaded = parse_text("lws.yaml", text)
    workspace = adapters.Workspace()
    adapters.index(workspace, loaded)
    return adapters.served_models(workspace, loaded)


def test_topology_facts_come_from_the_adapter():
    (leader,) = [m for m in _models(LWS.format(size=2)) if m.engine == "vllm"]
    assert (leader.gpus.value, leader.gpus_span) == (8, "group")  # leader 4 + 1 worker x 4


def test_gpu_labels_are_yielded_by_the_adapter_best_first():
    pod = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector:
    node.kubernetes.io/instance-type: p5.48xlarge
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    team: ml
  containers:
    - name: engine
      image: vllm/vllm-openai:v0.10.0
      command: ["vllm", "serve", "org/m"]
"""
    (model,) = _models(pod)
    assert model.gpu_labels == [("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
                                ("node.kubernetes.io/instance-type", "p5.48xlarge")]


def test_the_registry_metadata_is_each_modules_own():
    """The built-in adapters are registered lazily with their MARKERS and SUFFIXES, the renderers of the
    input stage with the file NAMES they render whatever the text; what the registry says must be what
    each module declares."""
    from cfgcheck.adapters.formats import terraform
    from cfgcheck.render import helm, kustomize

    lazy = adapters.BUILT_IN
    assert len(lazy) >= 21 and all(entry in protocol.REGISTRY for entry in lazy)
    for entry in lazy:
        module = entry.module()
        assert (entry.MARKERS, entry.SUFFIXES, entry.DOCUMENTS, entry.INDEX_WORDS) == (
            module.MARKERS, getattr(module, "SUFFIXES", ()), getattr(module, "DOCUMENTS", None),
            getattr(module, "INDEX_WORDS", None)), entry
        assert entry == module and importlib.import_module(entry.__name__) is module
    assert adapters.RENDERERS == {"kustomize": kustomize.NAMES, "helm": helm.NAMES}
    for name, module in adapters.LAUNCH_HELPERS.items():  # loaded on demand, from launch/ only
        assert module.startswith("launch.") and adapters.launch_helper(name) is getattr(
            importlib.import_module(f"cfgcheck.adapters.{module}"), name)
    assert adapters.NAMED_FORMATS == {"formats.terraform": terraform.NAMES}
    assert all(protocol.always_read(name) for name in kustomize.NAMES + helm.NAMES + terraform.NAMES)
    assert not protocol.always_read("values.yaml")
    assert all(not isinstance(adapter, protocol.LazyAdapter) for adapter in protocol.REGISTRY)  # loaded: in place


def test_the_registry_knows_each_modules_hooks_and_tries_only_adapters_whose_marker_is_there():
    """Start-up: the hooks a built-in adapter defines are in its registry entry, so the walks for
    ``index`` and ``refers_forward`` hooks and for the adapters of YAML documents import no other adapter,
    and an adapter none of whose MARKERS a file holds is not tried on its documents (nor imported)."""
    for entry in adapters.BUILT_IN:
        module = importlib.import_module(entry.__name__)
        assert set(entry.hooks) == {hook for hook in protocol.HOOKS if hasattr(module, hook)}, entry
    lazy = protocol.LazyAdapter("kubeai", ("kubeai.org",))
    assert not hasattr(lazy, "index") and not hasattr(lazy, "file_models")  # nothing imported to answer
    assert protocol.may_read(lazy, "apiversion: kubeai.org/v1")
    assert not protocol.may_read(lazy, "kind: deployment")
    assert protocol.may_read(protocol.LazyAdapter("mapped", ()), "")  # no markers: tried on every file
    # a file a renderer reads by name is rendered whatever its text; no adapter reads files by name
    from cfgcheck.render import helm

    assert adapters.renderer_of("Chart.yaml") is helm and adapters.renderer_of("values.yaml") is None


@pytest.mark.parametrize("text", ["resources:\n  - deployment.yaml\n", "resources:\n  - vllm.yaml\n",
                                  "kind: InferenceService\napiVersion: serving.kserve.io/v1beta1\n", ""])
def test_a_file_read_for_its_name_is_tried_by_the_adapters_whose_marker_it_holds(text: str) -> None:
    """One marker test stands for every adapter's (``registry._readers``): the same adapters either way."""
    lowered = text.lower()
    expected = [adapter for adapter in protocol.document_adapters() if protocol.may_read(adapter, lowered)]
    read = [adapters._readers(name, LoadedFile(name, text, [], {})) for name in ("kustomization.yaml", "values.yaml")]
    assert read == [expected, expected]
    assert expected and (protocol.has_serving_marker(lowered) or all(not adapter.MARKERS for adapter in expected))
