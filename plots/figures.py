"""The figures batchscope draws from sweep results (matplotlib, Agg backend). Each function writes
NAME.png and NAME.svg into the output folder and returns the PNG path."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

# Breakdown groups, bottom to top, with the categories each sums and a fixed colour.
GROUPS = [
    ("HtoD copies", ["htod"], "#1f77b4"),
    ("conv kernels", ["conv"], "#d62728"),
    ("pool kernels", ["pool"], "#ff9896"),
    ("fc kernels", ["fc"], "#9467bd"),
    ("activation kernels", ["act"], "#c5b0d5"),
    ("LRN kernels", ["lrn"], "#8c564b"),
    ("softmax kernels", ["softmax"], "#c49c94"),
    ("other GPU work", ["other_kernel", "flatten", "dtod", "memset"], "#e377c2"),
    ("DtoH copies", ["dtoh"], "#aec7e8"),
    ("cudaMalloc / host alloc", ["alloc"], "#2ca02c"),
    ("cudaFree / cudaFreeHost", ["free"], "#98df8a"),
    ("cudaMemcpy (host side)", ["memcpy_api"], "#ff7f0e"),
    ("synchronisation", ["sync"], "#ffbb78"),
    ("launches, other API, host", ["launch", "other_api", "host"], "#7f7f7f"),
]


def _save(fig, out, name):
    # The tight box (what bbox_inches="tight" finds, with its 0.1-inch pad) laid out once for both files: "tight"
    # draws the figure once more per file to find it, and the two saves were most of a report's time.
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
    png = os.path.join(out, name + ".png")
    fig.savefig(png, dpi=120, bbox_inches=box)
    fig.savefig(os.path.join(out, name + ".svg"), bbox_inches=box)
    plt.close(fig)
    return png


def context(sweeps):
    """'device, model, precision, weights, commit' for titles; says 'several' where sweeps differ."""
    def one(values):
        values = sorted(set(values))
        return values[0] if len(values) == 1 else "several (" + ", ".join(values) + ")"
    weights = one(["SYNTHETIC weights" if s.synthetic else "real weights" for s in sweeps])
    return (f"{one([s.device for s in sweeps])} | {one([s.model for s in sweeps])} | "
            f"{one([s.precision.upper() for s in sweeps])} | {weights} | commit {one([s.commit for s in sweeps])}")


def _log_batches(ax, batches):
    ax.set_xscale("log", base=2)
    ax.set_xticks(batches)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v)}"))
    ax.minorticks_off()


def total_time(sweeps, out):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    batches = sorted({r["batch"] for s in sweeps for r in s.rows})
    for i, s in enumerate(sweeps):
        color = plt.cm.tab10(i % 10)
        w = s.warm()
        x = [r["batch"] for r in w]
        ax.plot(x, [r["total_ms_median"] for r in w], "o-", color=color, label=f"{s.label()} (warm, median)")
        ax.fill_between(x, [r["total_ms_min"] for r in w], [r["total_ms_max"] for r in w], color=color, alpha=0.15)
        c = s.cold()
        ax.plot([r["batch"] for r in c], [r["total_ms_median"] for r in c], "x--", color=color, alpha=0.7, label=f"{s.label()} (cold)")
    ax.set_yscale("log")
    _log_batches(ax, batches)
    ax.set_xlabel("batch size (images)")
    ax.set_ylabel("forward pass, end to end (ms)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Execution time against batch size\n" + context(sweeps), fontsize=10)
    if len(sweeps) <= 2:
        ax.legend(fontsize=8, loc="upper left")
    else:  # many lines: keep the legend off the data
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _save(fig, out, "total_time")


def breakdown(sweep, out, name):
    warm = sweep.warm()
    if not warm or warm[0]["htod"] is None:
        return None  # a sweep run without the profiler has no breakdown
    batches = [r["batch"] for r in warm]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 9), sharex=True)
    x = range(len(batches))
    bottom_ms = [0.0] * len(warm)
    bottom_pct = [0.0] * len(warm)
    for label, cats, color in GROUPS:
        ms = [sum((r[c] or 0.0) for c in cats) for r in warm]
        if max(ms) <= 0:
            continue
        total = [sum((r[c] or 0.0) for c in sum((g[1] for g in GROUPS), [])) or 1.0 for r in warm]
        pct = [100.0 * m / t for m, t in zip(ms, total)]
        ax1.bar(x, ms, bottom=bottom_ms, color=color, label=label, width=0.75)
        ax2.bar(x, pct, bottom=bottom_pct, color=color, width=0.75)
        bottom_ms = [b + m for b, m in zip(bottom_ms, ms)]
        bottom_pct = [b + p for b, p in zip(bottom_pct, pct)]
    separate = any(r.get("breakdown_ms_median") is not None and r["breakdown_ms_median"] != r["total_ms_median"] for r in warm)
    if separate:  # --profiled-passes separate: the bars partition the profiled passes, the latency is the untraced ones'
        ax1.plot(x, [r["breakdown_ms_median"] for r in warm], "k_", markersize=14, label="profiled passes' total (median)")
        ax1.plot(x, [r["total_ms_median"] for r in warm], "_", color="tab:red", markersize=14, label="timed passes, untraced (median)")
    else:
        ax1.plot(x, [r["total_ms_median"] for r in warm], "k_", markersize=14, label="measured total (median)")
    ax1.set_ylabel("time (ms), median of warm runs")
    ax1.set_title(f"Where the time goes: {sweep.label()}\n" + context([sweep]), fontsize=10)
    ax1.grid(True, axis="y", alpha=0.3)
    ax1.legend(fontsize=8, loc="upper left", ncol=2)
    ax2.set_ylabel("share of the run (%)")
    ax2.set_ylim(0, 100)
    ax2.set_xticks(list(x))
    ax2.set_xticklabels([str(b) for b in batches])
    ax2.set_xlabel("batch size (images)")
    ax2.grid(True, axis="y", alpha=0.3)
    return _save(fig, out, name)


# Networks of more layers than this have their heaviest HEAVIEST layers drawn one by one and the rest summed as one.
MANY_LAYERS, HEAVIEST = 12, 10


def heaviest(rows, layers, batch=None):
    """(the layers to draw one by one, the rest): all of them for small networks, else the HEAVIEST with the most
    time at `batch` (default: each sweep's largest), in the network's order."""
    timed = [l for l in layers if any(r["layer"] == l and r["median_ms"] > 0 for r in rows)]
    if len(timed) <= MANY_LAYERS:
        return timed, []
    big = batch if batch is not None else max(r["batch"] for r in rows)
    cost = {l: 0.0 for l in timed}
    for r in rows:
        if r["batch"] == big and r["layer"] in cost:
            cost[r["layer"]] += r["median_ms"]
    top = set(sorted(timed, key=lambda l: -cost[l])[:HEAVIEST])
    return [l for l in timed if l in top], [l for l in timed if l not in top]


def layer_times(sweep, out, name):
    rows = [r for r in sweep.layers if r["run"] == "warm"]
    if not rows:
        return None
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    batches = sorted({r["batch"] for r in rows})
    shown, rest = heaviest(rows, layers)
    fig, ax = plt.subplots(figsize=(9, 5.5))
    cmap = plt.cm.tab20 if len(shown) > 10 else plt.cm.tab10
    for i, layer in enumerate(shown):
        pts = sorted((r["batch"], r["median_ms"]) for r in rows if r["layer"] == layer and r["median_ms"] > 0)
        kind = next(r["type"] for r in rows if r["layer"] == layer)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=cmap(i % cmap.N), markersize=3, label=f"{layer} ({kind})")
    if rest:
        per_batch = {b: sum(r["median_ms"] for r in rows if r["batch"] == b and r["layer"] in rest) for b in batches}
        ax.plot(batches, [per_batch[b] for b in batches], "s--", color="0.45", markersize=3,
                label=f"the other {len(rest)} layers, summed")
    ax.set_yscale("log")
    _log_batches(ax, batches)
    ax.set_xlabel("batch size (images)")
    ax.set_ylabel("layer time (ms), median of warm runs")
    ax.grid(True, which="both", alpha=0.3)
    heading = f"Per-layer time: {sweep.label()}" + (f" ({len(shown)} heaviest layers of {len(shown) + len(rest)})" if rest else "")
    ax.set_title(heading + "\n" + context([sweep]), fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _save(fig, out, name)


def throughput_roofline(sweeps, out):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 5.5))
    batches = sorted({r["batch"] for s in sweeps for r in s.rows})
    for i, s in enumerate(sweeps):
        w = s.warm()
        ax1.plot([r["batch"] for r in w], [r["images_per_s"] for r in w], "o-", color=plt.cm.tab10(i % 10), label=s.label())
    ax1.set_yscale("log")
    _log_batches(ax1, batches)
    ax1.set_xlabel("batch size (images)")
    ax1.set_ylabel("throughput (images/s), warm median")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8, loc="upper left")
    ax1.set_title("Throughput", fontsize=10)
    # Roofline: every layer at the largest batch of each sweep, under the ceiling of every precision the sweeps ran.
    ceilings, peak_b = {}, None
    for i, s in enumerate(sweeps):
        pf, pb = s.peaks(s.precision)
        peak_b = peak_b or pb
        if pf:
            ceilings.setdefault(s.precision, pf)
        rows = [r for r in s.layers if r["run"] == "warm" and r["gb_per_s"] > 0 and r["gflop_per_s"] > 0]
        if not rows:
            continue
        big = max(r["batch"] for r in rows)
        pts = [r for r in rows if r["batch"] == big]
        ax2.scatter([r["gflop_per_s"] / r["gb_per_s"] for r in pts], [r["gflop_per_s"] for r in pts], color=plt.cm.tab10(i % 10),
                    label=f"{s.label()}, batch {big}", s=25)
        named, _ = heaviest(pts, list(dict.fromkeys(r["layer"] for r in pts)), big)  # many layers: name the heaviest
        for r in (r for r in pts if r["layer"] in named):
            ax2.annotate(r["layer"], (r["gflop_per_s"] / r["gb_per_s"], r["gflop_per_s"]), fontsize=6, alpha=0.7,
                         xytext=(3, 3), textcoords="offset points")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    xmin, xmax = ax2.get_xlim() if ax2.collections else (0.1, 100)
    if ceilings and peak_b:
        import numpy as np
        xs = np.logspace(np.log10(max(xmin, 1e-2)), np.log10(max(xmax, 1e4)), 200)
        styles = {"fp32": "--", "tf32": "-.", "fp16": ":", "bf16": (0, (1, 3))}
        for prec, peak_f in sorted(ceilings.items(), key=lambda kv: kv[1]):
            what = "FP32 (FFMA)" if prec == "fp32" else f"{prec.upper()} (dense tensor cores)"
            ax2.plot(xs, np.minimum(peak_f, peak_b * xs), color="k", linestyle=styles.get(prec, "--"), linewidth=1,
                     label=f"roofline {prec}: {peak_f / 1e3:.1f} TFLOP/s {what}, {peak_b:.0f} GB/s (from device clocks)")
    ax2.set_xlabel("arithmetic intensity (FLOP per byte of activations and weights)")
    ax2.set_ylabel("achieved GFLOP/s")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=7, loc="lower right")
    ax2.set_title("Layers on the roofline (largest batch)", fontsize=10)
    fig.suptitle(context(sweeps), fontsize=10)
    return _save(fig, out, "throughput_roofline")


SMALL_BATCH = 16  # the batches small_batch_floor draws: where reading the weights once bounds the time


def small_batch_floor(sweeps, out):
    """GPU sweeps at batches up to SMALL_BATCH against the memory floor: each layer's bytes (input, output and weights,
    as the layer CSV counts them: gb_per_s x time) at the device's DRAM bandwidth. Left: per layer at the smallest batch,
    time over floor (1 = at the floor); right: the layers' time summed against their floors summed, per batch. None
    where no sweep has a GPU's clocks and layer times at such batches."""
    picked = []
    for s in sweeps:
        _, peak_b = s.peaks()
        rows = [r for r in s.layers if r["run"] == "warm" and r["batch"] <= SMALL_BATCH and r["median_ms"] > 0 and r["gb_per_s"] > 0]
        if peak_b and rows:
            picked.append((s, peak_b, rows))
    if not picked:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 5.5))
    width = 0.8 / len(picked)
    order = list(dict.fromkeys(r["layer"] for _, _, rows in picked for r in rows))  # the network's order, each once
    small = min(r["batch"] for _, _, rows in picked for r in rows)
    # The same layers named for every sweep: the heaviest at the smallest batch over all of them.
    shown, rest = heaviest([r for _, _, rows in picked for r in rows if r["batch"] == small], order, small)
    names = shown + (["the other %d layers" % len(rest)] if rest else [])
    for i, (s, peak_b, rows) in enumerate(picked):
        color = plt.cm.tab10(i % 10)
        floor = lambda r: r["gb_per_s"] * r["median_ms"] * 1e6 / (peak_b * 1e9) * 1e3  # ms at the DRAM's bandwidth
        at = {r["layer"]: r for r in rows if r["batch"] == small}
        ratios = [at[l]["median_ms"] / floor(at[l]) if l in at else 0 for l in shown]
        if rest:
            ratios.append(sum(at[l]["median_ms"] for l in rest if l in at) / max(sum(floor(at[l]) for l in rest if l in at), 1e-12))
        xs = [k + (i - (len(picked) - 1) / 2) * width for k in range(len(names))]
        ax1.bar(xs, ratios, width, color=color, label=s.label())
        if i == 0:
            ax1.set_xticks(range(len(names)))
            ax1.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
        batches = sorted({r["batch"] for r in rows})
        ax2.plot(batches, [sum(r["median_ms"] for r in rows if r["batch"] == b) for b in batches], "o-", color=color,
                 label=f"{s.label()}: layers' time")
        ax2.plot(batches, [sum(floor(r) for r in rows if r["batch"] == b) for b in batches], "--", color=color,
                 label=f"{s.label()}: floor at {peak_b:.0f} GB/s")
    ax1.axhline(1.0, color="k", linewidth=1, linestyle="--")
    ax1.set_yscale("log")
    ax1.set_ylabel("time / memory floor (1: at the DRAM's bandwidth)")
    ax1.set_title(f"Per layer at batch {small}: how far from reading its bytes once", fontsize=10)
    ax1.grid(True, axis="y", which="both", alpha=0.3)
    ax1.legend(fontsize=7, loc="upper right")
    _log_batches(ax2, sorted({r["batch"] for _, _, rows in picked for r in rows}))
    ax2.set_yscale("log")
    ax2.set_xlabel("batch size (images)")
    ax2.set_ylabel("ms, warm median, summed over the layers")
    ax2.set_title(f"Layers' time against their memory floor, batches up to {SMALL_BATCH}", fontsize=10)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=7, loc="upper left")
    fig.suptitle(context([s for s, _, _ in picked]), fontsize=10)
    return _save(fig, out, "small_batch_floor")


