"""A seeded randomized sweep of layer configurations through ttt-to-linattn.

At least 200 configurations per run mix the loss, the model and which of
its weights train, per-token learning rates, momentum, Muon, weight norm,
clipping, ascent, the update order, chunk size, sequence length and inner
steps. Each one must either be rewritten into linattn ops that compute what
the recurrent reference computes (fp32 relative error <= 1e-5, both through
ttt-run), or come out of the pass unchanged with a remark naming why.

TTT_RANDOM_SEED changes the sweep (default 2026); TTT_RANDOM_LAYERS its size.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import ttt_mlir
from compiler import run_function, run_opt
from oracle import ttt_oracle as oracle
from test_recurrent import make_case

RTOL = 1e-5
SEED = int(os.environ.get("TTT_RANDOM_SEED", "2026"))
COUNT = int(os.environ.get("TTT_RANDOM_LAYERS", "200"))
GROUP = 25


def random_config(rng):
    model = rng.choice(["linear", "linear", "mlp", "swiglu", "glu"])
    bias = model in ("linear", "mlp") and rng.random() < 0.3
    n = ttt_mlir.WEIGHT_COUNT[model] * (2 if bias else 1)
    out = {"linear": 0, "mlp": 2 if bias else 1, "swiglu": 1, "glu": 0}[model]
    if rng.random() < 0.6:
        trained = [out] + ([n - 1] if bias and rng.random() < 0.7 else [])
    else:
        trained = sorted(rng.choice(n, size=rng.integers(1, n + 1), replace=False).tolist())
    cfg = dict(model=model, bias=bias, trained=sorted(set(int(t) for t in trained)),
               loss=rng.choice(["dot", "dot", "mse", "layernorm_mse"]),
               scale=float(rng.choice([1.0, 0.5])), reduction=rng.choice(["sum", "mean"]),
               sign=rng.choice(["descent", "ascent"]), lr_scale=float(rng.choice([0.05, 0.2])))
    if model == "mlp":
        cfg["activation"] = rng.choice(["silu", "gelu_tanh", "relu"])
    if rng.random() < 0.15:
        cfg["schedule"] = "full_batch"
        cfg["inner_steps"] = int(rng.choice([1, 2]))
    else:
        cfg["chunk"] = int(rng.choice([1, 4, 8, 16]))
        cfg["order"] = rng.choice(["apply_then_update", "update_then_apply", "causal"])
        cfg["inner_steps"] = 1 if cfg["order"] == "causal" else int(rng.choice([1, 1, 2]))
        if cfg["order"] == "causal":
            cfg["_token_eta"] = rng.random() < 0.3
        elif rng.random() < 0.4:
            cfg["_momentum"] = True
    stateful = cfg.get("order") != "causal"
    if stateful and rng.random() < 0.3:
        cfg["ns_steps"] = int(rng.choice([1, 5]))
        cfg["ns_coeffs"] = [oracle.NVS_NS_COEFF] if rng.random() < 0.5 else \
            list(oracle.LACT_NS_COEFFS)[: cfg["ns_steps"]]
    if stateful and rng.random() < 0.2:
        cfg["weight_norm"] = "output_channels"
    if stateful and rng.random() < 0.15:
        cfg["clip"] = rng.choice(["output_channels", "frobenius"])
    case = dict(T=int(rng.integers(5, 40)), lr_columns=int(rng.choice([0, 1, n])) or None,
                din=int(rng.choice([4, 8])), dout=int(rng.choice([4, 8])), hidden=6,
                B=int(rng.choice([1, 2])), H=int(rng.choice([1, 2])))
    if model == "glu":
        case["dout"] = case["din"]
    if cfg.get("schedule") == "full_batch" and rng.random() < 0.5:
        case["Tq"] = int(rng.integers(5, 40))
    return cfg, case


def configurations():
    rng = np.random.default_rng(SEED)
    return [random_config(rng) for _ in range(COUNT)]


def batch_module(texts):
    """One module with every layer function and a @main that calls them all."""
    funcs, params, calls, rets, types = [], [], [], [], []
    arg = 0
    for i, text in enumerate(texts):
        header = re.search(r"func\.func @layer\((.*?)\) -> \((.*?)\) \{", text)
        args = re.findall(r"%\w+: (tensor<[^>]*>)", header.group(1))
        result = header.group(2)
        funcs.append(text.replace("func.func @layer(", f"func.func private @layer{i}(", 1))
        names = [f"%a{arg + j}" for j in range(len(args))]
        params += [f"{n}: {t}" for n, t in zip(names, args)]
        arg += len(args)
        calls.append(f"  %r{i} = func.call @layer{i}({', '.join(names)}) : "
                     f"({', '.join(args)}) -> {result}")
        rets.append(f"%r{i}")
        types.append(result)
    main = (f"func.func @main({', '.join(params)}) -> ({', '.join(types)}) {{\n"
            + "\n".join(calls) + f"\n  return {', '.join(rets)} : {', '.join(types)}\n}}\n")
    return "\n".join(funcs) + main


@pytest.mark.parametrize("group", range((COUNT + GROUP - 1) // GROUP))
def test_random_layers(group, tmp_path):
    configs = configurations()[group * GROUP:(group + 1) * GROUP]
    texts, arrays, rewritable = [], [], []
    for index, (cfg, case) in enumerate(configs):
        seed = SEED * 1000 + group * GROUP + index
        q, k, v, weights, extra = make_case(cfg, seed=seed, **case)
        operands = ttt_mlir.kvb_operands(cfg, q, k, v, weights, **extra)
        text = ttt_mlir.kvb_layer_function(cfg, operands, return_weights=False)
        texts.append(text)
        arrays += [a for _, a in operands]
        out, remarks = run_opt(text, "--ttt-to-linattn", "--mlir-print-op-on-diagnostic=false",
                               stderr=True)
        if "ttt.kvb_layer" in out:
            # Left alone: the layer op is exactly what went in, and a remark says why.
            assert "left unchanged" in remarks, (cfg, remarks)
            assert "linattn." not in out
            assert run_opt(text) == out, cfg
            rewritable.append(False)
        else:
            assert "linattn." in out and not remarks.strip(), (cfg, remarks)
            rewritable.append(True)
    module = batch_module(texts)
    (tmp_path / "ref").mkdir()
    (tmp_path / "rew").mkdir()
    # Tiny shapes: compiling dominates, so the JIT skips LLVM's optimizer.
    fast = ("--opt-level=0",)
    ref = run_function(module, arrays, tmp_path / "ref", entry="main", timeout=1200,
                       extra_args=fast)
    rew = run_function(run_opt(module, "--ttt-to-linattn", "--mlir-print-op-on-diagnostic=false"),
                       arrays, tmp_path / "rew", entry="main", timeout=1200, extra_args=fast)
    for index, (want, got) in enumerate(zip(ref, rew)):
        err = ttt_mlir.relative_error(got, want)
        if rewritable[index]:
            assert err <= RTOL, (configs[index], err)
        else:
            assert err == 0.0, (configs[index], err)
    # The sweep must exercise both outcomes.
    if group == 0:
        assert any(rewritable) and not all(rewritable)
