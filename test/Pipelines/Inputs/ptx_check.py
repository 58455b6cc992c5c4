#!/usr/bin/env python3
"""Extracts the PTX of `gpu.binary` ops (ttt-to-gpu with format=isa) and,
with --ptxas, has ptxas assemble every module.

    ttt-opt --ttt-to-gpu=format=isa m.mlir | ptx_check.py            # print PTX
    ttt-opt --ttt-to-gpu=format=isa m.mlir | ptx_check.py --ptxas ptxas --arch sm_90

The PTX sits in each object's escaped `assembly = "..."` string. Exit status 1
if there is no PTX, or if ptxas rejects a module (its messages are printed).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ASSEMBLY = re.compile(r'assembly\s*=\s*"((?:[^"\\]|\\.)*)"')


def unescape(text: str) -> str:
    """MLIR's string escapes: \\\\, \\", \\n, \\t and \\XX (two hex digits)."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in "\\\"":
            out.append(nxt)
            i += 2
        elif nxt == "n":
            out.append("\n")
            i += 2
        elif nxt == "t":
            out.append("\t")
            i += 2
        else:
            out.append(chr(int(text[i + 1:i + 3], 16)))
            i += 3
    return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default="-", help="MLIR text (default: stdin)")
    parser.add_argument("--ptxas", help="run this ptxas on every module")
    parser.add_argument("--arch", default="sm_90", help="ptxas -arch (default sm_90)")
    args = parser.parse_args()

    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    modules = [unescape(m) for m in ASSEMBLY.findall(text)]
    if not modules:
        print("ptx_check: no `assembly = \"...\"` PTX in the input "
              "(was it compiled with format=isa?)", file=sys.stderr)
        return 1
    if not args.ptxas:
        for i, ptx in enumerate(modules):
            print(f"// ---- PTX module {i} ----")
            print(ptx)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        for i, ptx in enumerate(modules):
            path = os.path.join(tmp, f"module{i}.ptx")
            with open(path, "w") as f:
                f.write(ptx)
            proc = subprocess.run([args.ptxas, f"-arch={args.arch}", path, "-o",
                                   os.path.join(tmp, f"module{i}.cubin")],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"ptx_check: ptxas rejected PTX module {i} of {len(modules)}:\n"
                      f"{proc.stdout}{proc.stderr}", file=sys.stderr)
                return 1
    print(f"ptxas accepted {len(modules)} PTX modules for {args.arch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
