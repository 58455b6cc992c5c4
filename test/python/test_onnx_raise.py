"""The ONNX raise on models written by hand, unlike the PyTorch fixtures.

* A linear fast-weight layer written differently from the exporters (chunks cut by
  Split, the update as `0.5 * G + W` with swapped operands, Identity nodes around the
  weight, a negative Concat axis) is found and rewritten; its output is compared with
  a NumPy implementation written from the layer's math and with onnxruntime on the
  original model.
* Ordinary layers (LayerNorm, projections, softmax attention, an MLP) around a
  rewritten TTT layer are written back node for node.
* A model with only ordinary layers (softmax attention with projections and biases)
  reports no TTT layer and is written back unchanged.
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

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"
RTOL = 1e-5


def _opt(src, out, *args):
    return subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out), *args],
                          capture_output=True, text=True, timeout=120)


def _run(model_path, feeds):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _rel(a, e):
    e = np.asarray(e, np.float64)
    return float(np.max(np.abs(np.asarray(a, np.float64) - e)) / max(np.max(np.abs(e)), 1e-30))


def _const(name, value, dtype=np.int64):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value, dtype), name))


def _hand_written_layer(path, B=1, H=2, T=24, D=4, C=8, scale=0.5, seed=0, divisor=None,
                        opset=17, update_reads=None):
    """o_c = q_c W_c; W_{c+1} = 0.5 * k_c^T v_c (/ divisor) + W_c (apply, then update).
    `update_reads[c]`, if given, is the chunk whose keys and values the update after
    chunk c reads instead of chunk c's."""
    rng = np.random.default_rng(seed)
    w0 = rng.normal(0, 0.5, (H, D, D)).astype(np.float32)
    n = T // C
    # Split takes its sizes as an input from opset 13 on, as an attribute before.
    split = (lambda x: h.make_node("Split", [x, "sizes"], [f"{x}{i}" for i in range(n)],
                                   axis=2)) if opset >= 13 else \
        (lambda x: h.make_node("Split", [x], [f"{x}{i}" for i in range(n)], axis=2,
                               split=[C] * n))
    nodes = [_const("sizes", [C] * n), split("q"), split("k"), split("v"),
             _const("half", scale, np.float32)]
    # One divisor for every chunk, or one per chunk.
    divisors = None if divisor is None else np.broadcast_to(divisor, (n,))
    if divisor is not None:
        nodes += [_const(f"divisor{i}", d, np.float32) for i, d in enumerate(divisors)]
    state = "w0"
    for i in range(n):
        nodes.append(h.make_node("Identity", [state], [f"s{i}"]))
        nodes.append(h.make_node("MatMul", [f"q{i}", f"s{i}"], [f"o{i}"]))
        if i + 1 < n:
            read = i if update_reads is None else update_reads[i]
            nodes += [
                h.make_node("Transpose", [f"k{read}"], [f"kt{i}"], perm=[0, 1, 3, 2]),
                h.make_node("MatMul", [f"kt{i}", f"v{read}"], [f"g{i}"]),
            ]
            if divisor is not None:
                nodes.append(h.make_node("Div", [f"g{i}", f"divisor{i}"], [f"gm{i}"]))
            nodes += [
                h.make_node("Mul", ["half", f"gm{i}" if divisor is not None else f"g{i}"],
                            [f"u{i}"]),
                h.make_node("Add", [f"u{i}", f"s{i}"], [f"w{i + 1}"]),
            ]
            state = f"w{i + 1}"
    nodes.append(h.make_node("Concat", [f"o{i}" for i in range(n)], ["o"], axis=-2))
    spec = [h.make_tensor_value_info(x, TensorProto.FLOAT, [B, H, T, D]) for x in "qkv"]
    graph = h.make_graph(nodes, "hand_written", spec,
                         [h.make_tensor_value_info("o", TensorProto.FLOAT, [B, H, T, D])],
                         [nh.from_array(w0, "w0")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return w0


def _numpy_layer(q, k, v, w0, C, scale):
    """The layer's math: chunk c reads W0 + scale * sum_{j<c} k_j^T v_j."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    w = np.broadcast_to(w0.astype(np.float64), (q.shape[0],) + w0.shape).copy()
    out = np.zeros(q.shape[:3] + (w0.shape[-1],))
    for s in range(0, q.shape[2], C):
        out[:, :, s:s + C] = q[:, :, s:s + C] @ w
        w = w + scale * np.swapaxes(k[:, :, s:s + C], -1, -2) @ v[:, :, s:s + C]
    return out


def test_differently_written_layer_is_found_and_rewritten(tmp_path):
    src, out = tmp_path / "layer.onnx", tmp_path / "fast.onnx"
    w0 = _hand_written_layer(src)
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "TTT layer: unrolled chunk loop (3 chunks of 8 tokens), fast weights 'w0': " \
           "raised to ttt.kvb_layer (linear attention" in proc.stderr
    onnx.checker.check_model(str(out), full_check=True)
    assert "Split" not in [n.op_type for n in onnx.load(str(out)).graph.node]
    rng = np.random.default_rng(7)
    feeds = {x: rng.normal(0, 1, (1, 2, 24, 4)).astype(np.float32) for x in "qkv"}
    (original,) = _run(src, feeds)
    (fast,) = _run(out, feeds)
    expected = _numpy_layer(feeds["q"], feeds["k"], feeds["v"], w0, 8, 0.5)
    assert _rel(original, expected) <= RTOL   # the hand-written model is the layer
    assert _rel(fast, expected) <= RTOL
    assert _rel(fast, original) <= RTOL


def test_a_layer_whose_later_update_reads_an_earlier_chunk_is_left(tmp_path):
    """The update after chunk 1 adds chunk 0's k^T v once more: W_2 = W_1 + k_0^T v_0
    is no prefix sum of the chunks' updates, so the layer is left as it was (it was
    rewritten as the prefix sum before this was checked)."""
    src, out = tmp_path / "reread.onnx", tmp_path / "out.onnx"
    _hand_written_layer(src, update_reads=[0, 0])
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "left as it was: no ttt.kvb_layer form: its update after chunk 1 reads other " \
           "tokens than that chunk's" in proc.stderr, proc.stderr
    assert [n.op_type for n in onnx.load(str(out)).graph.node] == \
        [n.op_type for n in onnx.load(str(src)).graph.node]


def _wrap_with_ordinary_layers(fixture, path, seed=0):
    """x -> LayerNorm -> q/k/v projections -> <fixture's TTT layer> -> + softmax
    attention -> MLP -> y. Returns the names of the wrapper's nodes."""
    inner = onnx.load(str(FIXTURES / f"{fixture}.onnx"))
    rng = np.random.default_rng(seed)
    shape = [d.dim_value for d in inner.graph.input[0].type.tensor_type.shape.dim]
    D = shape[-1]
    inits = [nh.from_array(rng.normal(0, 0.3, (D, D)).astype(np.float32), f"W{n}")
             for n in ("q", "k", "v", "1", "2")]
    inits += [nh.from_array(np.ones(D, np.float32), "ln_g"),
              nh.from_array(np.zeros(D, np.float32), "ln_b"),
              nh.from_array(np.asarray(D ** -0.5, np.float32), "att_scale")]
    pre = [h.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["xn"], axis=-1,
                       name="ln")]
    pre += [h.make_node("MatMul", ["xn", f"W{n}"], [n], name=f"proj_{n}") for n in "qkv"]
    post = [h.make_node("Transpose", ["k"], ["kT"], perm=[0, 1, 3, 2], name="att_kT"),
            h.make_node("MatMul", ["q", "kT"], ["s"], name="att_scores"),
            h.make_node("Mul", ["s", "att_scale"], ["ss"], name="att_scale_mul"),
            h.make_node("Softmax", ["ss"], ["p"], axis=-1, name="att_softmax"),
            h.make_node("MatMul", ["p", "v"], ["att"], name="att_out"),
            h.make_node("Add", ["o", "att"], ["r"], name="residual"),
            h.make_node("MatMul", ["r", "W1"], ["h1"], name="mlp_up"),
            h.make_node("Relu", ["h1"], ["h2"], name="mlp_act"),
            h.make_node("MatMul", ["h2", "W2"], ["y"], name="mlp_down")]
    extra = [i for i in inner.graph.input if i.name not in ("q", "k", "v")]
    graph = h.make_graph(pre + list(inner.graph.node) + post, "block",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, shape)] + extra,
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                         list(inner.graph.initializer) + inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return shape, extra, [n.name for n in pre + post]


