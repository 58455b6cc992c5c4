"""ttt.chunk_loop programs written from the math, with a NumPy oracle.

A linear fast weight W, moved by a gradient step of the dot or the MSE loss
on each chunk's keys and values and applied to its queries:

    W_{c+1} = W_c + s * sum_{t in chunk c} k_t^T (lr_t v_t)            (dot)
    W_{c+1} = W_c - s * sum_{t in chunk c} k_t^T (lr_t (k_t W_c - v_t))  (MSE)
    o_t     = q_t W_c          (apply then update)
    o_t     = q_t W_{c+1}      (update then apply)

Each program is drawn at random in the ways that must not matter to a reader
of the math: the tokens token-major ([B, T, D], time axis 1) or feature-major
([B, D, T], time axis 2), the weight stored input x output or transposed, a
per-token learning rate or none, the chunk size, and a sequence length that
the chunk may or may not divide (static or dynamic). The contractions are
linalg.generic ops whose indexing maps carry the layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class LinearLayer:
    batch: int
    din: int
    dout: int
    length: int
    chunk: int
    feature_major: bool
    transposed_weight: bool
    token_lr: bool
    update_first: bool
    step: float
    dynamic_length: bool
    # `dot`: W += s k^T (lr v); `mse`: W -= s k^T (lr (k W - v)).
    loss: str = "dot"
    # Spellings of the same update that a reader of the math must not see:
    # the rate multiplying the keys rather than the product, multiplications
    # and additions with their operands swapped, the step as two factors
    # (2s, then 1/2: exact), the sum over tokens accumulated into zeros and
    # then added to W by its own op.
    rate_on_keys: bool = False
    commuted: bool = False
    split_step: bool = False
    separate_add: bool = False
    # LaCT's momentum with step c: M <- mean(m over the chunk) M + U, W <- W + c M,
    # with U the loss's step above and M starting at zero (whole chunks only).
    momentum: float = 0.0
    arrays: list = field(default_factory=list)

    # -- types -----------------------------------------------------------

    def _tokens(self, dim: int, length: str) -> str:
        shape = [self.batch, dim, length] if self.feature_major else [self.batch, length, dim]
        return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"

    def _length(self) -> str:
        return "?" if self.dynamic_length else str(self.length)

    def _window_length(self) -> str:
        if self.dynamic_length:
            return "?"
        if self.length <= self.chunk:
            return str(self.length)
        return str(self.chunk) if self.length % self.chunk == 0 else "?"

    def _weight(self) -> str:
        rows, cols = (self.dout, self.din) if self.transposed_weight else (self.din, self.dout)
        return f"tensor<{self.batch}x{rows}x{cols}xf32>"

    @property
    def time_axis(self) -> int:
        return 2 if self.feature_major else 1

    # -- program ---------------------------------------------------------

    def mlir(self) -> str:
        t, wt = self._length(), self._window_length()
        seq_in, seq_out = self._tokens(self.din, t), self._tokens(self.dout, t)
        win_in, win_out = self._tokens(self.din, wt), self._tokens(self.dout, wt)
        lr_seq, lr_win = f"tensor<{self.batch}x{t}xf32>", f"tensor<{self.batch}x{wt}xf32>"
        weight = self._weight()
        axis = self.time_axis
        # Token maps over (b, t, feature); weight maps over (b, in, out).
        def tok(t_dim: str, f_dim: str) -> str:
            return f"(d0, {f_dim}, {t_dim})" if self.feature_major else f"(d0, {t_dim}, {f_dim})"

        def w(i: str, j: str) -> str:
            return f"(d0, {j}, {i})" if self.transposed_weight else f"(d0, {i}, {j})"

        seqs = ["%q", "%k", "%v"] + (["%lr"] if self.token_lr else [])
        seq_types = [seq_in, seq_in, seq_out] + ([lr_seq] if self.token_lr else [])
        win_args = ["%qc", "%kc", "%vc"] + (["%lrc"] if self.token_lr else [])
        win_types = [win_in, win_in, win_out] + ([lr_win] if self.token_lr else [])
        axes = [axis, axis, axis] + ([1] if self.token_lr else [])
        if self.momentum:
            seqs.append("%mom")
            seq_types.append(lr_seq)
            win_args.append("%mc")
            win_types.append(lr_win)
            axes.append(1)

        # Update over (d0 = b, d1 = in, d2 = out, d3 = t).
        upd_ins = ["%kc", "%vc"] + (["%lrc"] if self.token_lr else [])
        upd_types = [win_in, win_out] + ([lr_win] if self.token_lr else [])
        upd_maps = [tok("d3", "d1"), tok("d3", "d2")] + (["(d0, d3)"] if self.token_lr else [])
        upd_maps.append(w("d1", "d2"))
        residual = ""
        if self.loss == "mse":
            # r = k W - v over (d0 = b, d1 = t, d2 = in, d3 = out), then the
            # update reads r in place of v with the step negated.
            res_maps = [tok("d1", "d2"), w("d2", "d3"), tok("d1", "d3")]
            dim_line = (f"\n    %rta = arith.constant {axis} : index\n    %rn = tensor.dim %kc, %rta : {win_in}"
                        if wt == "?" else "")
            empty = "tensor.empty(%rn)" if wt == "?" else "tensor.empty()"
            residual = f"""{dim_line}
    %re = {empty} : {win_out}
    %rz = arith.constant 0.0 : f32
    %rf = linalg.fill ins(%rz : f32) outs(%re : {win_out}) -> {win_out}
    %kw = linalg.generic {{indexing_maps = [{", ".join("affine_map<(d0, d1, d2, d3) -> " + m + ">" for m in res_maps)}],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
        ins(%kc, %s : {win_in}, {weight}) outs(%rf : {win_out}) {{
    ^bb3(%x3: f32, %y3: f32, %z3: f32):
      %p3 = arith.mulf %x3, %y3 : f32
      %r3 = arith.addf %z3, %p3 : f32
      linalg.yield %r3 : f32
    }} -> {win_out}
    %res = linalg.sub ins(%kw, %vc : {win_out}, {win_out}) outs(%re : {win_out}) -> {win_out}"""
            upd_ins[1] = "%res"
        lr_arg = ", %l: f32" if self.token_lr else ""

        def mul(x, y):
            return f"arith.mulf {y}, {x} : f32" if self.commuted else f"arith.mulf {x}, {y} : f32"

        if self.token_lr and self.rate_on_keys:
            product = f"%ka = {mul('%a', '%l')}\n      %kvl = {mul('%ka', '%b')}"
        elif self.token_lr:
            product = f"%kv = {mul('%a', '%b')}\n      %kvl = {mul('%kv', '%l')}"
        else:
            product = f"%kv = {mul('%a', '%b')}\n      %kvl = arith.addf %kv, %zero : f32"
        step = -self.step if self.loss == "mse" else self.step
        if self.split_step:
            scaling = (f"%scaled0 = {mul('%kvl', '%step')}\n"
                       f"      %scaled = {mul('%scaled0', '%half')}")
            step_line = f"%step = arith.constant {2 * step!r} : f32\n    %half = arith.constant 0.5 : f32"
        else:
            scaling = f"%scaled = {mul('%kvl', '%step')}"
            step_line = f"%step = arith.constant {step!r} : f32"
        add = "arith.addf %scaled, %acc : f32" if self.commuted else "arith.addf %acc, %scaled : f32"
        separate = self.separate_add or bool(self.momentum)
        target = "%gz" if separate else "%s"
        result = "%g" if separate else "%s1"
        zeros = (f"\n    %ge = tensor.empty() : {weight}\n"
                 f"    %gz = linalg.fill ins(%zero : f32) outs(%ge : {weight}) -> {weight}"
                 if separate else "")
        adder = (f"\n    %s1 = linalg.add ins(%g, %s : {weight}, {weight}) outs(%ge : {weight}) -> {weight}"
                 if self.separate_add and not self.momentum else "")
        if self.momentum:
            # M' = U + sum_t m_t / C * M; W' = W + c M'.
            wmap = w("d1", "d2")
            adder = f"""
    %invc = arith.constant {1.0 / self.chunk!r} : f32
    %mstep = arith.constant {self.momentum!r} : f32
    %m1 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> {wmap}>, affine_map<(d0, d1, d2, d3) -> {wmap}>],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
        ins(%mc, %mm : {lr_win}, {weight}) outs(%g : {weight}) {{
    ^bb5(%mu: f32, %mv: f32, %macc: f32):
      %mp = arith.mulf %mu, %mv : f32
      %mq = arith.mulf %mp, %invc : f32
      %ms = arith.addf %macc, %mq : f32
      linalg.yield %ms : f32
    }} -> {weight}
    %s1 = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
        iterator_types = ["parallel", "parallel", "parallel"]}}
        ins(%s, %m1 : {weight}, {weight}) outs(%ge : {weight}) {{
    ^bb6(%wa: f32, %wb: f32, %wc: f32):
      %wd = arith.mulf %wb, %mstep : f32
      %we = arith.addf %wa, %wd : f32
      linalg.yield %we : f32
    }} -> {weight}"""
        update = f"""{residual}
    {step_line}
    %zero = arith.constant 0.0 : f32{zeros}
    {result} = linalg.generic {{indexing_maps = [{", ".join("affine_map<(d0, d1, d2, d3) -> " + m + ">" for m in upd_maps)}],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
        ins({", ".join(upd_ins)} : {", ".join(upd_types)}) outs({target} : {weight}) {{
    ^bb1(%a: f32, %b: f32{lr_arg}, %acc: f32):
      {product}
      {scaling}
      %sum = {add}
      linalg.yield %sum : f32
    }} -> {weight}{adder}"""
        applied = "%s1" if self.update_first else "%s"
        # Apply over (d0 = b, d1 = t, d2 = in, d3 = out).
        apply_maps = [tok("d1", "d2"), w("d2", "d3"), tok("d1", "d3")]
        apply = f"""
    %ta = arith.constant {axis} : index
    %n = tensor.dim %qc, %ta : {win_in}
    %e = tensor.empty(%n) : {win_out}
    %f = linalg.fill ins(%zero : f32) outs(%e : {win_out}) -> {win_out}
    %oc = linalg.generic {{indexing_maps = [{", ".join("affine_map<(d0, d1, d2, d3) -> " + m + ">" for m in apply_maps)}],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
        ins(%qc, {applied} : {win_in}, {weight}) outs(%f : {win_out}) {{
    ^bb2(%x: f32, %y: f32, %z: f32):
      %p = arith.mulf %x, %y : f32
      %r = arith.addf %z, %p : f32
      linalg.yield %r : f32
    }} -> {win_out}"""
        if wt != "?":
            apply = apply.replace("tensor.empty(%n)", "tensor.empty()").replace(
                f"\n    %ta = arith.constant {axis} : index\n    %n = tensor.dim %qc, %ta : {win_in}", "")
        args = ", ".join(f"{a}: {ty}" for a, ty in zip(["%w0"] + seqs, [weight] + seq_types))
        states = ["%s", "%mm"] if self.momentum else ["%s"]
        bb = ", ".join(f"{a}: {ty}" for a, ty in zip(states + win_args,
                                                        [weight] * len(states) + win_types))
        if self.momentum:
            zero_m = (f"\n  %mz = arith.constant 0.0 : f32\n  %me = tensor.empty() : {weight}\n"
                      f"  %m0 = linalg.fill ins(%mz : f32) outs(%me : {weight}) -> {weight}")
            return f"""func.func @layer({args}) -> ({seq_out}, {weight}) {{{zero_m}
  %o, %w, %m = ttt.chunk_loop chunk({self.chunk}) state(%w0, %m0 : {weight}, {weight})
      windows({", ".join(seqs)} : {", ".join(seq_types)}) along [{", ".join(map(str, axes))}]
      outputs along [{axis}] {{
  ^bb0({bb}):{update}{apply}
    ttt.chunk_yield outputs(%oc : {win_out}) state(%s1, %m1 : {weight}, {weight})
  }} -> outputs({seq_out}) state({weight}, {weight})
  return %o, %w : {seq_out}, {weight}
}}
"""
        return f"""func.func @layer({args}) -> ({seq_out}, {weight}) {{
  %o, %w = ttt.chunk_loop chunk({self.chunk}) state(%w0 : {weight})
      windows({", ".join(seqs)} : {", ".join(seq_types)}) along [{", ".join(map(str, axes))}]
      outputs along [{axis}] {{
  ^bb0({bb}):{update}{apply}
    ttt.chunk_yield outputs(%oc : {win_out}) state(%s1 : {weight})
  }} -> outputs({seq_out}) state({weight})
  return %o, %w : {seq_out}, {weight}
}}
"""

    # -- data and oracle -------------------------------------------------

    def draw_arrays(self, rng: np.random.Generator) -> list:
        def tokens(dim):
            x = rng.standard_normal((self.batch, self.length, dim)).astype(np.float32)
            return np.ascontiguousarray(x.transpose(0, 2, 1)) if self.feature_major else x

        w0 = (rng.standard_normal((self.batch, self.din, self.dout)) / np.sqrt(self.din)).astype(np.float32)
        stored = np.ascontiguousarray(w0.transpose(0, 2, 1)) if self.transposed_weight else w0
        self.arrays = [stored, tokens(self.din), tokens(self.din), tokens(self.dout)]
        if self.token_lr:
            self.arrays.append(rng.uniform(0.0, 1.0, (self.batch, self.length)).astype(np.float32))
        if self.momentum:
            self.arrays.append(rng.uniform(0.0, 1.0, (self.batch, self.length)).astype(np.float32))
        return self.arrays

    def expected(self) -> list:
        """The outputs and final weight, in the program's layouts (float64)."""
        stored, q, k, v = (a.astype(np.float64) for a in self.arrays[:4])
        lr = self.arrays[4].astype(np.float64) if self.token_lr else np.ones((self.batch, self.length))
        mom = self.arrays[-1].astype(np.float64) if self.momentum else None
        if self.feature_major:
            q, k, v = (x.transpose(0, 2, 1) for x in (q, k, v))
        w = stored.transpose(0, 2, 1) if self.transposed_weight else stored
        m = np.zeros_like(w)
        outs = []
        for start in range(0, self.length, self.chunk):
            window = slice(start, start + self.chunk)
            if self.loss == "mse":
                target = np.einsum("bti,bij->btj", k[:, window], w) - v[:, window]
                u = -self.step * np.einsum("bti,btj,bt->bij", k[:, window], target, lr[:, window])
            else:
                u = self.step * np.einsum("bti,btj,bt->bij", k[:, window], v[:, window], lr[:, window])
            if self.momentum:
                m = mom[:, window].mean(axis=1)[:, None, None] * m + u
                nxt = w + self.momentum * m
            else:
                nxt = w + u
            outs.append(np.einsum("bti,bij->btj", q[:, window], nxt if self.update_first else w))
            w = nxt
        o = np.concatenate(outs, axis=1) if outs else np.zeros((self.batch, 0, self.dout))
        if self.feature_major:
            o = o.transpose(0, 2, 1)
        return [o, w.transpose(0, 2, 1) if self.transposed_weight else w]


def random_linear_layer(rng: np.random.Generator) -> LinearLayer:
    chunk = int(rng.choice([1, 3, 4, 8]))
    length = int(rng.choice([chunk, 2 * chunk, 3 * chunk + 1, 5 * chunk - 1, 1, 7]))
    return LinearLayer(
        batch=int(rng.integers(1, 3)), din=int(rng.choice([3, 4])), dout=int(rng.choice([2, 5])),
        length=max(length, 1), chunk=chunk, feature_major=bool(rng.integers(2)),
        transposed_weight=bool(rng.integers(2)), token_lr=bool(rng.integers(2)),
        update_first=bool(rng.integers(2)), step=float(rng.choice([1.0, -0.5, 0.25])),
        dynamic_length=bool(rng.integers(2)), loss=str(rng.choice(["dot", "mse"])),
        rate_on_keys=bool(rng.integers(2)), commuted=bool(rng.integers(2)),
        split_step=bool(rng.integers(2)), separate_add=bool(rng.integers(2)))


def random_momentum_layer(rng: np.random.Generator) -> LinearLayer:
    """A layer with LaCT's momentum: whole chunks of a static length (the
    momentum's coefficient is the chunk's mean)."""
    layer = random_linear_layer(rng)
    layer.momentum = float(rng.choice([1.0, 0.5, -0.25]))
    layer.length = layer.chunk * int(rng.integers(1, 5))
    layer.dynamic_length = False
    return layer
