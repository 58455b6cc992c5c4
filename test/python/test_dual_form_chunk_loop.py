"""ttt-raise-chunk-loops on TTT-Linear's dual form (ttt-lm-pytorch's mini-batch step),
against NumPy: programs written from the math in random spellings
(dual_form_chunk_loops.py) are read as one ttt.kvb_layer (layernorm_mse, causal
order) whose recurrent and parallel forms compute what the primal per-token form
computes in float64, no worse than the program itself (with the LayerNorm's learned
scale and shift per feature or per stream, or without); programs changed so that
they are no such layer are left as they are, with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import run_function, run_opt
from dual_form_chunk_loops import random_dual_form, random_mutant

SEED = 4713


def _error(got, want):
    assert got.shape == want.shape
    return float(np.abs(got - want).max())


@pytest.mark.parametrize("case", range(20))
def test_dual_form_raised_to_a_layer(case, tmp_path):
    rng = np.random.default_rng([SEED, case])
    layer = random_dual_form(rng)
    arrays = layer.draw_arrays(rng)
    want = layer.expected()
    scale = max(1.0, float(np.abs(want).max()))
    # The program computes what the docstring of dual_form_chunk_loops says.
    program = _error(run_function(layer.mlir(), arrays, tmp_path)[0], want)
    assert program <= 1e-3 * scale, (program, layer)
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.chunk_loop" not in raised and raised.count("ttt.kvb_layer") == 1, (remarks, layer)
    assert "a linear fast weight" in remarks and "causal dual form" in remarks, remarks
    assert ("with bias" in remarks) == layer.bias, remarks
    assert "order = causal" in raised and "kind = layernorm_mse" in raised
    for form in ("recurrent", "parallel"):
        got = _error(run_function(raised, arrays, tmp_path, form=form)[0], want)
        assert got <= max(2.0 * program, 1e-5 * scale), (form, got, program, layer)


@pytest.mark.parametrize("case", range(15))
def test_dual_form_mutants_left_as_they_are(case):
    rng = np.random.default_rng([SEED, 100 + case])
    layer = random_mutant(rng)
    layer.draw_arrays(rng)
    raised, remarks = run_opt(layer.mlir(), "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "ttt.kvb_layer" not in raised and "ttt.chunk_loop" in raised, (remarks, layer)
    assert "(TTT-Linear/MLP's dual form): a TTT layer with a nonlinear inner model, no " \
           "linear attention; no ttt.kvb_layer yet:" in remarks, remarks
    reason = {
        "strict_mask": "its mask over a chunk's tokens is not causal (j <= i)",
        "no_mean": "its gradient is not the squared error's through the keys' LayerNorm",
        "eps": "the LayerNorms of its keys and of its output differ in eps",
        "first_row": "W's update is not its gradient at the chunk's start, weighted by the "
                     "last token's step sizes",
        "gamma_once": "its gradient is not the squared error's through the keys' LayerNorm",
    }[layer.mutation]
    assert reason in remarks, (remarks, layer.mutation)
