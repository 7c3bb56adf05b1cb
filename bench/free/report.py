# SPDX-License-Identifier: MIT
"""Turn free.csv into free.md (markdown fragment) and the family's headline figures: memory under
a flood of deferred frees (issue 13: it stays bounded under a 60-second free_rcu flood from 2
threads; the peak RSS goes into the report).

Called by bench/free/run.sh; run it again by hand to re-render without re-measuring:
    /usr/bin/python3 bench/free/report.py --csv DIR/free.csv --out DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import gracereport as gr  # noqa: E402

DESIGNS = [
    ("grace-free", "grace `free_rcu` (the caller frees, as it allocates)"),
    ("grace-free-headless", "grace `free_rcu_mightsleep` (no rcu_head)"),
    ("grace-call", "grace `call_rcu`, `free()` callback"),
    ("urcu-call", "liburcu memb `call_rcu`, `free()` callback"),
    ("urcu-defer", "liburcu memb `defer_rcu(free, p)`"),
]
BOUND_MB = 256  # the tests' bound (bench/free/CMakeLists.txt)
T = 2


def main():
    a = gr.family_args(__doc__, "bench/free/run.sh",
                       ("--long-s", "60", "seconds of the long grace free_rcu flood"),
                       ("--defer-md", "", "defer_flood.sh's table (grace-urcu's defer_rcu())"))
    d = gr.load_bench(a.csv)
    hl = gr.Headlines("free", "free_rcu: memory under a flood")

    def med(bench, design, metric):
        v = d.med(bench, design, T, metric)
        return float("nan") if v is None else v

    md = [gr.heading(2, "free_rcu: memory under a flood of deferred frees"),
          gr.quick_note(a),
          gr.run_line(a, d, "Each design runs in a process of its own (its peak resident set "
                            "is its own), 2 flood threads allocating 64-byte objects and "
                            "retiring each at once; the resident set is sampled every 5 ms. "
                            "Medians of %d runs per design, runs interleaved."
                      % max(1, d.runs("flood", "peak_rss_mb")))]

    md.append(gr.heading(3, "The issue's flood: grace free_rcu, 2 threads, %s s" % a.long_s))
    peak = med("flood-long", "grace-free", "peak_rss_mb")
    rows = [["frees queued per second", gr.fmt_rate(med("flood-long", "grace-free",
                                                        "frees_per_s"))],
            ["peak resident set (sampled every 5 ms)", "%s MB" % gr.fmt(peak)],
            ["peak resident set (getrusage)", "%s MB" % gr.fmt(med("flood-long", "grace-free",
                                                                   "maxrss_mb"))],
            ["resident set before the flood", "%s MB" % gr.fmt(med("flood-long", "grace-free",
                                                                   "base_rss_mb"))],
            ["resident set at its end (before free_rcu_barrier)",
             "%s MB" % gr.fmt(med("flood-long", "grace-free", "end_rss_mb"))],
            ["free_rcu_barrier() after it", gr.fmt_us(1e6 * med("flood-long", "grace-free",
                                                                "settle_s"))],
            ["waits at a bound (engine's hard limit, counted by its statistics)",
             gr.fmt(med("flood-long", "grace-free", "bound_waits"))]]
    md.append(gr.md_table(["", "value"], rows, align="lr"))
    ok = peak == peak and peak <= BOUND_MB
    md.append("Bounded: the peak resident set %s the tests' bound of %d MB "
              "(`bench_free_flood_long`, ctest label `long`). A flood at this rate with no bound "
              "would grow by its rate times the object size every second there is no grace "
              "period.\n" % ("stays under" if ok else "**exceeds**", BOUND_MB))

    md.append(gr.heading(3, "Every design, plain and with a reader stalling grace periods"))
    md.append("Plain: no reader. Stalled: a reader holds a read-side section for 1 s in every "
              "2 s, so no grace period ends for half the run. *capped*: the run was cut short "
              "when the process passed 4 GB (a design with no bound).\n")
    rows = []
    for x, label in DESIGNS:
        if not d.values("flood", x, T, "peak_rss_mb"):
            continue
        capped = med("flood-stall", x, "capped")
        rows.append([label,
                     gr.fmt_rate(med("flood", x, "frees_per_s")),
                     gr.fmt(med("flood", x, "peak_rss_mb")),
                     gr.fmt_rate(med("flood-stall", x, "frees_per_s")),
                     gr.fmt(med("flood-stall", x, "peak_rss_mb")) +
                     (" (capped)" if capped == capped and capped > 0 else ""),
                     gr.fmt(med("flood-stall", x, "end_rss_mb"))])
    md.append(gr.md_table(["design", "frees/s", "peak RSS MB", "frees/s, stalled",
                           "peak RSS MB, stalled", "RSS MB at the end, stalled"], rows,
                          align="lrrrrr"))
    md.append("")
    md.append("grace bounds a thread's pending `free_rcu` objects (65536; past that the call "
              "waits for the oldest grace period, at most the stall timeout) and the engine's "
              "callbacks (its hard limit); liburcu's `call_rcu` queue has no bound.\n")

    if a.defer_md and os.path.exists(a.defer_md):
        md.append(gr.heading(3, "defer_rcu(): grace-urcu against liburcu"))
        md.append("One program (`bench/free/defer_flood.c`) built against each library: T "
                  "threads each defer N no-op functions, sleeping between two calls on the "
                  "paced points, then unregister. Throughput is wall-clock deferrals per "
                  "second; CPU is the whole process's (workers and liburcu's defer thread "
                  "included) per deferral; *extra* CPU subtracts the same loop with no "
                  "deferral, whose sleeps cost more than the deferrals on the paced points. "
                  "Ratios are grace's: above 1, grace is better. "
                  "Command: `%s`.\n" % "bench/free/defer_flood.sh")
        with open(a.defer_md) as f:
            md.append(f.read())

    path = gr.write_fragment(a.out, "free", md)
    hl.add("free_rcu flood, 2 threads, %s s: peak resident set (MB)" % a.long_s, peak, None,
           unit="MB", better="lower", target=("grace", "<=", BOUND_MB),
           note="bounded; the tests' bound is %d MB" % BOUND_MB)
    if d.values("flood", "urcu-call", T, "peak_rss_mb"):
        hl.add("Flood with a reader stalling 1 s in 2: peak resident set (MB), free_rcu",
               med("flood-stall", "grace-free", "peak_rss_mb"),
               med("flood-stall", "urcu-call", "peak_rss_mb"), "liburcu call_rcu", unit="MB",
               better="lower")
        hl.add("Deferred frees queued per second, 2 threads (free_rcu)",
               med("flood", "grace-free", "frees_per_s"),
               med("flood", "urcu-call", "frees_per_s"), "liburcu call_rcu", unit="/s",
               better="higher", fmt_value="fmt_rate")
    hl.write(a.out)
    print("free: wrote %s" % path)


if __name__ == "__main__":
    main()
