"""ttt-raise-chunk-loops on SwiGLU fast weights (LaCT's inner model), against
NumPy: programs written from the math in random layouts and spellings
(swiglu_chunk_loops.py) are read as one ttt.kvb_layer whose reference
lowering computes the same numbers, and programs changed so that an update is
no longer the model's dot-loss gradient step are left as they are, with the
reason."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import run_function, run_opt
from swiglu_chunk_loops import random_mutant, random_swiglu_layer

SEED = 4712


def _close(got, want):
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max()))


@pytest.mark.parametrize("case", range(24))
def test_swiglu_raised_to_a_layer(case, tmp_path):
    rng = np.random.default_rng([SEED, case])
    layer = random_swiglu_layer(rng)
    arrays = layer.draw_arrays(rng)
    want = layer.expected()
    # The program itself is what the docstring of swiglu_chunk_loops says.
    _close(run_function(layer.mlir(), arrays, tmp_path)[0], want)
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.chunk_loop" not in raised and raised.count("ttt.kvb_layer") == 1, (remarks, layer)
    assert "a SwiGLU fast-weight network (dot loss" in remarks, remarks
    assert ("weight norm" in remarks) == layer.weight_norm, remarks
    assert ("momentum" in remarks) == bool(layer.momentum), remarks
    assert ("momentum(" in raised) == bool(layer.momentum)
    assert "kind = swiglu, trained = [0, 1, 2]" in raised
    _close(run_function(raised, arrays, tmp_path, form="recurrent")[0], want)


@pytest.mark.parametrize("case", range(16))
def test_swiglu_mutants_left_as_they_are(case):
    rng = np.random.default_rng([SEED, 100 + case])
    layer = random_mutant(rng)
    layer.draw_arrays(rng)
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.kvb_layer" not in raised and "ttt.chunk_loop" in raised, (remarks, layer)
    assert "a SwiGLU fast-weight network (W1 (silu(W0 x) * (W2 x))): a TTT layer with a nonlinear inner model, no linear attention; no ttt.kvb_layer yet:" in remarks, remarks
    reason = {
        "silu_grad": "W0's update is not the dot loss's gradient step",
        "queries_in_update": "W2's update is not the dot loss's gradient step",
        "w2_step": "scaled differently",
        "norm_target": "cannot prove to be its initial value's",
        "momentum_step": "moved by their momenta differently",
        "narrow_update": "its update is computed in bf16 on the way",
    }[layer.mutation]
    assert reason in remarks, (remarks, layer.mutation)


@pytest.mark.parametrize("case", range(12))
def test_simplified_to_variant_2(case, tmp_path):
    """`--ttt-simplify="freeze-inner drop-weight-norm"` on the raised layer is
    the paper's Variant 2 (only W1 trains, no weight norm; momentum and rates
    kept): linear attention with the static kernel silu(x W0) * (x W2), so
    ttt-to-linattn rewrites it, and it computes what NumPy says V2 does."""
    rng = np.random.default_rng([SEED, 200 + case])
    layer = random_swiglu_layer(rng)
    arrays = layer.draw_arrays(rng)
    simplified, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops",
                                  "--ttt-simplify=freeze-inner drop-weight-norm",
                                  "--ttt-to-linattn", stderr=True)
    assert "ttt.kvb_layer" not in simplified and "linattn." in simplified, remarks
    assert "only the output layer trains (the paper's Variant 1)" in remarks, remarks
    assert ("weight normalization removed" in remarks) == layer.weight_norm, remarks
    want = layer.expected(trained=(1,), weight_norm=False)
    _close(run_function(simplified, arrays, tmp_path)[0], want)
