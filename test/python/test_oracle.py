"""Self-checks of the NumPy oracle (test/python/oracle); independent of the compiler.

Run from the repository root: python3 -m pytest -q test/python/test_oracle.py
"""

import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import (  # noqa: E402
    LACT_NS_COEFFS,
    NVS_NS_COEFF,
    dwconv_forward,
    dwconv_layer,
    dwconv_loss_and_grad,
    kvb_layer,
    loss_and_grads,
    model_forward,
    newton_schulz,
    output_transform,
    weight_names,
)

DIN, DH, DOUT = 3, 4, 3


def _rng(seed=0):
    return np.random.default_rng(seed)


def _stream_weights(rng, model, bias, din=DIN, dh=DH, dout=DOUT, lead=()):
    shapes = {
        "linear": {"W": (din, dout), "b": (1, dout)},
        "mlp": {"W0": (din, dh), "b0": (1, dh), "W1": (dh, dout), "b1": (1, dout)},
        "swiglu": {"W0": (din, dh), "W1": (dh, dout), "W2": (din, dh)},
        "glu": {"Wa": (din, dout), "Wg": (din, dout)},
    }[model]
    return [rng.standard_normal(lead + shapes[n]) * 0.7 for n in weight_names(model, bias)]


# Every model kind x bias x activation (for mlp).
MODEL_CASES = [
    ("linear", False, "silu"),
    ("linear", True, "silu"),
    ("mlp", False, "silu"),
    ("mlp", True, "silu"),
    ("mlp", True, "gelu_tanh"),
    ("mlp", True, "relu"),
    ("swiglu", False, "silu"),
    ("glu", False, "silu"),
]


# --------------------------------------------------------------- finite differences


@pytest.mark.parametrize("loss", ["dot", "mse", "layernorm_mse"])
@pytest.mark.parametrize("model,bias,activation", MODEL_CASES)
def test_grads_match_finite_differences(model, bias, activation, loss):
    rng = _rng(zlib.crc32(f"{model}{bias}{activation}{loss}".encode()))
    n = 5
    W = _stream_weights(rng, model, bias)
    x = rng.standard_normal((n, DIN))
    v = rng.standard_normal((n, DOUT))
    eta = rng.uniform(0.2, 2.0, (n, len(W)))  # a distinct lr column per weight
    kw = dict(loss=loss, scale=0.7, reduction="mean", activation=activation, bias=bias)
    if loss == "layernorm_mse":
        kw.update(gamma=rng.uniform(0.5, 1.5, DOUT), beta=rng.standard_normal(DOUT) * 0.3)
    _, G = loss_and_grads(model, W, x, v, eta, **kw)
    h = 1e-6
    for i in range(len(W)):
        fd = np.zeros_like(W[i])
        for idx in np.ndindex(W[i].shape):
            Wp = [w.copy() for w in W]
            Wm = [w.copy() for w in W]
            Wp[i][idx] += h
            Wm[i][idx] -= h
            Lp = loss_and_grads(model, Wp, x, v, eta, **kw)[0][i]
            Lm = loss_and_grads(model, Wm, x, v, eta, **kw)[0][i]
            fd[idx] = (Lp - Lm) / (2 * h)
        assert np.abs(G[i]).max() > 1e-3  # not trivially zero
        np.testing.assert_allclose(G[i], fd, rtol=1e-6, atol=1e-7,
                                   err_msg=f"{model} weight {i}")


def test_losses_use_their_own_lr_column_and_reduction():
    rng = _rng(1)
    W = _stream_weights(rng, "swiglu", False)
    x, v = rng.standard_normal((4, DIN)), rng.standard_normal((4, DOUT))
    eta = rng.uniform(0.5, 1.5, (4, 3))
    L_sum, G_sum = loss_and_grads("swiglu", W, x, v, eta, loss="mse", reduction="sum")
    L_mean, G_mean = loss_and_grads("swiglu", W, x, v, eta, loss="mse", reduction="mean")
    L1, G1 = loss_and_grads("swiglu", W, x, v, eta[:, 1], loss="mse", reduction="sum")
    f, _ = model_forward("swiglu", W, x)
    ell = 0.5 * ((f - v) ** 2).sum(-1)
    for i in range(3):
        np.testing.assert_allclose(L_sum[i], (eta[:, i] * ell).sum())
        np.testing.assert_allclose(L_mean[i], L_sum[i] / 4)
        np.testing.assert_allclose(G_mean[i], G_sum[i] / 4)
    np.testing.assert_allclose(G1[1], G_sum[1])
    assert not np.allclose(G1[0], G_sum[0])