def variants_per_layer(sweeps, out, batch=None):
    with_layers = [s for s in sweeps if any(r["run"] == "warm" for r in s.layers)]
    if len(with_layers) < 1:
        return None, None
    common = set.intersection(*[{r["batch"] for r in s.layers} for s in with_layers])
    if not common:
        return None, None
    b = batch if batch in common else max(common)
    layers = list(dict.fromkeys(r["layer"] for s in with_layers for r in s.layers
                                if r["type"] in ("convolution", "fully_connected", "max_pool", "avg_pool", "lrn")))
    if not layers:
        return None, None
    warm_b = [r for s in with_layers for r in s.layers if r["run"] == "warm" and r["batch"] == b]
    layers, rest = heaviest(warm_b, layers, b)
    if not layers:
        return None, None
    ticks = layers + ([f"other {len(rest)} layers"] if rest else [])
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(ticks) * max(1, len(with_layers)) / 3), 5.5))
    width = 0.8 / len(with_layers)
    for i, s in enumerate(with_layers):
        t = {r["layer"]: r["median_ms"] for r in s.layers if r["run"] == "warm" and r["batch"] == b}
        heights = [t.get(l, 0) for l in layers] + ([sum(t.get(l, 0) for l in rest)] if rest else [])
        ax.bar([j + i * width for j in range(len(ticks))], heights, width=width, color=plt.cm.tab10(i % 10), label=s.label())
    ax.set_yscale("log")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(ticks))])
    ax.set_xticklabels(ticks, rotation=30, ha="right")
    ax.set_ylabel(f"layer time at batch {b} (ms, log scale)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"Variants compared per layer, batch {b}\n" + context(with_layers), fontsize=10)
    return _save(fig, out, "variants_per_layer"), b


# Tolerances on the relative L2 of the logits against the reference (kernels/plan/menus.cpp precision_tolerance).
TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "fp16": 1e-2, "bf16": 5e-2}
KERNEL_CATEGORIES = ["conv", "pool", "fc", "act", "lrn", "softmax", "flatten", "other_kernel"]


