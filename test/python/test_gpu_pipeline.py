"""`ttt-to-gpu` without a GPU: the kernels' loop mapping, checked numerically.

`ttt-to-gpu{emulate=true}` maps every loop nest onto blocks and threads
exactly as for the GPU, then runs each kernel as host loops over its blocks
and threads. Whatever the tile sizes, that must compute what `ttt-to-cpu`
computes, for the chunk-parallel (linattn) forms and for the recurrent
references alike; bf16 must round (and stay close).
"""

from __future__ import annotations

import numpy as np
import pytest

import ttt_mlir
from compiler import run_function, run_opt
from oracle import ttt_oracle as oracle
from test_recurrent import make_case

RTOL = 1e-5

LACT = dict(model="swiglu", trained=[0, 1, 2], loss="dot", chunk=8, order="apply_then_update",
            ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), weight_norm="output_channels",
            _momentum=True)
# The paper's cumulative simplifications, as ttt-simplify options.
VARIANTS = ["freeze-inner", "drop-weight-norm", "collapse-mlp", "drop-token-lr",
            "drop-momentum", "drop-muon"]


def layer(cfg, *, seed, variant=0, linattn=True, **case):
    case.setdefault("hidden", 8)  # collapse-mlp needs a square SwiGLU
    q, k, v, weights, extra = make_case(cfg, seed=seed, **case)
    operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
    text = ttt_mlir.kvb_layer_function(cfg, operands, return_weights=False)
    if variant:
        text = run_opt(text, f"--ttt-simplify={' '.join(VARIANTS[:variant])}")
    if linattn:
        text = run_opt(text, "--ttt-to-linattn")
    return text, [a for _, a in operands]


def cpu_and_emulated(text, arrays, tmp_path, gpu_options="emulate=true"):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "emu").mkdir()
    # -O0: these modules are large and run for microseconds.
    ref = run_function(text, arrays, tmp_path / "cpu", extra_args=["--opt-level=0"])
    got = run_function(text, arrays, tmp_path / "emu",
                       extra_args=["--opt-level=0", "--device=cuda",
                                   f"--gpu-options={gpu_options}"])
    assert len(ref) == len(got)
    return ref, got


CASES = {
    # The Variants 2 and 5 of LaCT-LLM (static feature map; momentum and
    # Muon, then neither momentum nor per-token lr), a partial last chunk.
    "lact_v2": (LACT, dict(variant=2, T=37, lr_columns=3)),
    "lact_v5": (LACT, dict(variant=5, T=37, lr_columns=3)),
    # The whole LaCT-LLM layer stays a ttt.kvb_layer: its recurrent reference.
    "lact_recurrent": (LACT, dict(linattn=False, T=21, lr_columns=3)),
    # Affine (delta-rule) scan of an MSE static kernel.
    "mse_affine": (dict(model="linear", trained=[0], loss="mse", chunk=8,
                        order="update_then_apply", lr_scale=0.3), dict(T=45, lr_columns=1)),
    # Token-causal linear attention with the intra-chunk term.
    "causal": (dict(model="linear", trained=[0], loss="dot", chunk=8, order="causal",
                    lr_scale=0.3), dict(T=29, lr_columns=1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_kernels_match_cpu(name, tmp_path):
    cfg, case = CASES[name]
    case = dict(case)
    text, arrays = layer(cfg, seed=31, variant=case.pop("variant", 0),
                         linattn=case.pop("linattn", True), **case)
    assert ("linattn." in text) != (name == "lact_recurrent")
    ref, got = cpu_and_emulated(text, arrays, tmp_path)
    for r, g in zip(ref, got):
        assert r.shape == g.shape
        assert ttt_mlir.relative_error(g, r) <= RTOL
    assert np.abs(ref[0]).max() > 0.05


@pytest.mark.parametrize("tiles", ["tile-x=1 tile-y=1", "tile-x=3 tile-y=5", "tile-x=128 tile-y=8"])
def test_tile_sizes_do_not_change_results(tiles, tmp_path):
    # Partial tiles, single-thread blocks, blocks larger than the data.
    text, arrays = layer(LACT, seed=32, variant=2, T=19, lr_columns=3)
    ref, got = cpu_and_emulated(text, arrays, tmp_path, f"emulate=true {tiles}")
    assert ttt_mlir.relative_error(got[0], ref[0]) <= RTOL


def test_bf16_rounds_operands(tmp_path):
    text, arrays = layer(LACT, seed=33, variant=2, T=37, lr_columns=3)
    ref, got = cpu_and_emulated(text, arrays, tmp_path, "emulate=true precision=bf16")
    err = ttt_mlir.relative_error(got[0], ref[0])
    # bf16 has an 8-bit mantissa: the result moves, but stays close.
    assert 1e-5 < err <= 3e-2, err


def test_empty_sequence(tmp_path):
    # Zero tokens: every launch still has at least one block, and nothing runs.
    text, arrays = layer(LACT, seed=34, variant=2, T=5, lr_columns=3)
    # The sequential scan: the parallel one does not handle zero chunks yet
    # (on the CPU either; a runtime check reports an out-of-bounds slice).
    text = run_opt(text, "--linattn-to-linalg=scan=sequential")
    # q, k, v, lr and momentum have the sequence as dim 2 (the weights do not).
    arrays = [a[:, :, :0] if a.ndim >= 3 and a.shape[2] == 5 else a for a in arrays]
    assert arrays[0].shape[2] == 0
    ref, got = cpu_and_emulated(text, arrays, tmp_path)
    assert ref[0].shape == got[0].shape and ref[0].size == 0
