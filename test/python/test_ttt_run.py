"""End-to-end tests of ttt-run: results against NumPy, and bad inputs.

Every numerical test draws fresh random shapes and values; the seed is part of
the failure message so a failure can be replayed.

Run from the repository root: python3 -m pytest -q test/python/test_ttt_run.py
The tools are taken from $TTT_BUILD_DIR/bin (default: <repo>/build/bin).
"""

import math
import os
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

BUILD_DIR = Path(
    os.environ.get("TTT_BUILD_DIR", Path(__file__).resolve().parents[2] / "build")
)
TTT_RUN = BUILD_DIR / "bin" / "ttt-run"


@pytest.fixture(scope="module", autouse=True)
def _tool_is_built():
    assert TTT_RUN.is_file(), f"{TTT_RUN} not found: build first (ninja -C build ttt-run)"


def run(*args, check=True):
    proc = subprocess.run(
        [str(TTT_RUN), *map(str, args)], capture_output=True, text=True, timeout=300
    )
    if check:
        assert proc.returncode == 0, f"ttt-run {' '.join(map(str, args))}\n{proc.stderr}"
    return proc


def fresh_rng():
    """A generator from a fresh seed, and the seed to report on failure."""
    seed = int(np.random.SeedSequence().entropy % (2**32))
    return np.random.default_rng(seed), seed


