"""The Python package `ttt` (python/ttt over the C++ API in lib/API):
optimize, explain, verify and run on MLIR examples and ONNX fixtures, and
ttt.Error subclasses for bad input.

The package is taken from the build tree ($TTT_BUILD_DIR/python, default
<repo>/build/python) unless it is installed; the tests are skipped only when
the extension could not be built (nanobind or the Python development headers
missing).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dwconv_mutants
from package_env import BUILD_DIR, EXAMPLES, FIXTURES, REPO, skip_reason
V2_SMALL = EXAMPLES / "lact_v2_small.mlir"
LLM_LAYER = EXAMPLES / "lact_llm_layer.mlir"


def _import_ttt():
    """The package with its extension, or a skip if nanobind is missing."""
    build_python = BUILD_DIR / "python"
    # The build tree's package (sources linked next to the extension), else
    # the sources, whose loader looks for the extension in $TTT_BUILD_DIR.
    root = build_python if (build_python / "ttt").is_dir() else REPO / "python"
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    import ttt
    from ttt import _ext

    if not _ext.available():
        reason = skip_reason()
        if reason:
            pytest.skip(reason, allow_module_level=True)
        raise ImportError(f"ttt._ttt is not built in {build_python} "
                          "(run `make python`)")
    return ttt


ttt = _import_ttt()


def test_version():
    assert ttt.__version__ == "0.1.0"
    from ttt import _ext

    assert _ext.load().version() == ttt.__version__


# --- explain ---------------------------------------------------------------

def test_explain_mlir_lists_the_layer():
    reports = ttt.explain(V2_SMALL)
    assert len(reports) == 1
    r = reports[0]
    assert isinstance(r, ttt.LayerReport)
    assert r.op == "ttt.kvb_layer"
    assert r.location.endswith("lact_v2_small.mlir:10:8")
    assert r.lowering.startswith("prefix sum")
    assert r.update == "additive"
    assert r.rewritable and r.output_linear and r.static_kernel
    assert r.proven and not r.blockers
    table = str(reports)
    assert table.splitlines()[0].startswith("| location |")
    assert "ttt.kvb_layer" in table


def test_explain_base_layer_has_blockers():
    (r,) = ttt.explain(LLM_LAYER)
    assert not r.rewritable
    assert r.lowering == "chunk-sequential loop"
    assert r.blockers
    assert "exact lowering" in r.explanation


def test_explain_mlir_text_and_bytes():
    text = V2_SMALL.read_text()
    assert len(ttt.explain(text)) == 1


# Families whose layer the ONNX pipeline rewrites (exactly linear attention, from
# docs/Theory.md §4.4); every other fixture keeps its layer, with the reason.
REWRITTEN_FAMILIES = {"lact_v2", "lact_v3", "lact_v4", "lact_v5", "lact_v6",
                      "linear_dot", "linear_mse", "block_v4", "block_v6"}


def _family(name):
    return name.split(".")[0]


def test_explain_onnx_lists_the_layer():
    reports = ttt.explain(FIXTURES / "lact_v2.traced.onnx")
    assert len(reports) == 1
    (r,) = reports
    assert r.op == "ttt.kvb_layer" and r.rewritable
    assert r.location.endswith("lact_v2.traced.onnx: node '/layer/Concat'")
    assert "unrolled chunk loop (4 chunks of 16 tokens)" in r.explanation
    assert "ttt.kvb_layer" in str(reports)


def test_explain_onnx_layer_left_alone_has_a_reason():
    (r,) = ttt.explain(FIXTURES / "lact_llm.scripted.onnx")
    assert r.op == "ttt.kvb_layer" and not r.rewritable
    assert any("W0 (gate), W2 (up) are trained" in b for b in r.blockers), r.blockers
    assert any("weight normalization" in b for b in r.blockers), r.blockers
    assert "ONNX Loop over chunks" in r.explanation
    assert r.explanation.count("exact lowering:") == 1, r.explanation


def test_explain_onnx_layer_without_a_layer_op_has_the_finders_reason(tmp_path):
    # ViT^3's conv branch as shifted products whose mean divides by h * h: found, not
    # read (no ttt.dwconv_layer form).
    (r,) = ttt.explain(dwconv_mutants.write("mean_over_h_h", tmp_path))
    assert r.op == "onnx" and not r.rewritable
    assert r.blockers and "left as it was" not in r.blockers[0]
    assert "no ttt.dwconv_layer form" in r.blockers[0]
    assert "full-batch step" in r.explanation


def test_explain_onnx_ttt_linear_loop_has_its_layer_ops_analysis():
    (r,) = ttt.explain(FIXTURES / "ttt_linear.scripted.onnx")
    assert r.op == "ttt.kvb_layer" and not r.rewritable
    assert any("LayerNorm inside the loss" in b for b in r.blockers), r.blockers


# --- optimize --------------------------------------------------------------

def test_optimize_mlir_rewrites_to_linattn():
    text, remarks = ttt.optimize(V2_SMALL, emit="mlir", return_remarks=True)
    assert isinstance(text, str)
    assert "linattn." in text
    assert "ttt.kvb_layer" not in text
    assert remarks == []


def test_optimize_base_layer_needs_simplify():
    text, remarks = ttt.optimize(LLM_LAYER, emit="mlir", return_remarks=True)
    assert "ttt.kvb_layer" in text and "linattn." not in text
    assert any("left unchanged" in r for r in remarks)
    text, remarks = ttt.optimize(LLM_LAYER, simplify=["freeze-inner", "drop-weight-norm"],
                                 emit="mlir", return_remarks=True)
    assert "linattn." in text
    assert any("Variant 1" in r for r in remarks)
    assert any("Variant 2" in r for r in remarks)


def test_optimize_unknown_simplification():
    with pytest.raises(ttt.InvalidInputError, match="unknown simplification 'nope'") as info:
        ttt.optimize(V2_SMALL, simplify=["nope"], emit="mlir")
    names = ttt.SIMPLIFICATIONS
    assert str(info.value).endswith(f"(expected {', '.join(names[:-1])} or {names[-1]})")


def test_simplifications_are_the_options_of_ttt_simplify():
    """The compiler's list (ttt.SIMPLIFICATIONS) holds every option of
    ttt-simplify (Passes.td), in the order of the variants they make."""
    help_text = subprocess.run([str(BUILD_DIR / "bin" / "ttt-opt"), "--help-list-all"],
                               capture_output=True, text=True, timeout=60).stdout
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.lstrip().startswith("--ttt-simplify "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    variants = {}
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        match = re.match(r"\s+--([\w-]+)\s+- V(\d):", line)
        assert match, f"a ttt-simplify option that is no variant: {line.strip()}"
        variants[int(match[2])] = match[1]
    assert ttt.SIMPLIFICATIONS == tuple(variants[v] for v in sorted(variants))


def test_import_needs_no_extension(tmp_path):
    """`import ttt` works without the extension; what needs it (here
    SIMPLIFICATIONS, and the CLI) raises or prints one line about it."""
    shutil.copytree(REPO / "python" / "ttt", tmp_path / "ttt",
                    ignore=shutil.ignore_patterns("_ttt*", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("TTT_BUILD_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tmp_path)
    code = ("import ttt\nprint(ttt.__version__)\ntry:\n    ttt.SIMPLIFICATIONS\n"
            "except ImportError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    version, error = proc.stdout.splitlines()
    assert version == ttt.__version__
    assert error.startswith("ttt: the compiled extension ttt._ttt is missing: install the "
                            "package (pip install .) or build it (make python)"), error
    proc = subprocess.run([sys.executable, "-m", "ttt", "explain", "x.mlir"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("ttt: error: ") and proc.stderr.count("\n") == 1
    assert "extension ttt._ttt" in proc.stderr


def test_optimize_unknown_emit():
    with pytest.raises(ttt.InvalidInputError):
        ttt.optimize(V2_SMALL, emit="pdf")


ONNX_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.onnx"))


@pytest.mark.parametrize("name", ONNX_FIXTURES)
def test_optimize_onnx_and_verify(name):
    """optimize -> verify within 1e-5 on every fixture; explain lists its layer."""
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    path = FIXTURES / name
    optimized, remarks = ttt.optimize(path, return_remarks=True)
    assert isinstance(optimized, onnx.ModelProto)
    original = onnx.load(str(path))
    layers = [r for r in remarks if "TTT layer: " in r]
    assert len(layers) == 1, remarks
    same_nodes = [n.op_type for n in optimized.graph.node] == \
        [n.op_type for n in original.graph.node]
    if _family(name) in REWRITTEN_FAMILIES:
        assert "raised to ttt.kvb_layer" in layers[0] and not same_nodes
    else:
        assert "left as it was" in layers[0] and same_nodes
    errors = ttt.verify(path, optimized, rtol=1e-5)
    assert set(errors) == {o.name for o in original.graph.output}
    assert all(e <= 1e-5 for e in errors.values())
    reports = ttt.explain(path)
    assert len(reports) == 1
    assert reports[0].rewritable == (_family(name) in REWRITTEN_FAMILIES)


def test_optimize_onnx_applies_simplifications_with_remarks():
    """V2 on the LaCT base ONNX model: rewritten, and the remarks say the model changed
    (the numbers are checked against the V2 oracle in test_onnx_simplify.py)."""
    onnx = pytest.importorskip("onnx")
    model, remarks = ttt.optimize(FIXTURES / "lact_llm.traced.onnx",
                                  simplify=["freeze-inner", "drop-weight-norm"],
                                  return_remarks=True)
    assert isinstance(model, onnx.ModelProto)
    assert sum("model changed" in r for r in remarks) == 2, remarks
    text = ttt.optimize(FIXTURES / "lact_llm.traced.onnx", simplify=["freeze-inner",
                        "drop-weight-norm"], emit="mlir")
    assert "linattn." in text and "ttt.kvb_layer" not in text


def test_optimize_onnx_with_external_data_returns_it_inline(tmp_path):
    """ttt.optimize returns a ModelProto: a tensor read from (mapped) external
    data comes back inline, whole."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper as h
    from onnx import numpy_helper as nh

    weight = np.random.default_rng(5).standard_normal((512, 512)).astype(np.float32)
    graph = h.make_graph([h.make_node("MatMul", ["x", "W"], ["y"])], "external",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 512])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 512])],
                         [nh.from_array(weight, "W")])
    path = tmp_path / "model.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), str(path),
              save_as_external_data=True, location="model.weights", size_threshold=0)
    model = ttt.optimize(path)
    (tensor,) = model.graph.initializer
    assert tensor.data_location != onnx.TensorProto.EXTERNAL
    assert np.array_equal(nh.to_array(tensor), weight)


