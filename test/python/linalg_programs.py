"""TTT layers and ordinary recurrences written by hand in upstream MLIR dialects
(linalg on tensors, tensor, arith), in several spellings, with their NumPy oracle.

A `Spelling` picks, independently:

* contraction: `generic` (each product a `linalg.generic` whose indexing maps are the
  einsum, on the [B, H, C, D] chunks) or `named` (`linalg.batch_matmul` on chunks
  collapsed to [B*H, C, D], `linalg.transpose` for kᵀ, results expanded back);
* assembly: `insert` (each chunk output `tensor.insert_slice`d into a `tensor.empty`)
  or `concat` (`tensor.concat` of the chunk outputs);
* weight: `arg` (the fast weight a function argument [B, H, D, E]) or `const` (an
  `arith.constant`);
* orientation: `x_w` (W [D, E], o = q W) or `w_xt` (W [E, D] applied as (W qᵀ)ᵀ and
  updated as stored; generic only);
* loss: `dot` (W += lr kᵀv) or `mse` (W -= lr kᵀ(k W − v) / C).

The chunk loop is unrolled (what torch-mlir emits for a Python loop over chunks), or an
`scf.for` / counted `scf.while` over the chunks (`form`), apply-then-update; a loop may
run to a sequence length the signature leaves dynamic (`dynamic`); the batch and the
heads may be of run-time size too (`dynamic_batch`, `dynamic_heads`). `rnn_cell` and `chunk_sums` write an RNN cell unrolled over time and
a running sum of chunks: loop-carried state that is no TTT layer.
"""

from __future__ import annotations

import dataclasses

import numpy as np

B, H, D, E = 1, 2, 4, 4


@dataclasses.dataclass(frozen=True)
class Spelling:
    contraction: str = "generic"
    assembly: str = "insert"
    weight: str = "arg"
    orientation: str = "x_w"
    loss: str = "dot"
    T: int = 12
    C: int = 4
    lr: float = 0.5
    # A negative: tanh of each chunk output (an output not linear in W).
    tanh_output: bool = False
    # `unrolled`; `loop`: an scf.for over the chunks carrying W and the output
    # buffer (insert_slice at the chunk's offset); `while`: the same as an
    # scf.while that counts the chunk offset itself; `dowhile`: an scf.while
    # that carries its condition, computed at the end of the body (i + C < T)
    # and before the loop (0 < T), as torch-mlir writes torch's while_loop.
    # Only loops with constant bounds take a partial last chunk (T % C != 0:
    # affine.min).
    form: str = "unrolled"
    # The loops' bounds: `constant`, or `computed` (the end a tensor.dim of the
    # queries, the step that end divided by the chunk count).
    bounds: str = "constant"
    # The sequence length as the signature says it: static, or dynamic ('?': the
    # loops run to the queries' run-time length, the buffer is as long).
    dynamic: bool = False
    # With a dynamic length: each chunk min(C, T - i) tokens long (an affine.min
    # of the counter and the length), so that any length runs, a partial last
    # chunk included.
    partial_chunks: bool = False
    # The batch as the signature says it: static (B), or dynamic ('?': each
    # input's batch of run-time size; the fast weight is one per batch entry, an
    # argument).
    dynamic_batch: bool = False
    # The heads as the signature says it: static (H), or dynamic ('?': the fast
    # weight an argument with as many heads as the queries).
    dynamic_heads: bool = False
    # How the scf.while form advances its counter: by the chunk size (`step`), or by
    # the chunk's own length min(C, T - i) (`chunk`: not counted as written).
    advance: str = "step"

    @property
    def name(self) -> str:
        bounds = "" if self.bounds == "constant" else "_computed"
        bounds += "_dynamic" if self.dynamic else ""
        bounds += "_partial" if self.partial_chunks else ""
        bounds += "_advance_chunk" if self.advance == "chunk" else ""
        bounds += "_dynamic_batch" if self.dynamic_batch else ""
        bounds += "_dynamic_heads" if self.dynamic_heads else ""
        return (f"{self.contraction}_{self.assembly}_{self.weight}_{self.orientation}_"
                f"{self.loss}_{self.form}{bounds}")


