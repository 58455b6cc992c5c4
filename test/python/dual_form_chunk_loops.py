"""TTT-Linear's dual form as a ttt.chunk_loop written from the math, with a NumPy
oracle written from the primal (per-token) form.

ttt-lm-pytorch's inner model per stream: a linear fast weight W (and bias b), its
output normalized, fit to a target t by the squared error; one mini-batch of C
tokens per chunk, every gradient taken at the chunk's start weights:

    Z_j  = k_j W + b,  x_j = LN(Z_j),   G_j = dL/dZ_j of 1/2 |x_j - t_j|^2
         = (g_j - mean(g_j) - x_j mean(g_j x_j)) / std(Z_j),   g = x - t
    W_i  = W - c sum_{j <= i} eta_ij k_j^T G_j,  b_i = b - c sum_{j <= i} eta_ij G_j
    o_i  = LN(q_i W_i + b_i) (+ q_i)              eta_ij = tok_i lr_j
    W   <- W_{C-1},  b <- b_{C-1}

The program computes it as ttt-lm-pytorch does (the dual form): `q W - (eta *
tril(q k^T)) G + b - tril(eta) G`, the update with the last row of eta. Each program
is drawn at random in what must not matter to a reader of the math: the target v - k
or v, a bias or none, the residual, the step c, the causal mask's predicate, the mean
as a scaled sum or a sum then a division, operands commuted. The sequences are
`[N, B, C, D]`, cut along the mini-batches (chunk 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from swiglu_chunk_loops import _Body, _type

ORDER = "btsde"


def _payload_binary(op):
    return lambda args, acc: ([f"%r = {op} {args[0]}, {args[1]} : f32"], "%r")


@dataclass
class DualFormLayer:
    batch: int
    chunk: int
    chunks: int
    dim: int
    step: float
    eps: float
    bias: bool
    residual: bool
    minus_keys: bool
    mask_spelling: int
    mean_by_division: bool
    commuted: bool
    # The LayerNorm's learned scale and shift (ttt-lm-pytorch's ttt_norm_weight and
    # ttt_norm_bias, [H, D]): "" none (1 and 0, as exports fold them at their initial
    # values), "feature" one per feature [D], "stream" one per stream and feature [B, D].
    affine: str = ""
    # A change that makes the program no TTT-Linear dual form: "strict_mask" (j < i),
    # "no_mean" (the gradient without its mean term), "eps" (the output's LayerNorm
    # with another eps), "first_row" (the update weighted by eta's first row),
    # "gamma_once" (the gradient not multiplied by the scale a second time).
    mutation: str = ""
    arrays: list = field(default_factory=list)

    # -- program ---------------------------------------------------------

    def _mean(self, body: _Body, x: str, labels: str) -> str:
        kept = labels.replace("e", "1")
        if self.mean_by_division:
            total = body.op([(x, labels)], kept,
                            lambda args, acc: ([f"%r = arith.addf {acc}, {args[0]} : f32"], "%r"),
                            reduce=True)
            return body.unary(total, kept, lambda a: (
                [f"%n = arith.constant {float(self.dim)!r} : f32", f"%r = arith.divf {a}, %n : f32"],
                "%r"))
        return body.einsum([(x, labels)], kept, scale=1.0 / self.dim)

    def _affine_labels(self) -> str:
        return "e" if self.affine == "feature" else "be"

    def _scaled_by_gamma(self, body: _Body, x: str) -> str:
        if not self.affine:
            return x
        return body.op([(x, "bte"), ("%gamma", self._affine_labels())], "bte",
                       _payload_binary("arith.mulf"))

    def _layer_norm(self, body: _Body, x: str, eps: float):
        """(x - mean) / sqrt(var + eps) over e; returns it and the deviation."""
        mean = self._mean(body, x, "bte")
        centered = body.op([(x, "bte"), (mean, "bt1")], "bte", _payload_binary("arith.subf"))
        var = body.einsum([(centered, "bte"), (centered, "bte")], "bt1", self.commuted,
                          scale=1.0 / self.dim)
        std = body.unary(var, "bt1", lambda a: (
            [f"%c = arith.constant {eps:.9e} : f32", f"%p = arith.addf {a}, %c : f32",
             "%r = math.sqrt %p : f32"], "%r"))
        normed = body.op([(centered, "bte"), (std, "bt1")], "bte", _payload_binary("arith.divf"))
        return normed, std

    def _mask(self, body: _Body, x: str, labels: str) -> str:
        # Loops b, t, s: index 1 is the query's token i, index 2 the key's j.
        predicate = {
            0: ["%d = arith.subi %j, %i : index", "%z = arith.constant 0 : index",
                "%p = arith.cmpi sle, %d, %z : index"],
            1: ["%p = arith.cmpi sge, %i, %j : index"],
            2: ["%one = arith.constant 1 : index", "%ip = arith.addi %i, %one : index",
                "%p = arith.cmpi slt, %j, %ip : index"],
        }[self.mask_spelling]
        if self.mutation == "strict_mask":
            predicate = ["%p = arith.cmpi sgt, %i, %j : index"]
        return body.op([(x, labels)], "bts", lambda args, acc: (
            ["%i = linalg.index 1 : index", "%j = linalg.index 2 : index", *predicate,
             "%zero = arith.constant 0.0 : f32", f"%r = arith.select %p, {args[0]}, %zero : f32"],
            "%r"))

    def _scaled(self, body: _Body, x: str, labels: str) -> str:
        return x if self.step == 1.0 else body.einsum([(x, labels)], labels, scale=self.step)

    def mlir(self) -> str:
        B, C, N, D = self.batch, self.chunk, self.chunks, self.dim
        body = _Body({"b": B, "t": C, "s": C, "d": D, "e": D}, order=ORDER)
        c = self.commuted
        q, k, v, eta, w, b = "%qc", "%kc", "%vc", "%etac", "%w", "%bias"
        z = body.einsum([(k, "1btd"), (w, "bde")], "bte", c)
        if self.bias:
            z = body.op([(z, "bte"), (b, "b1e")], "bte", _payload_binary("arith.addf"))
        target = (body.op([(v, "1bte"), (k, "1bte")], "bte", _payload_binary("arith.subf"))
                  if self.minus_keys else None)
        tgt = (target, "bte") if target else (v, "1bte")
        x, std = self._layer_norm(body, z, self.eps)
        # g = gamma x + beta - t, then times gamma (ln_fused_l2_bwd).
        y = self._scaled_by_gamma(body, x)
        if self.affine:
            y = body.op([(y, "bte"), ("%beta", self._affine_labels())], "bte",
                        _payload_binary("arith.addf"))
        g = body.op([(y, "bte"), tgt], "bte", _payload_binary("arith.subf"))
        if self.mutation != "gamma_once":
            g = self._scaled_by_gamma(body, g)
        # (D g - sum g - x sum(g x)) / D, divided by the deviation.
        sum_g = body.op([(g, "bte")], "bt1",
                        lambda args, acc: ([f"%r = arith.addf {acc}, {args[0]} : f32"], "%r"),
                        reduce=True)
        sum_gx = body.einsum([(g, "bte"), (x, "bte")], "bt1", c)
        scaled = body.einsum([(g, "bte")], "bte", scale=float(D))
        numerator = body.op([(scaled, "bte"), (sum_g, "bt1")], "bte", _payload_binary("arith.subf"))
        if self.mutation == "no_mean":
            numerator = scaled
        projected = body.op([(x, "bte"), (sum_gx, "bt1")], "bte", _payload_binary("arith.mulf"))
        numerator = body.binary(numerator, projected, "bte", "arith.subf")
        numerator = body.einsum([(numerator, "bte")], "bte", scale=1.0 / D)
        grad = body.op([(numerator, "bte"), (std, "bt1")], "bte", _payload_binary("arith.divf"))
        # The dual form.
        attention = self._mask(body, body.einsum([(q, "1btd"), (k, "1bsd")], "bts", c), "bts")
        weighted = body.op([(eta, "1bts"), (attention, "bts")], "bts", _payload_binary("arith.mulf"))
        moved = self._scaled(body, body.einsum([(weighted, "bts"), (grad, "bse")], "bte", c), "bte")
        pre = body.binary(body.einsum([(q, "1btd"), (w, "bde")], "bte", c), moved, "bte",
                          "arith.subf")
        if self.bias:
            tril_eta = self._mask(body, eta, "1bts")
            moved_b = self._scaled(body, body.einsum([(tril_eta, "bts"), (grad, "bse")], "bte", c),
                                   "bte")
            bias_bar = body.op([(b, "b1e"), (moved_b, "bte")], "bte", _payload_binary("arith.subf"))
            pre = body.binary(pre, bias_bar, "bte", "arith.addf")
        out_eps = self.eps * 10 if self.mutation == "eps" else self.eps
        out, _ = self._layer_norm(body, pre, out_eps)
        if self.affine:
            out = self._scaled_by_gamma(body, out)
            out = body.op([(out, "bte"), ("%beta", self._affine_labels())], "bte",
                          _payload_binary("arith.addf"))
        if self.residual:
            out = body.op([(q, "1bte"), (out, "bte")], "bte", _payload_binary("arith.addf"))
        window = body.fresh("out")
        body.lines.append(f"{window} = tensor.expand_shape {out} [[0, 1], [2], [3]] output_shape "
                          f"[1, {B}, {C}, {D}] : {_type([B, C, D])} into {_type([1, B, C, D])}")
        # The next weights, with eta's last row (the first in the mutant).
        row = 0 if self.mutation == "first_row" else C - 1
        last = body.fresh("last")
        body.lines.append(f"{last} = tensor.extract_slice {eta}[0, 0, {row}, 0] [1, {B}, 1, {C}] "
                          f"[1, 1, 1, 1] : {_type([1, B, C, C])} to {_type([1, B, 1, C])}")
        dw = self._scaled(body, body.einsum([(last, "1b1s"), (k, "1bsd"), (grad, "bse")], "bde", c),
                          "bde")
        w_next = body.binary(w, dw, "bde", "arith.subf")
        next_state = [w_next]
        state_types = [_type([B, D, D])]
        if self.bias:
            db = self._scaled(body, body.einsum([(last, "1b1s"), (grad, "bse")], "b1e", c), "b1e")
            next_state.append(body.binary(b, db, "b1e", "arith.subf"))
            state_types.append(_type([B, 1, D]))
        seq = _type([N, B, C, D])
        win = _type([1, B, C, D])
        eta_seq, eta_win = _type([N, B, C, C]), _type([1, B, C, C])
        states = [w, b][:len(state_types)]
        inits = ["%w0", "%b0"][:len(state_types)]
        affine_type = _type([D] if self.affine == "feature" else [B, D])
        args = ", ".join([f"%q: {seq}", f"%k: {seq}", f"%v: {seq}", f"%tok: {_type([C])}",
                          f"%lr: {_type([N, B, C])}"] +
                         [f"{n}: {t}" for n, t in zip(inits, state_types)] +
                         ([f"%gamma_in: {affine_type}", f"%beta_in: {affine_type}"]
                          if self.affine else []))
        invariants = (f" invariants(%gamma_in, %beta_in : {affine_type}, {affine_type})"
                      if self.affine else "")
        invariant_args = (f", %gamma: {affine_type}, %beta: {affine_type}"
                          if self.affine else "")
        text = "\n".join("    " + line.replace("\n", "\n    ") for line in body.lines)
        bb = ", ".join(f"{n}: {t}" for n, t in zip(states, state_types))
        # eta[n, b, i, j] = tok[i] lr[n, b, j], made before the loop.
        prologue = (
            f"  %ee = tensor.empty() : {eta_seq}\n"
            f"  %eta = linalg.generic {{indexing_maps = [affine_map<(n, b, i, j) -> (i)>, "
            f"affine_map<(n, b, i, j) -> (n, b, j)>, affine_map<(n, b, i, j) -> (n, b, i, j)>], "
            f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}} "
            f"ins(%tok, %lr : {_type([C])}, {_type([N, B, C])}) outs(%ee : {eta_seq}) {{\n"
            f"  ^bb0(%x: f32, %y: f32, %o: f32):\n    %m = arith.mulf %x, %y : f32\n"
            f"    linalg.yield %m : f32\n  }} -> {eta_seq}\n")
        return f"""func.func @layer({args}) -> {seq} {{
{prologue}  %o, %f:{len(inits)} = ttt.chunk_loop chunk(1) state({", ".join(inits)} : {", ".join(state_types)})
      windows(%q, %k, %v, %eta : {seq}, {seq}, {seq}, {eta_seq}) along [0, 0, 0, 0]
     {invariants} outputs along [0] {{
  ^bb0({bb}, %qc: {win}, %kc: {win}, %vc: {win}, %etac: {eta_win}{invariant_args}):
{text}
    ttt.chunk_yield outputs({window} : {win}) state({", ".join(next_state)} : {", ".join(state_types)})
  }} -> outputs({seq}) state({", ".join(state_types)})
  return %o : {seq}
}}
"""

    # -- data and oracle -------------------------------------------------

    def draw_arrays(self, rng: np.random.Generator) -> list:
        B, C, N, D = self.batch, self.chunk, self.chunks, self.dim
        tokens = lambda: rng.standard_normal((N, B, C, D)).astype(np.float32)
        self.arrays = [tokens(), tokens(), tokens(),
                       (1.0 / np.arange(1, C + 1)).astype(np.float32),
                       rng.uniform(0.0, 0.5, (N, B, C)).astype(np.float32),
                       (rng.standard_normal((B, D, D)) / np.sqrt(D)).astype(np.float32)]
        if self.bias:
            self.arrays.append((0.1 * rng.standard_normal((B, 1, D))).astype(np.float32))
        if self.affine:
            shape = (D,) if self.affine == "feature" else (B, D)
            self.arrays.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
            self.arrays.append((0.1 * rng.standard_normal(shape)).astype(np.float32))
        return list(self.arrays)

    def expected(self) -> np.ndarray:
        """The output, [N, B, C, D], in float64, token by token (the primal form)."""
        q, k, v, tok, lr, w = (a.astype(np.float64) for a in self.arrays[:6])
        b = self.arrays[6].astype(np.float64) if self.bias else np.zeros((self.batch, 1, self.dim))
        gamma, beta = np.ones(self.dim), np.zeros(self.dim)
        if self.affine:
            gamma, beta = (a.astype(np.float64) for a in self.arrays[-2:])
        # [B, 1, D]: per stream (one row of tokens), or per feature.
        gamma = gamma.reshape(-1, 1, self.dim) if gamma.ndim == 2 else gamma
        beta = beta.reshape(-1, 1, self.dim) if beta.ndim == 2 else beta

        def ln(z):
            mu = z.mean(-1, keepdims=True)
            std = np.sqrt(((z - mu) ** 2).mean(-1, keepdims=True) + self.eps)
            return (z - mu) / std, std

        out = np.zeros_like(q)
        for n in range(self.chunks):
            z = k[n] @ w + b
            x, std = ln(z)
            # The squared error of gamma x + beta against the target, back through
            # the LayerNorm (ttt-lm-pytorch's ln_fused_l2_bwd).
            g = gamma * (gamma * x + beta - (v[n] - k[n] if self.minus_keys else v[n]))
            grad = (g - g.mean(-1, keepdims=True) - x * (g * x).mean(-1, keepdims=True)) / std
            eta = tok[None, :, None] * lr[n][:, None, :]  # [B, i, j]
            for i in range(self.chunk):
                e = eta[:, i, :i + 1]  # [B, j]
                wi = w - self.step * np.einsum("bj,bjd,bje->bde", e, k[n][:, :i + 1], grad[:, :i + 1])
                bi = b - self.bias * self.step * np.einsum("bj,bje->be", e,
                                                           grad[:, :i + 1])[:, None, :]
                o, _ = ln(q[n][:, i:i + 1] @ wi + bi)
                o = gamma * o + beta
                out[n][:, i] = o[:, 0] + (q[n][:, i] if self.residual else 0.0)
            e = eta[:, -1, :]
            w = w - self.step * np.einsum("bj,bjd,bje->bde", e, k[n], grad)
            b = b - self.bias * self.step * np.einsum("bj,bje->be", e, grad)[:, None, :]
        return out


def random_dual_form(rng: np.random.Generator) -> DualFormLayer:
    return DualFormLayer(
        batch=int(rng.integers(1, 4)), chunk=int(rng.choice([2, 3, 4])),
        chunks=int(rng.integers(1, 4)), dim=int(rng.choice([3, 4, 5])),
        step=float(rng.choice([1.0, 0.5, 2.0])), eps=float(rng.choice([1e-6, 1e-5])),
        bias=bool(rng.integers(2)), residual=bool(rng.integers(2)),
        minus_keys=bool(rng.integers(2)), mask_spelling=int(rng.integers(3)),
        mean_by_division=bool(rng.integers(2)), commuted=bool(rng.integers(2)),
        affine=str(rng.choice(["", "feature", "stream"])))


def random_mutant(rng: np.random.Generator) -> DualFormLayer:
    """A random dual form with one change that makes it no TTT-Linear layer."""
    layer = random_dual_form(rng)
    layer.mutation = str(rng.choice(["strict_mask", "no_mean", "eps", "first_row",
                                     "gamma_once"]))
    if layer.mutation == "gamma_once":
        layer.affine = str(rng.choice(["feature", "stream"]))
    return layer
