"""Linear-attention TTT layers of `layers.py` written as ``torch._higher_order_ops.while_loop``
over the chunks, the loop form torch.export keeps (a Python ``for`` is unrolled).

Each module computes exactly the function of its `layers.py` twin, in the way a
``while_loop`` can be written at all: the counter a 0-d int64 tensor whose start
torch-mlir cannot fold (``zeros_like(q, dtype=int64).sum()``: started at a constant,
torch-mlir drops the loop's condition), every tensor the body reads carried through the
loop (torch-mlir refuses a body that captures values), each chunk cut by ``narrow`` at
``i.item() * C`` (with ``torch._check`` bounds for torch.export) and written into a
preallocated output by ``slice_scatter``. A loop's iterations all have one shape, so the
chunk size divides the tokens the loop covers.

* ``linear_mse``: `PlainLinear` (MSE loss, mean over the chunk, per-token lr, apply then
  update, every chunk updates);
* ``lact_v3`` .. ``lact_v6``: `LaCTLinear` (apply then update, every chunk but the last
  one updates: the loop covers those, the last chunk is applied after it; per-token lr,
  momentum and Muon as the twin has them; V5's Muon written as LaCT's code writes it,
  `research.zeropower_via_newtonschulz5`).
"""

from typing import Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor
from torch._higher_order_ops.while_loop import while_loop

from .research import zeropower_via_newtonschulz5


__all__ = ["LinearMSEWhileLoop", "LaCTLinearWhileLoop", "LOOPS"]


def _start(q: Tensor) -> Tensor:
    """A 0-d int64 zero that torch-mlir does not fold to a constant."""
    return torch.zeros_like(q, dtype=torch.int64).sum()


def _chunk_start(i: Tensor, chunk: int, x: Tensor):
    """``i * chunk`` as an int torch.export can slice ``x`` (a tensor the loop carries,
    tokens on dim 2) with: the bounds are checked against ``x``'s size, which is
    symbolic inside the body."""
    n = i.item()
    torch._check(n >= 0)
    torch._check(n * chunk + chunk <= x.size(2))
    torch._check(n * chunk <= x.size(2))
    return n * chunk


class LinearMSEWhileLoop(nn.Module):
    """linear_mse as a while_loop: ``o_c = q_c W``, then ``W <- W - (lr k_c)^T (k_c W -
    v_c) / C``, every chunk; ``W [H, in, out]`` a parameter."""

    input_names = ("q", "k", "v", "lr")

    def __init__(self, w: Tensor, chunk: int = 8):
        super().__init__()
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk

    def forward(self, q: Tensor, k: Tensor, v: Tensor, lr: Tensor) -> Tensor:
        B, _, T, _ = q.shape
        C = self.chunk
        chunks = T // C
        if chunks * C != T:
            raise ValueError("the chunk size must divide the tokens")

        def more(i, w, o, q, k, v, lr):
            return i < chunks

        def step(i, w, o, q, k, v, lr):
            s = _chunk_start(i, C, q)
            qc, kc, vc, lc = q.narrow(2, s, C), k.narrow(2, s, C), v.narrow(2, s, C), lr.narrow(2, s, C)
            o = o.slice_scatter(qc @ w, dim=2, start=s, end=s + C)
            w = w - (kc * lc).transpose(-1, -2) @ (kc @ w - vc) / C
            return i + 1, w, o, q.clone(), k.clone(), v.clone(), lr.clone()

        w0 = self.w.unsqueeze(0).expand(B, -1, -1, -1).clone()
        o0 = torch.zeros(B, q.shape[1], T, w0.shape[-1], dtype=q.dtype)
        out = while_loop(more, step, (_start(q), w0, o0, q, k, v, lr))
        return out[2]