def precisions(sweeps, out):
    """Kernel time and accuracy lost against batch size, one line per sweep, when the sweeps hold more than one
    precision; None otherwise."""
    if len({s.precision for s in sweeps}) < 2:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 5.5))
    batches = sorted({r["batch"] for s in sweeps for r in s.rows})
    styles = {"fp32": "o-", "tf32": "s-", "fp16": "^-", "bf16": "v-"}
    for i, s in enumerate(sweeps):
        w = s.warm()
        color = plt.cm.tab10(i % 10)
        label = f"{s.label()} [{s.precision}]"
        ax1.plot([r["batch"] for r in w], [sum(r[c] or 0 for c in KERNEL_CATEGORIES) for r in w],
                 styles.get(s.precision, "o-"), color=color, label=label)
        pts = [(r["batch"], float(r["check_rel_l2"])) for r in w if r.get("check_rel_l2") not in (None, "")]
        if pts:
            ax2.plot([p[0] for p in pts], [max(p[1], 1e-9) for p in pts], styles.get(s.precision, "o-"), color=color,
                     label=label + " (top-1 agreement " + "/".join(sorted({str(r.get("check_top1", "")) for r in w})) + ")")
    for p in sorted({s.precision for s in sweeps}):
        if p in TOLERANCE:
            ax2.axhline(TOLERANCE[p], linestyle="--", linewidth=1, color="k", alpha=0.5)
            ax2.annotate(f"{p} tolerance {TOLERANCE[p]:g}", (batches[0], TOLERANCE[p]), fontsize=7, xytext=(2, 2),
                         textcoords="offset points")
    for ax in (ax1, ax2):
        ax.set_yscale("log")
        _log_batches(ax, batches)
        ax.set_xlabel("batch size (images)")
        ax.grid(True, which="both", alpha=0.3)
    ax1.set_ylabel("kernel time per forward pass (ms, warm median)")
    ax1.set_title("Time by precision (sum of the breakdown's kernel categories)", fontsize=10)
    ax1.legend(fontsize=7, loc="upper left")
    ax2.set_ylabel("relative L2 of the logits against the reference")
    ax2.set_title("Accuracy lost (the sweep's check; dashed: each precision's tolerance)", fontsize=10)
    ax2.legend(fontsize=7, loc="lower right")
    fig.suptitle(context(sweeps), fontsize=10)
    return _save(fig, out, "precisions")


