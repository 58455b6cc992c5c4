"""TTT layers written by hand in linalg on tensors are found, raised and rewritten
exactly; ordinary recurrences are left alone (`ttt-raise-linalg`, `ttt-optimize-linalg`).

Each program of linalg_programs.py (chunk loops unrolled, as an `scf.for` or as a
counted `scf.while`, to a static length or to one known at run time) runs first as written (ttt-run, the ttt-to-cpu
pipeline) against the NumPy oracle written from the math, so the program is the layer;
then `ttt-raise-linalg` must replace its chunk loop by one `ttt.kvb_layer` with the
remark of the ONNX raise, and `ttt-optimize-linalg` must leave only upstream dialects
(linalg, tensor, arith, scf) whose result matches the oracle within 1e-5 on fresh random
inputs. An RNN cell and a running sum over chunks (carried state, no fast weight) and a
layer whose output is tanh of the product (not linear in W) are found or not as such
and left unchanged.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linalg_programs as lp  # noqa: E402
from compiler import run_function, run_opt  # noqa: E402

RTOL = 1e-5
SPELLINGS = [
    lp.Spelling(),
    lp.Spelling(assembly="concat", weight="const"),
    lp.Spelling(orientation="w_xt", loss="mse"),
    lp.Spelling(contraction="named", loss="mse"),
    lp.Spelling(contraction="named", assembly="concat", weight="const"),
    lp.Spelling(weight="const", orientation="w_xt", assembly="concat"),
    lp.Spelling(loss="mse", T=10),  # a partial last chunk
    lp.Spelling(contraction="named", T=10, C=4),
    # scf.for over the chunks, carrying W and the output buffer
    lp.Spelling(form="loop", T=8),
    lp.Spelling(form="loop", contraction="named", loss="mse"),
    lp.Spelling(form="loop", weight="const", orientation="w_xt", T=16),
    # the same loop as an scf.while that counts the chunk offset itself
    lp.Spelling(form="while", T=8),
    lp.Spelling(form="while", contraction="named", loss="mse"),
    lp.Spelling(form="while", weight="const", orientation="w_xt", T=16),
    # A do-while (torch-mlir's while_loop): the condition carried from the end of the
    # body, the first one computed before the loop; read with the condition computed
    # at the start of each iteration (the same constant, or the same ops on the first
    # values when the length is known at run time only).
    lp.Spelling(form="dowhile", T=8),
    lp.Spelling(form="dowhile", contraction="named", loss="mse", T=10),
    lp.Spelling(form="dowhile", dynamic=True, weight="const", orientation="w_xt", T=16),
    lp.Spelling(form="dowhile", dynamic=True, partial_chunks=True, dynamic_batch=True,
                loss="mse", T=10),
    # bounds computed from the queries' static length
    lp.Spelling(form="loop", bounds="computed", T=16),
    # a partial last chunk in the scf.for: its size an affine.min of the counter
    lp.Spelling(form="loop", T=10),
    lp.Spelling(form="loop", contraction="named", loss="mse", T=10),
    lp.Spelling(form="loop", weight="const", orientation="w_xt", T=15),
    lp.Spelling(form="while", loss="mse", T=10),
    lp.Spelling(form="while", bounds="computed", loss="mse"),
    # a sequence length known at run time only: the loop runs to tensor.dim of
    # the queries, the output buffer is a tensor.empty of that length
    lp.Spelling(form="loop", dynamic=True),
    lp.Spelling(form="loop", dynamic=True, contraction="named", loss="mse", T=8),
    lp.Spelling(form="while", dynamic=True, weight="const", orientation="w_xt", T=16),
    # ... and chunks of min(C, T - i) tokens: any length, a partial last chunk too
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, T=10),
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, loss="mse", T=10),
    lp.Spelling(form="while", dynamic=True, partial_chunks=True, orientation="w_xt", T=15),
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, contraction="named",
                loss="mse", T=10),
    # an scf.while that advances by its chunk's length min(C, T - i): read counted
    lp.Spelling(form="while", dynamic=True, partial_chunks=True, advance="chunk",
                loss="mse", T=10),
    lp.Spelling(form="while", advance="chunk", orientation="w_xt", T=10),
    # a batch of run-time size (each input's batch `?`, one fast weight per entry),
    # unrolled over a static length and in loops to a run-time length
    lp.Spelling(dynamic_batch=True),
    lp.Spelling(dynamic_batch=True, contraction="named", loss="mse", T=10),
    lp.Spelling(dynamic_batch=True, orientation="w_xt", assembly="concat"),
    lp.Spelling(form="loop", dynamic_batch=True, loss="mse", T=8),
    lp.Spelling(form="loop", dynamic=True, dynamic_batch=True),
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, dynamic_batch=True,
                contraction="named", loss="mse", T=10),
    lp.Spelling(form="while", dynamic=True, dynamic_batch=True, contraction="named", T=8),
    lp.Spelling(form="while", dynamic=True, partial_chunks=True, dynamic_batch=True,
                orientation="w_xt", T=15),
    lp.Spelling(form="while", dynamic=True, partial_chunks=True, advance="chunk",
                dynamic_batch=True, loss="mse", T=10),
    # heads of run-time size (the fast weight an argument with the queries' heads),
    # with a static or run-time batch and length; batch_matmul on [B*H] chunks when
    # one of batch and heads is static
    lp.Spelling(dynamic_heads=True),
    lp.Spelling(dynamic_heads=True, contraction="named", loss="mse", T=10),
    lp.Spelling(dynamic_heads=True, orientation="w_xt", assembly="concat"),
    lp.Spelling(form="loop", dynamic=True, dynamic_heads=True),
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, dynamic_heads=True,
                contraction="named", T=10),
    lp.Spelling(form="while", dynamic=True, dynamic_heads=True, contraction="named", T=8),
    lp.Spelling(form="loop", dynamic_batch=True, dynamic_heads=True, loss="mse", T=8),
    lp.Spelling(form="loop", dynamic=True, partial_chunks=True, dynamic_batch=True,
                dynamic_heads=True, orientation="w_xt", T=10),
]
DYNAMIC = [s for s in SPELLINGS if s.dynamic]
DYNAMIC_BATCH = [s for s in SPELLINGS if s.dynamic_batch and not s.dynamic_heads]
DYNAMIC_HEADS = [s for s in SPELLINGS if s.dynamic_heads]
UPSTREAM = ("func.", "arith.", "linalg.", "tensor.", "scf.", "math.", "affine.")


def _inputs(s: lp.Spelling, seed: int, kv_extra: int = 0, batch: int = lp.B,
            heads: int = lp.H):
    """Fresh inputs and the oracle's output; `kv_extra` more keys and values
    than queries (which a chunk loop over the queries never reads); `batch`
    entries and `heads` heads (for a program whose batch or heads are of
    run-time size)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, 1, (batch, heads, s.T, lp.D)).astype(np.float32)
    k = rng.normal(0, 0.5, (batch, heads, s.T + kv_extra, lp.D)).astype(np.float32)
    v = rng.normal(0, 1, (batch, heads, s.T + kv_extra, lp.E)).astype(np.float32)
    args = [q, k, v]
    w0 = lp.initial_weight(s)
    if s.weight == "arg":
        w0 = rng.normal(0, 0.5, (batch, heads) + w0.shape[2:]).astype(np.float32)
        args.append(w0)
    return args, lp.ttt_oracle(s, q, k[:, :, :s.T], v[:, :, :s.T], w0)


