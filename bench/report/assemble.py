# SPDX-License-Identifier: MIT
"""Assemble the benchmark report DIR/REPORT.md: a summary screen (every family's headline
figures, grace beside liburcu and the seed papers, the ratio and a verdict in words), the run
log (each family's time and result), the machine, then every family's markdown fragment
(DIR/<family>.md) in the report's fixed order.

    /usr/bin/python3 bench/report/assemble.py --out out/report --families readside,hashtable \
        [--failed name=reason,...] [--missing name,...] [--times name=seconds,...] \
        [--scripts name=path,...] [--build-type Release] [--load-start "0.1 0.2 0.3"] \
        [--elapsed SECONDS] [--quick]

A family's headline figures are the rows it wrote with gracereport.Headlines to
DIR/<family>.headlines.json.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gracereport as gr  # noqa: E402

ORDER = ["readside", "callbacks", "rseq", "srcu", "hashtable", "free", "smr", "hashapi", "semop",
         "scaling"]
TITLES = {
    "readside": "Read side",
    "callbacks": "Callbacks and grace-period policies",
    "rseq": "Restartable sequences",
    "srcu": "SRCU",
    "hashtable": "Hash-table lookups: RCU against locking",
    "free": "free_rcu: memory under a flood of deferred frees",
    "smr": "Safe memory reclamation: lock-free structures under each reclaimer",
    "hashapi": "The hash-table API against liburcu's",
    "semop": "System V IPC: semopbench",
    "scaling": "Scaling with the number of CPUs and threads",
}


# Words of the project's own shorthand, in any family's fragment (some come from other
# components), and what a reader of the report understands instead.
JARGON = [
    (re.compile(r"\bSeed 000\b"), "The FREENIX 2003 paper"),
    (re.compile(r"\bseed 000\b"), "the FREENIX 2003 paper"),
    (re.compile(r"\bSeed 002\b"), "The OLS 2002 paper"),
    (re.compile(r"\bseed 002\b"), "the OLS 2002 paper"),
    (re.compile(r"\bSeed 004\b"), "The EfficiOS 2019 rseq article"),
    (re.compile(r"\bseed 004\b"), "the EfficiOS 2019 rseq article"),
    (re.compile(r" ?\((?:see )?issue \d+\)"), ""),
]
BUILD = re.compile(r"\(build: ([A-Za-z]+)\)")


def plain(text, family, build_type):
    """A fragment in the report's words: the project's shorthand spelled out, and a build type
    that contradicts the report's own build corrected (every family runs the binaries
    scripts/report.sh built), with a warning that names the family."""
    for rx, words in JARGON:
        text = rx.sub(words, text)
    if build_type:
        claimed = set(BUILD.findall(text)) - {build_type}
        if claimed:
            print("assemble: %s.md says it was built as %s; the report's build is %s: "
                  "corrected" % (family, ", ".join(sorted(claimed)), build_type),
                  file=sys.stderr)
            text = BUILD.sub("(build: %s)" % build_type, text)
    return text


def ordered(names):
    known = [n for n in ORDER if n in names]
    return known + sorted(n for n in names if n not in ORDER)


def kv(arg):
    return dict(x.split("=", 1) for x in arg.split(",") if "=" in x)


def semop_headlines(out):
    """semop's headline, read from semop.csv, for as long as ipc/bench/report.py (another
    component's) does not write semop.headlines.json itself: RCU against the global lock at 2
    threads on own sets, beside the FREENIX 2003 paper's 11.0x (Table 5, 8 CPUs)."""
    path = os.path.join(out, "semop.csv")
    if not os.path.exists(path):
        return None
    d = gr.load_bench(path)
    per_run = [r / g for r, g in zip(d.values("semop-own", "rcu", 2, "ops_per_s"),
                                     d.values("semop-own", "global", 2, "ops_per_s")) if g > 0]
    hl = gr.Headlines("semop")
    hl.add("semop calls per second, 2 threads, each on its own set", 
           d.med("semop-own", "rcu", 2, "ops_per_s"),
           d.med("semop-own", "global", 2, "ops_per_s"), "the global lock (Linux 2.5.42)",
           fmt_value="fmt_rate", better="higher", subject="RCU", words=("more", "fewer"),
           paper="RCU 11.0x the global lock (8 CPUs, FREENIX 2003 Table 5)",
           target=("ratio", ">=", 3.0),
           note="median of per-run ratios %s" % gr.fmt_x(gr.median(per_run)))
    return hl.rows


