#!/usr/bin/env python3
"""GPU check (issue 15), in two halves: compile here, run on a GPU machine that
has no MLIR, no network and little room for what travels to it.

prepare (here: needs the build, LLVM 22's mlir-translate and llc, and CUDA's
ptxas/fatbinary): every layer below is written with test/python/ttt_mlir.py,
folded with `ttt-opt --ttt-simplify` (the recurrent form) and rewritten with
`--ttt-to-linattn` (the parallel form); each form and precision goes through
`ttt-opt --llvm-request-c-wrappers --ttt-to-gpu` (host code plus the kernels as
an embedded fatbinary), `mlir-translate --mlir-to-llvmir` and `llc` into a
shared object linked only against libttt_cuda_runtime.so (copied next to it).
The check inputs and the CPU recurrent reference (`ttt-run`, the exact
sequential loop) are written as .npz/.npy; manifest.json lists everything.

run (there: Python with NumPy; PyTorch optional): loads each shared object with
ctypes and calls its `_mlir_ciface_layer` on NumPy arrays, then
  1. numerics (B=2, T = 2 chunks + 23, a partial last chunk): the parallel form
     on the GPU against the CPU recurrent reference (fp32 relative error
     <= 1e-5, TF32 <= 4e-3, bf16 <= 3e-2) and the recurrent form on the GPU (<= 1e-5);
  2. speed at (B=1, H=4, D=384, T=32768, C=2048) and (B=8, H=16, D=64, T=8192,
     C=64): recurrent and parallel (fp32, bf16) on the GPU, the median of
     --repeat calls, each call including its copies in and out; the parallel
     form is checked against the recurrent one there too (<= 1e-4);
  3. when PyTorch sees the GPU: the same layers of python/ttt/models in eager
     mode and under torch.compile on the same shapes, and the ceilings of the
     same run (a bf16 and an fp32 GEMM, a device copy), all in a child
     process, so that a crash in PyTorch costs its cell of the table only.
The report (Markdown) goes to --report and stdout; exit status 0 when every
check passed, 1 otherwise.

    python3 bench/gpu_check.py prepare --out build/gpu_pack
    python3 bench/gpu_check.py run build/gpu_pack --report bench/results/gpu_check.md
    # no GPU: the same programs with the kernels run on the host
    python3 bench/gpu_check.py prepare --out /tmp/p --emulate --tiny && \\
        python3 bench/gpu_check.py run /tmp/p
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ENTRY = "layer"
FLOAT16_UTILS = Path("/usr/lib/llvm-22/lib/libmlir_float16_utils.so")
FP32_RTOL = 1e-5
# TF32 keeps 10 mantissa bits in products (unit roundoff 2^-11 = 4.9e-4).
# The same margin as bf16's below, 8 units of roundoff: Newton-Schulz chains
# five rounds of products (V2 and V5 measured 1.4-1.5e-3 on an H200,
# 2026-12-04; the plain layers 3-4e-4).
TF32_RTOL = 4e-3
# bf16 keeps 8 significant bits (unit roundoff 2^-8 = 3.9e-3); the chunk sums
# and the scan accumulate a few of those (measured 1.5-2e-2 at D=16, T=512).
BF16_RTOL = 3e-2
# Parallel against recurrent, both on the GPU, at the long timing shapes.
CONSISTENCY_RTOL = 1e-4

# name: (B, H, D, T, C). The check configuration carries its inputs and the
# CPU reference; the timing ones make their inputs where they run.
CHECK = ("check", 2, 2, 64, 2 * 64 + 23, 64)
TINY_CHECK = ("check", 2, 1, 8, 2 * 16 + 5, 16)
TIMING = [("lact", 1, 4, 384, 32768, 2048), ("heads", 8, 16, 64, 8192, 64)]
TINY_TIMING = [("lact", 1, 2, 16, 200, 64)]


#===------------------------------------------------------------------------===#
# Shared by both halves
#===------------------------------------------------------------------------===#

def operand_specs(model: str, lr: bool, momentum: bool, H: int, D: int):
    """The layer function's operands in order, as (name, shape with "B" and
    "T" left symbolic, low, high) of a uniform distribution; q, k, v and the
    weights as in the tests (weights scaled by 1/sqrt(rows))."""
    scale = 1 / float(np.sqrt(D))
    specs = [(name, ["B", H, "T", D], -1.0, 1.0) for name in ("q", "k", "v")]
    specs += [(f"w{i}", [H, D, D], -scale, scale)
              for i in range(3 if model == "swiglu" else 1)]
    if lr:
        specs.append(("lr", ["B", H, "T", 1], 0.01, 0.2))
    if momentum:
        specs.append(("momentum", ["B", H, "T"], 0.01, 0.5))
    return specs


def make_inputs(specs, B: int, T: int, seed: int):
    rng = np.random.default_rng(seed)
    arrays = []
    for _, shape, low, high in specs:
        dims = [B if d == "B" else T if d == "T" else d for d in shape]
        arrays.append(rng.uniform(low, high, size=dims).astype(np.float32))
    return arrays


def relative_error(got, want) -> float:
    """max |got - want| / max |want|; inf when got is not finite."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return float("inf")
    scale = max(float(np.max(np.abs(want))), 1e-30)
    return float(np.max(np.abs(got - want))) / scale


