"""Property-based fuzzing (hypothesis) of the loader, every adapter, the argv parser, suppressions and the
configuration loader.

The property, for every generated input: no exception escapes ``lint()``; every unreadable input is a
``CFG000`` finding with a line >= 1; the JSON report parses; the SARIF report validates against the
SARIF 2.1.0 schema (Draft 4); GitHub annotations are one line each; Markdown has no raw HTML or
mention from the input.

The normal run tries ``CFGCHECK_FUZZ_EXAMPLES`` (default 100) inputs per target. The long run, marked
``slow``, tries ``CFGCHECK_FUZZ_LONG_EXAMPLES`` (default 10,000) per target:

    CFGCHECK_FUZZ_LONG_EXAMPLES=10000 python -m pytest -m slow tests/security/test_fuzz.py -q

``CFGCHECK_FUZZ_LOG=FILE`` appends the number of inputs tried per target to FILE.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import string
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfgcheck.config import Config, ConfigError, validate
from cfgcheck.engines import argv as argv_mod
from cfgcheck.lint import lint
from cfgcheck.model import ArgToken, Location, ServedModel
from cfgcheck.reporters import renderer
from cfgcheck.yamlio import parse_text
from helpers import SHARED

FAST = int(os.environ.get("CFGCHECK_FUZZ_EXAMPLES", "100"))
LONG = int(os.environ.get("CFGCHECK_FUZZ_LONG_EXAMPLES", "10000"))
SARIF_SCHEMA = SHARED / "sarif" / "sarif-schema-2.1.0.json"
MARK = "# vllm\n"  # files without a serving marker skip the adapters (adapters/protocol.py: MARKERS)


# ---------------------------------------------------------------- the property


_SARIF_VALIDATOR = None
_RULES_VALIDATED: list[bool] = []


def sarif_validator():
    global _SARIF_VALIDATOR
    if _SARIF_VALIDATOR is None and SARIF_SCHEMA.exists():
        import jsonschema

        _SARIF_VALIDATOR = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    return _SARIF_VALIDATOR


class Workdir:
    """One temporary repository per test, rewritten for every example."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="cfgcheck-fuzz-"))

    def write(self, files: dict[str, str | bytes]) -> list[Path]:
        for child in self.root.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        paths = []
        for name, content in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", errors="surrogatepass")
            paths.append(path)
        return paths

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def work():
    workdir = Workdir()
    yield workdir
    workdir.close()


def check_result(result, expect_unreadable: bool | None = None) -> None:
    """The reporting half of the property, on one lint result."""
    for finding in result.findings:
        assert finding.location.line >= 1, finding
        assert finding.location.column >= 1, finding
        assert finding.code and finding.severity in ("error", "warning", "note"), finding
    unreadable = [f for f in result.findings if f.code == "CFG000"]
    if expect_unreadable:
        assert unreadable, [f.message for f in result.findings]
    data = json.loads(renderer("json")(result))
    assert data["version"] == 1 and len(data["findings"]) == len(result.findings)
    sarif = json.loads(renderer("sarif")(result))
    validator = sarif_validator()
    if validator is not None:
        if _RULES_VALIDATED:  # the rule table is the same every time: validate it once, then the results
            sarif["runs"][0]["tool"]["driver"]["rules"] = []
        errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
        assert not errors, errors[0].message
        _RULES_VALIDATED.append(True)
    annotations = renderer("github")(result)
    assert "\r" not in annotations
    for line in annotations.split("\n")[:-1]:  # the runner reads commands line by line (\n, \r\n)
        assert line.startswith(("::error ", "::warning ", "::notice ")), line
    markdown = renderer("markdown")(result)
    assert "<script" not in markdown.lower().replace("\\<", "")  # escaped as \\<script
    renderer("text")(result)


def lint_files(work: Workdir, files: dict[str, str | bytes], config: dict | None = None,
               expect_unreadable: bool | None = None):
    paths = work.write(files)
    result = lint(paths, Config(work.root, config or {}))  # must not raise
    check_result(result, expect_unreadable)
    return result


EXAMPLE_SECONDS = 10.0  # a hang (an alias cycle looped forever) fails the example instead of the run


