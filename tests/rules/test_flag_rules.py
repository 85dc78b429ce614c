"""CFG101-CFG105 called directly on hand-built served models."""

from __future__ import annotations

import re

import pytest

from cfgcheck.context import RuleContext
from cfgcheck.engines.versions import known_versions, versions
from cfgcheck.model import ArgToken, Location, ServedModel, Setting
from cfgcheck.registry import defaults
from cfgcheck.rules import abbreviated_flag, ambiguous_flag, invalid_flag_value, removed_flag, unknown_flag

RULES = (abbreviated_flag, ambiguous_flag, unknown_flag, removed_flag, invalid_flag_value)


def served(engine: str, version: str | None, *args: str, image: str | None = None, synthetic: tuple = (),
           column: int = 9) -> ServedModel:
    tokens = [ArgToken(text, Location("deploy.yaml", 10 + i, column), synthetic=i in synthetic)
              for i, text in enumerate(args)]
    model = ServedModel("chat", "Deployment", "deploy.yaml", 0, Location("deploy.yaml", 1, 1),
                        engine=engine, engine_version=version, argv=tokens)
    if image:
        model.image = Setting("image", image, Location("deploy.yaml", 5, 18), "spec.containers[0].image")
    return model


def run(rule, model, **options):
    ctx = RuleContext({**defaults(rule.OPTIONS), **options})
    return list(rule.check(model, ctx))


def run_all(model) -> dict[str, list]:
    return {rule.CODE: run(rule, model) for rule in RULES}


def test_abbreviation_with_fix() -> None:
    model = served("vllm", "0.26.0", "Qwen/Qwen3-8B", "--kv-cache-memory", "8G")
    (finding,) = run(abbreviated_flag, model)
    assert "--kv-cache-memory-bytes" in finding.message and "vLLM 0.26.0" in finding.message
    (edit,) = finding.fix.edits
    assert (edit.old, edit.new) == ("--kv-cache-memory", "--kv-cache-memory-bytes")
    assert (edit.location.line, edit.location.column, edit.location.end_column) == (11, 9, 9 + 17 - 1)


def test_abbreviation_that_means_the_same_option_everywhere_is_a_warning() -> None:
    """SGLang's --tp (its own docs' spelling) is --tp-size in every catalogued version: the engine runs
    what the config says, so a warning; vLLM's --kv-cache-memory (the seed incident) is unknown before
    0.10.2, so on an exact 0.26.0 it stays an error. Both decided from the catalogs."""
    from cfgcheck.engines.catalog import catalog_for

    sglang = versions("sglang")
    assert all(catalog_for("sglang", v).resolve("--tp").option == "--tp-size" for v in sglang)
    (tp,) = run(abbreviated_flag, served("sglang", sglang[-1], "--model-path", "Qwen/Qwen3-8B", "--tp", "2"))
    assert tp.severity == "warning" and tp.fix.edits[0].new == "--tp-size"
    assert f"every catalogued SGLang version, {sglang[0]} to {sglang[-1]}" in tp.remediation
    (seed,) = run(abbreviated_flag, served("vllm", "0.26.0", "Qwen/Qwen3-8B", "--kv-cache-memory", "8G"))
    assert seed.severity == "error"
    assert any(catalog_for("vllm", v).resolve("--kv-cache-memory").kind != "abbrev" for v in versions("vllm"))


def test_abbreviation_fix_replaces_only_the_flag_part() -> None:
    model = served("vllm", "0.26.0", "--gpu-memory-util=0.85", "--compilation.mode", "3")
    first, second = run(abbreviated_flag, model)
    edit = first.fix.edits[0]
    assert (edit.old, edit.new) == ("--gpu-memory-util", "--gpu-memory-utilization")
    assert edit.location.end_column == 9 + len("--gpu-memory-util") - 1
    assert (second.fix.edits[0].old, second.fix.edits[0].new) == ("--compilation.mode", "--compilation-config.mode")


