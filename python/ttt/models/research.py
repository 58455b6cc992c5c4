"""The linear-attention TTT layers of `layers.py`, written the way research code writes them.

`layers.py` keeps one convention (``[B, H, T, D]``, fast weights ``input x output`` as
module parameters, ``x @ W``, chunk outputs collected in a list and ``torch.cat``-ed).
Published TTT code does not: LaCT folds the heads into the batch, passes the fast weights
to a free function, stores them ``output x input`` and applies them as
``bmm(W, x.transpose(1, 2))``, writes every chunk into a preallocated output; other code
bases use ``torch.einsum`` or the ``[B, T, H, D]`` layout of flash-attention style
kernels. Each module here computes *exactly* the function of one existing layer --

* ``linear_dot``: `PlainLinear` (dot loss, update then apply, every chunk updates, the
  last one partial),
* ``linear_mse``: `PlainLinear` (MSE loss, mean over the chunk, per-token lr, apply then
  update),
* ``lact_v2``: `LaCTSwiGLU` as Table 2's V2 (SwiGLU, only W1 trained, per-token lr,
  momentum, Muon with the LaCT table, no weight norm, apply then update, the last chunk
  only applied),
* ``lact_nvs``: `LaCTSwiGLU` as LaCT-NVS (one full-batch step of W0, W1, W2 on the
  input views' tokens with per-weight rates, Muon with the NVS triple and weight norm,
  then applied to the target views' tokens),
* ``vit3_glu``: `ViT3GLU` (ViT^3's simplified-SwiGLU branch: one full-batch step of Wa
  and Wg, clipped per output column, mean over the tokens),
* ``ttt_linear``: `TTTLinear` (ttt-lm-pytorch's TTT-Linear, dual form: LayerNorm-MSE
  loss, trained bias, ``token_eta x lr``, output ``q + LN(Z)``),
* ``ttt_mlp``: `TTTMLP` (ttt-lm-pytorch's TTT-MLP, the same with a tanh-GELU MLP)

-- in one or more of these spellings:

  (a) a preallocated output buffer written chunk by chunk in place, ``o[:, :, s:e] = o_c``;
  (b) the fast weights passed as forward arguments instead of parameters;
  (c) weights stored ``output x input``, applied as ``(W @ x.transpose(-1, -2))
      .transpose(-1, -2)`` or as ``x @ W.transpose(-1, -2)``;
  (d) ``torch.einsum`` / ``torch.bmm`` instead of ``@``;
  (e) heads folded into the batch (``[B*H, T, D]``, weights ``.repeat(B, 1, 1)``);
  (f) the ``[B, T, H, D]`` layout;
  (g) ttt-lm-pytorch's scan: the sequence reshaped to mini-batches ``[N, B, H, C, D]``,
      mini-batch ``i`` taken by index (``x[i]``), the state a dict carried through a
      function, each output written into a preallocated ``torch.empty`` buffer
      (``out[i] = y``), the result permuted and reshaped to ``[B, T, H * D]``;
  (h) the input and target views' tokens in one sequence, the step taken on a prefix of
      it and the output read from the rest, as LaCT-NVS's ``ttt_ua_order`` schedules
      ``[start, end, update, apply]`` spans; per-weight rates ``lr.chunk(3, dim=-1)``.

Every class docstring names its spellings. The constructors take the weights of the
`layers.py` twin (``[H, in, out]``) and store them in their own layout, so that the two
can be compared number for number; ``python/scripts/make_fixtures.py --research`` checks
that in float64 before it exports, and writes ``test/fixtures/onnx/research/``.

The forwards are plain Python loops over chunks with static shapes: they are meant to be
traced (TorchScript exporter, ``dynamo=False``) or exported with the dynamo exporter, not
scripted.
"""

import math
from typing import Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .layers import LACT_NS_COEFFS, NVS_NS_COEFFS

__all__ = [
    "LinearDotPrealloc",
    "LinearDotFastWeightArgs",
    "LinearDotOutIn",
    "LinearDotEinsum",
    "LinearDotBmmFolded",
    "LinearDotBTHD",
    "LinearDotChunkView",
    "LinearMSEXWt",
    "LinearMSEBTHDEinsumPrealloc",
    "LaCTV2Function",
    "LaCTV2FoldedParams",
    "TTTLinearScan",
    "TTTMLPScan",
    "LaCTV2BTHDEinsum",
    "LaCTNVSUAOrder",
    "ViT3GLUBTHDEinsum",
    "zeropower_via_newtonschulz5",
]


# ------------------------------------------------------------------ linear_dot
# f(x) = x W, U = sum_t k_t^T v_t over the chunk, W <- W + U, then o_c = q_c W.


class LinearDotPrealloc(nn.Module):
    """linear_dot. Spelling (a): ``o = torch.zeros_like(v)`` and ``o[:, :, s:e] = q_c @ w``
    (the rest is the project's convention: ``[B, H, T, D]``, ``w [H, in, out]``
    parameter, ``x @ w``)."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())  # [H, d_in, d_out]
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        T = q.shape[2]
        o = torch.zeros_like(v)
        w = self.w
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            w = w + k[:, :, s:e].transpose(-1, -2) @ v[:, :, s:e]
            o[:, :, s:e] = q[:, :, s:e] @ w
        return o


class LinearDotFastWeightArgs(nn.Module):
    """linear_dot. Spelling (b): the initial fast weight is a forward argument
    ``w [B, H, in, out]`` (one per sample, as a function like LaCT's
    ``block_causal_lact_swiglu`` receives it), not a parameter. Otherwise ``[B, H, T, D]``,
    ``x @ w``, list + ``torch.cat``."""

    input_names = ("q", "k", "v", "w")

    def __init__(self, chunk: int = 8):
        super().__init__()
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor, w: Tensor) -> Tensor:
        T = q.shape[2]
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            w = w + k[:, :, s:e].transpose(-1, -2) @ v[:, :, s:e]
            outs.append(q[:, :, s:e] @ w)
        return torch.cat(outs, dim=2)


class LinearDotOutIn(nn.Module):
    """linear_dot. Spelling (c), first form: ``w [H, out, in]`` applied as
    ``(w @ x.transpose(-1, -2)).transpose(-1, -2)``, updated with ``v_c^T k_c``.
    Otherwise ``[B, H, T, D]``, parameter, list + ``torch.cat``."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().transpose(-1, -2).contiguous().clone())  # [H, out, in]
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        T = q.shape[2]
        w = self.w
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            qi, ki, vi = q[:, :, s:e], k[:, :, s:e], v[:, :, s:e]
            w = w + vi.transpose(-1, -2) @ ki
            outs.append((w @ qi.transpose(-1, -2)).transpose(-1, -2))
        return torch.cat(outs, dim=2)


