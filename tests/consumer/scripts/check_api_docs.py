#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/api.md names every public function and macro of include/grace/, and nothing stale.

Usage: check_api_docs.py <source root>
Public names: functions declared GRACE_API or defined GRACE_INLINE, exported variables, and
#defines, in include/grace/*.h, include/grace/version.h.in and include/grace/arch/atomic.h,
except internal names (grace__*, GRACE__*, include guards). A name counts as documented when it
appears in docs/api.md as a whole word. Stale: a grace_* word in docs/api.md that no header
contains. Exit status 1 lists both kinds.
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
inc = os.path.join(root, "include", "grace")
files = sorted(glob.glob(os.path.join(inc, "*.h")))
files += [os.path.join(inc, "version.h.in"), os.path.join(inc, "arch", "atomic.h")]
internal = re.compile(r"^(grace__|GRACE__|__)|^GRACE_[A-Z0-9_]+_H$|^GRACE_GRACE_HPP$")

public = {}
for f in files:
    if not os.path.exists(f):
        continue
    text = re.sub(r"/\*.*?\*/", " ", open(f).read(), flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    names = set(re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)", text, re.M))
    for decl in re.findall(r"(?:GRACE_API|GRACE_INLINE)\b([^;{]*?)\(", text):
        m = re.search(r"([A-Za-z_]\w*)\s*$", decl)
        if m:
            names.add(m.group(1))
    for decl in re.findall(r"GRACE_API\s+extern\s+([^;(]*);", text):
        words = [w for w in re.findall(r"[A-Za-z_]\w*", decl) if w != "GRACE_TLS_IE"]
        if words:
            names.add(words[-1])
    # Functions declared with a return type on the line before GRACE_API-less prototypes
    # (version.h.in declares its functions without GRACE_API).
    for m in re.finditer(r"^\s*(?:unsigned int|const char \*|int|void)\s*\*?\s*(grace_\w+)\s*\(",
                         text, re.M):
        names.add(m.group(1))
    for n in names:
        if not internal.search(n):
            public.setdefault(n, os.path.relpath(f, root))

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
