# SPDX-License-Identifier: MIT
"""Report fragment for the hash-table benchmark (bench/hashtable): LJ 2003 Fig. 1, 4 and 5 and
the RCU-vs-locking slides, regenerated from hashbench's CSV.

    /usr/bin/python3 bench/hashtable/report.py --csv out/report/hashtable.csv --out out/report

Writes OUT/hashtable.md, OUT/hashtable_fig1_locks.png, OUT/hashtable_fig4_rcu.png,
OUT/hashtable_fig5_updates.png, OUT/hashtable_summary.csv (medians and spreads) and
OUT/hashtable.headlines.json (its figures for the report's summary). Reads
hashtable_instr.csv (callgrind counts) beside the CSV when run.sh wrote it.

Two figures of merit: operations per second of wall-clock time (the benchmark's), and
operations per CPU-second of the process times the thread count (steadier on a shared machine,
blind to contention between threads that never ran at once). Plots and captions use wall clock
unless the load average before the run exceeded half the cores (--metric overrides).
"""

import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

LOCKS = ["global-spinlock", "global-rwlock", "bucket-spinlock", "bucket-rwlock", "brlock",
         "refcnt"]
GRACE = ["grace-call", "grace-free", "grace-sync", "grace-poll", "grace-qsbr", "grace-qsbr-free",
         "grace-qsbr-sync", "grace-srcu", "grace-hazptr"]
PEERS = ["urcu-memb", "urcu-memb-lgpl"]
REF = ["never-free"]  # the reference PPoPP 2024 measures reclamation against
RCU = GRACE + PEERS
ORDER = ["ideal"] + GRACE + PEERS + REF + LOCKS
LABELS = {
    "ideal": "ideal (1 thread x N)",
    "global-spinlock": "global spinlock",
    "global-rwlock": "global rwlock",
    "bucket-spinlock": "per-bucket spinlock",
    "bucket-rwlock": "per-bucket rwlock",
    "brlock": "brlock",
    "refcnt": "refcnt",
    "grace-call": "grace default (call_rcu)",
    "grace-free": "grace default (free_rcu)",
    "never-free": "never free (leak; grace read side)",
    "grace-sync": "grace default (synchronize_rcu)",
    "grace-poll": "grace default (polled GP, updater frees)",
    "grace-qsbr": "grace qsbr (call_qsbr)",
    "grace-qsbr-free": "grace qsbr (free_qsbr)",
    "grace-qsbr-sync": "grace qsbr (synchronize_qsbr)",
    "grace-srcu": "grace srcu",
    "grace-hazptr": "grace hazard pointers (hazptr_retire)",
    "urcu-memb": "liburcu memb",
    "urcu-memb-lgpl": "liburcu memb, _LGPL_SOURCE",
}
CORES = os.cpu_count() or 2


def label(d):
    return LABELS.get(d, d)


