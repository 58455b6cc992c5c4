#!/usr/bin/env python3
"""Export the public TTT research layers to ONNX and run ttt-opt on each export.

First step of the corpus in issue 47.  The upstream code is NOT part of this
repository: it is imported at run time from the directories named by

    TTT_LACT_DIR     a checkout of a1600012888/LaCT
    TTT_TTT_LM_DIR   a checkout of test-time-training/ttt-lm-pytorch
    TTT_VITTT_DIR    a checkout of LeapLabTHU/ViTTT

A directory that is not set (or a module that cannot be built) is recorded in
the table, not skipped silently.  Upstream files are never edited: the CPU
stand-ins needed to import them (torch.compile, fla, flash_attn, timm, and the
LaCT Triton kernel module when Triton cannot be imported) are defined below and
inserted into sys.modules.  Nothing here is tuned to make ttt-opt find a layer.

Each layer module is built in a small configuration (the upstream defaults
otherwise), wrapped so that it takes one tensor, and exported with
torch.onnx.export(dynamo=False) and with the default (dynamo) exporter.  Every
export is run once with onnxruntime against the PyTorch output, then given to
`ttt-opt <model> -o <out>.onnx`; its exit status and remark lines are recorded,
and the rewritten model is run again with onnxruntime where ttt-opt succeeded.

Under a torch before 2.0 (`--exporter-set torch113`, chosen by itself there: Debian 12's
python3-torch 1.13, see debian_torch113.sh) the one exporter is torch.onnx.export as
1.13 has it, TorchScript by tracing, at opset 17 (files `<module>.ts113.onnx`); the
stand-ins then also give torch.nn.RMSNorm and F.rms_norm, which 1.13 lacks.  Where that
Python has no onnxruntime, `--ort-python` names one that has (the check runs there).

Usage:
    TTT_LACT_DIR=... TTT_TTT_LM_DIR=... TTT_VITTT_DIR=... \
        python python/scripts/export_corpus.py [OUTDIR] [--report FILE] [--ttt-opt PATH]
    eval "$(python/scripts/debian_torch113.sh)"; TTT_LACT_DIR=... \
        /usr/bin/python3 python/scripts/export_corpus.py --exporter-set torch113 \
        --ort-python python3 [OUTDIR] ...

Not imported or run by any test.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.machinery
import importlib.util
import io
import math
import os
import subprocess
import sys
import time
import traceback
import types
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------
# CPU stand-ins
# ---------------------------------------------------------------------------

def _identity_compile(fn=None, *args, **kwargs):
    """torch.compile stand-in: `@torch.compile` and `@torch.compile(...)` leave the function as is."""
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


class _StandInRMSNorm(nn.Module):
    """fla.modules.RMSNorm on CPU: x * rsqrt(mean(x^2) + eps) * weight (fla's default eps 1e-5)."""

    def __init__(self, hidden_size, elementwise_affine=True, bias=False, eps=1e-5, **kw):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size)) if elementwise_affine else None
        self.bias = nn.Parameter(torch.zeros(hidden_size)) if (elementwise_affine and bias) else None

    def forward(self, x):
        dtype = x.dtype
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.weight is not None:
            y = y * self.weight.float()
        if self.bias is not None:
            y = y + self.bias.float()
        return y.to(dtype)


class _StandInRotaryEmbedding(nn.Module):
    """fla.modules.RotaryEmbedding on CPU, non-interleaved (fla's default), inputs [b, s, h, d]."""

    def __init__(self, dim, base=10000.0, interleaved=False, **kw):
        super().__init__()
        assert not interleaved
        self.dim = dim
        self.base = base

    def forward(self, q, k, seqlen_offset=0, max_seqlen=None, cu_seqlens=None, **kw):
        if cu_seqlens is not None or not isinstance(seqlen_offset, int):
            raise NotImplementedError("stand-in RotaryEmbedding: only an int seqlen_offset")
        s = q.shape[1]
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.float32) / self.dim))
        t = torch.arange(s, dtype=torch.float32) + seqlen_offset
        freqs = torch.outer(t, inv_freq)  # [s, d/2]
        cos = freqs.cos()[None, :, None, :]
        sin = freqs.sin()[None, :, None, :]

        def rot(x):
            x1, x2 = x.float().chunk(2, dim=-1)
            return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)

        return rot(q), rot(k)


