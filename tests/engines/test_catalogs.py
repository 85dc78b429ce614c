"""The generated flag catalogs: engine behaviour verified at generation, resolution by argparse."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys

import pytest

from cfgcheck.engines import value_types as values
from cfgcheck.engines import versions as catalogued
from cfgcheck.engines.argv import walk
from cfgcheck.engines.catalog import catalog_for, render_flags
from cfgcheck.engines.history import history, successor
from cfgcheck.engines.versions import known_versions, version_key, versions
from cfgcheck.model import ArgToken, Location

ALL = [(engine, version) for engine in catalogued.engines() for version in versions(engine)]


def need(engine: str, version: str):
    if version not in known_versions(engine):
        pytest.skip(f"{engine} {version} is not catalogued")
    return catalog_for(engine, version)


def test_engines_have_catalogs() -> None:
    assert "vllm" in catalogued.engines() and "sglang" in catalogued.engines()
    # catalogs reach back as far as scripts/build_catalogs.py could build (vLLM 0.6 and later in scope)
    assert version_key(versions("vllm")[0]) <= version_key("0.10.0")
    assert "0.33.0" in versions("vllm") and "0.26.0" in versions("vllm")


@pytest.mark.parametrize("engine,version", ALL, ids=[f"{e}-{v}" for e, v in ALL])
def test_every_catalog_is_self_consistent(engine: str, version: str) -> None:
    c = catalog_for(engine, version)
    assert c.version == version and not c.assumed
    b = c.behaviour
    for key in ("allow_abbrev", "underscores_to_dashes", "equals_value", "last_wins", "human_readable_ints"):
        assert key in b, key
    assert b["equals_value"] and b["last_wins"], "verified by parse_args at generation"
    # every option string resolves exactly to itself through the rebuilt argparse parser
    for option in c.option_strings():
        res = c.resolve(option)
        assert res.kind == "exact" and res.option == option, (option, res)
    # the engine's own verified abbreviation behaviour is what the rebuilt parser does
    probe = b.get("probe_option")
    if probe and b["allow_abbrev"]:
        abbrevs = [p for p in (probe[:n] for n in range(4, len(probe))) if c.resolve(p).kind == "abbrev"]
        assert abbrevs and c.resolve(abbrevs[0]).option == probe
    if engine == "vllm":  # human-readable integers (32K) came with vLLM 0.8
        assert b["allow_abbrev"] and b["underscores_to_dashes"]
        assert b["human_readable_ints"] == (version_key(version) >= version_key("0.8"))
    if engine == "sglang":
        assert b["allow_abbrev"] and not b["underscores_to_dashes"]


def test_versions_ascending_and_packaging_free() -> None:
    for engine in catalogued.engines():
        vs = versions(engine)
        assert vs == sorted(vs, key=version_key)
    assert version_key("0.5.5.post3") > version_key("0.5.5") > version_key("0.5.5rc1")
    assert version_key("0.10.2") > version_key("0.9.2")


@pytest.mark.parametrize("engine,version", ALL, ids=[f"{e}-{v}" for e, v in ALL])
def test_an_option_string_as_written_resolves_as_the_parser_says_without_it(engine: str, version: str) -> None:
    """``resolve`` answers an option string as written (and before "=") from the catalog's map without
    making the parser: the answer argparse's ``_parse_optional`` gives first. Checked against the parser
    itself for every option string of every catalog, bare and with a value."""
    from cfgcheck.engines.catalog import _parse_optional

    catalog = catalog_for(engine, version)
    parser = catalog._data.parser
    compared = 0
    for option in catalog.option_strings():
        for token in (option, f"{option}=1"):
            normalized, suffix = catalog.normalize(token.partition("=")[0])
            if normalized != option or suffix or option in ("--help", "-h") or option.startswith("-O"):
                continue  # the engine's own pre-processing comes first (underscores, dotted keys, -O3)
            resolution = catalog.resolve(token)
            [(action, said, explicit)] = _parse_optional(parser, token)
            assert (resolution.kind, resolution.option, resolution.spec, resolution.explicit_value) == \
                ("exact", said, action, explicit), token
            compared += 1
    assert compared > len(catalog.option_strings()), compared


@pytest.mark.parametrize("version", ["0.10.2", "0.26.0", "0.33.0"])
def test_vllm_kv_cache_memory_is_an_abbreviation(version: str) -> None:
    res = need("vllm", version).resolve("--kv-cache-memory")
    assert (res.kind, res.option) == ("abbrev", "--kv-cache-memory-bytes")
    res = need("vllm", version).resolve("--kv-cache-memory=1G")
    assert (res.kind, res.option, res.explicit_value) == ("abbrev", "--kv-cache-memory-bytes", "1G")


@pytest.mark.parametrize("version,count", [("0.10.2", 3), ("0.26.0", 4), ("0.33.0", 6)])
def test_vllm_max_num_prefix_grows_ambiguous(version: str, count: int) -> None:
    res = need("vllm", version).resolve("--max-num-")
    assert res.kind == "ambiguous" and len(res.candidates) == count
    assert "--max-num-seqs" in res.candidates and "--max-num-batched-tokens" in res.candidates
    assert need("vllm", version).resolve("--max-num").kind == "ambiguous"


def test_underscores_differ_between_engines() -> None:
    v = need("vllm", "0.26.0")
    assert v.resolve("--max_num_seqs").kind == "exact"
    assert v.resolve("--gpu_memory_utilization=0.8").option == "--gpu-memory-utilization"
    s = catalog_for("sglang", None)
    assert s.resolve("--max_running_requests").kind == "unknown"
    assert s.resolve("--max-running-requests").kind == "exact"


def test_vllm_preprocessing() -> None:
    v = need("vllm", "0.26.0")
    res = v.resolve("--compilation-config.mode")
    assert (res.kind, res.option, res.suffix) == ("exact", "--compilation-config", ".mode")
    res = v.resolve("--compilation.mode")
    assert (res.kind, res.option, res.suffix) == ("abbrev", "--compilation-config", ".mode")
    assert v.resolve("-O3").option == "--optimization-level"
    assert v.resolve("-tp").spec.dest == "tensor_parallel_size"


def test_vllm_flag_changes() -> None:
    old, mid, new = need("vllm", "0.10.2"), need("vllm", "0.26.0"), need("vllm", "0.33.0")
    assert mid.option("--calculate-kv-scales") is not None and new.option("--calculate-kv-scales") is None
    for flag in ("--max-num-partial-prefills", "--override-attention-dtype"):
        assert mid.option(flag) is not None and new.option(flag) is None, flag
    assert new.option("--device-memory-utilization").dest == "gpu_memory_utilization"
    removed = ["--swap-space", "--preemption-mode", "--num-lookahead-slots", "--scheduler-delay-factor",
               "--max-seq-len-to-capture", "--cuda-graph-sizes", "--disable-log-requests", "--task",
               "--guided-decoding-backend", "--rope-scaling", "--rope-theta", "--override-pooler-config",
               "--disable-mm-preprocessor-cache", "--num-redundant-experts", "--eplb-window-size",
               "--enable-lora-bias", "--lora-extra-vocab-size", "--logits-processor-pattern",
               "--disable-async-output-proc", "--disable-frontend-multiprocessing"]
    for flag in removed:
        assert old.option(flag) is not None, flag
        assert mid.resolve(flag).kind in ("unknown", "ambiguous"), flag
        assert "0.10.2" in history("vllm", flag)
    assert old.option("--disable-log-requests").deprecated


def test_vllm_removed_and_renamed() -> None:
    assert "0.10.2" in history("vllm", "--swap_space")  # underscores normalised like the engine
    assert successor("vllm", "--swap-space", "0.26.0") is None
    assert history("vllm", "--no-such-flag") == []


def test_sglang_cuda_graph_max_bs_split() -> None:
    s = need("sglang", "0.5.23")
    res = s.resolve("--cuda-graph-max-bs")
    assert res.kind == "ambiguous"
    assert set(res.candidates) >= {"--cuda-graph-max-bs-decode", "--cuda-graph-max-bs-prefill"}
    assert s.resolve("--mem-frac").option == "--mem-fraction-static"
    assert s.resolve("--context-len=4096").kind == "abbrev"
    assert s.option("--model").dest == s.option("--model-path").dest
    assert s.option("--tp-size").dest == s.option("--tensor-parallel-size").dest
    older = [v for v in versions("sglang") if version_key(v) < version_key("0.5.23")]
    assert any(catalog_for("sglang", v).resolve("--cuda-graph-max-bs").kind == "exact" for v in older)


def test_values() -> None:
    v = need("vllm", "0.26.0")
    mml = v.option("--max-model-len")
    assert v.check_value(mml, "32K") is None and v.check_value(mml, "32k") is None
    assert v.check_value(mml, "1.5K") is not None and v.check_value(mml, "1.5k") is None
    assert v.check_value(v.option("--max-num-seqs"), "64.5") is not None
    assert v.check_value(v.option("--max-num-seqs"), "64") is None
    kvd = v.option("--kv-cache-dtype")
    assert v.check_value(kvd, "fp8") is None and "not one of" in v.check_value(kvd, "fp9")
    assert v.check_value(v.option("--gpu-memory-utilization"), "0.9x") is not None
    s = need("sglang", "0.5.23")
    ctx = s.option("--context-length")
    assert s.check_value(ctx, "32k") is None and s.check_value(ctx, "32Ki") is None
    assert s.check_value(ctx, "32K") is not None  # SGLang suffixes are case-sensitive


def test_version_resolution() -> None:
    newest = versions("vllm")[-1]
    c = catalog_for("vllm", "0.26.0")
    assert (c.version, c.requested, c.assumed) == ("0.26.0", "0.26.0", False)
    for rolling in (None, "nightly", "latest"):
        c = catalog_for("vllm", rolling)
        assert (c.version, c.requested, c.assumed) == (newest, None, True)
    c = catalog_for("vllm", "9.0.0")
    assert c.version == newest and c.assumed
    c = catalog_for("vllm", "v0.26.0")
    assert c.version == "0.26.0" and not c.assumed
    assert catalog_for("llama.cpp", "b1234") is None
    for version in known_versions("sglang"):
        assert catalog_for("sglang", version).assumed is False


def test_patch_resolution_within_a_series() -> None:
    data = catalogued.catalog_data("vllm")
    for alias, target in data.get("aliases", {}).items():
        c = catalog_for("vllm", alias)
        assert c.version == target and not c.assumed
    # a later, unchecked patch of a catalogued version: the nearest lower one of the same series
    c = catalog_for("vllm", "0.26.7")
    assert c.version == "0.26.0" and not c.assumed


def test_python_312_parse_optional_shape(monkeypatch) -> None:
    """3.12+ returns a list of 4-tuples from _parse_optional and raises ArgumentError on ambiguity."""
    c = need("vllm", "0.26.0")
    parser = c._data.parser
    original = parser._parse_optional

    def as_312(arg):
        result = original(arg)
        if result is None:
            return None
        action, option, explicit = result
        return [(action, option, "=" if explicit is not None else None, explicit)]

    monkeypatch.setattr(parser, "_parse_optional", as_312)
    assert c.resolve("--kv-cache-memory=1G").option == "--kv-cache-memory-bytes"
    assert c.resolve("--nope").kind == "unknown"

    def ambiguous(arg):
        raise argparse.ArgumentError(None, f"ambiguous option: {arg} could match --a, --b")

    monkeypatch.setattr(parser, "_parse_optional", ambiguous)
    assert c.resolve("--max-num").kind == "ambiguous"


def _tokens(*texts: str) -> list[ArgToken]:
    return [ArgToken(t, Location("x.yaml", i + 1, 7)) for i, t in enumerate(texts)]


def test_walk() -> None:
    c = need("vllm", "0.26.0")
    flags = walk(c, _tokens("Qwen/Qwen3-8B", "--max-num-seqs", "8", "--enforce-eager", "--max-model-len=4096",
                            "--kv-cache-memory", "1G", "--compilation-config.mode", "3", "--bogus", "x", "-tp", "2"))
    summary = [(f.written, f.resolution.kind, f.value.text if f.value else f.inline_value) for f in flags]
    assert summary == [
        ("--max-num-seqs", "exact", "8"), ("--enforce-eager", "exact", None), ("--max-model-len", "exact", "4096"),
        ("--kv-cache-memory", "abbrev", "1G"), ("--compilation-config.mode", "exact", "3"),
        ("--bogus", "unknown", "x"), ("-tp", "exact", "2"),
    ]
    assert walk(c, _tokens("--port", "-1"))[0].value.text == "-1"  # a negative number is a value


def test_render_flags() -> None:
    text = render_flags("vllm", "0.26.0", "text")
    assert "--kv-cache-memory-bytes\n" in text and all(line.startswith("--") for line in text.splitlines())
    data = json.loads(render_flags("sglang", None, "json"))
    assert data["assumed"] and any(o["dest"] == "mem_fraction_static" for o in data["options"])
    with pytest.raises(LookupError):
        render_flags("nope", None, "text")


def test_import_is_lazy() -> None:
    code = ("import time; t=time.process_time(); import cfgcheck.engines.catalog as c; "
            "print(c.catalog_data.cache_info().currsize, time.process_time()-t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, seconds = out.stdout.split()
    assert loaded == "0" and float(seconds) < 0.5


def _generator():
    import importlib.util

    from helpers import REPO

    path = REPO / "scripts" / "build_catalogs.py"
    spec = importlib.util.spec_from_file_location("build_catalogs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_merges_identical_patches_as_aliases() -> None:
    gen = _generator()
    catalog = {"engine": "vllm", "specs": [], "versions": {}, "aliases": {}, "unavailable": {}, "checked": {}}
    option = {"option_strings": ["--x"], "dest": "x", "takes_value": True, "nargs": None, "type": "int"}
    dump = {"options": [option], "positionals": [], "behaviour": {"allow_abbrev": True}, "seconds": 1.0}
    assert gen.add_version(catalog, {**dump, "version": "0.25.1"}, "w1") == "new"
    # an older patch checked later with the same options takes the catalog; the newer becomes its alias
    assert gen.add_version(catalog, {**dump, "version": "0.25.0"}, "w0").startswith("new")
    assert list(catalog["versions"]) == ["0.25.0"] and catalog["aliases"] == {"0.25.1": "0.25.0"}
    changed = {**dump, "version": "0.25.2", "options": [option, {**option, "option_strings": ["--y"], "dest": "y"}]}
    assert gen.add_version(catalog, changed, "w2") == "new"
    assert sorted(catalog["versions"]) == ["0.25.0", "0.25.2"]
    assert gen._series("sglang", "0.5.5.post3") == gen._series("sglang", "0.5.5")
    assert gen._series("vllm", "0.10.1.1") == gen._series("vllm", "0.10.2")


def test_generator_classifies_types_by_calling_them() -> None:
    gen = _generator()
    assert gen._classify(int, values)[:3] == ("int", False, True)
    assert gen._classify(float, values)[:3] == ("float", False, True)
    assert gen._classify(json.loads, values)[:3] == ("json", False, True)
    assert gen._classify(lambda s: s.lower(), values)[:3] == ("lower-str", False, True)
    assert gen._classify(bool, values)[:3] == ("python-bool", False, True)
    assert gen._classify(lambda s: [s], values)[0] == "other"  # never guessed


@pytest.mark.parametrize("version", [v for v in versions("tokenspeed")] or ["none"])
def test_tokenspeed_engine_parser(version: str) -> None:
    if version == "none":
        pytest.skip("no TokenSpeed catalog")
    c = catalog_for("tokenspeed", version)
    assert c.behaviour["allow_abbrev"] is False  # ServerArgs.add_cli_args sets parser.allow_abbrev = False
    long = next(o for o in c.option_strings() if o.startswith("--") and len(o) > 12)
    assert c.resolve(long[:-3]).kind == "unknown"
    assert c.resolve(long).kind == "exact"
    assert "ts_serve_routing" in c.behaviour


def test_vllm_033_hidden_negative_spellings_are_accepted() -> None:
    """0.33's EnableDisableAction keeps --no-enable-x registered but drops it from option_strings (help)."""
    c = need("vllm", "0.33.0")
    res = c.resolve("--no-enable-prefix-caching")
    assert res.kind == "exact" and res.spec.dest == "enable_prefix_caching"
    assert res.spec.is_negative("--no-enable-prefix-caching") and res.spec.is_negative("--disable-prefix-caching")
    assert not res.spec.is_negative("--enable-prefix-caching")
    assert "--no-enable-prefix-caching" in res.spec.hidden_forms
    assert res.spec.name == "--enable-prefix-caching"


