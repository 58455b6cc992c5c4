"""The research-spelling fixtures (test/fixtures/onnx/research/) through `ttt-opt`.

``research_<module>.<exporter>_opset<N>.onnx`` are exports of python/ttt/models/research.py:
the linear_dot, linear_mse, lact_v2, ttt_linear and ttt_mlp layers of python/ttt/models/layers.py
written the way research code writes them (preallocated outputs with in-place chunk
writes, fast weights as forward arguments, out x in weights, einsum/bmm, heads folded into
the batch, [B, T, H, D], ttt-lm-pytorch's scan over mini-batches), traced with torch's TorchScript exporter at opset 17 and at torch's default
opset and with the dynamo exporter. ``<family>.traced_opset<N>.onnx`` are the committed
linear_dot / lact_v2 fixtures exported again at torch's default opset. Each comes with a
``.json`` (spellings, twin, exporter, input shapes and distributions) and a ``.npz`` (the
example inputs and torch's output ``o``). Regenerate with
``python/scripts/make_fixtures.py --research`` (needs torch; see its docstring).

For every fixture:

* onnxruntime on the fixture reproduces torch's output (relative error <= 1e-5);
* ``ttt-opt fixture.onnx -o out.onnx`` runs, and its remark decides the outcome:
  "rewritten" (a "TTT layer:" remark saying "raised to ttt.kvb_layer"), "found" (a
  "TTT layer:" remark, the layer left as it was) or not found;
* a research fixture must have exactly the outcome EXPECTED gives it, or, when it is in
  NOT_YET, still not be found (NOT_YET records what ttt-opt says today). A rewritten
  model must pass the checker and match torch's output on the example inputs and the
  original model on fresh random inputs of the same shapes (<= 1e-5);
* a ``traced_opset<N>`` re-export must be found and rewritten like its opset-17 twin in
  test/fixtures/onnx, with the same remark up to value names, and match within 1e-5.

When the recognizer learns a spelling, move the fixture from NOT_YET to EXPECTED (or
from "found" to "rewritten"); the test says which entry is stale, and
``python3 test/python/test_research_fixtures.py --survey`` prints both tables as the
current build of ttt-opt would fill them.

Needs onnx and onnxruntime, not torch.
Run: TTT_BUILD_DIR=build python3 -m pytest -q test/python/test_research_fixtures.py
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import build_dir  # noqa: E402

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"
RESEARCH_DIR = FIXTURE_DIR / "research"
NAMES = sorted(p.name[: -len(".onnx")] for p in RESEARCH_DIR.glob("*.onnx"))
RESEARCH = [n for n in NAMES if n.startswith("research_")]
OPSET_TWINS = [n for n in NAMES if not n.startswith("research_")
               and re.search(r"_opset\d+$", n)]
RTOL = 1e-5
MAX_BYTES = 200 * 1024

# What today's ttt-opt does with each research fixture that it finds: "rewritten" or
# "found" (left as it was; the reason in the comment). Spellings (research.py):
# a preallocated output + in-place chunk writes, b fast weights as forward arguments,
# c out x in weights, d einsum / bmm, e heads folded into the batch, f [B, T, H, D],
# g ttt-lm-pytorch's scan (mini-batches by index of a [N, B, H, C, D] permutation,
# written into torch.empty).
EXPECTED = {
    'research_lact_v2_bthd_einsum.dynamo_opset20': 'rewritten',
    'research_lact_v2_bthd_einsum.traced_opset17': 'rewritten',
    'research_lact_v2_bthd_einsum.traced_opset20': 'rewritten',
    'research_lact_v2_function.dynamo_opset20': 'rewritten',
    'research_lact_v2_function.traced_opset17': 'rewritten',
    'research_lact_v2_function.traced_opset20': 'rewritten',
    'research_lact_v2_fold_params.dynamo_opset20': 'rewritten',
    'research_lact_v2_fold_params.traced_opset17': 'rewritten',
    'research_lact_v2_fold_params.traced_opset20': 'rewritten',
    'research_linear_dot_bmm_fold.dynamo_opset17': 'rewritten',
    'research_linear_dot_bmm_fold.dynamo_opset20': 'rewritten',
    'research_linear_dot_bmm_fold.traced_opset17': 'rewritten',
    'research_linear_dot_bmm_fold.traced_opset20': 'rewritten',
    'research_linear_dot_bthd.dynamo_opset17': 'rewritten',
    'research_linear_dot_bthd.dynamo_opset20': 'rewritten',
    'research_linear_dot_bthd.traced_opset17': 'rewritten',
    'research_linear_dot_bthd.traced_opset20': 'rewritten',
    'research_linear_dot_einsum.dynamo_opset17': 'rewritten',
    'research_linear_dot_einsum.dynamo_opset20': 'rewritten',
    'research_linear_dot_einsum.traced_opset17': 'rewritten',
    'research_linear_dot_einsum.traced_opset20': 'rewritten',
    'research_linear_dot_fwargs.dynamo_opset17': 'rewritten',
    'research_linear_dot_fwargs.dynamo_opset20': 'rewritten',
    'research_linear_dot_fwargs.traced_opset17': 'rewritten',
    'research_linear_dot_fwargs.traced_opset20': 'rewritten',
    'research_linear_dot_outin.dynamo_opset17': 'rewritten',
    'research_linear_dot_outin.dynamo_opset20': 'rewritten',
    'research_linear_dot_outin.traced_opset17': 'rewritten',
    'research_linear_dot_outin.traced_opset20': 'rewritten',
    'research_linear_dot_prealloc.dynamo_opset17': 'rewritten',
    'research_linear_dot_prealloc.dynamo_opset20': 'rewritten',
    'research_linear_dot_prealloc.traced_opset17': 'rewritten',
    'research_linear_dot_prealloc.traced_opset20': 'rewritten',
    'research_linear_mse_bthd_einsum_prealloc.dynamo_opset17': 'rewritten',
    'research_linear_mse_bthd_einsum_prealloc.dynamo_opset20': 'rewritten',
    'research_linear_mse_bthd_einsum_prealloc.traced_opset17': 'rewritten',
    'research_linear_mse_bthd_einsum_prealloc.traced_opset20': 'rewritten',
    'research_linear_mse_xwt.dynamo_opset17': 'rewritten',
    'research_linear_mse_xwt.dynamo_opset20': 'rewritten',
    # Chunk views (x[:, :, :N C].reshape(B, H, N, C, D) by index, outputs stacked) with
    # the step on the product's factors, (0.5 k^T) (2 v), and the shorter last chunk
    # cut off and concatenated after them: one layer of N + 1 chunks.
    'research_linear_dot_chunk_view.dynamo_opset17': 'rewritten',
    'research_linear_dot_chunk_view.dynamo_opset20': 'rewritten',
    'research_linear_dot_chunk_view.traced_opset17': 'rewritten',
    'research_linear_dot_chunk_view.traced_opset20': 'rewritten',
    'research_linear_mse_xwt.traced_opset17': 'rewritten',
    'research_linear_mse_xwt.traced_opset20': 'rewritten',
    # LaCT-NVS as its ttt_ua_order runs it (one sequence, the step on the input views'
    # prefix, rates lr.chunk(3, -1), rates on the values of W1's gradient) and ViT^3's GLU
    # branch on [B, N, H, d] with einsum: full-batch steps with trained inner weights,
    # found, raised for --ttt-explain and --ttt-simplify, left as they were.
    'research_lact_nvs_ua_order.dynamo_opset20': 'found',
    'research_lact_nvs_ua_order.traced_opset17': 'found',
    'research_lact_nvs_ua_order.traced_opset20': 'found',
    'research_vit3_glu_bthd_einsum.dynamo_opset20': 'found',
    'research_vit3_glu_bthd_einsum.traced_opset17': 'found',
    'research_vit3_glu_bthd_einsum.traced_opset20': 'found',
    # TTT-Linear/MLP are found (LayerNorm-MSE: not linear attention) and left as they were.
    'research_ttt_linear_scan.dynamo_opset20': 'found',
    'research_ttt_linear_scan.traced_opset17': 'found',
    'research_ttt_linear_scan.traced_opset20': 'found',
    'research_ttt_mlp_scan.dynamo_opset20': 'found',
    'research_ttt_mlp_scan.traced_opset17': 'found',
    'research_ttt_mlp_scan.traced_opset20': 'found',
    'research_linear_dot_bmm_fold.scripted_opset17': 'rewritten',
    'research_linear_dot_bthd.scripted_opset17': 'rewritten',
    'research_linear_dot_einsum.scripted_opset17': 'rewritten',
    'research_linear_dot_fwargs.scripted_opset17': 'rewritten',
    'research_linear_dot_outin.scripted_opset17': 'rewritten',
    'research_linear_dot_prealloc.scripted_opset17': 'rewritten',
    'research_linear_mse_bthd_einsum_prealloc.scripted_opset17': 'rewritten',
    'research_linear_mse_xwt.scripted_opset17': 'rewritten',
    'research_vit3_glu_bthd_einsum.scripted_opset17': 'found',
}

# Research fixtures today's ttt-opt does not find, with what it prints.
NOT_YET = {
    # TorchScript's Loop over the whole chunks, with the cut-off tail after it.
    'research_linear_dot_chunk_view.scripted_opset17': 'no TTT layer found',
}

LAYER_REMARK = re.compile(r"^remark: .*?: TTT layer: (.*)$", re.M)
REWRITTEN = "raised to ttt.kvb_layer"


def _meta(path_stem: Path) -> dict:
    return json.loads(path_stem.with_suffix(".json").read_text())


def _path(name: str) -> Path:
    return RESEARCH_DIR / f"{name}.onnx"


def _npz(name: str) -> dict:
    with np.load(RESEARCH_DIR / f"{name}.npz") as z:
        return {k: z[k] for k in z.files}


def _run(path: Path, feeds: dict) -> list:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _relative_error(actual, expected) -> float:
    expected = np.asarray(expected, np.float64)
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(np.asarray(actual, np.float64) - expected))) / scale


def _example(name: str):
    """The fixture's example inputs (float32) and torch's outputs."""
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    arrays = _npz(name)
    feeds = {s["name"]: arrays[s["name"]].astype(np.float32) for s in meta["inputs"]}
    return feeds, [arrays[o] for o in meta["outputs"]]


def _fresh(name: str, rng) -> dict:
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    feeds = {}
    for spec in meta["inputs"]:
        shape = [meta["dims"][d] if isinstance(d, str) else d for d in spec["shape"]]
        kind, a, b = spec["dist"]
        x = rng.normal(a, b, shape) if kind == "normal" else rng.uniform(a, b, shape)
        feeds[spec["name"]] = x.astype(np.float32)
    return feeds


def _ttt_opt(src: Path, out: Path, *flags: str) -> str:
    """stderr of `ttt-opt src -o out`; waits a while for a binary that is being rebuilt."""
    tool = build_dir() / "bin" / "ttt-opt"
    for _ in range(60):
        if tool.exists():
            break
        time.sleep(2)
    for attempt in range(3):
        try:
            proc = subprocess.run([str(tool), str(src), *flags, "-o", str(out)],
                                  capture_output=True, text=True, timeout=300)
        except OSError:  # replaced while we started it (text file busy, vanished)
            if attempt == 2:
                raise
            time.sleep(5)
            continue
        assert proc.returncode == 0, f"{src.name}: ttt-opt failed: {proc.stderr}"
        return proc.stderr
    raise AssertionError("unreachable")


def _outcome(stderr: str) -> str:
    layers = LAYER_REMARK.findall(stderr)
    if not layers:
        return "none"
    assert len(layers) == 1, f"more than one TTT layer: {stderr}"
    return "rewritten" if REWRITTEN in layers[0] else "found"


def _remark(stderr: str) -> str:
    """The remark without its 'remark: <file>: node ...:' prefix."""
    lines = [ln for ln in stderr.splitlines() if ln.startswith("remark: ")]
    return re.sub(r"^remark: [^:]*: (node '[^']*': )?", "", lines[0]) if lines else stderr


@pytest.fixture(scope="module")
def optimized(tmp_path_factory):
    """name -> (path of ttt-opt's output, its stderr), for every fixture here and for
    the opset-17 twins of the re-exports (keyed by their path)."""
    out_dir = tmp_path_factory.mktemp("research_optimized")
    results = {}
    for name in NAMES:
        out = out_dir / f"{name}.onnx"
        results[name] = (out, _ttt_opt(_path(name), out))
    for name in OPSET_TWINS:
        twin = json.loads((RESEARCH_DIR / f"{name}.json").read_text())["twin_fixture"]
        out = out_dir / f"twin.{twin}.onnx"
        results[f"twin:{twin}"] = (out, _ttt_opt(FIXTURE_DIR / f"{twin}.onnx", out))
    return results


def _check_rewritten(name: str, out: Path) -> None:
    onnx.checker.check_model(str(out), full_check=True)
    feeds, want = _example(name)
    got = _run(out, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, f"{name}: shape {g.shape} != torch's {w.shape}"
        err = _relative_error(g, w)
        assert err <= RTOL, f"{name}: rewritten model vs torch: relative error {err:.3g}"
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(2):
        feeds = _fresh(name, rng)
        for g, w in zip(_run(out, feeds), _run(_path(name), feeds)):
            err = _relative_error(g, w)
            assert err <= RTOL, f"{name}: rewritten vs original on fresh inputs: {err:.3g}"


# ------------------------------------------------------------------ tests


def test_fixture_set():
    assert RESEARCH and OPSET_TWINS, f"no research fixtures in {RESEARCH_DIR}"
    assert not set(EXPECTED) & set(NOT_YET), sorted(set(EXPECTED) & set(NOT_YET))
    tables = set(EXPECTED) | set(NOT_YET)
    assert tables == set(RESEARCH), (
        f"not in EXPECTED or NOT_YET: {sorted(set(RESEARCH) - tables)}; "
        f"listed but missing: {sorted(tables - set(RESEARCH))}")
    assert set(EXPECTED.values()) <= {"rewritten", "found"}
    for name in NAMES:
        assert (RESEARCH_DIR / f"{name}.json").is_file(), f"{name}: no JSON sidecar"
        assert (RESEARCH_DIR / f"{name}.npz").is_file(), f"{name}: no NPZ sidecar"


@pytest.mark.parametrize("name", NAMES)
def test_fixture_matches_torch(name):
    path = _path(name)
    assert path.stat().st_size < MAX_BYTES, f"{name}: {path.stat().st_size} bytes"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    opsets = {o.domain: o.version for o in model.opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == meta["opset"]
    assert name.endswith(f"_opset{meta['opset']}")
    assert [i.name for i in model.graph.input] == [s["name"] for s in meta["inputs"]]
    assert [o.name for o in model.graph.output] == meta["outputs"]
    # A traced export unrolls the chunk loop; a scripted one keeps it as an ONNX Loop
    # (full-batch layers have none).
    if meta.get("export") != "scripted":
        assert "Loop" not in {n.op_type for n in model.graph.node}
    feeds, want = _example(name)
    got = _run(path, feeds)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        err = _relative_error(g, w)
        assert err <= RTOL, f"{name}: onnxruntime vs torch: relative error {err:.3g}"


@pytest.mark.parametrize("name", RESEARCH)
def test_research_outcome(name, optimized):
    out, stderr = optimized[name]
    outcome = _outcome(stderr)
    remark = _remark(stderr)
    if name in NOT_YET:
        assert outcome == "none", (
            f"{name} is now {outcome} -- move it from NOT_YET to EXPECTED "
            f"(as {outcome!r}): {remark}")
        return
    assert outcome == EXPECTED[name], (
        f"{name}: expected {EXPECTED[name]}, ttt-opt says: {remark}"
        + (" -- update EXPECTED" if outcome == "rewritten" else ""))
    _check_reading(name, LAYER_REMARK.findall(stderr)[0])
    if outcome == "rewritten":
        _check_rewritten(name, out)


FULL_BATCH = [n for n in RESEARCH if n.startswith(("research_lact_nvs", "research_vit3"))]


@pytest.mark.parametrize("name", FULL_BATCH)
def test_full_batch_research_layer_is_raised(name, tmp_path):
    """The full-batch research spellings are read as their twins' ttt.kvb_layer (the
    whole layer, every trained weight, with the twin's loss settings), not only found."""
    stderr = _ttt_opt(_path(name), tmp_path / "raised.mlir", "--ttt-raise-onnx=raise-all")
    layer = LAYER_REMARK.findall(stderr)
    assert len(layer) == 1 and "raised to ttt.kvb_layer" in layer[0], stderr
    text = (tmp_path / "raised.mlir").read_text()
    assert "schedule = #ttt.schedule<kind = full_batch>" in text
    if "nvs" in name:
        assert "model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>" in text
        assert "weight_norm = output_channels" in text and "newton_schulz" in text
    else:
        assert "model = #ttt.model<kind = glu, trained = [0, 1]>" in text
        # The mean over the tokens, or (a static length) its folded constant.
        assert "clip = output_channels" in text and "loss = #ttt.loss<kind = dot" in text


def test_nvs_research_layer_made_linear_is_the_oracle(tmp_path):
    """LaCT-NVS's ttt_ua_order spelling with W0/W2 frozen and weight norm and Muon
    dropped is rewritten to full-mask linear attention that equals the NumPy oracle of
    those settings (the module's own weights, its input views' k, v, rates and target
    views' q), on the example and on fresh inputs."""
    from oracle import kvb_layer
    from onnx import numpy_helper

    name = "research_lact_nvs_ua_order.traced_opset17"
    out = tmp_path / "linear.onnx"
    stderr = _ttt_opt(_path(name), out,
                      "--ttt-simplify=freeze-inner drop-weight-norm drop-muon")
    assert "rewritten: after the passes the layer is linear attention" in stderr, stderr
    onnx.checker.check_model(str(out), full_check=True)
    weights = {i.name: numpy_helper.to_array(i).astype(np.float64)
               for i in onnx.load(str(_path(name))).graph.initializer}
    heads = weights["w0"].shape[0]
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    n = int(meta["module_args"]["n_input"]) if "module_args" in meta else 24

    def streams(x):  # [B*H, T, .] -> [B, H, T, .]
        return x.astype(np.float64).reshape(-1, heads, *x.shape[1:])

    rng = np.random.default_rng(3)
    for feeds in (_example(name)[0], _fresh(name, rng)):
        q, k, v, lr = (streams(feeds[x]) for x in ("q", "k", "v", "lr"))
        want, _ = kvb_layer(q[:, :, n:], k[:, :, :n], v[:, :, :n],
                            [weights["w0"], weights["w1"], weights["w2"]], lr=lr[:, :, :n],
                            model="swiglu", trained=[1], loss="dot", schedule="full_batch")
        (got,) = _run(out, feeds)
        err = _relative_error(got, want.reshape(-1, *want.shape[2:]))
        assert err <= RTOL, f"relative error {err:.3g}"


FAST_WEIGHTS = re.compile(r"fast weights ((?:(?:'[^']*'|the \w+ result)(?: \(transposed\))?"
                          r"(?:, )?)+)(?: and (\d+) more)?")


def _check_reading(name: str, layer: str) -> None:
    """The layer is read as its twin is: a chunk loop (unrolled, or an ONNX Loop for a
    scripted export) with the chunk length of the twin and as many fast weights as the
    twin trains (a misread layer is taken for a full-batch step over dozens of
    per-chunk values)."""
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    twin = json.loads((FIXTURE_DIR / f"{meta['twin_fixture']}.json").read_text())
    kwargs = twin.get("oracle_kwargs", {})
    if kwargs.get("schedule", "chunked") == "chunked" and "chunk" in kwargs:
        assert re.search(rf"(chunk loop \(\d+ |ONNX Loop over chunks \()chunks of "
                         rf"{kwargs['chunk']} tokens(?:, the last of \d+)?\)",
                         layer), f"{name}: not read as a chunk loop: {layer}"
    match = FAST_WEIGHTS.search(layer)
    assert match, f"{name}: no fast weights named: {layer}"
    named = re.findall(r"'[^']*'|the \w+ result", match.group(1))
    if "trained" in kwargs:
        count = len(named) + int(match.group(2) or 0)
        assert count == len(kwargs["trained"]), (
            f"{name}: {count} fast weights, the twin trains {len(kwargs['trained'])}: {layer}")


@pytest.mark.parametrize("name", RESEARCH)
def test_normalized_graph_computes_the_same(name, tmp_path):
    """`--ttt-normalize-onnx` alone (every handler that rewrites an idiom into the
    canonical spelling the raise reads) keeps what the graph computes: onnxruntime on
    the normalized graph against the original on fresh random inputs."""
    out = tmp_path / "normalized.onnx"
    _ttt_opt(_path(name), out, "--ttt-normalize-onnx")
    feeds = _fresh(name, np.random.default_rng(zlib.crc32(name.encode()) + 1))
    for got, want in zip(_run(out, feeds), _run(_path(name), feeds)):
        err = _relative_error(got, want)
        assert err <= RTOL, f"{name}: normalized graph differs by {err:.3g}"


SCRIPTED_REWRITTEN = sorted(n for n, outcome in EXPECTED.items()
                            if ".scripted_" in n and outcome == "rewritten")


@pytest.mark.parametrize("name", SCRIPTED_REWRITTEN)
@pytest.mark.parametrize("B,T", [(3, 29), (1, 1), (2, 41)])
def test_scripted_layers_are_exact_at_other_sizes(name, B, T, optimized):
    """A scripted export keeps batch and length symbolic: its rewritten model matches
    the original in onnxruntime at sizes it was not exported with (a partial last
    chunk, one token, more chunks)."""
    out, stderr = optimized[name]
    model = onnx.load(str(_path(name)))
    rng = np.random.default_rng(zlib.crc32(f"{name}{B}{T}".encode()))
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else {"B": B, "T": T}[d.dim_param]
                 for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.normal(0, 0.5, shape).astype(np.float32)
    (got,), (want,) = _run(out, feeds), _run(_path(name), feeds)
    assert got.shape == want.shape
    assert _relative_error(got, want) <= RTOL, stderr


def _window_one_token_late(model):
    """The scripted `o[:, :, s:e] = ...` writes at tokens [s + 1, e + 1): the time column
    of its run-time ScatterND indices is the Range cut one token later."""
    body = next(a.g for n in model.graph.node if n.op_type == "Loop" for a in n.attribute
                if a.name == "body")
    producers = {o: n for n in body.node for o in n.output}
    scatter = next(n for n in body.node if n.op_type == "ScatterND")
    columns = producers[scatter.input[1]].input
    # The last column: Unsqueeze(Expand(Slice(Range(..), s, e, [0], [1]), ..), -1).
    cut = producers[producers[producers[columns[-1]].input[0]].input[0]]
    assert cut.op_type == "Slice", cut.op_type
    for i, suffix in ((1, "start"), (2, "end")):
        body.node.append(onnx.helper.make_node(
            "Constant", [], [f"one_{suffix}"],
            value=onnx.numpy_helper.from_array(np.array([1], np.int64))))
        body.node.append(onnx.helper.make_node("Add", [cut.input[i], f"one_{suffix}"],
                                               [f"late_{suffix}"]))
        cut.input[i] = f"late_{suffix}"
    # The new nodes go just before the Slice that reads them.
    order = [n for n in body.node if n.op_type in ("Constant", "Add") and
             n.output[0].startswith(("one_", "late_"))]
    rest = [n for n in body.node if n not in order]
    at = rest.index(cut)
    del body.node[:]
    body.node.extend(rest[:at] + order + rest[at:])
    return "its buffer writes are not at its queries' tokens"


def _buffer_of_ones(model):
    """The buffer starts as ones, not zeros (a write that covers it all would not
    care, but the raise proves the cover from zeros)."""
    fill = next(n for n in model.graph.node if n.op_type == "ConstantOfShape")
    fill.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(np.array([1.0], np.float32)))
    return "it writes its chunks into a buffer that is not proven to be as long as"


