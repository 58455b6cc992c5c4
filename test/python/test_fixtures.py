"""The committed ONNX fixtures of the TTT layer families against the NumPy oracle.

test/fixtures/onnx/<family>.<traced|scripted>.onnx are PyTorch exports of the reference
layers in python/ttt/models (regenerate with `make fixtures`); each comes with a JSON
sidecar (oracle function and keyword arguments, graph inputs, dims) and an NPZ of the
arrays (initial fast weights etc.). For every fixture this runs the model with
onnxruntime on fresh random float32 inputs and compares it with test/python/oracle
(float64): max |onnx - oracle| / max |oracle| <= 1e-5. That checks the fixtures and the
oracle against each other, independently of the compiler. Needs onnx and onnxruntime,
not torch.

Run from the repository root: python3 -m pytest -q test/python/test_fixtures.py
"""

import json
import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import dwconv_layer, kvb_layer  # noqa: E402

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"
FIXTURES = sorted(p.name[: -len(".onnx")] for p in FIXTURE_DIR.glob("*.onnx"))
MAX_BYTES = 2 * 1024 * 1024
RTOL = 1e-5

# Every family the fixture script makes, and whether it also has a scripted export.
FAMILIES = {
    "lact_llm": True, "lact_v1": True, "lact_v2": True, "lact_v3": True, "lact_v4": True,
    "lact_v5": True, "lact_v6": True, "lact_nvs": True, "vit3_glu": True,
    "vit3_dwconv": False, "vit3_dwconv_shift": True, "ttt_linear": True, "ttt_mlp": True,
    "linear_dot": True, "linear_mse": True, "block_lact": True, "block_v4": True,
    "block_v6": True,
}


def _meta(name):
    return json.loads((FIXTURE_DIR / f"{name}.json").read_text())


def _arrays(name):
    with np.load(FIXTURE_DIR / f"{name}.npz") as z:
        return {k: z[k] for k in z.files}


_SESSIONS = {}


def _session(name):
    if name not in _SESSIONS:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        _SESSIONS[name] = ort.InferenceSession(str(FIXTURE_DIR / f"{name}.onnx"), opts,
                                               providers=["CPUExecutionProvider"])
    return _SESSIONS[name]


def _inputs(meta, dims, rng):
    out = {}
    for spec in meta["inputs"]:
        shape = [dims[d] if isinstance(d, str) else d for d in spec["shape"]]
        kind, a, b = spec["dist"]
        if kind == "normal":
            x = rng.normal(a, b, shape)
        elif kind == "uniform":
            x = rng.uniform(a, b, shape)
        else:
            raise ValueError(f"unknown distribution {kind}")
        out[spec["name"]] = x.astype(np.float32)
    return out


# ------------------------------------------------------------------ NumPy references


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _silu(z):
    return z * _sigmoid(z)


def _gelu_tanh(z):
    return 0.5 * z * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z**3)))


def _layer_ref(meta, arrays, x):
    """The oracle's output for a single-layer fixture, inputs x (float64)."""
    ins = {spec["oracle"]: x[spec["name"]].astype(np.float64) for spec in meta["inputs"]}
    if meta["pre"].get("v_minus_k"):
        ins["v"] = ins["v"] - ins["k"]
    q, k, v = ins.pop("q"), ins.pop("k"), ins.pop("v")
    if meta["layer"] == "kvb_layer":
        weights = [arrays[n] for n in meta["weights"]]
        extra = {n: arrays[n] for n in meta["arrays"]}
        o, _ = kvb_layer(q, k, v, weights, **ins, **extra, **meta["oracle_kwargs"])
    elif meta["layer"] == "dwconv_layer":
        (w,) = [arrays[n] for n in meta["weights"]]
        o, _ = dwconv_layer(q, k, v, w, **meta["oracle_kwargs"])
    else:
        raise ValueError(f"unknown layer {meta['layer']}")
    if meta["post"].get("residual_q"):
        o = o + q
    return o


