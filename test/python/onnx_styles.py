"""A seeded generator of TTT fast-weight layers in many ONNX spellings.

Each generated graph is one *family* (the layer's math, written down once as a NumPy
oracle) written in one *spelling*: for each of the categories of CATEGORIES, one option.
The first option of every category (and opset 17) is the *canonical* spelling: the one
the committed PyTorch fixtures (test/fixtures/onnx) and the hand-written graphs of
test_onnx_raise.py use, which the ONNX raise (lib/Conversion/ONNXToTTT) reads. The other
options are what other exporters and hand-written research code write for the same
function.

Families (q, k, v per head, fast weight W per head, chunks of C tokens, the last one
possibly shorter; every chunk updates):

    apply_then_update:  o_c = phi(q_c) W_c,      W_{c+1} = W_c + Delta_c
    update_then_apply:  W_{c+1} = W_c + Delta_c, o_c = phi(q_c) W_{c+1}
    causal:             token i of chunk c reads W_c plus the steps of tokens 1..i
                        (TTT-Linear's dual form: o_c = phi(q_c) W_c + s Trilu(q_c k_c^T)
                        V_c, V_c = v_c (dot) or -(k_c W_c - v_c) (MSE)),
                        W_{c+1} = W_c + Delta_c; families without momentum or Muon.
                        Raised to the causal order; the dot loss is rewritten (the
                        intra-chunk term), the MSE layer left as it was

    linear_dot     Delta_c = sign * s * k_c^T v_c            (/ n_c with the mean)
    linear_mse     Delta_c = -s * k_c^T (k_c W_c - v_c)       (/ n_c with the mean)
    token_lr_*     k_c scaled row-wise by lr_c ([B, H, T, 1]) before the transpose
    momentum_*     m_c = mu_c m_{c-1} + g_c, W_{c+1} = W_c + s m_c, m_0 = 0 (g_c the
                   term above without s; mu_c the mean of an input mom [B, H, T] over
                   the chunk, or entry c of an input mom [B, H, N])
    *muon*         the step is s NS(m_c) (or s NS(g_c)): LaCT's five quintic
                   Newton-Schulz steps on the wide orientation of the term divided by
                   its Frobenius norm + 1e-7
    swiglu_dot     phi(x) = silu(x W0) * (x W2) with constant W0, W2 (LaCT V2 with
                   frozen inner layers, no Muon) and the dot loss

Orthogonal to the family, every graph draws the update order, a full or partial last
chunk, the sum or mean reduction, the step size s and (dot loss) the sign. FAMILIES says
for each family whether it is linear attention that the default pipeline rewrites
(docs/Theory.md §4.4-4.5), and why.

Spellings (CATEGORIES): weight source, tensor layout, weight orientation, chunking,
output assembly, how a subtraction is written, how the step size and the mean are
written, no-op noise nodes, the momentum's granularity, Muon's norm, where the causal
term's rates go, opset, and the form (an unrolled traced export or an ONNX Loop). Not every combination exists; `invalid()` names the ones that are re-drawn:

* `chunking=gather` and `gather_permuted`, `assembly=stack` and `form=loop_scan` reshape
  the sequence into [.., n, C, ..] and need T % C == 0;
* `form=loop_tail` (a Loop over all chunks but the last, which is applied after the
  loop: LaCT's scripted export) exists only for apply_then_update, where the last
  chunk's update is never read;
* `form=loop_scan` assembles the output from the Loop's scan outputs, so `assembly`
  must stay canonical;
* a non-canonical `subtraction` needs a layer whose update subtracts (MSE, or the dot
  loss with sign -1), `scaling=mean_as_mul` and `scaling=folded` need the mean reduction:
  otherwise the option would not change the graph.

SUPPORTED lists, per category, the options that today's recognizer must find and (for
linear-attention families) rewrite exactly; REFUSED the others, with the reason the
survey found; LOOP_REFUSED the supported options that fail inside a Loop so far, and
REFUSED_PAIRS pairs of supported options that fail together (LOOP_REFUSED_PAIRS: in a
Loop). test_onnx_styles.py draws only what these tables allow (`drawn_by_test`). Loop
forms other than loop_static give the graph inputs a symbolic batch and length, as the
scripted exporter does (the generated graph still computes with the sizes of its spec);
the scatter assembly's buffer has the spec's one shape, so in a Loop it is drawn with
static shapes only (SCATTER_OF_ONE_LENGTH).

    python3 test/python/onnx_styles.py --survey --count 12 --seed 1

shows, for every option of every category (varied alone from the canonical spelling,
unrolled and in a Loop; then random mixes), how many graphs today's `ttt-opt` finds in
the form they were written, rewrites as expected (raised for linear attention, left as
it was with the expected reason otherwise) and keeps exact, with the first failing
remark. `--pairs` checks every pair of options the test may draw together, `--check`
runs the test's sample (`--seed`, `--count`) and lists the failing graphs, `--show I`
prints graph I of that sample.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import tool  # noqa: E402
from oracle import LACT_NS_COEFFS, newton_schulz as _newton_schulz  # noqa: E402


def newton_schulz(u):
    """Muon as ttt.kvb_layer defines it (the oracle's), with LaCT's table."""
    return _newton_schulz(u, len(LACT_NS_COEFFS), LACT_NS_COEFFS, 1e-7)

RTOL = 1e-5
# Muon's five quintic Newton-Schulz steps multiply what a chunk's k^T v lacks in rank
# (a chunk of fewer tokens than the weight's smaller side, a short last chunk) by up to
# a_1 ... a_5 ~ 4^5: fp32 rounding of ~1e-8 there reaches ~1e-5 in the output (measured
# up to 1.5e-5, for the generated model as for the rewritten one). Muon families are
# held to this bound against the float64 oracle.
MUON_RTOL = 1e-4


def tolerance(spec) -> float:
    return MUON_RTOL if spec.fam.muon else RTOL
# The ONNX library the compiler is built with (onnx 1.23.2) knows opsets up to 28.
LIBRARY_MAX_OPSET = 28

# ---------------------------------------------------------------------------------------
# What is generated
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    model: str            # "linear" or "swiglu" (static W0, W2)
    loss: str             # "dot" or "mse"
    lr: bool              # per-token learning rate input lr [B, H, T, 1]
    momentum: bool        # per-token momentum input mom [B, H, T]
    linear_attention: bool
    reason: str
    # What the remark says: the exact lowering of a rewritten layer, or why a layer
    # that is left as it was is not rewritten.
    remark: str
    # Muon: the step is s * NS(term), NS LaCT's five quintic Newton-Schulz steps on
    # the term divided by its Frobenius norm (+ 1e-7), the wide orientation.
    muon: bool = False

    @property
    def orders(self):
        """The update orders the family is written in: the causal (dual) form of
        TTT-Linear has no momentum or orthogonalization."""
        return ORDERS if not (self.momentum or self.muon) else ORDERS[:2]


PREFIX_SUM = "(linear attention, prefix sum over chunk states)"
AFFINE_SCAN = "(linear attention, affine scan over chunk states)"

# The expectation per family, from docs/Theory.md; test_onnx_styles.py confirms it on the
# canonical spelling of every family, both orders, full and partial last chunks.
FAMILIES = {f.name: f for f in [
    Family("linear_dot", "linear", "dot", False, False, True,
           "§3, §4.4: a linear output layer and the dot loss: the update is additive, "
           "a prefix sum over chunk states", PREFIX_SUM),
    Family("linear_mse", "linear", "mse", False, False, True,
           "§4.1, §4.4: the MSE gradient frozen at the chunk start is affine in W: an "
           "affine scan", AFFINE_SCAN),
    Family("token_lr_dot", "linear", "dot", True, False, True,
           "§2.2: per-token learning rates scale k-hat token by token: still a prefix "
           "sum", PREFIX_SUM),
    Family("token_lr_mse", "linear", "mse", True, False, True,
           "§4.1: D_c = diag(eta) in K^T D (K S - V): still affine", AFFINE_SCAN),
    Family("momentum_dot", "linear", "dot", False, True, True,
           "Theorem 5.3, §3: momentum is linear in the gradients: a decayed scan, then "
           "the prefix sum", PREFIX_SUM),
    Family("momentum_mse", "linear", "mse", False, True, False,
           "§4.5: an affine (MSE) update with momentum is exact in principle but not "
           "rewritten yet: left as it was",
           "not rewritten: momentum of an affine update"),
    Family("muon_dot", "linear", "dot", False, False, True,
           "§3 (LaCT V5): Muon orthogonalizes each chunk's k^T v, which no weight "
           "enters: the prefix sum of data-only chunk states", PREFIX_SUM, muon=True),
    Family("momentum_muon_dot", "linear", "dot", False, True, True,
           "§3 (LaCT V4): the momentum scan of the chunk terms, then Muon of each "
           "momentum, still independent of the weight: a prefix sum", PREFIX_SUM,
           muon=True),
    Family("swiglu_dot", "swiglu", "dot", False, False, True,
           "§2.1 (K): only the output layer trains, so silu(x W0) * (x W2) is a static "
           "feature map; the dot loss makes it a prefix sum (LaCT V2 without Muon)",
           PREFIX_SUM),
]}

# causal: TTT-Linear's dual form. Token i of a chunk reads the chunk-start weight plus the
# steps of tokens 1..i, written as o = q W + s * Trilu(q k^T) V (dot) or
# o = q W - s * Trilu(q k^T) (k W - v) (MSE); the weight moves by the whole chunk's step.
ORDERS = ("apply_then_update", "update_then_apply", "causal")
# What the remark says of a causal MSE layer: raised to the causal order and left as it
# was (docs/Theory.md §4.1: the MSE gradient inside the chunk reads the state token by
# token, which the affine scan of chunk states does not express). A causal dot-loss layer
# is linear attention with the token-causal intra-chunk term: rewritten like its family.
CAUSAL_MSE_REMARK = "the causal order of an affine (MSE) layer reads state-dependent values"


# What the remark says of a full-batch step (docs/Theory.md: one reduction over the keys,
# one application to the queries): the dot loss without Muon is full-mask linear
# attention; an MSE step reads the state it updates and Muon transforms it, which the
# recurrent lowering already computes as reduce-transform-apply: left as it was.
FULL_BATCH_REWRITE = "(linear attention, single full-batch step (reduce, transform, apply))"
FULL_BATCH_LEFT = "not rewritten: this full-batch step transforms its state"


def expects_rewrite(spec) -> bool:
    if spec.full_batch:
        return spec.fam.linear_attention and spec.fam.loss == "dot" and not spec.fam.muon
    return spec.fam.linear_attention and not (spec.order == "causal" and
                                              spec.fam.loss == "mse")


def expected_remark(spec) -> str:
    if spec.full_batch:
        return FULL_BATCH_REWRITE if expects_rewrite(spec) else FULL_BATCH_LEFT
    if spec.order == "causal" and spec.fam.loss == "mse":
        return CAUSAL_MSE_REMARK
    return spec.fam.remark

CATEGORIES = {
    # W_0: an initializer [H, Din, Dout]; a graph input [H, Din, Dout] or [B, H, Din,
    # Dout]; the initializer Expanded over the batch; A @ B + s * I from initializers,
    # Expanded.
    "weight_source": ["initializer", "input", "input_per_sample", "expand", "lowrank"],
    # [B, H, T, D]; heads folded into the batch [B*H, T, D]; [B, T, H, D] transposed
    # once to [B, H, T, D]; [B, T, H, D] chunked along axis 1, each chunk transposed
    # to [B, H, C, D] and each output chunk back to [B, C, H, D].
    "layout": ["bhtd", "folded", "bthd_transposed", "bthd_chunk_transposed"],
    # x @ W with W in x out (update k^T v); W out x in as (W @ x^T)^T (update v^T k);
    # W out x in as x @ W^T; Einsum for the apply and the update.
    "orientation": ["x_w", "w_xt", "x_wt", "einsum"],
    # Slice(starts, ends, axes, steps) as torch exports it; Slice without steps;
    # Slice with a negative axis; Split with a sizes input; Gather of a constant index
    # on a Reshape to [.., n, C, ..]. (In a Loop: dynamic starts i*C; SplitToSequence +
    # SequenceAt(i); Gather(i).) gather_permuted: ttt-lm-pytorch's mini-batch i of the
    # reshape permuted to [n, .., C, ..] (Gather on axis 0).
    "chunking": ["slice", "slice_no_steps", "slice_negative_axis", "split", "gather",
                 "gather_permuted"],
    # Concat on the time axis; Concat with a negative axis; Unsqueeze + Concat +
    # Reshape (stack); ScatterND of each chunk into a zero buffer. (In a Loop:
    # SequenceInsert + ConcatFromSequence, its negative axis, its new_axis, a carried
    # ScatterND buffer.) scan_buffer: ttt-lm-pytorch's `out[i] = o_i` into a torch.empty
    # [n, .., C, ..] buffer (not zeros), permuted back and reshaped (unrolled only).
    "assembly": ["concat", "concat_negative_axis", "stack", "scatter", "scan_buffer"],
    # How W - Delta is written: the exporter's Add(W, Mul(Div(Neg(G), n), s));
    # Sub(W, Delta); Add(W, Neg(Delta)); Add(W, Mul(Delta, -1)); Add(W, Mul(G', -s)).
    "subtraction": ["neg_inner", "sub", "neg", "mul_minus_one", "neg_lr"],
    # The step size s and the mean: Mul(G / n, s); Mul(s, G / n) (constant first);
    # Div(G / n, 1/s); Mul(G * (1/n), s); Mul(G, s/n) (one folded constant); s/n on
    # the product's left operand, MatMul(Mul(k^T, s/n), v) (PyTorch's reading of
    # `w + s * k.T @ v`), or on its right one.
    "scaling": ["mul", "mul_swapped", "div_reciprocal", "mean_as_mul", "folded",
                "left_operand", "right_operand"],
    # none; Identity nodes around the fast weight and the chunk outputs; a no-op Cast
    # (float to float) there; Identity on the weights and Cast on the outputs.
    "noise": ["none", "identity", "cast", "identity_cast"],
    # The momentum: one value per token [B, H, T], averaged over each chunk
    # (ReduceMean); one value per chunk [B, H, N], chunk c reading Gather(mom, c) (in a
    # Loop: Gather(mom, i)), or Slice(mom, [c], [c + 1]) on the last axis (in a Loop:
    # [i, i + 1)).
    "momentum": ["per_token", "per_chunk", "per_chunk_slice"],
    # Muon's Frobenius norm: ReduceL2 (torch's .norm(dim=(-2, -1))); Sqrt of
    # ReduceSumSquare; Sqrt of ReduceSum of Pow(X, 2); Sqrt of ReduceSum of X * X;
    # the division written as X * Reciprocal(norm + eps).
    "norm": ["reduce_l2", "sum_square_sqrt", "pow_sum_sqrt", "mul_sum_sqrt",
             "reciprocal"],
    # The causal term's per-token rates: on the keys, Trilu(q (k lr)^T); on the score
    # matrix's columns after the mask, Trilu(q k^T) * lr^T (ttt-lm-pytorch's
    # `eta * Attn`); before it, Trilu(q k^T * lr^T).
    "causal_rates": ["keys", "scores", "masked_scores"],
    "opset": ["17", "13", "14", "15", "16", "18", "max"],
    # the unrolled chunk loop of a traced export; an ONNX Loop carrying W (and the
    # momentum) that appends each chunk's output to a sequence, with a dynamic batch
    # and length as the scripted exporter writes it (dynamic_axes); the same over all
    # but the last chunk, applied after the loop; a Loop whose scan output is the chunk
    # output; the sequence Loop of a model with static shapes (scripted without
    # dynamic axes, or shapes inferred and fixed afterwards); one full-batch step on
    # every key and value, then applied to every query (LaCT-NVS: no chunks).
    "form": ["unrolled", "loop_sequence", "loop_tail", "loop_scan", "loop_static",
             "full_batch"],
}
CANONICAL = {category: options[0] for category, options in CATEGORIES.items()}

# The options today's recognizer finds and rewrites exactly, from the survey (ttt-opt
# built 2026-12-01 22:50 UTC). The other engineer moves options from REFUSED to SUPPORTED
# (and out of LOOP_REFUSED) as support lands; rerun the survey to see which.
SUPPORTED = {
    "weight_source": ["initializer", "input", "input_per_sample", "expand", "lowrank"],
    "layout": ["bhtd", "folded", "bthd_transposed", "bthd_chunk_transposed"],
    "orientation": ["x_w", "w_xt", "x_wt", "einsum"],
    "chunking": ["slice", "slice_no_steps", "slice_negative_axis", "split", "gather",
                 "gather_permuted"],
    "assembly": ["concat", "concat_negative_axis", "stack", "scatter", "scan_buffer"],
    "subtraction": ["neg_inner", "sub", "neg", "mul_minus_one", "neg_lr"],
    "scaling": ["mul", "mul_swapped", "div_reciprocal", "mean_as_mul", "folded",
                "left_operand", "right_operand"],
    "noise": ["none", "identity", "cast", "identity_cast"],
    "momentum": ["per_token", "per_chunk", "per_chunk_slice"],
    "norm": ["reduce_l2", "sum_square_sqrt", "pow_sum_sqrt", "mul_sum_sqrt",
             "reciprocal"],
    "causal_rates": ["keys", "scores", "masked_scores"],
    "opset": ["17", "13", "14", "15", "16", "18", "max"],
    "form": ["unrolled", "loop_sequence", "loop_tail", "loop_scan", "loop_static",
             "full_batch"],
}
# The options it refuses, with the survey's first failing remark (shortened).
REFUSED = {
    "weight_source": {},
    "layout": {},
    "orientation": {},
    "chunking": {},
    "assembly": {},
    "subtraction": {},
    "scaling": {},
    "noise": {},
    "momentum": {},
    "norm": {},
    "causal_rates": {},
    "opset": {},
    "form": {},
}
# Options of SUPPORTED that work unrolled but not yet in a scripted Loop: the test draws
# them only with form=unrolled.
LOOP_REFUSED = {
    "weight_source": {},
    "layout": {},
    "orientation": {},
    "chunking": {},
    "assembly": {},
    "subtraction": {},
    "scaling": {
        # Found by the survey; not yet looked into.
        "left_operand": "a step on the product's left operand inside a Loop is not read",
    },
    "noise": {},
    "momentum": {},
    "norm": {},
    "causal_rates": {},
    "opset": {},
    "form": {},
}


# Pairs of SUPPORTED options that work alone but not together (from `--pairs`), with
# the reason: the test never draws both.
# A full-batch MSE step whose step size scales one factor of its product is read
# either as the MSE step (left, as the other spellings) or, for some orientations, as
# a dot step whose values are the residual k W_0 - v of the initial weight, which one
# step makes exact (rewritten; the written model matches the oracle): not the one
# outcome the sweep expects.
OPERAND_SCALED_FULL_BATCH = "full-batch MSE: left or rewritten (exactly) by orientation"
REFUSED_PAIRS = {
    (("scaling", "left_operand"), ("form", "full_batch")): OPERAND_SCALED_FULL_BATCH,
    (("scaling", "right_operand"), ("form", "full_batch")): OPERAND_SCALED_FULL_BATCH,
    # The causal (dual) form's update of a weight stored transposed, the step on
    # the residual's transpose, (s (k W^T - v)^T) (k lr), is not read (left).
    (("scaling", "left_operand"), ("orientation", "x_wt")):
        "the causal form's update with the step on (k W^T - v)^T is not read",
}
# The same, in a Loop form only.
LOOP_REFUSED_PAIRS = {}


def drawn_by_test(spec) -> bool:
    """True if every option of `spec` is in SUPPORTED (in a Loop, not in LOOP_REFUSED),
    and no two of them are a pair of REFUSED_PAIRS."""
    spelling = spec.spelling
    loop = spelling["form"] != "unrolled"
    if not all(option in SUPPORTED[category] and
               not (loop and option in LOOP_REFUSED[category])
               for category, option in spelling.items()):
        return False
    chosen = set(spelling.items())
    refused = list(REFUSED_PAIRS) + (list(LOOP_REFUSED_PAIRS) if loop else [])
    return not any(a in chosen and b in chosen for a, b in refused)


# ---------------------------------------------------------------------------------------
# One graph: the spec
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Spec:
    index: int
    seed: int
    family: str
    order: str
    reduction: str        # "sum" or "mean"
    sign: int             # +1 or -1 (dot loss); the MSE update always subtracts
    lr_scale: float
    B: int
    H: int
    T: int
    C: int
    D: int                # input width of the fast weight (and of q, k)
    E: int                # output width (of v and o)
    F: int                # swiglu hidden width
    spelling: dict
    # A Loop form whose graph inputs have the drawn B and T (a scripted export
    # without dynamic axes); loop_static is the sequence Loop so.
    static_shapes: bool = False

    @property
    def fam(self) -> Family:
        return FAMILIES[self.family]

    @property
    def partial(self) -> bool:
        return self.T % self.C != 0

    @property
    def full_batch(self) -> bool:
        return self.spelling["form"] == "full_batch"

    @property
    def chunks(self):
        if self.full_batch:
            return [(0, self.T)]
        return [(s, min(s + self.C, self.T)) for s in range(0, self.T, self.C)]

    @property
    def subtracts(self) -> bool:
        return self.fam.loss == "mse" or self.sign < 0

    @property
    def width(self) -> int:
        """Rows of the trained weight: D, or F behind the SwiGLU feature map."""
        return self.F if self.fam.model == "swiglu" else self.D

    def form_remark(self) -> str:
        """How the remark must describe the layer found."""
        if self.full_batch:
            return "TTT layer: full-batch step"
        if self.spelling["form"] == "unrolled":
            # Then ")" or, where T is not a multiple of C, ", the last of N)".
            return f"TTT layer: unrolled chunk loop ({len(self.chunks)} chunks of {self.C} tokens"
        return f"TTT layer: ONNX Loop over chunks (chunks of {self.C} tokens)"

    def describe(self) -> str:
        spelling = ", ".join(f"{c}={self.spelling[c]}" for c in CATEGORIES)
        return (f"graph {self.index} (seed {self.seed}): family {self.family}, {self.order}, "
                f"{self.reduction}, sign {self.sign:+d}, lr_scale {self.lr_scale}, "
                f"B={self.B} H={self.H} T={self.T} C={self.C} D={self.D} E={self.E}; "
                f"{spelling}")


# Options that exist only in the unrolled (traced) form: in a scripted Loop the same
# code carries its buffer, which is the `scatter` assembly.
UNROLLED_ONLY = {("assembly", "scan_buffer")}
UNROLLED_ONLY_PAIRS = {("scan_buffer", form): "the scan buffer is the traced spelling; "
                       "a Loop carries it as the scatter assembly"
                       for form in ["loop_sequence", "loop_tail", "loop_scan", "loop_static"]}


# The scatter assembly's buffer has the shape of the drawn B and T: in a Loop whose
# inputs have a symbolic batch and length it is a model of that one length (a longer
# sequence writes out of bounds, a shorter one leaves zero rows), which no layer op
# computes. ttt-opt finds it and leaves it (test_onnx_styles.py checks the reason);
# the random test draws the scatter Loop with static shapes (loop_static) only.
SYMBOLIC_LOOP_FORMS = ("loop_sequence", "loop_tail", "loop_scan")
SCATTER_OF_ONE_LENGTH = ("a static scatter buffer in a Loop of symbolic length is a "
                         "model of one length")


def invalid(spec: Spec):
    """Why this combination of family, shape and spelling does not exist (re-drawn),
    or None."""
    s = spec.spelling
    full = not spec.partial
    if spec.full_batch:
        if s["chunking"] != CANONICAL["chunking"] or s["assembly"] != CANONICAL["assembly"]:
            return "a full-batch step cuts and assembles no chunks"
        if spec.order != "update_then_apply":
            return "a full-batch step updates on every token, then applies"
        if spec.fam.momentum:
            return "a full-batch step takes one update: no momentum"
    if s["chunking"] in ("gather", "gather_permuted") and not full:
        return "Gather of a Reshape to [.., n, C, ..] needs T % C == 0"
    if s["assembly"] in ("stack", "scan_buffer") and not full:
        return "a stack of chunks reshaped to [.., T, ..] needs T % C == 0"
    if (s["assembly"], s["form"]) in UNROLLED_ONLY_PAIRS:
        return UNROLLED_ONLY_PAIRS[(s["assembly"], s["form"])]
    if s["assembly"] == "scatter" and s["form"] in SYMBOLIC_LOOP_FORMS and \
            not spec.static_shapes:
        return SCATTER_OF_ONE_LENGTH
    if s["form"] == "loop_scan" and not full:
        return "a Loop's scan outputs need chunks of one length"
    if s["form"] == "loop_scan" and s["assembly"] != CANONICAL["assembly"]:
        return "a Loop's scan outputs are the assembly"
    if s["form"] == "loop_tail" and spec.order != "apply_then_update":
        return "only apply_then_update leaves the last chunk's update unread"
    if s["subtraction"] != CANONICAL["subtraction"] and not spec.subtracts:
        return "the update adds: no subtraction to spell"
    if s["scaling"] in ("mean_as_mul", "folded") and spec.reduction != "mean":
        return "no mean to spell"
    if s["momentum"] != CANONICAL["momentum"] and not spec.fam.momentum:
        return "no momentum to spell"
    if s["momentum"].startswith("per_chunk") and s["layout"] == "bthd_chunk_transposed":
        return "a per-chunk momentum has no token axis to transpose with each chunk"
    if s["causal_rates"] != CANONICAL["causal_rates"] and not (
            spec.order == "causal" and spec.fam.lr):
        return "no causal term with per-token rates to spell"
    if s["norm"] != CANONICAL["norm"] and not spec.fam.muon:
        return "no Muon: no norm to spell"
    if spec.order not in spec.fam.orders:
        return "the causal (dual) form has no momentum or Muon"
    if spec.order == "causal" and s["opset"] == "13":
        return "the causal form's Trilu needs opset 14"
    if s["scaling"] == "folded" and spec.fam.muon:
        return "Muon's step follows the orthogonalization: no one constant s / n"
    if s["scaling"].endswith("_operand") and (spec.fam.muon or spec.fam.momentum):
        return "the step scales the whole update only without momentum and Muon"
    return None


def draw_spec(rng: np.random.Generator, index: int, seed: int, options=None, fixed=None,
              family=None, order=None, partial=None, accept=None):
    """A random valid spec: spellings from `options` (category -> list; default all),
    `fixed` (category -> option) overriding them, the rest of the knobs random unless
    given. Invalid combinations (and those `accept` refuses) are re-drawn."""
    options = options or CATEGORIES
    fixed = fixed or {}
    for _ in range(20000):
        spelling = {c: fixed.get(c) or str(rng.choice(options[c])) for c in CATEGORIES}
        full_batch = spelling["form"] == "full_batch"
        if full_batch:
            # One step on the whole sequence: nothing to cut or assemble.
            for category in ("chunking", "assembly", "momentum", "causal_rates"):
                spelling[category] = fixed.get(category) or CANONICAL[category]
        fam = FAMILIES[family or str(rng.choice(sorted(FAMILIES)))]
        C = int(rng.choice([4, 8, 16]))
        want_partial = bool(rng.random() < 0.4) if partial is None else partial
        if want_partial:
            T = int(rng.choice([t for t in range(C + 1, 41) if t % C]))
        else:
            T = C * int(rng.integers(2, 40 // C + 1))
        spec = Spec(index=index, seed=seed, family=fam.name,
                    order=order or ("update_then_apply" if full_batch
                                    else str(rng.choice(fam.orders))),
                    reduction=str(rng.choice(["sum", "mean"])),
                    sign=-1 if fam.loss == "mse" else int(rng.choice([1, -1])),
                    lr_scale=float(rng.choice([0.5, 0.25, 2.0])),
                    B=int(rng.integers(1, 3)), H=int(rng.integers(1, 3)), T=T, C=C,
                    D=int(rng.choice([4, 8])), E=int(rng.choice([4, 8])), F=8,
                    spelling=spelling)
        if invalid(spec) is None and (accept is None or accept(spec)):
            return spec
    raise ValueError(f"no valid spec with {fixed} for family {family}")


def sample(seed: int, count: int):
    """The test's graphs: `count` specs drawn from SUPPORTED (drawn_by_test). The first
    ones fix one supported option each (every family first), so that every option is
    exercised whatever the seed; the rest are random mixes."""
    rng = np.random.default_rng(seed)
    pinned = [({}, family) for family in FAMILIES]
    pinned += [({category: option}, None) for category in CATEGORIES
               for option in SUPPORTED[category]]
    # A full-batch step fixes the chunk categories, so that redrawing invalid mixes
    # would pick it far more often than any chunked form: it is drawn once pinned and
    # in one random mix of eight.
    chunked = dict(SUPPORTED, form=[f for f in SUPPORTED["form"] if f != "full_batch"])
    specs = []
    for index in range(count):
        fixed, family = pinned[index] if index < len(pinned) else ({}, None)
        options = SUPPORTED if index >= len(pinned) and index % 8 == 0 else chunked
        specs.append(draw_spec(rng, index, seed * 100000 + index, options=options,
                               fixed=fixed, family=family, accept=drawn_by_test))
    return specs


# ---------------------------------------------------------------------------------------
# Writing ONNX
# ---------------------------------------------------------------------------------------


class Graph:
    """Nodes of one graph (the main graph or a Loop body); names unique over all."""

    def __init__(self, counter=None):
        self.nodes, self.inits = [], []
        self.counter = counter if counter is not None else [0]

    def fresh(self, prefix):
        self.counter[0] += 1
        return f"{prefix}_{self.counter[0]}"

    def op(self, op_type, inputs, outputs=1, **attrs):
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(h.make_node(op_type, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else names

    def ints(self, values, scalar=False):
        array = np.asarray(values, np.int64)
        if scalar:
            array = array.reshape(())
        name = self.fresh("c")
        self.nodes.append(h.make_node("Constant", [], [name], value=nh.from_array(array, name)))
        return name

    def f32(self, value, shape=()):
        name = self.fresh("c")
        array = np.full(shape, value, np.float32)
        self.nodes.append(h.make_node("Constant", [], [name], value=nh.from_array(array, name)))
        return name

    def true(self):
        name = self.fresh("c")
        self.nodes.append(h.make_node("Constant", [], [name],
                                      value=nh.from_array(np.array(True), name)))
        return name

    def init(self, prefix, array):
        name = self.fresh(prefix)
        self.inits.append(nh.from_array(np.asarray(array, np.float32), name))
        return name


def swap_last(rank):
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


def max_opset() -> int:
    """The newest default-domain opset that onnx (Python) and onnxruntime both know,
    capped by the compiler's library."""
    import onnxruntime as ort
    newest = min(LIBRARY_MAX_OPSET, onnx.defs.onnx_opset_version())
    for version in range(newest, 17, -1):
        graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "probe",
                             [h.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                             [h.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", version)])
        model.ir_version = h.find_min_ir_version_for(list(model.opset_import))
        try:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            return version
        except Exception:  # noqa: BLE001 - any refusal means "not this opset"
            continue
    return 17


_MAX_OPSET = []


def opset_of(spec: Spec) -> int:
    option = spec.spelling["opset"]
    if option == "max":
        if not _MAX_OPSET:
            _MAX_OPSET.append(max_opset())
        return _MAX_OPSET[0]
    return int(option)


class Case:
    """A generated model with its oracle.

    `draw(rng)` returns graph feeds and the oracle's output in graph layout; weights
    that are graph inputs are drawn afresh with the other inputs."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.rng = np.random.default_rng(spec.seed)
        self.opset = opset_of(spec)
        self._weights()
        self.model = _Writer(self).model()

    # -- numbers ------------------------------------------------------------------------

    def _weights(self):
        s, rng = self.spec, self.rng
        R, E = s.width, s.E
        self.w0 = self.w2 = None
        if s.fam.model == "swiglu":
            self.w0 = rng.normal(0, s.D ** -0.5, (s.H, s.D, s.F))
            self.w2 = rng.normal(0, s.D ** -0.5, (s.H, s.D, s.F))
        source = s.spelling["weight_source"]
        self.lowrank = None
        if source == "lowrank":
            r = 2
            out_in = s.spelling["orientation"] in ("w_xt", "x_wt")
            rows, cols = (E, R) if out_in else (R, E)
            a = rng.normal(0, 0.3, (s.H, rows, r)).astype(np.float32)
            b = rng.normal(0, 0.3, (s.H, r, cols)).astype(np.float32)
            eye = np.eye(rows, cols, dtype=np.float32)
            self.lowrank = (a, b, eye, 0.5)
            stored = a.astype(np.float64) @ b + 0.5 * eye
            self.w = np.swapaxes(stored, -1, -2) if out_in else stored
        elif source in ("initializer", "expand"):
            self.w = rng.normal(0, R ** -0.5, (s.H, R, E))
        else:
            self.w = None        # a graph input, drawn with the data
        if self.w0 is not None:
            self.w0, self.w2 = (x.astype(np.float32).astype(np.float64)
                                for x in (self.w0, self.w2))
        if self.w is not None:
            self.w = self.w.astype(np.float32).astype(np.float64)

    def key_std(self):
        """Keys small enough that the MSE update contracts (I - a K^T K stays stable)."""
        s = self.spec
        if s.fam.loss != "mse":
            return 1.0
        a = s.lr_scale / (s.C if s.reduction == "mean" else 1)
        return float(np.sqrt(0.5 / (a * (np.sqrt(s.C) + np.sqrt(s.D)) ** 2)))

    def draw(self, rng: np.random.Generator):
        s = self.spec
        B, H, T = s.B, s.H, s.T
        x = {"q": rng.normal(0, 1, (B, H, T, s.D)),
             "k": rng.normal(0, self.key_std(), (B, H, T, s.D)),
             "v": rng.normal(0, 1, (B, H, T, s.E))}
        if s.fam.lr:
            x["lr"] = rng.uniform(0, 1, (B, H, T, 1))
        if s.fam.momentum:
            per_chunk = s.spelling["momentum"].startswith("per_chunk")
            x["mom"] = rng.uniform(0, 1, (B, H, len(s.chunks) if per_chunk else T))
        w = self.w
        source = s.spelling["weight_source"]
        if w is None:
            per_sample = source == "input_per_sample" or s.spelling["layout"] == "folded"
            shape = (B, H, s.width, s.E) if per_sample else (H, s.width, s.E)
            w = rng.normal(0, s.width ** -0.5, shape)
            x["W"] = w
        x = {k: v.astype(np.float32) for k, v in x.items()}
        expected = self.oracle(x, x.get("W", w))
        return self.feeds(x), self.to_graph_layout(expected, "out")

    # -- layouts -------------------------------------------------------------------------

    def to_graph_layout(self, array, kind):
        """A canonical [B, H, T, ...] array (or [B, H, T] for mom) in the graph's
        layout."""
        layout = self.spec.spelling["layout"]
        B, H = self.spec.B, self.spec.H
        if layout == "folded":
            return array.reshape((B * H,) + array.shape[2:])
        if layout.startswith("bthd"):
            return np.swapaxes(array, 1, 2)
        return array

    def feeds(self, x):
        s = self.spec
        feeds = {name: self.to_graph_layout(x[name], name)
                 for name in ("q", "k", "v", "lr", "mom") if name in x}
        if "W" in x:
            w = x["W"]
            if s.spelling["orientation"] in ("w_xt", "x_wt"):
                w = np.swapaxes(w, -1, -2)
            if s.spelling["layout"] == "folded":
                w = w.reshape((s.B * s.H,) + w.shape[2:])
            feeds["W"] = np.ascontiguousarray(w, np.float32)
        return {k: np.ascontiguousarray(v, np.float32) for k, v in feeds.items()}

    # -- the oracle ----------------------------------------------------------------------

    def oracle(self, x, w):
        """The family's math in float64, canonical [B, H, T, E]."""
        s = self.spec
        fam = s.fam
        q, k, v = (x[n].astype(np.float64) for n in "qkv")
        W = np.broadcast_to(np.asarray(w, np.float64), (s.B, s.H, s.width, s.E)).copy()
        M = np.zeros_like(W)

        def phi(z):
            if fam.model == "linear":
                return z
            g = z @ self.w0
            return g / (1 + np.exp(-g)) * (z @ self.w2)

        out = np.zeros((s.B, s.H, s.T, s.E))
        for start, end in s.chunks:
            qc, kc, vc = q[:, :, start:end], k[:, :, start:end], v[:, :, start:end]
            fq, fk = phi(qc), phi(kc)
            if s.order == "apply_then_update":
                out[:, :, start:end] = fq @ W
            ke = fk * x["lr"][:, :, start:end] if fam.lr else fk
            if s.order == "causal":
                # Token i applies W + s * (sum over j <= i of token j's step) / n.
                vals = s.sign * vc if fam.loss == "dot" else -(fk @ W - vc)
                steps = np.cumsum(np.einsum("bhtd,bhte->bhtde", ke, vals), axis=2)
                if s.reduction == "mean":
                    steps = steps / (end - start)
                Wt = W[:, :, None] + s.lr_scale * steps
                out[:, :, start:end] = np.einsum("bhtd,bhtde->bhte", fq, Wt)
                W = Wt[:, :, -1]
                continue
            if fam.loss == "dot":
                g = s.sign * np.swapaxes(ke, -1, -2) @ vc
            else:
                g = -(np.swapaxes(ke, -1, -2) @ (fk @ W - vc))
            if s.reduction == "mean":
                g = g / (end - start)
            if fam.momentum:
                if s.spelling["momentum"].startswith("per_chunk"):
                    mu = x["mom"][:, :, start // s.C].astype(np.float64)[..., None, None]
                else:
                    mu = x["mom"][:, :, start:end].astype(np.float64).mean(-1)[..., None,
                                                                                None]
                M = mu * M + g
                g = M
            if fam.muon:
                g = newton_schulz(g)
            W = W + s.lr_scale * g
            if s.order == "update_then_apply":
                out[:, :, start:end] = fq @ W
        return out


class _Writer:
    """Writes one Case's graph."""

    def __init__(self, case: Case):
        self.case = case
        self.s = case.spec
        self.sp = case.spec.spelling
        self.main = Graph()
        self.g = self.main
        self.inputs = []
        layout = self.sp["layout"]
        # The rank of one stream's tensors (q chunk, weights) and the batch letters.
        self.rank = 3 if layout == "folded" else 4
        self.batch = "n" if layout == "folded" else "bh"
        # The time axis of the tensors that are chunked and assembled.
        self.axis = 1 if layout in ("folded", "bthd_chunk_transposed") else 2
        self.out_in = self.sp["orientation"] in ("w_xt", "x_wt")

    # -- small helpers -------------------------------------------------------------------

    def dims(self):
        """The batch (B*H folded), batch and length dimensions of graph inputs and the
        output: symbolic in a scripted Loop with dynamic axes."""
        s = self.s
        if self.symbolic:
            return "BH", "B", "T"
        return s.B * s.H, s.B, s.T

    def graph_shape(self, last):
        """Graph-input shape of a [B, H, T, last] tensor (last None: [B, H, T])."""
        s, layout = self.s, self.sp["layout"]
        folded, batch, length = self.dims()
        tail = [] if last is None else [last]
        if layout == "folded":
            return [folded, length] + tail
        if layout.startswith("bthd"):
            return [batch, length, s.H] + tail
        return [batch, s.H, length] + tail

    def add_input(self, name, shape):
        self.inputs.append(h.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def weight_noise(self, w):
        noise = self.sp["noise"]
        if noise in ("identity", "identity_cast"):
            return self.g.op("Identity", [w])
        if noise == "cast":
            return self.g.op("Cast", [w], to=TensorProto.FLOAT)
        return w

    def output_noise(self, o):
        noise = self.sp["noise"]
        if noise == "identity":
            return self.g.op("Identity", [o])
        if noise in ("cast", "identity_cast"):
            return self.g.op("Cast", [o], to=TensorProto.FLOAT)
        return o

    def transpose(self, x, rank):
        return self.g.op("Transpose", [x], perm=swap_last(rank))

    def unsqueeze(self, x, axes):
        return self.g.op("Unsqueeze", [x, self.g.ints(axes)])

    # -- the weights ---------------------------------------------------------------------

    def stored(self, array, oriented=True):
        """A canonical per-head [H, R, E] weight as stored: oriented (the fast weight),
        repeated over the batch when the heads are folded into it."""
        s = self.s
        if oriented and self.out_in:
            array = np.swapaxes(array, -1, -2)
        if self.sp["layout"] == "folded":
            array = np.broadcast_to(array, (s.B,) + array.shape).reshape(
                (s.B * s.H,) + array.shape[1:])
        return array

    def initial_weight(self):
        """W_0 and its rank."""
        s, case, g = self.s, self.case, self.main
        source = self.sp["weight_source"]
        rows, cols = (s.E, s.width) if self.out_in else (s.width, s.E)
        folded = self.sp["layout"] == "folded"
        if source == "initializer":
            w = g.init("W0", self.stored(case.w))
            return w, 3
        if source in ("input", "input_per_sample"):
            if folded:
                shape = [self.dims()[0], rows, cols]
            elif source == "input":
                shape = [s.H, rows, cols]
            else:
                shape = [self.dims()[1], s.H, rows, cols]
            return self.add_input("W", shape), len(shape)
        if source == "expand":
            w = g.init("W0", np.swapaxes(case.w, -1, -2) if self.out_in else case.w)
        else:  # lowrank: A @ B + s * I
            a, b, eye, scale = case.lowrank
            prod = g.op("MatMul", [g.init("A", a), g.init("B", b)])
            ident = g.op("Mul", [g.init("I", eye), g.f32(scale)])
            w = g.op("Add", [prod, ident])
        w = g.op("Expand", [w, g.ints([s.B, s.H, rows, cols])])
        if folded:
            w = g.op("Reshape", [w, g.ints([s.B * s.H, rows, cols])])
            return w, 3
        return w, 4

    def feature_weights(self):
        if self.s.fam.model != "swiglu":
            self.fw = None
            return
        self.fw = (self.main.init("W0s", self.stored(self.case.w0, oriented=False)),
                   self.main.init("W2s", self.stored(self.case.w2, oriented=False)))

    # -- the math of one chunk -------------------------------------------------------------

    def features(self, x):
        if self.fw is None:
            return x
        g = self.g
        gate = g.op("MatMul", [x, self.fw[0]])
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        up = g.op("MatMul", [x, self.fw[1]])
        return g.op("Mul", [silu, up])

    def einsum_apply(self, wrank):
        b = self.batch
        wb = b if wrank == self.rank else b[1:]
        return f"{b}td,{wb}de->{b}te"

    def apply(self, qf, w, wrank):
        g, orientation = self.g, self.sp["orientation"]
        if orientation == "x_w":
            return g.op("MatMul", [qf, w])
        if orientation == "w_xt":
            return self.transpose(g.op("MatMul", [w, self.transpose(qf, self.rank)]), self.rank)
        if orientation == "x_wt":
            return g.op("MatMul", [qf, self.transpose(w, wrank)])
        return g.op("Einsum", [qf, w], equation=self.einsum_apply(wrank))

    def causal_apply(self, qf, w, wrank, kc, vc, lrc, length):
        """The dual form: q W + s * Trilu(q ke^T) V (dot) or q W - s * Trilu(q ke^T)
        (k W - v) (MSE), over the chunk's own tokens."""
        g, s = self.g, self.s
        b = self.batch
        kf = self.features(kc)
        on_keys = self.sp["causal_rates"] == "keys"
        ke = g.op("Mul", [kf, lrc]) if lrc and on_keys else kf
        einsum = self.sp["orientation"] == "einsum"
        if einsum:
            scores = g.op("Einsum", [qf, ke], equation=f"{b}td,{b}sd->{b}ts")
        else:
            scores = g.op("MatMul", [qf, self.transpose(ke, self.rank)])
        row = self.transpose(lrc, self.rank) if lrc and not on_keys else None
        if row and self.sp["causal_rates"] == "masked_scores":
            scores = g.op("Mul", [scores, row])
        mask = g.op("Trilu", [scores], upper=0)
        if row and self.sp["causal_rates"] == "scores":
            mask = g.op("Mul", [mask, row])
        if s.fam.loss == "dot":
            vals, factor = vc, s.sign * s.lr_scale
        else:
            vals = g.op("Sub", [self.apply(kc if s.fam.model == "linear" else kf, w, wrank),
                                vc])
            factor = -s.lr_scale
        if einsum:
            term = g.op("Einsum", [mask, vals], equation=f"{b}ts,{b}se->{b}te")
        else:
            term = g.op("MatMul", [mask, vals])
        if s.reduction == "mean":
            term = g.op("Div", [term, g.f32(float(length)) if isinstance(length, int)
                                else length])
        return g.op("Add", [self.apply(qf, w, wrank), g.op("Mul", [term, g.f32(factor)])])

    def gradient(self, kf, ke, vc, w, wrank, scale=None):
        """The positive gradient term: k^T v (dot) or k^T (k W - v) (MSE), oriented.
        `scale` = (operand, factor): that operand (0 or 1) of the outer product is
        multiplied by `factor` first (PyTorch reads `s * k.T @ v` as `(s k^T) v`)."""
        g, orientation, r = self.g, self.sp["orientation"], self.rank
        b = self.batch
        outer = f"{b}td,{b}te->{b}de"

        def product(op, operands, **attrs):
            if scale:
                operands = list(operands)
                operands[scale[0]] = g.op("Mul", [operands[scale[0]], scale[1]])
            return g.op(op, operands, **attrs)

        if self.s.fam.loss == "dot":
            if orientation == "x_w":
                return product("MatMul", [self.transpose(ke, r), vc])
            if orientation in ("w_xt", "x_wt"):
                return product("MatMul", [self.transpose(vc, r), ke])
            return product("Einsum", [ke, vc], equation=outer)
        if orientation == "x_w":
            residual = g.op("Sub", [g.op("MatMul", [kf, w]), vc])
            return product("MatMul", [self.transpose(ke, r), residual])
        if orientation == "w_xt":
            predicted = g.op("MatMul", [w, self.transpose(kf, r)])
            residual = g.op("Sub", [predicted, self.transpose(vc, r)])
            return product("MatMul", [residual, ke])
        if orientation == "x_wt":
            residual = g.op("Sub", [g.op("MatMul", [kf, self.transpose(w, wrank)]), vc])
            return product("MatMul", [self.transpose(residual, r), ke])
        predicted = g.op("Einsum", [kf, w], equation=self.einsum_apply(wrank))
        return product("Einsum", [ke, g.op("Sub", [predicted, vc])], equation=outer)

    def reduce(self, op, x):
        """`op` over the two innermost axes, kept (axes an input from opset 18 on, and
        for ReduceSum from 13 on)."""
        g = self.g
        if op == "ReduceSum" or self.case.opset >= 18:
            return g.op(op, [x, g.ints([-2, -1])], keepdims=1)
        return g.op(op, [x], axes=[-2, -1], keepdims=1)

    def newton_schulz(self, u):
        """LaCT's zeropower_via_newtonschulz5 of the update term `u` (stored
        orientation): the wide orientation, X / (|X|_F + 1e-7), five quintic steps."""
        g, s, r = self.g, self.s, self.rank
        rows, cols = (s.E, s.width) if self.out_in else (s.width, s.E)
        tall = rows > cols
        x = self.transpose(u, r) if tall else u
        norm = self.sp["norm"]
        if norm in ("reduce_l2", "reciprocal"):
            size = self.reduce("ReduceL2", x)
        elif norm == "sum_square_sqrt":
            size = g.op("Sqrt", [self.reduce("ReduceSumSquare", x)])
        elif norm == "pow_sum_sqrt":
            size = g.op("Sqrt", [self.reduce("ReduceSum", g.op("Pow", [x, g.f32(2.0)]))])
        else:
            size = g.op("Sqrt", [self.reduce("ReduceSum", g.op("Mul", [x, x]))])
        size = g.op("Add", [size, g.f32(1e-7)])
        if norm == "reciprocal":
            x = g.op("Mul", [x, g.op("Reciprocal", [size])])
        else:
            x = g.op("Div", [x, size])
        for a, b, c in LACT_NS_COEFFS:
            gram = g.op("MatMul", [x, self.transpose(x, r)])
            poly = g.op("Add", [g.op("Mul", [g.f32(b), gram]),
                                g.op("Mul", [g.f32(c), g.op("MatMul", [gram, gram])])])
            x = g.op("Add", [g.op("Mul", [g.f32(a), x]), g.op("MatMul", [poly, x])])
        return self.transpose(x, r) if tall else x

    def momentum_mean(self, momc):
        g = self.g
        if self.sp["momentum"] == "per_chunk":
            # The chunk's value [B, H] as a factor of the [B, H, D, E] state.
            rank = self.rank - 2
            return self.unsqueeze(momc, [rank, rank + 1])
        if self.sp["momentum"] == "per_chunk_slice":
            return self.unsqueeze(momc, [self.rank - 1])  # [B, H, 1] -> [B, H, 1, 1]
        if self.case.opset >= 18:
            mean = g.op("ReduceMean", [momc, g.ints([-1])], keepdims=1)
        else:
            mean = g.op("ReduceMean", [momc], axes=[-1], keepdims=1)
        return self.unsqueeze(mean, [-1])

    def update(self, w, wrank, kc, vc, lrc, momc, m, length):
        """W + Delta: returns (next weight, next momentum). `length` is the chunk
        length: an int (unrolled) or a float tensor (Loop)."""
        g, s, sp = self.g, self.s, self.sp
        kf = self.features(kc)
        ke = g.op("Mul", [kf, lrc]) if lrc else kf
        negative = s.subtracts
        subtraction = sp["subtraction"] if negative else None
        scaling = sp["scaling"]
        mean = s.reduction == "mean"

        def const_or(value_for_int, make_dynamic):
            if isinstance(length, int):
                return g.f32(value_for_int(length))
            return make_dynamic()

        step = -s.lr_scale if subtraction == "neg_lr" else s.lr_scale
        scale = None
        if scaling in ("left_operand", "right_operand"):
            # s (s / n with the mean) on one factor of the product: the whole step.
            factor = g.f32(step) if not mean else const_or(
                lambda n: step / n, lambda: g.op("Div", [g.f32(step), length]))
            scale = (0 if scaling == "left_operand" else 1, factor)
        grad = self.gradient(kc if s.fam.model == "linear" else kf, ke, vc, w, wrank, scale)
        if subtraction == "neg_inner":
            grad = g.op("Neg", [grad])
        if scale:
            return self.stepped(w, grad, subtraction), m

        if mean and scaling != "folded":
            if scaling == "mean_as_mul":
                inv = const_or(lambda n: 1.0 / n,
                               lambda: g.op("Div", [g.f32(1.0), length]))
                grad = g.op("Mul", [grad, inv])
            else:
                grad = g.op("Div", [grad, const_or(float, lambda: length)])
        folded = None
        if scaling == "folded":
            folded = g.f32(step) if not mean else const_or(
                lambda n: step / n, lambda: g.op("Div", [g.f32(step), length]))
            if s.fam.momentum:
                # s / n_c must scale each chunk's own term: fold it in before the
                # momentum (m' = s m), which then is the whole step.
                grad = g.op("Mul", [grad, folded])
        if s.fam.momentum:
            decayed = g.op("Mul", [self.momentum_mean(momc), m])
            grad = m = g.op("Add", [decayed, grad])
        if s.fam.muon:
            grad = self.newton_schulz(grad)
        if scaling == "folded" and s.fam.momentum:
            delta = grad
        elif scaling == "mul" or scaling == "mean_as_mul":
            delta = g.op("Mul", [grad, g.f32(step)])
        elif scaling == "mul_swapped":
            delta = g.op("Mul", [g.f32(step), grad])
        elif scaling == "div_reciprocal":
            delta = g.op("Div", [grad, g.f32(1.0 / step)])
        else:  # folded: one constant s / n
            delta = g.op("Mul", [grad, folded])
        return self.stepped(w, delta, subtraction), m

    def stepped(self, w, delta, subtraction):
        """W + Delta, the subtraction spelled as `subtraction` says."""
        g = self.g
        if subtraction == "sub":
            return g.op("Sub", [w, delta])
        if subtraction == "neg":
            delta = g.op("Neg", [delta])
        elif subtraction == "mul_minus_one":
            delta = g.op("Mul", [delta, g.f32(-1.0)])
        return g.op("Add", [w, delta])

    # -- chunks of the inputs -----------------------------------------------------------------

    def prepared(self):
        """The graph inputs, with the one-time transpose of bthd_transposed."""
        s, fam, layout = self.s, self.s.fam, self.sp["layout"]
        x = {"q": self.add_input("q", self.graph_shape(s.D)),
             "k": self.add_input("k", self.graph_shape(s.D)),
             "v": self.add_input("v", self.graph_shape(s.E))}
        if fam.lr:
            x["lr"] = self.add_input("lr", self.graph_shape(1))
        if fam.momentum:
            shape = self.graph_shape(None)
            if self.sp["momentum"].startswith("per_chunk"):
                time = 1 if self.sp["layout"] in ("folded", "bthd_transposed") else 2
                shape[time] = "N" if isinstance(shape[time], str) else len(s.chunks)
            x["mom"] = self.add_input("mom", shape)
        if layout == "bthd_transposed":
            for name in x:
                perm = [0, 2, 1] if name == "mom" else [0, 2, 1, 3]
                x[name] = self.main.op("Transpose", [x[name]], perm=perm)
        return x

    def chunk_momentum(self, mom, index):
        """Entry `index` (0-D) of the per-chunk momentum's last axis: a Gather, or a
        Slice [index, index + 1)."""
        g, axis = self.g, self.rank - 2
        if self.sp["momentum"] == "per_chunk":
            return g.op("Gather", [mom, index], axis=axis)
        start = self.unsqueeze(index, [0])
        end = self.unsqueeze(g.op("Add", [index, g.ints(1, True)]), [0])
        return g.op("Slice", [mom, start, end, g.ints([axis])])

    def cut_inputs(self, x):
        """The inputs cut into chunks of tokens (not a per-chunk momentum)."""
        return [n for n in x if not (n == "mom" and self.per_chunk_momentum)]

    @property
    def per_chunk_momentum(self):
        return self.s.fam.momentum and self.sp["momentum"].startswith("per_chunk")

    def rank_of(self, name):
        return self.rank - 1 if name == "mom" else self.rank

    def shape_of(self, name):
        """Static shape of the (prepared) tensor `name`."""
        s = self.s
        last = {"q": s.D, "k": s.D, "v": s.E, "lr": 1, "mom": None}[name]
        tail = [] if last is None else [last]
        if self.sp["layout"] == "folded":
            return [s.B * s.H, s.T] + tail
        if self.sp["layout"] == "bthd_chunk_transposed":
            return [s.B, s.T, s.H] + tail
        return [s.B, s.H, s.T] + tail

    def to_stream(self, chunk, name):
        """A chunk of `name` in stream form [B, H, C, .]."""
        if self.sp["layout"] != "bthd_chunk_transposed":
            return chunk
        perm = [0, 2, 1] if name == "mom" else [0, 2, 1, 3]
        return self.g.op("Transpose", [chunk], perm=perm)

    def out_to_assembly(self, o):
        if self.sp["layout"] != "bthd_chunk_transposed":
            return o
        return self.g.op("Transpose", [o], perm=[0, 2, 1, 3])

    def axis_for(self, name):
        axis = self.axis
        if self.sp["chunking"] == "slice_negative_axis":
            axis -= self.rank_of(name)
        return axis

    @property
    def symbolic(self):
        """True if the graph inputs have a symbolic batch and length (Loop forms but
        loop_static): reshapes then copy the leading dims (0) and infer the chunk
        count (-1), as a scripted export of `x.view(b, h, -1, C, d)` does."""
        return self.sp["form"] in SYMBOLIC_LOOP_FORMS and not self.s.static_shapes

    @property
    def gather_axis(self):
        """The chunk axis the gather chunkings index: n of [.., n, C, ..], or 0 once
        gather_permuted has moved it to the front."""
        return 0 if self.sp["chunking"] == "gather_permuted" else self.axis

    def reshaped(self, x, name):
        """x reshaped to [.., n, C, ..] (gather chunking); with gather_permuted, n then
        moved to the front (ttt-lm-pytorch's `[N, B, H, C, D]`)."""
        shape = self.shape_of(name)
        n = self.s.T // self.s.C
        if self.symbolic:
            shape = [0] * self.axis + [-1, self.s.C] + shape[self.axis + 1:]
        else:
            shape = shape[:self.axis] + [n, self.s.C] + shape[self.axis + 1:]
        xr = self.main.op("Reshape", [x, self.main.ints(shape)])
        if self.sp["chunking"] != "gather_permuted":
            return xr
        perm = [self.axis] + [d for d in range(len(shape)) if d != self.axis]
        return self.main.op("Transpose", [xr], perm=perm)

    def merged_shape(self):
        """The Reshape target that merges the stacked chunks back into the sequence."""
        shape = self.assembly_shape()
        if self.symbolic:
            return [0] * self.axis + [-1] + shape[self.axis + 1:]
        return shape

    def unrolled_chunks(self, x, name):
        """The chunks of `x` (unrolled), in stream form."""
        g, s, chunking = self.main, self.s, self.sp["chunking"]
        bounds = s.chunks
        if chunking == "split":
            sizes = [e - b for b, e in bounds]
            pieces = g.op("Split", [x, g.ints(sizes)], outputs=len(sizes), axis=self.axis)
            pieces = pieces if isinstance(pieces, list) else [pieces]
        elif chunking in ("gather", "gather_permuted"):
            xr = self.reshaped(x, name)
            pieces = [g.op("Gather", [xr, g.ints(i, scalar=True)], axis=self.gather_axis)
                      for i in range(len(bounds))]
        else:
            pieces = []
            for start, end in bounds:
                inputs = [x, g.ints([start]), g.ints([end]), g.ints([self.axis_for(name)])]
                if chunking == "slice":
                    inputs.append(g.ints([1]))
                pieces.append(g.op("Slice", inputs))
        return [self.to_stream(p, name) for p in pieces]

    # -- the output ---------------------------------------------------------------------------

    def assembly_shape(self):
        s = self.s
        if self.sp["layout"] == "folded":
            return [s.B * s.H, s.T, s.E]
        if self.sp["layout"] == "bthd_chunk_transposed":
            return [s.B, s.T, s.H, s.E]
        return [s.B, s.H, s.T, s.E]

    def scatter_indices(self, start, length):
        """ScatterND indices writing tokens start..start+length of the assembly."""
        shape = self.assembly_shape()[:self.axis] + [length]
        grids = list(np.meshgrid(*[np.arange(d) for d in shape], indexing="ij"))
        grids[-1] = grids[-1] + start
        return np.stack(grids, -1).astype(np.int64)

    def assemble(self, outs):
        g, s, assembly = self.main, self.s, self.sp["assembly"]
        rank = len(self.assembly_shape())
        if assembly == "concat":
            return g.op("Concat", outs, axis=self.axis)
        if assembly == "concat_negative_axis":
            return g.op("Concat", outs, axis=self.axis - rank)
        if assembly == "stack":
            stacked = g.op("Concat", [self.unsqueeze(o, [self.axis]) for o in outs],
                           axis=self.axis)
            return g.op("Reshape", [stacked, g.ints(self.assembly_shape())])
        if assembly == "scan_buffer":
            # ttt-lm-pytorch: rows of [n, .., C, ..] (torch.empty: any values), then the
            # chunk axis moved back next to C and merged.
            shape, axis = self.assembly_shape(), self.axis
            rows = [len(outs)] + shape[:axis] + [s.C] + shape[axis + 1:]
            buffer = g.f32(7.0, rows)
            for i, o in enumerate(outs):
                row = g.op("Reshape", [o, g.ints([1] + rows[1:])])
                buffer = g.op("ScatterND", [buffer, g.ints([[i]]), row])
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(rows)))
            moved = g.op("Transpose", [buffer], perm=perm)
            return g.op("Reshape", [moved, g.ints(shape)])
        buffer = g.f32(0.0, self.assembly_shape())
        for (start, end), o in zip(s.chunks, outs):
            buffer = g.op("ScatterND", [buffer, g.ints(self.scatter_indices(start, end - start)),
                                        o])
        return buffer

    def finish(self, o):
        if self.sp["layout"] == "bthd_transposed":
            return self.main.op("Transpose", [o], perm=[0, 2, 1, 3])
        return o

    # -- the two forms ------------------------------------------------------------------------

    def zero_momentum(self, wrank):
        s = self.s
        rows, cols = (s.E, s.width) if self.out_in else (s.width, s.E)
        batch = [s.B * s.H] if self.sp["layout"] == "folded" else \
            ([s.H] if wrank == 3 else [s.B, s.H])
        return self.main.f32(0.0, batch + [rows, cols])

    def unrolled(self, x, w, wrank):
        s = self.s
        chunks = {name: self.unrolled_chunks(x[name], name) for name in self.cut_inputs(x)}
        if self.per_chunk_momentum:
            chunks["mom"] = [self.chunk_momentum(x["mom"], self.main.ints(i, True))
                             for i in range(len(s.chunks))]
        m = self.zero_momentum(wrank) if s.fam.momentum else None
        outs = []
        n = len(s.chunks)
        for i, (start, end) in enumerate(s.chunks):
            qf = self.features(chunks["q"][i])
            parts = dict(kc=chunks["k"][i], vc=chunks["v"][i],
                         lrc=chunks["lr"][i] if "lr" in chunks else None,
                         momc=chunks["mom"][i] if "mom" in chunks else None)
            wn = self.weight_noise(w)
            if s.order != "update_then_apply":
                o = (self.apply(qf, wn, wrank) if s.order == "apply_then_update" else
                     self.causal_apply(qf, wn, wrank, parts["kc"], parts["vc"],
                                       parts["lrc"], end - start))
                if i + 1 < n:
                    w, m = self.update(wn, wrank, m=m, length=end - start, **parts)
                    wrank = self.rank
            else:
                w, m = self.update(wn, wrank, m=m, length=end - start, **parts)
                wrank = self.rank
                o = self.apply(qf, self.weight_noise(w), wrank)
            outs.append(self.out_to_assembly(self.output_noise(o)))
        return self.finish(self.assemble(outs))

    def full_batch(self, x, w, wrank):
        """One step on every key and value, then applied to every query."""
        whole = {name: self.to_stream(x[name], name) for name in x}
        w, _ = self.update(self.weight_noise(w), wrank, kc=whole["k"], vc=whole["v"],
                           lrc=whole.get("lr"), momc=None, m=None, length=self.s.T)
        o = self.apply(self.features(whole["q"]), self.weight_noise(w), self.rank)
        return self.finish(self.out_to_assembly(self.output_noise(o)))

    def loop(self, x, w, wrank):
        """An ONNX Loop over the chunks, the chunk cut with a dynamic start i * C."""
        s, sp, main = self.s, self.sp, self.main
        C, form, chunking = s.C, sp["form"], sp["chunking"]
        if wrank < self.rank and sp["orientation"] in ("x_wt", "einsum"):
            # The body's Transpose / Einsum needs one rank for every iteration: carry
            # the weight over the batch as the scripted exporter does.
            rows, cols = (s.E, s.width) if self.out_in else (s.width, s.E)
            w = main.op("Expand", [w, main.ints([s.B, s.H, rows, cols])])
            wrank = self.rank
        length = main.op("Gather", [main.op("Shape", [x["q"]]), main.ints(self.axis, True)],
                         axis=0)
        if form == "loop_tail":
            trips = main.op("Div", [main.op("Sub", [length, main.ints(1, True)]),
                                    main.ints(C, True)])
        else:
            trips = main.op("Div", [main.op("Sub", [length, main.ints(1 - C, True)]),
                                    main.ints(C, True)])
        trips = main.op("Cast", [trips], to=TensorProto.INT64)
        # Sequences or reshaped tensors the body cuts (split / gather chunking).
        source = {}
        for name in self.cut_inputs(x):
            if chunking == "split":
                source[name] = main.op("SplitToSequence", [x[name], main.ints(C, True)],
                                       axis=self.axis)
            elif chunking in ("gather", "gather_permuted"):
                source[name] = self.reshaped(x[name], name)
            else:
                source[name] = x[name]
        body = Graph(main.counter)
        self.g = body
        it, cond = body.fresh("i"), body.fresh("cond")
        w_in = body.fresh("w_in")
        carried_in = [w_in]
        m_in = None
        if s.fam.momentum:
            m_in = body.fresh("m_in")
            carried_in.append(m_in)
        assembly = sp["assembly"]
        acc_in = body.fresh("acc_in")
        scan = form == "loop_scan"
        if not scan:
            carried_in.append(acc_in)
        start = body.op("Mul", [it, body.ints(C, True)])
        end = body.op("Min", [body.op("Add", [start, body.ints(C, True)]), length])
        chunk_len = body.op("Cast", [body.op("Sub", [end, start])], to=TensorProto.FLOAT)

        def cut(name, begin, stop, index):
            if chunking == "split":
                piece = body.op("SequenceAt", [source[name], index])
            elif chunking in ("gather", "gather_permuted"):
                piece = body.op("Gather", [source[name], index], axis=self.gather_axis)
            else:
                inputs = [source[name], self.unsqueeze(begin, [0]), self.unsqueeze(stop, [0]),
                          body.ints([self.axis_for(name)])]
                if chunking == "slice":
                    inputs.append(body.ints([1]))
                piece = body.op("Slice", inputs)
            return self.to_stream(piece, name)

        parts = {name: cut(name, start, end, it) for name in self.cut_inputs(x)}
        if self.per_chunk_momentum:
            parts["mom"] = self.chunk_momentum(x["mom"], it)
        qf = self.features(parts["q"])
        wn = self.weight_noise(w_in)
        upd = dict(kc=parts["k"], vc=parts["v"], lrc=parts.get("lr"), momc=parts.get("mom"))
        if s.order == "apply_then_update":
            o = self.apply(qf, wn, wrank)
            w_out, m_out = self.update(wn, wrank, m=m_in, length=chunk_len, **upd)
        elif s.order == "causal":
            o = self.causal_apply(qf, wn, wrank, upd["kc"], upd["vc"], upd["lrc"], chunk_len)
            w_out, m_out = self.update(wn, wrank, m=m_in, length=chunk_len, **upd)
        else:
            w_out, m_out = self.update(wn, wrank, m=m_in, length=chunk_len, **upd)
            o = self.apply(qf, self.weight_noise(w_out), self.rank)
        o = self.out_to_assembly(self.output_noise(o))
        outputs = [body.op("Identity", [cond]), w_out] + ([m_out] if m_in else [])
        if scan:
            outputs.append(o)
        elif assembly == "scatter":
            base = body.ints(self.scatter_indices(0, C))
            offset = np.zeros(self.axis + 1, np.int64)
            offset[-1] = 1
            idx = body.op("Add", [base, body.op("Mul", [start, body.ints(offset)])])
            idx = body.op("Slice", [idx, body.ints([0]),
                                    self.unsqueeze(body.op("Sub", [end, start]), [0]),
                                    body.ints([self.axis])])
            outputs.append(body.op("ScatterND", [acc_in, idx, o]))
        else:
            outputs.append(body.op("SequenceInsert", [acc_in, o]))
        self.g = main

        def tensor(name):
            return h.make_tensor_value_info(name, TensorProto.FLOAT, None)

        def sequence(name):
            return h.make_tensor_sequence_value_info(name, TensorProto.FLOAT, None)

        body_inputs = [h.make_tensor_value_info(it, TensorProto.INT64, []),
                       h.make_tensor_value_info(cond, TensorProto.BOOL, [])]
        body_inputs += [tensor(n) for n in carried_in[:1 + bool(m_in)]]
        body_outputs = [h.make_tensor_value_info(outputs[0], TensorProto.BOOL, [])]
        body_outputs += [tensor(n) for n in outputs[1:2 + bool(m_in)]]
        if scan:
            body_outputs.append(tensor(outputs[-1]))
        else:
            make = tensor if assembly == "scatter" else sequence
            body_inputs.append(make(acc_in))
            body_outputs.append(make(outputs[-1]))
        body_graph = h.make_graph(body.nodes, main.fresh("body"), body_inputs, body_outputs)

        loop_inputs = [trips, main.true(), w]
        if m_in:
            loop_inputs.append(self.zero_momentum(wrank))
        if not scan:
            if assembly == "scatter":
                loop_inputs.append(main.f32(0.0, self.assembly_shape()))
            else:
                loop_inputs.append(main.op("SequenceEmpty", [], dtype=TensorProto.FLOAT))
        results = main.op("Loop", loop_inputs, outputs=len(outputs) - 1, body=body_graph)
        w_final, acc = results[0], results[-1]
        if form == "loop_tail":
            # The last chunk: applied to the loop's final weight.
            tail_start = main.op("Mul", [trips, main.ints(C, True)])
            self.g = main
            piece = self.tail_cut(source, tail_start, length, trips)
            o = self.apply(self.features(piece), self.weight_noise(w_final), self.rank)
            o = self.out_to_assembly(self.output_noise(o))
            if assembly == "scatter":
                start, end = s.chunks[-1]
                indices = main.ints(self.scatter_indices(start, end - start))
                acc = main.op("ScatterND", [acc, indices, o])
            else:
                acc = main.op("SequenceInsert", [acc, o])
        return self.finish(self.loop_assembly(acc))


    def tail_cut(self, source, begin, stop, index):
        g, chunking = self.main, self.sp["chunking"]
        if chunking == "split":
            piece = g.op("SequenceAt", [source["q"], index])
        elif chunking in ("gather", "gather_permuted"):
            piece = g.op("Gather", [source["q"], index], axis=self.gather_axis)
        else:
            inputs = [source["q"], self.unsqueeze(begin, [0]), self.unsqueeze(stop, [0]),
                      g.ints([self.axis_for("q")])]
            if chunking == "slice":
                inputs.append(g.ints([1]))
            piece = g.op("Slice", inputs)
        return self.to_stream(piece, "q")

    def loop_assembly(self, acc):
        g, sp = self.main, self.sp
        rank = len(self.assembly_shape())
        if sp["form"] == "loop_scan":
            # [n, ..] -> move n next to the chunk's time axis, then merge them.
            perm = list(range(1, self.axis + 1)) + [0] + list(range(self.axis + 1, rank + 1))
            moved = g.op("Transpose", [acc], perm=perm)
            return g.op("Reshape", [moved, g.ints(self.merged_shape())])
        assembly = sp["assembly"]
        if assembly == "scatter":
            return acc
        if assembly == "concat":
            return g.op("ConcatFromSequence", [acc], axis=self.axis)
        if assembly == "concat_negative_axis":
            return g.op("ConcatFromSequence", [acc], axis=self.axis - rank)
        stacked = g.op("ConcatFromSequence", [acc], axis=self.axis, new_axis=1)
        return g.op("Reshape", [stacked, g.ints(self.merged_shape())])

    # -- the model ----------------------------------------------------------------------------

    def model(self):
        x = self.prepared()
        w, wrank = self.initial_weight()
        self.feature_weights()
        if self.sp["form"] == "unrolled":
            o = self.unrolled(x, w, wrank)
        elif self.sp["form"] == "full_batch":
            o = self.full_batch(x, w, wrank)
        else:
            o = self.loop(x, w, wrank)
        # The graph output is named "o".
        last = self.main.nodes[-1]
        if o in last.output:
            last.output[list(last.output).index(o)] = "o"
        else:
            self.main.nodes.append(h.make_node("Identity", [o], ["o"]))
        graph = h.make_graph(self.main.nodes, "ttt_style", self.inputs,
                             [h.make_tensor_value_info("o", TensorProto.FLOAT,
                                                       self.graph_shape(self.s.E))],
                             self.main.inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", self.case.opset)],
                             producer_name="onnx_styles")
        model.ir_version = h.find_min_ir_version_for(list(model.opset_import))
        return model


# ---------------------------------------------------------------------------------------
# Checking one graph: onnxruntime, ttt-opt
# ---------------------------------------------------------------------------------------


def rel_err(actual, expected):
    expected = np.asarray(expected, np.float64)
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(np.asarray(actual, np.float64) - expected)) / scale)


def run_onnx(model, feeds):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    data = model if isinstance(model, (bytes, str)) else model.SerializeToString()
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return session.run(["o"], feeds)[0]


TTT_OPT_TIMEOUT = 120


def run_ttt_opt(src: Path, out: Path, *args, attempts=30):
    """`ttt-opt src -o out`; waits while the binary is missing or being relinked (the
    recognizer is rebuilt while these tests run), and tries a run that timed out once
    more before giving up (subprocess.TimeoutExpired)."""
    timeouts = 0
    for attempt in range(attempts):
        try:
            proc = subprocess.run([str(tool("ttt-opt")), str(src), "-o", str(out), *args],
                                  capture_output=True, text=True, timeout=TTT_OPT_TIMEOUT)
        except subprocess.TimeoutExpired:
            timeouts += 1
            if timeouts == 2:
                raise
            continue
        except OSError:  # missing (FileNotFoundError), "Text file busy", a partial file
            if attempt + 1 == attempts:
                raise
            time.sleep(5)
            continue
        # A binary mid-link dies on start-up (exec format error, a signal).
        if proc.returncode < 0 and not proc.stderr.strip() and attempt + 1 < attempts:
            time.sleep(5)
            continue
        return proc
    raise RuntimeError("ttt-opt did not run")


def layer_remarks(stderr):
    return [line for line in stderr.splitlines() if "TTT layer:" in line]


@dataclasses.dataclass
class Result:
    spec: Spec
    found: bool = False
    rewritten: bool = False     # the expected outcome: raised (linear attention) or left
    exact: bool = False
    remark: str = ""
    problem: str = ""           # why the graph failed, "" when it passed
    generator_error: str = ""   # the generated model is wrong (a bug here)

    @property
    def passed(self):
        return self.found and self.rewritten and self.exact and not self.generator_error

    def message(self):
        return f"{self.spec.describe()}\n  problem: {self.problem}\n  remark: {self.remark}"


def check_case(spec: Spec, workdir: Path) -> Result:
    """The generated graph against its oracle, then through ttt-opt."""
    result = Result(spec)
    try:
        case = Case(spec)
        onnx.checker.check_model(case.model, full_check=True)
        feeds, expected = case.draw(np.random.default_rng(spec.seed + 1))
        err = rel_err(run_onnx(case.model, feeds), expected)
        if not err <= tolerance(spec):
            raise AssertionError(f"onnxruntime differs from the oracle: {err:.3g}")
    except Exception as error:  # noqa: BLE001 - reported with the spec
        result.generator_error = f"{type(error).__name__}: {error}"
        result.problem = "generator: " + result.generator_error
        return result
    workdir.mkdir(parents=True, exist_ok=True)
    src, out = workdir / f"g{spec.index}.onnx", workdir / f"g{spec.index}.out.onnx"
    onnx.save(case.model, str(src))
    try:
        proc = run_ttt_opt(src, out)
    except subprocess.TimeoutExpired:
        result.problem = f"ttt-opt ran longer than {TTT_OPT_TIMEOUT} s (twice)"
        return result
    remarks = layer_remarks(proc.stderr)
    lines = proc.stderr.strip().splitlines()
    result.remark = " | ".join(r.split("TTT layer: ", 1)[1] for r in remarks) or \
        (lines[-1] if lines else "(no remark)")
    if proc.returncode != 0:
        result.problem = f"ttt-opt exited with {proc.returncode}"
        result.remark = proc.stderr.strip()[-400:]
        return result
    if len(remarks) != 1:
        result.problem = f"{len(remarks)} 'TTT layer:' remarks, expected 1"
        return result
    result.found = spec.form_remark() in remarks[0]
    if not result.found:
        result.problem = f"not found as '{spec.form_remark()}'"
        return result
    if expects_rewrite(spec):
        result.rewritten = "raised to ttt.kvb_layer " + expected_remark(spec) in remarks[0]
    else:
        result.rewritten = ("left as it was" in remarks[0] and
                            expected_remark(spec) in remarks[0])
    try:
        written = onnx.load(str(out))
        onnx.checker.check_model(written, full_check=True)
        feeds, expected = case.draw(np.random.default_rng(spec.seed + 2))
        got = run_onnx(written, feeds)
        err = rel_err(got, expected)
        left = "left as it was" in remarks[0]
        if left:
            err = max(err, rel_err(got, run_onnx(case.model, feeds)))
        result.exact = err <= tolerance(spec)
        if not result.exact:
            result.problem = f"the written model differs from the oracle: {err:.3g}"
        elif left and [n.op_type for n in written.graph.node] != \
                [n.op_type for n in case.model.graph.node]:
            result.exact = False
            result.problem = "left as it was, but the written graph has other nodes"
    except Exception as error:  # noqa: BLE001
        result.problem = f"the written model fails: {type(error).__name__}: {error}"
        return result
    if not result.rewritten and not result.problem:
        result.problem = (f"not raised to ttt.kvb_layer {expected_remark(spec)}"
                          if expects_rewrite(spec)
                          else f"not left as it was with '{expected_remark(spec)}'")
    return result


def check_all(specs, workdir: Path, jobs=2):
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: check_case(s, workdir), specs))


