#!/usr/bin/env python3
"""Lower the reference modules of python/ttt/models to linalg on tensors with torch-mlir
(test/fixtures/linalg/).

    python3 python/scripts/make_linalg_fixtures.py [--out DIR] [--only NAME ...] [--list]

(or `make linalg-fixtures`, which installs python/requirements-linalg.txt into
build/linalgenv first). Needs torch and torch-mlir; `make test` does not.

Each fixture ``<name>.mlir`` is what torch-mlir's FX importer
(``torch_mlir.fx.export_and_import(module, *inputs, output_type="linalg-on-tensors")``)
makes of one module at one static shape: the chunk loop unrolled, parameters as dense
constants. The modules are the layer families of ``ttt.models.layers`` (the same
modules, seeds and dims as the ONNX fixtures of make_fixtures.py) and the research
spellings of ``ttt.models.research`` (preallocated outputs, einsum/bmm, folded heads,
[B, T, H, D], weights out x in). Sidecar ``<name>.npz``: the inputs (``arg0``, ``arg1``,
.. in the function's argument order) and PyTorch's eager output ``o``, float32;
test/python/test_linalg_fixtures.py checks the programs against it and on fresh random
inputs. ``dynamic_batch/<name>.mlir`` is the same module exported with the batch dim of
every input symbolic (``dynamic_shapes``, example batch 2): torch-mlir gives each input
a batch of its own run-time size (``?``) and spells numpy broadcasting between them as
gathers at ``size == 1 ? 0 : i`` and expands to another tensor's size.

The loop form (checked with torch-mlir 20261001, torch 2.9.0):

* The FX importer unrolls Python loops. ``torch._higher_order_ops.while_loop`` over the
  chunks (``ttt.models.loops``, the ``*_while`` fixtures) becomes an ``scf.while`` when
  the counter's start is a value torch-mlir cannot fold (a
  ``torch.zeros_like(q, dtype=torch.int64).sum()``): the counter a ``tensor<i64>``
  stepped and compared by 0-d ``linalg.generic`` ops, the condition computed at the end
  of the body and carried as an ``i1``, each chunk offset clamped by
  ``select``/``maxsi``/``minsi`` (PyTorch's slice bounds); ttt-raise-linalg reads it.
  Started at a constant, torch-mlir lowers the loop to ``scf.for %i = 0 to
  9223372036854775807`` and drops its condition (``PrimLoopOp::isForLike``, TorchOps.cpp,
  only asks whether the initial condition is constant true, which ``0 < n`` folds to),
  so the program runs past its last chunk. With a symbolic length the importer stops on
  ``sym_sum`` ("Unimplemented call_function"). Dynamo traces a while_loop body once per
  process: the script resets it after each fixture ("SKIPPED INLINING" otherwise).
* The ONNX importer (``torch-mlir-import-onnx``, then ``torch-mlir-opt
  --torch-onnx-to-torch-backend-pipeline
  --torch-backend-to-linalg-on-tensors-backend-pipeline``) lowers an ONNX ``Loop`` only
  when it has no scan outputs and every loop-carried value has one type on entry, in
  the body and as a result; torch's scripted exports type them symbolically (and carry
  ``W [H, d, e]`` into a body that makes it ``[B, H, d, e]``), so the pass fails with
  "failed to legalize operation 'torch.operator' that was explicitly marked illegal" on
  the ``onnx.Loop``. With those types made to agree (static example shapes, ``onnx``
  shape inference with data propagation, the weight carried with its batch) a scripted
  loop whose chunks write ``out[:, :, s:e] = o`` does lower to ``scf.for``, but the
  chunk writes (ONNX ``ScatterND``) become ``tm_tensor.scatter``, which is not an
  upstream MLIR op: ``mlir-opt`` and ``ttt-opt`` cannot parse it.

Other ``scf.for`` / ``scf.while`` spellings are the hand-written programs of
test/python/linalg_programs.py.
"""

import argparse
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "scripts"))

import torch  # noqa: E402
import torch_mlir  # noqa: E402
from torch_mlir import fx  # noqa: E402

from make_fixtures import (DISTS, RESEARCH_B, _fixture, _input_shapes,  # noqa: E402
                           _random_inputs)
from ttt.models import adapt  # noqa: E402

OUT = ROOT / "test" / "fixtures" / "linalg"
# The same modules exported with a batch of run-time size (torch-mlir's `?`).
DYNAMIC_BATCH_DIR = "dynamic_batch"
DYNAMIC_BATCH_EXAMPLE = 2  # torch.export specializes a dim it sees as 1
MAX_BYTES = 256 * 1024