# --------------------------------------------------------------- layer invariants


def _qkv(rng, B=2, H=2, T=13, din=DIN, dout=DOUT, Tq=None):
    q = rng.standard_normal((B, H, T if Tq is None else Tq, din))
    k = rng.standard_normal((B, H, T, din))
    v = rng.standard_normal((B, H, T, dout))
    return q, k, v


@pytest.mark.parametrize("bias", [False, True])
def test_causal_chunk1_equals_online_update_then_apply(bias):
    rng = _rng(2)
    B, H, T, D = 2, 2, 11, 4
    q, k, v = _qkv(rng, B, H, T, D, D)
    W = _stream_weights(rng, "linear", bias, din=D, dout=D, lead=(H,))
    lr = rng.uniform(0.05, 0.3, (B, H, T, len(W)))
    common = dict(model="linear", trained=list(range(len(W))), loss="mse", lr=lr,
                  lr_scale=0.8, bias=bias, chunk=1, scale=1.3)
    o1, w1 = kvb_layer(q, k, v, W, order="causal", **common)
    o2, w2 = kvb_layer(q, k, v, W, order="update_then_apply", **common)
    np.testing.assert_allclose(o1, o2, rtol=1e-12, atol=1e-12)
    for a, b in zip(w1, w2):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # and it is genuinely online GD (differs from no update)
    o0, _ = kvb_layer(q, k, v, W, order="causal", **{**common, "lr_scale": 0.0})
    assert np.abs(o1 - o0).max() > 1e-2


_ALL_UPDATE_OPTIONS = dict(momentum=True, clip="output_channels", ns_steps=3,
                           weight_norm="output_channels", inner_steps=2)


@pytest.mark.parametrize("order,extras", [
    ("apply_then_update", {}),
    ("update_then_apply", {}),
    ("causal", {}),
    ("apply_then_update", _ALL_UPDATE_OPTIONS),
    ("update_then_apply", _ALL_UPDATE_OPTIONS),
])
def test_ascent_equals_descent_with_negated_lr_scale(order, extras):
    rng = _rng(3)
    B, H, T = 2, 2, 10
    q, k, v = _qkv(rng, B, H, T)
    W = _stream_weights(rng, "swiglu", False, lead=(H,))
    kw = dict(model="swiglu", trained=[0, 1, 2], loss="mse", chunk=4, order=order,
              lr=rng.uniform(0.1, 0.5, (B, H, T, 3)))
    extras = dict(extras)
    if extras.pop("momentum", False):
        kw["momentum"] = rng.uniform(0.3, 0.9, (B, H, T))
        kw["ns_coeffs"] = [NVS_NS_COEFF]
    kw.update(extras)
    o_a, w_a = kvb_layer(q, k, v, W, sign="ascent", lr_scale=0.3, **kw)
    o_d, w_d = kvb_layer(q, k, v, W, sign="descent", lr_scale=-0.3, **kw)
    o_n, _ = kvb_layer(q, k, v, W, sign="descent", lr_scale=0.3, **kw)
    np.testing.assert_allclose(o_a, o_d, rtol=1e-10, atol=1e-12)
    for a, b in zip(w_a, w_d):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert np.abs(o_a - o_n).max() > 1e-3


