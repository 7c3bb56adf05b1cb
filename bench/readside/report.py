# SPDX-License-Identifier: MIT
"""Turn readside.csv (and the raw synchronize samples) into readside.md, readside.png and the
family's headline figures.

Called by bench/readside/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/readside/report.py --csv DIR/readside.csv --raw DIR/readside-raw \
        --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

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
SCENARIOS = [(0, "no reader"), (1, "1 busy reader"), (8, "8 busy readers")]
QSBR_SCENARIOS = [(0, "qsbr, no reader"), (1, "qsbr, 1 busy reader")]


def main():
    a = gr.family_args(__doc__, "bench/readside/run.sh", ("--urcu", "?", "liburcu version"))
    d = gr.load_bench(a.csv)
    raw = gr.load_samples(a.raw, "sync")
    present = set(d.designs())
    nruns = d.runs("pair", "ns_cpu")
    nsync = d.runs("sync", "p50_us")
    ncpu = d.nproc
    ir = {x: d.med("instr", x, 1, "ir_per_pair") for x in present}
    ir_empty = ir.get("empty")

    def net(x):
        i = ir.get(x)
        return i - ir_empty if i is not None and ir_empty is not None else None

    def ns(b, x, t):
        return d.med(b, x, t, "ns_cpu")

    md = [gr.heading(2, "Read side: lock+unlock cost and synchronize latency"),
          gr.quick_note(a),
          gr.run_line(a, d, "Peer: Debian's liburcu %s." % a.urcu)]

    md.append(gr.heading(3, "Read-side lock+unlock, empty body"))
    md.append("ns per pair: median of %d interleaved runs (one process each, threads pinned), "
              "thread CPU time per pair averaged over the threads, min-max of the runs in "
              "brackets; wall-clock figures are in the CSV (`ns_wall`). *loop*: one pair per "
              "loop iteration; *x8*: eight pairs per iteration (straight-line code, closer to "
              "sections inlined in real code; a one-pair loop runs faster when it fits in one "
              "64-byte block, which says more about the layout than about the design). Every "
              "measured loop starts on a 64-byte boundary. Instructions per pair: callgrind "
              "over one call of the one-pair loop (`--toggle-collect` on the design's loop "
              "function); *net* subtracts the empty loop's %s instructions per iteration.\n"
              % (nruns, gr.fmt(ir_empty)))
    rows = []
    for x, desc in PAIR_ROWS + QS_ROWS:
        if x not in present:
            continue
        cells, rats = [], []
        peer = "urcu-qsbr-qs" if x.endswith("-qs") else PEER
        for b in ("pair", "pair_x8"):
            for t in (1, 2):
                cells.append(d.cell(b, x, t, "ns_cpu"))
                rats.append(gr.fmt_x(gr.ratio(ns(b, x, t), ns(b, peer, t))))
        rat = "1 (peer)" if x == peer else "%s / %s, %s / %s" % tuple(rats)
        rows.append(["%s: %s" % (x, desc)] + cells + [rat, gr.fmt(ir.get(x)), gr.fmt(net(x))])
    md.append(gr.md_table(["design", "ns/pair, loop, 1 thread", "loop, 2 threads",
                           "x8, 1 thread", "x8, 2 threads",
                           "vs liburcu inline (loop 1 / 2 thr, x8 1 / 2 thr)", "instr/pair",
                           "net of loop"], rows, align="l" + "r" * 7))
    md.append("The `-qs` rows are not lock+unlock: one QSBR quiescent-state report per iteration "
              "(the cost a QSBR reader actually pays, as often as it chooses); their ratio is "
              "against liburcu's.\n")

    # ---- synchronize latency ----
    clock_us = gr.median([x for t in (0, 1, 8) for dd in present
                          for x in d.values("sync", dd, t, "clock_us")])
    md.append(gr.heading(3, "synchronize latency"))
    md.append("Back-to-back synchronize calls from an unregistered thread while R reader threads "
              "run back-to-back short sections (one rcu_dereference and a load each), after 20 "
              "warm-up grace periods. Percentiles pooled over the samples of %d interleaved "
              "runs (one process per run; grace and liburcu alternate). With 0 or 1 reader the "
              "updater and the reader are pinned to their own CPU%s. A reader preempted inside "
              "its section holds the grace period until the scheduler runs it again, so "
              "oversubscribed distributions can be bimodal and the mean (total time / grace "
              "periods) is the telling figure there. Reader Mops/s: million sections per "
              "second per reader (median over runs), to show the readers ran. Every sample "
              "includes the two clock reads around it (%s us, median), which matters only for "
              "the sub-microsecond rows. The srcu family measures the default flavor again, "
              "with the same method, beside srcu: its medians come from other runs and differ "
              "by the run-to-run noise.\n"
              % (nsync, "; **8 readers on %d CPUs is oversubscribed** (9 busy threads, "
                 "unpinned)" % ncpu if ncpu < 9 else "", gr.fmt(clock_us)))
    sync_rows = []
    for readers, label in SCENARIOS:
        for x, peer in (("grace", "urcu-memb"), ("urcu-memb", None)):
            sync_rows.append((readers, label, x, peer))
    for readers, label in QSBR_SCENARIOS:
        for x, peer in (("grace-qsbr", "urcu-qsbr"), ("urcu-qsbr", None)):
            sync_rows.append((readers, label, x, peer))
    sync = {}
    for readers, label, x, peer in sync_rows:
        v = raw.get((x, readers))
        if v:
            sync[(x, readers)] = (gr.percentile(v, 50), gr.percentile(v, 99), sum(v) / len(v),
                                  len(v))
    rows = []
    for readers, label, x, peer in sync_rows:
        if (x, readers) not in sync:
            continue
        p50, p99, mean, n = sync[(x, readers)]
        pp = sync.get((peer, readers)) if peer else None

        def rr(i):
            if pp:
                return gr.fmt_x(gr.ratio(sync[(x, readers)][i], pp[i]))
            return "1 (peer)" if peer is None else "n/a"
        if readers >= ncpu:
            label += " (oversubscribed)"
        mops = d.med("sync", x, readers, "reader_mops") if readers else None
        rows.append([label, x, gr.fmt(p50), gr.fmt(p99), gr.fmt(mean), rr(0), rr(1), rr(2), n,
                     gr.fmt(mops) if mops is not None else "-"])
    md.append(gr.md_table(["scenario", "design", "p50 us", "p99 us", "mean us",
                           "p50 vs liburcu", "p99 vs liburcu", "mean vs liburcu", "samples",
                           "reader Mops/s"], rows, align="ll" + "r" * 8))

    # ---- targets and headlines ----
    hl = gr.Headlines("readside", "Read side")
    tg = []
    gnet, unet = net("grace"), net(PEER)
    tg.append(["grace default <= 22 instructions per pair (net of the loop)",
               "%s (liburcu inline: %s)" % (gr.fmt(gnet), gr.fmt(unet)),
               gr.verdict(None if gnet is None else gnet <= 22)])
    hl.add("Read-side lock+unlock: instructions per pair (callgrind, repeatable)", gnet, unet,
           "liburcu memb, inline", unit="instr", better="lower", target=("grace", "<=", 22),
           words=("fewer instructions", "more instructions"))
    for b, what in (("pair", "one-pair loop"), ("pair_x8", "x8 straight-line")):
        for t in (1, 2):
            r = gr.ratio(ns(b, "grace", t), ns(b, PEER, t))
            tg.append(["grace default <= 1.0x liburcu inline, ns per pair, %s, %d thread%s"
                       % (what, t, "s" if t > 1 else ""), gr.fmt_x(r),
                       gr.verdict(None if gr.missing(r) else r <= 1.0)])
    for t in (1, 2):
        hl.add("Read-side lock+unlock, ns per pair (x8 loop, %d thread%s)"
               % (t, "s" if t > 1 else ""), ns("pair_x8", "grace", t), ns("pair_x8", PEER, t),
               "liburcu memb, inline", unit="ns", better="lower", target=("ratio", "<=", 1.0))
    qnet = net("grace-qsbr")
    tg.append(["grace qsbr read_lock+unlock: 0 instructions (net)", gr.fmt(qnet),
               gr.verdict(None if qnet is None else abs(qnet) < 0.01)])
    hl.add("QSBR quiescent state, ns", ns("pair", "grace-qsbr-qs", 1),
           ns("pair", "urcu-qsbr-qs", 1), "liburcu qsbr, inline", unit="ns", better="lower")
    for readers, label in SCENARIOS[:2]:
        g, u = sync.get(("grace", readers)), sync.get(("urcu-memb", readers))
        r50 = gr.ratio(g[0], u[0]) if g and u else None
        r99 = gr.ratio(g[1], u[1]) if g and u else None
        tg.append(["synchronize p50 <= 0.6x liburcu, %s" % label, gr.fmt_x(r50),
                   gr.verdict(None if r50 is None or gr.missing(r50) else r50 <= 0.6)])
        tg.append(["synchronize p99 <= 1.0x liburcu, %s" % label, gr.fmt_x(r99),
                   gr.verdict(None if r99 is None or gr.missing(r99) else r99 <= 1.0)])
        hl.add("synchronize_rcu latency p50, %s" % label, g and g[0], u and u[0],
               "liburcu memb", fmt_value="fmt_us", better="lower",
               target=("ratio", "<=", 0.6))
        hl.add("synchronize_rcu latency p99, %s" % label, g and g[1], u and u[1],
               "liburcu memb", fmt_value="fmt_us", better="lower",
               target=("ratio", "<=", 1.0))
    md.append(gr.heading(3, "Targets"))
    md.append(gr.md_table(["target", "measured", "verdict"], tg, align="lll"))
    md.append("![read side and synchronize latency](readside.png)\n")
    gr.write_fragment(a.out, "readside", md)
    hl.write(a.out)
    plot(a.out, d, sync, present, ncpu)


def plot(out, d, sync, present, ncpu):
    fig, (ax1, ax2) = gr.plt.subplots(1, 2, figsize=(13, 4.8))
    names = [x for x, _ in PAIR_ROWS if x in present and x != "empty"]
    groups = []
    for b, t, glabel, color, hatch in (("pair", 1, "loop, 1 thread", "tab:blue", ""),
                                       ("pair", 2, "loop, 2 threads", "tab:orange", ""),
                                       ("pair_x8", 1, "x8, 1 thread", "tab:blue", "//"),
                                       ("pair_x8", 2, "x8, 2 threads", "tab:orange", "//")):
        meds = [d.med(b, x, t, "ns_cpu") for x in names]
        spread = [d.spread(b, x, t, "ns_cpu") for x in names]
        err = [[m - lo if m is not None else 0 for m, (lo, _) in zip(meds, spread)],
               [hi - m if m is not None else 0 for m, (_, hi) in zip(meds, spread)]]
        groups.append((glabel, meds, dict(color=color, hatch=hatch, yerr=err)))
    gr.grouped_bars(ax1, names, groups, "ns per lock+unlock pair (median, min-max)",
                    "Read-side lock+unlock, empty body", logy=True, rotation=30)
    scen = ["%d reader%s%s" % (r, "" if r == 1 else "s", "\n(oversubscribed)" if r >= ncpu
                                else "") for r, _ in SCENARIOS]
    groups = [("%s p%d" % (x, 50 if i == 0 else 99),
               [sync.get((x, r), (None, None))[i] for r, _ in SCENARIOS],
               dict(color=color, hatch="" if i == 0 else "//"))
              for x, color in (("grace", "tab:blue"), ("urcu-memb", "tab:orange"))
              for i in (0, 1)]
    gr.grouped_bars(ax2, scen, groups, "synchronize latency, us",
                    "synchronize_rcu latency (pooled over runs)", logy=True, rotation=0)
    gr.save_fig(fig, os.path.join(out, "readside.png"))


if __name__ == "__main__":
    main()
