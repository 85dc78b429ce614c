"""A file or YAML document that cannot be read or interpreted.

## What it flags
Files that are not valid YAML, not valid UTF-8 (or UTF-16 with a BOM), contain NUL bytes, exceed a
configured limit (`limits.max-file-bytes`, `limits.max-depth`, `limits.max-expanded-nodes`,
`limits.max-documents`), or, in a file that may hold a served model (one with a serving marker: an
engine's name, an operator's API group), hold duplicate keys, an undefined alias or an alias expansion
over `limits.max-expanded-nodes`; a file without a marker is checked in one pass of libyaml's parser,
which sees syntax but builds no tree. The finding points at the line and column where reading stopped.
Also a `cfgcheck` directive or suppression in a comment longer than 4,096 characters (not read:
`max-comment-chars`), a file that starts more engines than `limits.max-served-models` (256; the first
are checked), a Python spec file that Python's parser refuses (named by the error's class), and a file
or served model cfgcheck itself failed on (an internal error, named by its exception type; the other
files are still checked).

A template is not flagged for its YAML: a file whose Helm/Go `{{ }}` or Jinja `{% %}` tags break the
YAML, or a broken file named as a template (`x.template.yaml`, `x.yaml.j2`, `x.gotmpl`), is YAML only
once rendered; one note per folder says it was not linted. A local Helm chart's template that `helm
template` cannot parse (an `{{- if }}` without its `{{- end }}`, an action closed with one brace) is
flagged at the line helm names: helm parses every template before it renders any, so the chart renders
nothing and `helm install` fails whatever the values. A rendering that fails on values (`required`,
`fail`) or on a limit is a note.

## Why it matters
A serving config that cannot be read cannot be checked: the hazards in it are invisible. The other
files are still linted; this finding makes sure the unreadable one is not silently skipped.

## Example
```yaml
spec:
  vllmConfig:
    maxModelLen: 32768
   gpuMemoryUtilization: 0.9
```

## Use instead
```yaml
spec:
  vllmConfig:
    maxModelLen: 32768
    gpuMemoryUtilization: 0.9
```

## Options
None. The limits are set under `limits:` in `.cfgcheck.yaml`.
"""

CODE, NAME, SEVERITY = "CFG000", "unparseable-input", "error"
OPTIONS: dict = {}
