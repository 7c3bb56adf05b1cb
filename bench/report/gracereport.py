# SPDX-License-Identifier: MIT
"""The benchmark harness, Python side: the one report module every family uses. CSV loading
(both the long format of bench.h and plain tables), medians, spreads and pooled percentiles,
ratios and number formats, markdown tables, the machine description, the family's command
line, headline figures for the report's summary screen, and matplotlib plots in one house
style. Its C side is bench/common/bench.h, its shell side bench/common/run-args.sh.

Every benchmark family's report script imports this module (run it with Debian's
/usr/bin/python3, which has matplotlib):

    import sys, os
    sys.path.insert(0, os.path.join(ROOT, "bench", "report"))
    import gracereport as gr

    a = gr.family_argparser(__doc__).parse_args()          # --csv --out --cmd --build-type ...
    d = gr.load_bench(a.csv)                               # long format: bench,design,...
    d.med("pair", "grace", 1, "ns_cpu"); d.cell(...)       # median; "median (min-max)"
    md = [gr.heading(2, "Read side"), gr.run_line(a, d)]   # "Command: ... (build: Release) ..."
    hl = gr.Headlines("readside"); hl.add(...); hl.write(a.out)   # the summary screen's rows
    rows = gr.load_csv("out/report/x.csv")                 # plain CSV: list of dicts
    med = gr.summarize(rows, ("design", "threads"), "mops") # {(design, threads): Stat}
    gr.line_plot("out/report/x.png", series, xlabel=..., ylabel=..., title=...)
    md = gr.md_table(["design", "Mops/s"], [[d, gr.fmt(v)] for d, v in ...])

Plots use the Agg backend (no display needed). Colours and markers are fixed per design name
(see STYLE) so the same design looks the same in every figure of the report; unknown names
get colours from a fallback cycle.
"""

import argparse
import csv
import json
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


# ---- the long format of bench.h (bench,design,threads,run,metric,value,unit) ----------------


class BenchData:
    """The rows of a family's long-format CSV, grouped by (bench, design, threads, metric),
    with the machine rows (bench "machine": kernel in the design column, online CPUs in the
    threads column; metrics load1 at run 0 and 1, elapsed_s) in `meta`."""

    def __init__(self, groups, meta, byrun=None):
        self.groups = groups
        self.meta = meta
        self.byrun = byrun or {}  # the same keys -> {run: value}

    def values(self, bench, design, threads, metric):
        return self.groups.get((bench, design, threads, metric), [])

    def has(self, bench, design, threads, metric):
        return bool(self.values(bench, design, threads, metric))

    def med(self, bench, design, threads, metric):
        """Median over the runs, or None when nothing was measured."""
        return median(self.values(bench, design, threads, metric))

    def spread(self, bench, design, threads, metric):
        v = self.values(bench, design, threads, metric)
        return (min(v), max(v)) if v else (None, None)

    def paired_ratio(self, bench, design, refs, threads, metric):
        """Median over the runs of design's value over the largest of refs' values in the same
        run, or None when no run has both. A family that runs every design of a point back to
        back within a run compares designs measured seconds apart this way, not minutes apart
        (a ratio of medians mixes runs): on a host whose speed drifts between runs, the paired
        ratio is the steadier figure."""
        return paired_ratio(self.byrun.get((bench, design, threads, metric), {}),
                            [self.byrun.get((bench, r, threads, metric), {}) for r in refs])

    def paired_ratios(self, bench, design, refs, threads, metric):
        """The per-run ratios behind paired_ratio(), in run order."""
        return paired_ratios(self.byrun.get((bench, design, threads, metric), {}),
                             [self.byrun.get((bench, r, threads, metric), {}) for r in refs])

    def stat(self, bench, design, threads, metric):
        return Stat(self.values(bench, design, threads, metric))

    def cell(self, bench, design, threads, metric, f=None, brackets="()"):
        """"median (min-max)" of the runs, or n/a."""
        f = f or fmt
        v = self.values(bench, design, threads, metric)
        if not v:
            return "n/a"
        return "%s %s%s-%s%s" % (f(median(v)), brackets[0], f(min(v)), f(max(v)), brackets[1])

    def designs(self, bench=None):
        return sorted({k[1] for k in self.groups if bench is None or k[0] == bench})

    def threads(self, bench, metric=None):
        return sorted({k[2] for k in self.groups
                       if k[0] == bench and (metric is None or k[3] == metric)})

    def runs(self, bench=None, metric=None):
        """The largest number of runs behind one point (of one bench and metric)."""
        return max((len(v) for k, v in self.groups.items()
                    if (bench is None or k[0] == bench) and (metric is None or k[3] == metric)),
                   default=0)

    @property
    def kernel(self):
        return self.meta.get("kernel", "?")

    @property
    def nproc(self):
        try:
            return int(self.meta.get("nproc", 0)) or (os.cpu_count() or 1)
        except ValueError:
            return os.cpu_count() or 1

    @property
    def load_start(self):
        return self.meta.get(("load1", 0), "?")

    @property
    def load_end(self):
        return self.meta.get(("load1", 1), "?")

    @property
    def elapsed_s(self):
        return self.meta.get(("elapsed_s", 0), "?")


