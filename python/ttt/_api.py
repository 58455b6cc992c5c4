"""The functions of the ttt package, over the C++ API (``ttt._ttt``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _ext, _torch
from ._errors import (
    Error,
    InputFileError,
    InvalidInputError,
    ParseError,
    UnsupportedError,
    VerificationError,
    _raise_for,
)
from ._remarks import Remark, as_remarks

__all__ = [
    "optimize",
    "explain",
    "verify",
    "run",
    "LayerReport",
    "ExplainReport",
    "Remark",
    "SIMPLIFICATIONS",
    "EXPORT_LADDER",
]

#: The names of the export ladder's rungs, in the order ``optimize`` of a
#: torch.nn.Module tries them (see its ``export`` argument).
EXPORT_LADDER = tuple(rung.name for rung in _torch.LADDER)


def __getattr__(name: str):
    """``SIMPLIFICATIONS``: the model-changing simplifications
    ``optimize(simplify=...)`` accepts (the paper's Variants 1-6, a tuple of
    names); without any, only exact folds are applied.

    The compiler holds the list (``ttt._ttt.simplifications()``), so it is
    read on first use: ``import ttt`` works without the extension.
    """
    if name == "SIMPLIFICATIONS":
        value = tuple(_ext.load().simplifications())
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MLIR_BYTECODE_MAGIC = b"ML\xefR"

Model = Union[str, bytes, "os.PathLike[str]", Any]


@dataclass
class _Input:
    data: Union[bytes, str]
    format: str  # "mlir", "onnx", or "linalg" (MLIR for ttt-optimize-linalg)
    name: str


def _looks_like_mlir_text(text: str) -> bool:
    """Whether a string that names no file is MLIR text rather than a path.
    A path has no line break or brace, and ``module_linear.onnx`` starts with
    ``module`` without being the ``module`` keyword."""
    if "\n" in text or "{" in text:
        return True
    stripped = text.lstrip()
    return bool(re.match(r'(module|func\.func|"builtin\.module")(\s|\{|@|$)|#|//|!',
                         stripped))


def _is_path(model: Any) -> bool:
    """Strings are paths unless they cannot be: an existing file is one, and
    so is anything that does not read as MLIR text."""
    if isinstance(model, os.PathLike):
        return True
    if not isinstance(model, str):
        return False
    try:
        if os.path.isfile(model):
            return True
    except (OSError, ValueError):  # a name too long, a NUL byte
        return False
    return not _looks_like_mlir_text(model)


def _read_model(model: Model) -> _Input:
    """Normalizes every accepted form of a model."""
    if _is_path(model):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InputFileError(f"{path}: cannot read: {e.strerror or e}") from None
        name = path
        if path.endswith(".onnx"):
            return _Input(data, "onnx", name)
        if data.startswith(_MLIR_BYTECODE_MAGIC) or path.endswith((".mlir", ".mlirbc")):
            return _Input(data, "mlir", name)
        # Unknown extension: ONNX protobufs are binary, MLIR text is not.
        try:
            return _Input(data.decode("utf-8"), "mlir", name)
        except UnicodeDecodeError:
            return _Input(data, "onnx", name)
    if isinstance(model, str):
        return _Input(model, "mlir", "<mlir>")
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if data.startswith(_MLIR_BYTECODE_MAGIC):
            return _Input(data, "mlir", "<mlir>")
        return _Input(data, "onnx", "<onnx>")
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto
        return _Input(model.SerializeToString(), "onnx", "<onnx>")
    raise InvalidInputError(
        f"cannot use a {type(model).__name__} as a model (expected a path, "
        "MLIR text, ONNX bytes or an onnx.ModelProto)")


def optimize(model: Model, example_inputs: Any = None, *, simplify: Sequence[str] = (),
             emit: str = "onnx", return_remarks: bool = False,
             on_remark: Optional[Callable[[str], None]] = None,
             dynamic_axes: Optional[Mapping[str, Mapping[int, str]]] = None,
             export: Union[str, Sequence[str], None] = None, via: str = "onnx"):
    """Rewrites every TTT layer proven to be linear attention.

    Runs ``ttt-simplify`` (exact folds, plus the named model-changing
    ``simplify`` options, see :data:`SIMPLIFICATIONS`) and then
    ``ttt-to-linattn``, the same passes as ``ttt-opt --ttt-simplify=...
    --ttt-to-linattn``.

    ``model`` is a path (``.onnx``, ``.mlir``), MLIR text, serialized ONNX
    bytes, an ``onnx.ModelProto``, or a ``torch.nn.Module`` with its
    ``example_inputs`` (a tensor or a tuple of them; this needs ``pip install
    ttt[torch]``). A module is exported on each rung of an export ladder
    (:data:`EXPORT_LADDER`): PyTorch's default (dynamo) exporter with dynamic
    batch (first) and sequence (second to last) dimensions (or
    ``dynamic_axes``), then with only the batch dynamic, then with static
    shapes, then the same three with the TorchScript exporter (opset 17, with
    a decomposition of ``aten::rms_norm``, which it lacks). The first rung
    whose graph yields the most TTT layers (then the most rewritten) is kept;
    ``export`` names the rungs to try instead (e.g. ``"dynamo-static"``).
    Remarks of kind ``"export"`` say which export was used, which dims
    stayed dynamic, and why each rung before it was not used (its export
    failed, or its graph yields fewer layers: a chunk loop over the length is
    often traced only with a static sequence). ``via="mlir"`` takes another
    road: ``torch.export``, torch-mlir's FX importer to linalg on tensors,
    and ``ttt-optimize-linalg`` (needs the ``torch_mlir`` package); it returns
    MLIR text.

    A string is a path if such a file exists or if it cannot be MLIR text.
    Returns an ``onnx.ModelProto`` for ``emit="onnx"``, MLIR text for
    ``emit="mlir"``; with ``return_remarks=True``, a pair ``(result,
    remarks)`` where ``remarks`` are :class:`Remark` records (each the
    one-line remark as a ``str``, with ``kind``, ``layer``, ``node``,
    ``form``, ``rewritten`` and ``reason`` read out): which layers changed and
    why the others did not. ``on_remark`` is called with each remark as the
    compiler emits it (progress on a large model; for a module, the kept
    rung's remarks once the ladder is done).

    ONNX input runs ``ttt-onnx-optimize`` instead (what ``ttt-opt
    model.onnx -o out.onnx`` does): every TTT layer is found from the graph's
    dataflow (traced chunk copies, a scripted ``Loop``, a full-batch step),
    the layers that are exactly linear attention are rewritten into their
    parallel form in standard ONNX ops, and every other node stays as it was.
    Each layer found gets one remark saying what happened and why.
    With ``simplify`` (which changes the model, and says so in a remark), the
    named variants apply to every layer the raise reads, rewritable or not; a
    layer they do not make linear attention keeps its nodes.

    Example::

        >>> import ttt
        >>> text = ttt.optimize("examples/lact_llm_layer.mlir",
        ...                     simplify=["freeze-inner", "drop-weight-norm"],
        ...                     emit="mlir")
        >>> "linattn." in text
        True
    """
    if emit not in ("onnx", "mlir"):
        raise InvalidInputError(f"unknown emit '{emit}' (expected 'onnx' or 'mlir')")
    if isinstance(simplify, str):
        simplify = simplify.replace(",", " ").split()
    if via not in ("onnx", "mlir"):
        raise InvalidInputError(f"unknown via '{via}' (expected 'onnx' or 'mlir')")
    if example_inputs is not None or _torch.is_torch_module(model):
        if via == "mlir":
            result, remarks = _torch.optimize_module_via_mlir(
                model, example_inputs,
                optimize=lambda text: _optimize_source(
                    _Input(text, "linalg", f"<{type(model).__name__}>"), simplify, "mlir",
                    None))
        else:
            result, remarks = _torch.optimize_module(
                model, example_inputs, dynamic_axes=dynamic_axes, export=export,
                optimize=lambda data: _optimize_source(
                    _Input(data, "onnx", "<onnx>"), simplify, emit, None))
        remarks = as_remarks(remarks)
        if on_remark is not None:
            for remark in remarks:
                on_remark(remark)
        return (result, remarks) if return_remarks else result
    if via != "onnx":
        raise InvalidInputError("via='mlir' is for a torch.nn.Module with example_inputs")
    result, remarks = _optimize_source(_read_model(model), simplify, emit, on_remark)
    return (result, remarks) if return_remarks else result


def _optimize_source(src: _Input, simplify: Sequence[str], emit: str,
                     on_remark: Optional[Callable[[str], None]]):
    """The compiler's optimize on one input: (result, remarks)."""
    # An exception in the callback is raised here, after the compiler has
    # returned (it cannot unwind through C++); later remarks are not passed on.
    raised: list[BaseException] = []
    layers = [0]

    def forward(line: str) -> None:
        if raised or on_remark is None:
            return
        remark = Remark(line, layers[0])
        layers[0] += remark.kind == "layer"
        try:
            on_remark(remark)
        except BaseException as e:  # noqa: BLE001 -- re-raised below
            raised.append(e)

    result = _ext.load().optimize(src.data, src.format, list(simplify), emit, src.name,
                                  forward if on_remark is not None else None)
    if raised:
        raise raised[0]
    _raise_for(result)
    output = result["output"]
    if emit == "onnx":
        import onnx

        output = onnx.load_from_string(output)
    return output, as_remarks(result["remarks"])


@dataclass
class LayerReport:
    """What the analysis proved about one TTT layer (``ttt-explain``)."""

    location: str
    op: str
    lowering: str
    update: str
    output_linear: bool
    static_kernel: bool
    rewritable: bool
    proven: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    explanation: str = ""

    def __str__(self) -> str:
        return f"{self.location}: {self.explanation}"


_COLUMNS = ("location", "op", "exact lowering", "update", "rewritable", "blockers")


class ExplainReport(list):
    """A list of :class:`LayerReport`; ``str()`` renders it as a table.
    ``note`` says why the list is empty when it is."""

    note: str = ""

    def table(self) -> str:
        """The reports as a Markdown table (or the note, if there are none)."""
        if not self:
            return self.note or "no TTT layers found"
        rows = [
            (r.location, r.op, r.lowering, r.update, "yes" if r.rewritable else "no",
             "; ".join(r.blockers + r.unsupported) or "-")
            for r in self
        ]
        lines = ["| " + " | ".join(_COLUMNS) + " |",
                 "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()




def explain(model: Model) -> ExplainReport:
    """Analyzes every TTT layer: is it linear attention, which lowering is
    exact, what blocks a better one (``ttt-opt --ttt-explain``).

    Returns an :class:`ExplainReport` (a list of :class:`LayerReport`) that
    prints as a table. For ONNX input, every layer the ONNX raise finds is
    listed: a raised layer with its analysis, any other with ``op == "onnx"``
    and the reason it stays as it is in ``blockers``.

    Example::

        >>> import ttt
        >>> reports = ttt.explain("examples/lact_v2_small.mlir")
        >>> reports[0].rewritable
        True
        >>> print(reports)            # doctest: +SKIP
        | location | op | exact lowering | update | rewritable | blockers |
        ...
    """
    src = _read_model(model)
    result = _ext.load().explain(src.data, src.format, src.name)
    _raise_for(result)
    report = ExplainReport(LayerReport(**layer) for layer in result["layers"])
    if not report:
        report.note = "no TTT layers found"
    return report


def _onnx_session(model: Model):
    import onnxruntime as ort

    if _is_path(model):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data: bytes = f.read()
        except OSError as e:
            raise InputFileError(f"{path}: cannot read: {e.strerror or e}") from None
        name = path
    else:
        src = _read_model(model)
        if src.format != "onnx":
            raise InvalidInputError("verify compares ONNX models; got MLIR")
        data, name = src.data, src.name  # type: ignore[assignment]
    try:
        return ort.InferenceSession(data, providers=["CPUExecutionProvider"]), name
    except Exception as e:  # onnxruntime's own exception types
        raise ParseError(f"{name}: onnxruntime cannot load it: "
                         f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


_ORT_DTYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(float16)": np.float16,
    "tensor(bool)": np.bool_,
}


def _random_inputs(session, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inputs = {}
    for arg in session.get_inputs():
        shape = [d if isinstance(d, int) and d >= 0 else 1 for d in arg.shape]
        dtype = _ORT_DTYPES.get(arg.type)
        if dtype is None:
            raise UnsupportedError(f"input '{arg.name}': cannot make random {arg.type}")
        if np.issubdtype(dtype, np.floating):
            inputs[arg.name] = rng.uniform(-1, 1, shape).astype(dtype)
        elif dtype is np.bool_:
            inputs[arg.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            inputs[arg.name] = rng.integers(-10, 11, shape).astype(dtype)
    return inputs


def _check_inputs(session, name: str, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    expected = {arg.name: arg for arg in session.get_inputs()}
    unknown = sorted(set(inputs) - set(expected))
    if unknown:
        raise InvalidInputError(
            f"{name}: no input named {', '.join(repr(u) for u in unknown)} "
            f"(inputs: {', '.join(expected)})")
    missing = [n for n in expected if n not in inputs]
    if missing:
        raise InvalidInputError(f"{name}: missing input {', '.join(repr(m) for m in missing)}")
    arrays = {}
    for key, arg in expected.items():
        array = np.asarray(inputs[key])
        dtype = _ORT_DTYPES.get(arg.type)
        if dtype is not None and array.dtype != dtype:
            raise InvalidInputError(f"{name}: input '{key}': dtype mismatch: expected "
                                    f"{np.dtype(dtype).name}, got {array.dtype.name}")
        if len(array.shape) != len(arg.shape) or any(
                isinstance(d, int) and d != s for d, s in zip(arg.shape, array.shape)):
            raise InvalidInputError(
                f"{name}: input '{key}': shape mismatch: expected "
                f"{tuple(arg.shape)}, got {tuple(array.shape)}")
        arrays[key] = array
    return arrays


def _max_rel_error(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(a))), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(a - b)) / scale)


def verify(original: Model, optimized: Model, inputs: Mapping[str, Any] | None = None,
           *, rtol: float = 1e-5, seed: int = 0) -> dict[str, float]:
    """Runs both ONNX models in onnxruntime and compares their outputs.

    ``inputs`` maps the original model's input names to arrays; without it,
    seeded random inputs are made (floats uniform in [-1, 1), dynamic sizes 1).
    Returns the max relative error of each output (max |a - b| / max |a|);
    raises :class:`ttt.VerificationError` if any exceeds ``rtol`` and
    :class:`ttt.InvalidInputError` for inputs of wrong names or shapes.

    Example::

        >>> import ttt
        >>> m = "test/fixtures/onnx/linear_dot.traced.onnx"
        >>> errors = ttt.verify(m, ttt.optimize(m))
        >>> errors["o"] <= 1e-5
        True
    """
    sess_a, name_a = _onnx_session(original)
    sess_b, name_b = _onnx_session(optimized)
    feeds = (_random_inputs(sess_a, seed) if inputs is None
             else _check_inputs(sess_a, name_a, inputs))
    names_b = {arg.name for arg in sess_b.get_inputs()}
    if set(feeds) != names_b:
        raise VerificationError(
            f"{name_b}: inputs differ from {name_a}'s: {sorted(names_b)} vs {sorted(feeds)}")
    try:
        out_a = sess_a.run(None, feeds)
        out_b = sess_b.run(None, feeds)
    except Exception as e:
        raise InvalidInputError(f"onnxruntime failed: {str(e).splitlines()[0]}") from None
    outputs_a = [o.name for o in sess_a.get_outputs()]
    outputs_b = [o.name for o in sess_b.get_outputs()]
    if outputs_a != outputs_b:
        raise VerificationError(f"outputs differ: {outputs_a} vs {outputs_b}")
    errors = {n: _max_rel_error(a, b) for n, a, b in zip(outputs_a, out_a, out_b)}
    bad = {n: e for n, e in errors.items() if not e <= rtol}
    if bad:
        worst = max(bad, key=lambda n: bad[n])
        raise VerificationError(
            f"output '{worst}' differs: max relative error {bad[worst]:.3g} > rtol {rtol:g}",
            errors)
    return errors


def _format_bytes(n: int) -> str:
    """``n`` bytes to three significant digits, as the C++ tools write it:
    "149 GiB", "21.3 GiB", "100 bytes"."""
    if n < 1024:
        return f"{n} byte" if n == 1 else f"{n} bytes"
    value = n / 1024
    units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    unit = 0
    while value >= 1024 and unit + 1 < len(units):
        value /= 1024
        unit += 1
    digits = 2 if value < 9.995 else 1 if value < 99.95 else 0
    return f"{value:.{digits}f} {units[unit]}"


def _check_memory(name: str, arrays: Sequence[np.ndarray]) -> None:
    """Refuses inputs the memory cannot hold, before anything is copied:
    Linux lends more memory than it has and ends the process (the Python
    interpreter) when the pages are touched. ``ttt.run`` holds each input
    twice while it runs (the extension's copy and the compiled code's
    array), a view that is not C-contiguous (a broadcast, a transpose)
    three times (its contiguous copy first)."""
    available = _ext.load().available_memory()
    if available < 0:  # the system does not say
        return
    total = needed = 0
    for i, a in enumerate(arrays):
        size = a.size * a.itemsize
        if size > available:
            shape = "x".join(str(d) for d in a.shape) or "scalar"
            view = "" if a.flags.c_contiguous else " view"
            raise InvalidInputError(
                f"{name}: input {i} ({a.dtype.name} {shape}{view}, "
                f"{_format_bytes(size)}) exceeds the available memory "
                f"({_format_bytes(available)})")
        total += size
        needed += size * (2 if a.flags.c_contiguous else 3)
    if needed > available:
        raise InvalidInputError(
            f"{name}: the inputs ({_format_bytes(total)}) and the copies "
            f"ttt.run makes of them need {_format_bytes(needed)}, which exceeds "
            f"the available memory ({_format_bytes(available)})")


def run(model_or_mlir: Model, inputs: Union[Sequence[Any], Mapping[str, Any], np.ndarray],
        *, device: str = "cpu", entry: str = "") -> list[np.ndarray]:
    """Compiles an MLIR module with ``ttt-to-cpu`` and runs one function
    natively (``ttt-run``'s compiler and JIT), returning NumPy arrays. As in
    ``ttt-run``, each ttt layer runs in the form the cost model picks for
    this machine, contractions call a BLAS GEMM where one loads, and OpenMP
    threads share out the streams when the machine has more than one core
    (the results do not depend on the thread count).

    ``model_or_mlir`` is a ``.mlir`` path or MLIR text; ``inputs`` is a
    sequence of arrays (one per argument), a dict ``{"arg0": ..., ...}``, or a
    single array. Dtypes (float32/float64/int32/int64), ranks and static
    sizes are checked first, and so is the memory: inputs (a broadcast view
    counts at its full size) that the available memory cannot hold with the
    copies the call makes raise :class:`ttt.InvalidInputError` before
    anything is copied. Only ``device="cpu"`` is supported here. ONNX
    models are not compiled natively (their other nodes have no ttt
    lowering): run them with onnxruntime, e.g. through :func:`ttt.verify`.

    Example::

        >>> import numpy as np, ttt
        >>> mlir = '''func.func @add(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
        ...   %0 = arith.addf %a, %b : tensor<2xf32>
        ...   return %0 : tensor<2xf32>
        ... }'''
        >>> ttt.run(mlir, [np.ones(2, np.float32), np.ones(2, np.float32)])[0]
        array([2., 2.], dtype=float32)
    """
    src = _read_model(model_or_mlir)
    if src.format != "mlir":
        raise UnsupportedError(
            f"{src.name}: ttt.run compiles MLIR; an ONNX model's nodes have no "
            "native lowering in ttt: run it with onnxruntime (ttt.verify)")
    if isinstance(inputs, np.ndarray):
        arrays = [inputs]
    elif isinstance(inputs, Mapping):
        arrays = []
        for i in range(len(inputs)):
            if f"arg{i}" not in inputs:
                raise InvalidInputError(
                    f"{src.name}: inputs are named arg0, arg1, ...; 'arg{i}' is missing")
            arrays.append(inputs[f"arg{i}"])
    else:
        arrays = list(inputs)
    # np.asarray keeps a view a view: nothing is copied before the sizes
    # are checked.
    arrays = [np.asarray(a) for a in arrays]
    for i, a in enumerate(arrays):
        if a.dtype.name not in ("float32", "float64", "int32", "int64"):
            raise InvalidInputError(
                f"{src.name}: input {i}: unsupported dtype {a.dtype.name} "
                "(expected float32, float64, int32 or int64)")
    _check_memory(src.name, arrays)
    # The extension copies each contiguous array once (a strided view or a
    # broadcast one is made contiguous first).
    buffers = [(a.dtype.name, [int(s) for s in a.shape], np.ascontiguousarray(a))
               for a in arrays]
    result = _ext.load().run(src.data, buffers, device, entry, src.name)
    _raise_for(result)
    return [np.frombuffer(data, dtype=dtype).reshape(shape).copy()
            for dtype, shape, data in result["outputs"]]
