"""The GPU runtime (libttt_cuda_runtime.so) and `ttt-run --device=cuda`
without a GPU.

- The library loads everywhere (no link-time dependency on libcuda) and says
  clearly why there is no device.
- `ttt-run --device=cuda` fails with one line on a machine without a driver.
- With a fake driver (test/GPU/fake_libcuda.c, which accepts modules and
  launches but runs no kernel), the host side of a compiled layer runs end to
  end: the kernels' binary is loaded once, every launch has sane dimensions,
  results come back and are freed, and driver errors become one line.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ttt_mlir
from compiler import REPO, build_dir, run_opt, tool
from oracle import ttt_oracle as oracle
from test_recurrent import make_case

RUNTIME = build_dir() / "lib" / "libttt_cuda_runtime.so"
FAKE_DRIVER_SOURCE = REPO / "test" / "GPU" / "fake_libcuda.c"
FAKE_CUBLAS_SOURCE = REPO / "test" / "GPU" / "fake_libcublas.c"
CUDA_STUB = Path("/usr/local/cuda/lib64/stubs/libcuda.so")


def probe(env=None):
    """tttCudaProbe in a fresh process (the runtime keeps its first answer)."""
    code = ("import ctypes, sys\n"
            "lib = ctypes.CDLL(sys.argv[1])\n"
            "buf = ctypes.create_string_buffer(1024)\n"
            "rc = lib.tttCudaProbe(buf, 1024)\n"
            "print(rc, buf.value.decode())\n")
    proc = subprocess.run([sys.executable, "-c", code, str(RUNTIME)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rc, _, message = proc.stdout.strip().partition(" ")
    return int(rc), message


def libcuda_loadable():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def runtime():
    if not RUNTIME.exists():
        pytest.skip(f"{RUNTIME} is missing; build the project first")
    return RUNTIME


def test_runtime_has_no_link_dependency_on_libcuda(runtime):
    readelf = shutil.which("readelf")
    if not readelf:
        pytest.skip("no readelf")
    dynamic = subprocess.run([readelf, "-d", str(runtime)], capture_output=True, text=True,
                             check=True).stdout
    needed = [line for line in dynamic.splitlines() if "NEEDED" in line]
    assert needed and not any("libcuda" in line for line in needed), needed
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(runtime)], capture_output=True,
                             text=True).stdout if shutil.which("nm") else ""
    for name in ["mgpuModuleLoad", "mgpuModuleLoadJIT", "mgpuModuleGetFunction",
                 "mgpuLaunchKernel", "mgpuStreamCreate", "mgpuStreamSynchronize",
                 "mgpuStreamDestroy", "mgpuEventCreate", "mgpuMemAlloc", "mgpuMemFree",
                 "mgpuMemcpy", "mgpuMemset32", "mgpuMemset16", "mgpuMemHostRegisterMemRef",
                 "_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free", "tttCudaProbe"]:
        if symbols:
            assert f" T {name}\n" in symbols + "\n", name


def test_probe_without_driver(runtime, tmp_path):
    rc, message = probe({"TTT_CUDA_DRIVER": str(tmp_path / "libcuda.so.1")})
    assert rc == 1
    assert message == f"{tmp_path / 'libcuda.so.1'}: cannot open shared object file: No such file or directory"


@pytest.mark.skipif(not CUDA_STUB.exists(), reason="no CUDA stub library")
def test_probe_with_stub_driver(runtime):
    rc, message = probe({"TTT_CUDA_DRIVER": str(CUDA_STUB)})
    assert rc == 1
    assert message.startswith("cuInit: CUDA_ERROR_STUB_LIBRARY"), message


@pytest.mark.skipif(libcuda_loadable(), reason="this machine has a CUDA driver")
def test_ttt_run_without_gpu_is_one_line(tmp_path):
    src = tmp_path / "f.mlir"
    src.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                   "  return %a : tensor<4xf32>\n}\n")
    env = {k: v for k, v in os.environ.items() if k != "TTT_CUDA_DRIVER"}
    proc = subprocess.run([str(tool("ttt-run")), str(src), "--device=cuda", "--random-inputs=1"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == ("ttt-run: error: --device=cuda: no CUDA driver/GPU found "
                           "(libcuda.so.1: cannot open shared object file: No such file or "
                           "directory)\n")


#===------------------------------------------------------------------------===#
# A fake driver: the host side end to end
#===------------------------------------------------------------------------===#

def compile_fake(source: Path, out: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip(f"no C compiler for {source.name}")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(source)], check=True)
    return out


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory, runtime):
    return compile_fake(FAKE_DRIVER_SOURCE, tmp_path_factory.mktemp("fake") / "libcuda.so.1")


LACT = dict(model="swiglu", trained=[0, 1, 2], loss="dot", chunk=8, order="apply_then_update",
            ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), weight_norm="output_channels",
            _momentum=True)


@pytest.fixture(scope="module")
def v2_layer(tmp_path_factory):
    q, k, v, weights, extra = make_case(LACT, seed=5, T=37, hidden=8, lr_columns=3)
    operands = ttt_mlir.kvb_operands(LACT, q, k, v, weights, **extra)
    text = ttt_mlir.kvb_layer_function(LACT, operands, return_weights=False)
    text = run_opt(text, "--ttt-simplify=freeze-inner drop-weight-norm", "--ttt-to-linattn")
    workdir = tmp_path_factory.mktemp("v2")
    (workdir / "v2.mlir").write_text(text)
    np.savez(workdir / "in.npz", **{f"arg{i}": a for i, (_, a) in enumerate(operands)})
    return workdir


def run_fake(fake_driver, workdir, *args, fail=None):
    log = workdir / "driver.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "TTT_CUDA_DRIVER": str(fake_driver), "FAKE_CUDA_LOG": str(log)}
    env.pop("FAKE_CUDA_FAIL", None)
    if fail:
        env["FAKE_CUDA_FAIL"] = fail
    proc = subprocess.run([str(tool("ttt-run")), str(workdir / "v2.mlir"), "--device=cuda",
                           f"--inputs={workdir / 'in.npz'}", "--opt-level=0", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    lines = log.read_text().splitlines() if log.exists() else []
    return proc, lines


@pytest.mark.parametrize("fmt", ["isa", "fatbin"])
def test_host_side_runs_with_fake_driver(fmt, fake_driver, v2_layer):
    if fmt == "fatbin" and not (shutil.which("ptxas") or Path("/usr/local/cuda/bin/ptxas").exists()):
        pytest.skip("no ptxas")
    out = v2_layer / f"out_{fmt}.npy"
    proc, lines = run_fake(fake_driver, v2_layer, f"--gpu-options=format={fmt} toolkit=/usr/local/cuda"
                           if Path("/usr/local/cuda").exists() else f"--gpu-options=format={fmt}",
                           f"--outputs={out}", "--repeat=2")
    assert proc.returncode == 0, proc.stderr
    assert "ttt-run: device: Fake GPU (sm_90" in proc.stderr
    assert "median of 2 runs" in proc.stderr
    # One module with every kernel, loaded once, as PTX for the driver to
    # compile (isa) or as a fatbinary.
    loads = [line for line in lines if line.startswith("load ")]
    assert loads == [f"load {'ptx jit' if fmt == 'isa' else 'fatbin data'}"], loads
    launches = [line.split() for line in lines if line.startswith("launch ")]
    assert len(launches) > 20 and len(launches) % 2 == 0  # two runs, same launches
    for _, name, grid, block in launches:
        gx, gy, gz = map(int, grid.removeprefix("grid=").split(","))
        bx, by, bz = map(int, block.removeprefix("block=").split(","))
        assert name.startswith("layer_kernel")
        assert gx >= 1 and gy == gz == 1
        assert 1 <= bx * by * bz <= 1024 and bz == 1
    # Kernels did not run, but the result has the layer's shape.
    assert np.load(out).shape == (2, 2, 37, 8)


@pytest.fixture(scope="module")
def fake_cublas(tmp_path_factory, fake_driver):
    return compile_fake(FAKE_CUBLAS_SOURCE,
                        tmp_path_factory.mktemp("fake_cublas") / "libcublas.so")


def test_cublas_gemms_match_the_cpu(fake_driver, fake_cublas, v2_layer, tmp_path):
    # contractions=cublas with the kernels emulated on the host: each GEMM is
    # a ttt_cublas_sgemm call, which the fake cuBLAS computes on host memory
    # as cuBLAS defines it (column-major), so the runtime's mapping of the
    # row-major views is checked against the CPU pipeline's result. Without
    # a driver, ttt_cublas_available() is 0 and the generated kernels run.
    args = [str(tool("ttt-run")), str(v2_layer / "v2.mlir"), f"--inputs={v2_layer / 'in.npz'}"]
    cpu = tmp_path / "cpu.npy"
    subprocess.run([*args, f"--outputs={cpu}"], check=True, capture_output=True, timeout=300)
    log = tmp_path / "cublas.log"
    for name, env in [
            ("cublas", {"TTT_CUDA_DRIVER": str(fake_driver), "TTT_CUBLAS_LIBRARY": str(fake_cublas),
                        "FAKE_CUBLAS_LOG": str(log)}),
            ("fallback", {"TTT_CUDA_DRIVER": str(tmp_path / "none" / "libcuda.so.1")})]:
        out = tmp_path / f"{name}.npy"
        proc = subprocess.run([*args, "--device=cuda",
                               "--gpu-options=emulate=true contractions=cublas",
                               f"--outputs={out}"], capture_output=True, text=True,
                              env={**os.environ, **env}, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert ttt_mlir.relative_error(np.load(out), np.load(cpu)) <= 1e-5, name
    calls = log.read_text().splitlines()
    # Feature maps, chunk states and their application, Newton-Schulz: GEMMs
    # with transposed operands among them, overwriting C and accumulating.
    assert len(calls) > 20
    assert all(re.fullmatch(r"sgemm [NT] [NT] m=\d+ n=\d+ k=\d+ lda=\d+ ldb=\d+ ldc=\d+ "
                            r"beta=[01] math=fp32", c) for c in calls), calls[:3]
    assert any(" T " in c or c.startswith("sgemm T") for c in calls)
    assert {re.search(r"beta=(\d)", c).group(1) for c in calls} == {"0", "1"}


def test_cublas_tf32_sets_the_math_mode(fake_driver, fake_cublas, v2_layer, tmp_path):
    # precision=tf32 calls the TF32 entry point, which puts cuBLAS in its TF32
    # tensor-op math mode for every GEMM (the fake computes fp32 anyway).
    log = tmp_path / "cublas.log"
    out = tmp_path / "tf32.npy"
    env = {**os.environ, "TTT_CUDA_DRIVER": str(fake_driver),
           "TTT_CUBLAS_LIBRARY": str(fake_cublas), "FAKE_CUBLAS_LOG": str(log)}
    proc = subprocess.run([str(tool("ttt-run")), str(v2_layer / "v2.mlir"),
                           f"--inputs={v2_layer / 'in.npz'}", "--device=cuda",
                           "--gpu-options=emulate=true contractions=cublas precision=tf32",
                           f"--outputs={out}"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    assert calls and all(c.endswith(" math=tf32") for c in calls)


@pytest.mark.parametrize("function,what", [
    ("cuLaunchKernel", "cuLaunchKernel"),
    ("cuStreamSynchronize", "cuStreamSynchronize (a kernel failed)"),
    ("cuModuleLoadDataEx", "cuModuleLoadDataEx (PTX)"),
    ("cuMemAllocManaged", "cuMemAllocManaged"),
])
def test_driver_errors_are_one_line(function, what, fake_driver, v2_layer):
    out = v2_layer / "never.npy"
    proc, _ = run_fake(fake_driver, v2_layer, "--gpu-options=format=isa", f"--outputs={out}",
                       fail=function)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"ttt-run: error: {v2_layer / 'v2.mlir'}: --device=cuda: {what}: "
                               "CUDA_ERROR_LAUNCH_FAILED"), lines[0]
    assert not out.exists()


#===------------------------------------------------------------------------===#
# bench/gpu_check.sh and gpu_check.py without a GPU
#===------------------------------------------------------------------------===#

def test_gpu_check_stops_without_gpu(tmp_path):
    env = {**os.environ, "TTT_CUDA_DRIVER": str(tmp_path / "libcuda.so.1"),
           "BUILD_DIR": str(tmp_path / "never-built")}
    proc = subprocess.run(["bash", str(REPO / "bench" / "gpu_check.sh")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.startswith("gpu_check: no NVIDIA GPU found: cannot load the CUDA driver")
    assert "nothing to check on this machine" in proc.stdout
    assert not (tmp_path / "never-built").exists()


def _prepare(out, *args, env=None):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "prepare",
                           "--out", str(out), "--build-dir", str(build_dir()), "--tiny", *args],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((out / "manifest.json").read_text())


@pytest.mark.parametrize("gemms", ["kernels", "fake cuBLAS"])
def test_gpu_check_prepare_and_run_emulated(gemms, tmp_path, fake_driver, fake_cublas):
    # Both halves at a tiny shape with the kernels compiled for the host: the
    # ahead-of-time programs against the CPU recurrent reference (ttt-run).
    # The cuBLAS programs run their kernels without a driver, and call the
    # fake cuBLAS (a host GEMM, cuBLAS's column-major definition) with one.
    pack = tmp_path / "pack"
    manifest = _prepare(pack, "--emulate", "--variants", "V2,MSE")
    assert manifest["emulated"] and [e["variant"] for e in manifest["layers"]] == ["V2"] * 2 + ["MSE"] * 2
    report = tmp_path / "report.md"
    log = tmp_path / "cublas.log"
    env = ({"TTT_CUDA_DRIVER": str(tmp_path / "none" / "libcuda.so.1")} if gemms == "kernels" else
           {"TTT_CUDA_DRIVER": str(fake_driver), "TTT_CUBLAS_LIBRARY": str(fake_cublas),
            "FAKE_CUBLAS_LOG": str(log)})
    proc = subprocess.run([sys.executable, str(pack / "gpu_check.py"), "run", str(pack),
                           "--no-torch", "--repeat", "1", "--report", str(report)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **env})
    text = report.read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == text.strip()
    assert "programs: EMULATED on the host" in text
    assert f"- cuBLAS: {'no' if gemms == 'kernels' else 'yes'}" in text
    for variant in ("V2", "MSE"):
        for what in ("parallel fp32", "parallel fp32 cublas", "parallel tf32 cublas",
                     "parallel bf16", "recurrent fp32"):
            assert f"- ok   {variant} B=2 H=1 D=8 T=37 C=16: {what} vs CPU recurrent reference" in text
        # The timing row ends with parallel (kernels / cuBLAS) vs recurrent.
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| {variant} B=1 H=2 D=16 T=200 C=64 |"))
        assert re.search(r"\| \S+ / \S+ ok \|$", row), row
    assert text.rstrip().endswith("result: PASS")
    assert log.exists() == (gemms != "kernels")


def test_gpu_check_run_fails_on_wrong_numbers(tmp_path):
    # The comparison can fail: a reference that is not the layer's output.
    pack = tmp_path / "pack"
    manifest = _prepare(pack, "--emulate", "--variants", "V6")
    reference = pack / manifest["layers"][0]["reference"]
    np.save(reference, np.load(reference) * 1.001)
    proc = subprocess.run([sys.executable, str(pack / "gpu_check.py"), "run", str(pack),
                           "--no-torch", "--repeat", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "- FAIL V6 B=2 H=1 D=8 T=37 C=16: parallel fp32 vs CPU recurrent reference" in proc.stdout
    # 1e-3 off: the three fp32 programs fail; tf32 (limit 4e-3) and bf16 (3e-2)
    # cannot tell.
    assert "- FAIL V6 B=2 H=1 D=8 T=37 C=16: recurrent fp32 vs" in proc.stdout
    assert "- ok   V6 B=2 H=1 D=8 T=37 C=16: parallel bf16 vs" in proc.stdout
    assert proc.stdout.rstrip().endswith("result: FAIL (3 failed)")


STACK_PROBE = """
import ctypes, json, sys, threading
from pathlib import Path
pack = Path(sys.argv[1])
sys.path.insert(0, str(pack))
import gpu_check
manifest = json.loads((pack / "manifest.json").read_text())
entry = next(e for e in manifest["layers"] if "reference" not in e)
runtime = ctypes.CDLL(str(pack / "libttt_cuda_runtime.so"), mode=ctypes.RTLD_GLOBAL)
program = gpu_check.Program(pack / entry["programs"]["recurrent_fp32"], manifest["entry"],
                            runtime._mlir_memref_to_llvm_free)
