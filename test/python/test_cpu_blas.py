"""The CPU GEMM runtime (libttt_cpu_runtime.so) and the BLAS rewrite's two branches.

- `ttt_sgemm` against NumPy on fresh random matrices: row- and column-major views,
  offsets, views BLAS cannot take (a broadcast row, interleaved strides), C = A B and
  C += A B, empty sizes, Gram products A A^T (SYRK) — through BLAS where one loads and through its own loop with
  `TTT_BLAS_LIBRARY=""` (none).
- A layer run by `ttt-run` with BLAS and without (the generated loops of the
  `scf.if`'s other branch) both match the float64 NumPy oracle.
- A GEMM of a one-stream program, cut into blocks of rows or columns for the
  OpenMP threads, matches NumPy and the uncut run bit for bit; so does a layer of
  one stream against the oracle.
- `ttt-run --profile-gemm` counts each `ttt_sgemm` call of the median run and its
  FLOPs (one per block of a GEMM cut for the threads; none when the generated loops
  run the contractions: `--contractions=loops`, or no BLAS), and is refused where it
  cannot apply.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from compiler import build_dir, run_function
from oracle import ttt_oracle
import ttt_mlir

RUNTIME = build_dir() / "lib" / "libttt_cpu_runtime.so"

# One check per case, run in a child process so that TTT_BLAS_LIBRARY is read
# fresh (the runtime loads BLAS once per process).
CHILD = r"""
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
lib.ttt_sgemm.argtypes = [ctypes.c_int64] * 16
lib.ttt_sgemm.restype = None
rng = np.random.default_rng(int(sys.argv[2]))
f32 = np.float32
def view(rows, cols, layout):
    # A rows x cols view of a bigger buffer, returned with its buffer, offset and strides.
    if layout == "row":
        buf = rng.standard_normal((rows + 2) * (cols + 3)).astype(f32)
        return buf, 5, cols + 3, 1
    if layout == "col":
        buf = rng.standard_normal((rows + 4) * (cols + 1)).astype(f32)
        return buf, 3, 1, rows + 4
    if layout == "broadcast":   # every row the same: row stride 0
        buf = rng.standard_normal(cols + 2).astype(f32)
        return buf, 1, 0, 1
    buf = rng.standard_normal(2 * rows * cols + 8).astype(f32)   # interleaved
    return buf, 2, 2 * cols, 2
def dense(buf, off, rs, cs, rows, cols):
    return np.array([[buf[off + i * rs + j * cs] for j in range(cols)] for i in range(rows)],
                    np.float64).reshape(rows, cols)
worst = 0.0
for m, n, k in [(7, 5, 3), (33, 17, 9), (1, 8, 4), (6, 1, 5), (0, 4, 3), (4, 3, 0)]:
    for la in ("row", "col", "broadcast", "interleaved"):
        for lb in ("row", "col", "interleaved"):
            for lc in ("row", "col", "interleaved"):
                for acc in (0, 1):
                    a, ao, ars, acs = view(m, k, la)
                    b, bo, brs, bcs = view(k, n, lb)
                    c, co, crs, ccs = view(m, n, lc)
                    want = dense(a, ao, ars, acs, m, k) @ dense(b, bo, brs, bcs, k, n)
                    if acc:
                        want += dense(c, co, crs, ccs, m, n)
                    lib.ttt_sgemm(m, n, k, a.ctypes.data, ao, ars, acs, b.ctypes.data, bo, brs,
                                  bcs, c.ctypes.data, co, crs, ccs, acc)
                    got = dense(c, co, crs, ccs, m, n)
                    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
                    err = float(np.abs(got - want).max()) / scale if want.size else 0.0
                    worst = max(worst, err)
                    if err > 1e-5:
                        sys.exit(f"m={m} n={n} k={k} A={la} B={lb} C={lc} acc={acc}: {err}")
