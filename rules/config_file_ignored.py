"""An engine `--config` file written `--config=FILE`, which the engine never reads.

## What it flags
`--config=/etc/vllm/config.yaml` (one argument with `=`) on vLLM or SGLang. Both engines load the
file only when the exact token `--config` is followed by the path as the next argument: vLLM's
`FlexibleArgumentParser.parse_args` checks `if '--config' in args` before parsing (the same in every
catalogued version, `vllm/utils/argparse_utils.py`, `vllm/utils/__init__.py` before 0.11), SGLang's
`ConfigArgumentMerger` looks for the exact `--config` token. Written with `=`, argparse stores the
path and nothing reads it.

## Why it matters
Every setting of the file is silently skipped: the engine starts with its defaults (a different
model length, memory fraction, parallelism), and the file looks as if it configured the server.

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
          args: ["--config=/etc/vllm/config.yaml"]
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
          args: ["--config", "/etc/vllm/config.yaml"]
```

## Options
None.
"""

from cfgcheck.api import Finding

CODE, NAME, SEVERITY = "CFG109", "config-file-ignored", "error"
OPTIONS: dict = {}
_ENGINES = {"vllm": "vLLM", "sglang": "SGLang"}


def check(model, ctx):
    if model.engine not in _ENGINES:
        return
    for token in model.argv:
        if token.synthetic or not token.text.startswith("--config="):
            continue
        path = token.text.split("=", 1)[1]
        yield Finding(f"{_ENGINES[model.engine]} ignores the whole file of '{token.text}': only '--config {path}' "
                      "(two arguments) loads it", token.location,
                      remediation="pass --config and the path as two arguments", setting="--config")
