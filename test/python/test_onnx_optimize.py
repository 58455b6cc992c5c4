"""`ttt-opt fixture.onnx -o out.onnx` on every committed fixture (the main job).

For each fixture (test/fixtures/onnx, PyTorch exports of the reference layers, traced
and scripted) the default ONNX pipeline must

* report every TTT layer of the model: one "TTT layer: ..." remark per layer;
* rewrite exactly the layers that are linear attention (the families listed in
  REWRITTEN, written down from docs/Theory.md §4.4, not computed by the compiler) and
  leave every other one as it was, with the reason in the remark;
* write a model that passes the ONNX checker and that onnxruntime runs with outputs
  equal to the original model's (fp32 relative error <= 1e-5) on fresh random inputs,
  at the fixture's shape and, for models with dynamic dimensions, at other shapes;
* leave the model exactly as it was when no layer is rewritten.

Needs onnx and onnxruntime, not torch.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"
FIXTURES = sorted(p.name[: -len(".onnx")] for p in FIXTURE_DIR.glob("*.onnx"))
RTOL = 1e-5

# Families whose layer is exactly linear attention (docs/Theory.md §4.4): a linear output
# layer on a static feature map, an update that is additive (dot loss) or affine (MSE)
# in the fast weight, optionally through momentum and a per-chunk Newton-Schulz; the
# transformer block around V4 and V6 too. The rest train their feature map (LaCT base,
# NVS, ViT^3 GLU, TTT-MLP, the block around the LaCT base layer), renormalize their
# weights (V1), put a LayerNorm on the output (TTT-Linear), or are full-batch steps that
# already are one parallel step (ViT^3 conv).
REWRITTEN = {"lact_v2", "lact_v3", "lact_v4", "lact_v5", "lact_v6", "linear_dot",
             "linear_mse", "block_v4", "block_v6"}

LAYER_REMARK = re.compile(r"^remark: .*: TTT layer: (.*)$", re.M)


def _meta(name):
    return json.loads((FIXTURE_DIR / f"{name}.json").read_text())


def _inputs(meta, dims, rng):
    feeds = {}
    for spec in meta["inputs"]:
        shape = [dims[d] if isinstance(d, str) else d for d in spec["shape"]]
        kind, a, b = spec["dist"]
        x = rng.normal(a, b, shape) if kind == "normal" else rng.uniform(a, b, shape)
        feeds[spec["name"]] = x.astype(np.float32)
    return feeds


def _run(path, feeds):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _relative_error(actual, expected):
    expected = np.asarray(expected, np.float64)
    scale = max(float(np.max(np.abs(expected))), 1e-30) if expected.size else 1.0
    diff = np.abs(np.asarray(actual, np.float64) - expected)
    return float(np.max(diff)) / scale if expected.size else 0.0


def _shapes_to_try(meta):
    """The fixture's own dims, then the alternative dims it declares, then (for
    models whose sequence length is dynamic) one that is not a multiple of any chunk."""
    shapes = [dict(meta["dims"])] + [dict(d) for d in meta.get("test_dims", [])]
    if meta["export"] == "scripted" and "T" in meta["dims"]:
        shapes.append({**meta["dims"], "T": 37, "B": 2})
    return shapes


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    """name -> (path of the optimized model, stderr of ttt-opt)."""
    out_dir = tmp_path_factory.mktemp("optimized")
    results = {}
    for name in FIXTURES:
        out = out_dir / f"{name}.onnx"
        proc = subprocess.run([str(tool("ttt-opt")), str(FIXTURE_DIR / f"{name}.onnx"),
                               "-o", str(out)], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, f"{name}: {proc.stderr}"
        results[name] = (out, proc.stderr)
    return results


@pytest.mark.parametrize("name", FIXTURES)
def test_reports_every_layer(name, optimized):
    _, stderr = optimized[name]
    layers = LAYER_REMARK.findall(stderr)
    assert len(layers) == 1, f"expected one TTT layer in {name}, got: {stderr}"
    family = _meta(name)["family"]
    if family in REWRITTEN:
        assert "raised to ttt.kvb_layer (linear attention" in layers[0], layers[0]
    else:
        assert "left as it was: " in layers[0], layers[0]
        reason = layers[0].split("left as it was: ", 1)[1]
        assert len(reason) > 20, layers[0]


@pytest.mark.parametrize("name", FIXTURES)
def test_optimized_model_matches_original(name, optimized):
    out, _ = optimized[name]
    onnx.checker.check_model(str(out), full_check=True)
    meta = _meta(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for dims in _shapes_to_try(meta):
        feeds = _inputs(meta, dims, rng)
        expected = _run(FIXTURE_DIR / f"{name}.onnx", feeds)
        actual = _run(out, feeds)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert a.shape == e.shape
            err = _relative_error(a, e)
            assert err <= RTOL, f"{name} at {dims}: relative error {err:.3g}"


def _op_types(model):
    return [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("name", FIXTURES)
def test_rewritten_layers_leave_the_chunk_loop(name, optimized):
    """A rewritten layer's chunk loop is gone: no sequence of chunk outputs, and the
    output is no longer a concatenation of chunks. A model whose layer stays keeps
    every node and initializer as it was."""
    out, _ = optimized[name]
    original = onnx.load(str(FIXTURE_DIR / f"{name}.onnx"))
    exported = onnx.load(str(out))
    if _meta(name)["family"] in REWRITTEN:
        assert "SequenceInsert" not in _op_types(exported)
        producer = {o: n for n in exported.graph.node for o in n.output}
        for output in exported.graph.output:
            assert producer[output.name].op_type not in ("Concat", "ConcatFromSequence")
    else:
        assert _op_types(exported) == _op_types(original)
        assert [i.name for i in exported.graph.initializer] == \
            [i.name for i in original.graph.initializer]


@pytest.mark.parametrize("name", [n for n in FIXTURES if _meta(n)["family"] in REWRITTEN])
def test_optimizing_twice_changes_nothing(name, optimized, tmp_path):
    """The parallel form is not mistaken for a TTT layer: a second run reports none
    and writes the model back node for node."""
    out, _ = optimized[name]
    again = tmp_path / "again.onnx"
    proc = subprocess.run([str(tool("ttt-opt")), str(out), "-o", str(again)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "TTT layer:" not in proc.stderr
    assert _op_types(onnx.load(str(again))) == _op_types(onnx.load(str(out)))


FAST_WEIGHTS = re.compile(r"fast weights ((?:'[^']*'(?:, )?)+)(?: and (\d+) more)?")


def _values_from_sequences(model, sequences):
    """Names of the values computed from the sequence inputs (a subgraph's node
    counts as reading every name its subgraphs mention)."""
    tainted = set(sequences)

    def mentioned(node):
        names = set(node.input)
        for attr in node.attribute:
            for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                for inner in graph.node:
                    names |= mentioned(inner)
        return names

    for node in model.graph.node:
        if mentioned(node) & tainted:
            tainted.update(node.output)
    return tainted


@pytest.mark.parametrize("name", FIXTURES)
def test_explain_reads_every_layer(name, tmp_path):
    """`--ttt-explain` prints one remark per layer that says what was proven (a
    rewritten layer) or what blocks the parallel form, and names as fast weights as
    many values as the reference model trains, none of them computed from the
    queries, keys, values or learning rates (TTT-Linear's dual form reads its own
    chunk's keys; those are data of the step, not weights)."""
    proc = subprocess.run([str(tool("ttt-opt")), str(FIXTURE_DIR / f"{name}.onnx"),
                           "--ttt-explain", "-o", str(tmp_path / "out.onnx")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "not a TTT layer" not in proc.stderr, proc.stderr
    layers = LAYER_REMARK.findall(proc.stderr)
    assert len(layers) == 1, proc.stderr
    meta = _meta(name)
    if meta["family"] in REWRITTEN:
        explained = re.findall(r"ttt-explain: exact lowering: [^;]+; proven: (.+)$",
                               proc.stderr, re.M)
        assert len(explained) == 1 and len(explained[0]) > 20, proc.stderr
    else:
        assert len(layers[0].split("left as it was: ", 1)[-1]) > 20, layers[0]
    match = FAST_WEIGHTS.search(layers[0])
    assert match, layers[0]
    named = re.findall(r"'([^']*)'", match.group(1))
    trained = meta.get("oracle_kwargs", {}).get("trained")
    if trained is not None:
        assert len(named) + int(match.group(2) or 0) == len(trained), layers[0]
    if "full-batch step" in layers[0]:
        return  # a full-batch layer's trained weights are computed from k and v
    model = onnx.load(str(FIXTURE_DIR / f"{name}.onnx"))
    sequences = {spec["name"] for spec in meta["inputs"]}
    from_data = _values_from_sequences(model, sequences)
    assert not [n for n in named if n in from_data], layers[0]
