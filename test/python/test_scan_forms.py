"""`linattn.scan` in every form the back ends build, against a NumPy scan.

The chunk-state scan is built once (LinAttnForms.h) for the linalg lowering
and the ONNX export; the linalg lowering also has a sequential and a
per-entry schedule of its own. Each case runs one scan (every kind, both
modes, no initial state, one shared by the batch, or one per sample) through

  * `linattn-to-linalg{scan=...}` for each schedule, then `ttt-run`;
  * `linattn-to-onnx`, then onnxruntime (two batch sizes and chunk counts
    on one model);

and compares with the recurrence written out below in float64:
S_c = T_c S_{c-1} + G_c from S_{-1} = S0 (T_c = 1, a_c, A_c or I + A_c),
inclusive mode reading S_c at chunk c, exclusive mode S_{c-1}.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import ttt_mlir
from compiler import run_function, tool

B, H, F, E = 2, 2, 3, 4
KINDS = ["additive", "decayed", "affine", "residual_affine"]
MODES = ["inclusive", "exclusive"]
INITIALS = ["none", "shared", "per_sample"]
RTOL = 1e-5


def scan_oracle(kind, mode, g, decay=None, transition=None, initial=None):
    g = g.astype(np.float64)
    state = np.zeros((g.shape[0], H, F, E))
    if initial is not None:
        state = state + initial.astype(np.float64)
    states = []
    for c in range(g.shape[2]):
        before = state
        if kind == "additive":
            state = state + g[:, :, c]
        elif kind == "decayed":
            state = decay[:, :, c, None, None] * state + g[:, :, c]
        elif kind == "affine":
            state = transition[:, :, c] @ state + g[:, :, c]
        else:
            state = state + transition[:, :, c] @ state + g[:, :, c]
        states.append(before if mode == "exclusive" else state)
    return np.stack(states, axis=2)


def make_operands(kind, initial, chunks, rng, batch=B):
    """The scan's operands by name (g first), random and well scaled."""
    ops = {"g": rng.standard_normal((batch, H, chunks, F, E)).astype(np.float32)}
    if kind == "decayed":
        ops["a"] = rng.uniform(0.2, 1.0, (batch, H, chunks)).astype(np.float32)
    if kind in ("affine", "residual_affine"):
        ops["t"] = (0.3 * rng.standard_normal((batch, H, chunks, F, F))).astype(np.float32)
    if initial == "shared":
        ops["s0"] = rng.standard_normal((H, F, E)).astype(np.float32)
    if initial == "per_sample":
        ops["s0"] = rng.standard_normal((batch, H, F, E)).astype(np.float32)
    return ops


def tensor_type(shape):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + "xf32>"


def operand_types(kind, initial, chunks, batch):
    """Types by operand name; None sizes are dynamic."""
    types = {"g": tensor_type((batch, H, chunks, F, E))}
    if kind == "decayed":
        types["a"] = tensor_type((batch, H, chunks))
    if kind in ("affine", "residual_affine"):
        types["t"] = tensor_type((batch, H, chunks, F, F))
    if initial == "shared":
        types["s0"] = tensor_type((H, F, E))
    if initial == "per_sample":
        types["s0"] = tensor_type((batch, H, F, E))
    return types


def scan_op(kind, mode, types):
    parts = ["%s = linattn.scan %g"]
    if "s0" in types:
        parts.append(f"initial(%s0 : {types['s0']})")
    if "a" in types:
        parts.append(f"decay(%a : {types['a']})")
    if "t" in types:
        parts.append(f"transition(%t : {types['t']})")
    parts.append(f"kind = {kind} mode = {mode} : {types['g']} -> {types['g']}")
    return " ".join(parts)


def oracle_for(kind, mode, ops):
    return scan_oracle(kind, mode, ops["g"], ops.get("a"), ops.get("t"), ops.get("s0"))


def check(got, want):
    assert got.shape == want.shape
    assert np.abs(want).max() > 0.1, "the oracle's states are too small to check anything"
    err = ttt_mlir.relative_error(got, want)
    assert err <= RTOL, f"relative error {err}"


def ttt_opt(text, tmp_path, *options):
    """`ttt-opt` on `text` with `options`; its stdout."""
    src = tmp_path / "scan.mlir"
    src.write_text(text)
    proc = subprocess.run([str(tool("ttt-opt")), str(src), *options],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


CASES = [(k, m, i) for k in KINDS for m in MODES for i in INITIALS]


@pytest.mark.parametrize("schedule", ["parallel", "sequential", "per-entry"])
@pytest.mark.parametrize("kind,mode,initial", CASES)
def test_linalg_schedules(schedule, kind, mode, initial, tmp_path):
    chunks = 5
    ops = make_operands(kind, initial, chunks, np.random.default_rng(0))
    types = operand_types(kind, initial, chunks, B)
    args = ", ".join(f"%{name}: {ty}" for name, ty in types.items())
    text = (f"func.func @main({args}) -> {types['g']} {{\n"
            f"  {scan_op(kind, mode, types)}\n"
            f"  return %s : {types['g']}\n}}\n")
    lowered = ttt_opt(text, tmp_path, f"--linattn-to-linalg=scan={schedule}")
    assert "linattn." not in lowered
    (got,) = run_function(lowered, list(ops.values()), tmp_path)
    check(got, oracle_for(kind, mode, ops))


@pytest.mark.parametrize("kind,mode,initial", CASES)
def test_onnx_export(kind, mode, initial, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    # Batch and chunk count dynamic: one model serves 2 and 6 chunks.
    types = operand_types(kind, initial, None, None)
    if initial == "shared":
        types["s0"] = tensor_type((H, F, E))
    inputs = ", ".join(f'%{name}: {ty} {{onnx.name = "{name}"}}' for name, ty in types.items())
    text = (f'onnx.graph @main({inputs}) -> ({types["g"]} {{onnx.name = "s"}}) {{\n'
            f"  {scan_op(kind, mode, types)}\n"
            f"  onnx.yield %s : {types['g']}\n}}\n")
    out = tmp_path / "scan.onnx"
    ttt_opt(text, tmp_path, "--linattn-to-onnx", "-o", str(out))
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for chunks, batch in ((2, 1), (6, 3)):
        ops = make_operands(kind, initial, chunks, rng, batch=batch)
        (got,) = session.run(["s"], ops)
        check(got, oracle_for(kind, mode, ops))