def _standin_flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), **kw):
    """flash_attn_func on CPU: q, k, v [b, s, h, d] -> [b, s, h, d], causal and sliding window."""
    b, s, h, d = q.shape
    scale = softmax_scale if softmax_scale is not None else d ** -0.5
    qh, kh, vh = (t.transpose(1, 2).float() for t in (q, k, v))
    scores = (qh @ kh.transpose(-1, -2)) * scale
    i = torch.arange(s)[:, None]
    j = torch.arange(k.shape[1])[None, :]
    allowed = torch.ones(s, k.shape[1], dtype=torch.bool)
    if causal:
        allowed = allowed & (j <= i)
    left, right = window_size
    if left >= 0:
        allowed = allowed & (j >= i - left)
    if right >= 0:
        allowed = allowed & (j <= i + right)
    scores = scores.masked_fill(~allowed, float("-inf"))
    o = torch.softmax(scores, dim=-1) @ vh
    return o.transpose(1, 2).to(q.dtype)


def _standin_rms_norm(input, normalized_shape, weight=None, eps=None):
    """F.rms_norm (torch 2.4) on torch 1.13: x * rsqrt(mean(x^2) over the normalized
    dims + eps) * weight, in x's dtype; eps None is the dtype's epsilon, as in torch."""
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    dims = tuple(range(-len(normalized_shape), 0))
    y = input * torch.rsqrt(input.pow(2).mean(dims, keepdim=True) + eps)
    return y * weight if weight is not None else y


