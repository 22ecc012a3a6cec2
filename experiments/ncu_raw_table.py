#!/usr/bin/env python3
"""One markdown row per kernel launch of `ncu --set full --page raw --csv` output: time, grid, cluster, registers,
warps active, issue slots and tensor pipe busy, instructions, DRAM bytes, DRAM and L2 throughput (% of peak over the
kernel's time), L1 sector hit rate, and the top stalls per issued instruction
(smsp__average_warps_issue_stalled_*_per_issue_active).

usage: ncu_raw_table.py FILE.csv [LABEL ...]   (LABEL per launch, in order; default the launch's ID)
"""
import csv
import sys

COLS = [  # (heading, metric or metrics: alternative names, |-separated)
    ("us", "gpu__time_duration.sum"),
    ("grid", "launch__grid_size"),
    ("cluster", "launch__cluster_dim_z"),
    ("regs", "launch__registers_per_thread"),
    ("warps active %", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("issue active %", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    ("tensor pipe %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("SM active cycles", "sm__cycles_active.avg"),
    ("elapsed cycles", "gpc__cycles_elapsed.max"),
    ("warp instructions", "smsp__inst_executed.sum"),
    ("DRAM read MB", "dram__bytes_read.sum"),
    ("DRAM %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed|dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L2 %", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L1 hit %", "l1tex__t_sector_hit_rate.pct"),
]
STALL = ("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio")


def num(s):
    return float(s.replace(",", "")) if s not in ("", None) else 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ncu_raw_table.py FILE.csv [LABEL ...]")
    path, labels = sys.argv[1], sys.argv[2:]
    try:
        rows = list(csv.reader(open(path, newline="")))
    except OSError as e:
        sys.exit(f"ncu_raw_table.py: {path}: {e.strerror}")
    head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if head is None:
        sys.exit(f"ncu_raw_table.py: {path}: no 'ID' header row (not ncu --page raw --csv output)")
    h = rows[head]
    idx = {k: i for i, k in enumerate(h)}
    units = rows[head + 1]
    stalls = [k for k in h if k.startswith(STALL[0]) and k.endswith(STALL[1])]
    print("| launch | kernel | " + " | ".join(c for c, _ in COLS) + " | top stalls a issue |")
    print("|---" * (len(COLS) + 3) + "|")
    for n, r in enumerate(rows[head + 2:]):
        if len(r) < len(h):
            continue
        label = labels[n] if n < len(labels) else r[idx["ID"]]
        name = r[idx["Kernel Name"]].removeprefix("void ").split("<")[0].split("(")[0] if "Kernel Name" in idx else "?"
        cells = []
        for _, ms in COLS:
            m = next((a for a in ms.split("|") if a in idx), None)  # the first of its names this ncu wrote
            if m is None:
                cells.append("?")
                continue
            v = num(r[idx[m]])
            u = units[idx[m]]
            if m == "gpu__time_duration.sum":
                v = v / 1000 if u in ("ns", "nsecond") else v * 1e3 if u in ("ms", "msecond") else v
                cells.append(f"{v:.2f}")
            elif m == "dram__bytes_read.sum":
                scale = {"byte": 1e-6, "Kbyte": 1e-3, "KB": 1e-3, "Mbyte": 1, "MB": 1, "Gbyte": 1e3, "GB": 1e3}.get(u, 1e-6)
                cells.append(f"{v * scale:.2f}")
            elif v == int(v):
                cells.append(f"{int(v):,}")
            else:
                cells.append(f"{v:.1f}")
        top = sorted(((num(r[idx[k]]), k[len(STALL[0]):-len(STALL[1])]) for k in stalls), reverse=True)[:5]
        cells.append(", ".join(f"{s} {v:.2f}" for v, s in top))
        print(f"| {label} | {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
