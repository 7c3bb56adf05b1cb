# SPDX-License-Identifier: MIT
"""Turn scaling.csv, scaling_hash.csv and the raw samples into scaling.md, the scaling_*.png
plots and the family's headline figures.

Called by bench/scaling/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/scaling/report.py --csv DIR/scaling.csv --raw DIR/scaling-raw \
        --hash-csv DIR/scaling_hash.csv --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

LABELS = {
    "grace": "grace default",
    "grace-nopark": "grace default, parking off",
    "urcu-memb": "liburcu memb",
    "grace-qsbr": "grace QSBR",
    "urcu-qsbr": "liburcu QSBR",
    "grace-call": "grace default (call_rcu)",
    "urcu-memb-lgpl": "liburcu memb (inline)",
    "urcu-memb-percpu": "liburcu memb, a worker per CPU",
    "bucket-spinlock": "per-bucket spinlock",
    "bucket-rwlock": "per-bucket rwlock",
    "brlock": "brlock",
    "ideal": "ideal",
    "none": "bare thread (no RCU)",
    "best-lock": "best lock",
    "global": "global lock (Linux 2.5.42)",
    "rcu": "RCU (ipc-rcu)",
}
LOCKS = ["bucket-spinlock", "bucket-rwlock", "brlock"]
SEED_CPUS = (4, 8, 16)  # where the seeds measured (LJ 2003: 4 CPUs; FREENIX 2003: 8) and the target


def label(x):
    return LABELS.get(x, x)


def labels_for(series):
    """Legend labels: a design's label, with " p50" / " p99" kept for latency series."""
    out = {}
    for name, *_ in series:
        base, _, pct = name.rpartition(" ")
        out[name] = "%s %s" % (label(base), pct) if pct in ("p50", "p99") else label(name)
    return out


class Ctx:
    """What every section needs: the data, the CPU count, the thread list, the plot style."""

    def __init__(self, a):
        self.a = a
        self.d = gr.load_bench(a.csv)
        self.ncpu = self.d.nproc
        self.over = 2 * self.ncpu
        self.raw = a.raw
        self.hash = gr.load_csv(a.hash_csv) if a.hash_csv and os.path.exists(a.hash_csv) \
            else []
        self.hl = gr.Headlines("scaling", "Scaling")
        self.md = []

    def section(self, present, title, text):
        """Open a section (heading and method text) when there is something to show."""
        if present:
            self.md += [gr.heading(3, title), text + "\n"]
        return bool(present)

    def top(self, ts):
        """The largest measured count that is not oversubscribed."""
        return min(self.ncpu, max(ts))

    def tl(self, t):
        """A thread count as a table label: "4", "4 (oversubscribed)"."""
        return "%d%s" % (t, " (oversubscribed)" if t > self.ncpu else "")

    def shade(self, xs):
        return (self.ncpu + 0.5) if xs and max(xs) > self.ncpu else None

    def png(self, name):
        return os.path.join(self.a.out, "scaling_%s.png" % name)

    def plot(self, name, series, xs, xlabel, ylabel, title, logy=True, logx=True, sub=None):
        if not any(len(s[1]) for s in series):
            return None
        gr.line_plot(self.png(name), series, xlabel, ylabel, title, logx=logx, logy=logy,
                     xticks=xs, shade_from=self.shade(xs),
                     shade_label="oversubscribed: %d CPUs" % self.ncpu,
                     labels=labels_for(series),
                     legend_loc="best", subtitle=sub)
        self.md.append("![%s](%s)\n" % (title, os.path.basename(self.png(name))))
        return name


def med_of(values):
    return gr.median(values) if values else None


# ---- sections ---------------------------------------------------------------------------------