# The payload of a contraction: out + a * b.
MAC = ["%m = arith.mulf %a0, %a1 : f32", "%s = arith.addf %a2, %m : f32",
       "linalg.yield %s : f32"]


# Dims of run-time size in the shapes below: the sequence's chunk ('?', size %n),
# the batch ('?B', size %cB), the heads ('?H', size %cH) and the batch merged with
# the heads ('?BH', size %cBH).
SIZE_OF = {"?": "%n", "?B": "%cB", "?H": "%cH", "?BH": "%cBH"}


def _dim(d) -> str:
    return "?" if str(d).startswith("?") else str(d)


def _t(*dims) -> str:
    return "tensor<" + "x".join(_dim(d) for d in dims) + "xf32>"


def _size(d) -> str:
    """A dim as an operand of a view or a tensor.empty: its size value or constant."""
    return SIZE_OF.get(d, str(d))


def _dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(
        array, separator=", ", threshold=1 << 30, floatmode="unique").replace("\n", "") + ">"


class _Writer:
    def __init__(self):
        self.lines, self.count = [], 0

    def fresh(self, prefix="v"):
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, text):
        self.lines.append("  " + text)

    def empty(self, dims):
        """A tensor.empty of `dims`, its dynamic sizes named by SIZE_OF."""
        name = self.fresh("e")
        sizes = ", ".join(SIZE_OF[d] for d in dims if _dim(d) == "?")
        self.emit(f"{name} = tensor.empty({sizes}) : {_t(*dims)}")
        return name

    def zeros(self, dims):
        """A tensor.empty filled with %zero: a contraction's accumulator."""
        tensor_type = _t(*dims)
        empty, init = self.empty(dims), self.fresh("z")
        self.emit(f"{init} = linalg.fill ins(%zero : f32) outs({empty} : {tensor_type}) -> "
                  f"{tensor_type}")
        return init

    def generic(self, maps, iterators, ins, outs, body, result_type):
        """A linalg.generic; `body` maps the block arguments' names to yield lines."""
        name = self.fresh()
        args = ", ".join(f"%a{i}: f32" for i in range(len(ins) + 1))
        in_types = ", ".join(t for _, t in ins)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                  f"iterator_types = [{', '.join(repr(i).replace(chr(39), chr(34)) for i in iterators)}]}} "
                  f"ins({', '.join(v for v, _ in ins)} : {in_types}) outs({outs[0]} : {outs[1]}) {{")
        self.lines.append(f"  ^bb0({args}):")
        for line in body:
            self.lines.append("    " + line)
        self.lines.append(f"  }} -> {result_type}")
        return name


def _contract(w: _Writer, lhs, rhs, lhs_map, rhs_map, out_map, out_dims):
    """out[out_map] = sum lhs[lhs_map] * rhs[rhs_map] over the dims out_map lacks; the
    maps name dims of (b, h, i, j, r)."""
    dims = "(b, h, i, j, r)"
    maps = [f"affine_map<{dims} -> ({m})>" for m in (lhs_map, rhs_map, out_map)]
    out_t = _t(*out_dims)
    return w.generic(maps, ["parallel"] * 4 + ["reduction"], [lhs, rhs],
                     (w.zeros(out_dims), out_t), MAC, out_t)


def _elementwise(w: _Writer, a, b, dims, line):
    """out = f(a, b) elementwise on tensors of `dims`; `line` computes %r from %a0, %a1."""
    rank = len(dims)
    names = ", ".join(f"d{i}" for i in range(rank))
    ident = f"affine_map<({names}) -> ({names})>"
    out_t = _t(*dims)
    empty = w.empty(dims)
    return w.generic([ident] * 3, ["parallel"] * rank, [(a, out_t), (b, out_t)],
                     (empty, out_t), [line, "linalg.yield %r : f32"], out_t)