class LinearDotEinsum(nn.Module):
    """linear_dot. Spelling (d): ``torch.einsum`` for the update
    (``'bhnd,bhne->bhde'``) and the apply (``'bhnd,bhde->bhne'``), the parameter
    ``w [H, in, out]`` made per sample with ``.unsqueeze(0).repeat(B, 1, 1, 1)`` first.
    Otherwise ``[B, H, T, D]``, list + ``torch.cat``."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        B, H, T, D = q.shape
        w = self.w.unsqueeze(0).repeat(B, 1, 1, 1)
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            w = w + torch.einsum("bhnd,bhne->bhde", k[:, :, s:e], v[:, :, s:e])
            outs.append(torch.einsum("bhnd,bhde->bhne", q[:, :, s:e], w))
        return torch.cat(outs, dim=2)


class LinearDotBmmFolded(nn.Module):
    """linear_dot. Spellings (d) ``torch.bmm`` and (e) heads folded into the batch:
    ``q.reshape(B * H, T, D)``, ``w.repeat(B, 1, 1)`` (``[B*H, in, out]``), the result
    reshaped back to ``[B, H, T, D]``. Parameter ``w [H, in, out]``, list + ``torch.cat``."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        B, H, T, D = q.shape
        Dv = v.shape[-1]
        q = q.reshape(B * H, T, D)
        k = k.reshape(B * H, T, D)
        v = v.reshape(B * H, T, Dv)
        w = self.w.repeat(B, 1, 1)
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            w = w + torch.bmm(k[:, s:e].transpose(1, 2), v[:, s:e])
            outs.append(torch.bmm(q[:, s:e], w))
        return torch.cat(outs, dim=1).reshape(B, H, T, Dv)


