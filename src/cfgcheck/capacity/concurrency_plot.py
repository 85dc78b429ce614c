"""Pool-limited concurrency against max_model_len, per served model: ``cfgcheck capacity --chart FILE``
(a standalone SVG, or an HTML page holding that SVG and the numbers: no script, nothing fetched), and
the points the pull-request summary draws as a Mermaid ``xychart-beta`` (GitHub renders Mermaid code
blocks in comments; it strips inline SVG and cannot show a local image).

Every label comes from a linted file: SVG/HTML text is escaped, Mermaid labels are reduced to a safe
character set by the template's caller.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from .concurrency import concurrency_at
from .estimate import CapacityEstimate, estimate

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
WIDTH, HEIGHT = 920, 480
LEFT, RIGHT, TOP, BOTTOM = 70, 300, 56, 50
MIN_LEN = 1024


def ladder(*lengths: int | None) -> list[int]:
    """Context lengths to plot: powers of two from 1K to the longest length of interest."""
    top = max([n for n in lengths if n] + [8192])
    out, n = [], MIN_LEN
    while n < top * 2 and n <= 1 << 24:
        out.append(n)
        n *= 2
    return out


def curve(est: CapacityEstimate, lengths: list[int]) -> list[tuple[int, float | None]]:
    return [(n, concurrency_at(est, n)) for n in lengths]


def series(models: list[Any], config: dict | None) -> tuple[list[dict], list[str]]:
    """One plotted series per served model with a pool; a line of why for each without one."""
    plotted, skipped = [], []
    for m in models:
        est = estimate(m, config)
        name = f"{m.name} ({m.path})"
        if est.kv_pool_tokens is None and est.num_blocks is None:
            skipped.append(f"{name}: no pool ({'; '.join(est.reasons[:2]) or 'unknown'})")
            continue
        upper = est.architecture.derived_max_len() if est.architecture is not None else None
        points = [(n, c) for n, c in curve(est, ladder(est.max_model_len, upper)) if c is not None and c > 0]
        plotted.append({"name": name, "label": str(m.name), "where": f"{m.path}:{m.location.line}", "points": points, "max_model_len": est.max_model_len,
                        "max_num_seqs": est.max_num_seqs, "at_len": concurrency_at(est, est.max_model_len),
                        "source": est.kv_pool_source})
    return plotted, skipped


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _x(n: float, lo: float, hi: float) -> float:
    return LEFT + (math.log2(n) - math.log2(lo)) / max(1e-9, math.log2(hi) - math.log2(lo)) * (WIDTH - LEFT - RIGHT)


def _y(c: float, lo: float, hi: float) -> float:
    c = min(max(c, lo), hi)
    return HEIGHT - BOTTOM - (math.log10(c) - math.log10(lo)) / max(1e-9, math.log10(hi) - math.log10(lo)) * (HEIGHT - TOP - BOTTOM)


def _axes(xlo: int, xhi: int, ylo: float, yhi: float) -> list[str]:
    out = [f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" stroke="#333"/>',
           f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" stroke="#333"/>']
    n = xlo
    while n <= xhi:
        x = _x(n, xlo, xhi)
        label = f"{n // 1024}K" if n < 1 << 20 else f"{n >> 20}M"
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" stroke="#eee"/>'
                   f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" font-size="11" text-anchor="middle">{label}</text>')
        n *= 2
    for e in range(int(math.floor(math.log10(ylo))), int(math.ceil(math.log10(yhi))) + 1):
        y = _y(10.0 ** e, ylo, yhi)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{10.0 ** e:g}</text>')
    out.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 12}" font-size="12" text-anchor="middle">'
               'max_model_len (tokens, log scale)</text>'
               f'<text x="16" y="{(TOP + HEIGHT - BOTTOM) / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 16 {(TOP + HEIGHT - BOTTOM) / 2})">full-length requests the pool holds</text>')
    return out


def _series_svg(s: dict, colour: str, box: tuple, index: int) -> list[str]:
    xlo, xhi, ylo, yhi = box
    pts = " ".join(f"{_x(n, xlo, xhi):.1f},{_y(c, ylo, yhi):.1f}" for n, c in s["points"])
    out = [f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>']
    if s["max_model_len"] and xlo <= s["max_model_len"] <= xhi:
        x = _x(s["max_model_len"], xlo, xhi)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" stroke="{colour}" stroke-dasharray="6 4"/>')
        if s["at_len"]:
            out.append(f'<circle cx="{x:.1f}" cy="{_y(s["at_len"], ylo, yhi):.1f}" r="4" fill="{colour}"/>')
    if s["max_num_seqs"]:
        y = _y(s["max_num_seqs"], ylo, yhi)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="{colour}" stroke-dasharray="2 3"/>')
    ly = TOP + 8 + index * 58
    legend = [_clip(s["label"], 40), _clip(s["where"], 46),
              f"max_model_len {s['max_model_len'] or '-'}, max_num_seqs {s['max_num_seqs'] or '-'}",
              f"{s['at_len']:.2f}x at max_model_len ({s['source']})" if s["at_len"] else s["source"]]
    legend = [escape(t) for t in legend]
    out.append(f'<rect x="{WIDTH - RIGHT + 12}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>')
    out.extend(f'<text x="{WIDTH - RIGHT + 28}" y="{ly + 1 + i * 13}" font-size="{11 if i == 0 else 10}">{t}</text>'
               for i, t in enumerate(legend))
    return out


def render_svg(plotted: list[dict]) -> str:
    lengths = [n for s in plotted for n, _ in s["points"]] + [s["max_model_len"] or MIN_LEN for s in plotted]
    values = [c for s in plotted for _, c in s["points"]] + [s["max_num_seqs"] or 1 for s in plotted]
    xlo, xhi = MIN_LEN, max(lengths + [8192])
    ylo = 10.0 ** math.floor(math.log10(max(min(values + [1.0]), 1e-3)))
    yhi = 10.0 ** math.ceil(math.log10(max(values + [10.0])))
    body = _axes(xlo, xhi, ylo, yhi)
    for i, s in enumerate(plotted):
        body.extend(_series_svg(s, PALETTE[i % len(PALETTE)], (xlo, xhi, ylo, yhi), i))
    if not plotted:
        body.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no served model with a KV pool</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            'font-family="sans-serif" role="img"><title>Pool-limited concurrency against max_model_len</title>'
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>'
            f'<text x="{LEFT}" y="22" font-size="15">Pool-limited concurrency against max_model_len</text>'
            f'<text x="{LEFT}" y="40" font-size="11" fill="#555">dashed: the configured max_model_len (dot: '
            'concurrency there); dotted: max_num_seqs, the admission window</text>' + "".join(body) + "</svg>\n")


def _length_label(n: int) -> str:
    return f"{n // 1024}K" if n % 1024 == 0 else f"{n / 1000:g}k"


def render_html(plotted: list[dict], skipped: list[str]) -> str:
    rows = "".join(
        f"<tr><td>{escape(s['name'])}</td><td>{s['max_model_len'] or '-'}</td><td>{s['max_num_seqs'] or '-'}</td>"
        f"<td>{'-' if not s['at_len'] else round(s['at_len'], 2)}</td><td>{escape(s['source'])}</td></tr>"
        for s in plotted)
    missing = "".join(f"<li>{escape(line)}</li>" for line in skipped)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cfgcheck capacity</title>"
            "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:left}</style></head><body>"
            "<h1>cfgcheck capacity</h1>" + render_svg(plotted) +
            "<table><tr><th>served model</th><th>max_model_len</th><th>max_num_seqs</th><th>concurrency at max_model_len</th>"
            f"<th>pool</th></tr>{rows}</table>" + (f"<h2>Not plotted</h2><ul>{missing}</ul>" if missing else "") +
            "</body></html>\n")


def write_chart(path: Path, models: list[Any], config: dict | None) -> None:
    """Write the chart as SVG (``.svg``) or a self-contained HTML page (``.html``/``.htm``)."""
    plotted, skipped = series(models, config)
    text = render_svg(plotted) if path.suffix.lower() == ".svg" else render_html(plotted, skipped)
    path.write_text(text, encoding="utf-8")  # OSError: the CLI reports it in one line


def mermaid_points(before: CapacityEstimate | None, after: CapacityEstimate | None) -> dict | None:
    """The before/after curves at shared context lengths, for the summary's Mermaid chart."""
    if before is None or after is None:
        return None
    marks = {n for n in (before.max_model_len, after.max_model_len) if n}
    lengths = sorted(set(ladder(*marks)) | marks)
    b = [c for _, c in curve(before, lengths)]
    a = [c for _, c in curve(after, lengths)]
    if None in a or None in b:
        return None
    # a linear axis: from a sixteenth of the shorter configured length to twice the longer one
    low, high = min(marks or {MIN_LEN}) / 16, max(marks or {MIN_LEN}) * 2
    keep = [i for i in range(len(lengths)) if low <= lengths[i] <= high] or list(range(len(lengths)))
    labels = [f"{_length_label(lengths[i])}{'*' if lengths[i] in marks else ''}" for i in keep]
    return {"labels": labels, "before": [round(b[i], 2) for i in keep], "after": [round(a[i], 2) for i in keep]}
