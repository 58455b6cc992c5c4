#!/usr/bin/env python3
"""Regenerate the ONNX fixtures of the TTT layer families (test/fixtures/onnx/).

    python3 python/scripts/make_fixtures.py [--out DIR] [--only NAME ...] [--list]

(or `make fixtures`, which first installs python/requirements-models.txt). Needs torch.

For every fixture ``<family>.<export>.onnx`` (export = traced: chunk loop unrolled,
static shapes; scripted: torch.jit.script, chunk loop as an ONNX Loop, dynamic batch and
sequence dimensions) it writes two sidecars next to it. Exports use torch's default
constant folding, which turns expressions of the parameters (W^T, W*W for the weight-norm
radii, W.unsqueeze(0)) into new initializers; a few families are also exported without
it (``<family>.<export>_nofold.onnx``), where the initial fast weights stay the only
initializers and every use of them is explicit. Sidecars:

* ``<family>.<export>.json``: how to check the model with the NumPy oracle of
  test/python/oracle -- the oracle function and keyword arguments, the graph inputs
  (shape with symbolic dims, oracle keyword, distribution of random test values), the
  example dims of the export and further dims to test a scripted model with, and the
  pre/post transforms around the oracle call;
* ``<family>.<export>.npz``: the arrays (initial fast weights in oracle order, LayerNorm
  gamma/beta, token_eta, or a whole block's parameters), float64.

test/python/test_fixtures.py runs every fixture with onnxruntime and compares with the
oracle; it does not need torch. Weights come from fixed seeds, so rerunning this script
reproduces the same arrays (the .onnx bytes may differ between torch versions).

``--research`` builds only the research-spelling fixtures instead (nothing above is
rewritten): the modules of python/ttt/models/research.py (the linear_dot, linear_mse and
lact_v2 math written with preallocated outputs, fast weights as arguments, out x in
weights, einsum/bmm, heads folded into the batch, [B, T, H, D]; TTT-Linear/MLP in
ttt-lm-pytorch's scan over mini-batches), each checked in float64
against its layers.py twin and exported traced with the TorchScript exporter at opset 17
and at torch's default opset and with the dynamo exporter, scripted (an ONNX Loop with
symbolic batch and length) where TorchScript takes the module, plus linear_dot and lact_v2
re-exported at torch's default opset; into test/fixtures/onnx/research/ (see
build_research). test/python/test_research_fixtures.py checks them without torch.

Torch on a CPU-only machine that reaches PyPI but not download.pytorch.org (Debian 12,
Python 3.11; the PyPI wheel is the CUDA one, and its nvidia-* dependencies are needed
even on the CPU because libtorch links libcufile/libcusparseLt/libnvshmem; ~5 GB):

    python3 -m venv build/torchenv --system-site-packages   # sees numpy, onnx, onnxruntime
    build/torchenv/bin/pip install torch onnxscript          # torch 2.15.0, onnxscript 0.7.2
    build/torchenv/bin/python python/scripts/make_fixtures.py --research

(``pip install --no-deps torch`` plus its pure-Python dependencies installs, but
``import torch`` then fails with "libcufile.so.0: cannot open shared object file".
onnxscript is only needed by the dynamo exporter.)
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from ttt.models import (  # noqa: E402
    PlainLinear,
    TinyTTTBlock,
    TTTLinear,
    TTTMLP,
    ViT3DWConv,
    ViT3GLU,
    adapt,
    export_scripted,
    export_traced,
    lact_llm,
    lact_nvs,
    lact_variant,
)

OPSET = 17
MAX_BYTES = 2 * 1024 * 1024

# Distributions of the random test inputs: [kind, a, b] (normal: mean, std; uniform: lo, hi).
DISTS = {
    "q": ["normal", 0.0, 1.0], "k": ["normal", 0.0, 1.0], "v": ["normal", 0.0, 1.0],
    "x": ["normal", 0.0, 1.0], "lr": ["uniform", 0.0, 0.1], "momentum": ["uniform", 0.0, 1.0],
}
SEQ = {0: "B", 2: "T"}
# The LaCT fixtures use chunk 16 > d = 8 so that every chunk update has full rank: Muon's
# Newton-Schulz iteration amplifies the rounding noise in the null space of a
# rank-deficient update ~500x, which would put fp32 runs ~1e-5 away from the float64
# oracle (real LaCT has C = 2048 >> d).


class Fixture:
    def __init__(self, family: str, make: Callable[[], torch.nn.Module], dims: Dict[str, int],
                 axes: Dict[str, Dict[int, str]], test_dims: List[Dict[str, int]],
                 exports=("traced", "scripted"), note: str = "", nofold: bool = False):
        self.family = family
        self.make = make
        self.dims = dims            # example dims of the export
        self.axes = axes            # dynamic axes per input (the scripted export keeps them)
        self.test_dims = test_dims  # extra dims to test a scripted export with
        self.exports = exports
        self.note = note
        self.nofold = nofold        # also export without constant folding (*_nofold)


def _lact_axes(names):
    return {n: dict(SEQ) for n in names}


FIXTURES: List[Fixture] = [
    Fixture("lact_llm", lambda: lact_llm(heads=2, d=8, d_hidden=16, chunk=16, seed=1),
            {"B": 1, "T": 64}, _lact_axes(["q", "k", "v", "lr", "momentum"]),
            [{"B": 2, "T": 56}, {"B": 1, "T": 7}], nofold=True,
            note="LaCT-LLM: SwiGLU W0/W1/W2 trained, per-token lr [B,H,T,3], momentum, "
                 "Muon (LaCT table), weight norm, apply-then-update, chunk 16"),
]
for _n, _desc in enumerate(["W1 only", "+ no weight norm", "+ single linear layer",
                            "+ no per-token lr", "+ no momentum", "+ no Muon"], start=1):
    _inputs = ["q", "k", "v"] + (["lr"] if _n < 4 else []) + (["momentum"] if _n < 5 else [])
    FIXTURES.append(Fixture(
        f"lact_v{_n}", (lambda n=_n: lact_variant(n, heads=2, d=8, d_hidden=16, chunk=16,
                                                   seed=1 + n)),
        {"B": 1, "T": 64}, _lact_axes(_inputs), [{"B": 2, "T": 56}], nofold=_n == 2,
        note=f"LaCT-LLM Table 2 variant V{_n} (cumulative: {_desc})"))
FIXTURES += [
    Fixture("lact_nvs", lambda: lact_nvs(heads=1, d=16, d_hidden=32, seed=10),
            {"B": 1, "T": 24, "Tq": 40},
            {"q": {0: "B", 2: "Tq"}, "k": dict(SEQ), "v": dict(SEQ), "lr": dict(SEQ)},
            [{"B": 2, "T": 20, "Tq": 28}],
            note="LaCT-NVS: one full-batch update on k/v (lr, Muon NVS coefficients, "
                 "weight norm), then apply to all queries"),
    Fixture("vit3_glu", lambda: ViT3GLU(2, 16, seed=11), {"B": 1, "T": 36},
            _lact_axes(["q", "k", "v"]), [{"B": 2, "T": 49}],
            note="ViT^3 GLU branch: full batch, dot loss scale/N, column clip"),
    Fixture("vit3_dwconv", lambda: ViT3DWConv(8, impl="conv", seed=12),
            {"B": 2, "Hs": 6, "Ws": 6}, {n: {0: "B", 2: "Hs", 3: "Ws"} for n in "qkv"}, [],
            exports=("traced",),
            note="ViT^3 3x3 depth-wise conv branch, grouped-conv form (groups = B*C, so "
                 "traced only)"),
    Fixture("vit3_dwconv_shift", lambda: ViT3DWConv(8, impl="shift", seed=12),
            {"B": 1, "Hs": 6, "Ws": 6}, {n: {0: "B", 2: "Hs", 3: "Ws"} for n in "qkv"},
            [{"B": 2, "Hs": 5, "Ws": 7}],
            note="ViT^3 3x3 depth-wise conv branch, nine-shifted-products form"),
    Fixture("ttt_linear", lambda: TTTLinear(2, 16, chunk=8, seed=13), {"B": 1, "T": 40},
            _lact_axes(["q", "k", "v", "lr"]), [{"B": 2, "T": 36}],
            note="TTT-Linear (ttt-lm-pytorch dual form): LayerNorm-MSE, bias, token_eta x lr, "
                 "target v - k, output q + LN(Z)"),
    Fixture("ttt_mlp", lambda: TTTMLP(2, 8, chunk=8, seed=14), {"B": 1, "T": 40},
            _lact_axes(["q", "k", "v", "lr"]), [{"B": 2, "T": 36}],
            note="TTT-MLP (ttt-lm-pytorch dual form, gelu_tanh, hidden 4f)"),
    Fixture("linear_dot", lambda: PlainLinear(2, 16, 16, loss="dot", order="update_then_apply",
                                              chunk=8, seed=15),
            {"B": 1, "T": 36}, _lact_axes(["q", "k", "v"]), [{"B": 2, "T": 24}],
            note="linear fast weight, dot loss, update-then-apply, partial last chunk"),
    Fixture("linear_mse", lambda: PlainLinear(2, 16, 16, loss="mse", order="apply_then_update",
                                              chunk=8, use_lr=True, reduction="mean",
                                              seed=16),
            {"B": 1, "T": 40}, _lact_axes(["q", "k", "v", "lr"]), [{"B": 2, "T": 36}],
            note="linear fast weight, MSE loss (mean over the chunk), per-token lr, "
                 "apply-then-update"),
    Fixture("block_lact", lambda: TinyTTTBlock(d_model=32, heads=4, chunk=16, seed=17),
            {"B": 1, "T": 64}, {"x": {0: "B", 1: "T"}}, [{"B": 2, "T": 56}],
            note="LayerNorm -> fused q/k/v Linear -> causal softmax attention + LaCT-LLM "
                 "layer (lr/momentum from Linear+softplus/sigmoid) -> o_proj -> LN + GELU MLP"),
]
# The same block around layers that are linear attention: the compiler must find the
# layer among the block's other products (softmax attention, projections, MLP), whose
# q/k/v it computes, rewrite it and leave the rest.
for _n, _desc in [(4, "V4: momentum from sigmoid(Linear), Muon"), (6, "V6: plain")]:
    FIXTURES.append(Fixture(
        f"block_v{_n}",
        (lambda n=_n: TinyTTTBlock(d_model=16, heads=2, chunk=16, seed=17 + n, ttt=lact_variant(
            n, heads=2, d=8, d_hidden=8, chunk=16, seed=18 + n))),
        {"B": 1, "T": 64}, {"x": {0: "B", 1: "T"}}, [{"B": 2, "T": 56}],
        note=f"the block_lact block around LaCT-LLM Table 2 {_desc}"))


def _dump(obj: Any, indent: int = 0) -> str:
    """JSON with one key per line and lists of scalars kept on one line."""
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad}{json.dumps(k)}: {_dump(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(obj, (list, tuple)):
        if all(not isinstance(x, (dict, list, tuple)) for x in obj):
            return json.dumps(list(obj))
        if all(isinstance(x, (list, tuple)) and all(not isinstance(y, (dict, list, tuple))
                                                   for y in x) for x in obj):
            return "[" + ", ".join(json.dumps(list(x)) for x in obj) + "]"
        items = [pad + _dump(x, indent + 1) for x in obj]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(obj)


def _shape_of(shape: List[int], axes: Dict[int, str]) -> List[Any]:
    return [axes.get(i, d) for i, d in enumerate(shape)]


def _input_shapes(module, dims):
    if isinstance(module, TinyTTTBlock):
        return {"x": [dims["B"], dims["T"], module.d_model]}
    if isinstance(module, ViT3DWConv):
        C = module.w.shape[0]
        return {n: [dims["B"], C, dims["Hs"], dims["Ws"]] for n in "qkv"}
    return module.input_shapes(dims["B"], dims["T"], dims.get("Tq"))


def _spec(module):
    if isinstance(module, TinyTTTBlock):
        spec = module.reference_spec()
        return {"layer": "block", "block": spec["config"]}, spec["params"], [], []
    spec = module.oracle_spec()
    arrays = dict(spec["weights"])
    arrays.update(spec["arrays"])
    side = {"layer": spec["layer"], "oracle_kwargs": spec["kwargs"],
            "oracle_inputs": spec["inputs"], "pre": spec["pre"], "post": spec["post"]}
    return side, arrays, list(spec["weights"]), list(spec["arrays"])


def build(fx: Fixture, export: str, out: Path, seed: int = 0,
          fold: bool = True) -> Dict[str, Any]:
    torch.manual_seed(seed)
    module = fx.make().eval()
    names = list(getattr(module, "input_names"))
    shapes = _input_shapes(module, fx.dims)
    gen = torch.Generator().manual_seed(seed)
    example = []
    for n in names:
        kind, a, b = DISTS[n]
        t = torch.rand(*shapes[n], generator=gen) * (b - a) + a if kind == "uniform" else \
            torch.randn(*shapes[n], generator=gen) * b + a
        example.append(t)
    stem = f"{fx.family}.{export}" + ("" if fold else "_nofold")
    path = out / f"{stem}.onnx"
    if export == "traced":
        export_traced(module, example, path, OPSET, input_names=names,
                      do_constant_folding=fold)
        axes: Dict[str, Dict[int, str]] = {}
        test_dims: List[Dict[str, int]] = []
    else:
        axes = {n: fx.axes[n] for n in names}
        export_scripted(module, example, path, OPSET, input_names=names, dynamic_axes=axes,
                        do_constant_folding=fold)
        test_dims = fx.test_dims
    size = path.stat().st_size
    if size >= MAX_BYTES:
        raise SystemExit(f"{path}: {size} bytes, over the 2 MB fixture limit")

    side, arrays, weight_keys, array_keys = _spec(module)
    oracle_inputs = side.pop("oracle_inputs", {n: n for n in names})
    meta = {
        "name": stem,
        "family": fx.family,
        "export": export,
        "constant_folding": fold,
        "description": fx.note,
        "opset": OPSET,
        **side,
        "weights": weight_keys,
        "arrays": array_keys,
        "inputs": [{"name": n, "shape": _shape_of(shapes[n], axes.get(n, {})),
                    "oracle": oracle_inputs.get(n, n), "dist": DISTS[n]} for n in names],
        "outputs": ["o"],
        "dims": fx.dims,
        "test_dims": test_dims,
        "generator": "python/scripts/make_fixtures.py",
        "torch": torch.__version__,
    }
    np.savez_compressed(out / f"{stem}.npz", **{k: np.asarray(v, np.float64)
                                               for k, v in arrays.items()})
    (out / f"{stem}.json").write_text(_dump(meta) + "\n")
    return {"name": stem, "bytes": size}


# ------------------------------------------------------------------ research spellings

RESEARCH_DIR = ROOT / "test" / "fixtures" / "onnx" / "research"
RESEARCH_B = 2          # batch of the research fixtures (heads folded into it must show)
RESEARCH_MAX_BYTES = 200 * 1024
# Distributions of the inputs that only research modules have.
RESEARCH_DISTS = {
    "w": ["normal", 0.0, 0.25], "w0": ["normal", 0.0, 0.5], "w1": ["normal", 0.0, 0.25],
    "w2": ["normal", 0.0, 0.5], "lr1": ["uniform", 0.0, 0.1],
    "momentum": ["uniform", 0.0, 1.0], "XQ": ["normal", 0.0, 1.0], "XK": ["normal", 0.0, 1.0],
    "XV": ["normal", 0.0, 1.0], "ttt_lr": ["uniform", 0.0, 0.1],
}
# The twins re-exported at torch's default opset (<family>.traced_opset<N>).
# The scripted exports (an ONNX Loop over chunks) re-exported at the default opset.
SCRIPTED_OPSET_TWINS = ("block_lact", "lact_llm", "lact_nvs", "lact_v1", "lact_v2",
                        "lact_v3", "lact_v4", "lact_v5", "lact_v6", "linear_dot",
                        "linear_mse", "ttt_linear", "ttt_mlp", "vit3_dwconv_shift",
                        "vit3_glu")
# Every traced family.
OPSET_TWINS = ("block_lact", "lact_llm", "lact_nvs", "lact_v1", "lact_v2", "lact_v3",
               "lact_v4", "lact_v5", "lact_v6", "linear_dot", "linear_mse", "ttt_linear", "ttt_mlp",
               "vit3_dwconv", "vit3_dwconv_shift", "vit3_glu")
SPELLINGS = {
    "a": "preallocated output buffer, in-place chunk writes o[:, :, s:e] = o_c",
    "b": "fast weights passed as forward arguments (graph inputs), not parameters",
    "c": "weights stored out x in, applied as W @ x^T (transposed back) or x @ W^T",
    "d": "torch.einsum / torch.bmm",
    "e": "heads folded into the batch ([B*H, T, D])",
    "f": "[B, T, H, D] layout",
    "g": "ttt-lm-pytorch scan: mini-batches of a [N, B, H, C, D] reshape taken by index, "
         "outputs written into a torch.empty buffer (out[i] = y)",
    "h": "input and target views' tokens in one sequence: the step reads a prefix, the "
         "output the rest (LaCT-NVS's ttt_ua_order); per-weight rates lr.chunk(3, -1)",
    "i": "chunk views: x.reshape(B, H, N, C, D) read by index x[:, :, n], outputs stacked "
         "and viewed back; the step written on the product's factors, "
         "(s * k_c^T) @ (r * v_c)",
}


def default_opset() -> int:
    """torch.onnx.export's default opset (20 in torch 2.15)."""
    from torch.onnx import _constants
    return int(_constants.ONNX_DEFAULT_OPSET)


