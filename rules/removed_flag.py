"""A flag that earlier engine versions accepted but the configured version has dropped or renamed.

## What it flags
An engine flag that the engine version the image tag names does not accept, while earlier
catalogued versions of the same engine did: `--swap-space` or `--disable-log-requests` on vLLM
0.26, `--calculate-kv-scales` on vLLM 0.33. Where the catalogs show what replaced it (an alias
that survived, a flag named by the deprecation notice, or the same setting under a new name), the
finding names it.
The finding is an error when the engine version is exact (an upstream image's version tag, or a
`# cfgcheck: engine-version=X` directive) or when the flag is wrong in every catalogued version;
otherwise (a rolling or digest-pinned tag, a vendor build mapped to the version it ships, a version
outside the catalogs) it is a warning that says which version was assumed and why. When the image names
no version at all (a vendor release no vendor document maps, a local build), the newest catalog is only
a guess: a note that says the version is unknown. When the version the tag names is not
catalogued and lies between a catalogued version that accepts the flag and the next one that does
not, whether it still accepts it is not known: a note.
A flag written inside `${VAR:+...}` (the optional flags of a Dockerfile's shell-form `ENTRYPOINT`)
reaches the engine only when the variable is set: its finding is at most a warning and says so.

## Why it matters
The engine exits at start-up with `unrecognized arguments`, typically right after an image bump
that looked harmless. The flag's history tells the reviewer it is an upgrade issue rather than a
typo, and which flag to use now.

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
          args: ["--swap-space", "8"]
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
          image: vllm/vllm-openai:v0.10.2
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--swap-space", "8"]
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import (DISPLAY, Finding, Fix, IMAGE_UNKNOWN, confidence, flag_history, only_if_set, rename_edit,
                          severity, stated, undecided, version_ranges)

CODE, NAME, SEVERITY = "CFG104", "removed-flag", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
OPTIONS: dict = {}


def check(model, ctx):
    found = ctx.flags(model)
    if found is None:
        return
    catalog, flags, label = found
    name = DISPLAY.get(catalog.engine, catalog.engine)
    for flag in flags:
        res = flag.resolution
        if res.kind != "unknown" or flag.token.synthetic:
            continue
        hist = flag_history(catalog, res)
        if not hist.older:
            continue
        what = res.written if hist.option == res.normalized or hist.option is None else \
            f"{res.written} ({hist.option})"
        between = undecided(catalog, hist.older + hist.newer)
        if between:  # removed between the two catalogued versions around an uncatalogued one
            yield only_if_set(Finding(f"'{what}' may be removed in {name} {catalog.requested}: it is not catalogued, and "
                          f"{name} {between[0]} accepts the flag while {between[1]} does not", flag.token.location,
                          remediation=f"check the flag against {name} {catalog.requested}'s --help, or pin a "
                          "catalogued version", setting=hist.option or res.written, severity="note"), flag.token)
            continue
        if _version_unknown(model, catalog):
            yield only_if_set(_unknown_version(flag, what, name, catalog, hist, stated(model)[1]), flag.token)
            continue
        message = f"'{what}' was removed: {name} {version_ranges(catalog.engine, list(hist.older))} " \
                  f"accepted it, {label} does not"
        # an older version than the one assumed may not know the successor: a fix only where the image says
        edit = rename_edit(flag.token, res.written, hist.rename) if confidence(model, catalog) != IMAGE_UNKNOWN else None
        # other versions accept it by definition: an error only when the version is exact
        yield only_if_set(Finding(message, edit.location if edit else flag.token.location,
                                  remediation=renamed(hist.rename),
                                  fix=Fix(f"write {hist.rename.replacement}", (edit,)) if edit else None,
                                  setting=hist.option or res.written, severity=severity(model, catalog, lambda: False)),
                          flag.token)


def _version_unknown(model, catalog) -> bool:
    """The image names no engine version (a vendor release, a local build): the newest catalog is only
    a guess, so a removal from it is no finding."""
    return model.image is not None and catalog.requested is None and confidence(model, catalog) == IMAGE_UNKNOWN


def _unknown_version(flag, what: str, name: str, catalog, hist, why: str) -> Finding:
    accepted = version_ranges(catalog.engine, list(hist.older))
    return Finding(f"'{what}' is not accepted by {name} {catalog.version} (the newest catalogued); {name} "
                   f"{accepted} accepted it, and the image names no {name} version ({why})",
                   flag.token.location, remediation=f"pin an image whose tag names the {name} version, or "
                   "state it with '# cfgcheck: engine-version=X'", setting=hist.option or what, severity="note")


def renamed(rename) -> str:
    """The advice for a flag the target version no longer accepts, by what the catalogs say replaced it."""
    if rename is None:
        return "remove the flag or find its replacement in the engine's release notes"
    if rename.certain:
        return f"write {rename.replacement} instead (the same setting: {rename.how})"
    return f"{rename.successor} replaced it ({rename.how}), but not with the same values: check its value " \
           "format and choices in the release notes before writing it, or remove the flag"