# Gram products C = A A^T, B being A's own memory read transposed (what the
# runtime hands to SYRK when C is row-major, overwritten and at least 128 wide;
# smaller ones go to GEMM).
for n, k in [(7, 3), (33, 9), (16, 16), (1, 4), (2, 0), (128, 5), (131, 9)]:
    for la in ("row", "col", "interleaved"):
        for lc in ("row", "col"):
            for acc in (0, 1):
                a, ao, ars, acs = view(n, k, la)
                c, co, crs, ccs = view(n, n, lc)
                dense_a = dense(a, ao, ars, acs, n, k)
                want = dense_a @ dense_a.T
                if acc:
                    want += dense(c, co, crs, ccs, n, n)
                lib.ttt_sgemm(n, n, k, a.ctypes.data, ao, ars, acs, a.ctypes.data, ao, acs, ars,
                              c.ctypes.data, co, crs, ccs, acc)
                got = dense(c, co, crs, ccs, n, n)
                err = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
                worst = max(worst, err)
                if err > 1e-5:
                    sys.exit(f"Gram n={n} k={k} A={la} C={lc} acc={acc}: {err}")
print(worst)
"""


def _run_child(seed: int, blas: str | None):
    env = dict(os.environ)
    if blas is not None:
        env["TTT_BLAS_LIBRARY"] = blas
    return subprocess.run([sys.executable, "-c", CHILD, str(RUNTIME), str(seed)],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("blas", [None, ""], ids=["blas", "own-loop"])
def test_sgemm_matches_numpy(blas):
    proc = _run_child(seed=np.random.SeedSequence().entropy % 2**31, blas=blas)
    assert proc.returncode == 0, proc.stderr or proc.stdout


def test_sgemm_reports_blas():
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
            "print(lib.ttt_blas_available())")
    env = dict(os.environ, TTT_BLAS_LIBRARY="")
    off = subprocess.run([sys.executable, "-c", code, str(RUNTIME)], capture_output=True,
                         text=True, env=env, check=True)
    assert off.stdout.strip() == "0"
    env["TTT_BLAS_LIBRARY"] = str(build_dir() / "no-such-blas.so")
    missing = subprocess.run([sys.executable, "-c", code, str(RUNTIME)], capture_output=True,
                             text=True, env=env, check=True)
    assert missing.stdout.strip() == "0"


@pytest.mark.parametrize("blas", [None, ""], ids=["blas", "generated-loops"])
def test_layer_with_and_without_blas(blas, tmp_path, monkeypatch):
    if blas is not None:
        monkeypatch.setenv("TTT_BLAS_LIBRARY", blas)
    rng = np.random.default_rng()
    B, H, T, D = 2, 3, 70, 16
    cfg = dict(model="swiglu", trained=[1], loss="dot", chunk=16, order="apply_then_update",
               ns_steps=3, ns_coeffs=[[3.4445, -4.775, 2.0315]] * 3)
    f32 = np.float32
    q, k, v = (rng.standard_normal((B, H, T, D)).astype(f32) / 2 for _ in range(3))
    weights = [(rng.standard_normal((H, D, D)) / np.sqrt(D)).astype(f32) for _ in range(3)]
    lr = rng.uniform(0.01, 0.2, (B, H, T, 3)).astype(f32)
    ops = ttt_mlir.kvb_operands(cfg, q, k, v, weights, lr=lr)
    text = ttt_mlir.kvb_layer_function(cfg, ops, return_weights=False)
    want, _ = ttt_oracle.kvb_layer(q, k, v, weights, lr=lr, **cfg)
    for form in ("recurrent", "parallel"):
        (got,) = run_function(text, [a for _, a in ops], tmp_path, form=form)
        assert ttt_mlir.relative_error(got, want) <= 1e-5, form


def _ttt_run(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(build_dir() / "bin" / "ttt-run"), *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


# Rows cut (512 rows: 4 blocks of 128; 300: 4 of 75), columns cut (300 columns),
# and 3 blocks of 67 rows with a shorter last one.
@pytest.mark.parametrize("m,k,n", [(512, 128, 128), (300, 128, 96), (96, 128, 300),
                                   (200, 256, 130)])
def test_a_one_stream_gemm_cut_into_blocks_matches_the_whole(m, k, n, tmp_path):
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    src, inputs = tmp_path / "matmul.mlir", tmp_path / "in.npz"
    src.write_text(ttt_mlir.matmul_function(m, k, n))
    np.savez(inputs, arg0=a, arg1=b)
    # Four threads cut the GEMM whatever this machine's core count; one does not.
    assert "omp.parallel" in _ttt_run(src, "--openmp", "--num-threads=4", "--print-ir").stdout
    assert "omp.parallel" not in _ttt_run(src, "--openmp", "--num-threads=1",
                                          "--print-ir").stdout
    results = {}
    for name, flags in (("cut", ["--openmp", "--num-threads=4"]), ("whole", ["--openmp=false"])):
        out = tmp_path / f"{name}.npz"
        _ttt_run(src, f"--inputs={inputs}", f"--outputs={out}", "--print-results=false", *flags)
        with np.load(out) as data:
            results[name] = data["result0"]
    want = a.astype(np.float64) @ b.astype(np.float64)
    # The blocks may run other kernels of the library than the whole product
    # (OpenBLAS picks them by shape and CPU), so they agree to rounding only.
    assert ttt_mlir.relative_error(results["cut"], want) <= 1e-5
    assert ttt_mlir.relative_error(results["whole"], want) <= 1e-5
    assert ttt_mlir.relative_error(results["cut"], results["whole"]) <= 1e-5


def test_a_one_stream_layer_with_cut_gemms_matches_the_oracle(tmp_path):
    # B = H = 1: no loop over streams is left to share out, so the chunks'
    # GEMMs (256 x 128 x 128) are cut; the last chunk (88 tokens) is too short.
    rng = np.random.default_rng()
    cfg = dict(model="linear", trained=[0], loss="mse", chunk=256, order="apply_then_update")
    q, k, v = (rng.standard_normal((1, 1, 600, 128)).astype(np.float32) / 4
               for _ in range(3))
    w = [(rng.standard_normal((1, 128, 128)) / 12).astype(np.float32)]
    ops = ttt_mlir.kvb_operands(cfg, q, k, v, w)
    text = ttt_mlir.kvb_layer_function(cfg, ops, return_weights=False)
    want, _ = ttt_oracle.kvb_layer(q, k, v, w, **cfg)
    arrays = [a for _, a in ops]
    (cut,) = run_function(text, arrays, tmp_path, extra_args=["--openmp", "--num-threads=4"])
    (whole,) = run_function(text, arrays, tmp_path, extra_args=["--openmp=false"])
    assert ttt_mlir.relative_error(cut, want) <= 1e-5
    assert ttt_mlir.relative_error(whole, want) <= 1e-5
    assert ttt_mlir.relative_error(cut, whole) <= 1e-5
    src = tmp_path / "layer.mlir"
    src.write_text(text)
    assert "omp.parallel" in _ttt_run(src, "--openmp", "--num-threads=4", "--print-ir").stdout


# OpenBLAS's kernel sets older than AVX2: what an OpenBLAS that does not know the CPU's
# model falls back to (Debian 12's 0.3.21 runs "Prescott" on 5th-generation Xeons).
PRE_AVX2_CORES = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom",
                  "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge",
                  "Opteron", "Barcelona", "Bobcat", "Bulldozer", "Piledriver",
                  "Steamroller", "Excavator"}


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _run_small_layer(tmp_path, **env):
    """A small linear layer's timed `ttt-run` on fresh random inputs, with these
    environment variables set (None: unset). Returns its `ttt-run: BLAS: ...` line,
    its result and the oracle's."""
    rng = np.random.default_rng()
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=8, order="apply_then_update")
    q, k, v = (rng.standard_normal((1, 2, 36, 16)).astype(np.float32) for _ in range(3))
    w = [(rng.standard_normal((2, 16, 16)) / 4).astype(np.float32)]
    ops = ttt_mlir.kvb_operands(cfg, q, k, v, w)
    src, inputs, out = tmp_path / "layer.mlir", tmp_path / "in.npz", tmp_path / "out.npz"
    src.write_text(ttt_mlir.kvb_layer_function(cfg, ops, return_weights=False))
    np.savez(inputs, **{f"arg{i}": a for i, (_, a) in enumerate(ops)})
    child_env = dict(os.environ)
    for name, value in env.items():
        child_env.pop(name, None)
        if value is not None:
            child_env[name] = value
    proc = subprocess.run([str(build_dir() / "bin" / "ttt-run"), str(src), f"--inputs={inputs}",
                           "--repeat=1", "--print-results=false", f"--outputs={out}"],
                          capture_output=True, text=True, timeout=300, env=child_env)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("ttt-run: BLAS: ")]
    assert len(lines) == 1, proc.stderr
    with np.load(out) as data:
        got = data["result0"]
    return lines[0], got, ttt_oracle.kvb_layer(q, k, v, w, **cfg)[0]