def _fixture(family: str) -> Fixture:
    return next(fx for fx in FIXTURES if fx.family == family)


def _random_inputs(names, shapes, dists, seed: int = 0) -> Dict[str, torch.Tensor]:
    """Inputs drawn as build() draws them (one generator, in input order)."""
    gen = torch.Generator().manual_seed(seed)
    x = {}
    for n in names:
        kind, a, b = dists[n]
        x[n] = torch.rand(*shapes[n], generator=gen) * (b - a) + a if kind == "uniform" \
            else torch.randn(*shapes[n], generator=gen) * b + a
    return x


def _strip_metadata(path: Path) -> None:
    """Drops the dynamo exporter's per-node metadata (stack traces, scopes), which
    only makes the file bigger."""
    import onnx
    model = onnx.load(str(path))
    for node in model.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    onnx.save(model, str(path))


def _export_dynamo(module, args, path: Path, opset: int, names) -> Optional[int]:
    """The dynamo exporter; returns the opset of the written model (it may stay at 18
    when asked for 17 and its version conversion fails), None if the export failed."""
    import contextlib
    import io
    import warnings

    import onnx
    from ttt.models.export import _finish
    try:
        with warnings.catch_warnings(), torch.no_grad(), \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(args), str(path), dynamo=True, opset_version=opset,
                              input_names=list(names), output_names=["o"],
                              external_data=False)
    except Exception as e:  # noqa: BLE001 - reported, the fixture is left out
        print(f"  dynamo export of {path.name} failed: {type(e).__name__}: {e}"[:300])
        return None
    got = next(o.version for o in onnx.load(str(path)).opset_import if o.domain in ("", "ai.onnx"))
    _strip_metadata(path)
    _finish(path, got)
    return got


