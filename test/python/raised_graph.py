"""Running what `ttt-opt --ttt-raise-onnx=raise-all` writes: the ttt.kvb_layer line as a
function of its operands, and the whole raised graph (the layer op through ttt-run,
everything the original model has through onnxruntime)."""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from compiler import run_function


def raised_op(text):
    """The layer op line (ttt.kvb_layer or ttt.dwconv_layer) of a raise's output, as a
    function of its operands."""
    (line,) = [ln.strip() for ln in text.splitlines()
               if "ttt.kvb_layer" in ln or "ttt.dwconv_layer" in ln]
    tensor = r"tensor<[^>]*>"
    if "ttt.dwconv_layer" in line:
        head = re.search(rf"ttt\.dwconv_layer (%\S+), (%\S+), (%\S+), (%\S+) : "
                         rf"({tensor}), ({tensor}), ({tensor}), ({tensor})", line)
        names, types = list(head.group(1, 2, 3, 4)), list(head.group(5, 6, 7, 8))
    else:
        head = re.search(rf"ttt\.kvb_layer (%\S+), (%\S+), (%\S+) : ({tensor}), "
                         rf"({tensor}), ({tensor})", line)
        names, types = list(head.group(1, 2, 3)), list(head.group(4, 5, 6))
    for group in ("weights", "lr", "token_eta", "momentum", "layernorm"):
        m = re.search(rf"{group}\(([^:]+) : ([^)]+)\)", line)
        if m:
            names += [n.strip() for n in m.group(1).split(",")]
            types += re.findall(tensor, m.group(2))
    result = re.search(rf"-> ({tensor})$", line).group(1)
    body = line.split(" = ", 1)[1]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    for i, n in sorted(enumerate(names), key=lambda p: -len(p[1])):
        body = re.sub(re.escape(n) + r"(?![\w.])", f"%a{i}", body)
    func = (f"func.func @layer({args}) -> {result} {{\n  %o = {body}\n"
            f"  return %o : {result}\n}}\n")
    return func, names


