"""PyTorch reference implementations of the TTT-KVB layer families.

Each module computes one layer family of docs/ReferenceModels.md the way
its reference code does (hand-derived inner gradients, no autograd inside the inner
loop), so that an ONNX export of it is made of plain MatMul/Mul/Add/... nodes. The
conventions are those of docs/Semantics.md: row vectors, fast weights stored
input x output, ``q, k, v : [B, H, T, D]``, the learned initial fast weights are module
parameters ``[H, r, c]`` (shared over the batch) and become ONNX initializers.

Every module is written so that it can be

* traced (``torch.onnx.export(module, ...)``): the chunk loop is unrolled for the
  static sequence length of the example inputs, and
* scripted (``torch.jit.script``): the chunk loop becomes an ONNX ``Loop`` that carries
  the fast weights (and the momentum state); the per-chunk outputs are collected in a
  tensor sequence (``SequenceInsert`` / ``ConcatFromSequence``).

Exceptions: `ViT3DWConv` with ``impl="conv"`` (grouped convolutions whose group
count is ``B * C``) can only be traced. The full-batch families (LaCT-NVS, ViT^3) have
no chunk loop, so their scripted export differs from the traced one only by its dynamic
dimensions.

``forward`` takes ``(q, k, v, lr=None, momentum=None)``; `input_names` says which of
them a layer uses (`ttt.models.export` wraps the module so that the exported graph has
exactly those inputs). `oracle_spec()` returns the keyword arguments and arrays with
which ``test/python/oracle/ttt_oracle.py`` computes the same layer.
"""

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "LACT_NS_COEFFS",
    "NVS_NS_COEFFS",
    "TTTLayer",
    "LaCTSwiGLU",
    "LaCTLinear",
    "ViT3GLU",
    "ViT3DWConv",
    "TTTLinear",
    "TTTMLP",
    "PlainLinear",
    "lact_llm",
    "lact_variant",
    "lact_nvs",
]

# Newton-Schulz coefficients (docs/ReferenceModels.md §1.2): LaCT-LLM's per-step table and
# LaCT-NVS's constant triple, repeated for its 5 steps.
LACT_NS_COEFFS: Tuple[Tuple[float, float, float], ...] = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)
NVS_NS_COEFFS: Tuple[Tuple[float, float, float], ...] = ((3.4445, -4.7750, 2.0315),) * 5


# ------------------------------------------------------------------------ helpers
# Free functions: TorchScript compiles them recursively from the modules' forward.


def _silu_grad(z: Tensor) -> Tensor:
    """silu'(z) = sigma(z) (1 + z (1 - sigma(z)))."""
    s = torch.sigmoid(z)
    return s * (1.0 + z * (1.0 - s))


def _col_norm(w: Tensor) -> Tensor:
    """L2 norm over the input rows of a [..., in, out] matrix: one per output column."""
    return torch.sqrt((w * w).sum(dim=-2, keepdim=True))


def _frob_norm(w: Tensor) -> Tensor:
    return torch.sqrt((w * w).sum(dim=[-2, -1], keepdim=True))


def _ln_fwd(x: Tensor, gamma: Tensor, beta: Tensor, eps: float) -> Tensor:
    """ttt-lm-pytorch ``ln_fwd``: gamma * (x - mu) / sqrt(var + eps) + beta, biased var."""
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) * (x - mu)).mean(dim=-1, keepdim=True)
    std = torch.sqrt(var + eps)
    return gamma * ((x - mu) / std) + beta


def _ln_fused_l2_bwd(x: Tensor, target: Tensor, gamma: Tensor, beta: Tensor,
                     eps: float) -> Tensor:
    """ttt-lm-pytorch ``ln_fused_l2_bwd``: d/dx of 1/2 |gamma LN(x) + beta - target|^2."""
    d = x.size(-1)
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) * (x - mu)).mean(dim=-1, keepdim=True)
    std = torch.sqrt(var + eps)
    x_hat = (x - mu) / std
    y = gamma * x_hat + beta
    grad_x_hat = (y - target) * gamma
    return (1.0 / d) * (
        d * grad_x_hat
        - grad_x_hat.sum(dim=-1, keepdim=True)
        - x_hat * (grad_x_hat * x_hat).sum(dim=-1, keepdim=True)
    ) / std


def _gelu_tanh(x: Tensor) -> Tensor:
    return F.gelu(x, approximate="tanh")


def _gelu_tanh_bwd(x: Tensor) -> Tensor:
    """ttt-lm-pytorch ``gelu_bwd`` (derivative of the tanh approximation)."""
    c = math.sqrt(2.0 / math.pi)
    t = torch.tanh(c * x * (1.0 + 0.044715 * x * x))
    return 0.5 * x * ((1.0 - t * t) * (c + 3.0 * 0.044715 * c * x * x)) + 0.5 * (1.0 + t)


def _np(t: Tensor) -> np.ndarray:
    return t.detach().cpu().double().numpy()


def _init(shape: Sequence[int], std: float, gen: torch.Generator) -> nn.Parameter:
    return nn.Parameter(torch.randn(*shape, generator=gen) * std)


# ------------------------------------------------------------------------ base class


