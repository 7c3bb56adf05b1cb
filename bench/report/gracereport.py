# SPDX-License-Identifier: MIT
"""Shared helpers for grace's benchmark report: CSV loading, medians and spreads, ratios,
markdown tables, machine description, and matplotlib plots in one house style.

Every benchmark family's report script imports this module (run it with Debian's
/usr/bin/python3, which has matplotlib):

    import sys, os
    sys.path.insert(0, os.path.join(ROOT, "bench", "report"))
    import gracereport as gr

    rows = gr.load_csv("out/report/x.csv")                 # list of dicts, numbers converted
    med = gr.summarize(rows, ("design", "threads"), "mops") # {(design, threads): Stat}
    gr.line_plot("out/report/x.png", series, xlabel=..., ylabel=..., title=...)
    md = gr.md_table(["design", "Mops/s"], [[d, gr.fmt(v)] for d, v in ...])

Plots use the Agg backend (no display needed). Colours and markers are fixed per design name
(see STYLE) so the same design looks the same in every figure of the report; unknown names
get colours from a fallback cycle.
"""

import csv
import math
import os
import platform
import re
import statistics
import subprocess
import textwrap
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg"))
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

# ---- data --------------------------------------------------------------------------------


def _num(v):
    """Convert a CSV field to int or float when it is one; leave other strings alone."""
    if v is None:
        return v
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def load_csv(path):
    """Rows of a CSV file as dicts, numeric fields converted."""
    with open(path, newline="") as f:
        return [{k: _num(v) for k, v in r.items()} for r in csv.DictReader(f)]


class Stat:
    """Median and spread of repeated measurements."""

    def __init__(self, values):
        self.values = sorted(values)
        self.n = len(self.values)
        self.median = statistics.median(self.values) if self.values else float("nan")
        self.min = self.values[0] if self.values else float("nan")
        self.max = self.values[-1] if self.values else float("nan")
        if self.n >= 4:
            q = statistics.quantiles(self.values, n=4, method="inclusive")
            self.q1, self.q3 = q[0], q[2]
        else:
            self.q1, self.q3 = self.min, self.max

    @property
    def rel_spread(self):
        """(q3 - q1) / median: how noisy the point is."""
        if not self.median or self.n < 2:
            return 0.0
        return (self.q3 - self.q1) / self.median

    def __repr__(self):
        return "Stat(median=%g, n=%d, q1=%g, q3=%g)" % (self.median, self.n, self.q1, self.q3)


def summarize(rows, keys, value):
    """{tuple(row[k] for k in keys): Stat(values)}; a single key gives plain (not tuple) keys."""
    groups = {}
    for r in rows:
        k = tuple(r[x] for x in keys)
        if len(keys) == 1:
            k = k[0]
        groups.setdefault(k, []).append(r[value])
    return {k: Stat(v) for k, v in groups.items()}


def ratio(a, b):
    """a / b, or nan when either is missing or b is zero."""
    try:
        if a is None or b is None or b == 0 or math.isnan(a) or math.isnan(b):
            return float("nan")
        return a / b
    except TypeError:
        return float("nan")


def fmt(v, digits=3):
    """A number with `digits` significant digits (no exponent for ordinary magnitudes)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if v == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(v))))
    decimals = max(0, digits - 1 - mag)
    return "%.*f" % (decimals, v)


def fmt_pct(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return "%.0f%%" % (100.0 * v)


def fmt_x(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return fmt(v, 3) + "x"


def md_table(headers, rows, align=None):
    """A GitHub-flavoured markdown table. align: string of 'l'/'r' per column (default: first
    column left, the rest right)."""
    if align is None:
        align = "l" + "r" * (len(headers) - 1)
    out = ["| " + " | ".join(str(h) for h in headers) + " |",
           "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def crossover(xs, a, b):
    """First x at which series a stops beating series b (a[i] >= b[i] before, < after),
    interpolated linearly in log(a/b) between the two measured points. Returns
    (x, kind) with kind "at" (a crossing), "never-loses" (a >= b everywhere), "never-wins"
    (a < b at the first point), or "n/a"."""
    pts = [(x, ratio(p, q)) for x, p, q in zip(xs, a, b)]
    pts = [(x, r) for x, r in pts if r == r and r > 0]
    if not pts:
        return float("nan"), "n/a"
    if pts[0][1] < 1:
        return pts[0][0], "never-wins"
    for (x0, r0), (x1, r1) in zip(pts, pts[1:]):
        if r0 >= 1 > r1:
            l0, l1 = math.log(r0), math.log(r1)
            t = l0 / (l0 - l1) if l0 != l1 else 0.0
            return x0 + t * (x1 - x0), "at"
    return pts[-1][0], "never-loses"


# ---- machine ----------------------------------------------------------------------------


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info():
    """Dict describing the machine: cpu, cores, kernel, glibc, liburcu, compiler, date, load."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        glibc = ""
    urcu = _run(["pkg-config", "--modversion", "liburcu"]) or \
        _run(["dpkg-query", "-W", "-f=${Version}", "liburcu-dev"])
    cc = _run(["cc", "--version"]).splitlines()
    load = os.getloadavg()
    return {
        "cpu": cpu or platform.processor() or "unknown",
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "glibc": glibc,
        "liburcu": urcu or "not found",
        "compiler": cc[0] if cc else "unknown",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "load": "%.2f %.2f %.2f" % load,
    }


