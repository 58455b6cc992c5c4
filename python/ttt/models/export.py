"""ONNX export of the reference layers: traced (chunk loop unrolled) and scripted
(chunk loop as an ONNX ``Loop`` carrying the fast weights).

Both use PyTorch's TorchScript-based exporter (``dynamo=False``), which is what turns a
``torch.jit.script`` module into ONNX control flow.
"""

import warnings
from pathlib import Path
from typing import Dict, Mapping, Optional, Sequence, Union

import onnx
import torch
import torch.nn as nn
from torch import Tensor

__all__ = ["adapt", "export_traced", "export_scripted", "IR_FOR_OPSET"]

# The newest IR version each opset came with: exports are stamped with the IR version of
# their opset, so that older readers (and onnxruntime) take them too.
IR_FOR_OPSET = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}


# Wrappers whose forward takes exactly the graph inputs a layer uses (a scripted module
# may not be exported with None arguments, and a traced one would gain unused inputs).
class _QKV(nn.Module):
    def __init__(self, layer: nn.Module):
        super().__init__()
        self.layer = layer

    def forward(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        return self.layer(q, k, v, None, None)


class _QKVLr(_QKV):
    def forward(self, q: Tensor, k: Tensor, v: Tensor,  # type: ignore[override]
                lr: Tensor) -> Tensor:
        return self.layer(q, k, v, lr, None)


class _QKVM(_QKV):
    def forward(self, q: Tensor, k: Tensor, v: Tensor,  # type: ignore[override]
                momentum: Tensor) -> Tensor:
        return self.layer(q, k, v, None, momentum)


class _QKVLrM(_QKV):
    def forward(self, q: Tensor, k: Tensor, v: Tensor,  # type: ignore[override]
                lr: Tensor, momentum: Tensor) -> Tensor:
        return self.layer(q, k, v, lr, momentum)


_ADAPTERS = {
    ("q", "k", "v"): _QKV,
    ("q", "k", "v", "lr"): _QKVLr,
    ("q", "k", "v", "momentum"): _QKVM,
    ("q", "k", "v", "lr", "momentum"): _QKVLrM,
}


def adapt(module: nn.Module) -> nn.Module:
    """Wrap a `ttt.models.layers.TTTLayer` so that forward takes exactly its
    `input_names`; other modules are returned unchanged."""
    names = getattr(module, "input_names", None)
    if names is None or not hasattr(module, "oracle_spec"):
        return module
    try:
        return _ADAPTERS[tuple(names)](module)
    except KeyError:
        raise ValueError(f"no adapter for inputs {names}") from None


def _input_names(module: nn.Module, n: int, given: Optional[Sequence[str]]):
    if given is not None:
        return list(given)
    names = getattr(module, "input_names", None)
    if names is not None and len(names) == n:
        return list(names)
    return [f"input_{i}" for i in range(n)]


def _finish(path: Path, opset: int) -> onnx.ModelProto:
    model = onnx.load(str(path))
    ir = IR_FOR_OPSET.get(opset)
    if ir is not None and model.ir_version > ir:
        model.ir_version = ir
        onnx.save(model, str(path))
    onnx.checker.check_model(model, full_check=True)
    return model


def _export(module, args, path, opset, input_names, output_names, dynamic_axes,
            do_constant_folding):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(args), str(path), dynamo=False, opset_version=opset,
                          input_names=input_names, output_names=list(output_names),
                          dynamic_axes=dynamic_axes, do_constant_folding=do_constant_folding)
    return _finish(path, opset)


def export_traced(module: nn.Module, example_inputs: Sequence[Tensor], path: Union[str, Path],
                  opset: int = 17, *, input_names: Optional[Sequence[str]] = None,
                  output_names: Sequence[str] = ("o",),
                  do_constant_folding: bool = True) -> onnx.ModelProto:
    """Trace `module` on `example_inputs` and write ONNX to `path`.

    Shapes are static (those of the examples), so the chunk loop is unrolled into one copy
    per chunk that threads the fast weights to the next. Returns the checked model."""
    names = _input_names(module, len(example_inputs), input_names)
    m = adapt(module).eval()
    return _export(m, example_inputs, path, opset, names, output_names, None,
                   do_constant_folding)


def export_scripted(module: nn.Module, example_inputs: Sequence[Tensor], path: Union[str, Path],
                    opset: int = 17, *, input_names: Optional[Sequence[str]] = None,
                    output_names: Sequence[str] = ("o",),
                    dynamic_axes: Optional[Mapping[str, Dict[int, str]]] = None,
                    do_constant_folding: bool = True) -> onnx.ModelProto:
    """``torch.jit.script`` `module` and write ONNX to `path`.

    The chunk loop becomes an ONNX ``Loop`` whose carried values are the fast weights
    (and momentum); `dynamic_axes` (e.g. ``{"q": {0: "B", 2: "T"}, ...}``) keeps batch and
    sequence length symbolic. Returns the checked model."""
    if getattr(module, "scriptable", True) is False:
        raise ValueError(f"{type(module).__name__} cannot be scripted with this configuration")
    names = _input_names(module, len(example_inputs), input_names)
    if isinstance(module, torch.jit.ScriptModule):
        m = module
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.jit.script's deprecation notice
            m = torch.jit.script(adapt(module).eval())
    return _export(m, example_inputs, path, opset, names, output_names,
                   dict(dynamic_axes) if dynamic_axes else None, do_constant_folding)
