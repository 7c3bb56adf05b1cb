#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hashapi report: grace_hash against liburcu's cds_lfht (and cds_lfht on grace), as a markdown
fragment DIR/hashapi.md with ratio tables and a plot. Run by bench/hashapi/run.sh."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "report"))
import gracereport as gr  # noqa: E402

LABELS = {
    "grace": "grace_hash (grace_hash_lookup)",
    "grace-inline": "grace_hash (inline candidate loop)",
    "urcu": "liburcu cds_lfht",
    "grace-urcu": "cds_lfht on grace (grace-urcu)",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--instr", default="")
    ap.add_argument("--command", default="")
    ap.add_argument("--load-before", default="")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()

    rows = gr.load_csv(a.csv)
    ops = [r for r in rows if r["bench"] == "ops" and r["unit"] == "Mops/s"]
    rsz = [r for r in rows if r["bench"] == "resize"]
    mem = [r for r in rows if r["bench"] == "memory"]
    designs = [d for d in ("grace", "grace-inline", "grace-urcu", "urcu")
               if any(r["design"] == d for r in rows)]
    md = []
    w = md.append
    if a.quick:
        w("> Quick smoke run: do not quote these numbers.\n")
    w("Library against library: grace's own hash table (`grace_hash_*`) beside liburcu's "
      "`cds_lfht` (Debian's liburcu-dev, memb flavor, inline read side), and liburcu's API on "
      "grace (`cds_lfht` of grace-urcu). Every design keeps one table of the same keys (load "
      "factor 1), runs the same operation stream, interleaved with the others; medians of the "
      "repetitions. Updates delete a key the thread owns and insert a new node for it, the old "
      "one freed after a grace period (`call_rcu`, or the table's free callback). "
      "Command: `%s`; load average at the start: %s.\n" % (a.command, a.load_before or "n/a"))
    st = gr.summarize(ops, ("design", "threads", "update_pct"), "value")
    threads = sorted({r["threads"] for r in ops})
    upds = sorted({r["update_pct"] for r in ops})
    if ops:
        w("### Throughput (Mops/s) and ratios to liburcu\n")
        hdr = ["threads", "updates"] + [LABELS.get(d, d) for d in designs]
        hdr += ["%s / liburcu" % d for d in designs if d != "urcu" and "urcu" in designs]
        tab = []
        for t in threads:
            for u in upds:
                row = ["%d%s" % (t, " (oversubscribed)" if t > (os.cpu_count() or 2) else ""),
                       "%g%%" % u]
                base = st.get(("urcu", t, u))
                for d in designs:
                    s = st.get((d, t, u))
                    row.append(gr.fmt(s.median) if s else "n/a")
                for d in designs:
                    if d == "urcu" or "urcu" not in designs:
                        continue
                    s = st.get((d, t, u))
                    row.append(gr.fmt_x(gr.ratio(s.median if s else None,
                                                 base.median if base else None)))
                tab.append(row)
        w(gr.md_table(hdr, tab))
        series = []
        for d in designs:
            xs, ys, lo, hi = [], [], [], []
            for u in upds:
                s = st.get((d, threads[0], u))
                if s:
                    xs.append(u)
                    ys.append(s.median)
                    lo.append(s.q1)
                    hi.append(s.q3)
            series.append((d, xs, ys, lo, hi))
        png = gr.line_plot(os.path.join(a.out, "hashapi_updates.png"), series,
                           xlabel="update fraction (%)", ylabel="Mops/s",
                           title="Hash tables, %d thread(s): lookups and update mixes"
                           % threads[0], symlogx=1, labels=LABELS)
        w("![hashapi](%s)\n" % os.path.basename(png))
    if rsz:
        w("### Lookups while the table is resized\n")
        w("One thread resizes the table back and forth between nkeys/8 and 2 nkeys buckets "
          "(`grace_hash_resize()`, `cds_lfht_resize()`) while the others look up keys.\n")
        sm = gr.summarize([r for r in rsz if r["unit"] == "Mops/s"], ("design", "threads"),
                          "value")
        sr = gr.summarize([r for r in rsz if r["unit"] == "resizes/s"], ("design", "threads"),
                          "value")
        tab = []
        for t in sorted({r["threads"] for r in rsz}):
            for d in designs:
                if (d, t) not in sm:
                    continue
                base = sm.get(("urcu", t))
                quiet = st.get((d, t, 0))
                tab.append([t, LABELS.get(d, d), gr.fmt(sm[(d, t)].median),
                            gr.fmt(quiet.median) if quiet else "n/a",
                            gr.fmt(sr[(d, t)].median) if (d, t) in sr else "n/a",
                            gr.fmt_x(gr.ratio(sm[(d, t)].median,
                                              base.median if base else None))])
        w(gr.md_table(["lookup threads", "design", "lookups during resizes (Mops/s)",
                       "lookups without (Mops/s)", "resizes/s", "lookups / liburcu's"], tab))
    if mem:
        w("### Memory per node\n")
        w("At load factor 1: the structure embedded in each object, plus the table's own heap "
          "per node (grace: one pointer per bucket; liburcu: one 16-byte bucket node per "
          "bucket). grace's node holds the `rcu_head` the table retires it with; a liburcu "
          "user embeds a 16-byte `rcu_head` of its own to free the node.\n")
        sv = {(r["design"], r["unit"]): r["value"] for r in mem}
        tab = [[LABELS.get(d, d), sv.get((d, "node_bytes"), "n/a"),
                gr.fmt(sv.get((d, "table_bytes_per_node"))),
                gr.fmt(sv.get((d, "bytes_per_node")))] for d in designs]
        w(gr.md_table(["design", "node (bytes)", "table per node (bytes)", "total per node"],
                      tab))
    if a.instr and os.path.exists(a.instr):
        ir = gr.load_csv(a.instr)
        if ir:
            w("### Instructions per operation (callgrind, one thread)\n")
            iv = {(r["design"], r["update_pct"]): r["per_op"] for r in ir}
            tab = []
            for u in sorted({r["update_pct"] for r in ir}):
                for d in designs:
                    if (d, u) in iv:
                        tab.append(["lookups" if u == 0 else "%g%% updates" % u,
                                    LABELS.get(d, d), gr.fmt(iv[(d, u)]),
                                    gr.fmt_x(gr.ratio(iv[(d, u)], iv.get(("urcu", u))))])
            w(gr.md_table(["workload", "design", "instructions per op", "ratio to liburcu"],
                          tab))
    open(os.path.join(a.out, "hashapi.md"), "w").write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
