"""ttt-reroll-chunks on torch-mlir's unrolled programs of the reference modules
(test/fixtures/linalg/, lowered from PyTorch by torch-mlir, not written for this pass):
the steps that repeat become one ttt.chunk_loop, and the program still computes what
PyTorch computed (the output stored with each fixture); where ttt-raise-chunk-loops then
reads a layer, the ttt.kvb_layer computes it too, in both of its forms."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from compiler import run_function, run_opt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "linalg"
# Two fp32 implementations of one layer (PyTorch eager, the compiled program).
RTOL = 1e-4
# The unrolled fixtures (the *_while ones are loops already); what the new path does
# with each today, asserted below so that a change in either direction is seen.
# Raised: the tokens the ttt.kvb_layer covers (all of them where the first step is the
# general one from a window-free state: the first step is folded in, and a shorter last
# chunk that is the same step on fewer tokens joins the loop, as in the linear_dot
# fixtures' 36 tokens in chunks of 8).
ROLLED_AND_RAISED = {"block_v6": 64, "lact_v6": 64, "linear_dot": 36, "linear_mse": 40,
                     "research_linear_dot_bmm_fold": 36, "research_linear_dot_einsum": 36,
                     "research_linear_dot_outin": 36, "research_linear_mse_xwt": 40,
                     # outputs written into a preallocated buffer by insert_slice
                     "research_linear_dot_prealloc": 36,
                     # Muon: the update orthogonalized by Newton-Schulz steps (the
                     # first step, with its own orthogonalization, stays unrolled)
                     "lact_v5": 48}
ROLLED_ONLY = {"block_v4", "lact_v2", "lact_v3", "ttt_linear", "ttt_mlp"}
NOT_ROLLED = {"vit3_glu": "no tensor is cut into three or more consecutive windows"}


def _load(name: str):
    with np.load(FIXTURES / f"{name}.npz") as data:
        args = [data[f"arg{i}"] for i in range(len(data.files) - 1)]
        want = data["o"]
    return (FIXTURES / f"{name}.mlir").read_text(), args, want


def _rel(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


@pytest.mark.parametrize("name", sorted(set(ROLLED_AND_RAISED) | ROLLED_ONLY | set(NOT_ROLLED)))
def test_rerolled_fixture(name, tmp_path):
    program, args, want = _load(name)
    rolled, remarks = run_opt(program, "--ttt-reroll-chunks=explain", stderr=True)
    if name in NOT_ROLLED:
        assert "ttt.chunk_loop" not in rolled and NOT_ROLLED[name] in remarks, remarks
        return
    assert rolled.count("ttt.chunk_loop") == 1, remarks
    assert _rel(run_function(rolled, args, tmp_path), want) <= RTOL
    raised, remarks = run_opt(rolled, "--ttt-raise-chunk-loops=explain", stderr=True)
    if name in ROLLED_ONLY:
        assert "not a ttt.kvb_layer" in remarks and "ttt.kvb_layer" not in raised, remarks
        return
    assert raised.count("ttt.kvb_layer") == 1 and "ttt.chunk_loop" not in raised, remarks
    layer = re.search(r"ttt\.kvb_layer [^:]*: tensor<\d+x\d+x(\d+)x", raised)
    assert layer and int(layer.group(1)) == ROLLED_AND_RAISED[name], layer
    for form in ("recurrent", "parallel"):
        assert _rel(run_function(raised, args, tmp_path, form=form), want) <= RTOL, form


DYNAMIC_BATCH = FIXTURES / "dynamic_batch"


@pytest.mark.parametrize("name", sorted(p.stem for p in DYNAMIC_BATCH.glob("*.mlir")))
def test_dynamic_batch_fixture_rolled_or_left(name, tmp_path):
    """The same modules lowered with every input's batch of run-time size: whatever
    the new route does with one (rolls it, raises it, or leaves it with a reason),
    it writes a valid program that computes what PyTorch computed."""
    program = (DYNAMIC_BATCH / f"{name}.mlir").read_text()
    with np.load(DYNAMIC_BATCH / f"{name}.npz") as data:
        args = [data[f"arg{i}"] for i in range(len(data.files) - 1)]
        want = data["o"]
    out, remarks = run_opt(program, "--ttt-reroll-chunks=explain",
                           "--ttt-raise-chunk-loops=explain", stderr=True)
    assert "remark:" in remarks
    if "ttt." not in out:
        assert "no chunk loop rerolled" in remarks, remarks
        return  # left as it was: nothing new to run
    assert _rel(run_function(out, args, tmp_path), want) <= RTOL


def test_the_new_passes_keep_every_valid_program_valid():
    """The formers and the reader on every valid program of the test suite and the
    examples (layers, ordinary recurrences, GPU and CPU pipelines' inputs): they rewrite
    what they prove, leave the rest, and never write an op that does not verify."""
    repo = Path(__file__).resolve().parents[2]
    files = sorted([*repo.glob("test/**/*.mlir"), *repo.glob("examples/*.mlir")])
    checked = 0
    for path in files:
        text = path.read_text()
        try:
            run_opt(text, "--split-input-file")
        except RuntimeError:
            continue  # an input that is invalid on purpose (verifier tests)
        for passes in (("--ttt-reroll-chunks", "--ttt-form-chunk-loops",
                        "--ttt-raise-chunk-loops"),
                       ("--ttt-form-chunk-loops", "--ttt-raise-chunk-loops",
                        "--ttt-lower-recurrent")):
            run_opt(text, "--split-input-file", *passes)  # raises on any failure
        checked += 1
    assert checked >= 100, checked