def _batch_matmul(w: _Writer, lhs, rhs, m, k, n, transpose_lhs=False, b=B, h=H):
    """[b, h, m, k] x [b, h, k, n] (lhs given as [b, h, k, m] when transpose_lhs) through
    linalg.batch_matmul on [b*h, .., ..]."""
    bh = "?BH" if "?" in f"{b}{h}" else b * h
    def collapse(x, r, c):
        name = w.fresh("c")
        w.emit(f"{name} = tensor.collapse_shape {x} [[0, 1], [2], [3]] : {_t(b, h, r, c)} "
               f"into {_t(bh, r, c)}")
        return name
    if transpose_lhs:
        flat = collapse(lhs, k, m)
        empty = w.empty((bh, m, k))
        turned = w.fresh("t")
        w.emit(f"{turned} = linalg.transpose ins({flat} : {_t(bh, k, m)}) "
               f"outs({empty} : {_t(bh, m, k)}) permutation = [0, 2, 1]")
        a = turned
    else:
        a = collapse(lhs, m, k)
    bm = collapse(rhs, k, n)
    init = w.zeros((bh, m, n))
    out = w.fresh("p")
    w.emit(f"{out} = linalg.batch_matmul ins({a}, {bm} : {_t(bh, m, k)}, {_t(bh, k, n)}) "
           f"outs({init} : {_t(bh, m, n)}) -> {_t(bh, m, n)}")
    expanded = w.fresh("x")
    shape = ", ".join(_size(d) for d in (b, h, m, n))
    w.emit(f"{expanded} = tensor.expand_shape {out} [[0, 1], [2], [3]] output_shape "
           f"[{shape}] : {_t(bh, m, n)} into {_t(b, h, m, n)}")
    return expanded


def initial_weight(s: Spelling, seed=7) -> np.ndarray:
    """The fast weight as the program stores it: [B, H, D, E], or [B, H, E, D] (w_xt)."""
    rng = np.random.default_rng(seed)
    shape = (B, H, E, D) if s.orientation == "w_xt" else (B, H, D, E)
    return rng.normal(0, 0.5, shape).astype(np.float32)