# ---------------------------------------------------------------------------------------
# Survey
# ---------------------------------------------------------------------------------------


def canonical_spelling(**changes):
    spelling = dict(CANONICAL)
    spelling.update(changes)
    return spelling


LOOP_FORMS = ("loop_sequence", "loop_tail")


def survey_specs(count, seed):
    """(category, option, unrolled specs, Loop specs): each option varied alone from the
    canonical spelling, once unrolled and once in a scripted Loop (loop_sequence or
    loop_tail); then random mixes of all options and of what the test draws."""
    rng = np.random.default_rng(seed)
    rows, index = [], 0

    def specs(n, **kwargs):
        nonlocal index
        out = []
        for _ in range(n):
            out.append(draw_spec(rng, index, seed * 100000 + index, **kwargs))
            index += 1
        return out

    for category, options in CATEGORIES.items():
        # The causal term's rates are spelled only in the causal order (which takes
        # no tail chunk after the Loop).
        causal = category == "causal_rates"
        forms = [f for f in LOOP_FORMS if not (causal and f == "loop_tail")]
        for option in options:
            unrolled = specs(count, fixed=canonical_spelling(**{category: option}),
                             order="causal" if causal else None)
            loop = []
            if category != "form" and (category, option) not in UNROLLED_ONLY:
                for _ in range(count):
                    form = str(rng.choice(forms))
                    order = ("causal" if causal else
                             "apply_then_update" if form == "loop_tail" else None)
                    loop += specs(1, fixed=canonical_spelling(**{category: option, "form": form}),
                                  order=order)
            rows.append((category, option, unrolled, loop))
    rows.append(("random mix", "all options", specs(count * 4), []))
    rows.append(("random mix", "test draws", specs(count * 4, options=SUPPORTED,
                                                   accept=drawn_by_test), []))
    return rows


