"""`ttt-to-linattn` against the recurrent reference, both through `ttt-run`.

Every rewritten layer must compute what its recurrent lowering computes
(fp32 relative error <= 1e-5 on fresh random inputs); every layer the
rewrite must not touch must come out unchanged, with a remark saying why.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ttt_mlir
from compiler import run_function, run_opt
from oracle import ttt_oracle as oracle
from test_recurrent import make_case

RTOL = 1e-5


def build(cfg, *, seed, **case):
    q, k, v, weights, extra = make_case(cfg, seed=seed, **case)
    operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
    text = ttt_mlir.kvb_layer_function(cfg, operands, return_weights=False)
    return text, [a for _, a in operands]


def rewrite(text, *extra_passes):
    """Runs ttt-opt with the passes and returns (output IR, remarks)."""
    out = run_opt(text, *extra_passes, "--ttt-to-linattn", "--mlir-print-op-on-diagnostic=false",
                  stderr=True)
    return out


def compare(text, arrays, tmp_path):
    """Recurrent result of `text` vs. the result of its rewrite."""
    rewritten, remarks = rewrite(text)
    (tmp_path / "ref").mkdir()
    (tmp_path / "rew").mkdir()
    ref = run_function(text, arrays, tmp_path / "ref")[0]
    got = run_function(rewritten, arrays, tmp_path / "rew")[0]
    return rewritten, remarks, ttt_mlir.relative_error(got, ref), ref


# LaCT-LLM-shaped layer (SwiGLU, per-matrix lr, momentum, Muon, weight norm,
# apply-then-update, a partial last chunk) and the paper's cumulative
# simplifications (Table 2): each variant is produced by ttt-simplify.
LACT = dict(model="swiglu", trained=[0, 1, 2], loss="dot", chunk=8, order="apply_then_update",
            ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), weight_norm="output_channels",
            _momentum=True)
VARIANT_OPTIONS = ["freeze-inner", "drop-weight-norm", "collapse-mlp", "drop-token-lr",
                   "drop-momentum", "drop-muon"]


@pytest.mark.parametrize("variant", range(7))
def test_table2_variants(variant, tmp_path):
    text, arrays = build(LACT, seed=40 + variant, T=37, din=8, dout=8, hidden=8, lr_columns=3)
    if variant:
        options = " ".join(VARIANT_OPTIONS[:variant])
        text, remarks = run_opt(text, f"--ttt-simplify={options}",
                                "--mlir-print-op-on-diagnostic=false", stderr=True)
        assert remarks.count("model changed") == variant
        assert f"Variant {variant}" in remarks
    rewritten, remarks, err, ref = compare(text, arrays, tmp_path)
    if variant < 2:
        # base: trained inner layers and weight norm; V1: weight norm.
        assert "ttt.kvb_layer" in rewritten and "linattn." not in rewritten
        assert "left unchanged" in remarks and "row weight normalization" in remarks
        assert err == 0.0
    else:
        assert "ttt.kvb_layer" not in rewritten and "linattn.chunk_reduce" in rewritten
        assert err <= RTOL, err
    assert np.abs(ref).max() > 0.1


def test_lact_nvs_static_kernel(tmp_path):
    # NVS with only the output layer trained and no state transform: one
    # full-mask attention over the input views, applied to all tokens.
    cfg = dict(model="swiglu", trained=[1], loss="dot", schedule="full_batch", reduction="mean")
    text, arrays = build(cfg, seed=7, H=1, T=24, Tq=40, lr_columns=3)
    rewritten, _, err, _ = compare(text, arrays, tmp_path)
    assert "linattn.attention" in rewritten and "mask = full" in rewritten
    assert err <= RTOL, err


def test_lact_nvs_full_layer_is_left_alone(tmp_path):
    cfg = dict(model="swiglu", trained=[0, 1, 2], loss="dot", schedule="full_batch",
               ns_steps=5, ns_coeffs=[oracle.NVS_NS_COEFF], weight_norm="output_channels")
    text, arrays = build(cfg, seed=8, H=1, T=24, Tq=40, lr_columns=3)
    rewritten, remarks, err, _ = compare(text, arrays, tmp_path)
    assert "linattn." not in rewritten
    assert "single full-batch step" in remarks and "left unchanged" in remarks
    assert err == 0.0


def test_vit3_is_left_alone(tmp_path):
    cfg = dict(model="glu", trained=[0, 1], loss="dot", scale=1 / 3, reduction="mean",
               clip="output_channels", schedule="full_batch")
    text, arrays = build(cfg, seed=9, T=30)
    rewritten, remarks, err, _ = compare(text, arrays, tmp_path)
    assert "linattn." not in rewritten
    assert "gates every output channel" in remarks
    assert err == 0.0


@pytest.mark.parametrize("order", ["apply_then_update", "update_then_apply"])
def test_linear_mse_affine_scan(order, tmp_path):
    cfg = dict(model="linear", trained=[0], loss="mse", chunk=8, order=order, lr_scale=0.3)
    text, arrays = build(cfg, seed=10, T=45, lr_columns=1)
    rewritten, _, err, _ = compare(text, arrays, tmp_path)
    assert "kind = residual_affine" in rewritten
    assert err <= RTOL, err


@pytest.mark.parametrize("name,cfg,case", [
    ("causal_dot", dict(model="linear", trained=[0], loss="dot", chunk=8, order="causal",
                        lr_scale=0.3), dict(lr_columns=1)),
    ("causal_mean", dict(model="linear", trained=[0], loss="dot", chunk=8, order="causal",
                         reduction="mean", lr_scale=0.7), dict(lr_columns=1)),
    ("mlp_bias_feature", dict(model="mlp", bias=True, activation="gelu_tanh", trained=[2, 3],
                              loss="dot", chunk=8, order="update_then_apply"), dict()),
    ("ascent_mean", dict(model="linear", trained=[0], loss="dot", chunk=8, sign="ascent",
                         reduction="mean", scale=0.5), dict(per_sample_weights=True)),
    ("inner_steps", dict(model="linear", trained=[0], loss="dot", chunk=8, inner_steps=3,
                         lr_scale=0.1), dict()),
])
def test_other_rewrites(name, cfg, case, tmp_path):
    text, arrays = build(cfg, seed=11, **case)
    rewritten, _, err, _ = compare(text, arrays, tmp_path)
    assert "ttt.kvb_layer" not in rewritten
    assert err <= RTOL, err


def test_long_sequence_small_chunks_with_momentum(tmp_path):
    # 4096 chunks of 16 tokens with momentum factors in [0.01, 0.5]: the
    # parallel (log-depth) scan must neither underflow into NaN nor drift
    # from the sequential reference.
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=16, order="apply_then_update",
               lr_scale=0.05, _momentum=True)
    text, arrays = build(cfg, seed=12, B=1, H=2, T=65536, din=4, dout=4)
    rewritten, _, err, ref = compare(text, arrays, tmp_path)
    assert "kind = decayed" in rewritten
    assert np.all(np.isfinite(ref))
    assert err <= RTOL, err


@pytest.mark.parametrize("scan", ["parallel", "sequential", "per-entry"])
def test_scan_strategies_agree(scan, tmp_path):
    # Every scan lowering of the same linattn module against the recurrent layer.
    cfg = dict(model="swiglu", trained=[1], loss="dot", chunk=4, order="update_then_apply",
               ns_steps=2, ns_coeffs=[oracle.NVS_NS_COEFF], _momentum=True)
    text, arrays = build(cfg, seed=13, T=53, lr_columns=3)
    rewritten = rewrite(text)[0]
    lowered = run_opt(rewritten, f"--linattn-to-linalg=scan={scan}")
    assert ("scf.while" in lowered) == (scan == "parallel")
    assert ("scf.forall" in lowered) == (scan == "per-entry")
    (tmp_path / "ref").mkdir()
    (tmp_path / "low").mkdir()
    ref = run_function(text, arrays, tmp_path / "ref")[0]
    got = run_function(lowered, arrays, tmp_path / "low")[0]
    assert ttt_mlir.relative_error(got, ref) <= RTOL


@pytest.mark.parametrize("order", ["apply_then_update", "update_then_apply", "causal"])
def test_empty_sequence(order, tmp_path):
    # T = 0: no chunk at all; both forms must return an empty result, not crash.
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=4, order=order, _momentum=order != "causal")
    text, arrays = build(cfg, seed=14, T=0)
    rewritten, _, err, ref = compare(text, arrays, tmp_path)
    assert "linattn." in rewritten
    assert ref.shape[2] == 0 and err == 0.0


def _bf16(x):
    """x rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def _bf16_program(f32_text, arrays):
    """The f32 layer function as a bf16 one, called by `@main`, which takes f32
    arguments, rounds them to bf16 and widens the output back."""
    layer = f32_text.replace("xf32>", "xbf16>")
    f32 = [f"tensor<{'x'.join(map(str, a.shape))}xf32>" for a in arrays]
    bf16 = [t.replace("xf32>", "xbf16>") for t in f32]
    out = re.search(r"-> \((tensor<[^>]*>)\)", layer).group(1)
    lines = [f"func.func @main({', '.join(f'%a{i}: {t}' for i, t in enumerate(f32))}) -> "
             f"{out.replace('xbf16>', 'xf32>')} {{"]
    for i, (wide, narrow) in enumerate(zip(f32, bf16)):
        lines.append(f"  %n{i} = arith.truncf %a{i} : {wide} to {narrow}")
    args = ", ".join(f"%n{i}" for i in range(len(arrays)))
    lines.append(f"  %o = func.call @layer({args}) : ({', '.join(bf16)}) -> {out}")
    lines.append(f"  %w = arith.extf %o : {out} to {out.replace('xbf16>', 'xf32>')}")
    lines.append(f"  return %w : {out.replace('xbf16>', 'xf32>')}\n}}")
    return layer + "\n".join(lines) + "\n"


