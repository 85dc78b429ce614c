"""A literal API key or access token written into engine args or env.

## What it flags
A literal value for `--api-key` (not a `$(VAR)` / `${VAR}` reference, nor a value with a part that comes
from a variable with no literal default or from a command substitution, such as
`"$USER:$PASSWORD"` where the password is drawn at start) or for the env variable vLLM
reads the key from when the flag is not given (`VLLM_API_KEY`), and Hugging Face tokens
(`hf_...`) or OpenAI-style keys (`sk-...`) anywhere in the argv or a literal env value. The message
names the flag or variable, never the value. A placeholder (`EMPTY`, vLLM's documented
`token-abc123`, values that say they are one: `dummy`, `fake`, `test`, `changeme`, `your-key`) is no
secret to leak: an `--api-key` placeholder is a warning that the key keeps no one out, and a
placeholder token is not flagged.

## Why it matters
Anything in a manifest is readable by everyone who can read the repository, its history, its CI logs
and the cluster's objects. Keys belong in a Secret, referenced by `valueFrom.secretKeyRef`.

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
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          args: ["--model", "/models/qwen", "--api-key", "my-literal-key-123"]
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
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          args: ["--model", "/models/qwen", "--api-key", "$(VLLM_API_KEY)"]
          env:
            - name: VLLM_API_KEY
              valueFrom:
                secretKeyRef: {name: vllm, key: api-key}
```

## Options
None.
"""

import re

from cfgcheck.api import Finding

CODE, NAME, SEVERITY = "CFG305", "secret-in-args", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
OPTIONS: dict = {}
# Patterns as text, compiled by re (and cached there) when first used: the key and placeholder ones only
# when an API key or a token is written.
_TOKEN = r"\b(hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,})\b"
_REFERENCE = r"^\$[({]?[A-Za-z_][A-Za-z0-9_]*[)}]?$|^<.*>$|^\{\{.*\}\}$"
# a part left unexpanded: a variable with no literal default, a command substitution (``$(...)``, backquotes)
_UNEXPANDED = r"\$[({A-Za-z_]|`"
# values that stand for "any key" in tutorials and tests, not a secret: vLLM's docs use `token-abc123`,
# OpenAI-compatible clients `EMPTY`; words such as dummy, fake, test or changeme name a placeholder
_PLACEHOLDER = (r"(?i)^(?:empty|none|null|token-abc123)$|dummy|fake|test|example|placeholder|changeme|"
                r"your[-_]|secret[-_]?key$|^x+$")


def _has_token(text: str) -> bool:
    # each of _TOKEN's forms starts with its literal prefix: a text without one is not searched (every
    # argv word and env value of every served model is asked)
    return ("hf_" in text or "sk-" in text) and re.search(_TOKEN, text) is not None


# the env variable the engine reads its API key from when no --api-key is given: vLLM's OpenAI server
# takes ``args.api_key or envs.VLLM_API_KEY`` (vllm/entrypoints/openai/api_server.py; vllm/envs.py)
_KEY_ENV = {"vllm": "VLLM_API_KEY"}


def _key_env(model, reported: set):
    """A literal key in the env variable the engine reads its API key from: the same leak as --api-key."""
    name = _KEY_ENV.get(model.engine or "")
    setting = model.env.get(name) if name else None
    if setting is None or not isinstance(setting.value, str) or not setting.value.strip() or \
            "$" in setting.value or re.match(_REFERENCE, setting.value.strip()):
        return
    reported.add((setting.location.line, setting.location.column))
    remediation = f"set {name} from a Secret (env valueFrom.secretKeyRef, or a compose secret / unversioned env_file)"
    if re.search(_PLACEHOLDER, setting.value.strip()):
        yield Finding(f"env {name} (the engine's API key) is a well-known placeholder: it keeps no one out",
                      setting.location, remediation=remediation, setting=f"env:{name}", severity="warning")
    else:
        yield Finding(f"literal value for env {name}, the engine's API key", setting.location,
                      remediation=remediation, setting=f"env:{name}")


def check(model, ctx):
    reported = set()
    key = model.setting("api_key")
    if key is not None and isinstance(key.value, str) and key.value and not re.match(_REFERENCE, key.value.strip()) \
            and not re.search(_UNEXPANDED, key.value):
        reported.add((key.location.line, key.location.column))
        remediation = "read the key from a Secret (env valueFrom.secretKeyRef) and pass $(VAR)"
        if re.search(_PLACEHOLDER, key.value.strip()):  # no secret leaks, but the server is open to anyone
            yield Finding(f"{key.source} is a well-known placeholder: it keeps no one out", key.location,
                          remediation=remediation, setting="api_key", severity="warning")
        else:
            yield Finding(f"literal value for {key.source}", key.location, remediation=remediation, setting="api_key")
    for token in model.argv:
        if token.synthetic or (token.location.line, token.location.column) in reported:
            continue
        if _has_token(token.text) and not re.search(_PLACEHOLDER, token.text):
            reported.add((token.location.line, token.location.column))
            yield Finding("literal access token in the engine arguments", token.location,
                          remediation="move the token to a Secret and reference it", setting="argv-token")
    yield from _key_env(model, reported)
    for name, setting in model.env.items():
        if (setting.location.line, setting.location.column) in reported:
            continue
        if isinstance(setting.value, str) and _has_token(setting.value):
            yield Finding(f"literal access token in env {name}", setting.location,
                          remediation=f"set {name} from a Secret with valueFrom.secretKeyRef", setting=f"env:{name}")
