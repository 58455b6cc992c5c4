#!/usr/bin/env python3
"""ONNX benchmark: onnxruntime on an exported TTT layer before and after `ttt-opt`.

Exports LaCT Table-2 variants from the PyTorch reference models (python/ttt/models,
needs torch) as a scripted model (the chunk loop is an ONNX `Loop`, the sequence length
is dynamic) and, for the shorter lengths, as a traced one (the chunk loop unrolled);
rewrites each with `ttt-opt model.onnx -o fast.onnx`; then times both models with
onnxruntime (CPU provider, same thread count) side by side in one run, checks that
they agree (max relative error), and prints a table of median times and ratios.

    python3 bench/onnx_bench.py                 # D=64, H=4, C=64, T = 1024, 4096, 16384
    python3 bench/onnx_bench.py --quick         # T = 1024, 4096
    python3 bench/onnx_bench.py --tokens 2048 --chunk 16 --variants 5,6

Speed is measured here, never in tests: the machine is shared and noisy, so compare
ratios taken in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))


def _ttt_opt() -> Path:
    return REPO / "build" / "bin" / "ttt-opt"


def _session(path: Path, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _median_time(session, feeds, repeat: int) -> float:
    session.run(None, feeds)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_feeds(layer, B, T, rng):
    """Random inputs of `layer` (python/ttt/models) for batch B and length T."""
    shapes = layer.input_shapes(B, T)
    feeds = {}
    for name in layer.input_names:
        if name in ("lr", "momentum"):
            feeds[name] = rng.uniform(0.0, 0.1 if name == "lr" else 0.9,
                                      shapes[name]).astype(np.float32)
        else:
            feeds[name] = (rng.standard_normal(shapes[name]) / 4).astype(np.float32)
    return feeds


def rel_error(a, e):
    e = np.asarray(e, np.float64)
    return float(np.max(np.abs(np.asarray(a, np.float64) - e)) / max(np.max(np.abs(e)), 1e-30))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--chunk", type=int, default=64)
    p.add_argument("--tokens", default="1024,4096,16384")
    p.add_argument("--traced-max", type=int, default=4096,
                   help="longest sequence also exported traced (its graph grows with T)")
    p.add_argument("--variants", default="2,3,5,6", help="Table-2 variants to export")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.tokens = "1024,4096"
    tokens = [int(t) for t in args.tokens.split(",")]

    import torch
    from ttt.models import lact_variant
    from ttt.models.export import export_scripted, export_traced

    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in (int(v) for v in args.variants.split(",")):
            layer = lact_variant(n, heads=args.heads, d=args.dim, d_hidden=args.dim,
                                 chunk=args.chunk).eval()
            forms = [("scripted", None)] + [("traced", T) for T in tokens
                                            if T <= args.traced_max]
            for form, traced_T in forms:
                example = random_feeds(layer, 1, traced_T or 2 * args.chunk + 1, rng)
                tensors = [torch.from_numpy(example[k]) for k in layer.input_names]
                src = tmp / f"v{n}_{form}_{traced_T}.onnx"
                fast = tmp / f"v{n}_{form}_{traced_T}.fast.onnx"
                with torch.no_grad():
                    if form == "scripted":
                        axes = {name: ({0: "B", 2: "T"}) for name in layer.input_names}
                        export_scripted(layer, tensors, src, input_names=layer.input_names,
                                        dynamic_axes=axes)
                    else:
                        export_traced(layer, tensors, src, input_names=layer.input_names)
                proc = subprocess.run([str(_ttt_opt()), str(src), "-o", str(fast)],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(proc.stderr, file=sys.stderr)
                    return 1
                rewritten = "raised to ttt.kvb_layer" in proc.stderr
                before, after = _session(src, args.threads), _session(fast, args.threads)
                for T in ([traced_T] if traced_T else tokens):
                    feeds = random_feeds(layer, 1, T, rng)
                    err = rel_error(after.run(None, feeds)[0], before.run(None, feeds)[0])
                    t0 = _median_time(before, feeds, args.repeat)
                    t1 = _median_time(after, feeds, args.repeat)
                    rows.append((f"V{n}", form, T, rewritten, t0, t1, err))
                    print(f"V{n} {form:8s} T={T:6d} rewritten={rewritten} "
                          f"original {t0 * 1e3:9.2f} ms  ttt {t1 * 1e3:9.2f} ms  "
                          f"x{t0 / t1:6.2f}  rel.err {err:.1e}", flush=True)

    print(f"\nonnxruntime {__import__('onnxruntime').__version__}, CPU, "
          f"{args.threads} threads; B=1, H={args.heads}, D={args.dim}, C={args.chunk}; "
          f"median of {args.repeat}\n")
    print("| variant | export | T | rewritten | original (ms) | after ttt-opt (ms) | speed-up | max rel. error |")
    print("|---|---|---|---|---|---|---|---|")
    for v, form, T, rw, t0, t1, err in rows:
        print(f"| {v} | {form} | {T} | {'yes' if rw else 'no'} | {t0 * 1e3:.2f} | "
              f"{t1 * 1e3:.2f} | {t0 / t1:.2f}x | {err:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
