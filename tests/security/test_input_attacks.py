"""Attacks on the files a pull request names and on the work it can cause (docs/SECURITY.md, "Files a
repository names, expansion, work and suppressions"), each reproduction a test.

Work is judged by what the run builds (the longest value, tracemalloc's peak, how many comment copies
and scans), never by wall time: a busy runner slows the clock, not the work.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from cfgcheck.adapters.core.contexts import MAX_FILE_CHARS
from cfgcheck.adapters.launch.expansion import MAX_VALUE_CHARS
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES, git, make_repo

# ---------------------------------------------------------------- expansion ("billion laughs")

# 24 doublings of 8 characters: 128 MiB from about 400 bytes; what each expander is given
_DOUBLINGS = 24


def _shell_lines(separator: str = "\n") -> str:
    lines = ["V0=abcdefgh"] + [f"V{i}=$V{i - 1}$V{i - 1}" for i in range(1, _DOUBLINGS + 1)]
    return separator.join(lines)


def _make_lines() -> str:
    lines = ["V0 := abcdefgh"] + [f"V{i} := $(V{i - 1})$(V{i - 1})" for i in range(1, _DOUBLINGS + 1)]
    return "\n".join(lines)


BOMBS = {
    "run.sh": _shell_lines() + f"\nvllm serve m --served-model-name $V{_DOUBLINGS}\n",
    "Makefile": _make_lines() + f"\nserve:\n\tvllm serve m --served-model-name $(V{_DOUBLINGS})\n",
    "supervisord.conf": "[program:engine]\ncommand=sh -c \"" + _shell_lines("; ")
                        + f"; vllm serve m --served-model-name $V{_DOUBLINGS}\"\n",
    "deploy.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: bomb}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.8.5
          command: ["sh", "-c"]
          args:
            - |
""" + "".join(f"              {line}\n" for line in _shell_lines().split("\n"))
      + f"              vllm serve m --served-model-name $V{_DOUBLINGS}\n",
}


def _served(root: Path, name: str) -> list:
    return [m for m in lint([root / name], Config(root, {})).models if m.path == name]