arrays = gpu_check.make_inputs(entry["operands"], 2, 300 * entry["C"], seed=0)
threading.stack_size(256 * 1024)
result = []
thread = threading.Thread(target=lambda: result.append(program(arrays)[0].shape))
thread.start()
thread.join()
print(result[0])
"""


def test_long_host_loops_of_launches_fit_a_small_stack(tmp_path, fake_driver):
    # The recurrent form's host loops launch kernels per stream and chunk:
    # here 4 streams x 300 chunks, about 10^4 launches. The argument array
    # of each launch lives on the stack; before ttt-gpu-launch-stack-scopes
    # freed it after each launch they all stayed until the function
    # returned (over 2 MiB here) and the call died with SIGSEGV on a
    # 256 KiB thread stack (and at 8 MiB on an H200 at B=8, H=16, T=8192).
    toolkit = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")
    if not ((toolkit / "bin" / "ptxas").exists() and (toolkit / "bin" / "fatbinary").exists()):
        pytest.skip(f"no CUDA toolkit (ptxas, fatbinary) under {toolkit}")
    pack = tmp_path / "pack"
    _prepare(pack, "--variants", "MSE", "--toolkit", str(toolkit))
    env = {**os.environ, "TTT_CUDA_DRIVER": str(fake_driver)}
    proc = subprocess.run([sys.executable, "-c", STACK_PROBE, str(pack)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "(2, 2, 19200, 16)", proc.stdout


FAKE_TORCH = """
import os, signal
def _crash(*args):
    os.kill(os.getpid(), signal.SIGSEGV)
