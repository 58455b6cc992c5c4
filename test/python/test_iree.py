"""ttt between two stages of another compiler: `ttt-optimize-linalg`'s output compiled by
IREE (`iree-compile`, the llvm-cpu backend) and run by IREE's runtime
(`iree-run-module`) computes what IREE computes for the original linalg program, and
the layer's NumPy oracle, within 1e-5; for torch-mlir's lowering of the PyTorch modules
(test/fixtures/linalg/), PyTorch's own output too: torch-mlir -> ttt -> IREE.

The IREE tools come from the `iree-base-compiler` and `iree-base-runtime` wheels:
`make check-iree` installs them into $(BUILD_DIR)/iree-venv and runs this file with
TTT_IREE_BIN pointing there. Without them (plain `make test`) every test is skipped
with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linalg_programs as lp  # noqa: E402
from compiler import run_opt  # noqa: E402


def _iree_tool(name: str):
    folder = os.environ.get("TTT_IREE_BIN")
    path = Path(folder) / name if folder else shutil.which(name)
    return Path(path) if path and Path(path).exists() else None


COMPILE, RUN = _iree_tool("iree-compile"), _iree_tool("iree-run-module")
pytestmark = pytest.mark.skipif(
    COMPILE is None or RUN is None,
    reason="iree-compile / iree-run-module not found (make check-iree installs the "
           "iree-base-compiler and iree-base-runtime wheels and sets TTT_IREE_BIN)")

SPELLINGS = [lp.Spelling(), lp.Spelling(contraction="named", assembly="concat"),
             lp.Spelling(loss="mse", T=10),
             # a length known at run time, chunks of min(C, T - i) tokens
             lp.Spelling(form="loop", dynamic=True, partial_chunks=True, loss="mse", T=10)]


def _run_in_iree(mlir: Path, args, workdir: Path, function: str = "layer") -> np.ndarray:
    module = workdir / (mlir.stem + ".vmfb")
    subprocess.run([str(COMPILE), str(mlir), "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=host", "-o", str(module)],
                   check=True, capture_output=True, text=True, timeout=600)
    cmd = [str(RUN), f"--module={module}", "--device=local-task", f"--function={function}"]
    for i, a in enumerate(args):
        np.save(workdir / f"arg{i}.npy", a)
        cmd.append(f"--input=@{workdir / f'arg{i}.npy'}")
    out = workdir / (mlir.stem + ".out.npy")
    subprocess.run(cmd + [f"--output=@{out}"], check=True, capture_output=True,
                   text=True, timeout=600)
    return np.load(out)


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: f"{s.name}_T{s.T}")
def test_the_optimized_program_runs_in_iree_as_the_original(spelling, tmp_path):
    program = lp.ttt_program(spelling)
    original = tmp_path / "original.mlir"
    original.write_text(program)
    optimized = tmp_path / "optimized.mlir"
    optimized.write_text(run_opt(program,
                                 "--pass-pipeline=builtin.module(ttt-optimize-linalg)"))
    assert "ttt." not in optimized.read_text().split("module", 1)[1]
    rng = np.random.default_rng(spelling.T)
    args = [rng.normal(0, 1, (lp.B, lp.H, spelling.T, lp.D)).astype(np.float32)
            for _ in range(3)]
    args.append(rng.normal(0, 0.5, lp.initial_weight(spelling).shape).astype(np.float32))
    want = lp.ttt_oracle(spelling, *args)
    reference = _run_in_iree(original, args, tmp_path)
    got = _run_in_iree(optimized, args, tmp_path)
    scale = np.abs(want).max()
    assert np.abs(reference - want).max() / scale <= 1e-5
    assert np.abs(got - reference).max() / scale <= 1e-5


# linear_dot has a partial last chunk (36 tokens in chunks of 8); the dynamic_batch one
# asserts the batch sizes it takes as equal (cf.assert, which IREE keeps); block_v6 is a
# whole transformer block whose softmax attention and MLP stay as torch-mlir wrote them.
TORCH_MLIR_FIXTURES = ["linear_dot", "lact_v5", "research_linear_dot_einsum",
                       "dynamic_batch/lact_v5", "block_v6", "lact_v5_while"]


@pytest.mark.parametrize("name", TORCH_MLIR_FIXTURES)
def test_torch_mlir_to_ttt_to_iree(name, tmp_path):
    """torch-mlir's program of a PyTorch module, optimized by ttt, compiled and run by
    IREE: PyTorch's output (1e-4, two fp32 implementations) and IREE's run of the
    original program (1e-5)."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "linalg"
    original = fixtures / f"{name}.mlir"
    function = Path(name).name
    with np.load(fixtures / f"{name}.npz") as data:
        args = [data[f"arg{i}"] for i in range(len(data.files) - 1)]
        torch_out = data["o"]
    optimized = tmp_path / f"{function}.opt.mlir"
    optimized.write_text(run_opt(original.read_text(),
                                 "--pass-pipeline=builtin.module(ttt-optimize-linalg)"))
    assert "ttt." not in optimized.read_text().split("{-#")[0]
    want = _run_in_iree(original, args, tmp_path, function=function)
    got = _run_in_iree(optimized, args, tmp_path, function=function)
    scale = np.abs(torch_out).max()
    assert np.abs(got - want).max() / scale <= 1e-5
    assert np.abs(got - torch_out).max() / scale <= 1e-4
    if name.startswith("dynamic_batch/"):
        # Another batch than the export's example.
        rng = np.random.default_rng(3)
        other = [rng.normal(0, a.std(), (3,) + a.shape[1:]).astype(np.float32)
                 if a.min() < 0 else rng.uniform(0, a.max(), (3,) + a.shape[1:])
                 .astype(np.float32) for a in args]
        want = _run_in_iree(original, other, tmp_path, function=function)
        got = _run_in_iree(optimized, other, tmp_path, function=function)
        assert got.shape[0] == 3
        assert np.abs(got - want).max() / np.abs(want).max() <= 1e-5
