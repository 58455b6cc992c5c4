#!/usr/bin/env bash
# The main job on the bundled examples: explain, simplify, rewrite to linear
# attention, run the recurrent and the rewritten form on the same inputs, and
# rewrite an exported ONNX model (checked against onnxruntime on the original).
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
$RUN examples/lact_v2_small.mlir --ttt-form=recurrent --random-inputs=7 --shapes="$shapes" \
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

echo
echo "== 5. ONNX in, ONNX out: a PyTorch export of LaCT V3 (scripted: the chunk loop is an ONNX Loop) =="
model=test/fixtures/onnx/lact_v3.scripted.onnx
$BUILD/bin/ttt-opt "$model" -o "$tmp/v3.fast.onnx"
python3 - "$model" "$tmp/v3.fast.onnx" <<'PY'
import sys, numpy as np, onnx, onnxruntime as ort
src, fast = sys.argv[1], sys.argv[2]
ops = lambda p: sorted({n.op_type for n in onnx.load(p).graph.node})
print("original nodes:", ", ".join(ops(src)))
print("rewritten nodes:", ", ".join(ops(fast)))
rng = np.random.default_rng(0)
B, T = 2, 300   # the model's batch and sequence length are dynamic
feeds = {"q": rng.normal(size=(B, 2, T, 8)), "k": rng.normal(size=(B, 2, T, 8)),
         "v": rng.normal(size=(B, 2, T, 8)), "lr": rng.uniform(0, 0.1, (B, 2, T, 1)),
         "momentum": rng.uniform(0, 1, (B, 2, T))}
feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
run = lambda p: ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
a, b = run(src), run(fast)
err = np.abs(a - b).max() / np.abs(a).max()
print(f"onnxruntime, output {a.shape}: max |original - rewritten| / max |original| = {err:.2e}")
sys.exit(0 if err <= 1e-5 else 1)
PY