def _after(model, flag: str) -> str:
    texts = [token.text for token in model.argv]
    return texts[texts.index(flag) + 1]


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_doubling_variables_stay_unknown_past_the_value_bound(tmp_path: Path, name: str) -> None:
    """Twenty-four lines ``V1=$V0$V0``: the value past the bound is unknown (kept as written), nothing
    longer than the bound is built, and the run's memory peak stays small (128 MiB and 21 s before)."""
    (tmp_path / name).write_text(BOMBS[name], encoding="utf-8")
    tracemalloc.start()
    try:
        models = _served(tmp_path, name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(models) == 1, name
    assert max(len(token.text) for token in models[0].argv) <= MAX_VALUE_CHARS
    assert "$" in _after(models[0], "--served-model-name")  # unknown: the reference as written
    assert peak < 32 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"


def test_compose_interpolation_of_a_long_value_many_times(tmp_path: Path) -> None:
    """One compose word naming a 60,000-character ``.env`` value 2,000 times (120 MB before): unknown."""
    (tmp_path / ".env").write_text("V=" + "x" * 60_000 + "\nNAME=served\n", encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  engine:\n    image: vllm/vllm-openai:v0.8.5\n"
        "    command: [\"--model\", \"m\", \"--served-model-name\", \"" + "$V" * 2_000 + "\", \"--port\", \"$NAME\"]\n",
        encoding="utf-8")
    tracemalloc.start()
    try:
        models = _served(tmp_path, "compose.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _after(models[0], "--served-model-name").startswith("$V$V")
    assert _after(models[0], "--port") == "served"  # a short value is still substituted
    assert peak < 32 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"


def test_expansion_work_per_file_is_bounded(tmp_path: Path) -> None:
    """Each line doubles a 32,000-character value (within the value bound) a thousand times: past the
    file's budget the later values are unknown, so the work does not grow with the lines."""
    lines = ["V0=" + "x" * 32_000] + [f"W{i}=$V0$V0" for i in range(1, 1001)]
    (tmp_path / "run.sh").write_text("\n".join(lines) + "\nvllm serve m --served-model-name $W1 --port $W1000\n",
                                     encoding="utf-8")
    assert 1000 * 64_000 > MAX_FILE_CHARS  # the file asks for more than its budget
    model = _served(tmp_path, "run.sh")[0]
    assert len(_after(model, "--served-model-name")) == 64_000  # early lines: known
    assert _after(model, "--port") == "$W1000"  # past the budget: unknown


# ---------------------------------------------------------------- an unparseable Python spec file

SPECS = """\
SPECS = {
    "qwen": {"model": "Qwen/Qwen3-8B", "tp": 1, "vllm_args": ["--max-model-len", "999999999"]},
}
"""
# one appended line each: Python's parser refuses them (SyntaxError, MemoryError from its nesting limits)
UNPARSEABLE = {"parentheses": ("x = " + "(" * 201 + ")" * 201 + "\n", "SyntaxError"),
               "minuses": ("y = " + "-" * 100_000 + "1\n", "MemoryError")}


@pytest.mark.parametrize("case", sorted(UNPARSEABLE))
def test_an_unparseable_spec_file_is_a_cfg000_naming_the_error(tmp_path: Path, case: str) -> None:
    line, error = UNPARSEABLE[case]
    (tmp_path / "specs.py").write_text(SPECS + line, encoding="utf-8")
    result = lint([tmp_path / "specs.py"], Config(tmp_path, {}))
    assert [(f.code, f.location.path) for f in result.findings] == [("CFG000", "specs.py")]
    assert error in result.findings[0].message


def test_an_unparseable_spec_file_does_not_fix_the_bases_findings(tmp_path: Path) -> None:
    """In review the head's unreadable file hid every spec, and the base's findings counted as fixed."""
    from cfgcheck.diff import lint_diff

    repo = make_repo(tmp_path, {"specs.py": SPECS})
    base = lint([repo / "specs.py"], Config(repo.resolve(), {}))
    assert {f.code for f in base.findings} >= {"CFG207"}
    (repo / "specs.py").write_text(SPECS + UNPARSEABLE["parentheses"][0], encoding="utf-8")
    git(repo, "commit", "-qam", "hide the specs")
    result = lint_diff([repo], Config(repo.resolve()), "HEAD~1")
    assert [f.code for f in result.findings] == ["CFG000"]
    assert result.fixed == []


@pytest.mark.parametrize("where", ["values", "overheads"])
def test_deeply_nested_json_values_are_invalid_not_a_crash(where: str) -> None:
    """json's decoder recurses: a 100,000-deep array in a flag value or an env JSON is a RecursionError."""
    if where == "values":
        from cfgcheck.engines.value_types import Invalid, _json

        assert isinstance(_json("[" * 100_000), Invalid)
    else:
        from cfgcheck.capacity.overheads import _json_value

        assert _json_value('{"a":' * 100_000) == {}


@pytest.mark.parametrize("value", ["[" * 100_000, '{"VllmWorker": '])
def test_a_dynamo_deployment_config_that_is_not_json_is_a_cfg000(tmp_path: Path, value: str) -> None:
    """The graph's engines vanished without a word (a JSONDecodeError), or the document's CFG000 quoted
    the decoder's message (a RecursionError): one CFG000 naming the variable and the error's class."""

    text = (FIXTURES / "formats" / "operators" / "dynamo-graph-v03.yaml").read_text(encoding="utf-8")
    start = text.index("value: '{") + len("value: '")
    text = text[:start] + value + text[text.index("'\n", start):]
    result = lint([_write(tmp_path, "graph.yaml", text)], Config(tmp_path, {}))
    found = [f for f in result.findings if f.code == "CFG000"]
    assert len(found) == 1 and "DYN_DEPLOYMENT_CONFIG is not JSON" in found[0].message, result.findings
    assert ("RecursionError" if value.startswith("[") else "JSONDecodeError") in found[0].message
    assert found[0].location.line == 10


def _write(root: Path, name: str, text: str) -> Path:
    (root / name).write_text(text, encoding="utf-8")
    return root / name


def test_a_deeply_nested_toml_configuration_is_one_line(tmp_path: Path) -> None:
    from cfgcheck.config import ConfigError, load

    (tmp_path / "pyproject.toml").write_text("[tool.cfgcheck]\na = " + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load(tmp_path)


# ---------------------------------------------------------------- files a repository names

KEY = "sk-live-" + "Q7w" * 12  # the shape of an API key an earlier job step left in the work tree
COMPOSE = """\
services:
  engine:
    image: vllm/vllm-openai:v0.8.5
    command: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "${MAX_LEN}", "--served-model-name", "${NAME}"]
"""


def _git_repo(root: Path, files: dict[str, str], tracked: list[str]) -> Path:

    root.mkdir(exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "add", "-f", "--", *tracked)
    git(root, "commit", "-qm", "base")
    return root


def _arguments(result) -> list[str]:
    return [token.text for model in result.models for token in model.argv]


@pytest.mark.parametrize("how", ["ignored", "untracked"])
def test_an_env_file_git_does_not_track_is_never_read(tmp_path: Path, how: str) -> None:
    """A git-ignored (or untracked) ``.env`` in the work tree held values the PR's compose file quoted."""
    repo = _git_repo(tmp_path / "repo", {"compose.yaml": COMPOSE, ".gitignore": ".env\n" if how == "ignored" else "",
                                         ".env": f"MAX_LEN=999999999\nNAME={KEY}\n"}, ["compose.yaml", ".gitignore"])
    result = lint([repo], Config(repo.resolve(), {}))
    assert KEY not in " ".join(_arguments(result))
    assert not [f for f in result.findings if f.location.path == ".env"], result.findings
    assert "${MAX_LEN}" in _arguments(result)


def test_a_tracked_env_file_is_read(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo", {"compose.yaml": COMPOSE, ".env": "MAX_LEN=999999999\nNAME=chat\n"},
                     ["compose.yaml", ".env"])
    result = lint([repo], Config(repo.resolve(), {}))
    assert {"999999999", "chat"} <= set(_arguments(result))


@pytest.mark.parametrize("target", [".git/config", "../outside.env", "link-to-git"])
def test_a_tracked_link_into_git_or_out_of_the_repository_is_not_followed(tmp_path: Path, target: str) -> None:
    """``.env -> .git/config``: the checkout's ``extraheader`` token became a compose variable."""
    import os

    repo = _git_repo(tmp_path / "repo", {"compose.yaml": COMPOSE}, ["compose.yaml"])
    header = f"extraheader = AUTHORIZATION: basic {KEY}\nNAME={KEY}\n"
    with open(repo / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(f"[http]\n\t{header}")
    (tmp_path / "outside.env").write_text(header, encoding="utf-8")
    if target == "link-to-git":  # a folder of the repository that is a link to .git
        os.symlink(".git", repo / "conf")
        target = "conf/config"
    os.symlink(target, repo / ".env")

    git(repo, "add", ".env")
    result = lint([repo], Config(repo.resolve(), {}))
    assert KEY not in " ".join(_arguments(result))


def test_an_ignored_env_file_outside_git_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("secrets/\n", encoding="utf-8")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "prod.env").write_text(f"NAME={KEY}\n", encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(COMPOSE.replace("    command:", "    env_file: secrets/prod.env\n"
                                                           "    command:"), encoding="utf-8")
    result = lint([tmp_path / "compose.yaml"], Config(tmp_path, {}))
    assert not [m for m in result.models if "NAME" in m.env]


def test_diff_mode_reads_named_files_from_the_commits_not_the_work_tree(tmp_path: Path) -> None:
    """In review the head's tracked ``.env`` is its commit's blob: a job step that wrote a secret into
    the work tree's copy (``envsubst``) is not read, and the base's side reads the base's ``.env``."""
    from cfgcheck.diff import lint_diff

    repo = _git_repo(tmp_path / "repo", {"compose.yaml": COMPOSE, ".env": "MAX_LEN=4096\nNAME=chat\n"},
                     ["compose.yaml", ".env"])
    (repo / ".env").write_text("MAX_LEN=8192\nNAME=chat\n", encoding="utf-8")
    (repo / "compose.yaml").write_text(COMPOSE.replace("Qwen/Qwen3-8B", "Qwen/Qwen3-4B"), encoding="utf-8")
    git(repo, "commit", "-qam", "head")
    (repo / ".env").write_text(f"MAX_LEN=8192\nNAME={KEY}\n", encoding="utf-8")  # the job step's copy
    result = lint_diff([repo], Config(repo.resolve()), "HEAD~1")
    assert {"8192", "chat"} <= set(_arguments(result)) and KEY not in " ".join(_arguments(result))
    base_arguments = [token.text for model in result.base_models for token in model.argv]
    assert "4096" in base_arguments


SECRET_USES = {
    "max-model-len": COMPOSE.replace("${MAX_LEN}", "${VLLM_API_KEY}"),
    "served-model-name": COMPOSE.replace("${NAME}", "prefix-${VLLM_API_KEY}"),
    "unknown flag": COMPOSE.replace('"--served-model-name"', '"--${VLLM_API_KEY}"'),
    "env_file and environment": COMPOSE.replace(
        "    command:", "    env_file: [engine.env]\n    environment: {VLLM_PORT: \"${VLLM_API_KEY}\"}\n    command:"),
}


@pytest.mark.parametrize("use", sorted(SECRET_USES))
def test_a_secret_named_variable_of_an_env_file_is_unknown_and_never_quoted(tmp_path: Path, use: str) -> None:
    """A PR writing ``--max-model-len ${VLLM_API_KEY}`` got the key quoted (CFG105, CFG103): a variable
    whose name says it is a secret is set, its value never read into an argument."""
    from cfgcheck.reporters import renderer

    repo = _git_repo(tmp_path / "repo", {"compose.yaml": SECRET_USES[use], ".env": f"VLLM_API_KEY={KEY}\nMAX_LEN=4096\n",
                                         "engine.env": f"HF_TOKEN={KEY}\n"}, ["compose.yaml", ".env", "engine.env"])
    result = lint([repo], Config(repo.resolve(), {}))
    assert result.models
    outputs = [renderer(name)(result) for name in ("text", "json", "sarif", "markdown", "github")]
    assert not [text for text in outputs if KEY in text]
    assert KEY not in " ".join(_arguments(result)) + " ".join(str(s.value) for m in result.models for s in m.env.values())
    if "engine.env" in SECRET_USES[use]:
        assert result.models[0].env["HF_TOKEN"].value is None  # set, unknown


def test_one_definition_of_a_secret_name() -> None:
    from cfgcheck import redact
    from cfgcheck.secret_names import secret_name

    assert redact.secret_name is secret_name  # what redaction masks is what the adapters and rules never quote
    for name in ("VLLM_API_KEY", "HF_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "GCP_CREDENTIALS", "OAUTH_CLIENT",
                 "PRIVATE_REGISTRY_PASS", "--api-key", "KEY"):
        assert secret_name(name), name
    for name in ("MAX_NUM_BATCHED_TOKENS", "KEYBOARD_LAYOUT", "GIT_AUTHOR_NAME", "HF_TOKEN_PATH", "--tokenizer",
                 "--max-model-len", "MODEL"):
        assert not secret_name(name), name


# ---------------------------------------------------------------- work per engine start and comment


def _script(starts: int) -> str:
    """``starts`` engine starts, each under a comment that names a limit: every model of a script
    carries the file's comments, and the pool and pin checks read them."""
    lines = []
    for index in range(starts):
        lines.append(f"# model {index}: 4 sequences, the batch jobs share this GPU (kv pool: 99,000 tokens)")
        lines.append(f"vllm serve Qwen/Qwen3-8B --port {8000 + index} --max-num-seqs 4 &")
    return "\n".join(lines) + "\n"


def _deployment(containers: int) -> str:
    items = "".join(f"""\
        # engine {index}
        - name: e{index}
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen3-8B", "--port", "{8000 + index}"]
          ports: [{{containerPort: {8000 + index}}}]
""" for index in range(containers))
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: many}\nspec:\n  template:\n    spec:\n"
            "      containers:\n" + items)


class _Counting:
    """A compiled pattern whose ``search`` calls are counted (the scans a run makes)."""

    def __init__(self, pattern) -> None:
        self.pattern, self.calls = pattern, 0

    def search(self, *args):
        self.calls += 1
        return self.pattern.search(*args)

    def __getattr__(self, name):
        return getattr(self.pattern, name)


def test_models_of_a_file_share_its_comments_and_scan_them_once(tmp_path: Path, monkeypatch) -> None:
    """200 engine starts under 200 comments: one comment object for all of them (each model copied
    every comment), and the pool and limit words are looked for once per comment, not once per model
    and comment (4,000 lines took 10-12 s and 1.2 GiB, 8,000 lines 49 s and 4.4 GiB)."""
    import cfgcheck.capacity.measured as measured
    import cfgcheck.rules.unexplained_seq_pin as seq_pin

    starts = 200
    pool, limit = _Counting(measured._POOL_KEYWORD), _Counting(seq_pin._LIMIT_WORDS)
    monkeypatch.setattr(measured, "_POOL_KEYWORD", pool)
    monkeypatch.setattr(seq_pin, "_LIMIT_WORDS", limit)
    result = lint([_write(tmp_path, "serve.sh", _script(starts))], Config(tmp_path, {}))
    assert len(result.models) == starts
    assert len({id(model.comments) for model in result.models}) == 1
    assert pool.calls <= 3 * starts, pool.calls  # per comment (and a few per model), not starts x comments
    assert limit.calls <= 2 * starts, limit.calls


def test_a_pod_is_walked_once_for_all_its_containers(tmp_path: Path, monkeypatch) -> None:
    """Each engine container read the ports of every other container: containers x containers."""
    import cfgcheck.adapters.launch.pods as pods

    calls = []
    original = pods._ports
    monkeypatch.setattr(pods, "_ports", lambda ctx, node: calls.append(node) or original(ctx, node))
    containers = 100
    result = lint([_write(tmp_path, "deploy.yaml", _deployment(containers))], Config(tmp_path, {}))
    assert len(result.models) == containers
    assert len(calls) <= containers
    assert len({id(model.comments) for model in result.models}) == 1
    model = result.models[0]
    assert len(model.pod.sibling_ports) == containers - 1 and model.pod.ports[0] not in model.pod.sibling_ports


@pytest.mark.parametrize("name, text", [("serve.sh", _script(300)), ("deploy.yaml", _deployment(300))])
def test_served_models_per_file_are_limited(tmp_path: Path, name: str, text: str) -> None:
    """Past ``limits.max-served-models`` (256 by default) a file's engine starts are not checked: its
    CFG000 names the limit, and the limit is an option."""
    from cfgcheck.yamlio import DEFAULT_LIMITS

    path = _write(tmp_path, name, text)
    result = lint([path], Config(tmp_path, {}))
    assert len(result.models) == DEFAULT_LIMITS["max-served-models"] == 256
    found = [f for f in result.findings if f.code == "CFG000"]
    assert len(found) == 1 and "(limit max-served-models)" in found[0].message
    raised = lint([path], Config(tmp_path, {"limits": {"max-served-models": 400}}))
    assert len(raised.models) == 300 and not [f for f in raised.findings if f.code == "CFG000"]


def test_the_served_models_limit_is_a_configuration_option(tmp_path: Path) -> None:
    from cfgcheck.config import ConfigError, load

    (tmp_path / ".cfgcheck.yaml").write_text("limits:\n  max-served-models: 1000\n", encoding="utf-8")
    assert load(tmp_path).limits["max-served-models"] == 1000
    (tmp_path / ".cfgcheck.yaml").write_text("limits:\n  max-served-models: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load(tmp_path)


# ---------------------------------------------------------------- a pull request silences its own finding

CEILING = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.8.5
  vllmConfig:
    # HARD CEILING 0.875: the GPU is shared with Jellyfin transcoding.
    gpuMemoryUtilization: 0.85
"""
RAISED = CEILING.replace("gpuMemoryUtilization: 0.85", "gpuMemoryUtilization: 0.95")
SILENCING = {
    "ignore": RAISED.replace("0.95", "0.95  # cfgcheck: ignore[CFG204] the batch job moved off this GPU"),
    "ignore-file": "# cfgcheck: ignore-file[CFG204] the batch job moved off this GPU\n" + RAISED,
    "annotation": RAISED.replace("  name: chat\n", "  name: chat\n  annotations:\n"
                                 "    cfgcheck.io/ignore: \"CFG204: the batch job moved off this GPU\"\n"),
}


def _diff(tmp_path: Path, base: str, head: str):
    from cfgcheck.diff import lint_diff

    repo = make_repo(tmp_path, {"chat.yaml": base})
    (repo / "chat.yaml").write_text(head, encoding="utf-8")
    git(repo, "commit", "-qam", "raise")
    return lint_diff([repo], Config(repo.resolve()), "HEAD~1")


@pytest.mark.parametrize("how", sorted(SILENCING))
def test_a_suppression_the_change_adds_is_listed_with_the_finding_it_silences(tmp_path: Path, how: str) -> None:
    """Raising a value past the documented ceiling while adding its suppression gave "no new findings"."""
    from cfgcheck.github.summary import render_summary
    from cfgcheck.reporters import renderer

    result = _diff(tmp_path, CEILING, SILENCING[how])
    assert not [f for f in result.active() if f.code == "CFG204"]
    silenced = [f for f in result.findings if f.code == "CFG204"]
    assert [(s.finding.code, s.finding.location.line) for s in result.silenced] == [("CFG204", silenced[0].location.line)]
    assert result.silenced[0].suppression.reason == "the batch job moved off this GPU"
    text = renderer("text")(result)
    assert "1 new finding silenced by a suppression this change adds" in text and "moved off this GPU" in text
    summary = json.loads(renderer("json")(result))["summary"]
    assert [(row["code"], row["suppression"]["reason"]) for row in summary["suppressed_by_change"]] == \
        [("CFG204", "the batch job moved off this GPU")]
    assert summary["errors"] == 0
    body = render_summary(result, [], None, step=True)
    headline = body.strip().splitlines()[0]
    assert headline.startswith("### cfgcheck: 1 note") and "1 new finding silenced by a suppression this PR adds" in headline
    assert "moved off this GPU" in body and "CFG204" in body


def test_a_suppression_the_base_already_has_is_not_listed(tmp_path: Path) -> None:
    """A file the maintainers chose to silence stays silenced: not the change's doing."""
    base = "# cfgcheck: ignore-file[CFG204] the maintainers accept this GPU's risk\n" + CEILING
    result = _diff(tmp_path, base, "# cfgcheck: ignore-file[CFG204] the maintainers accept this GPU's risk\n" + RAISED)
    assert [f.suppressed is not None for f in result.findings if f.code == "CFG204"] == [True]
    assert result.silenced == []
    from cfgcheck.reporters import renderer

    assert json.loads(renderer("json")(result))["summary"]["suppressed_by_change"] == []


DIRECTIVE = "    # cfgcheck: ceiling=0.875 the GPU is shared with Jellyfin transcoding\n"


@pytest.mark.parametrize("base, ceiling, said", [
    (CEILING, None, "this change removed it"),
    (CEILING, "# HARD CEILING 0.99: the GPU is ours now.", "this change raised it to 0.99"),
    (CEILING, "# cfgcheck: ceiling=0.99 the GPU is ours now", "this change raised it to 0.99"),
    ("directive", None, "this change removed it"),
    ("directive", "# cfgcheck: ceiling=0.99 the GPU is ours now", "this change raised it to 0.99")])
def test_moving_the_ceiling_in_the_change_that_raises_the_value_is_reported(tmp_path: Path, base: str,
                                                                           ceiling: str | None, said: str) -> None:
    """Deleting or raising the ceiling (a HARD CEILING comment or a ``ceiling=`` directive) with the value:
    judged against the base's ceiling."""
    old = "    # HARD CEILING 0.875: the GPU is shared with Jellyfin transcoding.\n"
    if base == "directive":
        base, raised = CEILING.replace(old, DIRECTIVE), RAISED.replace(old, DIRECTIVE)
        old = DIRECTIVE
    else:
        raised = RAISED
    head = raised.replace(old, "" if ceiling is None else f"    {ceiling}\n")
    result = _diff(tmp_path, base, head)
    found = [f for f in result.active() if f.code == "CFG204"]
    assert len(found) == 1, result.findings
    assert "above the ceiling 0.875" in found[0].message and said in found[0].message
