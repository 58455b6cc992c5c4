"""Fast weights that do not come from an initializer are found and rewritten too.

Research code passes the initial fast weights to `forward` (graph inputs, shared over
the batch or one per sample) or broadcasts a learned one over the batch with `Expand`.
Each spelling of the same linear dot-loss layer is raised, rewritten, and matches
onnxruntime on the original model on fresh random inputs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402

B, H, T, D, C = 2, 2, 6, 4, 2
RTOL = 1e-5


def _info(name, shape):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _const(name, value):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value, np.int64), name))


def _layer(weight_input=None, expand=False, seed=0):
    """o_c = q_c W_c, W_{c+1} = W_c + k_c^T v_c; W_0 an initializer or a graph input
    of shape `weight_input`, optionally Expanded to [B, H, D, D]."""
    n = T // C
    nodes = []
    for x in "qkv":
        nodes += [_const(f"{x}_sizes", [C] * n),
                  h.make_node("Split", [x, f"{x}_sizes"], [f"{x}{i}" for i in range(n)], axis=2)]
    inputs = [_info(x, [B, H, T, D]) for x in "qkv"]
    inits = []
    if weight_input:
        inputs.append(_info("W0", weight_input))
    else:
        w0 = np.random.default_rng(seed).normal(0, 0.3, (H, D, D)).astype(np.float32)
        inits.append(nh.from_array(w0, "W0"))
    state = "W0"
    if expand:
        nodes += [_const("batch_shape", [B, H, D, D]),
                  h.make_node("Expand", ["W0", "batch_shape"], ["W0_batch"])]
        state = "W0_batch"
    outputs = []
    for i in range(n):
        nodes.append(h.make_node("MatMul", [f"q{i}", state], [f"o{i}"]))
        outputs.append(f"o{i}")
        if i + 1 < n:
            nodes += [h.make_node("Transpose", [f"k{i}"], [f"kt{i}"], perm=[0, 1, 3, 2]),
                      h.make_node("MatMul", [f"kt{i}", f"v{i}"], [f"g{i}"]),
                      h.make_node("Add", [state, f"g{i}"], [f"W{i + 1}"])]
            state = f"W{i + 1}"
    nodes.append(h.make_node("Concat", outputs, ["y"], axis=2))
    graph = h.make_graph(nodes, "layer", inputs, [_info("y", [B, H, T, D])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model


SPELLINGS = {
    "initializer": {},
    "input_per_head": {"weight_input": [H, D, D]},
    "input_per_sample": {"weight_input": [B, H, D, D]},
    "initializer_expanded": {"expand": True},
    "input_expanded": {"weight_input": [H, D, D], "expand": True},
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_weight_source_is_rewritten_exactly(spelling, tmp_path):
    model = _layer(**SPELLINGS[spelling])
    src, out = tmp_path / "layer.onnx", tmp_path / "fast.onnx"
    onnx.save(model, str(src))
    proc = subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "fast weights 'W0': raised to ttt.kvb_layer (linear attention" in proc.stderr, \
        proc.stderr
    written = onnx.load(str(out))
    assert any(n.doc_string.startswith("ttt: parallel linear-attention form")
               for n in written.graph.node)
    assert "Split" not in [n.op_type for n in written.graph.node]
    rng = np.random.default_rng()
    feeds = {i.name: rng.normal(0, 1, [d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in model.graph.input}
    expected = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    actual = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    err = np.max(np.abs(actual - expected)) / np.max(np.abs(expected))
    assert err <= RTOL, err
