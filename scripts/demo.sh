#!/usr/bin/env bash
# The main job on the bundled examples: explain, simplify, rewrite to linear
# attention, and run the recurrent and the rewritten form on the same inputs.
set -euo pipefail
BUILD=${BUILD_DIR:-build}
OPT="$BUILD/bin/ttt-opt --mlir-print-op-on-diagnostic=false"
RUN="$BUILD/bin/ttt-run"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== 1. The LaCT-LLM layer, parsed and verified =="
$OPT examples/lact_llm_layer.mlir

echo
echo "== 2. What ttt proves about it (--ttt-explain) =="
$OPT examples/lact_llm_layer.mlir --ttt-explain -o /dev/null

echo
echo "== 3. The paper's V2 (--ttt-simplify=freeze-inner,drop-weight-norm), then --ttt-to-linattn =="
$OPT examples/lact_llm_layer.mlir --ttt-simplify="freeze-inner drop-weight-norm" \
    --ttt-to-linattn

echo
echo "== 4. A small V2 layer: recurrent reference vs. linear-attention form, same random inputs =="
shapes="1x2x1000x32,1x2x1000x32,1x2x1000x32,*,*,*,1x2x1000x3,1x2x1000"
$OPT examples/lact_v2_small.mlir --ttt-to-linattn -o "$tmp/rewritten.mlir"
$RUN examples/lact_v2_small.mlir --random-inputs=7 --shapes="$shapes" \
    --save-inputs="$tmp/inputs.npz" --outputs="$tmp/recurrent.npz" --print-results=false --repeat=3
$RUN "$tmp/rewritten.mlir" --inputs="$tmp/inputs.npz" --outputs="$tmp/parallel.npz" \
    --print-results=false --repeat=3
python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
a = np.load(f"{d}/recurrent.npz")["result0"]; b = np.load(f"{d}/parallel.npz")["result0"]
err = np.abs(a - b).max() / np.abs(a).max()
print(f"output {a.shape}: max |recurrent - linear attention| / max |recurrent| = {err:.2e}")
sys.exit(0 if err <= 1e-5 else 1)
PY
