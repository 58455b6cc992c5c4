"""``ttt.Session`` / ``ttt.load``: run an (optimized) ONNX model in
onnxruntime with the call signature of the module it came from."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._errors import InputFileError, InvalidInputError, ParseError, RunError


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch.Tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


class Session:
    """An onnxruntime session over ``model`` (an ``onnx.ModelProto``, ONNX
    bytes or a path), called like the module: positional arguments in the
    order of the model's inputs, or keywords by input name. Returns one
    NumPy array, or a tuple of them for several outputs.

    Example::

        >>> import numpy as np, ttt
        >>> m = ttt.optimize("test/fixtures/onnx/linear_dot.traced.onnx")
        >>> run = ttt.Session(m)
        >>> run.input_names
        ['q', 'k', 'v']
    """

    def __init__(self, model: Any, providers: list[str] | None = None):
        import onnxruntime as ort

        if hasattr(model, "SerializeToString"):
            data, self.name = model.SerializeToString(), "<onnx>"
        elif isinstance(model, (bytes, bytearray, memoryview)):
            data, self.name = bytes(model), "<onnx>"
        else:
            self.name = os.fspath(model)
            try:
                with open(self.name, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise InputFileError(f"{self.name}: cannot read: {e.strerror or e}") from None
        try:
            self._session = ort.InferenceSession(
                data, providers=providers or ["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's own exception types
            raise ParseError(f"{self.name}: onnxruntime cannot load it: "
                             f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        self.input_names = [i.name for i in self._session.get_inputs()]
        self.output_names = [o.name for o in self._session.get_outputs()]

    def __call__(self, *args: Any, **kwargs: Any):
        if len(args) > len(self.input_names):
            raise InvalidInputError(f"{self.name}: takes {len(self.input_names)} "
                                    f"input(s), got {len(args)}")
        feeds = dict(zip(self.input_names, (_as_array(a) for a in args)))
        for key, value in kwargs.items():
            if key not in self.input_names:
                raise InvalidInputError(f"{self.name}: no input named '{key}' (inputs: "
                                        f"{', '.join(self.input_names)})")
            if key in feeds:
                raise InvalidInputError(f"{self.name}: input '{key}' given twice")
            feeds[key] = _as_array(value)
        missing = [n for n in self.input_names if n not in feeds]
        if missing:
            raise InvalidInputError(f"{self.name}: missing input "
                                    f"{', '.join(repr(m) for m in missing)}")
        try:
            outputs = self._session.run(None, feeds)
        except Exception as e:
            raise RunError(f"{self.name}: onnxruntime failed: "
                           f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def load(model: Any, providers: list[str] | None = None) -> Session:
    """``ttt.Session(model)``: the model ready to call."""
    return Session(model, providers)
