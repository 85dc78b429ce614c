"""A repository that is a fork of the engine holds its own server-arguments source: the flags its
``add_argument(`` calls name are that engine's (no CFG103), read as text, never run."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES, make_repo

FORK = FIXTURES / "formats" / "engine-fork"


def _unknown(result) -> list[tuple[int, str, str]]:
    return [(f.location.line, f.setting, f.severity) for f in result.findings if f.code == "CFG103"]


def test_a_flag_the_forks_own_arguments_source_defines_is_not_unknown() -> None:
    result = lint([FORK], Config(FORK))
    (model,) = result.models
    assert model.engine_source.paths == ("vllm/engine/arg_utils.py",)
    assert "--enable-kvstore" in model.engine_source.options
    assert _unknown(result) == [(6, "--enable-kvstroe", "warning")]  # a misspelling of it: no version known


def test_sglang_server_args_of_a_fork_in_a_folder_above_the_script(tmp_path: Path) -> None:
    serve = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-store-backend redis\n"
    files = {"scripts/serve.sh": serve,
             "python/sglang/srt/server_args.py": 'parser.add_argument(\n    "--kv-store-backend", type=str)\n'}
    repo = make_repo(tmp_path, files)
    assert _unknown(lint([repo], Config(repo))) == []
    repo = make_repo(tmp_path / "upstream", {"serve.sh": serve})
    assert [flag for _, flag, _ in _unknown(lint([repo], Config(repo)))] == ["--kv-store-backend"]


def test_a_file_outside_the_repository_has_no_folder_to_look_in(tmp_path: Path) -> None:
    """A served model of standard input (``/dev/stdin``) or of a file above the repository has no folder of
    the repository: nothing is looked for (walking up ``/dev`` never reached an empty folder name)."""
    from cfgcheck.adapters.launch import engine_sources
    from cfgcheck.model import Location
    from cfgcheck.served import ServedModel

    models = [ServedModel("chat", "Deployment", path, 0, Location(path, 1, 1), engine="vllm") for path in
              ("/dev/stdin", "../outside/app.yaml", "..")]
    engine_sources.settle(None, models)  # type: ignore[arg-type]  # no workspace is asked for
    assert [model.engine_source for model in models] == [None, None, None]
