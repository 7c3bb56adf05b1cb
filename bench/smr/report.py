# SPDX-License-Identifier: MIT
"""Turn smr.csv into smr.md (markdown fragment), smr.headlines.json and the plots: lock-free
structures under safe-memory-reclamation schemes (issue 31), throughput per structure, workload
and thread count with ratios to `none` and to the better of EBR and token-EBR, peak resident
set, garbage outstanding, grace periods per second, allocators.

Called by bench/smr/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/smr/report.py --csv DIR/smr.csv --raw DIR/smr-raw --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

# Order and labels when smr-raw/designs.tsv (`smr_bench list`) is missing; designs found in the
# CSV and in neither list (a reclaimer added later) follow, in name order.
FALLBACK = [
    ("none", "none (never free: the baseline)"),
    ("grace-sections", "grace default-flavor sections, never free (the read side alone)"),
    ("ebr", "EBR, DEBRA style (3 limbo bags, bulk free)"),
    ("token-ebr", "token EBR, amortized free (Too Epic, PPoPP 2024)"),
    ("urcu-call", "liburcu memb call_rcu, free() callback"),
    ("urcu-defer", "liburcu memb defer_rcu(free, node), after the operation"),
    ("grace-call", "grace call_rcu, free() callback"),
    ("grace-retire", "grace rcu_retire (inline, inside the section)"),
    ("grace-free", "grace free_rcu (caller frees, amortized)"),
    ("grace-free-ms", "grace free_rcu_mightsleep, after the operation"),
    ("grace-qsbr", "grace QSBR, free_qsbr after the operation"),
    ("grace-qsbr-retire", "grace QSBR, qsbr_retire (inline, inside the operation)"),
    ("grace-srcu", "grace srcu domain, call_srcu, free() callback"),
    ("grace-hazptr", "grace hazard pointers, 2 per thread, hazptr_retire"),
]
EBRS = ("ebr", "token-ebr")
DS_ORDER = ["list", "hash", "bst"]
DS_TITLE = {"list": "Harris-Michael list", "hash": "Hash table of Harris-Michael lists",
            "bst": "Natarajan-Mittal BST"}
NO_GARBAGE = "not counted"
# Looks of the designs the report's shared STYLE does not know (gracereport.py keeps those of
# grace-call, grace-qsbr, grace-srcu and none).
LOOK = {
    "ebr": dict(color="#d62728", ls="-", marker="s"),
    "token-ebr": dict(color="#8c564b", ls="-", marker="D"),
    "urcu-call": dict(color="#ff7f0e", ls="-", marker="d"),
    "urcu-defer": dict(color="#ffbb78", ls="--", marker="d"),
    "grace-free": dict(color="#08306b", ls="-", marker="o"),
    "grace-free-ms": dict(color="#6baed6", ls=":", marker="o"),
    "grace-retire": dict(color="#000000", ls="-", marker="*"),
    "grace-qsbr-retire": dict(color="#2ca02c", ls="-", marker="*"),
    "grace-hazptr": dict(color="#9467bd", ls="-", marker="P"),
    "grace-sections": dict(color="#7f7f7f", ls=":", marker="x"),
}
STALL = "glibc+stall"  # the allocator field of the stalled-reader runs' bench names
NO_GPS = {"none": "—", "grace-sections": "—", "urcu-call": "not exposed", "urcu-defer": "not exposed"}


def designs_of(a, d):
    order = []
    path = os.path.join(a.raw, "designs.tsv") if a.raw else ""
    if path and os.path.exists(path):
        with open(path) as f:
            order = [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]
    if not order:
        order = FALLBACK
    seen = set(d.designs())
    out = [(n, lbl) for n, lbl in order if n in seen]
    known = {n for n, _ in out}
    fb = dict(FALLBACK)
    out += [(n, fb.get(n, n)) for n in sorted(seen - known)]
    return out


def parse_bench(b):
    """"bst/65536/u50/glibc" -> ("bst", 65536, 50.0, "glibc"), or None."""
    try:
        ds, rng, u, alloc = b.split("/")
        return ds, int(rng), float(u[1:]), alloc
    except ValueError:
        return None


def pow2(n):
    k = n.bit_length() - 1
    return "2^%d" % k if n == 1 << k else str(n)


def upd(u):
    return "%g%% updates" % u


class Data:
    def __init__(self, d):
        self.d = d
        self.bench = {}  # (ds, range, u, alloc) -> bench string
        for key in d.groups:
            p = parse_bench(key[0])
            if p:
                self.bench[p] = key[0]
        cpus = [v for k, vals in d.groups.items() if k[3] == "cpus" for v in vals]
        self.ncpu = int(gr.median(cpus)) if cpus else d.nproc

    def med(self, p, design, t, metric):
        b = self.bench.get(p)
        return None if b is None else self.d.med(b, design, t, metric)

    def spread(self, p, design, t, metric):
        b = self.bench.get(p)
        return (None, None) if b is None else self.d.spread(b, design, t, metric)

    def pair(self, p, design, refs, t, metric="ops_per_s"):
        """Median of the per-run ratios of design to the best of refs (run.sh runs every design
        of a point back to back within a run)."""
        b = self.bench.get(p)
        return None if b is None else self.d.paired_ratio(b, design, refs, t, metric)

    def pair_runs(self, p, design, refs, t, metric="ops_per_s"):
        """The per-run ratios behind pair()."""
        b = self.bench.get(p)
        return [] if b is None else self.d.paired_ratios(b, design, refs, t, metric)

    def threads(self, p):
        b = self.bench.get(p)
        return [] if b is None else self.d.threads(b, "ops_per_s")

    def points(self, alloc="glibc"):
        """(ds, range, u, t) measured under alloc."""
        out = []
        for p in self.bench:
            if p[3] == alloc:
                out += [(p[0], p[1], p[2], t) for t in self.threads(p)]
        return out


def pair_text(r):
    return "n/a" if r is None or gr.missing(r) else gr.fmt_x(r)


def best_ebr(x, p, t):
    vals = [x.med(p, e, t, "ops_per_s") for e in EBRS]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def col_label(x, rng, t):
    s = "%s keys, %d thr" % (pow2(rng), t)
    return s + " (over)" if t > x.ncpu else s


def throughput_tables(x, designs, md):
    md.append(gr.heading(3, "Throughput"))
    md.append("Million operations per second, median of the runs; in brackets the ratio to "
              "`none` (never free) and to the better of `ebr` and `token-ebr` at the same point "
              "(above 1: faster), each the median over the runs of the ratio within a run (a "
              "run measures every design of a point back to back; a ratio of the medians would "
              "set a run the host slowed against one it did not, bench/smr/about.md). *(over)*: "
              "more threads than CPUs (%d), oversubscribed: the figures show preemption, not "
              "scaling. Allocator: glibc.\n" % x.ncpu)
    pts = x.points("glibc")
    for ds in DS_ORDER:
        for u in sorted({p[2] for p in pts if p[0] == ds}):
            cols = sorted({(p[1], p[3]) for p in pts if p[0] == ds and p[2] == u})
            if not cols:
                continue
            rows = []
            for name, label in designs:
                cells, any_ = [], False
                for rng, t in cols:
                    p = (ds, rng, u, "glibc")
                    v = x.med(p, name, t, "ops_per_s")
                    if v is None:
                        cells.append("n/a")
                        continue
                    any_ = True
                    cells.append("%s (%s, %s)" % (
                        gr.fmt(v / 1e6), pair_text(x.pair(p, name, ["none"], t)),
                        pair_text(x.pair(p, name, EBRS, t))))
                if any_:
                    rows.append(["`%s`" % name] + cells)
            md.append(gr.heading(4, "%s, %s" % (DS_TITLE.get(ds, ds), upd(u))))
            md.append(gr.md_table(["design"] + [col_label(x, r, t) for r, t in cols], rows))


def point_table(x, designs, md, title, text, cell, u=50.0):
    """One row per design, one column per (ds, range) at ncpu threads, glibc."""
    cols = sorted({(p[0], p[1]) for p in x.bench if p[3] == "glibc" and p[2] == u
                   and x.ncpu in x.threads(p)},
                  key=lambda c: (DS_ORDER.index(c[0]) if c[0] in DS_ORDER else 9, c[1]))
    if not cols:
        return
    md.append(gr.heading(3, title))
    md.append(text)
    rows = []
    for name, _ in designs:
        cells = [cell(name, (ds, rng, u, "glibc"), x.ncpu) for ds, rng in cols]
        if any(c != "n/a" for c in cells):
            rows.append(["`%s`" % name] + cells)
    md.append(gr.md_table(["design"] + ["%s %s" % (ds, pow2(r)) for ds, r in cols], rows))


def threads_plot(path, panels, designs, ncpu):
    """Throughput against threads, one panel per structure, one legend for all (the report's
    shared panels_plot repeats the legend under every panel)."""
    fig, axes = gr.plt.subplots(1, len(panels), figsize=(4.0 * len(panels) + 1.9, 4.4),
                                squeeze=False)
    index = {n: i for i, (n, _) in enumerate(designs)}
    handles = {}
    for ax, (title, series) in zip(axes[0], panels):
        for name, ts, ys, lo, hi in series:
            st = dict(gr.style_for(name, index.get(name, 0)), **LOOK.get(name, {}))
            pts = [(t, y, lo_, hi_) for t, y, lo_, hi_ in zip(ts, ys, lo, hi) if y is not None]
            h = ax.errorbar([q[0] for q in pts], [q[1] for q in pts],
                            yerr=[[max(0, q[1] - q[2]) for q in pts],
                                  [max(0, q[3] - q[1]) for q in pts]],
                            color=st["color"], ls=st["ls"], marker=st["marker"],
                            lw=st.get("lw", 1.5), ms=st.get("ms", 6), capsize=2.5,
                            elinewidth=0.8)
            handles.setdefault(name, h)
        allts = sorted({t for ser in series for t in ser[1]})
        ax.set_xscale("log", base=2)
        ax.set_xticks(allts)
        ax.set_xticklabels([str(t) for t in allts])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(bottom=0)
        if allts and max(allts) > ncpu:
            lo_x, hi_x = ax.get_xlim()
            ax.axvspan(ncpu * 1.35, hi_x, color="#f2e6d9", alpha=0.7, zorder=0, lw=0)
            ax.set_xlim(lo_x, hi_x)
        ax.grid(True, alpha=0.35)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("threads (shaded: more than the %d CPUs)" % ncpu, fontsize=9)
    axes[0][0].set_ylabel("Mops/s")
    names = [n for n, _ in designs if n in handles]
    fig.legend([handles[n] for n in names], names, loc="center right", fontsize=8.5,
               framealpha=0.9)
    fig.suptitle("Throughput, 50% updates (glibc): median of the runs, bars min-max",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / (4.0 * len(panels) + 1.9), 1))
    fig.savefig(path, dpi=110)
    gr.plt.close(fig)


def fmt_count(v):
    return "n/a" if v is None else gr.fmt_rate(v).replace(" ", "")


def targets_section(x, md):
    """Issue 31's targets for grace's default flavor (the inline retire, `grace-retire`), at 1
    thread and every thread count up to the CPUs, 5% and 50% updates, every structure: >= 1.1x
    the better of EBR and token-EBR, >= 1.0x never freeing, peak memory <= 1.1x EBR's, and QSBR
    (`grace-qsbr-retire`) >= the default flavor."""
    pts = sorted((q for q in x.points("glibc") if q[3] <= x.ncpu),
                 key=lambda c: (DS_ORDER.index(c[0]) if c[0] in DS_ORDER else 9, c[1], c[2],
                                c[3]))
    rows, met, total, fragile = [], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]

    def verdict(i, v, ok, runs, runs_ok):
        """The median's verdict; where the runs disagree, how many of them met the target
        (a run the host slowed, bench/smr/about.md, can turn a cell's verdict)."""
        if v is None or gr.missing(v):
            return "n/a"
        total[i] += 1
        met[i] += ok
        fragile[i] += 0 < runs_ok < len(runs)
        agree = "" if runs_ok in (0, len(runs)) else " (%d of %d runs)" % (runs_ok, len(runs))
        return "%s %s%s" % (gr.fmt_x(v), "met" if ok else "**missed**", agree)
    for ds, rng, u, t in pts:
        p = (ds, rng, u, "glibc")
        g = x.med(p, "grace-retire", t, "ops_per_s")
        if g is None:
            continue
        cells = []
        for i, (design, refs, metric, good) in enumerate((
                ("grace-retire", EBRS, "ops_per_s", lambda r: r >= 1.1),
                ("grace-retire", ["none"], "ops_per_s", lambda r: r >= 1.0),
                ("grace-retire", ["ebr"], "peak_rss_mb", lambda r: r <= 1.1),
                ("grace-qsbr-retire", ["grace-retire"], "ops_per_s", lambda r: r >= 1.0))):
            v = x.pair(p, design, refs, t, metric)
            runs = x.pair_runs(p, design, refs, t, metric)
            cells.append(verdict(i, v, v is not None and good(v), runs,
                                 sum(1 for r in runs if good(r))))
        # What no reclaimer on this read side can be sure to pass: the sections with nothing
        # freed (`grace-sections`), and no reclaimer at all (`none`), against the best EBR.
        refs = []
        for design in ("grace-sections", "none"):
            v = x.pair(p, design, EBRS, t, "ops_per_s")
            refs.append("n/a" if v is None or gr.missing(v) else gr.fmt_x(v))
        rows.append(["%s %s, %s" % (ds, pow2(rng), upd(u)), str(t)] + cells + refs)
    if not rows:
        return
    md.append(gr.heading(3, "The default flavor against the targets"))
    md.append("Medians over the runs of each run's ratio (a run measures every design of a "
              "point back to back, so a ratio compares designs run seconds apart; a ratio of "
              "medians would mix runs minutes apart, on a host whose speed drifts), glibc, 1 to "
              "%d threads (no oversubscription): `grace-retire` "
              "(the default flavor's inline retire) against the better of `ebr` and `token-ebr` "
              "(target >= 1.1x), against `none` (>= 1.0x), its peak resident set against "
              "`ebr`'s (<= 1.1x), and `grace-qsbr-retire` against `grace-retire` (>= 1.0x). "
              "Met: %s. Where the runs disagree, the cell says how many of them met the "
              "target; such verdicts (%s) can turn with a run the host slowed. The last two "
              "columns are references, no targets: `grace-sections` (the default flavor's "
              "sections, nothing freed) and `none` (no reclaimer at all) against the same best "
              "EBR. Where they are under 1.1x, the target asks the frees themselves to speed "
              "the structure up past what the epoch scheme's frees do: the epoch schemes reuse "
              "each node a few dozen operations after its unlink, hot in cache, and so run at "
              "or above never freeing.\n" % (
                  x.ncpu, ", ".join(
                      "%s %d of %d" % (k, met[i], total[i]) for i, k in enumerate(
                          ("best EBR", "never freeing", "memory", "QSBR"))),
                  ", ".join("%s %d" % (k, fragile[i]) for i, k in enumerate(
                      ("best EBR", "never freeing", "memory", "QSBR")))))
    md.append(gr.md_table(["point", "threads", "vs best EBR", "vs never freeing",
                           "peak memory vs EBR", "QSBR vs default",
                           "sections alone vs best EBR", "never freeing vs best EBR"], rows))


def hazptr_section(x, md, hl, raw):
    """Issue 34: hazard pointers against liburcu's call_rcu at 50% updates (target >= 1.2x),
    and the designs that do not run on a structure, with the reason smr_bench gave."""
    pts = sorted({(p[0], p[1], t) for p in x.bench if p[3] == "glibc" and p[2] == 50.0
                  for t in x.threads(p)},
                 key=lambda c: (DS_ORDER.index(c[0]) if c[0] in DS_ORDER else 9, c[1], c[2]))
    rows = []
    for ds, rng, t in pts:
        p = (ds, rng, 50.0, "glibc")
        h, u = x.med(p, "grace-hazptr", t, "ops_per_s"), x.med(p, "urcu-call", t, "ops_per_s")
        if h is None and u is None:
            continue
        r = x.pair(p, "grace-hazptr", ["urcu-call"], t)
        ok = "n/a" if r is None else ("**met**" if r >= 1.2 else "**missed**")
        rn = x.pair(p, "none", ["urcu-call"], t)
        rows.append(["%s %s" % (ds, pow2(rng)), "%d%s" % (t, " (over)" if t > x.ncpu else ""),
                     "n/a" if h is None else gr.fmt(h / 1e6),
                     "n/a" if u is None else gr.fmt(u / 1e6),
                     "n/a" if r is None else gr.fmt_x(r), ok,
                     "n/a" if rn is None else gr.fmt_x(rn)])
    notes = []
    path = os.path.join(raw, "not_run.txt") if raw else ""
    if path and os.path.exists(path):
        with open(path) as f:
            notes = [line.strip() for line in f if line.strip()]
    if not rows and not notes:
        return
    md.append(gr.heading(3, "Hazard pointers against liburcu call_rcu, 50% updates"))
    md.append("Million operations per second, medians: `grace-hazptr` (a hazard pointer on "
              "every node a traversal reads) and `urcu-call`, and their ratio (the median of "
              "each run's ratio, as in the table above); the target of "
              "issue 34 is 1.2x or more. Every point at 50% updates (glibc). The last column "
              "is the same ratio for `none`, which never frees: what a reclaimer that costs "
              "nothing would reach. Where it is under 1.2x, only a scheme whose frees make the "
              "structure's memory hotter than never freeing does (the epoch schemes' nodes, "
              "freed into the thread's allocator cache within a few dozen operations); a hazard "
              "pointer scheme also pays a publication and a validating reload on every node a "
              "lookup reads, where liburcu's readers pay nothing per node.\n")
    if rows:
        md.append(gr.md_table(["structure", "threads", "grace-hazptr", "urcu-call",
                               "ratio", ">= 1.2x", "none / urcu-call"], rows))
    for n in notes:
        # "DESIGN on DS: not run: REASON", as smr_bench prints it
        head, _, why = n.partition(": not run: ")
        name, _, ds = head.partition(" on ")
        md.append("- `%s` does not run on the %s: %s\n"
                  % (name, DS_TITLE.get(ds, ds), why or n))
    T = x.ncpu
    c = [p for p in x.bench if p[0] == "hash" and p[2] == 50.0 and p[3] == "glibc"
         and p[1] <= 65536 and x.med(p, "grace-hazptr", T, "ops_per_s") is not None
         and x.med(p, "urcu-call", T, "ops_per_s") is not None]
    if c:
        p = max(c, key=lambda q: q[1])
        hl.add("Hash table %s keys, 50%% updates, %d threads: throughput, hazard pointers "
               "against liburcu call_rcu" % (pow2(p[1]), T),
               x.med(p, "grace-hazptr", T, "ops_per_s"), x.med(p, "urcu-call", T, "ops_per_s"),
               "liburcu call_rcu", unit="/s", better="higher", fmt_value="fmt_rate",
               subject="grace hazard pointers", target=("ratio", ">=", 1.2))


def read_series(raw):
    """smr-raw/stall_series.csv: design,bench,t_s,garbage,rss_mb,bound -> {design: [...]}"""
    out = {}
    path = os.path.join(raw, "stall_series.csv") if raw else ""
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            v = line.strip().split(",")
            if len(v) != 6:
                continue
            try:
                out.setdefault(v[0], []).append((float(v[2]), float(v[3]), float(v[4]),
                                                 float(v[5])))
            except ValueError:
                continue
    return out


def stall_section(x, designs, md, hl, raw, out):
    """Issue 34: one reader stalled for the whole run, updaters at 100%: garbage and memory,
    against the hazard pointers' bound H*T + one batch per thread (docs/design.md, 13)."""
    sp = sorted(p for p in x.bench if p[3] == STALL)
    if not sp:
        return
    md.append(gr.heading(3, "A stalled reader: garbage and memory"))
    md.append("One reader begins an operation, looks a key up and then sleeps inside it for the "
              "whole run (`smr_bench --stall`): it holds a read-side section, an EBR "
              "announcement, or the hazard pointers of its lookup. The workers update at 100%. "
              "Garbage: nodes retired and not yet freed (maximum over the run, median over the "
              "runs). The bound is that of docs/design.md, section 13: H\\*T + "
              "`GRACE_HAZPTR_BATCH`\\*T, H the hazard pointers in the process and T the threads "
              "with a retire batch (from `grace_hazptr_get_stats()` during the run, the largest "
              "seen); it applies to hazard pointers only. RCU and EBR have no bound: their "
              "garbage grows with the run's length. *Heap per waiting node*: the peak resident "
              "set less the prefilled one, over the garbage maximum, in bytes: the node's own "
              "chunk and what the reclaimer adds to keep it (a slot, a list link); given where "
              "the garbage reached 100k nodes, so that it dominates the growth.\n")
    rows = []
    for p in sp:
        for t in x.threads(p):
            for name, _ in designs:
                v = x.med(p, name, t, "ops_per_s")
                if v is None:
                    continue
                g = x.med(p, name, t, "garbage_max")
                b = x.med(p, name, t, "garbage_bound")
                rss, base = x.med(p, name, t, "peak_rss_mb"), x.med(p, name, t, "base_rss_mb")
                secs = x.med(p, name, t, "seconds")
                under = "-"
                if b is not None and g is not None:
                    under = "%s (%.0f%% of it)" % ("**yes**" if g <= b else "**no**",
                                                   100.0 * g / b if b else 0)
                per = "-"
                if g and g >= 1e5 and rss is not None and base is not None:
                    per = "%.0f" % ((rss - base) * 1048576.0 / g)
                rows.append(["%s %s" % (p[0], pow2(p[1])), str(t), "`%s`" % name,
                             gr.fmt(v / 1e6), fmt_count(g),
                             "none" if b is None else fmt_count(b), under,
                             "n/a" if rss is None else gr.fmt(rss),
                             "n/a" if base is None else gr.fmt(base), per,
                             "n/a" if secs is None else gr.fmt(secs)])
    md.append(gr.md_table(["structure", "threads", "design", "Mops/s", "garbage max",
                           "bound", "under the bound", "peak RSS (MB)", "after prefill (MB)",
                           "heap per waiting node (B)", "run (s)"], rows))
    ser = read_series(raw)
    if ser:
        index = {n: i for i, (n, _) in enumerate(designs)}
        fig, (ax1, ax2) = gr.plt.subplots(1, 2, figsize=(11.5, 4.4))
        bound = None
        for name in sorted(ser, key=lambda n: index.get(n, 99)):
            pts = ser[name]
            st = dict(gr.style_for(name, index.get(name, 0)), **LOOK.get(name, {}))
            ts = [q[0] for q in pts]
            ax1.plot(ts, [max(q[1], 1) for q in pts], color=st["color"], ls=st["ls"],
                     lw=1.6, label=name)
            ax2.plot(ts, [q[2] for q in pts], color=st["color"], ls=st["ls"], lw=1.6,
                     label=name)
            bs = [q[3] for q in pts if q[3] > 0]
            if bs:
                bound = max(bs) if bound is None else max(bound, max(bs))
        if bound:
            ax1.axhline(bound, color="#9467bd", ls="--", lw=1.0)
            ax1.text(ax1.get_xlim()[1], bound, " hazptr bound\n H*T + batch*T = %d" % bound,
                     va="bottom", ha="right", fontsize=8, color="#9467bd")
        ax1.set_yscale("log")
        ax1.set_ylabel("garbage outstanding (nodes, log scale)")
        ax2.set_ylabel("resident set (MB)")
        ax2.set_ylim(bottom=0)
        for ax in (ax1, ax2):
            ax.set_xlabel("seconds since the start (one reader stalled throughout)")
            ax.grid(True, alpha=0.35)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        ax2.legend(fontsize=8.5, framealpha=0.9)
        p = sp[0]
        fig.suptitle("A stalled reader, %s %s keys, 100%% updates (first run, sampled every "
                     "5 ms)" % (DS_TITLE.get(p[0], p[0]), pow2(p[1])), fontsize=11)
        fig.tight_layout()
        gr.save_fig(fig, os.path.join(out, "smr_stall.png"))
        md.append("![Garbage and resident set with a stalled reader](smr_stall.png)\n")
    T = x.ncpu
    for p in sp:
        g = x.med(p, "grace-hazptr", T, "garbage_max")
        b = x.med(p, "grace-hazptr", T, "garbage_bound")
        if g is not None and b is not None:
            hl.add("Stalled reader, %s %s keys, 100%% updates, %d threads: garbage of hazard "
                   "pointers against their bound H*T + batch*T" % (p[0], pow2(p[1]), T), g, b,
                   "the bound", unit="nodes", better="lower", subject="grace hazard pointers",
                   target=("ratio", "<=", 1.0))
            r = x.med(p, "grace-retire", T, "garbage_max")
            if r is not None:
                hl.add("Stalled reader, %s %s keys, 100%% updates, %d threads: garbage of hazard "
                       "pointers against rcu_retire" % (p[0], pow2(p[1]), T), g, r,
                       "grace rcu_retire", unit="nodes", better="lower",
                       subject="grace hazard pointers")


def main():
    a = gr.family_args(__doc__, "bench/smr/run.sh")
    d = gr.load_bench(a.csv)
    x = Data(d)
    designs = designs_of(a, d)
    labels = dict(designs)
    hl = gr.Headlines("smr", "Safe memory reclamation: lock-free structures")
    T = x.ncpu

    md = [gr.heading(2, "Safe memory reclamation: lock-free structures under each reclaimer"),
          gr.quick_note(a),
          gr.run_line(a, d, "Each run is a process of its own (its peak resident set is its "
                            "own): prefill to half the key range, then the threads run "
                            "lookups, inserts and deletes of random keys. Runs per point: "
                            "%d (figures are their medians), interleaved."
                      % max(1, d.runs(None, "ops_per_s")))]
    md.append("Designs: " + "; ".join("`%s`: %s" % (n, lbl) for n, lbl in designs) + ".\n")

    throughput_tables(x, designs, md)

    def rss_cell(name, p, t):
        v = x.med(p, name, t, "peak_rss_mb")
        if v is None:
            return "n/a"
        return "%s (%s)" % (gr.fmt(v), pair_text(x.pair(p, name, ["ebr"], t, "peak_rss_mb")))
    point_table(x, designs, md, "Peak resident set, 50%% updates, %d threads" % T,
                "Peak resident set of the process (getrusage: the kernel's high-water mark, "
                "prefill included), MB, median; in brackets the median over the runs of the "
                "ratio to `ebr` in the same run (below 1: less memory), as the targets table "
                "takes it. The prefilled structure alone is `base_rss_mb` in the CSV.\n",
                rss_cell)

    def garbage_cell(name, p, t):
        m, mx = x.med(p, name, t, "garbage_mean"), x.med(p, name, t, "garbage_max")
        if m is None:
            return "n/a" if x.med(p, name, t, "ops_per_s") is None else NO_GARBAGE
        return "%s / %s" % (fmt_count(m), fmt_count(mx))
    point_table(x, designs, md, "Garbage outstanding, 50%% updates, %d threads" % T,
                "Nodes retired and not yet freed, sampled every 5 ms from per-thread counters: "
                "mean / maximum over the run (medians over the runs). *not counted*: the "
                "library calls free() itself (grace's free_rcu family), out of the benchmark's "
                "sight; the resident set shows the effect.\n", garbage_cell)

    def gps_cell(name, p, t):
        v = x.med(p, name, t, "gps_per_s")
        m = x.med(p, name, t, "membarriers_per_s")
        if v is None:
            return "n/a" if x.med(p, name, t, "ops_per_s") is None else NO_GPS.get(name, "n/a")
        return gr.fmt_rate(v) + ("" if m is None else " (%s)" % gr.fmt_rate(m))
    point_table(x, designs, md, "Grace periods per second, 50%% updates, %d threads" % T,
                "Grace periods completed per second (grace: the flavor's or domain's count; "
                "`ebr`: epoch advances; `token-ebr`: full rounds of the token); in brackets, "
                "grace's expedited membarrier(2) calls per second, every cause "
                "(`grace_membarrier_calls()`), each an interrupt of every other CPU running the "
                "process. liburcu exposes neither count.\n", gps_cell)

    targets_section(x, md)
    hazptr_section(x, md, hl, a.raw)
    stall_section(x, designs, md, hl, a.raw, a.out)

    # Allocators: points measured under more than one.
    multi = {}
    for p in x.bench:
        if p[3] == STALL:
            continue
        multi.setdefault((p[0], p[1], p[2]), set()).add(p[3])
    for (ds, rng, u), allocs in sorted(multi.items()):
        if len(allocs) < 2:
            continue
        order = ["glibc"] + sorted(allocs - {"glibc"})
        md.append(gr.heading(3, "Allocators: %s %s, %s, %d threads" % (ds, pow2(rng), upd(u), T)))
        md.append("Million operations per second / peak resident set (MB), medians; in "
                  "brackets the median over the runs of the ratio to the better of `ebr` and "
                  "`token-ebr` in the same run (each run measures every design of the point "
                  "back to back, seconds apart: on a host whose speed drifts between runs the "
                  "bracket is the figure to compare designs by). jemalloc and mimalloc by "
                  "LD_PRELOAD of Debian's shared objects.\n")
        rows = []
        for name, _ in designs:
            cells = []
            for al in order:
                pt = (ds, rng, u, al)
                v = x.med(pt, name, T, "ops_per_s")
                m = x.med(pt, name, T, "peak_rss_mb")
                r = x.pair(pt, name, ["ebr", "token-ebr"], T)
                cells.append("n/a" if v is None else "%s (%s) / %s" % (
                    gr.fmt(v / 1e6), "n/a" if r is None else gr.fmt_x(r), gr.fmt(m)))
            if any(c != "n/a" for c in cells):
                rows.append(["`%s`" % name] + cells)
        md.append(gr.md_table(["design"] + order, rows))

    # Plot: throughput against threads, 50% updates, one panel per structure (its range with
    # the most thread counts: 2^10 for the list and 2^16 for the others in the standard run).
    panels = []
    for ds in DS_ORDER:
        cands = [p for p in x.bench if p[0] == ds and p[2] == 50.0 and p[3] == "glibc"]
        if not cands:
            continue
        p = max(cands, key=lambda q: (len(x.threads(q)), q[1]))
        ts = x.threads(p)
        if len(ts) < 2:
            continue
        series = []
        for name, _ in designs:
            ys = [x.med(p, name, t, "ops_per_s") for t in ts]
            if all(y is None for y in ys):
                continue
            sp = [x.spread(p, name, t, "ops_per_s") for t in ts]
            series.append((name, ts, [None if y is None else y / 1e6 for y in ys],
                           [None if v[0] is None else v[0] / 1e6 for v in sp],
                           [None if v[1] is None else v[1] / 1e6 for v in sp]))
        panels.append(("%s, %s keys" % (DS_TITLE[ds], pow2(p[1])), series))
    if panels:
        threads_plot(os.path.join(a.out, "smr_threads.png"), panels, designs, T)
        md.append("![Throughput against threads](smr_threads.png)\n")

    # Plot: peak resident set, 50% updates, T threads, every hash and BST range measured.
    bars = sorted({(p[0], p[1]) for p in x.bench
                   if p[0] in ("hash", "bst") and p[2] == 50.0 and p[3] == "glibc"
                   and x.med(p, "ebr", T, "peak_rss_mb") is not None},
                  key=lambda c: (c[1], c[0]))
    if bars:
        names = [n for n, _ in designs
                 if any(x.med((ds, rng, 50.0, "glibc"), n, T, "peak_rss_mb") is not None
                        for ds, rng in bars)]
        fig, ax = gr.plt.subplots(figsize=(8.5, 4.6))
        groups = [("%s %s" % (ds, pow2(rng)),
                   [x.med((ds, rng, 50.0, "glibc"), n, T, "peak_rss_mb") for n in names], {})
                  for ds, rng in bars]
        gr.grouped_bars(ax, names, groups, "peak RSS (MB)",
                        "Peak resident set, 50%% updates, %d threads (glibc)" % T, logy=True)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: gr.fmt(v, 2)))
        ax.yaxis.set_minor_formatter(FuncFormatter(
            lambda v, _: gr.fmt(v, 1) if gr.fmt(v, 1)[0] in "25" else ""))
        gr.save_fig(fig, os.path.join(a.out, "smr_rss.png"))
        md.append("![Peak resident set](smr_rss.png)\n")

    # Headlines: the BST at 50% updates and the hash table at 5%, as many threads as CPUs, the
    # largest range up to 2^16 (2^16 in the standard run).
    def headline_point(ds, u):
        c = [p for p in x.bench if p[0] == ds and p[2] == u and p[3] == "glibc"
             and p[1] <= 65536 and x.med(p, "ebr", T, "ops_per_s") is not None]
        return max(c, key=lambda q: q[1]) if c else None

    p = headline_point("bst", 50.0)
    if p and x.med(p, "grace-free", T, "ops_per_s") is not None:
        what = "BST %s keys, 50%% updates, %d threads" % (pow2(p[1]), T)
        hl.add("%s: throughput, free_rcu against the better EBR" % what,
               x.med(p, "grace-free", T, "ops_per_s"), best_ebr(x, p, T),
               "best of EBR / token-EBR", unit="/s", better="higher", fmt_value="fmt_rate",
               subject="grace free_rcu")
        hl.add("%s: peak resident set, free_rcu against EBR" % what,
               x.med(p, "grace-free", T, "peak_rss_mb"), x.med(p, "ebr", T, "peak_rss_mb"),
               "EBR", unit="MB", better="lower", subject="grace free_rcu")
        if x.med(p, "urcu-call", T, "ops_per_s") is not None:
            hl.add("%s: throughput, call_rcu" % what, x.med(p, "grace-call", T, "ops_per_s"),
                   x.med(p, "urcu-call", T, "ops_per_s"), "liburcu call_rcu", unit="/s",
                   better="higher", fmt_value="fmt_rate", subject="grace call_rcu")
    p = headline_point("hash", 5.0)
    if p and x.med(p, "grace-free", T, "ops_per_s") is not None:
        hl.add("Hash table %s keys, 5%% updates, %d threads: throughput, free_rcu against "
               "the better EBR" % (pow2(p[1]), T), x.med(p, "grace-free", T, "ops_per_s"),
               best_ebr(x, p, T), "best of EBR / token-EBR", unit="/s", better="higher",
               fmt_value="fmt_rate", subject="grace free_rcu")

    path = gr.write_fragment(a.out, "smr", md)
    hl.write(a.out)
    print("smr: wrote %s" % path)


if __name__ == "__main__":
    main()
