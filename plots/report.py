#!/usr/bin/env python3
"""batchscope report: figures, a Markdown report and a self-contained HTML page from sweep results.

Usage: report.py RESULTS.csv [RESULTS.csv ...] --out DIR [--batch N]
Writes DIR/report.md (linking DIR/*.png), DIR/report.html (figures embedded) and every figure as PNG and SVG.
"""
import argparse
import base64
import html
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import figures  # noqa: E402
except ImportError as e:  # matplotlib or NumPy missing: one line, not a traceback
    print(f"batchscope: error: report: {e}; install python3-matplotlib (scripts/setup.sh does)", file=sys.stderr)
    sys.exit(1)
from sweepdata import CATEGORIES, SweepDataError, Throughput, is_throughput_csv, load_all  # noqa: E402


def fmt(v, digits=4):
    return "" if v is None else f"{v:.{digits}g}"


def breakdown_table(s):
    cats = [c for c in CATEGORIES if any((r[c] or 0) > 0 for r in s.warm())]
    pct = any(r["total_ms_p99"] is not None for r in s.warm())  # sweeps before the percentiles lack them
    # --profiled-passes separate: the categories partition passes of their own, whose median is shown beside them.
    sep = any(r.get("breakdown_ms_median") is not None and r["breakdown_ms_median"] != r["total_ms_median"] for r in s.warm())
    head = ["batch", "reps", "total ms (median)", "min", "max"] + (["p90", "p99"] if pct else []) + \
        ["images/s", "check"] + (["profiled passes ms (median)"] if sep else []) + [c + " ms" for c in cats]
    rows = [[str(r["batch"]), str(int(r["reps"])), fmt(r["total_ms_median"]), fmt(r["total_ms_min"]), fmt(r["total_ms_max"])] +
            ([fmt(r["total_ms_p90"]), fmt(r["total_ms_p99"])] if pct else []) +
            [fmt(r["images_per_s"], 5), r["check"]] + ([fmt(r["breakdown_ms_median"])] if sep else []) +
            [fmt(r[c]) for c in cats] for r in s.warm()]
    return head, rows


def summary_table(s):
    rows = s.meta.get("summary_warm_runs", [])
    if not rows:
        return None, None
    totals = {}
    for r in rows:
        totals[r["section"]] = totals.get(r["section"], 0.0) + r["time_s"]
    head = ["type", "Time(%)", "Time (ms)", "Calls", "Avg (us)", "Min (us)", "Max (us)", "Name"]
    out = [[r["section"], f"{100 * r['time_s'] / totals[r['section']]:.2f}", fmt(r["time_s"] * 1e3), str(r["calls"]),
            fmt(r["avg_s"] * 1e6), fmt(r["min_s"] * 1e6), fmt(r["max_s"] * 1e6), r["name"]] for r in rows[:40]]
    return head, out


def md_table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def html_table(head, rows):
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"


def check_row(m):
    c = m.get("check", {})
    ref, images = c.get("reference", "cpu-ref"), c.get("images", 1)
    verdict = "all points ok" if m.get("all_checks_passed", True) else "SOME POINTS FAILED: see the check column"
    if images == 0:
        return ["checked against", "not checked (--check-images 0)"]
    return [f"checked against {ref}", f"{verdict} ({images} images per point, relative L2 within {c.get('tolerance_rel_l2', '?')})"]


def meta_rows(s):
    m = s.meta
    return [["results", os.path.basename(s.path)], ["device", s.device], ["backend / variant", s.label()],
            ["model", s.model], ["weights", s.weights + (" - numbers from synthetic weights measure speed only" if s.synthetic else "")],
            ["precision", s.precision], ["profiler", m.get("profiler", "")], ["commit", m.get("git_commit", "unknown")],
            ["date", m.get("date", "")], ["command", m.get("command", "")], check_row(m)] + \
        ([["interrupted", m.get("interrupt", "yes")]] if m.get("interrupted") else [])


