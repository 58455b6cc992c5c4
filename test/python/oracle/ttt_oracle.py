"""NumPy reference ("oracle") for the `ttt` layer ops, written from docs/Semantics.md.

Everything is computed in float64 and returned as float64. Row-vector convention: a token
is a 1 x D row, a weight is stored input x output, a layer computes ``x @ W``.

Gradients are derived by hand (no autodiff). The per-token gradient of a weight that is
used as ``a @ W`` (or ``+ b``) is the outer product ``a_tau^T delta_tau`` (``1^T delta_tau``
for a bias); `token_losses_and_factors` returns these factor pairs ``(A, D)`` and
`loss_and_grads` contracts them with per-token, per-weight coefficients. The update code
of `kvb_layer` uses exactly these helpers, and test/python/test_oracle.py checks them
against central finite differences.

Internally every (batch, head) pair is one "stream"; arrays carry a leading stream axis
S = B*H and the loop runs over chunks only.

Ambiguities
-----------
Points that docs/Semantics.md leaves open, and the reading chosen here (closest to the
reference models where they have an opinion):

1. clip and orthogonalize apply to *every* trained weight, biases included (Semantics.md
   exempts biases only from weight norm). A trained bias [1, c] is therefore clipped per
   column (``output_channels``: g / (|g| + 1)) and, with Newton-Schulz, normalised as a
   1 x c matrix. No reference model combines biases with clip/NS.
2. ``inner_steps = n`` with momentum: the whole step, momentum included, is repeated, so
   M is updated n times per chunk with the same mu_P (M <- mu_P M + U at every repeat).
3. ``apply_then_update`` updates on every chunk, the last one included. This only changes
   the final weights relative to LaCT-LLM (which never updates on its last chunk); the
   output o is identical.
4. ``causal`` with a trailing partial chunk of n' < C tokens uses ``token_eta[:n']``; the
   carried state is W^(n'-1), i.e. it uses ``token_eta[n'-1]`` (TTT-Linear: "carry uses
   the last row of eta"). With ``reduction = mean`` the factor is s/n'.
5. ``causal`` reads: every weight (trained ones moved, untrained ones fixed) is evaluated
   at W^(i) for query i, through the whole model F (so for an MLP the hidden layer uses
   W0^(i), b0^(i) too -- this is the TTT-MLP dual form). sign = descent means "-".
6. Weight-norm radii r_i are the column norms of the initial weight of each stream (for a
   [H, r, c] weight they are the same for every b). Untrained weights and biases are never
   renormalised.
7. ``ns_steps = 0`` means no orthogonalization at all (no Frobenius normalisation either,
   unlike LaCT-NVS which always normalises); ``ns_steps > 0`` requires ``ns_coeffs``.
8. ``dwconv_layer``: the loss is summed over channels and positions, ``mean`` divides by
   Hs*Ws only (not by the channel count); only ``clip in {none, frobenius}`` is defined
   (frobenius is per channel and per sample).
9. ``lr`` absent means eta = 1 for every weight; ``lr`` with n = 1 is used for every
   weight. ``lr``/``momentum`` only need to be broadcastable to [B,H,T,n] / [B,H,T].
10. ``full_batch``: ``reduction = mean`` divides by T (the k/v length, not Tq);
   ``momentum`` and ``token_eta`` are rejected (chunked-only / causal-only operands);
   ``order``/``chunk`` are ignored.
11. layernorm_mse: gamma/beta are shared by the loss and the layer output (as in
   TTT-Linear); the LN eps is ``ln_eps`` (default 1e-6), variance is biased.
12. ``activation`` only affects ``mlp``; swiglu and glu always use silu.
13. Options that Semantics.md excludes for a schedule (clip/momentum/NS/weight norm/
   inner_steps > 1 with ``causal``; ``token_eta`` without ``causal``) raise ValueError
   instead of being silently ignored.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "LACT_NS_COEFFS",
    "NVS_NS_COEFF",
    "weight_names",
    "model_forward",
    "output_transform",
    "token_losses_and_factors",
    "loss_and_grads",
    "newton_schulz",
    "kvb_layer",
    "dwconv_forward",
    "dwconv_loss_and_grad",
    "dwconv_layer",
]

# Newton-Schulz coefficient tables (docs/ReferenceModels.md §1.2).
LACT_NS_COEFFS = [
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
]
NVS_NS_COEFF = (3.4445, -4.7750, 2.0315)

_MODELS = ("linear", "mlp", "swiglu", "glu")
_LOSSES = ("dot", "mse", "layernorm_mse")
_ACTIVATIONS = ("silu", "gelu_tanh", "relu")


# --------------------------------------------------------------------------- helpers


def _T(x):
    """Swap the last two axes."""
    return np.swapaxes(x, -1, -2)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic


def _silu(z):
    return z * _sigmoid(z)


def _silu_grad(z):
    s = _sigmoid(z)
    return s * (1.0 + z * (1.0 - s))


_GELU_C = math.sqrt(2.0 / math.pi)


def _act(z, activation):
    if activation == "silu":
        return _silu(z)
    if activation == "gelu_tanh":
        return 0.5 * z * (1.0 + np.tanh(_GELU_C * (z + 0.044715 * z**3)))
    if activation == "relu":
        return np.maximum(z, 0.0)
    raise ValueError(f"unknown activation {activation!r}")


def _act_grad(z, activation):
    if activation == "silu":
        return _silu_grad(z)
    if activation == "gelu_tanh":
        t = np.tanh(_GELU_C * (z + 0.044715 * z**3))
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _GELU_C * (1.0 + 3 * 0.044715 * z * z)
    if activation == "relu":
        return (z > 0).astype(z.dtype)  # relu'(0) = 0
    raise ValueError(f"unknown activation {activation!r}")


def weight_names(model, bias=False):
    """Names of the weights of `model`, in the operand order of Semantics.md."""
    if model == "linear":
        return ["W", "b"] if bias else ["W"]
    if model == "mlp":
        return ["W0", "b0", "W1", "b1"] if bias else ["W0", "W1"]
    if bias:
        raise ValueError(f"model {model!r} has no bias variant")
    if model == "swiglu":
        return ["W0", "W1", "W2"]
    if model == "glu":
        return ["Wa", "Wg"]
    raise ValueError(f"unknown model {model!r}")


def _is_bias(name):
    return name.startswith("b")


def _expected_shapes(model, bias, din, dout, dh):
    if model == "linear":
        s = {"W": (din, dout), "b": (1, dout)}
    elif model == "mlp":
        s = {"W0": (din, dh), "b0": (1, dh), "W1": (dh, dout), "b1": (1, dout)}
    elif model == "swiglu":
        s = {"W0": (din, dh), "W1": (dh, dout), "W2": (din, dh)}
    else:
        s = {"Wa": (din, dout), "Wg": (din, dout)}
    return [s[n] for n in weight_names(model, bias)]


# ------------------------------------------------------------------ model and loss


def model_forward(model, weights, x, *, activation="silu", bias=False, per_token=False):
    """f(x) for weights of shape [..., r, c] and x [..., n, Din].

    With ``per_token=True`` every weight has an extra token axis, [..., n, r, c], and token
    i is evaluated with its own weights. Returns (f [..., n, Dout], cache).
    """
    names = weight_names(model, bias)
    if len(weights) != len(names):
        raise ValueError(f"{model} (bias={bias}) takes {len(names)} weights, got {len(weights)}")
    W = dict(zip(names, weights))

    def mm(a, w):
        return np.einsum("...r,...rc->...c", a, w) if per_token else a @ w

    def bb(name):
        if not bias:
            return 0.0
        b = W[name]
        return b[..., 0, :] if per_token else b

    cache = {"x": x}
    if model == "linear":
        f = mm(x, W["W"]) + bb("b")
    elif model == "mlp":
        h = mm(x, W["W0"]) + bb("b0")
        a = _act(h, activation)
        f = mm(a, W["W1"]) + bb("b1")
        cache.update(h=h, a=a)
    elif model == "swiglu":
        g = mm(x, W["W0"])
        u = mm(x, W["W2"])
        hid = _silu(g) * u
        f = mm(hid, W["W1"])
        cache.update(g=g, u=u, hid=hid)
    elif model == "glu":
        a = mm(x, W["Wa"])
        g = mm(x, W["Wg"])
        f = a * _silu(g)
        cache.update(a=a, g=g)
    else:
        raise ValueError(f"unknown model {model!r}")
    return f, cache


def output_transform(f, *, loss, gamma=None, beta=None, ln_eps=1e-6):
    """F = gamma * LN(f) + beta for layernorm_mse, else F = f. Returns (F, cache)."""
    if loss != "layernorm_mse":
        return f, None
    if gamma is None or beta is None:
        raise ValueError("layernorm_mse needs gamma and beta")
    mu = f.mean(-1, keepdims=True)
    var = ((f - mu) ** 2).mean(-1, keepdims=True)
    sigma = np.sqrt(var + ln_eps)
    xhat = (f - mu) / sigma
    return gamma * xhat + beta, (xhat, sigma, gamma)


def _ln_backward(dF, cache):
    """d loss / d f from d loss / d F for F = gamma * LN(f) + beta (per token)."""
    xhat, sigma, gamma = cache
    dx = dF * gamma
    return (dx - dx.mean(-1, keepdims=True) - xhat * (dx * xhat).mean(-1, keepdims=True)) / sigma


def _grad_factors(model, weights, cache, df, bias):
    """Per-token gradient factors [(A_i, D_i)]: d l_tau / d W_i = A_i[tau]^T D_i[tau]."""
    names = weight_names(model, bias)
    W = dict(zip(names, weights))
    x = cache["x"]
    ones = np.ones(x.shape[:-1] + (1,))
    fac = {}
    if model == "linear":
        fac["W"] = (x, df)
        fac["b"] = (ones, df)
    elif model == "mlp":
        fac["W1"] = (cache["a"], df)
        fac["b1"] = (ones, df)
        dh = (df @ _T(W["W1"])) * cache["act_grad"]
        fac["W0"] = (x, dh)
        fac["b0"] = (ones, dh)
    elif model == "swiglu":
        fac["W1"] = (cache["hid"], df)
        dhid = df @ _T(W["W1"])
        g, u = cache["g"], cache["u"]
        fac["W0"] = (x, dhid * u * _silu_grad(g))
        fac["W2"] = (x, dhid * _silu(g))
    elif model == "glu":
        a, g = cache["a"], cache["g"]
        fac["Wa"] = (x, df * _silu(g))
        fac["Wg"] = (x, df * a * _silu_grad(g))
    return [fac[n] for n in names]


def token_losses_and_factors(model, weights, x, v, *, loss="dot", gamma=None, beta=None,
                             ln_eps=1e-6, activation="silu", bias=False):
    """Unweighted per-token losses l_tau [..., n] and gradient factors (see _grad_factors)."""
    if loss not in _LOSSES:
        raise ValueError(f"unknown loss {loss!r}")
    f, cache = model_forward(model, weights, x, activation=activation, bias=bias)
    if model == "mlp":
        cache["act_grad"] = _act_grad(cache["h"], activation)
    F, lncache = output_transform(f, loss=loss, gamma=gamma, beta=beta, ln_eps=ln_eps)
    if loss == "dot":
        ell = -(F * v).sum(-1)
        dF = -v * np.ones_like(F)
    else:
        r = F - v
        ell = 0.5 * (r * r).sum(-1)
        dF = r
    df = _ln_backward(dF, lncache) if loss == "layernorm_mse" else dF
    return ell, _grad_factors(model, weights, cache, df, bias)


def _token_coeffs(eta, n_tokens_shape, n_weights, scale, reduction):
    """s / (n or 1) * eta as [..., n, nW]."""
    n = n_tokens_shape[-1]
    if reduction not in ("sum", "mean"):
        raise ValueError(f"unknown reduction {reduction!r}")
    if eta is None:
        eta = np.ones(n_tokens_shape + (n_weights,))
    else:
        eta = np.asarray(eta, dtype=np.float64)
        if eta.ndim == len(n_tokens_shape):
            eta = eta[..., None]
        if eta.shape[-1] not in (1, n_weights):
            raise ValueError(f"lr has {eta.shape[-1]} columns, expected 1 or {n_weights}")
        eta = np.broadcast_to(eta, n_tokens_shape + (n_weights,))
    return (scale / (n if reduction == "mean" else 1)) * eta


def loss_and_grads(model, weights, x, v, eta=None, *, loss="dot", scale=1.0, reduction="sum",
                   gamma=None, beta=None, ln_eps=1e-6, activation="silu", bias=False):
    """Per-weight losses L_i and gradients G_i = dL_i/dW_i on the token set (x, v).

    ``L_i(W) = s / (n if mean else 1) * sum_tau eta[tau, i] * l_tau(W)``.
    weights: list of [..., r, c]; x [..., n, Din]; v [..., n, Dout];
    eta: None, [..., n], or [..., n, k] with k in {1, len(weights)}.
    Returns (list of L_i with shape [...], list of G_i with the weights' shapes).
    """
    ell, factors = token_losses_and_factors(model, weights, x, v, loss=loss, gamma=gamma,
                                            beta=beta, ln_eps=ln_eps, activation=activation,
                                            bias=bias)
    w = _token_coeffs(eta, ell.shape, len(weights), scale, reduction)
    losses = [(w[..., i] * ell).sum(-1) for i in range(len(weights))]
    grads = [_T(A * w[..., i, None]) @ D for i, (A, D) in enumerate(factors)]
    return losses, grads


# ------------------------------------------------------------------ update transforms


def _ns_coeff_list(steps, coeffs):
    if coeffs is None:
        raise ValueError("ns_steps > 0 needs ns_coeffs")
    coeffs = [tuple(float(c) for c in t) for t in coeffs]
    if any(len(t) != 3 for t in coeffs):
        raise ValueError("ns_coeffs must be (a, b, c) triples")
    if len(coeffs) == 1:
        return coeffs * steps
    if len(coeffs) != steps:
        raise ValueError(f"ns_coeffs has {len(coeffs)} triples, expected 1 or {steps}")
    return coeffs


def newton_schulz(U, steps, coeffs, eps=1e-7):
    """Newton-Schulz orthogonalisation of U [..., r, c] (Semantics.md step 5)."""
    if steps == 0:
        return U
    coeffs = _ns_coeff_list(steps, coeffs)
    transpose = U.shape[-2] > U.shape[-1]
    X = _T(U) if transpose else U
    X = X / (np.sqrt((X * X).sum((-2, -1), keepdims=True)) + eps)
    for a, b, c in coeffs:
        A = X @ _T(X)
        X = a * X + (b * A + c * (A @ A)) @ X
    return _T(X) if transpose else X


def _col_norms(W):
    return np.sqrt((W * W).sum(-2, keepdims=True))  # [..., 1, c]


def _clip(G, clip):
    if clip == "none":
        return G
    if clip == "output_channels":
        return G / (_col_norms(G) + 1.0)
    if clip == "frobenius":
        return G / (np.sqrt((G * G).sum((-2, -1), keepdims=True)) + 1.0)
    raise ValueError(f"unknown clip {clip!r}")


# ------------------------------------------------------------------ kvb layer


def _to_streams(w, B, H, name):
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 3:
        if w.shape[0] != H:
            raise ValueError(f"weight {name}: leading dim {w.shape[0]} != H={H}")
        w = np.broadcast_to(w[None], (B,) + w.shape)
    elif w.ndim == 4:
        if w.shape[:2] != (B, H):
            raise ValueError(f"weight {name}: leading dims {w.shape[:2]} != (B, H)={(B, H)}")
    else:
        raise ValueError(f"weight {name} must be [H,r,c] or [B,H,r,c], got {w.shape}")
    return np.array(w.reshape((B * H,) + w.shape[2:]))  # owned copy


def _ln_param(p, B, H, dout, name):
    p = np.asarray(p, dtype=np.float64)
    if p.shape == (dout,):
        return p.reshape(1, 1, dout)
    if p.shape == (H, dout):
        return np.broadcast_to(p[None], (B, H, dout)).reshape(B * H, 1, dout)
    raise ValueError(f"{name} must be [H, Dout] or [Dout], got {p.shape}")


def kvb_layer(q, k, v, weights, *, model, trained, loss="dot", scale=1.0, reduction="sum",
              ln_eps=1e-6, gamma=None, beta=None, lr=None, token_eta=None, momentum=None,
              sign="descent", lr_scale=1.0, clip="none", ns_steps=0, ns_coeffs=None,
              ns_eps=1e-7, weight_norm="none", weight_norm_eps=1e-5, schedule="chunked",
              chunk=None, order="apply_then_update", inner_steps=1, activation="silu",
              bias=False):
    """Reference for ``ttt.kvb_layer``. Returns (o [B,H,Tq,Dout], [W_final [B,H,r,c], ...])."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("q, k, v must be [B, H, T, D]")
    B, H, Tq, Din = q.shape
    T = k.shape[2]
    Dout = v.shape[3]
    if k.shape != (B, H, T, Din) or v.shape[:3] != (B, H, T):
        raise ValueError(f"inconsistent shapes q{q.shape} k{k.shape} v{v.shape}")
    if model not in _MODELS:
        raise ValueError(f"unknown model {model!r}")
    if model == "mlp" and activation not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}")
    if loss not in _LOSSES:
        raise ValueError(f"unknown loss {loss!r}")
    if sign not in ("descent", "ascent"):
        raise ValueError(f"unknown sign {sign!r}")
    if weight_norm not in ("none", "output_channels"):
        raise ValueError(f"unknown weight_norm {weight_norm!r}")
    if clip not in ("none", "output_channels", "frobenius"):
        raise ValueError(f"unknown clip {clip!r}")
    if inner_steps < 1:
        raise ValueError("inner_steps must be >= 1")
    if ns_steps:
        _ns_coeff_list(ns_steps, ns_coeffs)

    names = weight_names(model, bias)
    nW = len(names)
    if len(weights) != nW:
        raise ValueError(f"{model} (bias={bias}) takes {nW} weights, got {len(weights)}")
    S = B * H
    W = [_to_streams(w, B, H, n) for w, n in zip(weights, names)]
    dh = W[0].shape[-1] if model in ("mlp", "swiglu") else None
    for w, n, shp in zip(W, names, _expected_shapes(model, bias, Din, Dout, dh)):
        if w.shape[1:] != shp:
            raise ValueError(f"weight {n}: expected [{shp[0]}, {shp[1]}], got {list(w.shape[1:])}")
    trained = sorted(set(int(i) for i in trained))
    if any(i < 0 or i >= nW for i in trained):
        raise ValueError(f"trained indices {trained} out of range for {nW} weights")

    if schedule == "chunked":
        if chunk is None or int(chunk) < 1:
            raise ValueError("chunked schedule needs chunk >= 1")
        C = int(chunk)
        if order not in ("apply_then_update", "update_then_apply", "causal"):
            raise ValueError(f"unknown order {order!r}")
        if Tq != T:
            raise ValueError("chunked schedules need Tq == T")
    elif schedule == "full_batch":
        C = T
        order = None
        if momentum is not None:
            raise ValueError("momentum is only defined for chunked schedules")
    else:
        raise ValueError(f"unknown schedule {schedule!r}")
    causal = order == "causal"
    if token_eta is not None and not causal:
        raise ValueError("token_eta is only defined with order = causal")
    if causal and (clip != "none" or momentum is not None or ns_steps
                   or weight_norm != "none" or inner_steps != 1):
        raise ValueError("causal order admits no clip, momentum, orthogonalization, "
                         "weight norm or extra inner steps")
    if token_eta is not None:
        token_eta = np.asarray(token_eta, dtype=np.float64).reshape(-1)
        if token_eta.shape[0] != C:
            raise ValueError(f"token_eta has {token_eta.shape[0]} entries, chunk is {C}")

    # Per-token learning rates [S, T, nW].
    if lr is None:
        eta = np.ones((S, T, nW))
    else:
        lr = np.asarray(lr, dtype=np.float64)
        if lr.ndim == 3:
            lr = lr[..., None]
        if lr.shape[-1] not in (1, nW):
            raise ValueError(f"lr has {lr.shape[-1]} columns, expected 1 or {nW}")
        eta = np.broadcast_to(lr, (B, H, T, lr.shape[-1])).reshape(S, T, lr.shape[-1])
        eta = np.array(np.broadcast_to(eta, (S, T, nW)))
    m = None
    if momentum is not None:
        m = np.broadcast_to(np.asarray(momentum, dtype=np.float64), (B, H, T)).reshape(S, T)
    g = b_ = None
    if loss == "layernorm_mse":
        if gamma is None or beta is None:
            raise ValueError("layernorm_mse needs gamma and beta")
        g = _ln_param(gamma, B, H, Dout, "gamma")
        b_ = _ln_param(beta, B, H, Dout, "beta")

    qs = q.reshape(S, Tq, Din)
    ks = k.reshape(S, T, Din)
    vs = v.reshape(S, T, Dout)
    sgn = -1.0 if sign == "descent" else 1.0
    fcfg = dict(loss=loss, gamma=g, beta=b_, ln_eps=ln_eps, activation=activation, bias=bias)

    def apply(Wl, x, per_token=False):
        f, _ = model_forward(model, Wl, x, activation=activation, bias=bias, per_token=per_token)
        return output_transform(f, loss=loss, gamma=g, beta=b_, ln_eps=ln_eps)[0]

    # Sequence-level state.
    M = [np.zeros_like(w) for w in W]
    radius = [_col_norms(w) for w in W]  # used only for trained non-bias weights

    def step(sl):
        """One inner step (repeated inner_steps times) on tokens `sl`, in place on W."""
        mu = m[:, sl].mean(-1)[:, None, None] if m is not None else None
        for _ in range(inner_steps):
            _, G = loss_and_grads(model, W, ks[:, sl], vs[:, sl], eta[:, sl], scale=scale,
                                  reduction=reduction, **fcfg)
            for i in trained:
                U = sgn * _clip(G[i], clip)
                if mu is not None:
                    M[i] = mu * M[i] + U
                    U = M[i]
                if ns_steps:
                    U = newton_schulz(U, ns_steps, ns_coeffs, ns_eps)
                W[i] = W[i] + lr_scale * U
                if weight_norm == "output_channels" and not _is_bias(names[i]):
                    W[i] = W[i] / (_col_norms(W[i]) + weight_norm_eps) * radius[i]

    def causal_chunk(sl):
        """Token-causal chunk: query i reads W^(i); W ends at W^(last)."""
        n = sl.stop - sl.start
        ell, factors = token_losses_and_factors(model, W, ks[:, sl], vs[:, sl], **fcfg)
        coef = scale / (n if reduction == "mean" else 1) * eta[:, sl]  # [S, n, nW]
        teta = token_eta[:n] if token_eta is not None else np.ones(n)
        Wtok = []
        for i, w in enumerate(W):
            if i not in trained:
                Wtok.append(np.broadcast_to(w[:, None], (S, n) + w.shape[1:]))
                continue
            A, D = factors[i]
            per_tok = (coef[..., i, None, None] * A[..., :, None]) * D[..., None, :]
            cum = np.cumsum(per_tok, axis=1)  # sum over j <= i
            Wtok.append(w[:, None] + sgn * lr_scale * teta[None, :, None, None] * cum)
        O = apply(Wtok, qs[:, sl], per_token=True)
        for i in trained:
            W[i] = np.array(Wtok[i][:, -1])
        return O

    O = np.zeros((S, Tq, Dout))
    if schedule == "full_batch":
        if T > 0:
            step(slice(0, T))
        O[:] = apply(W, qs)
    else:
        for c0 in range(0, T, C):
            sl = slice(c0, min(c0 + C, T))
            if order == "apply_then_update":
                O[:, sl] = apply(W, qs[:, sl])
                step(sl)
            elif order == "update_then_apply":
                step(sl)
                O[:, sl] = apply(W, qs[:, sl])
            else:
                O[:, sl] = causal_chunk(sl)

    finals = [w.reshape((B, H) + w.shape[1:]) for w in W]
    return O.reshape(B, H, Tq, Dout), finals


