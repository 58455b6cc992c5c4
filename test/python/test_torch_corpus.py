"""``ttt.optimize(module, inputs)`` on the public research modules as they are.

Every upstream TTT layer module of the recognition corpus -- LaCT's LLM layer,
NVS layer and minimal causal and bidirectional layers, ttt-lm-pytorch's
TTT-Linear and TTT-MLP, ViT³'s TTT layer and Block -- built in the small
configurations of python/scripts/export_corpus.py (which imports the upstream
code at run time and contains none of it) goes through ``ttt.optimize``. The
test asserts that

- it finds as many TTT layers, and rewrites as many, as ``ttt-opt`` does on
  the module's own exports (``torch.onnx.export`` with the default exporter
  and with ``dynamo=False``), and at least one;
- its remarks are records: one ``export`` remark naming the rung used, one
  ``layer`` remark per layer with its form and, where left, the reason;
- ``ttt.load(result)(x)`` matches the module: within 1e-5 (relative to the
  output's largest magnitude) where a layer was rewritten; where none was,
  equal to onnxruntime on the kept export (the same graph run by the same
  library), which is itself within the exporter's 1e-4 of PyTorch.

Needs torch and the upstream checkouts. ``make check-torch`` installs torch
into build/torch-venv, fetches the checkouts (python/scripts/fetch_upstream.sh)
and sets TTT_REQUIRE_UPSTREAM=1, under which missing checkouts are an error.
Without torch (``make test``) the tests skip, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from package_env import BUILD_DIR, REPO, extension_built, skip_reason

HAVE_TORCH = importlib.util.find_spec("torch") is not None
UPSTREAM_VARS = ("TTT_LACT_DIR", "TTT_TTT_LM_DIR", "TTT_VITTT_DIR")
MISSING = [v for v in UPSTREAM_VARS if not os.path.isdir(os.environ.get(v, "") or "/nonexistent")]
REQUIRED = os.environ.get("TTT_REQUIRE_UPSTREAM") == "1"


def _why_skip() -> str | None:
    if not HAVE_TORCH:
        return "torch is not installed: make check-torch runs this"
    if MISSING and not REQUIRED:
        return f"{', '.join(MISSING)} not set: make check-torch fetches the upstream code"
    if not extension_built():
        return skip_reason() or "the extension ttt._ttt is not built"
    return None


SKIP = _why_skip()
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")

sys.path[:0] = [str(BUILD_DIR / "python"), str(REPO / "python"),
                str(REPO / "python" / "scripts")]

TTT_OPT = BUILD_DIR / "bin" / "ttt-opt"


@pytest.fixture(scope="module")
def corpus():
    if MISSING:
        pytest.fail(f"TTT_REQUIRE_UPSTREAM=1 but {', '.join(MISSING)} name no directory")
    import export_corpus

    export_corpus.install_standins()
    return export_corpus


MODULE_NAMES = [
    "LaCT lact_llm LaCTSWIGLULayer",
    "LaCT lact_nvs FastWeightGluMLPMultihead",
    "LaCT minimal CausalLaCTSwiGLUWithSlidingWindowAttn",
    "LaCT minimal BidirectionalLaCTSwiGLU",
    "ttt-lm-pytorch TTTLinear",
    "ttt-lm-pytorch TTTMLP",
    "ViTTT TTT",
    "ViTTT Block",
    "LaCT lact_nvs FastWeightGluMLPMultihead, Muon in fp32",
    "LaCT minimal CausalLaCTSwiGLUWithSlidingWindowAttn, Muon in fp32",
    "LaCT minimal BidirectionalLaCTSwiGLU, Muon in fp32",
]
# As shipped, these run Muon's Newton-Schulz step in bf16, whose ReduceL2 onnxruntime's
# CPU kernels do not implement: their exports do not load there, optimized or not.
BF16_MUON = {"LaCT lact_nvs FastWeightGluMLPMultihead",
             "LaCT minimal CausalLaCTSwiGLUWithSlidingWindowAttn",
             "LaCT minimal BidirectionalLaCTSwiGLU"}


def test_the_list_is_the_corpus(corpus):
    assert [name for name, _ in corpus.MODULES] == MODULE_NAMES


def own_exports(corpus, model, x, folder):
    """(exporter, layers found, rewritten) of ttt-opt on each export the
    module's user would write, skipping an exporter that fails on it."""
    import ttt

    outcomes = []
    for exporter in ("dynamo (default)", "dynamo=False"):
        path = os.path.join(folder, "model.onnx")
        try:
            corpus.export(model, x, path, exporter)
        except Exception:  # noqa: BLE001 -- the exporter refuses this module
            continue
        p = subprocess.run([str(TTT_OPT), path, "-o", os.path.join(folder, "out.onnx")],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        lines = [ttt.Remark(s) for s in p.stderr.splitlines()]
        layers = [r for r in lines if r.kind == "layer"]
        outcomes.append((exporter, len(layers), sum(bool(r.rewritten) for r in layers)))
    return outcomes


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_optimize_module(corpus, name):
    import onnxruntime as ort
    import torch

    import ttt

    builder = dict(corpus.MODULES)[name]
    torch.manual_seed(0)
    model, x = builder()
    model.eval()
    with torch.no_grad():
        expected = model(x).float().numpy()

    result, remarks = ttt.optimize(model, x, return_remarks=True)

    assert all(isinstance(r, ttt.Remark) for r in remarks)
    exports = [r for r in remarks if r.kind == "export"]
    assert exports and exports[0].form in ttt.EXPORT_LADDER, remarks
    assert not exports[0].reason.startswith("not used"), remarks
    layers = [r for r in remarks if r.kind == "layer"]
    assert layers, f"{name}: no TTT layer found: {remarks}"
    assert [r.layer for r in layers] == list(range(len(layers)))
    for r in layers:
        assert r.form, r
        assert r.rewritten is not None, r
        assert r.rewritten or r.reason, r
    rewritten = sum(bool(r.rewritten) for r in layers)

    with tempfile.TemporaryDirectory() as folder:
        own = own_exports(corpus, model, x, folder)
    assert own, f"{name}: neither exporter exports the module"
    assert len(layers) == max(found for _, found, _ in own), (remarks, own)
    assert rewritten == max(r for _, _, r in own), (remarks, own)

    if name in BF16_MUON:
        with pytest.raises(ttt.ParseError, match="onnxruntime cannot load it.*bf|"
                                                 "onnxruntime cannot load it.*ReduceL2"):
            ttt.load(result)
        return
    got = ttt.load(result)(x.numpy())
    got = got[0] if isinstance(got, (list, tuple)) else got
    scale = float(np.max(np.abs(expected)))
    if rewritten:
        assert np.max(np.abs(got - expected)) <= 1e-5 * scale
        return
    data = ttt._torch.export_module(model, x, exports[0].form)
    # Nothing rewritten: the result is the export node for node, so both runs below
    # are one graph in one library, and equal bit for bit.
    import onnx

    def nodes(m):
        return [(n.op_type, tuple(n.input), tuple(n.output)) for n in m.graph.node]
    assert nodes(result) == nodes(onnx.load_from_string(data))
    so = ort.SessionOptions()
    so.log_severity_level = 3
    session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    export_output = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_array_equal(got, export_output)
    assert np.max(np.abs(export_output - expected)) <= 1e-4 * scale