@pytest.mark.parametrize("model,bias", [("swiglu", False), ("mlp", True), ("glu", False)])
def test_single_chunk_update_then_apply_equals_full_batch(model, bias):
    rng = _rng(4)
    B, H, T = 2, 3, 9
    q, k, v = _qkv(rng, B, H, T)
    W = _stream_weights(rng, model, bias, lead=(H,))
    W[0] = np.broadcast_to(W[0], (B,) + W[0].shape) + 0.1 * rng.standard_normal((B,) + W[0].shape)
    nW = len(W)
    kw = dict(model=model, bias=bias, trained=list(range(nW)), loss="layernorm_mse",
              gamma=rng.uniform(0.5, 1.5, (H, DOUT)), beta=rng.standard_normal((H, DOUT)),
              lr=rng.uniform(0.1, 1.0, (B, H, T, nW)), clip="output_channels", ns_steps=5,
              ns_coeffs=LACT_NS_COEFFS, weight_norm="output_channels", inner_steps=2,
              reduction="mean", scale=0.5, lr_scale=0.2)
    o1, w1 = kvb_layer(q, k, v, W, schedule="chunked", chunk=T + 3, order="update_then_apply",
                       **kw)
    o2, w2 = kvb_layer(q, k, v, W, schedule="full_batch", **kw)
    np.testing.assert_allclose(o1, o2, rtol=1e-12, atol=1e-12)
    for a, b in zip(w1, w2):
        assert a.shape == (B, H) + b.shape[2:]
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)

    # full_batch with a different number of queries: O = F_{W'}(q2)
    q2 = rng.standard_normal((B, H, 5, DIN))
    o3, w3 = kvb_layer(q2, k, v, W, schedule="full_batch", **kw)
    assert o3.shape == (B, H, 5, DOUT)
    f, _ = model_forward(model, w3, q2, activation="silu", bias=bias)
    F, _ = output_transform(f, loss="layernorm_mse",
                            gamma=kw["gamma"][None, :, None], beta=kw["beta"][None, :, None])
    np.testing.assert_allclose(o3, F, rtol=1e-12, atol=1e-12)


def _block_ids(T, C):
    return np.arange(T) // C


def _chunk_len(T, C):
    ids = _block_ids(T, C)
    return np.bincount(ids)[ids]


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_linear_dot_apply_then_update_is_block_causal_linear_attention(reduction):
    rng = _rng(5)
    B, H, T, C, D, E = 2, 2, 23, 5, 4, 3  # last chunk is partial (3 tokens)
    q, k, v = _qkv(rng, B, H, T, D, E)
    W0 = rng.standard_normal((H, D, E))
    lr = rng.uniform(0.1, 1.0, (B, H, T, 1))
    s, lr_scale = 0.7, 1.3
    o, (wf,) = kvb_layer(q, k, v, [W0], model="linear", trained=[0], loss="dot", lr=lr,
                         scale=s, reduction=reduction, lr_scale=lr_scale, chunk=C)
    # closed form: o_t = q_t (W0 + sum_{tau: chunk(tau) < chunk(t)} k_tau^T (w_tau v_tau))
    ids = _block_ids(T, C)
    mask = (ids[None, :] < ids[:, None]).astype(float)  # [t, tau], block-strict
    w = lr[..., 0] * s * lr_scale
    if reduction == "mean":
        w = w / _chunk_len(T, C)
    vv = w[..., None] * v
    ref = q @ W0[None] + ((q @ np.swapaxes(k, -1, -2)) * mask) @ vv
    np.testing.assert_allclose(o, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wf, W0[None] + np.swapaxes(k, -1, -2) @ vv, rtol=1e-12)