def _write_sidecars(out: Path, stem: str, meta: Dict[str, Any],
                    arrays: Dict[str, np.ndarray], values: Dict[str, np.ndarray]) -> None:
    """`arrays` (oracle weights) as float64 like build() writes them; `values` (the
    example inputs and torch's outputs) as the float32 they are."""
    np.savez_compressed(out / f"{stem}.npz",
                        **{k: np.asarray(v, np.float64) for k, v in arrays.items()},
                        **{k: np.asarray(v, np.float32) for k, v in values.items()})
    (out / f"{stem}.json").write_text(_dump(meta) + "\n")


def _check_size(path: Path) -> int:
    size = path.stat().st_size
    if size >= RESEARCH_MAX_BYTES:
        raise SystemExit(f"{path}: {size} bytes, over the {RESEARCH_MAX_BYTES} byte limit")
    return size


RESEARCH_EXPORTS = ("traced", "dynamo", "scripted")


def _scripted_axes(names, args, dims) -> Dict[str, Dict[int, str]]:
    """Symbolic batch and length for a scripted research export: axis 0 of an input
    as long as the batch is "B", its first later axis as long as the sequence "T"."""
    axes = {}
    for n, a in zip(names, args):
        ax = {0: "B"} if a.shape[0] == dims["B"] else {}
        for d in range(1, a.dim()):
            if a.shape[d] == dims["T"]:
                ax[d] = "T"
                break
        axes[n] = ax
    return axes