def ttt_program(s: Spelling) -> str:
    """`func.func @layer(q, k, v[, w0]) -> o` in the spelling `s`."""
    if s.contraction == "named" and s.orientation != "x_w":
        raise ValueError("the named spelling applies W as x W")
    w = _Writer()
    T, C = s.T, s.C
    if s.dynamic and (s.form == "unrolled" or (T % C and not s.partial_chunks)):
        raise ValueError("a dynamic length needs a loop over whole chunks, or "
                         "chunks of min(C, T - i) tokens")
    if s.partial_chunks and not s.dynamic:
        raise ValueError("chunks of min(C, T - i) tokens are for a dynamic length")
    if (s.dynamic_batch or s.dynamic_heads) and s.weight != "arg":
        raise ValueError("a batch or heads of run-time size need the fast weight as an "
                         "argument")
    T = "?" if s.dynamic else T
    Bd = "?B" if s.dynamic_batch else B
    Hd = "?H" if s.dynamic_heads else H
    seq = _t(Bd, Hd, T, D)
    w_shape = (Bd, Hd, E, D) if s.orientation == "w_xt" else (Bd, Hd, D, E)
    args = [f"%q: {seq}", f"%k: {seq}", f"%v: {_t(Bd, Hd, T, E)}"]
    if s.weight == "arg":
        args.append(f"%w0: {_t(*w_shape)}")
    head = f"func.func @layer({', '.join(args)}) -> {_t(Bd, Hd, T, E)} {{"
    w.emit("%zero = arith.constant 0.0 : f32")
    w.emit(f"%lr = arith.constant {s.lr!r} : f32")
    if s.dynamic_batch:
        w.emit("%cb0 = arith.constant 0 : index")
        w.emit(f"%cB = tensor.dim %q, %cb0 : {seq}")
    if s.dynamic_heads:
        w.emit("%ch1 = arith.constant 1 : index")
        w.emit(f"%cH = tensor.dim %q, %ch1 : {seq}")
    if s.contraction == "named" and (s.dynamic_batch or s.dynamic_heads):
        # The batch merged with the heads, for the collapsed chunks.
        batch = "%cB" if s.dynamic_batch else "%cB_"
        heads = "%cH" if s.dynamic_heads else "%cH_"
        if not s.dynamic_batch:
            w.emit(f"%cB_ = arith.constant {B} : index")
        if not s.dynamic_heads:
            w.emit(f"%cH_ = arith.constant {H} : index")
        w.emit(f"%cBH = arith.muli {batch}, {heads} : index")
    if s.loss == "mse":
        w.emit(f"%inv_c = arith.constant {1.0 / C!r} : f32")
    weight = "%w0"
    if s.weight == "const":
        w.emit(f"%w0 = arith.constant {_dense(initial_weight(s))} : {_t(*w_shape)}")
    outs = []
    xt = s.orientation == "w_xt"
    # W maps for (b, h, i, j, r): x W reads W(b, h, r, j); (W xᵀ)ᵀ reads W(b, h, j, r).
    w_read = "b, h, j, r" if xt else "b, h, r, j"
    def chunk_step(start, n, update):
        """Chunk [start, start + n) (start an int or an index value): its output and,
        with `update`, the next weight."""
        nonlocal weight
        chunk = {}
        for x, width in (("q", D), ("k", D), ("v", E)):
            name = w.fresh(x)
            size = "%n" if n == "?" else n
            w.emit(f"{name} = tensor.extract_slice %{x}[0, 0, {start}, 0] [{_size(Bd)}, {_size(Hd)}, {size}, "
                   f"{width}] [1, 1, 1, 1] : {_t(Bd, Hd, T, width)} to {_t(Bd, Hd, n, width)}")
            chunk[x] = name
        q_t, k_t = _t(Bd, Hd, n, D), _t(Bd, Hd, n, D)
        w_t = _t(*w_shape)
        if s.contraction == "named":
            o = _batch_matmul(w, chunk["q"], weight, n, D, E, b=Bd, h=Hd)
        else:
            o = _contract(w, (chunk["q"], q_t), (weight, w_t), "b, h, i, r", w_read,
                          "b, h, i, j", (Bd, Hd, n, E))
        if s.tanh_output:
            o = _elementwise(w, o, o, (Bd, Hd, n, E), "%r = math.tanh %a0 : f32")
        if not update:
            return o
        # The update of W as stored: kᵀ g for x W, gᵀ k for W xᵀ.
        if s.loss == "mse":
            if s.contraction == "named":
                kw = _batch_matmul(w, chunk["k"], weight, n, D, E, b=Bd, h=Hd)
            else:
                kw = _contract(w, (chunk["k"], k_t), (weight, w_t), "b, h, i, r",
                               w_read, "b, h, i, j", (Bd, Hd, n, E))
            g = _elementwise(w, kw, chunk["v"], (Bd, Hd, n, E), "%r = arith.subf %a0, %a1 : f32")
        else:
            g = chunk["v"]
        g_t = _t(Bd, Hd, n, E)
        if s.contraction == "named":
            u = _batch_matmul(w, chunk["k"], g, D, n, E, transpose_lhs=True, b=Bd, h=Hd)
        elif xt:
            u = _contract(w, (g, g_t), (chunk["k"], k_t), "b, h, r, i", "b, h, r, j",
                          "b, h, i, j", (Bd, Hd, E, D))
        else:
            u = _contract(w, (chunk["k"], k_t), (g, g_t), "b, h, r, i", "b, h, r, j",
                          "b, h, i, j", (Bd, Hd, D, E))
        if s.loss == "mse":
            line = ("%m1 = arith.mulf %a1, %lr : f32\n    %m3 = arith.mulf %m1, %inv_c : f32\n"
                    "    %r = arith.subf %a0, %m3 : f32")
        else:
            line = "%m2 = arith.mulf %a1, %lr : f32\n    %r = arith.addf %a0, %m2 : f32"
        weight = _elementwise(w, weight, u, w_shape, line)
        return o

    out_t = _t(Bd, Hd, T, E)
    if s.form in ("loop", "while", "dowhile"):
        if s.assembly != "insert" or (s.T % C and s.bounds != "constant"):
            raise ValueError("the loop forms write chunks into a buffer; a partial last "
                             "chunk only in loops with constant bounds")
        w.emit("%c0 = arith.constant 0 : index")
        if s.dynamic:
            w.emit("%c2 = arith.constant 2 : index")
            w.emit(f"%cC = arith.constant {C} : index")
            w.emit(f"%cT = tensor.dim %q, %c2 : {seq}")
        elif s.bounds == "constant":
            w.emit(f"%cC = arith.constant {C} : index")
            w.emit(f"%cT = arith.constant {T} : index")
        else:
            w.emit("%c2 = arith.constant 2 : index")
            w.emit(f"%cN = arith.constant {T // C} : index")
            w.emit(f"%cT = tensor.dim %q, %c2 : {seq}")
            w.emit("%cC = arith.divui %cT, %cN : index")
        sizes = ["%cB"] if s.dynamic_batch else []
        sizes += ["%cH"] if s.dynamic_heads else []
        sizes += ["%cT"] if s.dynamic else []
        w.emit(f"%buf0 = tensor.empty({', '.join(sizes)}) : {out_t}")
        w_t = _t(*w_shape)
        if s.form == "loop":
            w.emit(f"%r:2 = scf.for %i = %c0 to %cT step %cC iter_args(%w = {weight}, "
                   f"%buf = %buf0) -> ({w_t}, {out_t}) {{")
        elif s.form == "while":
            types = f"index, {w_t}, {out_t}"
            w.emit(f"%r:3 = scf.while (%i0 = %c0, %w0_ = {weight}, %buf_ = %buf0) : "
                   f"({types}) -> ({types}) {{")
            w.emit("%more = arith.cmpi slt, %i0, %cT : index")
            w.emit(f"scf.condition(%more) %i0, %w0_, %buf_ : {types}")
            w.emit("} do {")
            w.emit(f"^bb0(%i: index, %w: {w_t}, %buf: {out_t}):")
        else:
            types = f"index, {w_t}, {out_t}"
            w.emit("%go = arith.cmpi slt, %c0, %cT : index")
            w.emit(f"%r:3 = scf.while (%more0 = %go, %i0 = %c0, %w0_ = {weight}, "
                   f"%buf_ = %buf0) : (i1, {types}) -> ({types}) {{")
            w.emit(f"scf.condition(%more0) %i0, %w0_, %buf_ : {types}")
            w.emit("} do {")
            w.emit(f"^bb0(%i: index, %w: {w_t}, %buf: {out_t}):")
        weight = "%w"
        n = C
        if s.partial_chunks:
            # Any length: the chunk's size, min(C, T - i), is %n.
            w.emit(f"%n = affine.min affine_map<(d0)[s0] -> ({C}, s0 - d0)>(%i)[%cT]")
            n = "?"
        elif not s.dynamic and T % C:
            # The last chunk is shorter: its size, min(C, T - i), is %n.
            w.emit(f"%n = affine.min affine_map<(d0) -> ({C}, -d0 + {T})>(%i)")
            n = "?"
        o = chunk_step("%i", n, update=True)
        size = "%n" if n == "?" else C
        w.emit(f"%next = tensor.insert_slice {o} into %buf[0, 0, %i, 0] [{_size(Bd)}, {_size(Hd)}, {size}, {E}] "
               f"[1, 1, 1, 1] : {_t(Bd, Hd, n, E)} into {out_t}")
        if s.form == "loop":
            w.emit(f"scf.yield {weight}, %next : {w_t}, {out_t}")
            w.emit("}")
            w.emit(f"return %r#1 : {out_t}")
        else:
            if s.advance == "chunk" and n != "?":
                raise ValueError("advancing by the chunk's length needs chunks of "
                                 "min(C, T - i) tokens")
            step = "%n" if s.advance == "chunk" else "%cC"
            w.emit(f"%inext = arith.addi %i, {step} : index")
            if s.form == "dowhile":
                w.emit("%more = arith.cmpi slt, %inext, %cT : index")
                w.emit(f"scf.yield %more, %inext, {weight}, %next : i1, index, {w_t}, "
                       f"{out_t}")
            else:
                w.emit(f"scf.yield %inext, {weight}, %next : index, {w_t}, {out_t}")
            w.emit("}")
            w.emit(f"return %r#2 : {out_t}")
        return head + "\n" + "\n".join(w.lines) + "\n}\n"
    for start in range(0, s.T, C):
        n = min(C, s.T - start)
        outs.append((chunk_step(start, n, update=start + C < T), start, n))
    if s.assembly == "concat":
        parts = ", ".join(o for o, _, _ in outs)
        types = ", ".join(_t(Bd, Hd, n, E) for _, _, n in outs)
        result = w.fresh("o")
        w.emit(f"{result} = tensor.concat dim(2) {parts} : ({types}) -> {out_t}")
    else:
        result = w.fresh("buf")
        sizes = ["%cB"] if s.dynamic_batch else []
        sizes += ["%cH"] if s.dynamic_heads else []
        w.emit(f"{result} = tensor.empty({', '.join(sizes)}) : {out_t}")
        for o, start, n in outs:
            nxt = w.fresh("buf")
            w.emit(f"{nxt} = tensor.insert_slice {o} into {result}[0, 0, {start}, 0] "
                   f"[{_size(Bd)}, {_size(Hd)}, {n}, {E}] [1, 1, 1, 1] : {_t(Bd, Hd, n, E)} into {out_t}")
            result = nxt
    w.emit(f"return {result} : {out_t}")
    return head + "\n" + "\n".join(w.lines) + "\n}\n"


