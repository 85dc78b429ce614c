"""A name in what cfgcheck reads that leads nowhere in the repository.

## What it flags
A reference the serving configuration makes to something the repository should hold and does not:

- a kustomization naming a resource, base, component, patch or `configMapGenerator` file that does not
  exist beside it (a `secretGenerator`'s file is not looked for: secrets stay out of Git on purpose);
- a KServe `InferenceService` naming a `runtime` that no `ServingRuntime` or `ClusterServingRuntime` of the
  repository defines, in a repository that defines its runtimes (it defines at least one), when the name
  is not one of the `ClusterServingRuntime`s KServe itself installs (`data/kserve.json`, generated from
  KServe's `config/runtimes` at its releases);
- an engine `--config` file or a llama-server `--models-preset` file named by a path the repository holds:
  the source of a compose bind mount, or a relative path in a script that runs the engine on the host from
  its own folder (one that changes folder, or names the file again to fetch or write it, is not judged).
- a `--chat-template` file (a value ending in `.jinja`, `.j2`, `.json`, ...) named by such a script.

The message names what is referenced and where it was looked for. Only a lint that read the whole
repository reports it (`cfgcheck lint` of the repository root, or of files and folders that are all of
it): pre-commit names changed files, and a lint of a subfolder leaves the rest unread, so what is named
may well be elsewhere. What cfgcheck cannot resolve by design is never flagged: remote kustomize bases and
URLs, runtimes installed in the cluster by an operator, files inside an image or on a volume. A file that
is there but not read (ignored by Git, too large) is not missing.

## Why it matters
What is named and missing is silently skipped by every reader: `kubectl kustomize` fails on the whole
overlay, KServe leaves the `InferenceService` without a predictor until someone creates the runtime, and
an engine whose config file is absent exits at start-up (or, for llama-server, serves none of the models
the preset file was meant to list). cfgcheck cannot check what it cannot read either: the settings in the
missing file go unchecked.

## Example
```yaml
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime
spec:
  supportedModelFormats:
    - name: huggingface
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.26.0
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: qwen
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      runtime: vllm-runtme
      args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
```

## Use instead
```yaml
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime
spec:
  supportedModelFormats:
    - name: huggingface
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.26.0
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: qwen
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      runtime: vllm-runtime
      args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
```

## Options
None.
"""

CODE, NAME, SEVERITY = "CFG003", "dangling-reference", "warning"
OPTIONS: dict = {}
