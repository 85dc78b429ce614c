"""A flag that is a prefix of several flags of the engine version: the server will not start.

## What it flags
An engine flag that is not an option of the engine version and is a prefix of more than one, such
as `--max-num` in vLLM or `--cuda-graph-max-bs` in SGLang 0.5.23 (which split it into
`--cuda-graph-max-bs-decode` and `--cuda-graph-max-bs-prefill`). The candidates are what argparse
itself finds in the flag catalog of the engine version the image tag names.
The finding is an error when the engine version is exact (an upstream image's version tag, or a
`# cfgcheck: engine-version=X` directive) or when the flag is wrong in every catalogued version;
otherwise (a rolling or digest-pinned tag, a vendor or local build, a version outside the catalogs)
it is a warning that says which version was assumed and why, and that this version would not start
(an assumed version is no proof that the image runs it).

## Why it matters
argparse refuses ambiguous prefixes: the engine exits at start-up with `ambiguous option: ...
could match ...`, and the rollout fails. Prefixes that were unique become ambiguous when an
engine upgrade adds flags, so this often appears on an image bump with no change to the args.

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
          args: ["--max-num", "64"]
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
          args: ["--max-num-seqs", "64"]
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import (Edit, Finding, Fix, IMAGE_UNKNOWN, as_written, catalog_for, confidence, flag_location,
                          in_every_version, known_versions, rename, rename_edit, severity, version_key)

CODE, NAME, SEVERITY = "CFG102", "ambiguous-flag", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
OPTIONS: dict = {}


def _earlier_meaning(catalog, written: str) -> tuple[str, str | None]:
    """What the flag meant in the newest earlier version where it was not ambiguous: in words, and the
    option it meant (None when no earlier version read it as one option)."""
    for version in reversed(known_versions(catalog.engine)):
        if version_key(version) >= version_key(catalog.version):
            continue
        res = catalog_for(catalog.engine, version).resolve(written)
        if res.kind in ("exact", "abbrev"):
            how = "an exact flag" if res.kind == "exact" else f"short for {res.option}"
            return f"; it was {how} up to {catalog_for(catalog.engine, version).display}", res.option
        if res.kind == "unknown":
            return "", None
    return "", None


def _meant_now(model, catalog, token, written: str, meant: str | None) -> tuple[str, Edit | None] | None:
    """(how, edit) that writes what the flag meant before, where the catalogs are sure of it: the option it
    abbreviated, which this version still has (right in every version that has it), or that option's
    certain successor (history.rename), only where the image names the engine version: an older version
    would not know the successor."""
    if meant is None or token.synthetic or token.text.split("=", 1)[0] != written:
        return None
    if catalog.option(meant) is not None:
        return f"write {meant}, the flag it abbreviated", \
            Edit(flag_location(token, written), as_written(token, written), as_written(token, meant))
    found = rename(catalog.engine, meant, catalog.version)
    edit = rename_edit(token, written, found)
    if edit is None:
        return None
    return f"write {found.replacement} (it replaced {meant}: {found.how})", \
        edit if confidence(model, catalog) != IMAGE_UNKNOWN else None


def check(model, ctx):
    found = ctx.flags(model)
    if found is None:
        return
    catalog, flags, label = found
    for flag in flags:
        res = flag.resolution
        if res.kind != "ambiguous" or flag.token.synthetic:
            continue
        shown = ", ".join(res.candidates[:8]) + (", ..." if len(res.candidates) > 8 else "")
        earlier, meant = _earlier_meaning(catalog, res.written)
        fixed = _meant_now(model, catalog, flag.token, res.written, meant)
        sure = severity(model, catalog, lambda: in_every_version(
            catalog.engine, lambda other: other.resolve(res.written).kind in ("ambiguous", "unknown")))
        # an assumed version is no proof that the engine runs it: the outcome is said as a condition
        outcome = "the engine will not start" if sure == SEVERITY else f"{catalog.display} would not start"
        yield Finding(
            f"'{res.written}' is ambiguous ({label}): could match {shown}; {outcome}",
            fixed[1].location if fixed and fixed[1] else flag.token.location,
            remediation=f"{fixed[0]}{earlier}" if fixed else f"write the full name of the intended flag{earlier}",
            fix=Fix(fixed[0], (fixed[1],)) if fixed and fixed[1] else None,
            setting=res.written,
            severity=sure,
        )
