# SPDX-License-Identifier: MIT
"""Turn readside.csv (and the raw synchronize samples) into readside.md and readside.png.

Called by bench/readside/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/readside/report.py --csv DIR/readside.csv --raw DIR/readside-raw \
        --out DIR
"""
import argparse
import csv
import os
import statistics
from collections import defaultdict

# Row order and short descriptions for the read-side table.
PAIR_ROWS = [
    ("grace", "grace default: include <grace/rcu.h>, link libgrace.so"),
    ("grace-static", "grace default, linked with libgrace.a"),
    ("grace-fence", "grace default, fence fallback (GRACE_NO_MEMBARRIER=1)"),
    ("grace-qsbr", "grace qsbr_read_lock/unlock"),
    ("urcu-memb", "liburcu memb inline (_LGPL_SOURCE)"),
    ("urcu-memb-so", "liburcu memb through liburcu-memb.so"),
    ("urcu-qsbr", "liburcu qsbr read_lock/unlock inline"),
    ("rwlock", "pthread_rwlock rdlock/unlock"),
    ("empty", "empty loop (baseline)"),
]
QS_ROWS = [
    ("grace-qsbr-qs", "grace qsbr_quiescent_state()"),
    ("urcu-qsbr-qs", "liburcu urcu_qsbr_quiescent_state() inline"),
]
PEER = "urcu-memb"


def percentile(sorted_v, p):
    """Linear interpolation between closest ranks (same rule as bench_percentile_sorted)."""
    if not sorted_v:
        return float("nan")
    rank = p / 100.0 * (len(sorted_v) - 1)
    lo = int(rank)
    if lo + 1 >= len(sorted_v):
        return sorted_v[lo]
    return sorted_v[lo] + (rank - lo) * (sorted_v[lo + 1] - sorted_v[lo])


def fmt(x, digits=3):
    if x is None or x != x:
        return "n/a"
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 10:
        return "%.1f" % x
    return "%.*g" % (digits, x)


def ratio(a, b):
    if a is None or b is None or a != a or b != b or b == 0:
        return None
    return a / b


def fmt_ratio(r):
    if r is None:
        return "n/a"
    # Near 1, two decimals would hide which side of a "<= 1.0x" target a ratio falls on.
    return ("%.3fx" if 0.98 <= r <= 1.02 else "%.2fx") % r


def load(path):
    rows = defaultdict(list)  # (bench, design, threads, metric) -> [values]
    meta = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["bench"] == "machine":
                meta[(r["metric"], r["run"])] = r["value"]
                meta["kernel"] = r["design"]
                meta["nproc"] = r["threads"]
                continue
            rows[(r["bench"], r["design"], int(r["threads"]), r["metric"])].append(
                float(r["value"]))
    return rows, meta


def load_raw(raw_dir):
    """sync.<design>.<readers>.txt -> {(design, readers): sorted samples in us}"""
    out = {}
    if not raw_dir or not os.path.isdir(raw_dir):
        return out
    for name in os.listdir(raw_dir):
        if not (name.startswith("sync.") and name.endswith(".txt")):
            continue
        design, readers = name[len("sync."):-len(".txt")].rsplit(".", 1)
        with open(os.path.join(raw_dir, name)) as f:
            v = sorted(float(x) for x in f if x.strip())
        out[(design, int(readers))] = v
    return out


def med(rows, key):
    v = rows.get(key)
    return statistics.median(v) if v else None


