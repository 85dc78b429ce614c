"""A suppression that suppresses nothing.

## What it flags
A `# cfgcheck: ignore[CODE] reason` comment (or `cfgcheck.io/ignore` annotation) for a rule that
ran but found nothing on the line below it or on the same line (or on the annotated resource).

## Why it matters
Stale suppressions hide the next real finding on that line, and they tell readers a hazard exists
where it no longer does. Remove them once the config is fixed.

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
          # cfgcheck: ignore[CFG302] we track nightly on purpose
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          args: ["--model", "Qwen/Qwen3-8B", "--revision", "b968826d9c46dd6066d109eabc6255188de91218"]
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
          args: ["--model", "Qwen/Qwen3-8B", "--revision", "b968826d9c46dd6066d109eabc6255188de91218"]
```

## Options
None.
"""

CODE, NAME, SEVERITY = "CFG002", "unused-suppression", "warning"
OPTIONS: dict = {}
