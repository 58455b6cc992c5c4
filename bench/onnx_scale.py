#!/usr/bin/env python3
"""ONNX scale benchmark: `ttt-opt` on stacked models of 10k to 200k nodes.

Each model holds copies of one committed fixture (default
test/fixtures/onnx/lact_v3.traced.onnx, 312 nodes, one rewritable TTT layer): every
copy gets its own names and weights and reads the model's shared inputs, and a Sum
node adds up the copies' outputs. `ttt-opt model.onnx -o fast.onnx` (the default
pipeline: read, check, infer shapes, raise and rewrite every layer, check, write) runs
once per size with `--timing`; the table gives its wall time, peak memory (max RSS of
the child) and the time of its reading and writing stages, and is written to
bench/results/onnx_scale.md.

    python3 bench/onnx_scale.py                      # 10k, 50k, 100k, 200k nodes
    python3 bench/onnx_scale.py --nodes 10000 20000
    python3 bench/onnx_scale.py --shape chain        # one node after another
    python3 bench/onnx_scale.py --shape wide         # every node on the input

Stacked layers side by side hide a cost that grows with the depth of the graph (a
recursion per node, a set of ancestors per value): `--shape chain` builds a chain of
Relu/Neg/Abs nodes, `--shape wide` as many nodes all reading the input and summed.
They hold no TTT layer; the table gives the same columns (bench/results/
onnx_scale_chain.md, onnx_scale_wide.md).

Times are measured here, never in tests (the machine is shared and noisy);
test/python/test_onnx_scale.py checks a 20k-node model's output instead.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "test" / "fixtures" / "onnx" / "lact_v3.traced.onnx"


def stacked_model(fixture: Path, copies: int):
    """`copies` renamed copies of `fixture`'s graph side by side on its inputs, their
    (first) outputs added by one Sum node into the output of the fixture's name."""
    import onnx
    from onnx import helper as h

    base = onnx.load(str(fixture))
    graph = base.graph
    shared = {i.name for i in graph.input}
    out_name = graph.output[0].name
    nodes, inits, sums = [], [], []
    for c in range(copies):
        prefix = f"c{c}/"

        def rename(name, prefix=prefix):
            return name if not name or name in shared else prefix + name

        for init in graph.initializer:
            copy = onnx.TensorProto()
            copy.CopyFrom(init)
            copy.name = rename(init.name)
            inits.append(copy)
        for node in graph.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            copy.name = prefix + node.name if node.name else ""
            copy.input[:] = [rename(x) for x in node.input]
            copy.output[:] = [rename(x) for x in node.output]
            nodes.append(copy)
        sums.append(rename(out_name))
    nodes.append(h.make_node("Sum", sums, [out_name], name="stack_sum"))
    stacked = h.make_graph(nodes, f"stack_{copies}", list(graph.input),
                           [graph.output[0]], inits)
    model = h.make_model(stacked, opset_imports=list(base.opset_import),
                         ir_version=base.ir_version)
    return model


def chain_model(nodes: int):
    """`nodes` unary nodes one after another (Relu, Neg, Abs in turn) on a [4, 8]
    input: a graph as deep as it is long, where any per-node recursion or per-value
    ancestor set shows."""
    import onnx
    from onnx import helper as h

    ops = ["Relu", "Neg", "Abs"]
    names = ["x"] + [f"v{i}" for i in range(1, nodes)] + ["y"]
    graph = h.make_graph(
        [h.make_node(ops[i % len(ops)], [names[i]], [names[i + 1]], name=f"n{i}")
         for i in range(nodes)],
        f"chain_{nodes}",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 8])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def wide_model(nodes: int):
    """`nodes` nodes side by side: each of `nodes - 1` Relu/Neg/Abs nodes reads the
    input, and one Sum node adds them up."""
    import onnx
    from onnx import helper as h

    ops = ["Relu", "Neg", "Abs"]
    branches = nodes - 1
    graph_nodes = [h.make_node(ops[i % len(ops)], ["x"], [f"b{i}"], name=f"n{i}")
                   for i in range(branches)]
    graph_nodes.append(h.make_node("Sum", [f"b{i}" for i in range(branches)], ["y"],
                                   name="sum"))
    graph = h.make_graph(
        graph_nodes, f"wide_{nodes}",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 8])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


