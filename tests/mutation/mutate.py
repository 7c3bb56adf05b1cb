#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mutation audit of the library code (docs/torture.md, "Mutation audit").

Each mutant in mutants.ini is one realistic bug: one or more exact text replacements in the
library's sources. For each, this script copies the working tree to a scratch directory
(once), applies the mutant there, rebuilds (incrementally), runs the mutant's tests with
ctest and records, per test, whether it failed and after how long; then it restores the file.
A mutant is *caught* when at least one of its tests fails; the table says which and when. A
mutant that survives but carries `equivalent = <why>` in mutants.ini is one argued to change no
behaviour a program can observe (only latency): the table gives the argument.

    tests/mutation/mutate.py [--only ID[,ID...]] [--scratch DIR] [--out FILE] [--reps N]

--reps N runs each mutant's tests N times (a catch counts if any run fails; the table gives
the failures out of N). Writes a markdown table to --out (default: stdout) and a CSV beside it.
Needs the tree to build; a release and a debug build directory are kept in the scratch dir
between runs. About 1-3 minutes per mutant on 2 cores.
"""
import argparse
import configparser
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def sh(cmd, cwd=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)


def load(path):
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(path)
    out = []
    for sec in cp.sections():
        m = dict(cp[sec])
        m["id"] = sec
        edits = []
        k = 1
        while f"find{k if k > 1 else ''}" in m:
            suf = str(k) if k > 1 else ""
            edits.append((m[f"find{suf}"].encode().decode("unicode_escape"),
                          m.get(f"replace{suf}", "").encode().decode("unicode_escape")))
            k += 1
        m["edits"] = edits
        out.append(m)
    return out


def sync_tree(scratch):
    os.makedirs(scratch, exist_ok=True)
    # The working tree as it is (tracked and untracked files git does not ignore), copied
    # over the scratch tree so that unchanged files keep their times (incremental builds).
    dst = os.path.join(scratch, "src-tree")
    files = sh("git ls-files -co --exclude-standard -z", cwd=ROOT).stdout.split("\0")
    want = set()
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        want.add(f)
        src, d = os.path.join(ROOT, f), os.path.join(dst, f)
        if os.path.exists(d) and open(src, "rb").read() == open(d, "rb").read():
            continue
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(src, d)
    for base, _, names in os.walk(dst):
        for n in names:
            rel = os.path.relpath(os.path.join(base, n), dst)
            if rel not in want:
                os.unlink(os.path.join(base, n))
    return dst


def configure(tree, scratch, kind):
    bdir = os.path.join(scratch, f"build-{kind}")
    flags = {"release": "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
             "debug": "-DCMAKE_BUILD_TYPE=Debug -DGRACE_DEBUG=ON"}[kind]
    if not os.path.exists(os.path.join(bdir, "build.ninja")):
        r = sh(f"cmake -S '{tree}' -B '{bdir}' -G Ninja -DGRACE_TESTS=ON -DGRACE_BENCH=OFF {flags}")
        if r.returncode:
            sys.exit("configure failed: " + r.stdout[-2000:])
    return bdir


def build(bdir):
    r = sh(f"ninja -C '{bdir}'")
    return r.returncode == 0, r.stdout[-3000:]


def run_tests(bdir, regex, timeout):
    """Returns {test: (failed, seconds)}."""
    t0 = time.time()
    r = sh(f"ctest --test-dir '{bdir}' -R '{regex}' --timeout {timeout} -j1", timeout=None)
    res = {}
    for line in r.stdout.splitlines():
        m = re.search(r"Test\s+#\d+: (\S+) \.+\s*(.*?)\s+([\d.]+) sec", line)
        if m:
            name, status, secs = m.group(1), m.group(2), float(m.group(3))
            res[name] = ("Passed" not in status, secs, status.strip())
    if not res:
        res["(no test matched)"] = (False, time.time() - t0, r.stdout[-300:])
    return res


def check(mutants):
    """A mutant whose text no longer occurs in the code breaks nothing: the audit would list it
    as run while it tests nothing. Fail on each, and on a mutant missing from the table of
    docs/torture.md (section 4). Run as the quick test mutation_map."""
    errors = []
    table = open(os.path.join(ROOT, "docs", "torture.md")).read()
    for m in mutants:
        path = os.path.join(ROOT, m["file"])
        if not os.path.exists(path):
            errors.append(f"{m['id']}: no file {m['file']}")
            continue
        text = open(path).read()
        for k, (find, _) in enumerate(m["edits"], 1):
            n = text.count(find)
            if n != 1:
                errors.append(f"{m['id']}: edit {k}: the text to replace occurs {n} times in "
                              f"{m['file']} (update mutants.ini to the code)")
        if f"| `{m['id']}` (" not in table:
            errors.append(f"{m['id']}: not in docs/torture.md's table")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(mutants)} mutants; {len(errors)} problems")
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--scratch", default="/tmp/grace-mutation")
    ap.add_argument("--out")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant still applies (each text to replace "
                         "occurs once in its file) and is in docs/torture.md's table")
    a = ap.parse_args()
    mutants = load(os.path.join(HERE, "mutants.ini"))
    if a.list:
        for m in mutants:
            print(m["id"], "-", m.get("what", ""))
        return 0
    if a.check:
        return check(mutants)
    if a.only:
        want = set(a.only.split(","))
        mutants = [m for m in mutants if m["id"] in want]
    tree = sync_tree(a.scratch)
    rows = []
    for m in mutants:
        kind = m.get("build", "release")
        bdir = configure(tree, a.scratch, kind)
        path = os.path.join(tree, m["file"])
        orig = open(path).read()
        text = orig
        ok = True
        for find, repl in m["edits"]:
            n = text.count(find)
            if n != 1:
                print(f"{m['id']}: the text to replace occurs {n} times in {m['file']}",
                      file=sys.stderr)
                ok = False
                break
            text = text.replace(find, repl)
        if not ok:
            rows.append((m, "not applied", {}))
            continue
        try:
            # The library unmodified first (once per build kind), so the mutant's build is
            # an incremental one of this file alone.
            built, log = build(bdir)
            if not built:
                sys.exit("the unmodified tree does not build: " + log)
            open(path, "w").write(text)
            built, log = build(bdir)
            if not built:
                rows.append((m, "does not build", {}))
                print(f"{m['id']}: does not build\n{log}", file=sys.stderr)
                continue
            agg = {}
            for rep in range(a.reps):
                res = run_tests(bdir, m["tests"], int(m.get("timeout", "120")))
                for t, (failed, secs, st) in res.items():
                    f, s, tot = agg.get(t, (0, [], 0))
                    agg[t] = (f + (1 if failed else 0), s + [secs], tot + 1)
            caught = any(f for f, _, _ in agg.values())
            verdict = "caught" if caught else ("equivalent" if m.get("equivalent") else "SURVIVED")
            rows.append((m, verdict, agg))
            print(f"{m['id']}: {'caught' if caught else 'SURVIVED'} "
                  + ", ".join(f"{t} {f}/{n} ({min(s):.1f}s)" for t, (f, s, n) in agg.items()),
                  file=sys.stderr)
        finally:
            open(path, "w").write(orig)
    # Restore the scratch builds to the unmodified library.
    for kind in ("release", "debug"):
        bdir = os.path.join(a.scratch, f"build-{kind}")
        if os.path.exists(os.path.join(bdir, "build.ninja")):
            build(bdir)
    lines = ["| mutant | what was broken | build | caught by (failed runs / runs, wall time) "
             "| not caught by |", "|---|---|---|---|---|"]
    csv = ["id,file,verdict,test,failed,runs,seconds"]
    for m, verdict, agg in rows:
        by = [f"`{t}` {f}/{n} ({max(s):.1f} s)" for t, (f, s, n) in sorted(agg.items()) if f]
        nb = [f"`{t}`" for t, (f, s, n) in sorted(agg.items()) if not f]
        if by:
            cell = ", ".join(by)
        elif verdict == "equivalent":
            cell = f"equivalent: {m['equivalent']}"
        else:
            cell = f"**{verdict}**"
        lines.append(f"| `{m['id']}` (`{m['file']}`) | {m.get('what', '')} | "
                     f"{m.get('build', 'release')} | {cell} | {', '.join(nb) or '-'} |")
        for t, (f, s, n) in sorted(agg.items()):
            csv.append(f"{m['id']},{m['file']},{verdict},{t},{f},{n},{max(s):.2f}")
        if not agg:
            csv.append(f"{m['id']},{m['file']},{verdict},,,,")
    table = "\n".join(lines) + "\n"
    if a.out:
        open(a.out, "w").write(table)
        open(os.path.splitext(a.out)[0] + ".csv", "w").write("\n".join(csv) + "\n")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