class LinearDotChunkView(nn.Module):
    """linear_dot. Spelling (i): the sequence viewed as chunks, ``x.reshape(B, H, N, C,
    D)``, chunk n read as ``x[:, :, n]``; the update written with a step on each factor,
    ``w + 0.5 * k_c.T @ (2.0 * v_c)`` (PyTorch evaluates ``s * k.T @ v`` as ``(s k^T) v``;
    0.5 and 2.0 multiply to the twin's step of 1 exactly); the outputs ``torch.stack``ed
    on the chunk axis and viewed back. The tokens after the last whole chunk are the
    last, shorter chunk, cut off by a slice and their output concatenated."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())  # [H, d_in, d_out]
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        B, H, T, _ = q.shape
        C = self.chunk
        n = T // C
        qs, ks, vs = (x[:, :, :n * C].reshape(B, H, n, C, x.shape[-1]) for x in (q, k, v))
        w = self.w
        outs = []
        for i in range(n):
            w = w + 0.5 * ks[:, :, i].transpose(-1, -2) @ (2.0 * vs[:, :, i])
            outs.append(qs[:, :, i] @ w)
        o = torch.stack(outs, dim=2).reshape(B, H, n * C, w.shape[-1])
        if n * C == T:
            return o
        w = w + 0.5 * k[:, :, n * C:].transpose(-1, -2) @ (2.0 * v[:, :, n * C:])
        return torch.cat([o, q[:, :, n * C:] @ w], dim=2)


class LinearDotBTHD(nn.Module):
    """linear_dot. Spelling (f): ``q, k, v, o : [B, T, H, D]``; every chunk is sliced on
    dim 1 and moved to ``[B, H, n, D]`` with ``.transpose(1, 2)`` for the products, the
    chunk output moved back; ``torch.cat(dim=1)``. Parameter ``w [H, in, out]``, ``@``."""

    input_names = ("q", "k", "v")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        T = q.shape[1]
        w = self.w
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            qi = q[:, s:e].transpose(1, 2)
            ki = k[:, s:e].transpose(1, 2)
            vi = v[:, s:e].transpose(1, 2)
            w = w + ki.transpose(-1, -2) @ vi
            outs.append((qi @ w).transpose(1, 2))
        return torch.cat(outs, dim=1)


# ------------------------------------------------------------------ linear_mse
# f(x) = x W, o_c = q_c W, then W <- W - (1/n) sum_t lr_t k_t^T (k_t W - v_t).


class LinearMSEXWt(nn.Module):
    """linear_mse. Spelling (c), second form: ``w [H, out, in]`` applied as
    ``x @ w.transpose(-1, -2)``; the MSE gradient written as
    ``(pred - v)^T @ (lr * k)`` in the ``out x in`` orientation and divided by the chunk
    length. Otherwise ``[B, H, T, D]``, parameter, list + ``torch.cat``."""

    input_names = ("q", "k", "v", "lr")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().transpose(-1, -2).contiguous().clone())  # [H, out, in]
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor) -> Tensor:
        T = q.shape[2]
        w = self.w
        outs = []
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            qi, ki, vi, lri = q[:, :, s:e], k[:, :, s:e], v[:, :, s:e], lr[:, :, s:e]
            outs.append(qi @ w.transpose(-1, -2))
            pred = ki @ w.transpose(-1, -2)
            grad = (pred - vi).transpose(-1, -2) @ (ki * lri)
            w = w - grad / (e - s)
        return torch.cat(outs, dim=2)


class LinearMSEBTHDEinsumPrealloc(nn.Module):
    """linear_mse. Spellings (a) ``o = v.new_zeros(B, T, H, D)`` with ``o[:, s:e] = ...``,
    (d) ``torch.einsum`` on (f) ``[B, T, H, D]`` tensors (``'bthd,bhde->bthe'``, the
    gradient ``'bthd,bthe->bhde'``), ``lr [B, T, H, 1]``; parameter ``w [H, in, out]``
    made per sample with ``.unsqueeze(0).repeat(B, 1, 1, 1)``."""

    input_names = ("q", "k", "v", "lr")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor) -> Tensor:
        B, T, H, D = q.shape
        w = self.w.unsqueeze(0).repeat(B, 1, 1, 1)
        o = v.new_zeros(B, T, H, w.shape[-1])
        for s in range(0, T, self.chunk):
            e = min(s + self.chunk, T)
            ki = k[:, s:e]
            o[:, s:e] = torch.einsum("bthd,bhde->bthe", q[:, s:e], w)
            err = torch.einsum("bthd,bhde->bthe", ki, w) - v[:, s:e]
            grad = torch.einsum("bthd,bthe->bhde", ki * lr[:, s:e], err) / (e - s)
            w = w - grad
        return o


# ------------------------------------------------------------------ lact_v2
# LaCT's block_causal_lact_swiglu with only W1 trained and no weight norm:
# f(x) = W1 (silu(W0 x) * (W2 x)) with W0, W2 [dh, d] and W1 [d, dh] (output x input).


def zeropower_via_newtonschulz5(G: Tensor, coeffs=LACT_NS_COEFFS) -> Tensor:
    """LaCT's Muon step (fp32 here; the reference casts to bf16): transpose a tall
    matrix, divide by its Frobenius norm (``.norm(dim=(-2, -1))``, ONNX ``ReduceL2``) +
    1e-7, five quintic Newton-Schulz steps with LaCT's table, transpose back.

    LaCT writes the transposes as ``X.mT``; torch 2.15's TorchScript exporter has no
    symbolic for ``aten::mT`` (UnsupportedOperatorError), so this spells them
    ``X.transpose(-2, -1)``, which exports to the same ONNX Transpose."""
    X = G
    if G.size(-2) > G.size(-1):
        X = X.transpose(-2, -1)
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for a, b, c in coeffs:
        A = X @ X.transpose(-2, -1)
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.transpose(-2, -1)
    return X


def block_causal_lact_swiglu_w1(w0: Tensor, w1: Tensor, w2: Tensor, q: Tensor, k: Tensor,
                                v: Tensor, lr1: Tensor, momentum: Tensor,
                                chunk_size: int) -> Tensor:
    """LaCT's ``block_causal_lact_swiglu`` (apply, then update on every chunk but the
    last), only W1 trained: ``w0, w2 [b, dh, d]``, ``w1 [b, d, dh]``, ``q, k, v
    [b, l, d]``, ``lr1, momentum [b, l, 1]`` (b = batch x heads). The output is a
    preallocated ``[b, d, l]`` buffer written per chunk and transposed at the end."""
    q = q.transpose(1, 2)  # [b, d, l]
    v = v.transpose(1, 2)
    output = torch.zeros_like(v)
    dw1_momentum = torch.zeros_like(w1)
    seq_len = k.shape[1]
    e_index = 0
    for i in range(0, seq_len - chunk_size, chunk_size):
        s_index = i
        e_index = s_index + chunk_size
        ki = k[:, s_index:e_index, :]  # [b, l, d]
        vi = v[:, :, s_index:e_index]  # [b, d, l]
        qi = q[:, :, s_index:e_index]
        lr1i = lr1[:, s_index:e_index, :]  # [b, l, 1]

        # apply: [b, dh, d] x [b, d, l] -> [b, dh, l]
        h = torch.bmm(w2, qi)
        gate = F.silu(torch.bmm(w0, qi))
        output[:, :, s_index:e_index] = torch.bmm(w1, gate * h)

        # update W1 (negative dot loss; W0 and W2 stay)
        gate_before_act = torch.bmm(w0, ki.transpose(1, 2))
        hidden_before_mul = torch.bmm(w2, ki.transpose(1, 2))
        hidden = F.silu(gate_before_act) * hidden_before_mul
        dw1 = torch.bmm(vi, hidden.transpose(1, 2) * lr1i)  # [b, d, dh]

        m_i = momentum[:, s_index:e_index, :].mean(dim=1, keepdim=True)
        dw1 = dw1 + dw1_momentum * m_i
        dw1_momentum = dw1

        dw1 = zeropower_via_newtonschulz5(dw1)
        w1 = w1 + dw1

    s_index = e_index
    e_index = seq_len
    qi = q[:, :, s_index:e_index]
    h = torch.bmm(w2, qi)
    gate = F.silu(torch.bmm(w0, qi))
    output[:, :, s_index:e_index] = torch.bmm(w1, gate * h)
    return output.transpose(1, 2)


class LaCTV2Function(nn.Module):
    """lact_v2, as LaCT's reference function is called. Spellings (a) preallocated
    ``[b, d, l]`` output with ``output[:, :, s:e] = bmm(w1, gate * h)``, (b) the fast
    weights ``w0, w1, w2`` are forward arguments (``[B*H, dh, d]``, ``[B*H, d, dh]``,
    ``[B*H, dh, d]``, per sample and head), (c) ``output x input`` weights applied as
    ``bmm(W, x.transpose(1, 2))``, (d) ``torch.bmm``, (e) heads folded into the batch:
    ``q, k, v [B*H, T, d]``, ``lr1, momentum [B*H, T, 1]``. Muon is LaCT's
    ``zeropower_via_newtonschulz5`` (``.norm(dim=(-2, -1))``)."""

    input_names = ("w0", "w1", "w2", "q", "k", "v", "lr1", "momentum")

    def __init__(self, chunk: int = 16):
        super().__init__()
        self.chunk = chunk

    def forward(self, w0: Tensor, w1: Tensor, w2: Tensor, q: Tensor, k: Tensor, v: Tensor,
                lr1: Tensor, momentum: Tensor) -> Tensor:
        return block_causal_lact_swiglu_w1(w0, w1, w2, q, k, v, lr1, momentum, self.chunk)


class LaCTV2FoldedParams(nn.Module):
    """lact_v2, as LaCT's layer calls its function: the weights are parameters
    ``[H, dh, d]`` / ``[H, d, dh]`` (c: ``output x input``) repeated over the batch
    (``.repeat(B, 1, 1)``, e: heads folded into the batch); ``q, k, v [B, H, T, d]``,
    ``lr [B, H, T, 3]`` (column 1 is W1's rate), ``momentum [B, H, T]`` are reshaped to
    ``[B*H, T, .]``; (a) preallocated output, (d) ``torch.bmm``."""

    input_names = ("q", "k", "v", "lr", "momentum")

    def __init__(self, w0: Tensor, w1: Tensor, w2: Tensor, chunk: int = 16):
        super().__init__()
        # the twin's [H, in, out] -> LaCT's [H, out, in]
        self.w0 = nn.Parameter(w0.detach().transpose(-1, -2).contiguous().clone())
        self.w1 = nn.Parameter(w1.detach().transpose(-1, -2).contiguous().clone())
        self.w2 = nn.Parameter(w2.detach().transpose(-1, -2).contiguous().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor, momentum: Tensor) -> Tensor:
        B, H, T, D = q.shape
        fw_w0 = self.w0.repeat(B, 1, 1)
        fw_w1 = self.w1.repeat(B, 1, 1)
        fw_w2 = self.w2.repeat(B, 1, 1)
        q = q.reshape(B * H, T, D)
        k = k.reshape(B * H, T, D)
        v = v.reshape(B * H, T, v.shape[-1])
        lr1 = lr[..., 1:2].reshape(B * H, T, 1)
        m = momentum.reshape(B * H, T, 1)
        o = block_causal_lact_swiglu_w1(fw_w0, fw_w1, fw_w2, q, k, v, lr1, m, self.chunk)
        return o.reshape(B, H, T, -1)


class LaCTV2BTHDEinsum(nn.Module):
    """lact_v2 on (f) ``[B, T, H, D]`` tensors with (d) ``torch.einsum``:
    ``q, k, v [B, T, H, d]``, ``lr [B, T, H, 3]``, ``momentum [B, T, H]``; (c) weights
    ``output x input`` parameters (``'hed,bthd->bthe'``), W1 made per sample with
    ``.unsqueeze(0).repeat(B, 1, 1, 1)``; chunk outputs in a list and
    ``torch.cat(dim=1)``; Muon written with ``transpose(-1, -2)`` on ``[B, H, d, dh]``
    updates and ``torch.linalg.matrix_norm``."""

    input_names = ("q", "k", "v", "lr", "momentum")

    def __init__(self, w0: Tensor, w1: Tensor, w2: Tensor, chunk: int = 16):
        super().__init__()
        self.w0 = nn.Parameter(w0.detach().transpose(-1, -2).contiguous().clone())  # [H, dh, d]
        self.w1 = nn.Parameter(w1.detach().transpose(-1, -2).contiguous().clone())  # [H, d, dh]
        self.w2 = nn.Parameter(w2.detach().transpose(-1, -2).contiguous().clone())
        self.chunk = chunk

    @staticmethod
    def _muon(g: Tensor) -> Tensor:
        tall = g.shape[-2] > g.shape[-1]
        x = g.transpose(-1, -2) if tall else g
        x = x / (torch.linalg.matrix_norm(x, keepdim=True) + 1e-7)
        for a, b, c in LACT_NS_COEFFS:
            A = x @ x.transpose(-1, -2)
            x = a * x + (b * A + c * (A @ A)) @ x
        return x.transpose(-1, -2) if tall else x

    def _f(self, x: Tensor, w1: Tensor) -> Tensor:
        gate = F.silu(torch.einsum("hed,bthd->bthe", self.w0, x))
        hid = gate * torch.einsum("hed,bthd->bthe", self.w2, x)
        return torch.einsum("bhde,bthe->bthd", w1, hid)

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor, momentum: Tensor) -> Tensor:
        B, T, H, D = q.shape
        C = self.chunk
        w1 = self.w1.unsqueeze(0).repeat(B, 1, 1, 1)  # [B, H, d, dh]
        mom = torch.zeros_like(w1)
        outs = []
        n_upd = (T - 1) // C
        for i in range(n_upd):
            s, e = i * C, (i + 1) * C
            outs.append(self._f(q[:, s:e], w1))
            ki, vi = k[:, s:e], v[:, s:e]
            gk = torch.einsum("hed,bthd->bthe", self.w0, ki)
            hk = torch.einsum("hed,bthd->bthe", self.w2, ki)
            hidden = F.silu(gk) * hk * lr[:, s:e, :, 1:2]
            dw1 = torch.einsum("bthd,bthe->bhde", vi, hidden)  # [B, H, d, dh]
            mu = momentum[:, s:e].mean(dim=1)[:, :, None, None]  # [B, H, 1, 1]
            mom = mu * mom + dw1
            w1 = w1 + self._muon(mom)
        outs.append(self._f(q[:, n_upd * C:], w1))
        return torch.cat(outs, dim=1)


# ------------------------------------------------------------------ lact_nvs
# LaCT-NVS (a1600012888/LaCT, lact_nvs): fast_weight_swish_glu_weight_norm_mini_batch_apply
# with its ttt_ua_order, heads folded into the batch.


def silu_backprop(dy: Tensor, x: Tensor) -> Tensor:
    sigma = torch.sigmoid(x)
    return dy * sigma * (1 + x * (1 - sigma))


def zeropower_nvs(G: Tensor) -> Tensor:
    """LaCT-NVS's Newton-Schulz: the constant triple for every step."""
    return zeropower_via_newtonschulz5(G, NVS_NS_COEFFS)


def fast_weight_swish_glu_weight_norm_mini_batch_apply(
        w0: Tensor, w1: Tensor, w2: Tensor, q: Tensor, k: Tensor, v: Tensor, lr0: Tensor,
        lr1: Tensor, lr2: Tensor, ttt_ua_order) -> Tensor:
    """``w0, w2 [b, d, dh]``, ``w1 [b, dh, d]``, ``q, k, v [b, l, d]``, ``lr0, lr1, lr2
    [b, l, 1]``; ``ttt_ua_order`` lists ``[start, end, update, apply]`` spans."""
    w0_norm = w0.detach().norm(dim=1, keepdim=True)
    w1_norm = w1.detach().norm(dim=1, keepdim=True)
    w2_norm = w2.detach().norm(dim=1, keepdim=True)
    output = []
    for start, end, update, apply in ttt_ua_order:
        w0_now, w1_now, w2_now = w0, w1, w2
        if update:
            ki, vi = k[:, start:end, :], v[:, start:end, :]
            lr0i, lr1i, lr2i = lr0[:, start:end, :], lr1[:, start:end, :], lr2[:, start:end, :]
            gate_before_act = torch.bmm(ki, w0_now)
            hidden_before_mul = torch.bmm(ki, w2_now)
            hidden = F.silu(gate_before_act) * hidden_before_mul
            dhidden = torch.bmm(vi, w1_now.transpose(1, 2))
            dhidden_before_mul = dhidden * F.silu(gate_before_act)
            dgate = dhidden * hidden_before_mul
            dgate_before_act = silu_backprop(dgate, gate_before_act)
            dw1 = torch.bmm(hidden.transpose(1, 2), vi * lr1i)
            dw0 = torch.bmm(ki.transpose(1, 2), dgate_before_act * lr0i)
            dw2 = torch.bmm(ki.transpose(1, 2), dhidden_before_mul * lr2i)
            w1 = w1 + zeropower_nvs(dw1)
            w0 = w0 + zeropower_nvs(dw0)
            w2 = w2 + zeropower_nvs(dw2)
            w0 = w0 / (w0.norm(dim=1, keepdim=True) + 1e-5) * w0_norm
            w1 = w1 / (w1.norm(dim=1, keepdim=True) + 1e-5) * w1_norm
            w2 = w2 / (w2.norm(dim=1, keepdim=True) + 1e-5) * w2_norm
        if apply:
            qi = q[:, start:end, :]
            oi = torch.bmm(F.silu(torch.bmm(qi, w0)) * torch.bmm(qi, w2), w1)
            output.append(oi)
    return torch.cat(output, dim=1)


class LaCTNVSUAOrder(nn.Module):
    """lact_nvs as LaCT-NVS runs it: (h) the input views' tokens (n of them) and the
    target views' tokens in one sequence ``q, k, v [B*H, n + m, d]`` with
    ``ttt_ua_order = [[0, n, True, False], [n, n + m, False, True]]``, rates ``lr
    [B*H, n + m, 3]`` split with ``lr.chunk(3, dim=-1)``; (e) heads folded into the
    batch, weights ``[H, d, dh]`` parameters ``.repeat(B, 1, 1)``; (d) ``torch.bmm``;
    the gradients written out as LaCT writes them (``silu_backprop``), weight norm over
    ``dim=1``."""

    input_names = ("q", "k", "v", "lr")

    def __init__(self, w0: Tensor, w1: Tensor, w2: Tensor, n_input: int):
        super().__init__()
        self.w0 = nn.Parameter(w0.detach().clone())
        self.w1 = nn.Parameter(w1.detach().clone())
        self.w2 = nn.Parameter(w2.detach().clone())
        self.n_input = n_input

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor) -> Tensor:
        b = q.shape[0] // self.w0.shape[0]
        lr0, lr1, lr2 = lr.chunk(3, dim=-1)
        n, total = self.n_input, q.shape[1]
        order = [[0, n, True, False], [n, total, False, True]]
        return fast_weight_swish_glu_weight_norm_mini_batch_apply(
            self.w0.repeat(b, 1, 1), self.w1.repeat(b, 1, 1), self.w2.repeat(b, 1, 1),
            q, k, v, lr0, lr1, lr2, order)