@contextlib.contextmanager
def time_limit(seconds: float):
    def expired(signum, frame):
        raise TimeoutError(f"one input took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(name: str, strategy, check, examples: int) -> None:
    """Run ``check`` over ``examples`` inputs drawn from ``strategy``; log how many were tried."""
    tried = [0]

    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def property_holds(example) -> None:
        tried[0] += 1
        with time_limit(EXAMPLE_SECONDS):
            check(example)

    try:
        property_holds()
    finally:
        log = os.environ.get("CFGCHECK_FUZZ_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"target": name, "requested": examples, "tried": tried[0]}) + "\n")


# ---------------------------------------------------------------- generators

# Scalars of every type, in forms that stress quoting, YAML 1.1/1.2 resolution and the reporters.
NASTY = ["", " ", "~", "null", "yes", "no", "on", "off", "0x1F", "0o17", "1e3", ".inf", "-.nan", "1_000",
         "12:30", "@here", "@octocat", "::set-output name=x::y", "::add-mask::secret", "%0A", "%", "<script>x</script>",
         "**bold**", "[link](http://e.com)", "| a | b |", "\n", "line1\nline2", "\r\n", "#", " # not", "'", '"',
         "{{ .Values.x }}", "${HOME}", "$(id)", "`id`", "\\", "\u202e", "\u00e9\u4e2d\U0001f600", "\t", "--",
         "-", "--max-model-len", "--max-model-len=4k", "--max-num-seqs 999999999999999999999", "=", "--=x",
         "vllm serve", "sh -c 'vllm serve m --max-model-len 32k'", "hf://org/repo@rev", "hf://", "@", "nightly",
         "vllm/vllm-openai:v0.26.0", "vllm/vllm-openai@sha256:", "lmsysorg/sglang:v0.5.5.post3", "32Gi", "-1",
         "99999999999999999999999999", "0.95", "1.5", "nan", "cfgcheck: ignore[CFG101] why"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(NASTY),
    st.text(max_size=40), st.text(alphabet=string.printable, max_size=40),
)
values = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12) | st.sampled_from(NASTY), children,
                                                     max_size=4)), max_leaves=8)


def field(plausible):
    """A field that is usually plausible, else any value of any type (lists where strings belong...)."""
    return st.one_of(plausible, plausible, values)


FLAGS = ["--max-model-len", "--max-num-seqs", "--gpu-memory-utilization", "--kv-cache-memory-bytes",
         "--kv-cache-memory", "--tensor-parallel-size", "-tp", "--max-model", "--kv-cache-dtype", "--dtype",
         "--quantization", "--served-model-name", "--api-key", "--model", "--revision", "--enable-prefix-caching",
         "--no-enable-prefix-caching", "--context-length", "--mem-fraction-static", "--max-running-requests",
         "--tp-size", "--hf-overrides", "--rope-scaling", "--block-size", "--unknown-flag", "--max", "-O3", "-O",
         "--compilation-config.level", "--speculative_config", "--port", "--host", "--trust-remote-code"]
ARG_VALUES = ["4096", "32k", "32K", "1M", "0.9", "fp8", "auto", "true", "-1", "1e9", "{\"a\": 1}", "x y", "",
              "org/model", "hf://org/repo@abc", "9" * 30]
tokens = st.lists(st.one_of(
    st.sampled_from(FLAGS), st.sampled_from(ARG_VALUES),
    st.builds(lambda f, v: f"{f}={v}", st.sampled_from(FLAGS), st.sampled_from(ARG_VALUES)),
    st.sampled_from(["vllm", "serve", "python3", "-m", "vllm.entrypoints.openai.api_server", "sglang.launch_server",
                     "sh", "-c", "exec", "&&", ";", "|", "llama-server"]),
    st.text(max_size=15)), max_size=14)
shell_strings = st.lists(st.one_of(
    st.sampled_from(FLAGS + ARG_VALUES + ["vllm serve org/m", "python3 -m sglang.launch_server", "exec", "&&", "||",
                                          ";", "|", "&", "\n", "\\\n", "'", '"', "$(", ")", "${X:-1}", "`", "#",
                                          "2>&1", "<<EOF", "\\", "\u00e9", "\U0001f600", "$'\\n'"]),
    st.text(max_size=8)), max_size=16).map(" ".join)
images = field(st.sampled_from(["vllm/vllm-openai:v0.26.0", "vllm/vllm-openai:latest", "lmsysorg/sglang:v0.5.5",
                                "vllm/vllm-openai:v0.11.0@sha256:" + "a" * 64, "ghcr.io/ggml-org/llama.cpp:server",
                                "kserve/huggingfaceserver:v0.15.0", "nightly", ""]))