def _blas_report(tmp_path, **env):
    """The `ttt-run: BLAS: ...` line of a small layer's timed run."""
    return _run_small_layer(tmp_path, **env)[0]


def _kernels(report: str) -> str | None:
    return report.rsplit("(", 1)[1].split()[0] if report.endswith(" kernels)") else None


def test_the_timed_run_says_which_blas_ran(tmp_path):
    assert (_blas_report(tmp_path, TTT_BLAS_LIBRARY="")
            == "ttt-run: BLAS: none (the generated loops)")


def test_openblas_runs_the_kernels_of_this_cpu(tmp_path):
    """Where OpenBLAS is loaded and the CPU has AVX2 and FMA, its GEMMs run kernels that
    use them, also when the OpenBLAS is older than the CPU's model."""
    report = _blas_report(tmp_path, OPENBLAS_CORETYPE=None)
    if not _kernels(report):
        pytest.skip(f"the BLAS loaded does not name its kernels: {report}")
    if not {"avx2", "fma"} <= _cpu_flags():
        pytest.skip("the CPU has no AVX2 and FMA")
    assert _kernels(report) not in PRE_AVX2_CORES, report


def test_a_kernel_set_the_user_chose_is_kept(tmp_path):
    report = _blas_report(tmp_path, OPENBLAS_CORETYPE="Sandybridge")
    if not _kernels(report):
        pytest.skip(f"the BLAS loaded does not name its kernels: {report}")
    assert _kernels(report) == "Sandybridge", report


