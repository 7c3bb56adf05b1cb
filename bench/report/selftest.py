# SPDX-License-Identifier: MIT
"""Regression tests of the report generator (ctest: bench_report_selftest): the defects the
report had, on small synthetic inputs, and the summary screen's parts.

    /usr/bin/python3 bench/report/selftest.py
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gracereport as gr  # noqa: E402

PY = sys.executable
failures = []


def check(name, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if not ok and detail
                       else ""))
    if not ok:
        failures.append(name)


def run(args):
    p = subprocess.run([PY] + args, capture_output=True, text=True)
    if p.returncode:
        print(p.stdout + p.stderr)
    return p


def write_long_csv(path, rows, nproc=2):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bench", "design", "threads", "run", "metric", "value", "unit"])
        w.writerow(["machine", "6.0", nproc, 0, "load1", "0.1", "load"])
        for r in rows:
            w.writerow(r)
        w.writerow(["machine", "6.0", nproc, 1, "load1", "0.2", "load"])
        w.writerow(["machine", "6.0", nproc, 0, "elapsed_s", "3", "s"])


def test_formats():
    # callbacks printed "0.00x" for 5.96 us against 10.1 ms.
    r = gr.ratio(5.96, 10100.0)
    check("a tiny ratio keeps its digits", gr.fmt_x(r) == "5.90e-4x", gr.fmt_x(r))
    check("a ratio near 1 keeps four digits", gr.fmt_x(1.005) == "1.005x", gr.fmt_x(1.005))
    check("plain figures stay plain", gr.fmt(0.00596) == "0.00596" and gr.fmt(1234) == "1234")
    check("durations pick their unit", (gr.fmt_us(0.85), gr.fmt_us(10100)) == ("850 ns",
                                                                                "10.1 ms"))
    h = gr.Headlines("x")
    h.add("lone callback", 5.96, 10100.0, "liburcu memb", fmt_value="fmt_us", better="lower",
          target=("grace", "<=", 100))
    g, other, ratio, words = gr.headline_cells(h.rows[0])
    check("a headline's ratio is not 0.00x", ratio == "5.90e-4x", ratio)
    check("a headline's verdict is in words", words.startswith("grace 1695x faster than "
                                                               "liburcu memb; meets the target"),
          words)
    check("the same, slower", gr.compare_words(11, 10, "lower") == "grace 10% slower than "
          "liburcu")
    check("the same, about equal", "about the same" in gr.compare_words(10.2, 10, "lower"))


def test_hashtable_wording(tmp):
    # hashtable printed "stops beating per-bucket spinlock at never wins".
    path = os.path.join(tmp, "hashtable.csv")
    head = ("design,kind,threads,update_fraction,rep,measured_threads,seconds,lookups,"
            "updates,misses,mops,settle_seconds,cpu_seconds,mops_cpu")
    rows = []
    for f in (0.0, 0.1, 1.0):
        for d, mops in (("ideal", 100), ("bucket-spinlock", 10), ("grace-call", 50 - 49 * f),
                        ("urcu-memb", 5), ("grace-poll", 50 - 30 * f)):
            for t in (1, 2):
                rows.append("%s,x,%d,%.4f,0,%d,0.1,1,1,0,%.4f,0,0.1,%.4f"
                            % (d, t, f, t, mops, mops))
    with open(path, "w") as fh:
        fh.write(head + "\n" + "\n".join(rows) + "\n")
    p = run([os.path.join(BENCH, "hashtable", "report.py"), "--csv", path, "--out", tmp,
             "--load-before", "0.1 0.1 0.1"])
    md = open(os.path.join(tmp, "hashtable.md")).read() if p.returncode == 0 else ""
    check("hashtable report renders", p.returncode == 0)
    check("no 'at never wins'", "at never wins" not in md and "never wins" not in md)
    check("a design that never wins says so", "never beats per-bucket spinlock" in md)
    check("a design that always wins says so",
          "beats per-bucket spinlock at every measured fraction" in md)
    check("a crossover says where", "stops beating per-bucket spinlock at" in md)


def test_srcu_words(tmp):
    # The report spoke of "issue 4".
    path = os.path.join(tmp, "srcu.csv")
    rows = []
    for d, v in (("srcu", 2.0), ("rcu", 1.0), ("srcu-atomic", 6.0)):
        for t in (1, 2, 8):
            rows.append(["srcu_pair", d, t, 1, "ns_per_pair", v, "ns"])
    for d in ("srcu", "rcu"):
        for r in (0, 1, 2):
            rows += [["srcu_sync", d, r, 1, "sync_p50_us", 1.0, "us"],
                     ["srcu_sync", d, r, 1, "sync_p99_us", 2.0, "us"]]
    write_long_csv(path, rows)
    p = run([os.path.join(BENCH, "srcu", "report.py"), "--csv", path, "--out", tmp,
             "--build-type", "MinSizeRel"])
    md = open(os.path.join(tmp, "srcu.md")).read() if p.returncode == 0 else ""
    check("srcu report renders", p.returncode == 0)
    check("no internal issue numbers", "issue" not in md.lower())
    check("the build type given is the one printed", "(build: MinSizeRel)" in md)
    check("the default flavor's synchronize rows are labelled", "other runs" in md)
    hl = json.load(open(os.path.join(tmp, "srcu.headlines.json")))
    check("srcu writes headline figures", len(hl["rows"]) >= 2)


def test_assemble(tmp):
    # semop always printed "(build: RelWithDebInfo)"; fragments used the project's shorthand.
    with open(os.path.join(tmp, "semop.md"), "w") as f:
        f.write("## semopbench (seed 000, section 4.7)\n\nCommand: `x` (build: RelWithDebInfo)."
                " Targets (issue 4) and Seed 004.\n")
    write_long_csv(os.path.join(tmp, "semop.csv"), [
        ["semop-own", "rcu", 2, 1, "ops_per_s", 4e6, "op/s"],
        ["semop-own", "global", 2, 1, "ops_per_s", 1e6, "op/s"]])
    p = run([os.path.join(HERE, "assemble.py"), "--out", tmp, "--families", "srcu,semop",
             "--times", "srcu=12,semop=7", "--scripts", "semop=ipc/bench/run.sh",
             "--missing", "hashapi", "--build-type", "Release", "--quick"])
    md = open(os.path.join(tmp, "REPORT.md")).read() if p.returncode == 0 else ""
    check("assemble renders", p.returncode == 0)
    check("a fragment's wrong build type is corrected", "(build: Release)" in md and
          "RelWithDebInfo" not in md)
    check("the assembler says it corrected one", "semop.md says it was built as "
          "RelWithDebInfo" in p.stderr)
    check("shorthand spelled out", "seed 00" not in md.lower() and "issue 4" not in md and
          "the FREENIX 2003 paper, section 4.7" in md)
    check("the summary comes first", md.index("## Summary") < md.index("## Run log") <
          md.index("## srcu"))
    check("the summary has the families' figures",
          "srcu read-side pair against the default flavor" in md and
          "RCU 4.0x more than the global lock" in md)
    check("every family has a log line with its time", "| 12 s | done |" in md and
          "| 7 s | done |" in md and "no run.sh" in md)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_formats()
        test_hashtable_wording(tmp)
        test_srcu_words(tmp)
        test_assemble(tmp)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
