"""``cfgcheck capacity``: one row per served model, as JSON or a text table (README, "Capacity")."""

from __future__ import annotations

import json
import os

from ..textsafe import neutralise
from .tables import GiB
from .estimate import CapacityEstimate, estimate
from .needs import NEEDS_FIELDS, memory_needs

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

def capacity_rows(models: list[Any], config: dict | None = None) -> list[dict]:
    rows = []
    for m in models:
        try:
            est = estimate(m, config)
        except Exception as exc:  # one served model must not end the table (lint reports it as CFG000)
            if os.environ.get("CFGCHECK_DEBUG"):
                raise
            est = CapacityEstimate(reasons=[f"not computed: internal error {type(exc).__name__} (a cfgcheck bug)"])
        needs = _needs(m, config)
        row = {
            "path": m.path,
            "line": m.location.line if getattr(m, "location", None) is not None else None,
            "name": m.name,
            "engine": m.engine,
            "engine_version": m.engine_version,
            "model": est.model,
        }
        row.update(est.to_dict())
        row.update(needs.to_dict() if needs is not None else dict.fromkeys(NEEDS_FIELDS))
        if needs is not None:
            row["reasons"].append(needs.summary())
        rows.append(row)
    return rows


def _needs(model: Any, config: dict | None):
    """What one GPU needs when the model names none (capacity/needs.py); None when unknown or not needed."""
    try:
        return memory_needs(model, config)
    except Exception:  # like the estimate above: one served model must not end the table
        if os.environ.get("CFGCHECK_DEBUG"):
            raise
        return None


def _fmt_int(v: Any) -> str:
    return "-" if v is None else f"{int(v):,}"


def _fmt_need(row: dict) -> str:
    """Device memory one GPU needs for one full-length request, when the GPU is not known."""
    if row["fits_on"] is None:
        return "-"
    need = row["min_gpu_memory_bytes"]
    return f"{need / GiB:.1f} GiB" if need else "> any GPU"


def render_capacity(models: list[Any], config: dict | None = None, fmt: str = "text") -> str:
    """``cfgcheck capacity`` output: JSON, or a plain text table with a note per row."""
    rows = capacity_rows(models, config)
    if fmt == "json":
        return json.dumps({"version": 1, "models": rows}, indent=2) + "\n"
    headers = ["NAME", "MODEL", "GPU", "TP", "MAX LEN", "SEQS", "KV B/TOKEN", "POOL TOKENS", "SOURCE", "CONCURRENCY",
               "NEEDS/GPU"]
    table = []
    for r in rows:
        model = (r["model"] or "-").removeprefix("hf://").split("@", 1)[0]  # the revision is noise here
        if len(model) > 40:
            model = "..." + model[-37:]
        gpu = r["gpu"] or "-"
        if r["gpus"]:
            gpu = f"{r['gpus']}x {gpu}"
        table.append([neutralise(cell) for cell in (  # names and paths come from files: no control characters
            r["name"], model, gpu, str(r["tensor_parallel_size"]), _fmt_int(r["max_model_len"]),
            _fmt_int(r["max_num_seqs"]), _fmt_int(r["kv_bytes_per_token"]), _fmt_int(r["kv_pool_tokens"]),
            r["kv_pool_source"], "-" if r["max_concurrency"] is None else f"{r['max_concurrency']:.2f}x",
            _fmt_need(r),
        )])
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for r, row in zip(rows, table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        notes = [f"GPU {r['gpu_shared']}"] if r.get("gpu_shared") else []
        if r.get("kv_pool_evidence"):
            notes.append(f"pool from {r['kv_pool_evidence']}")
        notes.extend(r["reasons"])
        for note in notes:
            lines.append(neutralise(f"    {r['path']}:{r['line']}: {note}"))
    if not rows:
        lines.append("(no served models found)")
    return "\n".join(lines) + "\n"
