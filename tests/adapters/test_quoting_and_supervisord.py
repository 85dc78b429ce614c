"""Engine starts read as the program that runs them sees them: a quoted ``"$VAR"`` is one word whatever
it holds while an unquoted ``$VAR`` is split into words (POSIX field splitting), and supervisord
programs (``[program:x]`` with ``command=``) are served models, their words located in the file."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURES, lint_paths

from cfgcheck.adapters.core.protocol import file_format
from cfgcheck.adapters.launch.shell import MAX_SPLICED_WORDS, expand, lex
from cfgcheck.adapters.formats.supervisord import scan_comments, sections
from cfgcheck.config import Config
from cfgcheck.lint import collect

FORMATS = FIXTURES / "formats"


def _models(tmp_path: Path, folder: str) -> dict:
    shutil.copytree(FORMATS / folder, tmp_path / folder)
    _, models = collect([tmp_path], Config(tmp_path))
    return {model.name: model for model in models}


def _at(item) -> tuple[int, int]:
    return item.location.line, item.location.column


def _texts(model) -> list[str]:
    return [token.text for token in model.argv]


# ---------------------------------------------------------------- quoting


def test_expand_splits_only_unquoted_references() -> None:
    script = 'A="x  y"\ncmd $A "$A" ${A} "${A}" "${B:-p q}" ${B:-p q}'
    words = [word for word, _, _ in expand(lex(script))]
    assert words[words.index("cmd") + 1:] == ["x", "y", "x  y", "x", "y", "x  y", "p q", "p", "q"]
    # each field of a split value is located in the assignment's value, inside its quotes
    located = {word: start for word, start, _ in expand(lex(script))}
    assert script[located["y"]] == "y" and located["x"] == script.index("x")


def _expanded_words(script: str) -> list[tuple[str, str]]:
    """Each expanded word of ``cmd ...`` and the source text it is located at."""
    words = expand(lex(script))
    first = [word for word, _, _ in words].index("cmd")
    return [(word, script[start:end]) for word, start, end in words[first + 1:]]


def test_a_parameter_default_loses_its_quotes() -> None:
    """The shell removes quotes and backslashes from the word of ``${VAR:-word}`` (POSIX 2.6.7): the
    engine receives ``auto``, located inside the quotes; what was quoted is one field."""
    script = """cmd ${A:-"auto"} ${B-'auto'} ${C:=\\a\\u\\to} ${D=x"p q"y} ${E:-"p q"}"""
    assert _expanded_words(script) == [("auto", "auto"), ("auto", "auto"), ("auto", "\\a\\u\\to"),
                                       ("xp qy", 'x"p q"y'), ("p q", "p q")]


def test_a_quoted_parameter_default_keeps_single_quotes() -> None:
    """Inside double quotes a single quote in the default is literal and a double quote is removed
    (bash and dash agree)."""
    script = 'cmd "${A:-\'auto\'}" "${B:-"auto"}"'
    assert [word for word, _ in _expanded_words(script)] == ["'auto'", "auto"]


def test_an_assigned_default_is_the_variables_value() -> None:
    """``DTYPE=${DTYPE:-"auto"}`` and ``: ${KV:="fp8"}`` give the variable its unquoted default, located
    at the default's text."""
    script = 'DTYPE=${DTYPE:-"auto"}\n: ${KV:="fp8"}\ncmd --dtype "$DTYPE" --kv $KV'
    assert _expanded_words(script) == [("--dtype", "--dtype"), ("auto", "auto"), ("--kv", "--kv"), ("fp8", "fp8")]


def test_split_values_are_bounded() -> None:
    """A hostile script naming a long value many times: past the budget the references stay as written."""
    script = 'A="' + " ".join(["w"] * 5000) + '"\ncmd ' + " ".join(["$A"] * 10)
    words = [word for word, _, _ in expand(lex(script))]
    assert len(words) <= MAX_SPLICED_WORDS + 20 and words[-1] == "$A" and words.count("w") == MAX_SPLICED_WORDS


