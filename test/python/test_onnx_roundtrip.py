"""ttt-opt reads ONNX models into the onnx dialect and writes them back.

With no passes, `ttt-opt m.onnx -o out.onnx` must keep every node,
attribute, initializer, opset import, input/output name and subgraph, pass
the ONNX checker, and give bit-identical onnxruntime outputs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_models as om  # noqa: E402
from compiler import tool  # noqa: E402

ort = pytest.importorskip("onnxruntime")

CASES = om.all_cases()


def run_opt(*args, timeout=120):
    return subprocess.run([str(tool("ttt-opt")), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def run_model(path, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3  # no warnings about initializers as inputs
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request):
    return request.param


def test_roundtrip_keeps_model(case, tmp_path):
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.reader_messages(proc.stderr) == []
    onnx.checker.check_model(str(out))
    original = onnx.load(str(src))
    exported = onnx.load(str(out))
    assert om.structure(exported, tmp_path) == om.structure(original, tmp_path)


# onnxruntime has no kernel for the custom-domain op, so that model is checked
# structurally only (test_roundtrip_keeps_model).
@pytest.mark.parametrize("case", [c for c in CASES if c.runnable],
                         ids=[c.name for c in CASES if c.runnable])
def test_roundtrip_same_outputs(case, tmp_path):
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    rng = np.random.default_rng(7)
    for _ in range(3):
        feeds = case.make_inputs(rng)
        expected = run_model(src, feeds)
        actual = run_model(out, feeds)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert a.dtype == e.dtype and a.shape == e.shape
            assert np.array_equal(a, e)


def test_external_data_stays_external(tmp_path):
    case = om.big_weights(external=True)
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(str(out), load_external_data=False)
    for tensor in model.graph.initializer:
        assert tensor.data_location == onnx.TensorProto.EXTERNAL, tensor.name
        location = {e.key: e.value for e in tensor.external_data}["location"]
        assert location == "out.onnx.data"
    assert (tmp_path / "out.onnx.data").exists()


def _external_model(tmp_path, rows=1024, cols=1024):
    """y = x W + b with W float32 [rows, cols] (4 MiB) in external data, at
    offsets the reader maps in place, and b inline."""
    rng = np.random.default_rng(11)
    weight = rng.standard_normal((rows, cols)).astype(np.float32)
    bias = rng.standard_normal(cols).astype(np.float32)
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "W"], ["xw"]), h.make_node("Add", ["xw", "b"], ["y"])],
        "external", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, rows])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, cols])],
        [nh.from_array(weight, "W"), nh.from_array(bias, "b")])
    path = tmp_path / "model.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), str(path),
              save_as_external_data=True, location="model.weights", size_threshold=8192)
    return path, weight, bias


@pytest.mark.parametrize("flags", [["--onnx-roundtrip"], []], ids=["roundtrip", "pipeline"])
def test_mapped_external_data_is_written_whole(tmp_path, flags):
    """The writer copies a mapped external tensor from its mapping into the
    new .data file (no copy in the protobuf): the bytes arrive whole, and
    the same model written inline (standard output) holds them too."""
    src, weight, bias = _external_model(tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out, *flags)
    assert proc.returncode == 0, proc.stderr
    written = {t.name: t for t in onnx.load(str(out), load_external_data=False).graph.initializer}
    assert written["W"].data_location == onnx.TensorProto.EXTERNAL
    assert {e.key: e.value for e in written["W"].external_data}["location"] == "out.onnx.data"
    model = onnx.load(str(out))
    values = {t.name: nh.to_array(t) for t in model.graph.initializer}
    assert np.array_equal(values["W"], weight) and np.array_equal(values["b"], bias)
    x = np.random.default_rng(3).standard_normal((2, 1024)).astype(np.float32)
    assert np.array_equal(run_model(out, {"x": x})[0], run_model(src, {"x": x})[0])

    proc = subprocess.run([str(tool("ttt-opt")), str(src), "--emit=onnx", "-o", "-", *flags],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    inline = onnx.load_from_string(proc.stdout)
    values = {t.name: nh.to_array(t) for t in inline.graph.initializer}
    assert np.array_equal(values["W"], weight) and np.array_equal(values["b"], bias)


def test_mlir_text_roundtrip_is_lossless(case, tmp_path):
    """model.onnx -> model.mlir -> model.onnx gives the bytes of the direct
    export: the printed IR (large tensors as resource blobs) loses nothing."""
    src = om.save(case, tmp_path)
    direct = tmp_path / "direct.onnx"
    text = tmp_path / "model.mlir"
    via_text = tmp_path / "via_text.onnx"
    for args in ([src, "-o", direct], [src, "-o", text], [text, "-o", via_text]):
        proc = run_opt(*args)
        assert proc.returncode == 0, proc.stderr
    if case.external:
        # Both write their own external data file; compare the models loaded.
        assert om.structure(onnx.load(str(direct)), tmp_path) == \
            om.structure(onnx.load(str(via_text)), tmp_path)
    else:
        assert direct.read_bytes() == via_text.read_bytes()


def test_large_tensors_print_as_resources(tmp_path):
    src = om.save(om.big_weights(), tmp_path)
    proc = run_opt(src)
    assert proc.returncode == 0, proc.stderr
    assert 'onnx.initializer "W" dense_resource<W> : tensor<64x64xf32>' in proc.stdout
    assert 'onnx.initializer "b" dense<' in proc.stdout
    assert "dialect_resources" in proc.stdout


def test_format_flags(tmp_path):
    """--input-format / --emit override the file extensions; --emit=onnx
    writes the model to stdout."""
    src = om.save(om.mlp(), tmp_path)
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(src.read_bytes())
    proc = run_opt("--input-format=onnx", renamed)
    assert proc.returncode == 0, proc.stderr
    assert "onnx.graph @mlp" in proc.stdout

    proc = subprocess.run([str(tool("ttt-opt")), "--input-format=onnx", str(renamed),
                           "--emit=onnx"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model = onnx.ModelProto()
    model.ParseFromString(proc.stdout)
    assert om.structure(model) == om.structure(onnx.load(str(src)))

    text_out = tmp_path / "model.onnx.txt"
    proc = run_opt(src, "--emit=mlir", "-o", text_out)
    assert proc.returncode == 0, proc.stderr
    assert "onnx.graph @mlp" in text_out.read_text()


def test_passes_run_on_imported_models(tmp_path):
    """The pass pipeline of the command line runs between reading and
    writing; -canonicalize keeps every node of this model."""
    src = om.save(om.attention(), tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "--canonicalize", "--cse", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.structure(onnx.load(str(out))) == om.structure(onnx.load(str(src)))


def test_ir_made_by_hand_exports(tmp_path):
    """IR that was never imported (no names, no model attributes) gets fresh
    value names, default IR version and opset, and a checked model."""
    text = tmp_path / "hand.mlir"
    text.write_text("""