def _rel(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _ops(text: str):
    return set(re.findall(r"= ([a-z_]+\.[a-z_.]+)", text))


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: f"{s.name}_T{s.T}")
def test_a_hand_written_linalg_layer_is_raised_and_rewritten_exactly(spelling, tmp_path):
    program = lp.ttt_program(spelling)
    args, want = _inputs(spelling, seed=spelling.T)
    (original,) = run_function(program, args, _dir(tmp_path / "original"))
    assert _rel(original, want) <= RTOL  # the program is the layer

    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks
    assert raised.count("ttt.kvb_layer") == 1, raised
    assert "linalg.generic" not in raised and "batch_matmul" not in raised, raised
    assert "scf.for" not in raised and "scf.while" not in raised, raised

    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert all(op.startswith(UPSTREAM) for op in _ops(optimized)), _ops(optimized)
    args, want = _inputs(spelling, seed=spelling.T + 100)
    (got,) = run_function(optimized, args, _dir(tmp_path / "optimized"))
    assert _rel(got, want) <= RTOL


@pytest.mark.parametrize("name, program, expected", [
    ("rnn", lp.rnn_cell(), "no TTT layer found"),
    ("chunk_sums", lp.chunk_sums(), "no TTT layer found"),
    ("rnn_loop", lp.rnn_loop(), "no TTT layer found"),
    ("rnn_while", lp.rnn_loop(form="while"), "no TTT layer found"),
    ("sum_loop", lp.sum_loop(), "no TTT layer found"),
    # Read unrolled for its partial last chunk, and left as written.
    ("sum_loop_partial", lp.sum_loop(T=10), "no TTT layer found"),
    ("tanh_output", lp.ttt_program(lp.Spelling(tanh_output=True)),
     "left as it was: its output depends non-linearly on the trained fast weights"),
])
def test_ordinary_recurrences_and_non_linear_outputs_are_left(name, program, expected,
                                                              tmp_path):
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert expected in remarks, remarks
    assert raised == same


