# SPDX-License-Identifier: MIT
"""Turn srcu.csv into srcu.md (markdown fragment) and srcu.png.

Called by bench/srcu/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/srcu/report.py --csv DIR/srcu.csv --out DIR
"""
import argparse
import csv
import os
import statistics
from collections import defaultdict

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


def med(vals, key):
    v = vals.get(key)
    return statistics.median(v) if v else None


def spread(vals, key):
    v = vals.get(key)
    return (min(v), max(v)) if v else (None, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu", default="")
    ap.add_argument("--mode", default="")
    ap.add_argument("--cmd", default="bench/srcu/run.sh")
    a = ap.parse_args()
    vals, machine = load(a.csv)
    nproc = int(machine.get("nproc", os.cpu_count() or 1))
    runs = max((len(v) for v in vals.values()), default=0)

    def tlabel(t):
        return "%d threads%s" % (t, " (oversubscribed: %d CPUs)" % nproc if t > nproc else "") \
            if t > 1 else "1 thread"

    md = ["## srcu: sleepable RCU domains with rseq per-CPU counters\n"]
    md.append("Command: `%s`. Machine: %s, %d CPUs, kernel %s; load average %s at the start, "
              "%s at the end: the machine is shared, so every figure is the median of %d "
              "interleaved runs, [min-max] beside it. srcu mode: %s. ns per pair = thread CPU "
              "time / lock+unlock pairs, per thread (threads pinned round-robin).\n" % (
                  a.cmd, a.cpu or "?", nproc, machine.get("kernel", "?"),
                  machine.get(("load1", "0"), "?"), machine.get(("load1", "1"), "?"), runs,
                  a.mode or "?"))
    md.append("### Read side: ns per lock+unlock pair\n")
    md.append("| design | " + " | ".join(tlabel(t) for t in THREADS) + " |")
    md.append("|---|" + "---:|" * len(THREADS))
    for d, label in PAIR_ROWS:
        cells = []
        for t in THREADS:
            k = ("srcu_pair", d, t, "ns_per_pair")
            m = med(vals, k)
            lo, hi = spread(vals, k)
            cells.append("%s [%s-%s]" % (fmt(m), fmt(lo), fmt(hi)) if m is not None else "n/a")
        if all(c == "n/a" for c in cells):
            continue
        md.append("| %s | %s |" % (label, " | ".join(cells)))
    md.append("")

    md.append("### Ratios against the targets (issue 4)\n")
    md.append("| ratio | target | " + " | ".join(tlabel(t) for t in THREADS) + " |")
    md.append("|---|---|" + "---:|" * len(THREADS))

    def ratio_row(name, target, num, den):
        cells = []
        for t in THREADS:
            x = med(vals, ("srcu_pair", num, t, "ns_per_pair"))
            y = med(vals, ("srcu_pair", den, t, "ns_per_pair"))
            cells.append("%.2fx" % (x / y) if x and y else "n/a")
        md.append("| %s | %s | %s |" % (name, target, " | ".join(cells)))

    ratio_row("srcu / default flavor (empty section)", "<= 2x", "srcu", "rcu")
    ratio_row("the same, loops 64-byte aligned", "<= 2x", "srcu@a64", "rcu@a64")
    ratio_row("srcu / default flavor (one dereference)", "", "srcu-deref", "rcu-deref")
    ratio_row("atomic version / srcu (speed-up of rseq)", ">= 3x", "srcu-atomic", "srcu")
    ratio_row("sched_getcpu+atomic / srcu", "", "srcu-getcpu", "srcu")
    ratio_row("library atomic fallback / srcu", "", "srcu-norseq", "srcu")
    ratio_row("floor (two rseq sections) / default flavor", "", "rseq-floor", "rcu")
    md.append("")

    md.append("Loops this short are sensitive to code placement: the same source built with "
              "every function and loop 64-byte aligned (`@a64` rows) moves the default flavor's "
              "pair by as much as the whole gap, while srcu's barely moves. Read the two "
              "builds as the range a user's code may land in.\n")
    md.append("### Grace periods: synchronize latency (us), updater pinned to CPU 0\n")
    md.append("| busy readers | srcu p50 | srcu p99 | rcu p50 | rcu p99 |")
    md.append("|---:|---:|---:|---:|---:|")
    for r in (0, 1, 2):
        cells = []
        for d in ("srcu", "rcu"):
            for m in ("sync_p50_us", "sync_p99_us"):
                cells.append(fmt(med(vals, ("srcu_sync", d, r, m))))
        md.append("| %d | %s |" % (r, " | ".join(cells)))
    md.append("")
    md.append("![srcu](srcu.png)\n")
    with open(os.path.join(a.out, "srcu.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [3, 1.3]})
    designs = [d for d, _ in PAIR_ROWS if any(med(vals, ("srcu_pair", d, t, "ns_per_pair"))
                                              for t in THREADS)]
    w = 0.8 / len(THREADS)
    for j, t in enumerate(THREADS):
        xs = [i + (j - (len(THREADS) - 1) / 2) * w for i in range(len(designs))]
        ys = [med(vals, ("srcu_pair", d, t, "ns_per_pair")) or 0 for d in designs]
        ax1.bar(xs, ys, w, label=tlabel(t))
    ax1.set_xticks(range(len(designs)))
    ax1.set_xticklabels(designs, rotation=20, ha="right", fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("ns per lock+unlock pair (log)")
    ax1.set_title("read side")
    ax1.legend(fontsize=8)
    for j, d in enumerate(("srcu", "rcu")):
        ys = [med(vals, ("srcu_sync", d, r, "sync_p50_us")) or 0 for r in (0, 1, 2)]
        xs = [r + (j - 0.5) * 0.38 for r in (0, 1, 2)]
        ax2.bar(xs, ys, 0.38, label=d)
    ax2.set_xticks((0, 1, 2))
    ax2.set_xlabel("busy readers")
    ax2.set_ylabel("synchronize p50 (us)")
    ax2.set_title("grace period latency")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "srcu.png"), dpi=110)


if __name__ == "__main__":
    main()