def _block_ref(meta, P, x):
    """TinyTTTBlock (python/ttt/models/blocks.py) in NumPy, the TTT layer by the oracle."""
    cfg = meta["block"]
    D, H = cfg["d_model"], cfg["heads"]
    d = D // H
    x = x["x"].astype(np.float64)
    B, T, _ = x.shape

    def ln(z, name):
        mu = z.mean(-1, keepdims=True)
        var = ((z - mu) ** 2).mean(-1, keepdims=True)
        return (z - mu) / np.sqrt(var + cfg["ln_eps"]) * P[f"{name}.weight"] + P[f"{name}.bias"]

    def lin(z, name):
        return z @ P[f"{name}.weight"].T + P[f"{name}.bias"]

    def l2n(z):
        return z / (np.sqrt((z * z).sum(-1, keepdims=True)) + cfg["l2_eps"])

    h = ln(x, "ln1")
    q, k, v = lin(h, "qkv").reshape(B, T, 3, H, d).transpose(2, 0, 3, 1, 4)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    o_attn = (p / p.sum(-1, keepdims=True)) @ v
    kw = {}
    if "lr" in cfg["ttt_inputs"]:
        kw["lr"] = np.logaddexp(0.0, lin(h, "lr_proj")).reshape(B, T, H, 3).transpose(0, 2, 1, 3)
    if "momentum" in cfg["ttt_inputs"]:
        kw["momentum"] = _sigmoid(lin(h, "m_proj")).transpose(0, 2, 1)
    o_ttt, _ = kvb_layer(l2n(_silu(q)), l2n(_silu(k)), _silu(v),
                         [P[n] for n in cfg["ttt_weights"]], **kw, **cfg["ttt_kwargs"])
    o = (o_attn + o_ttt).transpose(0, 2, 1, 3).reshape(B, T, D)
    x = x + lin(o, "o_proj")
    return x + lin(_gelu_tanh(lin(ln(x, "ln2"), "fc1")), "fc2")


# ------------------------------------------------------------------ tests


def test_fixture_set_is_complete():
    assert FIXTURES, f"no fixtures in {FIXTURE_DIR}"
    want = {f"{fam}.traced" for fam in FAMILIES}
    want |= {f"{fam}.scripted" for fam, scripted in FAMILIES.items() if scripted}
    assert want <= set(FIXTURES), f"missing fixtures: {sorted(want - set(FIXTURES))}"
    for name in FIXTURES:
        assert (FIXTURE_DIR / f"{name}.json").is_file(), f"{name}: no JSON sidecar"
        assert (FIXTURE_DIR / f"{name}.npz").is_file(), f"{name}: no NPZ sidecar"


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_is_valid_onnx(name):
    path = FIXTURE_DIR / f"{name}.onnx"
    assert path.stat().st_size < MAX_BYTES, f"{name}: {path.stat().st_size} bytes"
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    meta = _meta(name)
    opsets = {o.domain: o.version for o in model.opset_import}
    assert opsets.get("", opsets.get("ai.onnx")) == meta["opset"]
    assert model.ir_version <= 8  # the compiler's reader (ONNX 1.12) reads IR <= 8
    assert [i.name for i in model.graph.input] == [s["name"] for s in meta["inputs"]]
    assert [o.name for o in model.graph.output] == meta["outputs"]
    ops = {n.op_type for n in model.graph.node}
    if meta["export"] == "scripted" and meta["layer"] != "block" and "chunk" in meta.get(
            "oracle_kwargs", {}):
        assert "Loop" in ops, f"{name}: a scripted chunked layer should carry an ONNX Loop"
    if meta["export"] == "traced":
        assert "Loop" not in ops, f"{name}: a traced export unrolls the chunk loop"


def _dims_cases():
    cases = []
    for name in FIXTURES:
        meta = _meta(name)
        for i, dims in enumerate([meta["dims"]] + list(meta.get("test_dims", []))):
            cases.append(pytest.param(name, dims, id=f"{name}-{i}"))
    return cases


