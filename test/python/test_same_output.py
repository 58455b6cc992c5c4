"""The same input gives the same output bytes whichever C++ compiler built ttt.

C++ leaves the evaluation order of function arguments unspecified (g++
evaluates them right to left, clang left to right), so a builder call that
creates an op, passed next to another one, emits IR whose op order, SSA
names and ONNX node order depend on the compiler. `make check-gcc` builds the
project a second time with g++ and runs this file with both builds:

    TTT_BUILD_DIR=build TTT_SECOND_BUILD_DIR=build-gcc python3 -m pytest -q \
        test/python/test_same_output.py

Every ONNX fixture goes through the default pipeline (raise, rewrite, export)
and every MLIR input of the lit suite and of examples/ through each lowering;
stdout, stderr and the exit status must be identical.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIRST = Path(os.environ.get("TTT_BUILD_DIR", REPO / "build"))
SECOND = os.environ.get("TTT_SECOND_BUILD_DIR")

pytestmark = pytest.mark.skipif(
    not SECOND, reason="needs a second build to compare with: TTT_SECOND_BUILD_DIR "
    "(make check-gcc sets it)")

ONNX_FIXTURES = sorted((REPO / "test/fixtures/onnx").glob("*.onnx"))
MLIR_INPUTS = sorted([*(REPO / "test").rglob("*.mlir"), *(REPO / "examples").glob("*.mlir")])

# Pass lists that cover every lowering the project writes IR with.
MLIR_PIPELINES = [
    ["--ttt-simplify"],
    ["--ttt-simplify=freeze-inner drop-weight-norm collapse-mlp drop-token-lr "
     "drop-momentum drop-muon", "--ttt-to-linattn"],
    ["--ttt-lower-recurrent"],
    ["--ttt-to-linattn", "--linattn-to-linalg"],
    ["--ttt-to-linattn", "--linattn-to-linalg=scan=sequential"],
    ["--ttt-to-linattn", "--linattn-to-onnx"],
]


def _ttt_opt(build: Path, args, cwd: Path):
    proc = subprocess.run([str(build / "bin" / "ttt-opt"), *args], cwd=cwd,
                          capture_output=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr.replace(str(build).encode(), b"<build>")


def _first_difference(a: bytes, b: bytes) -> str:
    for number, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {number}:\n  {FIRST.name}: {x[:300]!r}\n  {Path(SECOND).name}: {y[:300]!r}"
    return f"one output is a prefix of the other ({len(a)} vs {len(b)} bytes)"


def _assert_same(args, tmp_path: Path, outputs=()):
    results = []
    for index, build in enumerate((FIRST, Path(SECOND))):
        work = tmp_path / f"build{index}"
        work.mkdir(parents=True)
        rc, out, err = _ttt_opt(build, args, work)
        files = {name: (work / name).read_bytes() if (work / name).exists() else None
                 for name in outputs}
        results.append((rc, out, err, files))
    (rc1, out1, err1, files1), (rc2, out2, err2, files2) = results
    what = " ".join(args)
    assert rc1 == rc2, f"{what}: exit status {rc1} vs {rc2}"
    assert out1 == out2, f"{what}: stdout differs at {_first_difference(out1, out2)}"
    assert err1 == err2, f"{what}: stderr differs at {_first_difference(err1, err2)}"
    for name in outputs:
        assert files1[name] == files2[name], f"{what}: {name} differs between the builds"
    return rc1, files1


@pytest.mark.parametrize("fixture", ONNX_FIXTURES, ids=lambda p: p.name)
def test_onnx_fixture_bytes(fixture: Path, tmp_path: Path):
    rc, files = _assert_same([str(fixture), "-o", "out.onnx"], tmp_path, ["out.onnx"])
    assert rc == 0 and files["out.onnx"], f"{fixture.name}: the default pipeline failed"


@pytest.mark.parametrize("source", MLIR_INPUTS, ids=lambda p: str(p.relative_to(REPO)))
def test_mlir_lowerings(source: Path, tmp_path: Path):
    for index, pipeline in enumerate(MLIR_PIPELINES):
        _assert_same([str(source), "--split-input-file", *pipeline], tmp_path / str(index))


LINALG_PROGRAMS = sorted([*(REPO / "test/fixtures/linalg").rglob("*.mlir"),
                          *(REPO / "examples").glob("linalg*.mlir")])


@pytest.mark.parametrize("source", LINALG_PROGRAMS, ids=lambda p: str(p.relative_to(REPO)))
def test_linalg_raise(source: Path, tmp_path: Path):
    """The raise of upstream-dialect programs (torch-mlir's among them) writes the
    same layer ops, assertions and remarks under both compilers."""
    _assert_same([str(source), "--pass-pipeline=builtin.module(ttt-optimize-linalg)"],
                 tmp_path)