class _StandInTorchRMSNorm(nn.Module):
    """torch.nn.RMSNorm (torch 2.4) on torch 1.13, over F.rms_norm's stand-in."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.weight = (nn.Parameter(torch.ones(self.normalized_shape, device=device,
                                               dtype=dtype))
                       if elementwise_affine else None)

    def forward(self, x):
        return _standin_rms_norm(x, self.normalized_shape, self.weight, self.eps)


def _unavailable(name):
    def f(*a, **k):
        raise NotImplementedError(f"CPU stand-in: {name} is not provided")
    return f


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__file__ = f"<export_corpus stand-in {name}>"
    # a spec, so that importlib.util.find_spec (transformers' availability checks) works;
    # there is no installed distribution, so those checks still report the package as absent
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    sys.modules[name] = m
    return m


STANDINS_USED = []


def install_standins():
    torch.compile = _identity_compile
    STANDINS_USED.append("torch.compile -> identity")

    if not hasattr(F, "rms_norm"):  # torch < 2.4 (Debian 12's 1.13)
        F.rms_norm = _standin_rms_norm
        STANDINS_USED.append("torch.nn.functional.rms_norm (x * rsqrt(mean(x^2) + eps) * w)")
    if not hasattr(nn, "RMSNorm"):
        nn.RMSNorm = _StandInTorchRMSNorm
        STANDINS_USED.append("torch.nn.RMSNorm (over the rms_norm stand-in)")
    try:
        torch.cuda.is_bf16_supported()
    except Exception:
        # torch 1.13 without CUDA: torch.autocast("cuda", dtype=torch.bfloat16) disables
        # itself, then asks this, which fails (LaCT's ttt_operation.py decorates with it)
        torch.cuda.is_bf16_supported = lambda *args, **kwargs: True
        STANDINS_USED.append("torch.cuda.is_bf16_supported -> True without CUDA (torch 1.13's "
                             "autocast('cuda', bfloat16) asks it after disabling itself)")

    _module("fla")
    _module("fla.models")
    _module("fla.models.utils", Cache=object)
    _module("fla.modules", RMSNorm=_StandInRMSNorm, RotaryEmbedding=_StandInRotaryEmbedding)
    STANDINS_USED.append("fla.modules.RMSNorm/RotaryEmbedding, fla.models.utils.Cache (CPU torch)")

    _module("flash_attn", flash_attn_func=_standin_flash_attn_func,
            flash_attn_varlen_func=_unavailable("flash_attn_varlen_func"))
    _module("flash_attn.bert_padding", index_first_axis=_unavailable("index_first_axis"),
            pad_input=_unavailable("pad_input"), unpad_input=_unavailable("unpad_input"))
    STANDINS_USED.append("flash_attn.flash_attn_func (masked softmax attention)")

    try:
        import timm.models.layers  # noqa: F401
    except Exception:
        _module("timm")
        _module("timm.models")
        _module("timm.models.layers", trunc_normal_=nn.init.trunc_normal_)
        STANDINS_USED.append("timm.models.layers.trunc_normal_ -> torch.nn.init.trunc_normal_")


# ---------------------------------------------------------------------------
# Module builders.  Each returns (module taking one tensor, example input).
# ---------------------------------------------------------------------------

def _need(var):
    d = os.environ.get(var)
    if not d:
        raise RuntimeError(f"{var} is not set")
    if not os.path.isdir(d):
        raise RuntimeError(f"{var}={d} is not a directory")
    return d


def _import_from(directory, name):
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(name)


class _FirstOutput(nn.Module):
    def __init__(self, layer, call):
        super().__init__()
        self.layer = layer
        self._call = call

    def forward(self, x):
        return self._call(self.layer, x)


def _lact_model_package():
    """lact_llm/lact_model as a package without running its __init__ (which needs the full fla model zoo)."""
    root = os.path.join(_need("TTT_LACT_DIR"), "lact_llm", "lact_model")
    if "lact_model" not in sys.modules:
        pkg = types.ModuleType("lact_model")
        pkg.__path__ = [root]
        sys.modules["lact_model"] = pkg
        try:
            importlib.import_module("lact_model.ttt_operation_fused_kernel")
        except Exception as e:  # Triton kernels cannot be imported: stand in, never called
            _module("lact_model.ttt_operation_fused_kernel",
                    postnorm_block_causal_lact_swiglu_fused_kernel_triton=_unavailable("fused kernel"),
                    prenorm_block_causal_lact_swiglu_fused_kernel_triton=_unavailable("fused kernel"))
            STANDINS_USED.append(f"lact_model.ttt_operation_fused_kernel (import failed: {type(e).__name__})")
    return importlib.import_module("lact_model.layer_lact_swiglu")


B, L, D = 2, 64, 64


def build_lact_llm():
    m = _lact_model_package()
    # small sizes, upstream LaCTSWIGLUConfig defaults for the switches
    layer = m.LaCTSWIGLULayer(
        hidden_size=D, num_attn_heads=4, num_lact_heads=2, inter_multi=1, window_size=16,
        lact_chunk_size=16, use_muon=False, learnable_ttt_scale=True, use_momentum=True,
        ttt_prenorm=False, layer_idx=0, max_position_embeddings=L)
    return _FirstOutput(layer, lambda l, x: l(x)[0]), torch.randn(B, L, D)


def build_lact_nvs():
    d = os.path.join(_need("TTT_LACT_DIR"), "lact_nvs")
    m = _import_from(d, "lact_ttt")
    layer = m.FastWeightGluMLPMultihead(dim=D, head_dim=32, inter_multi=1)
    n_in = L // 2  # model.py: update on the input-view tokens, apply on all tokens

    def call(l, x):
        info = {"ttt_op_order": [m.TTTOperator(start=0, end=n_in, update=True, apply=False),
                                 m.TTTOperator(start=0, end=x.shape[1], update=False, apply=True)]}
        return l(x, info)[0]
    return _FirstOutput(layer, call), torch.randn(B, L, D)


def build_lact_min_causal():
    d = os.path.join(_need("TTT_LACT_DIR"), "minimal_implementations")
    m = _import_from(d, "causal_lact_with_sliding_window_attn")
    layer = m.CausalLaCTSwiGLUWithSlidingWindowAttn(
        dim=D, head_dim=32, attn_head_dim=16, lact_chunk_size=16, window_size=16)
    return _FirstOutput(layer, lambda l, x: l(x)), torch.randn(B, L, D)


def build_lact_min_bidirectional():
    d = os.path.join(_need("TTT_LACT_DIR"), "minimal_implementations")
    m = _import_from(d, "bidirectional_lact_layer")
    layer = m.BidirectionalLaCTSwiGLU(dim=D, head_dim=32)
    return _FirstOutput(layer, lambda l, x: l(x)), torch.randn(B, L, D)


def _import_file(path, name):
    """Imports one upstream file under a name of our choosing: ttt-lm-pytorch's
    module is `ttt.py`, the name of this project's package."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _ttt_lm(kind):
    m = _import_file(os.path.join(_need("TTT_TTT_LM_DIR"), "ttt.py"), "ttt_lm_pytorch_ttt")
    cfg = m.TTTConfig(hidden_size=D, intermediate_size=2 * D, num_hidden_layers=1,
                      num_attention_heads=4, ttt_layer_type=kind, mini_batch_size=16,
                      max_position_embeddings=L)
    layer = (m.TTTLinear if kind == "linear" else m.TTTMLP)(cfg, layer_idx=0)

    def call(l, x):
        pos = torch.arange(x.shape[1], dtype=torch.long).unsqueeze(0)
        return l(x, position_ids=pos)
    return _FirstOutput(layer, call), torch.randn(B, L, D)