#===------------------------------------------------------------------------===#
# prepare
#===------------------------------------------------------------------------===#

def _tool(build: Path, name: str) -> str:
    path = build / "bin" / name
    if not path.exists():
        sys.exit(f"gpu_check prepare: {path} is missing; build first (make build)")
    return str(path)


def _llvm_tool(name: str) -> str:
    for candidate in (Path("/usr/lib/llvm-22/bin") / name, shutil.which(name)):
        if candidate and Path(candidate).exists():
            return str(candidate)
    sys.exit(f"gpu_check prepare: {name} (LLVM 22) not found")


def _run(cmd, what: str, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode:
        lines = proc.stderr.strip().splitlines() or ["(no message)"]
        raise RuntimeError(f"{what} failed: {lines[-1]}")
    return proc.stdout


class Compiler:
    def __init__(self, build: Path, out: Path, emulate: bool, toolkit: str):
        self.opt = _tool(build, "ttt-opt")
        self.ttt_run = _tool(build, "ttt-run")
        self.translate = _llvm_tool("mlir-translate")
        self.llc = _llvm_tool("llc")
        self.cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
        self.out = out
        self.emulate = emulate
        self.toolkit = toolkit
        self.runtimes = []
        for name in ("libttt_cuda_runtime.so", "libttt_cpu_runtime.so"):
            source = build / "lib" / name
            if not source.exists():
                sys.exit(f"gpu_check prepare: {source} is missing; build first")
            shutil.copy2(source, out / name)
            self.runtimes.append(name)

    def gpu_options(self, precision: str, contractions: str) -> str:
        options = f"precision={precision} contractions={contractions}"
        if self.emulate:
            return f"emulate=true {options}"
        options = f"format=fatbin {options}"
        return options + (f" toolkit={self.toolkit}" if self.toolkit else "")

    def shared_object(self, source: Path, precision: str, contractions: str, stem: str) -> str:
        """`source` (MLIR with ttt/linattn ops) as stem.so; returns its name."""
        work = self.out / "work"
        llvm_mlir, ll, obj = (work / f"{stem}{s}" for s in (".llvm.mlir", ".ll", ".o"))
        _run([self.opt, source, "--llvm-request-c-wrappers",
              f"--ttt-to-gpu={self.gpu_options(precision, contractions)}", "-o", llvm_mlir],
             f"ttt-opt --ttt-to-gpu ({stem})", timeout=1800)
        _run([self.translate, "--mlir-to-llvmir", llvm_mlir, "-o", ll],
             f"mlir-translate ({stem})", timeout=600)
        _run([self.llc, "-O3", "-filetype=obj", "--relocation-model=pic", ll, "-o", obj],
             f"llc ({stem})", timeout=600)
        libs = [f"-l{name[3:-3]}" for name in self.runtimes]
        if self.emulate and "bfloat" in ll.read_text():
            # Host code with bf16 roundings (emulated kernels) calls
            # __truncsfbf2, which GCC 12's libgcc lacks; MLIR's own runtime
            # library has it. Emulated packs only run here.
            libs += [f"-L{FLOAT16_UTILS.parent}", "-lmlir_float16_utils",
                     f"-Wl,-rpath,{FLOAT16_UTILS.parent}"]
        _run([self.cc, "-shared", "-o", self.out / f"{stem}.so", obj, f"-L{self.out}", *libs,
              "-Wl,-rpath,$ORIGIN"], f"linking {stem}.so", timeout=300)
        for path in (llvm_mlir, ll, obj):
            path.unlink()
        return f"{stem}.so"


def _layer_forms(compiler: Compiler, cfg, specs, stem: str):
    """The recurrent and parallel MLIR files of the layer."""
    sys.path.insert(0, str(REPO / "test" / "python"))
    import ttt_mlir

    arrays = make_inputs(specs, 1, cfg["chunk"], 0)
    ops = ttt_mlir.kvb_operands(
        cfg, *arrays[:3], [a for (n, *_), a in zip(specs, arrays) if n.startswith("w")],
        **{n: a for (n, *_), a in zip(specs, arrays) if n in ("lr", "momentum")})
    assert [n for n, _ in ops] == [s[0] for s in specs]
    text = ttt_mlir.kvb_layer_function(cfg, ops, name=ENTRY, return_weights=False)
    work = compiler.out / "work"
    recurrent = work / f"{stem}_recurrent.mlir"
    recurrent.write_text(_run([compiler.opt, "-", "--ttt-simplify"], "ttt-opt --ttt-simplify",
                              input=text, timeout=300))
    parallel = work / f"{stem}_parallel.mlir"
    parallel.write_text(_run([compiler.opt, recurrent, "--ttt-to-linattn"],
                             "ttt-opt --ttt-to-linattn", timeout=300))
    if "linattn." not in parallel.read_text():
        raise RuntimeError(f"{stem}: ttt-to-linattn left the layer alone")
    return recurrent, parallel


def prepare(args) -> int:
    sys.path.insert(0, str(REPO / "bench"))
    from cpu_bench import VARIANTS
    from cpu_compare import layer_flops

    out = args.out
    if out.exists():
        shutil.rmtree(out)
    (out / "work").mkdir(parents=True)
    compiler = Compiler(args.build_dir, out, args.emulate, args.toolkit)
    check = TINY_CHECK if args.tiny else CHECK
    timing = TINY_TIMING if args.tiny else TIMING
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    manifest = {"emulated": args.emulate, "entry": f"_mlir_ciface_{ENTRY}",
                "runtimes": compiler.runtimes, "layers": []}
    jobs = []
    for name in names:
        base = VARIANTS[name]
        for config, B, H, D, T, C in [check, *timing]:
            cfg = dict(base, chunk=C)
            specs = operand_specs(cfg["model"], bool(cfg.get("_lr")),
                                  bool(cfg.get("_momentum")), H, D)
            stem = f"{name}_{config}"
            recurrent, parallel = _layer_forms(compiler, cfg, specs, stem)
            entry = {"variant": name, "config": config, "B": B, "H": H, "D": D, "T": T,
                     "C": C, "operands": specs, "flops": B * layer_flops(name, H, D, T, C),
                     "programs": {}}
            # (key, source, precision, contractions): fp32 GEMMs as
            # generated kernels and through cuBLAS; bf16 ones are kernels.
            forms = [("recurrent_fp32", recurrent, "fp32", "kernels"),
                     ("parallel_fp32", parallel, "fp32", "kernels"),
                     ("parallel_fp32_cublas", parallel, "fp32", "cublas"),
                     ("parallel_tf32_cublas", parallel, "tf32", "cublas"),
                     ("parallel_bf16", parallel, "bf16", "kernels")]
            for key, source, precision, contractions in forms:
                entry["programs"][key] = f"{stem}_{key}.so"
                jobs.append((source, precision, contractions, f"{stem}_{key}"))
            if config == "check":
                arrays = make_inputs(specs, B, T, seed=1)
                np.savez(out / f"{stem}_inputs.npz",
                         **{f"arg{i}": a for i, a in enumerate(arrays)})
                _run([compiler.ttt_run, recurrent, f"--inputs={out / f'{stem}_inputs.npz'}",
                      f"--outputs={out / f'{stem}_reference.npy'}", "--ttt-form=recurrent",
                      "--print-results=false"], f"ttt-run (CPU reference of {stem})",
                     timeout=1800)
                entry["inputs"] = f"{stem}_inputs.npz"
                entry["reference"] = f"{stem}_reference.npy"
            manifest["layers"].append(entry)
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name in pool.map(lambda job: compiler.shared_object(*job), jobs):
            print(f"gpu_check prepare: {name}", flush=True)
    shutil.rmtree(out / "work")
    shutil.copy2(Path(__file__), out / "gpu_check.py")
    layers_py = REPO / "python" / "ttt" / "models" / "layers.py"
    shutil.copy2(layers_py, out / "torch_layers.py")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"gpu_check prepare: {len(jobs)} programs in {time.monotonic() - start:.0f} s, "
          f"{size / 2**20:.1f} MiB in {out}")
    if size > args.max_mib * 2**20:
        print(f"gpu_check prepare: error: {out} is over {args.max_mib} MiB", file=sys.stderr)
        return 1
    return 0


