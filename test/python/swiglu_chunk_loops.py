"""SwiGLU fast-weight chunk loops written from the math, with a NumPy oracle.

LaCT's inner model, per stream (batch row) and chunk of tokens:

    f(x)  = W1 (silu(W0 x) * (W2 x))           silu(z) = z sigma(z)
    U1    = s sum_t lr1_t v_t h_t^T             h = silu(W0 k) * (W2 k)
    U0    = s sum_t lr0_t (W1^T v_t * W2 k_t * silu'(W0 k_t)) k_t^T
    U2    = s sum_t lr2_t (W1^T v_t * silu(W0 k_t)) k_t^T
    W_i  <- W_i + U_i      (the dot loss's descent step, scale s)
    W_i  <- W_i / (|W_i|_inputs + eps) * |W_i^(0)|_inputs   (weight norm, optional)
    o_t   = f_W(q_t)       (W before or after the chunk's update)

Each program is drawn at random in the ways that must not matter to a reader
of the math: tokens token-major or feature-major, each weight stored either
way round, intermediates in either layout, per-token rates per weight, shared
or absent, silu' spelled as `sigma (1 + z (1 - sigma))` or expanded, operands
commuted. Every op is a linalg.generic built from an einsum-like description.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _type(shape) -> str:
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


class _Body:
    """Emits linalg.generic ops over named dimensions."""

    def __init__(self, sizes: dict, prefix: str = "", order: str = "btihon"):
        self.sizes = sizes
        self.prefix = prefix
        # The order of the loops of every op, by dimension name.
        self.order = order
        self.lines: list[str] = []
        self.count = 0
        self.labels: dict[str, str] = {}

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"%{self.prefix}{stem}{self.count}"

    def shape(self, labels: str):
        # "1": a dimension of one element, read at index 0 (`keepdim`).
        return [1 if c == "1" else self.sizes[c] for c in labels]

    def op(self, inputs, out_labels: str, payload, reduce: bool = False) -> str:
        """`payload(args, acc)` returns (lines, result) of the scalar body."""
        dims = sorted(({c for _, lab in inputs for c in lab} | set(out_labels)) - {"1"},
                      key=lambda c: self.order.index(c))
        index = {c: f"d{i}" for i, c in enumerate(dims)}
        index["1"] = "0"

        def amap(lab):
            return "affine_map<(" + ", ".join(index[c] for c in dims) + ") -> (" + \
                ", ".join(index[c] for c in lab) + ")>"

        out_type = _type(self.shape(out_labels))
        init = self.fresh("e")
        self.lines.append(f"{init} = tensor.empty() : {out_type}")
        if reduce:
            zero = self.fresh("z")
            self.lines.append(f"{zero} = arith.constant 0.0 : f32")
            filled = self.fresh("f")
            self.lines.append(f"{filled} = linalg.fill ins({zero} : f32) outs({init} : {out_type}) -> {out_type}")
            init = filled
        iters = ", ".join('"parallel"' if c in out_labels else '"reduction"' for c in dims)
        maps = ", ".join(amap(lab) for _, lab in inputs) + ", " + amap(out_labels)
        names = ", ".join(n for n, _ in inputs)
        types = ", ".join(_type(self.shape(lab)) for _, lab in inputs)
        args = [f"%a{i}" for i in range(len(inputs))]
        body, result = payload(args, "%acc")
        result_name = self.fresh("g")
        block = ", ".join(f"{a}: f32" for a in args) + ", %acc: f32"
        self.lines.append(
            f"{result_name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}} "
            f"ins({names} : {types}) outs({init} : {out_type}) {{\n"
            f"^bb0({block}):\n" + "".join(f"  {line}\n" for line in body) +
            f"  linalg.yield {result} : f32\n}} -> {out_type}")
        self.labels[result_name] = out_labels
        return result_name

    def einsum(self, inputs, out_labels: str, commuted=False, scale=None) -> str:
        reduce = bool({c for _, lab in inputs for c in lab} - set(out_labels))

        def payload(args, acc):
            lines, cur = [], args[0]
            for i, a in enumerate(args[1:]):
                lines.append(f"%m{i} = arith.mulf {a}, {cur} : f32" if commuted
                             else f"%m{i} = arith.mulf {cur}, {a} : f32")
                cur = f"%m{i}"
            if scale is not None:
                lines.append(f"%sc = arith.constant {scale!r} : f32")
                lines.append(f"%ms = arith.mulf {cur}, %sc : f32")
                cur = "%ms"
            if reduce:
                lines.append(f"%r = arith.addf {acc}, {cur} : f32")
                cur = "%r"
            return lines, cur
        return self.op(inputs, out_labels, payload, reduce)

    def unary(self, x: str, labels: str, spelling) -> str:
        return self.op([(x, labels)], labels, lambda args, acc: spelling(args[0]))

    def binary(self, x, y, labels: str, opname: str) -> str:
        return self.op([(x, labels), (y, labels)], labels,
                       lambda args, acc: ([f"%b = {opname} {args[0]}, {args[1]} : f32"], "%b"))


def _sigmoid(a):
    return ([f"%n = arith.negf {a} : f32", "%x = math.exp %n : f32", "%one = arith.constant 1.0 : f32",
             "%d = arith.addf %x, %one : f32", "%s = arith.divf %one, %d : f32"], "%s")


@dataclass
class SwiGLULayer:
    batch: int
    din: int
    dh: int
    dout: int
    length: int
    chunk: int  # 0: one chunk over the whole sequence
    feature_major: bool
    # per weight: stored input x output ("io") or output x input ("oi")
    orientation: tuple
    hidden_time_first: bool
    rates: str  # "none", "shared", "each"
    update_first: bool
    scale: float
    expanded_silu_grad: bool
    commuted: bool
    weight_norm: bool
    # LaCT's momentum with step c (chunked only): per weight
    # M' = mean_t(m_t) M + U, W' = W + c M', M from zero.
    momentum: float = 0.0
    # Where the weight norm's target norms come from: "" constants in the
    # body; "before" computed before the loop from the initial weights (kept
    # as a unit dimension, as traced exports spell `keepdim`) and read as
    # loop invariants; "in_step" (one chunk) computed in the body from the
    # state, which one chunk reads as its initial value.
    norms_from: str = ""
    # A change that makes the program no SwiGLU TTT layer a kvb_layer can
    # express, for tests that the reader refuses it: "silu_grad" drops the
    # z-terms of silu', "queries_in_update" binds W2's update to the queries
    # rather than the keys,
    # "w2_step" doubles W2's step, "norm_target" scales the weight norm's
    # target norms, "narrow_update" rounds W1's update to bfloat16.
    mutation: str = ""
    arrays: list = field(default_factory=list)
    init: list = field(default_factory=list)

    @property
    def sizes(self):
        return {"b": self.batch, "t": self.length if self.chunk == 0 else self.chunk,
                "i": self.din, "h": self.dh, "o": self.dout}

    def _tok(self, f: str) -> str:
        return "b" + f + "t" if self.feature_major else "bt" + f

    def _w(self, index: int) -> str:
        fin, fout = [("i", "h"), ("h", "o"), ("i", "h")][index]
        return "b" + (fin + fout if self.orientation[index] == "io" else fout + fin)

    def _draw_weights(self, rng):
        self.init = []
        for index in range(3):
            fin, fout = [(self.din, self.dh), (self.dh, self.dout), (self.din, self.dh)][index]
            w = (rng.standard_normal((self.batch, fin, fout)) / np.sqrt(fin)).astype(np.float32)
            self.init.append(w)

    def _stored(self, index):
        w = self.init[index]
        return np.ascontiguousarray(w.transpose(0, 2, 1)) if self.orientation[index] == "oi" else w

    def mlir(self) -> str:
        sizes = self.sizes
        body = _Body(sizes)
        hid = "bth" if self.hidden_time_first else "bht"
        c = self.commuted
        w = [f"%s{i}" for i in range(3)]
        wl = [self._w(i) for i in range(3)]
        q, k, v = "%qc", "%kc", "%vc"
        tin, tout = self._tok("i"), self._tok("o")
        lr_names = {"none": [], "shared": ["%l0c"] * 3, "each": ["%l0c", "%l1c", "%l2c"]}[self.rates]

        def rate(i, x, labels):
            return x if not lr_names else body.einsum([(x, labels), (lr_names[i], "bt")], labels, c)

        gx = body.einsum([(w[0], wl[0]), (k, tin)], hid, c)
        gy = body.einsum([(w[2], wl[2]), (k, tin)], hid, c)
        sg = body.unary(gx, hid, _sigmoid)
        silu = body.binary(gx, sg, hid, "arith.mulf")
        hk = body.binary(silu, gy, hid, "arith.mulf")
        dh = body.einsum([(w[1], wl[1]), (v, tout)], hid, c)
        # silu'(z) = sigma (1 + z (1 - sigma)), or sigma + z sigma - z sigma^2.
        if self.mutation == "silu_grad":
            grad = sg
        elif self.expanded_silu_grad:
            zs = body.binary(gx, sg, hid, "arith.mulf")
            zss = body.binary(zs, sg, hid, "arith.mulf")
            part = body.binary(sg, zs, hid, "arith.addf")
            grad = body.binary(part, zss, hid, "arith.subf")
        else:
            one_minus = body.unary(sg, hid, lambda a: (["%one = arith.constant 1.0 : f32",
                                                        f"%r = arith.subf %one, {a} : f32"], "%r"))
            inner = body.binary(gx, one_minus, hid, "arith.mulf")
            plus = body.unary(inner, hid, lambda a: (["%one = arith.constant 1.0 : f32",
                                                      f"%r = arith.addf {a}, %one : f32"], "%r"))
            grad = body.binary(sg, plus, hid, "arith.mulf")
        dgate = body.binary(body.binary(dh, gy, hid, "arith.mulf"), grad, hid, "arith.mulf")
        dup = body.binary(dh, silu, hid, "arith.mulf")
        u1 = body.einsum([(rate(1, v, tout), tout), (hk, hid)], wl[1], c, self.scale)
        if self.mutation == "narrow_update":
            u1 = body.unary(u1, wl[1], lambda a: ([f"%t = arith.truncf {a} : f32 to bf16",
                                                   "%r = arith.extf %t : bf16 to f32"], "%r"))
        u0 = body.einsum([(dgate, hid), (rate(0, k, tin), tin)], wl[0], c, self.scale)
        bound = q if self.mutation == "queries_in_update" else k
        u2 = body.einsum([(dup, hid), (rate(2, bound, tin), tin)], wl[2], c,
                         2 * self.scale if self.mutation == "w2_step" else self.scale)
        nxt, moms = [], []
        if self.momentum:
            mu = body.einsum([("%mwin", "bt")], "b", c, 1.0 / self.chunk)
        for i, u in enumerate((u0, u1, u2)):
            if self.momentum:
                decayed = body.einsum([(f"%mom{i}", wl[i]), (mu, "b")], wl[i], c)
                moms.append(body.binary(decayed, u, wl[i], "arith.addf"))
                step = 2 * self.momentum if self.mutation == "momentum_step" and i == 2 else self.momentum
                u = body.einsum([(moms[-1], wl[i])], wl[i], c, step)
            added = body.binary(u, w[i], wl[i], "arith.addf") if c else body.binary(w[i], u, wl[i], "arith.addf")
            if self.weight_norm:
                added = self._norm(body, added, i)
            nxt.append(added)
        used = nxt if self.update_first else w
        ox = body.einsum([(used[0], wl[0]), (q, tin)], hid, c)
        oy = body.einsum([(used[2], wl[2]), (q, tin)], hid, c)
        osg = body.unary(ox, hid, _sigmoid)
        ohid = body.binary(body.binary(ox, osg, hid, "arith.mulf"), oy, hid, "arith.mulf")
        out = body.einsum([(used[1], wl[1]), (ohid, hid)], tout, c)

        seq_t = self.length
        win_t = sizes["t"]
        tok_shape = lambda f, t: [self.batch, f, t] if self.feature_major else [self.batch, t, f]
        seqs = [("%q", _type(tok_shape(self.din, seq_t))), ("%k", _type(tok_shape(self.din, seq_t))),
                ("%v", _type(tok_shape(self.dout, seq_t)))]
        wins = [("%qc", _type(tok_shape(self.din, win_t))), ("%kc", _type(tok_shape(self.din, win_t))),
                ("%vc", _type(tok_shape(self.dout, win_t)))]
        axes = [1 if not self.feature_major else 2] * 3
        nrates = {"none": 0, "shared": 1, "each": 3}[self.rates]
        for r in range(nrates):
            seqs.append((f"%l{r}", _type([self.batch, seq_t])))
            wins.append((f"%l{r}c", _type([self.batch, win_t])))
            axes.append(1)
        if self.momentum:
            seqs.append(("%mseq", _type([self.batch, seq_t])))
            wins.append(("%mwin", _type([self.batch, win_t])))
            axes.append(1)
        wtypes = [_type(body.shape(lab)) for lab in wl]
        if self.weight_norm:
            # The initial weights are the model's constants, as exports fold them.
            consts = []
            for i in range(3):
                vals = ", ".join(repr(float(x)) for x in self._stored(i).reshape(-1))
                consts.append(f"  %w{i} = arith.constant dense<[{vals}]> : tensor<{self._stored(i).size}xf32>\n"
                              f"  %w{i}r = tensor.expand_shape %w{i} [[0, 1, 2]] output_shape "
                              f"{list(self._stored(i).shape)} : tensor<{self._stored(i).size}xf32> into {wtypes[i]}\n")
            prologue = "".join(consts)
            args = ", ".join(f"{n}: {t}" for n, t in seqs)
            inits = [f"%w{i}r" for i in range(3)]
            if self.norms_from == "before":
                text, norm_names = self._norms_before(sizes)
                prologue += text
        else:
            prologue = ""
            args = ", ".join(f"%w{i}: {t}" for i, t in enumerate(wtypes)) + ", " + \
                ", ".join(f"{n}: {t}" for n, t in seqs)
            inits = [f"%w{i}" for i in range(3)]
        state_types = list(wtypes)
        if self.momentum:
            for i in range(3):
                prologue += (f"  %mz{i} = arith.constant 0.0 : f32\n  %me{i} = tensor.empty() : {wtypes[i]}\n"
                             f"  %mi{i} = linalg.fill ins(%mz{i} : f32) outs(%me{i} : {wtypes[i]}) -> {wtypes[i]}\n")
            inits += [f"%mi{i}" for i in range(3)]
            state_types += wtypes
            w = w + [f"%mom{i}" for i in range(3)]
            nxt = nxt + moms
        out_seq = _type(tok_shape(self.dout, seq_t))
        bb = ", ".join(f"{n}: {t}" for n, t in zip(w, state_types)) + ", " + ", ".join(f"{n}: {t}" for n, t in wins)
        invariants = ""
        if self.weight_norm and self.norms_from == "before":
            kept = [_type(body.shape(self._kept_norm(i))) for i in range(3)]
            invariants = f" invariants({', '.join(norm_names)} : {', '.join(kept)})"
            bb += ", " + ", ".join(f"%inv{i}: {t}" for i, t in enumerate(kept))
        text = "\n".join("    " + line.replace("\n", "\n    ") for line in body.lines)
        return f"""func.func @layer({args}) -> {out_seq} {{
{prologue}  %o, %f:{len(inits)} = ttt.chunk_loop chunk({self.chunk}) state({", ".join(inits)} : {", ".join(state_types)})
      windows({", ".join(n for n, _ in seqs)} : {", ".join(t for _, t in seqs)}) along [{", ".join(map(str, axes))}]
     {invariants} outputs along [{axes[0]}] {{
  ^bb0({bb}):
{text}
    ttt.chunk_yield outputs({out} : {_type(tok_shape(self.dout, win_t))}) state({", ".join(nxt)} : {", ".join(state_types)})
  }} -> outputs({out_seq}) state({", ".join(state_types)})
  return %o : {out_seq}
}}
"""

    def _norm(self, body: _Body, x: str, i: int) -> str:
        """x / (|x| over its inputs + eps) * |W_i^(0)| over its inputs."""
        labels = self._w(i)
        axis_label = ["i", "h", "i"][i]
        kept = labels.replace(axis_label, "")
        sq = body.op([(x, labels)], kept,
                     lambda args, acc: ([f"%p = arith.mulf {args[0]}, {args[0]} : f32",
                                         f"%r = arith.addf {acc}, %p : f32"], "%r"), reduce=True)
        root = body.unary(sq, kept, lambda a: ([f"%r = math.sqrt {a} : f32"], "%r"))
        shifted = body.unary(root, kept, lambda a: (["%eps = arith.constant 1.0e-05 : f32",
                                                     f"%r = arith.addf {a}, %eps : f32"], "%r"))
        divided = body.op([(x, labels), (shifted, kept)], labels,
                          lambda args, acc: ([f"%r = arith.divf {args[0]}, {args[1]} : f32"], "%r"))
        if self.norms_from == "in_step":
            state = f"%s{i}"
            if self.mutation == "norm_target":
                state = body.einsum([(state, labels)], labels, scale=1.1)
            squares = body.op([(state, labels)], kept,
                              lambda args, acc: ([f"%p = arith.mulf {args[0]}, {args[0]} : f32",
                                                  f"%r = arith.addf {acc}, %p : f32"], "%r"),
                              reduce=True)
            target = body.unary(squares, kept, lambda a: ([f"%r = math.sqrt {a} : f32"], "%r"))
            return body.op([(divided, labels), (target, kept)], labels,
                           lambda args, acc: ([f"%r = arith.mulf {args[0]}, {args[1]} : f32"], "%r"))
        if self.norms_from == "before":
            return body.op([(divided, labels), (f"%inv{i}", self._kept_norm(i))], labels,
                           lambda args, acc: ([f"%r = arith.mulf {args[0]}, {args[1]} : f32"], "%r"))
        axis = labels.index(axis_label)
        norms = np.sqrt((self._stored(i).astype(np.float64) ** 2).sum(axis=axis)).astype(np.float32)
        if self.mutation == "norm_target":
            norms = norms * np.float32(1.1)
        name = body.fresh("norms")
        rows = ", ".join("[" + ", ".join(repr(float(n)) for n in row) + "]" for row in norms)
        body.lines.append(f"{name} = arith.constant dense<[{rows}]> : {_type(norms.shape)}")
        return body.op([(divided, labels), (name, kept)], labels,
                       lambda args, acc: ([f"%r = arith.mulf {args[0]}, {args[1]} : f32"], "%r"))

    def _kept_norm(self, i: int) -> str:
        """W_i's labels with the norm's axis kept as one element."""
        return self._w(i).replace(["i", "h", "i"][i], "1")

    def _norms_before(self, sizes: dict):
        """The prologue and names of sqrt(sum over the inputs of W_i^(0) ** 2), a unit dimension in
        place of the inputs, computed before the loop."""
        pre = _Body(sizes, prefix="pre")
        names = []
        for i in range(3):
            labels = self._w(i)
            kept = labels.replace(["i", "h", "i"][i], "")
            weight = f"%w{i}r"
            if self.mutation == "norm_target":
                weight = pre.einsum([(weight, labels)], labels, scale=1.1)
            sq = pre.op([(weight, labels)], kept,
                        lambda args, acc: ([f"%p = arith.mulf {args[0]}, {args[0]} : f32",
                                            f"%r = arith.addf {acc}, %p : f32"], "%r"), reduce=True)
            unit = self._kept_norm(i)
            at = unit.index("1")
            groups = [[0], [1, 2]] if at == 2 else [[0, 1], [2]]
            expanded = pre.fresh("x")
            pre.lines.append(f"{expanded} = tensor.expand_shape {sq} {groups} output_shape "
                             f"{pre.shape(unit)} : {_type(pre.shape(kept))} into "
                             f"{_type(pre.shape(unit))}")
            names.append(pre.unary(expanded, unit, lambda a: ([f"%r = math.sqrt {a} : f32"], "%r")))
        return "".join(f"  {line}\n" for text in pre.lines for line in text.split("\n")), names

    # -- data and oracle -------------------------------------------------

    def draw_arrays(self, rng: np.random.Generator) -> list:
        """The function's arguments; draws the initial weights too (a
        program with weight norm holds them as constants: draw first)."""
        def tokens(dim):
            x = rng.standard_normal((self.batch, self.length, dim)).astype(np.float32)
            return np.ascontiguousarray(x.transpose(0, 2, 1)) if self.feature_major else x

        self._draw_weights(rng)
        self.arrays = [tokens(self.din), tokens(self.din), tokens(self.dout)]
        for _ in range({"none": 0, "shared": 1, "each": 3}[self.rates]):
            self.arrays.append(rng.uniform(0.0, 0.5, (self.batch, self.length)).astype(np.float32))
        if self.momentum:
            self.arrays.append(rng.uniform(0.0, 1.0, (self.batch, self.length)).astype(np.float32))
        if self.weight_norm:
            return list(self.arrays)
        return [self._stored(i) for i in range(3)] + self.arrays

    def expected(self, trained=(0, 1, 2), weight_norm=None) -> np.ndarray:
        """The output, in the program's layout (float64); `trained` and
        `weight_norm` give the paper's variants of the layer."""
        weight_norm = self.weight_norm if weight_norm is None else weight_norm
        q, k, v = (a.astype(np.float64) for a in self.arrays[:3])
        if self.feature_major:
            q, k, v = (x.transpose(0, 2, 1) for x in (q, k, v))
        nrates = {"none": 0, "shared": 1, "each": 3}[self.rates]
        rates = [a.astype(np.float64) for a in self.arrays[3:3 + nrates]]
        coeffs = self.arrays[3 + nrates].astype(np.float64) if self.momentum else None
        moms = [np.zeros_like(x, dtype=np.float64) for x in self.init]
        lr = [np.ones((self.batch, self.length))] * 3 if not rates else (rates * 3 if len(rates) == 1 else rates)
        w = [x.astype(np.float64) for x in self.init]  # [b, in, out] each
        norms = [np.sqrt((x ** 2).sum(axis=1, keepdims=True)) for x in w]
        sig = lambda z: 1.0 / (1.0 + np.exp(-z))

        def f(ws, x):
            a, b_ = x @ ws[0], x @ ws[2]
            return (a * sig(a) * b_) @ ws[1]

        chunk = self.chunk or self.length
        outs = []
        for start in range(0, self.length, chunk):
            s = slice(start, start + chunk)
            kc, vc = k[:, s], v[:, s]
            a, b_ = kc @ w[0], kc @ w[2]
            sg = sig(a)
            hk = a * sg * b_
            dh = vc @ w[1].transpose(0, 2, 1)
            dgate = dh * b_ * (sg + a * sg - a * sg * sg)
            dup = dh * a * sg
            u = [np.einsum("bth,bti,bt->bih", dgate, kc, lr[0][:, s]),
                 np.einsum("bth,bto,bt->bho", hk, vc, lr[1][:, s]),
                 np.einsum("bth,bti,bt->bih", dup, kc, lr[2][:, s])]
            if self.momentum:
                mu = coeffs[:, s].mean(axis=1)[:, None, None]
                moms = [mu * moms[i] + self.scale * u[i] for i in range(3)]
                nxt = [w[i] + self.momentum * moms[i] for i in range(3)]
            else:
                nxt = [w[i] + self.scale * u[i] for i in range(3)]
            nxt = [nxt[i] if i in trained else w[i] for i in range(3)]
            if weight_norm:
                nxt = [x / (np.sqrt((x ** 2).sum(axis=1, keepdims=True)) + 1e-5) * n for x, n in zip(nxt, norms)]
            outs.append(f(nxt if self.update_first else w, q[:, s]))
            w = nxt
        o = np.concatenate(outs, axis=1)
        return o.transpose(0, 2, 1) if self.feature_major else o


