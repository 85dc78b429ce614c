#!/usr/bin/env python3
"""Generate a realistic GitOps tree of YAML files, as a git repository with one commit.

Ordinary manifests (Deployments, Services, ConfigMaps, Ingresses, HPAs, ServiceAccounts, PDBs,
NetworkPolicies), Flux HelmReleases of common charts with their values, HelmRepositories, Flux and
kustomize Kustomizations, a few large CRD bundles, and about 3% serving configs (the dense corpus's
formats). Deterministic (seeded).

    python bench/gen_gitops.py [--out bench/out/gitops] [--files 5000] [--seed 11]
    python bench/gen_gitops.py --change [--out ...]   # second commit: one serving file changed

``--change`` edits one serving config (raises its max-num-seqs / utilization) and commits it, so
``cfgcheck lint --base HEAD~1`` has exactly one changed file. It does nothing if that commit exists.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_dense  # noqa: E402  (the serving-config formats)

CLUSTERS = ["prod-eu", "prod-us", "staging", "dev"]
NAMESPACES = ["payments", "checkout", "catalog", "search", "identity", "notifications", "billing", "analytics",
              "media", "web", "api-gateway", "inventory", "shipping", "reports", "auth", "crm", "ledger", "feeds"]
IMAGES = ["nginx:1.27.3", "ghcr.io/acme/{app}:{ver}", "registry.example.com/{ns}/{app}:{ver}",
          "docker.io/library/redis:7.4.1", "quay.io/prometheus/node-exporter:v1.8.2"]
CHARTS = [
    ("ingress-nginx", "https://kubernetes.github.io/ingress-nginx", "4.11.3"),
    ("cert-manager", "https://charts.jetstack.io", "v1.16.1"),
    ("kube-prometheus-stack", "https://prometheus-community.github.io/helm-charts", "65.5.0"),
    ("grafana", "https://grafana.github.io/helm-charts", "8.5.11"),
    ("loki", "https://grafana.github.io/helm-charts", "6.18.0"),
    ("redis", "oci://registry-1.docker.io/bitnamicharts", "20.2.1"),
    ("postgresql", "oci://registry-1.docker.io/bitnamicharts", "16.1.2"),
    ("external-dns", "https://kubernetes-sigs.github.io/external-dns", "1.15.0"),
    ("app-template", "oci://ghcr.io/bjw-s/helm", "3.5.1"),
    ("velero", "https://vmware-tanzu.github.io/helm-charts", "8.0.0"),
]
COMMENTS = [
    "Managed by Flux; edit in git, not with kubectl.",
    "Scaled up for the seasonal peak (CHG-{n}).",
    "renovate: datasource=docker depName={app}",
    "TODO(platform): move to the shared ingress class once {app} is migrated.",
    "Limits from the VPA recommendation of {date}.",
    "See runbook: https://wiki.example.com/runbooks/{app}",
]


def comment(r: random.Random, app: str) -> str:
    return "# " + r.choice(COMMENTS).format(n=r.randint(100, 9999), app=app,
                                             date=f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}")


def labels(app: str, ns: str, indent: str) -> list[str]:
    return [f"{indent}app.kubernetes.io/name: {app}", f"{indent}app.kubernetes.io/instance: {app}-{ns}",
            f"{indent}app.kubernetes.io/managed-by: flux"]


def deployment(r, app, ns) -> str:
    ver = f"{r.randint(1, 5)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
    image = r.choice(IMAGES).format(app=app, ns=ns, ver=ver)
    out = [comment(r, app), "apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {app}",
           f"  namespace: {ns}", "  labels:"] + labels(app, ns, "    ") + [
        "spec:", f"  replicas: {r.choice([1, 2, 3, 4, 6])}", f"  revisionHistoryLimit: {r.choice([3, 5, 10])}",
        "  selector:", "    matchLabels:", f"      app.kubernetes.io/name: {app}", "  template:", "    metadata:",
        "      labels:", f"        app.kubernetes.io/name: {app}", "      annotations:",
        "        prometheus.io/scrape: \"true\"", f"        prometheus.io/port: \"{r.choice([8080, 9090, 9102])}\"",
        "    spec:", f"      serviceAccountName: {app}", "      securityContext:", "        runAsNonRoot: true",
        "        fsGroup: 10001", "      containers:", f"        - name: {app}", f"          image: {image}",
        "          imagePullPolicy: IfNotPresent"]
    if r.random() < 0.5:
        out += ["          args:", f"            - --port={r.choice([8080, 3000, 5000])}",
                f"            - --log-level={r.choice(['info', 'debug', 'warn'])}", "            - --metrics"]
    out += ["          ports:", "            - name: http", f"              containerPort: {r.choice([8080, 3000, 5000])}",
            "          env:"]
    for k in range(r.randint(2, 8)):
        out += [f"            - name: {app.upper().replace('-', '_')}_SETTING_{k}",
                f"              value: \"{r.choice(['true', 'false', str(r.randint(1, 1000)), 'eu-west-1'])}\""]
    out += ["            - name: DATABASE_URL", "              valueFrom:", "                secretKeyRef:",
            f"                  name: {app}-db", "                  key: url",
            "          resources:", "            requests:", f"              cpu: {r.choice([50, 100, 250, 500])}m",
            f"              memory: {r.choice([64, 128, 256, 512])}Mi", "            limits:",
            f"              memory: {r.choice([256, 512, 1024])}Mi", "          readinessProbe:", "            httpGet:",
            "              path: /healthz", "              port: http", "          livenessProbe:", "            httpGet:",
            "              path: /healthz", "              port: http", f"            initialDelaySeconds: {r.choice([5, 10, 30])}",
            "          securityContext:", "            allowPrivilegeEscalation: false", "            readOnlyRootFilesystem: true",
            "            capabilities:", "              drop: [\"ALL\"]"]
    return "\n".join(out) + "\n"


def service(r, app, ns) -> str:
    return "\n".join(["apiVersion: v1", "kind: Service", "metadata:", f"  name: {app}", f"  namespace: {ns}",
                      "  labels:"] + labels(app, ns, "    ") + [
        "spec:", f"  type: {r.choice(['ClusterIP', 'ClusterIP', 'ClusterIP', 'NodePort'])}", "  selector:",
        f"    app.kubernetes.io/name: {app}", "  ports:", "    - name: http", "      port: 80", "      targetPort: http",
        "      protocol: TCP"]) + "\n"


def configmap(r, app, ns) -> str:
    out = ["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {app}-config", f"  namespace: {ns}", "data:"]
    for k in range(r.randint(2, 10)):
        out.append(f"  {app.replace('-', '_')}.key{k}: \"{r.choice(['on', 'off', str(r.randint(0, 99999))])}\"")
    if r.random() < 0.5:
        out += ["  app.yaml: |", "    server:", f"      port: {r.choice([8080, 3000])}", "      # read timeout in seconds",
                f"      readTimeout: {r.randint(5, 60)}", "    features:", f"      newCheckout: {r.choice(['true', 'false'])}",
                "    logging:", "      level: info", "      format: json"]
    return "\n".join(out) + "\n"


def ingress(r, app, ns) -> str:
    host = f"{app}.{r.choice(['example.com', 'internal.example.com', 'acme.io'])}"
    return "\n".join([comment(r, app), "apiVersion: networking.k8s.io/v1", "kind: Ingress", "metadata:", f"  name: {app}",
                      f"  namespace: {ns}", "  annotations:", "    cert-manager.io/cluster-issuer: letsencrypt-prod",
                      "    nginx.ingress.kubernetes.io/proxy-body-size: 10m", "spec:", "  ingressClassName: nginx",
                      "  tls:", "    - hosts:", f"        - {host}", f"      secretName: {app}-tls", "  rules:",
                      f"    - host: {host}", "      http:", "        paths:", "          - path: /",
                      "            pathType: Prefix", "            backend:", "              service:",
                      f"                name: {app}", "                port:", "                  name: http"]) + "\n"


def hpa(r, app, ns) -> str:
    return "\n".join(["apiVersion: autoscaling/v2", "kind: HorizontalPodAutoscaler", "metadata:", f"  name: {app}",
                      f"  namespace: {ns}", "spec:", "  scaleTargetRef:", "    apiVersion: apps/v1", "    kind: Deployment",
                      f"    name: {app}", f"  minReplicas: {r.choice([1, 2])}", f"  maxReplicas: {r.choice([5, 10, 20])}",
                      "  metrics:", "    - type: Resource", "      resource:", "        name: cpu", "        target:",
                      "          type: Utilization", f"          averageUtilization: {r.choice([60, 70, 80])}"]) + "\n"


def small(r, app, ns) -> str:
    kind = r.choice(["sa", "pdb", "netpol"])
    if kind == "sa":
        return "\n".join(["apiVersion: v1", "kind: ServiceAccount", "metadata:", f"  name: {app}", f"  namespace: {ns}",
                          "  annotations:", f"    eks.amazonaws.com/role-arn: arn:aws:iam::123456789012:role/{app}"]) + "\n"
    if kind == "pdb":
        return "\n".join(["apiVersion: policy/v1", "kind: PodDisruptionBudget", "metadata:", f"  name: {app}",
                          f"  namespace: {ns}", "spec:", "  minAvailable: 1", "  selector:", "    matchLabels:",
                          f"      app.kubernetes.io/name: {app}"]) + "\n"
    return "\n".join(["apiVersion: networking.k8s.io/v1", "kind: NetworkPolicy", "metadata:", f"  name: {app}-allow-ingress",
                      f"  namespace: {ns}", "spec:", "  podSelector:", "    matchLabels:", f"      app.kubernetes.io/name: {app}",
                      "  policyTypes: [Ingress]", "  ingress:", "    - from:", "        - namespaceSelector:",
                      "            matchLabels:", "              kubernetes.io/metadata.name: ingress-nginx"]) + "\n"


def kustomization(r, files: list[str], ns: str) -> str:
    out = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", f"namespace: {ns}", "resources:"]
    out += [f"  - {f}" for f in files]
    if r.random() < 0.3:
        out += ["commonLabels:", f"  team: {ns}"]
    return "\n".join(out) + "\n"


def flux_kustomization(r, name: str, path: str) -> str:
    return "\n".join(["---", "apiVersion: kustomize.toolkit.fluxcd.io/v1", "kind: Kustomization", "metadata:",
                      f"  name: {name}", "  namespace: flux-system", "spec:", f"  interval: {r.choice(['5m', '10m', '1h'])}",
                      f"  path: ./{path}", "  prune: true", "  wait: true", "  sourceRef:", "    kind: GitRepository",
                      "    name: flux-system", "  dependsOn:", "    - name: infra-controllers"]) + "\n"


def helmrelease(r, chart, url, version, ns) -> tuple[str, str]:
    name = chart if r.random() < 0.5 else f"{chart}-{ns}"
    out = [comment(r, chart), "apiVersion: helm.toolkit.fluxcd.io/v2", "kind: HelmRelease", "metadata:", f"  name: {name}",
           f"  namespace: {ns}", "spec:", f"  interval: {r.choice(['15m', '30m', '1h'])}", "  chart:", "    spec:",
           f"      chart: {chart}", f"      version: \"{version}\"", "      sourceRef:", "        kind: HelmRepository",
           f"        name: {chart}", "        namespace: flux-system", "  install:", "    crds: CreateReplace",
           "  upgrade:", "    crds: CreateReplace", "  values:"]
    # Values bodies of realistic size (common charts have long values files).
    out += ["    replicaCount: %d" % r.choice([1, 2, 3]), "    image:", f"      tag: \"{version.lstrip('v')}\"",
            "    resources:", "      requests:", f"        cpu: {r.choice([100, 200, 500])}m",
            f"        memory: {r.choice([128, 256, 512])}Mi", "    podAnnotations:", "      prometheus.io/scrape: \"true\"",
            "    serviceMonitor:", "      enabled: true", "      interval: 30s", "    nodeSelector:",
            "      kubernetes.io/os: linux", "    tolerations: []", "    affinity:", "      podAntiAffinity:",
            "        preferredDuringSchedulingIgnoredDuringExecution:", "          - weight: 100",
            "            podAffinityTerm:", "              topologyKey: kubernetes.io/hostname",
            "              labelSelector:", "                matchLabels:",
            f"                  app.kubernetes.io/name: {chart}"]
    for k in range(r.randint(3, 25)):
        out += [f"    extra{k}:", f"      enabled: {r.choice(['true', 'false'])}",
                f"      # {r.choice(['tuned for prod', 'default from chart', 'see CHG-%d' % r.randint(1, 999)])}",
                f"      value: {r.randint(1, 10000)}"]
    repo = ["---", "apiVersion: source.toolkit.fluxcd.io/v1", "kind: HelmRepository", "metadata:", f"  name: {chart}",
            "  namespace: flux-system", "spec:", "  interval: 24h", f"  url: {url}"]
    if url.startswith("oci://"):
        repo.append("  type: oci")
    return "\n".join(out) + "\n", "\n".join(repo) + "\n"


def crd_bundle(r, group: str, kinds: int, props: int) -> str:
    """A large CRD file: several CustomResourceDefinitions with deep openAPIV3Schema, like operator bundles."""
    docs = []
    for k in range(kinds):
        kind = f"Resource{k}"
        out = ["---", "apiVersion: apiextensions.k8s.io/v1", "kind: CustomResourceDefinition", "metadata:",
               "  annotations:", "    controller-gen.kubebuilder.io/version: v0.16.4",
               f"  name: {kind.lower()}s.{group}", "spec:", f"  group: {group}", "  names:", f"    kind: {kind}",
               f"    listKind: {kind}List", f"    plural: {kind.lower()}s", f"    singular: {kind.lower()}",
               "  scope: Namespaced", "  versions:", "    - name: v1", "      served: true", "      storage: true",
               "      schema:", "        openAPIV3Schema:", "          type: object",
               f"          description: {kind} is the Schema for the {kind.lower()}s API.", "          properties:"]
        for p in range(props):
            out += [f"            field{p}:", "              description: >-",
                    f"                Field {p} configures part of the {kind} behaviour. When unset the controller",
                    "                applies its default; see the operator documentation for details.",
                    "              type: object", "              properties:"]
            for q in range(r.randint(2, 6)):
                typ = r.choice(["string", "integer", "boolean"])
                out += [f"                sub{q}:", f"                  type: {typ}",
                        f"                  description: Sub-field {q} of field {p}."]
                if typ == "string" and r.random() < 0.3:
                    out += ["                  enum:", "                    - Always", "                    - Never",
                            "                    - IfNotPresent"]
        out += ["      subresources:", "        status: {}"]
        docs.append("\n".join(out))
    return "\n".join(docs) + "\n"


def write(root: Path, rel: str, text: str, stats: dict, kind: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stats["files"] += 1
    stats["bytes"] += len(text.encode())
    stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1


def generate(out: Path, files: int, seed: int, serving_share: float = 0.03) -> dict:
    r = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    stats = {"seed": seed, "files": 0, "bytes": 0, "kinds": {}, "serving_files": []}
    # Large CRD bundles (a few, like cert-manager / prometheus-operator / external operators).
    crds = [("monitoring.coreos.com", 8, 60), ("cert-manager.io", 6, 50), ("postgresql.cnpg.io", 4, 90),
            ("kafka.strimzi.io", 8, 40), ("external-secrets.io", 5, 45), ("velero.io", 6, 30)]
    for group, kinds, props in crds:
        write(out, f"infrastructure/crds/{group}.yaml", crd_bundle(r, group, kinds, props), stats, "crd-bundle")
    # Chart releases per cluster.
    for cluster in CLUSTERS:
        for chart, url, version in CHARTS:
            hr, repo = helmrelease(r, chart, url, version, r.choice(["infra", "monitoring", "ingress", "platform"]))
            write(out, f"clusters/{cluster}/infrastructure/{chart}/helmrelease.yaml", hr, stats, "helmrelease")
            write(out, f"clusters/{cluster}/infrastructure/{chart}/helmrepository.yaml", repo, stats, "helmrepository")
            write(out, f"clusters/{cluster}/infrastructure/{chart}/kustomization.yaml",
                  kustomization(r, ["helmrepository.yaml", "helmrelease.yaml"], "flux-system"), stats, "kustomization")
        write(out, f"clusters/{cluster}/flux-system/kustomizations.yaml",
              "".join(flux_kustomization(r, f"apps-{ns}", f"apps/{cluster}/{ns}") for ns in NAMESPACES), stats,
              "flux-kustomization")
    serving_target = int(files * serving_share)
    app_index = 0
    dense_names = [f[0] for f in gen_dense.FORMATS]
    dense_weights = [f[2] for f in gen_dense.FORMATS]
    while stats["files"] < files:
        cluster, ns = r.choice(CLUSTERS), r.choice(NAMESPACES)
        app = f"{r.choice(['api', 'worker', 'web', 'cron', 'svc', 'gw', 'sync', 'ingest'])}-{ns}-{app_index}"
        base = f"apps/{cluster}/{ns}/{app}"
        app_index += 1
        # Keep the serving share on track as the tree grows (about serving_share of all files).
        if len(stats["serving_files"]) < serving_target * (stats["files"] + 1) / files:
            name = r.choices(dense_names, dense_weights)[0]
            _, func, _, engine = gen_dense.FORMATS[dense_names.index(name)]
            engine = engine or r.choice(["vllm", "sglang"])
            hazards = set(r.sample(gen_dense.HAZARDS, 1)) if r.random() < 0.15 else set()
            if engine == "sglang":
                hazards.discard("abbrev")
            text = func(gen_dense.Ctx(r, app_index, engine, hazards))
            rel = f"apps/{cluster}/ai/{app}/{'compose' if name == 'compose' else 'values' if name == 'prodstack-values' else 'serving'}.yaml"
            write(out, rel, text, stats, f"serving:{name}")
            stats["serving_files"].append(rel)
            continue
        parts = [("deployment.yaml", deployment, "deployment"), ("service.yaml", service, "service")]
        if r.random() < 0.6:
            parts.append(("configmap.yaml", configmap, "configmap"))
        if r.random() < 0.4:
            parts.append(("ingress.yaml", ingress, "ingress"))
        if r.random() < 0.4:
            parts.append(("hpa.yaml", hpa, "hpa"))
        if r.random() < 0.5:
            parts.append((f"{r.choice(['serviceaccount', 'pdb', 'networkpolicy'])}.yaml", small, "small"))
        for fname, func, kind in parts:
            if stats["files"] >= files - 1:
                break
            write(out, f"{base}/{fname}", func(r, app, ns), stats, kind)
        if stats["files"] < files:
            write(out, f"{base}/kustomization.yaml", kustomization(r, [p[0] for p in parts], ns), stats, "kustomization")
    (out.parent / f"{out.name}.manifest.json").write_text(json.dumps(stats, indent=2) + "\n")
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-q", "-m", "initial GitOps tree")
    return stats


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True)
    return done.stdout


def change_one(out: Path) -> str:
    """Second commit: one serving file changed. Returns the changed path (repo-relative)."""
    manifest = json.loads((out.parent / f"{out.name}.manifest.json").read_text())
    count = int(git(out, "rev-list", "--count", "HEAD").strip())
    if count >= 2:
        return git(out, "diff", "--name-only", "HEAD~1", "HEAD").strip()
    for rel in manifest["serving_files"]:
        text = (out / rel).read_text()
        new, n = re.subn(r"(--max-num-seqs[ =\n\s-]+\"?)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) * 2), text, count=1)
        if n:
            (out / rel).write_text(new)
            git(out, "commit", "-q", "-am", f"raise max-num-seqs in {rel}")
            return rel
    raise SystemExit("no serving file with --max-num-seqs to change")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "gitops")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--change", action="store_true", help="commit a change to one serving file")
    args = parser.parse_args()
    if args.change:
        print(f"changed: {change_one(args.out)}")
        return
    stats = generate(args.out, args.files, args.seed)
    print(f"gitops tree: {stats['files']} files, {stats['bytes'] / 1e6:.2f} MB, "
          f"{len(stats['serving_files'])} serving configs -> {args.out}")


if __name__ == "__main__":
    main()