def spread(rows, key):
    v = rows.get(key)
    return (min(v), max(v)) if v else (None, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--raw")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu", default="")
    ap.add_argument("--cmd", default="bench/readside/run.sh")
    ap.add_argument("--build-type", default="?")
    ap.add_argument("--urcu", default="?", help="liburcu version")
    a = ap.parse_args()

    rows, meta = load(a.csv)
    raw = load_raw(a.raw)
    designs_present = {k[1] for k in rows}
    nruns = max((len(v) for k, v in rows.items() if k[0] == "pair" and k[3] == "ns_cpu"),
                default=0)
    nsync = max((len(v) for k, v in rows.items() if k[0] == "sync" and k[3] == "p50_us"),
                default=0)
    ir = {d: med(rows, ("instr", d, 1, "ir_per_pair")) for d in designs_present}
    ir_empty = ir.get("empty")

    def ns(d, t):
        return med(rows, ("pair", d, t, "ns_cpu"))

    md = []
    md.append("## Read side: lock+unlock cost and synchronize latency\n")
    md.append("Command: `%s` (CMake build type %s). Machine: %s, %s CPUs, Linux %s; "
              "load average %s before, %s after; %s s in all. Peer: Debian's liburcu %s.\n"
              % (a.cmd, a.build_type, a.cpu or "?", meta.get("nproc", "?"),
                 meta.get("kernel", "?"), meta.get(("load1", "0"), "?"),
                 meta.get(("load1", "1"), "?"), meta.get(("elapsed_s", "0"), "?"), a.urcu))

    md.append("### Read-side lock+unlock, empty body\n")
    md.append("ns per pair: median of %d interleaved runs (one process each, threads pinned), "
              "thread CPU time per pair averaged over the threads, min-max of the runs in "
              "brackets; wall-clock figures are in the CSV (`ns_wall`). *loop*: one pair per "
              "loop iteration; *x8*: eight pairs per iteration (straight-line code, closer to "
              "sections inlined in real code; a one-pair loop runs faster when it fits in one "
              "64-byte block, which says more about the layout than about the design). Every "
              "measured loop starts on a 64-byte boundary. Instructions per pair: "
              "`valgrind --tool=callgrind --toggle-collect=rs_loop_<design>` over one call of "
              "the one-pair loop; *net* subtracts the empty loop's %s instructions per "
              "iteration.\n" % (nruns, fmt(ir_empty)))
    md.append("| design | ns/pair, loop, 1 thread | loop, 2 threads | x8, 1 thread | x8, 2 threads "
              "| vs liburcu inline (loop 1 / 2 thr, x8 1 / 2 thr) | instr/pair | net of loop |")
    md.append("|---|---|---|---|---|---|---|---|")
    for d, desc in PAIR_ROWS + QS_ROWS:
        if d not in designs_present:
            continue
        cells, rats = [], []
        peer = "urcu-qsbr-qs" if d.endswith("-qs") else PEER
        for b in ("pair", "pair_x8"):
            for t in (1, 2):
                lo, hi = spread(rows, (b, d, t, "ns_cpu"))
                m = med(rows, (b, d, t, "ns_cpu"))
                cells.append("%s (%s-%s)" % (fmt(m), fmt(lo), fmt(hi)) if lo is not None
                             else "n/a")
                rats.append(fmt_ratio(ratio(m, med(rows, (b, peer, t, "ns_cpu")))))
        rat = "1 (peer)" if d == peer else "%s / %s, %s / %s" % tuple(rats)
        i = ir.get(d)
        net = i - ir_empty if i is not None and ir_empty is not None else None
        md.append("| %s: %s | %s | %s | %s | %s | %s | %s | %s |"
                  % (d, desc, cells[0], cells[1], cells[2], cells[3], rat, fmt(i), fmt(net)))
    md.append("")
    md.append("The `-qs` rows are not lock+unlock: one QSBR quiescent-state report per iteration "
              "(the cost a QSBR reader actually pays, as often as it chooses); their ratio is "
              "against liburcu's.\n")

    # ---- synchronize latency ----
    clocks = [x for k, v in rows.items() if k[0] == "sync" and k[3] == "clock_us" for x in v]
    clock_us = statistics.median(clocks) if clocks else None
    md.append("### synchronize latency\n")
    md.append("Back-to-back synchronize calls from an unregistered thread while R reader threads "
              "run back-to-back short sections (one rcu_dereference and a load each). "
              "Percentiles pooled over the samples of %d interleaved runs (one process per "
              "run). With 0 or 1 reader the updater and the reader are pinned to their own CPU; "
              "**8 readers on %s CPUs is oversubscribed** (9 busy threads, unpinned): a reader "
              "preempted inside its section holds the grace period until the scheduler runs "
              "it again. There the distribution can be bimodal (many grace periods find no "
              "preempted reader inside a section, a few wait for the scheduler), so the mean "
              "(total time / grace periods) is the telling figure. Reader Mops/s: million "
              "sections per second per reader (median over runs), to show the readers ran. Every "
              "sample includes the two clock reads around it (%s us, median), which matters "
              "only for the sub-microsecond rows.\n"
              % (nsync, meta.get("nproc", "?"), fmt(clock_us)))
    md.append("| scenario | design | p50 us | p99 us | mean us | p50 vs liburcu | p99 vs liburcu "
              "| mean vs liburcu | samples | reader Mops/s |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    sync_rows = []
    for readers, label in ((0, "no reader"), (1, "1 busy reader"),
                           (8, "8 busy readers (oversubscribed)")):
        for d, peer in (("grace", "urcu-memb"), ("urcu-memb", None)):
            sync_rows.append((readers, label, d, peer))
    for readers, label in ((0, "qsbr, no reader"), (1, "qsbr, 1 busy reader")):
        for d, peer in (("grace-qsbr", "urcu-qsbr"), ("urcu-qsbr", None)):
            sync_rows.append((readers, label, d, peer))
    sync_stats = {}
    for readers, label, d, peer in sync_rows:
        v = raw.get((d, readers))
        if not v:
            continue
        p50, p99 = percentile(v, 50), percentile(v, 99)
        sync_stats[(d, readers)] = (p50, p99, len(v), sum(v) / len(v))
    for readers, label, d, peer in sync_rows:
        if (d, readers) not in sync_stats:
            continue
        p50, p99, n, mean = sync_stats[(d, readers)]
        pp = sync_stats.get((peer, readers)) if peer else None

        def rr(i):
            if pp:
                return fmt_ratio(ratio(sync_stats[(d, readers)][i], pp[i]))
            return "1 (peer)" if peer is None else "n/a"
        mops = med(rows, ("sync", d, readers, "reader_mops")) if readers else None
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |"
                  % (label, d, fmt(p50), fmt(p99), fmt(mean), rr(0), rr(1), rr(3), n,
                     fmt(mops) if mops is not None else "-"))
    md.append("")

    # ---- targets ----
    md.append("### Targets\n")

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "**missed**")

    tg = []
    gi = ir.get("grace")
    gnet = gi - ir_empty if gi is not None and ir_empty is not None else None
    tg.append(("grace default <= 22 instructions per pair (net of the loop)",
               fmt(gnet) + " (liburcu inline: %s)" % fmt(
                   ir.get(PEER) - ir_empty if ir.get(PEER) is not None and ir_empty is not None
                   else None),
               None if gnet is None else gnet <= 22))
    for b, what in (("pair", "one-pair loop"), ("pair_x8", "x8 straight-line")):
        for t in (1, 2):
            r = ratio(med(rows, (b, "grace", t, "ns_cpu")), med(rows, (b, PEER, t, "ns_cpu")))
            tg.append(("grace default <= 1.0x liburcu inline, ns per pair, %s, %d thread%s"
                       % (what, t, "s" if t > 1 else ""), fmt_ratio(r),
                       None if r is None else r <= 1.0))
    qi = ir.get("grace-qsbr")
    qnet = qi - ir_empty if qi is not None and ir_empty is not None else None
    tg.append(("grace qsbr read_lock+unlock: 0 instructions (net)", fmt(qnet),
               None if qnet is None else abs(qnet) < 0.01))
    for readers, label in ((0, "no reader"), (1, "1 busy reader")):
        g, u = sync_stats.get(("grace", readers)), sync_stats.get(("urcu-memb", readers))
        r50 = ratio(g[0], u[0]) if g and u else None
        r99 = ratio(g[1], u[1]) if g and u else None
        tg.append(("synchronize p50 <= 0.6x liburcu, %s" % label, fmt_ratio(r50),
                   None if r50 is None else r50 <= 0.6))
        tg.append(("synchronize p99 <= 1.0x liburcu, %s" % label, fmt_ratio(r99),
                   None if r99 is None else r99 <= 1.0))
    md.append("| target | measured | verdict |")
    md.append("|---|---|---|")
    for name, val, ok in tg:
        md.append("| %s | %s | %s |" % (name, val, verdict(ok)))
    md.append("")
    md.append("![read side and synchronize latency](readside.png)\n")

    with open(os.path.join(a.out, "readside.md"), "w") as f:
        f.write("\n".join(md))

    plot(a.out, rows, sync_stats, designs_present)


