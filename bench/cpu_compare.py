#!/usr/bin/env python3
"""CPU benchmark: ttt against PyTorch eager and onnxruntime on the same layers.

For every layer and shape, side by side in one run:

- `ttt-run` (the ttt-to-cpu pipeline, this machine's defaults: BLAS contractions,
  OpenMP threads) on the layer as `ttt.kvb_layer`, in each form: `--ttt-form=recurrent`,
  `parallel` (where the layer is linear attention) and `auto` (the default);
- PyTorch eager on the reference module of `python/ttt/models` (when torch imports),
  with the same weights and inputs; the table also gives ttt's largest relative
  difference from it;
- onnxruntime on the module's scripted ONNX export and on `ttt-opt`'s rewrite of it
  (needs torch for the export);
- the fp32 GEMM peak of NumPy's BLAS (2048^3) measured in the same run, and each
  ttt time as achieved GFLOP/s (the layer's useful FLOPs, the same for every form)
  and as a share of that peak;
- where ttt auto's time goes (`ttt-run --profile-gemm`): the share of its threads'
  time inside GEMM calls and the GEMM library's rate there.

    python3 bench/cpu_compare.py                       # the issue's grid, ~15 minutes
    python3 bench/cpu_compare.py --quick               # two layers, one shape
    python3 bench/cpu_compare.py --shapes '1,128,8192,512' --no-onnx  # one stream
    python3 bench/cpu_compare.py --plots bench/results # also time vs T and vs chunk

Writes a Markdown table (`--output`). Speed is measured here, never in tests: the
machine is shared and noisy, so compare numbers taken in the same run. The numbers
the ratio column compares (ttt auto and PyTorch) are measured in `--rounds`
interleaved rounds, each keeping its lowest median: the least disturbed one.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "test" / "python"))

import ttt_mlir  # noqa: E402
from onnx_bench import random_feeds, rel_error  # noqa: E402

BUILD = Path(os.environ.get("TTT_BUILD_DIR", REPO / "build"))
SHAPES = [  # (H, D, T, C)
    (4, 128, 8192, 512),
    (2, 64, 16384, 16),
    (2, 64, 16384, 64),
]
LAYERS = ("V2", "V5", "V6", "base", "MSE")


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def make_layer(name: str, H: int, D: int, C: int):
    from ttt.models import lact_variant
    from ttt.models.layers import PlainLinear

    if name == "MSE":
        return PlainLinear(H, D, D, loss="mse", chunk=C, lr_scale=0.01).eval()
    n = {"V2": 2, "V5": 5, "V6": 6, "base": 0}[name]
    return lact_variant(n, heads=H, d=D, d_hidden=D, chunk=C).eval()


def layer_flops(name: str, H: int, D: int, T: int, C: int) -> float:
    """Useful FLOPs of one layer call (B = 1): its products, counted once."""
    gemm = 2.0 * T * D * D            # one [T, D] x [D, D] product over all tokens
    chunks = -(-T // C)
    ns = chunks * 5 * 6.0 * D ** 3    # Newton-Schulz: 5 steps of 3 D^3 products
    per_head = {
        # q: W0, W2, W1; k: W0, W2; the W1 gradient; Muon on it
        "V2": 6 * gemm + ns,
        # q: W0, W2, W1; k: W0, W2, W1; the gradients of all three; Muon on each
        "base": 10 * gemm + 3 * ns,
        # x W on q; k^T v; Muon
        "V5": 2 * gemm + ns,
        "V6": 2 * gemm,
        # x W on q and on k; k^T (k W - v)
        "MSE": 3 * gemm,
    }[name]
    return H * per_head


def random_inputs(layer, T: int, rng) -> dict:
    return random_feeds(layer, 1, T, rng)


def mlir_function(layer, feeds):
    """The layer as a `ttt.kvb_layer` function with its weights as arguments."""
    spec = layer.oracle_spec()
    cfg = dict(spec["kwargs"])
    weights = [np.asarray(w, np.float32) for w in spec["weights"].values()]
    named = {spec["inputs"][k]: v for k, v in feeds.items()}
    ops = ttt_mlir.kvb_operands(cfg, named["q"], named["k"], named["v"], weights,
                                lr=named.get("lr"), momentum=named.get("momentum"))
    return ttt_mlir.kvb_layer_function(cfg, ops, dynamic=False, return_weights=False), ops


def write_layer(layer, T: int, tmp: Path, stem: str):
    """The layer's MLIR function and fresh random inputs, written to `tmp`.

    Returns (source path, inputs .npz path, the inputs by graph-input name)."""
    feeds = random_inputs(layer, T, np.random.default_rng(0))
    text, ops = mlir_function(layer, feeds)
    src, inputs = tmp / f"{stem}.mlir", tmp / f"{stem}.npz"
    src.write_text(text)
    np.savez(inputs, **{f"arg{i}": a for i, (_, a) in enumerate(ops)})
    return src, inputs, feeds


def find_mkl() -> str | None:
    """MKL's single dynamic library from the `mkl` wheel in this Python's prefix."""
    found = sorted(Path(sys.prefix, "lib").glob("libmkl_rt.so*"))
    return str(found[-1]) if found else None


GEMM_PROFILE = re.compile(r"GEMM calls in the median run: \d+, ([0-9.e+-]+) GFLOP, ([0-9.]+) ms "
                          r"in them summed over threads \((\d+)% of (\d+) .* time\), "
                          r"([0-9.]+) GFLOP/s inside them")
TARGET = 1.5  # the speed-up over PyTorch eager the issue asks of the default form


def ttt_run(src: Path, inputs: Path, form: str, repeat: int, outputs: Path | None = None,
            blas: str | None = None, profile: dict | None = None):
    """Median seconds of `ttt-run`; `blas` names the GEMM library (TTT_BLAS_LIBRARY),
    None the default (Debian's OpenBLAS). With a `profile` dict, also where the median
    run's time went (`--profile-gemm`): `gemm_flops` and `gemm_seconds` of its GEMM
    calls (summed over `threads`), `gemm_share`, the share of the threads' time that
    is, and `gemm_rate`, the GFLOP/s per thread inside them."""
    cmd = [str(BUILD / "bin" / "ttt-run"), str(src), f"--inputs={inputs}",
           f"--ttt-form={form}", "--print-results=false", f"--repeat={repeat}"]
    if outputs:
        cmd.append(f"--outputs={outputs}")
    if profile is not None:
        cmd.append("--profile-gemm")
    env = dict(os.environ)
    if blas:
        env["TTT_BLAS_LIBRARY"] = blas
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    if profile is not None:
        found = GEMM_PROFILE.search(proc.stderr)
        profile["gemm_flops"] = float(found.group(1)) * 1e9
        profile["gemm_seconds"] = float(found.group(2)) / 1e3
        profile["gemm_share"] = int(found.group(3)) / 100
        profile["threads"] = int(found.group(4))
        profile["gemm_rate"] = float(found.group(5))
    return float(re.search(r"median of \d+ runs: ([0-9.]+) ms", proc.stderr).group(1)) / 1e3


def median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_time(layer, feeds, repeat):
    import torch

    args = [torch.from_numpy(feeds[k]) for k in layer.input_names]
    with torch.no_grad():
        out = layer(*args)
        return median_time(lambda: layer(*args), repeat), out.numpy()


def ort_times(layer, feeds, tmp: Path, repeat: int, threads: int):
    """(original, rewritten, whether ttt-opt rewrote it) onnxruntime times."""
    import onnxruntime as ort
    import torch
    from ttt.models.export import export_scripted

    rng = np.random.default_rng(1)
    example = random_inputs(layer, 2 * layer.chunk + 1, rng)
    src, fast = tmp / "layer.onnx", tmp / "layer.fast.onnx"
    axes = {name: {0: "B", 2: "T"} for name in layer.input_names}
    with torch.no_grad():
        export_scripted(layer, [torch.from_numpy(example[k]) for k in layer.input_names],
                        src, input_names=layer.input_names, dynamic_axes=axes)
    proc = subprocess.run([str(BUILD / "bin" / "ttt-opt"), str(src), "-o", str(fast)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    rewritten = "raised to ttt.kvb_layer" in proc.stderr

    def session(path):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    before, after = session(src), session(fast)
    t0 = median_time(lambda: before.run(None, feeds), repeat)
    t1 = median_time(lambda: after.run(None, feeds), repeat)
    return t0, t1, rewritten


def gemm_alone(m: int, k: int, n: int, tmp: Path, repeat: int = 50) -> float:
    """GFLOP/s of ttt-run's GEMM library on one m x k by k x n product, one thread
    (inside the call, `--profile-gemm`): what the library makes of a layer's
    product shape with nothing else running."""
    src = tmp / f"gemm_{m}x{k}x{n}.mlir"
    src.write_text(ttt_mlir.matmul_function(m, k, n))
    proc = subprocess.run([str(BUILD / "bin" / "ttt-run"), str(src), "--random-inputs=1",
                           "--openmp=false", "--print-results=false", f"--repeat={repeat}",
                           "--profile-gemm"], capture_output=True, text=True, check=True)
    return float(GEMM_PROFILE.search(proc.stderr).group(5))


def gemm_peak(n=2048, repeat=5) -> float:
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    return 2 * n ** 3 / median_time(lambda: a @ a, repeat) / 1e9


def numpy_blas() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{deps.get('name', '?')} {deps.get('version', '')}".strip()
    except Exception:  # older NumPy
        return "unknown"


def fmt(seconds):
    return "–" if seconds is None else f"{seconds * 1e3:.1f}"


def bench_row(name, shape, args, tmp: Path, torch_ok: bool, peak: float):
    H, D, T, C = shape
    layer = make_layer(name, H, D, C)
    src, inputs, feeds = write_layer(layer, T, tmp, "layer")
    outputs = tmp / "outputs.npz"
    linear = name != "base"
    profile = {}
    times = {"recurrent": ttt_run(src, inputs, "recurrent", args.repeat),
             "parallel": ttt_run(src, inputs, "parallel", args.repeat) if linear else None,
             "auto": ttt_run(src, inputs, "auto", args.repeat, outputs, profile=profile)}
    with np.load(outputs) as data:
        ours = data["result0"]
    row = dict(layer=name, H=H, D=D, T=T, C=C, **times, **profile, torch=None, err=None,
               ort=None, ort_fast=None, rewritten=None, mkl=None)
    if args.mkl:
        row["mkl"] = ttt_run(src, inputs, "auto", args.repeat, blas=args.mkl)
    if torch_ok:
        row["torch"], reference = torch_time(layer, feeds, args.repeat)
        row["err"] = rel_error(ours, reference)
        # The ratio the table reports: more rounds of both, interleaved, so
        # that a burst of the machine's other load does not decide it.
        for _ in range(args.rounds - 1):
            # The profile the table gives is the fastest round's.
            again = {}
            seconds = ttt_run(src, inputs, "auto", args.repeat, profile=again)
            if seconds < row["auto"]:
                row.update(again, auto=seconds)
            if args.mkl:
                row["mkl"] = min(row["mkl"], ttt_run(src, inputs, "auto", args.repeat,
                                                     blas=args.mkl))
            row["torch"] = min(row["torch"], torch_time(layer, feeds, args.repeat)[0])
        if not args.no_onnx:
            row["ort"], row["ort_fast"], row["rewritten"] = ort_times(
                layer, feeds, tmp, args.repeat, os.cpu_count() or 1)
    flops = layer_flops(name, H, D, T, C)
    row["gflops"] = flops / row["auto"] / 1e9
    row["peak_share"] = row["gflops"] / peak
    row["needed_rate"] = needed_gemm_rate(row)
    return row


def needed_gemm_rate(row) -> float | None:
    """GFLOP/s per thread auto's GEMM calls would need for `TARGET` times PyTorch's
    speed if the rest of its time stayed as measured; inf where even GEMMs of no
    time would not do (None without PyTorch)."""
    if not row["torch"]:
        return None
    threads = row["threads"]
    rest = row["auto"] * threads - row["gemm_seconds"]
    budget = row["torch"] / TARGET * threads - rest
    return row["gemm_flops"] / budget / 1e9 if budget > 0 else float("inf")


def table(rows, peak, torch_ok, mkl: bool = False) -> list[str]:
    lines = ["| layer | H | D | T | C | ttt recurrent | ttt parallel | ttt auto | PyTorch eager | "
             "auto vs PyTorch | " + ("ttt auto, MKL | MKL vs PyTorch | " if mkl else "") +
             "ORT original | ORT after ttt-opt | auto GFLOP/s | % of peak | "
             "auto: threads' time in GEMMs | GEMM GFLOP/s per thread | "
             f"GEMM GFLOP/s per thread {TARGET}x PyTorch needs | "
             "max rel. diff vs PyTorch |",
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if mkl else "") +
             "---|---|---|---|---|---|---|---|"]
    for r in rows:
        speedup = f"{r['torch'] / r['auto']:.2f}x" if r["torch"] else "–"
        if mkl:
            with_mkl = f"{r['torch'] / r['mkl']:.2f}x" if r["torch"] and r["mkl"] else "–"
            speedup += f" | {fmt(r['mkl'])} | {with_mkl}"
        fast = fmt(r["ort_fast"]) + ("" if r["rewritten"] in (None, True) else " (not rewritten)")
        err = f"{r['err']:.1e}" if r["err"] is not None else "–"
        needed = ("–" if r["needed_rate"] is None else
                  "∞" if r["needed_rate"] == float("inf") else f"{r['needed_rate']:.0f}")
        lines.append(f"| {r['layer']} | {r['H']} | {r['D']} | {r['T']} | {r['C']} | "
                     f"{fmt(r['recurrent'])} | {fmt(r['parallel'])} | {fmt(r['auto'])} | "
                     f"{fmt(r['torch'])} | {speedup} | {fmt(r['ort'])} | {fast} | "
                     f"{r['gflops']:.1f} | {100 * r['peak_share']:.0f}% | "
                     f"{100 * r['gemm_share']:.0f}% | {r['gemm_rate']:.1f} | {needed} | "
                     f"{err} |")
    return lines


def openmp_scaling(args, tmp: Path):
    """ttt-run auto with --openmp against one thread, V2 at the large shape."""
    H, D, T, C = SHAPES[0]
    src, inputs, _ = write_layer(make_layer("V2", H, D, C), T, tmp, "omp")
    out = {}
    for _ in range(args.rounds):
        for flag in ("--openmp=false", "--openmp"):
            cmd = [str(BUILD / "bin" / "ttt-run"), str(src), f"--inputs={inputs}", flag,
                   "--print-results=false", f"--repeat={args.repeat}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            ms = float(re.search(r"median of \d+ runs: ([0-9.]+) ms", proc.stderr).group(1))
            out[flag] = min(out.get(flag, ms), ms)
    return out["--openmp=false"], out["--openmp"]


def plots(args, directory: Path, tmp: Path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots", file=sys.stderr)
        return []
    torch_ok = have_torch()
    written = []
    for sweep, values, fixed in (("T", [2048, 4096, 8192, 16384], 64),
                                 ("C", [16, 32, 64, 128, 256], 16384)):
        fig, ax = plt.subplots(figsize=(6, 4))
        for name in ("V2", "V6"):
            series = {"ttt auto": [], "ttt parallel": [], "PyTorch eager": []}
            for v in values:
                T, C = (v, fixed) if sweep == "T" else (fixed, v)
                layer = make_layer(name, 2, 64, C)
                src, inputs, feeds = write_layer(layer, T, tmp, "plot")
                series["ttt auto"].append(ttt_run(src, inputs, "auto", args.repeat) * 1e3)
                series["ttt parallel"].append(ttt_run(src, inputs, "parallel", args.repeat) * 1e3)
                if torch_ok:
                    series["PyTorch eager"].append(torch_time(layer, feeds, args.repeat)[0] * 1e3)
            for label, ys in series.items():
                if ys:
                    ax.plot(values, ys, marker="o", label=f"{name} {label}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T (chunk 64)" if sweep == "T" else "chunk size C (T = 16384)")
        ax.set_ylabel("ms (median)")
        ax.set_title(f"H=2, D=64, {os.cpu_count()} cores")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = directory / f"cpu_time_vs_{sweep}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def parse_shapes(text: str):
    """'H,D,T,C;H,D,T,C' -> [(H, D, T, C), ...]."""
    shapes = []
    for part in text.split(";"):
        values = tuple(int(v) for v in part.split(","))
        if len(values) != 4 or min(values) < 1:
            raise argparse.ArgumentTypeError(f"'{part}' is not H,D,T,C")
        shapes.append(values)
    return shapes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", default=",".join(LAYERS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleaved rounds of ttt auto and PyTorch (and of the OpenMP "
                             "comparison); each reports its lowest median")
    parser.add_argument("--quick", action="store_true", help="V2 and V6 at the large shape")
    parser.add_argument("--shapes", type=parse_shapes,
                        help="other shapes instead of the issue's three: 'H,D,T,C' each, "
                             "separated by ';' (e.g. '1,128,8192,512' for one stream)")
    parser.add_argument("--no-onnx", action="store_true", help="skip the onnxruntime columns")
    parser.add_argument("--output", help="write the Markdown report to this file")
    parser.add_argument("--plots", help="also write time-vs-T and time-vs-chunk PNGs here")
    parser.add_argument("--mkl", default=find_mkl(),
                        help="also time ttt auto with this MKL library (TTT_BLAS_LIBRARY), "
                             "the GEMMs PyTorch runs; default: the `mkl` wheel's libmkl_rt "
                             "in this Python's prefix, if installed; '' for none")
    args = parser.parse_args()
    layers = ["V2", "V6"] if args.quick else args.layers.split(",")
    shapes = args.shapes or (SHAPES[:1] if args.quick else SHAPES)
    torch_ok = have_torch()
    if torch_ok:
        import torch
        torch.set_num_threads(os.cpu_count() or 1)

    peak = gemm_peak()
    blas = subprocess.run([str(BUILD / "bin" / "ttt-run"), "--version"], capture_output=True,
                          text=True).stdout.strip().splitlines()
    head = ["# ttt on the CPU against PyTorch eager and onnxruntime",
            "",
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"B = 1, fp32; median of {args.repeat} calls each; ttt auto, PyTorch and the "
            f"OpenMP comparison: the lowest such median of {args.rounds} interleaved rounds; "
            f"{time.strftime('%Y-%m-%d')}.",
            f"fp32 GEMM peak of NumPy's BLAS ({numpy_blas()}), 2048^3, same run: "
            f"**{peak:.1f} GFLOP/s**.",
            f"ttt-run: this machine's defaults (BLAS contractions: Debian's OpenBLAS, "
            f"OpenMP threads); {' '.join(blas[:1])}."
            + (f" Also with MKL (`TTT_BLAS_LIBRARY={args.mkl}`), the GEMM library "
               "PyTorch's x86 builds run." if args.mkl else ""),
            f"PyTorch: {'torch ' + __import__('torch').__version__ + ', ' if torch_ok else ''}"
            f"{'eager, no_grad, ' + str(os.cpu_count()) + ' threads' if torch_ok else 'not installed'}; "
            f"ORT: onnxruntime {__import__('onnxruntime').__version__} on the scripted export.",
            "Times in ms; GFLOP/s are the layer's useful FLOPs (`layer_flops`) over the auto time.",
            "Where auto's time goes (`ttt-run --profile-gemm`, the median run of its fastest "
            "round): the share of "
            "the threads' time spent inside GEMM calls, and the rate the GEMM library ran at "
            f"there, per thread (the peak above is {peak / (os.cpu_count() or 1):.1f} per core); "
            f"and the rate per thread those GEMMs would need for auto to be {TARGET}x as fast "
            "as PyTorch, the rest of auto's time unchanged (∞: not even with GEMMs of no time).",
            ""]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        alone = {(C, D): gemm_alone(C, D, D, tmp) for (_, D, _, C) in shapes}
        head[-1:-1] = [
            "The same GEMM library on one chunk's product alone (C x D by D x D, one "
            "thread, `--profile-gemm` of a matmul): " +
            "; ".join(f"{C}x{D}x{D}: {rate:.1f} GFLOP/s" for (C, D), rate in alone.items()) +
            "."]
        print("\n".join(head), flush=True)
        for shape in shapes:
            for name in layers:
                row = bench_row(name, shape, args, tmp, torch_ok, peak)
                rows.append(row)
                print(table([row], peak, torch_ok, bool(args.mkl))[-1], flush=True)
        one, many = openmp_scaling(args, tmp)
        written = plots(args, Path(args.plots), tmp) if args.plots else []
    lines = head + table(rows, peak, torch_ok, bool(args.mkl)) + [
        "",
        f"OpenMP: V2 at H=4, D=128, T=8192, C=512, auto form: {one:.1f} ms on one thread, "
        f"{many:.1f} ms with --openmp ({one / many:.2f}x).",
    ] + [f"![{p.stem}]({p.name})" for p in written]
    if args.output:
        Path(args.output).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[len(head):]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
