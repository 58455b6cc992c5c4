"""Bad input to the ONNX reader and writer: one-line errors, never a crash.

Each bad model must make `ttt-opt bad.onnx -o out.onnx` print exactly one
line, `error: <file>: ...` (naming the node where one is at fault), exit
non-zero, and leave no output file. Ops ttt does not know are not bad input:
they are kept.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_models as om  # noqa: E402
from compiler import tool  # noqa: E402


def run_opt(*args):
    return subprocess.run([str(tool("ttt-opt")), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def expect_error(path: Path, *fragments: str, extra_args=()):
    """Runs ttt-opt on `path`, expects the one-line error, returns it."""
    out = path.parent / "out.onnx"
    proc = run_opt(path, "-o", out, *extra_args)
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"error: {path}: "), line
    for fragment in fragments:
        assert fragment in line, line
    assert not out.exists()
    assert not list(path.parent.glob("out.onnx*")), "partial output left behind"
    return line


def write(tmp_path, name, data) -> Path:
    path = tmp_path / name
    if isinstance(data, onnx.ModelProto):
        data = data.SerializeToString()
    path.write_bytes(data)
    return path


def test_empty_file(tmp_path):
    expect_error(write(tmp_path, "empty.onnx", b""), "not a valid ONNX model", "empty")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_truncated_file(tmp_path, fraction):
    data = om.attention().model.SerializeToString()
    path = write(tmp_path, "truncated.onnx", data[: int(len(data) * fraction)])
    expect_error(path, "not a valid ONNX model")


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes(tmp_path, seed):
    data = np.random.default_rng(seed).integers(0, 256, 4096, dtype=np.uint8).tobytes()
    expect_error(write(tmp_path, "random.onnx", data))


def test_text_file(tmp_path):
    path = write(tmp_path, "model.onnx", b"module {\n}\n")
    expect_error(path, "not a valid ONNX model")


def test_missing_file(tmp_path):
    expect_error(tmp_path / "missing.onnx", "cannot read the file")


def test_opset_out_of_range(tmp_path):
    model = om.mlp().model
    model.opset_import[0].version = 999
    line = expect_error(write(tmp_path, "opset.onnx", model), "opset 999", "'ai.onnx'",
                        "out of range")
    assert "1 to 28" in line


def test_conflicting_opset_imports(tmp_path):
    model = om.mlp().model
    model.opset_import.add(domain="ai.onnx", version=13)
    expect_error(write(tmp_path, "twice.onnx", model), "'ai.onnx' twice",
                 "versions 17 and 13")


def test_repeated_opset_import_is_accepted(tmp_path):
    """onnx.compose.merge_models writes the same import twice."""
    model = om.mlp().model
    model.opset_import.add(domain="", version=17)
    proc = subprocess.run([str(tool("ttt-opt")), str(write(tmp_path, "dup.onnx", model)),
                           "-o", str(tmp_path / "out.onnx")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert len(onnx.load(str(tmp_path / "out.onnx")).opset_import) == 1


def test_custom_domain_opset_zero(tmp_path):
    model = om.custom_domain().model
    model.opset_import[1].version = 0
    expect_error(write(tmp_path, "opset0.onnx", model), "'com.example'", "out of range")


def test_node_domain_without_opset(tmp_path):
    model = om.custom_domain().model
    del model.opset_import[1]
    expect_error(write(tmp_path, "noimport.onnx", model),
                 "node 'fancy' (com.example::FancyScale, no opset imported)")


def test_unknown_op_in_custom_domain_round_trips(tmp_path):
    """An op ttt (and onnxruntime) does not know is kept, not an error."""
    case = om.custom_domain()
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.reader_messages(proc.stderr) == []
    assert om.structure(onnx.load(str(out))) == om.structure(case.model)


def test_unknown_op_in_default_domain(tmp_path):
    model = om.mlp().model
    model.graph.node[2].op_type = "Frobnicate"
    expect_error(write(tmp_path, "unknown.onnx", model),
                 "node 'relu' (ai.onnx::Frobnicate, opset 17)", "No Op registered")


def test_loop_body_with_too_few_inputs(tmp_path):
    model = om.loop().model
    del model.graph.node[0].attribute[0].g.input[0]  # the unused iteration number
    expect_error(write(tmp_path, "loop.onnx", model),
                 "node 'loop' (ai.onnx::Loop, opset 17)", "body takes 2 inputs",
                 "needs 3")


def test_loop_body_with_too_many_inputs(tmp_path):
    model = om.loop().model
    model.graph.node[0].attribute[0].g.input.append(
        h.make_tensor_value_info("extra", T.FLOAT, [4]))
    expect_error(write(tmp_path, "loop.onnx", model), "node 'loop'", "body takes 4 inputs")


def test_loop_body_with_wrong_outputs(tmp_path):
    model = om.loop().model
    del model.graph.node[0].attribute[0].g.output[2]
    expect_error(write(tmp_path, "loop.onnx", model), "node 'loop'",
                 "body yields 2 values", "needs 3")


def test_loop_body_using_undefined_value(tmp_path):
    model = om.loop().model
    del model.graph.node[0].attribute[0].g.input[2]  # s_in, which the body uses
    expect_error(write(tmp_path, "loop.onnx", model), "node 'loop'", "s_in")


def test_if_branch_with_wrong_outputs(tmp_path):
    model = om.if_model().model
    branch = model.graph.node[0].attribute[0].g
    branch.output.append(h.make_tensor_value_info("X", T.FLOAT, [3]))
    # The ONNX checker finds it first: the extra output is no value of the branch.
    expect_error(write(tmp_path, "if.onnx", model), "node 'branch' (ai.onnx::If, opset 17)",
                 "Graph output 'X' is not an output of any node")


def test_undefined_input(tmp_path):
    model = om.mlp().model
    model.graph.node[1].input[0] = "nowhere"
    expect_error(write(tmp_path, "undef.onnx", model), "node 'bias1' (ai.onnx::Add, opset 17)",
                 "input 'nowhere' is not defined")


def test_duplicate_output_name(tmp_path):
    model = om.mlp().model
    model.graph.node[1].output[0] = "h0"
    expect_error(write(tmp_path, "ssa.onnx", model), "node 'bias1'", "'h0'")


def test_initializer_with_wrong_size(tmp_path):
    model = om.mlp().model
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:-4]
    expect_error(write(tmp_path, "size.onnx", model), "initializer 'W1'", "raw_data")


def test_string_initializer(tmp_path):
    model = om.mlp().model
    model.graph.initializer.append(h.make_tensor("names", T.STRING, [1], [b"a"]))
    expect_error(write(tmp_path, "strings.onnx", model), "initializer 'names'",
                 "string tensors are not supported")


def test_missing_external_data(tmp_path):
    case = om.big_weights(external=True)
    src = om.save(case, tmp_path)
    (tmp_path / f"{case.name}.weights.bin").unlink()
    expect_error(src, "W")


def test_external_data_outside_model_dir(tmp_path):
    model = om.mlp().model
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = T.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "../../etc/passwd"
    line = expect_error(write(tmp_path, "escape.onnx", model), "W1")
    assert "etc/passwd" in line


def test_sparse_initializer(tmp_path):
    model = om.mlp().model
    values = nh.from_array(np.array([1.0], np.float32), "sp")
    indices = nh.from_array(np.array([0], np.int64), "sp_idx")
    model.graph.sparse_initializer.append(h.make_sparse_tensor(values, indices, [4]))
    expect_error(write(tmp_path, "sparse.onnx", model), "sparse")


def test_export_of_invalid_node(tmp_path):
    """The writer runs the ONNX checker; a node with too many inputs is
    reported by name and nothing is written."""
    text = tmp_path / "bad.mlir"
    text.write_text("""
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>]} {
  onnx.graph @g(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"}) {
    %y = onnx.node "Relu"(%x, %x) {node_name = "two_inputs", outputs = ["y"]}
        : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.yield %y : tensor<2xf32>
  }
}
""")
    out = tmp_path / "out.onnx"
    proc = run_opt(text, "-o", out)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {out}: node 'two_inputs' (ai.onnx::Relu, opset 17)")
    assert not out.exists()


def test_export_of_non_onnx_ops(tmp_path):
    text = tmp_path / "func.mlir"
    text.write_text("func.func @f() { return }\n")
    out = tmp_path / "out.onnx"
    proc = run_opt(text, "-o", out)
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == [
        f"error: {out}: op 'func.func' at module level has no ONNX form; the module "
        "must hold only the model's onnx.graph"]
    assert not out.exists()


def test_failed_export_keeps_existing_file(tmp_path):
    out = tmp_path / "out.onnx"
    out.write_bytes(b"previous")
    text = tmp_path / "func.mlir"
    text.write_text("func.func @f() { return }\n")
    assert run_opt(text, "-o", out).returncode != 0
    assert out.read_bytes() == b"previous"


def test_shape_inference_crash_is_contained(tmp_path):
    """ONNX 1.12's LayerNormalization inference read out of bounds for an
    axis far out of range (found by the fuzzer; 1.23 refuses the axis
    instead). The checker accepts the model; inference runs in a child
    process, so a crash would be a warning and the model is still read (its
    values stay untyped) and written back."""
    model = om.layernorm().model
    for attr in model.graph.node[0].attribute:
        if attr.name == "axis":
            attr.i = -268435457
    src = write(tmp_path, "layernorm.onnx", model)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    lines = om.reader_messages(proc.stderr)
    assert len(lines) <= 1, proc.stderr
    if lines:
        assert lines[0].startswith(
            f"warning: {src}: shape inference did not complete, some values stay "
            "untyped: "), lines[0]
    assert om.structure(onnx.load(str(out))) == om.structure(model)


def test_graph_input_without_element_type(tmp_path):
    """Found by the fuzzer: the checker accepts an UNDEFINED element type,
    which the writer could not declare again."""
    model = om.mlp().model
    model.graph.input[0].type.tensor_type.elem_type = T.UNDEFINED
    expect_error(write(tmp_path, "untyped.onnx", model), "graph input 'X' has no element type")


@pytest.mark.parametrize("dims", [[2**40, 2**40], [2**31, 2**31, 2**31]])
def test_shape_past_a_64_bit_element_count(tmp_path, dims):
    """Element counts are int64 in MLIR and the runtime; a shape whose product does
    not fit is refused where it is declared, before anything counts its elements."""
    x = h.make_tensor_value_info("x", T.FLOAT, dims)
    y = h.make_tensor_value_info("y", T.FLOAT, dims)
    model = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"], name="r")], "g",
                                      [x], [y]),
                         opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    expect_error(write(tmp_path, "huge.onnx", model), "graph input 'x'",
                 "more elements than a 64-bit count holds")