def random_swiglu_layer(rng: np.random.Generator) -> SwiGLULayer:
    single = bool(rng.integers(2))
    chunk = 0 if single else int(rng.choice([2, 4]))
    length = int(rng.choice([4, 6, 8])) if single else chunk * int(rng.integers(1, 4))
    return SwiGLULayer(
        batch=int(rng.integers(2, 4)), din=int(rng.choice([3, 4])), dh=int(rng.choice([2, 5])),
        dout=int(rng.choice([3, 4])), length=length, chunk=chunk,
        feature_major=bool(rng.integers(2)),
        orientation=tuple(str(rng.choice(["io", "oi"])) for _ in range(3)),
        hidden_time_first=bool(rng.integers(2)), rates=str(rng.choice(["none", "shared", "each"])),
        update_first=True if single else bool(rng.integers(2)),
        scale=float(rng.choice([1.0, 0.5, -0.25])), expanded_silu_grad=bool(rng.integers(2)),
        commuted=bool(rng.integers(2)), weight_norm=bool(rng.integers(2)),
        norms_from=str(rng.choice(["", "before"] if not single else ["", "before", "in_step"])),
        momentum=0.0 if single else float(rng.choice([0.0, 1.0, 0.5])))


def random_mutant(rng: np.random.Generator) -> SwiGLULayer:
    """A random layer with one change that makes it no kvb_layer."""
    layer = random_swiglu_layer(rng)
    layer.mutation = str(rng.choice(["silu_grad", "queries_in_update", "w2_step", "norm_target",
                                     "momentum_step", "narrow_update"]))
    if layer.mutation == "momentum_step":
        layer.chunk, layer.length, layer.momentum, layer.update_first = 2, 4, 0.5, False
    if layer.mutation == "norm_target":
        layer.weight_norm = True
    return layer
