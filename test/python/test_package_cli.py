"""`python -m ttt optimize|explain` on the MLIR examples and ONNX fixtures.

Runs the package from the build tree ($TTT_BUILD_DIR/python, default
<repo>/build/python) unless it is installed; skipped only when the extension
could not be built (nanobind or the Python development headers missing).
"""

from __future__ import annotations

import pytest

import dwconv_mutants
from package_env import EXAMPLES, FIXTURES, extension_built, skip_reason
from package_env import run_cli as cli

if not extension_built() and skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)


def test_explain_mlir():
    proc = cli("explain", EXAMPLES / "lact_v2_small.mlir")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("| location | op | exact lowering")
    assert any("ttt.kvb_layer" in line and "prefix sum" in line for line in lines)


def test_explain_onnx_lists_layers(tmp_path):
    proc = cli("explain", FIXTURES / "lact_v2.traced.onnx")
    assert proc.returncode == 0, proc.stderr
    assert "lact_v2.traced.onnx: node '/layer/Concat'" in proc.stdout
    assert "| yes |" in proc.stdout
    # TTT-MLP: read as its layer op, not rewritable (the LayerNorm in its loss).
    proc = cli("explain", FIXTURES / "ttt_mlp.traced.onnx")
    assert proc.returncode == 0, proc.stderr
    assert "| ttt.kvb_layer |" in proc.stdout and "| no |" in proc.stdout
    assert "LayerNorm inside the loss" in proc.stdout
    # A layer found but not read says so in the op column.
    proc = cli("explain", dwconv_mutants.write("mean_over_h_h", tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "| onnx |" in proc.stdout and "| no |" in proc.stdout


def test_optimize_mlir(tmp_path):
    out = tmp_path / "out.mlir"
    proc = cli("optimize", EXAMPLES / "lact_llm_layer.mlir", "-o", out, "--explain",
               "--simplify", "freeze-inner", "drop-weight-norm")
    assert proc.returncode == 0, proc.stderr
    assert "ttt.kvb_layer" in proc.stdout            # --explain's table
    assert "Variant 1" in proc.stderr and "Variant 2" in proc.stderr  # one line per change
    assert "linattn." in out.read_text()


def test_optimize_onnx_verify(tmp_path):
    pytest.importorskip("onnxruntime")
    out = tmp_path / "out.onnx"
    proc = cli("optimize", FIXTURES / "lact_v2.traced.onnx", "-o", out, "--verify")
    assert proc.returncode == 0, proc.stderr
    assert out.exists()
    assert "verified output" in proc.stderr


def test_errors_are_one_line(tmp_path):
    proc = cli("optimize", tmp_path / "missing.onnx", "-o", tmp_path / "o.onnx")
    assert proc.returncode == 1
    assert proc.stderr.startswith("ttt: error: ") and proc.stderr.count("\n") == 1
    assert "missing.onnx: cannot read" in proc.stderr
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not onnx at all")
    proc = cli("explain", bad)
    assert proc.returncode == 1
    assert "not a valid ONNX model" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "o.onnx").exists()


def test_bad_simplify_is_a_usage_error(tmp_path):
    proc = cli("optimize", EXAMPLES / "lact_v2_small.mlir", "-o", tmp_path / "o.mlir",
               "--simplify", "nope")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def _one_error(proc, *fragments):
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("ttt: error: ") and proc.stderr.count("\n") == 1, \
        proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_run_and_optimize_file_errors_are_one_line(tmp_path):
    example = EXAMPLES / "lact_v2_small.mlir"
    _one_error(cli("optimize", example, "-o", ""), "-o: empty output file name")
    _one_error(cli("optimize", example, "-o", tmp_path / "no" / "dir" / "o.mlir"),
               "cannot write")
    _one_error(cli("run", example, "--inputs", tmp_path / "missing.npz"),
               "missing.npz: no such file")
    _one_error(cli("run", example, "--inputs", ""), "--inputs: empty file name")


def test_run_refuses_an_archive_larger_than_memory(tmp_path):
    """Only the member's header is written: it declares 3.6 TiB of float32, more than
    any machine this runs on has; the check reads headers, never the arrays."""
    import io
    import zipfile

    import numpy as np
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)})
    huge = tmp_path / "huge.npz"
    with zipfile.ZipFile(huge, "w") as archive:
        archive.writestr("arg0.npy", header.getvalue())
    _one_error(cli("run", EXAMPLES / "lact_v2_small.mlir", "--inputs", huge),
               "exceed the available memory", "TiB")
