"""A flag written as a unique prefix of a real flag, which the engine silently expands.

## What it flags
An engine flag that is not an option of the engine version but a unique prefix of one, such as
`--kv-cache-memory` for vLLM's `--kv-cache-memory-bytes` or `--mem-frac` for SGLang's
`--mem-fraction-static`. Python's argparse (with `allow_abbrev`, as vLLM and SGLang leave it)
accepts such prefixes. Whether a prefix is unique is decided by argparse itself over the flag
catalog of the engine version the image tag names.
An abbreviation that means the same option in every catalogued version of the engine (SGLang's
`--tp` for `--tp-size`, the spelling SGLang's own server-arguments page uses) is a warning: the
engine starts and runs what the config says in every version cfgcheck knows. Any other abbreviation
(unknown, ambiguous or another option in some catalogued version, as vLLM's `--kv-cache-memory` is
before 0.10.2) is an error when the engine version is exact (an upstream image's version tag, or a
`# cfgcheck: engine-version=X` directive), and a warning that says which version was assumed and why
otherwise (a rolling or digest-pinned tag, a vendor or local build, a version outside the catalogs).

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

from cfgcheck.api import (DISPLAY, Edit, Finding, Fix, Option, as_written, catalog_for, flag_location,
                          in_every_version, known_versions, severity, version_key, versions)

CODE, NAME, SEVERITY = "CFG101", "abbreviated-flag", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
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


def _same_everywhere(engine: str, written: str, option: str) -> bool:
    """Whether ``written`` abbreviates ``option`` in every catalogued version of ``engine``."""
    return in_every_version(engine, lambda other: (res := other.resolve(written)).kind == "abbrev"
                            and res.option == option)


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
        fix = Fix(f"spell out {res.option}", (Edit(location, as_written(flag.token, res.written),
                                                   as_written(flag.token, full)),))
        if _same_everywhere(catalog.engine, res.written, res.option):
            span = versions(catalog.engine)
            later = (f" (it means {res.option} in every catalogued {DISPLAY[catalog.engine]} version, "
                     f"{span[0]} to {span[-1]})")
            sure = "warning"  # the engine runs what the config says in every version cfgcheck knows
        else:
            later = _later_trouble(catalog, res.written)
            sure = severity(model, catalog, lambda: in_every_version(
                catalog.engine, lambda other: other.resolve(res.written).kind != "exact"))
        yield Finding(
            f"'{res.written}' is an abbreviation of {res.option} ({label})",
            location,
            remediation=f"write {full} in full{later}",
            fix=fix,
            setting=res.option,
            severity=sure,
        )
