#!/usr/bin/env python3
"""The report and figures from small committed sweep results (tests/fixtures/sweeps: a CPU sweep and two
H200 sweeps): every figure and both report files are made, the Markdown's links resolve, the HTML embeds
its images, and a CSV lacking a column or holding a bad value is refused with a message naming it.
Usage: check_report.py BATCHSCOPE SRC_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, finish  # noqa: E402


def make_report(batchscope, csvs, out, figures, exts=("png", "svg")):
    """Runs `batchscope report` on csvs into out, checks it succeeded and drew each named figure; returns report.md."""
    r = subprocess.run([batchscope, "report", *csvs, "--out", out], capture_output=True, text=True)
    check(r.returncode == 0, f"report {os.path.basename(out)} exit {r.returncode}: {r.stderr}")
    for n in figures:
        for ext in exts:
            p = os.path.join(out, f"{n}.{ext}")
            check(os.path.exists(p) and os.path.getsize(p) > 2000, f"figure {p}")
    md = os.path.join(out, "report.md")
    return open(md).read() if os.path.exists(md) else ""


def main():
    batchscope, src = sys.argv[1], sys.argv[2]
    fx = os.path.join(src, "tests/fixtures/sweeps")
    csvs = [os.path.join(fx, f) for f in ("cpu-ece408.csv", "h200-ece408-cuda-resident-pageable.csv",
                                         "h200-ece408-cuda-per-layer-pinned.csv")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report")
        names = ["total_time", "throughput_roofline", "small_batch_floor", "variants_per_layer"] + \
                [f"{k}_{i}" for k in ("breakdown", "layers") for i in (1, 2, 3)]
        md = make_report(batchscope, csvs, out, names)
        links = re.findall(r"\]\(([^)]+)\)", md)
        check(len(links) == len(names), f"report.md links {len(links)} figures, expected {len(names)}")
        for link in links:
            check(os.path.exists(os.path.join(out, link)), f"report.md link {link} resolves")
        for needle in ("NVIDIA H200", "Breakdown per batch size", "htod ms"):
            check(needle in md, f"report.md mentions {needle}")
        if any("summary_warm_runs" in open(c.replace(".csv", ".json")).read() for c in csvs):
            check("nvprof-style summary" in md and "cudaMemcpyAsync" in md, "report.md holds the nvprof-style summary")
        page = open(os.path.join(out, "report.html")).read()
        check(page.count("data:image/png;base64,") == len(names), "report.html embeds every figure")
        check("src='" not in page.replace("src='data:", ""), "report.html has no external images")

        check(not os.path.exists(os.path.join(out, "precisions.png")), "one precision: no precision figure")
        # The H200 sweeps carry the device's clocks: the small-batch figure draws each against its floor at the H200's
        # DRAM bandwidth (3,201 MHz, double data rate, 6,016 bits: 4,814 GB/s); the CPU sweep has none and is left out.
        svg = open(os.path.join(out, "small_batch_floor.svg")).read()
        check("floor at 4814 GB/s" in svg, "the small-batch figure names the H200's bandwidth")
        check("cpu fp32" in open(os.path.join(out, "total_time.svg")).read() and "cpu fp32" not in svg,
              "the CPU sweep, in the other figures, is not in the small-batch one")
        check("Small batches against the memory floor" in md, "report.md has the small-batch figure")

        # Two precisions (H100 AlexNet sweeps, fp32 and fp16): the precision figure joins the report, and its
        # accuracy panel is drawn from the sweeps' check_rel_l2 (fp16's 7.8e-4 at batch 1024 is in the CSV).
        pcsvs = [os.path.join(fx, f) for f in ("h100-alexnet-cuda-fp32.csv", "h100-alexnet-cuda-fp16.csv")]
        pout = os.path.join(tmp, "precision-report")
        pmd = make_report(batchscope, pcsvs, pout, ["precisions"])
        check("Precisions compared" in pmd and "(precisions.png)" in pmd, "report.md links the precision figure")
        svg = open(os.path.join(pout, "precisions.svg")).read()
        check("fp16 tolerance" in svg and "fp32 tolerance" in svg, "the precision figure draws both tolerances")

        # Every heading and legend names backend and precision (the two sweeps differ in precision alone).
        check("### Per-layer time: cuda auto fp32, resident, pinned" in pmd and "## cuda auto fp16, resident, pinned" in pmd,
              "report.md headings name the precision")
        svg = open(os.path.join(pout, "total_time.svg")).read()
        check("cuda auto fp16, resident, pinned (warm, median)" in svg, "the total-time legend names the precision")

        # With the device's clocks beside them (an H100's, as gpu_info writes them), the roofline draws a ceiling for each
        # precision: FP32's FFMA peak, 2 x 128 x 132 x 1.98 GHz = 66.9 TFLOP/s, and FP16's on the tensor cores, 16x that.
        dev = {"device": {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "sm_clock_mhz": 1980, "compute_capability": "9.0",
                          "memory_clock_mhz": 2619, "memory_bus_bits": 5120}}
        clocked = []
        for c in pcsvs:
            dst = os.path.join(tmp, "clocked-" + os.path.basename(c))
            shutil.copy(c, dst)
            shutil.copy(c.replace(".csv", ".layers.csv"), dst.replace(".csv", ".layers.csv"))
            with open(dst.replace(".csv", ".json"), "w") as f:
                json.dump(dev, f)
            clocked.append(dst)
        cout = os.path.join(tmp, "clocked-report")
        make_report(batchscope, clocked, cout, ["throughput_roofline"])
        svg = open(os.path.join(cout, "throughput_roofline.svg")).read()
        check("roofline fp32: 66.9 TFLOP/s FP32 (FFMA), 3352 GB/s" in svg and "roofline fp16: 1070.5 TFLOP/s FP16 (dense tensor cores)" in svg,
              "the roofline draws the FP32 and FP16 ceilings")

        # Two sweeps apart in one identity column alone are told apart in the labels: the fp16 fixture against a copy of
        # it with `old` replaced by `new`, both in one report; its headings.
        with open(pcsvs[1]) as f:
            text = f.read()
        check(",cuda,auto,auto,fp16," in text, "the fp16 fixture's identity columns")

        def variant_report(name, old, new):
            path = os.path.join(tmp, name + ".csv")
            with open(path, "w") as f:
                f.write(text.replace(old, new))
            shutil.copy(pcsvs[1].replace(".csv", ".layers.csv"), path.replace(".csv", ".layers.csv"))
            return make_report(batchscope, [pcsvs[1], path], os.path.join(tmp, name + "-report"), ["total_time"])

        fmd = variant_report("forced", ",cuda,auto,auto,fp16,", ",cuda,auto,13,fp16,")  # --fc-variant 13
        check("## cuda auto fc v13 fp16, resident, pinned" in fmd and "## cuda auto fp16, resident, pinned" in fmd,
              "report.md headings name a forced fc version")
        wmd = variant_report("w8", 'seed 1",cuda,', 'seed 1 | int8 per output channel",cuda,')  # --weights int8
        check("## cuda auto fp16 int8 weights, resident, pinned" in wmd and "## cuda auto fp16, resident, pinned" in wmd,
              "report.md headings name int8 weights")

        # A network of many layers (the fp32 sweep with each layer three times, as conv1, conv1.b, conv1.c): the
        # per-layer figures draw the 10 heaviest by name and sum the rest; the one-layer-each fixture draws them all.
        many = os.path.join(tmp, "many.csv")
        shutil.copy(pcsvs[0], many)
        rows = open(pcsvs[0].replace(".csv", ".layers.csv")).read().splitlines()
        with open(many.replace(".csv", ".layers.csv"), "w") as f:
            f.write(rows[0] + "\n")
            layer_col = rows[0].split(",").index("layer")
            for suffix in ("", ".b", ".c"):
                for line in rows[1:]:  # the weights note holds commas inside quotes: split from the right
                    cells = line.split(",")
                    at = layer_col - len(rows[0].split(","))
                    cells[at] += suffix
                    f.write(",".join(cells) + "\n")
        mout = os.path.join(tmp, "many-report")
        mmd = make_report(batchscope, [many], mout, ["layers_1", "variants_per_layer"])
        svg = open(os.path.join(mout, "layers_1.svg")).read()
        check("10 heaviest layers of" in svg and "layers, summed" in svg, "many layers: the heaviest named, the rest summed")
        check(svg.count("(convolution)") + svg.count("(fully_connected)") <= 10, "many layers: at most 10 named in the legend")
        check("heaviest" not in open(os.path.join(pout, "layers_1.svg")).read(), "AlexNet: every timed layer drawn")
        check("other" in open(os.path.join(mout, "variants_per_layer.svg")).read(), "many layers: the variants figure groups the rest")

        # Throughput runs (this machine's CPU, one process and two MPI ranks): the latency-against-throughput
        # curve and the scaling figure join; a sweep-only report has neither.
        check(not os.path.exists(os.path.join(out, "scaling.png")), "no MPI run: no scaling figure")
        tcsvs = [os.path.join(fx, f) for f in ("cpu-ece408-throughput.csv", "cpu-ece408-throughput-2ranks.csv")]
        tout = os.path.join(tmp, "throughput-report")
        tmd = make_report(batchscope, tcsvs, tout, ["latency_throughput", "scaling"], exts=("png",))
        check("## Throughput: cpu fp32, 1 stream, 2 ranks" in tmd and "p99 ms" in tmd, "report.md holds the throughput tables")
        svg = open(os.path.join(tout, "scaling.svg")).read()
        check("efficiency" in svg and "batch 256" in svg, "the scaling figure labels batch and efficiency")

        # Bad inputs: a missing column, a bad value, a missing file; each one clear line, nothing written.
        bad = os.path.join(tmp, "bad.csv")
        lines = open(csvs[0]).read().splitlines()
        head = lines[0].split(",")
        drop = head.index("conv_ms")
        open(bad, "w").write("\n".join(",".join(c for j, c in enumerate(l.split(",")) if j != drop) for l in lines) + "\n")
        r = subprocess.run([batchscope, "report", bad, "--out", os.path.join(tmp, "r2")], capture_output=True, text=True)
        check(r.returncode != 0 and "missing column 'conv_ms'" in r.stderr and r.stderr.count("\n") == 1, f"missing column: {r.stderr}")
        check(not os.path.exists(os.path.join(tmp, "r2", "report.md")), "no report after a bad CSV")
        col = head.index("total_ms_median")
        row = lines[2].split(",")
        row[col] = "fast"
        open(bad, "w").write("\n".join([lines[0], lines[1], ",".join(row)] + lines[3:]) + "\n")
        shutil.copy(csvs[0].replace(".csv", ".json"), bad.replace(".csv", ".json"))
        r = subprocess.run([batchscope, "report", bad, "--out", os.path.join(tmp, "r3")], capture_output=True, text=True)
        check(r.returncode != 0 and "line 3, column 'total_ms_median': 'fast' is not a number" in r.stderr, f"bad value: {r.stderr}")
        r = subprocess.run([batchscope, "report", os.path.join(tmp, "none.csv"), "--out", os.path.join(tmp, "r4")],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "none.csv: no such file" in r.stderr, f"missing file: {r.stderr}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