# ------------------------------------------------------------------ vit3_glu


class ViT3GLUBTHDEinsum(nn.Module):
    """vit3_glu on (f) ``[B, N, H, d]`` tokens with (d) ``torch.einsum``: the inner
    loss's gradient ``-v / N * scale`` with N read from the keys' shape, the clip
    ``g / (torch.linalg.vector_norm(g, dim=-2, keepdim=True) + 1)``."""

    input_names = ("q", "k", "v")

    def __init__(self, w1: Tensor, w2: Tensor, scale: float):
        super().__init__()
        self.w1 = nn.Parameter(w1.detach().clone())  # [H, d, d], input x output
        self.w2 = nn.Parameter(w2.detach().clone())
        self.scale = scale

    @staticmethod
    def _clip(g: Tensor) -> Tensor:
        return g / (torch.linalg.vector_norm(g, dim=-2, keepdim=True) + 1.0)

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        e = -v / k.shape[1] * self.scale
        z1 = torch.einsum("bnhd,hde->bnhe", k, self.w1)
        z2 = torch.einsum("bnhd,hde->bnhe", k, self.w2)
        sig = torch.sigmoid(z2)
        g1 = torch.einsum("bnhd,bnhe->bhde", k, e * z2 * sig)
        g2 = torch.einsum("bnhd,bnhe->bhde", k, e * z1 * sig * (1.0 + z2 * (1.0 - sig)))
        w1 = self.w1 - self._clip(g1)
        w2 = self.w2 - self._clip(g2)
        return torch.einsum("bnhd,bhde->bnhe", q, w1) * F.silu(
            torch.einsum("bnhd,bhde->bnhe", q, w2))