def test_linear_dot_momentum_and_muon_match_chunk_scan():
    rng = _rng(6)
    B, H, T, C, D, E = 1, 2, 17, 4, 5, 3
    q, k, v = _qkv(rng, B, H, T, D, E)
    W0 = rng.standard_normal((B, H, D, E))
    lr = rng.uniform(0.1, 1.0, (B, H, T, 1))
    m = rng.uniform(0.2, 0.9, (B, H, T))
    o, (wf,) = kvb_layer(q, k, v, [W0], model="linear", trained=[0], lr=lr, momentum=m,
                         ns_steps=5, ns_coeffs=LACT_NS_COEFFS, chunk=C)
    # docs/Theory.md §3: G_c = K^T (eta V); U_c = G_c + mu_c U_{c-1};
    # S_c = S0 + sum_{j<c} NS(U_j)
    for b in range(B):
        for h in range(H):
            S, U = W0[b, h].copy(), np.zeros((D, E))
            for c0 in range(0, T, C):
                sl = slice(c0, min(c0 + C, T))
                np.testing.assert_allclose(o[b, h, sl], q[b, h, sl] @ S, rtol=1e-10, atol=1e-12)
                U = m[b, h, sl].mean() * U + k[b, h, sl].T @ (lr[b, h, sl] * v[b, h, sl])
                S = S + newton_schulz(U, 5, LACT_NS_COEFFS)
            np.testing.assert_allclose(wf[b, h], S, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("inner_steps", [1, 3])
def test_inner_steps_linear_mse_full_batch_closed_form(inner_steps):
    rng = _rng(17)
    B, H, T, Tq, D, E = 2, 2, 9, 4, 5, 3
    q, k, v = _qkv(rng, B, H, T, D, E, Tq=Tq)
    W0, b0 = rng.standard_normal((H, D, E)), rng.standard_normal((H, 1, E))
    lr = rng.uniform(0.1, 1.0, (B, H, T, 2))
    s, lr_scale = 0.8, 0.6
    o, (wf, bf) = kvb_layer(q, k, v, [W0, b0], model="linear", bias=True, trained=[0, 1],
                            loss="mse", lr=lr, scale=s, reduction="mean", lr_scale=lr_scale,
                            schedule="full_batch", inner_steps=inner_steps)
    W, b = np.broadcast_to(W0, (B, H, D, E)), np.broadcast_to(b0, (B, H, 1, E))
    kT = np.swapaxes(k, -1, -2)
    for _ in range(inner_steps):  # grad of s/T sum eta ½||k W + b - v||^2
        R = k @ W + b - v
        W, b = (W - lr_scale * s / T * kT @ (lr[..., :1] * R),
                b - lr_scale * s / T * (lr[..., 1:] * R).sum(-2, keepdims=True))
    np.testing.assert_allclose(wf, W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bf, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(o, q @ W + b, rtol=1e-12, atol=1e-12)


def _ln_jacobian(z, eps):
    """Explicit Jacobian of LN(z) (no gamma), [n, D, D]: d xhat_a / d z_b."""
    n, Dd = z.shape
    mu = z.mean(-1, keepdims=True)
    sig = np.sqrt(((z - mu) ** 2).mean(-1, keepdims=True) + eps)
    xh = (z - mu) / sig
    eye = np.eye(Dd)[None]
    return (eye - 1.0 / Dd - xh[:, :, None] * xh[:, None, :] / Dd) / sig[:, :, None]


def test_causal_layernorm_linear_matches_ttt_linear_dual_form():
    """TTT-Linear (ttt-lm-pytorch) dual form, docs/ReferenceModels.md §3.2."""
    rng = _rng(7)
    B, H, T, C, D = 1, 2, 14, 4, 5  # partial last chunk of 2
    eps = 1e-6
    q, k, v = _qkv(rng, B, H, T, D, D)
    W0 = rng.standard_normal((H, D, D)) * 0.5
    b0 = rng.standard_normal((H, 1, D)) * 0.5
    gam, bet = rng.uniform(0.5, 1.5, (H, D)), rng.standard_normal((H, D)) * 0.2
    lr = rng.uniform(0.05, 0.3, (B, H, T, 1))
    teta = np.maximum(0.0, 1.0 / np.arange(1, C + 1) + rng.uniform(-0.1, 0.1, C))
    o, (wf, bf) = kvb_layer(q, k, v, [W0, b0], model="linear", bias=True, trained=[0, 1],
                            loss="layernorm_mse", gamma=gam, beta=bet, ln_eps=eps, lr=lr,
                            token_eta=teta, chunk=C, order="causal", reduction="mean")

    def ln_out(z, h):
        mu = z.mean(-1, keepdims=True)
        return gam[h] * (z - mu) / np.sqrt(((z - mu) ** 2).mean(-1, keepdims=True) + eps) + bet[h]

    for h in range(H):
        W, bb = W0[h].copy(), b0[h].copy()
        for c0 in range(0, T, C):
            sl = slice(c0, min(c0 + C, T))
            n = sl.stop - sl.start
            XQ, XK, XV = q[0, h, sl], k[0, h, sl], v[0, h, sl]
            Z = XK @ W + bb
            r = ln_out(Z, h) - XV
            G = np.einsum("nab,na->nb", _ln_jacobian(Z, eps), r * gam[h])  # dl/dZ per token
            eta = teta[:n, None] * lr[0, h, sl, 0][None, :] / n  # eta[i, j]
            Attn = np.tril(XQ @ XK.T)
            bbar = bb - np.tril(eta) @ G
            Zbar = XQ @ W - (eta * Attn) @ G + bbar
            np.testing.assert_allclose(o[0, h, sl], ln_out(Zbar, h), rtol=1e-10, atol=1e-12)
            W = W - XK.T @ (eta[-1][:, None] * G)
            bb = bb - (eta[-1][:, None] * G).sum(0, keepdims=True)
        np.testing.assert_allclose(wf[0, h], W, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(bf[0, h], bb, rtol=1e-10, atol=1e-12)


def test_full_batch_glu_matches_vit3_branch1():
    """ViT^3 simplified-SwiGLU branch, docs/ReferenceModels.md §2.1."""
    rng = _rng(8)
    B, H, N, Nq, d = 2, 2, 12, 7, 4
    q, k, v = _qkv(rng, B, H, N, d, d, Tq=Nq)
    W1, W2 = rng.standard_normal((1, H, d, d)), rng.standard_normal((1, H, d, d))
    W1, W2 = np.repeat(W1, B, 0), np.repeat(W2, B, 0)
    scale = 9 ** -0.5
    o, (w1f, w2f) = kvb_layer(q, k, v, [W1, W2], model="glu", trained=[0, 1], loss="dot",
                              scale=scale, reduction="mean", clip="output_channels",
                              schedule="full_batch")
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    silu = lambda z: z * sig(z)  # noqa: E731
    dsilu = lambda z: sig(z) * (1 + z * (1 - sig(z)))  # noqa: E731
    E = -(scale / N) * v
    Z1, Z2 = k @ W1, k @ W2
    kT = np.swapaxes(k, -1, -2)
    G1 = kT @ (E * silu(Z2))
    G2 = kT @ (E * Z1 * dsilu(Z2))
    G1 = G1 / (np.linalg.norm(G1, axis=-2, keepdims=True) + 1)
    G2 = G2 / (np.linalg.norm(G2, axis=-2, keepdims=True) + 1)
    W1n, W2n = W1 - G1, W2 - G2
    np.testing.assert_allclose(o, (q @ W1n) * silu(q @ W2n), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w1f, W1n, rtol=1e-12)
    np.testing.assert_allclose(w2f, W2n, rtol=1e-12)


def test_weight_norm_preserves_initial_column_norms_of_trained_matrices():
    rng = _rng(9)
    B, H, T = 2, 1, 12
    q, k, v = _qkv(rng, B, H, T)
    W = _stream_weights(rng, "mlp", True, lead=(H,))
    o, wf = kvb_layer(q, k, v, W, model="mlp", bias=True, trained=[0, 1, 3], loss="mse",
                      weight_norm="output_channels", weight_norm_eps=1e-5, chunk=5,
                      lr_scale=0.5)
    for i in (0, 3):  # trained matrix W0 is renormalised, trained bias b1 is not
        r0 = np.linalg.norm(W[i], axis=-2)
        rf = np.linalg.norm(wf[i], axis=-2)
        assert np.abs(wf[i] - W[i][None]).max() > 1e-3  # it was updated
        if i == 0:
            np.testing.assert_allclose(rf, np.broadcast_to(r0, rf.shape), rtol=1e-4)
        else:  # |b1_j| is a "column norm" that must move freely
            assert np.abs(rf - r0).max() > 0.1
    np.testing.assert_array_equal(wf[2], np.broadcast_to(W[2], wf[2].shape))  # untrained W1


# --------------------------------------------------------------- Newton-Schulz


def test_newton_schulz_matches_scalar_map_on_singular_values():
    rng = _rng(10)
    X = rng.standard_normal((16, 24))
    for coeffs, steps in [([NVS_NS_COEFF], 10), (LACT_NS_COEFFS, 5)]:
        Y = newton_schulz(X, steps, coeffs)
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
        s = s / (np.linalg.norm(X) + 1e-7)
        for a, b, c in (coeffs * steps if len(coeffs) == 1 else coeffs):
            s = a * s + b * s**3 + c * s**5
        np.testing.assert_allclose(Y, (U * s) @ Vt, rtol=1e-9, atol=1e-12)


def test_newton_schulz_near_orthogonal_and_transpose_invariant():
    rng = _rng(11)
    X = rng.standard_normal((16, 24))
    s0 = np.linalg.svd(X / np.linalg.norm(X), compute_uv=False)
    assert s0.min() < 0.1  # the input is far from orthogonal
    # the quintic NVS iteration does not converge to 1; it lands in roughly [0.68, 1.14]
    s = np.linalg.svd(newton_schulz(X, 10, [NVS_NS_COEFF]), compute_uv=False)
    assert s.min() > 0.6 and s.max() < 1.2
    s = np.linalg.svd(newton_schulz(X, 5, LACT_NS_COEFFS), compute_uv=False)
    assert s.min() > 0.95 and s.max() < 1.05
    for coeffs, steps in [([NVS_NS_COEFF], 10), (LACT_NS_COEFFS, 5)]:
        np.testing.assert_allclose(newton_schulz(X.T, steps, coeffs),
                                   newton_schulz(X, steps, coeffs).T, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------- depth-wise conv


@pytest.mark.parametrize("loss", ["dot", "mse"])
@pytest.mark.parametrize("ksize", [(3, 3), (1, 5)])
def test_dwconv_kernel_grad_matches_finite_differences(loss, ksize):
    rng = _rng(12)
    Cc, Hs, Ws = 2, 4, 5
    w = rng.standard_normal((Cc,) + ksize)
    k, v = rng.standard_normal((Cc, Hs, Ws)), rng.standard_normal((Cc, Hs, Ws))
    kw = dict(loss=loss, scale=0.6, reduction="mean")
    _, G = dwconv_loss_and_grad(w, k, v, **kw)
    h = 1e-6
    fd = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        wp, wm = w.copy(), w.copy()
        wp[idx] += h
        wm[idx] -= h
        fd[idx] = (dwconv_loss_and_grad(wp, k, v, **kw)[0]
                   - dwconv_loss_and_grad(wm, k, v, **kw)[0]) / (2 * h)
    assert np.abs(G).max() > 1e-3
    np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8)


def test_dwconv_forward_is_zero_padded_cross_correlation():
    rng = _rng(13)
    Cc, Hs, Ws, kh, kw = 2, 4, 6, 3, 5
    x = rng.standard_normal((Cc, Hs, Ws))
    w = rng.standard_normal((Cc, kh, kw))
    ref = np.zeros_like(x)
    for c in range(Cc):
        for y in range(Hs):
            for xx in range(Ws):
                for a in range(kh):
                    for b in range(kw):
                        yy, xb = y + a - kh // 2, xx + b - kw // 2
                        if 0 <= yy < Hs and 0 <= xb < Ws:
                            ref[c, y, xx] += w[c, a, b] * x[c, yy, xb]
    np.testing.assert_allclose(dwconv_forward(x, w), ref, rtol=1e-12, atol=1e-12)


def test_dwconv_layer_vit3_branch2():
    rng = _rng(14)
    B, Cc, Hs, Ws = 2, 3, 5, 4
    q, k, v = (rng.standard_normal((B, Cc, Hs, Ws)) for _ in range(3))
    w = rng.standard_normal((Cc, 3, 3))
    scale = 9 ** -0.5
    o, wf = dwconv_layer(q, k, v, w, loss="dot", scale=scale, reduction="mean", clip="frobenius")
    # G[c, a, b] = sum_{y,x} E[c, y, x] kpad[c, y + a, x + b], E = -(scale / (Hs Ws)) v
    E = -(scale / (Hs * Ws)) * v
    kp = np.pad(k, [(0, 0), (0, 0), (1, 1), (1, 1)])
    G = np.stack([np.stack([(E * kp[:, :, a:a + Hs, b:b + Ws]).sum((-2, -1))
                            for b in range(3)], -1) for a in range(3)], -2)
    G = G / (np.linalg.norm(G.reshape(B, Cc, 9), axis=-1)[..., None, None] + 1)
    w_new = w[None] - G
    assert wf.shape == (B, Cc, 3, 3)
    np.testing.assert_allclose(wf, w_new, rtol=1e-12)
    np.testing.assert_allclose(o, dwconv_forward(q, w_new), rtol=1e-12)
    # two inner steps differ from one; ascent equals descent with negated lr_scale
    o2, _ = dwconv_layer(q, k, v, w, loss="mse", inner_steps=2, lr_scale=0.3)
    o1, _ = dwconv_layer(q, k, v, w, loss="mse", inner_steps=1, lr_scale=0.3)
    assert np.abs(o2 - o1).max() > 1e-3
    oa, _ = dwconv_layer(q, k, v, w, loss="mse", inner_steps=2, sign="ascent", lr_scale=-0.3)
    np.testing.assert_allclose(oa, o2, rtol=1e-12)


# --------------------------------------------------------------- shapes and checks


def test_shapes_lr_columns_and_speed():
    import time

    rng = _rng(15)
    B, H, T, D = 2, 2, 300, 32
    q, k, v = _qkv(rng, B, H, T, D, D)
    W = [rng.standard_normal((H, D, D)) / np.sqrt(D) for _ in range(3)]
    t0 = time.perf_counter()
    o, wf = kvb_layer(q, k, v, W, model="swiglu", trained=[0, 1, 2],
                      lr=rng.uniform(0, 1e-2, (B, H, T, 3)), momentum=rng.uniform(0, 1, (B, H, T)),
                      ns_steps=5, ns_coeffs=LACT_NS_COEFFS, weight_norm="output_channels",
                      chunk=64)
    assert time.perf_counter() - t0 < 2.0
    assert o.shape == (B, H, T, D) and o.dtype == np.float64
    assert all(w.shape == (B, H, D, D) and w.dtype == np.float64 for w in wf)
    # one lr column == the same column repeated for every weight
    lr1 = rng.uniform(0, 1e-2, (B, H, T, 1))
    a = kvb_layer(q, k, v, W, model="swiglu", trained=[0, 2], lr=lr1, chunk=50)
    b = kvb_layer(q, k, v, W, model="swiglu", trained=[0, 2], lr=np.repeat(lr1, 3, -1), chunk=50)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-13)
    # the lr column of the untrained weight 1 is irrelevant; the one of weight 0 is not
    lr3 = np.repeat(lr1, 3, -1)
    lr3b = lr3.copy()
    lr3b[..., 1] *= 5
    c = kvb_layer(q, k, v, W, model="swiglu", trained=[0, 2], lr=lr3b, chunk=50)
    np.testing.assert_allclose(a[0], c[0], rtol=1e-13)
    lr3b[..., 0] *= 5
    d = kvb_layer(q, k, v, W, model="swiglu", trained=[0, 2], lr=lr3b, chunk=50)
    assert np.abs(a[0] - d[0]).max() > 1e-6
    np.testing.assert_array_equal(a[1][1], np.broadcast_to(W[1], (B, H, D, D)))


def test_invalid_configurations_are_rejected():
    rng = _rng(16)
    q, k, v = _qkv(rng, 1, 1, 6)
    W = _stream_weights(rng, "linear", False, lead=(1,))
    base = dict(model="linear", trained=[0], chunk=3)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, order="causal", clip="frobenius", **base)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, order="apply_then_update", token_eta=np.ones(3), **base)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, order="causal", token_eta=np.ones(4), **base)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, ns_steps=3, ns_coeffs=LACT_NS_COEFFS, **base)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, schedule="full_batch", momentum=np.ones((1, 1, 6)), **base)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W, model="linear", trained=[0], loss="layernorm_mse", chunk=3)
    with pytest.raises(ValueError):
        kvb_layer(q, k, v, W + W, model="linear", trained=[0], chunk=3)