ints = field(st.integers(min_value=-10, max_value=2**40))
fracs = field(st.floats(min_value=-1, max_value=2))
argv_field = field(st.one_of(tokens, shell_strings))
names = field(st.sampled_from(["m", "llama", "qwen-32b", "x" * 70, "a/b", "@owner"]))
env = field(st.lists(st.fixed_dictionaries({"name": field(st.sampled_from(["VLLM_ADDITIONAL_ARGS", "HF_TOKEN", "X"])),
                                            "value": argv_field}), max_size=3))


def container():
    return st.fixed_dictionaries({"name": names, "image": images}, optional={
        "command": field(st.sampled_from([["vllm", "serve"], ["python3", "-m", "vllm.entrypoints.openai.api_server"],
                                          ["sh", "-c"], ["/bin/bash", "-lc"], ["python3", "-m", "sglang.launch_server"],
                                          ["llama-server"]])),
        "args": argv_field, "env": env,
        "resources": field(st.fixed_dictionaries({"limits": field(st.fixed_dictionaries({"nvidia.com/gpu": ints}))}))})


def pod_template():
    return st.fixed_dictionaries({"spec": field(st.fixed_dictionaries(
        {"containers": field(st.lists(field(container()), max_size=2))},
        optional={"nodeSelector": field(st.dictionaries(st.sampled_from(["nvidia.com/gpu.product",
                                                                          "kubernetes.io/hostname"]), names))}))})


def meta():
    return field(st.fixed_dictionaries({"name": names}, optional={"annotations": field(st.dictionaries(
        st.sampled_from(["cfgcheck.io/ignore", "x"]), field(st.sampled_from(["CFG101: reason", "CFG999", ";", ""]))))}))


vllm_config = field(st.fixed_dictionaries({}, optional={
    "maxModelLen": ints, "maxNumSeqs": ints, "gpuMemoryUtilization": fracs, "tensorParallelSize": ints,
    "kvCacheDtype": field(st.sampled_from(["fp8", "auto"])), "quantization": names, "dtype": names,
    "enablePrefixCaching": field(st.booleans()), "extraArgs": argv_field}))

llmkube = st.fixed_dictionaries({
    "apiVersion": field(st.just("inference.llmkube.dev/v1alpha1")), "kind": st.just("InferenceService"),
    "metadata": meta(), "spec": field(st.fixed_dictionaries({}, optional={
        "runtime": field(st.sampled_from(["vllm", "sglang", "llamacpp", "tokenspeed", "other"])), "image": images,
        "modelRef": names, "vllmConfig": vllm_config, "sglangConfig": field(st.fixed_dictionaries({}, optional={
            "contextLength": ints, "memFractionStatic": fracs, "maxRunningRequests": ints, "tensorParallelSize": ints})),
        "parallelSlots": ints, "contextSize": ints, "extraArgs": argv_field, "env": env, "replicas": ints,
        "nodeSelector": field(st.dictionaries(st.text(max_size=10), names, max_size=2)),
        "resources": field(st.fixed_dictionaries({"gpu": ints}))}))})
llmkube_model = st.fixed_dictionaries({
    "apiVersion": st.just("inference.llmkube.dev/v1alpha1"), "kind": st.just("Model"),
    "metadata": field(st.fixed_dictionaries({"name": names})), "spec": field(st.fixed_dictionaries({}, optional={
        "source": field(st.sampled_from(["hf://org/repo@abc", "hf://org/repo", "https://x/y.gguf"])),
        "quantization": names, "hardware": field(st.fixed_dictionaries({"gpu": field(st.fixed_dictionaries({}, optional={
            "enabled": field(st.booleans()), "count": ints, "memory": field(st.sampled_from(["80Gi", "24G", "x"])),
            "vendor": names, "resourceName": names}))}))}))})
production_stack = st.fixed_dictionaries({"servingEngineSpec": field(st.fixed_dictionaries({}, optional={
    "strategy": field(st.fixed_dictionaries({"type": field(st.sampled_from(["Recreate", "RollingUpdate"]))})),
    "modelSpec": field(st.lists(field(st.fixed_dictionaries({}, optional={
        "name": names, "repository": field(st.just("vllm/vllm-openai")), "tag": field(st.sampled_from(["v0.26.0", "latest"])),
        "modelURL": names, "requestGPU": ints, "replicaCount": ints, "vllmConfig": vllm_config})), max_size=2))}))})
