# SPDX-License-Identifier: MIT
"""Count the instructions on the common path of a function, statically, from objdump (x86-64).

Why: valgrind does not implement rseq(2), so under callgrind grace's call_rcu() takes its
fallback (compare-and-swap push, sched_getcpu()) and callgrind counts that path, not the one
programs run. This walker counts the path a call takes when every conditional branch goes the
way the compiler laid out as likely (fall-through): for grace__cbdom_call that is the rseq push,
the rseq counter increment, the started and sleeping checks and the return, which is the path of
every call but the first of a thread, a worker wake-up, and one call in 32 (the backlog check).

    pathcount.py --bin LIB_OR_EXE --func SYMBOL [--take ADDR ...] [--take-after REGEX] [--trace]

Direct jumps are followed, direct calls are walked and counted, a call through the PLT counts the
PLT stub and then the callee in the shared library that defines it (found with ldd). Conditional
branches fall through unless their address is given with --take, or they directly follow an
instruction whose text matches the regular expression --take-after. An indirect jump or call stops
the walk with an error. Prints the instruction count (and with --trace every instruction).
"""
import argparse
import functools
import re
import subprocess
import sys

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
SYM = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"^([0-9a-f]+) <([^>]+)>")


class Image:
    def __init__(self, path):
        self.path = path
        self.insns = {}   # addr -> (mnemonic, operands)
        self.next = {}    # addr -> address of the following instruction
        self.syms = {}    # name -> addr (from the disassembly labels)
        out = subprocess.run(["objdump", "-d", "-w", "--no-show-raw-insn", path],
                             capture_output=True, text=True, check=True).stdout
        prev = None
        for line in out.splitlines():
            m = SYM.match(line)
            if m:
                self.syms.setdefault(m.group(2), int(m.group(1), 16))
                prev = None
                continue
            m = INSN.match(line)
            if not m:
                continue
            a = int(m.group(1), 16)
            self.insns[a] = (m.group(2), m.group(3).split("#")[0].strip())
            if prev is not None:
                self.next[prev] = a
            prev = a
        # Dynamic symbols (stripped libraries such as libc have only these).
        dyn = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
        for line in dyn.splitlines():
            f = line.split()
            if len(f) >= 7 and ".text" in f and f[0] != "0000000000000000":
                self.syms.setdefault(f[-1], int(f[0], 16))


@functools.lru_cache(maxsize=None)
def image(path):
    return Image(path)


def libs_of(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        p = line.split("=>")[1] if "=>" in line else line
        p = p.split("(")[0].strip()
        if p.startswith("/"):
            libs.append(p)
    return libs


def resolve(name, libs):
    for lib in libs:
        img = image(lib)
        if name in img.syms:
            return img, img.syms[name]
    raise SystemExit("pathcount: %s not found in %s" % (name, ", ".join(libs)))


def walk(img, addr, libs, take, trace, depth=0, take_after=None):
    """Count instructions from addr to the matching ret."""
    n = 0
    prev_text = ""
    for _ in range(100000):
        if addr not in img.insns:
            raise SystemExit("pathcount: no instruction at %#x in %s" % (addr, img.path))
        mn, ops = img.insns[addr]
        n += 1
        if trace:
            print("%s%s %#x: %s %s" % ("  " * depth, img.path.split("/")[-1], addr, mn, ops))
        base = mn.split(",")[0]
        if base.startswith("ret"):
            return n
        if base in ("jmp", "call", "bnd") or (base.startswith("j") and base != "jmp"):
            if ops.startswith("*") or (base == "bnd" and "*" in ops):
                raise SystemExit("pathcount: indirect %s at %#x in %s" % (mn, addr, img.path))
            m = TARGET.match(ops)
            if not m:
                raise SystemExit("pathcount: cannot parse %s %s at %#x" % (mn, ops, addr))
            tgt, tname = int(m.group(1), 16), m.group(2)
            if base.startswith("j") and base != "jmp":  # conditional
                taken = addr in take or (take_after is not None and take_after.search(prev_text))
                prev_text = "%s %s" % (mn, ops)
                addr = tgt if taken else img.next[addr]
                continue
            if tname.endswith("@plt"):
                # The stub's indirect jump through the GOT, then the callee in its library.
                n += 1
                limg, laddr = resolve(tname[:-4].split("@")[0], libs)
                sub = walk(limg, laddr, libs, take, trace, depth + 1, take_after)
            elif base == "call":
                sub = walk(img, tgt, libs, take, trace, depth + 1, take_after)
            else:  # direct jmp, possibly a tail call: keep walking there
                addr = tgt
                continue
            if base == "jmp":  # tail call through the PLT: its ret is ours
                return n + sub
            n += sub
        prev_text = "%s %s" % (mn, ops)
        addr = img.next[addr]
    raise SystemExit("pathcount: no ret after 100000 instructions (a loop?)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--func", required=True)
    ap.add_argument("--take", nargs="*", default=[])
    ap.add_argument("--take-after")
    ap.add_argument("--trace", action="store_true")
    a = ap.parse_args()
    img = image(a.bin)
    if a.func not in img.syms:
        raise SystemExit("pathcount: %s not in %s" % (a.func, a.bin))
    libs = [a.bin] + libs_of(a.bin)
    take = {int(x, 16) for x in a.take}
    ta = re.compile(a.take_after) if a.take_after else None
    print(walk(img, img.syms[a.func], libs, take, a.trace, 0, ta))


if __name__ == "__main__":
    sys.exit(main())
