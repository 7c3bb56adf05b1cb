#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every relative link and image of the markdown files under a directory resolves.

Usage: check_doc_links.py <dir> [<dir>...]
Checks [text](target) and ![alt](target) whose target is not a URL (scheme:) nor a pure
#anchor; the part before '#' must name an existing file or directory, relative to the page.
Run on the source tree and on an installed documentation directory (the install must ship what
its pages point to). Exit status 1 lists the broken links.
A benchmark family's about.md (bench/<family>/about.md, ipc/bench/about.md) is the stable text
that scripts/figures.sh publishes as docs/figures/<family>.md: its links are resolved from
docs/figures/, where they are read.
"""
import os
import re
import sys

link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
fence = re.compile(r"^(```|~~~)")
broken = []
pages = 0
for top in sys.argv[1:]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        for fn in filenames:
            if not fn.endswith(".md"):
                continue
            path = os.path.join(dirpath, fn)
            pages += 1
            base = dirpath
            parts = os.path.normpath(os.path.relpath(path, top)).split(os.sep)
            if fn == "about.md" and (parts[:1] == ["bench"] and len(parts) == 3 or
                                     parts[:2] == ["ipc", "bench"] and len(parts) == 3):
                base = os.path.join(top, "docs", "figures")
            in_code = False
            for no, line in enumerate(open(path, encoding="utf-8"), 1):
                if fence.match(line.lstrip()):
                    in_code = not in_code
                    continue
                if in_code:
                    continue
                # Inline code spans are not links.
                line = re.sub(r"`[^`]*`", "", line)
                for target in link.findall(line):
                    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                        continue
                    rel = target.split("#", 1)[0]
                    if not rel:
                        continue
                    if not os.path.exists(os.path.normpath(os.path.join(base, rel))):
                        broken.append("%s:%d: %s" % (path, no, target))
if broken:
    print("\n".join(broken))
    sys.exit(1)
print("%d pages, every relative link resolves" % pages)
