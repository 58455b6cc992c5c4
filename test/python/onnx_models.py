"""Small ONNX models for the reader/writer tests, built with onnx.helper.

Each builder returns a `Case`: the model plus a function that makes random
inputs for it. The models are small on purpose (a few KB) and cover what the
reader must keep: MLP, attention-like ops, LayerNormalization, Loop with
carried state and an outer-scope reference, If, Scan, omitted optional
inputs, an input with a default initializer, external data, a custom-domain
op, a model-local function, metadata, opsets 13 and 17.

`python3 test/python/onnx_models.py DIR` writes every model to DIR (the seed
corpus of the fuzzer, see `make fuzz`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

# IR version each opset was released with (the reader's ONNX library knows
# IR versions up to 14 and opsets up to 28; test_onnx_opsets.py covers those).
IR_FOR_OPSET = {13: 7, 17: 8}


@dataclass
class Case:
    name: str
    model: onnx.ModelProto
    make_inputs: Callable[[np.random.Generator], Dict[str, np.ndarray]]
    # False when onnxruntime cannot run the model (custom domains).
    runnable: bool = True
    # Save the initializers to a file next to the model (ONNX external data).
    external: bool = False


_NO_LAYER = re.compile(r"remark: .*: no TTT layer found \(\d+ nodes read\)")


def reader_messages(stderr: str) -> list:
    """The lines of `ttt-opt model.onnx -o out.onnx`'s stderr other than the one
    remark of the default pipeline on a model without TTT layers, which must be
    there exactly once."""
    lines = stderr.splitlines()
    found = [line for line in lines if _NO_LAYER.fullmatch(line)]
    assert len(found) == 1, f"expected one 'no TTT layer found' remark in: {stderr!r}"
    return [line for line in lines if not _NO_LAYER.fullmatch(line)]


def _model(graph, opset, extra_opsets=(), **kwargs):
    model = h.make_model(
        graph,
        opset_imports=[h.make_opsetid("", opset), *extra_opsets],
        ir_version=IR_FOR_OPSET[opset],
        producer_name="ttt-tests",
        **kwargs,
    )
    onnx.checker.check_model(model)
    return model


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _init(name, array):
    return nh.from_array(np.asarray(array), name)


def mlp(opset=17) -> Case:
    rng = np.random.default_rng(1)
    x = h.make_tensor_value_info("X", T.FLOAT, ["batch", 4])
    y = h.make_tensor_value_info("Y", T.FLOAT, ["batch", 3])
    nodes = [
        h.make_node("MatMul", ["X", "W1"], ["h0"], name="fc1"),
        h.make_node("Add", ["h0", "B1"], ["h1"], name="bias1"),
        h.make_node("Relu", ["h1"], ["h2"], name="relu"),
        h.make_node("Gemm", ["h2", "W2", "B2"], ["Y"], name="fc2", transB=1, alpha=0.5),
    ]
    inits = [
        _init("W1", _rand(rng, 4, 8)),
        _init("B1", _rand(rng, 8)),
        _init("W2", _rand(rng, 3, 8)),
        _init("B2", _rand(rng, 3)),
    ]
    graph = h.make_graph(nodes, "mlp", [x], [y], inits, doc_string="a two-layer MLP")
    model = _model(graph, opset, doc_string="MLP test model", model_version=3,
                   producer_version="1.0")
    h.set_model_props(model, {"author": "ttt", "purpose": "round trip"})
    return Case(f"mlp_opset{opset}", model, lambda r: {"X": _rand(r, 2, 4)})


def attention(opset=17) -> Case:
    """Single-head-split attention: projections, Reshape/Transpose into heads,
    scaled scores, Softmax, and back."""
    rng = np.random.default_rng(2)
    d, heads = 8, 2
    x = h.make_tensor_value_info("X", T.FLOAT, ["batch", "seq", d])
    y = h.make_tensor_value_info("Y", T.FLOAT, ["batch", "seq", d])
    nodes = [
        h.make_node("MatMul", ["X", "Wq"], ["q"], name="q_proj"),
        h.make_node("MatMul", ["X", "Wk"], ["k"], name="k_proj"),
        h.make_node("MatMul", ["X", "Wv"], ["v"], name="v_proj"),
        h.make_node("Reshape", ["q", "heads_shape"], ["q4"], name="q_split"),
        h.make_node("Reshape", ["k", "heads_shape"], ["k4"], name="k_split"),
        h.make_node("Reshape", ["v", "heads_shape"], ["v4"], name="v_split"),
        h.make_node("Transpose", ["q4"], ["qh"], name="q_heads", perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["k4"], ["kt"], name="k_heads_t", perm=[0, 2, 3, 1]),
        h.make_node("Transpose", ["v4"], ["vh"], name="v_heads", perm=[0, 2, 1, 3]),
        h.make_node("MatMul", ["qh", "kt"], ["scores"], name="qk"),
        h.make_node("Constant", [], ["scale"], name="scale_const",
                    value=h.make_tensor("scale_value", T.FLOAT, [], [1.0 / np.sqrt(d // heads)])),
        h.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
        h.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
        h.make_node("MatMul", ["probs", "vh"], ["ctx"], name="pv"),
        h.make_node("Transpose", ["ctx"], ["ctx_t"], name="merge_t", perm=[0, 2, 1, 3]),
        h.make_node("Reshape", ["ctx_t", "merge_shape"], ["merged"], name="merge"),
        h.make_node("MatMul", ["merged", "Wo"], ["Y"], name="o_proj"),
    ]
    inits = [
        _init("Wq", _rand(rng, d, d)),
        _init("Wk", _rand(rng, d, d)),
        _init("Wv", _rand(rng, d, d)),
        _init("Wo", _rand(rng, d, d)),
        _init("heads_shape", np.array([0, 0, heads, d // heads], np.int64)),
        _init("merge_shape", np.array([0, 0, d], np.int64)),
    ]
    graph = h.make_graph(nodes, "attention", [x], [y], inits)
    return Case(f"attention_opset{opset}", _model(graph, opset),
                lambda r: {"X": _rand(r, 2, 5, d)})


def layernorm() -> Case:
    rng = np.random.default_rng(3)
    x = h.make_tensor_value_info("X", T.FLOAT, ["batch", 6])
    y = h.make_tensor_value_info("Y", T.FLOAT, ["batch", 6])
    mean = h.make_tensor_value_info("Mean", T.FLOAT, ["batch", 1])
    nodes = [
        h.make_node("LayerNormalization", ["X", "gamma", "beta"], ["Y", "Mean"],
                    name="ln", axis=-1, epsilon=1e-5),
    ]
    inits = [_init("gamma", _rand(rng, 6)), _init("beta", _rand(rng, 6))]
    graph = h.make_graph(nodes, "layernorm", [x], [y, mean], inits)
    return Case("layernorm", _model(graph, 17), lambda r: {"X": _rand(r, 3, 6)})


def loop(opset=17) -> Case:
    """A Loop with an omitted condition, one carried state, one scan output,
    and a body that reads `X` from the enclosing graph."""
    m = h.make_tensor_value_info("M", T.INT64, [])
    x = h.make_tensor_value_info("X", T.FLOAT, [4])
    s0 = h.make_tensor_value_info("S0", T.FLOAT, [4])
    final = h.make_tensor_value_info("S_final", T.FLOAT, [4])
    scans = h.make_tensor_value_info("S_all", T.FLOAT, [None, 4])
    body = h.make_graph(
        [
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
            h.make_node("Mul", ["s_in", "half"], ["s_half"], name="decay"),
            h.make_node("Add", ["s_half", "X"], ["s_out"], name="accumulate"),
            h.make_node("Identity", ["s_out"], ["s_scan"], name="emit"),
        ],
        "loop_body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("s_in", T.FLOAT, [4]),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_value_info("s_out", T.FLOAT, [4]),
            h.make_tensor_value_info("s_scan", T.FLOAT, [4]),
        ],
        [_init("half", np.array(0.5, np.float32))],
    )
    nodes = [h.make_node("Loop", ["M", "", "S0"], ["S_final", "S_all"], name="loop", body=body)]
    graph = h.make_graph(nodes, "loop", [m, x, s0], [final, scans])
    rng = np.random.default_rng(4)
    return Case(f"loop_opset{opset}", _model(graph, opset),
                lambda r: {"M": np.array(5, np.int64), "X": _rand(r, 4), "S0": _rand(r, 4)})


def if_model() -> Case:
    cond = h.make_tensor_value_info("C", T.BOOL, [])
    x = h.make_tensor_value_info("X", T.FLOAT, [3])
    y = h.make_tensor_value_info("Y", T.FLOAT, [3])
    then_graph = h.make_graph(
        [h.make_node("Add", ["X", "one"], ["then_out"], name="then_add")],
        "then_branch", [], [h.make_tensor_value_info("then_out", T.FLOAT, [3])],
        [_init("one", np.array(1.0, np.float32))])
    else_graph = h.make_graph(
        [h.make_node("Mul", ["X", "two"], ["else_out"], name="else_mul")],
        "else_branch", [], [h.make_tensor_value_info("else_out", T.FLOAT, [3])],
        [_init("two", np.array(2.0, np.float32))])
    nodes = [h.make_node("If", ["C"], ["Y"], name="branch",
                         then_branch=then_graph, else_branch=else_graph)]
    graph = h.make_graph(nodes, "if_graph", [cond, x], [y])

    def inputs(r):
        return {"C": np.array(bool(r.integers(2))), "X": _rand(r, 3)}

    return Case("if", _model(graph, 17), inputs)


def scan() -> Case:
    """Running sum over a sequence with Scan."""
    x = h.make_tensor_value_info("X", T.FLOAT, ["seq", 4])
    s0 = h.make_tensor_value_info("S0", T.FLOAT, [4])
    final = h.make_tensor_value_info("S_final", T.FLOAT, [4])
    sums = h.make_tensor_value_info("S_all", T.FLOAT, ["seq", 4])
    body = h.make_graph(
        [
            h.make_node("Add", ["s_in", "x_t"], ["s_out"], name="step"),
            h.make_node("Identity", ["s_out"], ["y_t"], name="emit"),
        ],
        "scan_body",
        [h.make_tensor_value_info("s_in", T.FLOAT, [4]),
         h.make_tensor_value_info("x_t", T.FLOAT, [4])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [4]),
         h.make_tensor_value_info("y_t", T.FLOAT, [4])],
    )
    nodes = [h.make_node("Scan", ["S0", "X"], ["S_final", "S_all"], name="scan",
                         body=body, num_scan_inputs=1)]
    graph = h.make_graph(nodes, "scan_graph", [s0, x], [final, sums])
    return Case("scan", _model(graph, 17),
                lambda r: {"S0": _rand(r, 4), "X": _rand(r, 6, 4)})


def optional_inputs() -> Case:
    """Omitted optional inputs (Clip without min), a multi-output node, an
    integer shape path, and an input with a default value (an initializer of
    the same name)."""
    rng = np.random.default_rng(5)
    x = h.make_tensor_value_info("X", T.FLOAT, [2, 6])
    bias = h.make_tensor_value_info("bias", T.FLOAT, [6])
    y = h.make_tensor_value_info("Y", T.FLOAT, [2, 6])
    shape = h.make_tensor_value_info("shape", T.INT64, [2])
    nodes = [
        h.make_node("Add", ["X", "bias"], ["xb"], name="add_bias"),
        h.make_node("Clip", ["xb", "", "hi"], ["clipped"], name="clip_max_only"),
        h.make_node("Split", ["clipped", "split_sizes"], ["left", "right"], name="split", axis=1),
        h.make_node("Neg", ["right"], ["neg_right"], name="neg"),
        h.make_node("Concat", ["left", "neg_right"], ["Y"], name="concat", axis=1),
        h.make_node("Shape", ["Y"], ["shape"], name="shape_of_y"),
    ]
    inits = [
        _init("bias", _rand(rng, 6)),
        _init("hi", np.array(0.5, np.float32)),
        _init("split_sizes", np.array([2, 4], np.int64)),
    ]
    graph = h.make_graph(nodes, "optional_inputs", [x, bias], [y, shape], inits)
    return Case("optional_inputs", _model(graph, 13), lambda r: {"X": _rand(r, 2, 6)})


def big_weights(external=False) -> Case:
    """A 64x64 projection (16 KiB, above the reader's 1 KiB inline limit, so
    it becomes a dense_resource blob), optionally saved as external data."""
    rng = np.random.default_rng(6)
    x = h.make_tensor_value_info("X", T.FLOAT, ["batch", 64])
    y = h.make_tensor_value_info("Y", T.FLOAT, ["batch", 64])
    nodes = [
        h.make_node("MatMul", ["X", "W"], ["xw"], name="proj"),
        h.make_node("Add", ["xw", "b"], ["Y"], name="bias"),
    ]
    inits = [_init("W", _rand(rng, 64, 64)), _init("b", _rand(rng, 64))]
    graph = h.make_graph(nodes, "big_weights", [x], [y], inits)
    name = "external_data" if external else "big_weights"
    return Case(name, _model(graph, 17), lambda r: {"X": _rand(r, 3, 64)},
                external=external)


def custom_domain() -> Case:
    """A node of a domain onnxruntime does not know, between standard ones."""
    x = h.make_tensor_value_info("X", T.FLOAT, [2, 3])
    y = h.make_tensor_value_info("Y", T.FLOAT, [2, 3])
    nodes = [
        h.make_node("Relu", ["X"], ["r"], name="relu"),
        h.make_node("FancyScale", ["r", "factor"], ["s"], name="fancy", domain="com.example",
                    mode="fast", gains=[1.0, 2.5], axes=[0, 1], tag=7,
                    table=h.make_tensor("table", T.INT32, [2], [4, 5])),
        h.make_node("Identity", ["s"], ["Y"], name="out"),
    ]
    graph = h.make_graph(nodes, "custom", [x], [y], [_init("factor", np.array(3.0, np.float32))])
    model = _model(graph, 17, extra_opsets=[h.make_opsetid("com.example", 2)])
    return Case("custom_domain", model, lambda r: {"X": _rand(r, 2, 3)}, runnable=False)


def local_function() -> Case:
    """A model-local function (FunctionProto, IR 8), called twice."""
    fn = h.make_function(
        "com.local", "AddRelu", ["a", "b"], ["c"],
        [h.make_node("Add", ["a", "b"], ["s"]), h.make_node("Relu", ["s"], ["c"])],
        opset_imports=[h.make_opsetid("", 17)])
    x = h.make_tensor_value_info("X", T.FLOAT, [2, 3])
    y = h.make_tensor_value_info("Y", T.FLOAT, [2, 3])
    nodes = [
        h.make_node("AddRelu", ["X", "bias"], ["r1"], name="call1", domain="com.local"),
        h.make_node("AddRelu", ["r1", "X"], ["Y"], name="call2", domain="com.local"),
    ]
    graph = h.make_graph(nodes, "local_function", [x], [y],
                         [_init("bias", np.full((2, 3), -0.25, np.float32))])
    model = h.make_model(graph, functions=[fn], ir_version=8, producer_name="ttt-tests",
                         opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.local", 1)])
    onnx.checker.check_model(model)
    return Case("local_function", model, lambda r: {"X": _rand(r, 2, 3)})


def all_cases():
    return [mlp(17), mlp(13), attention(17), attention(13), layernorm(), loop(17), loop(13),
            if_model(), scan(), optional_inputs(), big_weights(), big_weights(external=True),
            local_function(), custom_domain()]


def save(case: Case, directory: Path) -> Path:
    path = Path(directory) / f"{case.name}.onnx"
    if case.external:
        model = onnx.ModelProto()
        model.CopyFrom(case.model)
        onnx.save(model, str(path), save_as_external_data=True,
                  all_tensors_to_one_file=True, location=f"{case.name}.weights.bin",
                  size_threshold=0)
    else:
        onnx.save(case.model, str(path))
    return path


def _attribute(attr):
    kind = onnx.AttributeProto.AttributeType.Name(attr.type)
    if attr.type == onnx.AttributeProto.GRAPH:
        value = structure_of_graph(attr.g)
    elif attr.type == onnx.AttributeProto.GRAPHS:
        value = [structure_of_graph(g) for g in attr.graphs]
    elif attr.type == onnx.AttributeProto.TENSOR:
        value = _tensor(attr.t)
    elif attr.type == onnx.AttributeProto.TENSORS:
        value = [_tensor(t) for t in attr.tensors]
    else:
        value = h.get_attribute_value(attr)
        if isinstance(value, list):
            value = tuple(value)
    return kind, value


def _tensor(tensor, base_dir=None):
    array = nh.to_array(tensor, base_dir or "")
    return str(array.dtype), array.shape, array.tobytes()


def structure_of_graph(graph, base_dir=None):
    """What the reader and writer must keep of a graph, as comparable data:
    nodes (name, op, domain, inputs, outputs, attributes, subgraphs),
    initializers (name and value), and input/output names."""
    return {
        "name": graph.name,
        "inputs": [i.name for i in graph.input],
        "outputs": [o.name for o in graph.output],
        "initializers": {t.name: _tensor(t, base_dir) for t in graph.initializer},
        "nodes": [
            (n.name, n.op_type, n.domain, tuple(n.input), tuple(n.output),
             {a.name: _attribute(a) for a in n.attribute})
            for n in graph.node
        ],
    }


def structure(model, base_dir=None):
    """structure_of_graph of the main graph plus the model's metadata, opset
    imports and the declared types of the graph inputs and outputs."""
    return {
        "ir_version": model.ir_version,
        "opset_import": [(o.domain, o.version) for o in model.opset_import],
        "producer": (model.producer_name, model.producer_version),
        "domain": model.domain,
        "model_version": model.model_version,
        "doc_string": model.doc_string,
        "metadata": {p.key: p.value for p in model.metadata_props},
        "functions": [f.SerializeToString() for f in model.functions],
        "graph_doc": model.graph.doc_string,
        "input_types": [i.type.SerializeToString() for i in model.graph.input],
        "output_types": [o.type.SerializeToString() for o in model.graph.output],
        "graph": structure_of_graph(model.graph, base_dir),
    }


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for c in all_cases():
        print(save(c, out))
