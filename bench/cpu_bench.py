#!/usr/bin/env python3
"""CPU benchmark: recurrent reference vs parallel (linattn) form of the same layer.

Both forms are compiled by the same compiler (ttt-to-cpu) and timed by
`ttt-run --repeat` in one run, side by side; the table reports the median
times, their ratio (recurrent / parallel), and the parallel form's achieved
GFLOP/s against the fp32 GEMM peak measured in the same run (NumPy's BLAS).

Variants (LaCT-shaped layer, the paper's Table 2): V2 (static SwiGLU kernel,
per-token lr, momentum, Muon), V5 (V2 minus momentum and per-token lr),
V6 (plain linear attention), and the MSE (affine-scan) linear layer.

    python3 bench/cpu_bench.py                   # the full grid (slow)
    python3 bench/cpu_bench.py --quick           # T=4096, chunks 16/64/256
    python3 bench/cpu_bench.py --dim 64 --heads 1 --tokens 4096,16384,65536
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "python"))

import ttt_mlir  # noqa: E402
from compiler import run_opt, tool  # noqa: E402
from oracle import ttt_oracle as oracle  # noqa: E402

VARIANTS = {
    "V2": dict(model="swiglu", trained=[1], loss="dot", ns_steps=5,
               ns_coeffs=list(oracle.LACT_NS_COEFFS), _momentum=True, _lr=True),
    "V5": dict(model="swiglu", trained=[1], loss="dot", ns_steps=5,
               ns_coeffs=list(oracle.LACT_NS_COEFFS)),
    "V6": dict(model="linear", trained=[0], loss="dot"),
    "MSE": dict(model="linear", trained=[0], loss="mse", lr_scale=0.01),
}


def layer_text(cfg, B, H, T, D):
    rng = np.random.default_rng(0)
    f32 = np.float32
    q = np.zeros((B, H, T, D), f32)
    hidden = D
    if cfg["model"] == "swiglu":
        weights = [np.zeros((H, D, hidden), f32), np.zeros((H, hidden, D), f32),
                   np.zeros((H, D, hidden), f32)]
    else:
        weights = [np.zeros((H, D, D), f32)]
    extra = {}
    if cfg.get("_lr"):
        extra["lr"] = np.zeros((B, H, T, 1), f32)
    if cfg.get("_momentum"):
        extra["momentum"] = np.zeros((B, H, T), f32)
    ops = ttt_mlir.kvb_operands(cfg, q, q, q, weights, **extra)
    del rng
    shapes = ",".join("x".join(map(str, a.shape)) for _, a in ops)
    return ttt_mlir.kvb_layer_function(cfg, ops, return_weights=False), shapes


def parallel_flops(cfg, B, H, T, D, C):
    n_chunks = -(-T // C)
    f = D
    flops = 0.0
    if cfg["model"] == "swiglu":
        flops += 2 * 2 * 2 * T * D * f          # q and k, two projections each
    flops += 2 * T * f * D                       # chunk contributions
    flops += 2 * T * f * D                       # apply
    if cfg.get("ns_steps"):
        r, c = sorted((f, D))
        flops += n_chunks * cfg["ns_steps"] * (2 * r * r * c + 2 * r ** 3 + 2 * r * r * c)
    if cfg["loss"] == "mse":
        flops += 2 * T * f * f + n_chunks * 2 * f * f * D
    return B * H * flops


def time_run(path, shapes, repeat, openmp):
    # The recurrent file's layers stay recurrent (ttt-run would otherwise
    # choose their form); the parallel file has no layer ops left.
    cmd = [str(tool("ttt-run")), str(path), "--random-inputs=1", f"--shapes={shapes}",
           f"--repeat={repeat}", "--print-results=false", "--opt-level=3",
           "--ttt-form=recurrent", f"--openmp={'true' if openmp else 'false'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    match = re.search(r"median of \d+ runs: ([0-9.]+) ms", proc.stderr)
    return float(match.group(1)) / 1e3


def gemm_peak(n=2048, repeat=5):
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = a.copy()
    a @ b
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n ** 3 / np.median(times) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", default="4096,16384,65536")
    parser.add_argument("--chunks", default="16,64,256,2048")
    parser.add_argument("--variants", default="V2,V5,V6,MSE")
    parser.add_argument("--dim", type=int, default=64, help="head width (q, k, v, hidden)")
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--openmp", action="store_true", help="run both forms on OpenMP threads")
    parser.add_argument("--quick", action="store_true", help="T=4096, chunks 16,64,256")
    parser.add_argument("--output", help="also write the table to this file")
    args = parser.parse_args()
    if args.quick:
        args.tokens, args.chunks = "4096", "16,64,256"

    peak = gemm_peak()
    lines = [f"# ttt CPU benchmark ({os.cpu_count()} cores, B={args.batch} H={args.heads} "
             f"D={args.dim}, openmp={args.openmp})",
             f"# fp32 GEMM peak (NumPy BLAS, 2048^3, same run): {peak:.1f} GFLOP/s",
             "| variant | T | chunk | recurrent ms | parallel ms | ratio | parallel GFLOP/s | % of peak |",
             "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.variants.split(","):
            for T in map(int, args.tokens.split(",")):
                for C in map(int, args.chunks.split(",")):
                    cfg = dict(VARIANTS[name], chunk=C, order="apply_then_update")
                    text, shapes = layer_text(cfg, args.batch, args.heads, T, args.dim)
                    rec = tmp / "recurrent.mlir"
                    par = tmp / "parallel.mlir"
                    rec.write_text(text)
                    par.write_text(run_opt(text, "--ttt-to-linattn"))
                    t_rec = time_run(rec, shapes, args.repeat, args.openmp)
                    t_par = time_run(par, shapes, args.repeat, args.openmp)
                    gflops = parallel_flops(cfg, args.batch, args.heads, T, args.dim, C) / t_par / 1e9
                    line = (f"| {name} | {T} | {C} | {t_rec * 1e3:.1f} | {t_par * 1e3:.1f} | "
                            f"{t_rec / t_par:.2f}x | {gflops:.2f} | {100 * gflops / peak:.1f}% |")
                    lines.append(line)
                    print(line, flush=True)
    if args.output:
        Path(args.output).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