class TTTLayer(nn.Module):
    """A TTT-KVB layer. Subclasses set `input_names` and implement `oracle_spec`."""

    # (no class-level annotations: TorchScript would read them as attribute types)
    #: graph inputs of an export, a subset of (q, k, v, lr, momentum) in that order
    input_names = ("q", "k", "v")
    #: the family name used in fixture sidecars
    family = "ttt"
    #: False where torch.jit.script cannot export the module
    scriptable = True

    def oracle_spec(self) -> Dict[str, Any]:
        """How test/python/oracle computes this layer.

        Returns a dict with
          layer:   "kvb_layer" or "dwconv_layer"
          kwargs:  JSON-serialisable keyword arguments of that function
          weights: ordered {name: float64 array} -- the oracle's ``weights`` list
                   (``w`` for dwconv_layer)
          arrays:  {kwarg name: float64 array} -- further array keyword arguments
          inputs:  {graph input name: oracle keyword} (q, k, v, lr, momentum)
          pre:     {"v_minus_k": bool}   v is replaced by v - k before the oracle
          post:    {"residual_q": bool}  q is added to the oracle's output
        """
        raise NotImplementedError

    def input_shapes(self, B: int, T: int, Tq: Optional[int] = None) -> Dict[str, List[int]]:
        raise NotImplementedError


def _base_spec(inputs: Sequence[str]) -> Dict[str, Any]:
    return {"arrays": {}, "inputs": {n: n for n in inputs}, "pre": {"v_minus_k": False},
            "post": {"residual_q": False}}


# ------------------------------------------------------------------------ LaCT


class _NewtonSchulz(TTTLayer):
    """Muon's Newton-Schulz orthogonalisation with a constant coefficient table."""

    __constants__ = ["ns_coeffs", "ns_eps"]

    def __init__(self, ns_coeffs: Sequence[Sequence[float]] = (), ns_eps: float = 1e-7):
        super().__init__()
        self.ns_coeffs = tuple(tuple(float(c) for c in t) for t in ns_coeffs)
        self.ns_eps = float(ns_eps)

    def _newton_schulz(self, g: Tensor, transpose: bool) -> Tensor:
        """LaCT ``zeropower_via_newtonschulz5``: transpose if rows > cols, divide by the
        Frobenius norm (+eps), iterate X <- a X + (b A + c A A) X with A = X X^T."""
        x = g.transpose(-1, -2) if transpose else g
        x = x / (_frob_norm(x) + self.ns_eps)
        for abc in self.ns_coeffs:
            a = x @ x.transpose(-1, -2)
            x = abc[0] * x + (abc[1] * a + abc[2] * (a @ a)) @ x
        return x.transpose(-1, -2) if transpose else x