helm_release = st.fixed_dictionaries({
    "apiVersion": st.just("helm.toolkit.fluxcd.io/v2"), "kind": st.just("HelmRelease"), "metadata": meta(),
    "spec": field(st.fixed_dictionaries({"values": field(production_stack)}, optional={
        "chart": field(st.fixed_dictionaries({"spec": field(st.fixed_dictionaries({"chart": names}))}))}))})
argo_application = st.fixed_dictionaries({
    "apiVersion": st.just("argoproj.io/v1alpha1"), "kind": st.just("Application"), "metadata": meta(),
    "spec": field(st.fixed_dictionaries({"source": field(st.fixed_dictionaries({"helm": field(st.fixed_dictionaries(
        {}, optional={"valuesObject": field(production_stack), "values": field(production_stack.map(yaml.safe_dump))}))}))}))})
deployment = st.fixed_dictionaries({
    "apiVersion": field(st.just("apps/v1")),
    "kind": st.sampled_from(["Deployment", "StatefulSet", "Job", "DaemonSet", "LeaderWorkerSet"]),
    "metadata": meta(), "spec": field(st.fixed_dictionaries({"template": field(pod_template())}, optional={
        "replicas": ints, "strategy": field(st.fixed_dictionaries({"type": field(st.sampled_from(["Recreate"]))})),
        "leaderWorkerTemplate": field(st.fixed_dictionaries({"workerTemplate": field(pod_template())}))}))})
pod = st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("Pod"), "metadata": meta(),
                             "spec": field(st.fixed_dictionaries({"containers": field(st.lists(field(container()),
                                                                                                 max_size=2))}))})
kserve = st.fixed_dictionaries({
    "apiVersion": field(st.sampled_from(["serving.kserve.io/v1beta1", "serving.kserve.io/v1alpha1"])),
    "kind": st.sampled_from(["InferenceService", "ServingRuntime", "ClusterServingRuntime", "LLMInferenceService",
                             "LLMInferenceServiceConfig"]),
    "metadata": meta(), "spec": field(st.fixed_dictionaries({}, optional={
        "predictor": field(st.fixed_dictionaries({}, optional={
            "model": field(st.fixed_dictionaries({}, optional={
                "modelFormat": field(st.fixed_dictionaries({"name": field(st.sampled_from(["huggingface", "vllm"]))})),
                "runtime": names, "args": argv_field, "env": env, "storageUri": names,
                "resources": field(st.fixed_dictionaries({"limits": field(st.fixed_dictionaries({"nvidia.com/gpu": ints}))}))})),
            "containers": field(st.lists(field(container()), max_size=2))})),
        "containers": field(st.lists(field(container()), max_size=2)),
        "model": field(st.fixed_dictionaries({}, optional={"uri": names, "name": names})),
        "parallelism": field(st.fixed_dictionaries({}, optional={"tensor": ints, "data": ints, "expert": field(st.booleans())})),
        "template": field(pod_template().map(lambda t: t.get("spec") if isinstance(t, dict) else t)),
        "worker": field(pod_template().map(lambda t: t.get("spec") if isinstance(t, dict) else t)),
        "prefill": field(st.fixed_dictionaries({"template": field(pod_template().map(
            lambda t: t.get("spec") if isinstance(t, dict) else t))}))}))})
compose = st.fixed_dictionaries({"services": field(st.dictionaries(names.filter(lambda n: isinstance(n, str)),
                                                                   field(st.fixed_dictionaries({"image": images}, optional={
                                                                       "command": argv_field, "environment": values})),
                                                                   max_size=2))})
documents = st.one_of(llmkube, llmkube_model, production_stack, helm_release, argo_application, deployment, pod,
                      kserve, compose)


@st.composite
def yaml_documents(draw):
    """One to three documents of the shapes above, dumped in a random YAML style."""
    docs = draw(st.lists(documents, min_size=1, max_size=3))
    flow = draw(st.sampled_from([False, None, True]))
    unicode = draw(st.booleans())
    try:
        text = yaml.safe_dump_all(docs, default_flow_style=flow, allow_unicode=unicode, sort_keys=False, width=80)
    except (yaml.YAMLError, ValueError, RecursionError):
        text = json.dumps(docs, default=str)
    return MARK + text