def test_abbreviation_that_breaks_later_says_so() -> None:
    if "0.33.0" not in known_versions("vllm"):
        pytest.skip("needs vLLM 0.33.0")
    (finding,) = run(abbreviated_flag, served("vllm", "0.10.2", "--max-num-seq", "8"))
    assert finding.fix.edits[0].new == "--max-num-seqs"
    (finding,) = run(abbreviated_flag, served("vllm", "0.10.2", "--max-num-s", "8"))
    assert finding.fix.edits[0].new == "--max-num-seqs"
    assert "ambiguous from vLLM" in finding.remediation  # --max-num-scheduled-tokens arrived later


def test_assumed_version_is_named() -> None:
    newest = versions("vllm")[-1]
    model = served("vllm", None, "--kv-cache-mem", "1G", image="vllm/vllm-openai:nightly")
    (finding,) = run(abbreviated_flag, model)
    assert f"assumed vLLM {newest}" in finding.message and "'nightly'" in finding.message
    model = served("vllm", None, "--bogus-flag", image="vllm/vllm-openai:latest")
    assert "assumed" in run(unknown_flag, model)[0].message


def test_full_names_and_synthetic_tokens_pass() -> None:
    model = served("vllm", "0.26.0", "--kv-cache-memory-bytes", "8G", "--max_num_seqs", "64", "--enforce-eager",
                   "-tp", "2", "--compilation-config.mode", "3", "-O3", "--hf-overrides", '{"a": 1}')
    assert run_all(model) == {rule.CODE: [] for rule in RULES}
    synthetic = served("vllm", "0.26.0", "--max-model", "4096", "--bogus", synthetic=(0, 2))
    assert all(not run(rule, synthetic) for rule in (abbreviated_flag, unknown_flag, removed_flag))


def test_allow_option() -> None:
    model = served("vllm", "0.26.0", "--max-model", "4096")
    assert run(abbreviated_flag, model, allow=["--max-model"]) == []


def test_ambiguous() -> None:
    (finding,) = run(ambiguous_flag, served("vllm", "0.26.0", "--max-num", "64"))
    assert "--max-num-seqs" in finding.message and "--max-num-batched-tokens" in finding.message
    assert finding.location.line == 10


def test_sglang_cuda_graph_max_bs() -> None:
    if "0.5.23" not in known_versions("sglang"):
        pytest.skip("needs SGLang 0.5.23")
    model = served("sglang", "0.5.23", "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "256",
                   "--mem-frac", "0.8", "--max_running_requests", "8")
    found = run_all(model)
    (amb,) = found["CFG102"]
    assert "--cuda-graph-max-bs-decode" in amb.message
    (abbrev,) = found["CFG101"]
    assert abbrev.fix.edits[0].new == "--mem-fraction-static"
    (unknown,) = found["CFG103"]  # SGLang does not rewrite underscores
    assert "--max_running_requests" in unknown.message and "--max-running-requests" in unknown.remediation


def test_ambiguous_on_a_local_build_is_a_warning_that_says_the_version_is_assumed() -> None:
    """A local build (or a rolling tag) is checked against the newest catalog: '--cuda-graph-max-bs' was
    an exact flag in older SGLang, so the finding is a warning naming what was assumed, and it says that
    version would not start rather than that the engine will not."""
    newest = versions("sglang")[-1]
    for image in ("sglang-prod:build-1a2b3c4", "lmsysorg/sglang:latest"):
        model = served("sglang", None, "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-max-bs", "256", image=image)
        (amb,) = run(ambiguous_flag, model)
        assert amb.severity == "warning" and "the newest catalog" in amb.message, amb.message
        assert amb.message.endswith(f"SGLang {newest} would not start") and "the engine will not" not in amb.message
    (exact,) = run(ambiguous_flag, served("sglang", newest, "--cuda-graph-max-bs", "256",
                                          image=f"lmsysorg/sglang:v{newest}"))
    assert exact.severity == "error" and exact.message.endswith("the engine will not start")


