"""Exceptions of the ttt package: every failure is a :class:`ttt.Error`."""

from __future__ import annotations

__all__ = [
    "Error",
    "ParseError",
    "InvalidInputError",
    "InputFileError",
    "CompileError",
    "ExportError",
    "RunError",
    "UnsupportedError",
    "VerificationError",
]


class Error(Exception):
    """Base class of every ttt error; ``str(e)`` is one line, the same
    message the command-line tools print.

    Example::

        >>> import ttt
        >>> try:
        ...     ttt.explain(b"not a model")
        ... except ttt.Error as e:
        ...     print(type(e).__name__)
        ParseError
    """


class ParseError(Error):
    """The model could not be read: malformed MLIR, or bytes that are not an
    ONNX ModelProto."""


class InvalidInputError(Error, ValueError):
    """A bad argument: unknown format, simplification or device, or inputs
    whose names, count, dtypes or shapes do not match the model."""


class InputFileError(Error, FileNotFoundError):
    """A model path that does not exist or cannot be read."""


class CompileError(Error):
    """A pass or pipeline failed."""


class ExportError(Error):
    """The result could not be written (e.g. the ONNX checker rejected it)."""


class RunError(Error):
    """JIT compilation or the call of the compiled function failed."""


class UnsupportedError(Error):
    """The request is valid but this build cannot do it yet (e.g. running an
    ONNX model natively)."""


class VerificationError(Error):
    """Two models disagree beyond the tolerance; ``errors`` maps each output
    name to its max relative error."""

    def __init__(self, message: str, errors: dict[str, float] | None = None):
        super().__init__(message)
        self.errors: dict[str, float] = dict(errors or {})


_BY_KIND = {
    "parse": ParseError,
    "invalid": InvalidInputError,
    "compile": CompileError,
    "export": ExportError,
    "run": RunError,
}


def _raise_for(result: dict) -> None:
    """Raises the exception a C++ API result describes, if it failed."""
    if not result["ok"]:
        raise _BY_KIND.get(result["kind"], Error)(result["message"])


for _name in __all__:
    globals()[_name].__module__ = "ttt"
del _name