def load_average():
    return "%.2f %.2f %.2f" % os.getloadavg()


# ---- plots ------------------------------------------------------------------------------

# Fixed look per design name, shared by every family.
STYLE = {
    "ideal": dict(color="black", ls="--", marker="", lw=1.6),
    "global-spinlock": dict(color="#d62728", ls="-", marker="v"),
    "global-rwlock": dict(color="#e377c2", ls="-", marker="^"),
    "bucket-spinlock": dict(color="#8c564b", ls="-", marker="s"),
    "bucket-rwlock": dict(color="#bcbd22", ls="-", marker="D"),
    "brlock": dict(color="#9467bd", ls="-", marker="P"),
    "refcnt": dict(color="#7f7f7f", ls="-", marker="X"),
    "grace-call": dict(color="#1f77b4", ls="-", marker="o", lw=2.2),
    "grace-sync": dict(color="#6baed6", ls=":", marker="o"),
    "grace-poll": dict(color="#08306b", ls="-.", marker="o"),
    "grace-qsbr": dict(color="#2ca02c", ls="-", marker="*", lw=2.2, ms=9),
    "grace-qsbr-sync": dict(color="#98df8a", ls=":", marker="*", ms=9),
    "grace-srcu": dict(color="#17becf", ls="-", marker="h", lw=2.0),
    "urcu-memb": dict(color="#ff7f0e", ls="-", marker="d", lw=2.0),
    "urcu-memb-lgpl": dict(color="#ffbb78", ls="--", marker="d"),
    "urcu-qsbr": dict(color="#c5b0d5", ls="--", marker="p"),
}
_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d"]


def style_for(name, i=0):
    s = dict(lw=1.5, ms=6)
    s.update(STYLE.get(name, dict(color=_FALLBACK[i % len(_FALLBACK)], ls="-", marker="o")))
    return s


def _new_fig(width=7.5, height=4.6):
    plt.rcParams.update({"font.size": 9.5, "axes.titlesize": 11, "axes.labelsize": 10,
                         "legend.fontsize": 8.2, "figure.dpi": 100})
    fig, ax = plt.subplots(figsize=(width, height))
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _draw(ax, series, labels, logx, logy, symlogx, xticks, xticklabels, shade_from,
          shade_label, ylim, title, xlabel, ylabel, legend_loc):
    for i, (name, xs, ys, lo, hi) in enumerate(series):
        st = style_for(name, i)
        pts = [(x, y, l, h) for x, y, l, h in
               zip(xs, ys, lo or [None] * len(xs), hi or [None] * len(xs))
               if y is not None and y == y and (not logy or y > 0)]
        if not pts:
            continue
        px = [p[0] for p in pts]
        py = [p[1] for p in pts]
        yerr = None
        if lo is not None and hi is not None:
            yerr = [[max(0.0, p[1] - p[2]) for p in pts], [max(0.0, p[3] - p[1]) for p in pts]]
        ax.errorbar(px, py, yerr=yerr, label=labels.get(name, name), color=st["color"],
                    ls=st["ls"], marker=st["marker"], lw=st["lw"], ms=st["ms"], capsize=2.5,
                    elinewidth=0.8, zorder=3 if name.startswith("grace") else 2)
    if logx:
        ax.set_xscale("log", base=2)
    if symlogx is not None:
        ax.set_xscale("symlog", linthresh=symlogx, linscale=0.6)
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt(v, 2)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    if xticks is not None:
        ax.set_xticks(xticks)
        ax.set_xticklabels(xticklabels or [str(x) for x in xticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
    if ylim is not None:
        ax.set_ylim(*ylim)
    elif not logy:
        ax.set_ylim(bottom=0)
    if shade_from is not None:
        lo_x, hi_x = ax.get_xlim()
        ax.axvspan(shade_from, hi_x, color="#f2e6d9", alpha=0.7, zorder=0, lw=0)
        ax.set_xlim(lo_x, hi_x)
        if shade_label:
            ax.text(0.985, 0.97, shade_label, transform=ax.transAxes, ha="right", va="top",
                    fontsize=8, color="#8a6d3b")
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend_loc == "outside":
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1, framealpha=0.9,
                  borderaxespad=0.0)
    elif legend_loc == "below":
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, framealpha=0.9)
    elif legend_loc:
        ax.legend(loc=legend_loc, ncol=1, framealpha=0.9)