class LaCTSwiGLU(_NewtonSchulz):
    """LaCT's SwiGLU fast weight ``f(x) = (silu(x W0) * (x W2)) W1`` with the negative
    dot-product loss (docs/ReferenceModels.md §1.1-§1.5).

    ``full_batch=False`` is LaCT-LLM (``block_causal_lact_swiglu``): per chunk, apply then
    update; every chunk but the last one updates. ``full_batch=True`` is LaCT-NVS: one
    update on all of k/v, then apply to all of q (q may be longer than k/v).

    Knobs (Table 2 of the TTT-is-linear-attention paper): ``trained`` (which of W0, W1,
    W2 the inner loop updates), ``use_lr`` (per-token learning rates ``lr [B,H,T,3]``,
    one column per weight, multiplied into the key side as LaCT does), ``use_momentum``
    (``momentum [B,H,T]``, chunk mean, heavy ball), ``ns_coeffs`` (Muon; empty = off),
    ``weight_norm`` (post-norm: renormalise every trained weight's columns to the
    initial column norms).
    """

    __constants__ = _NewtonSchulz.__constants__ + [
        "chunk", "full_batch", "train0", "train1", "train2", "use_lr", "use_momentum",
        "weight_norm", "wn_eps", "t0", "t1", "t2", "use_ns"]

    def __init__(self, heads: int, d_in: int, d_hidden: int, d_out: int, *, chunk: int = 8,
                 trained: Sequence[int] = (0, 1, 2), use_lr: bool = True,
                 use_momentum: bool = True, ns_coeffs: Sequence[Sequence[float]] = LACT_NS_COEFFS,
                 weight_norm: bool = True, full_batch: bool = False, seed: int = 0,
                 family: str = "lact_llm"):
        super().__init__(ns_coeffs)
        if full_batch and use_momentum:
            raise ValueError("momentum is only defined for chunked schedules")
        gen = torch.Generator().manual_seed(seed)
        # LaCT initialises W0/W2 near 0.5 I (low rank + identity); keep that flavour.
        eye = torch.eye(d_in, d_hidden)
        self.w0 = nn.Parameter(0.5 * eye + torch.randn(heads, d_in, d_hidden, generator=gen)
                               / math.sqrt(d_in))
        self.w1 = _init((heads, d_hidden, d_out), 1.0 / math.sqrt(d_hidden), gen)
        self.w2 = nn.Parameter(0.5 * eye + torch.randn(heads, d_in, d_hidden, generator=gen)
                               / math.sqrt(d_in))
        self.chunk = int(chunk)
        self.full_batch = bool(full_batch)
        self.trained = sorted(set(int(i) for i in trained))
        self.train0, self.train1, self.train2 = (i in self.trained for i in range(3))
        self.use_lr = bool(use_lr)
        self.use_momentum = bool(use_momentum)
        self.use_ns = len(self.ns_coeffs) > 0
        self.weight_norm = bool(weight_norm)
        self.wn_eps = 1e-5
        # Newton-Schulz works on the wide orientation: transpose tall updates.
        self.t0, self.t1, self.t2 = d_in > d_hidden, d_hidden > d_out, d_in > d_hidden
        self.family = family
        names = ["q", "k", "v"] + (["lr"] if use_lr else []) + (
            ["momentum"] if use_momentum else [])
        self.input_names = tuple(names)

    def _fast_forward(self, x: Tensor, w0: Tensor, w1: Tensor, w2: Tensor) -> Tensor:
        return (F.silu(x @ w0) * (x @ w2)) @ w1

    def _grads(self, kc: Tensor, vc: Tensor, w0: Tensor, w1: Tensor, w2: Tensor,
               lrc: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        """Descent directions -dL/dW (LaCT's ``dw``) on the token set (kc, vc), with the
        per-token rates lrc [.., n, 3] (ignored unless use_lr).

        Untrained weights get a placeholder (kc) that the caller never uses."""
        gk = kc @ w0  # gate pre-activation
        hk = kc @ w2  # linear branch
        ak = F.silu(gk)
        dw0 = kc
        dw1 = kc
        dw2 = kc
        if self.train1:
            hid = ak * hk
            if self.use_lr:
                hid = hid * lrc[..., 1:2]
            dw1 = hid.transpose(-1, -2) @ vc
        if self.train0 or self.train2:
            p = vc @ w1.transpose(-1, -2)  # back-projected values
            if self.train0:
                k0 = kc
                if self.use_lr:
                    k0 = kc * lrc[..., 0:1]
                dw0 = k0.transpose(-1, -2) @ (p * hk * _silu_grad(gk))
            if self.train2:
                k2 = kc
                if self.use_lr:
                    k2 = kc * lrc[..., 2:3]
                dw2 = k2.transpose(-1, -2) @ (p * ak)
        return dw0, dw1, dw2

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        B = q.size(0)
        # Refine the optional inputs once, outside the chunk loop (a scripted Loop must
        # not carry Optional values). The placeholders are never read.
        lr_t = q
        if self.use_lr:
            assert lr is not None
            lr_t = lr
        m_t = q
        if self.use_momentum:
            assert momentum is not None
            m_t = momentum
        w0 = self.w0
        w1 = self.w1
        w2 = self.w2
        r0 = _col_norm(w0).detach()
        r1 = _col_norm(w1).detach()
        r2 = _col_norm(w2).detach()
        if torch.jit.is_scripting():
            # The ONNX Loop carries per-sample fast weights of one fixed shape.
            if self.train0:
                w0 = w0.unsqueeze(0).expand(B, -1, -1, -1)
            if self.train1:
                w1 = w1.unsqueeze(0).expand(B, -1, -1, -1)
            if self.train2:
                w2 = w2.unsqueeze(0).expand(B, -1, -1, -1)
        if self.full_batch:
            dw0, dw1, dw2 = self._grads(k, v, w0, w1, w2, lr_t)
            if self.train0:
                w0 = self._step(w0, dw0, r0, self.t0)
            if self.train1:
                w1 = self._step(w1, dw1, r1, self.t1)
            if self.train2:
                w2 = self._step(w2, dw2, r2, self.t2)
            return self._fast_forward(q, w0, w1, w2)

        T = q.size(2)
        C = self.chunk
        m0 = torch.zeros_like(w0)
        m1 = torch.zeros_like(w1)
        m2 = torch.zeros_like(w2)
        outs: List[Tensor] = []
        n_upd = (T - 1) // C  # every chunk but the last (possibly partial) one updates
        for i in range(n_upd):
            s = i * C
            e = s + C
            outs.append(self._fast_forward(q[:, :, s:e], w0, w1, w2))
            dw0, dw1, dw2 = self._grads(k[:, :, s:e], v[:, :, s:e], w0, w1, w2,
                                        lr_t[:, :, s:e])
            if self.use_momentum:
                mu = m_t[:, :, s:e].mean(dim=-1, keepdim=True).unsqueeze(-1)
                if self.train0:
                    m0 = mu * m0 + dw0
                    dw0 = m0
                if self.train1:
                    m1 = mu * m1 + dw1
                    dw1 = m1
                if self.train2:
                    m2 = mu * m2 + dw2
                    dw2 = m2
            if self.train0:
                w0 = self._step(w0, dw0, r0, self.t0)
            if self.train1:
                w1 = self._step(w1, dw1, r1, self.t1)
            if self.train2:
                w2 = self._step(w2, dw2, r2, self.t2)
        outs.append(self._fast_forward(q[:, :, n_upd * C:], w0, w1, w2))
        return torch.cat(outs, dim=2)

    def _step(self, w: Tensor, dw: Tensor, r: Tensor, transpose: bool) -> Tensor:
        if self.use_ns:
            dw = self._newton_schulz(dw, transpose)
        w = w + dw
        if self.weight_norm:
            w = w / (_col_norm(w) + self.wn_eps) * r
        return w

    def input_shapes(self, B, T, Tq=None):
        H, din, dh = self.w0.shape
        dout = self.w1.shape[2]
        s = {"q": [B, H, Tq or T, din], "k": [B, H, T, din], "v": [B, H, T, dout]}
        if self.use_lr:
            s["lr"] = [B, H, T, 3]
        if self.use_momentum:
            s["momentum"] = [B, H, T]
        return s

    def oracle_spec(self):
        kw: Dict[str, Any] = dict(model="swiglu", trained=list(self.trained), loss="dot",
                                  weight_norm="output_channels" if self.weight_norm else "none",
                                  weight_norm_eps=self.wn_eps)
        if self.use_ns:
            kw.update(ns_steps=len(self.ns_coeffs), ns_coeffs=[list(t) for t in self.ns_coeffs],
                      ns_eps=self.ns_eps)
        if self.full_batch:
            kw.update(schedule="full_batch")
        else:
            kw.update(schedule="chunked", chunk=self.chunk, order="apply_then_update")
        spec = _base_spec(self.input_names)
        spec.update(layer="kvb_layer", kwargs=kw,
                    weights={"W0": _np(self.w0), "W1": _np(self.w1), "W2": _np(self.w2)})
        return spec


class LaCTLinear(_NewtonSchulz):
    """LaCT-LLM with the fast weight collapsed to one linear layer ``f(x) = x W``
    (Table 2 variants V3..V6: "straight q/k"). Apply then update, every chunk but the
    last one updates; per-token ``lr [B,H,T,1]``, momentum, Muon and weight norm are
    optional as in `LaCTSwiGLU`."""

    __constants__ = _NewtonSchulz.__constants__ + [
        "chunk", "use_lr", "use_momentum", "weight_norm", "wn_eps", "tr", "use_ns"]

    def __init__(self, heads: int, d_in: int, d_out: int, *, chunk: int = 8,
                 use_lr: bool = True, use_momentum: bool = True,
                 ns_coeffs: Sequence[Sequence[float]] = LACT_NS_COEFFS,
                 weight_norm: bool = False, seed: int = 0, family: str = "lact_linear"):
        super().__init__(ns_coeffs)
        gen = torch.Generator().manual_seed(seed)
        self.w = _init((heads, d_in, d_out), 1.0 / math.sqrt(d_in), gen)
        self.chunk = int(chunk)
        self.use_lr = bool(use_lr)
        self.use_momentum = bool(use_momentum)
        self.use_ns = len(self.ns_coeffs) > 0
        self.weight_norm = bool(weight_norm)
        self.wn_eps = 1e-5
        self.tr = d_in > d_out
        self.family = family
        names = ["q", "k", "v"] + (["lr"] if use_lr else []) + (
            ["momentum"] if use_momentum else [])
        self.input_names = tuple(names)

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        B = q.size(0)
        T = q.size(2)
        C = self.chunk
        # Refine the optional inputs once, outside the chunk loop (a scripted Loop must
        # not carry Optional values). The placeholders are never read.
        lr_t = q
        if self.use_lr:
            assert lr is not None
            lr_t = lr
        m_t = q
        if self.use_momentum:
            assert momentum is not None
            m_t = momentum
        w = self.w
        r = _col_norm(w).detach()
        if torch.jit.is_scripting():
            w = w.unsqueeze(0).expand(B, -1, -1, -1)
        mom = torch.zeros_like(w)
        outs: List[Tensor] = []
        n_upd = (T - 1) // C
        for i in range(n_upd):
            s = i * C
            e = s + C
            outs.append(q[:, :, s:e] @ w)
            kc = k[:, :, s:e]
            if self.use_lr:
                kc = kc * lr_t[:, :, s:e]
            dw = kc.transpose(-1, -2) @ v[:, :, s:e]
            if self.use_momentum:
                mu = m_t[:, :, s:e].mean(dim=-1, keepdim=True).unsqueeze(-1)
                mom = mu * mom + dw
                dw = mom
            if self.use_ns:
                dw = self._newton_schulz(dw, self.tr)
            w = w + dw
            if self.weight_norm:
                w = w / (_col_norm(w) + self.wn_eps) * r
        outs.append(q[:, :, n_upd * C:] @ w)
        return torch.cat(outs, dim=2)

    def input_shapes(self, B, T, Tq=None):
        H, din, dout = self.w.shape
        s = {"q": [B, H, T, din], "k": [B, H, T, din], "v": [B, H, T, dout]}
        if self.use_lr:
            s["lr"] = [B, H, T, 1]
        if self.use_momentum:
            s["momentum"] = [B, H, T]
        return s

    def oracle_spec(self):
        kw: Dict[str, Any] = dict(model="linear", trained=[0], loss="dot", schedule="chunked",
                                  chunk=self.chunk, order="apply_then_update",
                                  weight_norm="output_channels" if self.weight_norm else "none",
                                  weight_norm_eps=self.wn_eps)
        if self.use_ns:
            kw.update(ns_steps=len(self.ns_coeffs), ns_coeffs=[list(t) for t in self.ns_coeffs],
                      ns_eps=self.ns_eps)
        spec = _base_spec(self.input_names)
        spec.update(layer="kvb_layer", kwargs=kw, weights={"W": _np(self.w)})
        return spec


def lact_llm(heads=2, d=16, d_hidden=16, chunk=8, seed=0, **kw) -> LaCTSwiGLU:
    """The LaCT-LLM baseline: all of W0/W1/W2 trained, per-token lr, momentum, Muon
    (LaCT table), weight norm, apply-then-update."""
    return LaCTSwiGLU(heads, d, d_hidden, d, chunk=chunk, seed=seed, **kw)


def lact_variant(n: int, heads=2, d=16, d_hidden=16, chunk=8, seed=0) -> TTTLayer:
    """Table 2's cumulative variant Vn (n = 0 is the baseline) of LaCT-LLM.

    V1 only W1 trained; V2 + no weight norm; V3 + single linear layer; V4 + no per-token
    lr; V5 + no momentum; V6 + no Muon (plain block-causal linear attention)."""
    if not 0 <= n <= 6:
        raise ValueError("variant must be 0..6")
    fam = f"lact_v{n}" if n else "lact_llm"
    if n <= 2:
        return LaCTSwiGLU(heads, d, d_hidden, d, chunk=chunk, seed=seed, family=fam,
                          trained=(1,) if n >= 1 else (0, 1, 2), weight_norm=n < 2)
    return LaCTLinear(heads, d, d, chunk=chunk, seed=seed, family=fam, weight_norm=False,
                      use_lr=n < 4, use_momentum=n < 5,
                      ns_coeffs=LACT_NS_COEFFS if n < 6 else ())


def lact_nvs(heads=1, d=16, d_hidden=32, seed=0, **kw) -> LaCTSwiGLU:
    """LaCT-NVS: one full-batch update on k/v (per-token lr, Muon with the constant NVS
    coefficients, weight norm), then apply to every query."""
    return LaCTSwiGLU(heads, d, d_hidden, d, full_batch=True, use_momentum=False,
                      ns_coeffs=NVS_NS_COEFFS, seed=seed, family="lact_nvs", **kw)


# ------------------------------------------------------------------------ ViT^3


class ViT3GLU(TTTLayer):
    """ViT^3's "simplified SwiGLU" branch: ``f(x) = (x W1) * silu(x W2)``, loss
    ``-(scale/N) sum <f(k), v>``, one full-batch step with lr 1, gradients clipped per
    output column (``g / (|g|_col + 1)``), output ``f_{W'}(q)``."""

    __constants__ = ["scale"]

    def __init__(self, heads: int, d: int, *, scale: float = 9 ** -0.5, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.w1 = _init((heads, d, d), 0.3, gen)
        self.w2 = _init((heads, d, d), 0.3, gen)
        self.scale = float(scale)
        self.family = "vit3_glu"
        self.input_names = ("q", "k", "v")

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        n = k.size(2)
        e = -v / float(n) * self.scale  # dL/df
        z1 = k @ self.w1
        z2 = k @ self.w2
        sig = torch.sigmoid(z2)
        a = z2 * sig
        kt = k.transpose(-1, -2)
        g1 = kt @ (e * a)
        g2 = kt @ (e * z1 * sig * (1.0 + z2 * (1.0 - sig)))
        g1 = g1 / (_col_norm(g1) + 1.0)
        g2 = g2 / (_col_norm(g2) + 1.0)
        w1 = self.w1 - g1
        w2 = self.w2 - g2
        return (q @ w1) * F.silu(q @ w2)

    def input_shapes(self, B, T, Tq=None):
        H, d, _ = self.w1.shape
        return {"q": [B, H, Tq or T, d], "k": [B, H, T, d], "v": [B, H, T, d]}

    def oracle_spec(self):
        spec = _base_spec(self.input_names)
        spec.update(layer="kvb_layer",
                    kwargs=dict(model="glu", trained=[0, 1], loss="dot", scale=self.scale,
                                reduction="mean", clip="output_channels",
                                schedule="full_batch"),
                    weights={"Wa": _np(self.w1), "Wg": _np(self.w2)})
        return spec


def _shift(xp: Tensor, a: int, b: int, hs: int, ws: int) -> Tensor:
    """Tap (a, b) of the 3x3 neighbourhood of a zero-padded map xp [B, C, hs+2, ws+2]."""
    return xp[:, :, a:a + hs, b:b + ws]


def _taps3x3(xp: Tensor, e: Tensor, hs: int, ws: int) -> Tensor:
    """G[b, c, 3a + b'] = sum_{y,x} e[b, c, y, x] xp[b, c, y + a, x + b'] -> [B, C, 9].

    Written out tap by tap so that a scripted export has no loop here."""
    return torch.stack([
        (e * _shift(xp, 0, 0, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 0, 1, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 0, 2, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 1, 0, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 1, 1, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 1, 2, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 2, 0, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 2, 1, hs, ws)).sum(dim=[-2, -1]),
        (e * _shift(xp, 2, 2, hs, ws)).sum(dim=[-2, -1]),
    ], dim=-1)


def _dwconv3x3(xp: Tensor, w: Tensor, hs: int, ws: int) -> Tensor:
    """Depth-wise 3x3 cross-correlation of a zero-padded map with per-sample kernels
    w [B, C, 3, 3], as nine shifted products."""
    return (w[:, :, 0:1, 0:1] * _shift(xp, 0, 0, hs, ws)
            + w[:, :, 0:1, 1:2] * _shift(xp, 0, 1, hs, ws)
            + w[:, :, 0:1, 2:3] * _shift(xp, 0, 2, hs, ws)
            + w[:, :, 1:2, 0:1] * _shift(xp, 1, 0, hs, ws)
            + w[:, :, 1:2, 1:2] * _shift(xp, 1, 1, hs, ws)
            + w[:, :, 1:2, 2:3] * _shift(xp, 1, 2, hs, ws)
            + w[:, :, 2:3, 0:1] * _shift(xp, 2, 0, hs, ws)
            + w[:, :, 2:3, 1:2] * _shift(xp, 2, 1, hs, ws)
            + w[:, :, 2:3, 2:3] * _shift(xp, 2, 2, hs, ws))


class ViT3DWConv(TTTLayer):
    """ViT^3's 3x3 depth-wise convolution branch on ``q, k, v : [B, C, h, w]``:
    ``f(x) = dwconv3x3(x; w)`` (zero padding), loss ``-(scale/(h w)) sum <f(k), v>``,
    gradient clipped per sample and channel by ``/ (|G|_F + 1)``, ``w' = w - G`` (now per
    sample), output ``dwconv3x3(q; w')``.

    ``impl="conv"`` computes the gradient and the output with grouped convolutions
    (groups = B*C; traced export only), ``impl="shift"`` with nine shifted products
    (scriptable, dynamic B/h/w)."""

    __constants__ = ["scale", "use_conv"]

    def __init__(self, channels: int, *, scale: float = 9 ** -0.5, impl: str = "conv",
                 seed: int = 0):
        super().__init__()
        if impl not in ("conv", "shift"):
            raise ValueError("impl must be conv or shift")
        gen = torch.Generator().manual_seed(seed)
        self.w = _init((channels, 1, 3, 3), 0.3, gen)  # ViT^3's conv layout [C, 1, 3, 3]
        self.scale = float(scale)
        self.use_conv = impl == "conv"
        self.scriptable = impl == "shift"
        self.family = "vit3_dwconv" if impl == "conv" else "vit3_dwconv_shift"
        self.input_names = ("q", "k", "v")

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        B = k.size(0)
        C = k.size(1)
        hs = k.size(2)
        ws = k.size(3)
        e = -v / float(hs * ws) * self.scale
        kp = F.pad(k, [1, 1, 1, 1])
        if self.use_conv:
            g = F.conv2d(kp.reshape(1, B * C, hs + 2, ws + 2), e.reshape(B * C, 1, hs, ws),
                         groups=B * C).reshape(B, C, 3, 3)
        else:
            g = _taps3x3(kp, e, hs, ws).reshape(B, C, 3, 3)
        g = g / (_frob_norm(g) + 1.0)
        w = self.w.reshape(1, C, 3, 3) - g  # [B, C, 3, 3]
        if self.use_conv:
            o = F.conv2d(q.reshape(1, B * C, hs, ws), w.reshape(B * C, 1, 3, 3), padding=1,
                         groups=B * C)
            return o.reshape(B, C, hs, ws)
        return _dwconv3x3(F.pad(q, [1, 1, 1, 1]), w, hs, ws)

    def input_shapes(self, B, T, Tq=None):
        # T is the spatial size h = w here.
        C = self.w.shape[0]
        return {n: [B, C, T, T] for n in ("q", "k", "v")}

    def oracle_spec(self):
        spec = _base_spec(self.input_names)
        spec.update(layer="dwconv_layer",
                    kwargs=dict(loss="dot", scale=self.scale, reduction="mean", clip="frobenius"),
                    weights={"w": _np(self.w)[:, 0]})
        return spec


# ------------------------------------------------------------------------ TTT-Linear/MLP


class _TTTDual(TTTLayer):
    """Common parts of ttt-lm-pytorch's TTT-Linear / TTT-MLP (dual form, mini-batch C)."""

    __constants__ = ["chunk", "ln_eps", "v_minus_k", "residual_q"]

    def _common_init(self, heads: int, f: int, chunk: int, v_minus_k: bool, residual_q: bool,
                     gen: torch.Generator):
        self.chunk = int(chunk)
        self.ln_eps = 1e-6
        self.v_minus_k = bool(v_minus_k)
        self.residual_q = bool(residual_q)
        # LayerNorm of the inner loss and output, one per head (slow weights).
        self.ln_weight = nn.Parameter(1.0 + 0.1 * torch.randn(heads, 1, f, generator=gen))
        self.ln_bias = nn.Parameter(0.1 * torch.randn(heads, 1, f, generator=gen))
        # token_eta_i = max(0, 1/(i+1) + learnable_i)
        self.register_buffer("token_idx", 1.0 / torch.arange(1, chunk + 1, dtype=torch.float32))
        self.learnable_token_idx = nn.Parameter(0.05 * torch.randn(chunk, generator=gen))
        self.input_names = ("q", "k", "v", "lr")

    def token_eta(self) -> Tensor:
        return torch.clamp_min(self.token_idx + self.learnable_token_idx, 0.0)

    def input_shapes(self, B, T, Tq=None):
        H, f = self.ln_weight.shape[0], self.ln_weight.shape[2]
        return {"q": [B, H, T, f], "k": [B, H, T, f], "v": [B, H, T, f], "lr": [B, H, T, 1]}

    def _spec(self, kwargs, weights):
        spec = _base_spec(self.input_names)
        kw = dict(loss="layernorm_mse", ln_eps=self.ln_eps, schedule="chunked",
                  chunk=self.chunk, order="causal", reduction="sum")
        kw.update(kwargs)
        spec.update(layer="kvb_layer", kwargs=kw, weights=weights,
                    arrays={"gamma": _np(self.ln_weight)[:, 0], "beta": _np(self.ln_bias)[:, 0],
                            "token_eta": _np(self.token_eta())},
                    pre={"v_minus_k": self.v_minus_k}, post={"residual_q": self.residual_q})
        return spec


class TTTLinear(_TTTDual):
    """ttt-lm-pytorch TTT-Linear, dual form: per mini-batch of C tokens,
    ``eta[i, j] = token_eta_i * lr_j``, ``G = LNbwd(XK W + b, XV - XK)``,
    ``Z = XQ W - (eta * tril(XQ XK^T)) G + b - tril(eta) G``, carry with the last row of
    eta, output ``XQ + LN(Z)``. ``lr [B,H,T,1]`` is the per-token ``ttt_lr_eta`` (already
    divided by the head dim). A trailing partial mini-batch uses ``token_eta[:n]``."""

    def __init__(self, heads: int, f: int, *, chunk: int = 8, v_minus_k: bool = True,
                 residual_q: bool = True, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.W1 = _init((heads, f, f), 0.02 * 10, gen)
        self.b1 = nn.Parameter(0.1 * torch.randn(heads, 1, f, generator=gen))
        self._common_init(heads, f, chunk, v_minus_k, residual_q, gen)
        self.family = "ttt_linear"

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        assert lr is not None
        B = q.size(0)
        T = q.size(2)
        C = self.chunk
        token_eta = self.token_eta()
        W1 = self.W1
        b1 = self.b1
        if torch.jit.is_scripting():
            W1 = W1.unsqueeze(0).expand(B, -1, -1, -1)
            b1 = b1.unsqueeze(0).expand(B, -1, -1, -1)
        outs: List[Tensor] = []
        for i in range((T + C - 1) // C):
            s = i * C
            e = min(s + C, T)
            n = e - s
            XQ = q[:, :, s:e]
            XK = k[:, :, s:e]
            XV = v[:, :, s:e]
            eta = token_eta[:n].reshape(n, 1) * lr[:, :, s:e, 0].unsqueeze(-2)  # [B,H,n,n]
            target = XV - XK if self.v_minus_k else XV
            Z1 = XK @ W1 + b1
            grad = _ln_fused_l2_bwd(Z1, target, self.ln_weight, self.ln_bias, self.ln_eps)
            Attn1 = torch.tril(XQ @ XK.transpose(-1, -2))
            b1_bar = b1 - torch.tril(eta) @ grad
            Z1_bar = XQ @ W1 - (eta * Attn1) @ grad + b1_bar
            last_eta = eta[:, :, -1, :].unsqueeze(-1)  # [B,H,n,1]
            W1 = W1 - (last_eta * XK).transpose(-1, -2) @ grad
            b1 = b1 - (last_eta * grad).sum(dim=-2, keepdim=True)
            Z1_bar = _ln_fwd(Z1_bar, self.ln_weight, self.ln_bias, self.ln_eps)
            outs.append(XQ + Z1_bar if self.residual_q else Z1_bar)
        return torch.cat(outs, dim=2)

    def oracle_spec(self):
        return self._spec(dict(model="linear", bias=True, trained=[0, 1]),
                          {"W": _np(self.W1), "b": _np(self.b1)})


class TTTMLP(_TTTDual):
    """ttt-lm-pytorch TTT-MLP (``W1 [f, 4f], b1, W2 [4f, f], b2``, gelu_tanh), dual form
    applied layer by layer; output ``XQ + LN(Z2_bar)``."""

    def __init__(self, heads: int, f: int, *, hidden_mult: int = 4, chunk: int = 8,
                 v_minus_k: bool = True, residual_q: bool = True, seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        fh = hidden_mult * f
        self.W1 = _init((heads, f, fh), 1.0 / math.sqrt(f), gen)
        self.b1 = nn.Parameter(0.1 * torch.randn(heads, 1, fh, generator=gen))
        self.W2 = _init((heads, fh, f), 1.0 / math.sqrt(fh), gen)
        self.b2 = nn.Parameter(0.1 * torch.randn(heads, 1, f, generator=gen))
        self._common_init(heads, f, chunk, v_minus_k, residual_q, gen)
        self.family = "ttt_mlp"

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        assert lr is not None
        B = q.size(0)
        T = q.size(2)
        C = self.chunk
        token_eta = self.token_eta()
        W1 = self.W1
        b1 = self.b1
        W2 = self.W2
        b2 = self.b2
        if torch.jit.is_scripting():
            W1 = W1.unsqueeze(0).expand(B, -1, -1, -1)
            b1 = b1.unsqueeze(0).expand(B, -1, -1, -1)
            W2 = W2.unsqueeze(0).expand(B, -1, -1, -1)
            b2 = b2.unsqueeze(0).expand(B, -1, -1, -1)
        outs: List[Tensor] = []
        for i in range((T + C - 1) // C):
            s = i * C
            e = min(s + C, T)
            n = e - s
            XQ = q[:, :, s:e]
            X1 = k[:, :, s:e]
            XV = v[:, :, s:e]
            eta = token_eta[:n].reshape(n, 1) * lr[:, :, s:e, 0].unsqueeze(-2)
            target = XV - X1 if self.v_minus_k else XV
            Z1 = X1 @ W1 + b1
            X2 = _gelu_tanh(Z1)
            Z2 = X2 @ W2 + b2
            grad2 = _ln_fused_l2_bwd(Z2, target, self.ln_weight, self.ln_bias, self.ln_eps)
            grad1 = (grad2 @ W2.transpose(-1, -2)) * _gelu_tanh_bwd(Z1)
            tril_eta = torch.tril(eta)
            Attn1 = torch.tril(XQ @ X1.transpose(-1, -2))
            b1_bar = b1 - tril_eta @ grad1
            Z1_bar = XQ @ W1 - (eta * Attn1) @ grad1 + b1_bar
            X2_bar = _gelu_tanh(Z1_bar)
            Attn2 = torch.tril(X2_bar @ X2.transpose(-1, -2))
            b2_bar = b2 - tril_eta @ grad2
            Z2_bar = X2_bar @ W2 - (eta * Attn2) @ grad2 + b2_bar
            last_eta = eta[:, :, -1, :].unsqueeze(-1)
            W1 = W1 - (last_eta * X1).transpose(-1, -2) @ grad1
            b1 = b1 - (last_eta * grad1).sum(dim=-2, keepdim=True)
            W2 = W2 - (last_eta * X2).transpose(-1, -2) @ grad2
            b2 = b2 - (last_eta * grad2).sum(dim=-2, keepdim=True)
            Z2_bar = _ln_fwd(Z2_bar, self.ln_weight, self.ln_bias, self.ln_eps)
            outs.append(XQ + Z2_bar if self.residual_q else Z2_bar)
        return torch.cat(outs, dim=2)

    def oracle_spec(self):
        return self._spec(dict(model="mlp", bias=True, activation="gelu_tanh",
                               trained=[0, 1, 2, 3]),
                          {"W0": _np(self.W1), "b0": _np(self.b1), "W1": _np(self.W2),
                           "b1": _np(self.b2)})


# ------------------------------------------------------------------------ plain linear


class PlainLinear(TTTLayer):
    """A linear fast weight ``f(x) = x W`` trained by plain chunked GD on the dot-product
    loss (``U = sum eta k^T v``) or the MSE loss (``U = -sum eta k^T (k W - v)``), with
    ``order`` apply_then_update or update_then_apply, every chunk (the last, possibly
    partial one included) updating. ``reduction="mean"`` divides by the chunk length;
    ``use_lr`` adds a per-token ``lr [B,H,T,1]`` input; ``lr_scale`` multiplies the
    update."""

    __constants__ = ["chunk", "dot", "update_first", "use_lr", "mean", "lr_scale"]

    def __init__(self, heads: int, d_in: int, d_out: int, *, loss: str = "dot",
                 order: str = "apply_then_update", chunk: int = 8, use_lr: bool = False,
                 reduction: str = "sum", lr_scale: float = 1.0, seed: int = 0):
        super().__init__()
        if loss not in ("dot", "mse"):
            raise ValueError("loss must be dot or mse")
        if order not in ("apply_then_update", "update_then_apply"):
            raise ValueError("order must be apply_then_update or update_then_apply")
        if reduction not in ("sum", "mean"):
            raise ValueError("reduction must be sum or mean")
        gen = torch.Generator().manual_seed(seed)
        self.w = _init((heads, d_in, d_out), 1.0 / math.sqrt(d_in), gen)
        self.chunk = int(chunk)
        self.dot = loss == "dot"
        self.update_first = order == "update_then_apply"
        self.use_lr = bool(use_lr)
        self.mean = reduction == "mean"
        self.lr_scale = float(lr_scale)
        self.family = f"linear_{loss}"
        self.input_names = ("q", "k", "v", "lr") if use_lr else ("q", "k", "v")

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Optional[Tensor] = None,
                momentum: Optional[Tensor] = None) -> Tensor:
        B = q.size(0)
        T = q.size(2)
        C = self.chunk
        lr_t = q  # placeholder, never read unless use_lr
        if self.use_lr:
            assert lr is not None
            lr_t = lr
        w = self.w
        if torch.jit.is_scripting():
            w = w.unsqueeze(0).expand(B, -1, -1, -1)
        outs: List[Tensor] = []
        for i in range((T + C - 1) // C):
            s = i * C
            e = min(s + C, T)
            if not self.update_first:
                outs.append(q[:, :, s:e] @ w)
            kc = k[:, :, s:e]
            ke = kc
            if self.use_lr:
                ke = kc * lr_t[:, :, s:e]
            if self.dot:
                u = ke.transpose(-1, -2) @ v[:, :, s:e]
            else:
                u = -(ke.transpose(-1, -2) @ (kc @ w - v[:, :, s:e]))
            if self.mean:
                u = u / float(e - s)
            w = w + self.lr_scale * u
            if self.update_first:
                outs.append(q[:, :, s:e] @ w)
        return torch.cat(outs, dim=2)

    def input_shapes(self, B, T, Tq=None):
        H, din, dout = self.w.shape
        s = {"q": [B, H, T, din], "k": [B, H, T, din], "v": [B, H, T, dout]}
        if self.use_lr:
            s["lr"] = [B, H, T, 1]
        return s

    def oracle_spec(self):
        spec = _base_spec(self.input_names)
        spec.update(layer="kvb_layer",
                    kwargs=dict(model="linear", trained=[0], loss="dot" if self.dot else "mse",
                                reduction="mean" if self.mean else "sum",
                                lr_scale=self.lr_scale, schedule="chunked", chunk=self.chunk,
                                order="update_then_apply" if self.update_first
                                else "apply_then_update"),
                    weights={"W": _np(self.w)})
        return spec
