"""Kubernetes workloads whose containers start an engine -> one served model per such container.

Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod, LeaderWorkerSet and any operator resource that
embeds a pod spec: the generic walker, registered last, reads what no other format owned
(``launch/pod_specs.py``). Its index hook records the Kubernetes Services of every file, matched to pods
by selector (the port-mismatch rule).
"""

from __future__ import annotations

from ..core.recognition import ENGINE_MARKERS
from ..launch.pod_specs import workload_models
from ..launch.pods import index_services

MARKERS = ENGINE_MARKERS
INDEX_WORDS = ("service",)  # the index hook records documents of kind Service
index = index_services  # protocol hook
served_models = workload_models  # protocol hook
