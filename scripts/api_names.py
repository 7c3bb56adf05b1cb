# SPDX-License-Identifier: MIT
"""The public names of grace's headers, shared by the docs-coverage check
(tests/consumer/scripts/check_api_docs.py) and the man-page generator (scripts/gen-man.py).

public_names(root) -> {name: [(header, kind, synopsis), ...]} (a name can be both a C function
  and a C++ one: rcu_barrier)
  kind: "function" (GRACE_API or GRACE_INLINE), "variable" (GRACE_API extern), "macro"
        (#define), "cxx" (a namespace-scope class or function of grace.hpp)
  synopsis: the declaration as a C or C++ programmer reads it ("void grace_rcu_read_lock(void);",
        "#define rcu_dereference(p)", "class rcu_domain;"), or "" when none was found.
Public: in include/grace/**/*.h and include/grace/version.h.in, except internal names
(grace__*, GRACE__*, __*, include guards) and, in grace.hpp, namespace detail.
"""
import glob
import os
import re

INTERNAL = re.compile(r"^(grace__|GRACE__|__)|^GRACE_[A-Z0-9_]+_H$|^GRACE_GRACE_HPP$")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _squash(s):
    return re.sub(r"\s+", " ", s).strip()


def header_files(root):
    inc = os.path.join(root, "include", "grace")
    files = sorted(glob.glob(os.path.join(inc, "**", "*.h"), recursive=True))
    files.append(os.path.join(inc, "version.h.in"))
    return [f for f in files if os.path.exists(f)]


def public_names(root):
    inc = os.path.join(root, "include", "grace")
    out = {}

    def add(name, header, kind, syn):
        if INTERNAL.search(name):
            return
        entries = out.setdefault(name, [])
        for i, (h, k, sy) in enumerate(entries):
            if sy == syn or (not syn and h == header):
                return  # the same declaration again (another header repeats it)
            if not sy and h == header:
                entries[i] = (header, kind, syn)
                return
        entries.append((header, kind, syn))

    for f in header_files(root):
        rel = os.path.relpath(f, inc)
        header = "grace/" + (rel[:-3] if rel.endswith(".in") else rel)
        text = strip_comments(open(f).read())
        # Macros, with their parameter list when they have one.
        for m in re.finditer(r"^\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?", text, re.M):
            add(m.group(1), header, "macro", "#define " + m.group(1) + (m.group(2) or ""))
        # Functions: GRACE_API or GRACE_INLINE, return type, name, parameters.
        for m in re.finditer(r"\b(GRACE_API|GRACE_INLINE)\b([^;{}()]*?)\b([A-Za-z_]\w*)\s*\(([^)]*)\)",
                             text):
            ret = _squash(re.sub(r"\b(GRACE_NORETURN|GRACE_COLD|extern)\b", "", m.group(2)))
            if m.group(3) in ("__attribute__",):
                continue
            syn = "%s %s(%s);" % (ret, m.group(3), _squash(m.group(4)))
            add(m.group(3), header, "function", syn.replace("* ", "*").replace(" *", " *"))
        # Exported variables.
        for m in re.finditer(r"GRACE_API\s+extern\s+([^;(]*);", text):
            decl = _squash(m.group(1).replace("GRACE_TLS_IE", ""))
            words = re.findall(r"[A-Za-z_]\w*", decl)
            if words:
                add(words[-1], header, "variable", "extern " + decl + ";")
        # version.h.in declares its functions without GRACE_API.
        for m in re.finditer(r"^\s*(unsigned int|const char \*|int|void)\s*(grace_\w+)\s*\(([^)]*)\)",
                             text, re.M):
            add(m.group(2), header, "function", "%s %s(%s);" % (m.group(1).replace(" *", " *"),
                                                                m.group(2), m.group(3)))

    hpp = os.path.join(inc, "grace.hpp")
    if os.path.exists(hpp):
        text = re.sub(r"namespace\s+detail\s*\{.*?\}\s*// namespace detail", " ",
                      open(hpp).read(), flags=re.S)
        text = strip_comments(text)
        for m in re.finditer(r"^(template\s*<[^;{]*?>\s*)?(class|struct)\s+(\w+)\s*(?:final\s*)?[:{]",
                             text, re.M):
            tmpl = _squash(m.group(1) or "")
            add(m.group(3), "grace/grace.hpp", "cxx",
                "%sclass grace::%s;" % (tmpl + " " if tmpl else "", m.group(3)))
        for m in re.finditer(r"^(template\s*<[^;{]*?>\s*)?inline\s+([^;{(]*?)\b(\w+)\s*\(",
                             text, re.M):
            # The parameter list, parentheses balanced (default arguments call functions).
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            tmpl = _squash(m.group(1) or "")
            ret = _squash(m.group(2).replace("GRACE_API", ""))
            add(m.group(3), "grace/grace.hpp", "cxx",
                "%s%s grace::%s(%s);" % (tmpl + " " if tmpl else "", ret, m.group(3),
                                         _squash(text[m.end():i - 1])))
    return out
