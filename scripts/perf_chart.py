#!/usr/bin/env python3
"""Draws `symstride bench --json` output as an SVG bar chart (standard library only).

Usage:
    symstride bench --json --threads 2 > ours.json
    python3 scripts/torch_bench.py --threads 2 > torch.json        # optional
    python3 scripts/perf_chart.py ours.json [--torch torch.json] [--title T] -o bench.svg

Left panel: every bandwidth scenario's bandwidth relative to the copy limit measured in
the same run (`vs_copy`: a parallel copy of 64 MiB; `vs_copy_same_bytes`: the same copy
moving the scenario's own bytes), with the limit (1.0) drawn as a line. Right panel (with
`--torch`): for every scenario both files time, PyTorch's time over ours on a log axis
(right of 1: we are faster); a fused program of ours (`X_fused`) is compared with
PyTorch's eager composite `X` and with its library op (`X_torch_*`) where given.
"""

import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

ROW = 18          # pixels per bar row
LABEL_W = 230     # scenario-name column
PANEL_W = 330     # bar area of one panel
GAP = 110         # between the panels
TOP = 100
CLIP = 2.0        # the left panel's axis ends here; longer bars are clipped and say so
BLUE, ORANGE, GREEN, RED, GREY = "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#888"


def load(path):
    with open(path) as f:
        text = f.read()
    # The JSON is the last line that parses (torch_bench.py prints only JSON on stdout,
    # but a redirected stderr may have been mixed in).
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "median_s" in data:
            return data
    sys.exit(f"{path}: no line with a JSON object holding \"median_s\"")


def fmt_time(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def text(x, y, s, anchor="start", size=11, fill="#222", weight="normal"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}" font-weight="{weight}">{escape(s)}</text>')


def rect(x, y, w, h, fill):
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{h:.1f}" fill="{fill}"/>'


def line(x1, y1, x2, y2, stroke=GREY, dash=None, width=1):
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}" stroke-width="{width}"{d}/>')


def copy_panel(ours, x0, y0):
    """Bars of vs_copy and vs_copy_same_bytes per bandwidth scenario."""
    vs = ours.get("vs_copy", {})
    same = ours.get("vs_copy_same_bytes", {})
    names = [n for n in ours["median_s"] if n in vs and not n.startswith("memcpy_64MiB")]
    top = max([1.25] + [vs[n] for n in names] + [same[n] for n in names if n in same])
    top = min(math.ceil(top * 4) / 4, CLIP)  # a cached small scenario can read 5-10x
    sx = PANEL_W / top
    out = [text(x0, y0 - 40, "Bandwidth relative to the copy limit (1.0 = a parallel copy)",
                weight="bold", size=12)]
    out.append(rect(x0, y0 - 30, 10, 10, BLUE))
    out.append(text(x0 + 14, y0 - 21, "vs a copy of 64 MiB", size=10))
    out.append(rect(x0 + 130, y0 - 30, 10, 10, ORANGE))
    out.append(text(x0 + 144, y0 - 21, "vs a copy of the scenario's own bytes", size=10))
    for i, n in enumerate(names):
        y = y0 + i * ROW
        out.append(text(x0 - 6, y + 12, n, anchor="end", size=10))
        for v, dy, colour in [(vs[n], 2, BLUE)] + ([(same[n], 9, ORANGE)] if n in same else []):
            w = min(v, top) * sx
            out.append(rect(x0, y + dy, w, 7, colour))
            label = f"{v:.2f}" + (" (clipped)" if v > top else "")
            out.append(text(x0 + w + 3, y + dy + 7, label, size=8, fill=GREY))
    bottom = y0 + len(names) * ROW
    step = 0.25 if top <= 2 else 0.5
    v = 0.0
    while v <= top + 1e-9:
        x = x0 + v * sx
        out.append(line(x, y0 - 4, x, bottom, stroke="#ddd"))
        out.append(text(x, bottom + 12, f"{v:g}", anchor="middle", size=9, fill=GREY))
        v += step
    out.append(line(x0 + sx, y0 - 8, x0 + sx, bottom + 2, stroke=RED, dash="4,3", width=1.5))
    out.append(text(x0 + sx + 3, bottom + 24, "copy limit", size=9, fill=RED))
    return out, bottom