BF16_LAYERS = {
    # Additive (prefix sum over chunks), affine (MSE: a scan of I - kᵀk), one full batch.
    "linear_dot": dict(model="linear", trained=[0], loss="dot", chunk=8,
                       order="update_then_apply", lr_scale=0.1),
    "linear_mse": dict(model="linear", trained=[0], loss="mse", chunk=8,
                       order="apply_then_update", lr_scale=0.2),
    "full_batch": dict(model="linear", trained=[0], loss="dot", schedule="full_batch",
                       reduction="mean"),
}


@pytest.mark.parametrize("name", sorted(BF16_LAYERS))
def test_bf16_layer_is_rewritten_in_f32(name, tmp_path):
    """A bf16 layer that is linear attention is rewritten: its operands widened, the
    parallel form in f32, the output rounded once, as its recurrent form computes it.
    Against a float64 NumPy oracle on the same bf16 inputs its error is no worse than
    the recurrent form's (both within bf16's rounding of the output)."""
    cfg = BF16_LAYERS[name]
    q, k, v, weights, extra = make_case(cfg, seed=70, T=64, lr_columns=1)
    q, k, v = (_bf16(x) for x in (q, k, v))
    weights = [_bf16(w) for w in weights]
    extra = {key: _bf16(val) for key, val in extra.items()}
    operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
    arrays = [a for _, a in operands]
    f32_text = ttt_mlir.kvb_layer_function(cfg, operands, dynamic=False,
                                           return_weights=False)
    program = _bf16_program(f32_text, arrays)
    rewritten, remarks = rewrite(program)
    assert "ttt.kvb_layer" not in rewritten, remarks
    assert "linattn." in rewritten and "arith.extf" in rewritten, rewritten
    (tmp_path / "rec").mkdir()
    (tmp_path / "par").mkdir()
    recurrent = run_function(program, arrays, tmp_path / "rec", entry="main")[0]
    parallel = run_function(rewritten, arrays, tmp_path / "par", entry="main")[0]
    want, _ = oracle.kvb_layer(
        q.astype(np.float64), k.astype(np.float64), v.astype(np.float64),
        [w.astype(np.float64) for w in weights],
        **{key: val.astype(np.float64) for key, val in extra.items()},
        **{key: val for key, val in cfg.items() if not key.startswith("_")})
    err_recurrent = ttt_mlir.relative_error(recurrent, want)
    err_parallel = ttt_mlir.relative_error(parallel, want)
    assert np.array_equal(_bf16(parallel), parallel)
    assert err_recurrent <= 2.0 ** -8 and err_parallel <= 2.0 ** -8, (err_recurrent,
                                                                       err_parallel)
    assert err_parallel <= 1.25 * err_recurrent + 2.0 ** -12, (err_recurrent, err_parallel)