def test_optimize_accepts_modelproto_and_bytes():
    onnx = pytest.importorskip("onnx")
    path = FIXTURES / "linear_dot.traced.onnx"
    model = onnx.load(str(path))
    assert isinstance(ttt.optimize(model), onnx.ModelProto)
    text = ttt.optimize(path.read_bytes(), emit="mlir")
    assert "onnx.graph" in text and "linattn." in text


# --- verify ----------------------------------------------------------------

def test_verify_with_given_inputs_and_mismatch():
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    path = FIXTURES / "linear_dot.traced.onnx"
    model = onnx.load(str(path))
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(1)
    inputs = {i.name: rng.standard_normal(shape).astype(np.float32)
              for i in model.graph.input}
    errors = ttt.verify(path, path, inputs)
    assert errors == {"o": 0.0}
    # A model that computes something else: negate the output.
    other = onnx.load(str(path))
    out = other.graph.output[0].name
    for node in other.graph.node:
        node.output[:] = [o + "_pre" if o == out else o for o in node.output]
    other.graph.node.append(onnx.helper.make_node("Neg", [out + "_pre"], [out]))
    with pytest.raises(ttt.VerificationError, match="max relative error") as info:
        ttt.verify(path, other)
    assert info.value.errors["o"] > 1e-5