#===------------------------------------------------------------------------===#
# run
#===------------------------------------------------------------------------===#

def _descriptor_type(rank: int):
    """The C struct of a ranked memref descriptor (MLIR's C interface)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


class Program:
    """One compiled layer: f(arrays) -> (output array, seconds of the call)."""

    def __init__(self, path: Path, entry: str, free):
        self.lib = ctypes.CDLL(str(path))
        self.function = getattr(self.lib, entry)
        self.function.restype = None
        # Results come from the allocator the program was compiled for: the
        # runtime's device-accessible memory, or malloc when emulated.
        self.free = free
        self.free.argtypes = [ctypes.c_void_p]
        self.free.restype = None

    def __call__(self, arrays, out_rank: int = 4):
        arrays = [np.ascontiguousarray(a, dtype=np.float32) for a in arrays]
        descriptors = []
        for a in arrays:
            d = _descriptor_type(a.ndim)()
            d.allocated = d.aligned = a.ctypes.data
            d.offset = 0
            if a.ndim:
                d.sizes[:] = a.shape
                d.strides[:] = [s // a.itemsize for s in a.strides]
            descriptors.append(d)
        result = _descriptor_type(out_rank)()
        start = time.perf_counter()
        self.function(ctypes.byref(result), *[ctypes.byref(d) for d in descriptors])
        seconds = time.perf_counter() - start
        # The result may be a strided view (of a buffer padded to whole
        # chunks, say): read it through its sizes and strides.
        shape = tuple(result.sizes)
        strides = tuple(result.strides)
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
        base = ctypes.cast(result.aligned, ctypes.POINTER(ctypes.c_float))
        flat = np.ctypeslib.as_array(base, shape=(result.offset + max(extent, 1),))
        output = np.lib.stride_tricks.as_strided(
            flat[result.offset:], shape=shape, strides=[4 * s for s in strides]).copy()
        self.free(result.allocated)
        return output, seconds


class Counters(ctypes.Structure):
    """TTTCudaCounters (include/ttt/Runtime/CudaRuntime.h)."""
    _fields_ = [("launches", ctypes.c_uint64), ("gemms", ctypes.c_uint64),
                ("hostGemms", ctypes.c_uint64), ("waitSeconds", ctypes.c_double),
                ("cachedBuffers", ctypes.c_uint64), ("newBuffers", ctypes.c_uint64),
                ("newBytes", ctypes.c_uint64)]


def ms(x) -> str:
    """Seconds as milliseconds, or the text that stands for a time."""
    return f"{x * 1e3:.2f}" if isinstance(x, float) else (x or "—")


def take_counters(runtime) -> Counters:
    counters = Counters()
    runtime.tttCudaTakeCounters(ctypes.byref(counters))
    return counters


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

    def verdict(self, what: str, err: float, limit: float) -> None:
        ok = err <= limit
        self.failures += not ok
        self.say(f"- {'ok  ' if ok else 'FAIL'} {what}: relative error {err:.3g} "
                 f"(limit {limit:g})")


#===------------------------------------------------------------------------===#
# The PyTorch side, in child processes
#===------------------------------------------------------------------------===#
#
# PyTorch runs in a process of its own: a crash there (torch.compile died with
# SIGSEGV on the first H200 run) costs one cell of the table, not the check,
# and torch's CUDA state never meets the ahead-of-time programs'. The parent
# hands a child its remaining jobs ("ceilings", "eager:<layer>",
# "compiled:<layer>"); the child answers one JSON line per job, announcing
# each before it starts, so that the parent knows which job a crash belongs
# to and starts a new child for the rest.

def _torch_layer(layers, variant: str, H: int, D: int, C: int):
    if variant == "MSE":
        return layers.PlainLinear(H, D, D, loss="mse", chunk=C, lr_scale=0.01)
    n = {"V2": 2, "V5": 5, "V6": 6}[variant]
    return layers.lact_variant(n, heads=H, d=D, d_hidden=D, chunk=C)


def _median_seconds(fn, repeat: int, sync=lambda: None) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _ceilings(torch) -> dict:
    """TFLOP/s of a bf16 and an fp32 GEMM, GB/s of a device copy."""
    sync = torch.cuda.synchronize
    n = 8192
    out = {}
    for label, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        seconds = _median_seconds(lambda: a @ a, 5, sync)
        out[label] = 2 * n ** 3 / seconds / 1e12
    x = torch.randn(2**28, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    seconds = _median_seconds(lambda: y.copy_(x), 5, sync)
    out["copy"] = 2 * x.numel() * 4 / seconds / 1e9
    out["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    return out


def _torch_seconds(torch, layers, entry, mode: str, repeat: int) -> float:
    """Median seconds of the reference layer on the GPU, eager or compiled,
    on the inputs the ttt programs were timed with."""
    layer = _torch_layer(layers, entry["variant"], entry["H"], entry["D"], entry["C"])
    layer = layer.eval().cuda()
    shapes = layer.input_shapes(entry["B"], entry["T"])
    arrays = make_inputs(entry["operands"], entry["B"], entry["T"], seed=2)
    named = {spec[0]: a for spec, a in zip(entry["operands"], arrays)}
    feeds = []
    for name in layer.input_names:
        a = named.get(name)
        if a is None or tuple(a.shape) != tuple(shapes[name]):
            a = np.random.default_rng(3).uniform(0.01, 0.2, shapes[name]).astype(np.float32)
        feeds.append(torch.from_numpy(a).cuda())
    fn = torch.compile(layer) if mode == "compiled" else layer
    with torch.no_grad():
        return _median_seconds(lambda: fn(*feeds), repeat, torch.cuda.synchronize)


def torch_worker(args) -> int:
    """The child: runs args.jobs in order, one JSON line per job on stdout."""
    import faulthandler
    faulthandler.enable()  # a crash prints the Python stack to stderr

    def answer(**record):
        print(json.dumps(record), flush=True)

    try:
        import torch
        if not torch.cuda.is_available():
            answer(unavailable="PyTorch sees no GPU")
            return 0
    except Exception as error:  # noqa: BLE001 - reported, then skipped
        answer(unavailable=f"PyTorch unavailable ({error})")
        return 0
    manifest = json.loads((args.pack / "manifest.json").read_text())
    deadline = time.monotonic() + args.budget
    layers = None
    for job in args.jobs.split(","):
        answer(job=job, started=True)
        kind, _, index = job.partition(":")
        try:
            if kind == "ceilings":
                answer(job=job, value=_ceilings(torch))
                continue
            if kind == "compiled" and time.monotonic() > deadline - 60:
                answer(job=job, error="skipped: under a minute left")
                continue
            if layers is None:
                import importlib.util
                spec = importlib.util.spec_from_file_location(
                    "torch_layers", args.pack / "torch_layers.py")
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                layers = module
            entry = manifest["layers"][int(index)]
            answer(job=job, value=_torch_seconds(torch, layers, entry, kind, args.repeat))
        except Exception as error:  # noqa: BLE001 - reported in the table
            answer(job=job, error=f"failed: {(str(error).splitlines() or ['?'])[0][:80]}")
    return 0


def _signal_name(status: int) -> str:
    if status < 0:
        import signal
        try:
            return signal.Signals(-status).name
        except ValueError:
            return f"signal {-status}"
    return f"exit status {status}"


def torch_results(pack: Path, jobs: list[str], repeat: int, deadline: float):
    """{job: value or error text} from as many children as crashes need, and
    why PyTorch is missing (None when it ran)."""
    results = {}
    while jobs and time.monotonic() < deadline:
        left = deadline - time.monotonic()
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "torch-worker", str(pack),
             "--jobs", ",".join(jobs), "--repeat", str(repeat), "--budget", f"{left:.0f}"],
            stdout=subprocess.PIPE, text=True)
        # A hung child is killed at the deadline (bench/gpu_check.sh kills
        # this process 30 s after it); its job counts as crashed.
        watchdog = threading.Timer(left + 10, child.kill)
        watchdog.start()
        current = None
        try:
            for line in child.stdout:
                record = json.loads(line)
                if "unavailable" in record:
                    child.wait()
                    return results, record["unavailable"]
                if record.get("started"):
                    current = record["job"]
                    continue
                results[record["job"]] = record.get("value", record.get("error"))
                jobs.remove(record["job"])
                current = None
            status = child.wait()
        finally:
            watchdog.cancel()
        if status == -9 and time.monotonic() > deadline:
            status_text = "killed at the deadline"
        else:
            status_text = _signal_name(status)
        if current is None:
            if jobs:  # the child ended without starting its next job
                return results, f"the PyTorch process ended early ({status_text})"
            break
        results[current] = f"crashed ({status_text})"
        jobs.remove(current)
    for job in jobs:
        results[job] = "skipped: out of time"
    return results, None


def run(args) -> int:
    pack = args.pack.resolve()
    try:
        manifest = json.loads((pack / "manifest.json").read_text())
    except (OSError, ValueError) as error:
        sys.exit(f"gpu_check run: error: {pack}: not a prepared pack ({error})")
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
    report = Report(args.report)
    deadline = time.monotonic() + args.budget
    emulated = manifest["emulated"]
    report.say("# ttt GPU check (ahead-of-time programs)")
    report.say("")
    report.say(f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}")
    report.say(f"- host: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs)")
    report.say(f"- programs: {'EMULATED on the host (no GPU)' if emulated else 'CUDA fatbinary'}"
               f", {pack}")
    # The runtime first, alone: it says why there is no device before any
    # program's constructor tries to load its kernels.
    runtime = ctypes.CDLL(str(pack / "libttt_cuda_runtime.so"), mode=ctypes.RTLD_GLOBAL)
    message = ctypes.create_string_buffer(1024)
    if not emulated:
        if runtime.tttCudaProbe(message, 1024) != 0:
            report.say(f"- no GPU: {message.value.decode()}")
            report.say("")
            report.say("result: FAIL (no GPU to run on)")
            return 2
        runtime.tttCudaDescribeDevice(message, 1024)
        report.say(f"- device: {message.value.decode()}")
    fake = bool(os.environ.get("FAKE_CUDA_LOG")) or args.no_numerics
    if fake:
        report.say("- numerics: not compared (a fake driver: the programs load and launch their "
                   "kernels, but no kernel runs, so the times mean nothing either)")
    report.say(f"- PyTorch: {'not asked' if args.no_torch else 'in a process of its own'}")
    if "TTT_CUBLAS_LIBRARY" not in os.environ:
        # PyTorch's own cuBLAS, where the loader would not find one (found
        # without importing torch into this process).
        import importlib.util
        spec = None if args.no_torch else importlib.util.find_spec("torch")
        if spec and spec.origin:
            found = sorted(Path(spec.origin).parents[1].glob("nvidia/cu*/lib/libcublas.so*"))
            if found:
                os.environ["TTT_CUBLAS_LIBRARY"] = str(found[-1])
    cublas = runtime.ttt_cublas_available()
    report.say(f"- cuBLAS: {'yes' if cublas else 'no (the cuBLAS programs run their kernels)'}"
               f" ({os.environ.get('TTT_CUBLAS_LIBRARY') or 'the usual sonames'})")
    report.say("")
    entry_name = manifest["entry"]

    free = (ctypes.CDLL(None).free if emulated else runtime._mlir_memref_to_llvm_free)

    def program(entry, key):
        return Program(pack / entry["programs"][key], entry_name, free)

    report.say("## Numerics (relative error = max |got - ref| / max |ref|)")
    report.say("")
    for entry in (e for e in manifest["layers"] if "reference" in e):
        with np.load(pack / entry["inputs"]) as data:
            arrays = [data[f"arg{i}"] for i in range(len(data.files))]
        reference = np.load(pack / entry["reference"])
        where = (f"{entry['variant']} B={entry['B']} H={entry['H']} D={entry['D']} "
                 f"T={entry['T']} C={entry['C']}")
        for key, limit in (("parallel_fp32", FP32_RTOL), ("parallel_fp32_cublas", FP32_RTOL),
                           ("parallel_tf32_cublas", TF32_RTOL), ("parallel_bf16", BF16_RTOL),
                           ("recurrent_fp32", FP32_RTOL)):
            got, _ = program(entry, key)(arrays)
            what = f"{where}: {key.replace('_', ' ')} vs CPU recurrent reference"
            if fake:
                report.say(f"- ran  {what}: not compared (fake driver: no kernel ran)")
                continue
            report.verdict(what, relative_error(got, reference), limit)
    report.say("")
    rows = []
    costs = []  # (program, median seconds, counters of the timed calls, their number)
    # Every variant at the shape with fewest chunks first; out of time, the
    # long ones are skipped. PyTorch gets the last 30% of the budget.
    timed = sorted((e for e in manifest["layers"] if "reference" not in e),
                   key=lambda e: e["T"] // e["C"])
    ttt_deadline = deadline - (0 if args.no_torch else 0.3 * args.budget)
    report.say(f"## Speed (median of {args.repeat} calls, each with its copies in and out)")
    report.say("")
    # One row per layer as soon as it is measured: a run stopped at its
    # deadline keeps what it measured.
    report.say("| layer | ttt recurrent ms | ttt parallel ms | parallel, cuBLAS ms | parallel, "
               "cuBLAS TF32 ms | parallel bf16 ms | speed-up (best fp32 parallel) | "
               "TFLOP/s (best fp32 parallel) | parallel vs recurrent, both on the GPU "
               f"(fp32 / cuBLAS, limit {CONSISTENCY_RTOL:g}) |")
    report.say("|---|---|---|---|---|---|---|---|---|")
    skipped = []
    short = []  # programs timed fewer than --repeat times, for the time left
    for entry in timed:
        where = (f"{entry['variant']} B={entry['B']} H={entry['H']} D={entry['D']} "
                 f"T={entry['T']} C={entry['C']}")
        if time.monotonic() > ttt_deadline:
            skipped.append(where)
            continue
        specs = entry["operands"]
        arrays = make_inputs(specs, entry["B"], entry["T"], seed=2)
        row = {"where": where}
        outputs = {}
        for key in ("recurrent_fp32", "parallel_fp32", "parallel_fp32_cublas",
                    "parallel_tf32_cublas", "parallel_bf16"):
            prog = program(entry, key)
            outputs[key], first = prog(arrays)
            # As many timed calls as the time left allows, by the first call
            # (the slowest: it loads the kernels), but at least one.
            left = ttt_deadline - time.monotonic()
            calls = max(1, min(args.repeat, int(left / max(first, 1e-6))))
            if calls < args.repeat:
                short.append(f"{where} {key.replace('_', ' ')}: {calls}")
            take_counters(runtime)
            row[key] = statistics.median(prog(arrays)[1] for _ in range(calls))
            costs.append((f"{where} {key.replace('_', ' ')}", row[key],
                          take_counters(runtime), calls))
        agreement = "not compared (fake driver)"
        if not fake:
            errors = [relative_error(outputs[key], outputs["recurrent_fp32"])
                      for key in ("parallel_fp32", "parallel_fp32_cublas")]
            bad = sum(err > CONSISTENCY_RTOL for err in errors)
            report.failures += bad
            agreement = (f"{errors[0]:.3g} / {errors[1]:.3g} "
                         f"{'ok' if not bad else 'FAIL'}")
        best = min(row["parallel_fp32"], row["parallel_fp32_cublas"])
        row["best"] = best
        report.say(f"| {where} | {ms(row['recurrent_fp32'])} | {ms(row['parallel_fp32'])}"
                   f" | {ms(row['parallel_fp32_cublas'])} | {ms(row['parallel_tf32_cublas'])} | "
                   f"{ms(row['parallel_bf16'])} | {row['recurrent_fp32'] / best:.2f}x | "
                   f"{entry['flops'] / best / 1e12:.3g} | {agreement} |")
        row["index"] = manifest["layers"].index(entry)
        row["chunks"] = -(-entry["T"] // entry["C"])
        rows.append(row)
    for where in skipped:
        report.say(f"- {where}: skipped (out of time)")
    if short:
        report.say(f"- timed fewer than {args.repeat} times, for the time left (calls): "
                   + "; ".join(short))
    report.say("")
    report.say("TFLOP/s counts each layer's useful products once.")
    if costs and not emulated:
        report.say("")
        report.say("Where a ttt call's time goes (the runtime's counters over the timed "
                   "calls, per call; waiting = host time in cuStreamSynchronize and "
                   "cuCtxSynchronize, so kernels, copies of the arguments and page "
                   "migrations of managed memory):")
        report.say("")
        report.say("| program | ms | kernel launches | cuBLAS GEMMs | host GEMMs | ms waiting | "
                   "buffers reused | buffers new | new MiB |")
        report.say("|---|---|---|---|---|---|---|---|---|")
        for what, seconds, c, n in costs:
            report.say(f"| {what} | {seconds * 1e3:.2f} | {c.launches / n:.0f} | {c.gemms / n:.0f}"
                       f" | {c.hostGemms / n:.0f} | {c.waitSeconds / n * 1e3:.2f} | "
                       f"{c.cachedBuffers / n:.0f} | {c.newBuffers / n:.0f} | "
                       f"{c.newBytes / n / 2**20:.1f} |")

    if not args.no_torch and rows:
        report.say("")
        report.say("## PyTorch on the same GPU (python/ttt/models, inputs already on the device)")
        report.say("")
        # Every layer's eager time before any torch.compile (compiling takes
        # the longest, and may crash). Compiling traces the chunk loop
        # unrolled: fewest chunks first.
        by_chunks = sorted(rows, key=lambda row: row["chunks"])
        jobs = (["ceilings"] + [f"eager:{row['index']}" for row in rows]
                + [f"compiled:{row['index']}" for row in by_chunks])
        results, why = torch_results(pack, jobs, args.repeat, deadline)
        if why:
            report.say(f"- PyTorch: {why}")
        ceilings = results.get("ceilings")
        if isinstance(ceilings, dict):
            report.say(f"ceilings (PyTorch, this run): bf16 GEMM {ceilings['bf16']:.0f} "
                       f"TFLOP/s, fp32 GEMM {ceilings['fp32']:.1f} TFLOP/s (TF32 "
                       f"{ceilings['tf32']}), device copy {ceilings['copy']:.0f} GB/s")
        elif ceilings:
            report.say(f"- ceilings: {ceilings}")
        report.say("")
        report.say("| layer | PyTorch eager ms | torch.compile ms | best ttt fp32 parallel / eager |")
        report.say("|---|---|---|---|")
        for row in rows:
            eager = results.get(f"eager:{row['index']}")
            compiled = results.get(f"compiled:{row['index']}")
            ratio = f"{row['best'] / eager:.1f}x" if isinstance(eager, float) else "—"
            report.say(f"| {row['where']} | {ms(eager)} | {ms(compiled)} | {ratio} |")
    report.say("")
    report.say(f"result: {'PASS' if report.failures == 0 else f'FAIL ({report.failures} failed)'}")
    return 0 if report.failures == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="compile every program and write the pack (here)")
    p.add_argument("--out", type=Path, default=REPO / "build" / "gpu_pack")
    p.add_argument("--build-dir", type=Path, default=REPO / "build")
    p.add_argument("--variants", default="V2,V5,V6,MSE")
    p.add_argument("--emulate", action="store_true",
                   help="kernels run on the host (ttt-to-gpu emulate=true): no GPU needed")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (tests of this script)")
    p.add_argument("--toolkit", default=os.environ.get("CUDA_HOME", ""),
                   help="CUDA toolkit for ptxas/fatbinary/libdevice (default $CUDA_HOME)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--max-mib", type=float, default=48,
                   help="fail when the pack is larger (default 48 MiB)")
    r = sub.add_parser("run", help="run a prepared pack (on the GPU machine)")
    r.add_argument("pack", type=Path)
    r.add_argument("--report", type=Path, help="write the report here too")
    r.add_argument("--repeat", type=int, default=5)
    r.add_argument("--budget", type=float, default=300,
                   help="seconds after which no further timing starts (default 300)")
    r.add_argument("--no-torch", action="store_true", help="skip the PyTorch comparisons")
    r.add_argument("--no-numerics", action="store_true",
                   help="run every program but compare nothing (a fake driver)")
    w = sub.add_parser("torch-worker", help="(internal) the PyTorch side of run, in a child")
    w.add_argument("pack", type=Path)
    w.add_argument("--jobs", required=True)
    w.add_argument("--repeat", type=int, default=5)
    w.add_argument("--budget", type=float, default=300)
    args = parser.parse_args()
    return {"prepare": prepare, "run": run, "torch-worker": torch_worker}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
