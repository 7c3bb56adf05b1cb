# SPDX-License-Identifier: MIT
"""Turn callbacks.csv (and the raw latency samples) into callbacks.md and two PNG plots.

Called by bench/callbacks/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/callbacks/report.py --csv DIR/callbacks.csv \
        --raw DIR/callbacks-raw --out DIR
"""
import argparse
import csv
import os
import statistics
from collections import defaultdict

TP_ROWS = [
    ("grace", "grace, default policy (poll): per-CPU queues, rseq push, per-CPU workers"),
    ("urcu-memb", "liburcu memb, as it comes: one call_rcu worker"),
    ("urcu-memb-percpu", "liburcu memb, create_all_cpu_call_rcu_data(0): a worker per CPU"),
]
POLICIES = [
    ("grace-poll", "grace POLL (default): start a grace period at once (rcu-poll)"),
    ("grace-batch10ms", "grace BATCH, 10 ms period (rcu-ltimer at HZ=100)"),
    ("grace-batch1ms", "grace BATCH, 1 ms period"),
    ("urcu-memb", "liburcu memb: worker sleeps 10 ms after each batch"),
]
PEER = "urcu-memb"
COLORS = {"grace-poll": "tab:blue", "grace-batch10ms": "tab:green", "grace-batch1ms": "tab:olive",
          "urcu-memb": "tab:red"}


def percentile(sorted_v, p):
    """Linear interpolation between closest ranks (same rule as bench_percentile_sorted)."""
    if not sorted_v:
        return None
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


def fmt_us(x):
    """Microseconds, switching to ms past 10 ms."""
    if x is None:
        return "n/a"
    if x >= 10000:
        return "%s ms" % fmt(x / 1000)
    return "%s us" % fmt(x)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r):
    return "n/a" if r is None else "%.2fx" % r


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
    """lat.<design>.<load>.txt and sweep.<design>.<rate>.txt -> sorted samples (us)."""
    out = {}
    if not raw_dir or not os.path.isdir(raw_dir):
        return out
    for name in os.listdir(raw_dir):
        for kind in ("lat", "sweep"):
            if name.startswith(kind + ".") and name.endswith(".txt"):
                design, arg = name[len(kind) + 1:-len(".txt")].rsplit(".", 1)
                with open(os.path.join(raw_dir, name)) as f:
                    out[(kind, design, int(arg))] = sorted(float(x) for x in f if x.strip())
    return out


def med(rows, key):
    v = rows.get(key)
    return statistics.median(v) if v else None


def spread(rows, key):
    v = rows.get(key)
    return (min(v), max(v)) if v else (None, None)