def ttt_oracle(s: Spelling, q, k, v, w0):
    """The layer from the math: chunk by chunk, o_c = q_c W, then W's step."""
    w = w0.astype(np.float64)
    if s.orientation == "w_xt":
        w = np.swapaxes(w, -1, -2)  # as x W
    outs = []
    for start in range(0, s.T, s.C):
        sl = slice(start, start + s.C)
        qc, kc, vc = (x[:, :, sl].astype(np.float64) for x in (q, k, v))
        outs.append(np.tanh(qc @ w) if s.tanh_output else qc @ w)
        if s.loss == "mse":
            w = w - s.lr / s.C * np.swapaxes(kc, -1, -2) @ (kc @ w - vc)
        else:
            w = w + s.lr * np.swapaxes(kc, -1, -2) @ vc
    return np.concatenate(outs, axis=2)


def _rnn_step(w: _Writer, x, h):
    """tanh(x W + h U) of one step, x and h [1, 1, 4]."""
    hid = _t(1, 1, 4)
    maps = ["affine_map<(b, i, j, r) -> (b, i, r)>", "affine_map<(b, i, j, r) -> (r, j)>",
            "affine_map<(b, i, j, r) -> (b, i, j)>"]
    pre = [w.generic(maps, ["parallel"] * 3 + ["reduction"], [(src, hid), (mat, _t(4, 4))],
                     (w.zeros((1, 1, 4)), hid), MAC, hid)
           for src, mat in ((x, "%w"), (h, "%u"))]
    return _elementwise(w, pre[0], pre[1], (1, 1, 4),
                        "%s = arith.addf %a0, %a1 : f32\n    %r = math.tanh %s : f32")


