"""A tiny transformer-style block that contains a TTT layer among ordinary layers
(LayerNorm, Linear projections, causal softmax attention, an MLP), for checking that a
compiler rewrites the TTT layer and leaves everything else untouched."""

import math
from typing import Any, Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .layers import LaCTSwiGLU, TTTLayer

__all__ = ["TinyTTTBlock"]


class TinyTTTBlock(nn.Module):
    """``x [B, T, D] -> x + o_proj(attn(q,k,v) + lact(fq, fk, fv, lr, m)) -> + MLP``.

    LaCT-LLM layer wrapper in miniature (docs/ReferenceModels.md §1.4): one fused q/k/v
    projection of LN(x) is shared by a causal softmax attention and the TTT branch; the
    TTT branch uses ``fq = l2norm(silu(q))``, ``fk = l2norm(silu(k))``, ``fv = silu(v)``,
    per-token learning rates ``softplus(Linear(LN(x)))`` ``[B,H,T,3]`` and momentum
    ``sigmoid(Linear(LN(x)))`` ``[B,H,T]``. The fast-weight layer is a full `LaCTSwiGLU`
    (all weights trained, momentum, Muon, weight norm). Then a pre-LN GELU MLP."""

    __constants__ = ["d_model", "heads", "d_head", "attn_scale"]

    def __init__(self, d_model: int = 32, heads: int = 2, chunk: int = 8, seed: int = 0,
                 ttt: Optional[TTTLayer] = None):
        super().__init__()
        torch.manual_seed(seed)
        if d_model % heads:
            raise ValueError("heads must divide d_model")
        self.d_model = d_model
        self.heads = heads
        self.d_head = d_model // heads
        self.attn_scale = 1.0 / math.sqrt(self.d_head)
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.lr_proj = nn.Linear(d_model, 3 * heads)
        self.m_proj = nn.Linear(d_model, heads)
        with torch.no_grad():
            self.lr_proj.bias.fill_(math.log(math.expm1(0.05)))  # softplus^-1(0.05)
            self.ln1.weight.add_(0.1 * torch.randn(d_model))
            self.ln1.bias.add_(0.1 * torch.randn(d_model))
        self.ttt = ttt if ttt is not None else LaCTSwiGLU(
            heads, self.d_head, self.d_head, self.d_head, chunk=chunk, seed=seed + 1)
        self.o_proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)
        self.input_names = ("x",)

    def forward(self, x: Tensor) -> Tensor:
        B = x.size(0)
        T = x.size(1)
        h = self.ln1(x)
        qkv = self.qkv(h).reshape(B, T, 3, self.heads, self.d_head).permute(2, 0, 3, 1, 4)
        q = qkv[0]
        k = qkv[1]
        v = qkv[2]
        # ordinary causal softmax attention
        att = (q @ k.transpose(-1, -2)) * self.attn_scale
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(mask.logical_not(), float("-inf")).softmax(dim=-1)
        o_attn = att @ v
        # TTT branch
        fq = F.silu(q)
        fq = fq / (torch.sqrt((fq * fq).sum(dim=-1, keepdim=True)) + 1e-5)
        fk = F.silu(k)
        fk = fk / (torch.sqrt((fk * fk).sum(dim=-1, keepdim=True)) + 1e-5)
        fv = F.silu(v)
        lr = F.softplus(self.lr_proj(h)).reshape(B, T, self.heads, 3).transpose(1, 2)
        mom = torch.sigmoid(self.m_proj(h)).transpose(1, 2)
        o_ttt = self.ttt(fq, fk, fv, lr, mom)
        o = (o_attn + o_ttt).transpose(1, 2).reshape(B, T, self.d_model)
        x = x + self.o_proj(o)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    def reference_spec(self) -> Dict[str, Any]:
        """Everything a NumPy re-implementation needs: the state dict (float64) and the
        configuration, with the TTT layer's oracle spec."""
        ttt = self.ttt.oracle_spec()
        if ttt["layer"] != "kvb_layer" or ttt["arrays"] or any(ttt["pre"].values()) or any(
                ttt["post"].values()):
            raise ValueError("reference_spec supports plain kvb_layer TTT layers only")
        params = {k: v.detach().double().numpy() for k, v in self.state_dict().items()}
        # The TTT layer's initial fast weights in the oracle's order and layout.
        keys = []
        for name, w in ttt["weights"].items():
            keys.append(f"ttt_oracle.{name}")
            params[keys[-1]] = w
        return {
            "layer": "block",
            "config": {"d_model": self.d_model, "heads": self.heads, "ln_eps": 1e-5,
                       "l2_eps": 1e-5, "ttt_kwargs": ttt["kwargs"], "ttt_weights": keys,
                       "ttt_inputs": list(ttt["inputs"])},
            "params": params,
        }