def readers(c):
    d = c.d
    ts = d.threads("pair", "ns_wall")
    if not c.section(ts, "Read-side sections per second",
                     "T threads each run empty read-side sections (lock + unlock) back to back "
                     "for a fixed time, pinned one per CPU up to %d threads, unpinned beyond "
                     "(`readside_bench pair`). Million pairs per second, all threads together "
                     "(median of the runs of T x 1000 / ns per pair, wall clock). *Scaling*: "
                     "the figure at T over T times the figure at 1 thread (1.0 = perfect)."
                     % c.ncpu):
        return

    def mps(x, t):
        return med_of([t * 1e3 / v for v in d.values("pair", x, t, "ns_wall") if v > 0])
    ds = [x for x in ("grace", "urcu-memb", "grace-qsbr", "urcu-qsbr") if mps(x, ts[0])]
    rows = []
    for t in ts:
        row = [c.tl(t)]
        for x in ds:
            m, m1 = mps(x, t), mps(x, 1)
            row.append("%s (%s)" % (gr.fmt(m), gr.fmt(gr.ratio(m, m1 * t) if m1 else None, 2)))
        row.append(gr.fmt_x(gr.ratio(mps("grace", t), mps("urcu-memb", t))))
        rows.append(row)
    c.md.append(gr.md_table(["threads"] + ["%s, M pairs/s (scaling)" % label(x) for x in ds] +
                            ["grace / liburcu memb"], rows))
    c.plot("readers", [(x, ts, [mps(x, t) for t in ts], None, None) for x in ds], ts,
           "threads", "million read-side pairs per second (log)",
           "Read-side sections per second against threads")
    top = c.top(ts)
    c.hl.add("Read-side sections per second, %d threads (one per CPU), million" % top,
             mps("grace", top), mps("urcu-memb", top), "liburcu memb", unit="M/s",
             better="higher")


def hash_section(c):
    if not c.section(c.hash, "Hash-table lookups at 0%, 10% and 30% updates",
                     "The hash-table family's benchmark (`hashbench`: 1024 buckets, one "
                     "element per chain, an update deletes an element and inserts a fresh one) "
                     "at each thread count, grace (default flavor, call_rcu) against liburcu "
                     "memb (inline) and the locks; *best lock* is, at each point, the fastest "
                     "of per-bucket spinlock, per-bucket rwlock and brlock (named in brackets). "
                     "*ideal*: one unsynchronized thread's figure times T. Million operations "
                     "per second (wall clock), median of the runs."):
        return
    S = gr.summarize(c.hash, ("design", "threads", "update_fraction"), "mops")
    ts = sorted({k[1] for k in S})

    def m(x, t, f):
        s = S.get((x, t, f))
        return s.median if s else None

    def best(t, f):
        cand = [(m(lk, t, f), lk) for lk in LOCKS if m(lk, t, f) is not None]
        return max(cand) if cand else (None, None)
    panels = []
    for f in (0.0, 0.1, 0.3):
        rows = []
        for t in ts:
            g, u, i = m("grace-call", t, f), m("urcu-memb-lgpl", t, f), m("ideal", t, f)
            b, bn = best(t, f)
            rows.append([c.tl(t), gr.fmt(g), gr.fmt(u), "%s (%s)" % (gr.fmt(b), label(bn))
                         if bn else "n/a", gr.fmt(i), gr.fmt_x(gr.ratio(g, u)),
                         gr.fmt_x(gr.ratio(g, b)), gr.fmt_pct(gr.ratio(g, i))])
        c.md.append("**%d%% updates**\n" % round(f * 100))
        c.md.append(gr.md_table(["threads", "grace", "liburcu", "best lock", "ideal",
                                 "grace / liburcu", "grace / best lock", "grace, % of ideal"],
                                rows))
        series = [(x, ts, [m(x, t, f) for t in ts], None, None)
                  for x in ("ideal", "grace-call", "urcu-memb-lgpl")]
        series.append(("best-lock", ts, [best(t, f)[0] for t in ts], None, None))
        panels.append(("%d%% updates" % round(f * 100), series))
    gr.panels_plot(c.png("hash"), panels, "threads", "million operations per second (log)",
                   "Hash-table operations against threads", logx=True, logy=True, xticks=ts,
                   shade_from=c.shade(ts), labels=LABELS, legend_loc="below")
    c.md.append("![hash-table operations against threads](%s)\n"
                % os.path.basename(c.png("hash")))
    top = c.top(ts)
    for f in (0.0, 0.1, 0.3):
        c.hl.add("Hash lookups, %d%% updates, %d threads, million ops/s" % (round(f * 100), top),
                 m("grace-call", top, f), m("urcu-memb-lgpl", top, f), "liburcu memb (inline)",
                 unit="M/s", better="higher",
                 note="best lock (%s): %s M/s" % (label(best(top, f)[1]),
                                                  gr.fmt(best(top, f)[0])))
    c.seed["hash"] = (m, best)


