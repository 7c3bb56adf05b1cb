#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/build.md's table of environment variables, generated from the option table
(src/core/options.def), as the man pages are from the headers.

    scripts/gen-options-doc.py           rewrite the table between the markers of docs/build.md
    scripts/gen-options-doc.py --check   exit 1 if the table there is not what the .def says
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BEGIN = "<!-- options:begin (scripts/gen-options-doc.py from src/core/options.def) -->"
END = "<!-- options:end -->"


def options():
    text = open(os.path.join(ROOT, "src", "core", "options.def")).read()
    pat = re.compile(r'^GRACE_OPTION\((\w+),\s*(\w+),\s*(-?\w+),\s*(-?\w+),\s*(-?\w+),\s*'
                     r'"([^"]*)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)', re.M)
    out = []
    for m in pat.finditer(text):
        name, kind, dflt, lo, hi, unit, doc = m.groups()
        doc = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', doc)).replace('\\"', '"')
        out.append((name, kind, int(dflt, 0), int(lo, 0), int(hi, 0), unit, doc))
    if not out:
        sys.exit("gen-options-doc: no GRACE_OPTION line parsed")
    return out


def table():
    rows = ["| variable | takes | default | effect |", "|---|---|---|---|"]
    for name, kind, dflt, lo, hi, unit, doc in options():
        if kind == "BOOL":
            takes, d = "`0` or `1`", f"`{dflt}`"
        elif kind == "ENUM":
            words = unit.split("|")
            takes, d = " ".join(f"`{w}`" for w in words), f"`{words[dflt]}`"
        elif kind == "STRING":
            takes, d = "text", "unset"
        else:
            takes = f"{lo} to {hi}" + (f" {unit}" if unit else "")
            d = f"`{dflt}`" if lo <= dflt <= hi else "unset"
        rows.append(f"| `{name}` | {takes} | {d} | {doc} |")
    return "\n".join([BEGIN] + rows + [END])


def main():
    path = os.path.join(ROOT, "docs", "build.md")
    text = open(path).read()
    if BEGIN not in text or END not in text:
        sys.exit("docs/build.md has no options markers")
    i, j = text.index(BEGIN), text.index(END) + len(END)
    new = text[:i] + table() + text[j:]
    if "--check" in sys.argv:
        if new != text:
            print("docs/build.md: the environment-variable table is stale: run "
                  "scripts/gen-options-doc.py", file=sys.stderr)
            return 1
        return 0
    open(path, "w").write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
