#!/usr/bin/env python3
"""--trace FILE.json (issue 13): the timeline export is Chrome trace-event JSON that matches the sweep's own numbers.

Runs `batchscope sweep --trace` and checks that the file validates against trace_event.schema.json (the subset of
the Trace Event Format that Perfetto and chrome://tracing read), that every track is named, that every event lies in
its run, and that per layer the traced work (CPU phases on the cpu backends; kernels on the GPU backends) adds up to
the layer time that the layers CSV reports for the same run (--reps 1: the median is that run). Then the bad inputs.

usage: check_trace.py BATCHSCOPE SOURCE_DIR [--backend cpu|cuda|cudnn] [extra sweep flags...]
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, finish  # noqa: E402

bs, src = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
backend = "cpu"
if "--backend" in extra:
    backend = extra[extra.index("--backend") + 1]
else:
    extra = ["--backend", "cpu"] + extra
gpu = backend in ("cuda", "cudnn")


def run(args, expect_ok=True):
    p = subprocess.run([bs] + args, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit("FAIL: " + " ".join(args))
    return p


with tempfile.TemporaryDirectory() as tmp:
    out, trace = os.path.join(tmp, "s.csv"), os.path.join(tmp, "t.json")
    batches = [2, 8]
    run(["sweep", "--model", os.path.join(src, "data/models/ece408"), "--batches", ",".join(map(str, batches)), "--reps", "1",
         "--warmup", "1", "--check-images", "0", "--out", out, "--trace", trace] + extra)
    doc = json.load(open(trace))

    try:
        import jsonschema
        jsonschema.validate(doc, json.load(open(os.path.join(os.path.dirname(__file__), "trace_event.schema.json"))))
        print("schema: valid")
    except ImportError:  # the device has no jsonschema; CI (scripts/setup.sh) has
        print("schema: jsonschema not installed, checked by hand only")
    ev = doc["traceEvents"]
    for e in ev:  # the schema's essentials, by hand (also where jsonschema is missing)
        check(e["ph"] in ("X", "M") and isinstance(e["pid"], int) and isinstance(e["name"], str), "event fields: %r" % e)
        if e["ph"] == "X":
            check(e["dur"] >= 0 and isinstance(e["tid"], int), "complete event: %r" % e)

    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(sorted(procs.values()) == sorted("batch %d, warm run 1 of 1" % b for b in batches), "one process per batch: %r" % procs)
    named = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in ev:
        if e["ph"] == "X":
            check((e["pid"], e["tid"]) in named, "track of %s is named" % e["name"])

    layers = list(csv.DictReader(open(os.path.join(tmp, "s.layers.csv"))))
    for pid, label in procs.items():
        batch = int(label.split()[1].rstrip(","))
        window = [e for e in ev if e["ph"] == "X" and e["pid"] == pid and e["name"] == "run"]
        check(len(window) == 1, "batch %d: one run window" % batch)
        span = window[0]["dur"]
        work = defaultdict(float)
        kinds = defaultdict(int)
        for e in ev:
            if e["ph"] != "X" or e["pid"] != pid or e["name"] == "run":
                continue
            a = e["args"]
            kinds[a["type"]] += 1
            check(-1 <= e["ts"] <= span, "batch %d: %s starts inside its run (%.3f of %.3f us)" % (batch, e["name"], e["ts"], span))
            if a["type"] == ("kernel" if gpu else "cpu") and "layer" in a:
                work[a["layer"]] += e["dur"]
        if gpu:  # every convolution and fully connected layer ran kernels of its own (also when replayed from a graph)
            for r in layers:
                if r["run"] == "warm" and int(r["batch"]) == batch and r["type"] in ("convolution", "fully_connected"):
                    check(work.get(r["layer"], 0) > 0, "batch %d: layer %s has its kernels in the trace" % (batch, r["layer"]))
            check(kinds["kernel"] > 0 and kinds["memcpy"] >= 2 and kinds["api"] > 0,
                  "batch %d: kernels, copies and API calls traced: %r" % (batch, dict(kinds)))
        want = {r["layer"]: float(r["median_ms"]) * 1e3 for r in layers if r["run"] == "warm" and int(r["batch"]) == batch}
        for layer, us in want.items():
            got = work.get(layer, 0.0)
            check(abs(got - us) <= 1e-4 * us + 2e-3, "batch %d layer %s: trace %.4f us, layers CSV %.4f us" % (batch, layer, got, us))
        check(set(work) <= set(want), "batch %d: traced layers %s are the CSV's" % (batch, sorted(set(work) - set(want))))
        print("batch %d: %d traced events, %d layers match the layers CSV" % (batch, sum(kinds.values()), len(want)))

    # Bad inputs: one line naming the flag, non-zero exit, nothing written.
    bad = os.path.join(tmp, "missing", "t.json")
    out2 = os.path.join(tmp, "b.csv")
    for args, needle in [(["--trace", bad], "--trace"), (["--trace", trace + ".2", "--no-profile"], "--trace")]:
        p = run(["sweep", "--model", os.path.join(src, "data/models/ece408"), "--batches", "2", "--reps", "1", "--out", out2] + args + extra,
                expect_ok=False)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        check(p.returncode != 0 and len(lines) == 1 and needle in lines[0], "bad %s: one line naming it: %r" % (args, p.stderr))
        check(not os.path.exists(out2) and not os.path.exists(trace + ".2"), "bad %s: nothing written" % args)

sys.exit(finish())
