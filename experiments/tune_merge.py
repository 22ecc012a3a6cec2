#!/usr/bin/env python3
"""Merges entries of new `batchscope tune` tables into a tuning table, in place.

Usage: experiments/tune_merge.py TABLE NEW.json [NEW.json ...] [--kinds conv,fc]

Every entry of a NEW table whose kind is in --kinds (default: conv and fc) replaces the TABLE's entry of the same
signature and batch, or is added. The TABLE's other entries keep their text byte for byte (their floats are not
re-printed). The merged table is written to a temporary name, read back as JSON, then renamed over TABLE.
Prints what it replaced and added, and each replaced entry whose best version changed.
"""
import json
import os
import sys


def entry_blocks(lines):
    """(start, end) line indices of each entry object in a table written by batchscope (one-space indent)."""
    i = 0
    while i < len(lines):
        if lines[i] == "  {":
            j = i
            while lines[j] not in ("  }", "  },"):
                j += 1
            yield i, j
            i = j + 1
        else:
            i += 1


def indented(entry):
    return ["  " + line for line in json.dumps(entry, indent=1).split("\n")]


def main(argv):
    kinds = {"conv", "fc"}
    args = []
    it = iter(argv)
    for a in it:
        if a == "--kinds":
            kinds = set(next(it).split(","))
        else:
            args.append(a)
    if len(args) < 2:
        sys.exit(__doc__)
    table, news = args[0], args[1:]
    new = {}
    for path in news:
        with open(path) as f:
            for e in json.load(f)["entries"]:
                if e["kind"] in kinds:
                    new[(e["signature"], e["batch"])] = e
    with open(table) as f:
        lines = f.read().split("\n")
    out, at, replaced, changed = [], 0, 0, []
    blocks = list(entry_blocks(lines))
    for start, end in blocks:
        out.extend(lines[at:start])
        e = json.loads("\n".join(lines[start:end + 1]).rstrip(","))
        key = (e["signature"], e["batch"])
        if key in new:
            n = new.pop(key)
            block = indented(n)
            replaced += 1
            if n["best"] != e["best"]:
                changed.append(f"{e['signature']} batch {e['batch']}: v{e['best']} -> v{n['best']}")
        else:
            block = lines[start:end + 1]
        if lines[end].endswith(",") and not block[-1].endswith(","):
            block[-1] += ","
        out.extend(block)
        at = end + 1
    if new and blocks:  # entries the table did not have: after its last one
        last = len(out) - 1
        out[last] += ","
        added = []
        for e in new.values():
            added.extend(indented(e))
            added[-1] += ","
        added[-1] = added[-1][:-1]
        out[last + 1:last + 1] = added
    out.extend(lines[at:])
    tmp = table + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out))
    with open(tmp) as f:
        json.load(f)
    os.replace(tmp, table)
    print(f"{table}: {replaced} entries replaced, {len(new)} added")
    for c in changed:
        print("  " + c)


if __name__ == "__main__":
    main(sys.argv[1:])