# ------------------------------------------------------------------ ttt_linear
# ttt-lm-pytorch (test-time-training/ttt-lm-pytorch, ttt.py): TTTLinear.ttt with its
# scan() and compute_mini_batch, inputs already projected.


def ln_fwd(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-6) -> Tensor:
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    std = torch.sqrt(var + eps)
    x_hat = (x - mu) / std
    return gamma * x_hat + beta


def ln_fused_l2_bwd(x: Tensor, l2_target: Tensor, gamma: Tensor, beta: Tensor,
                    eps: float = 1e-6) -> Tensor:
    D = x.shape[-1]
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    std = torch.sqrt(var + eps)
    x_hat = (x - mu) / std
    y = gamma * x_hat + beta
    grad_output = y - l2_target
    grad_x_hat = grad_output * gamma
    z = (
        (1.0 / D)
        * (
            D * grad_x_hat
            - grad_x_hat.sum(dim=-1, keepdim=True)
            - x_hat * (grad_x_hat * x_hat).sum(dim=-1, keepdim=True)
        )
        / std
    )
    return z


def scan(f, init, xs, out):
    """ttt-lm-pytorch's scan (without gradient checkpointing): mini-batch i of every
    input by index, the carry threaded through, the output written in place."""
    carry = init
    num_items = len(next(iter(xs.values())))
    for i in range(num_items):
        x = {key: tensor[i] for key, tensor in xs.items()}
        carry, y = f(carry, x)
        out[i] = y
    return carry, out