# A grammar of YAML-ish lines: keys, lists, anchors, aliases, merge keys, tags, comments, quotes, block
# scalars, flow collections and document markers at random indentation. Most results are not valid YAML.
KEYS = st.sampled_from(["a", "spec", "args", "vllmConfig", "maxModelLen", "'q k'", '"d:k"', "? k", "<<", "-", "&a k",
                        "*a", "!!str k", "containers", "image", "kind", "apiVersion", "x#y", "é", "0", "null"])
VALUES = st.sampled_from(["", "1", "v", "&a v", "*a", "*b", "&b [1, 2]", "[*a, *a]", "{a: 1, b: *a}", "!!binary aGk=",
                          "!custom x", "'it''s'", '"esc \\" \\n \\u00e9"', "|", "|-", ">+", "[", "]", "{", "}", "'",
                          '"', "# c", "v # c", "v#c", "{{ .Values.x }}", "- x", "*", "&", "!", "%YAML 1.2", "@x",
                          "`x`", ":", ": :", "&r [*r]", "&m {k: *m}", "[a, [b, [c]]]", "0x", "1e", "---", "...", "\t", "vllm serve m --max-model-len 4k"])


@st.composite
def yamlish(draw):
    lines = [MARK.rstrip("\n")]
    for _ in range(draw(st.integers(0, 25))):
        indent = " " * draw(st.integers(0, 8))
        kind = draw(st.integers(0, 9))
        if kind <= 3:
            lines.append(f"{indent}{draw(KEYS)}: {draw(VALUES)}")
        elif kind <= 5:
            lines.append(f"{indent}- {draw(VALUES)}")
        elif kind == 6:
            lines.append(f"{indent}# {draw(st.sampled_from(['cfgcheck: ignore[CFG101] r', 'HARD CEILING', 'x', '']))}")
        elif kind == 7:
            lines.append(draw(st.sampled_from(["---", "...", "--- !tag", "%TAG ! tag:x,2000:", ""])))
        elif kind == 8:
            lines.append(f"{indent}  {draw(VALUES)}")
        else:
            lines.append(indent + draw(st.text(max_size=20)))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))


# ---------------------------------------------------------------- targets


def check_loader_text(text: str) -> None:
    for fast in (True, False):
        loaded = parse_text("f.yaml", text, fast=fast)  # never raises
        if loaded.error is not None:
            assert loaded.error.line >= 1 and loaded.error.column >= 1, loaded.error.message
        for document in loaded.documents:
            for _, line, column in document.problems:
                assert line >= 1 and column >= 1


def make_loader_check(work: Workdir):
    def check(data) -> None:
        text = data if isinstance(data, str) else None
        if text is not None:
            check_loader_text(text)
            lint_files(work, {"f.yaml": text})
        else:
            result = lint_files(work, {"f.yaml": data})
            if b"\x00" in data or not _decodes(data):
                assert [f for f in result.findings if f.code == "CFG000"] or b"vllm" not in data
    return check


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return data.startswith((b"\xff\xfe", b"\xfe\xff"))


loader_inputs = st.one_of(
    st.text(max_size=300).map(lambda t: MARK + t), st.text(max_size=300),
    st.binary(max_size=200).map(lambda b: MARK.encode() + b), yamlish(),
)


def check_adapters(work: Workdir):
    def check(text: str) -> None:
        lint_files(work, {"serving.yaml": text})
    return check


