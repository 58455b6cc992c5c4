"""ttt: test-time-training layers compiled as linear attention.

The Python front door of the ``ttt`` compiler (MLIR 22, C++). It binds the
project's C++ API (``ttt._ttt``) and adds NumPy/ONNX conveniences:

- :func:`optimize` -- rewrite the TTT layers proven to be linear attention:
  in an ONNX model (found from its dataflow, rewritten into standard ONNX
  ops), or in MLIR with ``ttt`` layers (``ttt-simplify``, ``ttt-to-linattn``).
- :func:`explain` -- per-layer analysis, printable as a table.
- :func:`verify` -- compare two ONNX models in onnxruntime.
- :func:`run` -- compile MLIR with ``ttt-to-cpu`` and run it natively.
- :class:`Session` / :func:`load` -- run an ONNX model in onnxruntime,
  called like the module it was exported from.

A ``torch.nn.Module`` goes in with its example inputs (``pip install
ttt[torch]``)::

    model = ttt.optimize(module, (q, k, v))    # an onnx.ModelProto
    fast = ttt.load(model)
    out = fast(q, k, v)

Every failure raises a :class:`ttt.Error` subclass carrying a one-line
message, the same as the command-line tools print.

Example::

    >>> import ttt
    >>> print(ttt.explain("examples/lact_v2_small.mlir"))     # doctest: +SKIP
    >>> text = ttt.optimize("examples/lact_v2_small.mlir", emit="mlir")
    >>> "linattn." in text
    True

The PyTorch reference models live in :mod:`ttt.models` (needs torch; it does
not need the compiled extension).
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import _errors  # noqa: E402
from ._errors import (  # noqa: E402
    CompileError,
    Error,
    ExportError,
    InputFileError,
    InvalidInputError,
    ParseError,
    RunError,
    UnsupportedError,
    VerificationError,
)
from . import _api  # noqa: E402
from ._api import (  # noqa: E402
    EXPORT_LADDER,
    ExplainReport,
    LayerReport,
    Remark,
    explain,
    optimize,
    run,
    verify,
)
from ._session import Session, load  # noqa: E402
from ._torch import MissingDependencyError  # noqa: E402

__all__ = [
    "__version__",
    "optimize",
    "explain",
    "verify",
    "run",
    "Session",
    "load",
    "MissingDependencyError",
    "LayerReport",
    "ExplainReport",
    "Remark",
    "EXPORT_LADDER",
    "SIMPLIFICATIONS",
    *_errors.__all__,
]


def __getattr__(name: str):
    # SIMPLIFICATIONS comes from the extension on first use (see _api).
    if name == "SIMPLIFICATIONS":
        return _api.SIMPLIFICATIONS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
