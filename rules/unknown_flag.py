"""A flag that the engine version does not have at all (a typo, or a flag of another engine).

## What it flags
An engine flag that is neither an option of the engine version the image tag names nor a unique
prefix of one, and that no earlier catalogued version accepted either (those are `removed-flag`).
The closest real flag is suggested. A flag that only later versions have is reported with the
version that added it: an error on an exact engine version, a warning on an assumed one, and a note
when the version the tag names is not catalogued and lies between a catalogued version without the
flag and the next one with it (`lmsysorg/sglang:v0.4.3.post3` between 0.4.2.post4 and 0.4.4.post4: it
may have the flag). On a
variant or vendor image (vLLM-Omni, ROCm, llm-d, NGC, ...), an unknown repository or an unexpanded
image, a flag no catalogued version knows is a note (the image may add it, as `vllm/vllm-omni` adds
`--omni`), unless it is a near-miss of a real flag. When no image or directive states the engine version
exactly (it was assumed, or none is known), a flag no catalogued version knows is a warning that says
so: a fork or an uncatalogued build may add it; a near-miss of a real flag stays an error. A repository
that holds the engine's own server-arguments source (a fork: `vllm/engine/arg_utils.py`,
`python/sglang/srt/server_args.py`) defines the flags its `add_argument(` calls name: none is reported; in a Dynamo graph it is a note that names it a
Dynamo flag (`dynamo.vllm` parses its own, such as `--is-prefill-worker`). Ray Serve LLM `engine_kwargs` are keyword arguments
of the engine (`EngineArgs(**engine_kwargs)`): a key is unknown unless it names an argument exactly, with
underscores (`max_num_seq` and `max-num-seqs` both fail), and is reported on its line inside
`serveConfigV2`. Flags said of in the same words on one line (five Dynamo flags in one shell string) are
one finding that names each of them.
A flag written inside `${VAR:+...}` (the optional flags of a Dockerfile's shell-form `ENTRYPOINT`)
reaches the engine only when the variable is set: its finding is at most a warning and says so.

## Why it matters
argparse refuses unknown options: the engine exits at start-up with `unrecognized arguments`.
Typos in a flag name are invisible in review, and flags copied between engines (`--mem-fraction-static`
on vLLM, `--gpu-memory-utilization` on SGLang) look plausible.

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
          args: ["--gpu-memory-utilisation", "0.85"]
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
          args: ["--gpu-memory-utilization", "0.85"]
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.api import (DISPLAY, IMAGE_EXACT, Finding, KEYWORD_ORIGIN, Location, Option, catalog_for, confidence,
                          flag_history, is_typo, only_if_set, severity, stated, undecided, unfamiliar_image, versions)

CODE, NAME, SEVERITY = "CFG103", "unknown-flag", "error"
TEMPLATES = True  # true of a runtime template's own text, wherever it is used
OPTIONS = {
    "ignore": Option(list, [],
        "flags to accept although the catalog does not know them (for example flags added by a "
        "plugin)."),
}


def check(model, ctx):
    found = ctx.flags(model)
    if found is None:
        return
    catalog, flags, label = found
    ignore = set(ctx.options["ignore"])
    # one finding per line and kind: five Dynamo flags on one line are one note naming the five
    judged: dict[tuple, list[tuple]] = {}
    # a fork of the engine: the flags its own arguments source defines (adapters/launch/engine_sources.py)
    forked = model.engine_source.options if model.engine_source is not None else frozenset()
    for flag in flags:
        res = flag.resolution
        if res.kind != "unknown" or flag.token.synthetic or {res.written, res.normalized} & (ignore | forked):
            continue
        verdict = _judge(model, catalog, flag, label)
        if verdict is not None:
            where = flag.token.location
            judged.setdefault((where.path, where.line, verdict.kind, verdict.level), []).append((flag, verdict))
    for group in judged.values():
        yield only_if_set(_finding(group), group[0][0].token)


class _Verdict:  # never compared by value: a plain class, whose __init__ the import does not generate
    """What is said of one kind of unknown or misplaced flag: the message, the remediation and the level."""

    def __init__(self, kind: str, message: str, remediation: str, level: str, many: str = "",
                 many_remedy: str = "") -> None:
        self.kind = kind  # what is said of the flag: one finding per line and kind names every such flag
        self.message = message  # of one flag
        self.remediation = remediation
        self.level = level
        self.many = many  # the message of several flags on one line: {flags}; "" when each is said alone
        self.many_remedy = many_remedy  # the remediation of several flags (default: each flag's, named)


def _finding(group: list[tuple]) -> Finding:
    (flag, verdict), written = group[0], [f.resolution.written for f, _ in group]
    if len(group) == 1 or not verdict.many:
        return Finding(verdict.message, flag.token.location, remediation=verdict.remediation, setting=written[0],
                       severity=verdict.level)
    remediation = verdict.many_remedy or "; ".join(f"{f.resolution.written}: {v.remediation}" for f, v in group)
    first, last = group[0][0].token.location, group[-1][0].token.location
    where = Location(first.path, first.line, first.column, last.end_line, last.end_column) \
        if last.end_line in (None, first.line) else first
    names = ", ".join(f"'{w}'" for w in written)
    return Finding(verdict.many.format(flags=names, count=len(group)), where, remediation=remediation,
                   setting=",".join(written), severity=verdict.level)


def _judge(model, catalog, flag, label: str) -> _Verdict | None:
    res = flag.resolution
    name = DISPLAY.get(catalog.engine, catalog.engine)
    hist = flag_history(catalog, res)
    if hist.older:
        return None  # removed-flag reports it
    routed = catalog.behaviour.get("unknown_flags_go_to")
    if routed:  # TokenSpeed's `ts serve`: flags the engine lacks go to its gateway
        routing = catalog.behaviour.get("ts_serve_routing") or {}
        known = {f for v in routing.values() if isinstance(v, list) for f in v}
        known |= set(routing.get("aliases") or {})
        close = catalog.suggest(res.written)
        if res.normalized in known or not close:
            return None
        return _Verdict("routed", f"'{res.written}' is not a flag of the {label} engine; it would go to "
                        f"{routed.split(' (')[0]}", f"did you mean {close[0]}?", SEVERITY)
    between = undecided(catalog, hist.older + hist.newer) if hist.newer else None
    if between:
        return _Verdict("undecided", f"'{res.written}' may be unknown to {name} {catalog.requested}: it is not "
                        f"catalogued, and {name} {between[0]} lacks the flag while {between[1]} has it",
                        f"check the flag against {name} {catalog.requested}'s --help, or pin a catalogued version",
                        "note")
    if hist.newer:
        return _Verdict("added", f"unknown flag '{res.written}' in {label}: it was added in {name} {hist.newer[0]}",
                        f"upgrade the image to {name} {hist.newer[0]} or later, or remove the flag",
                        severity(model, catalog, lambda: False))
    if model.kind.startswith("Dynamo") and not is_typo(catalog, res.written):
        # dynamo.vllm / dynamo.sglang parse their own flags before the engine's (no Dynamo catalog here)
        tail = f"dynamo.{model.engine} adds its own; cfgcheck has no Dynamo catalog"
        return _Verdict("dynamo", f"flag '{res.written}' is no {name} flag: read as a Dynamo flag ({tail})",
                        "if Dynamo does not accept it either, remove it; else add it to this rule's `ignore`", "note",
                        f"{{count}} flags are no {name} flags: {{flags}}, read as Dynamo flags ({tail})",
                        "remove those Dynamo does not accept either; add the others to this rule's `ignore`")
    if unfamiliar_image(model) and not is_typo(catalog, res.written):
        image = f"the image {model.image.value if model.image else ''} may add"
        return _Verdict("unfamiliar", f"flag '{res.written}' is in no catalogued {name} version; {image} it "
                        f"({stated(model)[1]})",
                        "if the image does not accept it, remove it; else add it to this rule's `ignore`", "note",
                        f"{{count}} flags are in no catalogued {name} version: {{flags}}; {image} them "
                        f"({stated(model)[1]})",
                        "remove those the image does not accept; add the others to this rule's `ignore`")
    if flag.token.origin.startswith(KEYWORD_ORIGIN):  # Ray Serve LLM engine_kwargs: EngineArgs(**kwargs)
        message, remediation, level = _keyword_finding(catalog, res.written.lstrip("-"), label)
        return _Verdict("keyword", message, remediation, level)
    close = catalog.suggest(res.written)
    remediation = f"did you mean {close[0]}?" if close else "remove the flag or check its spelling"
    if confidence(model, catalog) != IMAGE_EXACT and not is_typo(catalog, res.written):
        # the version was assumed: a build or fork of the engine other than the catalogued ones may add it
        assumed = f"no catalogued {name} version has it, but the version was assumed (a fork or build may add it)"
        return _Verdict("unknown-assumed", f"unknown flag '{res.written}' in {label}: {assumed}",
                        f"{remediation} If the engine that runs accepts it, state its version (an image tag or "
                        "`# cfgcheck: engine-version=`) or add the flag to this rule's `ignore`", "warning", f"{{count}} unknown flags in {label}: {{flags}}; {assumed}")
    return _Verdict("unknown", f"unknown flag '{res.written}' in {label}", remediation,
                    SEVERITY, f"{{count}} unknown flags in {label}: {{flags}}")  # no catalogued version accepts it


def _keyword_finding(catalog, key: str, label: str) -> tuple[str, str, str]:
    """An ``engine_kwargs`` key (``EngineArgs(**kwargs)``): matched exactly, underscores only. A key that
    is a field of other catalogued versions depends on the version: a warning."""
    option = "--" + key.replace("_", "-")
    elsewhere = [v for v in versions(catalog.engine) if "-" not in key and catalog_for(catalog.engine, v).option(option)]
    close = catalog.suggest("--" + key)
    remediation = f"write {close[0].lstrip('-').replace('-', '_')}" if close else "remove the key"
    if elsewhere:
        return (f"engine_kwargs key '{key}' is not an engine argument of {label} (vLLM {elsewhere[0]}-"
                f"{elsewhere[-1]} have it)", "remove the key or pin the image to a version that has it", "warning")
    return (f"engine_kwargs key '{key}' is not an engine argument of {label}: keyword names match exactly "
            f"(underscores, no prefix), so the engine fails at start-up", remediation, SEVERITY)
