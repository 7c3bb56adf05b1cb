#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fail when a comment names a function or macro that does not exist.

Comments that name the barrier a fence pairs with, or the function that holds a lock, are only
useful while those names exist: a rename leaves them pointing at nothing. This check collects
every name written as a call in a C/C++ comment (`name()` or `name(args)`) in the given trees,
and every identifier used in code (outside comments and strings) in the whole repository. A
name in a comment that no code uses is reported, unless scripts/comment-names.allow lists it
(names of other projects' functions: the kernel's, liburcu's, libc's, each with its reason).

    scripts/check_comment_names.py [--root DIR] [TREE...]      (default trees: src include)
"""
import argparse
import os
import re
import sys

EXTS = (".c", ".h", ".cpp", ".hpp")
SKIP_DIRS = {".git", "build", "out", "__pycache__"}
COMMENT_OR_STRING = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
# A call-like mention in prose: name( ... ) with the name at least 3 characters long, not a
# keyword. "e.g." style words never end in "(".
CALL = re.compile(r"(?<![\w*])([A-Za-z_][A-Za-z0-9_]{2,})\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "alignof",
            "typeof", "__typeof__", "offsetof", "asm", "__asm__", "NOLINT", "NOLINTNEXTLINE"}


def files(root, trees):
    for t in trees:
        base = os.path.join(root, t)
        if os.path.isfile(base):
            yield base
            continue
        for d, dirs, names in os.walk(base):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
            for n in names:
                if n.endswith(EXTS):
                    yield os.path.join(d, n)


def load_allow(path):
    allow = set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    allow.add(line.split()[0])
    return allow


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("trees", nargs="*", default=["src", "include"])
    a = ap.parse_args()
    root = os.path.abspath(a.root)

    code_names = set()
    for p in files(root, ["."]):
        with open(p, errors="replace") as f:
            text = f.read()
        code = COMMENT_OR_STRING.sub(" ", text)
        code_names.update(IDENT.findall(code))
        # Names a macro defines or takes count as existing too.
        code_names.update(re.findall(r"#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)", text))
    allow = load_allow(os.path.join(root, "scripts", "comment-names.allow"))

    bad = []
    for p in files(root, a.trees):
        with open(p, errors="replace") as f:
            text = f.read()
        for m in COMMENT_OR_STRING.finditer(text):
            c = m.group(0)
            if not c.startswith(("/*", "//")):
                continue
            for name in CALL.findall(c):
                if name in KEYWORDS or name in code_names or name in allow:
                    continue
                line = text.count("\n", 0, m.start()) + 1 + c[:c.find(name + "(")].count("\n")
                bad.append((os.path.relpath(p, root), line, name))
    for p, line, name in bad:
        print(f"{p}:{line}: comment names {name}(), which no code defines or uses "
              f"(rename it, or list it in scripts/comment-names.allow with the reason)")
    if bad:
        print(f"check_comment_names: {len(bad)} stale name(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