def summary(a, fams, failed, anchors):
    md = [gr.heading(2, "Summary")]
    md.append("Every headline figure of the report: grace beside liburcu (or the baseline "
              "named) and the seed papers where they measured the same thing. *Ratio* is "
              "grace's figure over the other's; the verdict says which is better, by how much, "
              "and whether the figure meets its target. Times and costs are better smaller, "
              "rates larger. The sections below give the method, every measured point and the "
              "plots.%s\n" % (" This is a quick smoke run: the figures show that everything "
                               "works, not how fast it is." if a.quick else ""))
    for f in fams:
        title = anchors.get(f, TITLES.get(f, f))
        rows = gr.load_headlines(a.out, f)
        if rows is None and f == "semop":
            rows = semop_headlines(a.out)
        md.append("**[%s](#%s)**\n" % (TITLES.get(f, f), gr.anchor(title)))
        if f in failed:
            md.append("Not measured: the family %s.\n" % failed[f])
            continue
        if not rows:
            md.append("No headline figures: the family's report does not list any.\n")
            continue
        table = []
        for h in rows:
            g, other, r, words = gr.headline_cells(h)
            table.append([h["what"], g, other, h.get("paper") or "—", r, words])
        md.append(gr.md_table(["figure", "grace", "liburcu or baseline", "seed paper",
                               "ratio", "verdict"], table, align="llllrl"))
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--families", default="", help="families whose run.sh ran")
    ap.add_argument("--failed", default="", help="name=reason,... for families that failed")
    ap.add_argument("--missing", default="", help="known families without a run.sh")
    ap.add_argument("--times", default="", help="name=seconds,... each family's elapsed time")
    ap.add_argument("--scripts", default="", help="name=path,... each family's run.sh")
    ap.add_argument("--build-type", default="", help="CMake build type of the benchmarks")
    ap.add_argument("--load-start", default="")
    ap.add_argument("--placement-start", default="",
                    help="bench_placement's line before the families ran")
    ap.add_argument("--placement-end", default="", help="and after")
    ap.add_argument("--elapsed", type=float, default=0.0)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    fams = ordered([f for f in a.families.split(",") if f])
    failed = kv(a.failed)
    times = kv(a.times)
    scripts = kv(a.scripts)
    missing = [m for m in a.missing.split(",") if m]
    m = gr.machine_info()

    sections, anchors = [], {}
    for f in fams:
        path = os.path.join(a.out, f + ".md")
        script = scripts.get(f, "bench/%s/run.sh" % f)
        if f in failed:
            text = ("## %s\n\n**Not measured**: `%s` %s (log: `logs/%s.log`).\n"
                    % (TITLES.get(f, f), script, failed[f], f))
        elif os.path.exists(path):
            with open(path) as fh:
                text = plain(fh.read().rstrip() + "\n", f, a.build_type)
        else:
            text = ("## %s\n\n**Not measured**: `%s` wrote no `%s.md`.\n"
                    % (TITLES.get(f, f), script, f))
        first = next((ln for ln in text.splitlines() if ln.startswith("## ")),
                     "## " + TITLES.get(f, f))
        anchors[f] = first[3:].strip()
        sections.append((f, text))

    md = ["# grace benchmark report\n"]
    if a.quick:
        md.append("> **Quick smoke run** (`scripts/report.sh --quick`): short runs that show "
                  "everything works; do not quote these numbers.\n")
    md.append("Generated by `scripts/report.sh%s` on %s from grace `%s`%s; benchmarks built "
              "as %s. Machine: %s, %s online CPUs, Linux %s.\n"
              % (" --quick" if a.quick else "", m["date"], gr.git_describe(root),
                 (" in %.0f s" % a.elapsed) if a.elapsed else "", a.build_type or "unknown",
                 m["cpu"], m["cores"], m["kernel"]))
    try:
        busy = float((a.load_start or "").split()[0]) > 0.5 * (m["cores"] or 1)
    except (ValueError, IndexError):
        busy = False
    if busy:
        md.append("> **The machine was busy while the report ran** (load average %s at the "
                  "start, on %s cores): other work took CPU time from the benchmarks, so "
                  "wall-clock figures are disturbed. Sections that can say which of their "
                  "figures are affected do so; re-run on a quiet machine before quoting "
                  "absolute numbers or scaling.\n" % (a.load_start, m["cores"]))
    md += summary(a, fams, failed, anchors)

    md.append(gr.heading(2, "Run log"))
    log = []
    for f in fams:
        t = times.get(f)
        log.append([TITLES.get(f, f), "`%s`" % scripts.get(f, "bench/%s/run.sh" % f),
                    "%s s" % t if t else "-", failed.get(f, "done")])
    for x in missing:
        log.append([TITLES.get(x, x), "-", "-", "not in the report: no run.sh"])
    md.append(gr.md_table(["family", "script", "elapsed", "result"], log, align="llrl"))
    md.append("Logs: `logs/<family>.log`.\n")

    md.append(gr.heading(2, "Machine"))
    md.append(gr.md_table(["", ""], [
        ["CPU", m["cpu"]],
        ["cores (online CPUs)", m["cores"]],
        ["kernel", m["kernel"]],
        ["C library", m["glibc"]],
        ["liburcu (the peer)", m["liburcu"]],
        ["compiler", m["compiler"]],
        ["benchmarks' build type", a.build_type or "unknown"],
        ["load average at start", a.load_start or "n/a"],
        ["load average at end", m["load"]],
        ["first two CPUs at start (bench_placement)", a.placement_start or "n/a"],
        ["first two CPUs at end", a.placement_end or "n/a"],
    ], align="ll"))
    md.append("On a machine with %s cores, thread counts above %s are oversubscribed. "
              "Figures are medians of repeated runs with the designs interleaved; compare "
              "ratios measured in the same run, not absolute numbers across runs. A load "
              "average well above 0 means other work shared the machine. On a virtual machine "
              "the host may move the vCPUs apart for a while: the round trip of a cache line "
              "between the first two CPUs (bench_placement, sampled for 5 s before and after) "
              "then jumps from tens of ns to hundreds, and figures whose threads share cache "
              "lines drop with it; samples counted slow say that happened.\n"
              % (m["cores"], m["cores"]))

    if sections:
        md.append(gr.heading(2, "Contents"))
        for f, _ in sections:
            md.append("- [%s](#%s)" % (anchors[f], gr.anchor(anchors[f])))
        md.append("")
    for f, text in sections:
        md.append("---\n")
        md.append(text)
    path = os.path.join(a.out, "REPORT.md")
    with open(path, "w") as fh:
        fh.write("\n".join(md))
    print(path)


if __name__ == "__main__":
    main()
