"""`--ttt-to-linattn --linattn-to-onnx` exports runnable ONNX models.

Each case wraps one `ttt.kvb_layer` in an `onnx.graph` (q, k, v, lr and
momentum are graph inputs with dynamic batch and sequence dims, the weights
are initializers), rewrites it into linattn ops and then into standard ONNX
nodes, exports the model, checks it with the ONNX checker and runs it with
onnxruntime on random inputs. The NumPy oracle (written from
docs/Semantics.md, evaluated in float64) is the reference: the fp32 relative
error must stay within 1e-5.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import ttt_mlir
from compiler import tool
from oracle import ttt_oracle as oracle
from test_recurrent import make_case, oracle_kwargs

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

RTOL = 1e-5
WEIGHT = re.compile(r"w\d+$")


def dense_literal(array):
    """An exact MLIR dense literal (hex of the little-endian float32 bytes)."""
    return f'dense<"0x{np.ascontiguousarray(array, dtype="<f4").tobytes().hex().upper()}">'


def graph_text(cfg, operands, *, dynamic=True):
    """`onnx.graph @main` computing the layer of `cfg`: weights are
    initializers, every other operand is a graph input named as in the
    oracle."""
    func = ttt_mlir.kvb_layer_function(cfg, operands, dynamic=dynamic, return_weights=False)
    header, rest = func.split("\n", 1)
    params = dict(re.findall(r"%(\w+): (tensor<[^>]*>)", header))
    out_type = re.search(r"-> \((tensor<[^>]*>)\)", header).group(1)
    layer = rest[: rest.index("  return")]
    inputs = ", ".join(f'%{name}: {params[name]} {{onnx.name = "{name}"}}'
                       for name, _ in operands if not WEIGHT.match(name))
    inits = "".join(f'  %{name} = onnx.initializer "{name}" {dense_literal(arr)} : {params[name]}\n'
                    for name, arr in operands if WEIGHT.match(name))
    return (f'onnx.graph @main({inputs}) -> ({out_type} {{onnx.name = "o"}}) {{\n'
            f"{inits}{layer}  onnx.yield %r : {out_type}\n}}\n")


def export(text, tmp_path):
    src = tmp_path / "layer.mlir"
    src.write_text(text)
    out = tmp_path / "layer.onnx"
    proc = subprocess.run([str(tool("ttt-opt")), str(src), "--ttt-to-linattn", "--linattn-to-onnx",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    return model


def run_onnx(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(["o"], feeds)[0]


def oracle_output(cfg, q, k, v, weights, extra):
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    o, _ = oracle.kvb_layer(f64(q), f64(k), f64(v), [f64(w) for w in weights],
                            **{name: f64(val) for name, val in extra.items()},
                            **oracle_kwargs(cfg))
    return o


def check(cfg, tmp_path, *, seed, lengths=(37,), dynamic=True, **case):
    """Exports the layer once, then runs it at every sequence length in
    `lengths` against the oracle; returns the exported model."""
    model = None
    first = None
    for i, T in enumerate(lengths):
        q, k, v, weights, extra = make_case(cfg, seed=seed + i, T=T, **case)
        # The weights are baked into the model: every run uses the first ones.
        first = first or weights
        weights = first
        operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
        if model is None:
            model = export(graph_text(cfg, operands, dynamic=dynamic), tmp_path)
        feeds = {name: arr for name, arr in operands if not WEIGHT.match(name)}
        got = run_onnx(model, feeds)
        want = oracle_output(cfg, q, k, v, weights, extra)
        assert got.shape == want.shape
        assert np.abs(want).max() > 0.1, "the oracle's output is too small to check anything"
        err = ttt_mlir.relative_error(got, want)
        assert err <= RTOL, f"T={T}: relative error {err}"
    return model


def op_types(model):
    """Every op type of the model, subgraphs included."""
    types = set()

    def visit(graph):
        for node in graph.node:
            types.add(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    visit(attr.g)

    visit(model.graph)
    return types


@pytest.mark.parametrize("order", ["apply_then_update", "update_then_apply"])
def test_linear_dot_additive(order, tmp_path):
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=8, order=order, lr_scale=0.3)
    model = check(cfg, tmp_path, seed=1, lengths=(37,), lr_columns=1)
    assert "CumSum" in op_types(model) and "Loop" not in op_types(model)


def test_linear_mse_mean_residual_affine(tmp_path):
    cfg = dict(model="linear", trained=[0], loss="mse", chunk=8, order="apply_then_update",
               reduction="mean", lr_scale=0.5)
    model = check(cfg, tmp_path, seed=2, lengths=(45,), lr_columns=1)
    assert "Loop" in op_types(model)


def test_lact_linear_lr_momentum_muon(tmp_path):
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=8, order="apply_then_update",
               ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), _momentum=True)
    model = check(cfg, tmp_path, seed=3, lengths=(40,), din=8, dout=16, lr_columns=1)
    assert {"Loop", "CumSum", "Sqrt"} <= op_types(model)


def test_lact_swiglu_static_kernel(tmp_path):
    # trained=[1]: the SwiGLU hidden layer is a static feature map; lr has
    # one column per weight, the rewrite takes the output weight's.
    cfg = dict(model="swiglu", trained=[1], loss="dot", chunk=8, order="apply_then_update",
               ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), _momentum=True)
    model = check(cfg, tmp_path, seed=4, lengths=(37,), din=8, dout=8, hidden=16, lr_columns=3)
    assert {"Sigmoid", "Gather", "Loop"} <= op_types(model)


def test_partial_last_chunk_update_then_apply_momentum(tmp_path):
    # T = 29 is not a multiple of 4: the last chunk has one token.
    cfg = dict(model="swiglu", trained=[1], loss="dot", chunk=4, order="update_then_apply",
               ns_steps=2, ns_coeffs=[oracle.NVS_NS_COEFF], _momentum=True)
    check(cfg, tmp_path, seed=5, lengths=(29,), lr_columns=3)


def test_dynamic_batch_and_length(tmp_path):
    # One exported model, run at two sequence lengths (and a batch of 3 the
    # second time): N differs, and so does the number of Loop rounds.
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=4, order="apply_then_update",
               ns_steps=5, ns_coeffs=list(oracle.LACT_NS_COEFFS), _momentum=True)
    model = check(cfg, tmp_path, seed=6, lengths=(13,), lr_columns=1)
    graph_inputs = {i.name: i.type.tensor_type.shape.dim for i in model.graph.input}
    assert not graph_inputs["q"][2].HasField("dim_value")
    # The exported weights are those of seed 6; reuse them with fresh inputs,
    # including an empty sequence (no chunk at all).
    weights = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer]
    for B, T in ((3, 61), (2, 0)):
        q, k, v, _, extra = make_case(cfg, seed=7, B=B, T=T, lr_columns=1)
        got = run_onnx(model, dict(q=q, k=k, v=v, **extra))
        want = oracle_output(cfg, q, k, v, weights, extra)
        assert got.shape == want.shape == (B, 2, T, 8)
        assert ttt_mlir.relative_error(got, want) <= RTOL


def test_static_shapes(tmp_path):
    cfg = dict(model="mlp", trained=[1], loss="dot", chunk=4, order="update_then_apply",
               activation="gelu_tanh", lr_scale=0.2)
    check(cfg, tmp_path, seed=8, lengths=(18,), dynamic=False)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_causal_intra_chunk_term(reduction, tmp_path):
    """The token-causal order (dot loss): the chunk states' prefix sum plus, inside each
    chunk, the steps of tokens 1..t, sum over j <= t of eta_j (q_t . k_j) v_j (/ n_c with
    the mean); short last chunks and a dynamic length."""
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=4, order="causal",
               lr_scale=0.5, reduction=reduction)
    model = check(cfg, tmp_path, seed=12, lengths=(18, 7, 4), lr_columns=1)
    assert "Loop" not in op_types(model)
    check(cfg, tmp_path, seed=13, lengths=(10,), dynamic=False, lr_columns=1)


@pytest.mark.parametrize("cfg, lr_columns", [
    (dict(model="linear", trained=[0], loss="dot", schedule="full_batch", lr_scale=0.5,
          reduction="mean"), 1),
    (dict(model="swiglu", trained=[1], loss="dot", schedule="full_batch", lr_scale=0.3), 3),
])
def test_full_batch_layer(cfg, lr_columns, tmp_path):
    """A full-batch step is one linattn.attention with the full mask; the export goes
    through its decomposition (one chunk of every token) and reads the output weight's
    learning-rate column. More queries than keys."""
    model = check(cfg, tmp_path, seed=9, lengths=(20,), lr_columns=lr_columns, Tq=27)
    assert "Loop" not in op_types(model)


def test_unsupported_layer_fails_cleanly(tmp_path):
    # A layer with weight normalization is not linear attention, so ttt-to-linattn
    # leaves it: linattn-to-onnx must refuse the ttt op left in the graph, name it
    # and write nothing.
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=4,
               weight_norm="output_channels")
    q, k, v, weights, extra = make_case(cfg, seed=9, T=8)
    text = graph_text(cfg, ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra))
    src = tmp_path / "layer.mlir"
    src.write_text(text)
    out = tmp_path / "layer.onnx"
    proc = subprocess.run([str(tool("ttt-opt")), str(src), "--ttt-to-linattn", "--linattn-to-onnx",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "cannot rewrite 'ttt.kvb_layer'" in proc.stderr
    assert not out.exists()


def test_zero_momentum_is_exact(tmp_path):
    # A momentum of exactly 0 on whole chunks must cut the decayed scan
    # there (no log/exp tricks): compare against the oracle with zeros in.
    cfg = dict(model="linear", trained=[0], loss="dot", chunk=4, order="apply_then_update",
               lr_scale=0.2, _momentum=True)
    q, k, v, weights, extra = make_case(cfg, seed=10, T=24, lr_columns=1)
    extra["momentum"][:, :, 4:12] = 0.0
    operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
    model = export(graph_text(cfg, operands), tmp_path)
    got = run_onnx(model, {name: arr for name, arr in operands if not WEIGHT.match(name)})
    want = oracle_output(cfg, q, k, v, weights, extra)
    assert np.all(np.isfinite(got))
    assert ttt_mlir.relative_error(got, want) <= RTOL


@pytest.mark.parametrize("T", [3, 4, 5])
def test_one_or_two_chunks(T, tmp_path):
    # N = 1 runs no Loop round at all; N = 2 runs one.
    cfg = dict(model="linear", trained=[0], loss="mse", chunk=4, order="update_then_apply",
               lr_scale=0.3)
    check(cfg, tmp_path, seed=11, lengths=(T,), lr_columns=1)
