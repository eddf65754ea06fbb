#!/usr/bin/env python3
"""plot_bench.py - figures and a Markdown report from `cmrscl-run bench --csv` output.

    bench/plot_bench.py BENCH_CSV OUT_DIR [--json BENCH_JSON] [--report FILE]
                        [--command TEXT] [--plan NAME]

Writes to OUT_DIR:
  speedup_peer.png   speedup over the peer (cuSPARSE) per matrix, float and double: the
                     per-product device time and the back-to-back loop time
  speedup_mu.png     speedup over csr-vector against mu (log axis), with the paper's model
                     a(h, mu) (section 5) for the heights the plans used
  eta.png            eta = beta+/tau over the device's measured bandwidth, per matrix
and the report (default OUT_DIR/report.md): the device, the command, the per-matrix table
and the geometric means, with the figures. Rows of one plan are used (--plan, default the
first plan in the file, normally `auto`). The figures need matplotlib (Debian:
python3-matplotlib): without it the report has the tables alone and says so. Without a peer
in the CSV (`bench --peer`), the peer's figure, columns and means are left out, not drawn
empty.
"""
import argparse
import csv
import json
import math
import os
import sys

LAMBDA = 128.0  # bytes per memory segment in the model, as in bench_report.c
LARGE_NNZ = 10_000_000  # the large suite: matrices far beyond a GPU's L2


def model_a(h, mu, b):
    """The paper's eq. 5.1-5.2: a(h, mu) = f(1, mu) / f(h, mu), f = 1 + (lambda - b)/(h mu b)."""
    f1 = 1.0 + (LAMBDA - b) / (mu * b)
    fh = 1.0 + (LAMBDA - b) / (h * mu * b)
    return f1 / fh


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def read_rows(path, plan):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_bench: {path} has no results")
    plan = plan or rows[0]["plan_name"]
    rows = [r for r in rows if r["plan_name"] == plan]
    if not rows:
        sys.exit(f"plot_bench: {path} has no rows of plan '{plan}'")
    return rows, plan


def per_precision(rows):
    matrices = []
    for r in rows:
        if r["matrix"] not in matrices:
            matrices.append(r["matrix"])
    table = {(r["matrix"], r["precision"]): r for r in rows}
    precisions = [p for p in ("float", "double") if any(k[1] == p for k in table)]
    return matrices, precisions, table


def bar_positions(plt, matrices, precisions):
    """A figure wide enough for the matrices, and per precision its bars' x positions."""
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(matrices) + 3), 5))
    width = 0.8 / max(1, len(precisions))
    xs = [[k + (i - (len(precisions) - 1) / 2) * width for k in range(len(matrices))]
          for i in range(len(precisions))]
    return fig, ax, xs, width


def finish(plt, fig, ax, path, ylabel, title, matrices=None, log_x=False):
    """The line at 1, labels, legend, and the file."""
    ax.axhline(1.0, color="grey", lw=1)
    if matrices is not None:
        ax.set_xticks(range(len(matrices)))
        ax.set_xticklabels(matrices, rotation=60, ha="right", fontsize=8)
    if log_x:
        ax.set_xscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_speedup_peer(plt, matrices, precisions, table, path):
    fig, ax, xs, width = bar_positions(plt, matrices, precisions)
    for i, p in enumerate(precisions):
        event = [number(table.get((m, p), {}).get("speedup_peer")) or 0 for m in matrices]
        loop = [number(table.get((m, p), {}).get("speedup_peer_loop")) for m in matrices]
        ax.bar(xs[i], event, width, label=f"{p}: device time per product")
        ax.plot([x for x, v in zip(xs[i], loop) if v], [v for v in loop if v], "k_", ms=8,
                label=f"{p}: back-to-back loop" if i == 0 else None)
    finish(plt, fig, ax, path, "speedup over cuSPARSE (best algorithm)",
           "cmrscl over cuSPARSE (> 1: cmrscl faster)", matrices)