@pytest.mark.parametrize("mutate", [_window_one_token_late, _buffer_of_ones],
                         ids=["window_one_token_late", "buffer_of_ones"])
def test_scripted_buffer_writes_elsewhere_are_left(mutate, tmp_path):
    """The scripted preallocated-output export with its run-time write indices or its
    buffer changed: found, left with the reason, node for node."""
    model = onnx.load(str(_path("research_linear_dot_prealloc.scripted_opset17")))
    reason = mutate(model)
    onnx.checker.check_model(model, full_check=True)
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, str(src))
    stderr = _ttt_opt(src, out)
    layers = LAYER_REMARK.findall(stderr)
    assert len(layers) == 1 and "left as it was" in layers[0] and reason in layers[0], stderr
    assert [n.op_type for n in onnx.load(str(out)).graph.node] == \
        [n.op_type for n in model.graph.node]


def _normalized(layer_remark: str) -> str:
    """The remark without value names, and without the op type of the node it names as
    the culprit: opset 20 has a Gelu node where opset 17 spells it with Tanh."""
    text = re.sub(r"'[^']*'", "'...'", layer_remark)
    return re.sub(r"through \w+ node", "through a node", text)


@pytest.mark.parametrize("name", OPSET_TWINS)
def test_opset_reexport_like_its_twin(name, optimized):
    meta = json.loads((RESEARCH_DIR / f"{name}.json").read_text())
    twin_model = onnx.load(str(FIXTURE_DIR / f"{meta['twin_fixture']}.onnx"))
    assert {o.version for o in twin_model.opset_import if o.domain in ("", "ai.onnx")} == {17}
    assert meta["opset"] != 17
    out, stderr = optimized[name]
    _, twin_stderr = optimized[f"twin:{meta['twin_fixture']}"]
    layers, twin_layers = LAYER_REMARK.findall(stderr), LAYER_REMARK.findall(twin_stderr)
    assert len(twin_layers) == 1, f"the opset-17 twin {meta['twin_fixture']}: {twin_stderr}"
    assert len(layers) == 1, f"{name}: {stderr}"
    assert _normalized(layers[0]) == _normalized(twin_layers[0]), (
        f"{name}: {layers[0]}\n  vs opset 17: {twin_layers[0]}")
    if REWRITTEN in twin_layers[0]:
        _check_rewritten(name, out)
        return
    # Left as it was, like its twin: the written model computes what torch did.
    onnx.checker.check_model(str(out), full_check=True)
    feeds, want = _example(name)
    for g, w in zip(_run(out, feeds), want):
        assert _relative_error(g, w) <= RTOL, f"{name}: written model vs torch"