# name -> family of make_fixtures.FIXTURES (its module, seed and dims), and the research
# module of ttt.models.research that rewrites it (None: the layers.py module itself).
FIXTURES: Dict[str, Tuple[str, str]] = {
    "linear_dot": ("linear_dot", ""),
    "linear_mse": ("linear_mse", ""),
    "lact_v3": ("lact_v3", ""),
    "lact_v5": ("lact_v5", ""),
    "lact_v6": ("lact_v6", ""),
    "ttt_linear": ("ttt_linear", ""),
    "vit3_glu": ("vit3_glu", ""),
    "ttt_mlp": ("ttt_mlp", ""),
    "lact_v2": ("lact_v2", ""),
    "research_linear_dot_einsum": ("linear_dot", "linear_dot_einsum"),
    "research_linear_dot_bmm_fold": ("linear_dot", "linear_dot_bmm_fold"),
    "research_linear_dot_outin": ("linear_dot", "linear_dot_outin"),
    "research_linear_dot_prealloc": ("linear_dot", "linear_dot_prealloc"),
    "research_linear_mse_xwt": ("linear_mse", "linear_mse_xwt"),
    "block_v4": ("block_v4", ""),
    "block_v6": ("block_v6", ""),
    # torch's while_loop over the chunks (ttt.models.loops): torch-mlir's scf.while.
    "linear_mse_while": ("linear_mse", "linear_mse_while"),
    "lact_v3_while": ("lact_v3", "lact_v3_while"),
    "lact_v5_while": ("lact_v5", "lact_v5_while"),
    "lact_v6_while": ("lact_v6", "lact_v6_while"),
}


def _module_and_inputs(family: str, research: str,
                       batch: Optional[int] = None) -> Tuple[torch.nn.Module, List[torch.Tensor], str]:
    fixture = _fixture(family)
    dims = dict(fixture.dims)
    if research:
        dims["B"] = RESEARCH_B
    if batch is not None:
        dims["B"] = batch
    torch.manual_seed(0)
    twin = fixture.make().eval()
    shapes = _input_shapes(twin, dims)
    x = _random_inputs(twin.input_names, shapes, DISTS)
    if not research:
        return adapt(twin), [x[n] for n in twin.input_names], type(twin).__name__
    from ttt.models.loops import LOOPS
    if research in LOOPS:
        _, make = LOOPS[research]
        module = make(twin).eval()
        _check_same_function(module, twin, x)
        return module, [x[n] for n in module.input_names], type(module).__name__
    from ttt.models.research import RESEARCH
    _, _, make, to_inputs, _ = RESEARCH[research]
    module = make(twin).eval()
    xi = to_inputs(twin, x)
    return module, [xi[n].contiguous() for n in module.input_names], type(module).__name__


def _check_same_function(module: torch.nn.Module, twin: torch.nn.Module,
                         x: Dict[str, torch.Tensor]) -> None:
    """`module` computes its `layers.py` twin's function: the same output in float64."""
    import copy
    wide = {n: t.double() for n, t in x.items()}
    with torch.no_grad():
        want = adapt(copy.deepcopy(twin).double())(*[wide[n] for n in twin.input_names])
        got = copy.deepcopy(module).double()(*[wide[n] for n in module.input_names])
    torch._dynamo.reset()  # see build()
    error = ((got - want).abs().max() / want.abs().max()).item()
    if not error <= 1e-12:
        raise SystemExit(f"{type(module).__name__} is not its twin's function: {error:.3g}")


def build(name: str, out: Path, dynamic_batch: bool = False) -> int:
    """One fixture; with `dynamic_batch`, exported with the batch dim of every input
    symbolic (torch.export's `Dim("B")`, example batch DYNAMIC_BATCH_EXAMPLE)."""
    family, research = FIXTURES[name]
    module, args, cls = _module_and_inputs(
        family, research, DYNAMIC_BATCH_EXAMPLE if dynamic_batch else None)
    extra = {}
    how = "fx.export_and_import(module, *inputs, output_type=\"linalg-on-tensors\")"
    if dynamic_batch:
        from torch.export import Dim
        batch = Dim("B", min=1, max=1024)
        extra["dynamic_shapes"] = tuple({0: batch} for _ in args)
        how = how[:-1] + ", dynamic_shapes=({0: Dim(\"B\")}, ...))"
    program = fx.export_and_import(module, *args, output_type="linalg-on-tensors",
                                   func_name=name, **extra)
    # After the export: a while_loop runs compiled even eagerly, and Dynamo then
    # refuses to trace its body for an export ("SKIPPED INLINING").
    with torch.no_grad():
        want = module(*args)
    torch._dynamo.reset()
    source = ("layers" if not research else
              "loops" if name.endswith("_while") else "research")
    header = (f"// {name}: ttt.models.{source}.{cls} "
              f"(family {family}), lowered by torch-mlir {_version()} (torch "
              f"{torch.__version__}): {how}.\n"
              f"// Generated by python/scripts/make_linalg_fixtures.py; inputs and "
              f"PyTorch's output in {name}.npz.\n")
    text = header + str(program)
    path = out / f"{name}.mlir"
    path.write_text(text)
    arrays = {f"arg{i}": a.detach().numpy().astype(np.float32) for i, a in enumerate(args)}
    arrays["o"] = want.detach().numpy().astype(np.float32)
    np.savez_compressed(out / f"{name}.npz", **arrays)
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{path}: {size} bytes, over the {MAX_BYTES} limit")
    return size


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("torch-mlir")
    except Exception:  # pragma: no cover - metadata missing
        return getattr(torch_mlir, "__version__", "?")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", help="fixture names (default: all)")
    ap.add_argument("--list", action="store_true", help="list the fixtures and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, (family, research) in FIXTURES.items():
            print(name, family, research or "-")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / DYNAMIC_BATCH_DIR).mkdir(exist_ok=True)
    for name in FIXTURES:
        if args.only and name not in args.only:
            continue
        print(f"{name}: {build(name, args.out)} bytes")
        size = build(name, args.out / DYNAMIC_BATCH_DIR, dynamic_batch=True)
        print(f"{DYNAMIC_BATCH_DIR}/{name}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
