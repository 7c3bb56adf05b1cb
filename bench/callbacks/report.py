# SPDX-License-Identifier: MIT
"""Turn callbacks.csv (and the raw latency samples) into callbacks.md, two PNG plots and the
family's headline figures.

Called by bench/callbacks/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/callbacks/report.py --csv DIR/callbacks.csv \
        --raw DIR/callbacks-raw --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

TP_ROWS = [
    ("grace", "grace, default policy (adaptive): per-CPU queues, rseq push, per-CPU workers"),
    ("urcu-memb", "liburcu memb, as it comes: one call_rcu worker"),
    ("urcu-memb-percpu", "liburcu memb, create_all_cpu_call_rcu_data(0): a worker per CPU"),
]
POLICIES = [
    ("grace-adaptive", "grace ADAPTIVE (default): at once when idle, paced when busy"),
    ("grace-poll", "grace POLL: start a grace period at once (rcu-poll)"),
    ("grace-batch10ms", "grace BATCH, 10 ms period (rcu-ltimer at HZ=100)"),
    ("grace-batch1ms", "grace BATCH, 1 ms period"),
    ("grace-lazy10ms", "grace LAZY, 10 ms period: liburcu's cadence, one wake-up a period"),
    ("grace-lazy1s", "grace LAZY, 1 s period (Linux's RCU_LAZY): a wake-up a period while busy"),
    ("grace-lazy10ms-roomy", "grace LAZY, 10 ms period, callback limits raised to 10^6 per CPU: "
     "no early grace period below 5x10^7 callbacks/s"),
    ("urcu-memb", "liburcu memb: worker sleeps 10 ms after each batch"),
]
PEER = "urcu-memb"
COLORS = {"grace-adaptive": "tab:purple", "grace-poll": "tab:blue", "grace-batch10ms": "tab:green", "grace-batch1ms": "tab:olive",
          "grace-lazy10ms": "tab:cyan", "grace-lazy1s": "tab:brown",
          "grace-lazy10ms-roomy": "tab:gray",
          "urcu-memb": "tab:red"}


def rate_label(r):
    return "{:.0e}".format(r).replace("e+0", "e")


def main():
    a = gr.family_args(__doc__, "bench/callbacks/run.sh")
    d = gr.load_bench(a.csv)
    lat_raw = gr.load_samples(a.raw, "lat")
    sweep_raw = gr.load_samples(a.raw, "sweep")
    present = set(d.designs())
    rates = sorted({int(b.split("@")[1]) for (b, _, _, _) in d.groups if b.startswith("sweep@")})
    nruns = d.runs("tput", "mcb_per_s")
    med = d.med
    hl = gr.Headlines("callbacks", "Callbacks")

    md = [gr.heading(2, "Callback engine: call_rcu cost, throughput, latency and overhead per "
                        "policy"),
          gr.quick_note(a),
          gr.run_line(a, d, "Peer: Debian's liburcu 0.13 (memb flavor, `urcu_memb_call_rcu`). "
                            "The machine is shared: absolute figures move with the load, the "
                            "ratios (measured in interleaved runs) are the result.")]

    # ---- enqueue cost -----------------------------------------------------------------------
    md.append(gr.heading(3, "call_rcu enqueue cost"))
    md.append("One pinned thread queues batches of 4096 preallocated objects whose callback only "
              "releases the object; an `rcu_barrier()` (not timed) after each batch. ns per call: "
              "median of %d interleaved runs of the thread's CPU time (min-max in brackets; wall "
              "clock in the CSV, `ns_wall`). Instructions: liburcu's from callgrind "
              "(`urcu_memb_call_rcu` inclusive, per call, + the PLT stub); grace's rseq path "
              "counted statically with `pathcount.py` from the disassembly (valgrind has no "
              "rseq, so under callgrind grace runs its fallback, shown as *grace-fallback*); "
              "*per loop iteration* adds the benchmark loop's own instructions.\n" % nruns)
    ir_loop = None
    ir_u_all = med("instr", PEER, 1, "ir_per_call")
    ir_u_path = med("instr", PEER, 1, "ir_call_rcu_path")
    if ir_u_all is not None and ir_u_path is not None:
        ir_loop = ir_u_all - ir_u_path
    rows = []
    for x, desc in TP_ROWS + [("grace-fallback", "grace without rseq (under valgrind)")]:
        ns = med("enqueue", x, 1, "ns_cpu")
        path = med("instr", x, 1, "ir_call_rcu_path")
        whole = med("instr", x, 1, "ir_per_call")
        if whole is None and path is not None and ir_loop is not None:
            whole = path + ir_loop
        if ns is None and path is None and whole is None:
            continue
        rows.append([desc, d.cell("enqueue", x, 1, "ns_cpu"),
                     gr.fmt_x(gr.ratio(ns, med("enqueue", PEER, 1, "ns_cpu"))), gr.fmt(path),
                     gr.fmt(whole)])
    md.append(gr.md_table(["design", "ns per call_rcu (CPU)", "vs liburcu",
                           "instructions per call_rcu", "per loop iteration"], rows))
    g_ns = med("enqueue", "grace", 1, "ns_cpu")
    md.append("Target: <= 20 ns per call_rcu: **%s** (grace %s ns; liburcu measured elsewhere: "
              "80 ns).\n" % (gr.verdict(None if g_ns is None else g_ns <= 20).strip("*"),
                            gr.fmt(g_ns)))
    hl.add("call_rcu enqueue cost, ns per call (CPU time)", g_ns,
           med("enqueue", PEER, 1, "ns_cpu"), "liburcu memb", unit="ns", better="lower",
           target=("grace", "<=", 20))
    hl.add("call_rcu instructions per call (grace: static path count; liburcu: callgrind)",
           med("instr", "grace", 1, "ir_call_rcu_path"), ir_u_path, "liburcu memb",
           unit="instr", better="lower", words=("fewer instructions", "more instructions"))

    # ---- throughput -------------------------------------------------------------------------
    md.append(gr.heading(3, "Callbacks per second"))
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

    def tp(x, p, m="mcb_per_s", b="tput"):
        return med(b, x, p, m)

    rows = []
    for x, desc in TP_ROWS:
        if not d.has("tput", x, 1, "mcb_per_s"):
            continue
        r1 = "%s / %s" % (gr.fmt_x(gr.ratio(tp(x, 1), tp(PEER, 1))),
                          gr.fmt_x(gr.ratio(tp(x, 2), tp(PEER, 2))))
        r2 = "%s / %s" % (gr.fmt_x(gr.ratio(tp(x, 1), tp("urcu-memb-percpu", 1))),
                          gr.fmt_x(gr.ratio(tp(x, 2), tp("urcu-memb-percpu", 2))))
        fr = "%s / %s" % (gr.fmt(tp(x, 1, b="tput-free")), gr.fmt(tp(x, 2, b="tput-free")))
        c1, c2 = tp(x, 1, "process_ns_cpu"), tp(x, 2, "process_ns_cpu")
        cr = "%s / %s" % (gr.fmt_x(gr.ratio(tp(PEER, 1, "process_ns_cpu"), c1)),
                          gr.fmt_x(gr.ratio(tp(PEER, 2, "process_ns_cpu"), c2)))
        rows.append([desc, d.cell("tput", x, 1, "mcb_per_s"), d.cell("tput", x, 2, "mcb_per_s"),
                     r1, r2, "%s / %s" % (gr.fmt(c1), gr.fmt(c2)), cr, fr,
                     "%s MB" % gr.fmt(tp(x, 2, "maxrss_mb"))])
    md.append(gr.md_table(["design", "Mcb/s, 1 producer", "Mcb/s, 2 producers",
                           "vs liburcu (1 / 2)", "vs liburcu per-CPU (1 / 2)",
                           "process CPU ns/cb (1 / 2)",
                           "liburcu's / grace's CPU per cb (1 / 2)", "free: Mcb/s 1 / 2",
                           "peak RSS, 2 producers"], rows))
    g1 = gr.ratio(tp("grace", 1), tp(PEER, 1))
    g2 = gr.ratio(tp("grace", 2), tp(PEER, 2))
    ok = None if gr.missing(g1) or gr.missing(g2) else min(g1, g2) >= 3
    c1 = gr.ratio(tp(PEER, 1, "process_ns_cpu"), tp("grace", 1, "process_ns_cpu"))
    c2 = gr.ratio(tp(PEER, 2, "process_ns_cpu"), tp("grace", 2, "process_ns_cpu"))
    md.append("Target: >= 3x liburcu's callbacks per second: **%s** on the wall clock (%s with "
              "1 producer, %s with 2); per CPU-second the process spends, grace does %s and %s "
              "liburcu's callbacks. Producer CPU per call (ns; includes the pool and, for grace "
              "past its soft limit, helping): %s. Grace periods per 1000 callbacks (grace, "
              "1 / 2 producers): %s / %s; context switches per 1000 callbacks (grace / liburcu, "
              "1 producer): %s / %s.\n" % (
                  gr.verdict(ok).strip("*"), gr.fmt_x(g1), gr.fmt_x(g2), gr.fmt_x(c1),
                  gr.fmt_x(c2),
                  ", ".join("%s %s / %s" % (x, gr.fmt(tp(x, 1, "producer_ns_cpu")),
                                           gr.fmt(tp(x, 2, "producer_ns_cpu")))
                            for x, _ in TP_ROWS if d.has("tput", x, 1, "producer_ns_cpu")),
                  gr.fmt(tp("grace", 1, "gp_per_kcb")), gr.fmt(tp("grace", 2, "gp_per_kcb")),
                  gr.fmt(tp("grace", 1, "ctxsw_per_kcb")), gr.fmt(tp(PEER, 1, "ctxsw_per_kcb"))))
    for p in (1, 2):
        hl.add("Callbacks per second, %d producer%s (million)" % (p, "s" if p > 1 else ""),
               tp("grace", p), tp(PEER, p), "liburcu memb", unit="M/s", better="higher",
               target=("ratio", ">=", 3.0))

    # ---- lone latency -----------------------------------------------------------------------
    md.append(gr.heading(3, "Enqueue-to-invoke latency of a lone callback"))
    md.append("One `call_rcu`, wait (futex) until its callback ran, sleep, repeat; the callback "
              "reads the clock. *Idle*: the next callback 2 ms after the last one ran, so each is "
              "a lone callback (nothing else queued within the adaptive policy's largest pace, "
              "1 ms). *Under load*: 200 us apart while a second thread floods `call_rcu`. "
              "Percentiles over the samples of every run pooled.\n")
    lat = {}
    for x, _ in POLICIES:
        for ld in (0, 1):
            v = lat_raw.get((x, ld))
            lat[(x, ld)] = (gr.percentile(v, 50), gr.percentile(v, 99), len(v) if v else 0)
    rows = []
    for x, desc in POLICIES:
        if lat[(x, 0)][2] == 0 and lat[(x, 1)][2] == 0:
            continue
        rows.append([desc, gr.fmt_us(lat[(x, 0)][0]), gr.fmt_us(lat[(x, 0)][1]),
                     gr.fmt_us(lat[(x, 1)][0]), gr.fmt_us(lat[(x, 1)][1]),
                     "%s / %s" % (gr.fmt_x(gr.ratio(lat[(x, 0)][0], lat[(PEER, 0)][0])),
                                  gr.fmt_x(gr.ratio(lat[(x, 1)][0], lat[(PEER, 1)][0]))),
                     "%d / %d" % (lat[(x, 0)][2], lat[(x, 1)][2])])
    md.append(gr.md_table(["policy", "idle p50", "idle p99", "under load p50",
                           "under load p99", "p50 vs liburcu (idle / load)", "samples"], rows))
    p50, p99 = lat[("grace-adaptive", 0)][0], lat[("grace-adaptive", 0)][1]
    ok = None if p50 is None or p99 is None else (p50 <= 20 and p99 <= 200)
    md.append("Target for the default (adaptive) policy on an idle machine: p50 <= 20 us and "
              "p99 <= 200 us: **%s** (p50 %s, p99 %s; liburcu %s / %s; the OLS 2002 paper's "
              "rcu-poll: below 250 us on an idle system).\n" % (
                  gr.verdict(ok).strip("*"), gr.fmt_us(p50), gr.fmt_us(p99),
                  gr.fmt_us(lat[(PEER, 0)][0]), gr.fmt_us(lat[(PEER, 0)][1])))
    hl.add("Lone callback, enqueue to invoke, p50, idle machine (default policy)", p50,
           lat[(PEER, 0)][0], "liburcu memb", fmt_value="fmt_us", better="lower",
           paper="rcu-poll below 250 us idle (OLS 2002)", target=("grace", "<=", 20))
    hl.add("Lone callback, enqueue to invoke, p99, idle machine (default policy)", p99,
           lat[(PEER, 0)][1], "liburcu memb", fmt_value="fmt_us", better="lower",
           target=("grace", "<=", 200))

    # ---- OLS 2002 Figures 9-10 analogue -----------------------------------------------------
    md.append(gr.heading(3, "Latency against offered load (OLS 2002 Figures 9-10 analogue)"))
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
    pols = [x for x, _ in POLICIES if x in present]
    rows = []
    for r in rates:
        cells = []
        for x in pols:
            v = sweep_raw.get((x, r))
            ach = med("sweep@%d" % r, x, 1, "achieved_cb_per_s")
            cells.append("%s / %s%s" % (
                gr.fmt_us(gr.percentile(v, 50)), gr.fmt_us(gr.percentile(v, 99)),
                "" if ach is None or ach >= 0.95 * r else " (achieved %s)" % gr.fmt(ach)))
        rows.append([rate_label(r)] + cells)
    md.append(gr.md_table(["offered (cb/s)"] + pols, rows))
    md.append("![callback latency against offered load](callbacks_latency.png)\n")

    # ---- FREENIX 2003 Table 3 analogue ------------------------------------------------------
    md.append(gr.heading(3, "CPU overhead per policy (FREENIX 2003 Table 3 analogue)"))
    md.append("Same runs. *Engine CPU*: CPU time of the engine's worker threads (grace: "
              "`grace_rcu_callback_stats().worker_cpu_ns`; liburcu: the clocks of its call_rcu "
              "threads) per callback and as a share of one CPU; *process CPU*: the CPU clock of "
              "the whole process (producer, reader, workers) as a share of one CPU; the rest of "
              "the process beyond producer, reader, driver and workers stays within noise of 0 "
              "(`rest_ns_per_cb` in the CSV). *Producer*: CPU time of the queuing thread per "
              "callback (call_rcu, pacing sleeps, helping). *Reader*: the reader thread's CPU "
              "time per section (its section, its work outside, and what grace periods cost "
              "it: IPIs, wake-ups), the workload's own cost (the paper's ms/iteration). Medians "
              "of the runs. The paper (dcachebench, 4 CPUs): rcu-ltimer 77.52% CPU and 22.47 "
              "ms/iteration, rcu-poll 84.20% and 22.95 ms (8.6% more CPU for its latency), "
              "rcu-sched 81.95% and 22.46 ms. Plot: `callbacks_overhead.png`.\n")
    table_rates = [r for r in (1000, 100000, 1000000) if r in rates] or rates[:1]
    rows = []
    for r in table_rates:
        b = "sweep@%d" % r
        base = med(b, "grace-batch10ms", 1, "engine_ns_per_cb")
        for x, desc in POLICIES:
            if not d.has(b, x, 1, "producer_ns_per_cb"):
                continue
            e = med(b, x, 1, "engine_ns_per_cb")
            rows.append([rate_label(r), x, gr.fmt(e), gr.fmt(med(b, x, 1, "engine_cpu_pct")),
                         gr.fmt(med(b, x, 1, "process_cpu_pct")),
                         gr.fmt(med(b, x, 1, "producer_ns_per_cb")),
                         gr.fmt(med(b, x, 1, "gp_per_kcb")), gr.fmt(med(b, x, 1, "gp_per_s")),
                         gr.fmt(med(b, x, 1, "reader_ns_per_section")),
                         gr.fmt_us(gr.percentile(sweep_raw.get((x, r)), 50)),
                         gr.fmt_x(gr.ratio(e, base))])
    md.append(gr.md_table(["offered", "policy", "engine CPU ns/cb", "engine CPU %",
                           "process CPU %", "producer CPU ns/cb", "grace periods /1000 cb",
                           "grace periods/s", "reader CPU ns/section", "p50 latency",
                           "engine CPU vs grace BATCH 10 ms"], rows, align="ll" + "r" * 9))
    md.append("![CPU overhead per policy against offered load](callbacks_overhead.png)\n")
    md.extend(adaptive_section(d, sweep_raw, rates, hl))
    md.extend(frontier_section(d, sweep_raw, rates, pols, hl))

    gr.write_fragment(a.out, "callbacks", md)
    hl.write(a.out)
    plots(d, sweep_raw, rates, pols, a.out)
    frontier_plot(d, sweep_raw, rates, pols, a.out)


def overhead(d, r, x, base):
    """What callbacks cost the process per callback beyond the reader: the process's CPU per
    call (reader and driver excluded) minus the same figure with no call at all (the pacing
    loop alone), medians of the interleaved runs."""
    b = "sweep@%d" % r
    v, z = d.med(b, x, 1, "nonreader_ns_per_cb"), d.med(b, base, 1, "nonreader_ns_per_cb")
    return None if v is None or z is None else v - z


def adaptive_section(d, sweep_raw, rates, hl):
    """The default policy against the targets it was built for, and a one-line verdict per
    offered load against the paper's rcu-poll and rcu-ltimer and against liburcu."""
    md = [gr.heading(3, "The default (adaptive) policy against its targets")]
    md.append("Per offered load, from the sweep above: *extra CPU per callback* is what the "
              "callbacks cost the whole process beyond the reader's own CPU time, the queuing "
              "thread's `call_rcu` included, wherever the callbacks ran: the process's CPU per "
              "call (reader and driver excluded) minus the same producer loop's with no call "
              "(rows *-nocalls* in the CSV). *Reader* compares the reader's CPU per section "
              "with the same reader when no callback is posted. Targets: extra CPU <= 0.5x "
              "liburcu's, reader within 5% of its baseline, p50 <= 1 ms. *Grace periods/s* "
              "is bounded by design to 1/pace (pace = 200 x the CPU a grace period costs the "
              "engine, 50 us to 1 ms: about 0.5% of one CPU below the cap, cost / 1 ms at it); *engine "
              "CPU %* is the workers' whole share of a CPU (grace periods, naps, invoking the "
              "callbacks). *hurry*: the same load through `call_rcu_hurry()`, which skips the "
              "pacing (keeping POLL's 50 us least gap between back-to-back grace periods).\n")
    rows = []
    for r in rates:
        b = "sweep@%d" % r
        g = overhead(d, r, "grace-adaptive", "grace-nocalls")
        u = overhead(d, r, PEER, "urcu-nocalls")
        rd = d.med(b, "grace-adaptive", 1, "reader_ns_per_section")
        rb = d.med(b, "grace-nocalls", 1, "reader_ns_per_section")
        rdiff = None if rd is None or rb is None or rb == 0 else (rd - rb) / rb
        p50 = gr.percentile(sweep_raw.get(("grace-adaptive", r)), 50)
        hp50 = gr.percentile(sweep_raw.get(("grace-adaptive-hurry", r)), 50)
        gps = d.med(b, "grace-adaptive", 1, "gp_per_s")
        eng = d.med(b, "grace-adaptive", 1, "engine_cpu_pct")
        # A figure at or below zero is within the noise of its baseline: no ratio, no verdict.
        rat = gr.ratio(g, u) if g is not None and u is not None and u > 0 and g > 0 else None
        ok = None
        if rat is not None and rdiff is not None and p50 is not None:
            ok = rat <= 0.5 and rdiff <= 0.05 and p50 <= 1000
        rows.append([rate_label(r), gr.fmt(g), gr.fmt(u), gr.fmt_x(rat),
                     "%s (%s)" % (gr.fmt(rd), "n/a" if rdiff is None else "%+.1f%%" %
                                  (rdiff * 100)),
                     gr.fmt_us(p50), gr.fmt_us(hp50), gr.fmt(gps), gr.fmt(eng),
                     gr.verdict(ok)])
        if r in (1000, 10000, 100000, 1000000):
            hl.add("Extra CPU per callback at %s callbacks/s offered (ns, whole process beyond "
                   "the reader)" % rate_label(r), g, u, "liburcu memb", unit="ns",
                   better="lower", target=("ratio", "<=", 0.5))
    md.append(gr.md_table(["offered", "extra CPU ns/cb, grace", "liburcu", "ratio",
                           "reader ns/section (vs no callbacks)", "p50", "p50, hurry",
                           "grace periods/s", "engine CPU %", "targets"], rows))
    md.extend(floor_section(d, rates))
    md.append("One line per offered load against the seed papers and liburcu (OLS 2002: rcu-poll "
              "has the lowest latency, rcu-ltimer the lowest overhead; FREENIX 2003 Table 3: "
              "rcu-poll pays 8.6% more CPU than rcu-ltimer for it):\n")
    for r in rates:
        b = "sweep@%d" % r
        a_p50 = gr.percentile(sweep_raw.get(("grace-adaptive", r)), 50)
        p_p50 = gr.percentile(sweep_raw.get(("grace-poll", r)), 50)
        a_e = d.med(b, "grace-adaptive", 1, "engine_ns_per_cb")
        l_e = d.med(b, "grace-batch10ms", 1, "engine_ns_per_cb")
        u_p50 = gr.percentile(sweep_raw.get((PEER, r)), 50)
        u_o = overhead(d, r, PEER, "urcu-nocalls")
        g_o = overhead(d, r, "grace-adaptive", "grace-nocalls")
        md.append("- %s cb/s: latency %s (rcu-poll analogue POLL: %s; liburcu: %s); engine CPU "
                  "%s ns/cb against the rcu-ltimer analogue's %s; %s.\n" % (
                      rate_label(r), gr.fmt_us(a_p50), gr.fmt_us(p_p50), gr.fmt_us(u_p50),
                      gr.fmt(a_e), gr.fmt(l_e),
                      gr.compare_words(g_o, u_o, "lower", "liburcu", words=(
                          "less extra CPU per callback", "more extra CPU per callback"))))
    return md