def line_plot(path, series, xlabel, ylabel, title, logx=False, logy=False, symlogx=None,
              xticks=None, xticklabels=None, shade_from=None, shade_label=None,
              legend_loc="best", subtitle=None, labels=None, width=7.5, height=4.6,
              ylim=None):
    """One line per series. series: ordered list of (name, xs, medians, lows, highs); lows and
    highs (the spread, drawn as error bars) may be None. labels: {name: legend label}.
    legend_loc: a matplotlib location, "outside" (right of the axes) or "below".
    shade_from: x from which the background is shaded (e.g. oversubscribed thread counts).
    symlogx: linear threshold for a symlog x axis (shows 0 and a log range)."""
    fig, ax = _new_fig(width, height)
    _draw(ax, series, labels or {}, logx, logy, symlogx, xticks, xticklabels, shade_from,
          shade_label, ylim, title, xlabel, ylabel, legend_loc)
    bottom = _subtitle(fig, subtitle, width, height)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _subtitle(fig, text, width, height):
    """Small grey note under the axes, wrapped to the figure's width; returns the fraction of
    the figure's height it takes (the bottom margin to leave for it)."""
    if not text:
        return 0.0
    lines = textwrap.wrap(text, max(40, int(width * 17)))
    fig.text(0.5, 0.005, "\n".join(lines), ha="center", va="bottom", fontsize=7.5,
             color="#555555")
    return min(0.3, (0.012 + 0.0155 * len(lines)) * 4.6 / height)


def panels_plot(path, panels, xlabel, ylabel, title, logx=False, logy=False, symlogx=None,
                xticks=None, xticklabels=None, shade_from=None, shade_label=None,
                legend_loc="below", subtitle=None, labels=None, width=11.0, height=5.2):
    """Side-by-side panels sharing the y axis, one (panel_title, series) per panel; each
    panel as in line_plot(). For figures with too many lines for one axes."""
    plt.rcParams.update({"font.size": 9.5, "axes.titlesize": 10.5, "axes.labelsize": 10,
                         "legend.fontsize": 8.0, "figure.dpi": 100})
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height), sharey=True)
    if len(panels) == 1:
        axes = [axes]
    for i, (ax, (ptitle, series)) in enumerate(zip(axes, panels)):
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        _draw(ax, series, labels or {}, logx, logy, symlogx, xticks, xticklabels, shade_from,
              shade_label, None, ptitle, xlabel, ylabel if i == 0 else None, legend_loc)
        if i:
            ax.tick_params(labelleft=True)
    fig.suptitle(title, fontsize=11.5)
    bottom = _subtitle(fig, subtitle, width, height)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def bar_plot(path, names, values, ylabel, title, ref=None, ref_label=None, labels=None,
             errs=None, logy=False, width=7.5, height=4.2, value_fmt=None):
    """Horizontal-label bar chart, one bar per name, coloured by design; an optional reference
    line (ref) such as ideal. errs: list of (low, high) or None."""
    fig, ax = _new_fig(width, height)
    labels = labels or {}
    xs = list(range(len(names)))
    cols = [style_for(n, i)["color"] for i, n in enumerate(names)]
    yerr = None
    if errs:
        yerr = [[max(0.0, v - e[0]) for v, e in zip(values, errs)],
                [max(0.0, e[1] - v) for v, e in zip(values, errs)]]
    ax.bar(xs, values, color=cols, yerr=yerr, capsize=3, edgecolor="black", lw=0.5, zorder=2)
    if ref is not None:
        ax.axhline(ref, color="black", ls="--", lw=1.2, label=ref_label, zorder=3)
        ax.legend(loc="best")
    if value_fmt:
        for x, v in zip(xs, values):
            ax.text(x, v, value_fmt(v), ha="center", va="bottom", fontsize=7.5)
    ax.set_xticks(xs)
    ax.set_xticklabels([labels.get(n, n) for n in names], rotation=30, ha="right")
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def git_describe(root):
    return _run(["git", "-C", root, "describe", "--always", "--dirty"]) or "unknown"


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def anchor(title):
    """The anchor GitHub gives a markdown heading: lower case, punctuation dropped, spaces to
    hyphens."""
    t = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return t.replace(" ", "-")
