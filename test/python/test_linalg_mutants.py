"""`ttt-raise-linalg` on broken variants of TTT layers written in linalg: seeded random
edits of hand-written programs (test/python/linalg_programs.py) and of torch-mlir's
fixtures (test/fixtures/linalg) -- an elementwise op replaced by another, the operands
of one swapped, a constant scaled, a slice moved, the two inputs of a product swapped, a
use rewired to another value of the same type, an i64 constant moved (torch-mlir's loop
counter, its bound, its step, the clamps of its chunk offsets). Whatever the pipeline makes of a mutant,
`ttt-opt` answers with exit 0 or 1 (an error line), never a crash; and where it still
raises a layer, the optimized program computes what the mutant computes (the mutant run
as written by `ttt-run` on fresh random inputs is the oracle), so the raise never reads
a program as a layer it is not."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linalg_programs as lp  # noqa: E402
from compiler import run_function, tool  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "linalg"
# TTT_MUTANTS=N for a longer run. TTT_MUTANTS=60 (360 mutants) ran clean when this was
# written, once the raise checked that each update of an unrolled layer reads its own
# chunk (a mutant that re-added an earlier chunk's update was rewritten before).
MUTANTS_PER_PROGRAM = int(os.environ.get("TTT_MUTANTS", "8"))
RTOL = 1e-4
FLOAT_OPS = ["addf", "subf", "mulf", "divf", "maximumf"]
BINARY = re.compile(r"arith\.(addf|subf|mulf|divf|maximumf) ")
OPERANDS = re.compile(r"(arith\.(?:addf|subf|mulf|divf)) (%[\w]+), (%[\w]+) ")
CONSTANT = re.compile(r"constant (-?[0-9.]+(?:e[-+]?\d+)?) : f32")
INTEGER = re.compile(r"constant (-?\d+) : i64")
OFFSETS = re.compile(r"(?:extract|insert)_slice [^\[]*\[([0-9, ]+)\] \[")
SAME_TYPE_INS = re.compile(r"ins\((%[\w]+), (%[\w]+) : ([^,]+), \3\)")
DEFINITION = re.compile(r"\s*(%[\w]+) = .*(?:->|:) (tensor<[^>]+>)\s*\{?$")
USE = re.compile(r"(?<=[(, ])(%[\w]+)(?=[,) :])")

PROGRAMS = {
    "generic_unrolled": lp.ttt_program(lp.Spelling()),
    "named_mse_concat": lp.ttt_program(lp.Spelling(contraction="named", loss="mse",
                                                   assembly="concat")),
    "generic_loop": lp.ttt_program(lp.Spelling(form="loop")),
    "named_while_mse": lp.ttt_program(lp.Spelling(contraction="named", form="while",
                                                  loss="mse")),
    "torch_mlir_linear_mse": (FIXTURES / "linear_mse.mlir").read_text(),
    "torch_mlir_lact_v6": (FIXTURES / "lact_v6.mlir").read_text(),
    # torch-mlir's while_loop form: the counter, its bound and step, the carried
    # condition and the offset clamps are integer constants the mutants move.
    "torch_mlir_linear_mse_while": (FIXTURES / "linear_mse_while.mlir").read_text(),
    "torch_mlir_lact_v6_while": (FIXTURES / "lact_v6_while.mlir").read_text(),
}


def _mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One edit that keeps every type (so that most mutants still verify)."""
    lines = text.split("\n")

    def pick(pattern):
        found = [i for i, line in enumerate(lines) if pattern.search(line)]
        return rng.choice(found) if found else None

    kind = rng.randrange(7)
    if kind == 0 and (i := pick(BINARY)) is not None:
        op = rng.choice(FLOAT_OPS)
        lines[i] = BINARY.sub(f"arith.{op} ", lines[i], count=1)
        return "\n".join(lines), f"line {i + 1}: arith.{op}"
    if kind == 1 and (i := pick(OPERANDS)) is not None:
        lines[i] = OPERANDS.sub(r"\1 \3, \2 ", lines[i], count=1)
        return "\n".join(lines), f"line {i + 1}: operands swapped"
    if kind == 2 and (i := pick(CONSTANT)) is not None:
        factor = rng.choice([2.0, -1.0, 0.0, 0.5])
        lines[i] = CONSTANT.sub(lambda m: f"constant {float(m.group(1)) * factor:e} : f32",
                                lines[i], count=1)
        return "\n".join(lines), f"line {i + 1}: constant times {factor}"
    if kind == 3 and (i := pick(OFFSETS)) is not None:
        m = OFFSETS.search(lines[i])
        offsets = [int(x) for x in m.group(1).split(",")]
        j = rng.randrange(len(offsets))
        offsets[j] = max(0, offsets[j] + rng.choice([-4, -1, 1, 4]))
        lines[i] = lines[i][:m.start(1)] + ", ".join(map(str, offsets)) + lines[i][m.end(1):]
        return "\n".join(lines), f"line {i + 1}: slice offset {j} moved"
    if kind == 4 and (i := pick(SAME_TYPE_INS)) is not None:
        lines[i] = SAME_TYPE_INS.sub(r"ins(\2, \1 : \3, \3)", lines[i], count=1)
        return "\n".join(lines), f"line {i + 1}: inputs swapped"
    if kind == 5:
        defined = {}
        for i, line in enumerate(lines):
            if m := DEFINITION.match(line):
                defined[m.group(1)] = (i, m.group(2))
        uses = [(i, name) for i, line in enumerate(lines) for name in USE.findall(line)
                if name in defined and defined[name][0] < i
                and not line.strip().startswith(name + " =")]
        if uses:
            i, name = rng.choice(uses)
            others = [d for d, (at, ty) in defined.items()
                      if ty == defined[name][1] and at < i and d != name]
            if others:
                other = rng.choice(others)
                lines[i] = re.sub(re.escape(name) + r"(?=[,) :])", other, lines[i], count=1)
                return "\n".join(lines), f"line {i + 1}: {name} read as {other}"
    if kind == 6 and (i := pick(INTEGER)) is not None:
        m = INTEGER.search(lines[i])
        value = int(m.group(1)) + rng.choice([-1, 1, 4])
        lines[i] = lines[i][:m.start(1)] + str(value) + lines[i][m.end(1):]
        return "\n".join(lines), f"line {i + 1}: i64 constant made {value}"
    return text, "unchanged"


