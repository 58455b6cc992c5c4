"""ttt-form-single-steps: a fast weight updated once and applied, found by dataflow.

Two sources nobody wrote for the pass: single steps written from the math
(chunk_loops.LinearLayer with one chunk, in random layouts and spellings, of static or
run-time length) brought to
straight-line linalg by the reference lowering, and the upstream ViT^3 GLU module
lowered by torch-mlir (test/fixtures/linalg/vit3_glu). Each becomes one
`ttt.chunk_loop chunk(0)` whose program still computes what the original did (the
NumPy oracle, PyTorch's stored output); the linear ones are then raised to a
`ttt.kvb_layer` that computes it in both of its forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chunk_loops import random_linear_layer
from compiler import run_function, run_opt

SEED = 8191
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "linalg"


def _single_step(rng):
    """A layer updated once on all its tokens, then applied to them, as the
    straight-line program the reference lowering writes for one chunk."""
    layer = random_linear_layer(rng)
    # One token sums nothing: its k^T v binds no keys to values.
    layer.length = max(layer.length, 2)
    layer.update_first = True
    layer.chunk = layer.length
    program = layer.mlir().replace(f"chunk({layer.length})", "chunk(0)")
    return layer, run_opt(program, "--ttt-lower-recurrent")


def _close(got, want):
    scale = max(1.0, float(np.abs(want).max()))
    return got.shape == want.shape and float(np.abs(got - want).max()) <= 1e-5 * scale


@pytest.mark.parametrize("case", range(16))
def test_single_step_from_the_math(case, tmp_path):
    rng = np.random.default_rng([SEED, case])
    layer, lowered = _single_step(rng)
    assert "ttt.chunk_loop" not in lowered
    arrays = layer.draw_arrays(rng)
    formed, remarks = run_opt(lowered, "--ttt-form-single-steps=explain", stderr=True)
    assert formed.count("ttt.chunk_loop chunk(0)") == 1, (layer, remarks)
    for got, want in zip(run_function(formed, arrays, tmp_path), layer.expected()):
        assert _close(got, want), layer
    raised, remarks = run_opt(formed, "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.kvb_layer" in raised and "ttt.chunk_loop" not in raised, (layer, remarks)
    for form in ("recurrent", "parallel"):
        got = run_function(raised, arrays, tmp_path, form=form)
        for g, want in zip(got, layer.expected()):
            assert _close(g, want), (form, layer)


def test_vit3_glu_is_one_step(tmp_path):
    """ViT^3's inner training (a simplified SwiGLU: two weights, the gradient
    clipped by its norm) as torch-mlir lowers it: one loop of both weights,
    computing what PyTorch computed. It stays a loop: the fixture's function
    multiplies the two weights' applications after it (the GLU outside the loop), so
    each output alone reads its weight through the clipping's division, which no
    ttt.kvb_layer expresses (the parameter, read once per step, is read as the state:
    the gradient's reads and the update's are of one value)."""
    program = (FIXTURES / "vit3_glu.mlir").read_text()
    with np.load(FIXTURES / "vit3_glu.npz") as data:
        args = [data[f"arg{i}"] for i in range(len(data.files) - 1)]
        want = data["o"]
    formed, remarks = run_opt(program, "--ttt-form-single-steps=explain", stderr=True)
    assert formed.count("ttt.chunk_loop chunk(0)") == 1, remarks
    (got,) = run_function(formed, args, tmp_path)
    rel = float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())
    assert rel <= 1e-4
    _, remarks = run_opt(formed, "--ttt-raise-chunk-loops=explain", stderr=True)
    assert ("not a ttt.kvb_layer: its output reads its state through 'arith.divf'"
            in remarks), remarks


def test_ordinary_programs_unchanged():
    """Every unrolled fixture that is not a single step comes out of the pass as
    it went in: a chunk step's first update is the loop's, not a step of its own."""
    for name in ("linear_dot", "lact_v6", "ttt_linear"):
        program = (FIXTURES / f"{name}.mlir").read_text()
        assert run_opt(program, "--ttt-form-single-steps") == run_opt(program), name


@pytest.mark.parametrize("name, shapes", [
    # A weight whose new value is computed through sums of its own type, each applied
    # to data (Muon's Newton-Schulz iterations kept in fp32): the last sum is the new
    # value.
    ("iterated_new_value", ((4, 4), (8, 4), (8, 4), (8, 4))),
    # Batch and heads merged as B*H around batch_matmul (torch-mlir's lowering).
    ("merged_heads", ((2, 2, 4, 4), (4, 8, 4), (4, 4, 8), (2, 2, 8, 4), (4, 8, 4))),
])
def test_lit_single_steps_compute_what_they_did(name, shapes, tmp_path):
    """The lit test's single steps (form-single-steps.mlir), formed into one loop,
    compute what the program did (ttt-run of the original on random inputs)."""
    lit = Path(__file__).resolve().parents[1] / "Conversion" / "LinalgToTTT" / \
        "form-single-steps.mlir"
    (program,) = [part for part in lit.read_text().split("// -----")
                  if f"func.func @{name}(" in part]
    formed = run_opt(program, "--ttt-form-single-steps")
    assert formed.count("ttt.chunk_loop chunk(0)") == 1
    rng = np.random.default_rng(SEED)
    arrays = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in shapes]
    (want,) = run_function(program, arrays, tmp_path)
    (got,) = run_function(formed, arrays, tmp_path)
    assert _close(got, want)
