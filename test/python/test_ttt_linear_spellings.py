"""TTT-Linear's dual form written in ONNX by hand, in spellings none of the fixtures use
(heads folded into the batch, per-token rates `[B*H, T, 1]` reshaped to a row, a weight
shared by the heads,
`Pow` for the variance, `Reciprocal` for the division, the output through one
`LayerNormalization` node, `W + Neg(...)` for the update, a partial last chunk): each graph
is first checked against the NumPy oracle in onnxruntime, then `ttt-opt` must raise it to
`ttt.kvb_layer` (layernorm_mse loss, trained bias, causal order, token_eta) and the raised
graph must compute what onnxruntime computes. A graph whose gradient is off by a constant
is found and left, with the reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402
from oracle import kvb_layer  # noqa: E402
from raised_graph import run_raised_graph  # noqa: E402

EPS = 1e-6


def _params(D, C, seed):
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "W": rng.normal(0, 0.3, (D, D)).astype(f32),
        "b": rng.normal(0, 0.1, (1, D)).astype(f32),
        "gamma": (1 + 0.1 * rng.normal(size=D)).astype(f32),
        "beta": (0.1 * rng.normal(size=D)).astype(f32),
        "token_eta": (1.0 / np.arange(1, C + 1) + 0.05 * rng.normal(size=C)).astype(f32),
    }


def _build(BH, T, D, C, params, gradient_scale=1.0):
    """The layer as a graph of `q, k, v [BH, T, D]`, `lr [BH, T, 1]` -> `o [BH, T, D]`."""
    nodes, inits = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op, inputs, **attrs):
        name = f"{op.lower()}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    for name, value in params.items():
        const(name, value)
    i64 = np.int64
    const("axis1", np.array([1], i64))
    const("axis_last", np.array([-1], i64))
    const("axis_row", np.array([-2], i64))
    const("zero", np.array([0], i64))
    const("two", np.array(2.0, np.float32))
    const("eps", np.array(EPS, np.float32))
    const("dim", np.array(float(D), np.float32))
    const("inv_dim", np.array(gradient_scale / D, np.float32))
    w, bias, outs = "W", "b", []
    for c, s in enumerate(range(0, T, C)):
        e = min(s + C, T)
        n = e - s
        start, end = const(f"start{c}", np.array([s], i64)), const(f"end{c}", np.array([e], i64))
        xq, xk, xv = (node("Slice", [x, start, end, "axis1"]) for x in ("q", "k", "v"))
        rates = node("Reshape", [node("Slice", ["lr", start, end, "axis1"]),
                                 const(f"row{c}", np.array([BH, 1, n], i64))])
        tokens = node("Unsqueeze", [node("Slice", ["token_eta", "zero",
                                                   const(f"n{c}", np.array([n], i64)),
                                                   "zero"]), "axis_last"])
        eta = node("Mul", [rates, tokens])                                   # [BH, n, n]
        z = node("Add", [bias, node("MatMul", [xk, w])])
        # ln_fused_l2_bwd(z, xv), written its own way
        centered = node("Sub", [z, node("ReduceMean", [z], axes=[-1], keepdims=1)])
        var = node("ReduceMean", [node("Pow", [centered, "two"])], axes=[-1], keepdims=1)
        std = node("Sqrt", [node("Add", [var, "eps"])])
        xhat = node("Mul", [centered, node("Reciprocal", [std])])
        y = node("Add", ["beta", node("Mul", [xhat, "gamma"])])
        gx = node("Mul", ["gamma", node("Sub", [y, xv])])
        total = node("ReduceSum", [gx, "axis_last"], keepdims=1)
        projected = node("ReduceSum", [node("Mul", [xhat, gx]), "axis_last"], keepdims=1)
        inner = node("Sub", [node("Sub", [node("Mul", [gx, "dim"]), total]),
                             node("Mul", [projected, xhat])])
        grad = node("Div", [node("Mul", [inner, "inv_dim"]), std])
        # the dual form, its sums grouped differently
        scores = node("Trilu", [node("MatMul", [xq, node("Transpose", [xk], perm=[0, 2, 1])])],
                      upper=0)
        causal = node("MatMul", [node("Mul", [scores, eta]), grad])
        bias_causal = node("MatMul", [node("Trilu", [eta], upper=0), grad])
        zbar = node("Sub", [node("Add", [node("MatMul", [xq, w]), bias]),
                            node("Add", [causal, bias_causal])])
        outs.append(node("LayerNormalization", [zbar, "gamma", "beta"], axis=-1,
                         epsilon=EPS))
        last = node("Unsqueeze", [node("Gather", [eta, const(f"last{c}", np.array(n - 1, i64))],
                                       axis=1), "axis_last"])             # [BH, n, 1]
        step = node("MatMul", [node("Transpose", [node("Mul", [last, xk])], perm=[0, 2, 1]),
                               grad])
        w = node("Add", [w, node("Neg", [step])])
        bias = node("Sub", [bias, node("ReduceSum", [node("Mul", [grad, last]), "axis_row"],
                                       keepdims=1)])
    nodes.append(helper.make_node("Concat", outs, ["o"], name="assemble", axis=1))
    seq = [BH, T, D]
    graph = helper.make_graph(
        nodes, "ttt_linear_by_hand",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, seq) for x in ("q", "k", "v")]
        + [helper.make_tensor_value_info("lr", TensorProto.FLOAT, [BH, T, 1])],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, seq)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def _inputs(BH, T, D, seed):
    rng = np.random.default_rng(seed)
    x = {n: rng.normal(0, 1, (BH, T, D)).astype(np.float32) for n in ("q", "k", "v")}
    x["lr"] = rng.uniform(0.01, 0.1, (BH, T, 1)).astype(np.float32)
    return x


def _ort(path, x):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, x)[0]


def _oracle(x, params, BH, C):
    o, _ = kvb_layer(
        x["q"][None], x["k"][None], x["v"][None],
        [np.broadcast_to(params["W"], (BH,) + params["W"].shape),
         np.broadcast_to(params["b"], (BH,) + params["b"].shape)],
        model="linear", bias=True, trained=[0, 1], loss="layernorm_mse", ln_eps=EPS,
        gamma=params["gamma"], beta=params["beta"], lr=x["lr"][None],
        token_eta=params["token_eta"], order="causal", chunk=C)
    return o[0]


def _rel(got, want):
    return np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max()


@pytest.mark.parametrize("BH,T,D,C", [(3, 10, 4, 4), (2, 8, 6, 4)])
def test_a_hand_written_ttt_linear_is_raised_exactly(BH, T, D, C, tmp_path):
    params = _params(D, C, seed=T * 31 + D)
    path = tmp_path / "ttt_linear.onnx"
    onnx.save(_build(BH, T, D, C, params), str(path))
    x = _inputs(BH, T, D, seed=BH + T)
    want = _ort(path, x).astype(np.float64)
    assert _rel(want, _oracle(x, params, BH, C)) <= 1e-5  # the graph is TTT-Linear
    proc = subprocess.run([str(tool("ttt-opt")), str(path), "--ttt-raise-onnx=raise-all"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "raised to ttt.kvb_layer" in proc.stderr, proc.stderr
    text = proc.stdout
    for needle in ("#ttt.model<kind = linear, trained = [0, 1], bias = true>",
                   "kind = layernorm_mse", f"kind = chunked, size = {C}, order = causal",
                   "token_eta("):
        assert needle in text, needle
    got = run_raised_graph(text, path, x, tmp_path)
    assert _rel(got, want) <= 1e-5


def test_a_gradient_off_by_a_constant_is_left_with_the_reason(tmp_path):
    BH, T, D, C = 2, 8, 4, 4
    path = tmp_path / "off.onnx"
    model = _build(BH, T, D, C, _params(D, C, seed=3), gradient_scale=2.0)
    onnx.save(model, str(path))
    proc = subprocess.run([str(tool("ttt-opt")), str(path), "--ttt-raise-onnx=raise-all",
                           "-o", str(tmp_path / "out.onnx")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "left as it was" in proc.stderr, proc.stderr
    assert "its gradient is not the LayerNorm-MSE gradient" in proc.stderr, proc.stderr
    left = onnx.load(str(tmp_path / "out.onnx"))
    assert [n.op_type for n in left.graph.node] == [n.op_type for n in model.graph.node]
