#!/usr/bin/env python3
"""Minimises the kept fuzz corpora to the inputs that add coverage, within a file budget, and packs them into
fuzz/corpus.tar.xz (one archive: 280 small files would be a third of the repository's files).

Usage: fuzz/minimize_corpus.py BUILD_FUZZ_DIR SEEDS_DIR [BUDGET=300]

scripts/fuzz.sh unpacks the archive into BUILD_FUZZ_DIR/corpus/<harness>/ and writes the inputs a run finds to
BUILD_FUZZ_DIR/found/<harness>/. This script takes both as the candidates. For each harness, libFuzzer's merge
(-merge=1, edges only: -use_counters=0 -use_value_profile=0) runs every candidate and the seeds (fuzz/make_seeds.py, made
again at every fuzz run, so never kept) and writes, per input, the coverage edges it reaches to its control file. A
greedy set cover over those edges then keeps, harness by harness, the input that adds the most edges beyond the seeds and
the inputs already kept, until none adds any or the harness's share of the budget is spent (shares in proportion to the
edges each harness's candidates add). Prints what each harness keeps and the edges it gives up, and writes the archive
(entries <harness>/<name> in name order, with no dates or owners: the same inputs give the same bytes) to a temporary
name, then renames it.
"""
import io
import os
import subprocess
import sys
import tarfile
import tempfile

HARNESSES = ["npy", "npz", "idx", "params", "pickle", "model_json", "mxnet_symbol"]


ARCHIVE = "fuzz/corpus.tar.xz"


def coverage(fuzzer, seeds, corpus):
    """Per input: (path, set of edges), seeds first; and how many of them are seeds."""
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "first")
        os.mkdir(first)
        control = os.path.join(tmp, "control")
        subprocess.run([fuzzer, "-merge=1", "-use_counters=0", "-use_value_profile=0", "-rss_limit_mb=2048", "-timeout=10",
                        f"-merge_control_file={control}", first, seeds, *corpus],
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


def pack(chosen):
    """chosen: {harness: [paths]} -> ARCHIVE, written to a temporary name and renamed."""
    tmp = ARCHIVE + ".tmp"
    with tarfile.open(tmp, "w:xz", preset=9) as t:
        for h in sorted(chosen):
            for path in sorted(chosen[h], key=os.path.basename):
                data = open(path, "rb").read()
                info = tarfile.TarInfo(f"{h}/{os.path.basename(path)}")
                info.size, info.mode = len(data), 0o644
                t.addfile(info, io.BytesIO(data))
    os.replace(tmp, ARCHIVE)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, seeds_root = sys.argv[1], sys.argv[2]
    budget = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    plans = {}
    for h in HARNESSES:
        corpus = [d for d in (os.path.join(build, "corpus", h), os.path.join(build, "found", h)) if os.path.isdir(d)]
        seeds = os.path.join(seeds_root, h)
        os.makedirs(seeds, exist_ok=True)
        items, n_seeds = coverage(os.path.join(build, f"fuzz_{h}"), seeds, corpus)
        covered = set().union(*[e for _, e in items[:n_seeds]]) if n_seeds else set()
        kept = items[n_seeds:]
        adds = len(set().union(*[e for _, e in kept]) - covered) if kept else 0
        plans[h] = (kept, covered, adds)
    total_adds = sum(a for _, _, a in plans.values()) or 1
    chosen_paths = {}
    for h, (kept, covered, adds) in plans.items():
        share = max(8, round(budget * adds / total_adds))
        base = len(covered)
        chosen = greedy(kept, set(covered), share)
        got = sum(g for _, g in chosen)
        chosen_paths[h] = [p for p, _ in chosen]
        print(f"{h:14s} seeds reach {base:5d} edges; the candidates added {adds:4d}; kept {len(chosen):3d} of {len(kept):4d} "
              f"inputs, adding {got:4d} ({100 * got / max(adds, 1):.0f} %)")
    pack(chosen_paths)
    print(f"wrote {ARCHIVE}: {sum(len(v) for v in chosen_paths.values())} inputs")


if __name__ == "__main__":
    main()
