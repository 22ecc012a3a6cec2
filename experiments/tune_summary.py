#!/usr/bin/env python3
"""Prints a tuning table (batchscope tune --out) as one line per (layer, batch): each version's median ms, its relative
L2 error against the reference, the one tune chose, and the versions that refused the layer.
Run: python3 experiments/tune_summary.py TABLE.json [MORE.json ...]"""
import json
import sys


def main() -> None:
    for path in sys.argv[1:]:
        with open(path) as f:
            table = json.load(f)
        print(f"# {path}: {table.get('command', '')}")
        for e in table["entries"]:
            times = sorted(e.get("times_ms", {}).items(), key=lambda kv: kv[1])
            errs = e.get("errors", {})
            parts = [f"v{v} {t:.4f} ({errs.get(v, float('nan')):.1e})" for v, t in times]
            refused = ",".join(sorted(e.get("unsupported", {})))
            print(f"{e['layer']:6} b{e['batch']:<5} best v{e['best']}: " + "  ".join(parts) + (f"  refused: {refused}" if refused else ""))


if __name__ == "__main__":
    main()
