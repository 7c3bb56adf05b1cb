# SPDX-License-Identifier: MIT
"""Turn rseq.csv into rseq.md (markdown fragment), rseq.png and the family's headline figures.

Called by bench/rseq/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/rseq/report.py --csv DIR/rseq.csv --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

PAPER = "the EfficiOS 2019 rseq article"
CPU_ROWS = [
    ("rseq", "load from the rseq area (glibc's registration)", "0.4-0.7"),
    ("rseq-ownarea", "load from the rseq area, grace's own registration (glibc's disabled)", ""),
    ("sched_getcpu", "glibc `sched_getcpu()` (reads the rseq area itself since glibc 2.35)", ""),
    ("sched_getcpu-noglibcrseq", "glibc `sched_getcpu()` without glibc's rseq (vDSO path)",
     "3.8-4.7"),
    ("vdso", "vDSO `__vdso_getcpu` called directly", ""),
    ("syscall", "`syscall(SYS_getcpu)`", "171-218"),
]
INC_ROWS = [
    ("rseq", "rseq critical section (grace's per-CPU add), no lock prefix"),
    ("rseq-xadd", "CPU from the rseq area + `lock xadd`"),
    ("getcpu-xadd", "`sched_getcpu()` + `lock xadd`"),
    ("getcpu-xadd-noglibcrseq", "`sched_getcpu()` (vDSO) + `lock xadd`: the paper's baseline"),
]


def main():
    a = gr.family_args(__doc__, "bench/rseq/run.sh", ("--mode", "", "the rseq area in use"))
    d = gr.load_bench(a.csv)
    hl = gr.Headlines("rseq", "Restartable sequences")

    md = [gr.heading(2, "Restartable sequences: per-CPU data without atomics (%s reproduced)"
                     % PAPER),
          gr.quick_note(a),
          gr.run_line(a, d, "Every figure is the median of %d interleaved runs of thread CPU "
                            "time per operation, [min-max] beside it. rseq area in use: %s."
                      % (d.runs(), a.mode or "?"))]

    md.append(gr.heading(3, "Reading the current CPU number (ns per call, 1 thread)"))
    base = d.med("rseq_cpu", "rseq", 1, "ns_per_op")
    rows, cpu_plot = [], []
    for x, label, paper in CPU_ROWS:
        m = d.med("rseq_cpu", x, 1, "ns_per_op")
        if m is None:
            continue
        lo, hi = d.spread("rseq_cpu", x, 1, "ns_per_op")
        rows.append([label, gr.fmt(m), "[%s-%s]" % (gr.fmt(lo), gr.fmt(hi)),
                     gr.fmt_x(gr.ratio(m, base)), paper or "-"])
        cpu_plot.append((x, m, lo, hi))
    md.append(gr.md_table(["method", "ns", "[min-max]", "vs rseq", "%s (x86), ns" % PAPER],
                          rows, align="lrlrr"))
    hl.add("Current CPU number, ns per read: rseq area against `sched_getcpu()` (vDSO)", base,
           d.med("rseq_cpu", "sched_getcpu-noglibcrseq", 1, "ns_per_op"),
           "sched_getcpu() through the vDSO", unit="ns", better="lower",
           paper="0.4-0.7 ns against 3.8-4.7 ns", subject="rseq")

    md.append(gr.heading(3, "Incrementing a per-CPU counter (ns per increment, per thread)"))
    r1 = {t: d.med("rseq_inc", "rseq", t, "ns_per_op") for t in (1, 2)}
    rows, inc_plot = [], []
    for x, label in INC_ROWS:
        cells, sp, row = [], [], [x]
        for t in (1, 2):
            m = d.med("rseq_inc", x, t, "ns_per_op")
            cells.append(d.cell("rseq_inc", x, t, "ns_per_op", brackets="[]"))
            sp.append(gr.fmt_x(gr.ratio(m, r1[t])))
            row.append(m)
        if all(c == "n/a" for c in cells):
            continue
        rows.append([label] + cells + ["-" if x == "rseq" else " / ".join(sp)])
        inc_plot.append(row)
    md.append(gr.md_table(["method", "1 thread", "2 threads", "speed-up of rseq, 1 / 2 threads"],
                          rows))
    base_inc = d.med("rseq_inc", "getcpu-xadd-noglibcrseq", 1, "ns_per_op")
    if base_inc and r1[1]:
        md.append("%s reports rseq per-CPU increments 7.7x faster than `sched_getcpu()` + "
                  "atomic on x86; here, against the same baseline (glibc without rseq, so "
                  "`sched_getcpu()` is the vDSO call): **%s** with 1 thread.\n"
                  % (PAPER[0].upper() + PAPER[1:], gr.fmt_x(base_inc / r1[1])))
    hl.add("Per-CPU counter increment, ns: rseq against `sched_getcpu()` + atomic", r1[1],
           base_inc, "sched_getcpu() + lock xadd (the paper's baseline)", unit="ns",
           better="lower", paper="rseq 7.7x faster (x86)", subject="rseq")
    md.append("![rseq](rseq.png)\n")
    gr.write_fragment(a.out, "rseq", md)
    hl.write(a.out)
    plot(a.out, cpu_plot, inc_plot)


def plot(out, cpu_plot, inc_plot):
    fig, (ax1, ax2) = gr.plt.subplots(1, 2, figsize=(12, 4.2))
    names = [p[0] for p in cpu_plot]
    meds = [p[1] for p in cpu_plot]
    err = [[p[1] - p[2] for p in cpu_plot], [p[3] - p[1] for p in cpu_plot]]
    gr.grouped_bars(ax1, names, [("1 thread", meds, dict(color="#4c72b0", yerr=err))],
                    "ns per call (log)", "current CPU number", logy=True, legend=False)
    for i, m in enumerate(meds):
        ax1.text(i, m, gr.fmt(m), ha="center", va="bottom", fontsize=8)
    gr.grouped_bars(ax2, [r[0] for r in inc_plot],
                    [("%d thread%s" % (t, "s" if t > 1 else ""), [r[1 + j] for r in inc_plot],
                      None) for j, t in enumerate((1, 2))],
                    "ns per increment", "per-CPU counter increment")
    gr.save_fig(fig, os.path.join(out, "rseq.png"))


if __name__ == "__main__":
    main()