# Two stand-ins for BLAS libraries that are not Debian's OpenBLAS, compiled here: one
# spelled like MKL (its threading layer must be chosen before its first GEMM), one like
# the scipy-openblas wheels (every symbol prefixed "scipy_"). Their GEMM is the
# textbook loop, so the layer's result is checked against the oracle through them.
FAKE_BLAS = r"""
#include <stdlib.h>
static int layer = -1;
static void gemm(int layout, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc) {
  if (layout != 101) abort();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p)
        s += (ta == 111 ? a[i * lda + p] : a[p * lda + i]) *
             (tb == 111 ? b[p * ldb + j] : b[j * ldb + p]);
      c[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * c[i * ldc + j]);
    }
}
#ifdef MKL
int MKL_Set_Threading_Layer(int l) { layer = l; return l; }
void MKL_Get_Version_String(char *buf, int len) {
  const char *v = "Fake MKL 0.1";
  int i = 0;
  for (; v[i] && i < len - 1; ++i) buf[i] = v[i];
  buf[i] = 0;
}
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc) {
  if (layer != 1) exit(97);  /* called before the sequential layer was chosen */
  gemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#else
int scipy_openblas_get_parallel(void) { return 1; }
void scipy_openblas_set_num_threads(int n) { layer = n; }
char *scipy_openblas_get_corename(void) { return "Fakecore"; }
void scipy_cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc) {
  if (layer != 1) exit(98);  /* called before its threads were set to one */
  gemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif
"""


@pytest.mark.parametrize("flavor, kernels", [("MKL", "Fake MKL 0.1"),
                                             ("SCIPY", "Fakecore kernels")])
def test_mkl_and_prefixed_openblas_are_loaded_as_they_need(flavor, kernels, tmp_path):
    """TTT_BLAS_LIBRARY may name MKL (run on its sequential threading layer, chosen
    before its first call) or a scipy-openblas build (symbols prefixed "scipy_", one
    thread): the layer's GEMMs go through it and the result is the oracle's."""
    src = tmp_path / "fake.c"
    src.write_text(FAKE_BLAS)
    lib = tmp_path / f"libfake_{flavor}.so"
    compiler = os.environ.get("CC", "cc")
    try:
        subprocess.run([compiler, "-shared", "-fPIC", "-O1", f"-D{flavor}", str(src), "-o",
                        str(lib)], check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.CalledProcessError) as err:
        pytest.skip(f"no C compiler to build the stand-in library: {err}")
    report, got, want = _run_small_layer(tmp_path, TTT_BLAS_LIBRARY=str(lib))
    assert report == f"ttt-run: BLAS: {lib} ({kernels})"
    assert ttt_mlir.relative_error(got, want) <= 1e-5