def frontier_point(d, sweep_raw, r, x):
    """(extra CPU ns per callback, p50 us, library wake-ups/s) of design x at offered load r."""
    base = "urcu-nocalls" if x == PEER else "grace-nocalls"
    p50 = gr.percentile(sweep_raw.get((x, r)), 50)
    return (overhead(d, r, x, base), None if p50 is None else p50 / 1000.0,
            d.med("sweep@%d" % r, x, 1, "lib_wakeups_per_s"))


def dominates(g, u):
    """g at least as good as u on all three (CPU, p50, wake-ups); a CPU figure at or below 0
    is within noise of the no-call baseline and counts as 0."""
    if any(v is None for v in g + u):
        return None
    return max(g[0], 0) <= max(u[0], 0) and g[1] <= u[1] and g[2] <= u[2]


def frontier_section(d, sweep_raw, rates, pols, hl):
    """Latency against CPU and wake-ups: for every liburcu operating point, is there a grace
    policy at least as good on all three?"""
    if PEER not in pols:
        return []
    md = [gr.heading(3, "The latency and overhead frontier: every policy against liburcu")]
    md.append("Per offered load, from the sweep above: *CPU* is the extra CPU per callback of "
              "the whole process beyond the reader (the process's CPU per call, reader and "
              "driver excluded, minus the same loop with no call); *wake-ups/s* are the "
              "voluntary context switches per second of the library's own threads (every "
              "thread of the process but the producer, the reader and the driver, from "
              "`/proc/self/task/*/status`): each is a block that a wake-up ended. A grace "
              "setting *dominates* liburcu at a load when it is at least as good on all three "
              "(CPU within noise of the no-call baseline counts as 0). Plot: "
              "`callbacks_frontier.png`.\n")
    rows = []
    for r in rates:
        u = frontier_point(d, sweep_raw, r, PEER)
        cells, best = [], []
        for x in pols:
            c, p, w = frontier_point(d, sweep_raw, r, x)
            cells.append("%s / %s / %s" % (gr.fmt(c), gr.fmt(p), gr.fmt(w)))
            if x != PEER and dominates((c, p, w), u):
                best.append(x)
        known = all(v is not None for v in u)
        rows.append([rate_label(r)] + cells +
                     [", ".join(best) if best else ("**none**" if known else "n/a")])
    md.append(gr.md_table(["offered (cb/s)"] + ["%s: CPU ns/cb / p50 ms / wake-ups/s" % x
                                                for x in pols] + ["dominates liburcu"], rows))
    return md


