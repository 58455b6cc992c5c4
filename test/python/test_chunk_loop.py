"""The canonical chunk loop end to end, against NumPy: ttt.chunk_loop's reference
lowering, ttt-form-chunk-loops (from scf.for loops: the lowering's own and the
hand-written spellings of linalg_programs.py) and ttt-raise-chunk-loops, on layers
written from the math in random layouts and spellings (chunk_loops.py)."""

from __future__ import annotations

import numpy as np
import pytest

from chunk_loops import random_linear_layer, random_momentum_layer
from compiler import run_function, run_opt

SEED = 4711


def _check(layer, got):
    for name, g, want in zip(("output", "final weight"), got, layer.expected()):
        assert g.shape == want.shape, (name, layer)
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(g - want).max() <= 1e-5 * scale, (name, layer)


@pytest.mark.parametrize("case", range(16))
def test_lowered_chunk_loop_matches_numpy(case, tmp_path):
    rng = np.random.default_rng([SEED, case])
    layer = random_linear_layer(rng)
    arrays = layer.draw_arrays(rng)
    _check(layer, run_function(layer.mlir(), arrays, tmp_path))


@pytest.mark.parametrize("case", range(16))
def test_formed_from_its_lowering(case, tmp_path):
    """ttt-form-chunk-loops reads the reference lowering's scf.for back as
    the same chunk loop: one ttt.chunk_loop, no loop left, and the numbers
    unchanged."""
    rng = np.random.default_rng([SEED, 100 + case])
    layer = random_linear_layer(rng)
    arrays = layer.draw_arrays(rng)
    lowered = run_opt(layer.mlir(), "--ttt-lower-recurrent")
    assert "ttt.chunk_loop" not in lowered and "scf.for" in lowered
    formed, remarks = run_opt(lowered, "--ttt-form-chunk-loops=explain", stderr=True)
    assert formed.count("ttt.chunk_loop") == 1 and "scf.for" not in formed, (remarks, layer)
    assert f"chunk({layer.chunk})" in formed
    _check(layer, run_function(formed, arrays, tmp_path))


@pytest.mark.parametrize("case", range(24))
def test_raised_to_a_layer_in_any_layout(case, tmp_path):
    """ttt-raise-chunk-loops reads the linear layer whatever its layout,
    weight orientation, rates, order, length and loss, and however the update
    is spelled (the rate on the keys or on the product, operands swapped, the
    step split in two factors, the sum added by its own op), and the
    ttt.kvb_layer it builds computes the same numbers in its recurrent and
    parallel forms."""
    rng = np.random.default_rng([SEED, 200 + case])
    layer = random_linear_layer(rng)
    arrays = layer.draw_arrays(rng)
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.chunk_loop" not in raised and raised.count("ttt.kvb_layer") == 1, (remarks, layer)
    order = "update_then_apply" if layer.update_first else "apply_then_update"
    assert f"({layer.loss} loss, " in remarks and f"chunks of {layer.chunk}, {order}" in remarks, remarks
    for form in ("recurrent", "parallel"):
        _check(layer, run_function(raised, arrays, tmp_path, form=form))


@pytest.mark.parametrize("case", range(8))
def test_scf_loop_formed_and_raised(case, tmp_path):
    """From an scf.for over chunks (the reference lowering of a random
    layer) to a ttt.kvb_layer, through ttt.chunk_loop, exactly."""
    rng = np.random.default_rng([SEED, 300 + case])
    layer = random_linear_layer(rng)
    arrays = layer.draw_arrays(rng)
    lowered = run_opt(layer.mlir(), "--ttt-lower-recurrent")
    raised = run_opt(lowered, "--ttt-form-chunk-loops", "--ttt-raise-chunk-loops")
    assert "scf.for" not in raised and raised.count("ttt.kvb_layer") == 1, layer
    _check(layer, run_function(raised, arrays, tmp_path, form="parallel"))


def _loop_spellings():
    import itertools

    import linalg_programs as lp

    for contraction, weight, orientation, loss, bounds, (dynamic, partial) in itertools.product(
            ("generic", "named"), ("arg", "const"), ("x_w", "w_xt"), ("dot", "mse"),
            ("constant", "computed"), ((False, False), (True, False), (True, True))):
        if partial and bounds == "computed":
            continue  # linalg_programs writes partial chunks only with constant bounds
        if contraction == "named" and orientation == "w_xt":
            continue  # linalg_programs writes W x^T with generic contractions only
        yield lp.Spelling(contraction=contraction, weight=weight, orientation=orientation,
                          loss=loss, form="loop", bounds=bounds, dynamic=dynamic,
                          partial_chunks=partial, T=10 if partial else 12)


