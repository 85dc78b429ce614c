"""An engine started with no model argument: vLLM serves its built-in default model, SGLang does not start.

## What it flags
A vLLM server started with neither a positional model (`vllm serve MODEL`) nor `--model`, and an
SGLang server started without `--model-path` (or its alias `--model`), where cfgcheck is sure the
argument list is complete: the command names the engine's launcher (`vllm serve`, `python -m
vllm.entrypoints.openai.api_server`, `python -m sglang.launch_server`) or the arguments go to the
official engine image's own entrypoint (`vllm/vllm-openai`, run with no command at all too), no word is an unresolved variable
(`$ARGS`, `$(EXTRA)`, `{{ .Values.args }}`), no `--config` file may name the model, and no wrapper
reads the model from the environment. Only workloads whose command cfgcheck reads whole are checked
(Kubernetes workloads, compose services, shell scripts): an operator adds the model itself.

A model argument that is a compose variable the env file (or its committed template) sets to nothing
(`vllm serve ${MODEL}` with `MODEL=`) vanishes when compose splits the command: the finding is placed at
it and says so.

vLLM's `--model` has a default in every catalogued version (`facebook/opt-125m` up to 0.10,
`Qwen/Qwen3-0.6B` after): the server starts and serves that model, a warning naming it. SGLang's
`--model-path` is required (argparse `required=True` in every catalogued version): the server exits
with `the following arguments are required: --model-path`, an error. Both read from the catalog of
the engine version the image names; an assumed version is said.

## Why it matters
vLLM downloads and serves a small default model nobody asked for: the deployment looks healthy, the
health check passes, and every request is answered by the wrong model. SGLang's pod crash-loops.

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
          command: ["vllm", "serve", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
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
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from cfgcheck.api import DISPLAY, Finding, image_engine, in_every_version, parse_image, severity

CODE, NAME, SEVERITY = "CFG110", "no-model-argument", "error"
OPTIONS: dict = {}

# the model's option of each engine, as its catalogs spell it
_MODEL_OPTION = {"vllm": "--model", "sglang": "--model-path"}
# resources and formats whose engine command is the user's, read whole (an operator adds the model)
_WHOLE_COMMAND = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod",
                  "docker-compose", "shell script", "Terraform container"}
_UNRESOLVED = ("$", "{{", "`", "%(")  # a word the shell, the kubelet, a template or supervisord still expands


def check(model, ctx):
    option_name = _MODEL_OPTION.get(model.engine)
    if option_name is None or model.model is not None or "model" in model.settings or model.template \
            or model.kind not in _WHOLE_COMMAND or not _complete(model):
        return
    found = ctx.flags(model)
    if found is None:
        return
    catalog, _, label = found
    option = catalog.option(option_name)
    if option is None:
        return
    name = DISPLAY.get(model.engine, model.engine)
    where = model.image.location if model.launched_by == "image" and model.image is not None else model.location
    unset = model.model_unset  # written, but its variable is set to nothing: the word vanished
    why, fix = "", f"name the model to serve: `vllm serve ORG/NAME` or {option_name} ORG/NAME"
    if unset is not None:
        where, why = unset.location, f"; {unset.text} is {unset.source}"
        fix = f"give {unset.text} a value in the env file (ORG/NAME, or the path of the weights)"
    if option.required:
        yield Finding(f"{name} is started without {option_name} ({label}{why}): it is required, the server exits "
                      f"with 'the following arguments are required: {option_name}'", where,
                      remediation=fix if unset is not None else f"pass {option_name} ORG/NAME (or the path of the "
                      "weights)", setting="model",
                      severity=severity(model, catalog, lambda: in_every_version(
                          model.engine, lambda other: getattr(other.option(option_name), "required", False))))
    elif option.default:
        yield Finding(f"{name} is started with no model ({label}{why}): it serves its built-in default "
                      f"{option.default}, the {option_name} default", where, remediation=fix,
                      setting="model", severity="warning")


def _complete(model) -> bool:
    """Whether the argument list the engine receives is all cfgcheck reads: its launcher named in the
    command, or the official engine image's entrypoint; no word still to expand; no ``--config`` file and
    no wrapper convention that may bring the model."""
    if model.launched_by == "image":
        found = image_engine(parse_image(str(model.image.value))) if model.image is not None else None
        if found is None or not found.known or found.engine != "vllm" or found.variant is not None:
            return False  # sglang's image has no entrypoint that starts the server; another build may wrap it
    elif model.launched_by != "command":
        return False
    texts = [token.text for token in model.argv]
    return not model.conventions and not any(mark in text for text in texts for mark in _UNRESOLVED) \
        and not any(text == "--config" or text.startswith("--config=") for text in texts)