@pytest.mark.parametrize("spelling", DYNAMIC, ids=lambda s: f"{s.name}_T{s.T}")
def test_a_layer_of_run_time_length_is_exact_at_other_lengths(spelling, tmp_path):
    """The raised layer of a program whose length is `?` is the program at every
    length it runs at (whole chunks), also when the keys and values are longer
    than the queries: the program reads only as many of them."""
    program = lp.ttt_program(spelling)
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert "ttt." not in optimized and "?x" in optimized  # lowered, still dynamic
    lengths = [(1, 0), (5, 0), (3, spelling.C + 1)]
    if spelling.partial_chunks:
        lengths += [(2, 0), (1, 0), (6, 1)]  # lengths C·n + 1 .. C·n + 3
    for n, (chunks, kv_extra) in enumerate(lengths):
        extra_tokens = 0 if n < 3 else n - 2
        s = dataclasses.replace(spelling, T=chunks * spelling.C + extra_tokens)
        args, want = _inputs(s, seed=chunks + kv_extra, kv_extra=kv_extra)
        name = f"T{s.T}_extra{kv_extra}"
        (original,) = run_function(program, args, _dir(tmp_path / name / "original"))
        assert _rel(original, want) <= RTOL
        (got,) = run_function(optimized, args, _dir(tmp_path / name / "optimized"))
        assert _rel(got, want) <= RTOL, name