@pytest.mark.parametrize("engine", catalogued.engines())
def test_a_catalog_decodes_its_specs_when_asked_and_equals_its_json(engine: str) -> None:
    """The shipped layout (the version table, then the spec table last, an entry a line: ``versions.TABLES``)
    reads as the same data as decoding the whole file; a spec or a version is decoded when asked for; the
    spec table last after versions kept in the header reads alike; any other layout of the same JSON
    (pretty-printed, keys reordered) is decoded whole."""
    raw = (catalogued.DATA_DIR / f"{engine}.json").read_bytes()
    whole = json.loads(raw)
    assert catalogued.table_last(whole, "versions", "specs").encode() == raw  # the committed file is the writer's
    lazy = catalogued._decoded(raw)
    assert isinstance(lazy["specs"], catalogued.LazySpecs) and len(lazy["specs"]) == len(whole["specs"]) > 0
    assert lazy["specs"][3] == whole["specs"][3] and lazy["specs"][3] is not lazy["specs"][3]  # decoded, not kept
    assert isinstance(lazy["versions"], catalogued.LazyVersions) and list(lazy["versions"]) == list(whole["versions"])
    assert dict(lazy["versions"].items()) == whole["versions"]
    assert list(lazy["specs"]) == whole["specs"] and {**lazy, "specs": whole["specs"], "versions": whole["versions"]} == whole
    specs_last = catalogued._decoded(catalogued.table_last(whole, "specs").encode())
    assert specs_last["versions"] == whole["versions"] and list(specs_last["specs"]) == whole["specs"]
    pretty = catalogued._decoded(json.dumps(whole, indent=1, sort_keys=True).encode())
    assert pretty == whole and isinstance(pretty["specs"], list)
    empty = catalogued._decoded(b'{"engine":"x","versions":{}' + catalogued.SPECS_AT + b"]}\n")
    assert len(empty["specs"]) == 0 and empty["versions"] == {}
    for tables in ({"versions": {}, "specs": []}, {"versions": {"1.0": {"specs": [0]}}, "specs": []},
                   {"versions": {}, "specs": [{"a": ",\n"}]}, {"versions": {"1.0": {"b": 1}}, "specs": [{"a": 1}]}):
        written = catalogued.table_last({"engine": "x", **tables}, "versions", "specs").encode()
        read = catalogued._decoded(written)
        assert (dict(read["versions"].items()), list(read["specs"])) == (tables["versions"], tables["specs"]), written


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_an_env_catalog_decodes_one_version_when_asked_and_equals_its_json(engine: str) -> None:
    """The env catalog's versions come last, a version a line (``versions.VERSIONS_AT``, written by
    ``table_last``): read as the same data as the whole file, each version decoded when asked for."""
    raw = (catalogued.DATA_DIR / f"{engine}_env.json").read_bytes()
    whole = json.loads(raw)
    lazy = catalogued._decoded(raw)
    assert isinstance(lazy["versions"], catalogued.LazyVersions) and list(lazy["versions"]) == list(whole["versions"])
    version = list(whole["versions"])[-1]
    assert lazy["versions"][version] == whole["versions"][version] and version in lazy["versions"]
    assert dict(lazy["versions"].items()) == whole["versions"] and {**lazy, "versions": whole["versions"]} == whole
    assert catalogued.table_last(whole, "versions").encode() == raw  # the committed file is the writer's
    assert catalogued._decoded(json.dumps(whole, indent=1).encode()) == whole


