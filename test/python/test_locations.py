"""One location, one text: ttt-opt, ttt-run and the package (the C++ API)
name the op of an error the same way (include/ttt/Support/Location.h).

The op fails to verify while its file is read, so the three report the same
diagnostic; its location takes every form the formatter distinguishes.
"""

from __future__ import annotations

import subprocess

import pytest

from compiler import tool
from package_env import extension_built, run_cli, skip_reason

MESSAGE = "'arith.addi' op requires the same type for all operands and results"

# (location attribute, what the messages name; "" for nothing).
CASES = {
    "onnx-model": ('loc("m.onnx":0:0)', "m.onnx"),
    "onnx-node": ('loc("n"("m.onnx":0:0))', "m.onnx: node 'n'"),
    "fused": ('loc(fused[unknown, "n"("m.onnx":0:0), "a.mlir":4:2])', "m.onnx: node 'n'"),
    "callee": ('loc(callsite("n"("m.onnx":0:0) at "c.mlir":7:3))', "m.onnx: node 'n'"),
    "caller": ('loc(callsite(unknown at "c.mlir":7:3))', "c.mlir:7:3"),
    "named-position": ('loc("x"("a.mlir":4:2))', "a.mlir:4:2"),
    "name-only": ('loc("x")', ""),
    "unknown": ("loc(unknown)", ""),
}


def write_program(tmp_path, loc):
    path = tmp_path / "f.mlir"
    path.write_text(f"""func.func @main(%a: i32, %b: i64) -> i32 {{
  %0 = "arith.addi"(%a, %b) : (i32, i64) -> i32 {loc}
  return %0 : i32
}}
""")
    return path


def stderr_of(*command):
    proc = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


@pytest.mark.parametrize("case", CASES)
def test_tools_name_the_same_location(tmp_path, case):
    loc, where = CASES[case]
    path = write_program(tmp_path, loc)

    # ttt-opt leaves a source position to the SourceMgr handler, which shows
    # its line; everything else is one line (its ONNX driver, for -o x.onnx).
    err = stderr_of(tool("ttt-opt"), path, "-o", tmp_path / "out.onnx")
    if where[-1:].isdigit():
        assert err.startswith(f"{where}: error: {MESSAGE}"), err
    else:
        assert err == f"error: {where + ': ' if where else ''}{MESSAGE}\n", err

    # ttt-run names its input file where the location names none.
    err = stderr_of(tool("ttt-run"), path, "--random-inputs=1")
    assert err == f"ttt-run: error: {where or path}: cannot parse: {MESSAGE}\n", err

    if not extension_built() and skip_reason():
        pytest.skip(skip_reason())
    proc = run_cli("optimize", path, "-o", tmp_path / "out.mlir")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == f"ttt: error: {where + ': ' if where else ''}{MESSAGE}\n"
