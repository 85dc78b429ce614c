"""Flags an engine that listens on another port or address than its pod's ports, probes and Services use.

## What it flags
The port the engine listens on (`--port`, else its default from the generated flag catalog of that
engine version: vLLM 8000, SGLang 30000, TokenSpeed 8000) compared with:
- the container's `containerPort`s, when it declares some and none is the engine's port (ports
  whose number the container passes elsewhere, in an env value or another flag, are not counted);
  a warning in Kubernetes, where a containerPort is informational until a probe or Service uses it;
- a liveness, readiness or startup probe (`httpGet`, `tcpSocket`, `grpc`) whose port, resolved
  through the container's named ports, is another number;
- a Service of the run (same namespace, selector matching the pod's labels) none of whose target
  ports (numbers or resolved names) reaches the engine;
- in docker-compose, published `ports`/`expose` none of whose container side is the engine's port.

When the port is the engine's default and the image is no known engine image (a team's own build or
wrapper, whose entrypoint may pass another `--port`), the findings are warnings that say so.

And the address: an engine bound to loopback (`--host 127.0.0.1`, `localhost`, or SGLang's and
TokenSpeed's default 127.0.0.1) while a probe, a Service or a published compose port reaches it
from outside the container. Ports of sidecar containers in the same pod (routing proxies) are
not the engine's and are left alone, as are pods whose ports are templated.

## Why it matters
A probe on the wrong port never succeeds: the readiness gate keeps the pod out of the Service, and a
liveness probe restarts the engine in a loop while it loads. The kubelet probes the pod's IP, not
loopback (Kubernetes "Configure Liveness, Readiness and Startup Probes"), so an engine on
127.0.0.1 is unreachable to probes and Services alike (aws-samples/custom-scheduler-eks#8); SGLang
binds 127.0.0.1:30000 unless told otherwise, which is why its Kubernetes examples pass
`--host 0.0.0.0`.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
          ports:
            - containerPort: 8000
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                    "--host", "0.0.0.0", "--port", "8000"]
          ports:
            - containerPort: 8000
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, Location, RuleContext, ServedModel, WRITTEN, as_int, image_engine, parse_image

from ._pod_rules import serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG503", "port-mismatch", "error"
OPTIONS: dict = {}

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
CHECKED_FORMATS = ("kubernetes", "compose")
NOT_THE_ENGINE = "huggingfaceserver"  # KServe's server wraps vLLM and serves on its own --http_port


def _listen(model: ServedModel, ctx: RuleContext) -> tuple[int | None, str | None, Location | None]:
    """(port, host, where the port is set): the effective ones (as written, else the engine version's defaults)."""
    port, host = ctx.effective(model, "port"), ctx.effective(model, "host")
    return port.value, host.value, port.location if port.source == WRITTEN else None


def _resolve(port, pod) -> int | None:
    """A probe or Service port: a number, or a name looked up in the engine container's ports."""
    if as_int(port) is not None:
        return as_int(port)
    return next((as_int(p.number) for p in pod.ports if p.name == port), None)


def _selects(service, pod) -> bool:
    if not service.selector or (service.namespace and pod.namespace and service.namespace != pod.namespace):
        return False
    return all(pod.labels.get(key) == value for key, value in service.selector.items())


def check(model: ServedModel, ctx: RuleContext) -> Iterator[Finding]:
    pod = model.pod
    if pod is None or pod.format not in CHECKED_FORMATS or not serves(model):
        return
    if model.image is not None and NOT_THE_ENGINE in str(model.image.value):
        return
    port, host, port_at = _listen(model, ctx)
    if port is None:
        return  # a templated or variable port
    version = f" {model.engine_version}" if model.engine_version else ""
    default = "" if port_at is not None else f" (the default port of {model.engine}{version})"
    listen = f"{host or '0.0.0.0'}:{port}{default}"
    sibling_numbers = {as_int(p.number) for p in pod.sibling_ports}
    sibling_names = {p.name for p in pod.sibling_ports if p.name}
    reached: list[tuple[str, Location]] = []  # what reaches the engine from outside: for the loopback check
    assumed = port_at is None and _unknown_image(model)
    for finding in [*_container_ports(model, pod, port, listen, reached),
                    *_probes(model, pod, port, listen, reached, sibling_numbers),
                    *_services(model, pod, port, listen, reached, sibling_numbers, sibling_names)]:
        if assumed:  # the image's own entrypoint may pass another --port: the default is an assumption
            finding.message += f" (assumed: {model.image.value} is no known engine image; its entrypoint may " \
                               f"choose the port)"
            finding.severity = "warning"
        yield finding
    if host in LOOPBACK and reached:
        what, where = reached[0]
        yield Finding(f"the engine listens on {listen}, loopback only, but {what} reaches it from outside "
                      f"the container: connection refused", where,
                      remediation="pass --host 0.0.0.0 (or the pod IP) to the engine", setting="host",
                      related=(model.setting("host").location,) if model.setting("host") else (), model=model.name)


def _unknown_image(model) -> bool:
    """An image that data/images.json does not list (a team's own build, a wrapper): what it runs is read
    from its name, and its entrypoint's flags are not seen."""
    image = model.image.value if model.image is not None else None
    return isinstance(image, str) and not image_engine(parse_image(image)).known


def _other_uses(model) -> set[str]:
    """Port numbers the container gives to something else: env values and other flags' values (a
    NIXL side channel, a metrics or gRPC port, a distributed-init port)."""
    port_setting = model.setting("port")
    texts = {str(s.value) for s in model.env.values()}
    texts |= {t.text.split("=", 1)[-1] for t in model.argv
              if port_setting is None or t.location != port_setting.location}
    return texts


def _container_ports(model, pod, port, listen, reached) -> Iterator[Finding]:
    numbers = [as_int(p.number) for p in pod.ports]
    if not pod.ports or None in numbers:
        return
    if port in numbers:
        matched = pod.ports[numbers.index(port)]
        reached.append(("a published port" if pod.format == "compose" else "its containerPort", matched.location))
        return
    others = _other_uses(model)
    unexplained = [p for p, n in zip(pod.ports, numbers) if str(n) not in others]
    if not unexplained:
        return  # every declared port is one the container uses for something else
    numbers = [as_int(p.number) for p in unexplained]
    first = unexplained[0]
    declared = ", ".join(str(n) for n in numbers)
    side = "published container port" if pod.format == "compose" else "containerPort"
    plural = "s are" if len(numbers) > 1 else " is"
    # a containerPort is informational (Kubernetes API reference, Container.ports): nothing fails until a
    # probe or a Service uses it (those are checked below); a compose port publishes nothing the engine serves
    informational = pod.format == "kubernetes"
    yield Finding(f"the engine listens on {listen} but the {side}{plural} {declared}"
                  + (" (informational: probes and Services that use it miss the engine)" if informational else ""),
                  first.location, remediation=f"pass --port {numbers[0]} to the engine, or declare port {port}",
                  setting="port", model=model.name, severity="warning" if informational else "")


def _probes(model, pod, port, listen, reached, sibling_numbers) -> Iterator[Finding]:
    for probe in pod.probes.values():
        if probe.handler not in ("httpGet", "tcpSocket", "grpc") or probe.port is None:
            continue
        target = _resolve(probe.port, pod)
        if target is None or target in sibling_numbers:
            continue  # a templated port, or a sidecar's
        where = probe.port_location or probe.location
        if target == port:
            reached.append((f"the {probe.kind} probe", where))
            continue
        named = "" if as_int(probe.port) is not None else f" ({probe.port!r})"
        yield Finding(f"the {probe.kind} probe checks port {target}{named} but the engine listens on {listen}: "
                      f"the probe never succeeds", where, remediation=f"probe port {port}, or pass --port {target}",
                      setting=f"{probe.kind}_probe_port", model=model.name)


def _services(model, pod, port, listen, reached, sibling_numbers, sibling_names) -> Iterator[Finding]:
    for service in pod.services:
        if pod.format != "kubernetes" or not _selects(service, pod) or not service.targets:
            continue
        resolved = []
        for target, location in service.targets:
            number = _resolve(target, pod)
            if number is None and (target in sibling_names or as_int(target) is None):
                number = -1  # a sidecar's named port, or one we cannot resolve: not ours to judge
            resolved.append((number, location))
        if any(n == port for n, _ in resolved):
            reached.append((f"Service {service.name}", next(loc for n, loc in resolved if n == port)))
            continue
        if any(n == -1 or n in sibling_numbers for n, _ in resolved):
            continue
        numbers = ", ".join(str(n) for n, _ in resolved)
        yield Finding(f"Service {service.name} sends traffic to port {numbers} but the engine listens on {listen}",
                      resolved[0][1],
                      remediation=f"set targetPort: {port}, or pass --port {resolved[0][0]} to the engine",
                      setting=f"service:{service.name}", related=(service.location,), model=model.name)
