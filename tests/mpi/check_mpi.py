#!/usr/bin/env python3
"""Data-parallel runs under mpirun on the cpu backend (two ranks, oversubscribed): infer's Correctness over
a test set split across the ranks equals the single-process figure (0.8397 on ECE 408); the sweep's and
throughput's aggregate rows are the sums of their rank rows; the global batch is split as documented; a
failing rank stops every rank with one line naming it, a non-zero exit and no output files; bad launches are
refused with one line. Usage: check_mpi.py BATCHSCOPE MPIRUN SRC_DIR"""
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, finish  # noqa: E402


def run(cmd, env_extra=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               **(env_extra or {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def our_errors(stderr):
    return [l for l in stderr.splitlines() if l.startswith("batchscope:")]


def main():
    bs, mpirun, src = sys.argv[1:4]
    model = os.path.join(src, "data/models/ece408")
    mpi = [mpirun, "-np", "2", "--oversubscribe"]
    with tempfile.TemporaryDirectory() as tmp:
        # infer: the 10,000 images split 5000 + 5000; Correctness as one process computes it.
        one = run([bs, "infer", "--model", model, "--batch", "1000"])
        two = run(mpi + [bs, "infer", "--model", model, "--batch", "1000"])
        corr = lambda out: [l for l in out.splitlines() if l.startswith("Correctness:")]
        check(one.returncode == 0 and corr(one.stdout) == ["Correctness: 0.8397 Model: ece408"], f"one process: {one.stdout} {one.stderr}")
        check(two.returncode == 0 and corr(two.stdout) == corr(one.stdout), f"two ranks: {two.stdout} {two.stderr}")
        check("5000+5000 images" in two.stderr and two.stdout.count("Correctness:") == 1, "infer: the split said once")

        # sweep, per-rank batch: every rank runs batch 3; the aggregate sums their checked images.
        out = os.path.join(tmp, "s.csv")
        r = run(mpi + [bs, "sweep", "--model", model, "--batches", "3,8", "--reps", "3", "--warmup", "0",
                       "--per-rank-batch", "--out", out])
        check(r.returncode == 0, f"sweep per-rank: {r.stderr}")
        if r.returncode == 0:
            rs = rows(out)
            check(len(rs) == 2 * 2 * 3, f"sweep rows: {len(rs)} (2 batches x cold/warm x (2 ranks + all))")
            for b in ("3", "8"):
                for run_kind in ("cold", "warm"):
                    pts = [x for x in rs if x["batch"] == b and x["run"] == run_kind]
                    ranks = [x for x in pts if x["rank"] in ("0", "1")]
                    agg = [x for x in pts if x["rank"] == "all"]
                    check(len(ranks) == 2 and len(agg) == 1, f"batch {b} {run_kind}: two rank rows and one aggregate")
                    if len(ranks) == 2 and len(agg) == 1:
                        a = agg[0]
                        check(all(x["rank_batch"] == b for x in ranks), "per-rank batch: each rank runs the whole batch")
                        check(int(a["check_images"]) == sum(int(x["check_images"]) for x in ranks), "aggregate checks = sum")
                        check(a["reps"] == ranks[0]["reps"] == ranks[1]["reps"], "every rank ran the same repetitions")
                        # the slowest rank's step bounds each rank's own pass
                        check(float(a["total_ms_median"]) >= 0.999 * max(float(x["total_ms_min"]) for x in ranks), "step >= rank pass")
                        check(abs(float(a["images_per_s"]) - 2 * int(b) / float(a["total_ms_median"]) * 1e3) <= 1e-3 * float(a["images_per_s"]),
                              "aggregate images/s = both ranks' images over the step time")
                        if run_kind == "warm":
                            eff = float(a["scaling_efficiency"])
                            check(0 < eff and abs(eff - float(a["images_per_s"]) / (2 * float(a["images_per_s_one_rank"]))) < 1e-3,
                                  "efficiency = aggregate / (2 x one rank)")
            lr = rows(os.path.join(tmp, "s.layers.csv"))
            check({x["rank"] for x in lr} == {"0", "1"}, "layers CSV: rows of both ranks")

        # sweep, global batch: 5 = 3 + 2.
        r = run(mpi + [bs, "sweep", "--model", model, "--batches", "5", "--reps", "2", "--warmup", "0", "--global-batch",
                       "--no-baseline", "--out", out])
        check(r.returncode == 0 and "batch 5 over 2 ranks: 3+2" in r.stderr, f"sweep global: {r.stderr[-400:]}")
        if r.returncode == 0:
            rs = [x for x in rows(out) if x["run"] == "warm"]
            check(sorted(x["rank_batch"] for x in rs if x["rank"] != "all") == ["2", "3"], "global batch 5 -> 3 + 2")
            check(all(x["scaling_efficiency"] == "" for x in rs), "--no-baseline: no efficiency")

        # throughput, global: 1000 images, batch 100 -> 500 + 500 images at 50 each; Correctness as one process.
        tout = os.path.join(tmp, "t.csv")
        r1 = run([bs, "throughput", "--model", model, "--images", "1000", "--batch", "100", "--out", tout])
        check(r1.returncode == 0, f"throughput one process: {r1.stderr}")
        single = rows(tout) if r1.returncode == 0 else []
        r = run(mpi + [bs, "throughput", "--model", model, "--images", "1000", "--batch", "100", "--global-batch", "--out", tout])
        check(r.returncode == 0, f"throughput global: {r.stderr}")
        if r.returncode == 0 and single:
            rs = rows(tout)
            ranks = [x for x in rs if x["rank"] in ("0", "1")]
            a = [x for x in rs if x["rank"] == "all"][0]
            check(int(a["images"]) == 1000 == sum(int(x["images"]) for x in ranks), "throughput images: 500 + 500 = 1000")
            check(int(a["batches"]) == sum(int(x["batches"]) for x in ranks) == 20, "throughput batches: 10 + 10")
            check(all(x["rank_batch"] == "50" for x in ranks), "global batch 100 -> 50 per rank")
            check(a["correctness"] == single[0]["correctness"] != "", f"throughput Correctness {a['correctness']} = one process {single[0]['correctness']}")
            check(float(a["wall_s"]) >= max(float(x["wall_s"]) for x in ranks) * 0.999, "aggregate wall = slowest rank")

        # A failing rank: one line naming it, non-zero exit, nothing written.
        fout = os.path.join(tmp, "f.csv")
        for phase in ("load", "cold", "warm"):
            r = run(mpi + [bs, "sweep", "--model", model, "--batches", "2", "--reps", "2", "--per-rank-batch", "--out", fout],
                    {"BATCHSCOPE_FAULT": "1:" + phase})
            errs = our_errors(r.stderr)
            check(r.returncode != 0 and len(errs) == 1 and errs[0].startswith("batchscope: error: rank 1 (") and
                  f"injected failure at '{phase}'" in errs[0], f"failure at {phase}: rc {r.returncode}, {errs}")
        r = run(mpi + [bs, "throughput", "--model", model, "--images", "64", "--batch", "8", "--per-rank-batch", "--out", fout],
                {"BATCHSCOPE_FAULT": "0:stream"})
        errs = our_errors(r.stderr)
        check(r.returncode != 0 and len(errs) == 1 and "rank 0 (" in errs[0], f"throughput failure: {errs}")
        check(not any(f.startswith("f.") for f in os.listdir(tmp)), f"nothing written after failures: {os.listdir(tmp)}")

        # Bad launches.
        for cmd, needle in ((mpi + [bs, "sweep", "--model", model, "--out", fout], "--global-batch (split across the ranks) or --per-rank-batch"),
                            (mpi + [bs, "tune", "--model", model], "tune runs as one process"),
                            (mpi + [bs, "sweep", "--model", model, "--batches", "1", "--global-batch", "--out", fout], "batch 1 is smaller than the 2 ranks"),
                            ([bs, "sweep", "--model", model, "--global-batch", "--out", fout], "--global-batch: applies under mpirun"),
                            # with CUDA built but no GPU, or without CUDA: refused either way, in one line
                            (mpi + [bs, "infer", "--model", model, "--backend", "cuda"], os.environ.get("CHECK_MPI_CUDA_NEEDLE", "2 ranks on host "))):
            r = run(cmd)
            errs = our_errors(r.stderr)
            check(r.returncode != 0 and len(errs) == 1 and needle in errs[0], f"{' '.join(cmd[-4:])}: rc {r.returncode}, {errs}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