class LaCTLinearWhileLoop(nn.Module):
    """LaCT-LLM's single linear layer (Table 2's V3..V6) as a while_loop over every
    chunk but the last: ``o_c = q_c W``; ``dW = (lr k_c)^T v_c``; with momentum
    ``M <- mean(m_c) M + dW``, ``dW = M``; with Muon ``dW = NS5(dW)``; ``W <- W + dW``.
    The last chunk is applied after the loop."""

    def __init__(self, w: Tensor, chunk: int, use_lr: bool, use_momentum: bool,
                 muon: Optional[Callable[[Tensor], Tensor]]):
        super().__init__()
        self.muon = muon
        self.w = nn.Parameter(w.detach().clone())
        self.chunk = chunk
        self.use_lr, self.use_momentum, self.use_ns = use_lr, use_momentum, muon is not None
        self.input_names = ("q", "k", "v") + (("lr",) if use_lr else ()) + (
            ("momentum",) if use_momentum else ())

    def forward(self, q: Tensor, k: Tensor, v: Tensor, x3: Optional[Tensor] = None,
                x4: Optional[Tensor] = None) -> Tensor:
        """``x3, x4``: the per-token lr and momentum inputs that the layer has, in
        ``input_names`` order."""
        B, _, T, _ = q.shape
        C = self.chunk
        updates = (T - 1) // C
        # Only the inputs the layer has are carried (a value carried twice aliases).
        extras = tuple(x for x in (x3, x4) if x is not None)
        use_lr, use_momentum, use_ns = self.use_lr, self.use_momentum, self.use_ns
        muon = self.muon

        def more(i, w, mom, o, q, k, v, *extras):
            return i < updates

        def step(i, w, mom, o, q, k, v, *extras):
            s = _chunk_start(i, C, q)
            qc, kc, vc = q.narrow(2, s, C), k.narrow(2, s, C), v.narrow(2, s, C)
            o = o.slice_scatter(qc @ w, dim=2, start=s, end=s + C)
            if use_lr:
                kc = kc * extras[0].narrow(2, s, C)
            dw = kc.transpose(-1, -2) @ vc
            if use_momentum:
                mu = extras[-1].narrow(2, s, C).mean(dim=-1, keepdim=True).unsqueeze(-1)
                mom = mu * mom + dw
                dw = mom
            if use_ns:
                dw = muon(dw)
            return (i + 1, w + dw, mom.clone(), o, q.clone(), k.clone(), v.clone(),
                    *(x.clone() for x in extras))

        w0 = self.w.unsqueeze(0).expand(B, -1, -1, -1).clone()
        o0 = torch.zeros(B, q.shape[1], T, w0.shape[-1], dtype=q.dtype)
        _, w, _, o, *_ = while_loop(
            more, step, (_start(q), w0, torch.zeros_like(w0), o0, q, k, v, *extras))
        s = updates * C
        return o.slice_scatter(q[:, :, s:] @ w, dim=2, start=s, end=T)


def _lact_linear(t) -> LaCTLinearWhileLoop:
    """Muon as `layers.py` writes it."""
    muon = (lambda g: t._newton_schulz(g, t.tr)) if t.use_ns else None
    return LaCTLinearWhileLoop(t.w, t.chunk, t.use_lr, t.use_momentum, muon)


def _lact_linear_research_muon(t) -> LaCTLinearWhileLoop:
    """Muon as LaCT's code writes it (``X.norm(dim=(-2, -1))``, ``c * A @ A``)."""
    return LaCTLinearWhileLoop(t.w, t.chunk, t.use_lr, t.use_momentum,
                               zeropower_via_newtonschulz5)


# name -> (twin family, make(twin) -> module); the inputs are the twin's, by name.
LOOPS: Dict[str, Tuple] = {
    "linear_mse_while": ("linear_mse", lambda t: LinearMSEWhileLoop(t.w, t.chunk)),
    "lact_v3_while": ("lact_v3", _lact_linear),
    "lact_v5_while": ("lact_v5", _lact_linear_research_muon),
    "lact_v6_while": ("lact_v6", _lact_linear),
}
