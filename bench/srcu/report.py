# SPDX-License-Identifier: MIT
"""Turn srcu.csv into srcu.md (markdown fragment), srcu.png and the family's headline figures.

Called by bench/srcu/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/srcu/report.py --csv DIR/srcu.csv --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

PAIR_ROWS = [
    ("srcu", "grace srcu: `srcu_read_lock` + `srcu_read_unlock` (rseq, no fence)"),
    ("rcu", "grace default flavor: `rcu_read_lock` + `rcu_read_unlock`"),
    ("srcu-atomic", "the srcu algorithm with `lock xadd` (CPU from the rseq area)"),
    ("srcu-getcpu", "the srcu algorithm with `sched_getcpu()` + `lock xadd`"),
    ("srcu-norseq", "grace srcu, no rseq (GRACE_NO_RSEQ=1): library's atomic fallback"),
    ("srcu-fence", "grace srcu, no membarrier (GRACE_NO_MEMBARRIER=1): reader fences"),
    ("rseq-floor", "floor: the pair's two rseq critical sections alone (domain words hoisted)"),
    ("srcu@a64", "grace srcu, loops 64-byte aligned (second build)"),
    ("rcu@a64", "grace default flavor, loops 64-byte aligned (second build)"),
    ("rseq-floor@a64", "floor, loops 64-byte aligned (second build)"),
    ("srcu-deref", "grace srcu, section = `srcu_dereference` + one load"),
    ("rcu-deref", "grace default, section = `rcu_dereference` + one load"),
]
THREADS = (1, 2, 8)


def main():
    a = gr.family_args(__doc__, "bench/srcu/run.sh", ("--mode", "", "srcu mode"))
    d = gr.load_bench(a.csv)
    nproc = d.nproc
    hl = gr.Headlines("srcu", "SRCU")

    def tlabel(t):
        if t == 1:
            return "1 thread"
        return "%d threads%s" % (t, " (oversubscribed: %d CPUs)" % nproc if t > nproc else "")

    def pair(x, t):
        return d.med("srcu_pair", x, t, "ns_per_pair")

    md = [gr.heading(2, "srcu: sleepable RCU domains with rseq per-CPU counters"),
          gr.quick_note(a),
          gr.run_line(a, d, "Every figure is the median of %d interleaved runs, [min-max] "
                            "beside it. srcu mode: %s. ns per pair = thread CPU time / "
                            "lock+unlock pairs, per thread (threads pinned round-robin)."
                      % (d.runs("srcu_pair"), a.mode or "?"))]
    md.append(gr.heading(3, "Read side: ns per lock+unlock pair"))
    rows = []
    for x, label in PAIR_ROWS:
        cells = [d.cell("srcu_pair", x, t, "ns_per_pair", brackets="[]") for t in THREADS]
        if any(c != "n/a" for c in cells):
            rows.append([label] + cells)
    md.append(gr.md_table(["design"] + [tlabel(t) for t in THREADS], rows))

    md.append(gr.heading(3, "Ratios against the targets"))
    rows = []

    def ratio_row(name, target, num, den):
        rows.append([name, target] + [gr.fmt_x(gr.ratio(pair(num, t), pair(den, t)))
                                      for t in THREADS])

    ratio_row("srcu / default flavor (empty section)", "<= 2x", "srcu", "rcu")
    ratio_row("the same, loops 64-byte aligned", "<= 2x", "srcu@a64", "rcu@a64")
    ratio_row("srcu / default flavor (one dereference)", "", "srcu-deref", "rcu-deref")
    ratio_row("atomic version / srcu (speed-up of rseq)", ">= 3x", "srcu-atomic", "srcu")
    ratio_row("sched_getcpu+atomic / srcu", "", "srcu-getcpu", "srcu")
    ratio_row("library atomic fallback / srcu", "", "srcu-norseq", "srcu")
    ratio_row("floor (two rseq sections) / default flavor", "", "rseq-floor", "rcu")
    md.append(gr.md_table(["ratio", "target"] + [tlabel(t) for t in THREADS], rows,
                          align="ll" + "r" * len(THREADS)))
    md.append("Loops this short are sensitive to code placement: the same source built with "
              "every function and loop 64-byte aligned (`@a64` rows) moves the default flavor's "
              "pair by as much as the whole gap, while srcu's barely moves. Read the two "
              "builds as the range a user's code may land in.\n")
    hl.add("srcu read-side pair against the default flavor's, ns (1 thread)", pair("srcu", 1),
           pair("rcu", 1), "grace default flavor", unit="ns", better="lower",
           target=("ratio", "<=", 2.0), subject="srcu")
    hl.add("srcu read-side pair with rseq against the same with `lock xadd`, ns (1 thread)",
           pair("srcu", 1), pair("srcu-atomic", 1), "srcu with lock xadd", unit="ns",
           better="lower", target=("ratio", "<=", 1 / 3.0), subject="srcu with rseq")

    md.append(gr.heading(3, "Grace periods: synchronize latency (us), updater pinned to CPU 0"))
    md.append("`synchronize_srcu()` on the domain and, as its reference, `synchronize_rcu()` "
              "on the default flavor, in the same interleaved runs: back-to-back calls while "
              "R threads run sections of one dereference and a load, after 20 warm-up grace "
              "periods (the read-side family's method). Median over the runs of each run's "
              "p50 and p99. The default flavor's headline latency, beside liburcu, is in the "
              "read-side section; its rows here come from other runs, so their medians differ "
              "from it by the run-to-run noise.%s\n"
              % (" With 2 readers on %d CPUs the run is oversubscribed (unpinned)." % nproc
                 if 2 + 1 > nproc else ""))
    rows = []
    for r in (0, 1, 2):
        rows.append([r] + [gr.fmt(d.med("srcu_sync", x, r, m)) for x in ("srcu", "rcu")
                           for m in ("sync_p50_us", "sync_p99_us")])
    md.append(gr.md_table(["busy readers", "srcu p50", "srcu p99", "default flavor p50",
                           "default flavor p99"], rows, align="rrrrr"))
    md.append("![srcu](srcu.png)\n")
    gr.write_fragment(a.out, "srcu", md)
    hl.write(a.out)
    plot(a.out, d, pair, tlabel)


def plot(out, d, pair, tlabel):
    fig, (ax1, ax2) = gr.plt.subplots(1, 2, figsize=(13, 4.5),
                                      gridspec_kw={"width_ratios": [3, 1.3]})
    designs = [x for x, _ in PAIR_ROWS if any(pair(x, t) for t in THREADS)]
    gr.grouped_bars(ax1, designs, [(tlabel(t), [pair(x, t) for x in designs], None)
                                   for t in THREADS],
                    "ns per lock+unlock pair (log)", "read side", logy=True, rotation=20)
    gr.grouped_bars(ax2, ["%d busy readers" % r for r in (0, 1, 2)],
                    [("srcu" if x == "srcu" else "default flavor",
                      [d.med("srcu_sync", x, r, "sync_p50_us") for r in (0, 1, 2)], None)
                     for x in ("srcu", "rcu")],
                    "synchronize p50 (us)", "grace period latency", rotation=0)
    gr.save_fig(fig, os.path.join(out, "srcu.png"))


if __name__ == "__main__":
    main()