@contextlib.contextmanager
def _specs_built_afresh(engine: str):
    """The engine's spec table and catalogs as a new process has them, and left so for the next test."""
    from cfgcheck.engines import catalog as module

    module._SPECS.pop(engine, None)
    module._catalog_obj.cache_clear()
    catalog_for.cache_clear()
    try:
        yield module
    finally:
        module._catalog_obj.cache_clear()
        catalog_for.cache_clear()


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_specs_decoded_at_once_are_those_decoded_one_by_one(engine: str) -> None:
    """``every_spec`` (a rule asking every version) decodes the table in one go; each spec is what the table's
    own line makes, and a catalog built after it holds those same specs."""
    with _specs_built_afresh(engine) as module:
        specs = module.every_spec(engine)
        lines = catalogued.catalog_data(engine)["specs"]
        assert len(specs) == len(lines) > 100
        for index, spec in enumerate(specs):
            assert vars(spec) == vars(module._spec_from(lines[index]))
        newest = catalog_for(engine, None)
        assert {id(spec) for spec in newest.options()} <= {id(spec) for spec in specs}  # the table's own objects
        assert [catalog.version for catalog in module.every_catalog(engine)] == catalogued.versions(engine)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_versions_specs_decoded_at_once_are_its_lines_and_shared(engine: str) -> None:
    """A catalog of one version decodes the specs it needs in one go: each is what its own line makes, in the
    version's order, and the table asked for every spec later keeps those objects."""
    with _specs_built_afresh(engine) as module:
        oldest = catalogued.versions(engine)[0]
        entry = catalogued.catalog_data(engine)["versions"][oldest]
        built = module._catalog_obj(engine, oldest).specs
        lines = catalogued.catalog_data(engine)["specs"]
        assert len(built) == len(entry["specs"]) > 50
        assert [vars(spec) for spec in built] == [vars(module._spec_from(lines[i])) for i in entry["specs"]]
        assert sum(spec is None for spec in module._SPECS[engine]) == len(lines) - len(set(entry["specs"]))
        everything = module.every_spec(engine)
        assert all(everything[i] is spec for i, spec in zip(entry["specs"], built))
