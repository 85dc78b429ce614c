"""A flag value that the engine version's parser refuses: wrong type, not one of the choices, or a value given to a flag that takes none.

## What it flags
The value of an engine flag that the flag's converter in the engine version the image tag names
would refuse: `--max-num-seqs 64.5` (an integer flag), `--kv-cache-dtype fp9` (not one of the
choices), `--max-model-len 1.5K` (vLLM's human-readable integers allow decimals only with the
decimal suffixes k/m/g), a `true`/`false` written after a flag that takes no value
(`--enforce-eager true`, `--enable-prefix-caching=false`), and `false` given to a flag whose
converter is Python's `bool` (which reads every non-empty string as True). The converters are cfgcheck's, proven
equal to the engine's own on sample values when the catalog was generated; values of converters
that could not be classified are not checked.
The finding is an error when the engine version is exact (an upstream image's version tag, or a
`# cfgcheck: engine-version=X` directive) or when the flag is wrong in every catalogued version;
otherwise (a rolling or digest-pinned tag, a vendor or local build, a version outside the catalogs)
it is a warning that says which version was assumed and why. A value outside the choices of every
catalogued version is a warning too when the version was assumed: a fork or development build may add
the choice (as for an unknown flag, CFG103).

## Why it matters
argparse refuses the value and the engine exits at start-up (`argument --x: invalid int value`,
`invalid choice`, `unrecognized arguments: false`). A `false` after a switch never turns it off.

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
          args: ["--kv-cache-dtype", "fp9"]
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
          args: ["--kv-cache-dtype", "fp8"]
```

## Options
None.
"""

from __future__ import annotations

import re

from cfgcheck.api import (DISPLAY, IMAGE_EXACT, Edit, Finding, Fix, confidence, in_every_version, secret_name, severity,
                          unresolved, value_location)

CODE, NAME, SEVERITY = "CFG105", "invalid-flag-value", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
OPTIONS: dict = {}

# Patterns as text, compiled by re (and cached there) when first used: the secret ones only once a value is invalid.
_ANGLE_PLACEHOLDER = r"<[A-Z_]+>"  # a <PLACEHOLDER> to fill in: the value is unknown
_BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off"}


_SECRET_VALUE = r"^(sk-|hf_|ghp_|gho_|github_pat_|xox[abp]-|eyJ|AKIA|glpat-)|^[A-Za-z0-9_\-+/=]{32,}$"


def _shown(option: str, value: str) -> str:
    """The value quoted, unless the flag or the value looks like a secret (then it is not repeated)."""
    if secret_name(option) or re.search(_SECRET_VALUE, value):
        return "the value"
    return f"'{value}'"


def check(model, ctx):
    found = ctx.flags(model)
    if found is None:
        return
    catalog, flags, label = found
    tokens = list(model.argv)
    index_of = {id(t): i for i, t in enumerate(tokens)}
    for flag in flags:
        res = flag.resolution
        spec = res.spec
        if res.kind not in ("exact", "abbrev") or spec is None or res.suffix:
            continue
        if not spec.takes_value:
            for finding in _valueless(flag, spec, tokens, index_of, label):
                finding.severity = severity(model, catalog, lambda: in_every_version(
                    catalog.engine, lambda other: _refuses(other, res.written, None)))
                yield finding
            continue
        values = [(flag.inline_value, value_location(flag), None)] if flag.inline_value is not None else \
            [(t.text, t.location, t) for t in flag.values]
        for text, location, _token in values:
            if text is None or unresolved(text) or "<" in text and re.search(_ANGLE_PLACEHOLDER, text):
                continue
            reason = catalog.check_value(spec, text)
            if reason is None and spec.type == "python-bool" and text.strip().lower() in ("false", "0", "no", "off"):
                reason = f"the parser uses type=bool, so '{text}' sets True (only an empty string is False)"
            if reason is None:
                continue
            fix = None
            if spec.choices and not secret_name(res.option):
                folded = [c for c in spec.choices if isinstance(c, str) and c.lower() == text.lower()]
                if len(folded) == 1:
                    fix = Fix(f"use the choice {folded[0]}", (Edit(_span(location, text), text, folded[0]),))
            level = severity(model, catalog, lambda: in_every_version(
                catalog.engine, lambda other: _refuses(other, res.written, text)))
            caveat = _assumed_choice(model, catalog, spec, reason) if fix is None else ""
            yield Finding(
                f"invalid value {_shown(res.option, text)} for {res.option} ({label}): {reason}{caveat}",
                location,
                remediation=f"give {res.option} a value its parser accepts; the engine will not start"
                            + (" (if the engine that runs accepts it, state its version: an image tag or "
                               "`# cfgcheck: engine-version=`)" if caveat else ""),
                fix=fix,
                setting=res.option,
                severity="warning" if caveat else level,
            )


def _assumed_choice(model, catalog, spec, reason: str) -> str:
    """The caveat of a value outside the choices when the engine version was assumed (no image names it
    exactly): a build or fork newer than the catalogs may add the choice, as for an unknown flag (CFG103)."""
    if not spec.choices or not reason.startswith("not one of") or confidence(model, catalog) == IMAGE_EXACT:
        return ""
    name = DISPLAY.get(catalog.engine, catalog.engine)
    return f"; no catalogued {name} version has the choice, but the version was assumed (a fork or build may add it)"


def _refuses(catalog, written: str, text: str | None) -> bool:
    """Whether ``catalog``'s version refuses ``written`` with ``text`` (None: with a value at all)."""
    res = catalog.resolve(written)
    if res.spec is None or res.kind not in ("exact", "abbrev"):
        return True
    if text is None:
        return not res.spec.takes_value
    return res.spec.takes_value and catalog.check_value(res.spec, text) is not None


def _span(location, text):
    if location.end_line not in (None, location.line):
        return location
    return type(location)(location.path, location.line, location.column, location.line,
                          location.column + len(text) - 1)


def _valueless(flag, spec, tokens, index_of, label):
    res = flag.resolution
    if flag.inline_value is not None:
        yield Finding(
            f"{res.option} takes no value ({label}): '{res.written}={flag.inline_value}' is refused",
            flag.token.location,
            remediation=_switch_advice(spec, res.option, flag.inline_value),
            setting=res.option,
        )
        return
    position = index_of.get(id(flag.token))
    if position is None or position + 1 >= len(tokens):
        return
    following = tokens[position + 1]
    if following.text.lower() in _BOOLEAN_WORDS:
        yield Finding(
            f"{res.option} takes no value ({label}): '{following.text}' becomes an unrecognized argument",
            following.location,
            remediation=_switch_advice(spec, res.option, following.text),
            setting=res.option,
        )


def _switch_advice(spec, option, value) -> str:
    off = value.lower() in ("false", "no", "off", "0")
    if off and spec.negative_forms:
        return f"write {spec.negative_forms[0]} to turn it off, or drop the flag"
    if off:
        return f"drop {option} to leave it off"
    return f"write {option} alone, without a value"