def plot_speedup_mu(plt, rows, path):
    mus = [number(r["mu"]) for r in rows if number(r["mu"])]
    if not mus or not any(number(r["speedup_csrvec"]) for r in rows):
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for p, marker in (("float", "o"), ("double", "s")):
        pts = [(number(r["mu"]), number(r["speedup_csrvec"])) for r in rows
               if r["precision"] == p and number(r["mu"]) and number(r["speedup_csrvec"])]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, label=f"measured, {p}", alpha=0.8)
    grid = [min(mus) * (max(mus) / min(mus)) ** (k / 100) for k in range(101)]
    for h in sorted({int(r["height"]) for r in rows if int(r["height"]) > 1}):
        ax.plot(grid, [model_a(h, mu, 4.0) for mu in grid], lw=1,
                label=f"model a(h={h}, mu), float")
    ax.set_xlabel("mu (mean nonzeros per row)")
    finish(plt, fig, ax, path, "speedup over csr-vector",
           "CMRS over CSR-vector against the paper's model", log_x=True)
    return True


def plot_eta(plt, matrices, precisions, table, path):
    fig, ax, xs, width = bar_positions(plt, matrices, precisions)
    for i, p in enumerate(precisions):
        ax.bar(xs[i], [number(table.get((m, p), {}).get("eta_plus")) or 0 for m in matrices],
               width, label=p)
    finish(plt, fig, ax, path, "eta = (beta+ / tau) / B",
           "Effective bandwidth over the measured stream bandwidth", matrices)


def fmt(v, digits=3):
    v = number(v) if not isinstance(v, float) else v
    return "-" if v is None else f"{v:.{digits}g}"


def sectors_per_entry(r):
    sectors, nnz = number(r.get("x_sectors")), number(r["nnz"])
    return fmt(sectors / nnz, 3) if sectors and nnz else "-"


def has_peer(rows):
    return any(number(r["speedup_peer"]) for r in rows)


def has_peer_formats(rows):
    """The peer's best is a format beside CSR (cmrscl-peer's SELL) for some row: then the
    speedup over its CSR alone is shown too (CSVs from before that column have none)."""
    return any(number(r.get("speedup_peer_csr")) and r.get("peer_alg") == "SELL" for r in rows)