def build_ttt_linear():
    return _ttt_lm("linear")


def build_ttt_mlp():
    return _ttt_lm("mlp")


def build_vittt():
    m = _import_from(_need("TTT_VITTT_DIR"), "ttt_block")
    layer = m.TTT(dim=D, num_heads=4)
    h = w = 4
    return _FirstOutput(layer, lambda l, x: l(x, h, w)), torch.randn(B, h * w, D)


def build_vittt_block():
    """The plain ViT³ block (vittt/models/vittt.py): depthwise-conv position
    encoding, the TTT layer, an MLP; it needs timm."""
    directory = os.path.join(_need("TTT_VITTT_DIR"), "vittt", "models")
    if "vittt_models" not in sys.modules:
        pkg = types.ModuleType("vittt_models")  # the package without its __init__ (build.py)
        pkg.__path__ = [directory]
        sys.modules["vittt_models"] = pkg
    m = importlib.import_module("vittt_models.vittt")
    layer = m.Block(dim=D, num_heads=4)
    return _FirstOutput(layer, lambda l, x: l(x)), torch.randn(B, 16, D)


@contextlib.contextmanager
def _bf16_as_fp32():
    """Tensor.bfloat16() returns the tensor itself: the Muon (Newton-Schulz) step of
    LaCT's NVS and minimal layers, which casts to bf16 as shipped, runs in fp32 (the
    corpus's "Muon in fp32"; onnxruntime's CPU kernels lack bf16 ReduceL2)."""
    original = torch.Tensor.bfloat16
    torch.Tensor.bfloat16 = lambda self, *args, **kwargs: self
    try:
        yield
    finally:
        torch.Tensor.bfloat16 = original


def in_fp32(builder):
    def build():
        model, x = builder()
        call = model._call

        def call_in_fp32(layer, inputs):
            with _bf16_as_fp32():
                return call(layer, inputs)
        model._call = call_in_fp32
        return model, x
    return build


MODULES = [
    ("LaCT lact_llm LaCTSWIGLULayer", build_lact_llm),
    ("LaCT lact_nvs FastWeightGluMLPMultihead", build_lact_nvs),
    ("LaCT minimal CausalLaCTSwiGLUWithSlidingWindowAttn", build_lact_min_causal),
    ("LaCT minimal BidirectionalLaCTSwiGLU", build_lact_min_bidirectional),
    ("ttt-lm-pytorch TTTLinear", build_ttt_linear),
    ("ttt-lm-pytorch TTTMLP", build_ttt_mlp),
    ("ViTTT TTT", build_vittt),
    ("ViTTT Block", build_vittt_block),
    ("LaCT lact_nvs FastWeightGluMLPMultihead, Muon in fp32", in_fp32(build_lact_nvs)),
    ("LaCT minimal CausalLaCTSwiGLUWithSlidingWindowAttn, Muon in fp32",
     in_fp32(build_lact_min_causal)),
    ("LaCT minimal BidirectionalLaCTSwiGLU, Muon in fp32", in_fp32(build_lact_min_bidirectional)),
]


# ---------------------------------------------------------------------------
# Export, check, ttt-opt
# ---------------------------------------------------------------------------

def one_line(e):
    msg = f"{type(e).__name__}: {e}".strip()
    lines = [s.strip() for s in msg.splitlines() if s.strip()]
    s = lines[0] if lines else type(e).__name__
    return s[:300]


