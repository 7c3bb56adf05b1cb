#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The floors of src/ (docs/design.md, section 1): each module may include the headers of its
own floor and the floors below, never one above. Drawn from the #include lines of src/:

    floor 0  core/     descriptor, sequence, registry, waiting, system calls, options, diag
    floor 1  rseq/     restartable sequences
    floor 2  engine/   callbacks, per-thread frees, policies
    floor 3  flavor/   memb, qsbr, srcu, and the update side written once (update.c)
    floor 3  hazptr/   hazard pointers (uses the ground floor only; beside the flavors)
    floor 4  ds/       hash table, ID registry, lists
    floor 5  init.c    start-up and the fork order: the one file that names every module

The public headers (include/grace/) are not a floor: their inline code calls the library's
slow paths, the one arrow that may run upward. core/init.h declares grace__init() on the
ground floor for the top floor to define.

    scripts/check-floors.py [--draw]    exit 1 and name each upward include; --draw prints
                                        every arrow between modules
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FLOORS = {"core": 0, "rseq": 1, "engine": 2, "flavor": 3, "hazptr": 3, "ds": 4, "init": 5}


def module(path):
    rel = os.path.relpath(path, os.path.join(ROOT, "src"))
    if "/" not in rel:
        return os.path.splitext(rel)[0]  # init.c
    return rel.split("/")[0]


def main():
    arrows = {}
    up = []
    for base, _, names in os.walk(os.path.join(ROOT, "src")):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.join(base, n)
            src = module(path)
            if src not in FLOORS:
                up.append(f"{os.path.relpath(path, ROOT)}: module '{src}' has no floor")
                continue
            for line in open(path, errors="replace"):
                m = re.match(r'\s*#\s*include\s+"([a-z_]+)/[^"]+"', line)
                if not m:
                    continue
                dst = m.group(1)
                if dst not in FLOORS or dst == src:
                    continue
                arrows.setdefault((src, dst), set()).add(os.path.relpath(path, ROOT))
                if FLOORS[dst] > FLOORS[src]:
                    up.append(f"{os.path.relpath(path, ROOT)}: {src} (floor {FLOORS[src]}) "
                              f"includes {line.strip()[9:]} ({dst}, floor {FLOORS[dst]})")
    if "--draw" in sys.argv:
        for (s, d), files in sorted(arrows.items(), key=lambda x: (FLOORS[x[0][0]], x[0][1])):
            kind = "UP" if FLOORS[d] > FLOORS[s] else "down"
            print(f"{s} -> {d} ({kind}): {len(files)} file(s)")
    for u in up:
        print(u, file=sys.stderr)
    print(f"check-floors: {len(arrows)} arrows between modules, {len(up)} upward")
    return 1 if up else 0


if __name__ == "__main__":
    sys.exit(main())
