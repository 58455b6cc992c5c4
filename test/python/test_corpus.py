"""The recognition corpus (test/fixtures/corpus/): the upstream TTT layer modules of
LaCT, ttt-lm-pytorch and ViT³, exported by PyTorch's two exporters, nothing written for
ttt (static, and with a dynamic batch), and by Debian 12's PyTorch 1.13 (`.ts113`). For
every export this asserts what `ttt-opt model.onnx -o out.onnx` does today (the
table below: every layer found, none linear attention as exported, each with its reason),
that the export is the module (onnxruntime against PyTorch's output stored with it, where
onnxruntime runs it), and that ttt-opt's output computes what the export computes, on
the stored and on fresh random inputs. A change in either direction fails the table.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from compiler import tool

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
NAMES = sorted(p.name[: -len(".onnx")] for p in CORPUS.glob("*.onnx"))
# What ttt-opt says of each export today: a remark it prints.
# Muon as shipped, in bfloat16 (the update cast to it, the Newton-Schulz steps computed
# in it, the result cast back): raised with the steps' compute type, which the linattn
# form does not have.
BF16_MUON = "not rewritten: Muon computes in a 16-bit type"
# Raised whole (its first chunk joins the loop, its folded weight transposes read as
# views; where the initial weights are tiled per batch at run time, the weight norm's
# targets are read as their norms): a ttt.kvb_layer that is not linear attention,
# with the analysis's reason.
RAISED = ("TTT layer: unrolled chunk loop (4 chunks of 16 tokens): left as it was: exact "
          "lowering: chunk-sequential loop; proven: output layer W1 (out) is linear and "
          "bias-free; per-token learning rates fold into the values; blocked by: W0 (gate), "
          "W2 (up) are trained")
# ttt-lm-pytorch's TTT-Linear, raised whole from its mini-batch loop (the first mini-batch,
# whose zero bias the exporter folded, joins it): a linear fast weight with bias read
# through a LayerNorm and fit by its squared error, causal within a mini-batch.
TTT_LINEAR = ("TTT layer: unrolled chunk loop (4 chunks of 16 tokens): left as it was: exact "
              "lowering: chunk-sequential loop; proven: output layer W is linear with its bias "
              "as a constant feature")
TTT_LINEAR_REASON = "blocked by: LayerNorm inside the loss makes the gradient non-linear"
# TTT-MLP's the same, two layers with GELU (tanh) between them; its hidden layer's
# gradient proven to be the output's back through W1 and GELU's derivative.
TTT_MLP = ("TTT layer: unrolled chunk loop (4 chunks of 16 tokens): left as it was: exact "
           "lowering: chunk-sequential loop; proven: output layer W1 is linear with its bias "
           "as a constant feature")
TTT_MLP_REASON = ("blocked by: W0, b0 are trained, so the features of q and k depend on the "
                  "history (dynamic kernel); LayerNorm inside the loss")
# LaCT's minimal bidirectional layer writes its Muon step as `W = NS(U); W = W + U`:
# raised whole (`base = update`: W' = U + NS(U), nothing of the old weight kept but the
# column norms its weight norm restores; torch 2.15 folds `w1.transpose(1, 2)` into the
# one constant the step reads, so that state holds W1 transposed), not linear attention.
BIDIRECTIONAL = ("TTT layer: full-batch step: left as it was: exact lowering: single full-batch "
                 "step (reduce, transform, apply); proven: output layer W1 (out) is linear and "
                 "bias-free")
BIDIRECTIONAL_REASON = ("its step replaces the weights by the update plus its Newton-Schulz "
                        "result (W' = U + s NS(U)), which no linattn form computes")
# Raised whole (a full-batch step, Muon with no Newton-Schulz steps, the keys multiplied
# by their rates before the step, the RMSNorm's `o²` computed again after the layer op),
# not linear attention; in fp32 and as shipped, Muon in bf16.
NVS_RAISED = ("TTT layer: full-batch step: left as it was: exact lowering: single full-batch "
              "step (reduce, transform, apply); proven: output layer W1 (out) is linear and "
              "bias-free")
# ViT^3's simplified SwiGLU, `(x Wa) * silu(x Wg)` with its gradient clipped per output
# column: raised whole (its gradient reads the shared parameter, its update the
# broadcast one: one state), a full-batch step that is not linear attention.
GLU_RAISED = ("TTT layer: full-batch step: left as it was: exact lowering: single full-batch "
              "step (reduce, transform, apply); proven: gradient ascent folds into the value "
              "scale; one full-batch step: the state is materialized once, so any transform of "
              "it is exact; blocked by: the output (x Wa) * silu(x Wg) gates every output "
              "channel")
# ViT^3's depth-wise convolution kernel (torch 2.15's default exporter): found, and read
# as a ttt.dwconv_layer on linalg; the ONNX route writes back ttt.kvb_layer only.
DWCONV = ("TTT layer: chunk loop (one chunk, 1 state values): left as it was: a depth-wise "
          "convolution kernel as fast weight (ViT^3's branch), which ttt.dwconv_layer "
          "expresses")
FOUND = {
    # LaCT's SwiGLU with weight norm: the first non-polynomial op on the way out.
    # LaCT-NVS's step read as a SwiGLU network; a norm after the layer reads its output
    # inside the single step, a second output the layer op does not have.
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo": NVS_RAISED,
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    # ViT^3: the simplified SwiGLU's two weights, and its depthwise-convolution inner
    # model (9 sums stacked into the kernel's gradient). TorchScript computes F.pad's
    # pads from shapes ([[b, e], …] reversed and transposed): folded as integers.
    "ViTTT_TTT.dynamo": (GLU_RAISED, DWCONV),
    "ViTTT_TTT.ts": (GLU_RAISED, DWCONV),
    # The plain ViT^3 block around it: a depthwise-convolution position encoding, a
    # LayerNorm, the layer, an MLP.
    "ViTTT_Block.dynamo": (GLU_RAISED, DWCONV),
    "ViTTT_Block.ts": (GLU_RAISED, DWCONV),
    # LaCT's layers with their Muon step in fp32 (as shipped it casts to bf16): the
    # Newton-Schulz iterations are sums of the weights' own type, the last one the
    # new value.
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.dynamo": NVS_RAISED,
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.dynamo": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.dynamo": RAISED,
    # The older reader of ttt-raise-onnx finds it too but builds no layer op for it:
    # the canonical route's account stands (test_raised_layer_computes_the_module).
    "LaCT_lact_llm_LaCTSWIGLULayer.ts": RAISED,
    "LaCT_lact_llm_LaCTSWIGLULayer.dynamo": RAISED,
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo": (RAISED, BF16_MUON),
    # ttt-lm-pytorch loops over mini-batches of a [B, H, N, C, D] view: one per step.
    "ttt_lm_pytorch_TTTLinear.dynamo": (TTT_LINEAR, TTT_LINEAR_REASON),
    "ttt_lm_pytorch_TTTMLP.dynamo": (TTT_MLP, TTT_MLP_REASON),
    "ttt_lm_pytorch_TTTLinear.ts": (TTT_LINEAR, TTT_LINEAR_REASON),
    "ttt_lm_pytorch_TTTMLP.ts": (TTT_MLP, TTT_MLP_REASON),
}
# The same modules exported with a dynamic batch (`.ts-batch`: `dynamic_axes`,
# `.dynamo-batch`: `dynamic_shapes`): found by reading a copy whose batch is fixed, and
# said so (FIXED, asserted for each); what the copy finds is what the static export
# gives.
FIXED = " (found with the run-time sizes fixed: x[0] = 2)"
DYNAMIC_BATCH = {
    "LaCT_lact_llm_LaCTSWIGLULayer.ts-batch": RAISED,
    "LaCT_lact_llm_LaCTSWIGLULayer.dynamo-batch": RAISED,
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo-batch": (RAISED, BF16_MUON),
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.dynamo-batch": RAISED,
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo-batch": NVS_RAISED,
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.dynamo-batch": NVS_RAISED,
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo-batch": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.dynamo-batch": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    "ttt_lm_pytorch_TTTLinear.dynamo-batch": (TTT_LINEAR, TTT_LINEAR_REASON),
    "ttt_lm_pytorch_TTTLinear.ts-batch": (TTT_LINEAR, TTT_LINEAR_REASON),
    "ttt_lm_pytorch_TTTMLP.dynamo-batch": (TTT_MLP, TTT_MLP_REASON),
    "ttt_lm_pytorch_TTTMLP.ts-batch": (TTT_MLP, TTT_MLP_REASON),
}
FOUND.update(DYNAMIC_BATCH)
# Debian 12's PyTorch 1.13 (`.ts113`: torch.onnx.export traced at opset 17, with the
# script's nn.RMSNorm stand-in, which 1.13 lacks). ttt-lm-pytorch's two layers do not
# export there (no symbolic for aten::broadcast_to at opset 17), so have no fixture.
TORCH113 = {
    "LaCT_lact_llm_LaCTSWIGLULayer.ts113": RAISED,
    # The step takes its weight norm's targets from the state itself.
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.ts113": NVS_RAISED,
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.ts113": NVS_RAISED,
    "LaCT_minimal_BidirectionalLaCTSwiGLU.ts113": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.ts113": (BIDIRECTIONAL, BIDIRECTIONAL_REASON),
    # Traced, the causal minimal layer's chunk loop is unrolled, as lact_llm's is with
    # torch 2's `dynamo=False`: rerolled and read as the static export is (raised whole),
    # and found by the older reader too, which builds no layer op for it.
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.ts113": (RAISED, BF16_MUON),
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.ts113": RAISED,
    # torch 1.13 spells the kernel gradient's norm as Mul then ReduceSum, GELU with Erf.
    "ViTTT_TTT.ts113": (GLU_RAISED, DWCONV),
    "ViTTT_Block.ts113": (GLU_RAISED, DWCONV),
}
FOUND.update(TORCH113)
NOT_FOUND = "no TTT layer found"
FAST_WEIGHTS = re.compile(r", fast weights (?:'[^']*'|\(computed\))(?:, (?:'[^']*'|\(computed\)))*")
# The exports onnxruntime cannot run: the shipped Newton-Schulz (Muon) computes in
# bfloat16, and onnxruntime's CPU ReduceL2 has no bfloat16 kernel (in torch 1.13's
# traced exports the first bfloat16 node it cannot run is a Mul).
ORT_CANNOT_RUN = {
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo",
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo",
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo-batch",
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo-batch",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo-batch",
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.ts113",
    "LaCT_minimal_BidirectionalLaCTSwiGLU.ts113",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.ts113",
}
# Two fp32 implementations of one module (PyTorch eager, onnxruntime).
RTOL_TORCH = 1e-4
RTOL = 1e-5


def _session(path: Path):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def test_the_corpus_is_there():
    assert len(NAMES) == 37, NAMES
    assert set(FOUND) == set(NAMES) and ORT_CANNOT_RUN <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_corpus_export(name, tmp_path):
    model = CORPUS / f"{name}.onnx"
    out = tmp_path / "out.onnx"
    proc = subprocess.run([str(tool("ttt-opt")), str(model), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = FOUND[name] if isinstance(FOUND[name], tuple) else (FOUND[name],)
    # A layer's remark names the ONNX values its fast weights start from (the
    # exporters name them differently: 'w0', 'repeat', ...); the texts above leave them
    # out.
    assert all(FAST_WEIGHTS.search(line) for line in proc.stderr.splitlines()
               if re.search(r"TTT layer: (unrolled chunk loop|full-batch step)", line)), \
        proc.stderr
    unnamed = FAST_WEIGHTS.sub("", proc.stderr)
    assert all(e in unnamed for e in expected), proc.stderr
    assert NOT_FOUND not in proc.stderr, proc.stderr
    assert (FIXED in proc.stderr) == (name in DYNAMIC_BATCH), proc.stderr
    if name in ORT_CANNOT_RUN:
        # Left as it was: the same nodes in the same order.
        before = [n.op_type for n in onnx.load(str(model)).graph.node]
        after = [n.op_type for n in onnx.load(str(out)).graph.node]
        assert after == before
        return
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y = data["x"], data["y"]
    original, optimized = _session(model), _session(out)
    assert _rel(original.run(None, {"x": x})[0], y) <= RTOL_TORCH
    rng = np.random.default_rng(47)
    fresh = [x, rng.normal(0, x.std(), x.shape).astype(np.float32)]
    if name in DYNAMIC_BATCH:
        # Another batch size than the one the copy was read with.
        fresh.append(rng.normal(0, x.std(), (3,) + x.shape[1:]).astype(np.float32))
    for inputs in fresh:
        want = original.run(None, {"x": inputs})[0]
        assert _rel(optimized.run(None, {"x": inputs})[0], want) <= RTOL


# The layers the canonical route raises to a ttt.kvb_layer: LaCT's LLM layer and its
# causal minimal layer with Muon in fp32 (SwiGLU, three trained weights, per-weight
# rates, momentum, weight norm; Muon's Newton-Schulz steps in the second), as torch
# 2.15's exporters and Debian's torch 1.13 write them, and LaCT-NVS's step.
RAISED_LAYERS = [
    "LaCT_lact_llm_LaCTSWIGLULayer.dynamo",
    "LaCT_lact_llm_LaCTSWIGLULayer.ts",
    "LaCT_lact_llm_LaCTSWIGLULayer.ts113",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.dynamo",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.ts113",
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.dynamo",
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.ts113",
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.dynamo",
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.ts113",
]
# The paper's variants each is simplified to, with what makes it linear attention:
# V2 for the chunked LLM-style layers; the full-batch steps (NVS, bidirectional) keep
# their Muon (a transform of the step's update) in V2, so V6 drops it as well (the
# bidirectional layer's step then is upstream's `use_muon=False`: W' = W + U).
VARIANTS = {
    name: "freeze-inner drop-weight-norm" + (
        " drop-muon" if "_nvs_" in name or "Bidirectional" in name else "")
    for name in RAISED_LAYERS
}
# What ttt-simplify says of each option it applies.
VARIANT_REMARKS = {
    "freeze-inner": "only the output layer trains (the paper's Variant 1)",
    "drop-weight-norm": "weight normalization removed (the paper's Variant 2)",
    "collapse-mlp": "the fast-weight network is one linear layer initialised with the old "
                    "output layer (the paper's Variant 3)",
    "drop-muon": "(the paper's Variant 6)",
}
ROUTE = ["--ttt-read-onnx-as-linalg", "--ttt-reroll-chunks", "--ttt-form-single-steps",
         "--ttt-raise-chunk-loops"]


def _ttt_opt(*args):
    proc = subprocess.run([str(tool("ttt-opt")), *map(str, args)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def _ttt_run(mlir, x, tmp_path, form):
    inputs, outputs = tmp_path / f"in_{form}.npz", tmp_path / f"out_{form}.npz"
    np.savez(inputs, arg0=x)
    proc = subprocess.run([str(tool("ttt-run")), str(mlir), f"--inputs={inputs}",
                           f"--outputs={outputs}", "--print-results=false",
                           f"--ttt-form={form}"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with np.load(outputs) as data:
        return data["result0"]


def _raised_whole(name, tmp_path):
    """The canonical route on export `name` read as linalg, its remarks explained: the
    raised program's path and text and the remarks, asserting that its layer was raised
    whole (no chunk loop left, one ttt.kvb_layer)."""
    raised = tmp_path / "raised.mlir"
    remarks = _ttt_opt(CORPUS / f"{name}.onnx", *ROUTE[:-1],
                       "--ttt-raise-chunk-loops=explain", "-o", raised).stderr
    text = raised.read_text()
    assert "ttt.chunk_loop" not in text and text.count("ttt.kvb_layer") == 1, remarks
    return raised, text, remarks


@pytest.mark.parametrize("name", RAISED_LAYERS)
def test_raised_layer_computes_the_module(name, tmp_path):
    """The whole upstream layer read as linalg, its chunk steps one ttt.chunk_loop
    from chunk 0, the loop one ttt.kvb_layer: run in the layer op's recurrent
    reference form, it computes what PyTorch computed for the module."""
    raised, text, remarks = _raised_whole(name, tmp_path)
    assert "a SwiGLU fast-weight network (dot loss, per-token rates" in remarks, remarks
    assert "model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>" in text
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y = data["x"], data["y"]
    assert _rel(_ttt_run(raised, x, tmp_path, "recurrent"), y) <= RTOL_TORCH


# LaCT's layers as shipped: Muon's Newton-Schulz computed in bfloat16 (the update cast to
# it, the result cast back), read as `compute = bf16` on the op's Newton-Schulz. PyTorch
# ran the module in bf16 (the export's stored output) and in fp32 (the `__Muon_in_fp32`
# export's, the same weights and input): the reference.
RAISED_BF16_MUON = [f"LaCT_{m}.{e}" for m in ("lact_nvs_FastWeightGluMLPMultihead",
                                              "minimal_CausalLaCTSwiGLUWithSlidingWindowAttn",
                                              "minimal_BidirectionalLaCTSwiGLU")
                    for e in ("dynamo", "ts113")]


@pytest.mark.parametrize("name", RAISED_BF16_MUON)
def test_raised_bf16_muon_is_no_worse_than_the_module(name, tmp_path):
    """The raised layer rounds Newton-Schulz's intermediates to bf16 where PyTorch does
    (products accumulated in f32): against the fp32 module its error is no worse than
    PyTorch's own bf16 run (within 1.5x: five Newton-Schulz steps multiply the rounding
    noise in the update's near-null directions by about a^5 ~ 1000, so the causal layer's
    bf16 runs differ from fp32 by ~27 % and from each other as much; with no steps, as
    LaCT-NVS runs it, they agree with PyTorch's bf16 run to 1e-3). With the steps in f32
    the same op computes the fp32 module, up to the graph's coefficients, which the
    export rounded to bf16 (2.3 % for the causal layer)."""
    raised, text, remarks = _raised_whole(name, tmp_path)
    assert "Newton-Schulz steps in bf16)" in remarks, remarks
    assert text.count(", compute = bf16>") == 1, text
    base, export = name.split(".")
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y_bf16 = data["x"], data["y"]
    with np.load(CORPUS / f"{base}__Muon_in_fp32.{export}.npz") as data:
        assert np.array_equal(data["x"], x)
        y_fp32 = data["y"]
    no_steps = "(0 Newton-Schulz steps" in remarks
    for form in ("recurrent", "parallel"):
        got = _ttt_run(raised, x, tmp_path, form)
        assert _rel(got, y_fp32) <= 1.5 * _rel(y_bf16, y_fp32), form
        if no_steps:
            assert _rel(got, y_bf16) <= 1e-3, form
    in_f32 = tmp_path / "in_f32.mlir"
    in_f32.write_text(text.replace(", compute = bf16>", ">"))
    assert _rel(_ttt_run(in_f32, x, tmp_path, "recurrent"), y_fp32) <= (
        RTOL_TORCH if no_steps else 0.05)


# ttt-lm-pytorch's TTT-Linear and TTT-MLP as both of torch 2.15's exporters write them.
RAISED_DUAL_FORMS = ["ttt_lm_pytorch_TTTLinear.dynamo", "ttt_lm_pytorch_TTTLinear.ts",
                     "ttt_lm_pytorch_TTTMLP.dynamo", "ttt_lm_pytorch_TTTMLP.ts"]


@pytest.mark.parametrize("name", RAISED_DUAL_FORMS)
def test_raised_ttt_linear_and_mlp_compute_the_module(name, tmp_path):
    """TTT-Linear's and TTT-MLP's mini-batch loops read as linalg: their dual form (the
    keys' LayerNorm fit to v - k by the squared error, every token of a mini-batch
    reading the start weights minus its predecessors' gradients weighted by
    token_eta[i] * lr[j] and the causal mask; TTT-MLP's hidden gradient back through
    GELU) one ttt.kvb_layer of the layernorm_mse loss in causal order; run in both of
    the op's forms it computes what PyTorch computed."""
    raised, text, remarks = _raised_whole(name, tmp_path)
    mlp = "TTTMLP" in name
    network = "a two-layer GELU fast-weight network" if mlp else "a linear fast weight"
    assert (f"{network} with bias read through a LayerNorm (squared-error loss, "
            "per-position and per-token rates, mini-batches of 16, causal dual form)") in remarks
    model = ("#ttt.model<kind = mlp, trained = [0, 1, 2, 3], bias = true, activation = "
             "gelu_tanh>" if mlp else "#ttt.model<kind = linear, trained = [0, 1], bias = true>")
    assert f"model = {model}" in text
    assert "order = causal" in text and "kind = layernorm_mse" in text
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y = data["x"], data["y"]
    for form in ("recurrent", "parallel"):
        assert _rel(_ttt_run(raised, x, tmp_path, form), y) <= RTOL_TORCH, form