def cell(rows, key):
    lo, hi = spread(rows, key)
    if lo is None:
        return "n/a"
    return "%s (%s-%s)" % (fmt(med(rows, key)), fmt(lo), fmt(hi))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--raw")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu", default="")
    ap.add_argument("--cmd", default="bench/callbacks/run.sh")
    ap.add_argument("--build-type", default="?")
    a = ap.parse_args()

    rows, meta = load(a.csv)
    raw = load_raw(a.raw)
    present = {k[1] for k in rows}
    rates = sorted({int(k[0].split("@")[1]) for k in rows if k[0].startswith("sweep@")})
    nruns = max((len(v) for k, v in rows.items() if k[0] == "tput" and k[3] == "mcb_per_s"),
                default=0)
    md = []
    md.append("## Callback engine: call_rcu cost, throughput, latency and overhead per policy\n")
    md.append("Command: `%s` (build: %s). Machine: %s, %s CPUs, Linux %s; "
              "load average %s before, %s after; %s s in all. Peer: Debian's liburcu 0.13 "
              "(memb flavor, `urcu_memb_call_rcu`). The machine is shared: absolute figures "
              "move with the load, the ratios (measured in interleaved runs) are the result.\n"
              % (a.cmd, a.build_type, a.cpu or "?", meta.get("nproc", "?"),
                 meta.get("kernel", "?"), meta.get(("load1", "0"), "?"),
                 meta.get(("load1", "1"), "?"), meta.get(("elapsed_s", "0"), "?")))

    # ---- enqueue cost -----------------------------------------------------------------------
    md.append("### call_rcu enqueue cost\n")
    md.append("One pinned thread queues batches of 4096 preallocated objects whose callback only "
              "releases the object; an `rcu_barrier()` (not timed) after each batch. ns per call: "
              "median of %d interleaved runs of the thread's CPU time (min-max in brackets; wall "
              "clock in the CSV, `ns_wall`). Instructions: liburcu's from callgrind "
              "(`urcu_memb_call_rcu` inclusive, per call, + the PLT stub); grace's rseq path "
              "counted statically with `pathcount.py` from the disassembly (valgrind has no "
              "rseq, so under callgrind grace runs its fallback, shown as *grace-fallback*); "
              "*per loop iteration* adds the benchmark loop's own instructions.\n" % nruns)
    ir_loop = None
    ir_u_all = med(rows, ("instr", PEER, 1, "ir_per_call"))
    ir_u_path = med(rows, ("instr", PEER, 1, "ir_call_rcu_path"))
    if ir_u_all is not None and ir_u_path is not None:
        ir_loop = ir_u_all - ir_u_path
    md.append("| design | ns per call_rcu (CPU) | vs liburcu | instructions per call_rcu | "
              "per loop iteration |")
    md.append("|---|---|---|---|---|")
    for d, desc in TP_ROWS + [("grace-fallback", "grace without rseq (under valgrind)")]:
        ns = med(rows, ("enqueue", d, 1, "ns_cpu"))
        path = med(rows, ("instr", d, 1, "ir_call_rcu_path"))
        whole = med(rows, ("instr", d, 1, "ir_per_call"))
        if whole is None and path is not None and ir_loop is not None:
            whole = path + ir_loop
        if ns is None and path is None and whole is None:
            continue
        md.append("| %s | %s | %s | %s | %s |" % (
            desc, cell(rows, ("enqueue", d, 1, "ns_cpu")) if ns is not None else "n/a",
            fmt_ratio(ratio(ns, med(rows, ("enqueue", PEER, 1, "ns_cpu")))),
            fmt(path), fmt(whole)))
    g_ns = med(rows, ("enqueue", "grace", 1, "ns_cpu"))
    md.append("\nTarget: <= 20 ns per call_rcu: **%s** (grace %s ns; liburcu measured elsewhere: "
              "80 ns).\n" % ("met" if g_ns is not None and g_ns <= 20 else "missed", fmt(g_ns)))

    # ---- throughput -------------------------------------------------------------------------
    md.append("### Callbacks per second\n")
    md.append("P pinned threads call `call_rcu` as fast as they can for a fixed time, then "
              "`rcu_barrier()`; throughput = calls / (time to the end of the barrier), million "
              "callbacks per second, median of %d interleaved runs (min-max). *flag*: objects "
              "from a pool of 262144 per thread, reused once their callback ran; *free*: "
              "malloc'd objects freed by the callback. Peak RSS includes the pools (8 MB per "
              "thread).\n" % nruns)
    md.append("*Process CPU per callback* is the CPU time of the whole process (producers, "
              "workers, barrier) divided by the callbacks: on a shared machine it is the steadier "
              "figure, since wall-clock throughput also measures how much CPU the scheduler "
              "granted.\n")
    md.append("| design | Mcb/s, 1 producer | Mcb/s, 2 producers | vs liburcu (1 / 2) | vs liburcu "
              "per-CPU (1 / 2) | process CPU ns/cb (1 / 2) | liburcu's / grace's CPU per cb "
              "(1 / 2) | free: Mcb/s 1 / 2 | peak RSS, 2 producers |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for d, desc in TP_ROWS:
        if ("tput", d, 1, "mcb_per_s") not in rows:
            continue
        t1, t2 = med(rows, ("tput", d, 1, "mcb_per_s")), med(rows, ("tput", d, 2, "mcb_per_s"))
        r1 = "%s / %s" % (fmt_ratio(ratio(t1, med(rows, ("tput", PEER, 1, "mcb_per_s")))),
                          fmt_ratio(ratio(t2, med(rows, ("tput", PEER, 2, "mcb_per_s")))))
        r2 = "%s / %s" % (
            fmt_ratio(ratio(t1, med(rows, ("tput", "urcu-memb-percpu", 1, "mcb_per_s")))),
            fmt_ratio(ratio(t2, med(rows, ("tput", "urcu-memb-percpu", 2, "mcb_per_s")))))
        fr = "%s / %s" % (fmt(med(rows, ("tput-free", d, 1, "mcb_per_s"))),
                          fmt(med(rows, ("tput-free", d, 2, "mcb_per_s"))))
        c1, c2 = (med(rows, ("tput", d, 1, "process_ns_cpu")),
                  med(rows, ("tput", d, 2, "process_ns_cpu")))
        cr = "%s / %s" % (fmt_ratio(ratio(med(rows, ("tput", PEER, 1, "process_ns_cpu")), c1)),
                          fmt_ratio(ratio(med(rows, ("tput", PEER, 2, "process_ns_cpu")), c2)))
        md.append("| %s | %s | %s | %s | %s | %s / %s | %s | %s | %s MB |" % (
            desc, cell(rows, ("tput", d, 1, "mcb_per_s")), cell(rows, ("tput", d, 2, "mcb_per_s")),
            r1, r2, fmt(c1), fmt(c2), cr, fr, fmt(med(rows, ("tput", d, 2, "maxrss_mb")))))
    g1 = ratio(med(rows, ("tput", "grace", 1, "mcb_per_s")),
               med(rows, ("tput", PEER, 1, "mcb_per_s")))
    g2 = ratio(med(rows, ("tput", "grace", 2, "mcb_per_s")),
               med(rows, ("tput", PEER, 2, "mcb_per_s")))
    ok = g1 is not None and g2 is not None and min(g1, g2) >= 3
    c1 = ratio(med(rows, ("tput", PEER, 1, "process_ns_cpu")),
               med(rows, ("tput", "grace", 1, "process_ns_cpu")))
    c2 = ratio(med(rows, ("tput", PEER, 2, "process_ns_cpu")),
               med(rows, ("tput", "grace", 2, "process_ns_cpu")))
    md.append("\nTarget: >= 3x liburcu's callbacks per second: **%s** on the wall clock (%s with "
              "1 producer, %s with 2); per CPU-second the process spends, grace does %s and %s "
              "liburcu's callbacks. Producer CPU per call (ns; includes the pool and, for grace "
              "past its soft limit, helping): %s. Grace periods per 1000 callbacks (grace, "
              "1 / 2 producers): %s / %s; context switches per 1000 callbacks (grace / liburcu, "
              "1 producer): "
              "%s / %s.\n" % (
                  "met" if ok else "missed", fmt_ratio(g1), fmt_ratio(g2), fmt_ratio(c1),
                  fmt_ratio(c2),
                  ", ".join("%s %s / %s" % (d, fmt(med(rows, ("tput", d, 1, "producer_ns_cpu"))),
                                           fmt(med(rows, ("tput", d, 2, "producer_ns_cpu"))))
                            for d, _ in TP_ROWS if ("tput", d, 1, "producer_ns_cpu") in rows),
                  fmt(med(rows, ("tput", "grace", 1, "gp_per_kcb"))),
                  fmt(med(rows, ("tput", "grace", 2, "gp_per_kcb"))),
                  fmt(med(rows, ("tput", "grace", 1, "ctxsw_per_kcb"))),
                  fmt(med(rows, ("tput", PEER, 1, "ctxsw_per_kcb")))))

    # ---- lone latency -----------------------------------------------------------------------
    md.append("### Enqueue-to-invoke latency of a lone callback\n")
    md.append("One `call_rcu`, wait (futex) until its callback ran, sleep 200 us, repeat; the "
              "callback reads the clock. *Under load*: a second thread floods `call_rcu` at the "
              "same time. Percentiles over the samples of every run pooled.\n")
    md.append("| policy | idle p50 | idle p99 | under load p50 | under load p99 | p50 vs liburcu "
              "(idle / load) | samples |")
    md.append("|---|---|---|---|---|---|---|")
    lat = {}
    for d, _ in POLICIES:
        for ld in (0, 1):
            v = raw.get(("lat", d, ld))
            lat[(d, ld)] = (percentile(v, 50), percentile(v, 99), len(v) if v else 0)
    for d, desc in POLICIES:
        if lat[(d, 0)][2] == 0 and lat[(d, 1)][2] == 0:
            continue
        md.append("| %s | %s | %s | %s | %s | %s / %s | %d / %d |" % (
            desc, fmt_us(lat[(d, 0)][0]), fmt_us(lat[(d, 0)][1]), fmt_us(lat[(d, 1)][0]),
            fmt_us(lat[(d, 1)][1]),
            fmt_ratio(ratio(lat[(d, 0)][0], lat[(PEER, 0)][0])),
            fmt_ratio(ratio(lat[(d, 1)][0], lat[(PEER, 1)][0])), lat[(d, 0)][2], lat[(d, 1)][2]))
    p50 = lat[("grace-poll", 0)][0]
    md.append("\nTarget: <= 100 us under the poll policy on an idle machine: **%s** (p50 %s; "
              "liburcu %s; the OLS 2002 paper's rcu-poll: below 250 us on an idle system).\n" % (
                  "met" if p50 is not None and p50 <= 100 else "missed", fmt_us(p50),
                  fmt_us(lat[(PEER, 0)][0])))

    # ---- OLS 2002 Figures 9-10 analogue -----------------------------------------------------
    md.append("### Latency against offered load (OLS 2002 Figures 9-10 analogue)\n")
    md.append("A pinned producer offers R callbacks per second (paced: every call due by now is "
              "queued, then it sleeps until the next is due) for a fixed time while a pinned "
              "reader runs short read-side sections, each followed by about 100 ns of work "
              "outside any section; up to 20000 callbacks per run carry "
              "a timestamp. Enqueue-to-invoke latency p50 / p99 over every run pooled; "
              "*achieved*: callbacks queued per second (below R when the engine pushes back "
              "or the machine cannot keep up). The paper ran dbench on 8 CPUs: rcu-poll kept "
              "latency below 10 ms under every load (below 250 us idle); X-rcu, rcu and "
              "rcu-ltimer showed larger latencies, well bounded as load grew; rcu-taskq grew "
              "with load and rcu-sched reached 14.5 s. Plot: `callbacks_latency.png` (left "
              "linear like Figure 9, right logarithmic like Figure 10).\n")
    hdr = "| offered (cb/s) | " + " | ".join(d for d, _ in POLICIES if d in present) + " |"
    md.append(hdr)
    md.append("|---" * (1 + sum(1 for d, _ in POLICIES if d in present)) + "|")
    for r in rates:
        cells = []
        for d, _ in POLICIES:
            if d not in present:
                continue
            v = raw.get(("sweep", d, r))
            ach = med(rows, ("sweep@%d" % r, d, 1, "achieved_cb_per_s"))
            cells.append("%s / %s%s" % (
                fmt_us(percentile(v, 50)), fmt_us(percentile(v, 99)),
                "" if ach is None or ach >= 0.95 * r else " (achieved %s)" % fmt(ach)))
        md.append("| %s | %s |" % ("{:.0e}".format(r).replace("e+0", "e"), " | ".join(cells)))
    md.append("\n![callback latency against offered load](callbacks_latency.png)\n")

    # ---- FREENIX 2003 Table 3 analogue ------------------------------------------------------
    md.append("### CPU overhead per policy (FREENIX 2003 Table 3 analogue)\n")
    md.append("Same runs. *Engine CPU*: CPU time of the engine's worker threads (grace: "
              "`grace_rcu_callback_stats().worker_cpu_ns`; liburcu: the clocks of its call_rcu "
              "threads) per callback and as a share of one CPU; *process CPU*: getrusage of the "
              "whole process (producer, reader, workers) as a share of one CPU; the rest of "
              "the process beyond producer, reader, driver and workers stays within noise of 0 "
              "(`rest_ns_per_cb` in the CSV). *Producer*: CPU time of the queuing thread per "
              "callback (call_rcu, "
              "pacing sleeps, helping). *Reader*: the reader thread's CPU time per section "
              "(its section, its work outside, and what grace periods cost it: IPIs, "
              "wake-ups), the workload's own cost (the paper's ms/iteration). Medians of the "
              "runs. The paper (dcachebench, 4 CPUs): rcu-ltimer 77.52% CPU and 22.47 "
              "ms/iteration, rcu-poll 84.20% and 22.95 ms (8.6% more CPU for its latency), "
              "rcu-sched 81.95% and 22.46 ms. Plot: `callbacks_overhead.png`.\n")
    table_rates = [r for r in (1000, 100000, 1000000) if r in rates] or rates[:1]
    md.append("| offered | policy | engine CPU ns/cb | engine CPU % | process CPU % | producer "
              "CPU ns/cb | grace "
              "periods /1000 cb | grace periods/s | reader CPU ns/section | p50 latency | engine "
              "CPU vs grace BATCH 10 ms |")
    md.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table_rates:
        b = "sweep@%d" % r
        base = med(rows, (b, "grace-batch10ms", 1, "engine_ns_per_cb"))
        for d, desc in POLICIES:
            if (b, d, 1, "producer_ns_per_cb") not in rows:
                continue
            e = med(rows, (b, d, 1, "engine_ns_per_cb"))
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                "{:.0e}".format(r).replace("e+0", "e"), d, fmt(e),
                fmt(med(rows, (b, d, 1, "engine_cpu_pct"))),
                fmt(med(rows, (b, d, 1, "process_cpu_pct"))),
                fmt(med(rows, (b, d, 1, "producer_ns_per_cb"))),
                fmt(med(rows, (b, d, 1, "gp_per_kcb"))), fmt(med(rows, (b, d, 1, "gp_per_s"))),
                fmt(med(rows, (b, d, 1, "reader_ns_per_section"))),
                fmt_us(percentile(raw.get(("sweep", d, r)), 50)), fmt_ratio(ratio(e, base))))
    md.append("\n![CPU overhead per policy against offered load](callbacks_overhead.png)\n")

    with open(os.path.join(a.out, "callbacks.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plots(rows, raw, rates, present, a.out)


def plots(rows, raw, rates, present, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib missing: no plots")
        return
    pols = [(d, desc) for d, desc in POLICIES if d in present]

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, logy in zip(axes, (False, True)):
        for d, desc in pols:
            xs, p50, p99 = [], [], []
            for r in rates:
                v = raw.get(("sweep", d, r))
                if v:
                    xs.append(r)
                    p50.append(percentile(v, 50) / 1000)
                    p99.append(percentile(v, 99) / 1000)
            if not xs:
                continue
            ax.plot(xs, p50, "o-", color=COLORS.get(d), label="%s p50" % d)
            if logy:
                ax.plot(xs, p99, "x--", color=COLORS.get(d), alpha=0.6, label="%s p99" % d)
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("offered load (callbacks/s)")
        ax.set_ylabel("enqueue-to-invoke latency (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title("call_rcu latency vs load (%s y; cf. OLS 2002 Fig. %s)"
                     % ("log" if logy else "linear", "10" if logy else "9"), fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "callbacks_latency.png"), dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    series = [("engine_ns_per_cb", "engine CPU per callback (ns)", True),
              ("gp_per_kcb", "grace periods per 1000 callbacks", True),
              ("reader_ns_per_section", "reader CPU per section (ns)", False)]
    for ax, (metric, label, logy) in zip(axes, series):
        for d, desc in pols:
            xs, ys = [], []
            for r in rates:
                v = med(rows, ("sweep@%d" % r, d, 1, metric))
                if v is not None and (v > 0 or not logy):
                    xs.append(r)
                    ys.append(v)
            if xs:
                ax.plot(xs, ys, "o-", color=COLORS.get(d), label=d)
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("offered load (callbacks/s)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("CPU overhead per policy (cf. FREENIX 2003 Table 3)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "callbacks_overhead.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