def semop(c):
    d = c.d
    ts = d.threads("semop-own", "ops_per_s")
    if not ts:
        if d.values("fail", "semop", 0, "not_built"):
            c.md.append(gr.heading(3, "semopbench"))
            c.md.append("Not measured: `semopbench` (ipc/) is not built in this build.\n")
        return
    c.section(ts, "semopbench: System V semaphores, RCU against the global lock",
              "The IPC case study's benchmark (`ipc/bench`'s `semopbench --mode own`): each "
                "worker alternates semop(+1) and semop(-1) on a set of its own; the global lock "
                "is Linux 2.5.42's design, RCU is ipc-rcu. semop calls per second, median of "
                "the runs; the ratio is the median of the per-run ratios. The FREENIX 2003 "
                "paper measured 11.0x on 8 CPUs (Table 5).")

    def rate(x, t):
        return d.med("semop-own", x, t, "ops_per_s")

    def rr(t):
        return med_of([r / g for r, g in zip(d.values("semop-own", "rcu", t, "ops_per_s"),
                                             d.values("semop-own", "global", t, "ops_per_s"))
                       if g > 0])
    rows = [[c.tl(t), gr.fmt_rate(rate("global", t)), gr.fmt_rate(rate("rcu", t)),
             gr.fmt_x(rr(t)), "11.0x" if t == 8 else ""] for t in ts]
    c.md.append(gr.md_table(["threads", "global lock, op/s", "RCU, op/s", "RCU / global",
                             "paper (8 CPUs)"], rows))
    c.plot("semop", [(x, ts, [rate(x, t) for t in ts], None, None) for x in ("global", "rcu")],
           ts, "threads", "semop calls per second (log)", "semopbench against threads")
    top = c.top(ts)
    c.hl.add("semopbench, %d threads on own sets, semop calls/s" % top, rate("rcu", top),
             rate("global", top), "the global lock", fmt_value="fmt_rate", better="higher",
             subject="RCU", words=("more", "fewer"),
             paper="RCU 11.0x the global lock on 8 CPUs (FREENIX 2003 Table 5)")
    c.seed["semop"] = rr


def pooled(c, prefix, design, arg, p):
    v = c.samples.setdefault(prefix, gr.load_samples(c.raw, prefix)).get((design, arg))
    return gr.percentile(v, p) if v else None


def sync(c):
    ts = sorted({k[1] for k in gr.load_samples(c.raw, "sync")})
    if not c.section(ts, "synchronize_rcu latency with every other CPU reading",
                     "At T threads: T - 1 reader threads run back-to-back sections (a "
                     "dereference and a load each), pinned one per CPU while they fit, and the "
                     "updater, on the first CPU, times back-to-back `synchronize_rcu()` calls "
                     "(`readside_bench sync`). Percentiles pooled over the runs, microseconds."):
        return
    rows = []
    for t in ts:
        g50, g99 = pooled(c, "sync", "grace", t, 50), pooled(c, "sync", "grace", t, 99)
        u50, u99 = pooled(c, "sync", "urcu-memb", t, 50), pooled(c, "sync", "urcu-memb", t, 99)
        rows.append([c.tl(t), gr.fmt_us(g50), gr.fmt_us(g99), gr.fmt_us(u50), gr.fmt_us(u99),
                     gr.fmt_x(gr.ratio(g50, u50)), gr.fmt_x(gr.ratio(g99, u99))])
    c.md.append(gr.md_table(["threads (readers + updater)", "grace p50", "grace p99",
                             "liburcu memb p50", "liburcu memb p99", "p50 grace / liburcu",
                             "p99 grace / liburcu"], rows))
    c.plot("sync", [("%s p%d" % (x, p), ts, [pooled(c, "sync", x, t, p) for t in ts], None,
                     None) for x in ("grace", "urcu-memb") for p in (50, 99)], ts,
           "threads (one updater, the rest reading)", "synchronize latency, us (log)",
           "synchronize_rcu latency with every other CPU reading")
    top = c.top(ts)
    c.hl.add("synchronize_rcu p50 with %d other CPU%s reading" % (top - 1, "" if top == 2
                                                                   else "s"),
             pooled(c, "sync", "grace", top, 50), pooled(c, "sync", "urcu-memb", top, 50),
             "liburcu memb", fmt_value="fmt_us", better="lower")