def plot(out, rows, sync_stats, designs_present):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib missing (apt-get install python3-matplotlib): no plot")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    names = [d for d, _ in PAIR_ROWS if d in designs_present and d != "empty"]
    width = 0.2
    variants = [("pair", 1, "loop, 1 thread", "tab:blue", ""), ("pair", 2, "loop, 2 threads",
                "tab:orange", ""), ("pair_x8", 1, "x8, 1 thread", "tab:blue", "//"),
                ("pair_x8", 2, "x8, 2 threads", "tab:orange", "//")]
    for k, (b, t, label, color, hatch) in enumerate(variants):
        meds, lo, hi = [], [], []
        for d in names:
            v = rows.get((b, d, t, "ns_cpu"), [])
            m = statistics.median(v) if v else float("nan")
            meds.append(m)
            lo.append(m - min(v) if v else 0)
            hi.append(max(v) - m if v else 0)
        xs = [i + (k - 1.5) * width for i in range(len(names))]
        ax1.bar(xs, meds, width, yerr=[lo, hi], capsize=2, color=color, hatch=hatch,
                edgecolor="black", linewidth=0.4, label=label)
    ax1.set_xticks(range(len(names)))
    ax1.set_xticklabels(names, rotation=30, ha="right")
    ax1.set_yscale("log")
    ax1.set_ylabel("ns per lock+unlock pair (median, min-max)")
    ax1.set_title("Read-side lock+unlock, empty body")
    ax1.legend(loc="upper left", fontsize=8)
    ax1.grid(axis="y", which="both", alpha=0.3)

    scen = [(0, "0 readers"), (1, "1 reader"), (8, "8 readers\n(oversubscribed)")]
    designs = [("grace", "tab:blue"), ("urcu-memb", "tab:orange")]
    w = 0.2
    for j, (d, color) in enumerate(designs):
        for q, (idx, hatch) in enumerate(((0, ""), (1, "//"))):
            vals = [sync_stats.get((d, r), (float("nan"),) * 4)[idx] for r, _ in scen]
            xs = [i + (j * 2 + q - 1.5) * w for i in range(len(scen))]
            ax2.bar(xs, vals, w, color=color, hatch=hatch, edgecolor="black", linewidth=0.5,
                    label="%s %s" % (d, "p50" if idx == 0 else "p99"))
    ax2.set_xticks(range(len(scen)))
    ax2.set_xticklabels([s for _, s in scen])
    ax2.set_yscale("log")
    ax2.set_ylabel("synchronize latency, us")
    ax2.set_title("synchronize_rcu latency (pooled over runs)")
    ax2.legend(fontsize=8)
    ax2.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "readside.png"), dpi=110)


if __name__ == "__main__":
    main()
