#!/usr/bin/env python3
"""GPU check (issue 5): parallel GPU results against the CPU recurrent
reference, and recurrent vs parallel timings on the GPU, at the LaCT-LLM layer
shape. Run by bench/gpu_check.sh, which finds the GPU and builds first.

For each variant (LaCT-LLM layer with a static SwiGLU kernel, the paper's
Table 2; the same definitions as bench/cpu_bench.py):
  V2  output layer trained, per-token lr, momentum, Muon
  V5  V2 without momentum and per-token lr
the layer is written with test/python/ttt_mlir.py, folded with
`ttt-opt --ttt-simplify` (exact folds only) and rewritten with
`--ttt-to-linattn`; then
  1. check (T = 2 chunks + 123 tokens, a partial last chunk): the recurrent
     reference on the CPU (ttt-to-cpu, OpenMP) against the parallel form on
     the GPU in fp32 (relative error <= 1e-5) and bf16 (<= 3e-2), and the
     recurrent form on the GPU (<= 1e-5);
  2. time (batch 1, 4 heads of dim 384, T = 32768, chunk 2048): recurrent and
     parallel forms on the GPU, median of --repeat calls each.
Every step has a time limit within the overall deadline; what does not fit is
reported as skipped. The report goes to --report and stdout. Exit status 0
when every check that ran passed, 1 otherwise.

    python3 bench/gpu_check.py --report bench/results/gpu_check_X.txt
    python3 bench/gpu_check.py --emulate --dim 16 --tokens 512 --chunk 64   # no GPU
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "python"))

import ttt_mlir  # noqa: E402
from oracle import ttt_oracle as oracle  # noqa: E402

# The same V2 and V5 as the CPU benchmark, so both report one layer each.
sys.path.insert(0, str(REPO / "bench"))
from cpu_bench import VARIANTS as _ALL_VARIANTS  # noqa: E402

VARIANTS = {name: _ALL_VARIANTS[name] for name in ("V2", "V5")}
FP32_RTOL = 1e-5
# bf16 keeps 8 significant bits (unit roundoff 2^-8 = 3.9e-3); the chunk sums
# and the scan accumulate a few of those (measured 1.5-2e-2 at D=16, T=512).
BF16_RTOL = 3e-2


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


class Report:
    def __init__(self, path: Path | None):
        self.path = path
        self.lines: list[str] = []
        self.failures = 0

    def say(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)
        if self.path:  # written as it goes: a killed run still leaves a report
            self.path.write_text("\n".join(self.lines) + "\n")


def tool_path(build: Path, name: str) -> Path:
    path = build / "bin" / name
    if not path.exists():
        sys.exit(f"gpu_check: {path} is missing; build first (bench/gpu_check.sh does)")
    return path


def make_inputs(cfg, B, H, T, D, seed):
    """Operands in kvb_layer_function's order; q, k, v and weights as in the
    tests (uniform, weights scaled by 1/sqrt(rows))."""
    rng = np.random.default_rng(seed)

    def uniform(shape, scale=1.0):
        return (scale * rng.uniform(-1.0, 1.0, size=shape)).astype(np.float32)

    q, k, v = (uniform((B, H, T, D)) for _ in range(3))
    weights = [uniform((H, D, D), 1 / np.sqrt(D)) for _ in range(3)]
    extra = {}
    if cfg.get("_lr"):
        extra["lr"] = rng.uniform(0.01, 0.2, size=(B, H, T, 1)).astype(np.float32)
    if cfg.get("_momentum"):
        extra["momentum"] = rng.uniform(0.01, 0.5, size=(B, H, T)).astype(np.float32)
    return ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)


def layer_forms(opt: Path, cfg, operands):
    """(recurrent, parallel) MLIR text of the layer."""
    text = ttt_mlir.kvb_layer_function(cfg, operands, return_weights=False)

    def run(src, *args):
        proc = subprocess.run([str(opt), "-", *args], input=src, capture_output=True, text=True,
                              timeout=120)
        if proc.returncode:
            raise RuntimeError(f"ttt-opt {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    recurrent = run(text, "--ttt-simplify")
    parallel = run(recurrent, "--ttt-to-linattn")
    if "linattn." not in parallel:
        raise RuntimeError("ttt-to-linattn left the layer alone")
    return recurrent, parallel


def norm_error(got, want):
    """||got - want|| / ||want|| (Frobenius), reported next to the max error."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def relative_error(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got - want))) / scale