# (exporter, file tag, the dims of x left dynamic: "" static, "b" batch, "bs" batch and
# sequence)
EXPORTERS_TORCH113 = [
    ("torch 1.13 torch.onnx.export (traced), opset 17", "ts113", ""),
    ("torch 1.13 torch.onnx.export (traced), opset 17, dynamic batch", "ts113-batch", "b"),
    ("torch 1.13 torch.onnx.export (traced), opset 17, dynamic batch and sequence",
     "ts113-seq", "bs"),
]
EXPORTERS = [
    ("dynamo=False", "ts", ""),
    ("dynamo (default)", "dynamo", ""),
    ("dynamo=False, dynamic batch", "ts-batch", "b"),
    ("dynamo (default), dynamic batch", "dynamo-batch", "b"),
    ("dynamo=False, dynamic batch and sequence", "ts-seq", "bs"),
    ("dynamo (default), dynamic batch and sequence", "dynamo-seq", "bs"),
]


def export(model, x, path, exporter, dims=""):
    names = {0: "batch", 1: "sequence"}
    axes = {i: names[i] for i in range({"": 0, "b": 1, "bs": 2}[dims])}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if exporter.startswith("torch 1.13"):
            # torch 1.13's export: TorchScript, tracing the module (there is no dynamo)
            torch.onnx.export(model, (x,), path, opset_version=17, input_names=["x"],
                              output_names=["y"],
                              dynamic_axes={"x": axes, "y": axes} if axes else None)
        elif exporter.startswith("dynamo=False"):
            torch.onnx.export(model, (x,), path, dynamo=False, input_names=["x"],
                              output_names=["y"],
                              dynamic_axes={"x": axes, "y": axes} if axes else None)
        else:
            shapes = ({i: torch.export.Dim(n) for i, n in axes.items()},) if axes else None
            torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                              dynamic_shapes=shapes)


ORT_PYTHON = None  # --ort-python: a Python with onnxruntime, where this one has none

_ORT_IN_ANOTHER_PYTHON = """
import sys
import numpy as np
import onnxruntime as ort
so = ort.SessionOptions()
so.log_severity_level = 3
sess = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
data = np.load(sys.argv[2])
y = sess.run(None, {sess.get_inputs()[0].name: data["x"]})[0]
print(float(np.max(np.abs(y.astype("float64") - data["y"].astype("float64")))))
"""


