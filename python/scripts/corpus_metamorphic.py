#!/usr/bin/env python3
"""How well the canonical route survives random semantics-preserving rewrites of the
upstream LaCT layer exports it raises (a measurement, not a test: the rewrites it does not
survive yet are the recognition gaps issue 47 lists).

For each export of test/python/test_corpus.py's RAISED_LAYERS and RAISED_GLU_LAYERS (ViT^3,
made its V6) and each case, one to four
rewrites of test/python/metamorphic.py are applied at random places (each checked by
onnxruntime to keep what the graph computes); then `ttt-opt --ttt-simplify=<V2>` must
raise the layer and rewrite it to linear attention, and its output must equal the
variant's recurrent reference of the untouched export (`ttt-run --ttt-form=recurrent`,
relative error <= 1e-5). The exports of RAISED_DUAL_FORMS (ttt-lm-pytorch's TTT-Linear
and TTT-MLP, which are not linear attention and have no variant) must instead be raised
whole to one ttt.kvb_layer by the canonical route read as linalg, whose recurrent form
must compute what onnxruntime computes for the untouched export. Prints one line per case and, per rewrite kind, how often a case
containing it failed.

    TTT_BUILD_DIR=build python3 python/scripts/corpus_metamorphic.py --seeds 1 2 3 --cases 2
"""

from __future__ import annotations

import argparse
import collections
import copy
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "python"))

import metamorphic as mm  # noqa: E402
from test_corpus import (  # noqa: E402
    CORPUS,
    RAISED_DUAL_FORMS,
    RAISED_GLU_LAYERS,
    RAISED_LAYERS,
    ROUTE,
    _rel,
    _session,
    _ttt_run,
    tool,
    variant_error,
)

LAYERS = RAISED_LAYERS + RAISED_GLU_LAYERS + RAISED_DUAL_FORMS

MAX_REWRITES = 4
RTOL = 1e-5


def plan(seed, name, case):
    rng = np.random.default_rng([seed, LAYERS.index(name), case])
    base = onnx.load(str(CORPUS / f"{name}.onnx"))
    model, applied = copy.deepcopy(base), []
    wanted = int(rng.integers(1, MAX_REWRITES + 1))
    for _ in range(8 * wanted):
        if len(applied) == wanted:
            break
        rewrite = mm.REWRITES[int(rng.integers(0, len(mm.REWRITES)))]
        candidate = copy.deepcopy(model)
        if rewrite(candidate, rng):
            model = candidate
            applied.append(rewrite.__name__)
    return base, model, applied, rng


def raised_error(base, model, inputs, tmp: Path):
    """The canonical route on `model` read as linalg: its remarks, and the relative error
    of the raised layer's recurrent form against onnxruntime on the untouched `base`
    (None if it was not raised whole to one ttt.kvb_layer)."""
    src, raised = tmp / "rewritten.onnx", tmp / "raised.mlir"
    onnx.save(model, str(src))
    proc = subprocess.run([str(tool("ttt-opt")), str(src), *ROUTE, "-o", str(raised)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return proc.stderr, None
    text = raised.read_text()
    if "ttt.chunk_loop" in text or text.count("ttt.kvb_layer") != 1:
        return "TTT layer: not raised whole", None
    base_path = tmp / "base.onnx"
    onnx.save(base, str(base_path))
    want = _session(base_path).run(None, {"x": inputs})[0]
    return proc.stderr, _rel(_ttt_run(raised, inputs, tmp, "recurrent"), want)


def check(seed, name, case, tmp: Path):
    """None if the case survives, else why not."""
    base, model, applied, rng = plan(seed, name, case)
    with np.load(CORPUS / f"{name}.npz") as data:
        x = data["x"]
    inputs = rng.normal(0, x.std(), x.shape).astype(np.float32)
    mm.check_same(base, model, {"x": inputs})
    if name in RAISED_DUAL_FORMS:
        remarks, error = raised_error(base, model, inputs, tmp)
        if error is None:
            return applied, "not raised: " + remarks.strip().splitlines()[-1][-200:] \
                if remarks.strip() else "not raised"
        return applied, None if error <= RTOL else f"relative error {error:.1e}"
    remarks, error = variant_error(model, name, inputs, tmp)
    if error is None:
        lines = [l for l in remarks.splitlines() if "TTT layer" in l or "error" in l]
        return applied, "not rewritten: " + (lines[-1][-200:] if lines else "no remark")
    return applied, None if error <= RTOL else f"relative error {error:.1e}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[4748])
    parser.add_argument("--cases", type=int, default=2)
    parser.add_argument("--names", nargs="+", default=LAYERS, choices=LAYERS,
                        help="the exports to rewrite (default: all)")
    args = parser.parse_args()
    failed, total = collections.Counter(), collections.Counter()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for seed in args.seeds:
            for name in args.names:
                for case in range(args.cases):
                    applied, why = check(seed, name, case, tmp)
                    total.update(set(applied))
                    if why:
                        bad += 1
                        failed.update(set(applied))
                    print(f"seed {seed} case {case} {name} {applied}: {why or 'ok'}",
                          flush=True)
    runs = len(args.seeds) * len(args.names) * args.cases
    print(f"\n{runs - bad} of {runs} cases survive")
    print("rewrite kind: cases failed / cases containing it")
    for kind, count in sorted(total.items(), key=lambda kv: -failed[kv[0]] / kv[1]):
        print(f"  {kind}: {failed[kind]}/{count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