def check_argv(work: Workdir):
    def check(example) -> None:
        words, shell = example
        # the parser functions themselves
        from cfgcheck.adapters.launch.shell import lex, segments

        for shell_mode in (True, False):
            lexed = lex(shell, shell=shell_mode)
            assert all(0 <= start <= end <= len(shell) for _, start, end in lexed), lexed
            segments(lexed)
        for engine in ("vllm", "sglang", "tokenspeed", "llama.cpp", "unknown"):
            model = ServedModel("m", "Deployment", "f.yaml", 0, Location("f.yaml", 1, 1), engine=engine,
                                engine_version=None)
            toks = [ArgToken(w, Location("f.yaml", 1, 1 + i)) for i, w in enumerate(words)]
            launch = argv_mod.find_launch(toks, engine if engine != "unknown" else None)
            argv_mod.apply_argv(model, launch.args if launch else toks)
            from cfgcheck.engines import catalog

            found = catalog.catalog_for(engine, None) if engine != "unknown" else None
            if found is not None:
                argv_mod.walk(found, toks)
        # and through the adapters: a list argv, a shell string (located inside quotes and escapes)
        doc = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {
            "containers": [{"name": "a", "image": "vllm/vllm-openai:v0.26.0", "args": words},
                           {"name": "b", "image": "vllm/vllm-openai:v0.26.0", "command": ["sh", "-c", shell]},
                           {"name": "c", "image": "vllm/vllm-openai:v0.26.0",
                            "env": [{"name": "VLLM_ADDITIONAL_ARGS", "value": shell}]}]}}}}
        style = '"' if len(shell) % 3 == 0 else ("'" if len(shell) % 3 == 1 else "|")
        text = yaml.safe_dump(doc, allow_unicode=True, default_style=None if style == "|" else None)
        result = lint_files(work, {"d.yaml": MARK + text})
        block = MARK + ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
                        "      containers:\n      - name: b\n        image: vllm/vllm-openai:v0.26.0\n"
                        "        command: [sh, -c]\n        args:\n        - |\n" +
                        "".join(f"          {line}\n" for line in shell.splitlines() or [""]))
        lint_files(work, {"d.yaml": block})
        # libyaml counts NEL/LS/PS as line breaks (YAML 1.1), so they may shift lines (known, see RELIABILITY.md)
        breaks = sum(text.count(c) for c in ("\n", "\x85", "\u2028", "\u2029"))
        for finding in result.findings:
            assert finding.location.line <= breaks + 2, finding
    return check


SUPPRESSIBLE = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: sup
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0
  vllmConfig:
    maxModelLen: 262144
  parallelSlots: 64
  extraArgs:
  - --kv-cache-memory
  - "4294967296"
  - --max-num-seqs
  - "128"