def write_report(path, fig_dir, rows, plan, matrices, precisions, table, info, command, figures):
    """figures: the names of the figures drawn (none without matplotlib)."""
    rel = os.path.relpath(fig_dir, os.path.dirname(os.path.abspath(path)))
    peer = has_peer(rows)
    formats = peer and has_peer_formats(rows)
    out = ["# cmrscl benchmark", ""]
    if info:
        dev = info.get("device", {})
        out.append(f"Device: **{dev.get('name', '?')}** ({dev.get('platform', '?')}, driver "
                   f"{dev.get('driver', '?')}); measured stream bandwidth B = "
                   f"{fmt(info.get('bandwidth_gbs'), 4)} GB/s.")
        out.append("")
    if command:
        out += ["Reproduce:", "", "```", command, "```", ""]
    out += [f"Plan: `{plan}`. Times are medians of the per-product device time (profiling "
            "events) and the per-product time of a back-to-back loop (host clock, after a "
            "finish)." + (" Speedups are the peer's time over ours (> 1: cmrscl faster); the "
                          "peer is the fastest cuSPARSE algorithm for each matrix" +
                          (", CSR or sliced ELL (SELL, slice 32); 'CSR alone' compares with its "
                           "fastest CSR algorithm." if formats else ".") if peer else
                          " No peer's times in this CSV (`bench --peer`): the comparison with "
                          "cuSPARSE is left out."), ""]
    if not figures:
        out += ["No figures: matplotlib is not installed (Debian: python3-matplotlib).", ""]
    if peer:
        out.append("| precision, matrices | geomean speedup over cuSPARSE (device time) | "
                   "(loop time) | matrices faster | " +
                   ("over cuSPARSE CSR alone (device time) | " if formats else "") +
                   "geomean speedup over csr-vector |")
        out.append("|---|---|---|---|---|" + ("---|" if formats else ""))
    else:
        out.append("| precision, matrices | geomean speedup over csr-vector |")
        out.append("|---|---|")
    groups = (("all", lambda r: True),
              (f"nnz >= {LARGE_NNZ:,} (beyond L2)", lambda r: int(r["nnz"]) >= LARGE_NNZ),
              (f"nnz < {LARGE_NNZ:,}", lambda r: int(r["nnz"]) < LARGE_NNZ))
    for p in precisions:
        for label, keep in groups:
            sel = [table[(m, p)] for m in matrices if (m, p) in table and keep(table[(m, p)])]
            if not sel:
                continue
            ev = [number(r["speedup_peer"]) for r in sel]
            lp = [number(r["speedup_peer_loop"]) for r in sel]
            cv = [number(r["speedup_csrvec"]) for r in sel]
            faster = sum(1 for v in ev if v and v >= 1.0)
            counted = sum(1 for v in ev if v)
            if peer:
                csr = ([number(r.get("speedup_peer_csr")) for r in sel] if formats else [])
                out.append(f"| {p}, {label} | {fmt(geomean(ev))} | {fmt(geomean(lp))} | "
                           f"{faster} of {counted} | " +
                           (f"{fmt(geomean(csr))} | " if formats else "") +
                           f"{fmt(geomean(cv))} |")
            else:
                out.append(f"| {p}, {label} | {fmt(geomean(cv))} |")
    captions = {"speedup_peer": "speedup over cuSPARSE",
                "speedup_mu": "speedup over csr-vector against mu", "eta": "eta"}
    out.append("")
    for name in figures:
        out += [f"![{captions[name]}]({rel}/{name}.png)", ""]
    out += ["Roof: the fraction of the device's lower bound reached (tools/cli/bench_roof.h): the "
            "larger of CSR's least traffic at B and of every 32-byte sector the compute units "
            "receive - x's sectors (x sec/nnz per entry, 32 entries a warp load) and the rest - "
            "at the device's measured rate of scattered loads from a buffer of x's size. Above "
            "1: x comes from L1 (banded matrices), which the L2 term does not count.", ""]
    head = ["matrix", "prec", "rows", "nnz", "mu", "cv", "plan", "ms", "loop ms", "GFLOP/s",
            "eta", "x sec/nnz", "roof", "vs csr-vector", "a(h,mu)"]
    if peer:
        head += ["cuSPARSE", "its ms", "its roof", "speedup", "loop speedup"]
    if formats:
        head += ["vs CSR alone"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---" * len(head) + "|")
    for m in matrices:
        for p in precisions:
            r = table.get((m, p))
            if not r:
                continue
            cells = [m, p, r["rows"], r["nnz"], fmt(r["mu"]), fmt(r["row_cv"], 2), r["plan"],
                     fmt(r["median_ms"], 4), fmt(r["loop_ms"], 4), fmt(r["gflops"], 4),
                     fmt(r["eta_plus"], 2), sectors_per_entry(r), fmt(r.get("of_roof"), 3),
                     fmt(r["speedup_csrvec"]), fmt(r["model_a"])]
            if peer:
                cells += [r["peer_alg"] or "-", fmt(r["peer_median_ms"], 4),
                          fmt(r.get("peer_of_roof"), 3), fmt(r["speedup_peer"]),
                          fmt(r["speedup_peer_loop"])]
            if formats:
                cells += [fmt(r.get("speedup_peer_csr"))]
            out.append("| " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("out_dir")
    ap.add_argument("--json", help="bench --json-out file (device name and bandwidth)")
    ap.add_argument("--report", help="Markdown report path (default OUT_DIR/report.md)")
    ap.add_argument("--command", help="the command that produced the CSV, for the report")
    ap.add_argument("--plan", help="plan rows to use (default: the file's first plan)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("plot_bench: matplotlib is not installed (apt-get install python3-matplotlib): "
              "the report without figures", file=sys.stderr)

    rows, plan = read_rows(args.csv, args.plan)
    matrices, precisions, table = per_precision(rows)
    os.makedirs(args.out_dir, exist_ok=True)
    json_path = args.json or os.path.join(os.path.dirname(args.csv), "bench.json")
    info = None
    if os.path.exists(json_path):
        with open(json_path) as f:
            info = json.load(f)
    figures = []
    if plt and has_peer(rows):
        plot_speedup_peer(plt, matrices, precisions, table,
                          os.path.join(args.out_dir, "speedup_peer.png"))
        figures.append("speedup_peer")
    if plt and plot_speedup_mu(plt, rows, os.path.join(args.out_dir, "speedup_mu.png")):
        figures.append("speedup_mu")
    if plt:
        plot_eta(plt, matrices, precisions, table, os.path.join(args.out_dir, "eta.png"))
        figures.append("eta")
    report = args.report or os.path.join(args.out_dir, "report.md")
    write_report(report, args.out_dir, rows, plan, matrices, precisions, table, info,
                 args.command, figures)
    print(f"plot_bench: {len(rows)} results of plan '{plan}' -> {args.out_dir}, {report} "
          f"({len(figures)} figures)")


if __name__ == "__main__":
    main()
