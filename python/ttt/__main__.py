"""``python -m ttt``: the command-line interface of the package.

Examples::

    python -m ttt optimize in.onnx -o out.onnx --explain --verify
    python -m ttt optimize layer.mlir -o out.mlir --simplify freeze-inner drop-weight-norm
    python -m ttt explain layer.mlir
    python -m ttt run layer.mlir --inputs in.npz --outputs out.npz

``opt`` is another name of ``optimize``; options may come before or after the
input. ``pip install .`` installs this interface as the command ``ttt``
(``ttt explain layer.mlir``), and, as the commands ``ttt-opt`` and ``ttt-run``,
the C++ tools themselves (the README's ``build/bin/ttt-opt`` and
``build/bin/ttt-run``, with their own flags: ``ttt-opt layer.mlir
--ttt-explain``, ``ttt-run layer.mlir --random-inputs=1 --repeat=3``).

Every error is one line, ``ttt: error: MESSAGE``, and exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import numpy as np

from . import _api, _ext
from ._errors import Error, ExportError


def _simplifications(text: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in _api.SIMPLIFICATIONS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {', '.join(repr(u) for u in unknown)} (choose from "
            f"{', '.join(_api.SIMPLIFICATIONS)})")
    return names


def _normalize(argv: Sequence[str]) -> list[str]:
    """``--simplify A B`` takes the names that follow it and nothing else, so
    that the input and other options may come before or after it."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg != "--simplify":
            out.append(arg)
            continue
        names = []
        # A word that is no file and no path is a (possibly misspelt) name,
        # reported as an invalid choice rather than taken as the input.
        while i < len(argv) and not argv[i].startswith("-") and (
                all(n in _api.SIMPLIFICATIONS for n in argv[i].split(",") if n)
                or not (os.path.exists(argv[i]) or "/" in argv[i] or "." in argv[i])):
            names.append(argv[i])
            i += 1
        out.append("--simplify=" + ",".join(names))
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ttt",
                                description="ttt: compile TTT layers as linear attention")
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("optimize", aliases=["opt"],
                       help="rewrite TTT layers proven to be linear attention")
    o.add_argument("input", help="model: .onnx or .mlir")
    o.add_argument("-o", "--output", required=True,
                   help="output file; .onnx writes ONNX, anything else MLIR text")
    o.add_argument("--simplify", action="extend", type=_simplifications, default=[],
                   metavar="NAME",
                   help="model-changing simplifications: " + ", ".join(_api.SIMPLIFICATIONS))
    o.add_argument("--explain", action="store_true", help="print the per-layer analysis first")
    o.add_argument("--verify", action="store_true",
                   help="compare input and output in onnxruntime (ONNX to ONNX only)")
    o.add_argument("--rtol", type=float, default=1e-5, help="tolerance of --verify")
    e = sub.add_parser("explain", help="print the per-layer analysis as a table")
    e.add_argument("input", help="model: .onnx or .mlir")
    r = sub.add_parser("run", help="compile MLIR with ttt-to-cpu and run it on arrays")
    r.add_argument("input", help="module: .mlir")
    r.add_argument("--inputs", metavar="FILE", help=".npz (arg0, arg1, ...) or .npy inputs")
    r.add_argument("--outputs", metavar="FILE", help="write the results to a .npz file")
    r.add_argument("--entry", default="", help="function to run (default: the only public one)")
    return p


def _archive_bytes(path: str) -> int:
    """The bytes the arrays of an .npz archive take once read, from their headers
    (nothing is read): 0 for a file that is no archive (np.load says why)."""
    import zipfile
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return 0
    total = 0
    with archive:
        for member in archive.namelist():
            with archive.open(member) as f:
                try:
                    version = np.lib.format.read_magic(f)
                    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                    if read_header is None:
                        continue
                    shape, _, dtype = read_header(f)
                except (ValueError, OSError):
                    continue
                total += int(np.prod(shape, dtype=object)) * dtype.itemsize
    return total


def _load_inputs(path: str) -> list[np.ndarray]:
    if not path:
        raise _api.InvalidInputError("--inputs: empty file name")
    if not os.path.exists(path):
        raise _api.InputFileError(f"{path}: no such file")
    available = _ext.load().available_memory()
    needed = _archive_bytes(path)
    if available >= 0 and needed > available:
        raise _api.InvalidInputError(
            f"{path}: its arrays ({_api._format_bytes(needed)}) exceed the available "
            f"memory ({_api._format_bytes(available)})")
    try:
        # An .npy is mapped, not read: ttt.run checks its size before copying it.
        loaded = np.load(path, allow_pickle=False, mmap_mode="r")
    except (OSError, ValueError) as e:
        raise _api.InvalidInputError(f"{path}: cannot read: {e}") from None
    if isinstance(loaded, np.ndarray):
        return [loaded]
    with loaded:
        names = list(loaded.files)
        if all(f"arg{i}" in names for i in range(len(names))):
            names = [f"arg{i}" for i in range(len(names))]
        return [loaded[n] for n in names]


def _run(args) -> None:
    arrays = _load_inputs(args.inputs) if args.inputs is not None else []
    results = _api.run(args.input, arrays, entry=args.entry)
    if args.outputs:
        np.savez(args.outputs, **{f"result{i}": r for i, r in enumerate(results)})
        print(f"ttt: wrote {args.outputs}", file=sys.stderr)
    else:
        for i, r in enumerate(results):
            print(f"result{i}: {r.dtype.name} {tuple(r.shape)}\n{r}")


def _explain(path: str) -> None:
    report = _api.explain(path)
    print(report.table())


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # In the try: the parser lists the simplifications, which come from
        # the extension.
        args = _parser().parse_args(_normalize(sys.argv[1:] if argv is None else argv))
        if args.command == "explain":
            _explain(args.input)
            return 0
        if args.command == "run":
            _run(args)
            return 0
        if args.explain:
            _explain(args.input)
        if not args.output:
            raise _api.InvalidInputError("-o: empty output file name")
        emit = "onnx" if args.output.endswith(".onnx") else "mlir"
        # One progress line per layer, as the compiler finds it.
        result = _api.optimize(args.input, simplify=args.simplify, emit=emit,
                               on_remark=lambda line: print(line, file=sys.stderr,
                                                            flush=True))
        try:
            if emit == "onnx":
                data = result.SerializeToString()
                with open(args.output, "wb") as f:
                    f.write(data)
            else:
                with open(args.output, "w") as f:
                    f.write(result)
        except OSError as e:
            raise ExportError(f"{args.output}: cannot write: {e.strerror}") from None
        print(f"ttt: wrote {args.output}", file=sys.stderr)
        if args.verify:
            if emit != "onnx" or not args.input.endswith(".onnx"):
                raise _api.InvalidInputError("--verify needs an .onnx input and an .onnx output")
            errors = _api.verify(args.input, args.output, rtol=args.rtol)
            for name, err in errors.items():
                print(f"ttt: verified output '{name}': max relative error {err:.3g}",
                      file=sys.stderr)
        return 0
    except Error as err:
        print(f"ttt: error: {err}", file=sys.stderr)
        return 1
    except ImportError as err:
        print(f"ttt: error: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours, and no
        # traceback when Python flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
