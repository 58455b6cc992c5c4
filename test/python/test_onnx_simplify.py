"""The paper's simplifications on ONNX models, and the raise of layers that are not linear
attention (LaCT's base layer: W0, W1, W2 trained, weight norm, momentum, Muon).

- The raised `ttt.kvb_layer` of the LaCT base fixture computes what the model computes:
  the op, cut out of the raise's output, runs through `ttt-run` against onnxruntime on the
  original model.
- `ttt-opt base.onnx -o v2.onnx --ttt-simplify="freeze-inner drop-weight-norm"` (the
  paper's V2) writes a checker-valid model with the two "model changed" remarks, whose
  outputs are the NumPy oracle's for V2 (the base layer's settings and weights, with only
  W1 trained and no weight norm); without the flags the model is left as it was.
- A simplification that does not make a layer linear attention keeps the layer's nodes.
- LaCT-NVS (one full-batch step: W0, W1, W2 trained on all of k/v with per-token rates,
  Muon and weight norm, then applied to every query) is raised as a `full_batch`
  `ttt.kvb_layer` that computes the model; left as it was without flags; with W0/W2
  frozen and weight norm and Muon dropped it is full-mask linear attention, exported to
  ONNX and equal to the NumPy oracle of those settings.
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
from onnx import numpy_helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import run_function, tool  # noqa: E402
from raised_graph import raised_op, run_raised_graph  # noqa: E402
import dwconv_mutants  # noqa: E402
import onnx_models as om  # noqa: E402
from oracle import kvb_layer  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"
BASE = ["lact_llm.traced", "lact_llm.scripted", "lact_llm.traced_opset20",
        "lact_llm.scripted_opset20"]
NVS = ["lact_nvs.traced", "lact_nvs.scripted", "lact_nvs.traced_opset20",
       "lact_nvs.scripted_opset20"]
V2 = "freeze-inner drop-weight-norm"
RTOL = 1e-5


def _path(name):
    return (FIXTURES / "research" / f"{name}.onnx"
            if "opset20" in name or name.startswith("research_")
            else FIXTURES / f"{name}.onnx")


def _meta(name):
    if name.startswith("research_"):
        return json.loads((FIXTURES / "research" / f"{name}.json").read_text())
    stem = name.replace("_opset20", "")
    return json.loads((FIXTURES / f"{stem}.json").read_text())


def _opt(*args):
    return subprocess.run([str(tool("ttt-opt")), *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def _inputs(meta, B, T, seed, Tq=None, **sizes):
    rng = np.random.default_rng(seed)
    dims = {"B": B, "T": T, "Tq": Tq or T, **sizes}
    out = {}
    for spec in meta["inputs"]:
        shape = [dims[d] if isinstance(d, str) else d for d in spec["shape"]]
        kind, a, b = spec["dist"]
        x = rng.normal(a, b, shape) if kind == "normal" else rng.uniform(a, b, shape)
        out[spec["name"]] = x.astype(np.float32)
    return out


def _run(path, x):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: x[n] for n in names})[0]


def _rel(got, want):
    return np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()


def _v2_oracle(meta, x, drop=()):
    """The NumPy oracle of the base layer with the paper's V2 applied: only W1 trains, no
    weight norm; every other setting (lr columns, momentum, Muon, chunks) as the base,
    but the settings named in `drop`."""
    kwargs = dict(meta["oracle_kwargs"], trained=[1], weight_norm="none")
    for key in drop:
        kwargs.pop(key, None)
    arrays = np.load(FIXTURES / f"{meta['name'].replace('_opset20', '')}.npz")
    weights = [arrays[n] for n in meta["weights"]]
    ins = {spec["oracle"]: x[spec["name"]].astype(np.float64) for spec in meta["inputs"]}
    q, k, v = ins.pop("q"), ins.pop("k"), ins.pop("v")
    o, _ = kvb_layer(q, k, v, weights, **ins, **kwargs)
    return o


@pytest.mark.parametrize("name", BASE)
def test_v2_on_the_lact_base_model_is_the_v2_layer(name, tmp_path):
    out = tmp_path / "v2.onnx"
    proc = _opt(_path(name), "-o", out, f"--ttt-simplify={V2}")
    assert proc.returncode == 0, proc.stderr
    changed = [line for line in proc.stderr.splitlines() if "model changed" in line]
    assert len(changed) == 2, proc.stderr
    assert any("Variant 1" in line for line in changed)
    assert any("Variant 2" in line for line in changed)
    assert "rewritten: after the passes the layer is linear attention" in proc.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    # The chunk-sequential form (a Loop or one update per chunk) is gone: the fast weights'
    # Newton-Schulz iterations are batched over the chunks, not repeated per chunk.
    assert all(n.op_type != "ConcatFromSequence" for n in model.graph.node)
    meta = dict(_meta(name), name=name)
    sizes = [(1, 64)] if "traced" in name else [(1, 64), (2, 37), (1, 16)]
    for B, T in sizes:
        x = _inputs(meta, B, T, zlib.crc32(f"{name}{B}{T}".encode()))
        err = _rel(_run(out, x), _v2_oracle(meta, x))
        assert err <= RTOL, f"{name} B={B} T={T}: relative error {err:.2e}"


@pytest.mark.parametrize("name", BASE[:2] + NVS[:2])
def test_without_the_flags_the_base_model_is_left_as_it_was(name, tmp_path):
    out = tmp_path / "same.onnx"
    proc = _opt(_path(name), "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "model changed" not in proc.stderr
    before, after = onnx.load(str(_path(name))), onnx.load(str(out))
    assert [(n.op_type, n.name, list(n.input), list(n.output)) for n in before.graph.node] == \
        [(n.op_type, n.name, list(n.input), list(n.output)) for n in after.graph.node]


def test_a_simplification_that_stays_non_linear_keeps_the_nodes(tmp_path):
    """Dropping only the weight norm leaves W0 and W2 trained (a dynamic kernel): the layer
    keeps its nodes, says why, and computes what it computed."""
    name = "lact_llm.traced"
    out = tmp_path / "kept.onnx"
    proc = _opt(_path(name), "-o", out, "--ttt-simplify=drop-weight-norm")
    assert proc.returncode == 0, proc.stderr
    kept = [line for line in proc.stderr.splitlines() if "kept its original nodes" in line]
    assert len(kept) == 1 and "dynamic kernel" in kept[0], proc.stderr
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    x = _inputs(_meta(name), 1, 64, 7)
    assert _rel(_run(out, x), _run(_path(name), x)) <= 1e-6


# Layers that are not linear attention, raised with raise-all: what their ttt.kvb_layer
# must say, and the (B, T, Tq) they are run at (a traced export's are its own). The
# scripted NVS export's weights are Expand results, not initializers, so its op cannot be
# fed here; its reading is checked through the simplified model below.
RAISED = {
    "lact_llm.traced": (["trained = [0, 1, 2]", "weight_norm = output_channels",
                         "kind = chunked"], [(1, 64, None)]),
    "lact_nvs.traced": (["kind = swiglu, trained = [0, 1, 2]", "newton_schulz",
                         "weight_norm = output_channels", "kind = full_batch"],
                        [(1, 24, 40)]),
    "lact_nvs.traced_opset20": (["kind = swiglu, trained = [0, 1, 2]", "kind = full_batch"],
                                [(1, 24, 40)]),
    "vit3_glu.traced": (["kind = glu, trained = [0, 1]", "clip = output_channels",
                         "kind = full_batch"], [(1, 36, None)]),
    "vit3_glu.scripted": (["kind = glu, trained = [0, 1]", "reduction = mean",
                           "clip = output_channels", "kind = full_batch"],
                          [(2, 49, None), (1, 10, None)]),
    "vit3_glu.scripted_opset20": (["kind = glu, trained = [0, 1]", "kind = full_batch"],
                                  [(1, 25, None)]),
}


@pytest.mark.parametrize("name", sorted(RAISED))
def test_the_raised_lact_base_layer_computes_the_model(name, tmp_path):
    """The raise's ttt.kvb_layer (LaCT base: three trained weights, per-weight lr
    columns, momentum, Muon, weight norm; NVS: the same in one full-batch step; ViT^3:
    the GLU branch's two weights, clipped, one full-batch step) run by ttt-run's
    recurrent lowering against onnxruntime on fresh inputs."""
    raised = tmp_path / "raised.mlir"
    proc = _opt(_path(name), "--ttt-raise-onnx=raise-all", "-o", raised)
    assert proc.returncode == 0, proc.stderr
    func, names = raised_op(raised.read_text())
    expected, sizes = RAISED[name]
    for text in expected:
        assert text in func, (text, func)
    model = onnx.load(str(_path(name)))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for B, T, Tq in sizes:
        x = _inputs(_meta(name), B, T, zlib.crc32(f"{name}{B}{T}".encode()), Tq=Tq)
        args = [x[n[1:]] if n[1:] in x else inits[n[1:]] for n in names]
        (got,) = run_function(func, args, tmp_path, entry="layer")
        want = _run(_path(name), x).astype(np.float64)
        assert _rel(got, want) <= RTOL, (B, T, Tq)


# ttt-lm-pytorch's TTT-Linear and TTT-MLP (dual form: LayerNorm-MSE loss, trained biases,
# token_eta, the `XQ +` residual; TTT-MLP's tanh GELU between its layers), raised with
# raise-all, and the (B, T) its traced export was made at.
DUAL_FORM = {"ttt_linear.traced": (1, 40), "ttt_linear.traced_opset20": (1, 40),
             "research_ttt_linear_scan.traced_opset17": (2, 40),
             "research_ttt_linear_scan.traced_opset20": (2, 40),
             "research_ttt_linear_scan.dynamo_opset20": (2, 40),
             "ttt_mlp.traced": (1, 40), "ttt_mlp.traced_opset20": (1, 40),
             "research_ttt_mlp_scan.traced_opset17": (2, 40),
             "research_ttt_mlp_scan.traced_opset20": (2, 40),
             "research_ttt_mlp_scan.dynamo_opset20": (2, 40),
             # Loop exports: any B and T (here a partial last chunk of 4).
             "ttt_linear.scripted": (2, 20), "ttt_linear.scripted_opset20": (1, 36),
             "ttt_mlp.scripted": (2, 20), "ttt_mlp.scripted_opset20": (1, 36)}


# A transformer block around a LaCT layer (its q, k, v, rates and momentum computed by
# the block's projections; the scripted export types them all dynamic): the raised
# graph computes the block.
BLOCKS = {"block_lact.traced": (1, 64), "block_lact.scripted": (2, 40),
          "block_lact.scripted_opset20": (1, 48)}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_the_raised_block_computes_the_model(name, tmp_path):
    raised = tmp_path / "raised.mlir"
    proc = _opt(_path(name), "--ttt-raise-onnx=raise-all", "-o", raised)
    assert proc.returncode == 0, proc.stderr
    assert "raised to ttt.kvb_layer" in proc.stderr, proc.stderr
    B, T = BLOCKS[name]
    x = _inputs(_meta(name), B, T, zlib.crc32(name.encode()))
    got = run_raised_graph(raised.read_text(), _path(name), x, tmp_path)
    assert _rel(got, _run(_path(name), x).astype(np.float64)) <= RTOL


# ViT^3's depth-wise convolution branch (the research code's grouped-convolution form):
# raised to ttt.dwconv_layer, with the batch size and image side its traced export has.
DWCONV = {"vit3_dwconv.traced": (2, 6), "vit3_dwconv.traced_opset20": (2, 6),
          # the same branch written as nine shifted products
          "vit3_dwconv_shift.traced": (1, 6), "vit3_dwconv_shift.traced_opset20": (1, 6)}


def _check_raised_dwconv(name, x, tmp_path):
    raised = tmp_path / "raised.mlir"
    proc = _opt(_path(name), "--ttt-raise-onnx=raise-all", "-o", raised)
    assert proc.returncode == 0, proc.stderr
    text = raised.read_text()
    for needle in ("ttt.dwconv_layer", "kind = dot", "reduction = mean",
                   "clip = frobenius"):
        assert needle in text, needle
    got = run_raised_graph(text, _path(name), x, tmp_path)
    assert _rel(got, _run(_path(name), x).astype(np.float64)) <= RTOL


@pytest.mark.parametrize("name", sorted(DWCONV))
def test_the_raised_dwconv_branch_computes_the_model(name, tmp_path):
    """The raised graph (its ttt.dwconv_layer run by ttt-run's lowering) against
    onnxruntime on the original model, on fresh inputs."""
    B, side = DWCONV[name]
    _check_raised_dwconv(name, _inputs(_meta(name), B, side, zlib.crc32(name.encode())),
                         tmp_path)


# The shifted products scripted: its windows and its mean's h * w are read from the
# shape of the keys at run time, so one raised graph serves every image size.
@pytest.mark.parametrize("name", ["vit3_dwconv_shift.scripted",
                                  "vit3_dwconv_shift.scripted_opset20"])
@pytest.mark.parametrize("B,Hs,Ws", [(1, 6, 6), (2, 5, 7), (1, 9, 4)])
def test_the_raised_scripted_dwconv_branch_computes_the_model(name, B, Hs, Ws, tmp_path):
    seed = zlib.crc32(f"{name}{B}{Hs}{Ws}".encode())
    _check_raised_dwconv(name, _inputs(_meta(name), B, 0, seed, Hs=Hs, Ws=Ws), tmp_path)


@pytest.mark.parametrize("kind", dwconv_mutants.KINDS)
def test_a_scripted_dwconv_branch_computing_something_else_is_left(kind, tmp_path):
    """The scripted branch with a wrong mean or queries of their own size: found, left
    with the reason, and written back node for node."""
    path = dwconv_mutants.write(kind, tmp_path)
    out = tmp_path / "out.onnx"
    proc = _opt(path, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "no ttt.dwconv_layer form: " + dwconv_mutants.REASONS[kind] in proc.stderr, \
        proc.stderr
    assert om.structure(onnx.load(str(out))) == om.structure(onnx.load(str(path)))


@pytest.mark.parametrize("name", sorted(DUAL_FORM))
def test_the_raised_ttt_linear_layer_computes_the_model(name, tmp_path):
    """The whole raised graph (its ttt.kvb_layer run by ttt-run's recurrent lowering)
    against onnxruntime on the original model, on fresh inputs."""
    raised = tmp_path / "raised.mlir"
    proc = _opt(_path(name), "--ttt-raise-onnx=raise-all", "-o", raised)
    assert proc.returncode == 0, proc.stderr
    text = raised.read_text()
    model = ("#ttt.model<kind = mlp, trained = [0, 1, 2, 3], bias = true, "
             "activation = gelu_tanh>" if "mlp" in name
             else "#ttt.model<kind = linear, trained = [0, 1], bias = true>")
    for needle in (model, "kind = layernorm_mse", "order = causal", "token_eta("):
        assert needle in text, needle
    B, T = DUAL_FORM[name]
    x = _inputs(_meta(name), B, T, zlib.crc32(name.encode()))
    got = run_raised_graph(text, _path(name), x, tmp_path)
    assert _rel(got, _run(_path(name), x).astype(np.float64)) <= RTOL


def _weight_norm_as_lp_normalization(model):
    """The base model with its weight norm `W / (colnorm(W) + eps)` written as
    `LpNormalization(W, axis=-2, p=2)` (another exporter's spelling, without the eps):
    every Div whose divisor adds a constant to Sqrt(ReduceSum(.., axes=[-2])) becomes one;
    the nodes left unread go."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    constants.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t)
                      for n in graph.node
                      if n.op_type == "Constant" and n.attribute[0].name == "value"})

    def column_norm(name):
        sqrt = producer.get(name)
        if sqrt is None or sqrt.op_type != "Sqrt":
            return False
        total = producer.get(sqrt.input[0])
        return (total is not None and total.op_type == "ReduceSum" and
                len(total.input) > 1 and list(constants[total.input[1]]) == [-2])

    nodes = []
    for node in graph.node:
        divisor = producer.get(node.input[1]) if node.op_type == "Div" else None
        if divisor is not None and divisor.op_type == "Add" and \
                any(column_norm(i) for i in divisor.input):
            node = onnx.helper.make_node("LpNormalization", [node.input[0]],
                                         list(node.output), name=node.name, axis=-2, p=2)
        nodes.append(node)
    while True:
        read = {i for n in nodes for i in n.input} | {o.name for o in graph.output}
        kept = [n for n in nodes if any(o in read for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model, full_check=True)
    return sum(n.op_type == "LpNormalization" for n in nodes)


def test_v2_on_a_base_model_whose_weight_norm_is_lp_normalization(tmp_path):
    """The weight norm spelled LpNormalization is read as the weight norm: without flags
    the layer is found, named blocked by it and left node for node; the paper's V2 drops
    it and rewrites the layer into the V2 oracle."""
    name = "lact_llm.traced"
    model = onnx.load(str(_path(name)))
    assert _weight_norm_as_lp_normalization(model) > 0
    spelled = tmp_path / "lp.onnx"
    onnx.save(model, str(spelled))
    same = tmp_path / "same.onnx"
    proc = _opt(spelled, "-o", same)
    assert proc.returncode == 0, proc.stderr
    assert "weight normalization after each update" in proc.stderr, proc.stderr
    assert [n.op_type for n in onnx.load(str(same)).graph.node] == \
        [n.op_type for n in model.graph.node]
    out = tmp_path / "v2.onnx"
    proc = _opt(spelled, "-o", out, f"--ttt-simplify={V2}")
    assert proc.returncode == 0, proc.stderr
    assert "weight normalization removed (the paper's Variant 2)" in proc.stderr
    assert "rewritten: after the passes the layer is linear attention" in proc.stderr
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    meta = dict(_meta(name), name=name)
    x = _inputs(meta, 1, 64, 5)
    assert _rel(_run(out, x), _v2_oracle(meta, x)) <= RTOL


NVS_LINEAR = "freeze-inner drop-weight-norm drop-muon"


@pytest.mark.parametrize("name", NVS)
def test_nvs_made_linear_attention_is_full_mask_attention(name, tmp_path):
    """Frozen W0/W2, no weight norm, no Muon: the full-batch step is one full-mask linear
    attention, exported to ONNX and equal to the oracle of those settings, also where q
    and k/v differ in length and at other batch and sequence sizes than exported."""
    out = tmp_path / "linear.onnx"
    proc = _opt(_path(name), "-o", out, f"--ttt-simplify={NVS_LINEAR}")
    assert proc.returncode == 0, proc.stderr
    changed = [line for line in proc.stderr.splitlines() if "model changed" in line]
    assert len(changed) == 3, proc.stderr
    assert "rewritten: after the passes the layer is linear attention" in proc.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    meta = dict(_meta(name), name=name)
    sizes = [(1, 24, 40)] if "traced" in name else [(1, 24, 40), (2, 20, 28), (1, 9, 5)]
    for B, T, Tq in sizes:
        x = _inputs(meta, B, T, zlib.crc32(f"{name}{B}{T}{Tq}".encode()), Tq=Tq)
        # W0/W2 frozen and no weight norm (V2), no Muon either.
        want = _v2_oracle(meta, x, drop=("ns_steps", "ns_coeffs", "ns_eps"))
        err = _rel(_run(out, x), want)
        assert err <= RTOL, f"{name} B={B} T={T} Tq={Tq}: relative error {err:.2e}"
        # The simplification changed the model: the original computes something else.
        assert _rel(_run(_path(name), x), want) > 1e-3


def test_nvs_with_muon_kept_keeps_its_nodes(tmp_path):
    """The paper's V2 on NVS leaves Muon, which transforms the full-batch state: no
    linear-attention form, so the model keeps its nodes and computes what it computed."""
    name = "lact_nvs.scripted"
    out = tmp_path / "kept.onnx"
    proc = _opt(_path(name), "-o", out, f"--ttt-simplify={V2}")
    assert proc.returncode == 0, proc.stderr
    kept = [line for line in proc.stderr.splitlines() if "kept its original nodes" in line]
    assert len(kept) == 1 and "transforms its state" in kept[0], proc.stderr
    x = _inputs(_meta(name), 2, 20, 3, Tq=28)
    assert _rel(_run(out, x), _run(_path(name), x)) <= 1e-6
