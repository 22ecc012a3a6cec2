#!/usr/bin/env python3
"""Per kernel of a CUDA object or binary, the innermost loop that holds the matrix instructions (HGMMA / HMMA), read from
its SASS: instructions in the loop body and how many of them are copies (LDGSTS), matrix products, constant-bank loads
(LDC: kernel parameters reloaded inside the loop), barriers and 64-bit address arithmetic (LEA.HI.X, IMAD.X, IADD3.X).

  experiments/sass_loops.py FILE.o [REGEX]      (cuobjdump: $CUOBJDUMP, else cuobjdump on PATH, else /opt/cudatools)
  experiments/sass_loops.py --all FILE [REGEX]  every loop of each kernel (a backward branch and its target; an unrolled
                                                loop and its remainder count apart): instructions, copies, loads, stores

No GPU needed: a static count, for comparing two builds of the same kernel (fewer instructions a stage in a loop that
issues from two warps a scheduler is what the small-batch convolutions wait on: experiments/batch1-latency.md).
scripts/sass_tools.sh installs cuobjdump and nvdisasm where the CUDA toolkit lacks them."""
import os, re, shutil, subprocess, sys

def cuobjdump():
    for c in (os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"), "/opt/cudatools/cuobjdump"):
        if c and os.path.exists(c):
            return c
    sys.exit("sass_loops.py: no cuobjdump (set CUOBJDUMP, or run scripts/sass_tools.sh)")

INSN = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?);")

def functions(path):
    out = subprocess.run([cuobjdump(), "-sass", path], capture_output=True, text=True, check=True).stdout
    name, body = None, []
    for line in out.splitlines():
        m = re.match(r"\s+Function : (\S+)", line)
        if m:
            if name: yield name, body
            name, body = m.group(1), []
            continue
        m = INSN.match(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2).strip()))
    if name: yield name, body

def loop_stats(body):
    """The smallest loop (a backward branch and its target) that contains a matrix instruction."""
    best = None
    for addr, ins in body:
        m = re.search(r"\bBRA (?:`\()?(0x[0-9a-f]+)", ins)
        if not m: continue
        target = int(m.group(1), 16)
        if target >= addr: continue
        loop = [x for a, x in body if target <= a <= addr]
        if not any(re.search(r"\b[HQ]GMMA|\bHMMA", x) for x in loop): continue
        if best is None or len(loop) < len(best): best = loop
    if best is None: return None
    count = lambda pat: sum(1 for x in best if re.search(pat, x))
    return {"insns": len(best), "ldgsts": count(r"\bLDGSTS"), "mma": count(r"\b[HQ]GMMA|\bHMMA"), "ldc": count(r"\bU?LDC\b"),
            "bar": count(r"\bBAR\.|\bSYNCS"), "addr64": count(r"\.X\b")}

def all_loops(body):
    """Every loop, in address order: (target, branch address, its instructions)."""
    for addr, ins in body:
        m = re.search(r"\bBRA (?:`\()?(0x[0-9a-f]+)", ins)
        if m and int(m.group(1), 16) < addr:
            target = int(m.group(1), 16)
            yield target, addr, [x for a, x in body if target <= a <= addr]

def main():
    if len(sys.argv) < 2: sys.exit(__doc__)
    if sys.argv[1] == "--all":
        if len(sys.argv) < 3: sys.exit(__doc__)
        pat = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
        for name, body in functions(sys.argv[2]):
            if pat and not pat.search(name): continue
            print(f"{name}: {len(body)} instructions")
            pats = [("LDGSTS", r"\bLDGSTS"), ("LDG", r"\bLDG\."), ("STG", r"\bSTG"), ("LDS", r"\bLDS\b|\bLDS\."),
                    ("STS", r"\bSTS"), ("addr64", r"\.X\b")]
            for t, a, loop in sorted(all_loops(body)):
                counts = "  ".join(f"{k} {sum(1 for x in loop if re.search(p, x)):>2}" for k, p in pats)
                print(f"  {t:#07x}-{a:#07x} {len(loop):>5} insns  {counts}")
        return
    pat = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
    print(f"{'insns':>6} {'ldgsts':>6} {'mma':>4} {'ldc':>4} {'bar':>4} {'addr64':>6}  kernel")
    for name, body in functions(sys.argv[1]):
        if pat and not pat.search(name): continue
        s = loop_stats(body)
        if s:
            print(f"{s['insns']:>6} {s['ldgsts']:>6} {s['mma']:>4} {s['ldc']:>4} {s['bar']:>4} {s['addr64']:>6}  {name}")

if __name__ == "__main__":
    main()