def callrcu(c):
    d = c.d
    ts = d.threads("tput", "mcb_per_s")
    if not c.section(ts, "call_rcu throughput",
                     "T threads call `call_rcu` as fast as they can (pinned one per CPU while "
                     "they fit), then `rcu_barrier()`; million callbacks per second to the end "
                     "of the barrier, median of the runs (`callbacks_bench tput`, a pool of "
                     "65536 objects per thread)."):
        return
    ds = [x for x in ("grace", "urcu-memb", "urcu-memb-percpu") if d.has("tput", x, ts[0],
                                                                           "mcb_per_s")]
    rows = [[c.tl(t)] + [gr.fmt(d.med("tput", x, t, "mcb_per_s")) for x in ds] +
            [gr.fmt_x(gr.ratio(d.med("tput", "grace", t, "mcb_per_s"),
                               d.med("tput", "urcu-memb", t, "mcb_per_s")))] for t in ts]
    c.md.append(gr.md_table(["producers"] + ["%s, M/s" % label(x) for x in ds] +
                            ["grace / liburcu memb"], rows))
    c.plot("callrcu", [(x, ts, [d.med("tput", x, t, "mcb_per_s") for t in ts], None, None)
                       for x in ds], ts, "producer threads",
           "million callbacks per second (log)", "call_rcu throughput against producers")
    top = c.top(ts)
    c.hl.add("call_rcu throughput, %d producers, million callbacks/s" % top,
             d.med("tput", "grace", top, "mcb_per_s"),
             d.med("tput", "urcu-memb", top, "mcb_per_s"), "liburcu memb", unit="M/s",
             better="higher")


def membarrier(c):
    s = gr.load_samples(c.raw, "membarrier")
    c.samples["membarrier"] = s
    spin = sorted(k[1] for k in s if k[0] == "spin")
    sleep = sorted(k[1] for k in s if k[0] == "sleep")
    if not spin and not sleep:
        if any(k[3] == "unsupported" for k in c.d.groups):
            c.md.append(gr.heading(3, "membarrier cost"))
            c.md.append("Not measured: this kernel has no private expedited membarrier.\n")
        return
    c.md.append(gr.heading(3, "The cost of membarrier against the CPUs running the process"))
    c.md.append("One `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` (what grace's default "
                "flavor, and liburcu memb, pay per grace period) interrupts every CPU that is "
                "running a thread of the process at that moment. Here K threads of the process "
                "spin, each pinned to a CPU of its own, and the main thread, pinned to the "
                "first CPU, times the call: *CPUs running the process* is K + 1. Beyond the "
                "CPU count nothing is pinned (every CPU runs a thread of the process). "
                "*Sleeping threads*: no spinner, M threads of the process asleep (a "
                "thread-per-connection server at rest): they run on no CPU, so they should "
                "cost nothing. Percentiles pooled over the runs. We know of no published curve "
                "of this cost against busy CPUs.\n")
    rows = []
    for n in spin:
        rows.append([c.tl(n) if n <= c.ncpu else "%d threads on %d CPUs (oversubscribed)"
                     % (n, c.ncpu), gr.fmt_us(pooled(c, "membarrier", "spin", n, 50)),
                     gr.fmt_us(pooled(c, "membarrier", "spin", n, 99))])
    for m in sleep:
        rows.append(["1, with %d sleeping threads" % m,
                     gr.fmt_us(pooled(c, "membarrier", "sleep", m, 50)),
                     gr.fmt_us(pooled(c, "membarrier", "sleep", m, 99))])
    c.md.append(gr.md_table(["CPUs running the process", "p50", "p99"], rows))
    c.plot("membarrier", [("membarrier p%d" % p, spin,
                           [pooled(c, "membarrier", "spin", n, p) for n in spin], None, None)
                          for p in (50, 99)], spin, "CPUs running a thread of the process",
           "membarrier(PRIVATE_EXPEDITED), us (log)",
           "The cost of one expedited membarrier against busy CPUs", logx=False)
    top = min(c.ncpu, max(spin)) if spin else None
    if top and 1 in spin and top > 1:
        c.hl.add("membarrier(PRIVATE_EXPEDITED) p50, %d CPUs running the process against 1"
                 % top, pooled(c, "membarrier", "spin", top, 50),
                 pooled(c, "membarrier", "spin", 1, 50), "on 1 CPU", fmt_value="fmt_us",
                 better="lower", subject="on %d busy CPUs" % top)


