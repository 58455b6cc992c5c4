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
SWIGLU = ("chunk loop (3 chunks of 16, 6 state values): left as it was: a SwiGLU "
          "fast-weight network (W1 (silu(W0 x) * (W2 x))): a TTT layer with a nonlinear "
          "inner model, no linear attention; no ttt.kvb_layer yet: it carries 3 more state "
          "values (momentum: not read yet)")
LAYER_NORM_MSE = ("state values): left as it was: its output reads its state through "
                  "'arith.divf', not by sums of products: a TTT layer with a nonlinear "
                  "inner model, no linear attention")
# The single steps (update once, apply to all tokens), found by ttt-form-single-steps.
ONE_STEP = ("TTT layer: chunk loop (one chunk, {n} state values): left as it was: its "
            "output reads its state through '{op}', not by sums of products: a TTT layer "
            "with a nonlinear inner model, no linear attention")
FOUND = {
    # LaCT's SwiGLU with weight norm: the first non-polynomial op on the way out.
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo": ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo": ONE_STEP.format(n=3, op="arith.divf"),
    # ViT^3: the simplified SwiGLU's two weights; its depthwise-convolution inner
    # model (a Conv, which no handler reads) stays outside the loop.
    "ViTTT_TTT.dynamo": ONE_STEP.format(n=2, op="math.exp"),
    "ViTTT_TTT.ts": ONE_STEP.format(n=2, op="math.exp"),
    # The plain ViT^3 block around it: a depthwise-convolution position encoding, a
    # LayerNorm, the layer, an MLP.
    "ViTTT_Block.dynamo": ONE_STEP.format(n=2, op="math.exp"),
    "ViTTT_Block.ts": ONE_STEP.format(n=2, op="math.exp"),
    # LaCT's layers with their Muon step in fp32 (as shipped it casts to bf16): the
    # Newton-Schulz iterations are sums of the weights' own type, the last one the
    # new value.
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.dynamo":
        ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.dynamo":
        ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.dynamo":
        "TTT layer: " + SWIGLU,
    "LaCT_lact_llm_LaCTSWIGLULayer.ts":
        "TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights",
    "LaCT_lact_llm_LaCTSWIGLULayer.dynamo": "TTT layer: " + SWIGLU,
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo": "TTT layer: " + SWIGLU,
    # ttt-lm-pytorch loops over mini-batches of a [B, H, N, C, D] view: one per step.
    "ttt_lm_pytorch_TTTLinear.dynamo": "TTT layer: chunk loop (3 chunks of 1, 2 " + LAYER_NORM_MSE,
    "ttt_lm_pytorch_TTTMLP.dynamo": "TTT layer: chunk loop (3 chunks of 1, 4 " + LAYER_NORM_MSE,
    # The TorchScript exports compute their window bounds from shapes at run time.
    "ttt_lm_pytorch_TTTLinear.ts": "TTT layer: chunk loop (3 chunks of 1, 2 " + LAYER_NORM_MSE,
    "ttt_lm_pytorch_TTTMLP.ts": "TTT layer: chunk loop (3 chunks of 1, 4 " + LAYER_NORM_MSE,
}
# The same modules exported with a dynamic batch (`.ts-batch`: `dynamic_axes`,
# `.dynamo-batch`: `dynamic_shapes`): found by reading a copy whose batch is fixed, and
# said so; what the copy finds is what the static export gives.
FIXED = " (found with the run-time sizes fixed: x[0] = 2)"
DYNAMIC_BATCH = {
    "LaCT_lact_llm_LaCTSWIGLULayer.ts-batch": "TTT layer: " + SWIGLU + FIXED,
    "LaCT_lact_llm_LaCTSWIGLULayer.dynamo-batch": "TTT layer: " + SWIGLU + FIXED,
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.dynamo-batch":
        "TTT layer: " + SWIGLU + FIXED,
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.dynamo-batch":
        "TTT layer: " + SWIGLU + FIXED,
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.dynamo-batch": ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.dynamo-batch":
        ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU.dynamo-batch": ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.dynamo-batch":
        ONE_STEP.format(n=3, op="arith.divf"),
    "ttt_lm_pytorch_TTTLinear.dynamo-batch": "TTT layer: chunk loop (3 chunks of 1, 2 " + LAYER_NORM_MSE,
    "ttt_lm_pytorch_TTTLinear.ts-batch": "TTT layer: chunk loop (3 chunks of 1, 2 " + LAYER_NORM_MSE,
    "ttt_lm_pytorch_TTTMLP.dynamo-batch": "TTT layer: chunk loop (3 chunks of 1, 4 " + LAYER_NORM_MSE,
    "ttt_lm_pytorch_TTTMLP.ts-batch": "TTT layer: chunk loop (3 chunks of 1, 4 " + LAYER_NORM_MSE,
}
FOUND.update(DYNAMIC_BATCH)
# Debian 12's PyTorch 1.13 (`.ts113`: torch.onnx.export traced at opset 17, with the
# script's nn.RMSNorm stand-in, which 1.13 lacks). ttt-lm-pytorch's two layers do not
# export there (no symbolic for aten::broadcast_to at opset 17), so have no fixture.
TORCH113 = {
    "LaCT_lact_llm_LaCTSWIGLULayer.ts113": "TTT layer: " + SWIGLU,
    "LaCT_lact_nvs_FastWeightGluMLPMultihead.ts113": ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_lact_nvs_FastWeightGluMLPMultihead__Muon_in_fp32.ts113":
        ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU.ts113": ONE_STEP.format(n=3, op="arith.divf"),
    "LaCT_minimal_BidirectionalLaCTSwiGLU__Muon_in_fp32.ts113":
        ONE_STEP.format(n=3, op="arith.divf"),
    # Traced, the causal minimal layer's chunk loop is unrolled, as lact_llm's is with
    # torch 2's `dynamo=False`: the older reader finds it.
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn.ts113":
        "TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights",
    "LaCT_minimal_CausalLaCTSwiGLUWithSlidingWindowAttn__Muon_in_fp32.ts113":
        "TTT layer: unrolled chunk loop (4 chunks of 16 tokens), fast weights",
    "ViTTT_TTT.ts113": ONE_STEP.format(n=2, op="math.exp"),
    "ViTTT_Block.ts113": ONE_STEP.format(n=2, op="math.exp"),
}
FOUND.update(TORCH113)
NOT_FOUND = "no TTT layer found"
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
    assert FOUND[name] in proc.stderr and NOT_FOUND not in proc.stderr, proc.stderr
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