def test_unknown_suggests_and_removed_takes_precedence() -> None:
    model = served("vllm", "0.26.0", "--gpu-memory-utilisation", "0.85", "--swap-space", "4",
                   "--disable-log-requests")
    found = run_all(model)
    (unknown,) = found["CFG103"]
    assert "--gpu-memory-utilisation" in unknown.message and "--gpu-memory-utilization" in unknown.remediation
    removed = found["CFG104"]
    assert [f.setting for f in removed] == ["--swap-space", "--disable-log-requests"]
    oldest = versions("vllm")[0]
    assert f"{oldest}-" in removed[0].message and "vLLM 0.26.0" in removed[0].message


def test_a_flag_no_version_knows_is_a_warning_when_the_version_was_assumed() -> None:
    """No version known (a script starting the server, no image): a flag no catalogued version has may be
    a fork's or an uncatalogued build's, a warning that says the version was assumed; a near-miss of a
    real flag stays an error, and so does any unknown flag on an exact version."""
    (fork,) = run(unknown_flag, served("vllm", None, "--enable-kvstore"))
    assert fork.severity == "warning" and "the version was assumed" in fork.message
    assert "no image names the engine version" in fork.message
    (typo,) = run(unknown_flag, served("vllm", None, "--gpu-memory-utilisation", "0.9"))
    assert typo.severity == "error"
    (exact,) = run(unknown_flag, served("vllm", "0.26.0", "--enable-kvstore", image="vllm/vllm-openai:v0.26.0"))
    assert exact.severity == "error" and "assumed" not in exact.message


def test_a_choice_no_version_has_is_a_warning_when_the_version_was_assumed() -> None:
    """--disaggregation-mode encode in a script with no image: a development build may add the choice, so
    with the version assumed it is a warning that says so, as for an unknown flag; on an exact version, and
    for a value of the wrong type or a choice in the wrong case, it stays an error."""
    (assumed,) = run(invalid_flag_value, served("sglang", None, "--disaggregation-mode", "encode"))
    assert assumed.severity == "warning" and "the version was assumed" in assumed.message
    assert "no image names the engine version" in assumed.message and "engine-version" in assumed.remediation
    image = "lmsysorg/sglang:v0.5.3-cu126"
    (exact,) = run(invalid_flag_value, served("sglang", "0.5.3", "--disaggregation-mode", "encode", image=image))
    assert exact.severity == "error" and "assumed" not in exact.message
    (typed,) = run(invalid_flag_value, served("sglang", None, "--max-running-requests", "64.5"))
    assert typed.severity == "error" and "assumed" not in typed.message
    (cased,) = run(invalid_flag_value, served("sglang", None, "--disaggregation-mode", "Prefill"))
    assert cased.severity == "error" and cased.fix is not None


def test_removed_in_033() -> None:
    if "0.33.0" not in known_versions("vllm"):
        pytest.skip("needs vLLM 0.33.0")
    model = served("vllm", "0.33.0", "--calculate-kv-scales", "--max-num-partial-prefills", "2")
    found = run_all(model)
    assert len(found["CFG104"]) == 2 and not found["CFG103"]
    assert re.search(r"vLLM 0\.[\d.]+(post\d+)?-0\.27\.1 accepted it", found["CFG104"][0].message)
    assert "vLLM 0.33.0 does not" in found["CFG104"][0].message


def test_flag_added_later_is_unknown_with_version() -> None:
    if "0.33.0" not in known_versions("vllm"):
        pytest.skip("needs vLLM 0.33.0")
    (finding,) = run(unknown_flag, served("vllm", "0.26.0", "--device-memory-utilization", "0.9"))
    assert "added in vLLM" in finding.message
    assert not run(removed_flag, served("vllm", "0.26.0", "--device-memory-utilization", "0.9"))


