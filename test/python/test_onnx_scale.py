"""A 20k-node model through the default pipeline: every layer rewritten, output right.

The model stacks 64 renamed copies of test/fixtures/onnx/lact_v3.traced.onnx side by
side (bench/onnx_scale.py builds it; its outputs are summed). `ttt-opt` must rewrite
all 64 TTT layers, write a model that passes the checker, and match onnxruntime on the
original within fp32 relative error 1e-5. No time is asserted (the benchmark measures
that); before the reader and writer were linear this took about a minute.

Needs onnx and onnxruntime, not torch.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "bench"))
from compiler import tool  # noqa: E402
from onnx_scale import FIXTURE, stacked_model  # noqa: E402
from test_onnx_optimize import _inputs, _meta, _relative_error, _run  # noqa: E402

COPIES = 64


def test_twenty_thousand_nodes(tmp_path):
    model = stacked_model(FIXTURE, COPIES)
    assert len(model.graph.node) >= 19_000
    src, out = tmp_path / "stack.onnx", tmp_path / "fast.onnx"
    onnx.save(model, str(src))
    proc = subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("raised to ttt.kvb_layer (linear attention") == COPIES
    onnx.checker.check_model(str(out), full_check=True)
    written = onnx.load(str(out))
    assert "SequenceInsert" not in {n.op_type for n in written.graph.node}
    meta = _meta(FIXTURE.name[: -len(".onnx")])
    feeds = _inputs(meta, dict(meta["dims"]), np.random.default_rng(20_000))
    (expected,) = _run(src, feeds)
    (actual,) = _run(out, feeds)
    assert actual.shape == expected.shape
    assert _relative_error(actual, expected) <= 1e-5
