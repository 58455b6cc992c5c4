"""Runs the project's tools from tests: locate the build, run a function.

The build directory is $TTT_BUILD_DIR, else build/ at the repository root.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    return Path(os.environ.get("TTT_BUILD_DIR", REPO / "build"))


def tool(name: str) -> Path:
    path = build_dir() / "bin" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; build the project first (make build)")
    return path


def run_function(mlir_text: str, arrays, workdir: Path, *, entry: str | None = None,
                 extra_args=(), timeout=600, form="recurrent"):
    """JIT-runs a function through `ttt-run` (ttt-to-cpu pipeline) on `arrays`
    (a list of ndarrays, in argument order) and returns its results. On the
    CPU, ttt layers run in `form` (ttt-run --ttt-form): by default their
    recurrent reference, the oracle most tests compare with; linattn ops
    always run in parallel."""
    workdir = Path(workdir)
    src = workdir / "module.mlir"
    src.write_text(mlir_text)
    inputs = workdir / "inputs.npz"
    np.savez(inputs, **{f"arg{i}": a for i, a in enumerate(arrays)})
    outputs = workdir / "outputs.npz"
    cmd = [str(tool("ttt-run")), str(src), f"--inputs={inputs}", f"--outputs={outputs}",
           "--print-results=false", *extra_args]
    if "--device=cuda" not in extra_args:
        cmd.append(f"--ttt-form={form}")
    if entry:
        cmd.append(f"--entry={entry}")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        # A failed cf.assert prints its message on standard output.
        raise RuntimeError(f"ttt-run failed ({proc.returncode}): {proc.stderr.strip()}"
                           f"{' (stdout: ' + proc.stdout.strip()[-2000:] + ')' if proc.stdout.strip() else ''}")
    with np.load(outputs) as data:
        return [data[f"result{i}"] for i in range(len(data.files))]


def run_opt(mlir_text: str, *args, timeout=120, stderr=False):
    """Runs `ttt-opt` on `mlir_text` and returns its output (and, with
    `stderr`, the diagnostics it printed)."""
    proc = subprocess.run([str(tool("ttt-opt")), "-", *args], input=mlir_text,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"ttt-opt failed ({proc.returncode}): {proc.stderr.strip()}")
    return (proc.stdout, proc.stderr) if stderr else proc.stdout