# ------------------------------------------------------------------ depth-wise conv layer


def _pad(x, kh, kw):
    ph, pw = (kh - 1) // 2, (kw - 1) // 2
    cfg = [(0, 0)] * (x.ndim - 2) + [(ph, ph), (pw, pw)]
    return np.pad(x, cfg)


def dwconv_forward(x, w):
    """f_w(x)[c, y, x'] = sum_{a,b} w[c, a, b] * xpad[c, y + a, x' + b].

    x [..., C, Hs, Ws], w [..., C, kh, kw] (kh, kw odd, zero padding)."""
    kh, kw = w.shape[-2:]
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError("kernel sizes must be odd")
    Hs, Ws = x.shape[-2:]
    xp = _pad(x, kh, kw)
    out = np.zeros(np.broadcast_shapes(x.shape, w.shape[:-2] + (1, 1)))
    for a in range(kh):
        for b in range(kw):
            out = out + w[..., a, b, None, None] * xp[..., a:a + Hs, b:b + Ws]
    return out


def dwconv_loss_and_grad(w, k, v, *, loss="dot", scale=1.0, reduction="sum"):
    """Loss L [...] (summed over channels and positions) and dL/dw [..., C, kh, kw]."""
    if loss not in ("dot", "mse"):
        raise ValueError(f"dwconv supports loss dot or mse, not {loss!r}")
    if reduction not in ("sum", "mean"):
        raise ValueError(f"unknown reduction {reduction!r}")
    kh, kw = w.shape[-2:]
    Hs, Ws = k.shape[-2:]
    s = scale / (Hs * Ws if reduction == "mean" else 1)
    F = dwconv_forward(k, w)
    if loss == "dot":
        ell = -(F * v)
        dF = -v * np.ones_like(F)
    else:
        r = F - v
        ell = 0.5 * r * r
        dF = r
    L = s * ell.sum((-3, -2, -1))
    kp = _pad(k, kh, kw)
    G = np.zeros(F.shape[:-2] + (kh, kw))
    for a in range(kh):
        for b in range(kw):
            G[..., a, b] = s * (dF * kp[..., a:a + Hs, b:b + Ws]).sum((-2, -1))
    return L, G