class TTTLinearScan(nn.Module):
    """ttt_linear. Spelling (g), with (f) on the way in and out: ``XQ, XK, XV [B, T, H*D]``
    and ``lr [B, T, H]`` (``ttt_lr_eta``, already divided by the head dim) are reshaped to
    mini-batches ``[B, H, N, C, D]`` and permuted to ``[N, B, H, C, D]``; ``eta =
    token_eta [C, 1] * lr [1, C]`` per mini-batch; ``scan`` runs ``compute_mini_batch`` (the
    dual form) over the mini-batches with the states (``W1_states``, ``b1_states``) tiled
    over the batch, writing each ``XQ + LN(Z1_bar)`` into ``torch.empty``; the result is
    permuted back and reshaped to ``[B, T, H*D]`` (ttt-lm-pytorch's ``TTTBase.ttt``)."""

    input_names = ("XQ", "XK", "XV", "ttt_lr")
    states = ("W1", "b1")

    def __init__(self, twin):
        super().__init__()
        self.num_heads, self.head_dim = twin.W1.shape[0], twin.W1.shape[1]
        self.mini_batch_size = twin.chunk
        for name in self.states:  # W1 [H, f, f], b1 [H, 1, f] (TTT-MLP: W1, b1, W2, b2)
            setattr(self, name, nn.Parameter(getattr(twin, name).detach().clone()))
        self.ttt_norm_weight = nn.Parameter(twin.ln_weight.detach()[:, 0].clone())  # [H, f]
        self.ttt_norm_bias = nn.Parameter(twin.ln_bias.detach()[:, 0].clone())
        self.register_buffer("token_idx", twin.token_idx.detach().clone())
        self.learnable_token_idx = nn.Parameter(twin.learnable_token_idx.detach().clone())

    def get_eta(self, ttt_lr: Tensor) -> Tensor:
        B, N, C = ttt_lr.shape[0], ttt_lr.shape[1] // self.mini_batch_size, self.mini_batch_size
        ttt_lr_eta = ttt_lr.reshape(B, N, C, self.num_heads).permute(0, 3, 1, 2)
        ttt_lr_eta = ttt_lr_eta.reshape(B, self.num_heads, N, 1, C)
        token_idx = torch.clamp_min(self.token_idx + self.learnable_token_idx, 0.0)
        token_eta = torch.broadcast_to(token_idx.reshape(1, 1, 1, C, 1),
                                       (B, self.num_heads, N, C, 1))
        return token_eta * ttt_lr_eta                                   # [B, H, N, C, C]

    def ln(self):
        H, f = self.num_heads, self.head_dim
        return self.ttt_norm_weight.reshape(H, 1, f), self.ttt_norm_bias.reshape(H, 1, f)

    def compute_mini_batch(self, params_dict, inputs):
        W1_init = params_dict["W1_states"]
        b1_init = params_dict["b1_states"]
        XQ_mini_batch = inputs["XQ"]
        XV_mini_batch = inputs["XV"]
        XK_mini_batch = inputs["XK"]
        eta_mini_batch = inputs["eta"]
        X1 = XK_mini_batch
        Z1 = X1 @ W1_init + b1_init
        reconstruction_target = XV_mini_batch - XK_mini_batch
        ln_weight, ln_bias = self.ln()
        grad_l_wrt_Z1 = ln_fused_l2_bwd(Z1, reconstruction_target, ln_weight, ln_bias)
        Attn1 = torch.tril(XQ_mini_batch @ X1.transpose(-2, -1))
        b1_bar = b1_init - torch.tril(eta_mini_batch) @ grad_l_wrt_Z1
        Z1_bar = XQ_mini_batch @ W1_init - (eta_mini_batch * Attn1) @ grad_l_wrt_Z1 + b1_bar
        last_eta_mini_batch = eta_mini_batch[:, :, -1, :, None]
        W1_last = W1_init - (last_eta_mini_batch * X1).transpose(-1, -2) @ grad_l_wrt_Z1
        b1_last = b1_init - torch.sum(last_eta_mini_batch * grad_l_wrt_Z1, dim=-2,
                                      keepdim=True)
        Z1_bar = ln_fwd(Z1_bar, ln_weight, ln_bias)
        XQW_mini_batch = XQ_mini_batch + Z1_bar
        return {"W1_states": W1_last, "b1_states": b1_last}, XQW_mini_batch

    def forward(self, XQ: Tensor, XK: Tensor, XV: Tensor, ttt_lr: Tensor) -> Tensor:
        B, L = XQ.shape[0], XQ.shape[1]
        H, f, C = self.num_heads, self.head_dim, self.mini_batch_size
        N = L // C

        def mini_batches(x: Tensor) -> Tensor:
            return x.reshape(B, N, C, H, f).permute(0, 3, 1, 2, 4)      # [B, H, N, C, f]

        inputs = {"XQ": mini_batches(XQ), "XK": mini_batches(XK), "XV": mini_batches(XV),
                  "eta": self.get_eta(ttt_lr)}
        init_params_dict = {f"{name}_states": torch.tile(getattr(self, name).unsqueeze(0),
                                                          dims=(B, 1, 1, 1))
                            for name in self.states}
        inputs = {k: x.permute(2, 0, 1, 3, 4) for k, x in inputs.items()}  # [N, B, H, C, .]
        XQW_batch = torch.empty((N, B, H, C, f), device=XQ.device, dtype=XQ.dtype)
        _, XQW_batch = scan(self.compute_mini_batch, init_params_dict, inputs, XQW_batch)
        XQW_batch = XQW_batch.permute(1, 0, 3, 2, 4)                    # [B, N, C, H, f]
        return XQW_batch.reshape(B, L, H * f)