def _counts(results):
    n = len(results)
    if not n:
        return "", None
    found = sum(r.found for r in results)
    rewritten = sum(r.found and r.rewritten for r in results)
    exact = sum(r.passed for r in results)
    failing = next((r for r in results if not r.passed), None)
    return f"{found:>3}/{n:<2} {rewritten:>3}/{n:<2} {exact:>3}/{n:<2}", failing


def survey(count, seed, jobs=2, out=sys.stdout):
    """Prints (and returns) the survey table."""
    rows = survey_specs(count, seed)
    with tempfile.TemporaryDirectory() as tmp:
        flat = [s for row in rows for s in row[2] + row[3]]
        results = {r.spec.index: r for r in check_all(flat, Path(tmp), jobs)}
    print(f"survey: seed {seed}, {count} graphs per option and form, "
          f"ttt-opt {tool('ttt-opt')}", file=out)
    print("columns: found (one remark, the right form) / rewritten (raised for linear "
          "attention, left with the expected reason otherwise) / exact (the written model "
          "matches the oracle)", file=out)
    header = (f"{'category':<14} {'option':<22} {'unrolled: found rewr. exact':<29}"
              f"{'Loop: found rewr. exact':<26} first failure")
    print(header, file=out)
    print("-" * len(header), file=out)
    table = []
    for category, option, unrolled, loop in rows:
        text_u, fail_u = _counts([results[s.index] for s in unrolled])
        text_l, fail_l = _counts([results[s.index] for s in loop])
        failing = fail_u or fail_l
        first = ""
        if failing is not None:
            where = "" if failing is fail_u else "in a Loop: "
            first = f"{where}[{failing.spec.family}] {failing.problem}: {failing.remark}"
        print(f"{category:<14} {option:<22} {text_u:<29}{text_l:<26} {first[:400]}", file=out)
        table.append((category, option, fail_u is None, not loop or fail_l is None, first))
    return table