def frontier_plot(d, sweep_raw, rates, pols, out):
    plt = gr.plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, idx, label in ((axes[0], 0, "extra CPU per callback (ns, whole process)"),
                           (axes[1], 2, "wake-ups per second of the library's threads")):
        for x in pols:
            xs, ys, rs = [], [], []
            for r in rates:
                pt = frontier_point(d, sweep_raw, r, x)
                if pt[idx] is None or pt[1] is None:
                    continue
                xs.append(max(pt[idx], 1.0))  # log scale: noise at or below 0 drawn at 1
                ys.append(max(pt[1], 1e-3))
                rs.append(r)
            if not xs:
                continue
            ax.plot(xs, ys, "o-", color=COLORS.get(x), label=x, alpha=0.85)
            for xv, yv, r in zip(xs, ys, rs):
                ax.annotate(rate_label(r), (xv, yv), fontsize=6, alpha=0.7,
                            xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("p50 enqueue-to-invoke latency (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("p50 latency against CPU per callback (points: offered cb/s)", fontsize=10)
    axes[1].set_title("p50 latency against wake-ups per second", fontsize=10)
    gr.save_fig(fig, os.path.join(out, "callbacks_frontier.png"))


FLOOR_CYCLES_PER_S = 500  # a grace period every 2 ms at least: p50 about 1 ms


def floor_section(d, rates):
    """What the CPU target leaves per grace-period cycle once the membarrier each cycle needs is
    paid, for an engine that keeps p50 <= 1 ms: a lower bound from what this machine charges
    for one membarrier (callbacks_bench floor), beside the target (0.5x liburcu)."""
    mb = d.med("floor", "machine", 2, "membarrier_cpu_ns")
    if mb is None:
        return []
    wk = [(u, d.med("floor", "machine", 2, "wake_cpu_ns@%d" % u)) for u in (50, 1000, 2000)]
    md = [gr.heading(4, "What the CPU target leaves per grace period on this machine")]
    md.append("To keep p50 <= 1 ms under a steady stream, a grace period must end at least every "
              "2 ms (a callback waits on average half the time between two, plus the grace "
              "period itself): %d grace periods per second at least, whatever the rate. Each "
              "needs one membarrier, the heavy barrier that keeps readers free of fences: %s ns "
              "of CPU here with the reader spinning on the other CPU (`callbacks_bench floor`, "
              "median of the runs, no library involved), unless every reader answers an ask at "
              "its next section boundary instead, as grace's default flavor asks them to "
              "(docs/design.md, section 3, \"Asking\"; it falls back to the membarrier when "
              "one does not answer within 20 us). *Membarrier floor*: %d of them per second, "
              "per callback; a lower bound for any engine that interrupts fence-free readers. "
              "*Left per grace period*: the target's CPU per second, divided among %d grace "
              "periods, minus the membarrier: what remains for the worker's wake-up, invoking "
              "the callbacks and the calls themselves. For scale, one timed sleep and wake-up "
              "of a thread alone on its CPU cost %s here (CPU time; the machine is a VM).\n"
              % (FLOOR_CYCLES_PER_S, gr.fmt(mb), FLOOR_CYCLES_PER_S, FLOOR_CYCLES_PER_S,
                 ", ".join("%s ns after %d us" % (gr.fmt(v), u) for u, v in wk
                           if v is not None)))
    rows = []
    for r in rates:
        fl = FLOOR_CYCLES_PER_S * mb / r
        u = overhead(d, r, PEER, "urcu-nocalls")
        g = overhead(d, r, "grace-adaptive", "grace-nocalls")
        tgt = 0.5 * u if u is not None and u > 0 else None
        left = None if tgt is None else tgt * r / FLOOR_CYCLES_PER_S - mb
        rows.append([rate_label(r), gr.fmt(fl), gr.fmt(tgt), gr.fmt(g),
                     "n/a" if tgt is None else gr.fmt(fl / tgt) + "x",
                     "n/a" if left is None else gr.fmt(left) + " ns"])
    md.append(gr.md_table(["offered", "membarrier floor ns/cb", "target ns/cb (0.5x liburcu)",
                           "grace ns/cb", "floor / target", "left per grace period"], rows))
    return md


def plots(d, sweep_raw, rates, pols, out):
    plt = gr.plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, logy in zip(axes, (False, True)):
        for x in pols:
            xs, p50, p99 = [], [], []
            for r in rates:
                v = sweep_raw.get((x, r))
                if v:
                    xs.append(r)
                    p50.append(gr.percentile(v, 50) / 1000)
                    p99.append(gr.percentile(v, 99) / 1000)
            if not xs:
                continue
            ax.plot(xs, p50, "o-", color=COLORS.get(x), label="%s p50" % x)
            if logy:
                ax.plot(xs, p99, "x--", color=COLORS.get(x), alpha=0.6, label="%s p99" % x)
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("offered load (callbacks/s)")
        ax.set_ylabel("enqueue-to-invoke latency (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title("call_rcu latency vs load (%s y; cf. OLS 2002 Fig. %s)"
                     % ("log" if logy else "linear", "10" if logy else "9"), fontsize=10)
        ax.legend(fontsize=7)
    gr.save_fig(fig, os.path.join(out, "callbacks_latency.png"))

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    series = [("engine_ns_per_cb", "engine CPU per callback (ns)", True),
              ("gp_per_kcb", "grace periods per 1000 callbacks", True),
              ("reader_ns_per_section", "reader CPU per section (ns)", False)]
    for ax, (metric, label, logy) in zip(axes, series):
        for x in pols:
            xs, ys = [], []
            for r in rates:
                v = d.med("sweep@%d" % r, x, 1, metric)
                if v is not None and (v > 0 or not logy):
                    xs.append(r)
                    ys.append(v)
            if xs:
                ax.plot(xs, ys, "o-", color=COLORS.get(x), label=x)
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("offered load (callbacks/s)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("CPU overhead per policy (cf. FREENIX 2003 Table 3)", fontsize=10)
    gr.save_fig(fig, os.path.join(out, "callbacks_overhead.png"))


if __name__ == "__main__":
    main()
