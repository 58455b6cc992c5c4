"""Inputs larger than the memory are refused before they are allocated (issue 46).

Linux lends more memory than it has, so an array larger than the memory is
allocated and the process is killed (exit status 137, no message) once its
pages are touched. `ttt-run` checks its inputs (from --shapes, or declared by
.npy headers) and `ttt.run` its arrays (a broadcast view at its full size)
against the available memory first and stops with one line.

No test here allocates what it declares: 10^15 bytes is more than any machine
has. The tests of the total (inputs each small enough, together not) size
their inputs from the memory available when they run, and run the tool under
an address-space limit, so that a broken check fails the test instead of
exhausting the machine.
"""

from __future__ import annotations

import re
import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import REPO, build_dir, tool  # noqa: E402

LAYER = REPO / "examples" / "linear_dot_layer.mlir"  # q, k, v: ?x4x?x16, w: 4x16x16
# 15625000 x 4 x 250000 x 16 float32 values: 10^15 bytes.
HUGE = "15625000x4x250000x16"
HUGE_MESSAGE = r"input arg0 \(f32 15625000x4x250000x16, 909 TiB\) exceeds the available " \
               r"memory \(\d[\d.]* [KMGTP]iB\)"

ONE_ARG = """func.func @f(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = arith.addf %a, %a : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
"""


def ttt_run(*args, limit_bytes=None):
    def limit():
        if limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run([str(tool("ttt-run")), *map(str, args)], capture_output=True,
                          text=True, timeout=300, preexec_fn=limit)


def one_error_line(proc) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("ttt-run: error: "), lines[0]
    return lines[0]