@pytest.mark.parametrize("fixture", ["lact_v5.traced", "linear_mse.traced"])
def test_ordinary_layers_around_a_rewritten_layer_stay(fixture, tmp_path):
    src, out = tmp_path / "block.onnx", tmp_path / "fast.onnx"
    shape, extra, wrapper = _wrap_with_ordinary_layers(fixture, src)
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("TTT layer:") == 1
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr
    original = {n.name: n for n in onnx.load(str(src)).graph.node}
    exported = {n.name: n for n in onnx.load(str(out)).graph.node if n.name}
    for name in wrapper:
        assert name in exported, f"node '{name}' was dropped"
        assert exported[name].op_type == original[name].op_type
        assert list(exported[name].input) == list(original[name].input)
        assert list(exported[name].attribute) == list(original[name].attribute)
    rng = np.random.default_rng(3)
    feeds = {"x": rng.normal(0, 1, shape).astype(np.float32)}
    for i in extra:  # learning rates, momentum: small and positive
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.uniform(0, 0.1, dims).astype(np.float32)
    assert _rel(_run(out, feeds)[0], _run(src, feeds)[0]) <= RTOL


def test_model_without_ttt_layers_is_written_back_unchanged(tmp_path):
    """Softmax attention computes weights from keys and values too, but no initial
    fast weight is moved by them: it is not a TTT layer."""
    rng = np.random.default_rng(1)
    D = 8
    inits = [nh.from_array(rng.normal(0, 0.3, (D, D)).astype(np.float32), f"W{n}")
             for n in "qkvo"]
    inits += [nh.from_array(rng.normal(0, 0.1, D).astype(np.float32), f"b{n}") for n in "qkv"]
    nodes = []
    for n in "qkv":
        nodes += [h.make_node("MatMul", [n, f"W{n}"], [f"{n}p"]),
                  h.make_node("Add", [f"{n}p", f"b{n}"], [f"{n}b"])]
    nodes += [h.make_node("Transpose", ["kb"], ["kT"], perm=[0, 1, 3, 2]),
              h.make_node("MatMul", ["qb", "kT"], ["s"]),
              h.make_node("Softmax", ["s"], ["p"], axis=-1),
              h.make_node("MatMul", ["p", "vb"], ["a"]),
              h.make_node("MatMul", ["a", "Wo"], ["y"])]
    spec = [h.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 16, D]) for n in "qkv"]
    model = h.make_model(h.make_graph(nodes, "attention", spec,
                                      [h.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                [1, 2, 16, D])], inits),
                         opset_imports=[h.make_opsetid("", 17)])
    src, out = tmp_path / "attention.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "TTT layer:" not in proc.stderr
    assert [n.op_type for n in onnx.load(str(out)).graph.node] == \
        [n.op_type for n in model.graph.node]


