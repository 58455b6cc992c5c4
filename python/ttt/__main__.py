"""``python -m ttt``: the command-line interface of the package.

Examples::

    python -m ttt optimize in.onnx -o out.onnx --explain --verify
    python -m ttt optimize layer.mlir -o out.mlir --simplify freeze-inner drop-weight-norm
    python -m ttt explain layer.mlir

Every error is one line, ``ttt: error: MESSAGE``, and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import _api
from ._errors import Error


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ttt",
                                description="ttt: compile TTT layers as linear attention")
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("optimize", help="rewrite TTT layers proven to be linear attention")
    o.add_argument("input", help="model: .onnx or .mlir")
    o.add_argument("-o", "--output", required=True,
                   help="output file; .onnx writes ONNX, anything else MLIR text")
    o.add_argument("--simplify", nargs="*", default=[], metavar="NAME",
                   choices=list(_api.SIMPLIFICATIONS),
                   help="model-changing simplifications: " + ", ".join(_api.SIMPLIFICATIONS))
    o.add_argument("--explain", action="store_true", help="print the per-layer analysis first")
    o.add_argument("--verify", action="store_true",
                   help="compare input and output in onnxruntime (ONNX to ONNX only)")
    o.add_argument("--rtol", type=float, default=1e-5, help="tolerance of --verify")
    e = sub.add_parser("explain", help="print the per-layer analysis as a table")
    e.add_argument("input", help="model: .onnx or .mlir")
    return p


def _explain(path: str) -> None:
    report = _api.explain(path)
    print(report.table())


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # In the try: the parser lists the simplifications, which come from
        # the extension.
        args = _parser().parse_args(argv)
        if args.command == "explain":
            _explain(args.input)
            return 0
        if args.explain:
            _explain(args.input)
        emit = "onnx" if args.output.endswith(".onnx") else "mlir"
        # One progress line per layer, as the compiler finds it.
        result = _api.optimize(args.input, simplify=args.simplify, emit=emit,
                               on_remark=lambda line: print(line, file=sys.stderr,
                                                            flush=True))
        if emit == "onnx":
            data = result.SerializeToString()
            with open(args.output, "wb") as f:
                f.write(data)
        else:
            with open(args.output, "w") as f:
                f.write(result)
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


if __name__ == "__main__":
    sys.exit(main())