@pytest.mark.parametrize("name,dims", _dims_cases())
def test_fixture_matches_oracle(name, dims):
    meta = _meta(name)
    arrays = _arrays(name)
    rng = np.random.default_rng(zlib.crc32(f"{name}{sorted(dims.items())}".encode()))
    x = _inputs(meta, dims, rng)
    (got,) = _session(name).run(meta["outputs"], x)
    want = _block_ref(meta, arrays, x) if meta["layer"] == "block" else _layer_ref(meta, arrays, x)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != oracle {want.shape}"
    assert np.all(np.isfinite(got))
    scale = np.abs(want).max()
    err = np.abs(got.astype(np.float64) - want).max() / scale
    assert err <= RTOL, f"{name} {dims}: relative error {err:.3e} > {RTOL:g} (max |o| {scale:.3g})"


# ------------------------------------------------------------------ torch (optional)

# (id, factory(models module) -> layer, B, T, Tq): knob combinations beyond the fixtures.
TORCH_CASES = [
    ("lact_w0w2_only_no_lr", lambda M: M.LaCTSwiGLU(2, 8, 16, 8, chunk=6, trained=(0, 2),
                                                     use_lr=False, use_momentum=False,
                                                     ns_coeffs=()), 2, 20, None),
    ("lact_w1_momentum_no_muon", lambda M: M.LaCTSwiGLU(2, 8, 16, 8, chunk=5, trained=(1,),
                                                         ns_coeffs=(), weight_norm=False),
     1, 23, None),
    ("lact_rect_muon", lambda M: M.LaCTSwiGLU(1, 6, 16, 10, chunk=8), 2, 30, None),
    ("lact_short_sequence", lambda M: M.lact_llm(heads=2, d=8, d_hidden=8, chunk=16), 1, 16,
     None),
    ("lact_linear_wn", lambda M: M.LaCTLinear(2, 8, 6, chunk=4, weight_norm=True), 1, 18, None),
    ("nvs_v2", lambda M: M.LaCTSwiGLU(1, 8, 16, 8, full_batch=True, trained=(1,),
                                       use_momentum=False, weight_norm=False,
                                       ns_coeffs=M.NVS_NS_COEFFS), 2, 12, 20),
    ("linear_dot_lr_mean", lambda M: M.PlainLinear(2, 8, 4, loss="dot", use_lr=True,
                                                    reduction="mean", lr_scale=0.5, chunk=5),
     2, 17, None),
    ("linear_mse_update_first", lambda M: M.PlainLinear(1, 8, 8, loss="mse", chunk=4,
                                                         order="update_then_apply"), 1, 14, None),
    ("ttt_linear_plain", lambda M: M.TTTLinear(2, 8, chunk=4, v_minus_k=False,
                                               residual_q=False), 2, 14, None),
    ("ttt_mlp_partial", lambda M: M.TTTMLP(1, 4, chunk=8), 1, 20, None),
    ("vit3_glu_other_scale", lambda M: M.ViT3GLU(3, 8, scale=0.7), 2, 10, None),
]


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_torch_reference_matches_oracle_float64(case):
    try:
        import torch
    except (ImportError, OSError) as e:  # not installed, or a broken install
        pytest.skip(f"torch is not importable: {e}")
    root = str(Path(__file__).resolve().parents[2] / "python")
    if root not in sys.path:
        sys.path.insert(0, root)
    import ttt.models as M

    _, make, B, T, Tq = case
    layer = make(M).double().eval()
    shapes = layer.input_shapes(B, T, Tq)
    rng = np.random.default_rng(zlib.crc32(case[0].encode()))
    x = {}
    for n in layer.input_names:
        x[n] = (rng.uniform(0.0, 0.2, shapes[n]) if n in ("lr", "momentum")
                else rng.standard_normal(shapes[n]))
    with torch.no_grad():
        got = layer(**{n: torch.from_numpy(a) for n, a in x.items()}).numpy()
    spec = layer.oracle_spec()
    meta = {"layer": spec["layer"], "oracle_kwargs": spec["kwargs"], "pre": spec["pre"],
            "post": spec["post"], "weights": list(spec["weights"]), "arrays": list(spec["arrays"]),
            "inputs": [{"name": n, "oracle": spec["inputs"][n]} for n in layer.input_names]}
    want = _layer_ref(meta, {**spec["weights"], **spec["arrays"]}, x)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err <= 1e-10, f"{case[0]}: relative error {err:.3e}"
