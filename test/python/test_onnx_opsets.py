"""Models of current opsets through the default pipeline, like their opset-17 twins.

* A hand-written linear fast-weight layer at opset 21 and at the highest opset both
  the compiler's ONNX library and onnxruntime know is found, rewritten, passes the
  checker and matches onnxruntime on the original (fp32 relative error <= 1e-5).
* The committed fixtures (opset 17), converted by onnx.version_converter to opset 18
  (ReduceMean's axes become an input) and 21, get the same remark as the fixture (the
  same layers rewritten, the others left with a reason) and a rewritten model that
  matches onnxruntime on the converted original.
* The reader accepts every opset the ONNX library knows and names the range above it.

Needs onnx and onnxruntime, not torch.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper as h, version_converter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402
from test_onnx_optimize import (FIXTURE_DIR, FIXTURES, LAYER_REMARK, REWRITTEN,  # noqa: E402
                                _inputs, _meta, _relative_error, _run)
from test_onnx_raise import _hand_written_layer, _numpy_layer  # noqa: E402

RTOL = 1e-5
# The ONNX library the compiler is built with (cmake/BuildONNX.cmake, onnx 1.23.2)
# knows opsets up to 28 in the default domain, and onnxruntime 1.32 runs them.
LIBRARY_MAX_OPSET = 28


def _max_opset() -> int:
    """The newest default-domain opset that onnx (Python) and onnxruntime both know,
    capped by the compiler's library."""
    newest = min(LIBRARY_MAX_OPSET, onnx.defs.onnx_opset_version())
    return next(v for v in range(newest, 17, -1) if _ort_runs(v))


def _ort_runs(opset: int) -> bool:
    from onnx import TensorProto
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "probe",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = _with_ir_version(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]))
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return True
    except Exception:  # noqa: BLE001 - any refusal means "not this opset"
        return False


def _with_ir_version(model):
    """The oldest IR version the model's opsets need (what exporters write)."""
    model.ir_version = h.find_min_ir_version_for(list(model.opset_import))
    return model


def _opt(src, out):
    return subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("opset", [21, "max"])
def test_hand_written_layer_at_current_opset(opset, tmp_path):
    opset = _max_opset() if opset == "max" else opset
    src, out = tmp_path / "layer.onnx", tmp_path / "fast.onnx"
    w0 = _hand_written_layer(src, opset=opset)
    onnx.save(_with_ir_version(onnx.load(str(src))), str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, proc.stderr
    assert "raised to ttt.kvb_layer (linear attention" in proc.stderr, proc.stderr
    onnx.checker.check_model(str(out), full_check=True)
    written = onnx.load(str(out))
    assert [(o.domain, o.version) for o in written.opset_import] == [("", opset)]
    assert "Split" not in [n.op_type for n in written.graph.node]
    rng = np.random.default_rng(opset)
    feeds = {x: rng.normal(0, 1, (1, 2, 24, 4)).astype(np.float32) for x in "qkv"}
    (original,) = _run(src, feeds)
    (fast,) = _run(out, feeds)
    assert _relative_error(original, _numpy_layer(feeds["q"], feeds["k"], feeds["v"],
                                                  w0, 8, 0.5)) <= RTOL
    assert _relative_error(fast, original) <= RTOL


def _remark_kind(stderr):
    layers = LAYER_REMARK.findall(stderr)
    assert len(layers) == 1, stderr
    return "rewritten" if "raised to ttt.kvb_layer (linear attention" in layers[0] \
        else "left"


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("name", FIXTURES)
def test_converted_fixture(name, opset, tmp_path):
    original = onnx.load(str(FIXTURE_DIR / f"{name}.onnx"))
    converted = _with_ir_version(version_converter.convert_version(original, opset))
    onnx.checker.check_model(converted)
    src, out = tmp_path / f"{name}.{opset}.onnx", tmp_path / "fast.onnx"
    onnx.save(converted, str(src))
    proc = _opt(src, out)
    assert proc.returncode == 0, f"{name} at opset {opset}: {proc.stderr}"
    family = _meta(name)["family"]
    assert _remark_kind(proc.stderr) == ("rewritten" if family in REWRITTEN else "left"), \
        proc.stderr
    onnx.checker.check_model(str(out), full_check=True)
    meta = _meta(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + opset)
    feeds = _inputs(meta, dict(meta["dims"]), rng)
    expected = _run(src, feeds)
    actual = _run(out, feeds)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        err = _relative_error(a, e)
        assert err <= RTOL, f"{name} at opset {opset}: relative error {err:.3g}"


def test_converted_fixture_reads_reduce_axes_input():
    """Opset 18 moved ReduceMean's axes to an input; the momentum fixtures have one."""
    converted = version_converter.convert_version(
        onnx.load(str(FIXTURE_DIR / "lact_v3.traced.onnx")), 18)
    means = [n for n in converted.graph.node if n.op_type == "ReduceMean"]
    assert means
    assert all(len(n.input) == 2 and all(a.name != "axes" for a in n.attribute)
               for n in means)


def test_opset_past_the_library_is_refused_with_the_range(tmp_path):
    src = tmp_path / "layer.onnx"
    _hand_written_layer(src, opset=21)
    model = onnx.load(str(src))
    model.opset_import[0].version = LIBRARY_MAX_OPSET + 1
    onnx.save(model, str(src))
    proc = _opt(src, tmp_path / "out.onnx")
    assert proc.returncode != 0
    assert re.search(rf"opset {LIBRARY_MAX_OPSET + 1} of domain 'ai.onnx' is out of "
                     rf"range: this build's ONNX library knows opsets 1 to "
                     rf"{LIBRARY_MAX_OPSET}$", proc.stderr.strip()), proc.stderr