class _Cuda:
    is_available = staticmethod(lambda: True)
    def __getattr__(self, name):  # every CUDA call dies, like a broken torch.compile
        _crash()
cuda = _Cuda()
def __getattr__(name):
    _crash()
"""


def test_gpu_check_survives_a_crashing_torch(tmp_path):
    # PyTorch runs in child processes: a crash there costs its job only. The
    # fake torch claims a GPU, then dies with SIGSEGV on its first use.
    pack = tmp_path / "pack"
    _prepare(pack, "--emulate", "--variants", "V6")
    (tmp_path / "fake" / "torch").mkdir(parents=True)
    (tmp_path / "fake" / "torch" / "__init__.py").write_text(FAKE_TORCH)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    proc = subprocess.run([sys.executable, str(pack / "gpu_check.py"), "run", str(pack),
                           "--repeat", "1"], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "- ceilings: crashed (SIGSEGV)" in proc.stdout
    assert "Fatal Python error: Segmentation fault" in proc.stderr  # the child's stack
    torch_table = proc.stdout.split("## PyTorch on the same GPU")[1]
    row = next(line for line in torch_table.splitlines() if line.startswith("| V6 B=1"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # After the crash a new child ran the eager and compiled jobs; the fake
    # has no torch.nn, so each is a reported failure, not a time.
    assert cells[1].startswith("failed: ") and cells[2].startswith("failed: "), row
    assert proc.stdout.rstrip().endswith("result: PASS")

    # Out of time, a program is timed as often as the time left allows, at
    # least once, and the report says which were timed fewer times.
    proc = subprocess.run([sys.executable, str(pack / "gpu_check.py"), "run", str(pack),
                           "--no-torch", "--budget", "10", "--repeat", "1000000"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| V6 B=1 H=2 D=16 T=200 C=64 |" in proc.stdout
    short = next(line for line in proc.stdout.splitlines()
                 if line.startswith("- timed fewer than 1000000 times"))
    assert "V6 B=1 H=2 D=16 T=200 C=64 parallel bf16: 1" in short, short


def test_gpu_check_pack_runs_with_fake_driver(tmp_path, fake_driver, fake_cublas):
    # The pack a GPU machine gets: CUDA fatbinaries in shared objects that
    # need no MLIR or LLVM library, run by `gpu_check.sh run` through the
    # fake driver (which loads and launches, but runs no kernel).
    toolkit = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")
    if not ((toolkit / "bin" / "ptxas").exists() and (toolkit / "bin" / "fatbinary").exists()):
        pytest.skip(f"no CUDA toolkit (ptxas, fatbinary) under {toolkit}")
    pack = tmp_path / "pack"
    manifest = _prepare(pack, "--variants", "V5", "--toolkit", str(toolkit))
    assert not manifest["emulated"]
    programs = [pack / name for e in manifest["layers"] for name in e["programs"].values()]
    assert len(programs) == 10
    for program in programs:
        needed = subprocess.run(["readelf", "-d", str(program)], capture_output=True,
                                text=True, check=True).stdout
        libs = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.*?)\]", needed))
        assert libs <= {"libttt_cuda_runtime.so", "libttt_cpu_runtime.so", "libc.so.6",
                        "libm.so.6"}, (program.name, libs)
    log = tmp_path / "driver.log"
    env = {**os.environ, "TTT_CUDA_DRIVER": str(fake_driver), "FAKE_CUDA_LOG": str(log),
           "PACK": str(pack), "REPORT": str(tmp_path / "report.md"),
           "TTT_CUBLAS_LIBRARY": str(fake_cublas), "FAKE_CUBLAS_LOG": str(tmp_path / "cublas.log")}
    proc = subprocess.run(["bash", str(REPO / "bench" / "gpu_check.sh"), "run", "--no-torch",
                           "--repeat", "1"], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gpu_check: GPU: 1 device(s), device 0: Fake GPU" in proc.stdout
    text = (tmp_path / "report.md").read_text()
    assert "- device: Fake GPU" in text and "numerics: not compared (a fake driver" in text
    assert "- ran  V5 B=2 H=1 D=8 T=37 C=16: parallel fp32 vs CPU recurrent reference" in text
    lines = log.read_text().splitlines()
    # One fatbinary load per program, in its constructor; launches of sane sizes.
    assert sum(line.startswith("load fatbin") for line in lines) == len(programs)
    launches = [line for line in lines if line.startswith("launch ")]
    assert launches and all(re.fullmatch(r"launch \w+ grid=\d+,\d+,\d+ block=\d+,\d+,\d+", line)
                            for line in launches)
    # The cuBLAS programs' GEMMs are library calls.
    assert "- cuBLAS: yes" in text
    assert (tmp_path / "cublas.log").read_text().startswith("sgemm ")
    # The runtime's counters, per timed call: the same programs launch the
    # same kernels on every call (a timed call of one repeat is one call).
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\| V5 B=1 H=2 D=16 T=200 C=64 (.+?) \| [\d.]+ \| (\d+) \| (\d+) \| (\d+) \|",
                     line)
        if m:
            costs[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    assert set(costs) == {"recurrent fp32", "parallel fp32", "parallel fp32 cublas",
                          "parallel tf32 cublas", "parallel bf16"}, text
    launches_kernels, gemms_kernels, _ = costs["parallel fp32"]
    launches_cublas, gemms_cublas, host_gemms = costs["parallel fp32 cublas"]
    assert launches_kernels > 0 and gemms_kernels == 0
    assert gemms_cublas > 0 and launches_cublas < launches_kernels and host_gemms == 0
    assert costs["recurrent fp32"][0] > launches_kernels
    assert len(launches) >= sum(c[0] for c in costs.values())  # the log has every call's