class Runner:
    def __init__(self, args, report: Report, deadline: Deadline, workdir: Path):
        self.args = args
        self.report = report
        self.deadline = deadline
        self.workdir = workdir
        self.ttt_run = tool_path(args.build_dir, "ttt-run")
        self.opt = tool_path(args.build_dir, "ttt-opt")
        self.device_name = None

    def gpu_args(self, precision="fp32"):
        if self.args.emulate:
            options = f"emulate=true precision={precision}"
        else:
            options = f"format={self.args.format} precision={precision}"
            if self.args.toolkit:
                options += f" toolkit={self.args.toolkit}"
        return ["--device=cuda", f"--gpu-options={options}"]

    def run(self, label, module: Path, inputs: Path, extra, *, repeat=1, limit=300.0):
        """Runs ttt-run; returns (result array or None, median ms or None, error)."""
        budget = min(limit, self.deadline.left() - 5)
        if budget < 10:
            return None, None, "skipped: out of time"
        out = self.workdir / f"{label}.npy"
        out.unlink(missing_ok=True)
        cmd = [str(self.ttt_run), str(module), f"--inputs={inputs}", f"--outputs={out}",
               "--print-results=false", *extra]
        if repeat > 1:
            cmd.append(f"--repeat={repeat}")
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=budget)
        except subprocess.TimeoutExpired:
            return None, None, f"timed out after {budget:.0f} s"
        wall = time.monotonic() - start
        if proc.returncode:
            return None, None, (proc.stderr.strip().splitlines() or ["failed"])[-1]
        match = re.search(r"median of \d+ runs: ([0-9.]+) ms", proc.stderr)
        device = re.search(r"ttt-run: device: (.*)", proc.stderr)
        if device:
            self.device_name = device.group(1)
        ms = float(match.group(1)) if match else None
        self.report.say(f"    ({label}: {wall:.1f} s wall including compilation)")
        return np.load(out), ms, None


def check(runner: Runner, name, cfg, args, report: Report):
    T = 2 * args.chunk + 123
    cfg = dict(cfg, chunk=args.chunk)
    operands = make_inputs(cfg, 1, args.heads, T, args.dim, seed=1)
    recurrent, parallel = layer_forms(runner.opt, cfg, operands)
    wd = runner.workdir
    (wd / f"{name}_recurrent.mlir").write_text(recurrent)
    (wd / f"{name}_parallel.mlir").write_text(parallel)
    inputs = wd / f"{name}_check.npz"
    np.savez(inputs, **{f"arg{i}": a for i, (_, a) in enumerate(operands)})
    report.say(f"  {name}: check at B=1 H={args.heads} D={args.dim} T={T} chunk={args.chunk}")
    ref, _, error = runner.run(f"{name}_cpu_recurrent", wd / f"{name}_recurrent.mlir", inputs,
                               ["--openmp"], limit=args.step_limit)
    if error:
        report.failures += 1
        report.say(f"    FAIL  CPU recurrent reference: {error}")
        return
    report.say(f"    ok    CPU recurrent reference (max |o| = {np.abs(ref).max():.4g})")
    for label, module, precision, rtol in [
            ("gpu_parallel_fp32", "parallel", "fp32", FP32_RTOL),
            ("gpu_parallel_bf16", "parallel", "bf16", BF16_RTOL),
            ("gpu_recurrent_fp32", "recurrent", "fp32", FP32_RTOL)]:
        got, _, error = runner.run(f"{name}_{label}", wd / f"{name}_{module}.mlir", inputs,
                                   runner.gpu_args(precision), limit=args.step_limit)
        what = f"GPU {module} {precision} vs CPU recurrent"
        if error:
            report.failures += 1
            report.say(f"    FAIL  {what}: {error}")
            continue
        if got.shape != ref.shape:
            report.failures += 1
            report.say(f"    FAIL  {what}: shape {got.shape}, expected {ref.shape}")
            continue
        err = relative_error(got, ref)
        verdict = "ok  " if err <= rtol else "FAIL"
        if err > rtol:
            report.failures += 1
        report.say(f"    {verdict}  {what}: relative error {err:.3g} (limit {rtol:g}; "
                   f"norm-wise {norm_error(got, ref):.3g})")


