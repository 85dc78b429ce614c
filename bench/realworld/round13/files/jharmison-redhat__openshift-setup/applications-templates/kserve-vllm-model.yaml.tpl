# NOTE: Please update this application's name and namespace - it is intended only to scaffold.
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: kserve-vllm-model
  finalizers:
    - resources-finalizer.argocd.argoproj.io
  annotations:
    argocd.argoproj.io/sync-wave: "5"
spec:
  destination:
    name: in-cluster
    namespace: default
  project: default
  source:
    path: charts/kserve-vllm-model
    repoURL: ${ARGO_GIT_URL}
    targetRevision: ${ARGO_GIT_REVISION}
    helm:
      valueFiles: []
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    retry:
      limit: 10
      backoff:
        duration: 10s
        factor: 3
        maxDuration: 60m
    syncOptions:
      - RespectIgnoreDifferences=true
  ignoreDifferences:
    - group: serving.kserve.io
      kind: InferenceService
      jsonPointers:
        - /spec/predictor/maxReplicas
        - /spec/predictor/minReplicas