def gelu_bwd(x: Tensor) -> Tensor:
    """ttt-lm-pytorch's derivative of the tanh-approximated GELU (it writes sqrt(2/pi)
    as 0.79788456 and 3 * 0.044715 * sqrt(2/pi) as 0.1070322243; the exact constants
    here keep the module equal to its twin in float64)."""
    c = math.sqrt(2.0 / math.pi)
    tanh_out = torch.tanh(c * x * (1 + 0.044715 * x * x))
    ff = 0.5 * x * ((1 - tanh_out * tanh_out) * (c + 3 * 0.044715 * c * x * x)) + 0.5 * (
        1 + tanh_out)
    return ff


class TTTMLPScan(TTTLinearScan):
    """ttt_mlp. Spelling (g), with (f): ttt-lm-pytorch's TTT-MLP (``W1 [f, 4f], b1,
    W2 [4f, f], b2``, tanh GELU, the dual form applied layer by layer) in the same scan
    as `TTTLinearScan`."""

    states = ("W1", "b1", "W2", "b2")

    def compute_mini_batch(self, params_dict, inputs):
        W1_init = params_dict["W1_states"]
        b1_init = params_dict["b1_states"]
        W2_init = params_dict["W2_states"]
        b2_init = params_dict["b2_states"]
        XQ_mini_batch = inputs["XQ"]
        XV_mini_batch = inputs["XV"]
        XK_mini_batch = inputs["XK"]
        eta_mini_batch = inputs["eta"]
        X1 = XK_mini_batch
        Z1 = X1 @ W1_init + b1_init
        X2 = F.gelu(Z1, approximate="tanh")
        Z2 = X2 @ W2_init + b2_init
        reconstruction_target = XV_mini_batch - XK_mini_batch
        ln_weight, ln_bias = self.ln()
        grad_l_wrt_Z2 = ln_fused_l2_bwd(Z2, reconstruction_target, ln_weight, ln_bias)
        grad_l_wrt_Z1 = grad_l_wrt_Z2 @ W2_init.transpose(-2, -1) * gelu_bwd(Z1)
        Attn1 = torch.tril(XQ_mini_batch @ X1.transpose(-2, -1))
        b1_bar = b1_init - torch.tril(eta_mini_batch) @ grad_l_wrt_Z1
        Z1_bar = XQ_mini_batch @ W1_init - (eta_mini_batch * Attn1) @ grad_l_wrt_Z1 + b1_bar
        X2_bar = F.gelu(Z1_bar, approximate="tanh")
        Attn2 = torch.tril(X2_bar @ X2.transpose(-2, -1))
        b2_bar = b2_init - torch.tril(eta_mini_batch) @ grad_l_wrt_Z2
        Z2_bar = X2_bar @ W2_init - (eta_mini_batch * Attn2) @ grad_l_wrt_Z2 + b2_bar
        last_eta_mini_batch = eta_mini_batch[:, :, -1, :, None]
        W1_last = W1_init - (last_eta_mini_batch * X1).transpose(-1, -2) @ grad_l_wrt_Z1
        b1_last = b1_init - torch.sum(last_eta_mini_batch * grad_l_wrt_Z1, dim=-2,
                                      keepdim=True)
        W2_last = W2_init - (last_eta_mini_batch * X2).transpose(-1, -2) @ grad_l_wrt_Z2
        b2_last = b2_init - torch.sum(last_eta_mini_batch * grad_l_wrt_Z2, dim=-2,
                                      keepdim=True)
        Z2_bar = ln_fwd(Z2_bar, ln_weight, ln_bias)
        XQW_mini_batch = XQ_mini_batch + Z2_bar
        return {"W1_states": W1_last, "b1_states": b1_last, "W2_states": W2_last,
                "b2_states": b2_last}, XQW_mini_batch


# ------------------------------------------------------------------ fixture glue
# How python/scripts/make_fixtures.py builds each research module from its twin in
# layers.py and maps the twin's inputs ([B, H, T, D], lr [B, H, T, 1|3],
# momentum [B, H, T]) to the module's inputs and its output back.


def _bthd(x: Tensor) -> Tensor:
    return x.transpose(1, 2).contiguous()


def _fold(x: Tensor) -> Tensor:
    B, H, T, D = x.shape
    return x.reshape(B * H, T, D)


def _per_sample(w: Tensor, B: int) -> Tensor:
    return w.unsqueeze(0).expand(B, *w.shape).contiguous()


def _width(x: Tensor) -> Tensor:
    """[B, H, T, D] -> [B, T, H*D]."""
    B, H, T, D = x.shape
    return x.transpose(1, 2).reshape(B, T, H * D)


