"""ttt-to-cpu computes f32 exp, expm1 and tanh by MLIR's polynomial approximations
(`ttt-vectorizable-math`, on by default) so that the loops around them vectorize. They
must stay within a few units in the last place of the exact values: measured here
against float64 NumPy on an even sweep of the range where the f32 result is finite, and
on fresh random arguments, for the approximations and (exp, tanh) for libm's functions
(`--vectorizable-math=false`) alike."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import run_function

N = 1 << 18
# (the float64 reference, the sweep, the largest error allowed in f32 ulps of the
# exact value) for the approximations; libm's are held to the same bound.
FUNCTIONS = {
    "exp": (np.exp, (-87.0, 88.0), 2.0),
    "expm1": (np.expm1, (-87.0, 88.0), 3.0),
    "tanh": (np.tanh, (-20.0, 20.0), 6.0),
}


def _program(name: str) -> str:
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<2x{N}xf32>) -> tensor<2x{N}xf32> {{
  %e = tensor.empty() : tensor<2x{N}xf32>
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<2x{N}xf32>) outs(%e : tensor<2x{N}xf32>) {{
  ^bb0(%a: f32, %b: f32):
    %y = math.{name} %a : f32
    linalg.yield %y : f32
  }} -> tensor<2x{N}xf32>
  return %r : tensor<2x{N}xf32>
}}"""


def _ulps(got, want):
    """|got - want| in units of the last place of the f32 nearest `want`."""
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / np.maximum(ulp, np.finfo(np.float32).tiny)


# MLIR lowers math.expm1 without the approximation as exp(x) - 1 (thousands of ulps
# near 0), so only the polynomial is held to expm1's bound.
CASES = [(name, True) for name in sorted(FUNCTIONS)] + [("exp", False), ("tanh", False)]


@pytest.mark.parametrize("name, vectorizable", CASES,
                         ids=[f"{n}-{'polynomial' if v else 'libm'}" for n, v in CASES])
def test_math_functions_are_within_a_few_ulps(name, vectorizable, tmp_path):
    ref, (lo, hi), bound = FUNCTIONS[name]
    rng = np.random.default_rng()
    sweep = np.linspace(lo, hi, N, dtype=np.float32)
    random = (rng.standard_normal(N) * (hi - lo) / 8).clip(lo, hi).astype(np.float32)
    x = np.stack([sweep, random])
    (got,) = run_function(_program(name), [x], tmp_path,
                          extra_args=[f"--vectorizable-math={str(vectorizable).lower()}"])
    worst = _ulps(got, ref(x.astype(np.float64)))
    assert worst.max() <= bound, (name, float(worst.max()), x.flat[worst.argmax()])