SWEEP_PAIRS = (("grace", "urcu-memb"), ("grace-qsbr", "urcu-qsbr"))


def sweep(c):
    s = gr.load_samples(c.raw, "sweep")
    c.samples["sweep"] = s
    d = c.d
    ns = sorted({k[1] for k in s} | set(d.threads("sweep", "failed")))
    if not ns:
        return
    c.md.append(gr.heading(3, "Grace periods against registered idle threads"))
    c.md.append("N threads each run one read-side section, which registers them (QSBR: "
                "register, one section, a quiescent state, then offline), and sleep; the main "
                "thread, registered nowhere, times back-to-back synchronize calls after 20 "
                "untimed ones (`scalebench sweep`, 2000 calls per run). p50 / p99 pooled over "
                "the runs, microseconds. None of the N threads reads while it is timed: a "
                "grace period whose cost grows with N follows the threads that exist, not the "
                "ones that read. grace's default flavor parks threads it finds idle over a few "
                "grace periods (the untimed ones are enough) and then scans only the others; "
                "*parking off* is the same run with `GRACE_NO_PARK=1`, every registered "
                "thread scanned. *Growth*: the figure at N over the figure at 8 threads "
                "(targets at 1024 threads: p50 within 2x, p99 within 3x).\n")

    def cell(x, n):
        f = d.values("sweep", x, n, "failed")
        if f:
            made = med_of(d.values("sweep", x, n, "created"))
            return "could not create (%s made)" % gr.fmt(made)
        p50, p99 = pooled(c, "sweep", x, n, 50), pooled(c, "sweep", x, n, 99)
        if p50 is None:
            return "n/a"
        stop = " (cut at budget)" if any(d.values("sweep", x, n, "stopped_at_budget")) else ""
        return "%s / %s%s" % (gr.fmt(p50), gr.fmt(p99), stop)

    def growth(x, n, p):
        return gr.ratio(pooled(c, "sweep", x, n, p), pooled(c, "sweep", x, 8, p))
    rows = []
    for n in ns:
        row = [n]
        for g, u in SWEEP_PAIRS:
            row += [cell(g, n), cell(u, n),
                    "%s / %s" % (gr.fmt_x(growth(g, n, 50)), gr.fmt_x(growth(g, n, 99)))]
        row.insert(2, cell("grace-nopark", n))
        rows.append(row)
    c.md.append(gr.md_table(["registered idle threads", "grace p50 / p99",
                             "grace, parking off p50 / p99", "liburcu memb p50 / "
                             "p99", "grace growth p50 / p99", "grace QSBR (offline) p50 / p99",
                             "liburcu QSBR (offline) p50 / p99", "grace QSBR growth"], rows,
                            align="r" * 8))
    tg = []
    for x in ("grace", "grace-qsbr"):
        for p, lim in ((50, 2.0), (99, 3.0)):
            gv = growth(x, 1024, p)
            tg.append(["%s: p%d at 1024 threads within %sx of 8 threads" % (label(x), p,
                                                                           gr.fmt(lim)),
                       gr.fmt_x(gv), gr.verdict(None if gr.missing(gv) else gv <= lim)])
    c.md.append(gr.md_table(["target", "measured", "verdict"], tg, align="lll"))
    series = []
    for x in ("grace", "grace-nopark", "urcu-memb", "grace-qsbr", "urcu-qsbr"):
        for p in (50, 99):
            xs = [n for n in ns if pooled(c, "sweep", x, n, p) is not None]
            series.append(("%s p%d" % (x, p), xs, [pooled(c, "sweep", x, n, p) for n in xs],
                           None, None))
    if any(len(sr[1]) for sr in series):
        gr.line_plot(c.png("sweep"), series, "registered idle threads",
                     "synchronize latency, us (log)",
                     "Grace-period latency against registered idle threads", logx=True,
                     logy=True, xticks=ns, legend_loc="outside", width=9.0,
                     labels=labels_for(series))
        c.md.append("![grace periods against registered idle threads](%s)\n"
                    % os.path.basename(c.png("sweep")))
    for g, u in SWEEP_PAIRS:
        for p in (50, 99):
            c.hl.add("%s with 1024 registered idle threads: synchronize p%d" % (label(g), p),
                     pooled(c, "sweep", g, 1024, p), pooled(c, "sweep", u, 1024, p), label(u),
                     fmt_value="fmt_us", better="lower")
        c.hl.add("%s: synchronize p50 growth from 8 to 1024 idle threads" % label(g),
                 pooled(c, "sweep", g, 1024, 50), pooled(c, "sweep", g, 8, 50),
                 "at 8 threads", fmt_value="fmt_us", better="lower",
                 target=("ratio", "<=", 2.0), subject="at 1024 threads")


