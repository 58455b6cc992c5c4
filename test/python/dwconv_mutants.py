"""ViT^3's conv branch as nine shifted products, scripted (its windows and its mean's
h * w read from the keys' shape at run time), with one thing changed so that it is no
longer the ttt.dwconv_layer it looks like. The raise must find each and leave it, with
the reason, node for node.

- `mean_over_h_h`: the gradient divides by h * h instead of h * w (a different function
  on every non-square image).
- `queries_sized_apart`: the queries declare their own image size (`Hq`, `Wq`): the
  output's windows, cut to the keys' size, would crop the queries when the sizes differ.
"""

from __future__ import annotations

from pathlib import Path

import onnx

FIXTURE = (Path(__file__).resolve().parents[1] / "fixtures" / "onnx" /
           "vit3_dwconv_shift.scripted.onnx")

KINDS = ("mean_over_h_h", "queries_sized_apart")

REASONS = {
    "mean_over_h_h": ("its kernel's step divides by extents other than the image's "
                      "height and width"),
    "queries_sized_apart": "a term of its output is not a kernel entry times the padded "
                           "queries at that tap",
}


def _node_making(graph, name):
    (node,) = [n for n in graph.node if name in n.output]
    return node


def mutant(kind: str) -> onnx.ModelProto:
    model = onnx.load(str(FIXTURE))
    graph = model.graph
    if kind == "mean_over_h_h":
        # Cast(Mul(Shape(k)[2], Shape(k)[3])) is the mean's divisor.
        div = next(n for n in graph.node if n.op_type == "Div" and
                   _node_making(graph, n.input[1]).op_type == "Cast")
        product = _node_making(graph, _node_making(graph, div.input[1]).input[0])
        assert product.op_type == "Mul"
        product.input[1] = product.input[0]
    elif kind == "queries_sized_apart":
        (q,) = [i for i in graph.input if i.name == "q"]
        dims = q.type.tensor_type.shape.dim
        dims[2].dim_param, dims[3].dim_param = "Hq", "Wq"
    else:
        raise ValueError(kind)
    onnx.checker.check_model(model)
    return model


def write(kind: str, directory: Path) -> Path:
    path = Path(directory) / f"vit3_dwconv_shift_{kind}.onnx"
    onnx.save(mutant(kind), str(path))
    return path