def main():
    a = gr.family_args(__doc__, "bench/hashtable/run.sh",
                       ("--load-before", "", "load average when the run started"),
                       ("--metric", "auto", "figure of merit for plots and captions; auto: "
                        "wall, or CPU time when the load average before the run exceeded half "
                        "the cores", dict(choices=("auto", "wall", "cpu"))))
    rows = gr.load_csv(a.csv)
    if not rows:
        sys.exit("hashtable/report.py: %s is empty" % a.csv)
    os.makedirs(a.out, exist_ok=True)

    W = gr.summarize(rows, ("design", "threads", "update_fraction"), "mops")
    C = gr.summarize([r for r in rows if isinstance(r.get("mops_cpu"), float)],
                     ("design", "threads", "update_fraction"), "mops_cpu")
    try:
        load1 = float(a.load_before.split()[0])
    except (ValueError, IndexError):
        load1 = None
    busy = load1 is not None and load1 > 0.5 * CORES
    metric = a.metric
    if metric == "auto":
        metric = "cpu" if busy and C else "wall"
    S = C if metric == "cpu" else W
    unit = "per CPU-second x threads" if metric == "cpu" else "per second"
    designs = [d for d in ORDER if any(k[0] == d for k in W)]
    designs += sorted({k[0] for k in W} - set(designs))
    reps = len({r["rep"] for r in rows})
    dur = gr.Stat([r["seconds"] for r in rows]).median
    nbuckets = 1024

    def med(d, t, f, src=None):
        s = (src if src is not None else S).get((d, t, f))
        return s.median if s else float("nan")

    # Each repetition runs every design of a point back to back (a few seconds), and the
    # repetitions of a point come later: a ratio of two designs is taken within each
    # repetition, then its median, so that a host whose speed drifts between repetitions
    # does not set one design's fast repetition against another's slow one.
    byrep = {}
    for r in rows:
        for m in ("mops", "mops_cpu"):
            if isinstance(r.get(m), (int, float)):
                byrep.setdefault((r["design"], r["threads"], r["update_fraction"], m),
                                 {})[r["rep"]] = r[m]

    def paired(num, den, t, f, m):
        r = gr.paired_ratio(byrep.get((num, t, f, m), {}), [byrep.get((den, t, f, m), {})])
        return float("nan") if r is None else r

    def has(d, t=None, f=None):
        return any(k[0] == d and (t is None or k[1] == t) and (f is None or k[2] == f)
                   for k in W)

    # ---- summary CSV: both figures of merit ----
    with open(os.path.join(a.out, "hashtable_summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["design", "threads", "update_fraction", "runs", "median_mops", "q1_mops",
                    "q3_mops", "min_mops", "max_mops", "pct_of_ideal", "median_mops_cpu",
                    "pct_of_ideal_cpu"])
        for (d, t, fr), s in sorted(W.items(), key=lambda kv: (ORDER.index(kv[0][0])
                                                                 if kv[0][0] in ORDER else 99,
                                                                 kv[0][1], kv[0][2])):
            c = med(d, t, fr, C)
            w.writerow([d, t, fr, s.n, "%.3f" % s.median, "%.3f" % s.q1, "%.3f" % s.q3,
                        "%.3f" % s.min, "%.3f" % s.max,
                        "%.4f" % gr.ratio(s.median, med("ideal", t, fr, W)), "%.3f" % c,
                        "%.4f" % gr.ratio(c, med("ideal", t, fr, C))])

    # ---- read-only sweep: throughput against threads ----
    ro_all = sorted({k[1] for k in W if k[2] == 0})
    # Per CPU-second figures mean nothing when threads outnumber the CPUs.
    ro_threads = [t for t in ro_all if metric == "wall" or t <= CORES]
    shade = None
    if ro_threads and max(ro_threads) > CORES:
        shade = CORES * 1.41  # between CORES and the next power of two on a log2 axis

    def series(names, xs_all, key):
        out = []
        for d in names:
            xs = [x for x in xs_all if key(d, x) in S]
            if len(xs) < 2:
                continue
            ss = [S[key(d, x)] for x in xs]
            out.append((d, xs, [s.median for s in ss], [s.q1 for s in ss], [s.q3 for s in ss]))
        return out

    def ro_series(names):
        return series(names, ro_threads, lambda d, t: (d, t, 0))

    sub = ("median of %d runs of %.2f s per point, designs interleaved; bars: interquartile "
           "range; %d buckets, one element per chain" % (reps, dur, nbuckets))
    if metric == "cpu":
        sub = ("operations per CPU-second of the process x threads (the machine was busy: "
               "load %s on %d cores); " % (gr.fmt(load1, 2), CORES)) + sub
    over = "oversubscribed: %d cores" % CORES
    ylab = "lookups (M/s%s" % (", per CPU-second x threads" if metric == "cpu" else "")
    figs = {}
    if len(ro_threads) >= 2:
        figs["fig1"] = gr.line_plot(
            os.path.join(a.out, "hashtable_fig1_locks.png"),
            ro_series(["ideal"] + LOCKS), "threads", ylab + ", log scale)",
            "Read-only hash lookups, locking designs (cf. LJ 2003 Fig. 1)", logx=True,
            logy=True, xticks=ro_threads, shade_from=shade, shade_label=over, labels=LABELS,
            subtitle=sub, legend_loc="outside", width=9.0)
        figs["fig4"] = gr.line_plot(
            os.path.join(a.out, "hashtable_fig4_rcu.png"),
            ro_series(["ideal"] + RCU + ["global-rwlock"]), "threads", ylab + ")",
            "Read-only hash lookups, RCU flavors (cf. LJ 2003 Fig. 4)", logx=True,
            xticks=ro_threads, shade_from=shade, shade_label=over, labels=LABELS, subtitle=sub,
            legend_loc="outside", width=9.0)

    # ---- update-fraction sweep at 2 threads ----
    ut = 2 if any(k[1] == 2 and k[2] > 0 for k in W) else None
    fracs = sorted({k[2] for k in W if k[1] == ut}) if ut else []
    if len(fracs) >= 2:
        ticks = [f for f in [0, 0.01, 0.03, 0.1, 0.3, 1] if fracs[0] <= f <= fracs[-1]]

        def ser5(names):
            return series(names, fracs, lambda d, f: (d, ut, f))

        figs["fig5"] = gr.panels_plot(
            os.path.join(a.out, "hashtable_fig5_updates.png"),
            [("RCU flavors, the peer, never-free", ser5(["ideal"] + RCU + REF)),
             ("locking designs (grace default with call_rcu and free_rcu for reference)",
              ser5(["ideal", "grace-call", "grace-free"] + LOCKS))],
            "fraction of operations that are updates (symlog scale)",
            "operations (M/s%s, log scale)" % (", per CPU-second x threads"
                                               if metric == "cpu" else ""),
            "Search / delete+reinsert mix at %d threads (cf. LJ 2003 Fig. 5)" % ut,
            logy=True, symlogx=0.01, xticks=ticks, xticklabels=[gr.fmt(t, 2) for t in ticks],
            labels=LABELS, subtitle=sub, legend_loc="below", width=12.0, height=6.4)

    # ---- targets: both figures of merit ----
    T = 2
    tg = []

    def target(what, num, den, f, need, note=""):
        r = paired(num, den, T, f, "mops")
        rc = paired(num, den, T, f, "mops_cpu")
        ok = "-"
        if need is not None:
            ok = "n/a" if r != r else ("**met**" if r >= need else "**missed**")
            if rc == rc:
                ok += " / " + ("**met**" if rc >= need else "**missed**")
        tg.append([what, gr.fmt_x(need) if need else "-", gr.fmt_x(r), gr.fmt_x(rc), ok, note])

    gdef = "grace-call" if has("grace-call") else "grace-sync"
    for peer in PEERS:
        if has(peer):
            target("read-only: grace default / %s" % label(peer), gdef, peer, 0, 1.3,
                   "%s: %s of ideal (wall), %s (CPU)"
                   % (label(peer), gr.fmt_pct(gr.ratio(med(peer, T, 0, W),
                                                       med("ideal", T, 0, W))),
                      gr.fmt_pct(gr.ratio(med(peer, T, 0, C), med("ideal", T, 0, C)))))
    target("read-only: grace qsbr / ideal", "grace-qsbr", "ideal", 0, 0.98,
           "ideal: %s M/s (wall)" % gr.fmt(med("ideal", T, 0, W)))
    for d in GRACE + PEERS:
        if has(d):
            rcu = d in GRACE and d != "grace-hazptr"  # the 10x target is the RCU flavors'
            target("read-only: %s / global rwlock" % label(d), d, "global-rwlock", 0,
                   10 if rcu else None, "" if rcu else "for reference")
    for d in ["grace-call", "grace-poll", "grace-qsbr", "grace-srcu"] + PEERS:
        if has(d, T, 0.1) and has("global-rwlock", T, 0.1):
            target("10%% updates: %s / global rwlock" % label(d), d, "global-rwlock", 0.1,
                   2.0 if d == "grace-call" else None,
                   "vs per-bucket rwlock: %s (wall), %s (CPU)" % (
                       gr.fmt_x(gr.ratio(med(d, T, 0.1, W), med("bucket-rwlock", T, 0.1, W))),
                       gr.fmt_x(gr.ratio(med(d, T, 0.1, C), med("bucket-rwlock", T, 0.1, C)))))

    # Hazard pointers against grace's default RCU read side (issue 34): lookups with every
    # element protected, at 0% and 10% updates.
    for f in (0, 0.1):
        if has("grace-hazptr", T, f) and has(gdef, T, f):
            target("%s: grace hazptr / %s" % ("read-only" if f == 0 else "10% updates",
                                              label(gdef)),
                   "grace-hazptr", gdef, f, 0.8, "issue 34: a hazard pointer per element")

    # ---- read-only tables ----
    cpu_threads = [t for t in ro_all if t <= CORES and C]
    pct_rows = []
    for d in designs:
        if d == "ideal":
            continue
        cells = [gr.fmt_pct(gr.ratio(med(d, t, 0, W), med("ideal", t, 0, W)))
                 if has(d, t, 0) else "" for t in ro_all]
        cells += [gr.fmt_pct(gr.ratio(med(d, t, 0, C), med("ideal", t, 0, C)))
                  if (d, t, 0) in C else "" for t in cpu_threads]
        pct_rows.append([label(d)] + cells)
    pct_heads = ["design"] + ["%d thr%s" % (t, " (over)" if t > CORES else "")
                              for t in ro_all] + ["%d thr, CPU" % t for t in cpu_threads]
    abs_rows = []
    for d in designs:
        cells = []
        for t in ro_all:
            s = W.get((d, t, 0))
            cells.append("%s ±%.0f%%" % (gr.fmt(s.median), 50 * s.rel_spread) if s else "")
        cells += [gr.fmt(med(d, t, 0, C)) if (d, t, 0) in C else "" for t in cpu_threads]
        abs_rows.append([label(d)] + cells)
    abs_heads = ["design"] + ["%d thr" % t for t in ro_all] + ["%d thr, CPU" % t
                                                              for t in cpu_threads]

    # ---- crossovers ----
    def xo_raw(r, lk, src):
        xs = [f for f in fracs if (r, ut, f) in src and (lk, ut, f) in src]
        return gr.crossover(xs, [med(r, ut, f, src) for f in xs],
                            [med(lk, ut, f, src) for f in xs])

    def xo(r, lk, src):
        """Table cell: the update fraction where r stops beating lk."""
        x, kind = xo_raw(r, lk, src)
        return {"at": gr.fmt(x, 2), "never-loses": "beats it up to %s" % gr.fmt(x, 2),
                "never-wins": "never beats it"}.get(kind, "n/a")

    def xo_words(r, lk, src=None):
        """Sentence: "stops beating per-bucket spinlock at 0.062" and its other endings."""
        x, kind = xo_raw(r, lk, S if src is None else src)
        name = label(lk)
        if kind == "at":
            return "stops beating %s at %s" % (name, gr.fmt(x, 2))
        if kind == "never-loses":
            return "beats %s at every measured fraction (up to %s)" % (name, gr.fmt(x, 2))
        if kind == "never-wins":
            return "never beats %s, not even at %s" % (name, gr.fmt(x, 2))
        return "was not measured against %s" % name

    locks_here = [lk for lk in LOCKS if has(lk, ut)]
    rcu_here = [d for d in RCU if has(d, ut)]

    def cross_table(src):
        return gr.md_table(["RCU design \\ lock"] + [label(lk) for lk in locks_here],
                           [[label(r)] + [xo(r, lk, src) for lk in locks_here]
                            for r in rcu_here])

    # ---- issue 13: the seeds' crossover with free_rcu, and where call_rcu lands ----
    XO_NEED, SPIN_NEED, NF_NEED = 0.25, 1.5, 0.9

    def xo_target(r, src):
        """(cell text, met?) for "r beats the per-bucket spinlock up to >= XO_NEED"."""
        if not fracs or not has(r, ut) or not has("bucket-spinlock", ut):
            return "n/a", None
        x, kind = xo_raw(r, "bucket-spinlock", src)
        if kind == "at":
            return gr.fmt(x, 2), x >= XO_NEED
        if kind == "never-loses":
            return "beyond %s" % gr.fmt(x, 2), True
        if kind == "never-wins":
            return "never (not at %s)" % gr.fmt(x, 2), False
        return "n/a", None

    def verdict(w, c):
        if w is None and c is None:
            return "n/a"
        return " / ".join("-" if v is None else ("**met**" if v else "**missed**")
                          for v in (w, c))

    i13_designs = [d for d in ["grace-free", "grace-call", "grace-poll", "grace-qsbr",
                               "grace-qsbr-free"] + PEERS
                   if has(d, ut)] if ut else []
    i13_rows = []
    for d in i13_designs:
        xw, mw = xo_target(d, W)
        xc, mc = xo_target(d, C) if C else ("n/a", None)
        cells = [label(d), xw, xc]
        for den, need in (("bucket-spinlock", SPIN_NEED), ("never-free", NF_NEED)):
            rw = gr.ratio(med(d, T, 0.1, W), med(den, T, 0.1, W))
            rc = gr.ratio(med(d, T, 0.1, C), med(den, T, 0.1, C))
            cells += [gr.fmt_x(rw), gr.fmt_x(rc)]
        i13_rows.append(cells)
        if d in ("grace-free", "grace-call"):
            note = "" if d == "grace-free" else "call_rcu, against the same targets"
            tg.append(["%s stops beating per-bucket spinlock at (update fraction)" % label(d),
                       ">= %s" % gr.fmt(XO_NEED, 2), xw, xc, verdict(mw, mc), note])
            target("10%% updates: %s / per-bucket spinlock" % label(d), d, "bucket-spinlock",
                   0.1, SPIN_NEED, note)
            if has("never-free", T, 0.1):
                target("10%% updates: %s / never-free" % label(d), d, "never-free", 0.1,
                       NF_NEED, note or "never-free: the reference PPoPP 2024 beats")

    # ---- paper-vs-ours captions (in the figures' metric) ----
    def pct(d, t):
        return gr.fmt_pct(gr.ratio(med(d, t, 0), med("ideal", t, 0)))

    mname = ("per CPU-second, as the machine was busy; wall-clock figures are in the tables"
             if metric == "cpu" else "wall clock")
    t4 = 4 if 4 in ro_threads else max(ro_threads) if ro_threads else T
    cap1 = ("**Paper** (LJ 2003 Fig. 1, 4-CPU 700 MHz P-III, per-bucket locks): at 4 CPUs "
            "rwlock reaches 39%% of ideal, refcnt 54%%, spinlock 57%%; only brlock scales "
            "linearly; rwlock scales negatively from 1 to 2 CPUs. **Here** (%d cores, %s): at "
            "%d threads per-bucket rwlock %s, refcnt %s, per-bucket spinlock %s, brlock %s of "
            "ideal; global rwlock %s, global spinlock %s."
            % (CORES, mname, T, pct("bucket-rwlock", T), pct("refcnt", T),
               pct("bucket-spinlock", T), pct("brlock", T), pct("global-rwlock", T),
               pct("global-spinlock", T)))
    if t4 > CORES:
        cap1 += (" At %d threads (oversubscribed): per-bucket rwlock %s, refcnt %s, "
                 "per-bucket spinlock %s, brlock %s."
                 % (t4, pct("bucket-rwlock", t4), pct("refcnt", t4),
                    pct("bucket-spinlock", t4), pct("brlock", t4)))
    rw12 = gr.ratio(med("global-rwlock", 2, 0), med("global-rwlock", 1, 0))
    if rw12 == rw12 and metric == "wall":
        cap1 += (" Global rwlock from 1 to 2 threads: %s (the paper: negative scaling)."
                 % gr.fmt_x(rw12))
    cap4 = ("**Paper** (LJ 2003 Fig. 4): RCU scales well and keeps good single-CPU "
            "performance, close to ideal. **Here** (%s) at %d threads: grace qsbr %s of "
            "ideal, grace default %s, grace srcu %s, liburcu memb %s (%s with _LGPL_SOURCE). "
            "At 1 thread: grace qsbr %s, grace default %s, liburcu memb %s (%s inlined)."
            % (mname, T, pct("grace-qsbr", T), pct("grace-call", T), pct("grace-srcu", T),
               pct("urcu-memb", T), pct("urcu-memb-lgpl", T), pct("grace-qsbr", 1),
               pct("grace-call", 1), pct("urcu-memb", 1), pct("urcu-memb-lgpl", 1)))
    cap5 = ""
    if len(fracs) >= 2:
        def all_locks(r):
            return "; ".join(xo_words(r, lk) for lk in LOCKS if has(lk, ut))

        cap5 = ("**Paper**: RCU is the best option while fewer than about one third of "
                "accesses are updates (LJ 2003 Fig. 5); the crossover lies at 0.1-0.5 "
                "depending on the CPU (slides: x86 0.2-0.5, IPF 0.1-0.4, Opteron 0.2-0.5, PPC "
                "0.3-0.5), and RCU is optimal below 10%% updates. **Here** (%d threads, %s), "
                "grace default with call_rcu %s. With polled grace periods (the updater frees) "
                "it %s. liburcu memb %s. The synchronize variants pay a whole grace period "
                "per update."
                % (ut, mname, all_locks("grace-call"), all_locks("grace-poll"),
                   xo_words("urcu-memb", "bucket-spinlock")))

    # ---- markdown ----
    md = []
    md.append("## Hash-table lookups: RCU against locking (LJ 2003 Fig. 1, 4, 5)\n")
    if a.quick:
        md.append("> **Quick smoke run** (`--quick`): one short run per point; the numbers "
                  "show that everything runs, not how fast.\n")
    if busy:
        md.append("> **The machine was busy** (load average %s on %d cores before the run): "
                  "wall-clock throughput depends on how much CPU the other work left, so the "
                  "figures and captions use operations per CPU-second of the process instead "
                  "(benchmark threads and library workers, times the thread count). That "
                  "figure cannot see contention between threads that did not run at the same "
                  "time, nor time a thread spent blocked (the synchronize variants look "
                  "better than they are): re-run on a quiet machine before quoting lock "
                  "scaling.\n"
                  % (a.load_before, CORES))
    md.append(
        "The seeds' mini-benchmark (bench/hashtable): a dense array of %d buckets, doubly "
        "linked chains with one element each, integer keys. Each operation picks a random key "
        "and either searches for it or, with probability *update fraction*, deletes its "
        "element and inserts a fresh one (so the table keeps its loading). Every design has "
        "its own compiled inner loop (no indirect call per operation). Locks are glibc's "
        "(`pthread_spinlock_t`, writer-preferring `pthread_rwlock_t`); RCU updaters take the "
        "bucket's spinlock and free the old element after a grace period: by `synchronize_*`, "
        "by `call_*`, or (grace-poll) in batches the updater frees itself once "
        "`poll_state_synchronize_rcu()` says their grace period is over. *ideal* is the "
        "single-thread, unsynchronized figure times the thread count, as the slides define "
        "it. Each point is the median of %d runs of %.2f s; runs of all designs and points "
        "are interleaved. This machine has %d cores: thread counts above %d are "
        "oversubscribed (shaded in the plots) and measure behaviour under preemption, not "
        "scaling.\n" % (nbuckets, reps, dur, CORES, CORES))
    if a.cmd:
        md.append("Command: `%s` (build: %s)%s\n" % (a.cmd, a.build_type,
                                                     ("; load average before the run: %s"
                                                      % a.load_before) if a.load_before else ""))
    md.append("### Targets (%d threads)\n" % T)
    md.append("Medians over the repetitions of each repetition's ratio (every design of a "
              "point runs back to back within a repetition). *wall*: operations per second of "
              "elapsed time, the benchmark's figure. *CPU*: operations per CPU-second the "
              "process used (benchmark threads and the libraries' worker threads), steadier "
              "when other work shares the machine but blind to contention between threads "
              "that did not run at the same time and to time spent blocked; on a quiet "
              "machine trust *wall*. The verdict column reads wall / CPU.\n")
    md.append(gr.md_table(["target", "needed", "wall", "CPU", "met?", "note"], tg,
                          align="lrrrll"))
    md.append("")
    if "fig1" in figs:
        md.append("### Read-only lookups, locking designs (LJ Fig. 1)\n")
        md.append("![read-only, locking](%s)\n" % os.path.basename(figs["fig1"]))
        md.append(cap1 + "\n")
    if "fig4" in figs:
        md.append("### Read-only lookups, RCU (LJ Fig. 4)\n")
        md.append("![read-only, RCU](%s)\n" % os.path.basename(figs["fig4"]))
        md.append(cap4 + "\n")
    md.append("Read-only lookups, percent of ideal (wall clock; *CPU* columns: per "
              "CPU-second):\n")
    md.append(gr.md_table(pct_heads, pct_rows))
    md.append("")
    ipath = os.path.join(os.path.dirname(os.path.abspath(a.csv)), "hashtable_instr.csv")
    if os.path.exists(ipath):
        irows = [r for r in gr.load_csv(ipath) if r.get("update_fraction", 0) == 0]
        base = next((r["per_op"] for r in irows if r["design"] == "ideal"), None)
        irows.sort(key=lambda r: ORDER.index(r["design"]) if r["design"] in ORDER else 99)
        md.append("Instructions per read-only operation, one thread (`valgrind "
                  "--tool=callgrind`, the measured loop only, callees included: the random "
                  "key, the search, the loop; *ideal* is exactly that, so the difference is "
                  "the synchronization; repeatable, unlike the timings):\n")
        md.append(gr.md_table(["design", "instructions/op", "over ideal"],
                              [[label(r["design"]), gr.fmt(r["per_op"]),
                                "" if base is None or r["design"] == "ideal"
                                else "+" + gr.fmt(r["per_op"] - base)] for r in irows]))
        md.append("")
    md.append("Read-only lookups, M/s (wall clock: median ± half the interquartile range, in "
              "percent; *CPU*: per CPU-second x threads):\n")
    md.append(gr.md_table(abs_heads, abs_rows))
    md.append("")
    if "fig5" in figs:
        md.append("### Update fraction (LJ Fig. 5; slides' crossover)\n")
        md.append("![update fraction](%s)\n" % os.path.basename(figs["fig5"]))
        md.append(cap5 + "\n")
        md.append("Update fraction at which each RCU design stops beating each lock (%d "
                  "threads, %s; interpolated between the measured fractions %s):\n"
                  % (ut, "per CPU-second" if metric == "cpu" else "wall clock",
                     ", ".join(gr.fmt(f, 2) for f in fracs)))
        md.append(cross_table(S))
        md.append("")
        if C and metric == "wall":
            md.append("The same, per CPU-second:\n")
            md.append(cross_table(C))
            md.append("")
        elif metric == "cpu":
            md.append("The same, wall clock (disturbed by the other work on the machine):\n")
            md.append(cross_table(W))
            md.append("")
        if i13_rows:
            md.append("#### free_rcu: the seeds' crossover (issue 13)\n")
            md.append("At %d threads: the update fraction at which each design stops beating "
                      "the per-bucket spinlock (target for grace default with free_rcu: >= "
                      "%s), and its ratio to the per-bucket spinlock (target >= %s) and to "
                      "never-free (target >= %s) at 10%% updates. *never-free* leaks the old "
                      "element (the reference PPoPP 2024's schemes are measured against). "
                      "free_rcu frees on the updater, as many per call as it allocates, into its "
                      "allocator cache; call_rcu frees on the callback worker.\n"
                      % (ut, gr.fmt(XO_NEED, 2), gr.fmt_x(SPIN_NEED), gr.fmt_x(NF_NEED)))
            md.append(gr.md_table(["design", "crossover (wall)", "crossover (CPU)",
                                   "/ spinlock at 0.1 (wall)", "(CPU)",
                                   "/ never-free at 0.1 (wall)", "(CPU)"], i13_rows,
                                  align="lllrrrr"))
            md.append("")
        mix_rows = [[label(d)] + [gr.fmt(med(d, ut, f)) if (d, ut, f) in S else ""
                                  for f in fracs] for d in designs]
        md.append("Operations, M/s%s, at %d threads, by update fraction:\n"
                  % (" per CPU-second x threads" if metric == "cpu" else "", ut))
        md.append(gr.md_table(["design"] + [gr.fmt(f, 2) for f in fracs], mix_rows))
        md.append("")
    md.append("Raw runs: `hashtable.csv`; medians and spreads (both figures of merit): "
              "`hashtable_summary.csv`%s.\n"
              % ("; instruction counts: `hashtable_instr.csv`" if os.path.exists(ipath) else ""))
    path = gr.write_fragment(a.out, "hashtable", md)

    # ---- headline figures for the report's summary ----
    hl = gr.Headlines("hashtable", "Hash table")
    peer = "urcu-memb-lgpl" if has("urcu-memb-lgpl") else "urcu-memb"
    note = "per CPU-second: the machine was busy" if metric == "cpu" else ""
    hl.add("Hash lookups, read-only, %d threads (M/s)" % T, med(gdef, T, 0), med(peer, T, 0),
           label(peer), unit="M/s", better="higher", target=("ratio", ">=", 1.3), note=note)
    hl.add("Hash lookups, read-only, %d threads: grace qsbr against ideal (M/s)" % T,
           med("grace-qsbr", T, 0), med("ideal", T, 0), "ideal", unit="M/s", better="higher",
           target=("ratio", ">=", 0.98), paper="RCU close to ideal (LJ 2003 Fig. 4)",
           note=note)
    if has(gdef, T, 0.1):
        hl.add("Hash operations, 10%% updates, %d threads (M/s)" % T, med(gdef, T, 0.1),
               med("global-rwlock", T, 0.1), "global rwlock", unit="M/s", better="higher",
               target=("ratio", ">=", 2.0), note=note)
    if len(fracs) >= 2 and has("bucket-spinlock", ut):
        xg, kg = xo_raw(gdef, "bucket-spinlock", S)
        xu, ku = xo_raw(peer, "bucket-spinlock", S)

        def text(x, kind):
            return {"at": None, "never-loses": "beyond %s" % gr.fmt(x, 2),
                    "never-wins": "never (below %s)" % gr.fmt(x, 2)}.get(kind, "n/a")
        hl.add("Update fraction where RCU stops beating the per-bucket spinlock",
               xg if kg == "at" else None, xu if ku == "at" else None, label(peer),
               better="higher", paper="about 1/3 (0.1-0.5 by CPU; LJ 2003 Fig. 5, slides)",
               grace_text=text(xg, kg), other_text=text(xu, ku), note=note,
               words=("higher", "lower"))
        if has("grace-free", ut):
            xf, kf = xo_raw("grace-free", "bucket-spinlock", S)
            hl.add("Update fraction where grace default with free_rcu stops beating the "
                   "per-bucket spinlock", xf if kf in ("at", "never-loses") else None,
                   xu if ku == "at" else None, label(peer), better="higher",
                   paper="about 1/3 (0.1-0.5 by CPU; LJ 2003 Fig. 5, slides)",
                   target=("grace", ">=", 0.25), grace_text=text(xf, kf),
                   other_text=text(xu, ku), note=note, words=("higher", "lower"))
    hl.write(a.out)
    print("hashtable: wrote %s" % path)


if __name__ == "__main__":
    main()
