#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Man pages (section 3) generated from the API reference, docs/api.md.

Usage: gen-man.py <source root> <output dir> <version>
Writes <output dir>/grace.3 (the overview: conventions, headers, context rules, every page) and
one page per public name of the headers (scripts/api_names.py):
  - a name in the heading of a section of api.md ("### `rcu_read_lock()` - `void
    grace_rcu_read_lock(void)`") is documented by that section: the first such name gets the
    page, the others (grace_rcu_read_lock) a ".so" link to it;
  - any other public name links to the page of the first section whose text names it (the
    polled QSBR functions, the data-structure functions, the C++ names, ...), or gets a page of
    its own made from that section when the section has no page yet.
Every page has NAME, SYNOPSIS (the #include and the declarations, from the headers),
DESCRIPTION (the section, markdown turned into man(7) markup) and SEE ALSO. Fails when a public
name ends up without a page, so new API cannot be shipped without one.
"""
import os
import re
import sys
import time

root, outdir, version = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(root, "scripts"))
import api_names  # noqa: E402

names = api_names.public_names(root)
api = open(os.path.join(root, "docs", "api.md"), encoding="utf-8").read()
# SOURCE_DATE_EPOCH: reproducible pages (Debian builds set it from debian/changelog).
date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH",
                                                                  time.time()))))

# ---- docs/api.md as sections ----
sections = []  # dicts: level, title, body (lines), parent (level-2 title)
cur = None
parent = ""
in_code = False
for line in api.splitlines():
    if line.startswith("```"):
        in_code = not in_code
    m = None if in_code else re.match(r"^(#{2,4}) (.*)$", line)
    if m:
        level = len(m.group(1))
        if level == 2:
            parent = m.group(2)
        cur = {"level": level, "title": m.group(2), "body": [], "parent": parent}
        sections.append(cur)
    elif cur is not None:
        cur["body"].append(line)
SKIP = ("Conventions", "Headers", "Context summary", "Measured costs")

# A section made of one bullet per header ("- **`<grace/list.h>`**: ...", the data structures)
# becomes one section per bullet, so each header's names get a page of their own.
split = []
for sec in sections:
    body = sec["body"]
    starts = [i for i, l in enumerate(body) if re.match(r"^- \*\*`<grace/[\w/]+\.h>`\*\*", l)]
    if sec["level"] != 2 or not starts:
        split.append(sec)
        continue
    split.append(dict(sec, body=body[:starts[0]]))
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(body)
        hdr = re.match(r"^- \*\*(`<grace/[\w/]+\.h>`)\*\*:?\s*(.*)$", body[i])
        item = [hdr.group(2)] + [l[2:] if l.startswith("  ") else l for l in body[i + 1:end]]
        split.append({"level": 3, "title": hdr.group(1), "body": item, "parent": sec["title"]})
sections = split


def code_names(text):
    """Identifiers in `...` spans of text: `rcu_read_lock()`, `DEFINE_SRCU(name)`, `struct x`.
    Fenced code blocks are left out (their fences would unbalance the spans)."""
    out = []
    text = re.sub(r"^```.*?^```[^\n]*$", " ", text, flags=re.S | re.M)
    for span in re.findall(r"`([^`]+)`", text):
        for n in re.findall(r"[A-Za-z_]\w*", span):
            if n in names and n not in out:
                out.append(n)
    return out


def heading_names(title):
    """The names a heading documents: each `...` span's first public name (a span that is a
    prototype names its function after the return type: take the name before the '(')."""
    out = []
    for span in re.findall(r"`([^`]+)`", title):
        m = re.search(r"([A-Za-z_]\w*)\s*\(", span)
        cands = [m.group(1)] if m else []
        cands += re.findall(r"[A-Za-z_]\w*", span)
        for n in cands:
            if n in names:
                if n not in out:
                    out.append(n)
                break
    return out


# ---- markdown to man(7) ----
UNI = {"\u2014": r"\(em", "\u2013": r"\(en", "\u00b5": r"\(mc", "\u00d7": r"\(mu",
       "\u2026": "...", "\u2192": r"\(->", "\u2264": r"\(<=", "\u2265": r"\(>=",
       "\u2248": r"\(~~", "\u00b7": r"\(pc", "\u2019": "'", "\u201c": r"\(lq", "\u201d": r"\(rq"}


def esc(s):
    s = s.replace("\\", r"\e")
    for k, v in UNI.items():
        s = s.replace(k, v)
    return s


def inline(s):
    """One line of markdown text: code spans bold, **bold**, *italic*, links to their text."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", s)):
        if i % 2:
            out.append(r"\fB" + esc(part[1:-1]) + r"\fR")
            continue
        part = re.sub(r"!?\[([^\]]*)\]\(([^)]*)\)",
                      lambda m: m.group(1) + (" <" + m.group(2) + ">"
                                              if m.group(2).startswith("http") else ""), part)
        part = esc(part)
        part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
        part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?!\w)", r"\\fI\1\\fR", part)
        out.append(part)
    line = "".join(out)
    if line.startswith((".", "'")):
        line = r"\&" + line
    return line


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def to_man(lines):
    out = []
    i = 0
    para = []

    def flush():
        if para:
            out.append(".PP")
            out.extend(inline(p) for p in para)
            para.clear()

    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("```"):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                t = esc(lines[i].replace("\t", "        "))
                out.append(r"\&" + t if t.startswith((".", "'")) else t)
                i += 1
            out += [".fi", ".RE"]
        elif s.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                if not re.match(r"^\|[\s:|-]+\|?$", lines[i].strip()):
                    rows.append(cells(lines[i]))
                i += 1
            i -= 1
            head, rows = rows[0], rows[1:]
            for r in rows:
                out.append(".TP")
                out.append(inline(r[0]) if r[0] else r"\&")
                rest = []
                for h, c in zip(head[1:], r[1:]):
                    if c:
                        rest.append((h + ": " if h and len(head) > 2 else "") + c)
                out.append(inline("; ".join(rest)) if rest else r"\&")
        elif re.match(r"^(\s*)[-*] ", line) or re.match(r"^\s*\d+\. ", line):
            flush()
            m = re.match(r"^(\s*)([-*]|\d+\.) (.*)$", line)
            mark = r"\(bu" if m.group(2) in "-*" else m.group(2)
            item = [m.group(3)]
            while (i + 1 < len(lines) and lines[i + 1].startswith("  ")
                   and not re.match(r"^\s*([-*]|\d+\.) ", lines[i + 1])):
                i += 1
                item.append(lines[i].strip())
            out.append(".IP %s 4" % mark)
            out.extend(inline(t) for t in item)
        elif s.startswith(">"):
            para.append(s.lstrip("> "))
        elif re.match(r"^#{3,6} ", s):
            flush()
            out.append(".SS " + inline(re.sub(r"^#+ ", "", s)).replace('"', ""))
        elif s in ("", "---"):
            flush()
        elif s.startswith("<!--"):
            pass
        else:
            para.append(s)
        i += 1
    flush()
    return out


# ---- which section documents which name ----
owner = {}  # name -> section index
page_of = {}  # section index -> primary name
for idx, sec in enumerate(sections):
    if sec["level"] == 2 and sec["title"] in SKIP:
        continue
    for n in heading_names(sec["title"]):
        if n not in owner:
            owner[n] = idx
            page_of.setdefault(idx, n)
def defining(sec):
    """Names a section defines without a heading: in bold (**`name`**) or in the first column
    of a table row."""
    out = []
    for l in sec["body"]:
        spans = re.findall(r"\*\*(`[^`]+`)\*\*", l)
        if l.startswith("|"):
            spans.append(l.strip().strip("|").split("|")[0])
        for sp in spans:
            for n in code_names(sp):
                if n not in out:
                    out.append(n)
    return out


eligible = [idx for idx, sec in enumerate(sections)
            if not ((sec["title"] if sec["level"] == 2 else sec["parent"]) in SKIP
                    or (sec["title"] if sec["level"] == 2 else sec["parent"]).startswith("Race"))]
for pick in (lambda sec: defining(sec),
             lambda sec: code_names(sec["title"] + "\n" + "\n".join(sec["body"]))):
    for n in names:
        if n in owner:
            continue
        for idx in eligible:
            if n in pick(sections[idx]):
                owner[n] = idx
                page_of.setdefault(idx, n)
                break
# A section whose heading names nothing: its page is named after the first name of its text.
for idx in list(page_of):
    if heading_names(sections[idx]["title"]):
        continue
    text = sections[idx]["title"] + "\n" + "\n".join(sections[idx]["body"])
    mine = [n for n in code_names(text) if owner.get(n) == idx]
    if mine:
        page_of[idx] = mine[0]
missing = sorted(n for n in names if n not in owner)
if missing:
    sys.exit("gen-man.py: no section of docs/api.md documents: " + ", ".join(missing))


def header_of(n):
    return [h for h, _, _ in names[n]]


def synopsis(ns):
    incs, decls = [], []
    for n in ns:
        for h, kind, syn in names[n]:
            if h not in incs:
                incs.append(h)
            if syn and syn not in decls:
                decls.append(syn)
    out = [".SH SYNOPSIS", ".nf"]
    out += [r".B #include <%s>" % h for h in incs]
    if any(h.endswith(".h") for h in incs):
        out.append(".PP")
        out.append(r"Link with \fI\-lgrace \-pthread\fP (pkg-config: \fIgrace\fP).")
    out.append(".PP")
    out += [esc(d) for d in decls]
    out.append(".fi")
    return out


def title_summary(sec):
    """A one-line summary for NAME: the section's first sentence, plain."""
    text = " ".join(l.strip() for l in sec["body"] if l.strip() and not l.startswith(("|", "```", "-", ">")))
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\*+", "", text)
    m = re.match(r"(.+?[.:])(\s|$)", text)
    s = (m.group(1) if m else text)[:150].rstrip(":.")
    return esc(s) if s else esc(re.sub(r"[`*]", "", sec["title"]))


os.makedirs(outdir, exist_ok=True)
for f in os.listdir(outdir):
    if f.endswith(".3"):
        os.remove(os.path.join(outdir, f))

TH = '.TH %s 3 "%s" "grace %s" "grace API"'
written = []
for idx, primary in sorted(page_of.items(), key=lambda kv: kv[1]):
    sec = sections[idx]
    documented = [n for n in names if owner[n] == idx]
    documented.sort(key=lambda n: (n != primary, n))
    body = list(sec["body"])
    # A level-2 section with subsections: its own text only (the subsections have pages).
    page = [r'.\" Generated by scripts/gen-man.py from docs/api.md: edit that, not this.',
            TH % (primary.upper(), date, version),
            ".SH NAME", "%s \\- %s" % (", ".join(esc(n) for n in documented), title_summary(sec))]
    page += synopsis(documented)
    page += [".SH DESCRIPTION"]
    if sec["level"] > 2 and sec["parent"]:
        page += [".PP", r"Part of \fI" + esc(re.sub(r"[`*]", "", sec["parent"])) + r"\fR."]
    page += to_man(body)
    siblings = [page_of[j] for j, s in enumerate(sections)
                if j in page_of and j != idx and s["parent"] == sec["parent"]][:12]
    page += [".SH SEE ALSO", ", ".join(r"\fB%s\fR(3)" % esc(n) for n in ["grace"] + siblings) +
             "; the API reference docs/api.md and the guide docs/guide.md in the grace"
             " documentation directory."]
    with open(os.path.join(outdir, primary + ".3"), "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")
    written.append(primary)
    for n in documented[1:]:
        with open(os.path.join(outdir, n + ".3"), "w", encoding="utf-8") as f:
            f.write(".so man3/%s.3\n" % primary)
        written.append(n)

# ---- grace(3): the overview ----
ov = [r'.\" Generated by scripts/gen-man.py from docs/api.md: edit that, not this.',
      TH % ("GRACE", date, version), ".SH NAME",
      r"grace \- read-copy update (RCU) for user-space C and C++",
      ".SH SYNOPSIS", ".nf", r".B #include <grace/grace.h>", r".B #include <grace/grace.hpp>",
      ".PP", r"Link with \fI\-lgrace \-pthread\fP (pkg-config: \fIgrace\fP).", ".fi",
      ".SH DESCRIPTION"]
for sec in sections:
    if sec["level"] == 2 and sec["title"] in ("Conventions", "Headers", "Context summary"):
        ov.append(".SS " + inline(sec["title"]))
        ov += to_man(sec["body"])
ov += [".SH PAGES"]
for idx, primary in sorted(page_of.items(), key=lambda kv: kv[1]):
    ov += [".TP", r"\fB%s\fR(3)" % esc(primary), title_summary(sections[idx])]
ov += [".SH SEE ALSO", "The API reference docs/api.md, the guide docs/guide.md, the design"
       " docs/design.md and the ABI policy docs/abi.md, installed with the documentation."]
with open(os.path.join(outdir, "grace.3"), "w", encoding="utf-8") as f:
    f.write("\n".join(ov) + "\n")
print("gen-man.py: %d pages (%d of them links) and grace.3 in %s" %
      (len(page_of), len(written) - len(page_of), outdir))