def write_mlir(tmp_path, text, name="f.mlir"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------

# tanh(A @ B) and the row sums of exp(A @ B), with every size dynamic.
MATMUL_MATH = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @main(%a: tensor<?x?xT>, %b: tensor<?x?xT>) -> (tensor<?x?xT>, tensor<?xT>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xT>
  %n = tensor.dim %b, %c1 : tensor<?x?xT>
  %zero = arith.constant 0.0 : T
  %e = tensor.empty(%m, %n) : tensor<?x?xT>
  %acc = linalg.fill ins(%zero : T) outs(%e : tensor<?x?xT>) -> tensor<?x?xT>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xT>, tensor<?x?xT>)
                      outs(%acc : tensor<?x?xT>) -> tensor<?x?xT>
  %t = math.tanh %mm : tensor<?x?xT>
  %x = math.exp %mm : tensor<?x?xT>
  %re = tensor.empty(%m) : tensor<?xT>
  %racc = linalg.fill ins(%zero : T) outs(%re : tensor<?xT>) -> tensor<?xT>
  %sum = linalg.generic {indexing_maps = [#id, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xT>) outs(%racc : tensor<?xT>) {
  ^bb0(%v: T, %s: T):
    %r = arith.addf %v, %s : T
    linalg.yield %r : T
  } -> tensor<?xT>
  return %t, %sum : tensor<?x?xT>, tensor<?xT>
}
"""

# SiLU-style gating of 4-D tensors, a static trailing size, and a scalar
# (rank-0) maximum.
GATE_4D = """
func.func @gate(%x: tensor<?x?x?x16xf32>, %g: tensor<?x?x?x16xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<f32>) {
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?x16xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?x16xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?x16xf32>
  %e = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?x16xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %ng = arith.negf %g : tensor<?x?x?x16xf32>
  %en = math.exp %ng : tensor<?x?x?x16xf32>
  %den = arith.addf %ones, %en : tensor<?x?x?x16xf32>
  %sig = arith.divf %ones, %den : tensor<?x?x?x16xf32>
  %gs = arith.mulf %g, %sig : tensor<?x?x?x16xf32>
  %y = arith.mulf %x, %gs : tensor<?x?x?x16xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %s = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %max = linalg.reduce ins(%y : tensor<?x?x?x16xf32>) outs(%init : tensor<f32>)
      dimensions = [0, 1, 2, 3]
    (%v: f32, %acc: f32) {
      %r = arith.maximumf %v, %acc : f32
      linalg.yield %r : f32
    }
  return %y, %max : tensor<?x?x?x16xf32>, tensor<f32>
}
"""

# Integer arithmetic, exact in both widths: 3 * a - b and the column sums.
INTEGER = """
func.func @main(%a: tensor<?x?xT>, %b: tensor<?x?xT>) -> (tensor<?x?xT>, tensor<?xT>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xT>
  %n = tensor.dim %a, %c1 : tensor<?x?xT>
  %three = arith.constant 3 : T
  %zero = arith.constant 0 : T
  %e = tensor.empty(%m, %n) : tensor<?x?xT>
  %threes = linalg.fill ins(%three : T) outs(%e : tensor<?x?xT>) -> tensor<?x?xT>
  %a3 = arith.muli %a, %threes : tensor<?x?xT>
  %d = arith.subi %a3, %b : tensor<?x?xT>
  %ce = tensor.empty(%n) : tensor<?xT>
  %cinit = linalg.fill ins(%zero : T) outs(%ce : tensor<?xT>) -> tensor<?xT>
  %cols = linalg.reduce ins(%d : tensor<?x?xT>) outs(%cinit : tensor<?xT>) dimensions = [0]
    (%v: T, %acc: T) {
      %r = arith.addi %v, %acc : T
      linalg.yield %r : T
    }
  return %d, %cols : tensor<?x?xT>, tensor<?xT>
}
"""

# `[B·H, 8]` split into `[B, H, 8]` with B and H both run-time sizes (read from
# a second argument): a reshape MLIR's expand-strided-metadata cannot size by
# itself (ttt-expand-run-time-reshapes writes it first); then sums over H.
SPLIT_RUN_TIME_DIMS = """
func.func @main(%a: tensor<?x8xf32>, %x: tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.expand_shape %a [[0, 1], [2]] output_shape [%b, %h, 8]
      : tensor<?x8xf32> into tensor<?x?x8xf32>
  %ee = tensor.empty(%b, %h) : tensor<?x?x8xf32>
  %exp = linalg.exp ins(%e : tensor<?x?x8xf32>) outs(%ee : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty(%b) : tensor<?x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%se : tensor<?x8xf32>) -> tensor<?x8xf32>
  %sum = linalg.reduce ins(%e : tensor<?x?x8xf32>) outs(%init : tensor<?x8xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %r = arith.addf %v, %acc : f32
      linalg.yield %r : f32
    }
  return %exp, %sum : tensor<?x?x8xf32>, tensor<?x8xf32>
}
"""

# One static dimension, to check shapes against.
STATIC = """
func.func @main(%a: tensor<?x4xf32>, %b: tensor<4x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x4xf32>
  %n = tensor.dim %b, %c1 : tensor<4x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x4xf32>, tensor<4x?xf32>)
                      outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %mm : tensor<?x?xf32>
}
"""

# One argument, updated in place by One-Shot Bufferize, and returned twice.
IN_PLACE = """
func.func @main(%a: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %two = arith.constant 2.0 : f64
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} outs(%a : tensor<?xf64>) {
  ^bb0(%v: f64):
    %m = arith.mulf %v, %two : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  return %r, %r : tensor<?xf64>, tensor<?xf64>
}
"""


def matmul_math_reference(a, b):
    mm = a @ b
    return np.tanh(mm), np.exp(mm).sum(axis=1)


# ---------------------------------------------------------------------------
# Numerical tests
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mlir_type,dtype,rtol",
    [("f32", np.float32, 2e-5), ("f64", np.float64, 1e-12)],
)
def test_matmul_math_reduction(tmp_path, mlir_type, dtype, rtol):
    rng, seed = fresh_rng()
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", mlir_type))
    for _ in range(3):
        m, k, n = rng.integers(1, 24, size=3)
        a = rng.uniform(-1, 1, (m, k)).astype(dtype)
        b = (rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype(dtype)
        np.savez(tmp_path / "in.npz", a, b)
        run(program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
        with np.load(tmp_path / "out.npz") as out:
            assert sorted(out.files) == ["result0", "result1"]
            got_t, got_sum = out["result0"], out["result1"]
        want_t, want_sum = matmul_math_reference(a.astype(np.float64), b.astype(np.float64))
        assert got_t.dtype == dtype and got_sum.dtype == dtype
        assert got_t.shape == (m, n) and got_sum.shape == (m,)
        np.testing.assert_allclose(got_t, want_t, rtol=rtol, atol=rtol, err_msg=f"seed {seed}")
        np.testing.assert_allclose(got_sum, want_sum, rtol=rtol, err_msg=f"seed {seed}")


def test_random_inputs_are_saved_and_reproducible(tmp_path):
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", "f32"))
    common = ["--random-inputs=42", "--shapes=5x7,7x3", "--print-results=false"]
    run(program, *common, "--save-inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o1.npz")
    run(program, *common, "--save-inputs", tmp_path / "in2.npz", "--outputs", tmp_path / "o2.npz")
    assert (tmp_path / "in.npz").read_bytes() == (tmp_path / "in2.npz").read_bytes()
    assert (tmp_path / "o1.npz").read_bytes() == (tmp_path / "o2.npz").read_bytes()
    with np.load(tmp_path / "in.npz") as inputs, np.load(tmp_path / "o1.npz") as out:
        a, b = inputs["arg0"], inputs["arg1"]
        assert a.shape == (5, 7) and b.shape == (7, 3) and a.dtype == np.float32
        assert a.min() >= -1 and a.max() < 1
        want_t, want_sum = matmul_math_reference(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(out["result0"], want_t, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(out["result1"], want_sum, rtol=2e-5)


def test_four_dimensional_gate_with_shapes_flag(tmp_path):
    program = write_mlir(tmp_path, GATE_4D)
    run(
        program,
        "--random-inputs=7",
        "--shapes=2x4x100x16,2x4x100x16",
        "--save-inputs", tmp_path / "in.npz",
        "--outputs", tmp_path / "out.npz",
        "--print-results=false",
    )
    with np.load(tmp_path / "in.npz") as inputs, np.load(tmp_path / "out.npz") as out:
        x, g = inputs["arg0"].astype(np.float64), inputs["arg1"].astype(np.float64)
        want = x * g / (1 + np.exp(-g))
        np.testing.assert_allclose(out["result0"], want, rtol=1e-5, atol=1e-6)
        assert out["result1"].shape == ()
        np.testing.assert_allclose(out["result1"], want.max(), rtol=1e-5)


def test_arrays_matched_by_name_and_compressed(tmp_path):
    rng, seed = fresh_rng()
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", "f64"))
    a = rng.standard_normal((6, 4))
    b = rng.standard_normal((4, 9)) / 2
    # Names win over order: arg1 first in the archive must still be argument 1.
    np.savez_compressed(tmp_path / "in.npz", arg1=b, arg0=a)
    run(program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as out:
        want_t, want_sum = matmul_math_reference(a, b)
        np.testing.assert_allclose(out["result0"], want_t, rtol=1e-12, err_msg=f"seed {seed}")
        np.testing.assert_allclose(out["result1"], want_sum, rtol=1e-12, err_msg=f"seed {seed}")


@pytest.mark.parametrize("mlir_type,dtype", [("i32", np.int32), ("i64", np.int64)])
def test_integer_results_are_exact(tmp_path, mlir_type, dtype):
    rng, seed = fresh_rng()
    program = write_mlir(tmp_path, INTEGER.replace("T", mlir_type))
    m, n = rng.integers(1, 30, size=2)
    a = rng.integers(-1000, 1000, (m, n), dtype=dtype)
    b = rng.integers(-1000, 1000, (m, n), dtype=dtype)
    np.savez(tmp_path / "in.npz", a, b)
    run(program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as out:
        want = 3 * a - b
        np.testing.assert_array_equal(out["result0"], want, err_msg=f"seed {seed}")
        np.testing.assert_array_equal(out["result1"], want.sum(axis=0), err_msg=f"seed {seed}")
        assert out["result0"].dtype == dtype


def test_single_npy_input_and_in_place_update(tmp_path):
    """Arguments updated in place must not leak into the next --repeat run."""
    rng, seed = fresh_rng()
    program = write_mlir(tmp_path, IN_PLACE)
    a = rng.standard_normal(rng.integers(1, 50))
    np.save(tmp_path / "a.npy", a)
    proc = run(program, "--inputs", tmp_path / "a.npy", "--repeat=3",
               "--outputs", tmp_path / "out.npz")
    assert proc.stderr.startswith("ttt-run: median of 3 runs: ")
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["result0"], 2 * a, err_msg=f"seed {seed}")
        np.testing.assert_array_equal(out["result1"], 2 * a, err_msg=f"seed {seed}")


def test_reshape_into_two_run_time_sizes(tmp_path):
    rng, seed = fresh_rng()
    program = write_mlir(tmp_path, SPLIT_RUN_TIME_DIMS)
    b, h = rng.integers(1, 6, size=2)
    a = rng.standard_normal((b * h, 8)).astype(np.float32)
    np.savez(tmp_path / "in.npz", a, np.zeros((b, h), np.float32))
    run(program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as out:
        split = a.astype(np.float64).reshape(b, h, 8)
        np.testing.assert_allclose(out["result0"], np.exp(split), rtol=1e-6,
                                   err_msg=f"seed {seed}")
        np.testing.assert_allclose(out["result1"], split.sum(axis=1), rtol=1e-5,
                                   atol=1e-6, err_msg=f"seed {seed}")


def test_empty_dimension(tmp_path):
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", "f32"))
    run(program, "--random-inputs=1", "--shapes=0x3,3x5", "--outputs", tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as out:
        assert out["result0"].shape == (0, 5) and out["result1"].shape == (0,)


def test_openmp_matches_sequential(tmp_path):
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", "f32"))
    args = ["--random-inputs=3", "--shapes=64x32,32x48", "--print-results=false"]
    run(program, *args, "--outputs", tmp_path / "seq.npz")
    run(program, *args, "--openmp", "--outputs", tmp_path / "omp.npz")
    assert (tmp_path / "seq.npz").read_bytes() == (tmp_path / "omp.npz").read_bytes()


def test_outputs_are_a_plain_stored_zip(tmp_path):
    program = write_mlir(tmp_path, MATMUL_MATH.replace("T", "f32"))
    run(program, "--random-inputs=1", "--outputs", tmp_path / "out.npz")
    with zipfile.ZipFile(tmp_path / "out.npz") as archive:
        assert archive.testzip() is None
        infos = archive.infolist()
        assert [i.filename for i in infos] == ["result0.npy", "result1.npy"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)


# ---------------------------------------------------------------------------
# Bad inputs: non-zero exit, one line on stderr naming the problem, and no
# --outputs file.
# ---------------------------------------------------------------------------


def expect_error(tmp_path, args, *fragments):
    out = tmp_path / "never.npz"
    proc = run(*args, "--outputs", out, check=False)
    assert proc.returncode != 0, proc.stdout
    err = proc.stderr
    assert err.startswith("ttt-run: error: "), err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert not out.exists()
    assert not list(tmp_path.glob("never.npz*")), "temporary output left behind"
    return err


@pytest.fixture
def static_program(tmp_path):
    return write_mlir(tmp_path, STATIC)


def good_inputs(path, m=3, n=5):
    np.savez(path, np.ones((m, 4), np.float32), np.ones((4, n), np.float32))
    return path


def test_error_missing_mlir(tmp_path):
    expect_error(tmp_path, [tmp_path / "nope.mlir", "--random-inputs=1"],
                 "nope.mlir", "cannot read")


def test_error_unparsable_mlir(tmp_path):
    program = write_mlir(tmp_path, "func.func @main( {\n")
    expect_error(tmp_path, [program, "--random-inputs=1"], "f.mlir:1:", "cannot parse")


def test_error_missing_inputs_file(tmp_path, static_program):
    expect_error(tmp_path, [static_program, "--inputs", tmp_path / "missing.npz"],
                 "missing.npz", "cannot read")


def test_error_not_an_npz(tmp_path, static_program):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"these are not the bytes you are looking for")
    expect_error(tmp_path, [static_program, "--inputs", bad], "bad.npz",
                 "not a .npy or .npz file")


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("keep", [0.3, 0.9])
def test_error_truncated_npz(tmp_path, static_program, compressed, keep):
    path = tmp_path / "in.npz"
    save = np.savez_compressed if compressed else np.savez
    save(path, np.ones((3, 4), np.float32), np.ones((4, 5), np.float32))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "truncated")


def test_error_corrupt_member(tmp_path, static_program):
    path = good_inputs(tmp_path / "in.npz")
    data = bytearray(path.read_bytes())
    data[200] ^= 0xFF  # Inside the first member's data.
    path.write_bytes(bytes(data))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "CRC mismatch")


def test_error_wrong_dtype(tmp_path, static_program):
    path = tmp_path / "in.npz"
    np.savez(path, np.ones((3, 4), np.float64), np.ones((4, 5), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "argument 0",
                 "dtype mismatch", "expected float32, got float64")


def test_error_wrong_shape(tmp_path, static_program):
    path = tmp_path / "in.npz"
    np.savez(path, np.ones((3, 5), np.float32), np.ones((4, 5), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "argument 0",
                 "tensor<?x4xf32>", "shape mismatch", "dimension 1 must be 4", "3x5")


def test_error_wrong_rank(tmp_path, static_program):
    path = tmp_path / "in.npz"
    np.savez(path, np.ones((3, 4, 1), np.float32), np.ones((4, 5), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "argument 0",
                 "expected rank 2", "3x4x1")


def test_error_wrong_count(tmp_path, static_program):
    path = tmp_path / "in.npz"
    np.savez(path, np.ones((3, 4), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz",
                 "wrong number of inputs", "takes 2 arguments", "holds 1 array")


def test_error_npy_for_two_arguments(tmp_path, static_program):
    path = tmp_path / "a.npy"
    np.save(path, np.ones((3, 4), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "a.npy",
                 "wrong number of inputs")


def test_error_missing_named_argument(tmp_path, static_program):
    path = tmp_path / "in.npz"
    np.savez(path, arg0=np.ones((3, 4), np.float32), arg2=np.ones((4, 5), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "arg2")


def test_error_missing_entry(tmp_path, static_program):
    expect_error(tmp_path, [static_program, "--entry=forward", "--random-inputs=1"],
                 "f.mlir", "no function named 'forward'")


@pytest.mark.parametrize(
    "array,fragment",
    [
        (np.ones((3, 4), np.complex64), "unsupported dtype '<c8'"),
        (np.ones((3, 4), np.float16), "unsupported dtype '<f2'"),
        (np.ones((3, 4), np.dtype(">f4")), "unsupported dtype '>f4'"),
        (np.asfortranarray(np.ones((3, 4), np.float32)), "Fortran-ordered"),
    ],
)
def test_error_unsupported_array(tmp_path, static_program, array, fragment):
    path = tmp_path / "in.npz"
    np.savez(path, array, np.ones((4, 5), np.float32))
    expect_error(tmp_path, [static_program, "--inputs", path], "in.npz", "arr_0.npy",
                 fragment)


def test_error_corrupt_npy_header(tmp_path):
    program = write_mlir(tmp_path, IN_PLACE)
    path = tmp_path / "a.npy"
    np.save(path, np.ones(5))
    data = path.read_bytes().replace(b"'shape': (5,)", b"'shape': (5;)")
    path.write_bytes(data)
    expect_error(tmp_path, [program, "--inputs", path], "a.npy", "corrupt .npy header")


def test_error_truncated_npy(tmp_path):
    program = write_mlir(tmp_path, IN_PLACE)
    path = tmp_path / "a.npy"
    np.save(path, np.ones(5))
    path.write_bytes(path.read_bytes()[:-3])
    expect_error(tmp_path, [program, "--inputs", path], "a.npy", "truncated .npy data")


def test_error_bad_shapes_flag(tmp_path, static_program):
    expect_error(tmp_path, [static_program, "--random-inputs=1", "--shapes=3x5,4x2"],
                 "--shapes", "argument 0", "dimension 1 must be 4")


def test_error_bad_flag(tmp_path, static_program):
    expect_error(tmp_path, [static_program, "--random-inputs=1", "--repeat=often"],
                 "command line", "--repeat")


def test_error_output_directory_missing(tmp_path, static_program):
    proc = run(static_program, "--random-inputs=1", "--outputs",
               tmp_path / "no" / "such" / "dir.npz", check=False)
    assert proc.returncode != 0
    assert proc.stderr.startswith("ttt-run: error: ") and proc.stderr.count("\n") == 1
    assert "dir.npz" in proc.stderr