def build_research(out: Path = RESEARCH_DIR, only: Optional[List[str]] = None,
                   exports: Sequence[str] = RESEARCH_EXPORTS) -> List[Dict[str, Any]]:
    """Every module of ttt.models.research, traced: TorchScript exporter at opset 17
    and at the default opset (``traced_opset<N>``), dynamo exporter at the default
    opset and, where its conversion to 17 succeeds, at 17 (``dynamo_opset<N>``); and
    scripted (``torch.jit.script``, the chunk loop an ONNX Loop, batch and length
    symbolic) at opset 17 (``scripted_opset17``) where the module scripts.
    `exports` picks among these.

    Each module is built from its twin in layers.py (the fixture of FIXTURES with the
    same family, batch RESEARCH_B) and must equal it in float64 (relative 1e-12) on the
    example inputs before it is exported. Sidecars: ``.npz`` with the inputs (by graph
    input name) and torch's output ``o``, float32 (what torch and onnxruntime see);
    ``.json`` with the spellings, the twin, the exporter, input shapes and
    distributions for fresh random inputs. With `only`, just the research modules (names
    of RESEARCH) and twins (family names) it lists."""
    from ttt.models.research import RESEARCH

    def wanted(name: str) -> bool:
        return not only or name in only

    out.mkdir(parents=True, exist_ok=True)
    results = []
    dflt = default_opset()
    for name, (family, spellings, make, to_inputs, to_twin) in RESEARCH.items():
        if not wanted(name):
            continue
        fx = _fixture(family)
        dims = {**fx.dims, "B": RESEARCH_B}
        torch.manual_seed(0)
        twin = fx.make().eval()
        shapes = twin.input_shapes(dims["B"], dims["T"], dims.get("Tq"))
        x = _random_inputs(twin.input_names, shapes, DISTS)
        module = make(twin).eval()
        xi = to_inputs(twin, x)
        names = list(module.input_names)
        args = [xi[n].contiguous() for n in names]
        # float64 check against the twin
        with torch.no_grad():
            want = twin.double()(*[x[n].double() for n in twin.input_names])
            got = to_twin(twin, module.double()(*[a.double() for a in args]))
            twin.float()
            module.float()
            err = float((got - want).abs().max() / want.abs().max())
            if err > 1e-12:
                raise SystemExit(f"research {name}: differs from its twin {family} by {err:.3g}")
            o = module(*args)
        doc = (type(module).__doc__ or "").strip()
        base = {
            "family": f"research_{name}",
            "twin": family,
            "twin_fixture": f"{family}.traced",
            "twin_max_relative_error_f64": err,
            "spellings": spellings.split(","),
            "spelling_text": [SPELLINGS[c] for c in spellings.split(",")],
            "module": f"ttt.models.research.{type(module).__name__}",
            "description": " ".join(doc.split()),
            "inputs": [{"name": n, "shape": list(xi[n].shape),
                        "dist": RESEARCH_DISTS[n] if n in RESEARCH_DISTS and n not in DISTS
                        else DISTS.get(n, RESEARCH_DISTS.get(n))} for n in names],
            "outputs": ["o"],
            "output_shapes": [list(o.shape)],
            "dims": dims,
            "generator": "python/scripts/make_fixtures.py --research",
            "torch": torch.__version__,
        }
        values = {n: xi[n].numpy() for n in names}
        values["o"] = o.numpy()
        variants = [("traced", False, OPSET), ("traced", False, dflt), ("dynamo", True, dflt),
                    ("dynamo", True, OPSET), ("scripted", False, OPSET)]
        for export, dynamo, opset in variants:
            if export not in exports:
                continue
            stem = f"research_{name}.{export}_opset{opset}"
            path = out / f"{stem}.onnx"
            if dynamo:
                got_opset = _export_dynamo(module, args, path, opset, names)
                if got_opset != opset:
                    print(f"  {stem}: dynamo wrote opset {got_opset}, not {opset}; left out")
                    path.unlink(missing_ok=True)
                    continue
            elif export == "scripted":
                try:
                    export_scripted(module, args, path, opset, input_names=names,
                                    dynamic_axes=_scripted_axes(names, args, dims))
                except Exception as error:  # noqa: BLE001 - TorchScript refuses the module
                    print(f"  {stem}: not scriptable ({type(error).__name__}); left out")
                    path.unlink(missing_ok=True)
                    continue
            else:
                export_traced(module, args, path, opset, input_names=names)
            import onnx
            meta = {"name": stem, **base, "export": export,
                    "exporter": "dynamo" if dynamo else "torchscript",
                    "constant_folding": True, "opset": opset,
                    "ir_version": onnx.load(str(path)).ir_version}
            _write_sidecars(out, stem, meta, {}, values)
            results.append({"name": stem, "bytes": _check_size(path)})
    if "traced" not in exports:
        return results
    for family in filter(wanted, OPSET_TWINS):
        results.append(build_opset_twin(_fixture(family), dflt, out))
    for family in filter(wanted, SCRIPTED_OPSET_TWINS):
        results.append(build_opset_twin(_fixture(family), dflt, out, "scripted"))
    return results


