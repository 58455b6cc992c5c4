#!/usr/bin/env python3
"""Peak memory of `ttt-opt` on an ONNX model whose weight is external data.

Writes a model `y = MatMul(x, W)` whose initializer W (float32, --gib GiB) is
stored in `model.onnx.data` next to it, then runs, under /usr/bin/time -v,

    ttt-opt model.onnx -o out.onnx --onnx-roundtrip    # read and write back
    ttt-opt model.onnx -o out.onnx                     # the default pipeline

and prints each run's maximum resident set size next to the tensor's size.
The reader maps external data (llvm::MemoryBuffer::getFileSlice) and the
writer copies it from the mapping to the new .data file, so a run needs
about the tensor once (its pages of the mapped file) plus the small rest.

    python3 bench/external_data_rss.py               # 1 GiB
    python3 bench/external_data_rss.py --gib 3 --keep /tmp/big

Memory is measured here, never asserted in tests (the machine is shared);
test/python/test_onnx_weight_sources.py checks that such a model reads
correctly.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_model(directory: Path, gib: float) -> Path:
    """model.onnx with a float32 [rows, 4096] external initializer of `gib` GiB,
    its data written block by block (a tensor of 2 GiB or more cannot pass
    through a protobuf message, so onnx.save_model cannot write it)."""
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    cols = 4096
    rows = max(1, int(gib * 2**30) // (4 * cols))
    block = np.empty((min(rows, 8192), cols), np.float32)
    with open(directory / "model.onnx.data", "wb") as f:
        for start in range(0, rows, block.shape[0]):
            n = min(block.shape[0], rows - start)
            # Not zeros: the pages hold data, and each row differs.
            block[:n] = (np.arange(cols, dtype=np.float32) % 7 - 3) * 0.01
            block[:n, 0] = np.arange(start, start + n, dtype=np.float32)
            f.write(block[:n].tobytes())
    tensor = T(name="W", data_type=T.FLOAT, dims=[rows, cols],
               data_location=T.EXTERNAL)
    for key, value in (("location", "model.onnx.data"), ("offset", "0"),
                       ("length", str(rows * cols * 4))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "W"], ["y"], name="matmul")], "big_weight",
        [h.make_tensor_value_info("x", T.FLOAT, [1, rows])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, cols])], [tensor])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    path = directory / "model.onnx"
    onnx.save_model(model, str(path))
    return path


def max_rss_kib(command: list[str]) -> int:
    proc = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{proc.stderr}")
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return int(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the weight")
    parser.add_argument("--ttt-opt", default=str(Path(os.environ.get(
        "TTT_BUILD_DIR", REPO / "build")) / "bin" / "ttt-opt"))
    parser.add_argument("--keep", type=Path,
                        help="write the models here and keep them (a model there is reused)")
    args = parser.parse_args()
    directory = args.keep or Path(tempfile.mkdtemp(prefix="ttt-rss-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        model = directory / "model.onnx"
        if not (args.keep and model.exists()):  # a kept model is reused
            model = write_model(directory, args.gib)
        size = (directory / "model.onnx.data").stat().st_size
        print(f"external tensor: {size / 2**30:.2f} GiB")
        for label, extra in [("--onnx-roundtrip", ["--onnx-roundtrip"]),
                             ("default pipeline", [])]:
            out = directory / "out.onnx"
            rss = max_rss_kib([args.ttt_opt, str(model), "-o", str(out), *extra])
            print(f"ttt-opt {label}: max RSS {rss / 2**20:.2f} GiB "
                  f"({rss * 1024 / size:.2f}x the tensor)")
    finally:
        if args.keep is None:
            shutil.rmtree(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