def pair_survey(count, seed, jobs=2, out=sys.stdout):
    """Every pair of non-canonical options the test may draw together (SUPPORTED,
    LOOP_REFUSED and REFUSED_PAIRS respected), the rest canonical: prints the pairs
    with a failing graph. Returns {(a, b): first failure}."""
    rng = np.random.default_rng(seed)
    options = [(c, o) for c in CATEGORIES for o in SUPPORTED[c] if o != CANONICAL[c]]
    specs, index = {}, 0
    for i, a in enumerate(options):
        for b in options[i + 1:]:
            if a[0] == b[0]:
                continue
            fixed = canonical_spelling(**dict([a, b]))
            try:
                drawn = []
                for _ in range(count):
                    drawn.append(draw_spec(rng, index, seed * 100000 + index, fixed=fixed,
                                           accept=drawn_by_test))
                    index += 1
            except ValueError:  # the test never draws this pair
                continue
            specs[(a, b)] = drawn
    with tempfile.TemporaryDirectory() as tmp:
        flat = [s for group in specs.values() for s in group]
        results = {r.spec.index: r for r in check_all(flat, Path(tmp), jobs)}
    failing = {}
    for pair, group in specs.items():
        bad = [results[s.index] for s in group if not results[s.index].passed]
        if bad:
            failing[pair] = bad[0]
            print(f"{pair[0][0]}={pair[0][1]} + {pair[1][0]}={pair[1][1]}: "
                  f"{len(group) - len(bad)}/{len(group)} pass; [{bad[0].spec.family}] "
                  f"{bad[0].problem}: {bad[0].remark[:300]}", file=out)
    print(f"pairs: {len(specs)} checked ({count} graphs each), {len(failing)} failing",
          file=out)
    return failing


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Generated TTT layers in many ONNX spellings (see the docstring).")
    parser.add_argument("--survey", action="store_true",
                        help="every option of every category through today's ttt-opt")
    parser.add_argument("--pairs", action="store_true",
                        help="every pair of options the test draws, through ttt-opt")
    parser.add_argument("--check", action="store_true",
                        help="run the test's sample and list the graphs that fail")
    parser.add_argument("--show", type=int, default=None,
                        help="print graph SHOW of the test's sample")
    parser.add_argument("--count", type=int, default=None,
                        help="graphs per option and form (survey; default 6) or in the "
                             "sample (--check, --show; default 320)")
    parser.add_argument("--seed", type=int, default=None,
                        help="default 1 (survey) or 2026 (the test's default)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.survey:
        survey(args.count or 6, 1 if args.seed is None else args.seed, args.jobs)
        return 0
    if args.pairs:
        pair_survey(args.count or 2, 1 if args.seed is None else args.seed, args.jobs)
        return 0
    seed = 2026 if args.seed is None else args.seed
    count = args.count or 320
    if args.show is not None:
        spec = sample(seed, max(count, args.show + 1))[args.show]
        print(spec.describe())
        print(onnx.printer.to_text(Case(spec).model))
        return 0
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            results = check_all(sample(seed, count), Path(tmp), args.jobs)
        failed = [r for r in results if not r.passed]
        for r in failed:
            print(r.message())
        print(f"seed {seed}: {len(results) - len(failed)}/{len(results)} graphs pass")
        return 1 if failed else 0
    parser.print_help()
    return 1


if __name__ == "__main__":
    sys.exit(main())