onnx.graph @hand(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"},
                                                        tensor<2xf32> {onnx.name = "x_copy"}) {
  %a = onnx.node "Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = onnx.node "Neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  onnx.yield %b, %x : tensor<2xf32>, tensor<2xf32>
}
""")
    out = tmp_path / "hand.onnx"
    proc = run_opt(text, "-o", out)
    assert proc.returncode == 0, proc.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    assert model.ir_version == 8
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    assert [n.op_type for n in model.graph.node] == ["Relu", "Neg", "Identity"]
    x = np.array([-1.0, 2.0], np.float32)
    y, x_copy = run_model(out, {"x": x})
    assert np.array_equal(y, -np.maximum(x, 0)) and np.array_equal(x_copy, x)


# The IR version of the compiler's ONNX library (cmake/BuildONNX.cmake, 1.23.2).
LIBRARY_IR_VERSION = 14


def test_newer_ir_version_is_checked_by_library_rules(tmp_path):
    """A model of an IR version newer than the ONNX library knows is read with
    a one-line warning and keeps its IR version."""
    case = om.mlp()
    newer = LIBRARY_IR_VERSION + 1
    case.model.ir_version = newer
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.reader_messages(proc.stderr) == [
        f"warning: {src}: IR version {newer} is newer than this build's ONNX library knows "
        f"({LIBRARY_IR_VERSION}); the model is checked by the rules of IR {LIBRARY_IR_VERSION}"]
    written = onnx.load(str(out))
    assert written.ir_version == newer
    # onnxruntime refuses IR versions it does not know either; at the
    # library's version both models run, with identical outputs.
    for model in (written, case.model):
        model.ir_version = LIBRARY_IR_VERSION
    onnx.save(written, str(out))
    src = om.save(case, tmp_path)
    rng = np.random.default_rng(0)
    feeds = case.make_inputs(rng)
    for a, e in zip(run_model(out, feeds), run_model(src, feeds)):
        assert np.array_equal(a, e)


def test_ir3_initializers_as_inputs(tmp_path):
    """IR 3 models list every initializer as a graph input too: each becomes
    an input with a default value, and is written back the same way."""
    case = om.mlp(13)
    model = case.model
    model.ir_version = 3
    for tensor in model.graph.initializer:
        model.graph.input.append(h.make_tensor_value_info(
            tensor.name, tensor.data_type, list(tensor.dims)))
    src = om.save(case, tmp_path)
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.structure(onnx.load(str(out))) == om.structure(onnx.load(str(src)))
    printed = run_opt(src).stdout
    assert 'onnx.default = dense<' in printed
    assert "onnx.initializer" not in printed
    feeds = case.make_inputs(np.random.default_rng(1))
    for a, e in zip(run_model(out, feeds), run_model(src, feeds)):
        assert np.array_equal(a, e)


def test_large_constant_attribute(tmp_path):
    """A tensor attribute above the inline limit is a resource blob too."""
    value = np.random.default_rng(2).standard_normal((32, 32)).astype(np.float32)
    x = h.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [32, 32])
    y = h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [32, 32])
    nodes = [h.make_node("Constant", [], ["c"], name="const", value=nh.from_array(value, "cval")),
             h.make_node("Add", ["X", "c"], ["Y"], name="add")]
    model = h.make_model(h.make_graph(nodes, "const", [x], [y]),
                         opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    src = tmp_path / "const.onnx"
    onnx.save(model, str(src))
    printed = run_opt(src).stdout
    assert "attrs {value = dense_resource<cval> : tensor<32x32xf32>}" in printed
    out = tmp_path / "out.onnx"
    assert run_opt(src, "-o", out).returncode == 0
    feeds = {"X": value}
    assert np.array_equal(run_model(out, feeds)[0], run_model(src, feeds)[0])


def test_unknown_fields_warn(tmp_path):
    """Fields of a newer ONNX than the library's cannot be kept; the
    reader says so instead of dropping them silently."""
    case = om.mlp()
    src = tmp_path / "newer.onnx"
    # Field 99, varint 1: unknown to every ONNX version.
    src.write_bytes(case.model.SerializeToString() + bytes([0x98, 0x06, 0x01]))
    out = tmp_path / "out.onnx"
    proc = run_opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert om.reader_messages(proc.stderr) == [
        f"warning: {src}: the model has fields this build's ONNX library does not know "
        "(from a newer ONNX); they are dropped"]
    assert om.structure(onnx.load(str(out))) == om.structure(case.model)
