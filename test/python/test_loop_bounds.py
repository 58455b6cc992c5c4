"""A scripted layer's Loop bounds are proven for every sequence length, or refused; a
per-chunk momentum is read at each chunk's own index, or refused.

The raise claims a chunked ttt.kvb_layer for an ONNX Loop only when the Loop's integer
arithmetic (trip count, each iteration's token window, a mean's divisor) provably cuts
every sequence length T into the layer's chunks (lib/Conversion/ONNXToTTT/LoopBounds.cpp).
Each test takes a layer written by onnx_styles.py as a scripted export (symbolic batch
and length, the window [i C, min(i C + C, T)), the trip count (T + C - 1) / C, the mean
divided by the window's own length) and changes one piece of that arithmetic:

* into another spelling of the same numbers (the proof must accept it, and the rewritten
  model must match the original on fresh inputs of several lengths);
* into arithmetic that differs for some lengths only (the proof must refuse it, with the
  reason, and leave the model node for node as it was), including lengths the sample
  lengths of a test-and-see check would not have tried.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper as h, numpy_helper as nh  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_styles as styles  # noqa: E402

C = 8


def _layer(form="loop_sequence", T=3 * C + 5):
    spelling = styles.canonical_spelling(form=form)
    spec = styles.Spec(index=0, seed=5, family="linear_mse", order="apply_then_update",
                       reduction="mean", sign=-1, lr_scale=0.5, B=1, H=2, T=T, C=C, D=4,
                       E=4, F=8, spelling=spelling)
    return styles.Case(spec)


def _body(model):
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    return loop, next(a.g for a in loop.attribute if a.name == "body")


def _constant(graph, name, value):
    graph.node.insert(0, h.make_node("Constant", [], [name],
                                     value=nh.from_array(np.array(value, np.int64))))


def _node(graph, op_type, index=0):
    return [n for n in graph.node if n.op_type == op_type][index]


def _feeds(case, T, seed):
    rng = np.random.default_rng(seed)
    shape = {"q": (1, 2, T, 4), "k": (1, 2, T, 4), "v": (1, 2, T, 4)}
    return {name: rng.normal(0, 1, s).astype(np.float32) for name, s in shape.items()}


def _opt(model, tmp_path):
    src, out = tmp_path / "layer.onnx", tmp_path / "layer.out.onnx"
    onnx.save(model, str(src))
    proc = styles.run_ttt_opt(src, out)
    assert proc.returncode == 0, proc.stderr
    return proc, onnx.load(str(out))


def _end_unclamped(model):
    """The window's end i C + C without the Min(., T): Slice clamps it itself."""
    _, body = _body(model)
    add, minimum = _node(body, "Add"), _node(body, "Min")
    for node in body.node:
        if node is not minimum:
            node.input[:] = [add.output[0] if x == minimum.output[0] else x
                             for x in node.input]


def _before_loop(model, nodes):
    loop, _ = _body(model)
    index = list(model.graph.node).index(loop)
    for offset, node in enumerate(nodes):
        model.graph.node.insert(index + offset, node)