def test_verify_wrong_input_names_and_shapes():
    pytest.importorskip("onnxruntime")
    path = FIXTURES / "linear_dot.traced.onnx"
    with pytest.raises(ttt.InvalidInputError, match="no input named 'x'"):
        ttt.verify(path, path, {"x": np.zeros(3, np.float32)})
    bad = {n: np.zeros((1, 2, 3), np.float32) for n in ("q", "k", "v")}
    with pytest.raises(ttt.InvalidInputError, match="shape mismatch"):
        ttt.verify(path, path, bad)


# --- run -------------------------------------------------------------------

SHAPES = "1x2x64x32,1x2x64x32,1x2x64x32,*,*,*,1x2x64x3,1x2x64"


@pytest.fixture(scope="module")
def ttt_run_reference(tmp_path_factory):
    ttt_run = BUILD_DIR / "bin" / "ttt-run"
    if not ttt_run.exists():
        pytest.fail(f"{ttt_run} is not built")
    tmp = tmp_path_factory.mktemp("run")
    subprocess.run([str(ttt_run), str(V2_SMALL), "--random-inputs=3", f"--shapes={SHAPES}",
                    f"--save-inputs={tmp / 'in.npz'}", f"--outputs={tmp / 'out.npz'}",
                    "--print-results=false"], check=True)
    with np.load(tmp / "in.npz") as f:
        inputs = [f[f"arg{i}"] for i in range(len(f.files))]
    with np.load(tmp / "out.npz") as f:
        outputs = [f[f"result{i}"] for i in range(len(f.files))]
    return inputs, outputs


