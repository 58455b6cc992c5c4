"""Writes `ttt.kvb_layer` / `ttt.dwconv_layer` test functions as MLIR text.

A layer configuration is the keyword dictionary of the NumPy oracle
(`oracle.ttt_oracle.kvb_layer`), so one dict drives both the compiler and the
oracle. The function takes its operands in a fixed order (q, k, v, weights,
lr, token_eta, momentum, gamma, beta) and returns o followed by the final
weights; batch and sequence dims are dynamic unless asked otherwise.
"""

from __future__ import annotations

import math

WEIGHT_COUNT = {"linear": 1, "mlp": 2, "swiglu": 3, "glu": 2}


def num_weights(cfg):
    n = WEIGHT_COUNT[cfg["model"]]
    if cfg.get("bias") and cfg["model"] in ("linear", "mlp"):
        n *= 2
    return n


def _ttype(shape, dynamic=(), dtype="f32"):
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(shape)]
    return "tensor<" + "x".join(dims + [dtype]) + ">"


def _float(x):
    """A float literal MLIR parses back to the same double (it needs a '.')."""
    text = repr(float(x))
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def kvb_layer_function(cfg, arrays, *, name="layer", dynamic=True, return_weights=True):
    """MLIR text of a function computing `ttt.kvb_layer` for `cfg`.

    `arrays` is the ordered list of (name, ndarray) operands the function takes
    (see `kvb_operands`); their shapes give the static sizes.
    """
    dyn4 = (0, 2) if dynamic else ()
    dtype = {"float32": "f32", "float64": "f64"}[str(dict(arrays)["q"].dtype)]
    types = {}
    for arg, arr in arrays:
        if arg in ("q", "k", "v", "lr"):
            types[arg] = _ttype(arr.shape, dyn4, dtype)
        elif arg == "momentum":
            types[arg] = _ttype(arr.shape, (0, 2) if dynamic else (), dtype)
        elif arg.startswith("w") and arr.ndim == 4:
            types[arg] = _ttype(arr.shape, (0,) if dynamic else (), dtype)
        else:
            types[arg] = _ttype(arr.shape, (), dtype)
    weights = [a for a, _ in arrays if a.startswith("w")]
    shapes = dict(arrays)
    params = ", ".join(f"%{a}: {types[a]}" for a, _ in arrays)

    B, H, Tq, _ = shapes["q"].shape
    dout = shapes["v"].shape[3]
    out_type = _ttype((B, H, Tq, dout), dyn4, dtype)
    final_types = []
    for w in weights:
        r, c = shapes[w].shape[-2:]
        final_types.append(_ttype((B, H, r, c), (0,) if dynamic else (), dtype))
    result_types = [out_type] + (final_types if return_weights else [])

    model = f"kind = {cfg['model']}, trained = [{', '.join(map(str, cfg['trained']))}]"
    if cfg.get("bias"):
        model += ", bias = true"
    if cfg["model"] == "mlp" and cfg.get("activation", "silu") != "silu":
        model += f", activation = {cfg['activation']}"
    loss = f"kind = {cfg.get('loss', 'dot')}, scale = {_float(cfg.get('scale', 1.0))}"
    loss += f", reduction = {cfg.get('reduction', 'sum')}"
    if cfg.get("loss") == "layernorm_mse":
        loss += f", eps = {_float(cfg.get('ln_eps', 1e-6))}"
    upd = [f"sign = {cfg.get('sign', 'descent')}", f"lr_scale = {_float(cfg.get('lr_scale', 1.0))}",
           f"clip = {cfg.get('clip', 'none')}"]
    if cfg.get("ns_steps", 0):
        coeffs = [c for triple in cfg["ns_coeffs"] for c in triple]
        upd.append(f"orthogonalize = #ttt.newton_schulz<steps = {cfg['ns_steps']}, "
                   f"coeffs = [{', '.join(map(_float, coeffs))}], eps = {_float(cfg.get('ns_eps', 1e-7))}>")
    upd.append(f"weight_norm = {cfg.get('weight_norm', 'none')}")
    upd.append(f"weight_norm_eps = {_float(cfg.get('weight_norm_eps', 1e-5))}")
    if cfg.get("schedule", "chunked") == "full_batch":
        sched = f"kind = full_batch, inner_steps = {cfg.get('inner_steps', 1)}"
    else:
        sched = (f"kind = chunked, size = {cfg['chunk']}, order = {cfg.get('order', 'apply_then_update')}, "
                 f"inner_steps = {cfg.get('inner_steps', 1)}")

    clauses = [f"weights({', '.join('%' + w for w in weights)} : {', '.join(types[w] for w in weights)})"]
    if "lr" in shapes:
        clauses.append(f"lr(%lr : {types['lr']})")
    if "token_eta" in shapes:
        clauses.append(f"token_eta(%token_eta : {types['token_eta']})")
    if "momentum" in shapes:
        clauses.append(f"momentum(%momentum : {types['momentum']})")
    if "gamma" in shapes:
        clauses.append(f"layernorm(%gamma, %beta : {types['gamma']}, {types['beta']})")
    results = ", ".join(f"%r{i}" for i in range(len(result_types)))
    results_decl = f"%r:{len(result_types)}" if len(result_types) > 1 else "%r"
    ret_vals = ", ".join(f"%r#{i}" for i in range(len(result_types))) if len(result_types) > 1 else "%r"
    del results
    return f"""func.func @{name}({params}) -> ({', '.join(result_types)}) {{
  {results_decl} = ttt.kvb_layer %q, %k, %v : {types['q']}, {types['k']}, {types['v']}
      {' '.join(clauses)}
      model = #ttt.model<{model}>
      loss = #ttt.loss<{loss}>
      update = #ttt.update<{', '.join(upd)}>
      schedule = #ttt.schedule<{sched}>
      -> {', '.join(result_types)}
  return {ret_vals} : {', '.join(result_types)}
}}
"""


