# SPDX-License-Identifier: MIT
"""Turn rseq.csv into rseq.md (markdown fragment) and rseq.png.

Called by bench/rseq/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/rseq/report.py --csv DIR/rseq.csv --out DIR
"""
import argparse
import csv
import os
import statistics
from collections import defaultdict

CPU_ROWS = [
    ("rseq", "rseq area load (`grace__rseq_cpu()`, glibc's area)", "0.4-0.7"),
    ("rseq-ownarea", "rseq area load, grace's own registration (glibc's disabled)", ""),
    ("sched_getcpu", "glibc `sched_getcpu()` (reads the rseq area itself since glibc 2.35)", ""),
    ("sched_getcpu-noglibcrseq", "glibc `sched_getcpu()` without glibc's rseq (vDSO path)", "3.8-4.7"),
    ("vdso", "vDSO `__vdso_getcpu` called directly", ""),
    ("syscall", "`syscall(SYS_getcpu)`", "171-218"),
]
INC_ROWS = [
    ("rseq", "rseq critical section (`grace__rseq_percpu_add`), no lock prefix"),
    ("rseq-xadd", "CPU from the rseq area + `lock xadd`"),
    ("getcpu-xadd", "`sched_getcpu()` + `lock xadd`"),
    ("getcpu-xadd-noglibcrseq", "`sched_getcpu()` (vDSO) + `lock xadd`: the paper's baseline"),
]


def fmt(x):
    if x is None or x != x:
        return "n/a"
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 10:
        return "%.1f" % x
    return "%.3g" % x


def load(path):
    vals = defaultdict(list)
    machine = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["bench"] == "machine":
                machine[(row["metric"], row["run"])] = row["value"]
                machine["kernel"] = row["design"]
                machine["nproc"] = row["threads"]
                continue
            key = (row["bench"], row["design"], int(row["threads"]), row["metric"])
            vals[key].append(float(row["value"]))
    return vals, machine


def stat(vals, key):
    v = vals.get(key)
    if not v:
        return None, None, None, 0
    return statistics.median(v), min(v), max(v), len(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu", default="")
    ap.add_argument("--mode", default="")
    ap.add_argument("--cmd", default="bench/rseq/run.sh")
    a = ap.parse_args()
    vals, machine = load(a.csv)

    md = []
    md.append("## rseq: per-CPU data without atomics (seed 004 reproduced)\n")
    runs = max((stat(vals, k)[3] for k in vals), default=0)
    md.append("Command: `%s`. Machine: %s, %s CPUs, kernel %s; load average %s at the start, "
              "%s at the end: the machine is shared, so every figure is the median of %d "
              "interleaved runs of thread CPU time per operation, [min-max] beside it. "
              "rseq area in use: %s.\n" % (
                  a.cmd, a.cpu or "?", machine.get("nproc", "?"), machine.get("kernel", "?"),
                  machine.get(("load1", "0"), "?"), machine.get(("load1", "1"), "?"), runs,
                  a.mode or "?"))

    md.append("### Reading the current CPU number (ns per call, 1 thread)\n")
    md.append("| method | ns | [min-max] | vs rseq | seed 004 (x86), ns |")
    md.append("|---|---:|---|---:|---:|")
    base = stat(vals, ("rseq_cpu", "rseq", 1, "ns_per_op"))[0]
    cpu_plot = []
    for d, label, paper in CPU_ROWS:
        med, lo, hi, n = stat(vals, ("rseq_cpu", d, 1, "ns_per_op"))
        if med is None:
            continue
        r = med / base if base else None
        md.append("| %s | %s | [%s-%s] | %s | %s |" % (label, fmt(med), fmt(lo), fmt(hi),
                                                     "%.1fx" % r if r else "n/a", paper or "-"))
        cpu_plot.append((d, med, lo, hi))
    md.append("")

    md.append("### Incrementing a per-CPU counter (ns per increment, per thread)\n")
    md.append("| method | 1 thread | 2 threads | speed-up of rseq, 1 / 2 threads |")
    md.append("|---|---:|---:|---:|")
    inc_plot = []
    r1 = {t: stat(vals, ("rseq_inc", "rseq", t, "ns_per_op"))[0] for t in (1, 2)}
    for d, label in INC_ROWS:
        cells = []
        sp = []
        row = [d]
        for t in (1, 2):
            med, lo, hi, n = stat(vals, ("rseq_inc", d, t, "ns_per_op"))
            cells.append("%s [%s-%s]" % (fmt(med), fmt(lo), fmt(hi)) if med is not None else "n/a")
            sp.append("%.1fx" % (med / r1[t]) if med is not None and r1[t] else "n/a")
            row.append(med)
        if all(c == "n/a" for c in cells):
            continue
        md.append("| %s | %s | %s | %s |" % (label, cells[0], cells[1],
                                            "-" if d == "rseq" else " / ".join(sp)))
        inc_plot.append(row)
    md.append("")
    base_inc = stat(vals, ("rseq_inc", "getcpu-xadd-noglibcrseq", 1, "ns_per_op"))[0]
    if base_inc and r1[1]:
        md.append("Seed 004 reports rseq per-CPU increments 7.7x faster than `sched_getcpu()` + "
                  "atomic on x86; here, against the same baseline (glibc without rseq, so "
                  "`sched_getcpu()` is the vDSO call): **%.1fx** with 1 thread.\n"
                  % (base_inc / r1[1]))
    md.append("![rseq](rseq.png)\n")

    with open(os.path.join(a.out, "rseq.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    names = [p[0] for p in cpu_plot]
    meds = [p[1] for p in cpu_plot]
    err = [[p[1] - p[2] for p in cpu_plot], [p[3] - p[1] for p in cpu_plot]]
    ax1.bar(range(len(names)), meds, yerr=err, color="#4c72b0", capsize=3)
    ax1.set_xticks(range(len(names)))
    ax1.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("ns per call (log)")
    ax1.set_title("current CPU number")
    for i, m in enumerate(meds):
        ax1.text(i, m, fmt(m), ha="center", va="bottom", fontsize=8)
    w = 0.38
    for j, t in enumerate((1, 2)):
        xs = [i + (j - 0.5) * w for i in range(len(inc_plot))]
        ys = [r[1 + j] or 0 for r in inc_plot]
        ax2.bar(xs, ys, w, label="%d thread%s" % (t, "s" if t > 1 else ""))
    ax2.set_xticks(range(len(inc_plot)))
    ax2.set_xticklabels([r[0] for r in inc_plot], rotation=25, ha="right", fontsize=8)
    ax2.set_ylabel("ns per increment")
    ax2.set_title("per-CPU counter increment")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "rseq.png"), dpi=110)


if __name__ == "__main__":
    main()