def build_opset_twin(fx: Fixture, opset: int, out: Path = RESEARCH_DIR,
                     export: str = "traced") -> Dict[str, Any]:
    """``<family>.traced_opset<N>``: the traced fixture exported again at `opset`, with
    the same module, inputs and sidecar as build() writes (so that test_fixtures.py could
    check it against the oracle too; its float64 oracle arrays are in the .npz), plus
    the example inputs and torch's output (float32) in the .npz and the name of its
    opset-17 twin."""
    torch.manual_seed(0)
    module = fx.make().eval()
    names = list(module.input_names)
    shapes = _input_shapes(module, fx.dims)
    x = _random_inputs(names, shapes, DISTS)
    stem = f"{fx.family}.{export}_opset{opset}"
    path = out / f"{stem}.onnx"
    out.mkdir(parents=True, exist_ok=True)
    if export == "traced":
        export_traced(module, [x[n] for n in names], path, opset, input_names=names)
    else:
        export_scripted(module, [x[n] for n in names], path, opset, input_names=names,
                        dynamic_axes={n: fx.axes[n] for n in names})
    with torch.no_grad():
        # The exporters call the module through adapt(), which maps the inputs by name
        # (lact_v4 takes momentum but no lr, which forward lists first).
        o = adapt(module)(*[x[n] for n in names])
    side, arrays, weight_keys, array_keys = _spec(module)
    oracle_inputs = side.pop("oracle_inputs", {n: n for n in names})
    import onnx
    meta = {
        "name": stem, "family": fx.family, "export": export, "exporter": "torchscript",
        "constant_folding": True, "description": fx.note, "opset": opset,
        "ir_version": onnx.load(str(path)).ir_version, "twin_fixture": f"{fx.family}.{export}",
        **side, "weights": weight_keys, "arrays": array_keys,
        "inputs": [{"name": n, "shape": shapes[n], "oracle": oracle_inputs.get(n, n),
                    "dist": DISTS[n]} for n in names],
        "outputs": ["o"], "output_shapes": [list(o.shape)], "dims": fx.dims, "test_dims": [],
        "generator": "python/scripts/make_fixtures.py --research", "torch": torch.__version__,
    }
    values = {n: x[n].numpy() for n in names}
    values["o"] = o.numpy()
    _write_sidecars(out, stem, meta, arrays, values)
    return {"name": stem, "bytes": _check_size(path)}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "test" / "fixtures" / "onnx")
    ap.add_argument("--only", nargs="*",
                    help="families to build (default: all); with --research, research modules "
                         "(e.g. ttt_linear_scan) and re-exported families")
    ap.add_argument("--list", action="store_true", help="list the fixtures and exit")
    ap.add_argument("--no-constant-folding", action="store_true",
                    help="export every fixture without constant folding")
    ap.add_argument("--research", action="store_true",
                    help="build only the research-spelling fixtures and the opset re-exports "
                         "(test/fixtures/onnx/research/, or --out); the others are untouched")
    ap.add_argument("--exports", nargs="*", choices=RESEARCH_EXPORTS,
                    default=list(RESEARCH_EXPORTS),
                    help="with --research, the exporters to run (default: all; the opset "
                         "re-exports come with 'traced')")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.research:
        out = args.out if "--out" in (argv if argv is not None else sys.argv) else RESEARCH_DIR
        for r in build_research(out, args.only, args.exports):
            print(f"{r['name']:56s} {r['bytes']:8d} bytes")
        return 0
    if args.list:
        for fx in FIXTURES:
            print(f"{fx.family:20s} {','.join(fx.exports):16s} {fx.note}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for fx in FIXTURES:
        if args.only and fx.family not in args.only:
            continue
        for export in fx.exports:
            folds = [False] if args.no_constant_folding else [True] + ([False] if fx.nofold
                                                                      else [])
            for fold in folds:
                r = build(fx, export, args.out, fold=fold)
                print(f"{r['name']:32s} {r['bytes']:8d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