class Usage(Exception):
    """A mistake in how the report was asked for: exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line in batchscope's words, not argparse's usage block
        raise Usage(message)


def fail(code, what):
    print(f"batchscope: error: {what}", file=sys.stderr)
    return code


def main():
    try:
        return run()
    except Usage as e:
        return fail(2, e)
    except SweepDataError as e:
        return fail(1, e)
    except OSError as e:  # a folder that cannot be made or written: the path and the reason, never a traceback
        return fail(1, f"{e.filename or 'report'}: {e.strerror or e}")
    except Exception as e:  # noqa: BLE001 - anything else is a bug, said in one line
        return fail(1, f"report: internal error: {type(e).__name__}: {e}")


def run():
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="sweep CSVs written by batchscope sweep")
    ap.add_argument("--out", required=True, help="folder for the report and figures")
    ap.add_argument("--batch", type=int, help="batch size for the variants-per-layer figure (default: largest common)")
    a = ap.parse_args()
    t0 = time.time()
    for p in a.csv:
        if not os.path.exists(p):
            raise SweepDataError(f"{p}: no such file")
    tputs = [Throughput(p) for p in a.csv if is_throughput_csv(p)]
    sweeps = load_all([p for p in a.csv if not is_throughput_csv(p)])
    if a.batch is not None:
        held = sorted({int(r["batch"]) for s in sweeps for r in s.warm()})
        if a.batch not in held:
            raise Usage(f"--batch: no sweep CSV given holds batch {a.batch} (they hold {', '.join(map(str, held)) or 'none'})")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise Usage(f"--out: {a.out} exists and is not a folder")
    os.makedirs(a.out, exist_ok=True)
    figs = [("Total execution time against batch size", figures.total_time(sweeps, a.out) if sweeps else None)]
    for i, s in enumerate(sweeps):
        figs.append((f"Breakdown per batch size: {s.label()}", figures.breakdown(s, a.out, f"breakdown_{i + 1}")))
        figs.append((f"Per-layer time: {s.label()}", figures.layer_times(s, a.out, f"layers_{i + 1}")))
    if sweeps:
        figs.append(("Throughput and the roofline", figures.throughput_roofline(sweeps, a.out)))
        figs.append((f"Small batches against the memory floor (batches up to {figures.SMALL_BATCH})",
                     figures.small_batch_floor(sweeps, a.out)))
        figs.append(("Precisions compared: time and accuracy lost", figures.precisions(sweeps, a.out)))
        vp, vb = figures.variants_per_layer(sweeps, a.out, a.batch)
        figs.append((f"Variants compared per layer at batch {vb}", vp))
    figs.append(("Latency against throughput", figures.latency_throughput(tputs, a.out)))
    figs.append(("Throughput against GPU count", figures.scaling(
        [(s.label(), s.warm()) for s in sweeps] + [(t.label(), t.rows) for t in tputs], a.out)))
    figs = [(t, p) for t, p in figs if p]

    title = f"batchscope report: {figures.context(sweeps) if sweeps else tputs[0].model}"
    md = [f"# {title}", "", f"{len(sweeps)} sweep(s), {len(tputs)} throughput run(s). Figures are PNG (and SVG beside them).", ""]
    if any(s.synthetic for s in sweeps):
        md += ["> **Synthetic weights.** Some results ran on synthesized weights: their times are real, their outputs are not.", ""]
    md += ["## Figures", ""]
    for t, p in figs:
        md += [f"### {t}", "", f"![{t}]({os.path.basename(p)})", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    for t, p in figs:
        data = base64.b64encode(open(p, "rb").read()).decode()
        body.append(f"<h3>{html.escape(t)}</h3><img alt='{html.escape(t)}' src='data:image/png;base64,{data}'>")
    for t in tputs:
        head = ["batch", "images", "wall s", "images/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "correctness", "efficiency"]
        rows = [[str(int(r["batch"])), str(int(r["images"])), fmt(r["wall_s"]), fmt(r["images_per_s"], 5), fmt(r["latency_ms_p50"]),
                 fmt(r["latency_ms_p90"]), fmt(r["latency_ms_p99"]), fmt(r["latency_ms_max"]), r.get("correctness", ""),
                 fmt(r["scaling_efficiency"], 3)] for r in t.rows]
        md += [f"## Throughput: {t.label()} ({os.path.basename(t.path)})", "", md_table(head, rows), ""]
        body.append(f"<h2>Throughput: {html.escape(t.label())}</h2>" + html_table(head, rows))
    for s in sweeps:
        md += [f"## {s.label()} ({os.path.basename(s.path)})", "", md_table(["", ""], meta_rows(s)), ""]
        body.append(f"<h2>{html.escape(s.label())}</h2>" + html_table(["", ""], meta_rows(s)))
        head, rows = breakdown_table(s)
        md += ["### Breakdown per batch size (warm runs, ms)", "", md_table(head, rows), ""]
        body.append("<h3>Breakdown per batch size (warm runs, ms)</h3>" + html_table(head, rows))
        head, rows = summary_table(s)
        if head:
            md += ["### nvprof-style summary (every warm run of the sweep)", "", md_table(head, rows), ""]
            body.append("<h3>nvprof-style summary (every warm run of the sweep)</h3>" + html_table(head, rows))
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;font-size:12px;margin:8px 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}")
    page = f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{style}</style></head><body>{''.join(body)}</body></html>"
    for name, text in (("report.md", "\n".join(md) + "\n"), ("report.html", page)):
        tmp = os.path.join(a.out, "." + name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(a.out, name))
    print(f"wrote {os.path.join(a.out, 'report.md')}, {os.path.join(a.out, 'report.html')} and {len(figs)} figures "
          f"(PNG + SVG) in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