def rnn_cell(T=6) -> str:
    """h_{t+1} = tanh(x_t W + h_t U), unrolled; returns the stacked h's."""
    w = _Writer()
    x_t, hid = _t(1, T, 4), _t(1, 1, 4)
    w.emit("%zero = arith.constant 0.0 : f32")
    w.emit(f"%h0 = arith.constant {_dense(np.zeros((1, 1, 4), np.float32))} : {hid}")
    h, states = "%h0", []
    for t in range(T):
        xt = w.fresh("x")
        w.emit(f"{xt} = tensor.extract_slice %x[0, {t}, 0] [1, 1, 4] [1, 1, 1] : {x_t} to {hid}")
        h = _rnn_step(w, xt, h)
        states.append(h)
    out = w.fresh("o")
    w.emit(f"{out} = tensor.concat dim(1) {', '.join(states)} : "
           f"({', '.join([hid] * T)}) -> {x_t}")
    w.emit(f"return {out} : {x_t}")
    return (f"func.func @rnn(%x: {x_t}, %w: {_t(4, 4)}, %u: {_t(4, 4)}) -> {x_t} {{\n" +
            "\n".join(w.lines) + "\n}\n")


def chunk_sums(T=8, C=4) -> str:
    """A running sum over chunks: s_c = s_{c-1} + sum_t x_t, each chunk's output
    x_c + s_c (carried state, but no weight that any product reads)."""
    w = _Writer()
    seq, row = _t(1, T, 4), _t(1, 1, 4)
    w.emit("%zero = arith.constant 0.0 : f32")
    w.emit(f"%s0 = arith.constant {_dense(np.zeros((1, 1, 4), np.float32))} : {row}")
    state, outs = "%s0", []
    for c in range(T // C):
        xc = w.fresh("x")
        w.emit(f"{xc} = tensor.extract_slice %x[0, {c * C}, 0] [1, {C}, 4] [1, 1, 1] : "
               f"{seq} to {_t(1, C, 4)}")
        init = w.zeros((1, 1, 4))
        total = w.generic(["affine_map<(b, i, j, t) -> (b, t, j)>",
                           "affine_map<(b, i, j, t) -> (b, i, j)>"],
                          ["parallel"] * 3 + ["reduction"], [(xc, _t(1, C, 4))], (init, row),
                          ["%s = arith.addf %a0, %a1 : f32", "linalg.yield %s : f32"], row)
        state = _elementwise(w, state, total, (1, 1, 4), "%r = arith.addf %a0, %a1 : f32")
        empty = w.fresh("e")
        w.emit(f"{empty} = tensor.empty() : {_t(1, C, 4)}")
        out = w.generic(["affine_map<(b, t, j) -> (b, t, j)>", "affine_map<(b, t, j) -> (b, 0, j)>",
                         "affine_map<(b, t, j) -> (b, t, j)>"], ["parallel"] * 3,
                        [(xc, _t(1, C, 4)), (state, row)], (empty, _t(1, C, 4)),
                        ["%r = arith.addf %a0, %a1 : f32", "linalg.yield %r : f32"],
                        _t(1, C, 4))
        outs.append(out)
    res = w.fresh("o")
    w.emit(f"{res} = tensor.concat dim(1) {', '.join(outs)} : "
           f"({', '.join([_t(1, C, 4)] * len(outs))}) -> {seq}")
    w.emit(f"return {res} : {seq}")
    return f"func.func @sums(%x: {seq}) -> {seq} {{\n" + "\n".join(w.lines) + "\n}\n"


def rnn_loop(T=6, form="for") -> str:
    """The RNN cell as an scf.for (or a counted scf.while) over time carrying h
    and the output buffer."""
    w = _Writer()
    x_t, hid = _t(1, T, 4), _t(1, 1, 4)
    w.emit("%zero = arith.constant 0.0 : f32")
    w.emit("%c0 = arith.constant 0 : index")
    w.emit("%c1 = arith.constant 1 : index")
    w.emit(f"%cT = arith.constant {T} : index")
    w.emit(f"%h0 = arith.constant {_dense(np.zeros((1, 1, 4), np.float32))} : {hid}")
    w.emit(f"%buf0 = tensor.empty() : {x_t}")
    types = f"index, {hid}, {x_t}"
    if form == "for":
        w.emit(f"%r:2 = scf.for %t = %c0 to %cT step %c1 iter_args(%h = %h0, %buf = %buf0) "
               f"-> ({hid}, {x_t}) {{")
    else:
        w.emit(f"%r:3 = scf.while (%t0 = %c0, %h_ = %h0, %buf_ = %buf0) : ({types}) -> "
               f"({types}) {{")
        w.emit("%more = arith.cmpi slt, %t0, %cT : index")
        w.emit(f"scf.condition(%more) %t0, %h_, %buf_ : {types}")
        w.emit("} do {")
        w.emit(f"^bb0(%t: index, %h: {hid}, %buf: {x_t}):")
    w.emit(f"%xt = tensor.extract_slice %x[0, %t, 0] [1, 1, 4] [1, 1, 1] : {x_t} to {hid}")
    h = _rnn_step(w, "%xt", "%h")
    w.emit(f"%next = tensor.insert_slice {h} into %buf[0, %t, 0] [1, 1, 4] [1, 1, 1] : "
           f"{hid} into {x_t}")
    if form == "for":
        w.emit(f"scf.yield {h}, %next : {hid}, {x_t}")
        w.emit("}")
        w.emit(f"return %r#1 : {x_t}")
    else:
        w.emit("%tnext = arith.addi %t, %c1 : index")
        w.emit(f"scf.yield %tnext, {h}, %next : {types}")
        w.emit("}")
        w.emit(f"return %r#2 : {x_t}")
    return (f"func.func @rnn_loop(%x: {x_t}, %w: {_t(4, 4)}, %u: {_t(4, 4)}) -> {x_t} {{\n" +
            "\n".join(w.lines) + "\n}\n")


def sum_loop(T=8, C=4) -> str:
    """A reduction loop: the sum of the chunks' column sums, carried by an scf.for."""
    w = _Writer()
    seq, row = _t(1, T, 4), _t(1, 1, 4)
    w.emit("%zero = arith.constant 0.0 : f32")
    w.emit("%c0 = arith.constant 0 : index")
    w.emit(f"%cC = arith.constant {C} : index")
    w.emit(f"%cT = arith.constant {T} : index")
    w.emit(f"%s0 = arith.constant {_dense(np.zeros((1, 1, 4), np.float32))} : {row}")
    w.emit(f"%r = scf.for %i = %c0 to %cT step %cC iter_args(%s = %s0) -> ({row}) {{")
    n, size = C, C
    if T % C:  # a partial last chunk, as in the layers' loops
        w.emit(f"%n = affine.min affine_map<(d0) -> ({C}, -d0 + {T})>(%i)")
        n, size = "?", "%n"
    w.emit(f"%xc = tensor.extract_slice %x[0, %i, 0] [1, {size}, 4] [1, 1, 1] : {seq} to "
           f"{_t(1, n, 4)}")
    total = w.generic(["affine_map<(b, i, j, t) -> (b, t, j)>",
                       "affine_map<(b, i, j, t) -> (b, i, j)>"],
                      ["parallel"] * 3 + ["reduction"], [("%xc", _t(1, n, 4))], ("%s", row),
                      ["%y = arith.addf %a0, %a1 : f32", "linalg.yield %y : f32"], row)
    w.emit(f"scf.yield {total} : {row}")
    w.emit("}")
    w.emit(f"return %r : {row}")
    return f"func.func @sum_loop(%x: {seq}) -> {row} {{\n" + "\n".join(w.lines) + "\n}\n"