def torch_pairs(ours, torch):
    """(label, our seconds, PyTorch seconds) for every comparable pair."""
    om, tm = ours["median_s"], torch["median_s"]
    pairs = []
    for n, t in tm.items():
        if n in om:
            pairs.append((n, om[n], t))
            if n + "_fused" in om:
                pairs.append((n + "_fused vs eager", om[n + "_fused"], t))
    for n, t in tm.items():
        if "_torch_" in n:
            base, fn = n.split("_torch_", 1)
            if base + "_fused" in om:
                pairs.append((f"{base}_fused vs torch.{fn}", om[base + "_fused"], t))
    return [p for p in pairs if p[1] > 0 and p[2] > 0]


def torch_panel(pairs, x0, y0):
    """PyTorch's time over ours, log2 axis."""
    ratios = [t / o for _, o, t in pairs]
    lo = min([0.5] + ratios)
    hi = max([2.0] + ratios)
    lo_e, hi_e = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    sx = PANEL_W / (hi_e - lo_e)
    x1 = x0 + (0 - lo_e) * sx  # ratio 1
    out = [text(x0, y0 - 40, "PyTorch's time / ours (log scale; right of 1: we are faster)",
                weight="bold", size=12)]
    out.append(rect(x0, y0 - 30, 10, 10, GREEN))
    out.append(text(x0 + 14, y0 - 21, "faster than PyTorch", size=10))
    out.append(rect(x0 + 130, y0 - 30, 10, 10, RED))
    out.append(text(x0 + 144, y0 - 21, "slower", size=10))
    for i, (label, o, t) in enumerate(pairs):
        y = y0 + i * ROW
        r = t / o
        x = x0 + (math.log2(r) - lo_e) * sx
        out.append(text(x0 - 6, y + 12, label, anchor="end", size=10))
        out.append(rect(min(x, x1), y + 3, abs(x - x1), 12, GREEN if r >= 1 else RED))
        out.append(text(x0 + PANEL_W + 6, y + 12,
                        f"{r:.2f}x ({fmt_time(o)} vs {fmt_time(t)})", size=9, fill=GREY))
    bottom = y0 + len(pairs) * ROW
    for e in range(lo_e, hi_e + 1):
        x = x0 + (e - lo_e) * sx
        out.append(line(x, y0 - 4, x, bottom, stroke="#ddd"))
        out.append(text(x, bottom + 12, f"{2.0 ** e:g}", anchor="middle", size=9, fill=GREY))
    out.append(line(x1, y0 - 8, x1, bottom + 2, stroke="#333", width=1.5))
    return out, bottom


def chart(ours, torch, title):
    body, bottom = copy_panel(ours, LABEL_W, TOP)
    width = LABEL_W + PANEL_W + 50
    if torch is not None:
        pairs = torch_pairs(ours, torch)
        if pairs:
            x0 = width + GAP + 120
            more, b2 = torch_panel(pairs, x0, TOP)
            body += more
            bottom = max(bottom, b2)
            width = x0 + PANEL_W + 170
    height = bottom + 40
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            text(10, 20, title, size=14, weight="bold")]
    return "\n".join(head + body + ["</svg>", ""])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ours", help="output of `symstride bench --json`")
    p.add_argument("--torch", help="output of `scripts/torch_bench.py` (same shape)")
    p.add_argument("--title", default="symstride bench", help="chart title")
    p.add_argument("-o", "--output", default="-", help="SVG file (default: stdout)")
    args = p.parse_args()
    ours = load(args.ours)
    torch = load(args.torch) if args.torch else None
    svg = chart(ours, torch, args.title)
    if args.output == "-":
        sys.stdout.write(svg)
    else:
        with open(args.output, "w") as f:
            f.write(svg)


if __name__ == "__main__":
    main()