# ViT^3, the module and the block around it, as every exporter writes it: every node
# read as linalg (its depthwise convolutions too, TorchScript's padding computed from
# shapes folded), the GLU step one ttt.kvb_layer and the convolution kernel's step one
# ttt.dwconv_layer.
RAISED_GLU_LAYERS = ["ViTTT_TTT.dynamo", "ViTTT_Block.dynamo"]
RAISED_VIT3 = [f"ViTTT_{m}.{e}" for m in ("TTT", "Block") for e in ("dynamo", "ts", "ts113")]


@pytest.mark.parametrize("name", RAISED_VIT3)
def test_raised_vit3_layers_compute_the_module(name, tmp_path):
    """ViT^3's module read as linalg: its GLU step (gradients from the shared parameter,
    clipped per output column, subtracted from its broadcast) one ttt.kvb_layer of kind
    glu, its depth-wise convolution step (nine stacked per-position sums of shifted keys
    times values, clipped per channel) one ttt.dwconv_layer; run in both of the ops'
    forms it computes what PyTorch computed."""
    raised, text, remarks = _raised_whole(name, tmp_path)
    assert text.count("ttt.dwconv_layer") == 1, remarks
    assert ("a GLU fast-weight network (dot loss, gradients clipped per output column, "
            "one chunk)") in remarks, remarks
    assert ("a depth-wise convolution kernel (3x3, dot loss, gradients clipped per "
            "channel, one chunk)") in remarks, remarks
    assert "model = #ttt.model<kind = glu, trained = [0, 1]>" in text
    assert "clip = output_channels" in text and "kind = full_batch" in text
    assert "clip = frobenius" in text
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y = data["x"], data["y"]
    for form in ("recurrent", "parallel"):
        assert _rel(_ttt_run(raised, x, tmp_path, form), y) <= RTOL_TORCH, form


