"""Build src/cfgcheck/data/models.json, the bundled architecture table.

Inputs: scripts/model_sources.json (ids and citation of each source), the config.json dictionaries that
scripts/vendor_model_configs.py extracted into scripts/model_configs/, and scripts/models_legacy.json (the
table as it stood before this generator; its entries are carried, and fields a vendored config does not
give, such as a published parameter count or checkpoint size, are kept). Every generated entry records
``source`` (repo@commit:path#symbol) and ``weights_source`` (the safetensors index ``total_size`` when a
source gives one, else the parameter count x bytes per parameter, with the reason).

    python scripts/build_models.py          # rewrite the table
    python scripts/build_models.py --check  # exit 1 when the committed table is stale
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from cfgcheck.capacity.architecture import Architecture, architecture_from_config  # noqa: E402

HERE = ROOT / "scripts"
TABLE = ROOT / "src" / "cfgcheck" / "data" / "models.json"
_DEFAULTS = {name: p.default for name, p in inspect.signature(Architecture).parameters.items()}
_SKIP = {"name", "source", "note", "params"}


def _slug(model_id: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "__", model_id)


def _vendored(source: dict) -> dict:
    return json.loads((HERE / "model_configs" / f"{_slug(source['ids'][0])}.json").read_text(encoding="utf-8"))


def generated_entry(source: dict) -> dict:
    vendored = _vendored(source)
    config = vendored["config"]
    total = (vendored.get("safetensors_index") or {}).get("metadata", {}).get("total_size")
    arch = architecture_from_config(config, source["ids"][0], int(total) if total else None)
    entry: dict = {"ids": list(source["ids"])}
    for name, value in arch.to_dict().items():
        if name in _SKIP or value == _DEFAULTS.get(name) or value is None:
            continue
        if name == "remote_code" and not value:
            continue  # vendored configs may be presets that drop auto_map: only its presence is a fact
        entry[name] = value
    if source.get("task"):
        entry["task"] = source["task"]
    entry["source"] = vendored["source"]
    if total:
        entry["weights_source"] = "safetensors index metadata.total_size"
    return entry


def _weights_source(entry: dict) -> str:
    """How cfgcheck gets the checkpoint size of an entry, for entries without a safetensors total."""
    bits = f"{entry.get('weight_bits', 16.0):g} bits per parameter"
    if entry.get("weight_bytes"):
        return "checkpoint size carried from the table before the generator"
    if entry.get("params"):
        return f"published parameter count carried from the table before the generator x {bits}"
    return f"computed from the config's layer shapes x {bits} (no safetensors index found in a public source)"


def fine_tune_entry(source: dict, models: list[dict]) -> dict:
    """A full fine-tune: its base model's architecture and size under its own ids, citing the recipe that
    names the base."""
    vendored = _vendored(source)
    base = next((m for m in models if vendored["base"].lower() in (i.lower() for i in m["ids"])), None)
    if base is None:
        raise SystemExit(f"{source['ids'][0]}: base model {vendored['base']} is not in the table")
    entry = {k: v for k, v in base.items() if k not in ("ids", "source", "note")}
    entry["ids"] = list(source["ids"])
    entry["note"] = f"full fine-tune of {vendored['base']}: its architecture"
    entry["source"] = vendored["source"]
    return entry


def apply_facts(models: list[dict], source: dict) -> None:
    """Only the fields ``facts_only`` names, from a vendored config whose layer shapes agree with the table's entry
    (a parser-test fixture that quotes a model's config.json in full while the entry is carried from before the
    generator)."""
    vendored = _vendored(source)
    entry = next(m for m in models if source["ids"][0].lower() in (i.lower() for i in m["ids"]))
    arch = architecture_from_config(vendored["config"], source["ids"][0]).to_dict()
    shapes = ("num_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_kv_heads", "head_dim")
    if any(entry.get(k) != arch[k] for k in shapes):
        raise SystemExit(f"{source['ids'][0]}: {vendored['source']} describes other layer shapes")
    for name in source["facts_only"]:
        entry[name] = arch[name]
    entry["facts_source"] = f"{', '.join(source['facts_only'])} from {vendored['source']}"


def apply_vision(models: list[dict], source: dict) -> None:
    """The vision tower's widths or image preprocessor's limits that the source's lines state, merged into the
    ``vision_tower`` of the entry holding its first id (vLLM's profile run encodes one image of the largest size)."""
    vendored = _vendored(source)
    entry = next(m for m in models if source["ids"][0].lower() in (i.lower() for i in m["ids"]))
    entry.setdefault("vision_tower", {}).update(vendored["vision"])
    cited = f"{', '.join(sorted(vendored['vision']))} from {vendored['source']}"
    entry["vision_tower_source"] = "; ".join(filter(None, [entry.get("vision_tower_source"), cited]))


# AWQ stores a 16-bit scale and a packed 4-bit zero point per group of ``group_size`` inputs besides the 4-bit
# weights (vllm/model_executor/layers/quantization/awq.py create_weights: qweight, qzeros, scales)
_GROUP_OVERHEAD_BITS = {"awq": 4 + 16}


def quantized_entry(source: dict, models: list[dict]) -> dict:
    """A quantized checkpoint of a model of the table: its base's architecture and published size, at the bits the
    conversion script's group size gives, keeping 16-bit what the script leaves unquantized."""
    vendored = _vendored(source)
    base = next((m for m in models if vendored["quantized_from"].lower() in (i.lower() for i in m["ids"])), None)
    if base is None:
        raise SystemExit(f"{source['ids'][0]}: base model {vendored['quantized_from']} is not in the table")
    facts = vendored["checkpoint"]
    entry = {k: v for k, v in base.items() if k not in ("ids", "source", "note", "weight_bytes", "weights_source")}
    entry.update(ids=list(source["ids"]), quantization=facts["quantization"],
                 weight_bits=4 + _GROUP_OVERHEAD_BITS[facts["quantization"]] / facts["group_size"],
                 note=f"{facts['quantization'].upper()} conversion of {vendored['quantized_from']} (groups of "
                      f"{facts['group_size']}; embeddings{' and vision tower' if facts.get('unquantized_vision') else ''} "
                      "left 16-bit by the script)", source=vendored["source"])
    if facts.get("unquantized_vision"):
        entry["unquantized_vision"] = entry["vision"] = True
    entry["weights_source"] = (f"published parameter count of {vendored['quantized_from']}: embeddings"
                               f"{' and the count beyond the text layers (the vision tower)' if facts.get('unquantized_vision') else ''}"
                               f" at 16 bits, the rest at {entry['weight_bits']:g} bits")
    return entry


# KAITO catalog field -> the table's field (the catalog copies them from config.json)
_CATALOG_SHAPES = {"hiddenSize": "hidden_size", "numHiddenLayers": "num_layers", "numAttentionHeads": "num_attention_heads",
                   "numKeyValueHeads": "num_kv_heads"}


def _catalog_bytes(size: str) -> int:
    """KAITO's ``modelFileSize`` ("26.00Gi": the weight files' total, to 0.01 GiB) in bytes."""
    return int(round(float(size.removesuffix("Gi")) * 2**30))


def _agrees(entry: dict, item: dict) -> bool:
    return all(item.get(k) is None or entry.get(f) in (None, item[k]) for k, f in _CATALOG_SHAPES.items())


def apply_catalog(models: list[dict], catalog: dict, cite: str) -> None:
    """Checkpoint sizes from KAITO's catalog for entries without a checkpoint size, when the catalog's copy
    of the config agrees with the entry's shapes. A size the table already has is kept: the catalog sums
    every weight file, and some repositories ship a second copy (gpt-oss's original/ folder)."""
    by_name = {name.lower(): item for name, item in catalog.items()}
    for entry in models:
        if entry.get("weight_bytes") or entry.get("weights_source") or entry.get("note", "").startswith("full fine-tune"):
            continue
        item = next((by_name[i.lower()] for i in entry["ids"] if i.lower() in by_name), None)
        if item is None or not item.get("modelFileSize") or not _agrees(entry, item):
            continue
        entry["weight_bytes"] = _catalog_bytes(item["modelFileSize"])
        entry["weights_source"] = f"KAITO model catalog modelFileSize of {item['name']} (the weight files' total) at {cite}"


def catalog_variant(source: dict, models: list[dict], catalog: dict, cite: str) -> dict:
    """A model KAITO's catalog describes with the same shapes as an entry of the table (a long-context
    release of the same weights layout): that entry's architecture, the catalog's context and size."""
    item = catalog[source["catalog_entry"]]
    base = next(m for m in models if source["same_shapes_as"].lower() in (i.lower() for i in m["ids"]))
    if not _agrees(base, item):
        raise SystemExit(f"{item['name']}: KAITO's shapes differ from {source['same_shapes_as']}")
    entry = {k: v for k, v in base.items() if k not in ("ids", "source", "note", "rope_scaling", "params", "weights_source")}
    entry.update(ids=list(source["ids"]), max_position_embeddings=item["modelTokenLimit"],
                 weight_bytes=_catalog_bytes(item["modelFileSize"]),
                 note=f"MLP and vocabulary sizes of {source['same_shapes_as']}, whose hidden size, layers and heads "
                      "KAITO's catalog gives as the same", source=f"{cite}#{item['name']}",
                 weights_source=f"KAITO model catalog modelFileSize (the weight files' total) at {cite}")
    return entry


# KAITO pipeline tags (the model card's) of checkpoints that ship an image encoder
_IMAGE_PIPELINES = ("image-text-to-text", "any-to-any")


def catalog_facts(entry: dict, source: dict, catalog: dict, cite: str) -> None:
    """What a vendored parser-test config leaves out, from KAITO's entry for the model (read from its own
    config.json and model card): the context length, which the table follows and says so where the test
    config quotes another, and whether an image encoder ships with the checkpoint."""
    item = catalog[source["facts_from_catalog"]]
    if not _agrees(entry, item):
        raise SystemExit(f"{item['name']}: KAITO's shapes differ from {source['ids'][0]}")
    if item.get("pipelineTag") in _IMAGE_PIPELINES:
        entry["vision"] = True
    quoted, entry["max_position_embeddings"] = entry.get("max_position_embeddings"), item["modelTokenLimit"]
    if quoted != item["modelTokenLimit"]:
        entry["note"] = (f"max_position_embeddings {item['modelTokenLimit']:,} from KAITO's catalog entry {item['name']} "
                         f"(read from its config.json) at {cite}; the vendored test config quotes {quoted:,}")


def apply_catalog_vision(models: list[dict], catalog: dict, cite: str) -> None:
    """A vision encoder for entries whose own model KAITO's catalog tags as taking images (its pipeline tag, read
    from the model card) when the catalog's copy of the config agrees with the entry's shapes. Only the entry's
    first id counts: an alias that is a later multimodal release says nothing of the model the entry describes."""
    by_name = {name.lower(): item for name, item in catalog.items()}
    for entry in models:
        item = by_name.get(entry["ids"][0].lower())
        if entry.get("vision") or item is None or item.get("pipelineTag") not in _IMAGE_PIPELINES or not _agrees(entry, item):
            continue
        entry["vision"] = True
        entry["vision_source"] = f"KAITO model catalog pipelineTag {item['pipelineTag']} of {item['name']} at {cite}"


def build() -> dict:
    legacy = json.loads((HERE / "models_legacy.json").read_text(encoding="utf-8"))
    all_sources = json.loads((HERE / "model_sources.json").read_text(encoding="utf-8"))["sources"]
    catalog_source = next(s for s in all_sources if s.get("catalog"))
    catalog_file = _vendored(catalog_source)
    sources = [s for s in all_sources if not s.get("catalog")]
    fine_tunes = [s for s in sources if "base" in s]
    quantized = [s for s in sources if "quantized_from" in s]
    variants = [s for s in sources if "catalog_entry" in s]
    generated = [generated_entry(s) for s in sources
                 if not {"base", "catalog_entry", "quantized_from", "facts_only", "vision"} & s.keys()]
    by_id = {i.lower(): g for g in generated for i in g["ids"]}
    models = []
    for entry in legacy["models"]:
        match = next((by_id[i.lower()] for i in entry["ids"] if i.lower() in by_id), None)
        if match is None:
            models.append({**entry, "source": entry.get("source", "carried from the table before the generator")})
            continue
        # a published count or size the vendored config cannot give is kept
        for key in ("params", "weight_bytes"):
            if key in entry and key not in match:
                match[key] = entry[key]
        match["ids"] += [i for i in entry["ids"] if i.lower() not in {x.lower() for x in match["ids"]}]
    for source in (s for s in sources if s.get("facts_only")):
        apply_facts(models, source)
    for source in (s for s in sources if s.get("facts_from_catalog")):
        catalog_facts(by_id[source["ids"][0].lower()], source, catalog_file["catalog"], catalog_file["source"])
    models.extend(generated)
    models.extend(fine_tune_entry(s, models) for s in fine_tunes)
    models.extend(catalog_variant(s, models, catalog_file["catalog"], catalog_file["source"]) for s in variants)
    apply_catalog(models, catalog_file["catalog"], catalog_file["source"])
    apply_catalog_vision(models, catalog_file["catalog"], catalog_file["source"])
    models.extend(quantized_entry(s, models) for s in quantized)
    for source in (s for s in sources if "vision" in s):
        apply_vision(models, source)
    for entry in models:
        entry.setdefault("weights_source", _weights_source(entry))
    not_bundled = json.loads((HERE / "model_sources.json").read_text(encoding="utf-8")).get("not_bundled", [])
    return {"version": 1, "description": legacy["description"] + " Generated by scripts/build_models.py; "
            "each entry names its source and how its weight size was obtained; not_bundled says why a family "
            "whose name matches is absent.", "models": models, "not_bundled": not_bundled}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the bundled model architecture table.")
    parser.add_argument("--check", action="store_true", help="fail when the committed table differs")
    args = parser.parse_args(argv)
    text = json.dumps(build(), indent=1) + "\n"
    if args.check:
        if TABLE.read_text(encoding="utf-8") != text:
            print(f"{TABLE} is stale: run python scripts/build_models.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