def test_invalid_values() -> None:
    model = served("vllm", "0.26.0", "--max-num-seqs", "64.5", "--kv-cache-dtype=FP8", "--max-model-len", "1.5K",
                   "--enforce-eager", "true", "--enable-prefix-caching=false", "--kv-cache-dtype", "fp9")
    found = run(invalid_flag_value, model)
    messages = [f.message for f in found]
    assert len(found) == 6, messages
    assert "expects an integer" in messages[0] and found[0].location.line == 11
    fp8 = found[1]
    assert fp8.fix.edits[0].old == "FP8" and fp8.fix.edits[0].new == "fp8"
    assert fp8.location.column == 9 + len("--kv-cache-dtype=")
    assert "decimals" in messages[2]
    assert "takes no value" in messages[3] and found[3].location.line == 16
    assert "--no-enable-prefix-caching" in found[4].remediation
    assert "not one of" in messages[5]


def test_valid_values_and_templated() -> None:
    model = served("vllm", "0.26.0", "--max-model-len", "32K", "--kv-cache-dtype", "fp8", "--max-num-seqs", "$(SEQS)",
                   "--gpu-memory-utilization=0.9", "--no-enable-prefix-caching", "--port", "8000")
    assert run(invalid_flag_value, model) == []


def test_secret_values_are_not_repeated() -> None:
    model = served("vllm", "0.26.0", "--api-key", "sk-secret", "--max-num-seqs", "sk-proj-abcdef0123456789abcdef")
    found = run(invalid_flag_value, model)
    assert len(found) == 1
    assert "sk-" not in found[0].message and "the value" in found[0].message


def test_python_launcher_prefix_is_skipped() -> None:
    if not known_versions("sglang"):
        pytest.skip("no SGLang catalog")
    model = served("sglang", None, "python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000")
    assert run_all(model) == {rule.CODE: [] for rule in RULES}


def test_no_catalog_no_findings() -> None:
    model = served("llama.cpp", None, "--ctx", "4096")
    assert run_all(model) == {rule.CODE: [] for rule in RULES}


def test_python_bool_false_is_true() -> None:
    if "0.11.1" not in known_versions("vllm"):
        pytest.skip("needs vLLM 0.11.1")
    model = served("vllm", "0.11.1", "--guided-decoding-disable-fallback", "false")
    (finding,) = run(invalid_flag_value, model)
    assert "sets True" in finding.message


def test_tokenspeed_no_abbreviations_and_gateway_flags() -> None:
    if not known_versions("tokenspeed"):
        pytest.skip("no TokenSpeed catalog")
    model = served("tokenspeed", "0.1.1", "Qwen/Qwen3-8B", "--kv-cache-dtyp", "fp8", "--gpu-memory-utilization", "0.8",
                   "--host", "0.0.0.0", "--drain-timeout", "30", "--policy", "round_robin")
    found = run_all(model)
    assert not found["CFG101"] and not found["CFG102"]  # allow_abbrev=False: prefixes are not expanded
    (unknown,) = found["CFG103"]  # a near miss of an engine flag; gateway-only flags are not judged
    assert "--kv-cache-dtyp" in unknown.message and "gateway" in unknown.message
    assert unknown.remediation == "did you mean --kv-cache-dtype?"


def test_a_removal_on_a_vendor_release_follows_the_vllm_it_ships() -> None:
    """Red Hat AI Inference Server 3.2.x ships vLLM 0.10.x (data/vendor_releases.json, from Red Hat's
    documents): --swap-space is accepted there. A release no document maps names no version: the newest
    catalog is a guess, so the removal is a note that says so, never a claim."""
    image = "registry.redhat.io/rhaiis/vllm-cuda-rhel9:{}"
    from cfgcheck.engines.images import ASSUMED, image_engine, parse_image

    shipped = image_engine(parse_image(image.format("3.2.1")))
    assert (shipped.version, shipped.confidence) == ("0.10.1", ASSUMED) and "3.2.2" in shipped.why
    assert not run(removed_flag, served("vllm", "0.10.1", "--swap-space", "4", image=image.format("3.2.1")))
    (unmapped,) = run(removed_flag, served("vllm", None, "--swap-space", "4", image=image.format("3.1.0")))
    assert unmapped.severity == "note" and "was removed" not in unmapped.message
    assert "names no vLLM version" in unmapped.message and "'3.1.0'" in unmapped.message
    assert unmapped.fix is None
