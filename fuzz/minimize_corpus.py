#!/usr/bin/env python3
"""Minimises the kept fuzz corpora (fuzz/corpus/<harness>/) to the inputs that add coverage, within a file budget.

Usage: fuzz/minimize_corpus.py BUILD_FUZZ_DIR SEEDS_DIR [BUDGET=300]

For each harness, libFuzzer's merge (-merge=1, edges only: -use_counters=0 -use_value_profile=0) runs every kept input
and the seeds (fuzz/make_seeds.py, made again at every fuzz run, so never kept) and writes, per input, the coverage
edges it reaches to its control file. A greedy set cover over those edges then keeps, harness by harness, the input
that adds the most edges beyond the seeds and the inputs already kept, until none adds any or the harness's share of
the budget is spent (shares in proportion to the edges each harness's corpus adds). Prints what each harness keeps
and the edges it gives up.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HARNESSES = ["npy", "npz", "idx", "params", "pickle", "model_json", "mxnet_symbol"]


def coverage(fuzzer, seeds, corpus):
    """Per input: (path, set of edges), seeds first; and how many of them are seeds."""
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "first")
        os.mkdir(first)
        control = os.path.join(tmp, "control")
        subprocess.run([fuzzer, "-merge=1", "-use_counters=0", "-use_value_profile=0", "-rss_limit_mb=2048", "-timeout=10",
                        f"-merge_control_file={control}", first, seeds, corpus],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lines = open(control).read().split("\n")
    n, m = int(lines[0]), int(lines[1])  # files in all; in the first folder (empty here)
    paths = lines[2:2 + n]
    cov = [set() for _ in range(n)]
    for line in lines[2 + n:]:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "COV":
            cov[int(parts[1])] = set(parts[2:])
    n_seeds = len([p for p in paths if p.startswith(seeds)])
    return list(zip(paths, cov)), n_seeds


def greedy(items, covered, budget):
    chosen = []
    items = list(items)
    while len(chosen) < budget:
        best, gain = None, 0
        for i, (_, edges) in enumerate(items):
            g = len(edges - covered)
            if g > gain:
                best, gain = i, g
        if best is None:
            break
        path, edges = items.pop(best)
        covered |= edges
        chosen.append((path, gain))
    return chosen


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, seeds_root = sys.argv[1], sys.argv[2]
    budget = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    plans = {}
    for h in HARNESSES:
        corpus = os.path.join("fuzz/corpus", h)
        seeds = os.path.join(seeds_root, h)
        os.makedirs(seeds, exist_ok=True)
        items, n_seeds = coverage(os.path.join(build, f"fuzz_{h}"), seeds, corpus)
        covered = set().union(*[e for _, e in items[:n_seeds]]) if n_seeds else set()
        kept = items[n_seeds:]
        adds = len(set().union(*[e for _, e in kept]) - covered) if kept else 0
        plans[h] = (kept, covered, adds)
    total_adds = sum(a for _, _, a in plans.values()) or 1
    for h, (kept, covered, adds) in plans.items():
        share = max(8, round(budget * adds / total_adds))
        base = len(covered)
        chosen = greedy(kept, set(covered), share)
        got = sum(g for _, g in chosen)
        corpus = os.path.join("fuzz/corpus", h)
        keep = {os.path.basename(p) for p, _ in chosen}
        for name in os.listdir(corpus):
            if name not in keep:
                os.remove(os.path.join(corpus, name))
        print(f"{h:14s} seeds reach {base:5d} edges; the corpus added {adds:4d}; kept {len(chosen):3d} of {len(kept):4d} inputs, "
              f"adding {got:4d} ({100 * got / max(adds, 1):.0f} %)")


if __name__ == "__main__":
    main()