def _ort_diff_elsewhere(path, x, ref):
    import tempfile
    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "xy.npz")
        np.savez(data, x=x.numpy(), y=ref.float().numpy())
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
        p = subprocess.run([ORT_PYTHON, "-c", _ORT_IN_ANOTHER_PYTHON, path, data],
                           capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        lines = [s for s in p.stderr.splitlines() if s.strip()]
        raise RuntimeError(lines[-1] if lines else f"{ORT_PYTHON} exited {p.returncode}")
    return float(p.stdout.split()[-1])


def ort_diff(path, x, ref):
    import numpy as np
    try:
        import onnxruntime as ort
    except ImportError:
        if not ORT_PYTHON:
            raise
        return _ort_diff_elsewhere(path, x, ref)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    y = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    return float(np.max(np.abs(y.astype("float64") - ref.numpy().astype("float64"))))


def count_nodes(path):
    import onnx
    return len(onnx.load(path, load_external_data=False).graph.node)


def run_ttt_opt(ttt_opt, path, out):
    try:
        p = subprocess.run([ttt_opt, path, "-o", out], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "timeout", ["ttt-opt ran past 300 s"]
    lines = [s.strip().replace(path, os.path.basename(path))
             for s in (p.stderr + p.stdout).splitlines() if s.strip()]
    return p.returncode, lines


def write_fixture(path, x, ref, folder):
    """The export as one file (weights inline) and its input and reference output."""
    import numpy as np
    import onnx
    os.makedirs(folder, exist_ok=True)
    name = os.path.basename(path)
    model = onnx.load(path, load_external_data=True)
    onnx.save(model, os.path.join(folder, name), save_as_external_data=False)
    np.savez(os.path.join(folder, name[:-len(".onnx")] + ".npz"),
             x=x.numpy(), y=ref.float().numpy())


def md(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?", default="/tmp/ttt-corpus")
    ap.add_argument("--report", default=None, help="write the markdown table here too")
    ap.add_argument("--ttt-opt", default=os.path.join(REPO, "build", "bin", "ttt-opt"))
    ap.add_argument("--only", default=None, help="substring of module names to run")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="also export each module with its batch dimension dynamic")
    ap.add_argument("--dynamic-sequence", action="store_true",
                    help="also export each module with its batch and sequence dynamic")
    ap.add_argument("--exporter-set", choices=["torch2", "torch113"], default=None,
                    help="torch113: torch 1.13's torch.onnx.export (traced, opset 17) only, "
                         "files <module>.ts113.onnx; the default is torch113 under a "
                         "torch before 2.0, torch2 otherwise")
    ap.add_argument("--ort-python", default=None,
                    help="a Python with onnxruntime, for the checks, where this one has none")
    ap.add_argument("--fixtures", default=None,
                    help="also write each export with its weights inline, and its input and "
                         "PyTorch's output (<name>.npz: x, y), into this folder")
    args = ap.parse_args()
    global ORT_PYTHON
    ORT_PYTHON = args.ort_python
    exporter_set = args.exporter_set or (
        "torch113" if int(torch.__version__.split(".")[0]) < 2 else "torch2")
    exporters = EXPORTERS_TORCH113 if exporter_set == "torch113" else EXPORTERS

    os.makedirs(args.outdir, exist_ok=True)
    install_standins()
    torch.manual_seed(0)

    rows = []
    for name, builder in MODULES:
        if args.only and args.only not in name:
            continue
        slug = "".join(c if c.isalnum() else "_" for c in name).strip("_")
        print(f"== {name}", file=sys.stderr, flush=True)
        try:
            torch.manual_seed(0)
            model, x = builder()
            model.eval()
            with torch.no_grad():
                ref = model(x)
        except Exception as e:
            traceback.print_exc()
            rows.append(dict(module=name, exporter="-", export="not built: " + one_line(e)))
            continue
        for exporter, tag, dims in exporters:
            if (dims == "b" and not args.dynamic_batch) or (dims == "bs" and not
                                                             args.dynamic_sequence):
                continue
            row = dict(module=name, exporter=exporter)
            path = os.path.join(args.outdir, f"{slug}.{tag}.onnx")
            out = os.path.join(args.outdir, f"{slug}.{tag}.ttt.onnx")
            t0 = time.time()
            try:
                export(model, x, path, exporter, dims)
            except Exception as e:
                row["export"] = "failed: " + one_line(e)
                rows.append(row)
                print(f"   {exporter}: export failed: {one_line(e)}", file=sys.stderr, flush=True)
                continue
            row["export"] = f"ok ({count_nodes(path)} nodes, {time.time() - t0:.0f}s)"
            if args.fixtures:
                write_fixture(path, x, ref, args.fixtures)
            try:
                row["ort"] = f"{ort_diff(path, x, ref):.1e}"
            except Exception as e:
                row["ort"] = "ORT failed: " + one_line(e)
            rc, lines = run_ttt_opt(args.ttt_opt, path, out)
            row["rc"] = rc
            row["remarks"] = " / ".join(lines[:6]) + (f" / (+{len(lines) - 6} lines)" if len(lines) > 6 else "")
            if rc == 0 and os.path.exists(out):
                try:
                    row["ort_out"] = f"{ort_diff(out, x, ref):.1e}"
                except Exception as e:
                    row["ort_out"] = "ORT failed: " + one_line(e)
            rows.append(row)
            print(f"   {exporter}: {row['export']} ort {row.get('ort')} ttt-opt rc {rc}: {row['remarks']}",
                  file=sys.stderr, flush=True)

    head = ["module", "exporter", "export", "ORT vs torch (max abs)", "ttt-opt rc",
            "ttt-opt remarks", "rewritten: ORT vs torch"]
    keys = ["module", "exporter", "export", "ort", "rc", "remarks", "ort_out"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        table.append("| " + " | ".join(md(r.get(k, "")) for k in keys) + " |")
    text = "\n".join(table) + "\n\nCPU stand-ins used: " + "; ".join(STANDINS_USED) + ".\n"
    text += f"\ntorch {torch.__version__}, exporter set {exporter_set}.\n"
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
