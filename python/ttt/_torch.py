"""PyTorch front door: ``ttt.optimize(module, example_inputs)``.

torch is an optional dependency (``pip install ttt[torch]``): nothing here
imports it before a module is actually exported.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from ._errors import Error, ExportError, InvalidInputError, ParseError, UnsupportedError
from ._remarks import count_layers

INSTALL_HINT = "pip install ttt[torch]"


class MissingDependencyError(Error, ImportError):
    """A feature needs an optional package that is not installed."""


MissingDependencyError.__module__ = "ttt"


def is_torch_module(model: Any) -> bool:
    """True for a torch.nn.Module, found without importing torch."""
    return any(cls.__module__ == "torch.nn.modules.module" and cls.__name__ == "Module"
               for cls in type(model).__mro__)


def _import_torch():
    try:
        import torch  # noqa: F401
        import torch.onnx  # noqa: F401
    except ImportError as e:
        raise MissingDependencyError(
            f"ttt.optimize of a torch.nn.Module needs PyTorch, which is not installed "
            f"({e}): {INSTALL_HINT}") from None
    return sys.modules["torch"]


def _as_tuple(example_inputs: Any) -> tuple:
    if isinstance(example_inputs, tuple):
        return example_inputs
    if isinstance(example_inputs, list):
        return tuple(example_inputs)
    return (example_inputs,)


def input_names(module: Any, count: int) -> list[str]:
    """The names of forward's first `count` parameters (input0, ... if not
    known), so that the ONNX inputs read like the module's arguments."""
    try:
        params = [p.name for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = params[:count]
    return names + [f"input{i}" for i in range(len(names), count)]


def default_dynamic_axes(names: list[str], args: tuple) -> dict[str, dict[int, str]]:
    """Batch is the first dimension, the sequence the second to last (the
    layouts (B, T, D) and (B, H, T, D) of TTT layers)."""
    axes: dict[str, dict[int, str]] = {}
    for name, arg in zip(names, args):
        rank = len(getattr(arg, "shape", ()))
        if rank >= 1:
            axes[name] = {0: "batch"}
        if rank >= 3:
            axes[name][rank - 2] = "sequence"
    return axes


def _export(torch, module, args, names, axes) -> bytes:
    """The current default exporter (torch.export): dynamic sizes as Dims.
    Axes that share a name and a size in the example share one Dim, so that
    the exported graph knows the queries, keys and values are equally long."""
    sizes: dict = {}
    for n, a in axes.items():
        arg = args[names.index(n)] if n in names else None
        for i, dim_name in a.items():
            size = arg.shape[i] if arg is not None and i < len(arg.shape) else None
            sizes.setdefault(dim_name, set()).add(size)
    shared = {d: torch.export.Dim(d) for d, s in sizes.items()
              if len(s) == 1 and None not in s and next(iter(s)) > 1}
    dims = {n: {i: shared.get(d, torch.export.Dim.AUTO) for i, d in a.items()}
            for n, a in axes.items()}
    program = torch.onnx.export(module, args, dynamo=True, input_names=names,
                                dynamic_shapes=dims or None)
    return program.model_proto.SerializeToString()


@dataclass(frozen=True)
class Rung:
    """One way of exporting a module: an exporter and which dims stay dynamic."""

    name: str
    exporter: str  # "dynamo" or "torchscript"
    dims: str  # "dynamic" (batch and sequence, or the given axes), "batch", "static"

    def describe(self) -> str:
        call = ("torch.onnx.export(dynamo=True)" if self.exporter == "dynamo"
                else "torch.onnx.export(dynamo=False, opset_version=17)")
        dims = {"dynamic": "dynamic batch and sequence", "batch": "dynamic batch only",
                "static": "static shapes"}[self.dims]
        return f"{call} with {dims}"


#: The export ladder, most general first: ``ttt.optimize`` of a module tries
#: each rung and keeps the first whose graph yields the most TTT layers.
LADDER = tuple(Rung(f"{e}-{d}", e, d) for e in ("dynamo", "torchscript")
               for d in ("dynamic", "batch", "static"))


def rung_axes(rung: Rung, axes: dict[str, dict[int, str]]) -> dict[str, dict[int, str]]:
    if rung.dims == "dynamic":
        return axes
    if rung.dims == "batch":
        return {n: {i: d for i, d in a.items() if i == 0} for n, a in axes.items()
                if 0 in a}
    return {}


def _rms_norm_symbolic(g, x, normalized_shape, weight, eps):
    """aten::rms_norm for the TorchScript exporter, which has none at opset
    17: x / sqrt(mean(x^2) + eps) * weight, eps defaulting to the dtype's."""
    from torch.onnx import symbolic_helper as sh
    torch = sys.modules["torch"]
    shape = sh._get_const(normalized_shape, "is", "normalized_shape")
    axes = list(range(-len(shape), 0))
    dtype = {"Double": torch.float64, "Half": torch.float16,
             "BFloat16": torch.bfloat16}.get(x.type().scalarType(), torch.float32)
    value = None if sh._is_none(eps) else sh._maybe_get_const(eps, "f")
    if value is None:
        value = torch.finfo(dtype).eps
    squares = g.op("Mul", x, x)
    mean = g.op("ReduceMean", squares, axes_i=axes, keepdims_i=1)
    shifted = g.op("Add", mean, g.op("Constant", value_t=torch.tensor(value, dtype=dtype)))
    y = g.op("Div", x, g.op("Sqrt", shifted))
    return y if sh._is_none(weight) else g.op("Mul", y, weight)


def _export_torchscript(torch, module, args, names, axes) -> bytes:
    buffer = io.BytesIO()
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(
        torch.onnx.export).parameters else {}
    torch.onnx.register_custom_op_symbolic("aten::rms_norm", _rms_norm_symbolic, 17)
    try:
        torch.onnx.export(module, args, buffer, input_names=names, dynamic_axes=axes or None,
                          opset_version=17, **kwargs)
    finally:
        torch.onnx.unregister_custom_op_symbolic("aten::rms_norm", 17)
    return buffer.getvalue()


def dynamic_dims(data: bytes) -> list[str]:
    """The graph inputs' dims that stayed dynamic in an export, as name[i]."""
    import onnx

    model = onnx.load_from_string(data)
    initializers = {t.name for t in model.graph.initializer}
    return [f"{i.name}[{k}]" for i in model.graph.input if i.name not in initializers
            for k, d in enumerate(i.type.tensor_type.shape.dim) if d.dim_param]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _one_line(e: BaseException) -> str:
    """The exception's first line, and its root cause's where there is one
    (the dynamo exporter's ConversionError says only which step failed)."""
    def first(x: BaseException) -> str:
        lines = [s.strip() for s in _ANSI.sub("", str(x)).splitlines() if s.strip()]
        return f"{type(x).__name__}: {lines[0]}" if lines else type(x).__name__

    root = e
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    text = first(e) if root is e else f"{first(e)} (caused by {first(root)})"
    return text if len(text) <= 400 else text[:397] + "..."


def _rungs(export: Union[str, Sequence[str], None]) -> tuple[Rung, ...]:
    if export is None:
        return LADDER
    wanted = [export] if isinstance(export, str) else list(export)
    by_name = {r.name: r for r in LADDER}
    unknown = [w for w in wanted if w not in by_name]
    if unknown or not wanted:
        raise InvalidInputError(
            f"unknown export {unknown[0] if unknown else '(none)'!r} (expected one or more "
            f"of {', '.join(by_name)})")
    return tuple(by_name[w] for w in wanted)


def _export_rung(torch, module, args, names, rung: Rung, axes) -> bytes:
    with torch.no_grad(), warnings.catch_warnings(), \
            contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        if rung.exporter == "dynamo":
            return _export(torch, module, args, names, rung_axes(rung, axes))
        return _export_torchscript(torch, module, args, names, rung_axes(rung, axes))


def export_module(module: Any, example_inputs: Any, rung: str,
                  dynamic_axes: Optional[Mapping[str, Mapping[int, str]]] = None) -> bytes:
    """The ONNX model (bytes) one rung of the ladder exports, as
    `optimize_module` exports it; the exporter's exception if it fails."""
    torch = _import_torch()
    (chosen,) = _rungs(rung)
    args = _as_tuple(example_inputs)
    names = input_names(module, len(args))
    axes = ({k: dict(v) for k, v in dynamic_axes.items()} if dynamic_axes is not None
            else default_dynamic_axes(names, args))
    return _export_rung(torch, module.eval(), args, names, chosen, axes)


def optimize_module(module: Any, example_inputs: Any, *,
                    dynamic_axes: Optional[Mapping[str, Mapping[int, str]]],
                    export: Union[str, Sequence[str], None],
                    optimize: Callable[[bytes], tuple[Any, list[str]]]):
    """Exports `module` to ONNX on each rung of the ladder, optimizes each
    export with `optimize` (returning the result and its remark lines), and
    returns the result and remarks of the first rung whose graph yields the
    most TTT layers (then the most rewritten), with remarks saying which
    export was used and why the rungs before it were not."""
    torch = _import_torch()
    if not isinstance(module, torch.nn.Module):
        raise UnsupportedError(
            f"example_inputs is for a torch.nn.Module, got a {type(module).__name__}")
    if example_inputs is None:
        raise UnsupportedError("ttt.optimize(module, example_inputs): a torch.nn.Module "
                               "needs example inputs to be exported")
    rungs = _rungs(export)
    args = _as_tuple(example_inputs)
    names = input_names(module, len(args))
    axes = ({k: dict(v) for k, v in dynamic_axes.items()} if dynamic_axes is not None
            else default_dynamic_axes(names, args))
    module = module.eval()
    where = f"<{type(module).__name__}>"
    failed: dict[str, str] = {}  # rung name -> why it gave no graph to use
    seen: dict[bytes, Rung] = {}
    runs: list[tuple[tuple[int, int], Rung, bytes, Any, list[str]]] = []
    for rung in rungs:
        try:
            data = _export_rung(torch, module, args, names, rung, axes)
        except Exception as e:  # the exporters raise many types
            failed[rung.name] = f"export failed: {_one_line(e)}"
            continue
        digest = hashlib.sha256(data).digest()
        if digest in seen:
            failed[rung.name] = f"the same graph as {seen[digest].name}"
            continue
        seen[digest] = rung
        try:
            result, remarks = optimize(data)
        except (ParseError, UnsupportedError) as e:
            # e.g. an opset this build does not read yet: try the next rung.
            failed[rung.name] = f"its model was not read: {e}"
            continue
        runs.append((count_layers(remarks), rung, data, result, remarks))
    if not runs:
        raise ExportError(f"cannot export {type(module).__name__} to ONNX: "
                          + "; ".join(f"{name}: {why}" for name, why in failed.items()))
    # The first of the best: max() keeps the first of equal scores.
    score, rung, data, result, remarks = max(runs, key=lambda run: run[0])
    dynamic = dynamic_dims(data)
    head = (f"{where}: remark: export: {rung.name}: {rung.describe()}; "
            + (f"dims that stayed dynamic: {', '.join(dynamic)}" if dynamic
               else "every dim static"))
    if rung.dims != "dynamic" and any(r.dims == "dynamic" for r in rungs[:rungs.index(rung)]):
        # Research code often loops over chunks in Python, which traces for one
        # length only: a static sequence is then the export that keeps the layer.
        head += (f"; the sequence length is fixed at the example's: with it dynamic, the "
                 f"export failed or its graph yields fewer TTT layers")
    lines = [head]
    scores = {r.name: s for s, r, *_ in runs}
    for other in rungs[:rungs.index(rung)]:
        why = failed.get(other.name) or (
            f"its graph yields {scores[other.name][0]} TTT layer(s), "
            f"{scores[other.name][1]} rewritten; {rung.name} yields {score[0]}, "
            f"{score[1]} rewritten")
        lines.append(f"{where}: remark: export: {other.name} not used: {why}")
    return result, lines + list(remarks)


def optimize_module_via_mlir(module: Any, example_inputs: Any, *,
                             optimize: Callable[[str], tuple[Any, list[str]]]):
    """`torch.export` and torch-mlir's FX importer to linalg on tensors, then
    `optimize` (ttt-optimize-linalg) on the MLIR text."""
    torch = _import_torch()
    if not isinstance(module, torch.nn.Module) or example_inputs is None:
        raise UnsupportedError("ttt.optimize(..., via='mlir') takes a torch.nn.Module "
                               "and its example inputs")
    try:
        from torch_mlir import fx
    except ImportError as e:
        raise MissingDependencyError(
            f"ttt.optimize(..., via='mlir') needs torch-mlir, which is not installed ({e}): "
            "pip install -r python/requirements-linalg.txt (it pins the torch it was built "
            "against)") from None
    args = _as_tuple(example_inputs)
    try:
        with torch.no_grad():
            imported = fx.export_and_import(module.eval(), *args,
                                            output_type="linalg-on-tensors",
                                            func_name="forward")
    except Exception as e:  # torch.export and the importer raise many types
        raise ExportError(f"cannot import {type(module).__name__} with torch-mlir: "
                          f"{_one_line(e)}") from None
    result, remarks = optimize(str(imported))
    where = f"<{type(module).__name__}>"
    return result, [f"{where}: remark: export: via-mlir: torch.export and torch-mlir's FX "
                    "importer to linalg on tensors, static shapes"] + list(remarks)