def test_two_layers_in_one_model_are_both_found(tmp_path):
    """Two TTT layers, the second reading the first's output as its queries: one remark
    each, both rewritten, and the model still computes the same."""
    from onnx import compose

    first = compose.add_prefix(onnx.load(str(FIXTURES / "lact_v6.traced.onnx")), "a/")
    second = compose.add_prefix(onnx.load(str(FIXTURES / "lact_v5.traced.onnx")), "b/")
    model = compose.merge_models(first, second, io_map=[("a/o", "b/q")])
    src, out = tmp_path / "two.onnx", tmp_path / "fast.onnx"
    onnx.save(model, str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("TTT layer:") == 2, proc.stderr
    assert proc.stderr.count("raised to ttt.kvb_layer (linear attention") == 2
    rng = np.random.default_rng(5)
    feeds = {i.name: rng.normal(0, 1, [d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in model.graph.input}
    assert _rel(_run(out, feeds)[0], _run(src, feeds)[0]) <= RTOL


@pytest.mark.parametrize("divisor", [8.0, 9.0, (8.0, 9.0, 8.0)])
def test_constant_divisors_are_step_sizes(divisor, tmp_path):
    """`G / 8` with 8-token chunks is the mean, `G / 9` a step size of 0.5 / 9: both
    are rewritten exactly. Chunks divided by different constants (8 and 9 for chunks
    of the same length) are no kvb_layer update; that layer stays as it was."""
    src, out = tmp_path / "layer.onnx", tmp_path / "fast.onnx"
    w0 = _hand_written_layer(src, divisor=divisor)
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    if isinstance(divisor, float):
        assert "raised to ttt.kvb_layer (linear attention" in proc.stderr
    else:
        assert "left as it was: no ttt.kvb_layer form: its chunks scale their updates " \
               "by different constants" in proc.stderr
        assert [n.op_type for n in onnx.load(str(out)).graph.node] == \
            [n.op_type for n in onnx.load(str(src)).graph.node]
        return
    rng = np.random.default_rng(11)
    feeds = {x: rng.normal(0, 1, (1, 2, 24, 4)).astype(np.float32) for x in "qkv"}
    expected = _numpy_layer(feeds["q"], feeds["k"], feeds["v"], w0, 8, 0.5 / divisor)
    assert _rel(_run(out, feeds)[0], expected) <= RTOL


def test_loop_that_skips_chunks_is_left_alone(tmp_path):
    """A scripted layer whose Loop runs half as many iterations as there are chunks
    (the trip count divides by 2C) is a different computation: the raise must see that
    in the trip-count arithmetic and leave the layer as it was."""
    model = onnx.load(str(FIXTURES / "lact_v6.scripted.onnx"))
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    producers = {o: n for n in model.graph.node for o in n.output}
    node = producers[loop.input[0]]
    while node.op_type != "Div":  # the trip count: Cast(Cast((T - 1) / 16))
        node = producers[node.input[0]]
    constant = producers[node.input[1]]
    value = nh.to_array(constant.attribute[0].t)
    constant.attribute[0].t.CopyFrom(nh.from_array(value * 2, constant.attribute[0].t.name))
    src, out = tmp_path / "skips.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "left as it was: no ttt.kvb_layer form: its Loop's trip count is not the " \
           "number of chunks" in proc.stderr
    rng = np.random.default_rng(2)
    feeds = {x: rng.normal(0, 1, (1, 2, 64, 8)).astype(np.float32) for x in "qkv"}
    assert _rel(_run(out, feeds)[0], _run(src, feeds)[0]) == 0.0


def test_momentum_layer_with_a_large_zero_initializer(tmp_path):
    """Momentum written by hand (Split chunks, ReduceMean of the chunk's momentum,
    M_c = mu_c M_{c-1} + k_c^T v_c, W_{c+1} = W_c + 0.5 M_c) with the zero initial
    momentum as a 4 KiB initializer (which the reader keeps as a resource blob)."""
    B, H, T, D, C = 1, 4, 48, 16, 16
    n = T // C
    rng = np.random.default_rng(4)
    w0 = rng.normal(0, 0.3, (H, D, D)).astype(np.float32)
    nodes = [_const("sizes", [C] * n), _const("half", 0.5, np.float32),
             _const("last", [-1])]
    for x in "qkvm":
        nodes.append(h.make_node("Split", [x, "sizes"], [f"{x}c{i}" for i in range(n)],
                                 axis=2))
    state, mom = "w0", "m0"
    for i in range(n):
        nodes.append(h.make_node("MatMul", [f"qc{i}", state], [f"o{i}"]))
        if i + 1 == n:
            break
        nodes += [
            h.make_node("Transpose", [f"kc{i}"], [f"kt{i}"], perm=[0, 1, 3, 2]),
            h.make_node("MatMul", [f"kt{i}", f"vc{i}"], [f"g{i}"]),
            h.make_node("ReduceMean", [f"mc{i}"], [f"mu{i}"], axes=[-1], keepdims=1),
            h.make_node("Unsqueeze", [f"mu{i}", "last"], [f"mu4_{i}"]),
            h.make_node("Mul", [f"mu4_{i}", mom], [f"decayed{i}"]),
            h.make_node("Add", [f"g{i}", f"decayed{i}"], [f"M{i}"]),
            h.make_node("Mul", [f"M{i}", "half"], [f"u{i}"]),
            h.make_node("Add", [state, f"u{i}"], [f"w{i + 1}"]),
        ]
        state, mom = f"w{i + 1}", f"M{i}"
    nodes.append(h.make_node("Concat", [f"o{i}" for i in range(n)], ["o"], axis=2))
    spec = [h.make_tensor_value_info(x, TensorProto.FLOAT, [B, H, T, D]) for x in "qkv"]
    spec.append(h.make_tensor_value_info("m", TensorProto.FLOAT, [B, H, T]))
    graph = h.make_graph(nodes, "momentum", spec,
                         [h.make_tensor_value_info("o", TensorProto.FLOAT, [B, H, T, D])],
                         [nh.from_array(w0, "w0"),
                          nh.from_array(np.zeros((H, D, D), np.float32), "m0")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    src, out = tmp_path / "momentum.onnx", tmp_path / "fast.onnx"
    onnx.save(model, str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr, proc.stderr

    feeds = {x: rng.normal(0, 1, (B, H, T, D)).astype(np.float32) for x in "qkv"}
    feeds["m"] = rng.uniform(0, 1, (B, H, T)).astype(np.float32)
    q, k, v, m = (feeds[x].astype(np.float64) for x in "qkvm")
    w, M = np.broadcast_to(w0, (B, H, D, D)).astype(np.float64), np.zeros((B, H, D, D))
    expected = np.zeros((B, H, T, D))
    for s in range(0, T, C):
        expected[:, :, s:s + C] = q[:, :, s:s + C] @ w
        M = m[:, :, s:s + C].mean(-1)[..., None, None] * M + \
            np.swapaxes(k[:, :, s:s + C], -1, -2) @ v[:, :, s:s + C]
        w = w + 0.5 * M
    assert _rel(_run(src, feeds)[0], expected) <= RTOL
    assert _rel(_run(out, feeds)[0], expected) <= RTOL


def test_layer_in_an_opset_12_model_is_left_with_the_reason(tmp_path):
    """The parallel form uses opset-13 nodes (axes as inputs): a layer of an opset-12
    model is found, proven, and left as it was, saying why."""
    src, out = tmp_path / "layer12.onnx", tmp_path / "out.onnx"
    _hand_written_layer(src, opset=12)
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "TTT layer: unrolled chunk loop (3 chunks of 8 tokens)" in proc.stderr
    assert "left as it was: the model imports opset 12, and the parallel form needs " \
           "opset 13 or later" in proc.stderr
    assert [n.op_type for n in onnx.load(str(out)).graph.node] == \
        [n.op_type for n in onnx.load(str(src)).graph.node]