def _inputs(program: str, rng: np.random.Generator):
    signature = re.search(r"func\.func @\w+\(([^)]*)\)", program).group(1)
    return [rng.normal(0, 0.7, [int(d) for d in t.split("x")[:-1]]).astype(np.float32)
            for t in re.findall(r"tensor<([^>]+)>", signature)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_raised_mutant_computes_what_the_mutant_computes(name, tmp_path):
    rng = random.Random(f"linalg-mutants-{name}")
    compared = 0
    for index in range(MUTANTS_PER_PROGRAM):
        text, what = PROGRAMS[name], []
        for _ in range(rng.randint(1, 2)):
            text, edit = _mutate(text, rng)
            what.append(edit)
        proc = subprocess.run(
            [str(tool("ttt-opt")), "-", "--pass-pipeline=builtin.module(ttt-optimize-linalg)"],
            input=text, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), (what, proc.returncode, proc.stderr[-2000:])
        if proc.returncode == 1:
            assert "error" in proc.stderr, (what, proc.stderr[-2000:])
            continue
        if "raised to ttt.kvb_layer" not in proc.stderr:
            continue
        args = _inputs(text, np.random.default_rng(index))
        work = tmp_path / f"mutant{index}"
        (work / "as_written").mkdir(parents=True)
        (work / "optimized").mkdir()
        try:
            (want,) = run_function(text, args, work / "as_written", timeout=300)
        except RuntimeError as stopped:
            # torch-mlir asserts its counter's bounds (`u6 <= 3`): a mutant whose loop
            # runs past them stops as written, and so must its optimized program.
            assert "Runtime assertion failed" in str(stopped), (what, str(stopped)[-2000:])
            with pytest.raises(RuntimeError):
                run_function(proc.stdout, args, work / "optimized", timeout=300)
            continue
        if not np.all(np.isfinite(want)):
            continue  # a mutant that overflows says nothing about the raise
        (got,) = run_function(proc.stdout, args, work / "optimized", timeout=300)
        scale = max(float(np.abs(want).max()), 1e-30)
        assert float(np.abs(got - want).max()) / scale <= RTOL, what
        compared += 1
    # Some mutants keep a layer (a constant scaled, a use of the same value); the
    # comparison above must have run on at least one of them.
    assert compared >= 1, f"no raised mutant of {name} to compare"