# ViT^3's GLU made the paper's V6 of it: only Wa trains, one linear layer (q^ = q,
# k^ = k), and no gradient clipping (ViT^3 has no Muon).
GLU_VARIANT = "freeze-inner collapse-mlp drop-muon"
VARIANTS.update({name: GLU_VARIANT for name in RAISED_GLU_LAYERS})


@pytest.mark.parametrize("name", RAISED_LAYERS + RAISED_GLU_LAYERS)
def test_simplify_makes_a_variant(name, tmp_path):
    """`ttt-opt model.onnx --ttt-simplify="freeze-inner drop-weight-norm"` turns the
    whole LLM layer export into the paper's Variant 2 (only W1 trains, no weight norm;
    NVS's step needs Muon dropped too; ViT^3's GLU becomes its V6): linear attention,
    written back as ONNX in its parallel form, computing what the recurrent reference of
    the variant computes, and no longer what the module did."""
    model = CORPUS / f"{name}.onnx"
    out = tmp_path / "variant.onnx"
    variant = f"--ttt-simplify={VARIANTS[name]}"
    remarks = _ttt_opt(model, variant, "-o", out).stderr
    for option in VARIANTS[name].split():
        assert VARIANT_REMARKS[option] in remarks, (option, remarks)
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks
    reference = tmp_path / "variant_reference.mlir"
    _ttt_opt(model, *ROUTE, variant, "-o", reference)
    with np.load(CORPUS / f"{name}.npz") as data:
        x, y = data["x"], data["y"]
    rng = np.random.default_rng(48)
    for inputs in (x, rng.normal(0, x.std(), x.shape).astype(np.float32)):
        got = _session(out).run(None, {"x": inputs})[0]
        assert _rel(got, _ttt_run(reference, inputs, tmp_path, "recurrent")) <= RTOL
    assert _rel(_session(out).run(None, {"x": x})[0], y) > 1e-4


