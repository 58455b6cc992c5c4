"""PyTorch front door: ``ttt.optimize(module, example_inputs)``.

torch is an optional dependency (``pip install ttt[torch]``): nothing here
imports it before a module is actually exported.
"""

from __future__ import annotations

import inspect
import io
import sys
from typing import Any, Callable, Mapping, Optional

from ._errors import Error, ExportError, ParseError, UnsupportedError

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


def _export(torch, module, args, names, axes, exporter: str) -> bytes:
    buffer = io.BytesIO()
    if exporter == "dynamo":
        # The current default exporter (torch.export): dynamic sizes as Dims. Axes
        # that share a name and a size in the example share one Dim, so that the
        # exported graph knows the queries, keys and values are equally long.
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
                                    dynamic_shapes=dims)
        return program.model_proto.SerializeToString()
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(
        torch.onnx.export).parameters else {}
    torch.onnx.export(module, args, buffer, input_names=names, dynamic_axes=axes,
                      opset_version=17, **kwargs)
    return buffer.getvalue()


def optimize_module(module: Any, example_inputs: Any, *,
                    dynamic_axes: Optional[Mapping[str, Mapping[int, str]]],
                    optimize: Callable[[bytes], Any]):
    """Exports `module` to ONNX and optimizes it with `optimize`."""
    torch = _import_torch()
    if not isinstance(module, torch.nn.Module):
        raise UnsupportedError(
            f"example_inputs is for a torch.nn.Module, got a {type(module).__name__}")
    if example_inputs is None:
        raise UnsupportedError("ttt.optimize(module, example_inputs): a torch.nn.Module "
                               "needs example inputs to be exported")
    args = _as_tuple(example_inputs)
    names = input_names(module, len(args))
    axes = ({k: dict(v) for k, v in dynamic_axes.items()} if dynamic_axes is not None
            else default_dynamic_axes(names, args))
    module = module.eval()
    failures = []
    for exporter in ("dynamo", "torchscript"):
        try:
            with torch.no_grad():
                data = _export(torch, module, args, names, axes, exporter)
        except Exception as e:  # the exporters raise many types
            failures.append(f"{exporter} exporter: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            continue
        try:
            return optimize(data)
        except (ParseError, UnsupportedError) as e:
            # e.g. an opset this build does not read yet: try the other one.
            failures.append(f"{exporter} exporter's model: {e}")
    raise ExportError(f"cannot export {type(module).__name__} to ONNX: "
                      + "; ".join(failures))