def dwconv_layer(q, k, v, w, *, loss="dot", scale=1.0, reduction="sum", sign="descent",
                 lr_scale=1.0, clip="none", inner_steps=1):
    """Reference for ``ttt.dwconv_layer``. Returns (o [B,C,Hs,Ws], w_final [B,C,kh,kw])."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if q.ndim != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError("q, k, v must all be [B, C, Hs, Ws]")
    B, C = q.shape[:2]
    if w.ndim == 3:
        w = np.broadcast_to(w[None], (B,) + w.shape)
    if w.shape[:2] != (B, C) or w.ndim != 4:
        raise ValueError(f"kernel must be [C,kh,kw] or [B,C,kh,kw], got {w.shape}")
    if sign not in ("descent", "ascent"):
        raise ValueError(f"unknown sign {sign!r}")
    if clip not in ("none", "frobenius"):
        raise ValueError(f"dwconv supports clip none or frobenius, not {clip!r}")
    sgn = -1.0 if sign == "descent" else 1.0
    w = np.array(w)
    for _ in range(inner_steps):
        _, G = dwconv_loss_and_grad(w, k, v, loss=loss, scale=scale, reduction=reduction)
        if clip == "frobenius":
            G = G / (np.sqrt((G * G).sum((-2, -1), keepdims=True)) + 1.0)
        w = w + lr_scale * sgn * G
    return dwconv_forward(q, w), w
