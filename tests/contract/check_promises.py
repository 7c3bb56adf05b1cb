#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The contract map: every promise of docs/api.md, docs/guide.md, docs/compat.md, docs/ds.md and
docs/policies.md (and the few of build.md and design.md), the tests that fail when it breaks, and the library mutants those tests catch.

promises.tsv, one promise per line, tab-separated:
    doc      docs/api.md, docs/guide.md, docs/compat.md, docs/ds.md, docs/policies.md, ...
    snippet  exact text of the promise, taken from one line of the doc (how the map finds it
             and its line number: a doc edit that drops the text fails this check, so the
             promise is mapped again or weakened)
    kind     order, context, thread-safety, signal-safety, bounds, fork, exit, dlclose,
             memory-ordering, errors, liburcu, lifetime
    tests    ctest names, comma-separated (a name:case form names one case of a test binary)
    mutants  ids of tests/mutation/mutants.ini that these tests catch, comma-separated, or -

    check_promises.py [--write] [--build DIR]
                                    check the map (and, with --write, regenerate the table
                                    between the markers of docs/torture.md, section 13);
                                    without --write, fail when that table is stale.
Checks: every snippet occurs in its doc; every test is registered with ctest (ctest -N of the
build DIR, or else a NAME found in the tree's CMake files); every case named exists in the test
sources;
every mutant exists. Run as the quick test contract_map.
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BEGIN = "<!-- contract-map:begin (tests/contract/check_promises.py --write) -->"
END = "<!-- contract-map:end -->"


def ctest_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "**", "*.cmake"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "**", "CMakeLists.txt"), recursive=True):
        if "/build" in path or "/out/" in path:
            continue
        text = open(path, errors="replace").read()
        for m in re.finditer(r"(?:grace_test|add_test|grace_ipc_test|torture_run)\s*\(\s*(?:NAME\s+)?([A-Za-z0-9_]+)",
                             text):
            names.add(m.group(1))
        for m in re.finditer(r"grace_test\s*\(\s*NAME\s+([A-Za-z0-9_]+)[^)]*\bCXX\b", text):
            names.add(m.group(1) + "_cxx")
    # Torture runs are listed in tests/torture/runs.list (each a ctest torture_<name>).
    rl = os.path.join(ROOT, "tests", "torture", "runs.list")
    if os.path.exists(rl):
        for line in open(rl):
            line = line.strip()
            if line and not line.startswith("#"):
                names.add("torture_" + line.split("|")[0].strip())
    return names


def ctest_names_from(build):
    import subprocess
    r = subprocess.run(["ctest", "--test-dir", build, "-N"], stdout=subprocess.PIPE, text=True)
    return {m.group(1) for m in re.finditer(r"Test\s+#\d+: (\S+)", r.stdout)}


def test_cases():
    cases = set()
    for path in glob.glob(os.path.join(ROOT, "**", "*.c"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "**", "*.cpp"), recursive=True):
        if "/build" in path:
            continue
        for m in re.finditer(r"^TEST\((\w+)\)", open(path, errors="replace").read(), re.M):
            cases.add(m.group(1))
    return cases


def mutant_ids():
    ids = set()
    p = os.path.join(ROOT, "tests", "mutation", "mutants.ini")
    for line in open(p):
        m = re.match(r"\[([\w.-]+)\]", line)
        if m:
            ids.add(m.group(1))
    return ids


def main():
    write = "--write" in sys.argv
    build = sys.argv[sys.argv.index("--build") + 1] if "--build" in sys.argv else None
    rows = []
    errors = []
    # A test of the tree counts though this build leaves it out (benchmarks off, no liburcu):
    # the build adds the names its CMake computes.
    names = ctest_names() | (ctest_names_from(build) if build else set())
    cases, muts = test_cases(), mutant_ids()
    docs = {}
    for n, line in enumerate(open(os.path.join(HERE, "promises.tsv")), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) != 5:
            errors.append(f"promises.tsv:{n}: {len(f)} fields, want 5")
            continue
        doc, snip, kind, tests, mut = f
        if doc not in docs:
            docs[doc] = open(os.path.join(ROOT, doc)).read().split("\n")
        lines = [i + 1 for i, l in enumerate(docs[doc]) if snip in l]
        if not lines:
            errors.append(f"promises.tsv:{n}: not in {doc}: {snip!r}")
            continue
        for t in tests.split(","):
            t = t.strip()
            name, _, case = t.partition(":")
            if name not in names:
                errors.append(f"promises.tsv:{n}: no ctest named {name}")
            if case and case not in cases:
                errors.append(f"promises.tsv:{n}: no TEST({case}) in the test sources")
        for m in mut.split(","):
            m = m.strip()
            if m != "-" and m not in muts:
                errors.append(f"promises.tsv:{n}: no mutant {m} in tests/mutation/mutants.ini")
        rows.append((doc, lines[0], snip, kind, tests, mut))
    # The table.
    kinds = {}
    for r in rows:
        kinds[r[3]] = kinds.get(r[3], 0) + 1
    ntests = len({t.strip() for r in rows for t in r[4].split(",")})
    nmut = len({m.strip() for r in rows for m in r[5].split(",") if m.strip() != "-"})
    out = [BEGIN, "",
           f"{len(rows)} promises ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}), "
           f"{ntests} tests, {nmut} library mutants. Generated from `tests/contract/promises.tsv`;"
           " the quick test `contract_map` fails when a promise's text leaves its doc, a test"
           " or a mutant is renamed, or this table is stale.", "",
           "| promise (doc:line) | kind | tests | mutants caught |", "|---|---|---|---|"]
    for doc, ln, snip, kind, tests, mut in rows:
        s = snip.replace("|", "\\|")
        tl = ", ".join(f"`{t.strip()}`" for t in tests.split(","))
        ml = ", ".join(f"`{m.strip()}`" for m in mut.split(",")) if mut.strip() != "-" else "-"
        out.append(f"| {os.path.basename(doc)}:{ln}: \"{s}\" | {kind} | {tl} | {ml} |")
    out += ["", END]
    table = "\n".join(out)
    tp = os.path.join(ROOT, "docs", "torture.md")
    text = open(tp).read()
    if BEGIN not in text or END not in text:
        errors.append("docs/torture.md has no contract-map markers")
    else:
        i, j = text.index(BEGIN), text.index(END) + len(END)
        if write:
            open(tp, "w").write(text[:i] + table + text[j:])
        elif text[i:j] != table:
            errors.append("docs/torture.md: the contract map is stale (run "
                          "tests/contract/check_promises.py --write)")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(rows)} promises, {ntests} tests, {nmut} mutants; {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
