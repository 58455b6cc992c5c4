"""torch-mlir's linalg-on-tensors lowering of the reference modules (test/fixtures/linalg/,
made by python/scripts/make_linalg_fixtures.py) through `ttt-raise-linalg` and
`ttt-optimize-linalg`.

Every fixture first runs as torch-mlir wrote it (ttt-run) against PyTorch's eager output
stored with it (1e-4: two fp32 implementations), so the program is the layer. The layers the raise reads are replaced by
one `ttt.kvb_layer`, and the optimized program (upstream dialects only) matches PyTorch's
output and, on fresh random inputs, the original program within 1e-5. The others are
found and left with the raise's reason, and the pipeline leaves their program as it was.

The same modules exported with a dynamic batch (test/fixtures/linalg/dynamic_batch/:
every input's batch its own run-time size, broadcasts between them spelled as gathers
and expands) are raised alike; the raised program asserts the batch sizes it takes as
equal, matches the original at batch 1, 2 and 3, and stops with that message on a call
whose batches differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import run_function, run_opt  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "linalg"
RTOL = 1e-5
# Two fp32 implementations of one layer (PyTorch eager, the compiled program) round
# differently; through TTT-MLP's LayerNorm and gelu that reaches ~5e-5.
RTOL_TWO_IMPLEMENTATIONS = 1e-4
UPSTREAM = ("func.", "arith.", "linalg.", "tensor.", "scf.", "math.", "affine.")
# The fixtures whose layer the raise replaces; the rest are found and left with a reason.
RAISED = {
    "linear_dot", "linear_mse", "lact_v2", "lact_v3", "lact_v5", "lact_v6",
    "research_linear_dot_bmm_fold", "research_linear_dot_einsum",
    "research_linear_dot_outin", "research_linear_dot_prealloc", "research_linear_mse_xwt",
    "block_v4", "block_v6",
    # torch's while_loop (python/ttt/models/loops.py): torch-mlir's scf.while.
    "linear_mse_while", "lact_v3_while", "lact_v5_while", "lact_v6_while",
}
NAMES = sorted(p.stem for p in FIXTURES.glob("*.mlir"))
# Why the raise leaves the others: TTT-Linear and the ViT³ GLU branch are read (only their
# recurrent form is exact); torch-mlir's gelu is not gelu (its tanh approximation scales
# by 0.7977240 for sqrt(2/pi)), so TTT-MLP is not read as TTT-MLP.
LEFT_BECAUSE = {
    "ttt_linear": "as a ttt.kvb_layer: exact lowering: chunk-sequential loop",
    "vit3_glu": "as a ttt.kvb_layer: exact lowering: single full-batch step",
    "ttt_mlp": "its activation is gelu's tanh approximation with sqrt(2/pi) written 0.7977240",
}


def _load(name: str, folder: Path = FIXTURES):
    program = (folder / f"{name}.mlir").read_text()
    with np.load(folder / f"{name}.npz") as data:
        args = [data[f"arg{i}"] for i in range(len(data.files) - 1)]
        want = data["o"]
    return program, args, want


def _fresh(args, seed: int):
    """Fresh inputs drawn like the stored ones: rates (non-negative) uniform up to
    their maximum, the rest normal with their spread."""
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0, a.max(), a.shape) if a.min() >= 0
             else rng.normal(0, a.std(), a.shape)).astype(np.float32) for a in args]


def _rel(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


def _ops(text: str):
    return set(re.findall(r"= ([a-z_]+\.[a-z_.]+)", text))


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_the_fixtures_are_there():
    assert RAISED <= set(NAMES), sorted(RAISED - set(NAMES))
    assert set(LEFT_BECAUSE) == set(NAMES) - RAISED, sorted(set(NAMES) - RAISED)
    assert len(NAMES) >= 10, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_torch_mlir_program_is_its_pytorch_module(name, tmp_path):
    program, args, want = _load(name)
    (got,) = run_function(program, args, tmp_path)
    assert _rel(got, want) <= RTOL_TWO_IMPLEMENTATIONS


@pytest.mark.parametrize("name", sorted(RAISED))
def test_a_torch_mlir_layer_is_raised_and_rewritten_exactly(name, tmp_path):
    program, args, want = _load(name)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks
    assert raised.count("ttt.kvb_layer") == 1, remarks
    # The layer's chunk products go with it; a block's softmax attention keeps its two
    # (q k^T and its probabilities times v, python/ttt/models/blocks.py).
    assert raised.count("linalg.batch_matmul") == (2 if name.startswith("block_") else 0)
    # torch-mlir's while loop over the chunks goes with the layer it computed.
    assert "scf.while" not in raised and "scf.for" not in raised, raised

    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert all(op.startswith(UPSTREAM) for op in _ops(optimized)), _ops(optimized)
    (got,) = run_function(optimized, args, _dir(tmp_path / "stored"))
    assert _rel(got, want) <= RTOL_TWO_IMPLEMENTATIONS

    fresh = _fresh(args, seed=len(name))
    (expected,) = run_function(program, fresh, _dir(tmp_path / "original"))
    (got,) = run_function(optimized, fresh, _dir(tmp_path / "fresh"))
    assert _rel(got, expected) <= RTOL


@pytest.mark.parametrize("name", sorted(set(NAMES) - RAISED))
def test_a_torch_mlir_layer_the_raise_cannot_read_is_left_with_its_reason(name):
    program, _, _ = _load(name)
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert re.search(r"TTT layer: .*: left as it was: \S", remarks), remarks
    assert LEFT_BECAUSE[name] in remarks, remarks
    assert "ttt.kvb_layer" not in raised
    assert raised == same


def test_torch_mlir_ttt_mlp_with_gelu_written_exactly_is_read():
    """The shadow graph reads the rest of torch-mlir's TTT-MLP (its gelu cubes with
    math.fpowi, its gelu' is PyTorch's): with gelu's own sqrt(2/pi) the layer is read
    as the ONNX raise reads the ONNX export, found and left (only the chunk-sequential
    loop is exact)."""
    program, _, _ = _load("ttt_mlp")
    torch_mlir_scale = "arith.constant 7.977240e-01 : f32"
    assert program.count(torch_mlir_scale) == 1
    program = program.replace(torch_mlir_scale, "arith.constant 0.797884583 : f32")
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert ("as a ttt.kvb_layer: exact lowering: chunk-sequential loop; proven: output "
            "layer W1 is linear with its bias as a constant feature") in remarks, remarks
    assert "not rewritten: only the chunk-sequential loop is exact" in remarks, remarks
    assert "ttt.kvb_layer" not in raised


DYNAMIC = FIXTURES / "dynamic_batch"
DYNAMIC_NAMES = sorted(p.stem for p in DYNAMIC.glob("*.mlir"))
ASSERTED = "ttt: the raised TTT layer takes these two sizes as equal"


def _with_batch(args, batch: int, seed: int):
    """Fresh inputs like `args` (batch first), `batch` samples each."""
    return _fresh([np.broadcast_to(a[:1], (batch,) + a.shape[1:]) for a in args], seed)


def test_every_fixture_has_a_dynamic_batch_twin():
    assert DYNAMIC_NAMES == NAMES


@pytest.mark.parametrize("name", DYNAMIC_NAMES)
def test_a_dynamic_batch_program_is_its_pytorch_module(name, tmp_path):
    program, args, want = _load(name, DYNAMIC)
    assert re.search(r"func\.func @\w+\(%arg0: tensor<\?x", program), "batch not dynamic"
    (got,) = run_function(program, args, tmp_path)
    assert _rel(got, want) <= RTOL_TWO_IMPLEMENTATIONS


@pytest.mark.parametrize("name", sorted(RAISED))
def test_a_dynamic_batch_layer_is_raised_and_rewritten_exactly(name, tmp_path):
    program, args, want = _load(name, DYNAMIC)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert "raised to ttt.kvb_layer (linear attention" in remarks, remarks
    assert raised.count("ttt.kvb_layer") == 1, remarks
    # torch-mlir's broadcast of one batch against another (`size == 1 ? 0 : i`)
    # is read as equal batches, which the raised program asserts.
    if re.search(r"arith\.cmpi eq, %\w+, %c1 : index", program):
        assert ASSERTED in raised, "the batch sizes taken as equal are not asserted"

    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    assert all(op.startswith(UPSTREAM + ("cf.",)) for op in _ops(optimized)), _ops(optimized)
    (got,) = run_function(optimized, args, _dir(tmp_path / "stored"))
    assert _rel(got, want) <= RTOL_TWO_IMPLEMENTATIONS
    for batch in (1, 2, 3):
        fresh = _with_batch(args, batch, seed=len(name) + batch)
        (expected,) = run_function(program, fresh, _dir(tmp_path / f"original{batch}"))
        (got,) = run_function(optimized, fresh, _dir(tmp_path / f"optimized{batch}"))
        assert got.shape[0] == batch
        assert _rel(got, expected) <= RTOL, batch


@pytest.mark.parametrize("name", sorted(set(NAMES) - RAISED))
def test_a_dynamic_batch_layer_the_raise_cannot_read_is_left_with_its_reason(name):
    program, _, _ = _load(name, DYNAMIC)
    same = run_opt(program)
    raised, remarks = run_opt(program, "--ttt-raise-linalg", stderr=True)
    assert re.search(r"TTT layer: .*: left as it was: \S", remarks), remarks
    assert LEFT_BECAUSE[name] in remarks, remarks
    assert raised == same


def test_a_call_whose_batches_differ_stops_at_the_assertion(tmp_path):
    """Queries of batch 1 with keys and values of batch 2: the program torch-mlir
    wrote broadcasts the queries (its gathers read row 0), the raised layer takes
    the batches as equal, so it stops with its message instead of computing
    something else."""
    program, args, _ = _load("lact_v6", DYNAMIC)
    q, k, v = _with_batch(args, 2, seed=7)
    mixed = [q[:1], k, v]
    (expected,) = run_function(program, mixed, _dir(tmp_path / "original"))
    assert expected.shape[0] == 2
    optimized = run_opt(program, "--pass-pipeline=builtin.module(ttt-optimize-linalg)")
    with pytest.raises(RuntimeError, match="takes these two sizes as equal"):
        run_function(optimized, mixed, _dir(tmp_path / "optimized"))