def load_bench(path):
    """A family's long-format CSV (bench.h's bench_csv_row) as BenchData."""
    groups, meta, byrun = {}, {}, {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["bench"] == "machine":
                meta[(r["metric"], int(r["run"]))] = r["value"]
                meta["kernel"] = r["design"]
                meta["nproc"] = r["threads"]
                continue
            try:
                key = (r["bench"], r["design"], int(r["threads"]), r["metric"])
                v = float(r["value"])
            except (TypeError, ValueError):
                continue  # a truncated last line (a run stopped mid-row)
            groups.setdefault(key, []).append(v)
            try:
                byrun.setdefault(key, {})[int(r["run"])] = v
            except (TypeError, ValueError):
                pass  # no run number: in the medians, not in the paired ratios
    return BenchData(groups, meta, byrun)


def load_samples(raw_dir, prefix):
    """Raw samples written by bench_append_samples() to DIR/<prefix>.<design>.<arg>.txt:
    {(design, arg): ascending list}, arg an int when it is one."""
    out = {}
    if not raw_dir or not os.path.isdir(raw_dir):
        return out
    for name in os.listdir(raw_dir):
        if not (name.startswith(prefix + ".") and name.endswith(".txt")):
            continue
        design, arg = name[len(prefix) + 1:-len(".txt")].rsplit(".", 1)
        try:
            arg = int(arg)
        except ValueError:
            pass
        with open(os.path.join(raw_dir, name)) as f:
            out[(design, arg)] = sorted(float(x) for x in f if x.strip())
    return out


# ---- a family's command line and header ---------------------------------------------------


def family_argparser(doc):
    """The arguments every family's report.py takes (run-args.sh passes them as report_args):
    --csv, --out, --cmd, --build-type, --cpu, --raw, --quick. Add the family's own after."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    ap.add_argument("--csv", required=True, help="the family's long-format CSV")
    ap.add_argument("--out", required=True, help="folder for the markdown fragment and plots")
    ap.add_argument("--raw", default="", help="folder of raw samples, if the family keeps them")
    ap.add_argument("--cmd", default="", help="the command that produced the CSV")
    ap.add_argument("--build-type", default="unknown", help="CMake build type of the binaries")
    ap.add_argument("--cpu", default="", help="CPU model")
    ap.add_argument("--quick", action="store_true", help="a smoke run: say so")
    return ap


def family_args(doc, default_cmd, *extra):
    """Parse a family's arguments: family_argparser()'s, plus extra options given as
    (flag, default, help) tuples, or (flag, default, help, {more add_argument keywords});
    --cmd defaults to default_cmd."""
    ap = family_argparser(doc)
    for flag, default, text, *more in extra:
        ap.add_argument(flag, default=default, help=text, **(more[0] if more else {}))
    a = ap.parse_args()
    a.cmd = a.cmd or default_cmd
    return a


def build_type(build_dir):
    """CMAKE_BUILD_TYPE of a build directory (from its CMakeCache.txt), or "unknown"."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    return line.split("=", 1)[1].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def run_line(a, data, extra=""):
    """The family's opening line: the command, the build type actually used, the machine, the
    load average before and after, the time it took; `extra` is appended."""
    cpu = a.cpu or machine_info()["cpu"]
    s = ("Command: `%s` (build: %s). Machine: %s, %s CPUs, Linux %s; load average %s before, "
         "%s after; %s s in all." % (a.cmd or "?", a.build_type or "unknown", cpu, data.nproc,
                                     data.kernel, data.load_start, data.load_end,
                                     data.elapsed_s))
    return s + (" " + extra if extra else "") + "\n"


def heading(level, title):
    """A markdown heading line ("## title") followed by a blank line."""
    return "#" * level + " " + title + "\n"


def quick_note(a):
    return ("> **Quick smoke run** (`--quick`): short runs that show everything works; the "
            "numbers are not figures to quote.\n" if a.quick else "")


def write_fragment(out, family, md):
    """Write the family's markdown fragment OUT/<family>.md (a list of lines or a string)."""
    path = os.path.join(out, family + ".md")
    with open(path, "w") as f:
        f.write(md if isinstance(md, str) else "\n".join(md).rstrip() + "\n")
    return path


# ---- headline figures: the report's summary screen ----------------------------------------


def compare_words(grace, other, better, other_name="liburcu", subject="grace", near=0.05,
                  words=None):
    """A comparison in plain words: "grace 1.9x faster than liburcu", "grace 12% slower than
    liburcu", "grace about the same as liburcu (within 5%)". better: "lower" when a smaller
    figure is better (a time, a cost), "higher" when a larger one is (a rate). words: the
    (better, worse) adjectives, default ("faster", "slower"), which suits times and rates
    alike; a cost in instructions or bytes wants its own ("fewer instructions", ...)."""
    r = ratio(grace, other)
    if _missing(r):
        return "not measured"
    if r <= 0 or grace <= 0 or other <= 0:
        return "not measurable: a figure at or below zero is within the noise of its baseline"
    gain = (1 / r) if better == "lower" else r  # > 1: grace is better
    if abs(gain - 1) <= near:
        return "%s about the same as %s (within %d%%)" % (subject, other_name, round(near * 100))
    if not words:
        words = ("faster", "slower")
    word = words[0] if gain > 1 else words[1]
    x = gain if gain > 1 else 1 / gain
    amount = "%sx" % fmt(x, 2) if x >= 1.5 else "%d%%" % round((x - 1) * 100)
    return "%s %s %s than %s" % (subject, amount, word, other_name)


class Headlines:
    """The headline figures of one family, for the report's summary screen: each row is one
    figure, grace beside liburcu (or the baseline named) and the seed paper, the ratio, and a
    verdict in plain words. write() saves them as OUT/<family>.headlines.json, which
    bench/report/assemble.py reads.

        hl = gr.Headlines("readside", "Read side")
        hl.add("read-side lock+unlock, ns per pair, 1 thread", grace=0.6, other=0.7,
               other_name="liburcu memb (inline)", unit="ns", better="lower",
               target=("ratio", "<=", 1.0), paper=None)
        hl.write(out)
    """

    def __init__(self, family, title=""):
        self.family = family
        self.title = title
        self.rows = []

    def add(self, what, grace, other=None, other_name="liburcu", unit="", better="lower",
            paper=None, target=None, note="", fmt_value=None, subject="grace", words=None,
            grace_text=None, other_text=None):
        """One figure. grace, other: numbers (None when not measured). paper: a string such
        as "11.0x (8 CPUs)" or None. target: None, or (on, op, value) with on "ratio" (grace /
        other) or "grace", op "<=" or ">="; the verdict says whether it is met. fmt_value: a
        name of this module's formatters ("fmt", "fmt_us", "fmt_rate", "fmt_x", "fmt_bytes",
        "fmt_pct") used to print the values. subject, words: see compare_words(). grace_text,
        other_text: shown instead of a value that is not a number ("never"), with no
        comparison."""
        self.rows.append(dict(what=what, grace=_clean(grace), other=_clean(other),
                              other_name=other_name, unit=unit, better=better, paper=paper,
                              target=list(target) if target else None, note=note,
                              fmt_value=fmt_value or "fmt", subject=subject,
                              words=list(words) if words else None, grace_text=grace_text,
                              other_text=other_text))
        return self

    def write(self, out):
        path = os.path.join(out, self.family + ".headlines.json")
        with open(path, "w") as f:
            json.dump({"family": self.family, "title": self.title, "rows": self.rows}, f,
                      indent=1)
        return path


def _clean(v):
    try:
        return None if v is None or _missing(float(v)) else float(v)
    except (TypeError, ValueError):
        return None


def load_headlines(out, family):
    """The headline rows a family wrote (a list of dicts), or None when it wrote none."""
    try:
        with open(os.path.join(out, family + ".headlines.json")) as f:
            return json.load(f).get("rows", [])
    except (OSError, ValueError):
        return None


def headline_cells(h):
    """The summary screen's cells for one headline row: grace, the other, the ratio, the
    verdict in plain words."""
    f = globals().get(h.get("fmt_value") or "fmt", fmt)
    unit = (" " + h["unit"]) if h.get("unit") and f in (fmt,) else ""

    def val(v):
        return "not measured" if v is None else f(v) + unit
    g, o = h.get("grace"), h.get("other")
    r = ratio(g, o) if g is not None and o is not None else None
    words = []
    if h.get("grace_text") or h.get("other_text"):
        r = None
        gt = h.get("grace_text") or val(g)
        ot = h.get("other_text") or val(o)
        if h.get("note"):
            words.append(h["note"])
        return gt, "%s (%s)" % (ot, h.get("other_name", "")), "—", "; ".join(words)
    if g is None:
        words.append("not measured")
    elif o is not None:
        w = h.get("words")
        if not w and h.get("unit", "").strip() in ("MB", "KB", "kB", "GB", "B", "bytes"):
            w = ("less memory", "more memory")
        words.append(compare_words(g, o, h.get("better", "lower"), h.get("other_name", ""),
                                   h.get("subject", "grace"), words=w))
    t = h.get("target")
    below_noise = g is not None and o is not None and (g <= 0 or o <= 0)
    if below_noise:
        r = None
    if t and g is not None and not below_noise:
        on, op, tv = t
        x = r if on == "ratio" else g
        want = "%s %s" % ("≤" if op == "<=" else "≥",
                          fmt(tv) + "x" if on == "ratio" else val(tv))
        if x is None:
            words.append("target %s not checked" % want)
        else:
            ok = x <= tv if op == "<=" else x >= tv
            words.append("%s the target (%s)" % ("meets" if ok else "**misses**", want))
    if h.get("note"):
        words.append(h["note"])
    other = "—" if o is None else "%s (%s)" % (val(o), h.get("other_name", ""))
    return val(g), other, fmt_x(r) if r is not None else "—", "; ".join(words)


def ratio(a, b):
    """a / b, or nan when either is missing or b is zero."""
    try:
        if a is None or b is None or b == 0 or math.isnan(a) or math.isnan(b):
            return float("nan")
        return a / b
    except TypeError:
        return float("nan")


def missing(v):
    """True for a figure that was not measured: None, nan or inf."""
    return v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v)))