def latency_throughput(tputs, out):
    """Latency (p50 and p99 of the batches) against images/s, one point per batch size: where the curve
    turns up is the knee, past which a larger batch buys little throughput for much latency."""
    if not tputs:
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, t in enumerate(tputs):
        color = plt.cm.tab10(i % 10)
        x = [r["images_per_s"] for r in t.rows]
        ax.plot(x, [r["latency_ms_p50"] for r in t.rows], "o-", color=color, label=f"{t.label()}: p50")
        ax.plot(x, [r["latency_ms_p99"] for r in t.rows], "^--", color=color, alpha=0.7, label=f"{t.label()}: p99")
        for r in t.rows:
            ax.annotate(f"b{int(r['batch'])}", (r["images_per_s"], r["latency_ms_p50"]), textcoords="offset points",
                        xytext=(4, -10), fontsize=8, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("throughput (images/s)")
    ax.set_ylabel("batch latency (ms): gather, copy in, compute, copy out")
    ax.set_title("Latency against throughput over batch sizes (offline scenario)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, out, "latency_throughput")


def scaling(items, out):
    """Aggregate images/s against the number of ranks (GPUs), from runs under mpirun that measured their
    one-rank baseline: each series is (1, one rank) and (N, all ranks), with the ideal N x one rank."""
    series = []
    for label, rows in items:
        for r in rows:
            one = r.get("images_per_s_one_rank")
            if one and int(r.get("ranks", 1) or 1) > 1:
                series.append((f"{label}, batch {int(r['batch'])}", int(r["ranks"]), one, r["images_per_s"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    top = max(n for _, n, _, _ in series)
    for i, (label, n, one, agg) in enumerate(series[:10]):
        color = plt.cm.tab10(i % 10)
        ax.plot([1, n], [one, agg], "o-", color=color, label=f"{label}: {agg / (n * one):.0%} efficiency")
        ax.plot([1, n], [one, n * one], ":", color=color, alpha=0.5)
    ax.set_xticks(range(1, top + 1))
    ax.set_xlabel("ranks (one GPU each)")
    ax.set_ylabel("images/s, all ranks")
    ax.set_title("Throughput against GPU count (dotted: ideal scaling)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, out, "scaling")