def _survey() -> int:
    """Prints EXPECTED / NOT_YET as today's ttt-opt would fill them (rewritten entries
    are only listed as such when their outputs match), and the opset re-exports."""
    import tempfile
    expected, not_yet = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in NAMES:
            out = Path(tmp) / f"{name}.onnx"
            stderr = _ttt_opt(_path(name), out)
            outcome, remark = _outcome(stderr), _remark(stderr)
            if outcome == "rewritten":
                try:
                    _check_rewritten(name, out)
                except AssertionError as e:
                    outcome, remark = "found", f"rewritten but wrong: {e}"
            print(f"{name:56s} {outcome:9s} {remark}")
            if name in RESEARCH:
                (not_yet if outcome == "none" else expected)[name] = (
                    remark if outcome == "none" else outcome)
    print("\nEXPECTED = {")
    for name, outcome in expected.items():
        print(f"    {name!r}: {outcome!r},")
    print("}\nNOT_YET = {")
    for name, remark in not_yet.items():
        print(f"    {name!r}: {remark!r},")
    print("}")
    stale = {n for n in RESEARCH if EXPECTED.get(n) != expected.get(n)
             or (n in NOT_YET) != (n in not_yet)}
    print(f"\n{len(stale)} entries differ from the tables in this file: {sorted(stale)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--survey"]:
        sys.exit("usage: TTT_BUILD_DIR=build python3 test/python/test_research_fixtures.py "
                 "--survey")
    sys.exit(_survey())