def test_a_quoted_env_reference_holding_json_is_one_argument(tmp_path: Path) -> None:
    model = _models(tmp_path, "quoting")["quoted/vllm"]
    texts = _texts(model)
    kv = texts[texts.index("--kv-events-config") + 1]
    assert kv.startswith("{\n") and '"topic": "kv@$(POD_IP)"' in kv  # the whole block, one word
    assert _at(model.argv[texts.index("--kv-events-config") + 1]) == (22, 17)  # the value's first line
    spec = model.argv[texts.index("--speculative-config") + 1]
    assert spec.text == '{"method": "ngram", "num_speculative_tokens": 4}' and _at(spec) == (28, 23)
    assert texts[texts.index("--served-model-name") + 1] == "team chat"  # "${X:-default}": one word
    # unquoted $VLLM_ARGS: split, each word located in the env value
    assert model.value("max_model_len") == 8192 and _at(model.setting("max_model_len")) == (30, 39)
    assert model.value("max_num_seqs") == 32


def test_no_false_invalid_value_for_a_quoted_json_env(tmp_path: Path) -> None:
    shutil.copytree(FORMATS / "quoting", tmp_path / "quoting")
    result = lint_paths(tmp_path, root=tmp_path)
    assert [f for f in result.findings if f.code == "CFG105"] == []


def test_script_variables_split_unless_quoted(tmp_path: Path) -> None:
    models = _models(tmp_path, "quoting")
    split, whole = models["serve"], models["serve#2"]
    assert split.value("max_model_len") == 4096 and _at(split.setting("max_model_len")) == (2, 23)
    assert split.value("max_num_seqs") == 8
    assert _texts(split)[-1] == '{"level": 3}'  # "$COMPILE"
    assert _texts(whole) == ["--max-model-len 4096 --max-num-seqs 8"]  # "${ARGS}": one argument
    assert "max_model_len" not in whole.settings


# ---------------------------------------------------------------- supervisord


def test_ini_sections_continuations_and_comments() -> None:
    text = "[program:a]\ncommand=vllm serve m   ; inline\n    --port 1 # also\n  ; alone\n\n  --x=y\nkey: v\n[b]\n"
    (section, other) = sections(text)
    assert section.name == "program:a" and other.name == "b"
    assert section.options["command"].text == "vllm serve m\n--port 1\n--x=y"
    assert section.options["key"].text == "v" and section.last_line == 7
    comments = scan_comments(text)
    assert comments[2].text == "inline" and not comments[2].full_line and comments[4].full_line
    assert 1 not in comments  # "[program:a]" holds no comment


def test_supervisord_programs_are_served_models(tmp_path: Path) -> None:
    models = _models(tmp_path, "supervisord")
    assert set(models) == {"chat", "embed", "coder", "summarizer"}  # proxy runs nginx; nginx.conf: no program
    chat = models["chat"]
    assert chat.kind == "supervisord program" and chat.engine == "vllm"
    assert chat.model.value == "Qwen/Qwen2.5-7B-Instruct" and _at(chat.model) == (7, 13)  # continuation line
    assert chat.value("max_model_len") == 8192 and _at(chat.setting("max_model_len")) == (10, 21)
    assert chat.value("served_model_name") == "chat"  # %(program_name)s
    assert chat.env["HF_HOME"].value == "/data/hf" and _at(chat.env["HF_HOME"]) == (12, 49)
    assert chat.env["VLLM_LOGGING_LEVEL"].value == "INFO"
    assert chat.gpus.value == 2 and _at(chat.gpus) == (12, 35)  # CUDA_VISIBLE_DEVICES="0,1"
    assert chat.replicas.value == 2 and _at(chat.replicas) == (14, 10)  # numprocs


def test_supervisord_shell_command_reads_its_environment(tmp_path: Path) -> None:
    embed = _models(tmp_path, "supervisord")["embed"]
    assert embed.engine == "sglang" and embed.model.value == "BAAI/bge-large-en-v1.5"
    assert embed.value("mem_fraction_static") == 0.5 and _at(embed.setting("mem_fraction_static")) == (19, 149)


def test_supervisord_env_expansions_are_unknown_values(tmp_path: Path) -> None:
    shutil.copytree(FORMATS / "supervisord", tmp_path / "supervisord")
    coder = {m.name: m for m in collect([tmp_path], Config(tmp_path))[1]}["coder"]
    assert coder.model is None  # %(ENV_CODER_MODEL)s: supervisord's environment, not known here
    assert coder.setting("max_model_len").text == "${CODER_LEN}" and coder.value("tensor_parallel_size") == 2
    result = lint_paths(tmp_path, root=tmp_path)
    assert not [f for f in result.findings if f.model == "coder" and f.severity == "error"]