_missing = missing


def fmt(v, digits=3):
    """A number with `digits` significant digits: plain for ordinary magnitudes, scientific
    (5.96e-4) below 0.001, where a fixed number of decimals would print 0.00."""
    if _missing(v):
        return "n/a"
    if v == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(v))))
    if mag < -3:
        m, e = ("%.*e" % (digits - 1, v)).split("e")
        return "%se%d" % (m, int(e))
    decimals = max(0, digits - 1 - mag)
    return "%.*f" % (decimals, v)


def fmt_pct(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return "%.0f%%" % (100.0 * v)


def fmt_x(v):
    """A ratio: three significant digits (scientific below 0.001), four within 2% of 1, where
    three would hide which side of a "<= 1.0x" target it falls on."""
    if _missing(v):
        return "n/a"
    return fmt(v, 4 if 0.98 <= v <= 1.02 else 3) + "x"


def fmt_us(us):
    """A duration given in microseconds, in the unit that reads best: 850 ns, 4.60 us, 10.1 ms,
    2.50 s."""
    if _missing(us):
        return "n/a"
    a = abs(us)
    if a < 1:
        return "%s ns" % fmt(us * 1e3)
    if a < 1e4:
        return "%s us" % fmt(us)
    if a < 1e7:
        return "%s ms" % fmt(us / 1e3)
    return "%s s" % fmt(us / 1e6)


def fmt_rate(x):
    """A rate with an SI prefix: 1.23 M, 45.6 k."""
    if _missing(x):
        return "n/a"
    for div, p in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= div:
            return fmt(x / div) + p
    return fmt(x)


def fmt_bytes(b):
    """A size in bytes: 512 B, 1.50 KiB, 2.00 MiB."""
    if _missing(b):
        return "n/a"
    for div, p in ((1 << 30, " GiB"), (1 << 20, " MiB"), (1 << 10, " KiB")):
        if abs(b) >= div:
            return fmt(b / div) + p
    return fmt(b) + " B"


def verdict(ok):
    """A target's verdict in a table cell: met, **missed**, or n/a (not measured)."""
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def percentile(sorted_values, p):
    """Percentile p in [0, 100] of an ascending list, linear interpolation between closest
    ranks (the rule of bench_percentile_sorted() in bench.h); None when empty."""
    v = sorted_values
    if not v:
        return None
    rank = p / 100.0 * (len(v) - 1)
    lo = int(rank)
    if lo + 1 >= len(v):
        return v[lo]
    return v[lo] + (rank - lo) * (v[lo + 1] - v[lo])


def paired_ratios(num, refs):
    """num: {run: value}; refs: a list of such. Per run, num's value over the largest of refs'
    values in the same run (runs that lack either are left out), in run order."""
    out = []
    for run, v in sorted(num.items()):
        rv = [r[run] for r in refs if run in r]
        if rv and max(rv) != 0:
            out.append(v / max(rv))
    return out


def paired_ratio(num, refs):
    """The median of paired_ratios(), or None when no run has both. BenchData.paired_ratio()
    explains why."""
    out = paired_ratios(num, refs)
    return median(out) if out else None


def median(values):
    """Median of a list, or None when it is empty."""
    return statistics.median(values) if values else None


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
    "grace": dict(color="#1f77b4", ls="-", marker="o", lw=2.2),
    "urcu-memb-percpu": dict(color="#d62728", ls="--", marker="d"),
    "best-lock": dict(color="#8c564b", ls="-", marker="s"),
    "global": dict(color="#c0392b", ls="-", marker="v"),
    "rcu": dict(color="#2471a3", ls="-", marker="o", lw=2.2),
    "none": dict(color="#7f7f7f", ls=":", marker="."),
    "membarrier": dict(color="#9467bd", ls="-", marker="o"),
}
_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d"]


