#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/api.md names every public function, macro and C++ name of include/grace/, and nothing
stale.

Usage: check_api_docs.py <source root> [--lib <libgrace.so>] [--nm <nm>]

Public names:
  - C: functions declared GRACE_API or defined GRACE_INLINE, exported variables, and #defines,
    in every header under include/grace/ (arch/ and internal/ included) and
    include/grace/version.h.in, except internal names (grace__*, GRACE__*, include guards);
  - C++: the classes and free functions that grace.hpp declares at namespace scope in namespace
    grace (names starting with "detail" or with two underscores are internal);
  - with --lib: every symbol the shared library exports, except grace__* (so a function exported
    from a .c file without a declaration in a public header is caught too).
A name counts as documented when it appears in docs/api.md as a whole word. Stale: a grace_*
word in docs/api.md that no header contains. Exit status 1 lists both kinds.
"""
import glob
import os
import re
import subprocess
import sys

args = sys.argv[1:]
lib = None
nm = "nm"
root = "."
i = 0
while i < len(args):
    if args[i] == "--lib":
        lib = args[i + 1]
        i += 2
    elif args[i] == "--nm":
        nm = args[i + 1]
        i += 2
    else:
        root = args[i]
        i += 1

inc = os.path.join(root, "include", "grace")
# The public names: scripts/api_names.py (shared with the man-page generator).
sys.path.insert(0, os.path.join(root, "scripts"))
import api_names  # noqa: E402

public = {n: entries[0][0] for n, entries in api_names.public_names(root).items()}

if lib:
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        sym = parts[2].split("@")[0]
        if sym.startswith("grace__") or not sym.startswith("grace"):
            continue
        public.setdefault(sym, "exported by " + os.path.basename(lib))

doc_path = os.path.join(root, "docs", "api.md")
doc = open(doc_path).read()
doc_words = set(re.findall(r"[A-Za-z_]\w*", doc))
missing = sorted((h, n) for n, h in public.items() if n not in doc_words)

all_headers = ""
for f in glob.glob(os.path.join(inc, "**", "*"), recursive=True):
    if os.path.isfile(f):
        all_headers += open(f).read()
header_words = set(re.findall(r"[A-Za-z_]\w*", all_headers))
stale = sorted(w for w in doc_words
               if w.startswith("grace_") and w not in ("grace_", "grace__") and w not in header_words)

if missing or stale:
    for h, n in missing:
        print("docs/api.md does not document %s (%s)" % (n, h))
    for w in stale:
        print("docs/api.md names %s, which no header declares (stale?)" % w)
    sys.exit(1)
print("docs/api.md: all %d public names documented, none stale" % len(public))