def test_a_supervisord_configuration_a_script_writes(tmp_path: Path) -> None:
    summarizer = _models(tmp_path, "supervisord")["summarizer"]
    assert summarizer.kind == "supervisord program" and summarizer.path.endswith("provision.sh")
    assert summarizer.model.value == "mistralai/Mistral-7B-Instruct-v0.3" and _at(summarizer.model) == (7, 62)
    assert summarizer.value("max_model_len") == 16384 and _at(summarizer.setting("max_model_len")) == (8, 19)
    assert summarizer.gpus.value == 1 and _at(summarizer.gpus) == (9, 35)


def test_conf_files_are_read_by_the_supervisord_adapter() -> None:
    assert file_format("deploy/supervisor/vllm.conf").__name__ == "cfgcheck.adapters.formats.supervisord"


# ---------------------------------------------------------------- scripts mounted from a ConfigMap


def test_a_script_mounted_from_a_configmap_is_the_launch(tmp_path: Path) -> None:
    models = _models(tmp_path, "mounted-script")
    engine = models["llm/engine"]
    assert engine.engine == "vllm" and engine.replicas.value == 2
    # MODEL_DIR="/models/${MODEL_NAME}" in the script, MODEL_NAME from the container's env
    assert engine.model.value == "/models/Qwen/Qwen3-8B"
    assert engine.model.location.path.endswith("startup-configmap.yaml") and _at(engine.model) == (9, 15)
    assert engine.value("max_model_len") == 16384 and _at(engine.setting("max_model_len")) == (11, 50)
    # "$@": the container's args, located in the Deployment
    assert engine.value("gpu_memory_utilization") == 0.92
    assert engine.setting("gpu_memory_utilization").location.path.endswith("deployment.yaml")
    assert _texts(engine)[-2:] == ["--served-model-name=chat", "--gpu-memory-utilization=0.92"]


def test_a_configmap_key_mounted_by_subpath_through_items(tmp_path: Path) -> None:
    sglang = _models(tmp_path, "mounted-script")["llm/by-subpath"]
    assert sglang.engine == "sglang" and sglang.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert _at(sglang.model) == (50, 50) and _at(sglang.setting("max_model_len")) == (51, 24)


def test_a_mounted_script_that_starts_no_engine_is_no_model(tmp_path: Path) -> None:
    text = (FORMATS / "mounted-script" / "deployment.yaml").read_text()
    (tmp_path / "deploy.yaml").write_text(text.replace("launch: |\n    python3 -m sglang.launch_server",
                                                       "launch: |\n    python3 -m http.server"))
    _, models = collect([tmp_path], Config(tmp_path))
    assert {model.name for model in models} == set()  # llm-start is not in this repository either


def test_what_a_mounted_script_exports_is_the_engines_environment(tmp_path: Path) -> None:
    for name in ("deployment.yaml", "startup-configmap.yaml"):
        text = (FORMATS / "mounted-script" / name).read_text()
        (tmp_path / name).write_text(text.replace('    set -euo pipefail\n',
                                                  '    set -euo pipefail\n    export HF_HOME=/models/hf\n'))
    engine = {m.name: m for m in collect([tmp_path], Config(tmp_path))[1]}["llm/engine"]
    assert engine.env["HF_HOME"].value == "/models/hf" and engine.env["HF_HOME"].location.path == "startup-configmap.yaml"


def test_each_character_of_a_block_or_quoted_script_is_placed_on_its_source() -> None:
    from cfgcheck.adapters.launch.shell import SourceMap
    from cfgcheck.yamlio import parse_text

    text = ("args:\n  - |\n    vllm serve meta-llama/Llama-3.1-8B\n      --max-model-len 8192\n"
            "  - \"python -m sglang.launch_server --port \\\"30000\\\"\"\n"
            "  - >\n    exec vllm serve\n    --tensor-parallel-size 2\n")
    items = parse_text("a.yaml", text).documents[0].root.get("args").value
    for node in items:
        source = SourceMap(text, node)
        for offset, char in enumerate(source.value):
            if not char.isspace():
                assert text[source.absolute(offset)] == char, (node.style, offset)
