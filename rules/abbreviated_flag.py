"""A flag written as a unique prefix of a real flag, which the engine silently expands.

## What it flags
An engine flag that is not an option of the engine version but a unique prefix of one, such as
`--kv-cache-memory` for vLLM's `--kv-cache-memory-bytes` or `--mem-frac` for SGLang's
`--mem-fraction-static`. Python's argparse (with `allow_abbrev`, as vLLM and SGLang leave it)
accepts such prefixes. Whether a prefix is unique is decided by argparse itself over the flag
catalog of the engine version the image tag names.
The finding is an error when the engine version is exact (an upstream image's version tag, or a
`# cfgcheck: engine-version=X` directive) or when the flag is wrong in every catalogued version;
otherwise (a rolling or digest-pinned tag, a vendor or local build, a version outside the catalogs)
it is a warning that says which version was assumed and why.

## Why it matters
The config says something other than what runs: a reader searching for `--kv-cache-memory-bytes`
will not find it, and a reviewer may not know the two are the same setting. Worse, abbreviations
are fragile: when a later engine version adds a flag with the same prefix, the abbreviation becomes
ambiguous and the server no longer starts (`--max-num-` had 3 candidates in vLLM 0.10.2, 4 in
0.26.0 and 6 in 0.33.0).

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--kv-cache-memory", "8G"]
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--kv-cache-memory-bytes", "8G"]
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.engines.catalog import catalog_for, flag_location, known_versions, version_key
from cfgcheck.engines.confidence import in_every_version, severity
from cfgcheck.model import Edit, Finding, Fix
from cfgcheck.registry import Option

CODE, NAME, SEVERITY = "CFG101", "abbreviated-flag", "error"
OPTIONS = {"allow": Option(list, [], "abbreviations to accept as written, e.g. `[\"--max-model\"]`.")}


def _later_trouble(catalog, written: str) -> str:
    """How the same abbreviation fares in later catalogued versions, if it breaks there."""
    for version in known_versions(catalog.engine):
        if version_key(version) <= version_key(catalog.version):
            continue
        later = catalog_for(catalog.engine, version)
        res = later.resolve(written)
        if res.kind == "ambiguous":
            return f"; it is ambiguous from {later.display} ({len(res.candidates)} candidates)"
        if res.kind == "unknown":
            return f"; {later.display} does not accept it"
    return ""


def check(model, ctx):
    found = ctx.flags(model)
    if found is None:
        return
    catalog, flags, label = found
    allow = set(ctx.options["allow"])
    for flag in flags:
        res = flag.resolution
        if res.kind != "abbrev" or flag.token.synthetic or res.written in allow:
            continue
        full = res.option + res.suffix
        location = flag_location(flag.token, res.written)
        fix = Fix(f"spell out {res.option}", (Edit(location, res.written, full),))
        yield Finding(
            f"'{res.written}' is an abbreviation of {res.option} ({label})",
            location,
            remediation=f"write {full} in full{_later_trouble(catalog, res.written)}",
            fix=fix,
            setting=res.option,
            severity=severity(model, catalog, lambda: in_every_version(
                catalog.engine, lambda other: other.resolve(res.written).kind != "exact")),
        )