def timing(runner: Runner, name, cfg, args, report: Report, rows):
    T = args.tokens
    cfg = dict(cfg, chunk=args.chunk)
    operands = make_inputs(cfg, 1, args.heads, T, args.dim, seed=2)
    wd = runner.workdir
    inputs = wd / f"{name}_time.npz"
    np.savez(inputs, **{f"arg{i}": a for i, (_, a) in enumerate(operands)})
    del operands
    times = {}
    for label, module, precision in [("recurrent", "recurrent", "fp32"),
                                      ("parallel", "parallel", "fp32"),
                                      ("parallel_bf16", "parallel", "bf16")]:
        _, ms, error = runner.run(f"{name}_time_{label}", wd / f"{name}_{module}.mlir", inputs,
                                  runner.gpu_args(precision), repeat=args.repeat,
                                  limit=args.step_limit)
        times[label] = ms
        if error:
            report.say(f"    {name} {label}: {error}")
        else:
            report.say(f"    {name} {label}: median {ms:.2f} ms")
    inputs.unlink(missing_ok=True)
    rows.append((name, times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=REPO / "build")
    parser.add_argument("--report", type=Path, help="write the report here too")
    parser.add_argument("--deadline", type=float, default=None,
                        help="stop starting work after this time (seconds since the epoch)")
    parser.add_argument("--budget", type=float, default=450,
                        help="seconds for everything (default 450), if no --deadline")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--tokens", type=int, default=32768)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--step-limit", type=float, default=150,
                        help="seconds for one ttt-run call (default 150)")
    parser.add_argument("--variants", default="V2,V5")
    parser.add_argument("--format", default="fatbin", choices=["isa", "bin", "fatbin"])
    parser.add_argument("--toolkit", default=os.environ.get("CUDA_HOME", ""),
                        help="CUDA toolkit for ptxas/fatbinary/libdevice (default $CUDA_HOME)")
    parser.add_argument("--emulate", action="store_true",
                        help="no GPU: run the kernels on the host (ttt-to-gpu emulate=true), "
                             "to test this script")
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args()

    now = time.time()
    seconds = (args.deadline - now) if args.deadline else args.budget
    deadline = Deadline(seconds)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
    report = Report(args.report)

    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    report.say("ttt GPU check (issue 5): parallel vs recurrent on the GPU")
    report.say(f"date:    {datetime.datetime.now().isoformat(timespec='seconds')}")
    report.say(f"host:    {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs)")
    report.say(f"commit:  {commit}")
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True)
        report.say(f"gpu:     {smi.stdout.strip() or smi.stderr.strip()}")
    report.say(f"mode:    {'EMULATED on the host (no GPU)' if args.emulate else 'CUDA'}, "
               f"kernels as {args.format}, toolkit {args.toolkit or '(PATH)'}")
    report.say(f"budget:  {seconds:.0f} s")
    report.say("")

    with tempfile.TemporaryDirectory(prefix="ttt_gpu_check_") as tmp:
        runner = Runner(args, report, deadline, Path(tmp))
        names = [n.strip() for n in args.variants.split(",") if n.strip()]
        report.say("== correctness (relative error = max |got - ref| / max |ref|) ==")
        for name in names:
            try:
                check(runner, name, VARIANTS[name], args, report)
            except Exception as error:  # noqa: BLE001 - report and go on
                report.failures += 1
                report.say(f"  {name}: FAIL  {error}")
        rows = []
        if not args.skip_timing:
            report.say("")
            report.say(f"== timing on the GPU: B=1 H={args.heads} D={args.dim} "
                       f"T={args.tokens} chunk={args.chunk}, median of {args.repeat} calls "
                       "(inputs copied to the device inside each call) ==")
            for name in names:
                if not (runner.workdir / f"{name}_parallel.mlir").exists():
                    report.say(f"    {name}: skipped (its layer was not built)")
                    continue
                timing(runner, name, VARIANTS[name], args, report, rows)
        if runner.device_name:
            report.say("")
            report.say(f"device (ttt-run): {runner.device_name}")

    if rows:
        report.say("")
        report.say("| variant | recurrent ms | parallel ms | speed-up | parallel bf16 ms |")
        report.say("|---|---|---|---|---|")
        for name, t in rows:
            def fmt(x):
                return f"{x:.2f}" if x is not None else "—"
            ratio = (f"{t['recurrent'] / t['parallel']:.2f}x"
                     if t.get("recurrent") and t.get("parallel") else "—")
            report.say(f"| {name} | {fmt(t.get('recurrent'))} | {fmt(t.get('parallel'))} | "
                       f"{ratio} | {fmt(t.get('parallel_bf16'))} |")
    report.say("")
    report.say(f"result: {'PASS' if report.failures == 0 else f'FAIL ({report.failures} failed)'}"
               f" ({seconds - deadline.left():.0f} s)")
    return 0 if report.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