def _heads(o: Tensor, H: int) -> Tensor:
    """[B, T, H*D] -> [B, H, T, D]."""
    B, T, W = o.shape
    return o.reshape(B, T, H, W // H).transpose(1, 2)


# The input-view tokens of the lact_nvs fixture (its k and v length, T in
# python/scripts/make_fixtures.py); the target views (q) follow them.
NVS_INPUT_TOKENS = 24


def _nvs_sequence(x: Dict[str, Tensor]) -> Dict[str, Tensor]:
    """The twin's k, v, lr [B, H, n, .] (input views) and q [B, H, m, d] (target views)
    as one folded sequence of n + m tokens: the step reads k, v, lr of the first n, the
    output q of the last m (the other entries are the other tensor's, or zero)."""
    q, k, v, lr = x["q"], x["k"], x["v"], x["lr"]
    seq = lambda a, b: _fold(torch.cat([a, b], dim=2))  # noqa: E731
    return {"q": seq(k, q), "k": seq(k, q), "v": seq(v, torch.zeros_like(q[..., :v.shape[-1]])),
            "lr": seq(lr, torch.zeros(*q.shape[:3], lr.shape[-1]))}


def _linear_map(x: Dict[str, Tensor], layout: str) -> Dict[str, Tensor]:
    return {n: _bthd(t) for n, t in x.items()} if layout == "bthd" else dict(x)


# name -> (twin family, spellings, make(twin) -> module, inputs(twin, x) -> dict,
#          output(twin, o) -> twin layout)
RESEARCH: Dict[str, Tuple] = {
    "linear_dot_prealloc": (
        "linear_dot", "a", lambda t: LinearDotPrealloc(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_dot_fwargs": (
        "linear_dot", "b", lambda t: LinearDotFastWeightArgs(t.chunk),
        lambda t, x: {**x, "w": _per_sample(t.w.detach(), x["q"].shape[0])}, lambda t, o: o),
    "linear_dot_outin": (
        "linear_dot", "c", lambda t: LinearDotOutIn(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_dot_einsum": (
        "linear_dot", "d", lambda t: LinearDotEinsum(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_dot_bmm_fold": (
        "linear_dot", "d,e", lambda t: LinearDotBmmFolded(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_dot_bthd": (
        "linear_dot", "f", lambda t: LinearDotBTHD(t.w, t.chunk),
        lambda t, x: _linear_map(x, "bthd"), lambda t, o: _bthd(o)),
    "linear_dot_chunk_view": (
        "linear_dot", "i", lambda t: LinearDotChunkView(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_mse_xwt": (
        "linear_mse", "c", lambda t: LinearMSEXWt(t.w, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "linear_mse_bthd_einsum_prealloc": (
        "linear_mse", "a,d,f", lambda t: LinearMSEBTHDEinsumPrealloc(t.w, t.chunk),
        lambda t, x: _linear_map(x, "bthd"), lambda t, o: _bthd(o)),
    "lact_v2_function": (
        "lact_v2", "a,b,c,d,e", lambda t: LaCTV2Function(t.chunk),
        lambda t, x: {
            "w0": _fold(_per_sample(t.w0.detach().transpose(-1, -2), x["q"].shape[0])),
            "w1": _fold(_per_sample(t.w1.detach().transpose(-1, -2), x["q"].shape[0])),
            "w2": _fold(_per_sample(t.w2.detach().transpose(-1, -2), x["q"].shape[0])),
            "q": _fold(x["q"]), "k": _fold(x["k"]), "v": _fold(x["v"]),
            "lr1": _fold(x["lr"][..., 1:2]), "momentum": _fold(x["momentum"][..., None])},
        lambda t, o: o.reshape(-1, t.w0.shape[0], o.shape[1], o.shape[2])),
    "lact_v2_fold_params": (
        "lact_v2", "a,c,d,e", lambda t: LaCTV2FoldedParams(t.w0, t.w1, t.w2, t.chunk),
        lambda t, x: dict(x), lambda t, o: o),
    "lact_v2_bthd_einsum": (
        "lact_v2", "c,d,f", lambda t: LaCTV2BTHDEinsum(t.w0, t.w1, t.w2, t.chunk),
        lambda t, x: {"q": _bthd(x["q"]), "k": _bthd(x["k"]), "v": _bthd(x["v"]),
                      "lr": _bthd(x["lr"]), "momentum": x["momentum"].transpose(1, 2)},
        lambda t, o: _bthd(o)),
    "lact_nvs_ua_order": (
        "lact_nvs", "d,e,h",
        lambda t: LaCTNVSUAOrder(t.w0, t.w1, t.w2, NVS_INPUT_TOKENS),
        lambda t, x: _nvs_sequence(x),
        lambda t, o: o.reshape(-1, t.w0.shape[0], o.shape[1], o.shape[2])),
    "vit3_glu_bthd_einsum": (
        "vit3_glu", "d,f", lambda t: ViT3GLUBTHDEinsum(t.w1, t.w2, t.scale),
        lambda t, x: _linear_map(x, "bthd"), lambda t, o: _bthd(o)),
    "ttt_linear_scan": (
        "ttt_linear", "g,f", lambda t: TTTLinearScan(t),
        lambda t, x: {"XQ": _width(x["q"]), "XK": _width(x["k"]), "XV": _width(x["v"]),
                      "ttt_lr": x["lr"][..., 0].transpose(1, 2).contiguous()},
        lambda t, o: _heads(o, t.W1.shape[0])),
    "ttt_mlp_scan": (
        "ttt_mlp", "g,f", lambda t: TTTMLPScan(t),
        lambda t, x: {"XQ": _width(x["q"]), "XK": _width(x["k"]), "XV": _width(x["v"]),
                      "ttt_lr": x["lr"][..., 0].transpose(1, 2).contiguous()},
        lambda t, o: _heads(o, t.W1.shape[0])),
}
