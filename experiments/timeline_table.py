#!/usr/bin/env python3
"""Tables of the GEMM engine's per-block timeline (a -DBS_TIMELINE probe build: kernels/cuda/engine/timeline.hpp).

usage: timeline_table.py FILE.csv [--min-blocks N]

Each line of FILE is one block: g0,g3 (%globaltimer at entry and exit, ns), c1,c2,c3 (clock64 from entry after the
loaders' set-up, after the K loop, at exit), sm, blockIdx x,y,z, gridDim x,y,z, nk (K stages of the block), splits,
BM, BN, CLUSTER, and (a cluster's reduction; 0 elsewhere) e0-e3, clock64 from entry when the tile was staged, after the
cluster barrier, after the sums were read, after the stores were issued. Launches are told apart by time: kernels of one stream do not overlap, so a block that starts after
every block so far has ended begins the next launch. One row per launch shape (grid, tile, splits): medians over its
launches of the span (first entry to last exit), the entry spread, and each phase of a block in cycles and ns (the
clock from c3 / (g3 - g0)).
"""
import csv
import statistics as st
import sys
from collections import defaultdict


def launches(rows):
    rows.sort(key=lambda r: r["g0"])
    cur, end = [], -1
    for r in rows:
        if cur and r["g0"] >= end:
            yield cur
            cur, end = [], -1
        cur.append(r)
        end = max(end, r["g3"])
    if cur:
        yield cur


def last_of_clusters(L):
    """Per cluster (the splits of one tile: same x, y and z // splits), the block that staged its tile last."""
    cl = {}
    for r in L:
        if not r["e0"] or r["splits"] < 2:
            continue
        k = (r["bx"], r["by"], r["bz"] // r["splits"])
        if k not in cl or r["g0"] * 0 + r["e0"] > cl[k]["e0"]:
            cl[k] = r
    return list(cl.values())


def med(v):
    return st.median(v) if v else float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    names = "g0 g3 c1 c2 c3 sm bx by bz gx gy gz nk splits bm bn cl e0 e1 e2 e3".split()
    rows = []
    with open(sys.argv[1]) as f:
        for line in csv.reader(f):
            if len(line) not in (17, 21):
                continue
            rows.append(dict(zip(names, list(map(int, line)) + [0] * (21 - len(line)))))
    by = defaultdict(list)
    for L in launches(rows):
        r0 = L[0]
        key = (r0["gx"], r0["gy"], r0["gz"], r0["bm"], r0["bn"], r0["splits"], r0["cl"], max(r["nk"] for r in L))
        t0 = min(r["g0"] for r in L)
        span = max(r["g3"] for r in L) - t0
        entry = sorted(r["g0"] - t0 for r in L)
        ghz = med([r["c3"] / (r["g3"] - r["g0"]) for r in L if r["g3"] > r["g0"]])
        by[key].append(dict(
            n=len(L), span=span, entry_med=med(entry), entry_max=entry[-1],
            setup=med([r["c1"] for r in L]), loop=med([r["c2"] - r["c1"] for r in L]),
            stage=med([(r["c2"] - r["c1"]) / r["nk"] for r in L if r["nk"]]), epi=med([r["c3"] - r["c2"] for r in L]),
            block=med([r["c3"] for r in L]), block_max=max(r["c3"] for r in L), ghz=ghz,
            sms=len({r["sm"] for r in L}), t0=t0,
            stage_t=med([r["e0"] - r["c2"] for r in L if r["e0"]]), bar=med([r["e1"] - r["e0"] for r in L if r["e0"]]),
            sums=med([r["e2"] - r["e1"] for r in L if r["e0"]]), stores=med([r["e3"] - r["e2"] for r in L if r["e0"]]),
            last=med([r["c3"] - r["e3"] for r in L if r["e0"]]),
            # the block of each cluster whose K loop ended last: its barrier wait is the barrier's own cost
            bar_last=med([c["e1"] - c["e0"] for c in last_of_clusters(L)])))
    print("| grid (x,y,z) | BMxBN | splits | cluster | nk | launches | blocks | SMs | span us | entry med / max us |"
          " set-up | K loop | a stage | epilogue | block med / max (cycles) | GHz |"
          " epilogue: staging | cluster barrier (last block) | sums read | stores | final wait |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, ls in sorted(by.items(), key=lambda kv: kv[1][0]["t0"]):
        gx, gy, gz, bm, bn, sp, cl, nk = key
        if len(ls) < 2:
            continue
        m = {k: med([x[k] for x in ls]) for k in ls[0]}
        print(f"| {gx},{gy},{gz} | {bm}x{bn} | {sp} | {cl} | {nk} | {len(ls)} | {m['n']:.0f} | {m['sms']:.0f} | {m['span']/1e3:.2f} |"
              f" {m['entry_med']/1e3:.2f} / {m['entry_max']/1e3:.2f} | {m['setup']:.0f} | {m['loop']:.0f} | {m['stage']:.0f} |"
              f" {m['epi']:.0f} | {m['block']:.0f} / {m['block_max']:.0f} | {m['ghz']:.2f} |"
              f" {m['stage_t']:.0f} | {m['bar']:.0f} ({m['bar_last']:.0f}) | {m['sums']:.0f} | {m['stores']:.0f} | {m['last']:.0f} |")


if __name__ == "__main__":
    main()