def run_raised_graph(text, path, x, tmp_path):
    """Runs a raise's output graph: the layer op through ttt-run's recurrent
    lowering; the values it reads that the original model has (by their ONNX names)
    through onnxruntime on the original model; the few nodes the raise adds around the
    layer op or its normalization rewrote (Constant, Sub, Add, Mul, Reshape, Transpose,
    Unsqueeze, Squeeze, Expand, Identity) in NumPy; and what the model computes from the
    layer's output through onnxruntime on the original model with that output replaced
    by the one computed here. No value downstream of the layer op is taken from the
    original model."""
    lines = [ln.strip() for ln in text.splitlines()]
    (header,) = [ln for ln in lines if ln.startswith("onnx.graph @")]
    args = dict(re.findall(r'(%[\w.]+): tensor<[^>]*> \{[^}]*onnx.name = "([^"]+)"[^}]*\}',
                           header))
    defs = {}
    for ln in lines:
        m = re.match(r"(%[\w.]+) = (.*)$", ln)
        if m:
            defs[m.group(1)] = m.group(2)
    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    named = {}
    for ssa, body in defs.items():
        m = re.search(r'outputs = \["([^"]+)"', body)
        if m and not body.startswith("ttt."):
            named[ssa] = m.group(1)
    (yielded,) = re.findall(r"onnx\.yield (%[\w.]+)", text)
    values = {}
    # What depends on the layer op: never read from the original model.
    (layer_ssa,) = [ssa for ssa, body in defs.items()
                    if body.startswith(("ttt.kvb_layer", "ttt.dwconv_layer"))]
    tainted = {layer_ssa}
    for ssa, body in defs.items():
        if any(used in tainted for used in re.findall(r"%[\w.]+", body)):
            tainted.add(ssa)
    graph_output = model.graph.output[0].name
    # A node the normalization took out of a constant If keeps its name, which the
    # original's own graph does not have: such a node is computed here.
    top_level = {o for n in model.graph.node for o in n.output}

    def from_model(names):
        extra = [n for n in names if n not in {o.name for o in model.graph.output}]
        probe = onnx.load(str(path))
        for n in extra:
            probe.graph.output.append(onnx.ValueInfoProto(name=n))
        probe_path = tmp_path / "probe.onnx"
        onnx.save(probe, str(probe_path))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(str(probe_path), opts,
                                    providers=["CPUExecutionProvider"])
        feeds = {i.name: x[i.name] for i in sess.get_inputs()}
        outs = sess.run(names, feeds)
        return dict(zip(names, outs))

    def value(ssa):
        if ssa in values:
            return values[ssa]
        if ssa in args:
            out = x[args[ssa]]
        elif ssa in named and named[ssa] != graph_output and named[ssa] in top_level:
            assert ssa not in tainted, f"{ssa} depends on the layer op"
            out = from_model([named[ssa]])[named[ssa]]
        else:
            body = defs[ssa]
            init = re.match(r'onnx\.initializer "([^"]+)"', body)
            if init:
                out = inits[init.group(1)]
            elif body.startswith(("ttt.kvb_layer", "ttt.dwconv_layer")):
                func, names = raised_op(f"{ssa} = {body}")
                (out,) = run_function(func, [value(n) for n in names], tmp_path,
                                      entry="layer")
            else:
                op = re.match(r'onnx\.node "(\w+)"\(([^)]*)\)', body)
                kind, ins = op.group(1), [i.strip() for i in op.group(2).split(",") if i]
                if kind == "Constant":
                    nums = re.search(r"dense<(.*?)> : tensor<([^>]*)>", body)
                    dtype = np.int64 if nums.group(2).endswith("i64") else np.float32
                    shape = [int(d) for d in nums.group(2).split("x")[:-1]]
                    # A splat (`dense<0> : tensor<4xi64>`) fills the whole shape.
                    out = np.broadcast_to(np.array(json.loads(nums.group(1)), dtype=dtype),
                                          shape).copy()
                else:
                    a = [value(i) for i in ins]
                    perm = re.search(r"perm = array<i64: ([^>]*)>", body)
                    out = {"Sub": lambda: a[0] - a[1], "Add": lambda: a[0] + a[1],
                           "Mul": lambda: a[0] * a[1], "Identity": lambda: a[0],
                           "Expand": lambda: a[0] * np.ones(a[1], a[0].dtype),
                           "Squeeze": lambda: np.squeeze(a[0], tuple(a[1])),
                           "Reshape": lambda: a[0].reshape(
                               [a[0].shape[i] if d == 0 else d for i, d in enumerate(a[1])]),
                           "Unsqueeze": lambda: np.expand_dims(a[0], tuple(a[1])),
                           "Transpose": lambda: a[0].transpose(
                               [int(i) for i in perm.group(1).split(",")]),
                           }[kind]()
        values[ssa] = out
        return out

    # The layer's replacement: if it keeps the name of a tensor of the original
    # model, the rest of the model runs in onnxruntime from it.
    (replacement,) = [(ssa, body) for ssa, body in defs.items()
                      if 'doc_string = "ttt: ' in body]
    name = re.search(r'outputs = \["([^"]+)"', replacement[1])
    if name and name.group(1) != graph_output:
        operand = re.match(r'onnx\.node "Identity"\((%[\w.]+)\)', replacement[1]).group(1)
        layer_out = value(operand)
        patched = onnx.load(str(path))
        for node in patched.graph.node:
            for i, out in enumerate(node.output):
                if out == name.group(1):
                    node.output[i] = out + ".replaced"
        patched.graph.input.append(onnx.helper.make_tensor_value_info(
            name.group(1), onnx.TensorProto.FLOAT, None))
        patched_path = tmp_path / "patched.onnx"
        onnx.save(patched, str(patched_path))
        sess = ort.InferenceSession(str(patched_path), providers=["CPUExecutionProvider"])
        feeds = {i.name: x[i.name] for i in sess.get_inputs() if i.name in x}
        feeds[name.group(1)] = np.ascontiguousarray(layer_out, dtype=np.float32)
        return sess.run([graph_output], feeds)[0]
    return value(yielded)