def style_for(name, i=0):
    """The look of a series: fixed per design name; "<design> p99" (or p90) is the design's
    colour, dashed, with open markers' cousin "x", so p50 and p99 of one design pair up."""
    s = dict(lw=1.5, ms=6)
    base, _, pct = name.rpartition(" ")
    if base and pct in ("p50", "p90", "p99") and base in STYLE:
        s.update(STYLE[base])
        if pct != "p50":
            s.update(ls="--", marker="x", lw=1.3)
        return s
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


def save_fig(fig, path):
    """Lay out, write (110 dpi) and close a figure; returns the path."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def grouped_bars(ax, names, groups, ylabel, title, logy=False, rotation=25, legend=True):
    """Bars of several groups side by side for each name. groups: list of (label, values,
    options) with options a dict of matplotlib bar arguments (color, hatch, yerr, ...); a None
    value draws no bar."""
    n = max(1, len(groups))
    w = 0.8 / n
    for j, (glabel, values, opts) in enumerate(groups):
        xs = [i + (j - (n - 1) / 2) * w for i in range(len(names))]
        ys = [float("nan") if v is None else v for v in values]
        kw = dict(edgecolor="black", linewidth=0.4, capsize=2)
        kw.update(opts or {})
        ax.bar(xs, ys, w, label=glabel, **kw)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=rotation, ha="right" if rotation else "center",
                       fontsize=8)
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", which="both", alpha=0.3)
    if legend:
        ax.legend(fontsize=8)


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