def lifecycle(c):
    s = gr.load_samples(c.raw, "lifecycle")
    c.samples["lifecycle"] = s
    ds = [x for x in ("none", "grace", "urcu-memb", "grace-qsbr", "urcu-qsbr") if (x, 1) in s]
    if not c.section(ds, "A short-lived reader thread: creation, first read, exit",
                     "Create a thread, let it run its first read-side section (registration "
                "included; liburcu: register first) and exit (unregistration included), join "
                "it (`scalebench lifecycle`). Microseconds per thread, pooled over the runs; "
                "*over the bare thread*: minus the same with no RCU at all."):
        return
    base = pooled(c, "lifecycle", "none", 1, 50)
    rows = []
    for x in ds:
        p50 = pooled(c, "lifecycle", x, 1, 50)
        rows.append([label(x), gr.fmt_us(p50), gr.fmt_us(pooled(c, "lifecycle", x, 1, 99)),
                     "-" if x == "none" or base is None or p50 is None
                     else gr.fmt_us(p50 - base)])
    c.md.append(gr.md_table(["design", "p50", "p99", "p50 over the bare thread"], rows))
    c.hl.add("A short-lived reader thread (create, first read, exit), p50",
             pooled(c, "lifecycle", "grace", 1, 50), pooled(c, "lifecycle", "urcu-memb", 1, 50),
             "liburcu memb", fmt_value="fmt_us", better="lower")


def memory(c):
    d = c.d
    ds = [x for x in ("none", "grace", "urcu-memb", "grace-qsbr", "urcu-qsbr")
          if d.threads("memory", "tls_bytes") and
          any(d.has("memory", x, n, "tls_bytes") for n in d.threads("memory", "tls_bytes"))]
    if not ds:
        return
    n = max(d.threads("memory", "tls_bytes"))
    c.md.append(gr.heading(3, "Memory per registered thread"))
    c.md.append("%d threads are created and sleep; the heap in use (malloc's) and the resident "
                "set are read; the threads then register (one read-side section each) and "
                "sleep again; read again (`scalebench memory`). *TLS*: the library's static "
                "thread-local block, which every thread of the process carries from its "
                "creation, registered or not (grace: one block for all its flavors). *Heap* "
                "and *resident*: growth per thread at registration, less the same growth with "
                "no RCU (a resident set moves by whole pages: a few bytes per thread are "
                "noise). Medians of the runs.\n" % n)

    def m(x, metric):
        return d.med("memory", x, n, metric)
    rows = []
    for x in ds:
        h = m(x, "heap_bytes_per_thread")
        r = m(x, "rss_bytes_per_thread")
        if x != "none":
            h = h - (m("none", "heap_bytes_per_thread") or 0) if h is not None else None
            r = r - (m("none", "rss_bytes_per_thread") or 0) if r is not None else None
        rows.append([label(x), gr.fmt_bytes(m(x, "tls_bytes")), gr.fmt_bytes(h),
                     gr.fmt_bytes(r)])
    c.md.append(gr.md_table(["design", "TLS per thread", "heap per registration",
                             "resident per registration"], rows))

    def total(x):
        t, h = m(x, "tls_bytes"), m(x, "heap_bytes_per_thread")
        if t is None or h is None:
            return None
        return t + max(0.0, h - (m("none", "heap_bytes_per_thread") or 0))
    c.hl.add("Memory per registered thread (TLS + heap)", total("grace"), total("urcu-memb"),
             "liburcu memb", fmt_value="fmt_bytes", better="lower", words=("smaller", "larger"))


