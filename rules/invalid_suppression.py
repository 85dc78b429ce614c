"""A suppression that is malformed, names an unknown rule or gives no reason.

## What it flags
`# cfgcheck: ignore[CODES] reason` and `# cfgcheck: ignore-file[CODES] reason` comments and
`cfgcheck.io/ignore: "CODES: reason"` annotations whose codes (codes, prefixes such as `CFG2`, or
names) match no rule, that say nothing about why the finding is accepted, or that start like a
directive but do not parse (`# cfgcheck: ignore everything`).

## Why it matters
A suppression is a decision someone made about a real hazard. Without a reason the next reader
cannot tell whether it still holds; with a misspelled code or a malformed directive it silently
suppresses nothing.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
  # cfgcheck: ignore[CFG203]
  parallelSlots: 64
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
  # Short prompts: measured p99 prompt 6K tokens, so 64 fit the pool (2026-08-12 report).
  parallelSlots: 64
```

## Options
None.
"""

CODE, NAME, SEVERITY = "CFG001", "invalid-suppression", "warning"
OPTIONS: dict = {}