@pytest.mark.parametrize("spelling", list(_loop_spellings()), ids=lambda s: s.name)
def test_hand_written_loops_formed_and_raised(spelling, tmp_path):
    """The scf.for chunk loops of linalg_programs.py (contractions as
    linalg.generic einsums or batch_matmul on chunks reshaped to [B*H, C, D],
    the weight x W or W x^T, the dot or MSE loss,
    constant or computed bounds, static or run-time length, full or partial
    last chunks) become one ttt.kvb_layer each, exact against the NumPy
    oracle of that module."""
    import linalg_programs as lp

    raised, remarks = run_opt(lp.ttt_program(spelling), "--ttt-form-chunk-loops=explain",
                              "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "scf.for" not in raised and raised.count("ttt.kvb_layer") == 1, remarks
    assert f"({spelling.loss} loss, " in remarks, remarks
    rng = np.random.default_rng(SEED)
    q = rng.normal(0, 1, (lp.B, lp.H, spelling.T, lp.D)).astype(np.float32)
    k = rng.normal(0, 0.5, (lp.B, lp.H, spelling.T, lp.D)).astype(np.float32)
    v = rng.normal(0, 1, (lp.B, lp.H, spelling.T, lp.E)).astype(np.float32)
    args, w0 = [q, k, v], lp.initial_weight(spelling)
    if spelling.weight == "arg":
        w0 = rng.normal(0, 0.5, (lp.B, lp.H) + w0.shape[2:]).astype(np.float32)
        args.append(w0)
    want = lp.ttt_oracle(spelling, q, k, v, w0)
    for form in ("recurrent", "parallel"):
        got = run_function(raised, args, tmp_path, form=form)[0]
        assert np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max())), form


@pytest.mark.parametrize("case", range(12))
def test_momentum_raised_as_a_joint_state(case, tmp_path):
    """LaCT's momentum on a linear fast weight (M <- mean(m) M + U, W <- W + c M,
    M from zero): the two carried states read as one layer with momentum,
    whatever the loss, order and spelling; a chunk mean written as a constant
    1/C that f32 rounds (1/3) is kept exact by scaling the coefficients."""
    rng = np.random.default_rng([SEED, 400 + case])
    layer = random_momentum_layer(rng)
    arrays = layer.draw_arrays(rng)
    _check(layer, run_function(layer.mlir(), arrays, tmp_path))
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "momentum, " in remarks and raised.count("ttt.kvb_layer") == 1, remarks
    assert "momentum(" in raised
    for form in ("recurrent", "parallel"):
        _check(layer, run_function(raised, arrays, tmp_path, form=form))



SUM_OVER_A_BROADCAST = """
#kv = [affine_map<(i, j, t, r) -> (t, i)>, affine_map<(i, j, t, r) -> (t, j)>,
       affine_map<(i, j, t, r) -> (r)>, affine_map<(i, j, t, r) -> (i, j)>]
#qw = [affine_map<(t, j, i) -> (t, i)>, affine_map<(t, j, i) -> (i, j)>,
       affine_map<(t, j, i) -> (t, j)>]
func.func @layer(%w0: tensor<4x4xf32>, %q: tensor<8x4xf32>, %k: tensor<8x4xf32>,
                 %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %o, %f = ttt.chunk_loop chunk(4) state(%w0 : tensor<4x4xf32>)
      windows(%q, %k, %v : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) along [0, 0, 0]
      outputs along [0] {
  ^bb0(%w: tensor<4x4xf32>, %qc: tensor<4x4xf32>, %kc: tensor<4x4xf32>, %vc: tensor<4x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %out = linalg.generic {indexing_maps = #qw, iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%qc, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<4x4xf32>
    // W + the sum over the tokens t and over r (of 3, a loop only a tensor the
    // payload does not read sizes) of k_t^T v_t: each product added 3 times.
    %er = tensor.empty() : tensor<3xf32>
    %next = linalg.generic {indexing_maps = #kv, iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%kc, %vc, %er : tensor<4x4xf32>, tensor<4x4xf32>, tensor<3xf32>) outs(%w : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %unused: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<4x4xf32>
    ttt.chunk_yield outputs(%out : tensor<4x4xf32>) state(%next : tensor<4x4xf32>)
  } -> outputs(tensor<8x4xf32>) state(tensor<4x4xf32>)
  return %o : tensor<8x4xf32>
}
"""


def test_a_sum_over_a_loop_no_factor_reads_counts_its_length(tmp_path):
    """An update summed over a loop that none of its factors reads (r, of 3) adds each
    product 3 times: the raised layer's step says so, and it computes what the loop
    computes."""
    rng = np.random.default_rng(4714)
    arrays = [(rng.standard_normal((4, 4)) / 8).astype(np.float32)] + \
        [(rng.standard_normal((8, 4)) / 2).astype(np.float32) for _ in range(3)]
    want = run_function(SUM_OVER_A_BROADCAST, arrays, tmp_path)[0]
    raised, remarks = run_opt(SUM_OVER_A_BROADCAST, "--ttt-raise-chunk-loops=explain",
                              stderr=True)
    assert "ttt.kvb_layer" in raised and "ttt.chunk_loop" not in raised, remarks
    got = run_function(raised, arrays, tmp_path)[0]
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max()))