SHAPES = {"stack": None, "chain": chain_model, "wide": wide_model}


def copies_for(nodes: int, fixture: Path = FIXTURE) -> int:
    import onnx
    per_copy = len(onnx.load(str(fixture)).graph.node)
    return max(1, round(nodes / per_copy))


def _ttt_opt() -> Path:
    return REPO / "build" / "bin" / "ttt-opt"


def _stage_seconds(timing: str, name: str) -> float | None:
    """The wall time MLIR's timing report gives the top-level stage `name`."""
    match = re.search(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+" + re.escape(name) + r"\s*$",
                      timing, re.M)
    return float(match.group(1)) if match else None


def run_one(model_path: Path, out_path: Path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([str(_ttt_opt()), str(model_path), "-o", str(out_path),
                           "--timing"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        raise SystemExit(f"ttt-opt failed on {model_path}:\n{proc.stderr}")
    layers = proc.stderr.count("raised to ttt.kvb_layer")
    # ru_maxrss of children is the largest child so far: run sizes in increasing order.
    return {"wall": wall, "rss_mib": max(peak, before) / 1024.0, "layers": layers,
            "input": _stage_seconds(proc.stderr, "Input"),
            "output": _stage_seconds(proc.stderr, "Output")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+",
                        default=[10_000, 50_000, 100_000, 200_000])
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="stack",
                        help="stacked TTT layers (default), a chain, or a wide graph")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.out is None:
        suffix = "" if args.shape == "stack" else f"_{args.shape}"
        args.out = REPO / "bench" / "results" / f"onnx_scale{suffix}.md"
    import onnx

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in sorted(args.nodes):
            if args.shape == "stack":
                copies = copies_for(nodes, args.fixture)
                model = stacked_model(args.fixture, copies)
            else:
                copies = 0
                model = SHAPES[args.shape](nodes)
            path = Path(tmp) / f"stack{nodes}.onnx"
            onnx.save(model, str(path))
            count = len(model.graph.node)
            result = run_one(path, Path(tmp) / f"stack{nodes}.fast.onnx")
            rows.append((count, copies, path.stat().st_size, result))
            print(f"{count} nodes: {result['wall']:.2f} s, {result['rss_mib']:.0f} MiB",
                  file=sys.stderr)
            path.unlink()

    def fmt(x):
        return "-" if x is None else f"{x:.2f}"

    what = (f"{args.fixture.name} stacked (`python3 bench/onnx_scale.py`)"
            if args.shape == "stack" else
            f"a {args.shape} of nodes (`python3 bench/onnx_scale.py --shape {args.shape}`)")
    lines = [
        f"`ttt-opt model.onnx -o fast.onnx --timing` on {what}; wall time and peak RSS "
        "of the process, and the reading (Input) and writing (Output) stages from its "
        "timing report.",
        "",
        "| nodes | TTT layers rewritten | model size (MB) | wall (s) | read (s) | "
        "write (s) | peak RSS (MiB) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for count, copies, size, r in rows:
        lines.append(f"| {count} | {r['layers']}/{copies} | {size / 1e6:.1f} | "
                     f"{r['wall']:.2f} | {fmt(r['input'])} | {fmt(r['output'])} | "
                     f"{r['rss_mib']:.0f} |")
    if len(rows) >= 2:
        small = next((r for r in rows if abs(r[0] - 50_000) < 1000), rows[0])
        large = rows[-1]
        lines += ["", f"Growth from {small[0]} to {large[0]} nodes: "
                  f"{large[3]['wall'] / small[3]['wall']:.2f}x in time, "
                  f"{large[3]['rss_mib'] / small[3]['rss_mib']:.2f}x in peak memory "
                  f"({large[0] / small[0]:.1f}x the nodes)."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
