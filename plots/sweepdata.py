"""Loading and validating batchscope sweep results: FILE.csv (one row per batch size and cold/warm run),
FILE.layers.csv (one row per layer) and FILE.json (metadata). Every problem is a SweepDataError whose
message names the file, the row and the column."""
import csv
import json
import math
import os

CATEGORIES = ["htod", "dtoh", "dtod", "memset", "conv", "pool", "fc", "act", "lrn", "softmax", "flatten",
              "other_kernel", "alloc", "free", "memcpy_api", "sync", "launch", "other_api", "host"]
REQUIRED = ["model", "weights", "backend", "variant", "transfers", "host_memory", "batch", "run", "reps",
            "total_ms_median", "total_ms_min", "total_ms_max", "images_per_s", "gflop_per_s", "check"] + \
           [c + "_ms" for c in CATEGORIES]
NUMERIC = ["batch", "reps", "total_ms_median", "total_ms_min", "total_ms_max", "images_per_s", "gflop_per_s"]
OPTIONAL_NUMERIC = ["total_ms_p50", "total_ms_p90", "total_ms_p99",  # since the percentiles; absent in older sweeps
                    "ranks", "images_per_s_one_rank", "scaling_efficiency",  # under mpirun only
                    "breakdown_reps", "breakdown_ms_median"]  # the profiled passes the breakdown partitions; absent in older sweeps
LAYER_REQUIRED = ["batch", "run", "layer", "type", "implementation", "median_ms", "min_ms", "max_ms", "gflop_per_s", "gb_per_s"]


class SweepDataError(Exception):
    pass


def _number(path, line, col, text, allow_empty=False):
    if text == "" and allow_empty:
        return None
    try:
        v = float(text)
    except ValueError:
        raise SweepDataError(f"{path}: line {line}, column '{col}': '{text}' is not a number")
    if math.isnan(v) or v < 0:
        raise SweepDataError(f"{path}: line {line}, column '{col}': {text} is not a non-negative number")
    return v


