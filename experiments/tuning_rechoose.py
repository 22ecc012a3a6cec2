#!/usr/bin/env python3
"""A tuning table re-chosen for another error budget from its own measurements (tune records every version's time and
error): per entry, the fastest version whose error is within the budget, else the most accurate (choose_best in
kernels/plan/tuning.cpp). Usage: tuning_rechoose.py IN.json BUDGET OUT.json"""
import json
import sys


def choose(entry, budget):
    times, errors = entry["times_ms"], entry.get("errors", {})
    inside = [v for v in times if v not in errors or errors[v] <= budget]
    if inside:
        return int(min(inside, key=lambda v: times[v]))
    return int(min(errors, key=lambda v: errors[v]))


def main(src, budget, dst):
    t = json.load(open(src))
    b = float(budget)
    for e in t["entries"]:
        if e.get("errors"):
            e["best"] = choose(e, b)
            e["error_budget"] = b
    t["command"] += f" (re-chosen for --error-budget {budget} by experiments/tuning_rechoose.py)"
    json.dump(t, open(dst, "w"), indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