def kvb_operands(cfg, q, k, v, weights, lr=None, token_eta=None, momentum=None, gamma=None, beta=None):
    """The ordered operand list of `kvb_layer_function`."""
    ops = [("q", q), ("k", k), ("v", v)]
    ops += [(f"w{i}", w) for i, w in enumerate(weights)]
    for name, arr in (("lr", lr), ("token_eta", token_eta), ("momentum", momentum),
                      ("gamma", gamma), ("beta", beta)):
        if arr is not None:
            ops.append((name, arr))
    return ops


def dwconv_layer_function(cfg, q, w, *, name="conv", dynamic=True, return_kernel=True):
    qt = _ttype(q.shape, (0,) if dynamic else ())
    wt = _ttype(w.shape, (0,) if (dynamic and w.ndim == 4) else ())
    B, C = q.shape[:2]
    kt = _ttype((B, C) + tuple(w.shape[-2:]), (0,) if dynamic else ())
    results = [qt] + ([kt] if return_kernel else [])
    loss = (f"kind = {cfg.get('loss', 'dot')}, scale = {_float(cfg.get('scale', 1.0))}, "
            f"reduction = {cfg.get('reduction', 'sum')}")
    upd = (f"sign = {cfg.get('sign', 'descent')}, lr_scale = {_float(cfg.get('lr_scale', 1.0))}, "
           f"clip = {cfg.get('clip', 'none')}")
    decl = "%r:2" if return_kernel else "%r"
    ret = "%r#0, %r#1" if return_kernel else "%r"
    return f"""func.func @{name}(%q: {qt}, %k: {qt}, %v: {qt}, %w: {wt}) -> ({', '.join(results)}) {{
  {decl} = ttt.dwconv_layer %q, %k, %v, %w : {qt}, {qt}, {qt}, {wt}
      loss = #ttt.loss<{loss}> update = #ttt.update<{upd}>
      {{inner_steps = {cfg.get('inner_steps', 1)} : i64}} -> {', '.join(results)}
  return {ret} : {', '.join(results)}
}}
"""


def matmul_function(m, k, n):
    """`@main(A, B) -> A B` for A: m x k, B: k x n, f32, static sizes (one
    `linalg.matmul`, one GEMM call on the CPU)."""
    a, b, c = (f"tensor<{r}x{q}xf32>" for r, q in ((m, k), (k, n), (m, n)))
    return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %acc = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
            f"  %mm = linalg.matmul ins(%a, %b : {a}, {b}) outs(%acc : {c}) -> {c}\n"
            f"  return %mm : {c}\n}}\n")


def relative_error(actual, expected):
    """max |actual - expected| / max |expected| (the scale of the result)."""
    import numpy as np
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if expected.size == 0:
        return 0.0 if actual.size == 0 else float("inf")
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(actual - expected))) / scale if expected.size else 0.0
