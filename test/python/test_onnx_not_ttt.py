"""Loop-carried state that is not test-time training is never reported as a TTT layer.

Every model here carries state from token to token or chunk to chunk the way ordinary
sequence models do (recurrent cells as ONNX nodes, an RNN written out token by token or
as a Loop, a KV-cache decoder step, a selective scan with a data-dependent decay, a
transformer block). `ttt-opt` must report no TTT layer for any of them, say that it
found none, and write the model back node for node. The last tests are the other
side: layers that *are* TTT layers but break one condition of the theorems are found
and left with the reason naming that condition.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper as h, numpy_helper as nh  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402

B, H, T, D = 1, 2, 6, 4
RNG = np.random.default_rng(7)


def _init(name, shape, scale=0.3):
    return nh.from_array(RNG.normal(0, scale, shape).astype(np.float32), name)


def _const(name, value, dtype=np.int64):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value, dtype), name))


def _info(name, shape):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model


def _token_slices(x, prefix, n=T, axis=2):
    """Slice nodes cutting `x` into n one-token pieces prefix0 .. prefix{n-1}."""
    nodes = [_const(f"{prefix}_axis", [axis])]
    for t in range(n):
        nodes += [_const(f"{prefix}_s{t}", [t]), _const(f"{prefix}_e{t}", [t + 1]),
                  h.make_node("Slice", [x, f"{prefix}_s{t}", f"{prefix}_e{t}", f"{prefix}_axis"],
                              [f"{prefix}{t}"])]
    return nodes


def gru_node():
    return _model([h.make_node("GRU", ["x", "W", "R"], ["y", "y_h"], hidden_size=D)],
                  [_info("x", [T, B, D])], [_info("y", [T, 1, B, D])],
                  [_init("W", [1, 3 * D, D]), _init("R", [1, 3 * D, D])])


def lstm_node():
    return _model([h.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=D)],
                  [_info("x", [T, B, D])], [_info("y", [T, 1, B, D])],
                  [_init("W", [1, 4 * D, D]), _init("R", [1, 4 * D, D])])


def rnn_node():
    return _model([h.make_node("RNN", ["x", "W", "R"], ["y"], hidden_size=D)],
                  [_info("x", [T, B, D])], [_info("y", [T, 1, B, D])],
                  [_init("W", [1, D, D]), _init("R", [1, D, D])])


def rnn_unrolled():
    """h_t = tanh(x_t W + h_{t-1} U), the outputs concatenated over time (a traced RNN)."""
    nodes = _token_slices("x", "x")
    state = "h0"
    for t in range(T):
        nodes += [h.make_node("MatMul", [f"x{t}", "W"], [f"xw{t}"]),
                  h.make_node("MatMul", [state, "U"], [f"hu{t}"]),
                  h.make_node("Add", [f"xw{t}", f"hu{t}"], [f"z{t}"]),
                  h.make_node("Tanh", [f"z{t}"], [f"h{t + 1}"])]
        state = f"h{t + 1}"
    nodes.append(h.make_node("Concat", [f"h{t + 1}" for t in range(T)], ["y"], axis=2))
    return _model(nodes, [_info("x", [B, H, T, D]), _info("h0", [B, H, 1, D])],
                  [_info("y", [B, H, T, D])], [_init("W", [H, D, D]), _init("U", [H, D, D])])


def residual_rnn_unrolled():
    """h_t = h_{t-1} + tanh(x_t W) U: a residual state, but a vector that the tokens
    never multiply (no fast weight applied to the queries)."""
    nodes = _token_slices("x", "x")
    state = "h0"
    for t in range(T):
        nodes += [h.make_node("MatMul", [f"x{t}", "W"], [f"xw{t}"]),
                  h.make_node("Tanh", [f"xw{t}"], [f"a{t}"]),
                  h.make_node("MatMul", [f"a{t}", "U"], [f"d{t}"]),
                  h.make_node("Add", [state, f"d{t}"], [f"h{t + 1}"]),
                  h.make_node("Add", [f"xw{t}", f"h{t + 1}"], [f"o{t}"])]
        state = f"h{t + 1}"
    nodes.append(h.make_node("Concat", [f"o{t}" for t in range(T)], ["y"], axis=2))
    return _model(nodes, [_info("x", [B, H, T, D]), _info("h0", [B, H, 1, D])],
                  [_info("y", [B, H, T, D])], [_init("W", [H, D, D]), _init("U", [H, D, D])])


def rnn_loop():
    """The same RNN as a scripted Loop that appends each step's output to a sequence."""
    body_nodes = [
        _const("one", [1]), _const("axis", [2]),
        h.make_node("Unsqueeze", ["i", "zero_axis"], ["start"]),
        h.make_node("Add", ["start", "one"], ["end"]),
        h.make_node("Slice", ["x", "start", "end", "axis"], ["xt"]),
        h.make_node("MatMul", ["xt", "W"], ["xw"]),
        h.make_node("MatMul", ["h_in", "U"], ["hu"]),
        h.make_node("Add", ["xw", "hu"], ["z"]),
        h.make_node("Tanh", ["z"], ["h_out"]),
        h.make_node("SequenceInsert", ["seq_in", "h_out"], ["seq_out"]),
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    body = h.make_graph(
        [_const("zero_axis", [0])] + body_nodes, "body",
        [h.make_tensor_value_info("i", TensorProto.INT64, []),
         h.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         _info("h_in", [B, H, 1, D]),
         h.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
        [h.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         _info("h_out", [B, H, 1, D]),
         h.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)])
    nodes = [_const("trips", T), _const("cond", True, np.bool_),
             h.make_node("SequenceEmpty", [], ["seq0"], dtype=TensorProto.FLOAT),
             h.make_node("Loop", ["trips", "cond", "h0", "seq0"], ["h_last", "seq"], body=body),
             h.make_node("ConcatFromSequence", ["seq"], ["y"], axis=2)]
    return _model(nodes, [_info("x", [B, H, T, D]), _info("h0", [B, H, 1, D])],
                  [_info("y", [B, H, T, D])], [_init("W", [H, D, D]), _init("U", [H, D, D])])


def kv_cache_step():
    """One decoder step: the new key and value are appended to the cache over the time
    axis and the query attends to all of it."""
    nodes = [h.make_node("MatMul", ["x", "Wq"], ["q"]), h.make_node("MatMul", ["x", "Wk"], ["k"]),
             h.make_node("MatMul", ["x", "Wv"], ["v"]),
             h.make_node("Concat", ["past_k", "k"], ["present_k"], axis=2),
             h.make_node("Concat", ["past_v", "v"], ["present_v"], axis=2),
             h.make_node("Transpose", ["present_k"], ["kt"], perm=[0, 1, 3, 2]),
             h.make_node("MatMul", ["q", "kt"], ["s"]),
             h.make_node("Softmax", ["s"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "present_v"], ["y"])]
    return _model(nodes, [_info("x", [B, H, 1, D]), _info("past_k", [B, H, T, D]),
                          _info("past_v", [B, H, T, D])],
                  [_info("y", [B, H, 1, D]), _info("present_k", [B, H, T + 1, D]),
                   _info("present_v", [B, H, T + 1, D])],
                  [_init("Wq", [H, D, D]), _init("Wk", [H, D, D]), _init("Wv", [H, D, D])])


def selective_scan_unrolled():
    """S_t = a_t S_{t-1} + k_t^T v_t with a decay a_t = sigmoid(x_t w) computed from the
    data, y_t = q_t S_t: gated linear attention / a selective scan, not gradient steps
    on a fast weight."""
    nodes = _token_slices("q", "q") + _token_slices("k", "k") + _token_slices("v", "v")
    state = "S0"
    for t in range(T):
        nodes += [h.make_node("MatMul", [f"k{t}", "wa"], [f"za{t}"]),
                  h.make_node("Sigmoid", [f"za{t}"], [f"a{t}"]),
                  h.make_node("Mul", [f"a{t}", state], [f"decayed{t}"]),
                  h.make_node("Transpose", [f"k{t}"], [f"kt{t}"], perm=[0, 1, 3, 2]),
                  h.make_node("MatMul", [f"kt{t}", f"v{t}"], [f"kv{t}"]),
                  h.make_node("Add", [f"decayed{t}", f"kv{t}"], [f"S{t + 1}"]),
                  h.make_node("MatMul", [f"q{t}", f"S{t + 1}"], [f"y{t}"])]
        state = f"S{t + 1}"
    nodes.append(h.make_node("Concat", [f"y{t}" for t in range(T)], ["y"], axis=2))
    return _model(nodes, [_info(n, [B, H, T, D]) for n in "qkv"],
                  [_info("y", [B, H, T, D])], [_init("S0", [H, D, D]), _init("wa", [H, D, 1])])


def transformer_block():
    """Pre-LN block: LayerNorm, causal softmax attention with a residual, an MLP."""
    mask = np.triu(np.full((T, T), -1e9, np.float32), 1)
    nodes = [h.make_node("LayerNormalization", ["x", "g1", "b1"], ["n1"], axis=-1)]
    for n in "qkv":
        nodes.append(h.make_node("MatMul", ["n1", f"W{n}"], [n]))
    nodes += [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
              h.make_node("MatMul", ["q", "kt"], ["s"]),
              h.make_node("Add", ["s", "mask"], ["sm"]),
              h.make_node("Softmax", ["sm"], ["p"], axis=-1),
              h.make_node("MatMul", ["p", "v"], ["att"]),
              h.make_node("Add", ["x", "att"], ["r1"]),
              h.make_node("LayerNormalization", ["r1", "g2", "b2"], ["n2"], axis=-1),
              h.make_node("MatMul", ["n2", "W1"], ["m1"]),
              h.make_node("Relu", ["m1"], ["m2"]),
              h.make_node("MatMul", ["m2", "W2"], ["m3"]),
              h.make_node("Add", ["r1", "m3"], ["y"])]
    inits = [_init(f"W{n}", [D, D]) for n in "qkv"] + [_init("W1", [D, 2 * D]),
                                                        _init("W2", [2 * D, D])]
    inits += [nh.from_array(np.ones(D, np.float32), "g1"), nh.from_array(np.zeros(D, np.float32), "b1"),
              nh.from_array(np.ones(D, np.float32), "g2"), nh.from_array(np.zeros(D, np.float32), "b2"),
              nh.from_array(mask, "mask")]
    return _model(nodes, [_info("x", [B, H, T, D])], [_info("y", [B, H, T, D])], inits)


ORDINARY = {f.__name__: f for f in (gru_node, lstm_node, rnn_node, rnn_unrolled,
                                    residual_rnn_unrolled, rnn_loop, kv_cache_step,
                                    selective_scan_unrolled, transformer_block)}


def _optimize(model, tmp_path, *args):
    src, out = tmp_path / "model.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    proc = subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr, onnx.load(str(out))


def _count_nodes(graph):
    """Nodes of `graph` and of every subgraph (Loop bodies)."""
    return sum(1 + sum(_count_nodes(a.g) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
               for n in graph.node)


def _nodes(graph):
    return [(n.op_type, list(n.input), list(n.output)) for n in graph.node]


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_state_is_not_a_ttt_layer(name, tmp_path):
    model = ORDINARY[name]()
    remarks, out = _optimize(model, tmp_path)
    assert "TTT layer:" not in remarks, remarks
    assert f"no TTT layer found ({_count_nodes(model.graph)} nodes read)" in remarks, remarks
    assert _nodes(out.graph) == _nodes(model.graph)
    assert [i.name for i in out.graph.initializer] == [i.name for i in model.graph.initializer]


def _fast_weight_layer(update_activation=None, output_activation=None):
    """o_c = q_c W_c, W_{c+1} = W_c + k_c^T (act(k_c W_c) or v_c): a TTT layer whose
    update or output optionally goes through a non-linearity."""
    C, n = 2, T // 2
    nodes = []
    for x in "qkv":
        nodes.append(_const(f"{x}_sizes", [C] * n))
        nodes.append(h.make_node("Split", [x, f"{x}_sizes"], [f"{x}{i}" for i in range(n)], axis=2))
    state = "W0"
    outputs = []
    for i in range(n):
        nodes.append(h.make_node("MatMul", [f"q{i}", state], [f"qw{i}"]))
        out = f"qw{i}"
        if output_activation:
            nodes.append(h.make_node(output_activation, [out], [f"o{i}"]))
            out = f"o{i}"
        outputs.append(out)
        if i + 1 < n:
            target = f"v{i}"
            if update_activation:
                nodes += [h.make_node("MatMul", [f"k{i}", state], [f"kw{i}"]),
                          h.make_node(update_activation, [f"kw{i}"], [f"t{i}"])]
                target = f"t{i}"
            nodes += [h.make_node("Transpose", [f"k{i}"], [f"kt{i}"], perm=[0, 1, 3, 2]),
                      h.make_node("MatMul", [f"kt{i}", target], [f"g{i}"]),
                      h.make_node("Add", [state, f"g{i}"], [f"W{i + 1}"])]
            state = f"W{i + 1}"
    nodes.append(h.make_node("Concat", outputs, ["y"], axis=2))
    return _model(nodes, [_info(x, [B, H, T, D]) for x in "qkv"], [_info("y", [B, H, T, D])],
                  [_init("W0", [H, D, D])])


@pytest.mark.parametrize("args", [["--ttt-explain"], ["--ttt-raise-onnx=raise-all"]],
                         ids=["explain", "raise-all"])
def test_explain_lists_rejected_candidates(args, tmp_path):
    """--ttt-explain (and raise-all) names a candidate that carries state but is an
    ordinary recurrence, with the reason; the model is still written back as it was."""
    model = ORDINARY["selective_scan_unrolled"]()
    remarks, out = _optimize(model, tmp_path, *args)
    assert "not a TTT layer: its carried state 'S1' is not updated by adding a term " \
           "to it (an ordinary recurrence" in remarks, remarks
    assert _nodes(out.graph) == _nodes(model.graph)


def test_plain_fast_weight_layer_is_found_and_rewritten(tmp_path):
    remarks, _ = _optimize(_fast_weight_layer(), tmp_path)
    assert "TTT layer: unrolled chunk loop (3 chunks of 2 tokens)" in remarks, remarks
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks


@pytest.mark.parametrize("where, activation, reason", [
    ("output", "Tanh", "its output depends non-linearly on the trained fast weights "
                       "(through Tanh)"),
    ("update", "Tanh", "the update of 'W1' is not affine in the fast weights (through Tanh)"),
])
def test_a_broken_condition_is_found_and_named(where, activation, reason, tmp_path):
    model = _fast_weight_layer(**{f"{where}_activation": activation})
    remarks, out = _optimize(model, tmp_path)
    assert "TTT layer: unrolled chunk loop" in remarks, remarks
    assert "left as it was" in remarks and reason in remarks, remarks
    assert _nodes(out.graph) == _nodes(model.graph)