def seeds(c):
    """grace at 4, 8 and 16 CPUs beside the seed papers, where this machine has them."""
    c.md.append(gr.heading(3, "Against the seed papers at 4, 8 and 16 CPUs"))
    have = [n for n in SEED_CPUS if n <= c.ncpu]
    if not have:
        c.md.append("Not measured here: this machine has %d CPUs. The seeds measured 4 CPUs "
                    "(LJ 2003 Fig. 1 and 4: per-bucket rwlock 39%% of ideal, refcnt 54%%, "
                    "spinlock 57%%; RCU close to ideal) and 8 CPUs (FREENIX 2003 Table 5: "
                    "semopbench 11.0x faster with RCU); the family runs unchanged on a bigger "
                    "machine and fills this table there.\n" % c.ncpu)
        return
    rows = []
    hashf = c.seed.get("hash")
    semr = c.seed.get("semop")
    for n in have:
        if hashf:
            m, best = hashf
            rows.append(["%d CPUs" % n, "read-only lookups, % of ideal",
                         "grace %s, liburcu %s, best lock %s" % (
                             gr.fmt_pct(gr.ratio(m("grace-call", n, 0.0), m("ideal", n, 0.0))),
                             gr.fmt_pct(gr.ratio(m("urcu-memb-lgpl", n, 0.0),
                                                 m("ideal", n, 0.0))),
                             gr.fmt_pct(gr.ratio(best(n, 0.0)[0], m("ideal", n, 0.0)))),
                         "RCU close to ideal; per-bucket rwlock 39%, refcnt 54%, spinlock 57% "
                         "(LJ 2003 Fig. 1, 4; 4 CPUs)"])
        if semr:
            rows.append(["%d CPUs" % n, "semopbench, RCU / global lock", gr.fmt_x(semr(n)),
                         "11.0x (FREENIX 2003 Table 5; 8 CPUs)"])
    c.md.append(gr.md_table(["machine", "figure", "grace here", "seed paper"], rows,
                            align="llll"))


def main():
    a = gr.family_args(__doc__, "bench/scaling/run.sh",
                       ("--hash-csv", "", "hashbench's CSV of the hash phase"))
    c = Ctx(a)
    c.samples = {}
    c.seed = {}
    d = c.d
    c.md.append(gr.heading(2, "Scaling: CPUs, threads and grace periods"))
    c.md.append(gr.quick_note(a))
    c.md.append(gr.run_line(a, d, "Runs per point: %d, interleaved (every design at every "
                                  "count before the next run)." % max(1, d.runs("pair") or
                                                                      d.runs())))
    small = (" **Measured on %d CPUs only**: the seeds' comparison points (4, 8 and 16 CPUs) "
             "need a bigger machine, where the family runs unchanged." % c.ncpu
             if c.ncpu < 4 else "")
    c.md.append("This machine gives the process %d CPUs (`nproc`): thread counts up to %d run "
                "one per CPU, %d is oversubscribed (two threads per CPU; shaded in the plots)."
                "%s\n" % (c.ncpu, c.ncpu, c.over, small))
    for section in (readers, hash_section, semop, sync, callrcu, membarrier, sweep, lifecycle,
                    memory, seeds):
        section(c)
    skipped = {k[1]: len(v) for k, v in d.groups.items() if k[0] == "budget"}
    fails = {k[1]: v for k, v in d.groups.items() if k[0] == "fail" and k[3] == "exit_status"}
    if skipped or fails:
        c.md.append(gr.heading(3, "Points not measured"))
        for ph, n in sorted(skipped.items()):
            c.md.append("- %s: %d point(s) skipped, over the phase's share of the time budget "
                        "(`--budget`, or the report's)." % (ph, n))
        for ph, codes in sorted(fails.items()):
            threads = sum(1 for x in codes if x == 3)
            c.md.append("- %s: %d point(s) failed%s (see the log)." % (
                ph, len(codes), ", %d of them because the machine could not create the "
                "threads" % threads if threads else ""))
        c.md.append("")
    gr.write_fragment(a.out, "scaling", c.md)
    c.hl.write(a.out)


if __name__ == "__main__":
    main()
