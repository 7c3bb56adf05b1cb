# SPDX-License-Identifier: MIT
"""The "where grace is behind" section of docs/figures/liburcu-tests.md.

rows: (run, grace ops/s, liburcu ops/s, grace reads/s, liburcu reads/s, grace writes/s,
liburcu writes/s), None where a program does not report the figure. A throughput run counts as
behind when its primary figure (ops/s as the program reports it) is below liburcu's. Each such
run is classed by what the two libraries did with the same CPUs:
- "writes ahead": grace did more writes per second (its grace periods are cheaper), and the
  readers, which share the 2 CPUs with the writers in liburcu's upstream arguments (2 readers,
  2 writers), got less CPU. nr_ops counts a read and a write alike, so the sum favours the
  library whose writers are slow;
- "behind on both": fewer reads and fewer writes (or no split reported).
"""


def _fmtx(g, l):
    return "%.2fx" % (g / l) if g is not None and l else "-"


def behind_section(rows):
    """Markdown lines (a heading, a paragraph, a table) for the runs where grace is behind."""
    rows = [r for r in rows if r[1] is not None and r[2]]
    behind = [r for r in rows if r[1] / r[2] < 1.0]
    out = ["## Where grace is behind", ""]
    if not behind:
        out += ["No throughput run is below liburcu.", ""]
        return out
    tradeoff = [r for r in behind if r[5] is not None and r[6] and r[5] > r[6]]
    out.append(
        "%d of %d throughput runs are below liburcu on the figure the program reports (`nr_ops`, "
        "or rcutorture's reads, or its updates in `uperf`). In %d of them grace did more writes "
        "(or enqueues, pushes) per second while doing fewer reads: the readers and writers of "
        "liburcu's upstream arguments (2 and 2) share this machine's CPUs, so where grace's "
        "writers run more often (in the RCU programs: their grace periods are shorter) its "
        "readers get less CPU, and `nr_ops` counts a read and a write alike. The others are "
        "behind on both figures, or report reads only. *reads* and *writes*: grace / "
        "liburcu." % (len(behind), len(rows), len(tradeoff)))
    out.append("")
    out.append("| run | ops | reads | writes | class |")
    out.append("|---|---|---|---|---|")
    for r in behind:
        cls = "writes ahead" if r in tradeoff else "behind on both"
        out.append("| `%s` | %s | %s | %s | %s |" % (r[0], _fmtx(r[1], r[2]), _fmtx(r[3], r[4]),
                                                   _fmtx(r[5], r[6]), cls))
    out.append("")
    return out


def _parse(v):
    v = v.strip()
    if v in ("-", ""):
        return None
    mult = {"M": 1e6, "k": 1e3}.get(v[-1], 1)
    return float(v[:-1] if v[-1] in "Mk" else v) * mult


def rows_from_markdown(text):
    """The throughput table of an already generated liburcu-tests.md, as rows."""
    rows, on = [], False
    for line in text.splitlines():
        if line.startswith("| run | grace ops/s"):
            on = True
            continue
        if on and line.startswith("|---"):
            continue
        if on and line.startswith("| `"):
            c = [x.strip() for x in line.strip("|").split("|")]
            rows.append((c[0].strip("`"), _parse(c[1]), _parse(c[2]), _parse(c[4]),
                         _parse(c[5]), _parse(c[6]), _parse(c[7])))
        elif on and rows:
            break
    return rows


if __name__ == "__main__":
    import sys
    print("\n".join(behind_section(rows_from_markdown(open(sys.argv[1]).read()))))