def test_run_matches_ttt_run(ttt_run_reference):
    inputs, expected = ttt_run_reference
    got = ttt.run(V2_SMALL, inputs)
    assert len(got) == 1
    assert got[0].dtype == np.float32 and got[0].shape == (1, 2, 64, 32)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=1e-6)
    # By name, and the linear-attention form gives the same function.
    named = ttt.run(V2_SMALL.read_text(), {f"arg{i}": a for i, a in enumerate(inputs)})
    np.testing.assert_array_equal(named[0], got[0])
    rewritten = ttt.optimize(V2_SMALL, emit="mlir")
    np.testing.assert_allclose(ttt.run(rewritten, inputs)[0], expected[0],
                               rtol=1e-4, atol=1e-5)


def test_run_bad_inputs(ttt_run_reference):
    inputs, _ = ttt_run_reference
    with pytest.raises(ttt.InvalidInputError, match="wrong number of inputs"):
        ttt.run(V2_SMALL, inputs[:3])
    wrong_dtype = list(inputs)
    wrong_dtype[0] = inputs[0].astype(np.float64)
    with pytest.raises(ttt.InvalidInputError, match="dtype mismatch"):
        ttt.run(V2_SMALL, wrong_dtype)
    wrong_shape = list(inputs)
    wrong_shape[3] = np.zeros((2, 32, 31), np.float32)
    with pytest.raises(ttt.InvalidInputError, match="shape mismatch: dimension 2 must be 32"):
        ttt.run(V2_SMALL, wrong_shape)
    with pytest.raises(ttt.InvalidInputError, match="device 'cuda'"):
        ttt.run(V2_SMALL, inputs, device="cuda")


def test_run_onnx_is_unsupported():
    with pytest.raises(ttt.UnsupportedError):
        ttt.run(FIXTURES / "linear_dot.traced.onnx", [])


# --- bad models ------------------------------------------------------------

@pytest.mark.parametrize("fn", ["optimize", "explain", "run"])
def test_missing_file(fn, tmp_path):
    missing = tmp_path / "missing.onnx"
    args = (missing, []) if fn == "run" else (missing,)
    with pytest.raises(ttt.InputFileError, match="missing.onnx: cannot read") as info:
        getattr(ttt, fn)(*args)
    assert isinstance(info.value, ttt.Error)
    assert isinstance(info.value, FileNotFoundError)


@pytest.mark.parametrize("fn", ["load", "Session", "verify"])
def test_missing_file_onnxruntime(fn, tmp_path):
    """A missing or unreadable file is InputFileError everywhere, also where
    onnxruntime runs the model."""
    pytest.importorskip("onnxruntime")
    missing = tmp_path / "missing.onnx"
    args = (missing, missing) if fn == "verify" else (missing,)
    with pytest.raises(ttt.InputFileError, match="missing.onnx: cannot read"):
        getattr(ttt, fn)(*args)
    if os.geteuid() != 0:  # root reads any file
        unreadable = tmp_path / "unreadable.onnx"
        unreadable.write_bytes(b"")
        unreadable.chmod(0)
        args = (unreadable, unreadable) if fn == "verify" else (unreadable,)
        with pytest.raises(ttt.InputFileError, match="unreadable.onnx: cannot read"):
            getattr(ttt, fn)(*args)


def test_non_onnx_bytes(tmp_path):
    with pytest.raises(ttt.ParseError, match="not a valid ONNX model"):
        ttt.optimize(b"\x00\x01 definitely not protobuf \xff" * 3)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"garbage")
    with pytest.raises(ttt.ParseError, match=r"bad.onnx: not a valid ONNX model"):
        ttt.explain(bad)
    with pytest.raises(ttt.ParseError):
        ttt.verify(bad, bad)


def test_bad_mlir():
    with pytest.raises(ttt.ParseError) as info:
        ttt.explain("func.func @f( {\n")
    assert "\n" not in str(info.value)
    with pytest.raises(ttt.InvalidInputError):
        ttt.explain(12345)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_optimize_reports_each_layer_as_it_goes():
    seen = []
    _, remarks = ttt.optimize(FIXTURES / "lact_v5.scripted.onnx", return_remarks=True,
                              on_remark=seen.append)
    assert seen == remarks and len(seen) == 1 and "TTT layer: " in seen[0]

    def broken(line):
        raise RuntimeError("a callback that fails")

    # A failing callback's exception reaches the caller (after the compiler
    # has returned: it cannot unwind through C++).
    with pytest.raises(RuntimeError, match="a callback that fails"):
        ttt.optimize(FIXTURES / "lact_v5.scripted.onnx", on_remark=broken)