def _read_csv(path, required):
    if not os.path.exists(path):
        raise SweepDataError(f"{path}: no such file")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise SweepDataError(f"{path}: empty file")
        missing = [c for c in required if c not in reader.fieldnames]
        if missing:
            raise SweepDataError(f"{path}: missing column '{missing[0]}'" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        rows = list(reader)
    if not rows:
        raise SweepDataError(f"{path}: no data rows")
    return rows


def _metadata(path):
    """The JSON written beside a result CSV (its run's metadata), {} when there is none."""
    jp = (path[:-4] if path.endswith(".csv") else path) + ".json"
    if not os.path.exists(jp):
        return {}
    try:
        return json.load(open(jp))
    except json.JSONDecodeError as e:
        raise SweepDataError(f"{jp}: invalid JSON ({e})")


def _rows(path, required, numeric, optional=()):
    """(line, row) for each row of the CSV, its `numeric` columns parsed (a bad value is refused naming its line and
    column) and its `optional` ones too where present (None where empty or absent)."""
    rows = []
    for i, r in enumerate(_read_csv(path, required), start=2):
        row = dict(r)
        for c in numeric:
            row[c] = _number(path, i, c, r[c])
        for c in optional:
            row[c] = _number(path, i, c, r.get(c) or "", allow_empty=True)
        rows.append((i, row))
    return rows


class Sweep:
    """One sweep: its rows (numbers parsed), its layers and its metadata."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        for i, row in _rows(path, REQUIRED, NUMERIC, OPTIONAL_NUMERIC):
            for c in CATEGORIES:
                row[c] = _number(path, i, c + "_ms", row[c + "_ms"], allow_empty=True)
            if row["run"] not in ("cold", "warm"):
                raise SweepDataError(f"{path}: line {i}, column 'run': '{row['run']}' is neither cold nor warm")
            row["batch"] = int(row["batch"])
            self.rows.append(row)
        # Under mpirun: per-rank rows and an aggregate ("all") row per point. The figures read the aggregate,
        # whose breakdown (not measured for the job as a whole) is rank 0's.
        self.rank_rows = [r for r in self.rows if r.get("rank") not in (None, "", "all")]
        if self.rank_rows:
            rank0 = {(r["batch"], r["run"]): r for r in self.rank_rows if r["rank"] == "0"}
            self.rows = [r for r in self.rows if r.get("rank") == "all"]
            for r in self.rows:
                for c in CATEGORIES:
                    r[c] = rank0.get((r["batch"], r["run"]), {}).get(c)
        first = self.rows[0]
        self.model, self.backend, self.variant = first["model"], first["backend"], first["variant"]
        self.fc_variant = first.get("fc_variant", "") or ""  # cuda: the fully connected version when not auto
        self.transfers, self.host_memory, self.weights = first["transfers"], first["host_memory"], first["weights"]
        self.precision = first.get("precision", "fp32")
        base = path[:-4] if path.endswith(".csv") else path
        self.layers = []
        lp = base + ".layers.csv"
        if os.path.exists(lp):
            for _, row in _rows(lp, LAYER_REQUIRED, ("batch", "median_ms", "min_ms", "max_ms", "gflop_per_s", "gb_per_s")):
                row["batch"] = int(row["batch"])
                self.layers.append(row)
        self.meta = _metadata(path)
        self.show_model = False  # load_all sets it where the sweeps are of several networks

    def warm(self):
        return sorted((r for r in self.rows if r["run"] == "warm"), key=lambda r: r["batch"])

    def cold(self):
        return sorted((r for r in self.rows if r["run"] == "cold"), key=lambda r: r["batch"])

    @property
    def synthetic(self):
        return self.weights.startswith("synthetic")

    @property
    def device(self):
        d = self.meta.get("device", {})
        if d.get("name"):
            return d["name"]
        return "CPU: " + self.meta.get("host", {}).get("cpu", "unknown")

    @property
    def commit(self):
        return self.meta.get("git_commit", "unknown")[:10]

    def label(self):
        v = self.variant
        if self.backend == "cuda" and v.isdigit():
            v = "v" + v
        if self.backend == "cudnn" and v.startswith("cudnn-"):
            v = v[len("cudnn-"):]
        v = f" {v}" if v else ""
        if self.backend == "cuda" and self.fc_variant not in ("", "auto", self.variant):
            v += " fc " + ("v" + self.fc_variant if self.fc_variant.isdigit() else self.fc_variant)
        t = "" if self.transfers in ("host", "") else f", {self.transfers}"
        h = "" if self.host_memory == "pageable" or self.transfers == "host" else f", {self.host_memory}"
        m = f"{self.model}: " if self.show_model else ""
        w = " int8 weights" if "int8" in self.weights else ""  # --weights int8: the weights column says so
        return f"{m}{self.backend}{v} {self.precision}{w}{t}{h}"

    def peaks(self, precision="fp32"):
        """(GFLOP/s in `precision`, GB/s) of the device, from the metadata; None where unknown. The multiply-adds per
        clock per multiprocessor are FMA_PER_CLOCK's (dense tensor cores for tf32, fp16, bf16), as the layer CSV's
        peak_pct; FP32's 128 is taken for any architecture."""
        d = self.meta.get("device", {})
        if not d.get("name"):
            return None, None
        per = FMA_PER_CLOCK.get(d.get("compute_capability", ""), {}).get(precision, 128 if precision == "fp32" else None)
        gflops = d["sm_count"] * per * 2 * d["sm_clock_mhz"] * 1e-3 if per and d.get("sm_clock_mhz", -1) > 0 else None
        gbps = d["memory_clock_mhz"] * 2 * d["memory_bus_bits"] / 8 * 1e-3 if d.get("memory_clock_mhz", -1) > 0 and d.get("memory_bus_bits", -1) > 0 else None
        return gflops, gbps


# Multiply-adds per clock per multiprocessor by compute capability and precision (app/commands/sweep.cpp's table).
FMA_PER_CLOCK = {"9.0": {"fp32": 128, "tf32": 1024, "fp16": 2048, "bf16": 2048},
                 "8.0": {"fp32": 64, "tf32": 512, "fp16": 1024, "bf16": 1024}}

THROUGHPUT_REQUIRED = ["model", "backend", "ranks", "rank", "batch", "streams", "images", "wall_s", "images_per_s",
                       "latency_ms_p50", "latency_ms_p90", "latency_ms_p99", "latency_ms_max"]


class Throughput:
    """One `batchscope throughput` result: its aggregate rows (rank 'all'), one per batch size."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        for _, row in _rows(path, THROUGHPUT_REQUIRED, [c for c in THROUGHPUT_REQUIRED[2:] if c != "rank"],
                            ("images_per_s_one_rank", "scaling_efficiency")):
            if row["rank"] == "all":
                self.rows.append(row)
        if not self.rows:
            raise SweepDataError(f"{path}: no aggregate (rank 'all') rows")
        self.rows.sort(key=lambda r: r["batch"])
        first = self.rows[0]
        self.model, self.backend, self.precision = first["model"], first["backend"], first.get("precision", "fp32")
        self.ranks = int(first["ranks"])
        self.meta = _metadata(path)

    def label(self):
        v = f" {first}" if (first := self.rows[0].get("variant", "")) else ""
        streams = int(self.rows[0]["streams"])
        return (f"{self.backend}{v} {self.precision}, {streams} stream{'s' if streams > 1 else ''}"
                + (f", {self.ranks} ranks" if self.ranks > 1 else ""))


def is_throughput_csv(path):
    """Whether the CSV was written by `batchscope throughput` (it has latency columns and streams)."""
    try:
        with open(path, newline="") as f:
            head = next(csv.reader(f), [])
    except OSError:
        return False
    return "latency_ms_p99" in head and "streams" in head


def load_all(paths):
    sweeps = [Sweep(p) for p in paths]
    several = len({s.model for s in sweeps}) > 1
    for s in sweeps:
        s.show_model = several  # every label then names its network too
    return sweeps