@pytest.mark.parametrize("spelling", DYNAMIC_BATCH, ids=lambda s: f"{s.name}_T{s.T}")
def test_a_layer_of_run_time_batch_is_exact_at_other_batches(spelling, tmp_path):
    """The raised layer of a program whose batch (and length) is `?` is the program
    at every batch, and with a run-time length at other lengths too."""
    program = lp.ttt_program(spelling)
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert "ttt." not in optimized and "tensor<?x2x" in optimized  # lowered, still dynamic
    lengths = [spelling.T]
    if spelling.dynamic:
        lengths += [spelling.C, 3 * spelling.C + (1 if spelling.partial_chunks else 0)]
    for batch, T in [(1, lengths[0]), (3, lengths[-1]), (2, lengths[len(lengths) // 2])]:
        s = dataclasses.replace(spelling, T=T)
        args, want = _inputs(s, seed=10 * batch + T, batch=batch)
        name = f"B{batch}_T{T}"
        (original,) = run_function(program, args, _dir(tmp_path / name / "original"))
        assert _rel(original, want) <= RTOL
        (got,) = run_function(optimized, args, _dir(tmp_path / name / "optimized"))
        assert _rel(got, want) <= RTOL, name


@pytest.mark.parametrize("spelling", DYNAMIC_HEADS, ids=lambda s: f"{s.name}_T{s.T}")
def test_a_layer_of_run_time_heads_is_exact_at_other_head_counts(spelling, tmp_path):
    """The raised layer of a program whose heads (and batch, length) are `?` is the
    program at every head count, batch and length it runs at."""
    program = lp.ttt_program(spelling)
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert "ttt." not in optimized and re.search(r"tensor<(1|\?)x\?x", optimized)
    lengths = [spelling.T]
    if spelling.dynamic:
        lengths += [spelling.C, 3 * spelling.C + (1 if spelling.partial_chunks else 0)]
    batches = [1, 3, 2] if spelling.dynamic_batch else [lp.B] * 3
    for heads, batch, T in zip([1, 3, 5], batches, [lengths[0], lengths[-1],
                                                    lengths[len(lengths) // 2]]):
        s = dataclasses.replace(spelling, T=T)
        args, want = _inputs(s, seed=100 * heads + 10 * batch + T, batch=batch, heads=heads)
        name = f"H{heads}_B{batch}_T{T}"
        (original,) = run_function(program, args, _dir(tmp_path / name / "original"))
        assert _rel(original, want) <= RTOL
        (got,) = run_function(optimized, args, _dir(tmp_path / name / "optimized"))
        assert _rel(got, want) <= RTOL, name


def test_a_merged_batch_and_heads_both_of_run_time_size_is_left_with_the_reason(tmp_path):
    """batch_matmul on [B*H] chunks with batch and heads both `?`: the expand back to
    [B, H, ..] splits one run-time size into two, which the reading does not
    translate; the remark names that op and the program is left as written."""
    program = lp.ttt_program(lp.Spelling(dynamic_batch=True, dynamic_heads=True,
                                         contraction="named", T=8))
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert ("left as it was: its output passes through tensor.expand_shape, which ttt "
            "does not read (it splits or merges several dims of run-time size)") in remarks
    assert raised == same


@pytest.mark.parametrize("spelling", DYNAMIC_BATCH[:1] + DYNAMIC_BATCH[-2:],
                         ids=lambda s: f"{s.name}_T{s.T}")
def test_keys_of_a_larger_batch_are_cut_to_the_queries_batch(spelling, tmp_path):
    """The program slices the keys and values to the queries' batch (their
    tensor.dim): given more, it reads the first ones, and so must the raised layer."""
    program = lp.ttt_program(spelling)
    raised = run_opt(program, "--ttt-raise-linalg")
    assert raised.count("ttt.kvb_layer") == 1, raised
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    s = dataclasses.replace(spelling, T=2 * spelling.C if spelling.dynamic else spelling.T)
    args, _ = _inputs(s, seed=5, batch=3)
    q, k, v, w0 = args
    want = lp.ttt_oracle(s, q[:2], k[:2], v[:2], w0[:2])
    args = [q[:2], k, v, w0[:2]]
    (original,) = run_function(program, args, _dir(tmp_path / "original"))
    assert _rel(original, want) <= RTOL
    (got,) = run_function(optimized, args, _dir(tmp_path / "optimized"))
    assert _rel(got, want) <= RTOL


@pytest.mark.parametrize("contraction", ["generic", "named"])
def test_a_layer_whose_later_update_reads_an_earlier_chunk_is_left(contraction):
    """Three chunks whose second update reads the first chunk's keys and values
    again (W_2 = W_1 + k_0^T v_0): no prefix sum of the chunks' updates, so the
    program is left as it was, with the reason."""
    program = lp.ttt_program(lp.Spelling(contraction=contraction, T=12, C=4))
    second = re.compile(r"(tensor\.extract_slice %[kv]\[0, 0, )4(, 0\])")
    assert len(second.findall(program)) == 2, "the second chunk's keys and values"
    mutant = second.sub(r"\g<1>0\2", program)
    same = run_opt(mutant)
    raised, remarks = run_opt(mutant, "--ttt-raise-linalg", stderr=True)
    assert "left as it was: no ttt.kvb_layer form: its update after chunk 1 reads " \
           "other tokens than that chunk's" in remarks, remarks
    assert raised == same


def test_the_tanh_output_program_is_what_its_oracle_says(tmp_path):
    """The negative above is a real layer with a non-linear output, not a broken one."""
    s = lp.Spelling(tanh_output=True)
    args, want = _inputs(s, seed=3)
    (got,) = run_function(lp.ttt_program(s), args, tmp_path)
    assert _rel(got, want) <= RTOL


_DYNAMIC_PARTIAL = lp.Spelling(form="loop", dynamic=True, partial_chunks=True, T=10)
_T_OF_K = "%cK = tensor.dim %k, %c2 : tensor<1x2x?x4xf32>\n  "


def test_a_loop_over_the_keys_length_reads_the_queries_over_it(tmp_path):
    """A loop that runs to the keys' run-time length and fills a buffer as long:
    it reads that many queries (queries longer than the keys are cut; shorter
    ones would be read past their end, which has no meaning to keep). The layer
    reads the queries cut to the keys' length, and computes what the program
    computes on queries longer than the keys."""
    program = lp.ttt_program(_DYNAMIC_PARTIAL).replace(
        "%cT = tensor.dim %q", "%cT = tensor.dim %k", 1)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks
    assert "scf.for" not in raised, raised
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    rng = np.random.default_rng(17)
    t_k = _DYNAMIC_PARTIAL.T
    q = rng.normal(0, 1, (lp.B, lp.H, t_k + 3, lp.D)).astype(np.float32)
    k = rng.normal(0, 0.5, (lp.B, lp.H, t_k, lp.D)).astype(np.float32)
    v = rng.normal(0, 1, (lp.B, lp.H, t_k, lp.E)).astype(np.float32)
    w0 = rng.normal(0, 0.5, (lp.B, lp.H, lp.D, lp.E)).astype(np.float32)
    want = lp.ttt_oracle(_DYNAMIC_PARTIAL, q[:, :, :t_k], k, v, w0)
    (written,) = run_function(program, [q, k, v, w0], _dir(tmp_path / "original"))
    assert _rel(written, want) <= RTOL  # the program is the layer on q[:T_k]
    (got,) = run_function(optimized, [q, k, v, w0], _dir(tmp_path / "optimized"))
    assert np.asarray(got).shape == want.shape
    assert _rel(got, want) <= RTOL


@pytest.mark.parametrize("name, old, new, expected", [
    # the output buffer as long as the keys, not the queries
    ("buffer_of_k", "%buf0 = tensor.empty(%cT)", _T_OF_K + "%buf0 = tensor.empty(%cK)",
     "a buffer that is not proven to be as long as the sequence"),
    # steps of 5 over chunks of min(4, T - i): tokens skipped
    ("step_5", "%cC = arith.constant 4 : index", "%cC = arith.constant 5 : index",
     "do not cut the sequence into consecutive chunks"),
    # chunks of min(3, T - i) at steps of 4: tokens skipped
    ("chunks_of_3", "(4, s0 - d0)", "(3, s0 - d0)",
     "do not cut the sequence into consecutive chunks"),
])
def test_a_run_time_length_loop_that_does_not_walk_the_queries_is_left(name, old, new,
                                                                       expected):
    """The soundness checks of the ONNX raise hold for loops of run-time length: a
    loop whose chunks or buffer are not proven to cover the queries' tokens, for
    every length, is left as written."""
    program = lp.ttt_program(_DYNAMIC_PARTIAL)
    assert old in program
    program = program.replace(old, new, 1)
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert expected in remarks, remarks
    assert raised == same


def test_a_loop_over_the_keys_length_is_one_over_that_length(tmp_path):
    """A loop whose length, chunk ends and output buffer come from the keys reads the
    queries over the keys' tokens only: ttt-form-chunk-loops makes it a chunk loop over
    the keys' length, and the layer raised from it reads the queries cut to it. The
    original program is the oracle, on queries longer than the keys."""
    program = lp.ttt_program(_DYNAMIC_PARTIAL).replace(
        "%cT = tensor.dim %q", "%cT = tensor.dim %k", 1)
    raised, remarks = run_opt(program, "--ttt-form-chunk-loops", "--ttt-raise-chunk-loops",
                              stderr=True)
    assert "ttt.kvb_layer" in raised and "scf.for" not in raised, remarks
    rng = np.random.default_rng(11)
    for t_q, t_k in ((13, 10), (10, 10), (9, 3)):
        args = [rng.standard_normal((1, 2, t, 4)).astype(np.float32)
                for t in (t_q, t_k, t_k)]
        args.append(rng.standard_normal((1, 2, 4, 4)).astype(np.float32) * 0.5)
        (want,) = run_function(program, args, tmp_path)
        (got,) = run_function(raised, args, tmp_path)
        assert got.shape == want.shape == (1, 2, t_k, 4)
        assert _rel(got, want) <= RTOL


def test_a_while_whose_last_counter_is_read_is_not_read_as_stepping_by_c(tmp_path):
    """Advancing by min(C, T - i) and by C pass through the same counters, but end at T
    and at a multiple of C: a loop whose last counter is read (here the length of the
    output it returns) is not read as counted, and is left as written."""
    program = lp.ttt_program(lp.Spelling(form="while", dynamic=True, partial_chunks=True,
                                         advance="chunk", T=10))
    ret = "  return %r#2 : tensor<1x2x?x4xf32>"
    assert ret in program
    program = program.replace(ret, (
        "  %cut = tensor.extract_slice %r#2[0, 0, 0, 0] [1, 2, %r#0, 4] [1, 1, 1, 1] : "
        "tensor<1x2x?x4xf32> to tensor<1x2x?x4xf32>\n"
        "  return %cut : tensor<1x2x?x4xf32>"))
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert "no TTT layer found" in remarks, remarks
    assert raised == same