def npy_header(shape, descr="<f4") -> bytes:
    """A version 1.0 .npy header for `shape`, without data."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(shape)}, }}"
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def available_memory() -> int:
    """What the tools see as available (ttt._ttt.available_memory), or a skip."""
    sys.path.insert(0, str(build_dir() / "python"))
    try:
        from ttt import _ext

        available = _ext.load().available_memory()
    except ImportError as e:
        pytest.skip(f"the ttt extension is not built: {e}")
    if available < 0:
        pytest.skip("this system does not say how much memory is available")
    return available


# --- ttt-run ------------------------------------------------------------------

def test_random_input_larger_than_memory():
    proc = ttt_run(LAYER, "--random-inputs=1", f"--shapes={HUGE},*,*,*")
    line = one_error_line(proc)
    assert re.fullmatch(r"ttt-run: error: --random-inputs: " + HUGE_MESSAGE, line), line


def test_npy_header_larger_than_memory(tmp_path):
    src = tmp_path / "f.mlir"
    src.write_text(ONE_ARG)
    npy = tmp_path / "huge.npy"
    npy.write_bytes(npy_header((500000000, 500000)))  # the header only
    line = one_error_line(ttt_run(src, f"--inputs={npy}"))
    assert re.fullmatch(
        rf"ttt-run: error: {re.escape(str(npy))}: input arg0 \(f32 500000000x500000, 909 TiB\) "
        r"exceeds the available memory \(\d[\d.]* [KMGTP]iB\)", line), line


def test_npz_member_larger_than_memory(tmp_path):
    npz = tmp_path / "huge.npz"
    with zipfile.ZipFile(npz, "w") as archive:
        archive.writestr("arg0.npy", npy_header((15625000, 4, 250000, 16)))
        for name in ("arg1", "arg2"):
            archive.writestr(f"{name}.npy", npy_header((1, 4, 16, 16)) + bytes(4096))
        archive.writestr("arg3.npy", npy_header((4, 16, 16)) + bytes(4096))
    line = one_error_line(ttt_run(LAYER, f"--inputs={npz}"))
    assert re.fullmatch(rf"ttt-run: error: {re.escape(str(npz))}: " + HUGE_MESSAGE, line), line


def test_truncated_npy_of_a_fitting_size_is_still_truncated(tmp_path):
    """The memory check reads the header first; a header that fits still has
    its data checked."""
    src = tmp_path / "f.mlir"
    src.write_text(ONE_ARG)
    npy = tmp_path / "short.npy"
    npy.write_bytes(npy_header((4, 4)) + bytes(12))
    line = one_error_line(ttt_run(src, f"--inputs={npy}"))
    assert "truncated .npy data" in line and "needs 64 bytes, the file has 12" in line


def test_inputs_together_larger_than_memory():
    """Three inputs of a third of the memory each fit one by one, not with
    the copy each call gets (twice the memory)."""
    available = available_memory()
    tokens = max(1, available // 3 // (2 * 4 * 16 * 4))
    shape = f"2x4x{tokens}x16"
    # Room for the tool itself, not for the inputs (a safety net).
    limit = available // 2 + (4 << 30)
    proc = ttt_run(LAYER, "--random-inputs=1", f"--shapes={shape},{shape},{shape},*",
                   "--print-results=false", limit_bytes=limit)
    line = one_error_line(proc)
    assert re.fullmatch(r"ttt-run: error: --random-inputs: the inputs \(.+\) and the copy of "
                        r"them each call gets need .+, which exceeds the available memory "
                        r"\(.+\)", line), line


def test_static_result_larger_than_memory(tmp_path):
    src = tmp_path / "big_result.mlir"
    src.write_text("""func.func @f(%a: tensor<4xf32>) -> tensor<500000000x500000xf32> {
  %0 = tensor.empty() : tensor<500000000x500000xf32>
  return %0 : tensor<500000000x500000xf32>
}
""")
    line = one_error_line(ttt_run(src, "--random-inputs=1"))
    assert re.fullmatch(rf"ttt-run: error: {re.escape(str(src))}: result 0 \(f32 "
                        r"500000000x500000, 909 TiB\) exceeds the available memory \(.+\)",
                        line), line


# --- ttt.run ------------------------------------------------------------------

ADD = """func.func @add(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = arith.addf %a, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""


def _ttt():
    available_memory()  # skips without the extension
    import ttt

    return ttt


def test_python_broadcast_view_larger_than_memory():
    ttt = _ttt()
    view = np.broadcast_to(np.float32(1), (500000000, 500000))  # 4 bytes, seen as 10^15
    with pytest.raises(ttt.InvalidInputError) as info:
        ttt.run(ADD, [view, view])
    message = str(info.value)
    assert "\n" not in message
    assert re.fullmatch(r"<mlir>: input 0 \(float32 500000000x500000 view, 909 TiB\) exceeds "
                        r"the available memory \(\d[\d.]* [KMGTP]iB\)", message), message


def test_python_inputs_together_larger_than_memory(tmp_path):
    """Two broadcast views of a third of the memory each: ttt.run would hold
    each three times. Run in a child under an address-space limit."""
    available = available_memory()
    rows = max(1, available // 3 // (1024 * 4))
    script = tmp_path / "together.py"
    script.write_text(f"""
import resource, sys
import numpy as np
sys.path.insert(0, {str(build_dir() / "python")!r})
import ttt
ttt._ext.load()
limit = {available // 2 + (4 << 30)}
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
view = np.broadcast_to(np.float32(1), ({rows}, 1024))
try:
    ttt.run({ADD!r}, [view, view])
except ttt.InvalidInputError as e:
    print(e)
    sys.exit(3)
""")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    assert re.fullmatch(r"<mlir>: the inputs \(.+\) and the copies ttt.run makes of them "
                        r"need .+, which exceeds the available memory \(.+\)\n",
                        proc.stdout), proc.stdout


def test_python_small_views_still_run():
    ttt = _ttt()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = ttt.run(ADD, [a, np.broadcast_to(np.float32(2), (2, 3))])
    assert np.array_equal(out, a + 2)
    (out,) = ttt.run(ADD, [a.T, a.T])  # a transposed (strided) view
    assert np.array_equal(out, a.T * 2)