"""
CODES = ["CFG000", "CFG001", "CFG002", "CFG101", "CFG103", "CFG106", "CFG203", "CFG301", "cfg101",
         "abbreviated-flag", "CFG9", "", " ", ",", "CFG101,CFG102", "]", "[", "#", "unknown-rule"]


@st.composite
def suppressions(draw):
    lines = SUPPRESSIBLE.splitlines()
    for _ in range(draw(st.integers(1, 6))):
        codes = ",".join(draw(st.lists(st.sampled_from(CODES), max_size=3)))
        reason = draw(st.one_of(st.sampled_from(["", "because # of this", "r", "@team see ::set-output",
                                                 "ignore[CFG101] twice"]), st.text(max_size=20)))
        comment = draw(st.sampled_from(["# cfgcheck: ignore[{c}] {r}", "#cfgcheck:ignore[{c}]{r}",
                                        "# cfgcheck: ignore[{c}", "# cfgcheck: ignore {c} {r}",
                                        "# cfgcheck: max-model-len={c} {r}"])).format(c=codes, r=reason)
        comment = comment.replace("\n", " ").replace("\r", " ")
        at = draw(st.integers(0, len(lines)))
        if draw(st.booleans()) and 0 < at <= len(lines) and not lines[at - 1].rstrip().endswith(("|", ">")):
            lines[at - 1] = lines[at - 1] + "  " + comment
        else:
            indent = len(lines[at]) - len(lines[at].lstrip()) if at < len(lines) else 0
            lines.insert(at, " " * indent + comment)
    return "\n".join(lines) + "\n"


def check_suppressions(work: Workdir):
    def check(text: str) -> None:
        result = lint_files(work, {"s.yaml": text})
        suppressed = [f for f in result.findings if f.suppressed is not None]
        for finding in suppressed:
            assert finding.code not in ("CFG001", "CFG002")  # problems with suppressions are not suppressible
    return check


config_dicts = st.one_of(
    st.dictionaries(st.sampled_from(["select", "ignore", "exclude", "fail-on", "rules", "limits", "gpu", "ceilings",
                                     "model_configs", "adr_dir", "values", "docs_url", "unknown"]), values, max_size=4),
    st.fixed_dictionaries({}, optional={
        "limits": st.dictionaries(st.sampled_from(["max-file-bytes", "max-depth", "max-expanded-nodes"]),
                                  st.integers(-5, 10**7), max_size=3),
        "select": st.lists(st.sampled_from(CODES), max_size=3), "ignore": st.lists(st.sampled_from(CODES), max_size=3),
        "rules": st.dictionaries(st.sampled_from(CODES), st.fixed_dictionaries({}, optional={
            "severity": st.sampled_from(["error", "warning", "note", "fatal"]), "max": values}), max_size=2),
        "ceilings": st.lists(st.fixed_dictionaries({"setting": st.sampled_from(["gpu_memory_utilization", "x"]),
                                                    "max": st.one_of(st.floats(), st.integers())},
                                                   optional={"model": st.text(max_size=5)}), max_size=2),
        "gpu": st.sampled_from(["A100-80GB", "H100", "nope", ""]),
        "values": st.lists(st.fixed_dictionaries({"files": st.lists(st.sampled_from(["*.yaml", "**", "", "["]),
                                                                    min_size=1, max_size=2),
                                                  "settings": st.dictionaries(st.sampled_from(["max_model_len", "image",
                                                                                               "extra_args", "x"]),
                                                                              st.sampled_from(["a.b", "serving.ctx", "*", "a..b"]),
                                                                              min_size=1, max_size=2)},
                                                 optional={"models": st.sampled_from(["models.*", "*", "a"]),
                                                           "engine": st.sampled_from(["vllm", "sglang"])}), max_size=2),
    }))


def check_config(work: Workdir):
    def check(data) -> None:
        try:
            valid = validate(data, ".cfgcheck.yaml")
        except ConfigError as exc:
            assert "\n" not in str(exc)
            return
        try:
            result = lint(work.write({"a.yaml": MARK + SUPPRESSIBLE}), Config(work.root, valid))
        except ConfigError as exc:  # an unknown rule name in select/ignore/rules: a one-line user error
            assert "\n" not in str(exc)
            return
        check_result(result)
        # the same configuration, written as YAML and read by the loader
        from cfgcheck.config import load

        try:
            text = yaml.safe_dump(data, allow_unicode=True)
        except yaml.YAMLError:
            return
        work.write({".cfgcheck.yaml": text})
        try:
            load(work.root)
        except ConfigError as exc:
            assert "\n" not in str(exc)
    return check


config_texts = st.one_of(yamlish(), st.text(max_size=100), st.binary(max_size=60))


def check_config_text(work: Workdir):
    def check(data) -> None:
        from cfgcheck.config import load

        work.write({".cfgcheck.yaml": data})
        try:
            load(work.root)
        except ConfigError as exc:
            assert "\n" not in str(exc)
    return check


TARGETS = {
    "loader": (loader_inputs, make_loader_check),
    "adapters": (yaml_documents(), check_adapters),
    "argv": (st.tuples(tokens, shell_strings), check_argv),
    "suppressions": (suppressions(), check_suppressions),
    "config": (config_dicts, check_config),
    "config-file": (config_texts, check_config_text),
}


@pytest.mark.parametrize("target", list(TARGETS))
def test_fuzz(target: str, work: Workdir) -> None:
    strategy, make = TARGETS[target]
    run(target, strategy, make(work), FAST)


@pytest.mark.slow
@pytest.mark.parametrize("target", list(TARGETS))
def test_fuzz_long(target: str, work: Workdir) -> None:
    strategy, make = TARGETS[target]
    run(target, strategy, make(work), LONG)


def test_sarif_schema_present_or_skipped() -> None:
    """The SARIF assertion needs ../shared; say so instead of passing silently without it."""
    if not SARIF_SCHEMA.exists():
        pytest.skip(f"{SARIF_SCHEMA} not found: SARIF reports are checked as JSON only")
    assert sarif_validator() is not None


@pytest.mark.parametrize("text", [
    MARK + "a: &a [1]\nb: *a\nc: *missing\n",
    MARK + "? [a, b]\n: v\n{[1]: 2}: 3\n",
    MARK + "a: !!binary aGk=\nb: !!timestamp 2001-12-14\nc: !custom {x: 1}\n",
    MARK + "- &x\n  - *x\n",  # an anchor inside itself: looped forever (fixed in yamlbounds._check_expansion)
    MARK + "a: &x {b: *x}\n",
    MARK + "a: &x\n  <<: *x\n",
    MARK + "<<: [*a]\n",
    MARK + "a:\n  <<: 5\n",
    MARK + "\ufeffkind: Deployment\n",
    MARK + "%YAML 1.1\n---\na: 1\n",
    MARK + "spec: {containers: [{name: x, args: [!!null '', 1, {a: b}]}]}\napiVersion: v1\nkind: Pod\n",
])
def test_known_odd_inputs(text: str, work: Workdir) -> None:
    """Inputs the fuzzers found or that are classic parser traps, kept as fixed regressions."""
    check_loader_text(text)
    lint_files(work, {"f.yaml": text})