# `ttt-run --repeat --profile-gemm`: the median run's ttt_sgemm calls, their FLOPs and
# time, and the share of the threads' time that is.
PROFILE = re.compile(r"ttt-run: GEMM calls in the median run: (\d+), ([0-9.e+-]+) GFLOP, "
                     r"([0-9.]+) ms in them summed over threads \((\d+)% of (\d+) "
                     r"threads?'?s?'? time\), ([0-9.]+) GFLOP/s inside them")


def _gemm_profile(tmp_path, m: int, k: int, n: int, *flags, **env):
    """(calls, GFLOP, ms, threads, whether a BLAS loaded) of a timed run of C = A B on
    fresh random inputs, after checking the result against NumPy."""
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    src, inputs, out = tmp_path / "matmul.mlir", tmp_path / "in.npz", tmp_path / "out.npz"
    src.write_text(ttt_mlir.matmul_function(m, k, n))
    np.savez(inputs, arg0=a, arg1=b)
    child_env = dict(os.environ, **env)
    proc = subprocess.run([str(build_dir() / "bin" / "ttt-run"), str(src), f"--inputs={inputs}",
                           f"--outputs={out}", "--print-results=false", "--repeat=3",
                           "--profile-gemm", *flags],
                          capture_output=True, text=True, timeout=300, env=child_env)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as data:
        got = data["result0"]
    assert ttt_mlir.relative_error(got, a.astype(np.float64) @ b.astype(np.float64)) <= 1e-5
    found = [PROFILE.fullmatch(line) for line in proc.stderr.splitlines()
             if line.startswith("ttt-run: GEMM calls")]
    assert len(found) == 1 and found[0], proc.stderr
    calls, gflop, ms, _, threads, _ = found[0].groups()
    loaded = "ttt-run: BLAS: none" not in proc.stderr
    return int(calls), float(gflop), float(ms), int(threads), loaded


def test_the_gemm_profile_counts_each_call_and_its_flops(tmp_path):
    calls, gflop, ms, threads, loaded = _gemm_profile(tmp_path, 96, 64, 80, "--openmp=false")
    if not loaded:
        pytest.skip("no BLAS library loads here: the generated loops make no calls")
    assert (calls, threads) == (1, 1)
    assert gflop == pytest.approx(2 * 96 * 64 * 80 / 1e9, rel=1e-5)
    assert ms > 0


def test_the_gemm_profile_counts_the_blocks_each_thread_runs(tmp_path):
    # 512 rows cut into 4 blocks of 128 for 4 threads: four calls, the same FLOPs.
    calls, gflop, _, threads, loaded = _gemm_profile(tmp_path, 512, 128, 128, "--openmp",
                                                     "--num-threads=4")
    if not loaded:
        pytest.skip("no BLAS library loads here: the generated loops make no calls")
    assert (calls, threads) == (4, 4)
    assert gflop == pytest.approx(2 * 512 * 128 * 128 / 1e9, rel=1e-5)


@pytest.mark.parametrize("flags, env", [(["--contractions=loops"], {}),
                                        ([], {"TTT_BLAS_LIBRARY": ""})],
                         ids=["loops-only", "no-blas"])
def test_the_generated_contraction_loops_make_no_gemm_calls(flags, env, tmp_path):
    calls, gflop, _, _, _ = _gemm_profile(tmp_path, 96, 64, 80, *flags, **env)
    assert (calls, gflop) == (0, 0)


@pytest.mark.parametrize("flags, reason", [
    ([], "--profile-gemm: only applies with --repeat"),
    (["--repeat=2", "--device=cuda"], "--profile-gemm: only applies with --device=cpu")])
def test_the_gemm_profile_is_refused_where_it_cannot_apply(flags, reason, tmp_path):
    src = tmp_path / "matmul.mlir"
    src.write_text(ttt_mlir.matmul_function(4, 4, 4))
    proc = subprocess.run([str(build_dir() / "bin" / "ttt-run"), str(src), "--random-inputs=1",
                           "--profile-gemm", *flags], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"ttt-run: error: {reason}"]