def _trips_by_max(model):
    """The trip count as Max((T - 1) / C + 1, 1), equal to ceil(T / C) for T >= 1."""
    loop, _ = _body(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    div = producers[producers[loop.input[0]].input[0]]
    length = producers[div.input[0]].input[0]
    _constant(model.graph, "one", 1)
    _constant(model.graph, "chunk", C)
    _before_loop(model, [h.make_node("Sub", [length, "one"], ["t1"]),
                         h.make_node("Div", ["t1", "chunk"], ["q1"]),
                         h.make_node("Add", ["q1", "one"], ["n1"]),
                         h.make_node("Max", ["n1", "one"], ["trips_by_max"])])
    loop.input[0] = "trips_by_max"


def _trips_in_float(rounding="Ceil", to=onnx.TensorProto.FLOAT):
    """The trip count as torch's scripted `range(0, T, C)` writes it:
    Cast(Ceil(Cast(T - 0, float) / C)), in float32 (or another float type)."""
    def respell(model):
        loop, _ = _body(model)
        producers = {o: n for n in model.graph.node for o in n.output}
        div = producers[producers[loop.input[0]].input[0]]
        length = producers[div.input[0]].input[0]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(to)
        _constant(model.graph, "zero", 0)
        model.graph.node.insert(0, h.make_node(
            "Constant", [], ["chunk_f"], value=nh.from_array(np.array(C, dtype))))
        _before_loop(model, [h.make_node("Sub", [length, "zero"], ["t0"]),
                             h.make_node("Cast", ["t0"], ["t_f"], to=to),
                             h.make_node("Div", ["t_f", "chunk_f"], ["q_f"]),
                             h.make_node(rounding, ["q_f"], ["r_f"]),
                             h.make_node("Cast", ["r_f"], ["trips_in_float"],
                                         to=onnx.TensorProto.INT64)])
        loop.input[0] = "trips_in_float"
    respell.__name__ = f"_trips_by_{rounding.lower()}_{to}"
    return respell


@pytest.mark.parametrize("respell", [_end_unclamped, _trips_by_max, _trips_in_float()],
                         ids=["end_unclamped", "trips_by_max", "trips_by_float_ceil"])
def test_equal_bounds_in_other_spellings_are_proven(respell, tmp_path):
    case = _layer()
    model = case.model
    respell(model)
    onnx.checker.check_model(model, full_check=True)
    proc, written = _opt(model, tmp_path)
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr, proc.stderr
    for T, seed in [(1, 1), (C, 2), (C + 1, 3), (5 * C - 1, 4)]:
        feeds = _feeds(case, T, seed)
        expected = styles.run_onnx(model, feeds)
        assert styles.rel_err(styles.run_onnx(written, feeds), expected) <= styles.RTOL


def _trips_floor(model):
    """(T - 0) / C iterations: one short whenever C does not divide T."""
    producers = {o: n for n in model.graph.node for o in n.output}
    loop, _ = _body(model)
    sub = producers[producers[producers[loop.input[0]].input[0]].input[0]]
    _constant(model.graph, "no_round", 0)
    sub.input[1] = "no_round"


def _trips_capped(model):
    """Min(ceil(T / C), 1000): right until T passes 1000 C (no sample length does)."""
    loop, _ = _body(model)
    _constant(model.graph, "cap", 1000)
    _before_loop(model, [h.make_node("Min", [loop.input[0], "cap"], ["capped"])])
    loop.input[0] = "capped"


def _window_overlaps(model):
    """Windows [i C, i C + C + 1): each chunk reads the next one's first token."""
    _, body = _body(model)
    add = _node(body, "Add")
    _constant(body, "wider", C + 1)
    add.input[1] = "wider"


def _mean_by_chunk_size(model):
    """The mean divided by C, not by the window's length: wrong for a short last chunk
    (the chunk-length Sub reads the unclamped end)."""
    _, body = _body(model)
    add, sub = _node(body, "Add"), _node(body, "Sub")
    sub.input[0] = add.output[0]


@pytest.mark.parametrize("change,reason", [
    (_trips_floor, "its Loop's trip count is not the number of chunks"),
    (_trips_capped, "its Loop's trip count is not the number of chunks"),
    (_window_overlaps, "its Loop's iterations do not cut the sequence into consecutive "
                       "chunks"),
    (_mean_by_chunk_size, "the update divides by a value that is not the chunk length"),
    (_trips_in_float("Floor"), "its Loop's trip count is not the number of chunks"),
    # float16 divides T / C exactly only below 2^10 tokens.
    (_trips_in_float("Ceil", onnx.TensorProto.FLOAT16),
     "its Loop's trip count is not the number of chunks"),
], ids=["trips_floor", "trips_capped", "window_overlaps", "mean_by_chunk_size",
        "trips_by_float_floor", "trips_by_float16_ceil"])
def test_bounds_wrong_for_some_lengths_are_refused(change, reason, tmp_path):
    model = _layer().model
    change(model)
    onnx.checker.check_model(model, full_check=True)
    proc, written = _opt(model, tmp_path)
    assert "left as it was: no ttt.kvb_layer form: " + reason in proc.stderr, proc.stderr
    assert [n.op_type for n in written.graph.node] == [n.op_type for n in model.graph.node]


def test_a_static_length_makes_a_fixed_divisor_exact(tmp_path):
    """Exported for one length that C divides (loop_static), every chunk is full: the
    mean divided by C is the mean over each chunk, and the proof at that one length
    accepts what it refuses for a symbolic length."""
    case = _layer(form="loop_static", T=4 * C)
    model = case.model
    _mean_by_chunk_size(model)
    proc, written = _opt(model, tmp_path)
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr, proc.stderr
    feeds = _feeds(case, 4 * C, 9)
    assert styles.rel_err(styles.run_onnx(written, feeds),
                          styles.run_onnx(model, feeds)) <= styles.RTOL


def _momentum_layer(form, momentum="per_chunk"):
    spelling = styles.canonical_spelling(form=form, momentum=momentum)
    spec = styles.Spec(index=0, seed=6, family="momentum_dot", order="apply_then_update",
                       reduction="sum", sign=1, lr_scale=0.5, B=1, H=2, T=3 * C + 5, C=C,
                       D=4, E=4, F=8, spelling=spelling)
    return styles.Case(spec)


@pytest.mark.parametrize("form", ["unrolled", "loop_sequence"])
@pytest.mark.parametrize("momentum", ["per_chunk", "per_chunk_slice"])
def test_per_chunk_momentum_at_another_index_is_refused(form, momentum, tmp_path):
    """A momentum of one value per chunk ([B, H, N]) is read by chunk c at index c (a
    constant, or the Loop's counter; by Gather or by a Slice [c, c + 1)). Every chunk
    reading index 0 is a valid model with other numbers: refused, and left as it
    was."""
    case = _momentum_layer(form, momentum)
    model = case.model
    graph = model.graph if form == "unrolled" else _body(model)[1]
    reads = [n for n in graph.node if n.op_type in ("Gather", "Slice") and
             n.input[0] == "mom"]
    assert reads
    _constant(graph, "first", 0)
    _constant(graph, "first_start", [0])
    _constant(graph, "first_end", [1])
    for node in reads:
        if node.op_type == "Gather":
            node.input[1] = "first"
        else:
            node.input[1], node.input[2] = "first_start", "first_end"
    onnx.checker.check_model(model, full_check=True)
    proc, written = _opt(model, tmp_path)
    assert "its per-chunk momentum is not read at the chunk's own index" in proc.stderr, \
        proc.stderr
    assert [n.op_type for n in written.graph.node] == [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("form", ["unrolled", "loop_sequence"])
@pytest.mark.parametrize("momentum", ["per_chunk", "per_chunk_slice"])
def test_per_chunk_momentum_is_expanded_to_tokens(form, momentum, tmp_path):
    """The rewritten layer repeats chunk c's momentum over its tokens: the rewritten
    model matches the original on fresh inputs."""
    case = _momentum_layer(form, momentum)
    proc, written = _opt(case.model, tmp_path)
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr, proc.stderr
    feeds, expected = case.draw(np.random.default_rng(3))
    assert styles.rel_err(styles.run_onnx(written, feeds), expected) <= styles.RTOL