@pytest.mark.parametrize("name", ["LaCT_lact_llm_LaCTSWIGLULayer.dynamo",
                                  "LaCT_lact_llm_LaCTSWIGLULayer.ts113"])
def test_variant_with_every_subtraction_respelled(name, tmp_path):
    """Every `Sub` of the export written `Add(a, Neg(b))` (the metamorphic rewrite at all
    of its places): the canonical route folds it back to a subtraction the graph has no
    node for, and the write-back spells it as a new `Sub` where the rewritten layer reads
    it (its rotary embedding). Still Variant 2, rewritten and equal to the recurrent
    reference of the untouched export's variant."""
    import copy

    import metamorphic as mm

    base = onnx.load(str(CORPUS / f"{name}.onnx"))
    model = copy.deepcopy(base)
    rng = np.random.default_rng(49)
    respelled = 0
    while mm.sub_as_add_neg(model, rng):
        respelled += 1
    assert respelled and not any(n.op_type == "Sub" for n in model.graph.node)
    with np.load(CORPUS / f"{name}.npz") as data:
        x = data["x"]
    inputs = rng.normal(0, x.std(), x.shape).astype(np.float32)
    mm.check_same(base, model, {"x": inputs})
    remarks, error = variant_error(model, name, inputs, tmp_path)
    assert error is not None, remarks
    assert error <= RTOL


def variant_error(model, name, inputs, tmp_path):
    """`ttt-opt model --ttt-simplify=<the variant of name>`: its remarks, and the relative
    error of the rewritten graph against the recurrent reference of the untouched export's
    variant on `inputs` (None if the layer was not rewritten to linear attention)."""
    src, out = tmp_path / "rewritten.onnx", tmp_path / "variant.onnx"
    onnx.save(model, str(src))
    variant = f"--ttt-simplify={VARIANTS[name]}"
    proc = subprocess.run([str(tool("ttt-opt")), str(src), variant, "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or "raised to ttt.kvb_layer (linear attention" not in proc.stderr:
        return proc.stderr, None
    reference = tmp_path / "variant_reference.mlir"
    _ttt_opt(CORPUS / f"{name}.onnx", *ROUTE, variant, "-o", reference)
    got = _session(out).run(None, {"x": inputs})[0]
    return proc.stderr, _rel(got, _ttt_run(reference, inputs, tmp_path, "recurrent"))
